/*
 * wh_inject_post.h - steps 6 to 8 of the injection pipeline (spec 3.1):
 * merging the rendered overlays into the pod, re-applying the user's own
 * versions of injected containers, and istiod's post-processing.  Pure JSON
 * in, JSON out; the render side supplies the overlays and derived inputs.
 */
#ifndef WH_INJECT_POST_H
#define WH_INJECT_POST_H

#include <jansson.h>

#include "wh_inject_render.h"
#include "wh_result.h"

/* Step 6: apply every overlay (in order) to an empty template pod and to a
 * copy of `merge_pod`, moving the pod's own istio-proxy to initContainers
 * first when `native` and the template put it there.  The overlays are used
 * up: what only they hold is moved into *merged (wh_inject_smp_move), so the
 * caller may only release them afterwards.  *merged and *tmpl are
 * new references; *tmpl holds only what later steps read of the template pod:
 * its containers, init containers, volumes and image pull secrets, by name.  The Go round trip (zero fields,
 * quantities) is left to wh_inject_postprocess: applying it once at the end gives the same pod. */
wh_code wh_inject_apply_overlays(const json_t *merge_pod, json_t *overlays, const char *const *names, int native,
                                 json_t **merged, json_t **tmpl, wh_err *err);

/* Step 7 (3.8): re-apply the containers of `original` (and of its
 * proxy.istio.io/overrides annotation) that the template also defines, record
 * them in proxy.istio.io/overrides, fix the init container's -u / UIDs. */
wh_code wh_inject_reapply_overrides(json_t *pod, const json_t *original, const json_t *tmpl, int tproxy, wh_err *err);

typedef struct wh_inject_post_params {
    const wh_inject_revision *rev;
    const wh_inject_rendered *r;
    const json_t *original; /* the pod before injection (annotations, status) */
    const json_t *tmpl;     /* the template pod (for the status annotation) */
    int kube_inject;        /* istioctl kube-inject: no injectedAnnotations */
} wh_inject_post_params;

/* Step 8 (3.10): cluster/network envs, Prometheus merge, secure port, probe
 * rewrite, metadata (status, injectedAnnotations, network), reordering. */
wh_code wh_inject_postprocess(json_t *pod, const wh_inject_post_params *p, wh_err *err);

#endif
