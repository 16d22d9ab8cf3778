/*
 * quote.c - Go's strconv unquoting as text/template needs it:
 * Unquote/UnquoteChar for string and character constants in templates (Quote
 * and IsPrint, which validation's messages share, are in
 * common/wh_go_strconv.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tmpl_int.h"
#include "wh_chars.h"

static void put_rune_utf8(wh_buf *out, unsigned r)
{
    char b[4];

    wh_buf_append(out, b, wh_utf8_encode(r, b));
}

void tm_put_rune(wh_buf *out, unsigned r)
{
    if (r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
        r = 0xfffd;
    put_rune_utf8(out, r);
}

/* strconv.UnquoteChar: one (possibly escaped) character of a literal quoted
 * with q.  Returns bytes consumed, 0 on syntax error. */
size_t tm_unquote_char(const char *s, size_t len, char q, wh_buf *out, unsigned *rune_out)
{
    unsigned r;
    size_t l, i, n;
    int v;

    if (len == 0)
        return 0;
    if (s[0] == q && (q == '\'' || q == '"'))
        return 0;
    if ((unsigned char)s[0] >= 0x80) {
        l = tm_utf8_decode(s, len, &r);
        if (l == 0) {
            r = 0xfffd;
            l = 1;
        }
        if (out)
            put_rune_utf8(out, r);
        if (rune_out)
            *rune_out = r;
        return l;
    }
    if (s[0] != '\\') {
        if (out)
            wh_buf_putc(out, s[0]);
        if (rune_out)
            *rune_out = (unsigned char)s[0];
        return 1;
    }
    if (len < 2)
        return 0;
    switch (s[1]) {
    case 'a':
        r = 7;
        break;
    case 'b':
        r = 8;
        break;
    case 'f':
        r = 12;
        break;
    case 'n':
        r = 10;
        break;
    case 'r':
        r = 13;
        break;
    case 't':
        r = 9;
        break;
    case 'v':
        r = 11;
        break;
    case 'x':
    case 'u':
    case 'U':
        n = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : 8;
        if (len < 2 + n)
            return 0;
        r = 0;
        for (i = 0; i < n; i++) {
            if ((v = wh_hex_digit(s[2 + i])) < 0)
                return 0;
            r = r * 16 + (unsigned)v;
        }
        if (s[1] == 'x') {
            if (out)
                wh_buf_putc(out, (char)r);
            if (rune_out)
                *rune_out = r;
            return 4;
        }
        if (r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
            return 0;
        if (out)
            put_rune_utf8(out, r);
        if (rune_out)
            *rune_out = r;
        return 2 + n;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
        if (len < 4)
            return 0;
        r = 0;
        for (i = 1; i < 4; i++) {
            if (s[i] < '0' || s[i] > '7')
                return 0;
            r = r * 8 + (unsigned)(s[i] - '0');
        }
        if (r > 255)
            return 0;
        if (out)
            wh_buf_putc(out, (char)r);
        if (rune_out)
            *rune_out = r;
        return 4;
    case '\\':
        r = '\\';
        break;
    case '\'':
    case '"':
        if (s[1] != q)
            return 0;
        r = (unsigned char)s[1];
        break;
    default:
        return 0;
    }
    if (out)
        wh_buf_putc(out, (char)r);
    if (rune_out)
        *rune_out = r;
    return 2;
}

/* strconv.Unquote for "..." and `...`; 0 on success. */
int tm_unquote(const char *s, size_t len, wh_buf *out)
{
    size_t i, l;

    if (len < 2 || s[0] != s[len - 1])
        return -1;
    if (s[0] == '`') {
        for (i = 1; i < len - 1; i++)
            if (s[i] == '`')
                return -1;
        /* carriage returns are dropped from raw strings */
        for (i = 1; i < len - 1; i++)
            if (s[i] != '\r')
                wh_buf_putc(out, s[i]);
        if (out->data == NULL)
            wh_buf_append(out, "", 0);
        return 0;
    }
    if (s[0] != '"')
        return -1;
    wh_buf_append(out, "", 0);
    for (i = 1; i < len - 1; i += l) {
        if (s[i] == '\n')
            return -1;
        if ((l = tm_unquote_char(s + i, len - 1 - i, '"', out, NULL)) == 0)
            return -1;
    }
    return 0;
}
