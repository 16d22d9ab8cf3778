/*
 * wh_yaml_resolve.c - what a plain YAML scalar means: go-yaml v2's resolve().
 *
 * Both loaders need it: the reference loader (wh_yaml.c, on libyaml's events)
 * and the fast path for templates' output (wh_yaml_fast.c), and the dumper
 * asks it whether a string may be written plain.  It sits below both loaders
 * so that the fast path needs nothing of the loader that falls back to it.
 */
#include "wh_yaml_resolve.h"

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_chars.h"
#include "wh_go.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Go's strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b, leading-0 octal);
 * `s` has had its underscores removed.  Returns 1 on success. */
static int parse_go_int(const char *s, int allow_sign, long long *out_i, unsigned long long *out_u, int *is_uint)
{
    int neg = 0, base = 10;
    const char *p = s;
    unsigned long long v = 0;

    if (*p == '+' || *p == '-') {
        if (!allow_sign)
            return 0;
        neg = *p == '-';
        p++;
    }
    if (*p == '\0')
        return 0;
    if (p[0] == '0' && p[1] != '\0') {
        if (p[1] == 'x' || p[1] == 'X')
            base = 16, p += 2;
        else if (p[1] == 'o' || p[1] == 'O')
            base = 8, p += 2;
        else if (p[1] == 'b' || p[1] == 'B')
            base = 2, p += 2;
        else
            base = 8, p += 1;
        if (*p == '\0')
            return 0;
    }
    for (; *p != '\0'; p++) {
        int d = wh_hex_digit(*p);
        if (d < 0 || d >= base)
            return 0;
        if (v > (ULLONG_MAX - (unsigned long long)d) / (unsigned long long)base)
            return 0;
        v = v * (unsigned long long)base + (unsigned long long)d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1ULL)
            return 0;
        *out_i = v == (unsigned long long)LLONG_MAX + 1ULL ? LLONG_MIN : -(long long)v;
        *is_uint = 0;
        return 1;
    }
    if (v <= (unsigned long long)LLONG_MAX) {
        *out_i = (long long)v;
        *is_uint = 0;
    } else {
        *out_u = v;
        *is_uint = 1;
    }
    return 1;
}

/* p past one or more decimal digits, or NULL when there is none. */
static const char *digits1(const char *p)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*++p))
        ;
    return p;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int is_yaml_style_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p == '.') {
        if ((p = digits1(p + 1)) == NULL)
            return 0;
    } else {
        if ((p = digits1(p)) == NULL)
            return 0;
        if (*p == '.') {
            p++;
            while (isdigit((unsigned char)*p))
                p++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if ((p = digits1(p)) == NULL)
            return 0;
    }
    return *p == '\0';
}

static int parse_float_full(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (end == s || *end != '\0')
        return 0;
    /* Go's ParseFloat rejects hex floats, infinities and nan spelled out. */
    for (const char *p = s; *p; p++)
        if (*p == 'x' || *p == 'X' || *p == 'n' || *p == 'N' || *p == 'i' || *p == 'I')
            return 0;
    if (errno == ERANGE && isinf(*out))
        return 0; /* Go: value out of range -> error */
    return 1;
}

static int digits_n(const char *s, int min, int max, int *n)
{
    int k = 0, v = 0;
    while (k < max && isdigit((unsigned char)s[k])) {
        v = v * 10 + (s[k] - '0');
        k++;
    }
    if (k < min)
        return 0;
    *n = v;
    return k;
}

/* go-yaml v2 parseTimestamp(): 4-digit year, '-', then one of the formats
 * "2006-1-2T15:4:5.999999999Z07:00" (T or t), "2006-1-2 15:4:5.999999999",
 * "2006-1-2".  Only the shape matters here (it decides quoting). */
static int looks_like_timestamp(const char *s)
{
    int n, k, v;
    const char *p = s;

    if ((k = digits_n(p, 4, 4, &v)) != 4 || p[4] != '-')
        return 0;
    p += 5;
    if ((k = digits_n(p, 1, 2, &v)) == 0 || v < 1 || v > 12)
        return 0;
    p += k;
    if (*p++ != '-')
        return 0;
    if ((k = digits_n(p, 1, 2, &n)) == 0 || n < 1 || n > 31)
        return 0;
    p += k;
    if (*p == '\0')
        return 1;
    int tz_required;
    if (*p == 'T' || *p == 't')
        tz_required = 1;
    else if (*p == ' ')
        tz_required = 0;
    else
        return 0;
    p++;
    if ((k = digits_n(p, 1, 2, &v)) == 0 || v > 23)
        return 0;
    p += k;
    if (*p++ != ':')
        return 0;
    if ((k = digits_n(p, 1, 2, &v)) == 0 || v > 59)
        return 0;
    p += k;
    if (*p++ != ':')
        return 0;
    if ((k = digits_n(p, 1, 2, &v)) == 0 || v > 59)
        return 0;
    p += k;
    if (*p == '.' && (p = digits1(p + 1)) == NULL)
        return 0;
    if (!tz_required)
        return *p == '\0';
    if (*p == 'Z')
        return p[1] == '\0';
    if (*p != '+' && *p != '-')
        return 0;
    p++;
    if (digits_n(p, 2, 2, &v) != 2 || p[2] != ':' || digits_n(p + 3, 2, 2, &v) != 2)
        return 0;
    return p[5] == '\0';
}

/* The YAML 1.1 words go-yaml resolves (booleans, null, NaN, infinities),
 * grouped by first character so that a scalar is compared with a handful
 * at most (resolve_word). */
typedef struct word {
    const char *text;
    unsigned char len;
    scalar_kind kind;
    int b;
    double f;
} word;

#define W(t, k, b, f)                                                                                                  \
    {                                                                                                                  \
        t, sizeof(t) - 1, k, b, f                                                                                      \
    }
static const word words_y[] = {W("y", SK_BOOL, 1, 0), W("yes", SK_BOOL, 1, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_Y[] = {
    W("Y", SK_BOOL, 1, 0), W("Yes", SK_BOOL, 1, 0), W("YES", SK_BOOL, 1, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_n[] = {
    W("n", SK_BOOL, 0, 0), W("no", SK_BOOL, 0, 0), W("null", SK_NULL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_N[] = {W("N", SK_BOOL, 0, 0),    W("No", SK_BOOL, 0, 0),   W("NO", SK_BOOL, 0, 0),
                               W("Null", SK_NULL, 0, 0), W("NULL", SK_NULL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_t[] = {W("true", SK_BOOL, 1, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_T[] = {W("True", SK_BOOL, 1, 0), W("TRUE", SK_BOOL, 1, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_f[] = {W("false", SK_BOOL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_F[] = {W("False", SK_BOOL, 0, 0), W("FALSE", SK_BOOL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_o[] = {W("on", SK_BOOL, 1, 0), W("off", SK_BOOL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_O[] = {W("On", SK_BOOL, 1, 0),
                               W("ON", SK_BOOL, 1, 0),
                               W("Off", SK_BOOL, 0, 0),
                               W("OFF", SK_BOOL, 0, 0),
                               {NULL, 0, SK_STR, 0, 0}};
static const word words_tilde[] = {W("~", SK_NULL, 0, 0), {NULL, 0, SK_STR, 0, 0}};
static const word words_dot[] = {W(".nan", SK_FLOAT, 0, NAN),      W(".NaN", SK_FLOAT, 0, NAN),
                                 W(".NAN", SK_FLOAT, 0, NAN),      W(".inf", SK_FLOAT, 0, INFINITY),
                                 W(".Inf", SK_FLOAT, 0, INFINITY), W(".INF", SK_FLOAT, 0, INFINITY),
                                 {NULL, 0, SK_STR, 0, 0}};
static const word words_plus[] = {W("+.inf", SK_FLOAT, 0, INFINITY),
                                  W("+.Inf", SK_FLOAT, 0, INFINITY),
                                  W("+.INF", SK_FLOAT, 0, INFINITY),
                                  {NULL, 0, SK_STR, 0, 0}};
static const word words_minus[] = {W("-.inf", SK_FLOAT, 0, -INFINITY),
                                   W("-.Inf", SK_FLOAT, 0, -INFINITY),
                                   W("-.INF", SK_FLOAT, 0, -INFINITY),
                                   {NULL, 0, SK_STR, 0, 0}};
#undef W

static int resolve_word(const char *in, size_t n, resolved *r)
{
    const word *w;

    switch (in[0]) {
    case 'y':
        w = words_y;
        break;
    case 'Y':
        w = words_Y;
        break;
    case 'n':
        w = words_n;
        break;
    case 'N':
        w = words_N;
        break;
    case 't':
        w = words_t;
        break;
    case 'T':
        w = words_T;
        break;
    case 'f':
        w = words_f;
        break;
    case 'F':
        w = words_F;
        break;
    case 'o':
        w = words_o;
        break;
    case 'O':
        w = words_O;
        break;
    case '~':
        w = words_tilde;
        break;
    case '.':
        w = words_dot;
        break;
    case '+':
        w = words_plus;
        break;
    case '-':
        w = words_minus;
        break;
    default:
        return 0;
    }
    for (; w->text != NULL; w++) {
        size_t i = 1; /* in[0] matched: the lists are by first character */
        if (w->len != n)
            continue;
        while (i < n && w->text[i] == in[i])
            i++;
        if (i == n) {
            r->kind = w->kind;
            r->b = w->b;
            r->f = w->f;
            return 1;
        }
    }
    return 0;
}

void wh_yaml_resolve_plain(const char *in, resolved *r)
{
    char c = in[0];

    memset(r, 0, sizeof(*r));
    r->kind = SK_STR;
    if (c == '\0') {
        r->kind = SK_NULL;
        return;
    }
    /* Most scalars start with a character that no other type can start with. */
    if (!(c == '+' || c == '-' || isdigit((unsigned char)c) || c == '.' || strchr("yYnNtTfFoO~", c) != NULL))
        return;
    size_t n = strlen(in);
    if (!wh_yaml_plain_may_resolve(in, n))
        return;
    if (!isdigit((unsigned char)c) && resolve_word(in, n, r))
        return;
    if (c == '.') {
        if (parse_float_full(in, &r->f))
            r->kind = SK_FLOAT;
        return;
    }
    if (!(c == '+' || c == '-' || isdigit((unsigned char)c)))
        return;
    if (looks_like_timestamp(in)) {
        r->kind = SK_TIMESTAMP;
        return;
    }
    char small[64], *plain = n < sizeof(small) ? small : wh_malloc(n + 1);
    if (plain == NULL)
        return;
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        if (in[j] != '_')
            plain[k++] = in[j];
    plain[k] = '\0';
    if (parse_go_int(plain, 1, &r->i, &r->u, &r->is_uint)) {
        r->kind = SK_INT;
    } else if (is_yaml_style_float(plain) && parse_float_full(plain, &r->f)) {
        r->kind = SK_FLOAT;
    } else if (strncmp(plain, "0b", 2) == 0 || strncmp(plain, "-0b", 3) == 0) {
        /* Binary without Go's base-0 prefix rules: digits only after the prefix. */
        const char *d = plain[0] == '-' ? plain + 3 : plain + 2;
        unsigned long long v = 0;
        int ok = *d != '\0';
        for (; *d && ok; d++) {
            if (*d != '0' && *d != '1')
                ok = 0;
            else if (v > (ULLONG_MAX >> 1))
                ok = 0;
            else
                v = v * 2 + (unsigned long long)(*d - '0');
        }
        if (ok) {
            r->kind = SK_INT;
            if (plain[0] == '-')
                r->i = -(long long)v;
            else if (v <= (unsigned long long)LLONG_MAX)
                r->i = (long long)v;
            else
                r->is_uint = 1, r->u = v;
        }
    }
    if (plain != small)
        free(plain);
}

/* A plain scalar that resolved to a string (timestamps stay strings in JSON). */
int wh_yaml_resolved_is_string(const resolved *r)
{
    return r->kind == SK_STR || r->kind == SK_TIMESTAMP;
}

/* The JSON value of a plain scalar that is not a string; NULL for NaN and
 * Inf, which JSON has not (sigs.k8s.io/yaml fails on them too). */
json_t *wh_yaml_resolved_json(const resolved *r)
{
    switch (r->kind) {
    case SK_NULL:
        return json_null();
    case SK_BOOL:
        return json_boolean(r->b);
    case SK_INT:
        return r->is_uint ? json_real((double)r->u) : json_integer(r->i);
    case SK_FLOAT:
        return isfinite(r->f) ? json_real(r->f) : NULL;
    case SK_STR:
    case SK_TIMESTAMP:
        break;
    }
    return NULL;
}

#define SECOND(f) ((unsigned short)((f) << 8))
const unsigned short wh_yaml_word_pair[256] = {
    ['y'] = WH_WP_Y | WH_WP_ONE,
    ['Y'] = WH_WP_Y | WH_WP_ONE,
    ['n'] = WH_WP_N | WH_WP_ONE | SECOND(WH_WP_O),
    ['N'] = WH_WP_N | WH_WP_ONE | SECOND(WH_WP_O),
    ['~'] = WH_WP_ONE,
    ['t'] = WH_WP_T,
    ['T'] = WH_WP_T,
    ['f'] = WH_WP_F | SECOND(WH_WP_O),
    ['F'] = WH_WP_F | SECOND(WH_WP_O),
    ['o'] = WH_WP_O | SECOND(WH_WP_N),
    ['O'] = WH_WP_O | SECOND(WH_WP_N),
    ['e'] = SECOND(WH_WP_Y),
    ['E'] = SECOND(WH_WP_Y),
    ['u'] = SECOND(WH_WP_N),
    ['U'] = SECOND(WH_WP_N),
    ['r'] = SECOND(WH_WP_T),
    ['R'] = SECOND(WH_WP_T),
    ['a'] = SECOND(WH_WP_F),
    ['A'] = SECOND(WH_WP_F),
};
#undef SECOND

const unsigned char wh_yaml_resolve_class[256] = {
    [' '] = WH_RS_NUMERIC,
    ['+'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['-'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['.'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['0'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['1'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['2'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['3'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['4'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['5'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['6'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['7'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['8'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    ['9'] = WH_RS_NUMBER | WH_RS_NUMERIC,
    [':'] = WH_RS_NUMERIC,
    ['_'] = WH_RS_NUMERIC,
    ['~'] = WH_RS_WORD,
    ['a'] = WH_RS_NUMERIC,
    ['b'] = WH_RS_NUMERIC,
    ['c'] = WH_RS_NUMERIC,
    ['d'] = WH_RS_NUMERIC,
    ['e'] = WH_RS_NUMERIC,
    ['f'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['i'] = WH_RS_NUMERIC,
    ['n'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['o'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['t'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['x'] = WH_RS_NUMERIC,
    ['y'] = WH_RS_WORD,
    ['A'] = WH_RS_NUMERIC,
    ['B'] = WH_RS_NUMERIC,
    ['C'] = WH_RS_NUMERIC,
    ['D'] = WH_RS_NUMERIC,
    ['E'] = WH_RS_NUMERIC,
    ['F'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['I'] = WH_RS_NUMERIC,
    ['N'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['O'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['T'] = WH_RS_WORD | WH_RS_NUMERIC,
    ['X'] = WH_RS_NUMERIC,
    ['Y'] = WH_RS_WORD,
    ['Z'] = WH_RS_NUMERIC,
};

/* 1 when [s, s + len) is a decimal integer of up to 18 digits without a leading zero (*v its value): an int to
 * go-yaml, whatever else a plain scalar may be. */
static inline int decimal_int(const char *s, size_t len, long long *v)
{
    size_t i;

    if (len == 0 || len > 18 || (s[0] == '0' && len != 1))
        return 0;
    for (*v = 0, i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        *v = *v * 10 + (s[i] - '0');
    return i == len;
}

/* resolve_plain() over a span.  Scalars that start with a letter can only be
 * one of the YAML 1.1 words, and most scalars are strings by their bytes
 * alone (may_resolve): both are decided on the span itself; only numbers,
 * timestamps and dotted floats need the NUL-terminated copy. */
static void resolve_span(const char *s, size_t len, resolved *r)
{
    char small[64], *text;
    long long v;

    if (len != 0 && !(wh_yaml_resolve_class[(unsigned char)s[0]] & WH_RS_NUMBER)) {
        memset(r, 0, sizeof(*r));
        r->kind = SK_STR;
        if (wh_yaml_plain_may_resolve(s, len))
            resolve_word(s, len, r);
        return;
    }
    if (len != 0 && !wh_yaml_plain_may_resolve(s, len)) {
        memset(r, 0, sizeof(*r));
        r->kind = SK_STR;
        return;
    }
    if (decimal_int(s, len, &v)) { /* most numbers templates print */
        memset(r, 0, sizeof(*r));
        r->kind = SK_INT;
        r->i = v;
        return;
    }
    text = len < sizeof(small) ? small : wh_malloc(len + 1);
    memcpy(text, s, len);
    text[len] = '\0';
    wh_yaml_resolve_plain(text, r);
    if (text != small)
        free(text);
}

const char *wh_yaml_key_text(const resolved *r, const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len)
{
    wh_buf f = WH_BUF_INIT;
    int n;

    switch (r->kind) {
    case SK_STR:
    case SK_TIMESTAMP:
        *out_len = len;
        return s;
    case SK_NULL:
        return NULL;
    case SK_BOOL:
        n = snprintf(tmp, WH_YAML_KEY_TMP, "%s", r->b ? "true" : "false");
        break;
    case SK_INT:
        if (r->is_uint)
            return NULL;
        n = snprintf(tmp, WH_YAML_KEY_TMP, "%lld", r->i);
        break;
    case SK_FLOAT:
    default:
        wh_go_float_bits(&f, r->f, 'g', -1, 32); /* at most 14 bytes: -1.1754944e-38 */
        n = snprintf(tmp, WH_YAML_KEY_TMP, "%s",
                     strcmp(f.data, "+Inf") == 0   ? ".inf"
                     : strcmp(f.data, "-Inf") == 0 ? "-.inf"
                     : strcmp(f.data, "NaN") == 0  ? ".nan"
                                                   : f.data);
        wh_buf_free(&f);
        break;
    }
    *out_len = (size_t)n;
    return tmp;
}

const char *wh_yaml_plain_key_text(const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len)
{
    resolved r;

    if (len != 0 && !wh_yaml_plain_may_resolve(s, len)) { /* the common case: the key is its own text */
        *out_len = len;
        return s;
    }
    resolve_span(s, len, &r); /* (empty: null) */
    return wh_yaml_key_text(&r, s, len, tmp, out_len);
}

json_t *wh_yaml_plain_json(const char *s, size_t len)
{
    resolved r;
    long long v;

    if (decimal_int(s, len, &v)) /* the common number first */
        return json_integer(v);
    if (len != 0 && !wh_yaml_plain_may_resolve(s, len))
        return json_stringn_nocheck(s, len); /* valid UTF-8: see wh_yaml_resolve.h */
    resolve_span(s, len, &r);
    if (wh_yaml_resolved_is_string(&r))
        return json_stringn_nocheck(s, len); /* valid UTF-8: see wh_yaml_resolve.h */
    return wh_yaml_resolved_json(&r);
}
