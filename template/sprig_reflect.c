/*
 * sprig_reflect.c - Sprig's reflect.go: typeOf, kindOf, typeIs, kindIs, and
 * deepEqual (Go's reflect.DeepEqual), which the list and dict functions share.
 */
#define _GNU_SOURCE
#include <string.h>

#include "sprig_int.h"

FN(fn_typeof)
{
    *out = wh_tmpl_str(sprig_is_nil(&a[0]) ? "<nil>" : tm_type_name(&a[0]));
    return WH_OK;
}

FN(fn_typeis)
{
    const char *t = sprig_is_nil(&a[1]) ? "<nil>" : tm_type_name(&a[1]);
    return sprig_ret_bool(out, strlen(t) == a[0].len && memcmp(t, a[0].u.s, a[0].len) == 0);
}

FN(fn_typeislike)
{
    const char *t = sprig_is_nil(&a[1]) ? "<nil>" : tm_type_name(&a[1]);
    size_t tl = strlen(t);
    return sprig_ret_bool(out, (tl == a[0].len && memcmp(t, a[0].u.s, a[0].len) == 0) ||
                                   (tl == a[0].len + 1 && t[0] == '*' && memcmp(t + 1, a[0].u.s, a[0].len) == 0));
}

FN(fn_kindof)
{
    *out = wh_tmpl_str(sprig_kind_name(&a[0]));
    return WH_OK;
}

FN(fn_kindis)
{
    const char *k = sprig_kind_name(&a[1]);
    return sprig_ret_bool(out, strlen(k) == a[0].len && memcmp(k, a[0].u.s, a[0].len) == 0);
}

/* reflect.DeepEqual over template values */
int sprig_deep_equal(wh_tmpl_ctx *ctx, const wh_tmpl_value *x, const wh_tmpl_value *y)
{
    long i, n;

    if (sprig_is_nil(x) || sprig_is_nil(y))
        return sprig_is_nil(x) && sprig_is_nil(y);
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
            if (!sprig_deep_equal(ctx, &p, &q))
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
                !sprig_deep_equal(ctx, &e1[k].val, &e2[k].val))
                return 0;
        return 1;
    }
    default:
        return x->u.host == y->u.host;
    }
}

FN(fn_deepequal)
{
    return sprig_ret_bool(out, sprig_deep_equal(ctx, &a[0], &a[1]));
}

const wh_tmpl_func tm_sprig_reflect_funcs[] = {
    {"deepEqual", fn_deepequal, "vv", WH_TMPL_FN_PURE},   {"kindIs", fn_kindis, "sv", WH_TMPL_FN_PURE},
    {"kindOf", fn_kindof, "v", WH_TMPL_FN_PURE},          {"typeIs", fn_typeis, "sv", WH_TMPL_FN_PURE},
    {"typeIsLike", fn_typeislike, "sv", WH_TMPL_FN_PURE}, {"typeOf", fn_typeof, "v", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_reflect_nfuncs = sizeof(tm_sprig_reflect_funcs) / sizeof(tm_sprig_reflect_funcs[0]);
