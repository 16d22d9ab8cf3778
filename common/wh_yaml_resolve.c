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
#include "wh_chars.h"

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
 * grouped by length so that a scalar is compared with a handful at most. */
typedef struct word {
    const char *text;
    scalar_kind kind;
    int b;
    double f;
} word;

static int resolve_word(const char *in, size_t n, resolved *r)
{
    static const word len1[] = {{"y", SK_BOOL, 1, 0}, {"Y", SK_BOOL, 1, 0}, {"n", SK_BOOL, 0, 0},
                                {"N", SK_BOOL, 0, 0}, {"~", SK_NULL, 0, 0}, {NULL, SK_STR, 0, 0}};
    static const word len2[] = {{"on", SK_BOOL, 1, 0}, {"On", SK_BOOL, 1, 0}, {"ON", SK_BOOL, 1, 0},
                                {"no", SK_BOOL, 0, 0}, {"No", SK_BOOL, 0, 0}, {"NO", SK_BOOL, 0, 0},
                                {NULL, SK_STR, 0, 0}};
    static const word len3[] = {{"yes", SK_BOOL, 1, 0}, {"Yes", SK_BOOL, 1, 0}, {"YES", SK_BOOL, 1, 0},
                                {"off", SK_BOOL, 0, 0}, {"Off", SK_BOOL, 0, 0}, {"OFF", SK_BOOL, 0, 0},
                                {NULL, SK_STR, 0, 0}};
    static const word len4[] = {{"true", SK_BOOL, 1, 0},
                                {"True", SK_BOOL, 1, 0},
                                {"TRUE", SK_BOOL, 1, 0},
                                {"null", SK_NULL, 0, 0},
                                {"Null", SK_NULL, 0, 0},
                                {"NULL", SK_NULL, 0, 0},
                                {".nan", SK_FLOAT, 0, NAN},
                                {".NaN", SK_FLOAT, 0, NAN},
                                {".NAN", SK_FLOAT, 0, NAN},
                                {".inf", SK_FLOAT, 0, INFINITY},
                                {".Inf", SK_FLOAT, 0, INFINITY},
                                {".INF", SK_FLOAT, 0, INFINITY},
                                {NULL, SK_STR, 0, 0}};
    static const word len5[] = {{"false", SK_BOOL, 0, 0},          {"False", SK_BOOL, 0, 0},
                                {"FALSE", SK_BOOL, 0, 0},          {"+.inf", SK_FLOAT, 0, INFINITY},
                                {"+.Inf", SK_FLOAT, 0, INFINITY},  {"+.INF", SK_FLOAT, 0, INFINITY},
                                {"-.inf", SK_FLOAT, 0, -INFINITY}, {"-.Inf", SK_FLOAT, 0, -INFINITY},
                                {"-.INF", SK_FLOAT, 0, -INFINITY}, {NULL, SK_STR, 0, 0}};
    static const word *const by_len[] = {NULL, len1, len2, len3, len4, len5};

    if (n == 0 || n > 5)
        return 0;
    for (const word *w = by_len[n]; w->text != NULL; w++) {
        if (w->text[0] == in[0] && memcmp(w->text, in, n) == 0) {
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

/* resolve_plain() over a span.  Scalars that start with a letter can only be
 * one of the YAML 1.1 words, and most scalars start with a character no
 * other type can start with: both are decided on the span itself; only
 * numbers, timestamps and dotted floats need the NUL-terminated copy. */
static void resolve_span(const char *s, size_t len, resolved *r)
{
    char small[64], *text;
    char c = len != 0 ? s[0] : '\0';

    if (len != 0 && !(c == '+' || c == '-' || isdigit((unsigned char)c) || c == '.')) {
        memset(r, 0, sizeof(*r));
        r->kind = SK_STR;
        switch (c) { /* the first letters of the YAML 1.1 words */
        case 'y':
        case 'Y':
        case 'n':
        case 'N':
        case 't':
        case 'T':
        case 'f':
        case 'F':
        case 'o':
        case 'O':
        case '~':
            resolve_word(s, len, r);
            break;
        default:
            break;
        }
        return;
    }
    if ((text = len < sizeof(small) ? small : wh_malloc(len + 1)) == NULL) {
        memset(r, 0, sizeof(*r));
        r->kind = SK_STR;
        return;
    }
    memcpy(text, s, len);
    text[len] = '\0';
    wh_yaml_resolve_plain(text, r);
    if (text != small)
        free(text);
}

const char *wh_yaml_plain_key_text(const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len)
{
    resolved r;
    int n;

    if (len == 0) { /* an empty key stays "" (resolution would say null) */
        *out_len = 0;
        return s;
    }
    resolve_span(s, len, &r);
    if (r.kind == SK_BOOL) {
        n = snprintf(tmp, WH_YAML_KEY_TMP, "%s", r.b ? "true" : "false");
    } else if (r.kind == SK_INT && !r.is_uint) {
        n = snprintf(tmp, WH_YAML_KEY_TMP, "%lld", r.i);
    } else if (r.kind == SK_NULL) {
        n = snprintf(tmp, WH_YAML_KEY_TMP, "null");
    } else {
        *out_len = len;
        return s;
    }
    *out_len = (size_t)n;
    return tmp;
}

json_t *wh_yaml_plain_key(const char *s, size_t len)
{
    char tmp[WH_YAML_KEY_TMP];
    size_t n;
    const char *k = wh_yaml_plain_key_text(s, len, tmp, &n);

    return json_stringn(k, n);
}

json_t *wh_yaml_plain_json(const char *s, size_t len)
{
    resolved r;

    resolve_span(s, len, &r);
    if (wh_yaml_resolved_is_string(&r))
        return json_stringn_nocheck(s, len); /* valid UTF-8: see wh_yaml_resolve.h */
    return wh_yaml_resolved_json(&r);
}
