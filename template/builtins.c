/*
 * builtins.c - Go's predefined template functions (and, or, not, len, index,
 * slice, print, printf, println, eq, ne, lt, le, gt, ge, html, js, urlquery,
 * call) with text/template's argument rules and error texts.
 */
#include <stdio.h>
#include <string.h>

#include "tmpl_int.h"
#include "wh_go.h"

/* reflect's indirectInterface: a nil interface is no value */
static wh_tmpl_value ind(const wh_tmpl_value *v)
{
    if (v->kind == WH_TMPL_NIL)
        return wh_tmpl_invalid();
    return *v;
}

static wh_code fn_not(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value v = ind(&a[0]);
    *out = wh_tmpl_bool(!tm_truth(&v));
    return WH_OK;
}

/* never called: and/or are evaluated lazily by the executor */
static wh_code fn_andor(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    return wh_tmpl_errorf(ctx, "unreachable");
}

static wh_code fn_len(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    long l;

    if (a[0].kind == WH_TMPL_NIL ||
        (a[0].kind == WH_TMPL_HOST && a[0].u.host == NULL && a[0].type && a[0].type->pointer))
        return wh_tmpl_errorf(ctx, "len of nil pointer");
    if (a[0].kind == WH_TMPL_INVALID)
        return wh_tmpl_errorf(ctx, "reflect: call of reflect.Value.Type on zero Value");
    l = wh_tmpl_len(&a[0]);
    if (l < 0)
        return wh_tmpl_errorf(ctx, "len of type %s", tm_type_name(&a[0]));
    *out = wh_tmpl_int(l);
    return WH_OK;
}

static wh_code index_arg(wh_tmpl_ctx *ctx, const wh_tmpl_value *idx, long cap, long *x)
{
    wh_tmpl_value i = ind(idx);

    switch (i.kind) {
    case WH_TMPL_INT:
        *x = (long)i.u.i;
        break;
    case WH_TMPL_UINT:
        *x = (long)i.u.u;
        break;
    case WH_TMPL_INVALID:
        return wh_tmpl_errorf(ctx, "cannot index slice/array with nil");
    default:
        return wh_tmpl_errorf(ctx, "cannot index slice/array with type %s", tm_type_name(&i));
    }
    if (*x < 0 || *x > cap)
        return wh_tmpl_errorf(ctx, "index out of range: %ld", *x);
    return WH_OK;
}

static const wh_tmpl_type type_uint8 = {.name = "uint8", .kind = WH_TMPL_UINT};

static wh_code fn_index(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value item = ind(&a[0]);
    size_t k;
    wh_code rc;

    if (item.kind == WH_TMPL_INVALID)
        return wh_tmpl_errorf(ctx, "index of untyped nil");
    for (k = 1; k < n; k++) {
        wh_tmpl_value idx = ind(&a[k]);
        long x = 0;
        if (item.kind == WH_TMPL_HOST && item.u.host == NULL && item.type && item.type->pointer)
            return wh_tmpl_errorf(ctx, "index of nil pointer");
        if (item.kind == WH_TMPL_NIL)
            return wh_tmpl_errorf(ctx, "index of nil pointer");
        switch (item.kind) {
        case WH_TMPL_LIST:
        case WH_TMPL_STRING: {
            long len = wh_tmpl_len(&item);
            if ((rc = index_arg(ctx, &idx, len, &x)) != WH_OK)
                return rc;
            if (x >= len)
                return wh_tmpl_errorf(ctx, item.kind == WH_TMPL_LIST ? "reflect: slice index out of range"
                                                                     : "reflect: string index out of range");
            if (item.kind == WH_TMPL_STRING)
                item = wh_tmpl_uint_typed((unsigned char)item.u.s[x], &type_uint8);
            else
                item = wh_tmpl_list_at(&item, (size_t)x);
            break;
        }
        case WH_TMPL_MAP:
            if (idx.kind == WH_TMPL_INVALID)
                return wh_tmpl_errorf(ctx, "value is nil; should be of type string");
            if (!tm_same_type(&idx, &wh_tmpl_type_string, WH_TMPL_STRING))
                return wh_tmpl_errorf(ctx, "value has type %s; should be string", tm_type_name(&idx));
            if (wh_tmpl_map_get(&item, idx.u.s, idx.len, &item) != WH_OK)
                item = tm_zero(tm_elem_type(&item));
            break;
        default:
            return wh_tmpl_errorf(ctx, "can't index item of type %s", tm_type_name(&item));
        }
    }
    *out = item;
    return WH_OK;
}

static wh_code fn_slice(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value item = ind(&a[0]);
    long cap, idx[3], x = 0;
    size_t k, ni = n - 1;
    wh_code rc;

    if (item.kind == WH_TMPL_INVALID)
        return wh_tmpl_errorf(ctx, "slice of untyped nil");
    if (ni > 3)
        return wh_tmpl_errorf(ctx, "too many slice indexes: %zu", ni);
    switch (item.kind) {
    case WH_TMPL_STRING:
        if (ni == 3)
            return wh_tmpl_errorf(ctx, "cannot 3-index slice a string");
        cap = item.len;
        break;
    case WH_TMPL_LIST:
        cap = wh_tmpl_len(&item);
        break;
    default:
        return wh_tmpl_errorf(ctx, "can't slice item of type %s", tm_type_name(&item));
    }
    idx[0] = 0;
    idx[1] = wh_tmpl_len(&item);
    idx[2] = cap;
    for (k = 0; k < ni; k++) {
        if ((rc = index_arg(ctx, &a[k + 1], cap, &x)) != WH_OK)
            return rc;
        idx[k] = x;
    }
    if (idx[0] > idx[1])
        return wh_tmpl_errorf(ctx, "invalid slice index: %ld > %ld", idx[0], idx[1]);
    if (ni == 3 && idx[1] > idx[2])
        return wh_tmpl_errorf(ctx, "invalid slice index: %ld > %ld", idx[1], idx[2]);
    if (item.kind == WH_TMPL_STRING) {
        *out = item;
        out->u.s = item.u.s + idx[0];
        out->len = (uint32_t)(idx[1] - idx[0]);
        return WH_OK;
    }
    {
        wh_tmpl_value l = wh_tmpl_list_new(ctx, (size_t)(idx[1] - idx[0]), item.type);
        long i;
        for (i = idx[0]; i < idx[1]; i++)
            wh_tmpl_list_push(ctx, &l, wh_tmpl_list_at(&item, (size_t)i));
        *out = l;
    }
    return WH_OK;
}

static wh_code fn_print(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = tm_sprint(ctx, b, a, n, 0);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

static wh_code fn_println(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = tm_sprint(ctx, b, a, n, 1);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

static wh_code fn_printf(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = tm_sprintf(ctx, b, a[0].u.s, a[0].len, a + 1, n - 1);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

/* What ne, lt, le, gt and ge return: the comparison's error, else its result. */
static wh_code ret_comparison(wh_code rc, int t, wh_tmpl_value *out)
{
    if (rc != WH_OK)
        return rc;
    *out = wh_tmpl_bool(t);
    return WH_OK;
}

static wh_code fn_eq(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value x = ind(&a[0]);
    size_t i;
    wh_code rc;

    if (n < 2)
        return wh_tmpl_errorf(ctx, "missing argument for comparison");
    for (i = 1; i < n; i++) {
        wh_tmpl_value y = ind(&a[i]);
        int t = tm_eq(ctx, &x, &y, &rc);
        if (rc != WH_OK)
            return rc;
        if (t) {
            *out = wh_tmpl_bool(1);
            return WH_OK;
        }
    }
    *out = wh_tmpl_bool(0);
    return WH_OK;
}

static wh_code fn_ne(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value x = ind(&a[0]), y = ind(&a[1]);
    wh_code rc;
    int t = tm_eq(ctx, &x, &y, &rc);

    return ret_comparison(rc, !t, out);
}

/* Go's lt: *rc on error */
static int less(wh_tmpl_ctx *ctx, const wh_tmpl_value *pa, const wh_tmpl_value *pb, wh_code *rc)
{
    wh_tmpl_value a = ind(pa), b = ind(pb);
    int ka = a.kind, kb = b.kind;

    *rc = WH_OK;
    if (ka != WH_TMPL_BOOL && ka != WH_TMPL_INT && ka != WH_TMPL_UINT && ka != WH_TMPL_FLOAT && ka != WH_TMPL_STRING) {
        *rc = wh_tmpl_errorf(ctx, "invalid type for comparison");
        return 0;
    }
    if (kb != WH_TMPL_BOOL && kb != WH_TMPL_INT && kb != WH_TMPL_UINT && kb != WH_TMPL_FLOAT && kb != WH_TMPL_STRING) {
        *rc = wh_tmpl_errorf(ctx, "invalid type for comparison");
        return 0;
    }
    if (ka != kb) {
        if (ka == WH_TMPL_INT && kb == WH_TMPL_UINT)
            return a.u.i < 0 || (uint64_t)a.u.i < b.u.u;
        if (ka == WH_TMPL_UINT && kb == WH_TMPL_INT)
            return b.u.i >= 0 && a.u.u < (uint64_t)b.u.i;
        *rc = wh_tmpl_errorf(ctx, "incompatible types for comparison");
        return 0;
    }
    switch (ka) {
    case WH_TMPL_BOOL:
        *rc = wh_tmpl_errorf(ctx, "invalid type for comparison");
        return 0;
    case WH_TMPL_FLOAT:
        return a.u.f < b.u.f;
    case WH_TMPL_INT:
        return a.u.i < b.u.i;
    case WH_TMPL_UINT:
        return a.u.u < b.u.u;
    default:
        return tm_strcmp(a.u.s, a.len, b.u.s, b.len) < 0;
    }
}

static wh_code fn_lt(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_code rc;
    int t = less(ctx, &a[0], &a[1], &rc);
    return ret_comparison(rc, t, out);
}

static int less_eq(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, const wh_tmpl_value *b, wh_code *rc)
{
    int t = less(ctx, a, b, rc);
    wh_tmpl_value x, y;

    if (t || *rc != WH_OK)
        return t;
    x = ind(a);
    y = ind(b);
    return tm_eq(ctx, &x, &y, rc);
}

static wh_code fn_le(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_code rc;
    int t = less_eq(ctx, &a[0], &a[1], &rc);
    return ret_comparison(rc, t, out);
}

static wh_code fn_gt(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_code rc;
    int t = less_eq(ctx, &a[0], &a[1], &rc);
    return ret_comparison(rc, !t, out);
}

static wh_code fn_ge(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_code rc;
    int t = less(ctx, &a[0], &a[1], &rc);
    return ret_comparison(rc, !t, out);
}

/* text/template's evalArgs: one string as is, else fmt.Sprint with nil as "<no value>" */
static wh_code eval_args(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_buf *b)
{
    size_t i;
    int prev_string = 0;
    wh_code rc = WH_OK;

    if (n == 1 && a[0].kind == WH_TMPL_STRING && a[0].type == NULL) {
        wh_buf_append(b, a[0].u.s, a[0].len);
        return WH_OK;
    }
    for (i = 0; i < n; i++) {
        int is_string = a[i].kind == WH_TMPL_STRING || a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID;
        if (i > 0 && !is_string && !prev_string)
            wh_buf_putc(b, ' ');
        if (a[i].kind == WH_TMPL_NIL || a[i].kind == WH_TMPL_INVALID)
            wh_buf_puts(b, "<no value>");
        else
            rc = tm_print_value(ctx, &a[i], b, 1);
        if (rc != WH_OK)
            return rc;
        prev_string = is_string;
    }
    return WH_OK;
}

static wh_code fn_html(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf in = WH_BUF_INIT, *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = eval_args(ctx, a, n, &in);
    size_t i;

    for (i = 0; rc == WH_OK && i < in.len; i++) {
        char c = in.data[i];
        switch (c) {
        case 0:
            wh_buf_puts(b, "\xef\xbf\xbd");
            break;
        case '"':
            wh_buf_puts(b, "&#34;");
            break;
        case '\'':
            wh_buf_puts(b, "&#39;");
            break;
        case '&':
            wh_buf_puts(b, "&amp;");
            break;
        case '<':
            wh_buf_puts(b, "&lt;");
            break;
        case '>':
            wh_buf_puts(b, "&gt;");
            break;
        default:
            wh_buf_putc(b, c);
        }
    }
    wh_buf_free(&in);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

static wh_code fn_js(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    static const char hex[] = "0123456789ABCDEF";
    wh_buf in = WH_BUF_INIT, *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = eval_args(ctx, a, n, &in);
    size_t i = 0;

    while (rc == WH_OK && i < in.len) {
        unsigned char c = (unsigned char)in.data[i];
        if (c >= 0x80) {
            unsigned r;
            size_t w = tm_utf8_decode(in.data + i, in.len - i, &r);
            if (w == 0) {
                w = 1;
                r = 0xfffd;
            }
            if (wh_go_is_print(r) && r != 0xfffd)
                wh_buf_append(b, in.data + i, w);
            else if (r == 0xfffd && w == 3)
                wh_buf_append(b, in.data + i, w);
            else
                wh_buf_printf(b, "\\u%04X", r);
            i += w;
            continue;
        }
        switch (c) {
        case '\\':
            wh_buf_puts(b, "\\\\");
            break;
        case '\'':
            wh_buf_puts(b, "\\'");
            break;
        case '"':
            wh_buf_puts(b, "\\\"");
            break;
        case '<':
            wh_buf_puts(b, "\\u003C");
            break;
        case '>':
            wh_buf_puts(b, "\\u003E");
            break;
        case '&':
            wh_buf_puts(b, "\\u0026");
            break;
        case '=':
            wh_buf_puts(b, "\\u003D");
            break;
        default:
            if (c < ' ') {
                wh_buf_puts(b, "\\u00");
                wh_buf_putc(b, hex[c >> 4]);
                wh_buf_putc(b, hex[c & 15]);
            } else {
                wh_buf_putc(b, (char)c);
            }
        }
        i++;
    }
    wh_buf_free(&in);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

/* Go's url.QueryEscape. */
static void tm_query_escape(wh_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~') {
            wh_buf_putc(b, (char)c);
        } else if (c == ' ') {
            wh_buf_putc(b, '+');
        } else {
            wh_buf_putc(b, '%');
            wh_buf_putc(b, hex[c >> 4]);
            wh_buf_putc(b, hex[c & 15]);
        }
    }
}

static wh_code fn_urlquery(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf in = WH_BUF_INIT, *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = eval_args(ctx, a, n, &in);

    if (rc == WH_OK)
        tm_query_escape(b, in.data ? in.data : "", in.len);
    wh_buf_free(&in);
    return rc != WH_OK ? rc : tm_ret_buf(ctx, out, b);
}

static wh_code fn_call(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value f = ind(&a[0]);

    if (f.kind == WH_TMPL_INVALID)
        return wh_tmpl_errorf(ctx, "call of nil");
    return wh_tmpl_errorf(ctx, "non-function of type %s", tm_type_name(&f));
}

const wh_tmpl_func tm_builtin_funcs[] = {
    {"and", fn_andor, "rr*", WH_TMPL_FN_PURE},
    {"call", fn_call, "rr*", 0},
    {"eq", fn_eq, "rr*", WH_TMPL_FN_PURE},
    {"ge", fn_ge, "rr", WH_TMPL_FN_PURE},
    {"gt", fn_gt, "rr", WH_TMPL_FN_PURE},
    {"html", fn_html, "v*", WH_TMPL_FN_PURE},
    {"index", fn_index, "rr*", WH_TMPL_FN_PURE},
    {"js", fn_js, "v*", WH_TMPL_FN_PURE},
    {"le", fn_le, "rr", WH_TMPL_FN_PURE},
    {"len", fn_len, "r", WH_TMPL_FN_PURE},
    {"lt", fn_lt, "rr", WH_TMPL_FN_PURE},
    {"ne", fn_ne, "rr", WH_TMPL_FN_PURE},
    {"not", fn_not, "r", WH_TMPL_FN_PURE},
    {"or", fn_andor, "rr*", WH_TMPL_FN_PURE},
    {"print", fn_print, "v*", WH_TMPL_FN_PURE},
    {"printf", fn_printf, "sv*", WH_TMPL_FN_PURE},
    {"println", fn_println, "v*", WH_TMPL_FN_PURE},
    {"slice", fn_slice, "rr*", WH_TMPL_FN_PURE},
    {"urlquery", fn_urlquery, "v*", WH_TMPL_FN_PURE},
};
const size_t tm_builtin_nfuncs = sizeof(tm_builtin_funcs) / sizeof(tm_builtin_funcs[0]);
