/*
 * gojson.c - encoding/json's verdict on a piece of text, as istiod's spec
 * decoder meets it.  golang/protobuf's jsonpb (pkg/util/protomarshal
 * ApplyJSON) decodes an integer or float field written as a JSON string by
 * stripping the quotes and handing what is inside to json.Unmarshal
 * ("trimQuote"), and a map<uint32, ...> key the same way; so `port: "80x"`
 * is refused with Go's scanner text "invalid character 'x' after top-level
 * value".  This file is that scanner's error texts and the number decode
 * after it; decode.c calls it, and security.c for the JWKS text jwk.Parse
 * reads (cases: tests/validate/fixtures/86-jsonpb-decode.yaml, 88-jwks.yaml).
 */
#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_validate_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan {
    const unsigned char *p, *end;
    wh_buf *err;
} scan;

/* quoteChar: 'x', '\'', '"', '\n', '\x01', 'é' (a byte is shown as the rune of the same number). */
static void quote_char(wh_buf *out, unsigned char c)
{
    if (c == '\'') {
        wh_buf_puts(out, "'\\''");
        return;
    }
    if (c == '"') {
        wh_buf_puts(out, "'\"'");
        return;
    }
    wh_buf_putc(out, '\'');
    if (c >= 0x80) {
        /* strconv.Quote of U+0080..U+00FF: printable Latin-1 as is, the C1 controls, NBSP and SHY escaped */
        if (c < 0xa0 || c == 0xa0 || c == 0xad)
            wh_buf_printf(out, "\\u%04x", c);
        else {
            wh_buf_putc(out, (char)(0xc0 | (c >> 6)));
            wh_buf_putc(out, (char)(0x80 | (c & 0x3f)));
        }
    } else {
        char one[2] = {(char)c, '\0'};
        wh_buf b = WH_BUF_INIT;
        wh_vquote(&b, one);
        if (c == '\0')
            wh_buf_puts(out, "\\x00");
        else
            wh_buf_append(out, b.data + 1, b.len - 2);
        wh_buf_free(&b);
    }
    wh_buf_putc(out, '\'');
}

/* A SyntaxError: "invalid character C <context>".  At the end of the text Go's scanner steps once more
 * with a space: where a space is wrong too (inside a number, a literal or an escape: `inside`) that
 * space is the invalid character, else the text is "unexpected end of JSON input". */
static int bad_in(scan *s, const char *context, int inside)
{
    if (s->err == NULL)
        return -1;
    if (s->p >= s->end && !inside) {
        wh_buf_puts(s->err, "unexpected end of JSON input");
        return -1;
    }
    wh_buf_puts(s->err, "invalid character ");
    quote_char(s->err, s->p < s->end ? *s->p : ' ');
    wh_buf_printf(s->err, " %s", context);
    return -1;
}

static int bad(scan *s, const char *context)
{
    return bad_in(s, context, 0);
}

static void skip_space(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

static int is_digit(const scan *s)
{
    return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

static int value(scan *s, int depth);

static int literal(scan *s, const char *word)
{
    char context[64];

    for (const char *w = word + 1; *w; w++) {
        s->p++;
        if (s->p >= s->end || *s->p != *w) {
            snprintf(context, sizeof(context), "in literal %s (expecting '%c')", word, *w);
            return bad_in(s, context, 1);
        }
    }
    s->p++;
    return 0;
}

static int string(scan *s)
{
    for (s->p++; s->p < s->end; s->p++) {
        if (*s->p == '"') {
            s->p++;
            return 0;
        }
        if (*s->p < 0x20)
            return bad(s, "in string literal");
        if (*s->p == '\\') {
            s->p++;
            if (s->p < s->end && *s->p == 'u') {
                for (int i = 0; i < 4; i++) {
                    s->p++;
                    if (s->p >= s->end || strchr("0123456789abcdefABCDEF", *s->p) == NULL || *s->p == '\0')
                        return bad_in(s, "in \\u hexadecimal character escape", 1);
                }
            } else if (s->p >= s->end || strchr("bfnrt\\/\"", *s->p) == NULL || *s->p == '\0')
                return bad_in(s, "in string escape code", 1);
        }
    }
    return bad(s, "");
}

static int number(scan *s)
{
    if (*s->p == '-') {
        s->p++;
        if (!is_digit(s))
            return bad_in(s, "in numeric literal", 1);
    }
    if (*s->p == '0')
        s->p++;
    else
        while (is_digit(s))
            s->p++;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!is_digit(s))
            return bad_in(s, "after decimal point in numeric literal", 1);
        while (is_digit(s))
            s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!is_digit(s))
            return bad_in(s, "in exponent of numeric literal", 1);
        while (is_digit(s))
            s->p++;
    }
    return 0;
}

static int composite(scan *s, int depth, char close)
{
    s->p++;
    skip_space(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            if (s->p >= s->end || *s->p != '"')
                return bad(s, "looking for beginning of object key string");
            if (string(s) != 0)
                return -1;
            skip_space(s);
            if (s->p >= s->end || *s->p != ':')
                return bad(s, "after object key");
            s->p++;
        }
        if (value(s, depth + 1) != 0)
            return -1;
        skip_space(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            return 0;
        }
        if (s->p >= s->end || *s->p != ',')
            return bad(s, close == '}' ? "after object key:value pair" : "after array element");
        s->p++;
        skip_space(s);
    }
}

static int value(scan *s, int depth)
{
    skip_space(s);
    if (s->p >= s->end)
        return bad(s, "");
    if (depth > 10000) {
        if (s->err != NULL)
            wh_buf_puts(s->err, "exceeded max depth");
        return -1;
    }
    switch (*s->p) {
    case '{':
        return composite(s, depth, '}');
    case '[':
        return composite(s, depth, ']');
    case '"':
        return string(s);
    case 't':
        return literal(s, "true");
    case 'f':
        return literal(s, "false");
    case 'n':
        return literal(s, "null");
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            return number(s);
        return bad(s, "looking for beginning of value");
    }
}

int wh_vgo_json_check(const char *text, size_t len, wh_buf *err)
{
    scan s = {(const unsigned char *)text, (const unsigned char *)text + len, err};

    if (value(&s, 0) != 0)
        return -1;
    skip_space(&s);
    return s.p < s.end ? bad(&s, "after top-level value") : 0;
}

int wh_vgo_unmarshal_number(const char *text, size_t len, const char *go_type, json_t **out, wh_buf *err)
{
    scan s = {(const unsigned char *)text, (const unsigned char *)text + len, err};
    const char *start, *kind = NULL;
    char *lit = NULL, *end;
    int rc = -1;

    *out = NULL;
    /* checkValid: the whole text must be one JSON value */
    if (wh_vgo_json_check(text, len, err) != 0)
        return -1;
    skip_space(&s);
    start = (const char *)s.p;
    switch (*start) {
    case 'n':
        *out = go_type[0] == 'f' ? json_real(0) : json_integer(0); /* null leaves the zero value */
        return 0;
    case 't':
    case 'f':
        kind = "bool";
        break;
    case '"':
        kind = "string";
        break;
    case '[':
        kind = "array";
        break;
    case '{':
        kind = "object";
        break;
    default:
        break;
    }
    if (kind != NULL) {
        if (err != NULL)
            wh_go_unmarshal_error(err, kind, NULL, NULL, go_type);
        return -1;
    }
    /* the number's literal, without the spaces around it */
    s.p = (const unsigned char *)start;
    number(&s);
    lit = wh_strndup(start, (size_t)((const char *)s.p - start));
    errno = 0;
    if (go_type[0] == 'f') {
        double d = strtod(lit, &end); /* beyond the largest double: ErrRange; an underflow is Go's 0, no error */
        if (isfinite(d)) {
            *out = json_real(d);
            rc = 0;
        }
    } else if (go_type[0] == 'u') {
        /* strconv.ParseUint: digits only */
        unsigned long long u = lit[0] == '-' ? 0 : strtoull(lit, &end, 10);
        if (lit[0] != '-' && errno == 0 && *end == '\0' && (strcmp(go_type, "uint64") == 0 || u <= 0xffffffffULL)) {
            *out = json_integer(u > (unsigned long long)INT64_MAX ? INT64_MAX : (json_int_t)u);
            rc = 0;
        }
    } else {
        long long n = strtoll(lit, &end, 10);
        if (errno == 0 && *end == '\0' && (strcmp(go_type, "int64") == 0 || (n >= INT32_MIN && n <= INT32_MAX))) {
            *out = json_integer(n);
            rc = 0;
        }
    }
    if (rc != 0 && err != NULL) {
        wh_buf what = WH_BUF_INIT;
        wh_buf_printf(&what, "number %s", lit);
        wh_go_unmarshal_error(err, what.data, NULL, NULL, go_type);
        wh_buf_free(&what);
    }
    free(lit);
    return rc;
}
