/*
 * wh_inject.h - sidecar injection end to end, the one code path shared by
 * the /inject webhook and `webhookctl kube-inject`.
 *
 * wh_inject_pod() takes a pod and a revision and returns the injected pod
 * (or why it was skipped); wh_inject_admit() wraps it as the admit function
 * of the AdmissionReview codec and answers a JSON Patch.  Both run the
 * stages below in order (wh_inject_pipeline.c); each stage has one header
 * and includes only the headers of the stages before it, plus the shared
 * inputs (wh_inject_revision.h: a loaded revision and the registry;
 * wh_inject_settings.h; wh_inject_proxyconfig.h: mesh and proxy config)
 * and helpers (wh_inject_pod.h, wh_inject_schema.h: the Pod type table and
 * Go's decoding over it, wh_inject_quantity.h):
 *
 *   1 decode  wh_inject_decode.h   URL path; the pod decoded as corev1.Pod
 *   2 decide  wh_inject_decide.h   istiod's injectRequired
 *   3 render  wh_inject_render.h   template data, templates, YAML -> overlays
 *   4 shape   wh_inject_shape.h    each overlay as corev1.Pod decodes it
 *   5 merge   wh_inject_merge.h    strategic merge patch, user overrides
 *   6 post    wh_inject_post.h     istiod's post-processing, Go round trip
 *   7 diff    wh_inject_diff.h     JSON Patch from the request's pod
 *   8 encode  wh_inject_admit      the patch as Go JSON; base64 in the codec
 *
 * CONTRIBUTING.md ("handlers/inject") says which file to change for what.
 */
#ifndef WH_INJECT_H
#define WH_INJECT_H

#include <jansson.h>

#include "wh_admission.h"
#include "wh_inject_render.h"
#include "wh_inject_revision.h"
#include "wh_inject_revision_load.h"
#include "wh_result.h"

typedef struct wh_inject_pod_request {
    const wh_inject_revision *rev;       /* required (borrowed) */
    const wh_inject_settings *settings;  /* NULL: defaults */
    const json_t *pod;                   /* the pod as received (borrowed, not modified) */
    const char *namespace_;              /* request.namespace: fills an empty metadata.namespace; NULL ok */
    const json_t *url_envs;              /* istiod's URL key/values (wh_inject_path_parse), or NULL */
    const json_t *namespace_obj;         /* the pod's Namespace object (OpenShift), or NULL */
    const char *revision;                /* NULL: the revision's name; kube-inject passes "" */
    const wh_inject_deploy_meta *deploy; /* kube-inject: the top-level object; NULL: from the pod */
    const json_t *proxyconfigs;          /* ProxyConfig resources (wh_inject_cluster_view), or NULL */
    int kube_inject;                     /* istioctl's variant of the decision, no injectedAnnotations */
} wh_inject_pod_request;

typedef struct wh_inject_pod_result {
    json_t *original;        /* the pod, namespace filled, managedFields dropped (new reference) */
    json_t *final;           /* the injected pod (new reference); NULL when skipped */
    const char *skip_reason; /* static text when skipped */
} wh_inject_pod_result;

/* Run the pipeline (CONTRIBUTING.md's stage table).  A skip is a success with final == NULL.
 * Errors carry istiod's wording (template errors prefixed with "failed to
 * run injection template: "). */
wh_code wh_inject_pod(const wh_inject_pod_request *req, wh_inject_pod_result *res, wh_err *err);
void wh_inject_pod_result_clear(wh_inject_pod_result *res);

/* What one admission call did (filled by wh_inject_admit for metrics). */
typedef struct wh_inject_call {
    wh_inject_registry *registry;       /* borrowed */
    const wh_inject_settings *settings; /* borrowed */
    const json_t *namespaces;           /* name -> Namespace (OpenShift UID/GID), or NULL (borrowed) */
    const json_t *proxyconfigs;         /* ProxyConfig resources, oldest first, or NULL (borrowed) */
    char revision[64];                  /* the revision that answered ("" when none) */
    int skipped, failed;
} wh_inject_call;

/* Admit function for wh_admission_serve; ctx is a wh_inject_call. */
wh_code wh_inject_admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err);

#endif
