/*
 * wh_inject_render_int.h - what the render stage's files share (stage 3 of
 * injection, wh_inject_render.h): annotation validation
 * (wh_inject_render_validate.c), inputs derived from the pod
 * (wh_inject_render_derive.c) and the template data
 * (wh_inject_render_data.c), which wh_inject_render.c drives and Istio's
 * template functions (wh_inject_render_funcs.c) read.  None of them
 * includes wh_inject_render.h: the stage's driver sits above its parts.
 */
#ifndef WH_INJECT_RENDER_INT_H
#define WH_INJECT_RENDER_INT_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_inject_release.h"
#include "wh_inject_revision.h"
#include "wh_inject_settings.h"
#include "wh_result.h"
#include "wh_tmpl.h"

/* ---- Annotation validation (wh_inject_render_validate.c): NULL when valid,
 * else istiod's multi-error text (caller frees), its length in *len: it
 * quotes the values whole, a NUL included. */
char *wh_inject_validate_annotations(const json_t *annotations, const wh_inject_release *rel, size_t *len);

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
/* ProxyImage for a pod whose effective proxy config is `pc`. */
char *wh_inject_proxy_image(const json_t *values, const json_t *pc, const json_t *annotations,
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
    const json_t *default_pc;    /* the revision's mesh.defaultConfig, and its protoToJSON */
    const char *default_pc_json; /* (wh_inject_revision.default_pc_json) */
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
    const json_t *annotations;          /* object_meta's, once `annotation` has looked them up */
    int annotations_known;
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
