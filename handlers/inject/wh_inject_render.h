/*
 * wh_inject_render.h - stage 3 of injection: the revision's templates run
 * against the pod, each result parsed into a JSON overlay.
 *
 * wh_inject_render.c drives it (istiod's RunTemplate): derive the template
 * inputs from the pod and the revision (wh_inject_render_derive.c), validate
 * the annotations (wh_inject_render_validate.c), strip a previous injection,
 * build the template data (wh_inject_render_data.c: SidecarTemplateData
 * with Go field names over the pod's JSON) and run every selected template
 * with Sprig and Istio's functions (wh_inject_render_funcs.c), then parse
 * each output: the `overlay X` function hands an overlay over as data, JSON
 * output is read without the YAML parser, anything else is YAML.  What the
 * later stages need of the inputs (proxy config, envs, native, ...) comes
 * out in wh_inject_rendered.
 *
 * Errors: wh_inject_render's message is what istiod's RunTemplate returns
 * (e.g. the annotation multi-error, `requested template "x" not found; have
 * a, b`, a template execution error); the pipeline adds istiod's prefix
 * "failed to run injection template: ".
 */
#ifndef WH_INJECT_RENDER_H
#define WH_INJECT_RENDER_H

#include <jansson.h>
#include <stddef.h>

#include "wh_buf.h"
#include "wh_inject_revision.h"
#include "wh_inject_settings.h"
#include "wh_result.h"
#include "wh_tmpl.h"

/* Owner of the pod as templates see it (.TypeMeta / .DeploymentMeta). */
typedef struct wh_inject_deploy_meta {
    const char *name;
    const char *namespace_;
    const char *kind;        /* e.g. "Deployment" */
    const char *api_version; /* e.g. "apps/v1" */
} wh_inject_deploy_meta;

typedef struct wh_inject_input {
    const wh_inject_revision *rev;       /* required */
    const wh_inject_settings *settings;  /* NULL: defaults */
    const json_t *pod;                   /* the original pod: namespace filled, managedFields dropped */
    const json_t *url_envs;              /* from wh_inject_path_parse, or NULL */
    const json_t *namespace_obj;         /* the pod's Namespace (OpenShift UID/GID), or NULL */
    const char *revision;                /* .Revision; NULL: the revision's name ("" for kube-inject) */
    const wh_inject_deploy_meta *deploy; /* kube-inject: from the top-level object; NULL: from the pod */
    const json_t *proxyconfigs;          /* ProxyConfig resources (wh_inject_cluster_view), or NULL */
    int kube_inject;                     /* istioctl kube-inject: none of the webhook's OpenShift handling */
} wh_inject_input;

typedef struct wh_inject_rendered {
    size_t n;             /* templates rendered, in order, aliases expanded */
    char **names;         /* n template names */
    json_t *overlays;     /* array of n overlays (objects; an empty render is {}) */
    json_t *merge_pod;    /* the merge target: the original pod (OpenShift: own istio-proxy runAsUser/Group
                             reset as in 3.8.4) - a new reference */
    json_t *template_pod; /* the stripped pod the templates saw (3.1 step 4) */
    json_t *proxy_config; /* effective ProxyConfig, proto JSON names, defaults filled, enums by name */
    json_t *proxy_envs;   /* 3.10.1 map: URL envs + cluster + network (object name -> value) */
    char *network;        /* network for the topology.istio.io/network label, or NULL */
    char *revision;       /* status "revision" and istio.io/rev: input revision or "default" */
    int native;           /* native flag of 3.1 step 6 (annotation exactly "true"/"false" wins) */
    int hold;             /* holdApplicationUntilProxyStarts (proxy config OR values) */
    int tproxy;           /* interception mode (annotation, else proxy config) == TPROXY */
    long long proxy_uid, proxy_gid;
} wh_inject_rendered;

/* Run 3.1 steps 1-6a: derive inputs, validate annotations, strip a previous
 * injection, select and render the templates.  On failure `out` is left
 * cleared and err says why (istiod's wording, without its prefix). */
wh_code wh_inject_render(const wh_inject_input *in, wh_inject_rendered *out, wh_err *err);
void wh_inject_rendered_clear(wh_inject_rendered *out);

#endif
