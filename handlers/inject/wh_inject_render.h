/*
 * wh_inject_render.h - the seam between the two halves of sidecar injection.
 *
 * RENDER side (this header's implementation, files wh_inject_{revision,
 * registry,embedded,settings,decide,path,derive,proxyconfig,validate,data,
 * funcs,gojson,render}.c): from a pod and a revision's configuration to the
 * rendered template overlays, plus every derived input the MERGE side needs.
 * Templates run with Sprig, Istio's helper functions and one of webhookd's
 * own, `overlay X`, which hands the overlay over as data instead of YAML text
 * (the embedded revision's template uses it; a template may also print JSON,
 * which is read without the YAML parser).  MERGE side (wh_inject_merge.h & co.):
 * strategic merge of the overlays, user overrides, post-processing (spec
 * 3.10), JSON Patch, the admit function, kube-inject, conformance.
 *
 * Pipeline as the merge side drives it (spec 3.1):
 *
 *     rev = wh_inject_registry_get(reg, rev_name)          (or a loaded one)
 *     wh_inject_path_parse(suffix, &rev_name, &url_envs)   (webhook only)
 *     if (!wh_inject_decide(rev, pod, kube_inject, &why)) -> skip
 *     wh_inject_render(&in, &out, err)                     -> overlays
 *     ... merge out.overlays[i] in order, post-process ...
 *     wh_inject_rendered_clear(&out); wh_inject_revision_unref(rev);
 *
 * Errors: wh_inject_render's message is what istiod's RunTemplate returns
 * (e.g. the annotation multi-error, `requested template "x" not found; have
 * a, b`, a template execution error); the caller adds istiod's prefix
 * "failed to run injection template: ".
 *
 * Everything here is thread-safe for concurrent readers: a revision is
 * immutable once loaded and shared through a reference count.
 */
#ifndef WH_INJECT_RENDER_H
#define WH_INJECT_RENDER_H

#include <jansson.h>
#include <stddef.h>

#include "wh_buf.h"
#include "wh_inject_release.h"
#include "wh_metrics.h"
#include "wh_result.h"

/* ------------------------------------------------------------------------ */
/* Settings: what istiod takes from its environment (shared with kube-inject) */

typedef enum wh_inject_native_mode {
    WH_INJECT_NATIVE_AUTO = 0, /* on when every known node's kubelet is >= 1.33 (zero nodes: on) */
    WH_INJECT_NATIVE_TRUE,
    WH_INJECT_NATIVE_FALSE
} wh_inject_native_mode;

/*
 * Mapping of the corpus' case.yaml `settings` keys:
 *   values / mesh / injectConfig  -> the revision's `values`, `mesh`, `config` files
 *   enableNativeSidecars          -> native_mode (--native-sidecars true|false|auto)
 *   kubeletVersions               -> nodes (webhookd reads them from the API server)
 *   nativeSidecars                -> the result of the two above (not a setting itself)
 *   platform                      -> platform (--platform openshift)
 *   compliancePolicy              -> compliance_policy (--compliance-policy)
 *   env                           -> env (--env KEY=VALUE); PLATFORM, COMPLIANCE_POLICY and
 *                                    ENABLE_NATIVE_SIDECARS in env also set the matching field
 *                                    unless given explicitly
 *   namespaces                    -> wh_inject_input.namespace_obj (webhook path, OpenShift)
 */
typedef struct wh_inject_settings {
    wh_inject_native_mode native_mode;
    int native_mode_set;     /* 1 once given explicitly (env ENABLE_NATIVE_SIDECARS then ignored) */
    char *compliance_policy; /* "" / NULL: unset */
    char *platform;          /* "openshift" or NULL */
    json_t *env;             /* object KEY -> string: the environment templates read via `env` */
    json_t *nodes;           /* object nodeName -> kubeletVersion (for auto); NULL: no nodes known */
} wh_inject_settings;

/* An initializer, which clang-format would lay out as a block. */
/* clang-format off */
#define WH_INJECT_SETTINGS_INIT {WH_INJECT_NATIVE_AUTO, 0, NULL, NULL, NULL, NULL}
/* clang-format on */

/* Apply one flag: key is "native-sidecars", "compliance-policy", "platform" or
 * "env" (value "KEY=VALUE").  Unknown key or bad value -> WH_E_INVALID. */
wh_code wh_inject_settings_set(wh_inject_settings *s, const char *key, const char *value, wh_err *err);
/* Add/replace a node's kubelet version (for native auto detection). */
wh_code wh_inject_settings_set_node(wh_inject_settings *s, const char *node, const char *kubelet_version);
void wh_inject_settings_clear(wh_inject_settings *s);

/* Effective values: the explicit flag, else the env pair istiod would read
 * (PLATFORM, COMPLIANCE_POLICY).  Never NULL ("" when unset), except _env
 * which returns NULL for a key that was not given. */
const char *wh_inject_settings_env(const wh_inject_settings *s, const char *key);
/* What os.Getenv(key) gives in istiod, for the templates' `env`: the --env
 * pair, except that ENABLE_NATIVE_SIDECARS, PLATFORM and COMPLIANCE_POLICY
 * given as flags are those same variables of istiod (a template of Istio
 * 1.20-1.24 decides native sidecars with `env "ENABLE_NATIVE_SIDECARS"`).
 * NULL when unset. */
const char *wh_inject_settings_getenv(const wh_inject_settings *s, const char *key);
const char *wh_inject_settings_platform(const wh_inject_settings *s);
const char *wh_inject_settings_compliance(const wh_inject_settings *s);

/* The global native flag for a pod (3.2.4, before the per-pod annotation):
 * `node_name` = the pod's spec.nodeName or NULL; `rel` the revision's
 * release (NULL: the newest; before 1.27 there is no auto mode). */
int wh_inject_settings_native(const wh_inject_settings *s, const char *node_name, const wh_inject_release *rel);

/* ------------------------------------------------------------------------ */
/* Revisions                                                                */

typedef struct wh_inject_revision wh_inject_revision; /* immutable, refcounted */

/* Load a revision from the bytes of its three files (config YAML, values
 * JSON, mesh YAML; mesh may be NULL/empty = defaults).  Parses every
 * template.  *out is a new reference. */
wh_code wh_inject_revision_load(const char *name, const char *config, size_t config_len, const char *values,
                                size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                wh_err *err);
/* The same, saying which Istio release the revision is (hints in the order of
 * wh_inject_release_detect; hints->values is ignored, the revision's own
 * values are used).  wh_inject_revision_load finds the release from
 * values.global.tag alone. */
wh_code wh_inject_revision_load_release(const char *name, const char *config, size_t config_len, const char *values,
                                        size_t values_len, const char *mesh, size_t mesh_len,
                                        const wh_release_hints *hints, wh_inject_revision **out, wh_err *err);
/* The revision compiled into the binary (our own template, values, mesh).
 * New reference, named `name` (NULL: "default"). */
wh_code wh_inject_revision_embedded(const char *name, wh_inject_revision **out, wh_err *err);

wh_inject_revision *wh_inject_revision_ref(wh_inject_revision *rev);
void wh_inject_revision_unref(wh_inject_revision *rev); /* NULL is fine */

/* Accessors; all borrowed, valid while the caller holds a reference. */
const char *wh_inject_revision_name(const wh_inject_revision *rev);
const char *wh_inject_revision_policy(const wh_inject_revision *rev);   /* "enabled", "disabled", ... */
const json_t *wh_inject_revision_values(const wh_inject_revision *rev); /* values JSON object */
/* Mesh config applied onto Istio's DefaultMeshConfig (proto JSON names, e.g.
 * "defaultConfig":{"statusPort":15020,...}, "enablePrometheusMerge":true). */
const json_t *wh_inject_revision_mesh(const wh_inject_revision *rev);
const json_t *wh_inject_revision_injected_annotations(const wh_inject_revision *rev); /* object, never NULL */
/* mesh defaultConfig.statusPort (15020 by default): the Prometheus target and
 * probe-rewrite port of 3.10. */
int wh_inject_revision_status_port(const wh_inject_revision *rev);
/* The Istio release whose injection behaviour the revision gets. */
const wh_inject_release *wh_inject_revision_release(const wh_inject_revision *rev);

/* ------------------------------------------------------------------------ */
/* Registry: --revisions-dir DIR, one subdirectory per revision             */

typedef struct wh_inject_registry wh_inject_registry;

/* Open `dir` (NULL: none, only the embedded revision) and load every
 * subdirectory holding `config` and `values` (`mesh` optional).  A broken
 * revision is reported (log, metric, readiness detail) and skipped.
 * `metrics` (optional, borrowed, must outlive the registry) gets
 * webhookd_inject_revision_reload_total{revision,result} and
 * webhookd_inject_revision_loaded{revision}. */
wh_code wh_inject_registry_open(const char *dir, wh_metrics *metrics, wh_inject_registry **out, wh_err *err);
/* Stop the watcher (if any) and release every revision (outstanding
 * references stay valid). */
void wh_inject_registry_free(wh_inject_registry *reg);

/* Rescan now: new/changed revisions are (re)loaded, removed ones dropped; a
 * broken new config keeps the previous snapshot serving. */
wh_code wh_inject_registry_reload(wh_inject_registry *reg, wh_err *err);
/* Poll the directory every `interval_ms` from a background thread. */
wh_code wh_inject_registry_watch(wh_inject_registry *reg, unsigned interval_ms, wh_err *err);

/* New reference to a revision, or NULL if unknown.  name NULL or "" means
 * the revision named "default", else the embedded default revision. */
wh_inject_revision *wh_inject_registry_get(wh_inject_registry *reg, const char *name);
/* 1 when every revision is serving its newest files; else 0 and one line per
 * problem appended to detail (the old config keeps serving). */
int wh_inject_registry_ready(wh_inject_registry *reg, wh_buf *detail);
/* Names of the loaded revisions (JSON array of strings, new reference). */
json_t *wh_inject_registry_names(wh_inject_registry *reg);

/* ------------------------------------------------------------------------ */
/* URL path (2.2) and decision (1.3)                                        */

/* Parse the path after "/inject" (e.g. "", "/", "/rev/canary/cluster/c1",
 * "/:ENV:cluster=c2:ENV:net=n1").  A leading "rev/<name>" pair selects our
 * revision (*rev_name, malloc'd, NULL if absent); the rest are istiod's
 * key/value segments -> *envs (new object: env name -> value).  Never fails
 * on odd input (ignored like istiod does); WH_E_NOMEM only. */
wh_code wh_inject_path_parse(const char *suffix, size_t len, char **rev_name, json_t **envs, wh_err *err);

/* istiod's injectRequired rule chain on `pod` (metadata.namespace filled).
 * kube_inject = 1 applies istioctl's variant (policy enabled, no selectors).
 * Returns 1 to inject, 0 to skip with *reason (static text: "host network",
 * "system namespace", "sidecar.istio.io/inject=false", "neverInjectSelector",
 * "policy disabled", "unknown injection policy"). */
int wh_inject_decide(const wh_inject_revision *rev, const json_t *pod, int kube_inject, const char **reason);

/* ------------------------------------------------------------------------ */
/* Render                                                                   */

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
