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

/* ------------------------------------------------------------------------ */
/* Between the render stage's files                                         */

/* ---- Annotation validation (wh_inject_render_validate.c): NULL when valid,
 * else istiod's multi-error text (caller frees). */
char *wh_inject_validate_annotations(const json_t *annotations, const wh_inject_release *rel);

/* ---- Derived inputs (wh_inject_render_derive.c) */
typedef struct wh_inject_owner {
    char *name, *namespace_, *kind, *api_version;
} wh_inject_owner;
void wh_inject_deploy_meta_of(const json_t *pod, wh_inject_owner *out);
void wh_inject_owner_clear(wh_inject_owner *o);
/* ProxyImage / ProxyInitImage (3.2.3); malloc'd.  `image_type`: the
 * effective ProxyConfig's image.imageType, "" when it has an image without
 * a type, NULL when it has no image; with `release` (NULL: the newest) it
 * decides whether values.global.variant applies (WH_REL_PROXY_IMAGE_VARIANT,
 * WH_REL_VARIANT_FILLS_EMPTY_IMAGE_TYPE). */
char *wh_inject_image(const json_t *values, const char *name_key, const char *image_type, const json_t *annotations,
                      const wh_inject_release *release);
/* OpenShift UID/GID from a Namespace object (3.2.5). */
void wh_inject_openshift_ids(const json_t *ns, long long *uid, long long *gid);
/* 3.1 step 4: a copy of `pod` with a previous injection removed. */
json_t *wh_inject_strip(const json_t *pod, int status_port);
/* 3.1 step 5: the template names to render (new array) or an error. */
wh_code wh_inject_select_templates(const wh_inject_revision *rev, const json_t *annotations, json_t **out, wh_err *err);

/* ---- Template data and functions (wh_inject_render_data.c, wh_inject_render_funcs.c) */
typedef struct wh_inject_data {
    const char *type_api_version, *type_kind;
    const char *deploy_name, *deploy_namespace;
    const json_t *object_meta; /* pod metadata (stripped pod) */
    const json_t *spec;        /* pod spec (stripped pod) */
    const json_t *proxy_config;
    const json_t *mesh;
    const json_t *values;
    const char *revision;
    int native;
    const char *proxy_image, *proxy_init_image;
    long long proxy_uid, proxy_gid;
    const char *inbound_mode; /* "passthrough" / "localhost" */
    const char *compliance;
    long long concurrency;              /* EstimatedConcurrency (read by templates of Istio 1.1x) */
    const wh_inject_settings *settings; /* for `env` */
    const wh_inject_release *release;   /* the revision's Istio release */
    json_t *captured;                   /* set by the `overlay` function: the overlay as data */
} wh_inject_data;

wh_tmpl_value wh_inject_data_value(const wh_inject_data *d);
/* The JSON behind a struct value of Go type `go_type` ("v1.ObjectMeta",
 * "v1.Container", ...; NULL: any), or NULL if v is not one. */
const json_t *wh_inject_host_json(const wh_tmpl_value *v, const char *go_type);
int wh_inject_is_proxy_config(const wh_tmpl_value *v);
/* encoding/json of a struct encoded in Go field order (v1.ContainerPort)
 * appended to out; WH_E_NOTFOUND (nothing written) for any other value. */
wh_code wh_inject_struct_gojson(const wh_tmpl_value *v, wh_buf *out);
/* Go's Duration.String() of a *durationpb.Duration value ("0s" for nil). */
wh_code wh_inject_duration_text(const wh_tmpl_value *v, wh_buf *out);

#endif
