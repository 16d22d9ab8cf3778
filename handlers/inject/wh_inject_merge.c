/*
 * wh_inject_merge.c - strategic merge patch and Go round trip (see wh_inject_merge.h).
 *
 * Follows k8s.io/apimachinery's strategicpatch with the options istiod uses
 * (IgnoreUnmatchedNulls, MergeParallelList): nulls delete, `$patch:
 * replace|delete` on maps and list items, `$retainKeys`,
 * `$deleteFromPrimitiveList/<field>`, and the merged-list ordering of
 * normalizeElementOrder/mergeSortedSlice.
 */
#include "wh_inject_merge.h"
#include "wh_alloc.h"
#include "wh_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETE_PRIMITIVE "$deleteFromPrimitiveList/"
#define SET_ORDER "$setElementOrder/"

/* `owned` (below): the patch value and every container above it up to the
 * patch root are held only by their parent, and the caller gave the patch
 * up (wh_inject_smp_move): such values may be moved into the target. */
static wh_code merge_map(json_t *orig, const json_t *patch, const wh_inject_type *t, int owned, wh_err *err);
static wh_code merge_list(const json_t *orig, const json_t *patch, const wh_inject_field *f, int owned, json_t **out,
                          wh_err *err);

/* The hot loops below walk objects with jansson's iterator directly:
 * json_object_foreach and its keylen variant convert between keys and
 * iterators twice more per key. */
json_t *wh_inject_json_copy(const json_t *value)
{
    size_t i, n;
    json_t *out;
    void *it;

    switch (json_typeof(value)) {
    case JSON_OBJECT:
        out = json_object();
        for (it = json_object_iter((json_t *)value); it != NULL; it = json_object_iter_next((json_t *)value, it))
            if (json_object_setn_new_nocheck(out, json_object_iter_key(it), json_object_iter_key_len(it),
                                             wh_inject_json_copy(json_object_iter_value(it))) != 0) {
                json_decref(out);
                return NULL;
            }
        return out;
    case JSON_ARRAY:
        out = json_array();
        for (i = 0, n = json_array_size(value); i < n; i++)
            if (json_array_append_new(out, wh_inject_json_copy(json_array_get(value, i))) != 0) {
                json_decref(out);
                return NULL;
            }
        return out;
    default:
        return json_incref((json_t *)value);
    }
}

static int same_kind(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return 1;
    if (json_is_boolean(a) && json_is_boolean(b))
        return 1;
    return json_typeof(a) == json_typeof(b);
}

static int value_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

/* Whether container `v` is held by one reference only (its parent's). */
static int sole(const json_t *v)
{
    return __atomic_load_n(&v->refcount, __ATOMIC_RELAXED) == 1;
}

static int movable(const json_t *pv, const wh_inject_field *f);

static int movable_map(const json_t *pv, const wh_inject_type *t)
{
    void *it;

    if (!sole(pv))
        return 0;
    for (it = json_object_iter((json_t *)pv); it != NULL; it = json_object_iter_next((json_t *)pv, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        if (key[0] == '$' || json_is_null(v))
            return 0;
        if ((json_is_object(v) || json_is_array(v)) && !movable(v, wh_inject_schema_field(t, key)))
            return 0;
    }
    return 1;
}

static int movable_list(const json_t *pv, const wh_inject_field *f)
{
    size_t i, j, n = json_array_size(pv);

    if (!sole(pv))
        return 0;
    for (i = 0; i < n; i++) {
        const json_t *item = json_array_get(pv, i);
        if (f != NULL && f->kind == WH_K_LIST && f->merge_key != NULL) {
            const json_t *key = json_object_get(item, f->merge_key);
            if (!json_is_object(item) || key == NULL || !movable_map(item, f->type))
                return 0;
            for (j = 0; j < i; j++) /* items with the same key merge into one */
                if (value_equal(json_object_get(json_array_get(pv, j), f->merge_key), key))
                    return 0;
        } else if (f != NULL && f->kind == WH_K_PLIST && (f->flags & WH_F_MERGE)) {
            if (json_is_object(item) || json_is_array(item))
                return 0;
            for (j = 0; j < i; j++) /* duplicates go */
                if (value_equal(json_array_get(pv, j), item))
                    return 0;
        } else if (json_is_null(item) || ((json_is_object(item) || json_is_array(item)) &&
                                          !movable(item, f != NULL && f->kind == WH_K_LIST ? f : NULL))) {
            return 0;
        }
    }
    return 1;
}

/* Whether merging `pv` into nothing (fresh_value) gives `pv` itself: no
 * directive or null to resolve at any depth, no list items that merge or
 * go, and every container held only by its parent (so that changing it in
 * the target later changes nothing else).  Then it is moved, not rebuilt:
 * most of an overlay (the sidecar containers, the volumes) is new to the pod. */
static int movable(const json_t *pv, const wh_inject_field *f)
{
    if (json_is_object(pv))
        return movable_map(pv, f != NULL ? f->type : NULL);
    if (json_is_array(pv))
        return movable_list(pv, f);
    return 1;
}

/* A fresh value for a key the target does not have: the patch value with
 * its nulls and directives resolved against nothing. */
static wh_code fresh_value(const json_t *pv, const wh_inject_field *f, int owned, json_t **out, wh_err *err)
{
    wh_code rc;

    *out = NULL;
    if (owned && movable(pv, f)) {
        *out = json_incref((json_t *)pv);
        return WH_OK;
    }
    if (json_is_object(pv)) {
        json_t *o = json_object();
        if ((rc = merge_map(o, pv, f != NULL ? f->type : NULL, owned && sole(pv), err)) != WH_OK) {
            json_decref(o);
            return rc;
        }
        *out = o;
        return WH_OK;
    }
    if (json_is_array(pv)) {
        json_t *empty = json_array();
        rc = merge_list(empty, pv, f, owned && sole(pv), out, err);
        json_decref(empty);
        return rc;
    }
    *out = json_incref((json_t *)pv); /* a scalar: shared (see wh_inject_json_copy) */
    return WH_OK;
}

static wh_code delete_from_primitive_list(json_t *orig, const char *field, const json_t *values, wh_err *err)
{
    json_t *list = json_object_get(orig, field);
    size_t i, j;

    if (!json_is_array(values))
        return wh_err_set(err, WH_E_INVALID, "%s%s must be a list", DELETE_PRIMITIVE, field);
    if (!json_is_array(list))
        return WH_OK;
    for (i = json_array_size(list); i-- > 0;)
        for (j = 0; j < json_array_size(values); j++)
            if (value_equal(json_array_get(list, i), json_array_get(values, j))) {
                json_array_remove(list, i);
                break;
            }
    return WH_OK;
}

static wh_code merge_map(json_t *orig, const json_t *patch, const wh_inject_type *t, int owned, wh_err *err)
{
    const json_t *directive = json_object_getn(patch, "$patch", 6),
                 *retain = json_object_getn(patch, "$retainKeys", 11);
    const char *key;
    size_t key_len;
    json_t *pv;
    void *it;
    wh_code rc;
    int empty;

    if (directive != NULL) {
        const char *d = json_string_value(directive);
        if (d != NULL && strcmp(d, "delete") == 0) {
            json_object_clear(orig);
            return WH_OK;
        }
        if (d != NULL && strcmp(d, "replace") == 0) {
            json_object_clear(orig);
        } else if (d == NULL || strcmp(d, "merge") != 0) {
            return wh_err_set(err, WH_E_INVALID, "unknown patch type: %s", d != NULL ? d : "(not a string)");
        }
    }
    if (retain != NULL) {
        void *tmp;
        size_t i;
        if (!json_is_array(retain))
            return wh_err_set(err, WH_E_INVALID, "$retainKeys must be a list of strings");
        json_object_foreach_safe(orig, tmp, key, pv)
        {
            int keep = 0;
            for (i = 0; i < json_array_size(retain); i++)
                if (json_is_string(json_array_get(retain, i)) &&
                    strcmp(json_string_value(json_array_get(retain, i)), key) == 0)
                    keep = 1;
            if (!keep)
                json_object_del(orig, key);
        }
    }
    /* A patch's keys are distinct: a target that starts empty (a new value)
     * holds none of them, so lookups and deletes in it can be skipped. */
    empty = json_object_size(orig) == 0;
    for (it = json_object_iter((json_t *)patch); it != NULL; it = json_object_iter_next((json_t *)patch, it)) {
        const wh_inject_field *f;
        json_t *ov, *nv = NULL;

        key = json_object_iter_key(it);
        key_len = json_object_iter_key_len(it);
        pv = json_object_iter_value(it);

        if (key[0] == '$' && (strcmp(key, "$patch") == 0 || strcmp(key, "$retainKeys") == 0 ||
                              strncmp(key, SET_ORDER, strlen(SET_ORDER)) == 0))
            continue;
        if (key[0] == '$' && strncmp(key, DELETE_PRIMITIVE, strlen(DELETE_PRIMITIVE)) == 0) {
            if ((rc = delete_from_primitive_list(orig, key + strlen(DELETE_PRIMITIVE), pv, err)) != WH_OK)
                return rc;
            continue;
        }
        if (json_is_null(pv)) {
            if (!empty)
                json_object_deln(orig, key, key_len);
            continue;
        }
        f = wh_inject_schema_field(t, key);
        ov = empty ? NULL : json_object_getn(orig, key, key_len);
        if (ov == NULL || !same_kind(ov, pv)) {
            if ((rc = fresh_value(pv, f, owned, &nv, err)) != WH_OK)
                return rc;
        } else if (json_is_object(ov)) {
            if ((rc = merge_map(ov, pv, f != NULL ? f->type : NULL, owned && sole(pv), err)) != WH_OK) {
                wh_err_prefix(err, "%s", key);
                return rc;
            }
            continue;
        } else if (json_is_array(ov)) {
            if ((rc = merge_list(ov, pv, f, owned && sole(pv), &nv, err)) != WH_OK)
                return rc;
        } else {
            nv = json_incref(pv); /* a scalar: shared (see wh_inject_json_copy) */
        }
        if (json_object_setn_new_nocheck(orig, key, key_len, nv) != 0)
            return wh_err_set(err, WH_E_NOMEM, "out of memory");
    }
    return WH_OK;
}

typedef struct merge_item {
    json_t *value;     /* owned reference; shared with the original list until `own` */
    const json_t *key; /* its merge key's value (borrowed from value), looked up once */
    int own;           /* 1 once value is a private copy that may be modified */
    long orig_idx;     /* position in the (post-delete) original list, -1 when new */
    long patch_idx;    /* position among the patch's items, -1 when server-only */
} merge_item;

static int cmp_patch(const void *a, const void *b)
{
    const merge_item *x = a, *y = b;
    return x->patch_idx < y->patch_idx ? -1 : x->patch_idx > y->patch_idx;
}

static wh_code merge_keyed(const json_t *orig_list, const json_t *patch, const wh_inject_field *f, int owned,
                           json_t **out, wh_err *err)
{
    const char *mk = f->merge_key;
    size_t n = json_array_size(orig_list), np = json_array_size(patch), i, j, k, nitems = 0, npatch = 0, nserver = 0;
    merge_item *items = NULL, *pitems = NULL, *sitems = NULL;
    json_t *result = NULL;
    wh_code rc = WH_OK;

    *out = NULL;
    /* `$patch: replace` anywhere in the list: the list becomes the patch's other items. */
    for (i = 0; i < np; i++) {
        const json_t *d = json_object_get(json_array_get(patch, i), "$patch");
        if (json_is_string(d) && strcmp(json_string_value(d), "replace") == 0) {
            json_t *empty = json_array(), *rest = json_array();
            for (j = 0; j < np; j++)
                if (j != i)
                    json_array_append(rest, json_array_get(patch, j));
            rc = merge_keyed(empty, rest, f, owned, out, err);
            json_decref(empty);
            json_decref(rest);
            return rc;
        }
    }
    items = wh_calloc(n + np + 1, sizeof(*items));
    for (i = 0; i < n; i++) {
        /* shared until a patch item merges into it (copy on write) */
        items[nitems].value = json_incref(json_array_get(orig_list, i));
        items[nitems].key = json_object_get(items[nitems].value, mk);
        items[nitems].orig_idx = (long)nitems;
        items[nitems].patch_idx = -1;
        nitems++;
    }
    for (i = 0; i < np; i++) {
        const json_t *pi = json_array_get(patch, i), *pkey, *d;
        if (!json_is_object(pi)) {
            rc = wh_err_set(err, WH_E_INVALID, "%s: list items must be objects with the merge key %s", f->name, mk);
            goto out;
        }
        pkey = json_object_get(pi, mk);
        d = json_object_get(pi, "$patch");
        if (pkey == NULL) {
            rc = wh_err_set(err, WH_E_INVALID, "%s: map does not contain declared merge key: %s", f->name, mk);
            goto out;
        }
        if (d != NULL) {
            const char *ds = json_string_value(d);
            if (ds != NULL && strcmp(ds, "delete") == 0) {
                for (j = nitems; j-- > 0;)
                    if (value_equal(items[j].key, pkey)) {
                        json_decref(items[j].value);
                        memmove(&items[j], &items[j + 1], (nitems - j - 1) * sizeof(*items));
                        nitems--;
                    }
                continue;
            }
            if (ds == NULL || strcmp(ds, "merge") != 0) {
                rc = wh_err_set(err, WH_E_INVALID, "%s: unknown patch type in list: %s", f->name,
                                ds != NULL ? ds : "(not a string)");
                goto out;
            }
        }
        for (j = 0; j < nitems; j++)
            if (value_equal(items[j].key, pkey))
                break;
        if (j == nitems) {
            int move = owned && movable_map(pi, f->type); /* the item as it stands: moved, not merged into {} */
            json_t *o = move ? json_incref((json_t *)pi) : json_object();
            if (o == NULL) {
                rc = wh_err_set(err, WH_E_NOMEM, "out of memory");
                goto out;
            }
            items[nitems].value = o;
            items[nitems].own = 1;
            items[nitems].orig_idx = -1;
            items[nitems].patch_idx = (long)i;
            nitems++;
            if (move) {
                items[j].key = pkey;
                continue;
            }
        } else if (items[j].patch_idx < 0) {
            items[j].patch_idx = (long)i;
        }
        if (!items[j].own) {
            json_t *copy = wh_inject_json_copy(items[j].value);
            if (copy == NULL) {
                rc = wh_err_set(err, WH_E_NOMEM, "out of memory");
                goto out;
            }
            json_decref(items[j].value);
            items[j].value = copy;
            items[j].own = 1;
        }
        if ((rc = merge_map(items[j].value, pi, f->type, owned && sole(pi), err)) != WH_OK) {
            wh_err_prefix(err, "%s[%s=%s]", f->name, mk, json_is_string(pkey) ? json_string_value(pkey) : "?");
            goto out;
        }
        items[j].key = json_object_get(items[j].value, mk); /* the merge may have changed or dropped it */
    }
    /* Kubernetes' order: patch items sorted by patch position, server-only
     * items by original position, merged so that a server-only item goes
     * first only when both were in the original and it came first there. */
    pitems = wh_calloc(nitems + 1, sizeof(*pitems));
    sitems = wh_calloc(nitems + 1, sizeof(*sitems));
    for (i = 0; i < nitems; i++) {
        if (items[i].patch_idx >= 0)
            pitems[npatch++] = items[i];
        else
            sitems[nserver++] = items[i];
    }
    qsort(pitems, npatch, sizeof(*pitems), cmp_patch); /* ties impossible: one item per patch index */
    result = json_array();
    for (i = 0, j = 0, k = 0; k < npatch + nserver; k++) {
        const merge_item *take;
        if (i >= nserver)
            take = &pitems[j++];
        else if (j >= npatch)
            take = &sitems[i++];
        else if (sitems[i].orig_idx >= 0 && pitems[j].orig_idx >= 0 && sitems[i].orig_idx < pitems[j].orig_idx)
            take = &sitems[i++];
        else
            take = &pitems[j++];
        if (json_array_append(result, take->value) != 0) {
            rc = wh_err_set(err, WH_E_NOMEM, "out of memory");
            goto out;
        }
    }
    *out = result;
    result = NULL;
out:
    for (i = 0; i < nitems; i++)
        json_decref(items[i].value);
    free(items);
    free(pitems);
    free(sitems);
    json_decref(result);
    return rc;
}

static wh_code merge_list(const json_t *orig, const json_t *patch, const wh_inject_field *f, int owned, json_t **out,
                          wh_err *err)
{
    size_t i, j;
    json_t *result;

    *out = NULL;
    if (f != NULL && f->kind == WH_K_LIST && f->merge_key != NULL) {
        if (json_array_size(orig) == 0 && json_array_size(patch) == 0)
            return (*out = json_array()) != NULL ? WH_OK : wh_err_set(err, WH_E_NOMEM, "out of memory");
        return merge_keyed(orig, patch, f, owned, out, err);
    }
    result = json_array();
    if (f != NULL && f->kind == WH_K_PLIST && (f->flags & WH_F_MERGE)) {
        const json_t *lists[2] = {orig, patch};
        int l;
        for (l = 0; l < 2; l++)
            for (i = 0; i < json_array_size(lists[l]); i++) {
                const json_t *v = json_array_get(lists[l], i);
                for (j = 0; j < json_array_size(result); j++)
                    if (value_equal(json_array_get(result, j), v))
                        break;
                if (j == json_array_size(result) && json_array_append_new(result, wh_inject_json_copy(v)) != 0)
                    goto nomem;
            }
        *out = result;
        return WH_OK;
    }
    /* Atomic list: the patch's, with nulls inside its objects resolved. */
    for (i = 0; i < json_array_size(patch); i++) {
        const json_t *pi = json_array_get(patch, i);
        json_t *nv = NULL;
        wh_code rc;
        if (json_is_null(pi))
            continue;
        if ((rc = fresh_value(pi, f != NULL && f->kind == WH_K_LIST ? f : NULL, owned, &nv, err)) != WH_OK) {
            json_decref(result);
            return rc;
        }
        if (json_array_append_new(result, nv) != 0)
            goto nomem;
    }
    *out = result;
    return WH_OK;
nomem:
    json_decref(result);
    return wh_err_set(err, WH_E_NOMEM, "out of memory");
}

wh_code wh_inject_smp(json_t *target, const json_t *patch, const wh_inject_type *type, wh_err *err)
{
    if (!json_is_object(target) || !json_is_object(patch))
        return wh_err_set(err, WH_E_INVALID, "strategic merge patch needs two objects");
    return merge_map(target, patch, type, 0, err);
}

wh_code wh_inject_smp_move(json_t *target, json_t *patch, const wh_inject_type *type, wh_err *err)
{
    if (!json_is_object(target) || !json_is_object(patch))
        return wh_err_set(err, WH_E_INVALID, "strategic merge patch needs two objects");
    return merge_map(target, patch, type, sole(patch), err);
}

/* ---- Go round trip ---- */

static wh_code canonical_quantity(json_t *parent, const char *key, json_t *v, wh_err *err)
{
    char buf[96], out[96];
    const char *text;
    wh_code rc;

    if (json_is_string(v)) {
        text = json_string_value(v);
    } else if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        text = buf;
    } else if (json_is_real(v)) {
        snprintf(buf, sizeof(buf), "%.9f", json_real_value(v));
        text = buf;
    } else {
        return wh_err_set(err, WH_E_INVALID, "%s: a quantity must be a string or a number", key);
    }
    if ((rc = wh_inject_quantity_canonical(text, out, sizeof(out), err)) != WH_OK) {
        wh_err_prefix(err, "%s", key);
        return rc;
    }
    if (json_is_string(v) && strcmp(out, text) == 0)
        return WH_OK;
    if (json_object_set_new_nocheck(parent, key, json_string_nocheck(out)) != 0) /* ASCII */
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
    return WH_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_zero(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_REAL:
        return json_real_value(v) == 0.0;
    case JSON_FALSE:
        return 1;
    default:
        return 0;
    }
}

/* Fields Go prints even when the input lacked them (WH_F_FILL). */
static wh_code fill_zero_fields(json_t *value, const wh_inject_type *type)
{
    const wh_inject_field *f;

    for (f = type->fields; f->name != NULL; f++) {
        json_t *zero;
        if (!(f->flags & WH_F_FILL) || json_object_get(value, f->name) != NULL)
            continue;
        zero = f->kind == WH_K_INT    ? json_integer(0)
               : f->kind == WH_K_BOOL ? json_false()
               : f->kind == WH_K_QTY  ? json_string("0")
                                      : json_object();
        if (zero == NULL || json_object_set_new(value, f->name, zero) != 0)
            return WH_E_NOMEM;
    }
    return WH_OK;
}

wh_code wh_inject_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err)
{
    const char *key;
    json_t *v;
    void *tmp;
    wh_code rc;

    if (!json_is_object(value) || type == NULL)
        return WH_OK;
    if ((rc = fill_zero_fields(value, type)) != WH_OK)
        return wh_err_set(err, rc, "out of memory");
    json_object_foreach_safe(value, tmp, key, v)
    {
        const wh_inject_field *f = wh_inject_schema_field(type, key);
        if (json_is_null(v)) {
            json_object_del(value, key);
            continue;
        }
        if (f == NULL)
            continue;
        switch (f->kind) {
        case WH_K_STR:
        case WH_K_INT:
        case WH_K_BOOL:
            if ((f->flags & WH_F_OMIT) && is_zero(v))
                json_object_del(value, key);
            break;
        case WH_K_OBJ:
            if ((rc = wh_inject_go_roundtrip(v, f->type, err)) != WH_OK)
                return rc;
            break;
        case WH_K_LIST: {
            size_t i;
            if (!json_is_array(v) || f->type == NULL)
                break;
            for (i = json_array_size(v); i-- > 0;) {
                if (json_is_null(json_array_get(v, i)))
                    continue;
                if ((rc = wh_inject_go_roundtrip(json_array_get(v, i), f->type, err)) != WH_OK)
                    return rc;
            }
            break;
        }
        case WH_K_QTY:
            if ((rc = canonical_quantity(value, key, v, err)) != WH_OK)
                return rc;
            break;
        case WH_K_QMAP: {
            const char *qk;
            json_t *qv;
            void *qtmp;
            if (!json_is_object(v))
                break;
            json_object_foreach_safe(v, qtmp, qk, qv)
            {
                if (json_is_null(qv)) {
                    json_object_del(v, qk);
                    continue;
                }
                if ((rc = canonical_quantity(v, qk, qv, err)) != WH_OK) {
                    wh_err_prefix(err, "%s", key);
                    return rc;
                }
            }
            break;
        }
        default:
            break;
        }
    }
    return WH_OK;
}

void wh_inject_drop_unknown_fields(json_t *value, const wh_inject_type *type)
{
    const char *key;
    json_t *v;
    void *tmp;

    if (!json_is_object(value) || type == NULL)
        return;
    json_object_foreach_safe(value, tmp, key, v)
    {
        const wh_inject_field *f = wh_inject_schema_field(type, key);
        if (f == NULL) {
            if (type->closed && key[0] != '$')
                json_object_del(value, key);
        } else if (f->kind == WH_K_OBJ) {
            wh_inject_drop_unknown_fields(v, f->type);
        } else if (f->kind == WH_K_LIST && f->type != NULL && json_is_array(v)) {
            size_t i;
            for (i = 0; i < json_array_size(v); i++)
                wh_inject_drop_unknown_fields(json_array_get(v, i), f->type);
        }
    }
}

static json_t *sorted_copy(const json_t *map)
{
    const char **keys;
    const char *key;
    json_t *v, *out = json_object();
    size_t n = 0, i;

    keys = wh_malloc((json_object_size(map) + 1) * sizeof(*keys));
    json_object_foreach((json_t *)map, key, v) keys[n++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (i = 0; i < n; i++)
        if (json_object_set_new_nocheck(out, keys[i], wh_inject_json_copy(json_object_get(map, keys[i]))) != 0) {
            json_decref(out);
            out = NULL;
            break;
        }
    free(keys);
    return out;
}

json_t *wh_inject_go_ordered(const json_t *value, const wh_inject_type *type)
{
    const wh_inject_field *f;
    json_t *out;

    if (!json_is_object(value) || type == NULL)
        return wh_inject_json_copy(value);
    out = json_object();
    for (f = type->fields; f->name != NULL; f++) {
        const json_t *v = json_object_get(value, f->name);
        json_t *nv = NULL;
        if (v == NULL || json_is_null(v)) {
            if (!(f->flags & WH_F_ALWAYS))
                continue;
            nv = json_object();
        } else if ((f->flags & WH_F_OMIT) && is_zero(v)) {
            continue;
        } else if (f->kind == WH_K_OBJ) {
            nv = wh_inject_go_ordered(v, f->type);
        } else if (f->kind == WH_K_LIST && f->type != NULL && json_is_array(v)) {
            size_t i;
            if ((nv = json_array()) != NULL)
                for (i = 0; i < json_array_size(v); i++)
                    if (json_array_append_new(nv, wh_inject_go_ordered(json_array_get(v, i), f->type)) != 0) {
                        json_decref(nv);
                        nv = NULL;
                        break;
                    }
        } else if ((f->kind == WH_K_MAP || f->kind == WH_K_QMAP) && json_is_object(v)) {
            nv = sorted_copy(v);
        } else {
            nv = wh_inject_json_copy(v);
        }
        if (nv == NULL || json_object_set_new(out, f->name, nv) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* The writer below appends small pieces (a quote, a comma, a short key) by
 * the thousand: these inline helpers skip wh_buf_append's call and
 * bookkeeping when the room is already there. */
static inline wh_code put_bytes(wh_buf *out, const void *p, size_t n)
{
    if (out->cap - out->len <= n)
        wh_buf_reserve(out, n);
    memcpy(out->data + out->len, p, n);
    out->len += n;
    out->data[out->len] = '\0';
    return WH_OK;
}

static inline wh_code put_char(wh_buf *out, char c)
{
    return put_bytes(out, &c, 1);
}

/* Bytes a JSON string holds as they are (1) and those that need a look
 * (0): controls, '"' and '\\'; for Go also '<', '>', '&' and 0xe2, the
 * lead byte of U+2028 and U+2029. */
static const unsigned char plain_json[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0xff] = 1};
static const unsigned char plain_go[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x25] = 1, [0x27 ... 0x3b] = 1, [0x3d] = 1,
                                            [0x3f ... 0x5b] = 1, [0x5d ... 0xe1] = 1, [0xe3 ... 0xff] = 1};

/* `s` (UTF-8, `len` bytes) as a quoted JSON string.  `go`: escape like Go's
 * encoding/json (<, >, &, U+2028, U+2029 as \u escapes); otherwise like
 * jansson (only what JSON requires). */
static wh_code write_string(const unsigned char *p, size_t len, int go, wh_buf *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *plain = go ? plain_go : plain_json;
    wh_code rc;
    size_t i, n;

    if (out->cap - out->len <= len + 2)
        wh_buf_reserve(out, len + 2);
    out->data[out->len++] = '"';
    for (i = 0; i < len; i++) {
        char esc[8];
        const char *e = esc;
        size_t elen = 2;
        for (n = i; n < len && plain[p[n]]; n++) /* copy plain bytes in one go */
            ;
        if (n != i && (rc = put_bytes(out, p + i, n - i)) != WH_OK)
            return rc;
        if ((i = n) >= len)
            break;
        switch (p[i]) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        case 0xe2: /* go only: U+2028 / U+2029 are escaped, other characters kept */
            if (i + 2 < len && p[i + 1] == 0x80 && (p[i + 2] & 0xfe) == 0xa8) {
                e = p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
                elen = 6;
                i += 2;
            } else {
                e = (const char *)p + i;
                elen = 1;
            }
            break;
        default: /* other controls, and for go '<', '>', '&' */
            esc[0] = '\\', esc[1] = 'u', esc[2] = '0', esc[3] = '0';
            esc[4] = hex[p[i] >> 4], esc[5] = hex[p[i] & 15];
            elen = 6;
        }
        if ((rc = put_bytes(out, e, elen)) != WH_OK)
            return rc;
    }
    return put_char(out, '"');
}

/* Decimal text of `v` (what "%" JSON_INTEGER_FORMAT prints), without
 * snprintf's format parsing. */
static wh_code write_integer(json_int_t v, wh_buf *out)
{
    char num[24], *q = num + sizeof(num);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    do
        *--q = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--q = '-';
    return put_bytes(out, q, (size_t)(num + sizeof(num) - q));
}

/* Compact JSON of `v` in the value's key order (escapes: see write_string). */
static wh_code write_json(const json_t *v, int go, wh_buf *out)
{
    wh_code rc = WH_OK;
    size_t i, n;

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        char sep = '{';
        void *it;
        for (it = json_object_iter((json_t *)v); it != NULL; it = json_object_iter_next((json_t *)v, it)) {
            if ((rc = put_char(out, sep)) != WH_OK ||
                (rc = write_string((const unsigned char *)json_object_iter_key(it), json_object_iter_key_len(it), go,
                                   out)) != WH_OK ||
                (rc = put_char(out, ':')) != WH_OK || (rc = write_json(json_object_iter_value(it), go, out)) != WH_OK)
                return rc;
            sep = ',';
        }
        return sep == '{' ? put_bytes(out, "{}", 2) : put_char(out, '}');
    }
    case JSON_ARRAY:
        if ((rc = put_char(out, '[')) != WH_OK)
            return rc;
        for (i = 0, n = json_array_size(v); i < n; i++)
            if ((i != 0 && (rc = put_char(out, ',')) != WH_OK) ||
                (rc = write_json(json_array_get(v, i), go, out)) != WH_OK)
                return rc;
        return put_char(out, ']');
    case JSON_STRING:
        return write_string((const unsigned char *)json_string_value(v), json_string_length(v), go, out);
    case JSON_INTEGER:
        return write_integer(json_integer_value(v), out);
    case JSON_REAL: { /* jansson's shortest round-trip form (never json_dumps: see wh_json_arena.h) */
        char num[64];
        size_t len = json_dumpb(v, num, sizeof(num), JSON_ENCODE_ANY);
        if (len == 0 || len >= sizeof(num))
            return WH_E_NOMEM;
        return put_bytes(out, num, len);
    }
    case JSON_TRUE:
        return put_bytes(out, "true", 4);
    case JSON_FALSE:
        return put_bytes(out, "false", 5);
    default:
        return put_bytes(out, "null", 4);
    }
}

wh_code wh_inject_json_go(const json_t *value, wh_buf *out)
{
    return write_json(value, 1, out);
}

wh_code wh_inject_json_compact(const json_t *value, wh_buf *out)
{
    return write_json(value, 0, out);
}

/* Where the checker is, as a chain of frames on the stack: the text is only
 * built when something is wrong. */
typedef struct check_path {
    const struct check_path *up;
    const char *key; /* field name */
} check_path;

/* Go's encoding/json names the field by the chain of field names only
 * ("spec.containers.readinessProbe.periodSeconds"): list positions and map
 * keys are not part of it. */
static void path_text(const check_path *p, wh_buf *out)
{
    if (p == NULL)
        return;
    path_text(p->up, out);
    wh_buf_printf(out, "%s%s", out->len != 0 ? "." : "", p->key);
}

static wh_code type_error(wh_err *err, const json_t *v, const wh_inject_type *owner, const check_path *p,
                          const char *want)
{
    wh_buf text = WH_BUF_INIT;

    path_text(p, &text);
    wh_err_set(err, WH_E_INVALID, "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
               wh_json_type_name(v), owner->name, text.data != NULL ? text.data : "", want);
    wh_buf_free(&text);
    return WH_E_INVALID;
}

/* A number an integer field cannot hold: Go names it with its literal
 * ("number 2.5"), in the shortest form that reads back the same. */
static wh_code fraction_error(wh_err *err, const json_t *v, const wh_inject_type *owner, const check_path *p)
{
    wh_buf text = WH_BUF_INIT;
    char lit[40];
    double d = json_number_value(v);
    int prec;

    for (prec = 1; prec < 17; prec++) {
        snprintf(lit, sizeof(lit), "%.*g", prec, d);
        if (strtod(lit, NULL) == d)
            break;
    }
    if (prec == 17)
        snprintf(lit, sizeof(lit), "%.17g", d);
    path_text(p, &text);
    wh_err_set(err, WH_E_INVALID, "json: cannot unmarshal number %s into Go struct field %s.%s of type int32", lit,
               owner->name, text.data != NULL ? text.data : "");
    wh_buf_free(&text);
    return WH_E_INVALID;
}

static wh_code check_field(const json_t *v, const wh_inject_field *f, const wh_inject_type *owner,
                           const check_path *path, wh_err *err);

static wh_code check_object(const json_t *value, const wh_inject_type *type, const check_path *up, wh_err *err)
{
    const char *key;
    json_t *v;
    wh_code rc;

    json_object_foreach((json_t *)value, key, v)
    {
        const wh_inject_field *f = wh_inject_schema_field(type, key);
        check_path here = {up, key};
        if (f == NULL || json_is_null(v))
            continue;
        if ((rc = check_field(v, f, type, &here, err)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

static wh_code check_field(const json_t *v, const wh_inject_field *f, const wh_inject_type *owner,
                           const check_path *path, wh_err *err)
{
    size_t i;
    wh_code rc;

    switch (f->kind) {
    case WH_K_STR:
        return json_is_string(v) ? WH_OK : type_error(err, v, owner, path, "string");
    case WH_K_INT:
        if (json_is_integer(v) || (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v)))
            return WH_OK;
        return json_is_real(v) ? fraction_error(err, v, owner, path) : type_error(err, v, owner, path, "int32");
    case WH_K_BOOL:
        return json_is_boolean(v) ? WH_OK : type_error(err, v, owner, path, "bool");
    case WH_K_OBJ:
        return json_is_object(v) ? check_object(v, f->type, path, err) : type_error(err, v, owner, path, f->type->name);
    case WH_K_MAP:
    case WH_K_QMAP: {
        const char *key;
        json_t *mv;
        if (!json_is_object(v))
            return type_error(err, v, owner, path, "map[string]string");
        json_object_foreach((json_t *)v, key, mv)
        {
            if (!json_is_null(mv) && !json_is_string(mv) && !(f->kind == WH_K_QMAP && json_is_number(mv)))
                return type_error(err, mv, owner, path, "string");
        }
        return WH_OK;
    }
    case WH_K_LIST:
    case WH_K_PLIST:
        if (!json_is_array(v))
            return type_error(err, v, owner, path, f->kind == WH_K_LIST && f->type != NULL ? f->type->name : "list");
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *elem = json_array_get(v, i);
            if (json_is_null(elem))
                continue;
            if (f->kind == WH_K_PLIST ? (json_is_object(elem) || json_is_array(elem)) : !json_is_object(elem))
                return type_error(err, elem, owner, path,
                                  f->kind == WH_K_PLIST ? "scalar" : (f->type != NULL ? f->type->name : "object"));
            if (f->kind == WH_K_LIST && f->type != NULL && (rc = check_object(elem, f->type, path, err)) != WH_OK)
                return rc;
        }
        return WH_OK;
    default:
        return WH_OK;
    }
}

wh_code wh_inject_go_check(const json_t *value, const wh_inject_type *type, wh_err *err)
{
    if (!json_is_object(value))
        return wh_err_set(err, WH_E_INVALID, "json: cannot unmarshal %s into Go value of type %s",
                          wh_json_type_name(value), type->name);
    return check_object(value, type, NULL, err);
}
