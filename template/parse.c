/*
 * parse.c - lexing and parsing of Go's text/template language into trees,
 * following Go 1.19's text/template/parse item by item so that what parses,
 * what it means and the error messages all match.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"
#include "wh_chars.h"

/* ------------------------------------------------------------------------ */
/* Quoting (strconv)                                                         */

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

/* A rune Go's unicode.IsPrint would accept (approximation outside ASCII:
 * C1 controls, surrogates and a few format characters are not printable). */
static int is_print_rune(unsigned r)
{
    if (r < 0x80)
        return r >= 0x20 && r < 0x7f;
    if (r < 0xa0 || r == 0xad)
        return 0;
    if (r >= 0x2028 && r <= 0x202e)
        return 0;
    if (r >= 0x2060 && r <= 0x206f)
        return 0;
    if (r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) || r >= 0xe0000)
        return 0;
    if (r >= 0xe000 && r <= 0xf8ff)
        return 0;
    return 1;
}

int tm_is_print(unsigned r)
{
    return is_print_rune(r);
}

void tm_quote_with(wh_buf *out, const char *s, size_t len, char q, int ascii_only)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;

    wh_buf_putc(out, q);
    while (i < len) {
        unsigned r;
        size_t l, run = i;
        /* printable ASCII other than the quote and backslash goes out as is:
         * append whole runs of it rather than rune by rune */
        while (run < len && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f && s[run] != q &&
               s[run] != '\\')
            run++;
        if (run > i) {
            wh_buf_append(out, s + i, run - i);
            i = run;
            continue;
        }
        l = tm_utf8_decode(s + i, len - i, &r);
        if (l == 0) {
            unsigned char c = (unsigned char)s[i];
            wh_buf_puts(out, "\\x");
            wh_buf_putc(out, hex[c >> 4]);
            wh_buf_putc(out, hex[c & 15]);
            i++;
            continue;
        }
        i += l;
        if (r == (unsigned char)q || r == '\\') {
            wh_buf_putc(out, '\\');
            wh_buf_putc(out, (char)r);
            continue;
        }
        if (is_print_rune(r) && (!ascii_only || r < 0x80)) {
            wh_buf_append(out, s + i - l, l);
            continue;
        }
        switch (r) {
        case '\a':
            wh_buf_puts(out, "\\a");
            break;
        case '\b':
            wh_buf_puts(out, "\\b");
            break;
        case '\f':
            wh_buf_puts(out, "\\f");
            break;
        case '\n':
            wh_buf_puts(out, "\\n");
            break;
        case '\r':
            wh_buf_puts(out, "\\r");
            break;
        case '\t':
            wh_buf_puts(out, "\\t");
            break;
        case '\v':
            wh_buf_puts(out, "\\v");
            break;
        default:
            if (r < ' ' || r == 0x7f) {
                wh_buf_puts(out, "\\x");
                wh_buf_putc(out, hex[r >> 4]);
                wh_buf_putc(out, hex[r & 15]);
            } else if (r < 0x10000) {
                wh_buf_printf(out, "\\u%04x", r);
            } else {
                wh_buf_printf(out, "\\U%08x", r);
            }
        }
    }
    wh_buf_putc(out, q);
}

void tm_quote(wh_buf *out, const char *s, size_t len, int ascii_only)
{
    tm_quote_with(out, s, len, '"', ascii_only);
}

/* strconv.UnquoteChar: one (possibly escaped) character of a literal quoted
 * with q.  Returns bytes consumed, 0 on syntax error. */
static size_t unquote_char(const char *s, size_t len, char q, wh_buf *out, unsigned *rune_out)
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
static int tm_unquote(const char *s, size_t len, wh_buf *out)
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
        if ((l = unquote_char(s + i, len - 1 - i, '"', out, NULL)) == 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Lexer                                                                     */

typedef enum {
    I_ERROR,
    I_BOOL,
    I_CHAR,
    I_CHARCONST,
    I_COMMENT,
    I_COMPLEX,
    I_ASSIGN,
    I_DECLARE,
    I_EOF,
    I_FIELD,
    I_IDENT,
    I_LDELIM,
    I_LPAREN,
    I_NUMBER,
    I_PIPE,
    I_RAWSTRING,
    I_RDELIM,
    I_RPAREN,
    I_SPACE,
    I_STRING,
    I_TEXT,
    I_VARIABLE,
    I_KEYWORD, /* delimits keywords */
    I_BLOCK,
    I_BREAK,
    I_CONTINUE,
    I_DOT,
    I_DEFINE,
    I_ELSE,
    I_END,
    I_IF,
    I_NIL,
    I_RANGE,
    I_TEMPLATE,
    I_WITH
} itype;

typedef struct item {
    itype typ;
    int pos;
    const char *val;
    size_t len;
    int line;
} item;

typedef struct lexer {
    const char *in;
    size_t len;
    const char *ld, *rd;
    size_t ldl, rdl;
    size_t pos, start;
    int at_eof;
    int line, start_line;
    int paren_depth;
    int break_ok, continue_ok;
    item *items;
    size_t nitems, capitems;
    tm_arena *arena;
    int failed; /* out of memory */
} lexer;

#define LEOF (-1)

static int is_space(int r)
{
    return r == ' ' || r == '\t' || r == '\r' || r == '\n';
}

static int is_alnum(int r)
{
    return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r >= 0x80;
}

static int lx_next(lexer *l)
{
    unsigned r;
    size_t w;

    if (l->pos >= l->len) {
        l->at_eof = 1;
        return LEOF;
    }
    w = tm_utf8_decode(l->in + l->pos, l->len - l->pos, &r);
    if (w == 0) {
        w = 1;
        r = 0xfffd;
    }
    l->pos += w;
    if (r == '\n')
        l->line++;
    return (int)r;
}

static void lx_backup(lexer *l)
{
    if (!l->at_eof && l->pos > 0) {
        size_t p = l->pos - 1;
        unsigned r;
        /* step back over one UTF-8 sequence */
        while (p > 0 && ((unsigned char)l->in[p] & 0xc0) == 0x80 && l->pos - p < 4)
            p--;
        if (tm_utf8_decode(l->in + p, l->pos - p, &r) != l->pos - p)
            p = l->pos - 1;
        l->pos = p;
        if (l->in[p] == '\n')
            l->line--;
    }
}

static int lx_peek(lexer *l)
{
    int r = lx_next(l);
    lx_backup(l);
    return r;
}

static int count_nl(const char *s, size_t n)
{
    int c = 0;
    size_t i;

    for (i = 0; i < n; i++)
        c += s[i] == '\n';
    return c;
}

static void lx_push(lexer *l, itype t, const char *val, size_t len, int line, size_t pos)
{
    if (l->nitems == l->capitems) {
        size_t cap = l->capitems ? l->capitems * 2 : 64;
        item *it = wh_realloc(l->items, cap * sizeof(*it));
        l->items = it;
        l->capitems = cap;
    }
    l->items[l->nitems].typ = t;
    l->items[l->nitems].pos = (int)pos;
    l->items[l->nitems].val = val;
    l->items[l->nitems].len = len;
    l->items[l->nitems].line = line;
    l->nitems++;
}

static void lx_emit(lexer *l, itype t)
{
    lx_push(l, t, l->in + l->start, l->pos - l->start, l->start_line, l->start);
    l->start = l->pos;
    l->start_line = l->line;
}

static void lx_ignore(lexer *l)
{
    l->line += count_nl(l->in + l->start, l->pos - l->start);
    l->start = l->pos;
    l->start_line = l->line;
}

static int lx_errorf(lexer *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lx_errorf(lexer *l, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    char *v;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    v = tm_strndup(l->arena, msg, strlen(msg));
    if (v == NULL)
        l->failed = 1;
    lx_push(l, I_ERROR, v, v ? strlen(v) : 0, l->start_line, l->start);
    return 0;
}

/* %#U of a rune */
static void fmt_U(char *buf, size_t n, int r)
{
    if (r < 0)
        snprintf(buf, n, "U+FFFFFFFFFFFFFFFF");
    else if (is_print_rune((unsigned)r)) {
        wh_buf b = WH_BUF_INIT;
        tm_put_rune(&b, (unsigned)r);
        snprintf(buf, n, "U+%04X '%s'", r, b.data);
        wh_buf_free(&b);
    } else
        snprintf(buf, n, "U+%04X", r);
}

static int starts(const lexer *l, size_t pos, const char *p, size_t n)
{
    return pos <= l->len && l->len - pos >= n && memcmp(l->in + pos, p, n) == 0;
}

static int has_left_trim(const lexer *l, size_t pos)
{
    return l->len - pos >= 2 && l->in[pos] == '-' && is_space((unsigned char)l->in[pos + 1]);
}

static int has_right_trim(const lexer *l, size_t pos)
{
    return pos <= l->len && l->len - pos >= 2 && is_space((unsigned char)l->in[pos]) && l->in[pos + 1] == '-';
}

static int at_right_delim(lexer *l, int *trim)
{
    if (has_right_trim(l, l->pos) && starts(l, l->pos + 2, l->rd, l->rdl)) {
        *trim = 1;
        return 1;
    }
    *trim = 0;
    return starts(l, l->pos, l->rd, l->rdl);
}

static int at_terminator(lexer *l)
{
    int r = lx_peek(l);

    if (is_space(r))
        return 1;
    switch (r) {
    case LEOF:
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(':
        return 1;
    }
    return starts(l, l->pos, l->rd, l->rdl);
}

enum {
    S_TEXT,
    S_LEFT,
    S_COMMENT,
    S_RIGHT,
    S_INSIDE,
    S_SPACE,
    S_IDENT,
    S_FIELD,
    S_VARIABLE,
    S_CHAR,
    S_NUMBER,
    S_QUOTE,
    S_RAW,
    S_DONE
};

static const struct {
    const char *word;
    itype t;
} keywords[] = {{".", I_DOT},         {"block", I_BLOCK}, {"break", I_BREAK},       {"continue", I_CONTINUE},
                {"define", I_DEFINE}, {"else", I_ELSE},   {"end", I_END},           {"if", I_IF},
                {"range", I_RANGE},   {"nil", I_NIL},     {"template", I_TEMPLATE}, {"with", I_WITH}};

static int keyword(const char *w, size_t n)
{
    size_t i;

    for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, w, n) == 0)
            return (int)keywords[i].t;
    return -1;
}

static int accept(lexer *l, const char *valid)
{
    int r = lx_next(l);
    if (r != LEOF && r < 0x80 && strchr(valid, r) != NULL)
        return 1;
    lx_backup(l);
    return 0;
}

static void accept_run(lexer *l, const char *valid)
{
    int r;
    while ((r = lx_next(l)) != LEOF && r < 0x80 && strchr(valid, r) != NULL)
        ;
    lx_backup(l);
}

static int scan_number(lexer *l)
{
    const char *digits = "0123456789_";

    accept(l, "+-");
    if (accept(l, "0")) {
        if (accept(l, "xX"))
            digits = "0123456789abcdefABCDEF_";
        else if (accept(l, "oO"))
            digits = "01234567_";
        else if (accept(l, "bB"))
            digits = "01_";
    }
    accept_run(l, digits);
    if (accept(l, "."))
        accept_run(l, digits);
    if (strlen(digits) == 11 && accept(l, "eE")) {
        accept(l, "+-");
        accept_run(l, "0123456789_");
    }
    if (strlen(digits) == 23 && accept(l, "pP")) {
        accept(l, "+-");
        accept_run(l, "0123456789_");
    }
    accept(l, "i");
    if (is_alnum(lx_peek(l))) {
        lx_next(l);
        return 0;
    }
    return 1;
}

static void lex_all(lexer *l)
{
    int state = S_TEXT;
    char ubuf[64];

    while (state != S_DONE && !l->failed) {
        switch (state) {
        case S_TEXT: {
            const char *x = l->pos <= l->len ? memmem(l->in + l->pos, l->len - l->pos, l->ld, l->ldl) : NULL;
            if (x != NULL) {
                size_t trim = 0;
                l->pos = (size_t)(x - l->in);
                if (has_left_trim(l, l->pos + l->ldl)) {
                    size_t e = l->pos;
                    while (e > l->start && is_space((unsigned char)l->in[e - 1]))
                        e--;
                    trim = l->pos - e;
                }
                l->pos -= trim;
                if (l->pos > l->start) {
                    l->line += count_nl(l->in + l->start, l->pos - l->start);
                    lx_emit(l, I_TEXT);
                }
                l->pos += trim;
                lx_ignore(l);
                state = S_LEFT;
                break;
            }
            l->pos = l->len;
            if (l->pos > l->start) {
                l->line += count_nl(l->in + l->start, l->pos - l->start);
                lx_emit(l, I_TEXT);
            }
            lx_emit(l, I_EOF);
            state = S_DONE;
            break;
        }
        case S_LEFT: {
            size_t after = 0;
            l->pos += l->ldl;
            if (has_left_trim(l, l->pos))
                after = 2;
            if (starts(l, l->pos + after, "/*", 2)) {
                l->pos += after;
                lx_ignore(l);
                state = S_COMMENT;
                break;
            }
            lx_emit(l, I_LDELIM);
            l->pos += after;
            lx_ignore(l);
            l->paren_depth = 0;
            state = S_INSIDE;
            break;
        }
        case S_COMMENT: {
            const char *e;
            int trim;
            l->pos += 2;
            e = memmem(l->in + l->pos, l->len - l->pos, "*/", 2);
            if (e == NULL) {
                lx_errorf(l, "unclosed comment");
                return;
            }
            l->pos = (size_t)(e - l->in) + 2;
            if (!at_right_delim(l, &trim)) {
                lx_errorf(l, "comment ends before closing delimiter");
                return;
            }
            if (trim)
                l->pos += 2;
            l->pos += l->rdl;
            if (trim)
                while (l->pos < l->len && is_space((unsigned char)l->in[l->pos]))
                    l->pos++;
            lx_ignore(l);
            state = S_TEXT;
            break;
        }
        case S_RIGHT: {
            int trim = has_right_trim(l, l->pos);
            if (trim) {
                l->pos += 2;
                lx_ignore(l);
            }
            l->pos += l->rdl;
            lx_emit(l, I_RDELIM);
            if (trim) {
                while (l->pos < l->len && is_space((unsigned char)l->in[l->pos]))
                    l->pos++;
                lx_ignore(l);
            }
            state = S_TEXT;
            break;
        }
        case S_INSIDE: {
            int trim, r;
            if (at_right_delim(l, &trim)) {
                if (l->paren_depth == 0) {
                    state = S_RIGHT;
                    break;
                }
                lx_errorf(l, "unclosed left paren");
                return;
            }
            r = lx_next(l);
            if (r == LEOF) {
                lx_errorf(l, "unclosed action");
                return;
            } else if (is_space(r)) {
                lx_backup(l);
                state = S_SPACE;
            } else if (r == '=') {
                lx_emit(l, I_ASSIGN);
            } else if (r == ':') {
                if (lx_next(l) != '=') {
                    lx_errorf(l, "expected :=");
                    return;
                }
                lx_emit(l, I_DECLARE);
            } else if (r == '|') {
                lx_emit(l, I_PIPE);
            } else if (r == '"') {
                state = S_QUOTE;
            } else if (r == '`') {
                state = S_RAW;
            } else if (r == '$') {
                state = S_VARIABLE;
            } else if (r == '\'') {
                state = S_CHAR;
            } else if (r == '.' && l->pos < l->len && (l->in[l->pos] < '0' || l->in[l->pos] > '9')) {
                state = S_FIELD;
            } else if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
                lx_backup(l);
                state = S_NUMBER;
            } else if (is_alnum(r)) {
                lx_backup(l);
                state = S_IDENT;
            } else if (r == '(') {
                lx_emit(l, I_LPAREN);
                l->paren_depth++;
            } else if (r == ')') {
                lx_emit(l, I_RPAREN);
                l->paren_depth--;
                if (l->paren_depth < 0) {
                    fmt_U(ubuf, sizeof(ubuf), r);
                    lx_errorf(l, "unexpected right paren %s", ubuf);
                    return;
                }
            } else if (r < 0x80 && r >= 0x20 && r < 0x7f) {
                lx_emit(l, I_CHAR);
            } else {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "unrecognized character in action: %s", ubuf);
                return;
            }
            break;
        }
        case S_SPACE: {
            int n = 0;
            while (is_space(lx_peek(l))) {
                lx_next(l);
                n++;
            }
            if (has_right_trim(l, l->pos - 1) && starts(l, l->pos - 1 + 2, l->rd, l->rdl)) {
                lx_backup(l);
                if (n == 1) {
                    state = S_RIGHT;
                    break;
                }
            }
            lx_emit(l, I_SPACE);
            state = S_INSIDE;
            break;
        }
        case S_IDENT: {
            int r;
            for (;;) {
                r = lx_next(l);
                if (!is_alnum(r))
                    break;
            }
            lx_backup(l);
            if (!at_terminator(l)) {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "bad character %s", ubuf);
                return;
            }
            {
                const char *w = l->in + l->start;
                size_t n = l->pos - l->start;
                int k = keyword(w, n);
                if (k > I_KEYWORD && k != I_DOT) {
                    if ((k == I_BREAK && !l->break_ok) || (k == I_CONTINUE && !l->continue_ok))
                        lx_emit(l, I_IDENT);
                    else
                        lx_emit(l, (itype)k);
                } else if (w[0] == '.') {
                    lx_emit(l, I_FIELD);
                } else if ((n == 4 && memcmp(w, "true", 4) == 0) || (n == 5 && memcmp(w, "false", 5) == 0)) {
                    lx_emit(l, I_BOOL);
                } else {
                    lx_emit(l, I_IDENT);
                }
            }
            state = S_INSIDE;
            break;
        }
        case S_FIELD:
        case S_VARIABLE: {
            int r;
            if (state == S_VARIABLE && at_terminator(l)) {
                lx_emit(l, I_VARIABLE);
                state = S_INSIDE;
                break;
            }
            if (at_terminator(l)) {
                lx_emit(l, state == S_VARIABLE ? I_VARIABLE : I_DOT);
                state = S_INSIDE;
                break;
            }
            for (;;) {
                r = lx_next(l);
                if (!is_alnum(r)) {
                    lx_backup(l);
                    break;
                }
            }
            if (!at_terminator(l)) {
                fmt_U(ubuf, sizeof(ubuf), r);
                lx_errorf(l, "bad character %s", ubuf);
                return;
            }
            lx_emit(l, state == S_VARIABLE ? I_VARIABLE : I_FIELD);
            state = S_INSIDE;
            break;
        }
        case S_CHAR:
        case S_QUOTE: {
            char q = state == S_CHAR ? '\'' : '"';
            for (;;) {
                int r = lx_next(l);
                if (r == '\\') {
                    r = lx_next(l);
                    if (r != LEOF && r != '\n')
                        continue;
                }
                if (r == LEOF || r == '\n') {
                    lx_errorf(l, q == '"' ? "unterminated quoted string" : "unterminated character constant");
                    return;
                }
                if (r == q)
                    break;
            }
            lx_emit(l, q == '"' ? I_STRING : I_CHARCONST);
            state = S_INSIDE;
            break;
        }
        case S_RAW:
            for (;;) {
                int r = lx_next(l);
                if (r == LEOF) {
                    lx_errorf(l, "unterminated raw quoted string");
                    return;
                }
                if (r == '`')
                    break;
            }
            lx_emit(l, I_RAWSTRING);
            state = S_INSIDE;
            break;
        case S_NUMBER: {
            int sign;
            if (!scan_number(l)) {
                wh_buf b = WH_BUF_INIT;
                tm_quote(&b, l->in + l->start, l->pos - l->start, 0);
                lx_errorf(l, "bad number syntax: %s", b.data);
                wh_buf_free(&b);
                return;
            }
            sign = lx_peek(l);
            if (sign == '+' || sign == '-') {
                if (!scan_number(l) || l->in[l->pos - 1] != 'i') {
                    wh_buf b = WH_BUF_INIT;
                    tm_quote(&b, l->in + l->start, l->pos - l->start, 0);
                    lx_errorf(l, "bad number syntax: %s", b.data);
                    wh_buf_free(&b);
                    return;
                }
                lx_emit(l, I_COMPLEX);
            } else {
                lx_emit(l, I_NUMBER);
            }
            state = S_INSIDE;
            break;
        }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                    */

typedef struct parser {
    lexer *lx;
    size_t next; /* index of the next item */
    tm_arena *arena;
    const wh_tmpl_set *set;
    tm_tree *tree;
    const char *name; /* name of the tree being parsed (define) */
    tm_defs *defs;    /* this parse's definitions */
    const char **vars;
    size_t nvars, capvars;
    int range_depth;
    int action_line;
    char *errmsg;
    size_t errlen;
    int failed;
    int nomem;
    size_t hi;          /* furthest item read: Go reports its line */
    const char **names; /* interned names: open addressing, capnames a power of two */
    size_t nnames, capnames;
} parser;

const char tm_dollar[] = "$";

#define CHECK(p)                                                                                                       \
    do {                                                                                                               \
        if ((p)->failed)                                                                                               \
            return NULL;                                                                                               \
    } while (0)

static void p_errorf(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cur_line(parser *p)
{
    return p->lx->items[p->hi].line;
}

static void p_errorf(parser *p, const char *fmt, ...)
{
    char msg[WH_ERR_MSG_MAX];
    va_list ap;

    if (p->failed)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(p->errmsg, p->errlen, "template: %s:%d: %s", p->tree->parse_name, cur_line(p), msg);
    p->failed = 1;
}

static item *p_nexti(parser *p)
{
    item *it = &p->lx->items[p->next];
    if (p->next > p->hi)
        p->hi = p->next;
    if (p->next + 1 < p->lx->nitems)
        p->next++;
    else
        p->next = p->lx->nitems; /* stays on EOF/error */
    return it;
}

/* Items are never consumed past the final EOF/error item. */
static item *p_next(parser *p)
{
    if (p->next >= p->lx->nitems)
        return &p->lx->items[p->lx->nitems - 1];
    return p_nexti(p);
}

static void p_backup(parser *p)
{
    if (p->next > 0)
        p->next--;
}

static item *p_peek(parser *p)
{
    if (p->next >= p->lx->nitems)
        return &p->lx->items[p->lx->nitems - 1];
    if (p->next > p->hi)
        p->hi = p->next;
    return &p->lx->items[p->next];
}

static item *p_next_nonspace(parser *p)
{
    item *it;
    do {
        it = p_next(p);
    } while (it->typ == I_SPACE);
    return it;
}

static item *p_peek_nonspace(parser *p)
{
    item *it = p_next_nonspace(p);
    p_backup(p);
    return it;
}

static void item_string(const item *it, wh_buf *b)
{
    if (it->typ == I_EOF) {
        wh_buf_puts(b, "EOF");
    } else if (it->typ == I_ERROR) {
        wh_buf_append(b, it->val, it->len);
    } else if (it->typ > I_KEYWORD) {
        wh_buf_putc(b, '<');
        wh_buf_append(b, it->val, it->len);
        wh_buf_putc(b, '>');
    } else {
        /* %q, or %.10q... for long values (10 runes) */
        size_t n = 0, i = 0;
        unsigned r;
        while (i < it->len && n < 10) {
            size_t w = tm_utf8_decode(it->val + i, it->len - i, &r);
            i += w ? w : 1;
            n++;
        }
        if (i < it->len) {
            tm_quote(b, it->val, i, 0);
            wh_buf_puts(b, "...");
        } else {
            tm_quote(b, it->val, it->len, 0);
        }
    }
}

static void p_unexpected(parser *p, const item *it, const char *context)
{
    wh_buf b = WH_BUF_INIT;

    item_string(it, &b);
    if (it->typ == I_ERROR) {
        char extra[300] = "";
        if (p->action_line != 0 && p->action_line != it->line) {
            snprintf(extra, sizeof(extra), " in action started at %s:%d", p->tree->parse_name, p->action_line);
            if (it->len >= 7 && memcmp(it->val + it->len - 7, " action", 7) == 0)
                memmove(extra, extra + 10, strlen(extra + 10) + 1);
        }
        p_errorf(p, "%s%s", b.data ? b.data : "", extra);
    } else {
        p_errorf(p, "unexpected %s in %s", b.data ? b.data : "", context);
    }
    wh_buf_free(&b);
}

static item *p_expect(parser *p, itype t, const char *context)
{
    item *it = p_next_nonspace(p);
    if (it->typ != t)
        p_unexpected(p, it, context);
    return it;
}

static tm_node *new_node(parser *p, tm_nkind k, int pos)
{
    tm_node *n = tm_alloc(p->arena, sizeof(*n));
    if (n == NULL) {
        p->nomem = 1;
        p_errorf(p, "out of memory");
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    n->kind = (uint8_t)k;
    n->pos = pos;
    n->tree = p->tree;
    return n;
}

/* Growable arrays of node pointers, built in malloc'd space then copied to the arena. */
typedef struct nvec {
    tm_node **v;
    size_t n, cap;
} nvec;

static int nvec_push(parser *p, nvec *a, tm_node *n)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        tm_node **v = wh_realloc(a->v, cap * sizeof(*v));
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = n;
    return 0;
}

static tm_node **nvec_finish(parser *p, nvec *a, size_t *n)
{
    tm_node **out = NULL;

    *n = a->n;
    if (a->n) {
        out = tm_alloc(p->arena, a->n * sizeof(*out));
        if (out == NULL) {
            p->nomem = 1;
            p_errorf(p, "out of memory");
        } else {
            memcpy(out, a->v, a->n * sizeof(*out));
        }
    }
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
    return out;
}

static int push_var(parser *p, const char *name)
{
    if (p->nvars == p->capvars) {
        size_t cap = p->capvars ? p->capvars * 2 : 16;
        const char **v = wh_realloc(p->vars, cap * sizeof(*v));
        p->vars = v;
        p->capvars = cap;
    }
    p->vars[p->nvars++] = name;
    return 0;
}

/* One pointer per distinct name (field, key, variable) of the parse: the
 * executor compares names by pointer (variables) and caches field lookups
 * keyed by the name's pointer, so every `.Values` of a template shares one
 * cache entry per receiver.  The table lives as long as the parse. */
static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static const char *intern(parser *p, const char *s, size_t len)
{
    size_t i, mask;

    if (len == 1 && s[0] == '$')
        return tm_dollar;
    if (p->nnames * 2 >= p->capnames) { /* keep the load under a half */
        size_t cap = p->capnames ? p->capnames * 2 : 64, k;
        const char **v = wh_calloc(cap, sizeof(*v));
        for (k = 0; k < p->capnames; k++) {
            const char *o = p->names[k];
            if (o == NULL)
                continue;
            for (i = name_hash(o, strlen(o)) & (cap - 1); v[i] != NULL; i = (i + 1) & (cap - 1))
                ;
            v[i] = o;
        }
        free(p->names);
        p->names = v;
        p->capnames = cap;
    }
    mask = p->capnames - 1;
    for (i = name_hash(s, len) & mask; p->names[i] != NULL; i = (i + 1) & mask)
        if (strncmp(p->names[i], s, len) == 0 && p->names[i][len] == '\0')
            return p->names[i];
    if ((p->names[i] = tm_strndup(p->arena, s, len)) == NULL) {
        p->nomem = 1;
        p_errorf(p, "out of memory");
        return NULL;
    }
    p->nnames++;
    return p->names[i];
}

/* Split "a.b.c" into interned idents. */
static const char **split_dots(parser *p, const char *s, size_t len, size_t *n)
{
    size_t cnt = 1, i, k = 0, start = 0;
    const char **v;

    for (i = 0; i < len; i++)
        cnt += s[i] == '.';
    if ((v = tm_alloc(p->arena, cnt * sizeof(*v))) == NULL) {
        p->nomem = 1;
        p_errorf(p, "out of memory");
        return NULL;
    }
    for (i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if ((v[k++] = intern(p, s + start, i - start)) == NULL)
                return NULL;
            start = i + 1;
        }
    }
    *n = k;
    return v;
}

static tm_node *new_field(parser *p, int pos, const char *s, size_t len)
{
    tm_node *n = new_node(p, N_FIELD, pos);
    CHECK(p);
    n->u.field.idents = split_dots(p, s + 1, len - 1, &n->u.field.n);
    return n;
}

static tm_node *new_variable(parser *p, int pos, const char *s, size_t len)
{
    tm_node *n = new_node(p, N_VARIABLE, pos);
    CHECK(p);
    n->u.field.idents = split_dots(p, s, len, &n->u.field.n);
    return n;
}

static tm_node *item_list(parser *p, tm_node **end);
static tm_node *pipeline(parser *p, const char *context, itype end);
static tm_node *if_control(parser *p);
static tm_node *text_or_action(parser *p);

/* Go's IsEmptyTree */
int tm_is_empty_tree(const tm_node *n)
{
    size_t i;

    if (n == NULL)
        return 1;
    switch (n->kind) {
    case N_COMMENT:
        return 1;
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            if (!tm_is_empty_tree(n->u.list.items[i]))
                return 0;
        return 1;
    case N_TEXT:
        for (i = 0; i < n->u.text.len; i++)
            if (!is_space((unsigned char)n->u.text.s[i]) && n->u.text.s[i] != '\v' && n->u.text.s[i] != '\f')
                return 0;
        return 1;
    default:
        return 0;
    }
}

static int defs_put(tm_defs *defs, const char *name, tm_node *root, const tm_tree *tree)
{
    size_t i;

    for (i = 0; i < defs->n; i++) {
        if (strcmp(defs->items[i].name, name) == 0) {
            defs->items[i].root = root;
            defs->items[i].tree = tree;
            return 0;
        }
    }
    if (defs->n == defs->cap) {
        size_t cap = defs->cap ? defs->cap * 2 : 8;
        tm_def *v = wh_realloc(defs->items, cap * sizeof(*v));
        defs->items = v;
        defs->cap = cap;
    }
    defs->items[defs->n].name = name;
    defs->items[defs->n].root = root;
    defs->items[defs->n].tree = tree;
    defs->n++;
    return 0;
}

const tm_def *tm_find_def(const tm_defs *defs, const char *name)
{
    size_t i;

    for (i = 0; i < defs->n; i++)
        if (strcmp(defs->items[i].name, name) == 0)
            return &defs->items[i];
    return NULL;
}

/* Go's Tree.add: a tree joins the parse's set unless a non-empty one exists. */
static void tree_add(parser *p, const char *name, tm_node *root)
{
    const tm_def *old = tm_find_def(p->defs, name);

    if (old == NULL || tm_is_empty_tree(old->root)) {
        if (defs_put(p->defs, name, root, p->tree) != 0) {
            p->nomem = 1;
            p_errorf(p, "out of memory");
        }
        return;
    }
    if (!tm_is_empty_tree(root)) {
        wh_buf b = WH_BUF_INIT;
        tm_quote(&b, name, strlen(name), 0);
        p_errorf(p, "template: multiple definition of template %s", b.data);
        wh_buf_free(&b);
    }
}

static const char *unquote_item(parser *p, const item *it, size_t *len)
{
    wh_buf b = WH_BUF_INIT;
    const char *s;

    if (tm_unquote(it->val, it->len, &b) != 0) {
        wh_buf_free(&b);
        p_errorf(p, "invalid syntax");
        return NULL;
    }
    s = tm_strndup(p->arena, b.data ? b.data : "", b.len);
    *len = b.len;
    wh_buf_free(&b);
    if (s == NULL) {
        p->nomem = 1;
        p_errorf(p, "out of memory");
    }
    return s;
}

static void parse_definition(parser *p)
{
    const char *context = "define clause";
    item *it = p_next_nonspace(p);
    const char *name;
    size_t len;
    tm_node *root, *end = NULL;
    const char *saved = p->name;

    if (it->typ != I_STRING && it->typ != I_RAWSTRING) {
        p_unexpected(p, it, context);
        return;
    }
    if ((name = unquote_item(p, it, &len)) == NULL)
        return;
    p_expect(p, I_RDELIM, context);
    if (p->failed)
        return;
    p->name = name;
    root = item_list(p, &end);
    if (p->failed)
        return;
    if (end->kind != N_END) {
        p_errorf(p, "unexpected {{else}} in %s", context);
        return;
    }
    tree_add(p, name, root);
    p->name = saved;
}

static tm_node *new_list(parser *p, int pos)
{
    tm_node *n = new_node(p, N_LIST, pos);
    return n;
}

/* itemList: nodes until {{end}} or {{else}} (returned in *end). */
static tm_node *item_list(parser *p, tm_node **end)
{
    nvec v = {0};
    tm_node *list = new_list(p, p_peek_nonspace(p)->pos), *n;

    CHECK(p);
    while (p_peek_nonspace(p)->typ != I_EOF) {
        n = text_or_action(p);
        if (p->failed) {
            free(v.v);
            return NULL;
        }
        if (n->kind == N_END || n->kind == N_ELSE) {
            *end = n;
            list->u.list.items = nvec_finish(p, &v, &list->u.list.n);
            return list;
        }
        if (nvec_push(p, &v, n) != 0) {
            free(v.v);
            return NULL;
        }
    }
    free(v.v);
    p_errorf(p, "unexpected EOF");
    return NULL;
}

static tm_node *parse_control(parser *p, int allow_else_if, const char *context, tm_nkind kind)
{
    size_t mark = p->nvars;
    tm_node *pipe, *list, *else_list = NULL, *next = NULL, *n;

    pipe = pipeline(p, context, I_RDELIM);
    CHECK(p);
    if (kind == N_RANGE)
        p->range_depth++;
    list = item_list(p, &next);
    if (kind == N_RANGE)
        p->range_depth--;
    CHECK(p);
    if (next->kind == N_ELSE) {
        if (allow_else_if && p_peek(p)->typ == I_IF) {
            p_next(p);
            else_list = new_list(p, next->pos);
            CHECK(p);
            n = if_control(p);
            CHECK(p);
            if ((else_list->u.list.items = tm_alloc(p->arena, sizeof(tm_node *))) == NULL) {
                p->nomem = 1;
                p_errorf(p, "out of memory");
                return NULL;
            }
            else_list->u.list.items[0] = n;
            else_list->u.list.n = 1;
        } else {
            else_list = item_list(p, &next);
            CHECK(p);
            if (next->kind != N_END) {
                p_errorf(p, "expected end; found {{else}}");
                return NULL;
            }
        }
    }
    p->nvars = mark;
    n = new_node(p, kind, pipe->pos);
    CHECK(p);
    n->line = pipe->line;
    n->u.branch.pipe = pipe;
    n->u.branch.list = list;
    n->u.branch.else_list = else_list;
    return n;
}

static tm_node *if_control(parser *p)
{
    return parse_control(p, 1, "if", N_IF);
}

static const char *template_name(parser *p, const item *it, const char *context)
{
    size_t len;

    if (it->typ != I_STRING && it->typ != I_RAWSTRING) {
        p_unexpected(p, it, context);
        return NULL;
    }
    return unquote_item(p, it, &len);
}

/* The node of {{template name pipe}}, also what {{block}} leaves in its place. */
static tm_node *template_node(parser *p, int pos, int line, const char *name, tm_node *pipe)
{
    tm_node *n = new_node(p, N_TEMPLATE, pos);

    CHECK(p);
    n->line = line;
    n->u.tmpl.name = name;
    n->u.tmpl.pipe = pipe;
    return n;
}

static tm_node *block_control(parser *p)
{
    const char *context = "block clause";
    item *it = p_next_nonspace(p);
    const char *name = template_name(p, it, context), *saved = p->name;
    tm_node *pipe, *root, *end = NULL;
    int pos = it->pos, line = it->line;

    CHECK(p);
    pipe = pipeline(p, context, I_RDELIM);
    CHECK(p);
    p->name = name;
    {
        /* the block body is its own tree: it starts with only $ in scope */
        const char **saved_vars = p->vars;
        size_t saved_n = p->nvars, saved_cap = p->capvars;
        int saved_rd = p->range_depth;
        p->vars = NULL;
        p->nvars = p->capvars = 0;
        p->range_depth = 0;
        if (push_var(p, "$") == 0)
            root = item_list(p, &end);
        else
            root = NULL;
        free(p->vars);
        p->vars = saved_vars;
        p->nvars = saved_n;
        p->capvars = saved_cap;
        p->range_depth = saved_rd;
    }
    p->name = saved;
    CHECK(p);
    if (end->kind != N_END) {
        p_errorf(p, "unexpected {{else}} in %s", context);
        return NULL;
    }
    tree_add(p, name, root);
    CHECK(p);
    return template_node(p, pos, line, name, pipe);
}

static tm_node *template_control(parser *p)
{
    const char *context = "template clause";
    item *it = p_next_nonspace(p);
    const char *name = template_name(p, it, context);
    tm_node *pipe = NULL;
    int pos = it->pos, line = it->line;

    CHECK(p);
    if (p_next_nonspace(p)->typ != I_RDELIM) {
        p_backup(p);
        pipe = pipeline(p, context, I_RDELIM);
        CHECK(p);
    }
    return template_node(p, pos, line, name, pipe);
}

static tm_node *action(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n, *pipe;

    switch (it->typ) {
    case I_BLOCK:
        return block_control(p);
    case I_BREAK:
    case I_CONTINUE: {
        int is_break = it->typ == I_BREAK;
        item *t = p_next_nonspace(p);
        if (t->typ != I_RDELIM) {
            p_unexpected(p, t, is_break ? "{{break}}" : "{{continue}}");
            return NULL;
        }
        if (p->range_depth == 0) {
            p_errorf(p, is_break ? "{{break}} outside {{range}}" : "{{continue}} outside {{range}}");
            return NULL;
        }
        n = new_node(p, is_break ? N_BREAK : N_CONTINUE, it->pos);
        if (n)
            n->line = it->line;
        return n;
    }
    case I_ELSE: {
        item *pk = p_peek_nonspace(p);
        if (pk->typ == I_IF) {
            n = new_node(p, N_ELSE, pk->pos);
            if (n)
                n->line = pk->line;
            return n;
        }
        it = p_expect(p, I_RDELIM, "else");
        CHECK(p);
        n = new_node(p, N_ELSE, it->pos);
        if (n)
            n->line = it->line;
        return n;
    }
    case I_END:
        it = p_expect(p, I_RDELIM, "end");
        CHECK(p);
        return new_node(p, N_END, it->pos);
    case I_IF:
        return if_control(p);
    case I_RANGE:
        return parse_control(p, 0, "range", N_RANGE);
    case I_TEMPLATE:
        return template_control(p);
    case I_WITH:
        return parse_control(p, 0, "with", N_WITH);
    default:
        break;
    }
    p_backup(p);
    it = p_peek(p);
    {
        int pos = it->pos, line = it->line;
        pipe = pipeline(p, "command", I_RDELIM);
        CHECK(p);
        n = new_node(p, N_ACTION, pos);
        CHECK(p);
        n->line = line;
        n->u.branch.pipe = pipe;
    }
    return n;
}

static tm_node *text_or_action(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n;

    switch (it->typ) {
    case I_TEXT:
        n = new_node(p, N_TEXT, it->pos);
        CHECK(p);
        n->u.text.s = it->val;
        n->u.text.len = it->len;
        return n;
    case I_LDELIM:
        p->action_line = it->line;
        n = action(p);
        p->action_line = 0;
        return n;
    default:
        p_unexpected(p, it, "input");
        return NULL;
    }
}

static tm_node *command(parser *p);

static int check_pipeline(parser *p, tm_node *pipe, const char *context)
{
    size_t i;

    if (pipe->u.pipe.ncmds == 0) {
        p_errorf(p, "missing value for %s", context);
        return -1;
    }
    for (i = 1; i < pipe->u.pipe.ncmds; i++) {
        switch (pipe->u.pipe.cmds[i]->u.cmd.args[0]->kind) {
        case N_BOOL:
        case N_DOT:
        case N_NIL:
        case N_NUMBER:
        case N_STRING:
            p_errorf(p, "non executable command in pipeline stage %zu", i + 1);
            return -1;
        }
    }
    return 0;
}

static tm_node *pipeline(parser *p, const char *context, itype end)
{
    item *tok = p_peek_nonspace(p);
    tm_node *pipe = new_node(p, N_PIPE, tok->pos);
    nvec decl = {0}, cmds = {0};

    CHECK(p);
    pipe->line = tok->line;
decls:
    if (p_peek_nonspace(p)->typ == I_VARIABLE) {
        item *v = p_next_nonspace(p);
        item *after = p_peek(p);
        item *next = p_peek_nonspace(p);
        if (next->typ == I_ASSIGN || next->typ == I_DECLARE) {
            tm_node *vn;
            pipe->u.pipe.is_assign = next->typ == I_ASSIGN;
            p_next_nonspace(p);
            vn = new_variable(p, v->pos, v->val, v->len);
            if (p->failed || nvec_push(p, &decl, vn) != 0 || push_var(p, vn->u.field.idents[0]) != 0)
                goto fail;
        } else if (next->typ == I_CHAR && next->len == 1 && next->val[0] == ',') {
            tm_node *vn;
            p_next_nonspace(p);
            vn = new_variable(p, v->pos, v->val, v->len);
            if (p->failed || nvec_push(p, &decl, vn) != 0 || push_var(p, vn->u.field.idents[0]) != 0)
                goto fail;
            if (strcmp(context, "range") == 0 && decl.n < 2) {
                switch (p_peek_nonspace(p)->typ) {
                case I_VARIABLE:
                case I_RDELIM:
                case I_RPAREN:
                    goto decls;
                default:
                    p_errorf(p, "range can only initialize variables");
                    goto fail;
                }
            }
            p_errorf(p, "too many declarations in %s", context);
            goto fail;
        } else if (after->typ == I_SPACE) {
            /* backup3(v, tokenAfterVariable): re-read from the variable */
            p->next = (size_t)(v - p->lx->items);
        } else {
            p->next = (size_t)(v - p->lx->items);
        }
    }
    for (;;) {
        item *it = p_next_nonspace(p);
        if (it->typ == end) {
            pipe->u.pipe.decl = nvec_finish(p, &decl, &pipe->u.pipe.ndecl);
            pipe->u.pipe.cmds = nvec_finish(p, &cmds, &pipe->u.pipe.ncmds);
            if (p->failed || check_pipeline(p, pipe, context) != 0)
                return NULL;
            return pipe;
        }
        switch (it->typ) {
        case I_BOOL:
        case I_CHARCONST:
        case I_COMPLEX:
        case I_DOT:
        case I_FIELD:
        case I_IDENT:
        case I_NUMBER:
        case I_NIL:
        case I_RAWSTRING:
        case I_STRING:
        case I_VARIABLE:
        case I_LPAREN: {
            tm_node *c;
            p_backup(p);
            c = command(p);
            if (p->failed || nvec_push(p, &cmds, c) != 0)
                goto fail;
            break;
        }
        default:
            p_unexpected(p, it, context);
            goto fail;
        }
    }
fail:
    free(decl.v);
    free(cmds.v);
    return NULL;
}

static tm_node *use_var(parser *p, int pos, const char *s, size_t len)
{
    tm_node *v = new_variable(p, pos, s, len);
    size_t i;

    CHECK(p);
    for (i = 0; i < p->nvars; i++)
        if (strcmp(p->vars[i], v->u.field.idents[0]) == 0)
            return v;
    {
        wh_buf b = WH_BUF_INIT;
        tm_quote(&b, v->u.field.idents[0], strlen(v->u.field.idents[0]), 0);
        p_errorf(p, "undefined variable %s", b.data);
        wh_buf_free(&b);
    }
    return NULL;
}

static int parse_number(parser *p, tm_node *n, const item *it)
{
    char buf[128], *end;
    size_t i, k = 0;
    const char *text = it->val;
    size_t len = it->len;
    int neg = 0, base = 10, ok_u = 0, ok_i = 0;
    unsigned long long u = 0;

    n->u.num.text = tm_strndup(p->arena, text, len);
    if (it->typ == I_CHARCONST) {
        unsigned r;
        size_t used = unquote_char(text + 1, len - 1, '\'', NULL, &r);
        if (used == 0) {
            p_errorf(p, "invalid syntax");
            return -1;
        }
        if (1 + used != len - 1) {
            p_errorf(p, "malformed character constant: %.*s", (int)len, text);
            return -1;
        }
        n->u.num.is_int = n->u.num.is_uint = n->u.num.is_float = 1;
        n->u.num.i = r;
        n->u.num.u = r;
        n->u.num.f = r;
        return 0;
    }
    if (it->typ == I_COMPLEX || (len > 0 && text[len - 1] == 'i')) {
        p_errorf(p, "complex numbers are not supported: %.*s", (int)len, text);
        return -1;
    }
    if (len >= sizeof(buf)) {
        p_errorf(p, "illegal number syntax: \"%.*s\"", (int)len, text);
        return -1;
    }
    /* Go's base-prefix integer parsing with '_' separators (only with a base prefix or between digits) */
    i = 0;
    if (text[0] == '+' || text[0] == '-') {
        neg = text[0] == '-';
        i = 1;
    }
    if (len - i > 1 && text[i] == '0') {
        char c = (char)(text[i + 1] | 0x20);
        if (c == 'x')
            base = 16, i += 2;
        else if (c == 'o')
            base = 8, i += 2;
        else if (c == 'b')
            base = 2, i += 2;
        else
            base = 8, i += 1; /* leading 0: octal */
    }
    {
        int underscore_ok = 1, lastus = (base != 10), sawdigit = 0, bad = 0, ovf = 0;
        for (; i < len; i++) {
            char c = text[i];
            int d;
            if (c == '_') {
                if (!lastus && !sawdigit && base == 10)
                    bad = 1;
                if (lastus == 2)
                    bad = 1;
                lastus = 2;
                continue;
            }
            d = wh_hex_digit(c);
            if (d < 0 || d >= base) {
                bad = 1;
                break;
            }
            if (u > (~0ULL - (unsigned)d) / (unsigned)base)
                ovf = 1;
            u = u * (unsigned)base + (unsigned)d;
            sawdigit = 1;
            lastus = 0;
        }
        if (lastus == 2)
            bad = 1;
        (void)underscore_ok;
        if (!bad && (sawdigit || (base == 8 && len - (neg || text[0] == '+') == 1))) {
            if (!ovf) {
                if (!neg) {
                    ok_u = text[0] != '+' || 1;
                    if (u <= (unsigned long long)INT64_MAX)
                        ok_i = 1;
                } else if (u <= (unsigned long long)INT64_MAX + 1ULL) {
                    ok_i = 1;
                }
            }
        }
        /* strconv.ParseUint rejects signs */
        if (text[0] == '+' || text[0] == '-')
            ok_u = 0;
        if (ok_u) {
            n->u.num.is_uint = 1;
            n->u.num.u = u;
        }
        if (ok_i) {
            n->u.num.is_int = 1;
            n->u.num.i = neg ? (int64_t)(0 - u) : (int64_t)u;
            if (n->u.num.i == 0) {
                n->u.num.is_uint = 1;
                n->u.num.u = 0;
            }
        }
    }
    if (n->u.num.is_int) {
        n->u.num.is_float = 1;
        n->u.num.f = (double)n->u.num.i;
    } else if (n->u.num.is_uint) {
        n->u.num.is_float = 1;
        n->u.num.f = (double)n->u.num.u;
    } else {
        /* float: strip '_' separators; hex floats via strtod too */
        int has_dot = 0;
        for (i = 0; i < len; i++) {
            if (text[i] == '_')
                continue;
            if (strchr(".eEpP", text[i]))
                has_dot = 1;
            buf[k++] = text[i];
        }
        buf[k] = 0;
        errno = 0;
        if (k > 0) {
            double f = strtod(buf, &end);
            int hex = k > 2 && (buf[0] == '0' || buf[1] == '0') && strpbrk(buf, "xX") != NULL;
            if (*end == 0 && (errno == 0 || (errno == ERANGE && fabs(f) < 1)) && (!hex || strpbrk(buf, "pP"))) {
                if (!has_dot) {
                    p_errorf(p, "integer overflow: \"%.*s\"", (int)len, text);
                    return -1;
                }
                n->u.num.is_float = 1;
                n->u.num.f = f;
                if (f == (double)(int64_t)f && fabs(f) < 9.3e18) {
                    n->u.num.is_int = 1;
                    n->u.num.i = (int64_t)f;
                }
                if (f >= 0 && f < 1.8e19 && f == (double)(uint64_t)f) {
                    n->u.num.is_uint = 1;
                    n->u.num.u = (uint64_t)f;
                }
            }
        }
    }
    if (!n->u.num.is_int && !n->u.num.is_uint && !n->u.num.is_float) {
        wh_buf b = WH_BUF_INIT;
        tm_quote(&b, text, len, 0);
        p_errorf(p, "illegal number syntax: %s", b.data);
        wh_buf_free(&b);
        return -1;
    }
    return 0;
}

static tm_node *term(parser *p)
{
    item *it = p_next_nonspace(p);
    tm_node *n;

    switch (it->typ) {
    case I_IDENT: {
        const tm_func *fn = tm_find_func(p->set, it->val, it->len);
        if (fn == NULL) {
            wh_buf b = WH_BUF_INIT;
            tm_quote(&b, it->val, it->len, 0);
            p_errorf(p, "function %s not defined", b.data);
            wh_buf_free(&b);
            return NULL;
        }
        n = new_node(p, N_IDENT, it->pos);
        CHECK(p);
        n->u.ident.name = fn->name;
        n->u.ident.fn = fn;
        return n;
    }
    case I_DOT:
        return new_node(p, N_DOT, it->pos);
    case I_NIL:
        return new_node(p, N_NIL, it->pos);
    case I_VARIABLE:
        return use_var(p, it->pos, it->val, it->len);
    case I_FIELD:
        return new_field(p, it->pos, it->val, it->len);
    case I_BOOL:
        n = new_node(p, N_BOOL, it->pos);
        CHECK(p);
        n->u.boolean = it->len == 4;
        return n;
    case I_CHARCONST:
    case I_COMPLEX:
    case I_NUMBER:
        n = new_node(p, N_NUMBER, it->pos);
        CHECK(p);
        if (parse_number(p, n, it) != 0)
            return NULL;
        return n;
    case I_LPAREN:
        return pipeline(p, "parenthesized pipeline", I_RPAREN);
    case I_STRING:
    case I_RAWSTRING:
        n = new_node(p, N_STRING, it->pos);
        CHECK(p);
        n->u.str.quoted = tm_strndup(p->arena, it->val, it->len);
        n->u.str.s = unquote_item(p, it, &n->u.str.len);
        CHECK(p);
        return n;
    default:
        p_backup(p);
        return NULL;
    }
}

static tm_node *operand(parser *p)
{
    tm_node *node = term(p);

    if (node == NULL || p->failed)
        return NULL;
    if (p_peek(p)->typ == I_FIELD) {
        int pos = p_peek(p)->pos;
        nvec fields = {0};
        const char **names;
        size_t nf, i;
        while (p_peek(p)->typ == I_FIELD) {
            item *f = p_next(p);
            const char *name = intern(p, f->val + 1, f->len - 1);
            if (name == NULL || nvec_push(p, &fields, (tm_node *)name) != 0) {
                free(fields.v);
                return NULL;
            }
        }
        nf = fields.n;
        names = (const char **)nvec_finish(p, &fields, &nf);
        CHECK(p);
        switch (node->kind) {
        case N_FIELD:
        case N_VARIABLE: {
            /* .a.b or $x.a: merge into one node */
            size_t n0 = node->u.field.n;
            const char **all = tm_alloc(p->arena, (n0 + nf) * sizeof(*all));
            if (all == NULL) {
                p->nomem = 1;
                p_errorf(p, "out of memory");
                return NULL;
            }
            memcpy(all, node->u.field.idents, n0 * sizeof(*all));
            for (i = 0; i < nf; i++)
                all[n0 + i] = names[i];
            node->u.field.idents = all;
            node->u.field.n = n0 + nf;
            node->pos = pos;
            return node;
        }
        case N_BOOL:
        case N_STRING:
        case N_NUMBER:
        case N_NIL:
        case N_DOT: {
            wh_buf b = WH_BUF_INIT, q = WH_BUF_INIT;
            tm_node_string(node, &b);
            tm_quote(&q, b.data ? b.data : "", b.len, 0);
            p_errorf(p, "unexpected . after term %s", q.data);
            wh_buf_free(&b);
            wh_buf_free(&q);
            return NULL;
        }
        default: {
            tm_node *c = new_node(p, N_CHAIN, pos);
            CHECK(p);
            c->u.chain.base = node;
            c->u.chain.fields = names;
            c->u.chain.n = nf;
            return c;
        }
        }
    }
    return node;
}

static tm_node *command(parser *p)
{
    tm_node *cmd = new_node(p, N_COMMAND, p_peek_nonspace(p)->pos), *op;
    nvec args = {0};

    CHECK(p);
    for (;;) {
        item *it;
        p_peek_nonspace(p);
        op = operand(p);
        if (p->failed)
            goto fail;
        if (op != NULL && nvec_push(p, &args, op) != 0)
            goto fail;
        it = p_next(p);
        switch (it->typ) {
        case I_SPACE:
            continue;
        case I_RDELIM:
        case I_RPAREN:
            p_backup(p);
            break;
        case I_PIPE:
            break;
        default:
            p_unexpected(p, it, "operand");
            goto fail;
        }
        break;
    }
    if (args.n == 0) {
        p_errorf(p, "empty command");
        goto fail;
    }
    cmd->u.cmd.args = nvec_finish(p, &args, &cmd->u.cmd.nargs);
    CHECK(p);
    return cmd;
fail:
    free(args.v);
    return NULL;
}

static void parse_top(parser *p)
{
    nvec v = {0};
    tm_node *root = new_list(p, p_peek(p)->pos), *n;

    if (p->failed)
        return;
    while (p_peek(p)->typ != I_EOF) {
        if (p_peek(p)->typ == I_LDELIM) {
            size_t mark = p->next;
            p_next(p);
            if (p_next_nonspace(p)->typ == I_DEFINE) {
                /* a definition starts with only $ in scope */
                const char **saved_vars = p->vars;
                size_t saved_n = p->nvars, saved_cap = p->capvars;
                p->vars = NULL;
                p->nvars = p->capvars = 0;
                if (push_var(p, "$") == 0)
                    parse_definition(p);
                free(p->vars);
                p->vars = saved_vars;
                p->nvars = saved_n;
                p->capvars = saved_cap;
                if (p->failed)
                    goto out;
                continue;
            }
            p->next = mark;
        }
        n = text_or_action(p);
        if (p->failed)
            goto out;
        if (n->kind == N_END || n->kind == N_ELSE) {
            p_errorf(p, "unexpected %s", n->kind == N_END ? "{{end}}" : "{{else}}");
            goto out;
        }
        if (nvec_push(p, &v, n) != 0)
            goto out;
    }
    root->u.list.items = nvec_finish(p, &v, &root->u.list.n);
    if (!p->failed)
        tree_add(p, p->tree->parse_name, root);
out:
    free(v.v);
}

wh_code tm_parse(const wh_tmpl_set *set, tm_arena *arena, tm_defs *defs, const char *name, const char *text, size_t len,
                 char *errmsg, size_t errlen)
{
    lexer lx;
    parser p;
    tm_tree *tree;
    char *copy;
    wh_code rc = WH_OK;

    memset(&lx, 0, sizeof(lx));
    memset(&p, 0, sizeof(p));
    if ((tree = tm_alloc(arena, sizeof(*tree))) == NULL || (copy = tm_strndup(arena, text, len)) == NULL ||
        (tree->parse_name = tm_strndup(arena, name, strlen(name))) == NULL)
        return WH_E_NOMEM;
    tree->text = copy;
    tree->len = len;
    lx.in = copy;
    lx.len = len;
    lx.ld = set->ldelim ? set->ldelim : "{{";
    lx.rd = set->rdelim ? set->rdelim : "}}";
    lx.ldl = strlen(lx.ld);
    lx.rdl = strlen(lx.rd);
    lx.line = lx.start_line = 1;
    lx.arena = arena;
    lx.break_ok = tm_find_func(set, "break", 5) == NULL;
    lx.continue_ok = tm_find_func(set, "continue", 8) == NULL;
    lex_all(&lx);
    if (lx.failed) {
        rc = WH_E_NOMEM;
        goto out;
    }
    p.lx = &lx;
    p.arena = arena;
    p.set = set;
    p.tree = tree;
    p.name = tree->parse_name;
    p.defs = defs;
    p.errmsg = errmsg;
    p.errlen = errlen;
    if (push_var(&p, "$") != 0) {
        rc = WH_E_NOMEM;
        goto out;
    }
    parse_top(&p);
    if (p.failed)
        rc = p.nomem ? WH_E_NOMEM : WH_E_PARSE;
out:
    free(lx.items);
    free(p.vars);
    free(p.names);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Node printing (Go's String methods), for error messages                   */

/* An operand of a command or chain: a pipeline there was written in parentheses. */
static void operand_string(const tm_node *n, wh_buf *out)
{
    if (n->kind == N_PIPE) {
        wh_buf_putc(out, '(');
        tm_node_string(n, out);
        wh_buf_putc(out, ')');
    } else {
        tm_node_string(n, out);
    }
}

void tm_node_string(const tm_node *n, wh_buf *out)
{
    size_t i;

    switch (n->kind) {
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            tm_node_string(n->u.list.items[i], out);
        break;
    case N_TEXT:
        wh_buf_printf(out, "%.*s", (int)n->u.text.len, n->u.text.s);
        break;
    case N_ACTION:
        wh_buf_puts(out, "{{");
        tm_node_string(n->u.branch.pipe, out);
        wh_buf_puts(out, "}}");
        break;
    case N_IF:
    case N_RANGE:
    case N_WITH:
        wh_buf_puts(out, n->kind == N_IF ? "{{if " : n->kind == N_RANGE ? "{{range " : "{{with ");
        tm_node_string(n->u.branch.pipe, out);
        wh_buf_puts(out, "}}");
        tm_node_string(n->u.branch.list, out);
        if (n->u.branch.else_list) {
            wh_buf_puts(out, "{{else}}");
            tm_node_string(n->u.branch.else_list, out);
        }
        wh_buf_puts(out, "{{end}}");
        break;
    case N_TEMPLATE:
        wh_buf_puts(out, "{{template ");
        tm_quote(out, n->u.tmpl.name, strlen(n->u.tmpl.name), 0);
        if (n->u.tmpl.pipe) {
            wh_buf_putc(out, ' ');
            tm_node_string(n->u.tmpl.pipe, out);
        }
        wh_buf_puts(out, "}}");
        break;
    case N_BREAK:
        wh_buf_puts(out, "{{break}}");
        break;
    case N_CONTINUE:
        wh_buf_puts(out, "{{continue}}");
        break;
    case N_PIPE:
        for (i = 0; i < n->u.pipe.ndecl; i++) {
            if (i > 0)
                wh_buf_puts(out, ", ");
            tm_node_string(n->u.pipe.decl[i], out);
        }
        if (n->u.pipe.ndecl)
            wh_buf_puts(out, " := ");
        for (i = 0; i < n->u.pipe.ncmds; i++) {
            if (i > 0)
                wh_buf_puts(out, " | ");
            tm_node_string(n->u.pipe.cmds[i], out);
        }
        break;
    case N_COMMAND:
        for (i = 0; i < n->u.cmd.nargs; i++) {
            if (i > 0)
                wh_buf_putc(out, ' ');
            operand_string(n->u.cmd.args[i], out);
        }
        break;
    case N_FIELD:
        for (i = 0; i < n->u.field.n; i++) {
            wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.field.idents[i]);
        }
        break;
    case N_VARIABLE:
        for (i = 0; i < n->u.field.n; i++) {
            if (i > 0)
                wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.field.idents[i]);
        }
        break;
    case N_CHAIN:
        operand_string(n->u.chain.base, out);
        for (i = 0; i < n->u.chain.n; i++) {
            wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.chain.fields[i]);
        }
        break;
    case N_IDENT:
        wh_buf_puts(out, n->u.ident.name);
        break;
    case N_DOT:
        wh_buf_putc(out, '.');
        break;
    case N_NIL:
        wh_buf_puts(out, "nil");
        break;
    case N_BOOL:
        wh_buf_puts(out, n->u.boolean ? "true" : "false");
        break;
    case N_NUMBER:
        wh_buf_puts(out, n->u.num.text);
        break;
    case N_STRING:
        wh_buf_puts(out, n->u.str.quoted);
        break;
    case N_END:
        wh_buf_puts(out, "{{end}}");
        break;
    case N_ELSE:
        wh_buf_puts(out, "{{else}}");
        break;
    case N_COMMENT:
        break;
    }
}
