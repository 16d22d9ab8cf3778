/*
 * sprig.c - Sprig's text functions (sprig.TxtFuncMap, v3) as Helm charts and
 * Istio's injection templates use them: strings, numbers (spf13/cast
 * conversions), defaults, JSON, dicts, lists, encodings, paths, regexes and
 * semver, with Sprig's behaviour on nil, empty and wrong-typed arguments.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <wctype.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl_int.h"
#include "wh_go.h"

#define FN(name) static wh_code name(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)

static wh_code ret_bool(wh_tmpl_value *out, int b)
{
    *out = wh_tmpl_bool(b);
    return WH_OK;
}

static wh_code ret_int64(wh_tmpl_value *out, int64_t i)
{
    *out = wh_tmpl_int_typed(i, &wh_tmpl_type_int64);
    return WH_OK;
}

static wh_code ret_int(wh_tmpl_value *out, int64_t i)
{
    *out = wh_tmpl_int(i);
    return WH_OK;
}

static int is_nil(const wh_tmpl_value *v)
{
    return v->kind == WH_TMPL_NIL || v->kind == WH_TMPL_INVALID;
}

/* sprig's strval: strings as they are, Stringers, else %v */
static wh_code tm_tostring(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    if (v->kind == WH_TMPL_STRING && (v->type == NULL || v->type->format == NULL)) {
        wh_buf_append(out, v->u.s, v->len);
        return WH_OK;
    }
    return wh_tmpl_sprint(ctx, v, out);
}

/* strval into a fresh arena string */
static wh_code strval(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char **s, size_t *len)
{
    wh_buf *b;
    wh_tmpl_value r;
    wh_code rc;

    if (v->kind == WH_TMPL_STRING && (v->type == NULL || v->type->format == NULL)) {
        *s = v->u.s;
        *len = v->len;
        return WH_OK;
    }
    b = &ctx->scratch->tmp2;
    wh_buf_reset(b);
    if ((rc = tm_tostring(ctx, v, b)) != WH_OK || (rc = tm_ret_buf(ctx, &r, b)) != WH_OK)
        return rc;
    *s = r.u.s;
    *len = r.len;
    return WH_OK;
}

/* Go's int64(float64) on amd64: out of range gives the minimum */
static int64_t f2i(double f)
{
    if (isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)f;
}

static int std_int_type(const wh_tmpl_value *v)
{
    const char *t = tm_type_name(v);
    return strcmp(t, "int") == 0 || strcmp(t, "int64") == 0 || strcmp(t, "int32") == 0 || strcmp(t, "int16") == 0 ||
           strcmp(t, "int8") == 0 || strcmp(t, "uint") == 0 || strcmp(t, "uint64") == 0 || strcmp(t, "uint32") == 0 ||
           strcmp(t, "uint16") == 0 || strcmp(t, "uint8") == 0;
}

/* strconv.ParseInt(trimZeroDecimal(s), 0, 0) */
static int parse_int_str(const char *s, size_t len, int64_t *out)
{
    char buf[128], *end;
    size_t i, k = 0, l = len;
    int found_zero = 0, base = 10, neg = 0;
    unsigned long long u;
    const char *p;

    /* trimZeroDecimal */
    for (i = len; i > 0; i--) {
        char c = s[i - 1];
        if (c == '.') {
            if (found_zero)
                l = i - 1;
            break;
        } else if (c == '0') {
            found_zero = 1;
        } else {
            break;
        }
    }
    if (l == 0 || l >= sizeof(buf))
        return -1;
    p = s;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
        l--;
    }
    if (l == 0)
        return -1;
    if (l > 1 && p[0] == '0') {
        char c = (char)(p[1] | 0x20);
        if (c == 'x')
            base = 16, p += 2, l -= 2;
        else if (c == 'o')
            base = 8, p += 2, l -= 2;
        else if (c == 'b')
            base = 2, p += 2, l -= 2;
        else
            base = 8, p += 1, l -= 1;
    }
    for (i = 0; i < l; i++) {
        if (p[i] == '_') {
            if (base == 10 && !(s[0] == '0'))
                return -1;
            continue;
        }
        if (!isalnum((unsigned char)p[i]))
            return -1;
        buf[k++] = p[i];
    }
    buf[k] = 0;
    if (k == 0)
        return base == 8 ? (*out = 0, 0) : -1;
    errno = 0;
    u = strtoull(buf, &end, base);
    if (*end != 0 || errno != 0 || buf[0] == '-' || buf[0] == '+')
        return -1;
    if (!neg && u > (unsigned long long)INT64_MAX)
        return -1;
    if (neg && u > (unsigned long long)INT64_MAX + 1ULL)
        return -1;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

/* cast.ToInt64 */
static int64_t to_int64(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_INT:
        return std_int_type(v) ? v->u.i : 0;
    case WH_TMPL_UINT:
        return std_int_type(v) ? (int64_t)v->u.u : 0;
    case WH_TMPL_FLOAT:
        return f2i(v->u.f);
    case WH_TMPL_STRING: {
        int64_t i;
        if (v->type != NULL && strcmp(v->type->name, "string") != 0)
            return 0;
        return parse_int_str(v->u.s, v->len, &i) == 0 ? i : 0;
    }
    case WH_TMPL_BOOL:
        return v->u.b ? 1 : 0;
    default:
        return 0;
    }
}

/* cast.ToFloat64 */
static double to_float64(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_INT:
        return std_int_type(v) ? (double)v->u.i : 0;
    case WH_TMPL_UINT:
        return std_int_type(v) ? (double)v->u.u : 0;
    case WH_TMPL_FLOAT:
        return v->u.f;
    case WH_TMPL_STRING: {
        char buf[128], *end;
        double f;
        if (v->len == 0 || v->len >= sizeof(buf) || (v->type != NULL && strcmp(v->type->name, "string") != 0))
            return 0;
        memcpy(buf, v->u.s, v->len);
        buf[v->len] = 0;
        if (strpbrk(buf, "xXpP_ ") || isspace((unsigned char)buf[0]))
            return 0;
        errno = 0;
        f = strtod(buf, &end);
        if (*end != 0 || (errno == ERANGE && fabs(f) > 1))
            return 0;
        if (strncasecmp(buf, "nan", 3) == 0 || strncasecmp(buf + (buf[0] == '-' || buf[0] == '+'), "inf", 3) == 0) {
            const char *q = buf + (buf[0] == '-' || buf[0] == '+');
            if (strcasecmp(q, "inf") != 0 && strcasecmp(q, "infinity") != 0 && strcasecmp(q, "nan") != 0)
                return 0;
        }
        return f;
    }
    case WH_TMPL_BOOL:
        return v->u.b ? 1 : 0;
    default:
        return 0;
    }
}

/* sprig's empty */
static int empty(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_INVALID:
    case WH_TMPL_NIL:
        return 1;
    case WH_TMPL_STRING:
    case WH_TMPL_LIST:
    case WH_TMPL_MAP:
        return wh_tmpl_len(v) == 0;
    case WH_TMPL_BOOL:
        return !v->u.b;
    case WH_TMPL_INT:
        return v->u.i == 0;
    case WH_TMPL_UINT:
        return v->u.u == 0;
    case WH_TMPL_FLOAT:
        return v->u.f == 0;
    case WH_TMPL_HOST:
        return v->type != NULL && v->type->pointer && v->u.host == NULL;
    }
    return 0;
}

/* reflect Kind name */
static const char *kind_name(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_INVALID:
    case WH_TMPL_NIL:
        return "invalid";
    case WH_TMPL_BOOL:
        return "bool";
    case WH_TMPL_INT: {
        const char *t = tm_type_name(v);
        if (strcmp(t, "int64") == 0 || strcmp(t, "int32") == 0 || strcmp(t, "int16") == 0 || strcmp(t, "int8") == 0)
            return t;
        return v->type != NULL && v->type != &wh_tmpl_type_int && strcmp(t, "int") != 0 ? "int32" : "int";
    }
    case WH_TMPL_UINT: {
        const char *t = tm_type_name(v);
        if (strncmp(t, "uint", 4) == 0)
            return t;
        return "uint32";
    }
    case WH_TMPL_FLOAT:
        return "float64";
    case WH_TMPL_STRING:
        return "string";
    case WH_TMPL_LIST:
        return "slice";
    case WH_TMPL_MAP:
        return "map";
    case WH_TMPL_HOST:
        return v->type != NULL && v->type->pointer ? "ptr" : "struct";
    }
    return "invalid";
}

/* ---- strings ---- */

static int is_space_byte(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* strings.TrimSpace (ASCII and the Unicode spaces U+0085, U+00A0 and friends) */
static size_t uspace_len(const char *s, size_t len)
{
    unsigned r;
    size_t w;

    if (len == 0)
        return 0;
    if (is_space_byte(s[0]))
        return 1;
    w = tm_utf8_decode(s, len, &r);
    if (w > 1 && (r == 0x85 || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 ||
                  r == 0x202f || r == 0x205f || r == 0x3000))
        return w;
    return 0;
}

static size_t uspace_len_back(const char *s, size_t len)
{
    size_t k;

    if (len == 0)
        return 0;
    if (is_space_byte(s[len - 1]))
        return 1;
    for (k = 2; k <= 3 && k <= len; k++)
        if (uspace_len(s + len - k, k) == k)
            return k;
    return 0;
}

FN(fn_trim)
{
    const char *s = a[0].u.s;
    size_t len = a[0].len, w;

    while ((w = uspace_len(s, len)) != 0) {
        s += w;
        len -= w;
    }
    while ((w = uspace_len_back(s, len)) != 0)
        len -= w;
    *out = wh_tmpl_strn(s, len);
    return WH_OK;
}

static int rune_in(const char *set, size_t setlen, const char *s, size_t len, size_t *w)
{
    unsigned r, c;
    size_t i = 0, k;

    *w = tm_utf8_decode(s, len, &r);
    if (*w == 0) {
        *w = 1;
        r = 0xfffd;
    }
    while (i < setlen) {
        k = tm_utf8_decode(set + i, setlen - i, &c);
        if (k == 0) {
            k = 1;
            c = 0xfffd;
        }
        if (c == r)
            return 1;
        i += k;
    }
    return 0;
}

/* strings.Trim(b, a) */
FN(fn_trimall)
{
    const char *cut = a[0].u.s, *s = a[1].u.s;
    size_t cl = a[0].len, len = a[1].len, w;

    if (len == 0 || cl == 0) {
        *out = a[1];
        out->type = NULL;
        return WH_OK;
    }
    while (len > 0 && rune_in(cut, cl, s, len, &w)) {
        s += w;
        len -= w;
    }
    while (len > 0) {
        size_t k;
        for (k = 1; k <= 4 && k <= len; k++) {
            unsigned r;
            if (tm_utf8_decode(s + len - k, k, &r) == k || (k == 1 && ((unsigned char)s[len - 1] < 0x80 || 1)))
                if (tm_utf8_decode(s + len - k, k, &r) == k)
                    break;
        }
        if (k > 4 || k > len)
            k = 1;
        if (!rune_in(cut, cl, s + len - k, k, &w))
            break;
        len -= k;
    }
    *out = wh_tmpl_strn(s, len);
    return WH_OK;
}

FN(fn_trimprefix)
{
    if (a[1].len >= a[0].len && memcmp(a[1].u.s, a[0].u.s, a[0].len) == 0)
        *out = wh_tmpl_strn(a[1].u.s + a[0].len, a[1].len - a[0].len);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

FN(fn_trimsuffix)
{
    if (a[1].len >= a[0].len && memcmp(a[1].u.s + a[1].len - a[0].len, a[0].u.s, a[0].len) == 0)
        *out = wh_tmpl_strn(a[1].u.s, a[1].len - a[0].len);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

/* strings.ToUpper / ToLower: rune by rune (invalid bytes become U+FFFD) */
static wh_code map_case(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int upper, wh_tmpl_value *out)
{
    locale_t loc = ctx->set->ctype;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;

    while (i < s->len) {
        unsigned char c = (unsigned char)s->u.s[i];
        unsigned r;
        size_t w;
        if (c < 0x80) {
            wh_buf_putc(b, (char)(upper ? toupper(c) : tolower(c)));
            i++;
            continue;
        }
        w = tm_utf8_decode(s->u.s + i, s->len - i, &r);
        if (w == 0) {
            w = 1;
            r = 0xfffd;
        } else if (loc != (locale_t)0) {
            r = (unsigned)(upper ? towupper_l((wint_t)r, loc) : towlower_l((wint_t)r, loc));
        }
        tm_put_rune(b, r);
        i += w;
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_upper)
{
    return map_case(ctx, &a[0], 1, out);
}

FN(fn_lower)
{
    return map_case(ctx, &a[0], 0, out);
}

/* strings.Title: the first letter of each word in title case; words are
 * separated by spaces and ASCII punctuation */
FN(fn_title)
{
    locale_t loc = ctx->set->ctype;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;
    int prev_sep = 1;

    while (i < a[0].len) {
        unsigned char c = (unsigned char)a[0].u.s[i];
        unsigned r;
        size_t w;
        int sep;
        if (c < 0x80) {
            wh_buf_putc(b, (char)(prev_sep ? toupper(c) : c));
            prev_sep = !(isalnum(c) || c == '_');
            i++;
            continue;
        }
        w = tm_utf8_decode(a[0].u.s + i, a[0].len - i, &r);
        if (w == 0) {
            w = 1;
            r = 0xfffd;
        }
        sep = loc != (locale_t)0 && iswspace_l((wint_t)r, loc);
        if (prev_sep && loc != (locale_t)0)
            r = (unsigned)towupper_l((wint_t)r, loc);
        tm_put_rune(b, r);
        prev_sep = sep;
        i += w;
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_untitle)
{
    wh_code rc = wh_tmpl_strdup(ctx, a[0].u.s, a[0].len, out);
    if (rc == WH_OK && out->len > 0 && (unsigned char)out->u.s[0] < 0x80)
        ((char *)out->u.s)[0] = (char)tolower((unsigned char)out->u.s[0]);
    return rc;
}

FN(fn_trunc)
{
    int64_t c = a[0].u.i;
    long len = (long)a[1].len;

    if (c < 0 && len + c > 0)
        *out = wh_tmpl_strn(a[1].u.s + len + c, (size_t)(-c));
    else if (c >= 0 && len > c)
        *out = wh_tmpl_strn(a[1].u.s, (size_t)c);
    else
        *out = wh_tmpl_strn(a[1].u.s, a[1].len);
    return WH_OK;
}

FN(fn_substr)
{
    int64_t start = a[0].u.i, end = a[1].u.i, len = a[2].len;

    if (start < 0) {
        if (end < 0 || end > len)
            return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [:%lld] with length %lld",
                                  (long long)end, (long long)len);
        *out = wh_tmpl_strn(a[2].u.s, (size_t)end);
        return WH_OK;
    }
    if (end < 0 || end > len) {
        if (start > len)
            return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start,
                                  (long long)len);
        *out = wh_tmpl_strn(a[2].u.s + start, (size_t)(len - start));
        return WH_OK;
    }
    if (start > end)
        return wh_tmpl_errorf(ctx, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start,
                              (long long)end);
    *out = wh_tmpl_strn(a[2].u.s + start, (size_t)(end - start));
    return WH_OK;
}

FN(fn_repeat)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    int64_t i;

    if (a[0].u.i < 0)
        return wh_tmpl_errorf(ctx, "strings: negative Repeat count");
    if (a[1].len != 0 && (uint64_t)a[0].u.i > (64u << 20) / a[1].len)
        return wh_tmpl_errorf(ctx, "strings: Repeat output length overflow");
    for (i = 0; i < a[0].u.i; i++)
        wh_buf_append(b, a[1].u.s, a[1].len);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_nospace)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0, w;

    while (i < a[0].len) {
        if ((w = uspace_len(a[0].u.s + i, a[0].len - i)) != 0) {
            i += w;
            continue;
        }
        wh_buf_putc(b, a[0].u.s[i++]);
    }
    return tm_ret_buf(ctx, out, b);
}

static int contains_str(const wh_tmpl_value *hay, const wh_tmpl_value *needle)
{
    if (needle->len == 0)
        return 1;
    return memmem(hay->u.s, hay->len, needle->u.s, needle->len) != NULL;
}

FN(fn_contains)
{
    return ret_bool(out, contains_str(&a[1], &a[0]));
}

FN(fn_hasprefix)
{
    return ret_bool(out, a[1].len >= a[0].len && memcmp(a[1].u.s, a[0].u.s, a[0].len) == 0);
}

FN(fn_hassuffix)
{
    return ret_bool(out, a[1].len >= a[0].len && memcmp(a[1].u.s + a[1].len - a[0].len, a[0].u.s, a[0].len) == 0);
}

FN(fn_quote)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, k = 0;
    wh_code rc;

    for (i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID)
            continue;
        if (k++ > 0)
            wh_buf_putc(b, ' ');
        if ((rc = strval(ctx, &a[i], &s, &len)) != WH_OK)
            return rc;
        tm_quote(b, s, len, 0);
    }
    return tm_ret_buf(ctx, out, b);
}

/* cat and squote: the non-nil arguments printed, space-separated, each
 * between `wrap` (none when 0). */
static wh_code sprint_joined(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, char wrap, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, k = 0;
    wh_code rc;

    for (i = 0; i < n; i++) {
        if (a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID)
            continue;
        if (k++ > 0)
            wh_buf_putc(b, ' ');
        if (wrap)
            wh_buf_putc(b, wrap);
        if ((rc = wh_tmpl_sprint(ctx, &a[i], b)) != WH_OK)
            return rc;
        if (wrap)
            wh_buf_putc(b, wrap);
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_squote)
{
    return sprint_joined(ctx, a, n, '\'', out);
}

FN(fn_cat)
{
    return sprint_joined(ctx, a, n, 0, out);
}

static wh_code do_indent(wh_tmpl_ctx *ctx, int64_t spaces, const wh_tmpl_value *s, int nl, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i, start = 0;
    int64_t k;

    if (spaces < 0)
        return wh_tmpl_errorf(ctx, "strings: negative Repeat count");
    if (spaces > (1 << 20))
        return wh_tmpl_errorf(ctx, "indent too large");
    if (nl)
        wh_buf_putc(b, '\n');
    for (k = 0; k < spaces; k++)
        wh_buf_putc(b, ' ');
    for (i = 0; i < s->len; i++) {
        if (s->u.s[i] == '\n') {
            wh_buf_append(b, s->u.s + start, i + 1 - start);
            for (k = 0; k < spaces; k++)
                wh_buf_putc(b, ' ');
            start = i + 1;
        }
    }
    wh_buf_append(b, s->u.s + start, s->len - start);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_indent)
{
    return do_indent(ctx, a[0].u.i, &a[1], 0, out);
}

FN(fn_nindent)
{
    return do_indent(ctx, a[0].u.i, &a[1], 1, out);
}

/* strings.Replace(src, old, new, -1) */
static wh_code replace_all(wh_tmpl_ctx *ctx, const wh_tmpl_value *src, const wh_tmpl_value *old,
                           const wh_tmpl_value *new_, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i = 0;

    if (old->len == 0) {
        /* insert `new` before every rune and at the end */
        unsigned r;
        while (i < src->len) {
            size_t w = tm_utf8_decode(src->u.s + i, src->len - i, &r);
            if (w == 0)
                w = 1;
            wh_buf_append(b, new_->u.s, new_->len);
            wh_buf_append(b, src->u.s + i, w);
            i += w;
        }
        wh_buf_append(b, new_->u.s, new_->len);
        return tm_ret_buf(ctx, out, b);
    }
    while (i < src->len) {
        const char *hit = memmem(src->u.s + i, src->len - i, old->u.s, old->len);
        if (hit == NULL)
            break;
        wh_buf_append(b, src->u.s + i, (size_t)(hit - (src->u.s + i)));
        wh_buf_append(b, new_->u.s, new_->len);
        i = (size_t)(hit - src->u.s) + old->len;
    }
    wh_buf_append(b, src->u.s + i, src->len - i);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_replace)
{
    return replace_all(ctx, &a[2], &a[0], &a[1], out);
}

FN(fn_plural)
{
    *out = a[2].u.i == 1 ? a[0] : a[1];
    return WH_OK;
}

FN(fn_tostring)
{
    const char *s;
    size_t len;
    wh_code rc = strval(ctx, &a[0], &s, &len);
    if (rc == WH_OK)
        *out = wh_tmpl_strn(s, len);
    return rc;
}

/* sprig's strslice */
static wh_code strslice(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_tmpl_value *out)
{
    wh_tmpl_value l;
    long i, len;
    wh_code rc;

    if (v->kind == WH_TMPL_LIST && tm_same_type(v, &wh_tmpl_type_string_slice, WH_TMPL_LIST)) {
        *out = *v;
        return WH_OK;
    }
    l = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (l.kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if (v->kind == WH_TMPL_LIST) {
        len = wh_tmpl_len(v);
        for (i = 0; i < len; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
            const char *s;
            size_t sl;
            if (is_nil(&e) && tm_elem_type(v) == NULL)
                continue;
            if ((rc = strval(ctx, &e, &s, &sl)) != WH_OK)
                return rc;
            if ((rc = wh_tmpl_list_push(ctx, &l, wh_tmpl_strn(s, sl))) != WH_OK)
                return rc;
        }
    } else if (!is_nil(v)) {
        const char *s;
        size_t sl;
        if ((rc = strval(ctx, v, &s, &sl)) != WH_OK || (rc = wh_tmpl_list_push(ctx, &l, wh_tmpl_strn(s, sl))) != WH_OK)
            return rc;
    }
    *out = l;
    return WH_OK;
}

FN(fn_tostrings)
{
    return strslice(ctx, &a[0], out);
}

FN(fn_join)
{
    wh_tmpl_value l;
    wh_buf *b;
    long i, len;
    wh_code rc;

    if ((rc = strslice(ctx, &a[1], &l)) != WH_OK)
        return rc;
    b = wh_tmpl_tmpbuf(ctx);
    len = wh_tmpl_len(&l);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(&l, (size_t)i);
        if (i > 0)
            wh_buf_append(b, a[0].u.s, a[0].len);
        wh_buf_append(b, e.u.s, e.len);
    }
    return tm_ret_buf(ctx, out, b);
}

static int str_cmp(const void *x, const void *y)
{
    const wh_tmpl_value *p = x, *q = y;
    return tm_strcmp(p->u.s, p->len, q->u.s, q->len);
}

FN(fn_sortalpha)
{
    wh_tmpl_value l, c;
    long i, len;
    wh_code rc;

    if (a[0].kind != WH_TMPL_LIST) {
        const char *s;
        size_t sl;
        c = wh_tmpl_list_new(ctx, 1, &wh_tmpl_type_string_slice);
        if ((rc = strval(ctx, &a[0], &s, &sl)) != WH_OK ||
            (rc = wh_tmpl_list_push(ctx, &c, wh_tmpl_strn(s, sl))) != WH_OK)
            return rc;
        *out = c;
        return WH_OK;
    }
    if ((rc = strslice(ctx, &a[0], &l)) != WH_OK)
        return rc;
    len = wh_tmpl_len(&l);
    c = wh_tmpl_list_new(ctx, (size_t)len, &wh_tmpl_type_string_slice);
    if (c.kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < len; i++)
        if ((rc = wh_tmpl_list_push(ctx, &c, wh_tmpl_list_at(&l, (size_t)i))) != WH_OK)
            return rc;
    if (len > 1)
        qsort(tm_list_items(&c), (size_t)len, sizeof(wh_tmpl_value), str_cmp);
    *out = c;
    return WH_OK;
}

/* strings.Split semantics; n < 0 = all */
static wh_code split_parts(wh_tmpl_ctx *ctx, const wh_tmpl_value *sep, const wh_tmpl_value *s, long n,
                           wh_tmpl_value *list)
{
    size_t i = 0;
    wh_code rc;

    *list = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (list->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if (n == 0)
        return WH_OK;
    if (sep->len == 0) {
        unsigned r;
        long k = 0;
        while (i < s->len) {
            size_t w = tm_utf8_decode(s->u.s + i, s->len - i, &r);
            if (w == 0)
                w = 1;
            if (n > 0 && k == n - 1)
                w = s->len - i;
            if ((rc = wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, w))) != WH_OK)
                return rc;
            i += w;
            k++;
        }
        return WH_OK;
    }
    for (;;) {
        const char *hit;
        if (n > 0 && wh_tmpl_len(list) == n - 1)
            hit = NULL;
        else
            hit = memmem(s->u.s + i, s->len - i, sep->u.s, sep->len);
        if (hit == NULL) {
            return wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, s->len - i));
        }
        if ((rc = wh_tmpl_list_push(ctx, list, wh_tmpl_strn(s->u.s + i, (size_t)(hit - (s->u.s + i))))) != WH_OK)
            return rc;
        i = (size_t)(hit - s->u.s) + sep->len;
    }
}

FN(fn_splitlist)
{
    return split_parts(ctx, &a[0], &a[1], -1, out);
}

static wh_code parts_to_map(wh_tmpl_ctx *ctx, const wh_tmpl_value *parts, wh_tmpl_value *out)
{
    long i, len = wh_tmpl_len(parts);
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, &wh_tmpl_type_map_string_string);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < len; i++) {
        char key[32];
        int kl = snprintf(key, sizeof(key), "_%ld", i);
        if ((rc = wh_tmpl_map_set(ctx, out, key, (size_t)kl, wh_tmpl_list_at(parts, (size_t)i))) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_split)
{
    wh_tmpl_value parts;
    wh_code rc = split_parts(ctx, &a[0], &a[1], -1, &parts);
    return rc != WH_OK ? rc : parts_to_map(ctx, &parts, out);
}

FN(fn_splitn)
{
    wh_tmpl_value parts;
    wh_code rc = split_parts(ctx, &a[0], &a[2], (long)a[1].u.i, &parts);
    return rc != WH_OK ? rc : parts_to_map(ctx, &parts, out);
}

FN(fn_initials)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i;
    int at_start = 1;

    for (i = 0; i < a[0].len; i++) {
        char c = a[0].u.s[i];
        if (is_space_byte(c)) {
            at_start = 1;
            continue;
        }
        if (at_start)
            wh_buf_putc(b, c);
        at_start = 0;
    }
    return tm_ret_buf(ctx, out, b);
}

/* ---- encodings ---- */

FN(fn_b64enc)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);

    wh_go_base64(b, a[0].u.s, a[0].len);
    return tm_ret_buf(ctx, out, b);
}

/* base64.StdEncoding.DecodeString; an error answers "illegal base64 data
 * at input byte N" as Sprig does. */
FN(fn_b64dec)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    long bad = wh_go_base64_decode(b, a[0].u.s, a[0].len, 0);

    if (bad >= 0)
        return wh_tmpl_printf(ctx, out, "illegal base64 data at input byte %ld", bad);
    return tm_ret_buf(ctx, out, b);
}

static wh_code digest_hex(wh_tmpl_ctx *ctx, const EVP_MD *md, const wh_tmpl_value *s, wh_tmpl_value *out)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0, i;
    char hex[2 * EVP_MAX_MD_SIZE + 1];

    if (!EVP_Digest(s->u.s, s->len, d, &dl, md, NULL))
        return wh_tmpl_errorf(ctx, "digest failed");
    for (i = 0; i < dl; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return wh_tmpl_strdup(ctx, hex, 2 * dl, out);
}

FN(fn_sha256sum)
{
    return digest_hex(ctx, EVP_sha256(), &a[0], out);
}

FN(fn_sha1sum)
{
    return digest_hex(ctx, EVP_sha1(), &a[0], out);
}

FN(fn_adler32sum)
{
    uint32_t s1 = 1, s2 = 0;
    size_t i;

    for (i = 0; i < a[0].len; i++) {
        s1 = (s1 + (unsigned char)a[0].u.s[i]) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    return wh_tmpl_printf(ctx, out, "%u", (s2 << 16) | s1);
}

FN(fn_uuidv4)
{
    unsigned char u[16];

    if (RAND_bytes(u, sizeof(u)) != 1)
        return wh_tmpl_errorf(ctx, "no randomness available");
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    return wh_tmpl_printf(ctx, out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                          u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* ---- numbers ---- */

FN(fn_atoi)
{
    int64_t i = 0;
    /* strconv.Atoi: decimal only, optional sign */
    char buf[64], *end;
    if (a[0].len > 0 && a[0].len < sizeof(buf)) {
        memcpy(buf, a[0].u.s, a[0].len);
        buf[a[0].len] = 0;
        errno = 0;
        if (!isspace((unsigned char)buf[0]) && (isdigit((unsigned char)buf[0]) || buf[0] == '-' || buf[0] == '+')) {
            long long v = strtoll(buf, &end, 10);
            if (*end == 0 && errno == 0)
                i = v;
        }
    }
    return ret_int(out, i);
}

FN(fn_int)
{
    return ret_int(out, to_int64(&a[0]));
}

FN(fn_int64)
{
    return ret_int64(out, to_int64(&a[0]));
}

FN(fn_float64)
{
    *out = wh_tmpl_float(to_float64(&a[0]));
    return WH_OK;
}

FN(fn_add1)
{
    return ret_int64(out, (int64_t)((uint64_t)to_int64(&a[0]) + 1));
}

FN(fn_add)
{
    uint64_t s = 0;
    size_t i;
    for (i = 0; i < n; i++)
        s += (uint64_t)to_int64(&a[i]);
    return ret_int64(out, (int64_t)s);
}

FN(fn_sub)
{
    return ret_int64(out, (int64_t)((uint64_t)to_int64(&a[0]) - (uint64_t)to_int64(&a[1])));
}

FN(fn_mul)
{
    uint64_t p = (uint64_t)to_int64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        p *= (uint64_t)to_int64(&a[i]);
    return ret_int64(out, (int64_t)p);
}

FN(fn_div)
{
    int64_t x = to_int64(&a[0]), y = to_int64(&a[1]);
    if (y == 0)
        return wh_tmpl_errorf(ctx, "runtime error: integer divide by zero");
    if (x == INT64_MIN && y == -1)
        return ret_int64(out, x);
    return ret_int64(out, x / y);
}

FN(fn_mod)
{
    int64_t x = to_int64(&a[0]), y = to_int64(&a[1]);
    if (y == 0)
        return wh_tmpl_errorf(ctx, "runtime error: integer divide by zero");
    if (y == -1)
        return ret_int64(out, 0);
    return ret_int64(out, x % y);
}

FN(fn_max)
{
    int64_t m = to_int64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        if (to_int64(&a[i]) > m)
            m = to_int64(&a[i]);
    return ret_int64(out, m);
}

FN(fn_min)
{
    int64_t m = to_int64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        if (to_int64(&a[i]) < m)
            m = to_int64(&a[i]);
    return ret_int64(out, m);
}

FN(fn_maxf)
{
    double m = to_float64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        m = fmax(m, to_float64(&a[i]));
    *out = wh_tmpl_float(m);
    return WH_OK;
}

FN(fn_minf)
{
    double m = to_float64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        m = fmin(m, to_float64(&a[i]));
    *out = wh_tmpl_float(m);
    return WH_OK;
}

FN(fn_ceil)
{
    *out = wh_tmpl_float(ceil(to_float64(&a[0])));
    return WH_OK;
}

FN(fn_floor)
{
    *out = wh_tmpl_float(floor(to_float64(&a[0])));
    return WH_OK;
}

/* sprig's round(a, precision, roundOn=.5) */
FN(fn_round)
{
    double val = to_float64(&a[0]), round_on = n > 2 ? to_float64(&a[2]) : 0.5, pow10, digit, r;
    int64_t places = to_int64(&a[1]);

    pow10 = pow(10, (double)places);
    digit = pow10 * val;
    r = digit - floor(digit);
    (void)r;
    {
        double intpart;
        double frac = modf(digit, &intpart);
        if (frac >= round_on)
            r = ceil(digit);
        else
            r = floor(digit);
    }
    *out = wh_tmpl_float(r / pow10);
    return WH_OK;
}

static wh_code until_step(wh_tmpl_ctx *ctx, int64_t start, int64_t stop, int64_t step, wh_tmpl_value *out)
{
    const wh_tmpl_type *t = NULL;
    static const wh_tmpl_type int_slice = {.name = "[]int", .kind = WH_TMPL_LIST, .elem = &wh_tmpl_type_int};
    int64_t i, count = 0;
    wh_code rc;

    t = &int_slice;
    *out = wh_tmpl_list_new(ctx, 8, t);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if (stop < start) {
        if (step >= 0)
            return WH_OK;
        for (i = start; i > stop; i += step) {
            if (++count > 1000000)
                return wh_tmpl_errorf(ctx, "until: too many elements");
            if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_int(i))) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    if (step <= 0)
        return WH_OK;
    for (i = start; i < stop; i += step) {
        if (++count > 1000000)
            return wh_tmpl_errorf(ctx, "until: too many elements");
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_int(i))) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_until)
{
    return until_step(ctx, 0, a[0].u.i, a[0].u.i < 0 ? -1 : 1, out);
}

FN(fn_untilstep)
{
    return until_step(ctx, a[0].u.i, a[1].u.i, a[2].u.i, out);
}

/* ---- defaults and flow ---- */

FN(fn_default)
{
    if (n < 2 || empty(&a[1]))
        *out = a[0];
    else
        *out = a[1];
    return WH_OK;
}

FN(fn_empty)
{
    return ret_bool(out, empty(&a[0]));
}

FN(fn_coalesce)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (!empty(&a[i])) {
            *out = a[i];
            return WH_OK;
        }
    }
    *out = wh_tmpl_nil();
    return WH_OK;
}

FN(fn_all)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (empty(&a[i]))
            return ret_bool(out, 0);
    return ret_bool(out, 1);
}

FN(fn_any)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!empty(&a[i]))
            return ret_bool(out, 1);
    return ret_bool(out, 0);
}

FN(fn_ternary)
{
    *out = a[2].u.b ? a[0] : a[1];
    return WH_OK;
}

FN(fn_fail)
{
    return wh_tmpl_errorf(ctx, "%.*s", (int)a[0].len, a[0].u.s);
}

/* ---- JSON ---- */

static wh_code from_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int must, wh_tmpl_value *out)
{
    json_error_t jerr;
    json_t *j = json_loadb(s->u.s, s->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

    if (j == NULL) {
        if (must)
            return wh_tmpl_errorf(ctx, "%s", s->len == 0 ? "unexpected end of JSON input" : jerr.text);
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    *out = tm_adopt_json(ctx, j);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    out->flags_ |= TM_F_IFACE;
    return WH_OK;
}

FN(fn_fromjson)
{
    return from_json(ctx, &a[0], 0, out);
}

FN(fn_mustfromjson)
{
    return from_json(ctx, &a[0], 1, out);
}

static wh_code to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char *indent, int html, int must,
                       wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = tm_json_encode(ctx, v, b, indent, html);

    if (rc != WH_OK) {
        if (must)
            return rc;
        ctx->failed = 0;
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    return tm_ret_buf(ctx, out, b);
}

FN(fn_tojson)
{
    return to_json(ctx, &a[0], NULL, 1, 0, out);
}

FN(fn_musttojson)
{
    return to_json(ctx, &a[0], NULL, 1, 1, out);
}

FN(fn_toprettyjson)
{
    return to_json(ctx, &a[0], "  ", 1, 0, out);
}

FN(fn_musttoprettyjson)
{
    return to_json(ctx, &a[0], "  ", 1, 1, out);
}

FN(fn_torawjson)
{
    return to_json(ctx, &a[0], NULL, 0, 1, out);
}

/* ---- types ---- */

FN(fn_typeof)
{
    *out = wh_tmpl_str(is_nil(&a[0]) ? "<nil>" : tm_type_name(&a[0]));
    return WH_OK;
}

FN(fn_typeis)
{
    const char *t = is_nil(&a[1]) ? "<nil>" : tm_type_name(&a[1]);
    return ret_bool(out, strlen(t) == a[0].len && memcmp(t, a[0].u.s, a[0].len) == 0);
}

FN(fn_typeislike)
{
    const char *t = is_nil(&a[1]) ? "<nil>" : tm_type_name(&a[1]);
    size_t tl = strlen(t);
    return ret_bool(out, (tl == a[0].len && memcmp(t, a[0].u.s, a[0].len) == 0) ||
                             (tl == a[0].len + 1 && t[0] == '*' && memcmp(t + 1, a[0].u.s, a[0].len) == 0));
}

FN(fn_kindof)
{
    *out = wh_tmpl_str(kind_name(&a[0]));
    return WH_OK;
}

FN(fn_kindis)
{
    const char *k = kind_name(&a[1]);
    return ret_bool(out, strlen(k) == a[0].len && memcmp(k, a[0].u.s, a[0].len) == 0);
}

/* reflect.DeepEqual over template values */
static int deep_equal(wh_tmpl_ctx *ctx, const wh_tmpl_value *x, const wh_tmpl_value *y)
{
    long i, n;

    if (is_nil(x) || is_nil(y))
        return is_nil(x) && is_nil(y);
    if (x->kind != y->kind || strcmp(tm_type_name(x), tm_type_name(y)) != 0)
        return 0;
    switch (x->kind) {
    case WH_TMPL_BOOL:
        return x->u.b == y->u.b;
    case WH_TMPL_INT:
        return x->u.i == y->u.i;
    case WH_TMPL_UINT:
        return x->u.u == y->u.u;
    case WH_TMPL_FLOAT:
        return x->u.f == y->u.f;
    case WH_TMPL_STRING:
        return x->len == y->len && memcmp(x->u.s, y->u.s, x->len) == 0;
    case WH_TMPL_LIST:
        n = wh_tmpl_len(x);
        if (n != wh_tmpl_len(y))
            return 0;
        if ((x->rep == WH_TMPL_REP_JSON ? x->u.json == NULL : x->u.list == NULL) !=
            (y->rep == WH_TMPL_REP_JSON ? y->u.json == NULL : y->u.list == NULL))
            return 0;
        for (i = 0; i < n; i++) {
            wh_tmpl_value p = wh_tmpl_list_at(x, (size_t)i), q = wh_tmpl_list_at(y, (size_t)i);
            if (!deep_equal(ctx, &p, &q))
                return 0;
        }
        return 1;
    case WH_TMPL_MAP: {
        wh_tmpl_kv *e1, *e2;
        size_t n1, n2, k;
        if ((x->rep == WH_TMPL_REP_JSON ? x->u.json == NULL : x->u.map == NULL) !=
            (y->rep == WH_TMPL_REP_JSON ? y->u.json == NULL : y->u.map == NULL))
            return 0;
        if (wh_tmpl_map_entries(ctx, x, &e1, &n1) != WH_OK || wh_tmpl_map_entries(ctx, y, &e2, &n2) != WH_OK ||
            n1 != n2)
            return 0;
        for (k = 0; k < n1; k++)
            if (tm_strcmp(e1[k].key, e1[k].key_len, e2[k].key, e2[k].key_len) != 0 ||
                !deep_equal(ctx, &e1[k].val, &e2[k].val))
                return 0;
        return 1;
    }
    default:
        return x->u.host == y->u.host;
    }
}

FN(fn_deepequal)
{
    return ret_bool(out, deep_equal(ctx, &a[0], &a[1]));
}

/* ---- dicts ---- */

/* An engine map holding the same entries (for functions that modify). */
static wh_code writable_map(wh_tmpl_ctx *ctx, const wh_tmpl_value *m, wh_tmpl_value *out)
{
    wh_tmpl_kv *ents;
    size_t cnt, i;
    wh_code rc;

    if (m->rep == WH_TMPL_REP_ENGINE && m->u.map != NULL) {
        *out = *m;
        return WH_OK;
    }
    *out = wh_tmpl_map_new(ctx, m->type);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if ((rc = wh_tmpl_map_entries(ctx, m, &ents, &cnt)) != WH_OK)
        return rc;
    for (i = 0; i < cnt; i++)
        if ((rc = wh_tmpl_map_set(ctx, out, ents[i].key, ents[i].key_len, ents[i].val)) != WH_OK)
            return rc;
    return WH_OK;
}

FN(fn_dict)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < n; i += 2) {
        const char *k;
        size_t kl;
        if ((rc = strval(ctx, &a[i], &k, &kl)) != WH_OK)
            return rc;
        if ((rc = wh_tmpl_map_set(ctx, out, k, kl, i + 1 < n ? a[i + 1] : wh_tmpl_strn("", 0))) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_get)
{
    if (wh_tmpl_map_get(&a[0], a[1].u.s, a[1].len, out) != WH_OK)
        *out = wh_tmpl_strn("", 0);
    return WH_OK;
}

FN(fn_set)
{
    wh_tmpl_value m;
    wh_code rc;

    if (a[0].rep == WH_TMPL_REP_JSON && a[0].u.json == NULL)
        return wh_tmpl_errorf(ctx, "assignment to entry in nil map");
    if ((rc = writable_map(ctx, &a[0], &m)) != WH_OK || (rc = wh_tmpl_map_set(ctx, &m, a[1].u.s, a[1].len, a[2])))
        return rc;
    *out = m;
    return WH_OK;
}

FN(fn_unset)
{
    wh_tmpl_value m;
    wh_code rc;

    if (a[0].rep == WH_TMPL_REP_JSON && a[0].u.json == NULL) {
        *out = a[0];
        return WH_OK;
    }
    if ((rc = writable_map(ctx, &a[0], &m)) != WH_OK)
        return rc;
    tm_map_delete(&m, a[1].u.s, a[1].len);
    *out = m;
    return WH_OK;
}

FN(fn_haskey)
{
    wh_tmpl_value v;
    return ret_bool(out, wh_tmpl_map_get(&a[0], a[1].u.s, a[1].len, &v) == WH_OK);
}

FN(fn_pluck)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, n, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 1; i < n; i++) {
        wh_tmpl_value v;
        if (wh_tmpl_map_get(&a[i], a[0].u.s, a[0].len, &v) == WH_OK && (rc = wh_tmpl_list_push(ctx, out, v)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_keys)
{
    size_t i, k, cnt;
    wh_tmpl_kv *ents;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, 8, &wh_tmpl_type_string_slice);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < n; i++) {
        if ((rc = wh_tmpl_map_entries(ctx, &a[i], &ents, &cnt)) != WH_OK)
            return rc;
        for (k = 0; k < cnt; k++)
            if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_strn(ents[k].key, ents[k].key_len))) != WH_OK)
                return rc;
    }
    return WH_OK;
}

FN(fn_values)
{
    size_t k, cnt;
    wh_tmpl_kv *ents;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, 8, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if ((rc = wh_tmpl_map_entries(ctx, &a[0], &ents, &cnt)) != WH_OK)
        return rc;
    for (k = 0; k < cnt; k++)
        if ((rc = wh_tmpl_list_push(ctx, out, ents[k].val)) != WH_OK)
            return rc;
    return WH_OK;
}

FN(fn_pick)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 1; i < n; i++) {
        wh_tmpl_value v;
        if (wh_tmpl_map_get(&a[0], a[i].u.s, a[i].len, &v) == WH_OK &&
            (rc = wh_tmpl_map_set(ctx, out, a[i].u.s, a[i].len, v)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_omit)
{
    size_t i, k, cnt;
    wh_tmpl_kv *ents;
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    if ((rc = wh_tmpl_map_entries(ctx, &a[0], &ents, &cnt)) != WH_OK)
        return rc;
    for (k = 0; k < cnt; k++) {
        int drop = 0;
        for (i = 1; i < n && !drop; i++)
            drop = a[i].len == ents[k].key_len && memcmp(a[i].u.s, ents[k].key, a[i].len) == 0;
        if (!drop && (rc = wh_tmpl_map_set(ctx, out, ents[k].key, ents[k].key_len, ents[k].val)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

/* mergo.Merge / MergeWithOverwrite of map[string]interface{} values */
static wh_code merge_into(wh_tmpl_ctx *ctx, wh_tmpl_value *dst, const wh_tmpl_value *src, int overwrite, int depth)
{
    wh_tmpl_kv *ents;
    size_t cnt, k;
    wh_code rc;

    if (depth > 100)
        return wh_tmpl_errorf(ctx, "merge: nesting too deep");
    if ((rc = wh_tmpl_map_entries(ctx, src, &ents, &cnt)) != WH_OK)
        return rc;
    for (k = 0; k < cnt; k++) {
        wh_tmpl_value cur, *sv = &ents[k].val;
        int have = wh_tmpl_map_get(dst, ents[k].key, ents[k].key_len, &cur) == WH_OK;
        if (!overwrite && is_nil(sv))
            continue;
        if (have && cur.kind == WH_TMPL_MAP && sv->kind == WH_TMPL_MAP && cur.type == NULL && sv->type == NULL) {
            wh_tmpl_value w;
            if ((rc = writable_map(ctx, &cur, &w)) != WH_OK || (rc = merge_into(ctx, &w, sv, overwrite, depth + 1)) ||
                (rc = wh_tmpl_map_set(ctx, dst, ents[k].key, ents[k].key_len, w)) != WH_OK)
                return rc;
            continue;
        }
        if (!have || empty(&cur) || (overwrite && !empty(sv))) {
            if ((rc = wh_tmpl_map_set(ctx, dst, ents[k].key, ents[k].key_len, *sv)) != WH_OK)
                return rc;
        }
    }
    return WH_OK;
}

static wh_code do_merge(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, int overwrite, wh_tmpl_value *out)
{
    wh_tmpl_value dst;
    size_t i;
    wh_code rc;

    if (a[0].rep == WH_TMPL_REP_JSON && a[0].u.json == NULL)
        dst = wh_tmpl_map_new(ctx, NULL);
    else if ((rc = writable_map(ctx, &a[0], &dst)) != WH_OK)
        return rc;
    if (dst.kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 1; i < n; i++)
        if ((rc = merge_into(ctx, &dst, &a[i], overwrite, 0)) != WH_OK)
            return rc;
    /* mergo makes a nil destination only when it sets something */
    if (a[0].rep == WH_TMPL_REP_JSON && a[0].u.json == NULL && wh_tmpl_len(&dst) == 0)
        dst = a[0];
    *out = dst;
    return WH_OK;
}

FN(fn_merge)
{
    return do_merge(ctx, a, n, 0, out);
}

FN(fn_mergeoverwrite)
{
    return do_merge(ctx, a, n, 1, out);
}

static wh_code deep_copy(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_tmpl_value *out, int depth)
{
    wh_code rc;

    if (depth > 200)
        return wh_tmpl_errorf(ctx, "deepCopy: nesting too deep");
    if (v->kind == WH_TMPL_MAP && v->rep == WH_TMPL_REP_ENGINE && v->u.map != NULL) {
        wh_tmpl_kv *ents;
        size_t cnt, k;
        *out = wh_tmpl_map_new(ctx, v->type);
        if ((rc = wh_tmpl_map_entries(ctx, v, &ents, &cnt)) != WH_OK)
            return rc;
        for (k = 0; k < cnt; k++) {
            wh_tmpl_value c;
            if ((rc = deep_copy(ctx, &ents[k].val, &c, depth + 1)) != WH_OK ||
                (rc = wh_tmpl_map_set(ctx, out, ents[k].key, ents[k].key_len, c)) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    if (v->kind == WH_TMPL_LIST && v->rep == WH_TMPL_REP_ENGINE && v->u.list != NULL) {
        long i, len = wh_tmpl_len(v);
        *out = wh_tmpl_list_new(ctx, (size_t)len, v->type);
        for (i = 0; i < len; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i), c;
            if ((rc = deep_copy(ctx, &e, &c, depth + 1)) != WH_OK || (rc = wh_tmpl_list_push(ctx, out, c)) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    *out = *v;
    return WH_OK;
}

FN(fn_deepcopy)
{
    if (is_nil(&a[0]))
        return wh_tmpl_errorf(ctx, "deepCopy error: reflect: call of reflect.Value.Type on zero Value");
    return deep_copy(ctx, &a[0], out, 0);
}

FN(fn_dig)
{
    wh_tmpl_value cur;
    size_t i;

    if (n < 3)
        return wh_tmpl_errorf(ctx, "dig needs at least three arguments");
    cur = a[n - 1];
    if (!tm_same_type(&cur, &wh_tmpl_type_map_string_interface, WH_TMPL_MAP))
        return wh_tmpl_errorf(ctx, "interface conversion: interface {} is %s, not map[string]interface {}",
                              is_nil(&cur) ? "nil" : tm_type_name(&cur));
    for (i = 0; i < n - 2; i++) {
        if (a[i].kind != WH_TMPL_STRING)
            return wh_tmpl_errorf(ctx, "interface conversion: interface {} is %s, not string",
                                  is_nil(&a[i]) ? "nil" : tm_type_name(&a[i]));
    }
    for (i = 0; i < n - 2; i++) {
        wh_tmpl_value next;
        if (wh_tmpl_map_get(&cur, a[i].u.s, a[i].len, &next) != WH_OK) {
            *out = a[n - 2];
            return WH_OK;
        }
        if (i == n - 3) {
            *out = next;
            return WH_OK;
        }
        if (!tm_same_type(&next, &wh_tmpl_type_map_string_interface, WH_TMPL_MAP))
            return wh_tmpl_errorf(ctx, "interface conversion: interface {} is %s, not map[string]interface {}",
                                  is_nil(&next) ? "nil" : tm_type_name(&next));
        cur = next;
    }
    return WH_OK;
}

/* ---- lists ---- */

FN(fn_list)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, n, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < n; i++)
        if ((rc = wh_tmpl_list_push(ctx, out, a[i])) != WH_OK)
            return rc;
    return WH_OK;
}

/* reflect.TypeOf(list).Kind() for sprig's list functions: the error text or NULL when a list */
static wh_code need_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char *what)
{
    if (v->kind == WH_TMPL_LIST)
        return WH_OK;
    if (is_nil(v))
        return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
    return wh_tmpl_errorf(ctx, "Cannot %s type %s", what, kind_name(v));
}

static wh_code copy_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, size_t extra, wh_tmpl_value *out)
{
    long i, len = wh_tmpl_len(v);
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, (size_t)len + extra, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
        e.flags_ = 0;
        if ((rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

/* Sprig copies the list and appends to the copy: the result never aliases
 * the argument.  An engine []interface{} is extended through a shared array
 * instead (no list is ever changed in place, so sharing is invisible), which
 * keeps a loop of appends linear rather than quadratic. */
FN(fn_append)
{
    wh_code rc;
    if ((rc = need_list(ctx, &a[0], "push on")) != WH_OK)
        return rc;
    if (a[0].rep == WH_TMPL_REP_ENGINE && a[0].type == NULL && a[0].u.list != NULL)
        return tm_list_append(ctx, &a[0], a[1], out);
    if ((rc = copy_list(ctx, &a[0], 1, out)) != WH_OK)
        return rc;
    return wh_tmpl_list_push(ctx, out, a[1]);
}

FN(fn_prepend)
{
    wh_tmpl_value l;
    long i, len;
    wh_code rc;

    if ((rc = need_list(ctx, &a[0], "prepend on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    l = wh_tmpl_list_new(ctx, (size_t)len + 1, NULL);
    if ((rc = wh_tmpl_list_push(ctx, &l, a[1])) != WH_OK)
        return rc;
    for (i = 0; i < len; i++)
        if ((rc = wh_tmpl_list_push(ctx, &l, wh_tmpl_list_at(&a[0], (size_t)i))) != WH_OK)
            return rc;
    *out = l;
    return WH_OK;
}

FN(fn_first)
{
    wh_code rc;
    if ((rc = need_list(ctx, &a[0], "find first on")) != WH_OK)
        return rc;
    *out = wh_tmpl_len(&a[0]) == 0 ? wh_tmpl_nil() : wh_tmpl_list_at(&a[0], 0);
    return WH_OK;
}

FN(fn_last)
{
    wh_code rc;
    long len;
    if ((rc = need_list(ctx, &a[0], "find last on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    *out = len == 0 ? wh_tmpl_nil() : wh_tmpl_list_at(&a[0], (size_t)len - 1);
    return WH_OK;
}

static wh_code sub_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, long from, long to, wh_tmpl_value *out)
{
    long i;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, to > from ? (size_t)(to - from) : 0, NULL);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = from; i < to; i++)
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_list_at(v, (size_t)i))) != WH_OK)
            return rc;
    return WH_OK;
}

FN(fn_rest)
{
    wh_code rc;
    long len;
    if ((rc = need_list(ctx, &a[0], "find rest on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    if (len == 0) {
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_interface_slice);
        return WH_OK;
    }
    return sub_list(ctx, &a[0], 1, len, out);
}

FN(fn_initial)
{
    wh_code rc;
    long len;
    if ((rc = need_list(ctx, &a[0], "find initial on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    if (len == 0) {
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_interface_slice);
        return WH_OK;
    }
    return sub_list(ctx, &a[0], 0, len - 1, out);
}

FN(fn_reverse)
{
    wh_code rc;
    long i, len;
    if ((rc = need_list(ctx, &a[0], "find reverse on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    *out = wh_tmpl_list_new(ctx, (size_t)len, NULL);
    for (i = len - 1; i >= 0; i--)
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_list_at(&a[0], (size_t)i))) != WH_OK)
            return rc;
    return WH_OK;
}

FN(fn_compact)
{
    wh_code rc;
    long i, len;
    if ((rc = need_list(ctx, &a[0], "compact on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    *out = wh_tmpl_list_new(ctx, (size_t)len, NULL);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(&a[0], (size_t)i);
        if (!empty(&e) && (rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

static int in_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *l, const wh_tmpl_value *needle)
{
    long i, len = wh_tmpl_len(l);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(l, (size_t)i);
        if (deep_equal(ctx, &e, needle))
            return 1;
    }
    return 0;
}

FN(fn_uniq)
{
    wh_code rc;
    long i, len;
    if ((rc = need_list(ctx, &a[0], "find uniq on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    *out = wh_tmpl_list_new(ctx, (size_t)len, NULL);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(&a[0], (size_t)i);
        if (!in_list(ctx, out, &e) && (rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_without)
{
    wh_code rc;
    long i, len;
    size_t k;
    if ((rc = need_list(ctx, &a[0], "find without on")) != WH_OK)
        return rc;
    len = wh_tmpl_len(&a[0]);
    *out = wh_tmpl_list_new(ctx, (size_t)len, NULL);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(&a[0], (size_t)i);
        int drop = 0;
        for (k = 1; k < n && !drop; k++)
            drop = deep_equal(ctx, &e, &a[k]);
        if (!drop && (rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_has)
{
    if (is_nil(&a[1]))
        return ret_bool(out, 0);
    if (a[1].kind != WH_TMPL_LIST)
        return wh_tmpl_errorf(ctx, "Cannot find has on type %s", kind_name(&a[1]));
    return ret_bool(out, in_list(ctx, &a[1], &a[0]));
}

FN(fn_sprig_slice)
{
    long len, from = 0, to, i;
    wh_code rc;

    if (a[0].kind != WH_TMPL_LIST) {
        if (is_nil(&a[0]))
            return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
        return wh_tmpl_errorf(ctx, "list should be type of slice or array but %s", kind_name(&a[0]));
    }
    len = wh_tmpl_len(&a[0]);
    if (len == 0) {
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    to = len;
    if (n > 1)
        from = (long)to_int64(&a[1]);
    if (n > 2)
        to = (long)to_int64(&a[2]);
    if (from < 0 || to < from || to > len)
        return wh_tmpl_errorf(ctx, "reflect: slice index out of range");
    *out = wh_tmpl_list_new(ctx, (size_t)(to - from), a[0].type);
    if (out->kind == WH_TMPL_INVALID)
        return WH_E_NOMEM;
    for (i = from; i < to; i++)
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_list_at(&a[0], (size_t)i))) != WH_OK)
            return rc;
    return WH_OK;
}

FN(fn_concat)
{
    size_t k;
    long i, len;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, 8, NULL);
    for (k = 0; k < n; k++) {
        if (a[k].kind != WH_TMPL_LIST) {
            if (is_nil(&a[k]))
                return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
            return wh_tmpl_errorf(ctx, "Cannot concat type %s as list", kind_name(&a[k]));
        }
        len = wh_tmpl_len(&a[k]);
        for (i = 0; i < len; i++)
            if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_list_at(&a[k], (size_t)i))) != WH_OK)
                return rc;
    }
    return WH_OK;
}

FN(fn_chunk)
{
    wh_code rc;
    long len, i, size = (long)a[0].u.i;
    wh_tmpl_value cur = wh_tmpl_invalid();

    if ((rc = need_list(ctx, &a[1], "chunk")) != WH_OK)
        return rc;
    if (size <= 0)
        return wh_tmpl_errorf(ctx, "runtime error: integer divide by zero");
    len = wh_tmpl_len(&a[1]);
    *out = wh_tmpl_list_new(ctx, 4, NULL);
    for (i = 0; i < len; i++) {
        if (i % size == 0) {
            if (cur.kind != WH_TMPL_INVALID && (rc = wh_tmpl_list_push(ctx, out, cur)) != WH_OK)
                return rc;
            cur = wh_tmpl_list_new(ctx, (size_t)size, NULL);
        }
        if ((rc = wh_tmpl_list_push(ctx, &cur, wh_tmpl_list_at(&a[1], (size_t)i))) != WH_OK)
            return rc;
    }
    if (cur.kind != WH_TMPL_INVALID && (rc = wh_tmpl_list_push(ctx, out, cur)) != WH_OK)
        return rc;
    return WH_OK;
}

/* ---- paths ---- */

/* path.Clean */
static void path_clean(const char *p, size_t len, wh_buf *b)
{
    int rooted = len > 0 && p[0] == '/';
    size_t r = 0, dotdot;

    if (len == 0) {
        wh_buf_putc(b, '.');
        return;
    }
    wh_buf_reset(b);
    if (rooted) {
        wh_buf_putc(b, '/');
        r = 1;
    }
    dotdot = b->len;
    while (r < len) {
        if (p[r] == '/') {
            r++;
        } else if (p[r] == '.' && (r + 1 == len || p[r + 1] == '/')) {
            r++;
        } else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == len || p[r + 2] == '/')) {
            r += 2;
            if (b->len > dotdot) {
                size_t w = b->len - 1;
                while (w > dotdot && b->data[w] != '/')
                    w--;
                b->len = w;
                b->data[w] = 0;
            } else if (!rooted) {
                if (b->len > 0)
                    wh_buf_putc(b, '/');
                wh_buf_puts(b, "..");
                dotdot = b->len;
            }
        } else {
            if ((rooted && b->len != 1) || (!rooted && b->len != 0))
                wh_buf_putc(b, '/');
            for (; r < len && p[r] != '/'; r++)
                wh_buf_putc(b, p[r]);
        }
    }
    if (b->len == 0)
        wh_buf_putc(b, '.');
}

FN(fn_clean)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    path_clean(a[0].u.s, a[0].len, b);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_base)
{
    const char *s = a[0].u.s;
    size_t len = a[0].len, i;

    if (len == 0)
        return wh_tmpl_strdup(ctx, ".", 1, out);
    while (len > 0 && s[len - 1] == '/')
        len--;
    for (i = len; i > 0 && s[i - 1] != '/'; i--)
        ;
    if (len == 0)
        return wh_tmpl_strdup(ctx, "/", 1, out);
    *out = wh_tmpl_strn(s + i, len - i);
    return WH_OK;
}

FN(fn_dir)
{
    size_t i = a[0].len;
    wh_buf *b;

    while (i > 0 && a[0].u.s[i - 1] != '/')
        i--;
    b = wh_tmpl_tmpbuf(ctx);
    path_clean(a[0].u.s, i, b);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_ext)
{
    size_t i;
    for (i = a[0].len; i > 0 && a[0].u.s[i - 1] != '/'; i--)
        if (a[0].u.s[i - 1] == '.') {
            *out = wh_tmpl_strn(a[0].u.s + i - 1, a[0].len - i + 1);
            return WH_OK;
        }
    *out = wh_tmpl_strn("", 0);
    return WH_OK;
}

FN(fn_isabs)
{
    return ret_bool(out, a[0].len > 0 && a[0].u.s[0] == '/');
}

/* ---- environment ---- */

FN(fn_env)
{
    char key[256];
    const char *v;
    if (a[0].len >= sizeof(key) || memchr(a[0].u.s, 0, a[0].len) != NULL) {
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    memcpy(key, a[0].u.s, a[0].len);
    key[a[0].len] = 0;
    v = getenv(key);
    *out = wh_tmpl_str(v);
    return WH_OK;
}

/* ---- regular expressions (RE2 syntax mapped onto POSIX extended) ---- */

/* Translate the RE2 constructs charts use (\d \w \s \D \W \S, (?i) prefix,
 * non-greedy markers are not supported) into POSIX ERE. */
static int compile_re(wh_tmpl_ctx *ctx, const wh_tmpl_value *pat, regex_t *re)
{
    wh_buf b = WH_BUF_INIT;
    size_t i = 0;
    int flags = REG_EXTENDED, rc, in_class = 0;

    if (pat->len >= 4 && memcmp(pat->u.s, "(?i)", 4) == 0) {
        flags |= REG_ICASE;
        i = 4;
    }
    for (; i < pat->len; i++) {
        char c = pat->u.s[i];
        if (c == '\\' && i + 1 < pat->len) {
            char d = pat->u.s[++i];
            const char *cls = NULL;
            switch (d) {
            case 'd':
                cls = "0-9";
                break;
            case 'w':
                cls = "0-9A-Za-z_";
                break;
            case 's':
                cls = " \t\n\f\r";
                break;
            case 'D':
                cls = "^0-9";
                break;
            case 'W':
                cls = "^0-9A-Za-z_";
                break;
            case 'S':
                cls = "^ \t\n\f\r";
                break;
            case 'n':
                wh_buf_putc(&b, '\n');
                continue;
            case 't':
                wh_buf_putc(&b, '\t');
                continue;
            default:
                break;
            }
            if (cls != NULL) {
                if (in_class && cls[0] == '^') {
                    wh_buf_free(&b);
                    return wh_tmpl_errorf(ctx, "unsupported regular expression: %.*s", (int)pat->len, pat->u.s);
                }
                if (!in_class)
                    wh_buf_putc(&b, '[');
                wh_buf_puts(&b, cls);
                if (!in_class)
                    wh_buf_putc(&b, ']');
                continue;
            }
            if (in_class) {
                wh_buf_putc(&b, d);
            } else {
                wh_buf_putc(&b, '\\');
                wh_buf_putc(&b, d);
            }
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            wh_buf_putc(&b, c);
            if (i + 1 < pat->len && pat->u.s[i + 1] == '^') {
                wh_buf_putc(&b, '^');
                i++;
            }
            if (i + 1 < pat->len && pat->u.s[i + 1] == ']') {
                wh_buf_putc(&b, ']');
                i++;
            }
            continue;
        }
        if (c == ']' && in_class)
            in_class = 0;
        if (c == '?' && i > 0 && (pat->u.s[i - 1] == '*' || pat->u.s[i - 1] == '+' || pat->u.s[i - 1] == '?') &&
            !in_class) {
            wh_buf_free(&b);
            return wh_tmpl_errorf(ctx, "unsupported regular expression (non-greedy): %.*s", (int)pat->len, pat->u.s);
        }
        wh_buf_putc(&b, c);
    }
    wh_buf_append(&b, "", 0);
    rc = regcomp(re, b.data, flags);
    wh_buf_free(&b);
    if (rc != 0)
        return wh_tmpl_errorf(ctx, "error parsing regexp: %.*s", (int)pat->len, pat->u.s);
    return WH_OK;
}

/* run with the subject NUL-terminated in the arena */
static const char *cstr(wh_tmpl_ctx *ctx, const wh_tmpl_value *s)
{
    return tm_strndup(ctx->arena, s->u.s, s->len);
}

static wh_code regex_match(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, int must, wh_tmpl_value *out)
{
    regex_t re;
    const char *s;
    wh_code rc = compile_re(ctx, &a[0], &re);

    if (rc != WH_OK) {
        if (must)
            return rc;
        ctx->failed = 0;
        return ret_bool(out, 0);
    }
    if ((s = cstr(ctx, &a[1])) == NULL) {
        regfree(&re);
        return WH_E_NOMEM;
    }
    *out = wh_tmpl_bool(regexec(&re, s, 0, NULL, 0) == 0);
    regfree(&re);
    return WH_OK;
}

FN(fn_regexmatch)
{
    return regex_match(ctx, a, 0, out);
}

FN(fn_mustregexmatch)
{
    return regex_match(ctx, a, 1, out);
}

/* all matches of re in s: pairs of offsets, up to max (-1 = all) */
static wh_code regex_each(wh_tmpl_ctx *ctx, regex_t *re, const char *s, size_t len, long max, regmatch_t *m,
                          size_t *count)
{
    size_t off = 0, k = 0;
    int prev_empty_end = -1;

    while (off <= len && (max < 0 || (long)k < max)) {
        regmatch_t r[1];
        if (regexec(re, s + off, 1, r, off > 0 ? REG_NOTBOL : 0) != 0)
            break;
        if (r[0].rm_so == r[0].rm_eo && (long)(off + (size_t)r[0].rm_so) == prev_empty_end) {
            off++;
            continue;
        }
        m[k].rm_so = (regoff_t)(off + (size_t)r[0].rm_so);
        m[k].rm_eo = (regoff_t)(off + (size_t)r[0].rm_eo);
        k++;
        if (k >= 4096)
            break;
        if (r[0].rm_eo == r[0].rm_so) {
            prev_empty_end = (int)(off + (size_t)r[0].rm_eo);
            off += (size_t)r[0].rm_eo + 1;
        } else {
            off += (size_t)r[0].rm_eo;
            prev_empty_end = (int)off;
        }
    }
    *count = k;
    return WH_OK;
}

static wh_code regex_find(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, int all, int must, wh_tmpl_value *out)
{
    regex_t re;
    regmatch_t *m;
    size_t cnt, i;
    const char *s;
    wh_code rc = compile_re(ctx, &a[0], &re);

    if (rc != WH_OK) {
        if (must)
            return rc;
        ctx->failed = 0;
        *out = all ? wh_tmpl_list_new(ctx, 0, &wh_tmpl_type_string_slice) : wh_tmpl_strn("", 0);
        return WH_OK;
    }
    s = cstr(ctx, &a[1]);
    m = wh_tmpl_alloc(ctx, 4096 * sizeof(*m));
    if (s == NULL || m == NULL) {
        regfree(&re);
        return WH_E_NOMEM;
    }
    regex_each(ctx, &re, s, a[1].len, all ? (long)a[2].u.i : 1, m, &cnt);
    regfree(&re);
    if (!all) {
        *out = cnt ? wh_tmpl_strn(s + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so)) : wh_tmpl_strn("", 0);
        return WH_OK;
    }
    *out = wh_tmpl_list_new(ctx, cnt, &wh_tmpl_type_string_slice);
    if (cnt == 0) {
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_string_slice);
        return WH_OK;
    }
    for (i = 0; i < cnt; i++)
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so)))))
            return rc;
    return WH_OK;
}

FN(fn_regexfind)
{
    return regex_find(ctx, a, n, 0, 0, out);
}

FN(fn_mustregexfind)
{
    return regex_find(ctx, a, n, 0, 1, out);
}

FN(fn_regexfindall)
{
    return regex_find(ctx, a, n, 1, 0, out);
}

FN(fn_mustregexfindall)
{
    return regex_find(ctx, a, n, 1, 1, out);
}

/* Go's Regexp.ReplaceAllString ($1, ${1}, $name unsupported -> empty) or literal */
static wh_code regex_replace(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, int literal, int must, wh_tmpl_value *out)
{
    regex_t re;
    const char *s;
    wh_buf *b;
    size_t off = 0;
    wh_code rc = compile_re(ctx, &a[0], &re);
    int prev_end = -1;

    if (rc != WH_OK) {
        if (must)
            return rc;
        ctx->failed = 0;
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    if ((s = cstr(ctx, &a[1])) == NULL) {
        regfree(&re);
        return WH_E_NOMEM;
    }
    b = wh_tmpl_tmpbuf(ctx);
    while (off <= a[1].len) {
        regmatch_t m[10];
        size_t so, eo, k;
        if (regexec(&re, s + off, 10, m, off > 0 ? REG_NOTBOL : 0) != 0)
            break;
        so = off + (size_t)m[0].rm_so;
        eo = off + (size_t)m[0].rm_eo;
        if (so == eo && (int)so == prev_end) {
            if (off < a[1].len)
                wh_buf_putc(b, s[off]);
            off++;
            continue;
        }
        wh_buf_append(b, s + off, so - off);
        if (literal) {
            wh_buf_append(b, a[2].u.s, a[2].len);
        } else {
            const char *t = a[2].u.s;
            size_t tl = a[2].len;
            for (k = 0; k < tl; k++) {
                if (t[k] == '$' && k + 1 < tl) {
                    size_t j = k + 1, num = 0;
                    int brace = t[j] == '{', digits = 0;
                    if (t[j] == '$') {
                        wh_buf_putc(b, '$');
                        k = j;
                        continue;
                    }
                    if (brace)
                        j++;
                    while (j < tl && t[j] >= '0' && t[j] <= '9') {
                        num = num * 10 + (size_t)(t[j] - '0');
                        j++;
                        digits++;
                    }
                    if (digits > 0 && (!brace || (j < tl && t[j] == '}')) &&
                        (brace || j >= tl || !(isalnum((unsigned char)t[j]) || t[j] == '_'))) {
                        if (num < 10 && m[num].rm_so >= 0)
                            wh_buf_append(b, s + off + m[num].rm_so, (size_t)(m[num].rm_eo - m[num].rm_so));
                        k = brace ? j : j - 1;
                        continue;
                    }
                    /* a name: Go expands an unknown name to "" */
                    j = k + 1 + (size_t)brace;
                    while (j < tl && (isalnum((unsigned char)t[j]) || t[j] == '_'))
                        j++;
                    if (j > k + 1 + (size_t)brace && (!brace || (j < tl && t[j] == '}'))) {
                        k = brace ? j : j - 1;
                        continue;
                    }
                }
                wh_buf_putc(b, t[k]);
            }
        }
        prev_end = (int)eo;
        if (eo == so) {
            if (so < a[1].len)
                wh_buf_putc(b, s[so]);
            off = so + 1;
        } else {
            off = eo;
        }
    }
    if (off < a[1].len)
        wh_buf_append(b, s + off, a[1].len - off);
    regfree(&re);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_regexreplaceall)
{
    wh_tmpl_value x[3] = {a[0], a[1], a[2]};
    return regex_replace(ctx, x, 0, 0, out);
}

FN(fn_mustregexreplaceall)
{
    return regex_replace(ctx, a, 0, 1, out);
}

FN(fn_regexreplaceallliteral)
{
    return regex_replace(ctx, a, 1, 0, out);
}

FN(fn_regexsplit)
{
    regex_t re;
    regmatch_t *m;
    size_t cnt, i, prev = 0;
    const char *s;
    long max = (long)a[2].u.i;
    wh_code rc;

    if ((rc = compile_re(ctx, &a[0], &re)) != WH_OK)
        return rc;
    s = cstr(ctx, &a[1]);
    m = wh_tmpl_alloc(ctx, 4096 * sizeof(*m));
    if (s == NULL || m == NULL) {
        regfree(&re);
        return WH_E_NOMEM;
    }
    *out = wh_tmpl_list_new(ctx, 4, &wh_tmpl_type_string_slice);
    if (max == 0) {
        regfree(&re);
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_string_slice);
        return WH_OK;
    }
    regex_each(ctx, &re, s, a[1].len, -1, m, &cnt);
    regfree(&re);
    for (i = 0; i < cnt; i++) {
        if (max > 0 && wh_tmpl_len(out) == max - 1)
            break;
        if (m[i].rm_eo == 0)
            continue;
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + prev, (size_t)m[i].rm_so - prev))) != WH_OK)
            return rc;
        prev = (size_t)m[i].rm_eo;
    }
    return wh_tmpl_list_push(ctx, out, wh_tmpl_strn(s + prev, a[1].len - prev));
}

FN(fn_regexquotemeta)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i;
    for (i = 0; i < a[0].len; i++) {
        if (strchr("\\.+*?()|[]{}^$", a[0].u.s[i]) != NULL && a[0].u.s[i] != 0)
            wh_buf_putc(b, '\\');
        wh_buf_putc(b, a[0].u.s[i]);
    }
    return tm_ret_buf(ctx, out, b);
}

/* ---- semver (Masterminds/semver v3 constraints) ---- */

typedef struct semver {
    uint64_t major, minor, patch;
    char pre[128];
} semver;

static int parse_semver(const char *s, size_t len, semver *v)
{
    char buf[256], *p, *end;
    int parts = 0;
    uint64_t nums[3] = {0, 0, 0};

    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    p = buf;
    if (*p == 'v')
        p++;
    memset(v, 0, sizeof(*v));
    while (parts < 3) {
        if (!isdigit((unsigned char)*p))
            return -1;
        errno = 0;
        nums[parts++] = strtoull(p, &end, 10);
        if (errno != 0)
            return -1;
        if (end - p > 1 && *p == '0')
            return -1;
        p = end;
        if (*p != '.')
            break;
        p++;
    }
    v->major = nums[0];
    v->minor = nums[1];
    v->patch = nums[2];
    if (*p == '-') {
        char *q = p + 1;
        size_t k = strcspn(q, "+");
        if (k == 0 || k >= sizeof(v->pre))
            return -1;
        memcpy(v->pre, q, k);
        v->pre[k] = 0;
        p = q + k;
    }
    if (*p == '+')
        p += strlen(p);
    return *p == 0 ? 0 : -1;
}

static int cmp_pre(const char *a, const char *b)
{
    /* dot-separated identifiers: numeric compare numerically, lower than alnum */
    if (*a == 0 && *b == 0)
        return 0;
    if (*a == 0)
        return 1;
    if (*b == 0)
        return -1;
    while (*a && *b) {
        size_t la = strcspn(a, "."), lb = strcspn(b, ".");
        int na = la > 0 && strspn(a, "0123456789") >= la, nb = lb > 0 && strspn(b, "0123456789") >= lb, c;
        if (na && nb) {
            unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
            if (x != y)
                return x < y ? -1 : 1;
        } else if (na != nb) {
            return na ? -1 : 1;
        } else {
            c = tm_strcmp(a, la, b, lb);
            if (c != 0)
                return c < 0 ? -1 : 1;
        }
        a += la;
        b += lb;
        if (*a == '.')
            a++;
        if (*b == '.')
            b++;
    }
    if (*a == 0 && *b == 0)
        return 0;
    return *a == 0 ? -1 : 1;
}

static int semver_cmp(const semver *a, const semver *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor)
        return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch)
        return a->patch < b->patch ? -1 : 1;
    return cmp_pre(a->pre, b->pre);
}

/* One constraint term like ">=1.2", "~1.2.3", "^1", "1.x", "!=2": 1 = ok,
 * 0 = no, -1 = bad syntax. */
static int check_term(const char *t, const semver *v)
{
    char op[3] = "";
    size_t ol = 0;
    semver c;
    int wild_minor = 0, wild_patch = 0, nparts = 0, cmp;
    char buf[128];
    size_t i, k = 0;

    while (*t == ' ')
        t++;
    while (ol < 2 && strchr("=!<>~^", t[ol]) != NULL && t[ol] != 0) {
        op[ol] = t[ol];
        ol++;
    }
    op[ol] = 0;
    t += ol;
    while (*t == ' ')
        t++;
    if (*t == 'v')
        t++;
    /* parse with wildcards */
    for (i = 0; t[i] && t[i] != ' ' && k + 1 < sizeof(buf); i++)
        buf[k++] = t[i];
    buf[k] = 0;
    if (k == 0)
        return -1;
    {
        char *p = buf, *end;
        uint64_t nums[3] = {0, 0, 0};
        memset(&c, 0, sizeof(c));
        while (nparts < 3) {
            if (*p == 'x' || *p == 'X' || *p == '*') {
                if (nparts == 0)
                    return strcmp(op, "") == 0 || strcmp(op, "=") == 0 || strcmp(op, ">=") == 0 ? 1 : -1;
                if (nparts == 1)
                    wild_minor = 1;
                wild_patch = 1;
                p++;
                nparts++;
            } else if (isdigit((unsigned char)*p)) {
                nums[nparts++] = strtoull(p, &end, 10);
                p = end;
            } else {
                return -1;
            }
            if (*p != '.')
                break;
            p++;
        }
        if (nparts < 2)
            wild_minor = 1;
        if (nparts < 3)
            wild_patch = 1;
        c.major = nums[0];
        c.minor = nums[1];
        c.patch = nums[2];
        if (*p == '-') {
            size_t pl = strcspn(p + 1, "+");
            if (pl >= sizeof(c.pre))
                return -1;
            memcpy(c.pre, p + 1, pl);
            c.pre[pl] = 0;
            p += 1 + pl;
        }
        if (*p == '+')
            p += strlen(p);
        if (*p != 0)
            return -1;
    }
    /* a prerelease version only satisfies terms that carry a prerelease */
    if (v->pre[0] && !c.pre[0])
        return 0;
    cmp = semver_cmp(v, &c);
    if (strcmp(op, "") == 0 || strcmp(op, "=") == 0) {
        if (wild_minor)
            return v->major == c.major;
        if (wild_patch)
            return v->major == c.major && v->minor == c.minor;
        return cmp == 0;
    }
    if (strcmp(op, "!=") == 0) {
        if (wild_minor)
            return v->major != c.major;
        if (wild_patch)
            return !(v->major == c.major && v->minor == c.minor);
        return cmp != 0;
    }
    if (strcmp(op, ">") == 0) {
        if (wild_minor)
            return v->major > c.major;
        if (wild_patch)
            return v->major > c.major || (v->major == c.major && v->minor > c.minor);
        return cmp > 0;
    }
    if (strcmp(op, ">=") == 0 || strcmp(op, "=>") == 0)
        return cmp >= 0;
    if (strcmp(op, "<") == 0)
        return cmp < 0;
    if (strcmp(op, "<=") == 0 || strcmp(op, "=<") == 0) {
        if (wild_minor)
            return v->major <= c.major;
        if (wild_patch)
            return v->major < c.major || (v->major == c.major && v->minor <= c.minor);
        return cmp <= 0;
    }
    if (strcmp(op, "~") == 0 || strcmp(op, "~>") == 0) {
        if (cmp < 0)
            return 0;
        if (wild_minor && nparts < 2)
            return v->major == c.major;
        return v->major == c.major && v->minor == c.minor;
    }
    if (strcmp(op, "^") == 0) {
        if (cmp < 0)
            return 0;
        if (c.major > 0 || wild_minor)
            return v->major == c.major;
        if (c.minor > 0 || wild_patch)
            return v->major == 0 && v->minor == c.minor;
        return v->major == 0 && v->minor == 0 && v->patch == c.patch;
    }
    return -1;
}

FN(fn_semvercompare)
{
    semver v;
    char cbuf[512], *alt, *save1 = NULL;
    int any = 0;

    int bad_version = parse_semver(a[1].u.s, a[1].len, &v) != 0;

    /* the constraint is checked first (on a stand-in version if need be) */
    if (bad_version)
        memset(&v, 0, sizeof(v));
    if (a[0].len >= sizeof(cbuf))
        return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
    memcpy(cbuf, a[0].u.s, a[0].len);
    cbuf[a[0].len] = 0;
    for (alt = strtok_r(cbuf, "|", &save1); alt != NULL; alt = strtok_r(NULL, "|", &save1)) {
        char *term, *save2 = NULL;
        int ok = 1, terms = 0;
        char tbuf[512];
        /* hyphen ranges "1.2 - 1.4" and comma/space separated terms */
        snprintf(tbuf, sizeof(tbuf), "%s", alt);
        {
            char *h = strstr(tbuf, " - ");
            if (h != NULL) {
                char lo[600], hi[600];
                int r1, r2;
                *h = 0;
                snprintf(lo, sizeof(lo), ">=%s", tbuf);
                snprintf(hi, sizeof(hi), "<=%s", h + 3);
                r1 = check_term(lo, &v);
                r2 = check_term(hi, &v);
                if (r1 < 0 || r2 < 0)
                    return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
                if (r1 && r2)
                    any = 1;
                continue;
            }
        }
        for (term = strtok_r(tbuf, ", ", &save2); term != NULL; term = strtok_r(NULL, ", ", &save2)) {
            int r;
            if (strspn(term, "=!<>~^") == strlen(term)) {
                /* operator separated from its version by spaces */
                char joined[256];
                char *next = strtok_r(NULL, ", ", &save2);
                if (next == NULL)
                    return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
                snprintf(joined, sizeof(joined), "%s%s", term, next);
                r = check_term(joined, &v);
            } else {
                r = check_term(term, &v);
            }
            if (r < 0)
                return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
            terms++;
            if (!r)
                ok = 0;
        }
        if (terms == 0)
            return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
        if (ok)
            any = 1;
    }
    if (bad_version)
        return wh_tmpl_errorf(ctx, "Invalid Semantic Version");
    return ret_bool(out, any);
}

FN(fn_hello)
{
    *out = wh_tmpl_str("Hello!");
    return WH_OK;
}

const wh_tmpl_func tm_sprig_funcs[] = {
    {"adler32sum", fn_adler32sum, "s"},
    {"add", fn_add, "v*"},
    {"add1", fn_add1, "v"},
    {"all", fn_all, "v*"},
    {"any", fn_any, "v*"},
    {"append", fn_append, "vv"},
    {"atoi", fn_atoi, "s"},
    {"b64dec", fn_b64dec, "s"},
    {"b64enc", fn_b64enc, "s"},
    {"base", fn_base, "s"},
    {"biggest", fn_max, "vv*"},
    {"cat", fn_cat, "v*"},
    {"ceil", fn_ceil, "v"},
    {"chunk", fn_chunk, "iv"},
    {"clean", fn_clean, "s"},
    {"coalesce", fn_coalesce, "v*"},
    {"compact", fn_compact, "v"},
    {"concat", fn_concat, "v*"},
    {"contains", fn_contains, "ss"},
    {"deepCopy", fn_deepcopy, "v"},
    {"deepEqual", fn_deepequal, "vv"},
    {"default", fn_default, "vv*"},
    {"dict", fn_dict, "v*"},
    {"dig", fn_dig, "v*"},
    {"dir", fn_dir, "s"},
    {"div", fn_div, "vv"},
    {"empty", fn_empty, "v"},
    {"env", fn_env, "s"},
    {"ext", fn_ext, "s"},
    {"fail", fn_fail, "s"},
    {"first", fn_first, "v"},
    {"float64", fn_float64, "v"},
    {"floor", fn_floor, "v"},
    {"fromJson", fn_fromjson, "s"},
    {"get", fn_get, "ms"},
    {"has", fn_has, "vv"},
    {"hasKey", fn_haskey, "ms"},
    {"hasPrefix", fn_hasprefix, "ss"},
    {"hasSuffix", fn_hassuffix, "ss"},
    {"hello", fn_hello, ""},
    {"indent", fn_indent, "is"},
    {"initial", fn_initial, "v"},
    {"initials", fn_initials, "s"},
    {"int", fn_int, "v"},
    {"int64", fn_int64, "v"},
    {"isAbs", fn_isabs, "s"},
    {"join", fn_join, "sv"},
    {"keys", fn_keys, "m*"},
    {"kindIs", fn_kindis, "sv"},
    {"kindOf", fn_kindof, "v"},
    {"last", fn_last, "v"},
    {"list", fn_list, "v*"},
    {"lower", fn_lower, "s"},
    {"max", fn_max, "vv*"},
    {"maxf", fn_maxf, "vv*"},
    {"merge", fn_merge, "mm*"},
    {"mergeOverwrite", fn_mergeoverwrite, "mm*"},
    {"min", fn_min, "vv*"},
    {"minf", fn_minf, "vv*"},
    {"mod", fn_mod, "vv"},
    {"mul", fn_mul, "vv*"},
    {"mustAppend", fn_append, "vv"},
    {"mustCompact", fn_compact, "v"},
    {"mustDeepCopy", fn_deepcopy, "v"},
    {"mustFirst", fn_first, "v"},
    {"mustFromJson", fn_mustfromjson, "s"},
    {"mustHas", fn_has, "vv"},
    {"mustInitial", fn_initial, "v"},
    {"mustLast", fn_last, "v"},
    {"mustMerge", fn_merge, "mm*"},
    {"mustMergeOverwrite", fn_mergeoverwrite, "mm*"},
    {"mustPrepend", fn_prepend, "vv"},
    {"mustPush", fn_append, "vv"},
    {"mustRegexFind", fn_mustregexfind, "ss"},
    {"mustRegexFindAll", fn_mustregexfindall, "ssi"},
    {"mustRegexMatch", fn_mustregexmatch, "ss"},
    {"mustRegexReplaceAll", fn_mustregexreplaceall, "sss"},
    {"mustRegexReplaceAllLiteral", fn_regexreplaceallliteral, "sss"},
    {"mustRegexSplit", fn_regexsplit, "ssi"},
    {"mustRest", fn_rest, "v"},
    {"mustReverse", fn_reverse, "v"},
    {"mustSlice", fn_sprig_slice, "vv*"},
    {"mustToJson", fn_musttojson, "v"},
    {"mustToPrettyJson", fn_musttoprettyjson, "v"},
    {"mustToRawJson", fn_torawjson, "v"},
    {"mustUniq", fn_uniq, "v"},
    {"mustWithout", fn_without, "vv*"},
    {"nindent", fn_nindent, "is"},
    {"nospace", fn_nospace, "s"},
    {"omit", fn_omit, "ms*"},
    {"pick", fn_pick, "ms*"},
    {"pluck", fn_pluck, "sm*"},
    {"plural", fn_plural, "ssi"},
    {"prepend", fn_prepend, "vv"},
    {"push", fn_append, "vv"},
    {"quote", fn_quote, "v*"},
    {"regexFind", fn_regexfind, "ss"},
    {"regexFindAll", fn_regexfindall, "ssi"},
    {"regexMatch", fn_regexmatch, "ss"},
    {"regexQuoteMeta", fn_regexquotemeta, "s"},
    {"regexReplaceAll", fn_regexreplaceall, "sss"},
    {"regexReplaceAllLiteral", fn_regexreplaceallliteral, "sss"},
    {"regexSplit", fn_regexsplit, "ssi"},
    {"repeat", fn_repeat, "is"},
    {"replace", fn_replace, "sss"},
    {"rest", fn_rest, "v"},
    {"reverse", fn_reverse, "v"},
    {"round", fn_round, "vif*"},
    {"semverCompare", fn_semvercompare, "ss"},
    {"set", fn_set, "msv"},
    {"sha1sum", fn_sha1sum, "s"},
    {"sha256sum", fn_sha256sum, "s"},
    {"slice", fn_sprig_slice, "vv*"},
    {"sortAlpha", fn_sortalpha, "v"},
    {"split", fn_split, "ss"},
    {"splitList", fn_splitlist, "ss"},
    {"splitn", fn_splitn, "sis"},
    {"squote", fn_squote, "v*"},
    {"sub", fn_sub, "vv"},
    {"substr", fn_substr, "iis"},
    {"ternary", fn_ternary, "vvb"},
    {"title", fn_title, "s"},
    {"toJson", fn_tojson, "v"},
    {"toPrettyJson", fn_toprettyjson, "v"},
    {"toRawJson", fn_torawjson, "v"},
    {"toString", fn_tostring, "v"},
    {"toStrings", fn_tostrings, "v"},
    {"trim", fn_trim, "s"},
    {"trimAll", fn_trimall, "ss"},
    {"trimPrefix", fn_trimprefix, "ss"},
    {"trimSuffix", fn_trimsuffix, "ss"},
    {"trimall", fn_trimall, "ss"},
    {"trunc", fn_trunc, "is"},
    {"tuple", fn_list, "v*"},
    {"typeIs", fn_typeis, "sv"},
    {"typeIsLike", fn_typeislike, "sv"},
    {"typeOf", fn_typeof, "v"},
    {"uniq", fn_uniq, "v"},
    {"unset", fn_unset, "ms"},
    {"until", fn_until, "i"},
    {"untilStep", fn_untilstep, "iii"},
    {"untitle", fn_untitle, "s"},
    {"upper", fn_upper, "s"},
    {"uuidv4", fn_uuidv4, ""},
    {"values", fn_values, "m"},
    {"without", fn_without, "vv*"},
};
const size_t tm_sprig_nfuncs = sizeof(tm_sprig_funcs) / sizeof(tm_sprig_funcs[0]);
