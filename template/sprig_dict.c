/*
 * sprig_dict.c - Sprig's dict.go: dict, get/set/unset, hasKey, pluck, keys,
 * values, pick/omit, dig, merge/mergeOverwrite, deepCopy.
 */
#define _GNU_SOURCE
#include <string.h>

#include "sprig_int.h"

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
    for (i = 0; i < n; i += 2) {
        const char *k;
        size_t kl;
        if ((rc = sprig_strval(ctx, &a[i], &k, &kl)) != WH_OK)
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
    return sprig_ret_bool(out, wh_tmpl_map_get(&a[0], a[1].u.s, a[1].len, &v) == WH_OK);
}

FN(fn_pluck)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_list_new(ctx, n, NULL);
    for (i = 1; i < n; i++) {
        wh_tmpl_value v;
        if (wh_tmpl_map_get(&a[i], a[0].u.s, a[0].len, &v) == WH_OK && (rc = wh_tmpl_list_push(ctx, out, v)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

/* The keys (or values) of a map, in its sorted key order, appended to the list *out. */
static wh_code append_entries(wh_tmpl_ctx *ctx, const wh_tmpl_value *map, int keys, wh_tmpl_value *out)
{
    size_t k, cnt;
    wh_tmpl_kv *ents;
    wh_code rc;

    if ((rc = wh_tmpl_map_entries(ctx, map, &ents, &cnt)) != WH_OK)
        return rc;
    for (k = 0; k < cnt; k++)
        if ((rc = wh_tmpl_list_push(ctx, out, keys ? wh_tmpl_strn(ents[k].key, ents[k].key_len) : ents[k].val)) !=
            WH_OK)
            return rc;
    return WH_OK;
}

/* keys of every argument, one after the other (Sprig's keys takes several dicts) */
FN(fn_keys)
{
    wh_code rc = WH_OK;

    *out = wh_tmpl_list_new(ctx, 8, &wh_tmpl_type_string_slice);
    for (size_t i = 0; i < n && rc == WH_OK; i++)
        rc = append_entries(ctx, &a[i], 1, out);
    return rc;
}

FN(fn_values)
{
    *out = wh_tmpl_list_new(ctx, 8, NULL);
    return append_entries(ctx, &a[0], 0, out);
}

FN(fn_pick)
{
    size_t i;
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, NULL);
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
        if (!overwrite && sprig_is_nil(sv))
            continue;
        if (have && cur.kind == WH_TMPL_MAP && sv->kind == WH_TMPL_MAP && cur.type == NULL && sv->type == NULL) {
            wh_tmpl_value w;
            if ((rc = writable_map(ctx, &cur, &w)) != WH_OK || (rc = merge_into(ctx, &w, sv, overwrite, depth + 1)) ||
                (rc = wh_tmpl_map_set(ctx, dst, ents[k].key, ents[k].key_len, w)) != WH_OK)
                return rc;
            continue;
        }
        if (!have || sprig_empty(&cur) || (overwrite && !sprig_empty(sv))) {
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
    if (sprig_is_nil(&a[0]))
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
                              sprig_is_nil(&cur) ? "nil" : tm_type_name(&cur));
    for (i = 0; i < n - 2; i++) {
        if (a[i].kind != WH_TMPL_STRING)
            return wh_tmpl_errorf(ctx, "interface conversion: interface {} is %s, not string",
                                  sprig_is_nil(&a[i]) ? "nil" : tm_type_name(&a[i]));
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
                                  sprig_is_nil(&next) ? "nil" : tm_type_name(&next));
        cur = next;
    }
    return WH_OK;
}

const wh_tmpl_func tm_sprig_dict_funcs[] = {
    {"deepCopy", fn_deepcopy, "v", WH_TMPL_FN_PURE},
    {"dict", fn_dict, "v*", WH_TMPL_FN_PURE},
    {"dig", fn_dig, "v*", WH_TMPL_FN_PURE},
    {"get", fn_get, "ms", WH_TMPL_FN_PURE},
    {"hasKey", fn_haskey, "ms", WH_TMPL_FN_PURE},
    {"keys", fn_keys, "m*", WH_TMPL_FN_PURE},
    {"merge", fn_merge, "mm*", 0},
    {"mergeOverwrite", fn_mergeoverwrite, "mm*", 0},
    {"mustDeepCopy", fn_deepcopy, "v", WH_TMPL_FN_PURE},
    {"mustMerge", fn_merge, "mm*", 0},
    {"mustMergeOverwrite", fn_mergeoverwrite, "mm*", 0},
    {"omit", fn_omit, "ms*", WH_TMPL_FN_PURE},
    {"pick", fn_pick, "ms*", WH_TMPL_FN_PURE},
    {"pluck", fn_pluck, "sm*", WH_TMPL_FN_PURE},
    {"set", fn_set, "msv", 0},
    {"unset", fn_unset, "ms", 0},
    {"values", fn_values, "m", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_dict_nfuncs = sizeof(tm_sprig_dict_funcs) / sizeof(tm_sprig_dict_funcs[0]);
