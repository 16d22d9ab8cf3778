/*
 * wh_inject_schema_go.c - Go's encoding/json over the Pod type table (see
 * wh_inject_schema.h): decoding (the type check, the keys closed types
 * drop and the stable leaves the merge target shares, in one walk), the
 * round trip (omitempty zeros, canonical quantities; its rules once, in
 * fate_of) and Go's field order for the JSON istiod prints.
 */
#include "wh_inject_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_inject_quantity.h"
#include "wh_json_arena.h"

/* Whether `text` is a quantity already in the canonical form Go prints:
 * "0", or 1 to 999 without a leading zero and with one of the suffixes,
 * which no larger suffix can hold whole (1000m is 1, 1024Mi is 1Gi) and
 * which a binary one keeps from 1Ki on.  Most quantities of templates and
 * pods are ("100m", "128Mi", "2"): no parse, no printing.  (inject-
 * schema.walk holds it to wh_inject_quantity_canonical over every such
 * text and its near misses.) */
static int quantity_is_canonical(const char *text)
{
    size_t d = 0;

    if (text[0] == '0')
        return text[1] == '\0';
    while (d < 3 && text[d] >= '0' && text[d] <= '9')
        d++;
    if (d == 0)
        return 0;
    text += d;
    if (text[0] == '\0')
        return 1;
    if (text[1] == '\0')
        return strchr("numkMGTPE", text[0]) != NULL;
    return text[1] == 'i' && text[2] == '\0' && strchr("KMGTPE", text[0]) != NULL;
}

/* The canonical forms this thread computed last, by text: a revision's
 * templates print the same few quantities that are not canonical ("2000m",
 * "1024Mi") into every injected pod.  A direct-mapped table of short texts;
 * the canonical form is a function of the text alone, so an entry is never
 * stale. */
#define QUANTITY_MEMO 16
#define QUANTITY_MEMO_TEXT 24
/* 0: no memo -- the reference the memo is compared with
 * (tests/inject/schema/schema_go_reference.c). */
#ifndef WH_INJECT_SCHEMA_GO_MEMO
#define WH_INJECT_SCHEMA_GO_MEMO 1
#endif
typedef struct quantity_memo {
    char text[QUANTITY_MEMO_TEXT];
    char out[QUANTITY_MEMO_TEXT]; /* "": an empty entry (a canonical form never is) */
} quantity_memo;
static __thread quantity_memo quantity_memos[QUANTITY_MEMO];

static quantity_memo *quantity_memo_of(const char *text, size_t len)
{
    unsigned h = 2166136261u;
    size_t i;

    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 16777619u;
    return &quantity_memos[(h ^ (h >> 16)) % QUANTITY_MEMO];
}

/* The canonical form of quantity `text` into out (64 bytes at least). */
static wh_code canonical_text(const char *text, char *out, size_t size, wh_err *err)
{
    size_t len = strlen(text), olen;
    quantity_memo *m = WH_INJECT_SCHEMA_GO_MEMO && len < QUANTITY_MEMO_TEXT ? quantity_memo_of(text, len) : NULL;
    wh_code rc;

    if (m != NULL && m->out[0] != '\0' && memcmp(m->text, text, len + 1) == 0) {
        memcpy(out, m->out, strlen(m->out) + 1);
        return WH_OK;
    }
    if ((rc = wh_inject_quantity_canonical(text, out, size, err)) != WH_OK)
        return rc;
    if (m != NULL && (olen = strlen(out)) < QUANTITY_MEMO_TEXT) {
        memcpy(m->text, text, len + 1);
        memcpy(m->out, out, olen + 1);
    }
    return WH_OK;
}

static wh_code canonical_quantity(json_t *parent, const char *key, json_t *v, wh_err *err)
{
    char buf[96], out[96];
    const char *text;
    wh_code rc;

    if (json_is_string(v)) {
        text = json_string_value(v);
        if (quantity_is_canonical(text))
            return WH_OK;
    } else if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        text = buf;
    } else if (json_is_real(v)) {
        snprintf(buf, sizeof(buf), "%.9f", json_real_value(v));
        text = buf;
    } else {
        return wh_err_set(err, WH_E_INVALID, "%s: a quantity must be a string or a number", key);
    }
    if ((rc = canonical_text(text, out, sizeof(out), err)) != WH_OK) {
        wh_err_prefix(err, "%s", key);
        return rc;
    }
    if (json_is_string(v) && strcmp(out, text) == 0)
        return WH_OK;
    /* a string `parent` alone holds: the same as replacing it, without the
     * lookup of its key */
    if (json_is_string(v) && v->refcount == 1)
        json_string_setn_nocheck(v, out, strlen(out)); /* ASCII */
    else
        json_object_set_new_nocheck(parent, key, json_string_nocheck(out));
    return WH_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Room on the stack for the members of an object (a PodSpec has 40 fields),
 * and the most a list item may have for flat_item. */
#define MEMBERS_ON_STACK 48
#define FLAT_MEMBERS 8

/* What Go's decoding and encoding again do to `v`, the value of a key whose
 * field is `f` (NULL: a key the type lacks): the one statement of the round
 * trip's rules, which roundtrip() applies and the type check's stable-leaf
 * verdict (leaf_keeps) reads. */
typedef enum go_fate {
    GO_KEEPS,         /* printed as it came */
    GO_DROPS,         /* a null, a zero omitempty scalar */
    GO_CANONICALISES, /* a quantity, a map of them */
    GO_DESCENDS       /* a struct, a list of structs: their fields decide */
} go_fate;

static inline __attribute__((always_inline)) go_fate fate_of(const wh_inject_field *f, const json_t *v)
{
    if (json_is_null(v))
        return GO_DROPS;
    if (f == NULL)
        return GO_KEEPS;
    switch (f->kind) {
    case WH_K_STR:
    case WH_K_INT:
    case WH_K_BOOL:
        return (f->flags & WH_F_OMIT) && wh_go_is_empty(v) ? GO_DROPS : GO_KEEPS;
    case WH_K_OBJ:
        return json_is_object(v) && f->type != NULL ? GO_DESCENDS : GO_KEEPS;
    case WH_K_LIST:
        return json_is_array(v) && f->type != NULL ? GO_DESCENDS : GO_KEEPS;
    case WH_K_QTY:
        return GO_CANONICALISES;
    case WH_K_QMAP:
        return json_is_object(v) ? GO_CANONICALISES : GO_KEEPS;
    default:
        return GO_KEEPS;
    }
}

/* Whether the key with field `f` and value `v` keeps an object a stable leaf:
 * a scalar the round trip prints as it came. */
static int leaf_keeps(const wh_inject_field *f, const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v) && fate_of(f, v) == GO_KEEPS;
}

/* The round trip's other rule: Go prints the WH_F_FILL fields even when the
 * input lacked them (an object of `type` holding `fills` of them lacks none). */
static void fill_zero_fields(json_t *value, const wh_inject_type *type)
{
    const wh_inject_field *f;

    if (wh_inject_schema_fills(type) == 0)
        return;
    for (f = type->fields; f->name != NULL; f++) {
        if (!(f->flags & WH_F_FILL) || json_object_get(value, f->name) != NULL)
            continue;
        json_object_set_new_nocheck(value, f->name,
                                    f->kind == WH_K_INT    ? json_integer(0)
                                    : f->kind == WH_K_BOOL ? json_false()
                                    : f->kind == WH_K_QTY  ? json_string_nocheck("0")
                                                           : json_object());
    }
}

/* The item of list `pristine` that `item` (at index i of its list, merged by
 * `merge_key`) was copied from: the one at the same index, else the one with
 * the same merge key in a short list; NULL when none.  (An item shared with
 * `pristine` at its own index the caller has skipped already.) */
static const json_t *pristine_item(const json_t *pristine, size_t i, const json_t *item, const char *merge_key)
{
    const json_t *same, *key;
    size_t j, n;

    if (pristine == NULL)
        return NULL;
    same = json_array_get(pristine, i);
    n = json_array_size(pristine);
    if (same == item || merge_key == NULL || n > 32 || (key = json_object_get(item, merge_key)) == NULL)
        return same;
    if (json_equal(json_object_get(same, merge_key), key))
        return same;
    for (j = 0; j < n; j++)
        if (json_equal(json_object_get(json_array_get(pristine, j), merge_key), key))
            return json_array_get(pristine, j);
    return NULL;
}

static wh_code canonical_quantities(json_t *map, const char *field, wh_err *err)
{
    wh_code rc;

    if (wh_json_object_layout_known) {
        /* through jansson's layout: a null member is deleted (its pair with
         * it: the next pair is read first), a quantity replaced in place */
        const struct wh_json_object_layout *o = (const struct wh_json_object_layout *)map;
        const struct wh_json_list_layout *l, *next;
        for (l = o->ordered_list.next; l != &o->ordered_list; l = next) {
            const struct wh_json_pair_layout *pair = wh_json_pair_at(l);
            next = l->next;
            if (json_is_null(pair->value))
                json_object_deln(map, pair->key, pair->key_len);
            else if ((rc = canonical_quantity(map, pair->key, pair->value, err)) != WH_OK)
                goto fail;
        }
        return WH_OK;
    }
    {
        const char *qk;
        json_t *qv;
        void *qtmp;
        json_object_foreach_safe(map, qtmp, qk, qv)
        {
            if (json_is_null(qv))
                json_object_del(map, qk);
            else if ((rc = canonical_quantity(map, qk, qv, err)) != WH_OK)
                goto fail;
        }
    }
    return WH_OK;
fail:
    wh_err_prefix(err, "%s", field);
    return rc;
}

static wh_code roundtrip(json_t *value, const wh_inject_type *type, const json_t *pristine, wh_err *err);
static inline __attribute__((always_inline)) int flat_item(const json_t *elem, const wh_inject_type *type,
                                                           unsigned fills);

/* The round trip of the items of `v`, a list of struct `f->type` under the
 * key of field `f`, beside `plist` (the request pod's list there, or NULL). */
static wh_code roundtrip_items(json_t *v, const wh_inject_field *f, const json_t *plist, wh_err *err)
{
    unsigned fills = wh_inject_schema_fills(f->type) * WH_F_FILL;
    size_t i, n, np = json_array_size(plist);
    json_t *const *table = wh_json_array_items(v, &n);
    wh_code rc = WH_OK;

    if (v == plist)
        return WH_OK; /* the list itself shared: its items all are */
    if (table == NULL)
        n = json_array_size(v);
    for (i = n; rc == WH_OK && i-- > 0;) {
        json_t *item = table != NULL ? table[i] : json_array_get(v, i);
        if (json_is_null(item) || (i < np && json_array_get(plist, i) == item))
            continue; /* shared with the request's pod: stable (see wh_inject_go_roundtrip_beside) */
        /* an item of scalars the round trip leaves as they are (an EnvVar
         * {name, value}, a port, a mount): nothing to do, no frame */
        if (json_is_object(item) && flat_item(item, f->type, fills) == 1)
            continue;
        rc = roundtrip(item, f->type, pristine_item(plist, i, item, f->merge_key), err);
    }
    return rc;
}

/* The round trip of member `key` (len bytes; value `v`) of `value`, an object
 * of `type` beside `pristine`; *at: where the lookup of its field starts
 * (wh_inject_schema_fieldn_at). */
static inline __attribute__((always_inline)) wh_code roundtrip_member(json_t *value, const wh_inject_type *type,
                                                                      const json_t *pristine, unsigned *at,
                                                                      const char *key, size_t len, json_t *v,
                                                                      wh_err *err)
{
    /* templates and the API server print an object's fields in one order mostly */
    const wh_inject_field *f = wh_inject_schema_fieldn_at(type, at, key, len);

    switch (fate_of(f, v)) {
    case GO_KEEPS:
        return WH_OK;
    case GO_DROPS:
        json_object_del(value, key);
        return WH_OK;
    case GO_CANONICALISES:
        return f->kind == WH_K_QTY ? canonical_quantity(value, key, v, err) : canonical_quantities(v, key, err);
    case GO_DESCENDS:
    default:
        if (f->kind == WH_K_OBJ)
            return roundtrip(v, f->type, pristine != NULL ? wh_json_getn(pristine, key, len) : NULL, err);
        return roundtrip_items(v, f, pristine != NULL ? wh_json_getn(pristine, key, len) : NULL, err);
    }
}

static wh_code roundtrip(json_t *value, const wh_inject_type *type, const json_t *pristine, wh_err *err)
{
    unsigned at = 0;
    wh_json_member buf[MEMBERS_ON_STACK], *heap = NULL;
    const wh_json_member *m;
    size_t k, n;
    wh_code rc = WH_OK;

    if (!json_is_object(value) || type == NULL)
        return WH_OK;
    fill_zero_fields(value, type);
    if (wh_json_object_layout_known) {
        /* through jansson's layout: a member may be deleted (its pair with
         * it) or its value replaced (the pair stays): the next pair is read
         * first */
        const struct wh_json_object_layout *o = (const struct wh_json_object_layout *)value;
        const struct wh_json_list_layout *l, *next;
        for (l = o->ordered_list.next; l != &o->ordered_list && rc == WH_OK; l = next) {
            const struct wh_json_pair_layout *pair = wh_json_pair_at(l);
            next = l->next;
            rc = roundtrip_member(value, type, pristine, &at, pair->key, pair->key_len, pair->value, err);
        }
        return rc;
    }
    m = wh_json_members(value, buf, MEMBERS_ON_STACK, &heap, &n);
    for (k = 0; k < n && rc == WH_OK; k++)
        rc = roundtrip_member(value, type, pristine, &at, m[k].key, m[k].len, m[k].value, err);
    if (heap != NULL)
        free(heap);
    return rc;
}

wh_code wh_inject_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err)
{
    return roundtrip(value, type, NULL, err);
}

wh_code wh_inject_go_roundtrip_beside(json_t *value, const json_t *pristine, const wh_inject_type *type, wh_err *err)
{
    return roundtrip(value, type, pristine, err);
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
        json_object_set_new_nocheck(out, keys[i], wh_inject_json_copy(json_object_get(map, keys[i])));
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
        } else if ((f->flags & WH_F_OMIT) && wh_go_is_empty(v)) {
            continue;
        } else if (f->kind == WH_K_OBJ) {
            nv = wh_inject_go_ordered(v, f->type);
        } else if (f->kind == WH_K_LIST && f->type != NULL && json_is_array(v)) {
            size_t i;
            nv = json_array();
            for (i = 0; i < json_array_size(v); i++)
                json_array_append_new(nv, wh_inject_go_ordered(json_array_get(v, i), f->type));
        } else if ((f->kind == WH_K_MAP || f->kind == WH_K_QMAP) && json_is_object(v)) {
            nv = sorted_copy(v);
        } else {
            nv = wh_inject_json_copy(v);
        }
        json_object_set_new_nocheck(out, f->name, nv);
    }
    return out;
}

/* The stable leaves a walk found, list by list in the order the walk met
 * the lists: records[i] covers `list`, its items items[first .. first+n). */
typedef struct leaves_list {
    const json_t *list;
    size_t first, n;
} leaves_list;

struct wh_inject_go_leaves {
    leaves_list *lists;
    size_t nlists, lists_cap;
    const json_t **items;
    size_t nitems, items_cap;
    size_t next; /* the list asked for after the last one found */
};

/* A record for `list` (n items, each entry written by the walk); returns
 * the index of its first item. */
static size_t leaves_add_list(wh_inject_go_leaves *l, const json_t *list, size_t n)
{
    size_t first = l->nitems;

    if (l->nlists == l->lists_cap) {
        l->lists_cap = l->lists_cap != 0 ? 2 * l->lists_cap : 16;
        l->lists = wh_realloc(l->lists, l->lists_cap * sizeof(*l->lists));
    }
    if (l->items_cap - l->nitems < n) {
        while (l->items_cap - l->nitems < n)
            l->items_cap = l->items_cap != 0 ? 2 * l->items_cap : 64;
        l->items = wh_realloc(l->items, l->items_cap * sizeof(*l->items));
    }
    l->lists[l->nlists++] = (leaves_list){list, first, n};
    l->nitems += n;
    return first;
}

const json_t *const *wh_inject_go_stable_items(wh_inject_go_leaves *leaves, const json_t *list, size_t *n)
{
    size_t k, i;

    *n = 0;
    if (leaves == NULL)
        return NULL;
    for (k = 0; k < leaves->nlists; k++) {
        i = leaves->next + k < leaves->nlists ? leaves->next + k : leaves->next + k - leaves->nlists;
        if (leaves->lists[i].list == list) {
            leaves->next = i + 1;
            *n = leaves->lists[i].n;
            return leaves->items + leaves->lists[i].first;
        }
    }
    return NULL;
}

void wh_inject_go_leaves_free(wh_inject_go_leaves *leaves)
{
    if (leaves == NULL)
        return;
    free(leaves->lists);
    free(leaves->items);
    free(leaves);
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

static wh_code type_error(wh_err *err, const char *value, const wh_inject_type *owner, const check_path *p,
                          const char *want)
{
    wh_buf path = WH_BUF_INIT, text = WH_BUF_INIT;

    path_text(p, &path);
    wh_go_unmarshal_error(&text, value, owner != NULL ? owner->name : NULL, path.data != NULL ? path.data : "", want);
    wh_err_set(err, WH_E_INVALID, "%s", text.data);
    wh_buf_free(&path);
    wh_buf_free(&text);
    return WH_E_INVALID;
}

/* One walk of a value against its Go type.  `drop`: remove the keys closed
 * types lack (in place) and walk everything, keeping the first error;
 * otherwise stop at the first error.  `leaves` (NULL: not asked): where the
 * stable leaves among list items go. */
typedef struct decode_walk {
    int drop;
    wh_code rc;
    wh_err *err;
    wh_inject_go_leaves *leaves;
    int molds;           /* copies of molds are looked up (wh_inject_go_decode_molded) */
    size_t fails, drops; /* type errors met, keys dropped: what makes a walk not clean */
} decode_walk;

static int fail(decode_walk *w, const char *value, const wh_inject_type *owner, const check_path *p, const char *want)
{
    w->fails++;
    if (w->rc == WH_OK)
        w->rc = type_error(w->err, value, owner, p, want);
    return !w->drop; /* 1: stop walking */
}

static int walk_object(json_t *value, const wh_inject_type *type, const check_path *up, decode_walk *w, int *leaf);

/* What the walk does with the value of a field, decided from the field's
 * kind, its omitempty and the value's JSON type alone (verdicts[][][]):
 * the common cases of walk_field and leaf_keeps in one table read.  Every
 * entry says what those two functions conclude for every value of that JSON
 * type (inject-schema.walk compares the walk with and without the table). */
enum {
    V_FIELD,  /* ask walk_field and leaf_keeps (containers, type errors, a real in an int) */
    V_KEEP,   /* decodes; printed as it came */
    V_PASS,   /* decodes; the round trip drops or rewrites it (null, a quantity), or it is a container Go
               * keeps opaque: not a stable leaf */
    V_STRING, /* decodes; an omitempty string printed as it came unless "" */
    V_INTEGER /* decodes; an omitempty integer printed as it came unless 0 */
};

/* 0: every key is decided by walk_field and leaf_keeps -- the reference the
 * table is compared with (tests/inject/schema/schema_go_reference.c). */
#ifndef WH_INJECT_SCHEMA_GO_TABLE
#define WH_INJECT_SCHEMA_GO_TABLE 1
#endif

/* [kind][omitempty][json_typeof]: JSON_OBJECT, ARRAY, STRING, INTEGER, REAL, TRUE, FALSE, NULL */
static const unsigned char verdicts[WH_K_QMAP + 1][2][JSON_NULL + 1] = {
    [WH_K_STR] = {{V_FIELD, V_FIELD, V_KEEP, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                  {V_FIELD, V_FIELD, V_STRING, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_INT] = {{V_FIELD, V_FIELD, V_FIELD, V_KEEP, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                  {V_FIELD, V_FIELD, V_FIELD, V_INTEGER, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_BOOL] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_KEEP, V_KEEP, V_PASS},
                   {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_KEEP, V_PASS, V_PASS}},
    [WH_K_PTR] = {{V_PASS, V_PASS, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_PASS},
                  {V_PASS, V_PASS, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_PASS}},
    [WH_K_ANY] = {{V_PASS, V_PASS, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_PASS},
                  {V_PASS, V_PASS, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_KEEP, V_PASS}},
    [WH_K_OBJ] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                  {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_LIST] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                   {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_PLIST] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                    {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_MAP] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                  {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
    [WH_K_QTY] = {{V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS},
                  {V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS, V_PASS}},
    [WH_K_QMAP] = {{V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS},
                   {V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_FIELD, V_PASS}},
};

/* One member (key, len bytes; value) of a list item for flat_item: its field (f, the one expected next, else the
 * one the key names) with the field's verdict applied to *keeps and *fills; NULL when the table cannot tell. */
static inline __attribute__((always_inline)) const wh_inject_field *
flat_member(const wh_inject_type *type, const wh_inject_field *f, const char *key, size_t len, const json_t *value,
            int *keeps, unsigned *fills)
{
    size_t n;

    if (f->len != len || len == 0 || !wh_inject_schema_same(f->name, key, len))
        if ((f = wh_inject_schema_fieldn(type, key, len)) == NULL)
            return NULL;
    *fills -= f->flags & WH_F_FILL;
    switch (verdicts[f->kind][f->flags & WH_F_OMIT][json_typeof(value)]) {
    case V_KEEP:
        break;
    case V_PASS:
        *keeps = 0;
        break;
    case V_STRING:
        *keeps = *keeps && (wh_json_string_text(value, &n), n != 0);
        break;
    case V_INTEGER:
        *keeps = *keeps && json_integer_value(value) != 0;
        break;
    default:
        return NULL;
    }
    return f;
}

/* The check of a list item `elem` of struct `type` (holding `fills` fill
 * fields) when every member is a field whose verdict the table gives, in one
 * pass over its members without a frame of its own (read through jansson's
 * layout when known): 1 when it decodes and is a stable leaf, 0 when it
 * decodes and is not, -1 when the table cannot tell (an unknown key, a
 * container, a type error, without the layout many members): then
 * walk_object decides, nothing having been changed.  The common item of
 * long lists (EnvVar {name, value}, ports, mounts). */
static inline __attribute__((always_inline)) int flat_item(const json_t *elem, const wh_inject_type *type,
                                                           unsigned fills)
{
    wh_json_member buf[FLAT_MEMBERS];
    const wh_inject_field *f = type->fields;
    size_t i, n;
    const wh_json_member *m;
    int keeps = 1;

    if (!WH_INJECT_SCHEMA_GO_TABLE)
        return -1;
    if (wh_json_object_layout_known) {
        const struct wh_json_object_layout *o = (const struct wh_json_object_layout *)elem;
        for (const struct wh_json_list_layout *l = o->ordered_list.next; l != &o->ordered_list; l = l->next, f++) {
            const struct wh_json_pair_layout *pair = wh_json_pair_at(l);
            if ((f = flat_member(type, f, pair->key, pair->key_len, pair->value, &keeps, &fills)) == NULL)
                return -1;
        }
        return keeps && fills == 0;
    }
    if ((m = wh_json_members(elem, buf, FLAT_MEMBERS, NULL, &n)) == NULL)
        return -1;
    for (i = 0; i < n; i++, f++)
        if ((f = flat_member(type, f, m[i].key, m[i].len, m[i].value, &keeps, &fills)) == NULL)
            return -1;
    return keeps && fills == 0;
}

static int walk_items(json_t *v, const wh_inject_field *f, const wh_inject_type *owner, const check_path *path,
                      decode_walk *w);

/* WH_INJECT_SHAPE_CHECK=1 (read before main; the tests set it): every copy
 * of a mold that a walk skips as noted clean is walked as a copy of its own
 * first, and a walk that is not clean aborts naming its type. */
static int shape_check;
__attribute__((constructor)) static void shape_check_read(void)
{
    const char *v = getenv("WH_INJECT_SHAPE_CHECK");
    shape_check = v != NULL && v[0] == '1';
}

/* The walk of `v`, a copy of mold `m` (an object of `type`, or else a list
 * of field `f` in an object of `owner`), in a walk that drops: skipped when
 * the mold's tree was walked clean as such before (no type error, nothing
 * dropped: the walk would change nothing and find nothing); else walked,
 * and whether that walk was clean noted in the mold.  A walk's result is a
 * function of the tree and its type alone (`up` only names the path in
 * errors), and the caller of wh_inject_go_decode_molded edits no copy
 * between its making and the walk. */
static __attribute__((noinline)) int walk_copy(json_t *v, const wh_json_mold *m, const wh_inject_type *type,
                                               const wh_inject_field *f, const wh_inject_type *owner,
                                               const check_path *path, decode_walk *w)
{
    const void *key = type != NULL ? (const void *)type : (const void *)f;
    size_t fails = w->fails, drops = w->drops;
    unsigned bit;
    int noted = wh_json_mold_note(m, key, &bit), stop, leaf = 0;

    if (noted && bit) {
        if (shape_check) {
            json_t *copy = wh_inject_json_copy(v);
            wh_err err;
            decode_walk cw = {1, WH_OK, &err, NULL, 0, 0, 0};
            if (type != NULL)
                walk_object(copy, type, path, &cw, &leaf);
            else
                walk_items(copy, f, owner, path, &cw);
            if (cw.fails != 0 || cw.drops != 0) {
                fprintf(stderr, "wh_inject_go_decode_molded: a copy noted clean as %s is not\n",
                        type != NULL ? type->name : f->name);
                abort();
            }
            json_decref(copy);
        }
        return 0;
    }
    stop = type != NULL ? walk_object(v, type, path, w, &leaf) : walk_items(v, f, owner, path, w);
    if (!noted)
        wh_json_mold_set_note(m, key, w->fails == fails && w->drops == drops);
    return stop;
}

/* The check of the items of list `v` of field `f` (a WH_K_LIST or WH_K_PLIST;
 * `path` names it), recording the stable leaves among them when the walk
 * wants them: one loop per kind, so that each item costs one test. */
static int walk_items(json_t *v, const wh_inject_field *f, const wh_inject_type *owner, const check_path *path,
                      decode_walk *w)
{
    const wh_inject_type *type = f->kind == WH_K_LIST ? f->type : NULL; /* the items' struct, if any */
    const char *want = f->kind == WH_K_PLIST ? "scalar" : type != NULL ? type->name : "object";
    unsigned fills = type != NULL ? wh_inject_schema_fills(type) * WH_F_FILL : 0;
    size_t i, n, first = 0;
    json_t *const *table = wh_json_array_items(v, &n);
    json_t *elem;
    int record, leaf;

    if (table == NULL)
        n = json_array_size(v);
    if ((record = w->leaves != NULL && type != NULL && n != 0))
        first = leaves_add_list(w->leaves, v, n);
    for (i = 0; i < n; i++) {
        elem = table != NULL ? table[i] : json_array_get(v, i);
        leaf = 0;
        switch (json_typeof(elem)) {
        case JSON_NULL:
            break;
        case JSON_OBJECT:
            if (type != NULL) {
                const wh_json_mold *m;
                if (w->molds && (m = wh_json_mold_copy_of(elem)) != NULL) { /* (not in a walk for leaves) */
                    if (walk_copy(elem, m, type, NULL, owner, path, w))
                        return 1;
                } else if ((leaf = flat_item(elem, type, fills)) < 0 &&
                           ((leaf = 0), walk_object(elem, type, path, w, &leaf))) {
                    return 1;
                }
            } else if (f->kind == WH_K_PLIST && fail(w, "object", owner, path, want)) {
                return 1;
            }
            break;
        case JSON_ARRAY:
            if (fail(w, "array", owner, path, want))
                return 1;
            break;
        default:
            if (f->kind == WH_K_LIST && fail(w, wh_go_json_kind(elem), owner, path, want))
                return 1;
            break;
        }
        if (record) /* the items of lists inside elem may have moved the table: index it anew */
            w->leaves->items[first + i] = leaf ? elem : NULL;
    }
    return 0;
}

/* The check of a value of field `f` (key `key` of an object of type `owner`
 * under `up`) that is a struct, list or map, or a scalar the verdict table
 * did not pass: out of line, so that the walk over scalars stays small. */
static __attribute__((noinline)) int walk_field(json_t *v, const wh_inject_field *f, const wh_inject_type *owner,
                                                const check_path *up, const char *key, decode_walk *w)
{
    const check_path here = {up, key}, *path = &here;
    const wh_json_mold *mold;

    if (json_is_null(v))
        return 0; /* a nil pointer, slice or map: every field takes it */
    if (w->molds && (json_is_object(v) || json_is_array(v)) && (mold = wh_json_mold_copy_of(v)) != NULL &&
        (f->kind == WH_K_OBJ ? json_is_object(v) : (f->kind == WH_K_LIST || f->kind == WH_K_PLIST) && json_is_array(v)))
        return walk_copy(v, mold, f->kind == WH_K_OBJ ? f->type : NULL, f, owner, path, w);
    switch (f->kind) {
    case WH_K_STR:
        return json_is_string(v) ? 0 : fail(w, wh_go_json_kind(v), owner, path, "string");
    case WH_K_INT:
        if (json_is_integer(v) || (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v)))
            return 0;
        if (json_is_real(v)) {
            char number[64];
            return fail(w, wh_go_unmarshal_number(json_real_value(v), number, sizeof(number)), owner, path, "int32");
        }
        return fail(w, wh_go_json_kind(v), owner, path, "int32");
    case WH_K_BOOL:
        return json_is_boolean(v) ? 0 : fail(w, wh_go_json_kind(v), owner, path, "bool");
    case WH_K_OBJ:
        return json_is_object(v) ? walk_object(v, f->type, path, w, NULL)
                                 : fail(w, wh_go_json_kind(v), owner, path, f->type->name);
    case WH_K_MAP:
    case WH_K_QMAP: {
        wh_json_member buf[MEMBERS_ON_STACK], *heap = NULL;
        const wh_json_member *m;
        size_t i, n;
        int stop = 0;
        if (!json_is_object(v))
            return fail(w, wh_go_json_kind(v), owner, path, "map[string]string");
        m = wh_json_members(v, buf, MEMBERS_ON_STACK, &heap, &n);
        for (i = 0; i < n && !stop; i++) {
            const json_t *mv = m[i].value;
            if (!json_is_null(mv) && !json_is_string(mv) && !(f->kind == WH_K_QMAP && json_is_number(mv)))
                stop = fail(w, wh_go_json_kind(mv), owner, path, "string");
        }
        free(heap);
        return stop;
    }
    case WH_K_LIST:
    case WH_K_PLIST:
        if (!json_is_array(v))
            return fail(w, wh_go_json_kind(v), owner, path,
                        f->kind == WH_K_LIST && f->type != NULL ? f->type->name : "list");
        return walk_items(v, f, owner, path, w);
    default: /* WH_K_PTR, WH_K_ANY, WH_K_QTY: any JSON value */
        return 0;
    }
}

/* `leaf` (NULL: not asked) receives whether `value` is a stable leaf. */
static int walk_object(json_t *value, const wh_inject_type *type, const check_path *up, decode_walk *w, int *leaf)
{
    const wh_inject_field *f;
    unsigned at = 0, fills = wh_inject_schema_fills(type) * WH_F_FILL;
    int keeps = leaf != NULL, stop = 0;
    wh_json_member buf[MEMBERS_ON_STACK], *heap = NULL;
    size_t i, n = 0;
    const wh_json_member *m = NULL;
    /* through jansson's layout when known (a member may be deleted, its pair
     * with it: the next pair is read first), else a snapshot */
    const struct wh_json_list_layout *head = NULL, *l = NULL, *next = NULL;

    if (wh_json_object_layout_known)
        head = &((const struct wh_json_object_layout *)value)->ordered_list, next = head->next;
    else
        m = wh_json_members(value, buf, MEMBERS_ON_STACK, &heap, &n);
    for (i = 0; !stop && (head != NULL ? (l = next) != head : i < n); i++) {
        const char *key;
        json_t *v;
        size_t len;
        if (head != NULL) {
            const struct wh_json_pair_layout *pair = wh_json_pair_at(l);
            next = l->next;
            key = pair->key, len = pair->key_len, v = pair->value;
        } else {
            key = m[i].key, len = m[i].len, v = m[i].value;
        }
        if ((f = wh_inject_schema_fieldn_at(type, &at, key, len)) == NULL) {
            keeps = keeps && leaf_keeps(NULL, v);
            if (w->drop && type->closed && key[0] != '$') {
                json_object_deln(value, key, len);
                w->drops++;
            }
            continue;
        }
        fills -= f->flags & WH_F_FILL;
        switch (WH_INJECT_SCHEMA_GO_TABLE ? verdicts[f->kind][f->flags & WH_F_OMIT][json_typeof(v)] : V_FIELD) {
        case V_KEEP:
            break;
        case V_PASS:
            keeps = 0;
            break;
        case V_STRING:
            keeps = keeps && json_string_length(v) != 0;
            break;
        case V_INTEGER:
            keeps = keeps && json_integer_value(v) != 0;
            break;
        default:
            keeps = keeps && leaf_keeps(f, v);
            stop = walk_field(v, f, type, up, key, w);
            break;
        }
    }
    if (heap != NULL)
        free(heap);
    if (leaf != NULL) /* the round trip would add the fill fields it lacks */
        *leaf = keeps && fills == 0;
    return stop;
}

wh_code wh_inject_go_decode_molded(json_t *value, const wh_inject_type *type, wh_err *err)
{
    decode_walk w = {1, WH_OK, err, NULL, 1, 0, 0};

    if (!json_is_object(value))
        return type_error(err, wh_go_json_kind(value), NULL, NULL, type->name);
    walk_object(value, type, NULL, &w, NULL);
    return w.rc;
}

wh_code wh_inject_go_decode(json_t *value, const wh_inject_type *type, int drop, wh_inject_go_leaves **leaves,
                            wh_err *err)
{
    decode_walk w = {drop, WH_OK, err, NULL, 0, 0, 0};

    if (leaves != NULL)
        *leaves = NULL;
    if (!json_is_object(value))
        return type_error(err, wh_go_json_kind(value), NULL, NULL, type->name);
    if (leaves != NULL)
        w.leaves = wh_calloc(1, sizeof(*w.leaves));
    walk_object(value, type, NULL, &w, NULL);
    if (leaves != NULL && w.rc == WH_OK)
        *leaves = w.leaves;
    else
        wh_inject_go_leaves_free(w.leaves);
    return w.rc;
}
