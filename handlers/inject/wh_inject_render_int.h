/*
 * wh_inject_render_int.h - internals shared by the render side's files
 * (not part of the interface with the merge side).
 */
#ifndef WH_INJECT_RENDER_INT_H
#define WH_INJECT_RENDER_INT_H

#include <jansson.h>
#include <stdatomic.h>

#include "wh_buf.h"
#include "wh_inject_render.h"
#include "wh_result.h"
#include "wh_tmpl.h"
#include "wh_yaml.h"

struct wh_inject_revision {
    atomic_int refs;
    char *name;
    char *policy;
    json_t *config;                    /* the parsed config document */
    json_t *default_templates;         /* array of strings */
    json_t *aliases;                   /* object name -> array of names */
    json_t *never_selectors;           /* array */
    json_t *always_selectors;          /* array */
    json_t *injected_annotations;      /* object */
    json_t *values;                    /* object */
    json_t *mesh;                      /* DefaultMeshConfig with the mesh file applied */
    json_t *template_names;            /* sorted array of the names in `templates` */
    wh_inject_release release;         /* the Istio release whose behaviour applies */
    struct wh_inject_tmpls *templates; /* every template parsed, each its own set */
};

/* The parsed template `name` of a revision, or NULL. */
const wh_tmpl_set *wh_inject_revision_template(const wh_inject_revision *rev, const char *name);

/* ---- Go-compatible JSON text (encoding/json: <,>,& escaped, floats as Go
 * prints them, object keys in the json_t's order). */
wh_code wh_inject_gojson(const json_t *v, wh_buf *out);
/* A string (an object key) as encoding/json quotes it. */
wh_code wh_inject_gojson_string(const char *s, size_t len, wh_buf *out);
/* Go's strconv.FormatFloat(f, 'g'-ish, -1) as %v prints a float64. */
void wh_inject_format_float(double f, char *buf, size_t size);

/* ---- Mesh and proxy config (wh_inject_proxyconfig.c) */
/* Istio's DefaultProxyConfig / DefaultMeshConfig of a release (NULL: the newest). */
json_t *wh_inject_default_proxy_config(const wh_inject_release *rel);
json_t *wh_inject_default_mesh(const wh_inject_release *rel);
/* Apply a mesh document onto `mesh` (DefaultMeshConfig) as Istio's
 * ApplyMeshConfig does. */
wh_code wh_inject_mesh_apply(json_t *mesh, const json_t *doc, wh_err *err);
/* Overlay a ProxyConfig document onto `pc` (fields replace, proxyMetadata
 * merges by key) after normalising it (enum names, durations); errors in
 * protojson's spirit. */
wh_code wh_inject_proxy_config_apply(json_t *pc, const json_t *doc, wh_err *err);
/* Istio's agent-side ProxyConfig validation; NULL when valid, else a new
 * message (caller frees). */
char *wh_inject_proxy_config_invalid(const json_t *pc);
/* protoToJSON: defaults cleared, fields in .proto order, compact. */
wh_code wh_inject_proxy_config_json(const json_t *pc, const wh_inject_release *rel, wh_buf *out);
/* Enum value name of interceptionMode ("REDIRECT" when unset). */
const char *wh_inject_interception_mode(const json_t *pc);

/* ---- Annotation validation (wh_inject_validate.c): NULL when valid,
 * else istiod's multi-error text (caller frees). */
char *wh_inject_validate_annotations(const json_t *annotations, const wh_inject_release *rel);

/* ---- Label selectors (wh_inject_decide.c) */
/* 1 if the metav1.LabelSelector matches `labels`; 0 if not; -1 if invalid.
 * An empty selector never matches (istiod's injection semantics). */
int wh_inject_selector_matches(const json_t *selector, const json_t *labels);

/* ---- Derived inputs (wh_inject_derive.c) */
typedef struct wh_inject_owner {
    char *name, *namespace_, *kind, *api_version;
} wh_inject_owner;
wh_code wh_inject_deploy_meta_of(const json_t *pod, wh_inject_owner *out);
void wh_inject_owner_clear(wh_inject_owner *o);
/* ProxyImage / ProxyInitImage (3.2.3); malloc'd. */
char *wh_inject_image(const json_t *values, const char *name_key, const char *image_type, const json_t *annotations);
/* OpenShift UID/GID from a Namespace object (3.2.5). */
void wh_inject_openshift_ids(const json_t *ns, long long *uid, long long *gid);
/* 3.1 step 4: a copy of `pod` with a previous injection removed. */
json_t *wh_inject_strip(const json_t *pod, int status_port);
/* 3.1 step 5: the template names to render (new array) or an error. */
wh_code wh_inject_select_templates(const wh_inject_revision *rev, const json_t *annotations, json_t **out, wh_err *err);

/* ---- Template data and functions (wh_inject_data.c, wh_inject_funcs.c) */
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
extern const wh_tmpl_func wh_inject_funcs[];
extern const size_t wh_inject_nfuncs;

/* ---- Small JSON helpers */
const char *wh_inject_jstr(const json_t *obj, const char *key); /* NULL if absent / not a string */
const json_t *wh_inject_jpath(const json_t *v, ...) __attribute__((sentinel));

#endif
