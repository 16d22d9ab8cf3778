/*
 * sprig.c - Sprig's text functions (sprig.TxtFuncMap, v3) as Helm charts and
 * Istio's injection templates use them.  Like Sprig's own sources, one file per
 * group (sprig_strings.c, sprig_list.c, ...) each with its table; this one holds
 * what they share (Sprig's spf13/cast conversions, emptiness, kinds) and the
 * functions of Sprig's functions.go (path's and path/filepath's, env); set.c
 * lists the tables, so that the shared half sits below every file that uses it.
 * Behaviour on nil, empty and wrong-typed arguments is Sprig's; the cases are in
 * tests/template (ctest template.*).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sprig_int.h"

wh_code sprig_ret_bool(wh_tmpl_value *out, int b)
{
    *out = wh_tmpl_bool(b);
    return WH_OK;
}

wh_code sprig_ret_int64(wh_tmpl_value *out, int64_t i)
{
    *out = wh_tmpl_int_typed(i, &wh_tmpl_type_int64);
    return WH_OK;
}

wh_code sprig_or_zero(wh_tmpl_ctx *ctx, wh_code rc, int must, wh_tmpl_value zero, wh_tmpl_value *out)
{
    if (rc == WH_OK || must)
        return rc;
    ctx->failed = 0;
    *out = zero;
    return WH_OK;
}

wh_code sprig_ret_int(wh_tmpl_value *out, int64_t i)
{
    *out = wh_tmpl_int(i);
    return WH_OK;
}

int sprig_is_nil(const wh_tmpl_value *v)
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
wh_code sprig_strval(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char **s, size_t *len)
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
int64_t sprig_to_int64(const wh_tmpl_value *v)
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
double sprig_to_float64(const wh_tmpl_value *v)
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
int sprig_empty(const wh_tmpl_value *v)
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
const char *sprig_kind_name(const wh_tmpl_value *v)
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
    return sprig_ret_bool(out, a[0].len > 0 && a[0].u.s[0] == '/');
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

FN(fn_hello)
{
    *out = wh_tmpl_str("Hello!");
    return WH_OK;
}

const char *sprig_arena_str(wh_tmpl_ctx *ctx, const char *s, size_t len)
{
    wh_tmpl_value v;
    wh_tmpl_strdup(ctx, s, len, &v);
    return v.u.s;
}

const wh_tmpl_func tm_sprig_functions_funcs[] = {
    {"base", fn_base, "s", WH_TMPL_FN_PURE},
    {"clean", fn_clean, "s", WH_TMPL_FN_PURE},
    {"dir", fn_dir, "s", WH_TMPL_FN_PURE},
    {"env", fn_env, "s", 0},
    {"ext", fn_ext, "s", WH_TMPL_FN_PURE},
    {"hello", fn_hello, "", WH_TMPL_FN_PURE},
    {"isAbs", fn_isabs, "s", WH_TMPL_FN_PURE},
    /* path/filepath's: on Linux the same as path's (one separator, '/') */
    {"osBase", fn_base, "s", WH_TMPL_FN_PURE},
    {"osClean", fn_clean, "s", WH_TMPL_FN_PURE},
    {"osDir", fn_dir, "s", WH_TMPL_FN_PURE},
    {"osExt", fn_ext, "s", WH_TMPL_FN_PURE},
    {"osIsAbs", fn_isabs, "s", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_functions_nfuncs = sizeof(tm_sprig_functions_funcs) / sizeof(tm_sprig_functions_funcs[0]);
