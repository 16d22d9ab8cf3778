/*
 * wh_inject_merge.h - strategic merge patch and the Go round trip, on JSON.
 *
 * istiod applies every rendered template to the pod with Kubernetes'
 * strategic merge patch (merge keys from the Pod type, `$patch` directives,
 * nulls delete) and then decodes the result into a Go Pod, which drops
 * zero-valued omitempty fields and canonicalises quantities.  These functions
 * do the same on jansson values so that the result is what istiod produces.
 */
#ifndef WH_INJECT_MERGE_H
#define WH_INJECT_MERGE_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_inject_schema.h"
#include "wh_result.h"

/* A deep copy of `value` whose containers are new and whose scalars are
 * shared with `value` (new reference; NULL when out of memory).  Nothing on
 * the injection path changes a scalar in place, so sharing them is safe, and
 * it is several times cheaper than json_deep_copy, which allocates every
 * string again and formats each container's address for a loop check
 * (values decoded from text have no loops). */
json_t *wh_inject_json_copy(const json_t *value);

/* Apply `patch` (an object; borrowed) to `target` (an object, modified in
 * place) as a strategic merge patch for Go type `type` (NULL: plain JSON
 * merge where lists are replaced).  Items of merge-keyed lists keep
 * Kubernetes' order: patch items in patch order with the target's other items
 * interleaved where the original order says so. */
wh_code wh_inject_smp(json_t *target, const json_t *patch, const wh_inject_type *type, wh_err *err);
/* The same, for a patch the caller gives up: the parts of `patch` that it
 * alone holds (reference count 1 from `patch` down) and that would come out
 * unchanged are moved into `target` instead of copied, and may be changed
 * there later.  The caller must not use `patch` afterwards, only release
 * its reference. */
wh_code wh_inject_smp_move(json_t *target, json_t *patch, const wh_inject_type *type, wh_err *err);

/* Emulate decoding `value` into Go type `type` and encoding it again: drops
 * nulls and zero-valued omitempty fields, canonicalises quantities.  Fields
 * the schema does not know are kept unchanged.  Modifies `value` in place. */
wh_code wh_inject_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err);
/* Drops, in place, the keys a rendered overlay holds where its Go type has
 * no such field (types marked `closed`), as istiod's decoding into
 * corev1.Pod does: a template of Istio 1.1x prints `fsGroup` into a
 * container's securityContext, which the golden pods do not have.
 * Strategic-merge directives (`$...`) are kept. */
void wh_inject_drop_unknown_fields(json_t *value, const wh_inject_type *type);

/* Check that `value` decodes as Go type `type`: every known field has the
 * JSON type Go expects (objects, lists, strings, integers, booleans).  The
 * error names the field path, like Go's "cannot unmarshal string into Go
 * struct field PodSpec.spec.containers of type []v1.Container". */
wh_code wh_inject_go_check(const json_t *value, const wh_inject_type *type, wh_err *err);

/* What Go's json.Marshal prints for `value` decoded as `type`: keys in
 * struct field order, map keys sorted, unknown and zero omitempty fields
 * dropped, always-present structs added.  New reference, NULL when out of
 * memory.  Call wh_inject_go_roundtrip first for canonical quantities. */
json_t *wh_inject_go_ordered(const json_t *value, const wh_inject_type *type);

/* Canonical form of a Kubernetes quantity (`2000m` -> `2`, `1024Mi` -> `1Gi`).
 * Writes a NUL-terminated string into out (at least 64 bytes).  Fails with
 * WH_E_INVALID when `text` is not a quantity. */
wh_code wh_inject_quantity_canonical(const char *text, char *out, size_t out_len, wh_err *err);
/* A CPU quantity in whole cores, rounded up the way istiod sizes proxy
 * concurrency (milli value rounded up, then ceil(milli / 1000)): `500m` -> 1,
 * `6500m` -> 7.  WH_E_INVALID when `text` is not a quantity or is too large. */
wh_code wh_inject_quantity_cores(const char *text, long long *out);

#endif
