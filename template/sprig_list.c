/*
 * sprig_list.c - Sprig's list.go: list, append/prepend, first/rest/last/initial,
 * reverse, uniq, without, has, compact, slice, chunk, concat (see sprig.c).
 */
#define _GNU_SOURCE

#include "sprig_int.h"

FN(fn_list)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, n, NULL);
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
    if (sprig_is_nil(v))
        return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
    return wh_tmpl_errorf(ctx, "Cannot %s type %s", what, sprig_kind_name(v));
}

static wh_code copy_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, size_t extra, wh_tmpl_value *out)
{
    long i, len = wh_tmpl_len(v);
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, (size_t)len + extra, NULL);
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
        if (!sprig_empty(&e) && (rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

static int in_list(wh_tmpl_ctx *ctx, const wh_tmpl_value *l, const wh_tmpl_value *needle)
{
    long i, len = wh_tmpl_len(l);
    for (i = 0; i < len; i++) {
        wh_tmpl_value e = wh_tmpl_list_at(l, (size_t)i);
        if (sprig_deep_equal(ctx, &e, needle))
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
            drop = sprig_deep_equal(ctx, &e, &a[k]);
        if (!drop && (rc = wh_tmpl_list_push(ctx, out, e)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_has)
{
    if (sprig_is_nil(&a[1]))
        return sprig_ret_bool(out, 0);
    if (a[1].kind != WH_TMPL_LIST)
        return wh_tmpl_errorf(ctx, "Cannot find has on type %s", sprig_kind_name(&a[1]));
    return sprig_ret_bool(out, in_list(ctx, &a[1], &a[0]));
}

FN(fn_sprig_slice)
{
    long len, from = 0, to, i;
    wh_code rc;

    if (a[0].kind != WH_TMPL_LIST) {
        if (sprig_is_nil(&a[0]))
            return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
        return wh_tmpl_errorf(ctx, "list should be type of slice or array but %s", sprig_kind_name(&a[0]));
    }
    len = wh_tmpl_len(&a[0]);
    if (len == 0) {
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    to = len;
    if (n > 1)
        from = (long)sprig_to_int64(&a[1]);
    if (n > 2)
        to = (long)sprig_to_int64(&a[2]);
    if (from < 0 || to < from || to > len)
        return wh_tmpl_errorf(ctx, "reflect: slice index out of range");
    *out = wh_tmpl_list_new(ctx, (size_t)(to - from), a[0].type);
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
            if (sprig_is_nil(&a[k]))
                return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
            return wh_tmpl_errorf(ctx, "Cannot concat type %s as list", sprig_kind_name(&a[k]));
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

const wh_tmpl_func tm_sprig_list_funcs[] = {
    {"append", fn_append, "vv", WH_TMPL_FN_PURE},
    {"chunk", fn_chunk, "iv", WH_TMPL_FN_PURE},
    /* chunk panics where mustChunk fails: Go reports both the same way */
    {"mustChunk", fn_chunk, "iv", WH_TMPL_FN_PURE},
    {"compact", fn_compact, "v", WH_TMPL_FN_PURE},
    {"concat", fn_concat, "v*", WH_TMPL_FN_PURE},
    {"first", fn_first, "v", WH_TMPL_FN_PURE},
    {"has", fn_has, "vv", WH_TMPL_FN_PURE},
    {"initial", fn_initial, "v", WH_TMPL_FN_PURE},
    {"last", fn_last, "v", WH_TMPL_FN_PURE},
    {"list", fn_list, "v*", WH_TMPL_FN_PURE},
    {"mustAppend", fn_append, "vv", WH_TMPL_FN_PURE},
    {"mustCompact", fn_compact, "v", WH_TMPL_FN_PURE},
    {"mustFirst", fn_first, "v", WH_TMPL_FN_PURE},
    {"mustHas", fn_has, "vv", WH_TMPL_FN_PURE},
    {"mustInitial", fn_initial, "v", WH_TMPL_FN_PURE},
    {"mustLast", fn_last, "v", WH_TMPL_FN_PURE},
    {"mustPrepend", fn_prepend, "vv", WH_TMPL_FN_PURE},
    {"mustPush", fn_append, "vv", WH_TMPL_FN_PURE},
    {"mustRest", fn_rest, "v", WH_TMPL_FN_PURE},
    {"mustReverse", fn_reverse, "v", WH_TMPL_FN_PURE},
    {"mustSlice", fn_sprig_slice, "vv*", WH_TMPL_FN_PURE},
    {"mustUniq", fn_uniq, "v", WH_TMPL_FN_PURE},
    {"mustWithout", fn_without, "vv*", WH_TMPL_FN_PURE},
    {"prepend", fn_prepend, "vv", WH_TMPL_FN_PURE},
    {"push", fn_append, "vv", WH_TMPL_FN_PURE},
    {"rest", fn_rest, "v", WH_TMPL_FN_PURE},
    {"reverse", fn_reverse, "v", WH_TMPL_FN_PURE},
    {"slice", fn_sprig_slice, "vv*", WH_TMPL_FN_PURE},
    {"tuple", fn_list, "v*", WH_TMPL_FN_PURE},
    {"uniq", fn_uniq, "v", WH_TMPL_FN_PURE},
    {"without", fn_without, "vv*", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_list_nfuncs = sizeof(tm_sprig_list_funcs) / sizeof(tm_sprig_list_funcs[0]);
