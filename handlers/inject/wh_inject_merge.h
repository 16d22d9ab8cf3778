/*
 * wh_inject_merge.h - stage 5 of injection: the shaped overlays merged into
 * the pod with Kubernetes' strategic merge patch (steps 6 and 7).
 *
 * istiod applies every rendered template to the pod with strategic merge
 * patch (merge keys from the Pod type, `$patch` directives, nulls delete),
 * then re-applies the user's own versions of the containers the template
 * also defines.  wh_inject_merge.c is the patch itself, on jansson values;
 * wh_inject_merge_overlays.c applies the overlays and the overrides.
 */
#ifndef WH_INJECT_MERGE_H
#define WH_INJECT_MERGE_H

#include <jansson.h>

#include "wh_inject_release.h"
#include "wh_inject_schema.h"
#include "wh_inject_shape.h"
#include "wh_result.h"

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

/* Step 6: apply every overlay (shaped, in order) to an empty template pod
 * and to a copy of `merge_pod` that shares with it the list items `leaves`
 * (wh_inject_decode_pod's; NULL: none) found to be stable leaves, and the
 * lists (but container lists) all of whose items are, moving the pod's own
 * istio-proxy to initContainers first when `native` and the template put it
 * there.  After
 * each overlay's merge, its shape's type error (shaped[i]; shaped NULL:
 * none) fails the injection, as istiod's decoding of the patched pod does
 * after every template: a merge error of the same overlay comes first.
 * The overlays are used up: what only they hold is moved into *merged
 * (wh_inject_smp_move), so the caller may only release them afterwards.
 * *merged and *tmpl are new references; of the template pod later steps
 * read only the names of its containers, init containers, volumes and
 * image pull secrets (and the containers' securityContext when `release`,
 * NULL: the newest, has WH_REL_OVERRIDE_RESETS_FOREIGN_UID): *tmpl's items
 * hold those, and may hold more (an overlay's item, shared with *merged),
 * to be neither read nor changed.
 * The Go round trip (zero fields, quantities) is left to
 * wh_inject_postprocess: applying it once at the end gives the same pod. */
wh_code wh_inject_apply_overlays(const json_t *merge_pod, wh_inject_go_leaves *leaves, json_t *overlays,
                                 const char *const *names, const wh_inject_shaped *shaped, int native,
                                 const wh_inject_release *release, json_t **merged, json_t **tmpl, wh_err *err);

/* Step 7 (3.8): re-apply the containers of `original` (and of its
 * proxy.istio.io/overrides annotation) that the template also defines, record
 * them in proxy.istio.io/overrides, fix the init container's -u / UIDs.
 * `release` (NULL: the newest) decides WH_REL_OVERRIDE_RESETS_FOREIGN_UID. */
wh_code wh_inject_reapply_overrides(json_t *pod, const json_t *original, const json_t *tmpl, int tproxy,
                                    const wh_inject_release *release, wh_err *err);

#endif
