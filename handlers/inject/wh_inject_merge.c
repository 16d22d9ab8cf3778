/*
 * wh_inject_merge.c - merge stage: strategic merge patch on jansson values
 * (see wh_inject_merge.h).
 *
 * Follows k8s.io/apimachinery's strategicpatch with the options istiod uses
 * (IgnoreUnmatchedNulls, MergeParallelList): nulls delete, `$patch:
 * replace|delete` on maps and list items, `$retainKeys`,
 * `$deleteFromPrimitiveList/<field>`, and the merged-list ordering of
 * normalizeElementOrder/mergeSortedSlice.
 */
#include "wh_inject_merge.h"

#include "wh_alloc.h"
#include "wh_inject_pod.h"
#include "wh_json_arena.h"

#include <stdint.h>
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

#define MEMBERS_ON_STACK 20

/* The merge key `mk` (`len` bytes) of list item `item` (an object), or
 * NULL: looked for at the first member before the hash (names come first). */
static const json_t *merge_key_of(const json_t *item, const char *mk, size_t len)
{
    const json_t *k;

    if (len == 4 && memcmp(mk, "name", 4) == 0 && (k = wh_inject_name_json(item)) != NULL)
        return k;
    return wh_json_getn(item, mk, len);
}

/* What settle() found: the value must be rebuilt, or is the fresh value. */
enum { SETTLE_REBUILD, SETTLE_DONE };

static int settle(json_t *pv, const wh_inject_field *f);

/* settle() for member `key` (`len` bytes) -> `v` of an object of type `t`;
 * *prev: the field found last (fields are looked up from the previous one:
 * templates print them in Go's order); *nulls counts the nulls. */
static inline int settle_member(const char *key, size_t len, json_t *v, const wh_inject_type *t,
                                const wh_inject_field **prev, size_t *nulls)
{
    const wh_inject_field *f;

    if (key[0] == '$')
        return SETTLE_REBUILD;
    if (json_is_null(v)) {
        (*nulls)++;
        return SETTLE_DONE;
    }
    if (!json_is_object(v) && !json_is_array(v))
        return SETTLE_DONE;
    if ((f = wh_inject_schema_fieldn_after(t, *prev, key, len)) != NULL)
        *prev = f;
    return settle(v, f);
}

/* settle() for object `o` of type `t`: its members read through jansson's
 * layout when known (no snapshot: a hello overlay has ~100 objects), else
 * from a snapshot. */
static int settle_map(json_t *o, const wh_inject_type *t)
{
    const wh_inject_field *prev = NULL;
    size_t i, n, nulls = 0;
    int r = SETTLE_DONE;

    if (!sole(o))
        return SETTLE_REBUILD;
    if (wh_json_object_layout_known) {
        const struct wh_json_object_layout *jo = (const struct wh_json_object_layout *)o;
        const struct wh_json_list_layout *l, *next;
        for (l = jo->ordered_list.next; l != &jo->ordered_list && r != SETTLE_REBUILD; l = l->next) {
            const struct wh_json_pair_layout *p = wh_json_pair_at(l);
            r = settle_member(p->key, p->key_len, p->value, t, &prev, &nulls);
        }
        if (r == SETTLE_DONE && nulls > 0) /* merging into nothing drops a null: so does settling */
            for (l = jo->ordered_list.next; l != &jo->ordered_list; l = next) {
                const struct wh_json_pair_layout *p = wh_json_pair_at(l);
                next = l->next; /* deleting frees the pair */
                if (json_is_null(p->value))
                    json_object_deln(o, p->key, p->key_len);
            }
        return r;
    }
    wh_json_member stack[MEMBERS_ON_STACK], *heap;
    const wh_json_member *m = wh_json_members(o, stack, MEMBERS_ON_STACK, &heap, &n);
    for (i = 0; i < n && r != SETTLE_REBUILD; i++)
        r = settle_member(m[i].key, m[i].len, m[i].value, t, &prev, &nulls);
    if (r == SETTLE_DONE && nulls > 0)
        for (i = 0; i < n; i++)
            if (json_is_null(m[i].value))
                json_object_deln(o, m[i].key, m[i].len);
    free(heap);
    return r;
}

/* A fingerprint for value_equal: equal values have equal fingerprints
 * (numbers by value, as value_equal compares them), so that checking a
 * list's merge keys for duplicates compares integers, not JSON values. */
static uint64_t fingerprint(const json_t *v)
{
    uint64_t h = 14695981039346656037ull;
    size_t i, n;

    if (json_is_string(v)) { /* length, first and last 8 bytes: env names share prefixes, not both */
        const unsigned char *s = (const unsigned char *)wh_json_string_text(v, &n);
        uint64_t head = 0, tail = 0;
        if (n >= 8) {
            memcpy(&head, s, 8);
            memcpy(&tail, s + n - 8, 8);
        } else {
            for (i = 0; i < n; i++)
                head = head << 8 | s[i];
        }
        return ((h ^ n) * 1099511628211ull ^ head) * 1099511628211ull ^ tail;
    }
    if (json_is_number(v)) {
        double d = json_number_value(v);
        uint64_t bits;
        if (d == 0)
            d = 0; /* -0 == 0 */
        memcpy(&bits, &d, sizeof(bits));
        return bits * 1099511628211ull;
    }
    return (uint64_t)json_typeof(v); /* objects, arrays, booleans, null: value_equal decides */
}

/* Whether the `n` values `v` (none NULL) are pairwise different: their
 * fingerprints go into an open-addressed table (a proxy's ~30 env names
 * cost ~450 pair compares otherwise), equal fingerprints are compared. */
static int distinct(const json_t *const *v, size_t n)
{
    uint64_t hstack[64], *h = n <= 64 ? hstack : wh_malloc(n * sizeof(*h));
    uint32_t sstack[128], *slot;
    size_t i, size = 16, mask, at;
    int ok = 1;

    while (size < 2 * n)
        size *= 2;
    slot = size <= 128 ? sstack : wh_malloc(size * sizeof(*slot));
    memset(slot, 0, size * sizeof(*slot));
    mask = size - 1;
    for (i = 0; i < n && ok; i++) {
        h[i] = fingerprint(v[i]);
        for (at = (size_t)(h[i] ^ h[i] >> 29) & mask; slot[at] != 0 && ok; at = (at + 1) & mask)
            if (h[slot[at] - 1] == h[i] && value_equal(v[slot[at] - 1], v[i]))
                ok = 0;
        slot[at] = (uint32_t)(i + 1);
    }
    if (h != hstack)
        free(h);
    if (slot != sstack)
        free(slot);
    return ok;
}

/* settle() for list `a` of field `f`.  The items of a merge-keyed list are
 * settled only once their merge keys are known to differ: an item merging
 * into an earlier one must keep its nulls, which delete there. */
static int settle_list(json_t *a, const wh_inject_field *f)
{
    size_t i, n, mk_len;
    json_t *const *table = wh_json_array_items(a, &n);
    const json_t *stack[64], **keys;
    int keyed = f != NULL && f->kind == WH_K_LIST && f->merge_key != NULL,
        plist = f != NULL && f->kind == WH_K_PLIST && (f->flags & WH_F_MERGE), r = SETTLE_DONE, nulls = 0;

    if (!sole(a))
        return SETTLE_REBUILD;
    if (table == NULL)
        n = json_array_size(a);
    if (!keyed && !plist) { /* atomic: the items settled, nulls dropped */
        const wh_inject_field *of = f != NULL && f->kind == WH_K_LIST ? f : NULL;
        for (i = 0; i < n && r != SETTLE_REBUILD; i++) {
            json_t *item = table != NULL ? table[i] : json_array_get(a, i);
            if (json_is_null(item))
                nulls = 1;
            else if (json_is_object(item) || json_is_array(item))
                r = settle(item, of);
        }
        if (r == SETTLE_DONE && nulls)
            for (i = n; i-- > 0;)
                if (json_is_null(json_array_get(a, i)))
                    json_array_remove(a, i);
        return r;
    }
    /* items with the same merge key merge into one, duplicate primitives go */
    keys = n <= 64 ? stack : wh_malloc(n * sizeof(*keys));
    mk_len = keyed ? strlen(f->merge_key) : 0;
    for (i = 0; i < n && r != SETTLE_REBUILD; i++) {
        json_t *item = table != NULL ? table[i] : json_array_get(a, i);
        if (keyed) {
            /* an item without its merge key, or a null one: the rebuild says which error */
            keys[i] = json_is_object(item) ? merge_key_of(item, f->merge_key, mk_len) : NULL;
            if (keys[i] == NULL || json_is_null(keys[i]))
                r = SETTLE_REBUILD;
        } else {
            keys[i] = item;
            if (json_is_object(item) || json_is_array(item))
                r = SETTLE_REBUILD;
        }
    }
    if (r != SETTLE_REBUILD && !distinct(keys, n))
        r = SETTLE_REBUILD;
    if (keys != stack)
        free(keys);
    for (i = 0; keyed && i < n && r != SETTLE_REBUILD; i++)
        r = settle_map(table != NULL ? table[i] : json_array_get(a, i), f->type);
    return r;
}

/* Make `pv`, a value of an owned patch (its parent holds it alone, see
 * `owned`), what merging it into nothing (fresh_value) gives, in place where
 * that needs no more than dropping nulls: SETTLE_DONE when it then is that
 * value, SETTLE_REBUILD when it must be rebuilt -- a directive to resolve,
 * list items that merge or go, a value held more than once (changing it in
 * the target later would change something else) at any depth.  Settling
 * drops only what the rebuild skips, so a rebuild after a partial settle
 * gives the same.  One walk: most of an overlay (the sidecar containers,
 * the volumes with their `emptyDir: null`) is new to the pod and moved, not
 * rebuilt. */
static int settle(json_t *pv, const wh_inject_field *f)
{
    if (json_is_object(pv))
        return settle_map(pv, f != NULL ? f->type : NULL);
    if (json_is_array(pv))
        return settle_list(pv, f);
    return SETTLE_DONE;
}

/* A fresh value for a key the target does not have: the patch value with
 * its nulls and directives resolved against nothing. */
static wh_code fresh_value(json_t *pv, const wh_inject_field *f, int owned, json_t **out, wh_err *err)
{
    wh_code rc;

    *out = NULL;
    if (owned && settle(pv, f) == SETTLE_DONE) {
        *out = json_incref(pv);
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
    *out = json_incref(pv); /* a scalar: shared (see wh_inject_json_copy) */
    return WH_OK;
}

/* The list is replaced by a filtered one, not filtered in place: the merge
 * target may share it with the request's pod (wh_inject_apply_overlays). */
static wh_code delete_from_primitive_list(json_t *orig, const char *field, const json_t *values, wh_err *err)
{
    const json_t *list = wh_json_get(orig, field);
    json_t *kept;
    size_t i, j;

    if (!json_is_array(values))
        return wh_err_set(err, WH_E_INVALID, "%s%s must be a list", DELETE_PRIMITIVE, field);
    if (!json_is_array(list))
        return WH_OK;
    kept = json_array();
    for (i = 0; i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        for (j = 0; j < json_array_size(values) && !value_equal(item, json_array_get(values, j)); j++)
            ;
        if (j == json_array_size(values))
            json_array_append(kept, (json_t *)item);
    }
    json_object_set_new_nocheck(orig, field, kept); /* field: a key of orig, so UTF-8 */
    return WH_OK;
}

static wh_code merge_map(json_t *orig, const json_t *patch, const wh_inject_type *t, int owned, wh_err *err)
{
    const json_t *directive = wh_json_getn(patch, "$patch", 6), *retain = wh_json_getn(patch, "$retainKeys", 11);
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
        ov = empty ? NULL : wh_json_getn(orig, key, key_len);
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
        json_object_setn_new_nocheck(orig, key, key_len, nv); /* nv: not NULL when rc is WH_OK */
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
        const json_t *d = wh_json_get(json_array_get(patch, i), "$patch");
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
        items[nitems].key = wh_json_get(items[nitems].value, mk);
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
        pkey = wh_json_get(pi, mk);
        d = wh_json_get(pi, "$patch");
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
            /* owned: the patch is ours to change (wh_inject_smp_move); a
             * null merge key is dropped by merging into a new item */
            int move = owned && !json_is_null(pkey) && settle_map((json_t *)pi, f->type) == SETTLE_DONE;
            items[nitems].value = move ? json_incref((json_t *)pi) : json_object();
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
            json_decref(items[j].value);
            items[j].value = copy;
            items[j].own = 1;
        }
        if ((rc = merge_map(items[j].value, pi, f->type, owned && sole(pi), err)) != WH_OK) {
            wh_err_prefix(err, "%s[%s=%s]", f->name, mk, json_is_string(pkey) ? json_string_value(pkey) : "?");
            goto out;
        }
        items[j].key = wh_json_get(items[j].value, mk); /* the merge may have changed or dropped it */
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
        json_array_append(result, take->value);
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
        if (json_array_size(orig) == 0 && json_array_size(patch) == 0) {
            *out = json_array();
            return WH_OK;
        }
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
                if (j == json_array_size(result))
                    json_array_append_new(result, wh_inject_json_copy(v));
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
        /* changed only when owned: then ours (wh_inject_smp_move) */
        if ((rc = fresh_value((json_t *)pi, f != NULL && f->kind == WH_K_LIST ? f : NULL, owned, &nv, err)) != WH_OK) {
            json_decref(result);
            return rc;
        }
        json_array_append_new(result, nv);
    }
    *out = result;
    return WH_OK;
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
