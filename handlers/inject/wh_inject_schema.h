/*
 * wh_inject_schema.h - the shape of a core/v1 Pod as Go sees it, and Go's
 * encoding/json over it.
 *
 * Istio merges template overlays with Kubernetes' strategic merge patch, which
 * needs each list's merge key, decodes every pod and overlay into the Go
 * struct (wrong JSON types fail, unknown keys of closed types vanish) and
 * round-trips the result, which drops zero-valued `omitempty` fields and
 * canonicalises quantities.  The table (wh_inject_schema.c) carries these
 * facts for the Pod fields injection touches; fields it does not know are
 * treated as opaque JSON.  wh_inject_schema_go.c walks values against it.
 * Not a stage of the pipeline: the stages share it (see wh_inject.h).
 */
#ifndef WH_INJECT_SCHEMA_H
#define WH_INJECT_SCHEMA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wh_result.h"

typedef enum wh_inject_kind {
    WH_K_STR,   /* string value field */
    WH_K_INT,   /* integer value field */
    WH_K_BOOL,  /* bool value field */
    WH_K_PTR,   /* pointer to a scalar: any non-null value is kept (false, 0 too) */
    WH_K_ANY,   /* opaque (IntOrString, RawExtension, unknown): kept as is */
    WH_K_OBJ,   /* struct of type `type` */
    WH_K_LIST,  /* list of struct `type`: merged by `merge_key`, atomic when NULL */
    WH_K_PLIST, /* list of scalars: union when WH_F_MERGE, else atomic */
    WH_K_MAP,   /* map[string]string: merged key by key */
    WH_K_QTY,   /* resource.Quantity */
    WH_K_QMAP,  /* map[string]Quantity (ResourceList) */
} wh_inject_kind;

enum {
    WH_F_OMIT = 1,   /* omitempty on a scalar: Go drops it when empty (wh_go_is_empty: "" / 0 / false) */
    WH_F_MERGE = 2,  /* patchStrategy merge on a scalar list */
    WH_F_ALWAYS = 4, /* a struct without omitempty: Go always prints it (`"resources":{}`) */
    WH_F_FILL = 8,   /* Go prints this field even when absent from the input (a zero
                      * int/bool or a struct holding such fields, e.g. DaemonSet status) */
    WH_F_INT64 = 16  /* an int64 (ints are int32 otherwise) */
};

typedef struct wh_inject_type wh_inject_type;

/* One field of a Go struct: the one description of it injection has.  The
 * stages read the JSON name, kind, omitempty and merge key; the templates
 * (wh_inject_render_data.c) see the field under its Go name. */
typedef struct wh_inject_field {
    const char *name; /* JSON name */
    unsigned char kind;
    unsigned char flags;
    unsigned char len;          /* strlen(name) */
    const char *merge_key;      /* patchMergeKey of a WH_K_LIST (NULL: atomic list) */
    const wh_inject_type *type; /* WH_K_OBJ / WH_K_LIST: the element's struct */
    const char *go;             /* Go field name; NULL: the JSON name with its first letter upper-cased */
} wh_inject_field;

/* A type's fields by JSON name: a perfect hash, slot = (signature * seed)
 * >> (32 - bits) with the signature of wh_inject_schema_signature, slot[]
 * holding the field's index + 1 (0: none); and the order keys came in last
 * time, after[i] the index of the field that followed field i - 1 (after[0]:
 * the first key), so that a walk over objects printed in one order (the
 * API server's: the Go struct's; a template's: its own) finds each key with
 * one compare.  wh_inject_schema.c builds the hash of every type before
 * main() runs; after[] is a hint, read and written with relaxed atomics by
 * any thread (a stale entry costs a hash lookup, never a wrong field). */
#define WH_INJECT_TYPE_MAX_FIELDS 63
typedef struct wh_inject_type_index {
    unsigned char bits;  /* 0: no perfect table within 256 slots: the names are scanned */
    unsigned char nfill; /* how many fields carry WH_F_FILL */
    unsigned char nfields;
    unsigned seed;
    unsigned char slot[256];
    unsigned char after[WH_INJECT_TYPE_MAX_FIELDS + 1];
} wh_inject_type_index;

struct wh_inject_type {
    const char *name;
    const wh_inject_field *fields; /* terminated by a NULL name */
    int closed;                    /* `fields` is every field of the Go type: decoding drops any other key */
    wh_inject_type_index *index;   /* the table's storage, one per type */
};

extern const wh_inject_type wh_inject_type_pod;
extern const wh_inject_type wh_inject_type_pod_spec;
extern const wh_inject_type wh_inject_type_container;
extern const wh_inject_type wh_inject_type_container_port;
extern const wh_inject_type wh_inject_type_object_meta;
extern const wh_inject_type wh_inject_type_http_get;
extern const wh_inject_type wh_inject_type_tcp_socket;
extern const wh_inject_type wh_inject_type_grpc;

/* The Go type of a top-level workload object kube-inject handles (Deployment,
 * DaemonSet, StatefulSet, ReplicaSet, ReplicationController, Job, CronJob,
 * DeploymentConfig, Pod), or NULL. */
const wh_inject_type *wh_inject_schema_workload(const char *kind);

/* The Go name of `f` into buf (at least 64 bytes); returns it. */
const char *wh_inject_schema_go_name(const wh_inject_field *f, char *buf, size_t size);

/* The field lookup is on every key of every pod, overlay and injected pod
 * (type check, merge, round trip): its common path is inline, the scan out
 * of line.  The index is built for every type reachable from the Pod and the
 * workload types before main() (wh_inject_schema.c). */
const wh_inject_field *wh_inject_schema_scan(const wh_inject_type *type, const char *name, size_t len);

/* The name's length mixed with its first, middle and last bytes (len >= 1). */
static inline unsigned wh_inject_schema_signature(const char *name, size_t len)
{
    return ((unsigned)len * 0x9e3779b1u) ^ ((unsigned)(unsigned char)name[0] << 8) ^
           ((unsigned)(unsigned char)name[len >> 1] << 16) ^ ((unsigned)(unsigned char)name[len - 1] << 24);
}

/* Whether the len bytes at a and b are equal: overlapping word loads for the
 * short names of the table, memcmp beyond 16 bytes. */
static inline int wh_inject_schema_same(const char *a, const char *b, size_t len)
{
    uint64_t x, y, x2, y2;
    uint32_t u, v, u2, v2;

    if (len - 4 < 4) { /* 4..7 bytes (one compare each: unsigned wrap-around) */
        memcpy(&u, a, 4), memcpy(&v, b, 4), memcpy(&u2, a + len - 4, 4), memcpy(&v2, b + len - 4, 4);
        return ((u ^ v) | (u2 ^ v2)) == 0;
    }
    if (len - 8 <= 8) { /* 8..16 */
        memcpy(&x, a, 8), memcpy(&y, b, 8), memcpy(&x2, a + len - 8, 8), memcpy(&y2, b + len - 8, 8);
        return ((x ^ y) | (x2 ^ y2)) == 0;
    }
    return memcmp(a, b, len) == 0;
}

/* The field `name` (len bytes; it need not end there, as
 * json_object_iter_key_len gives it) of `type`, or NULL when unknown (or
 * type is NULL): one slot, one compare. */
static inline __attribute__((always_inline)) const wh_inject_field *
wh_inject_schema_fieldn(const wh_inject_type *type, const char *name, size_t len)
{
    const wh_inject_type_index *ix;
    const wh_inject_field *f;
    unsigned s;

    if (type == NULL || len - 1 > 254) /* names are 1..255 bytes */
        return NULL;
    ix = type->index;
    if (ix->bits == 0)
        return wh_inject_schema_scan(type, name, len);
    if ((s = ix->slot[(wh_inject_schema_signature(name, len) * ix->seed) >> (32 - ix->bits)]) == 0)
        return NULL;
    f = &type->fields[s - 1];
    return f->len == len && wh_inject_schema_same(f->name, name, len) ? f : NULL;
}

/* The same, trying first the field that followed the field at index *at -
 * 1 (*at 0: the start of the object) the last time an object of `type` was
 * walked -- at first the next field of the Go struct, the API server's
 * order -- and remembering what followed this time: a walk over objects
 * printed in one order finds most keys with one compare.  A walk starts an
 * object with *at = 0; a found field sets *at to its index + 1, an unknown
 * key leaves it. */
static inline __attribute__((always_inline)) const wh_inject_field *
wh_inject_schema_fieldn_at(const wh_inject_type *type, unsigned *at, const char *name, size_t len)
{
    wh_inject_type_index *ix;
    const wh_inject_field *f;
    unsigned i;

    if (type == NULL)
        return NULL;
    ix = type->index;
    i = __atomic_load_n(&ix->after[*at], __ATOMIC_RELAXED);
    f = &type->fields[i];
    /* len != 0: the terminating row (len 0) never matches */
    if (len != 0 && f->len == len && wh_inject_schema_same(f->name, name, len)) {
        *at = i + 1;
        return f;
    }
    if ((f = wh_inject_schema_fieldn(type, name, len)) == NULL)
        return NULL;
    i = (unsigned)(f - type->fields);
    __atomic_store_n(&ix->after[*at], (unsigned char)i, __ATOMIC_RELAXED);
    *at = i + 1;
    return f;
}

/* The same from the field before (`prev`; NULL: the start of the object). */
static inline __attribute__((always_inline)) const wh_inject_field *
wh_inject_schema_fieldn_after(const wh_inject_type *type, const wh_inject_field *prev, const char *name, size_t len)
{
    unsigned at = type != NULL && prev != NULL ? (unsigned)(prev - type->fields) + 1 : 0;

    return wh_inject_schema_fieldn_at(type, &at, name, len);
}

/* The same for a NUL-terminated name. */
static inline const wh_inject_field *wh_inject_schema_field(const wh_inject_type *type, const char *name)
{
    return wh_inject_schema_fieldn(type, name, strlen(name));
}

/* How many fields of `type` carry WH_F_FILL. */
static inline unsigned wh_inject_schema_fills(const wh_inject_type *type)
{
    return type->index->nfill;
}

/* ---- Go's encoding/json over the table (wh_inject_schema_go.c) ---- */

/* What the type check of a pod learnt for later stages, so that they ask
 * rather than walk the pod again: which list items are stable leaves, i.e.
 * objects that hold scalars only and that wh_inject_go_roundtrip leaves as
 * they are (no null, no zero omitempty field, no quantity, no field Go fills
 * in).  Such an item may be shared between the request's pod and the
 * injected one rather than copied (wh_inject_apply_overlays). */
typedef struct wh_inject_go_leaves wh_inject_go_leaves;

/* Decode `value` as Go's json.Unmarshal into `type` would: every known
 * field must have the JSON type Go expects (objects, lists, strings,
 * integers, booleans); the error names the field path, like Go's "json:
 * cannot unmarshal string into Go struct field PodSpec.spec.containers of
 * type []v1.Container".  With `drop`, keys a closed type (`closed`) does not
 * have are removed in place, as decoding into corev1.Pod loses them (a
 * template of Istio 1.1x prints `fsGroup` into a container's
 * securityContext), strategic-merge directives (`$...`) excepted, and the
 * whole value is walked (the first error is returned); without it `value`
 * is not modified and the walk stops at the first error.  `leaves` (NULL:
 * not wanted) receives, when the value decodes, the stable leaves among its
 * list items (free with wh_inject_go_leaves_free), else NULL. */
wh_code wh_inject_go_decode(json_t *value, const wh_inject_type *type, int drop, wh_inject_go_leaves **leaves,
                            wh_err *err);
/* wh_inject_go_decode with `drop` and without leaves, for a value that may
 * hold copies of molds (wh_json_mold_copy_of, common/wh_json_arena.h):
 * the walk of a copy, as a struct of a type or a list of a field, is
 * skipped when the walk of the mold's tree as such found nothing to drop
 * and no error, which the first walk of a copy notes in the mold.  The
 * caller keeps copies unedited between their making and this walk (the
 * pipeline: render, then shape); WH_INJECT_SHAPE_CHECK=1 in the
 * environment walks every skipped copy anyway and aborts when that walk is
 * not clean (the tests set it, tests/CMakeLists.txt). */
wh_code wh_inject_go_decode_molded(json_t *value, const wh_inject_type *type, wh_err *err);
/* The items of `list`, a list of struct values inside the value that
 * produced `leaves`, that were stable leaves when it was checked: an array
 * of *n entries, entry i the item then at index i or NULL (not a stable
 * leaf); NULL (and *n 0) for a list the check did not see or `leaves` NULL.
 * Compare an item's address with its entry: a list changed since holds
 * other items there.  Borrowed from `leaves`; fastest asked in the order the
 * lists appear in the value. */
const json_t *const *wh_inject_go_stable_items(wh_inject_go_leaves *leaves, const json_t *list, size_t *n);
void wh_inject_go_leaves_free(wh_inject_go_leaves *leaves);

/* Emulate decoding `value` into Go type `type` and encoding it again: drops
 * nulls and zero-valued `omitempty` fields, canonicalises quantities.  Fields
 * the schema does not know are kept unchanged.  Modifies `value` in place. */
wh_code wh_inject_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err);
/* The same for the injected pod `value` made from the request's pod
 * `pristine` (wh_inject_apply_overlays' merge target): a list item, or a
 * whole list, it still shares with `pristine` is skipped, since the merge
 * target shares only stable leaves (wh_inject_go_stable_items) and lists of
 * them, and no stage edits them in place
 * (tests/inject-merge checks the request's pod stays as it came). */
wh_code wh_inject_go_roundtrip_beside(json_t *value, const json_t *pristine, const wh_inject_type *type, wh_err *err);
/* What Go's json.Marshal prints for `value` decoded as `type`: keys in
 * struct field order, map keys sorted, unknown and zero omitempty fields
 * dropped, always-present structs added.  New reference (value is not
 * NULL).  Call wh_inject_go_roundtrip first for canonical quantities. */
json_t *wh_inject_go_ordered(const json_t *value, const wh_inject_type *type);

#endif
