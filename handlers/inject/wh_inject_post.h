/*
 * wh_inject_post.h - stage 6 of injection: istiod's post-processing of the
 * merged pod (step 8): cluster and network envs, Prometheus merge, secure
 * port, probe rewrite, metadata (status, injectedAnnotations, network),
 * reordering, and the Go round trip at the end.  Pure JSON in, JSON out.
 */
#ifndef WH_INJECT_POST_H
#define WH_INJECT_POST_H

#include <jansson.h>

#include "wh_inject_render.h"
#include "wh_result.h"

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
