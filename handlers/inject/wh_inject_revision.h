/*
 * wh_inject_revision.h - what every stage of injection reads: a control-plane
 * revision's configuration and istiod's environment.
 *
 * A revision (wh_inject_revision.c) is the `config`, `values` and `mesh`
 * files of istiod's ConfigMaps parsed once into an immutable,
 * reference-counted snapshot with every template parsed; the registry
 * (wh_inject_registry.c) holds the revisions of --revisions-dir and reloads
 * them; wh_inject_embedded.c is the revision compiled into webhookd.  The
 * settings (wh_inject_settings.c) are what istiod reads from its process
 * environment rather than from the ConfigMaps.  MeshConfig and ProxyConfig
 * (wh_inject_proxyconfig.c) are the mesh file and the pod's
 * proxy.istio.io/config annotation as istiod reads them.
 *
 * Not a stage of the pipeline (see wh_inject.h): the stages' input.  It
 * includes no stage's header.  Everything here is thread-safe for
 * concurrent readers: a revision is immutable once loaded.
 */
#ifndef WH_INJECT_REVISION_H
#define WH_INJECT_REVISION_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

#include "wh_buf.h"
#include "wh_inject_release.h"
#include "wh_metrics.h"
#include "wh_result.h"
#include "wh_tmpl.h"

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
    json_t *nodes;           /* object nodeName -> kubeletVersion (for auto); NULL: no nodes known;
                                JSON false: nodes cannot be read (auto: off, as istiod without a node client) */
} wh_inject_settings;

/* An initializer, which clang-format would lay out as a block. */
/* clang-format off */
#define WH_INJECT_SETTINGS_INIT {WH_INJECT_NATIVE_AUTO, 0, NULL, NULL, NULL, NULL}
/* clang-format on */

/* Apply one flag (WH_INJECT_SETTINGS_FLAGS, wh_inject_endpoint.h): key is
 * "native-sidecars", "compliance-policy", "platform" or "env" (value
 * KEY=VALUE[,KEY=VALUE...]).  Unknown key or bad value -> WH_E_INVALID. */
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

/* Inside handlers/inject: the revision's parsed files, for the stages. */
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
    struct wh_inject_tmpls *templates; /* every template parsed, each its own set */
    wh_inject_release release;         /* the Istio release whose behaviour applies */
};

/* The functions istiod adds to Sprig for its templates (defined with the
 * render stage, wh_inject_render_funcs.c): a revision's templates are
 * parsed against them when it loads. */
extern const wh_tmpl_func wh_inject_funcs[];
extern const size_t wh_inject_nfuncs;

/* The parsed template `name` of a revision, or NULL. */
const wh_tmpl_set *wh_inject_revision_template(const wh_inject_revision *rev, const char *name);

/* ------------------------------------------------------------------------ */
/* Registry: --revisions-dir DIR, one subdirectory per revision             */

typedef struct wh_inject_registry wh_inject_registry;

/* Open `dir` (NULL: none, only the embedded revision) and load every
 * subdirectory holding `config` and `values` (`mesh` optional).  A broken
 * revision is reported (log, metric, readiness detail) and skipped.
 * `metrics` (optional, borrowed, must outlive the registry) gets
 * webhookd_inject_revision_reload_total{revision,result} and
 * webhookd_inject_revision_loaded{revision} and
 * webhookd_inject_revision_release{revision,release,source}.  A revision's
 * optional `version` file names its Istio release (wh_inject_release.h). */
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
/* Always 1 (webhookd can serve).  detail gets a line per serving revision
 * naming its Istio release, and one per revision whose latest config was
 * refused, saying whether its previous config keeps serving. */
int wh_inject_registry_ready(wh_inject_registry *reg, wh_buf *detail);
/* Render every default template of `rev` for a plain pod: what a new
 * snapshot must pass before it replaces a serving one (both revision
 * sources call it, so a config that fails only at render time is refused). */
wh_code wh_inject_registry_check(const wh_inject_revision *rev, wh_err *err);
/* Names of the loaded revisions (JSON array of strings, new reference). */
json_t *wh_inject_registry_names(wh_inject_registry *reg);

/* The cluster source (wh_inject_cluster.h) feeds the registry instead of a
 * directory.  cluster_mode: no built-in fallback for "default" (only what the
 * cluster holds is served).  unchanged: 1 when `inputs` (the ConfigMaps' contents) are
 * what the last put of `name` had, so nothing needs loading.  put: record
 * the outcome of loading `inputs`: `rev` (referenced) serves from now on,
 * or, when NULL, `error` says why the previous configuration keeps serving.
 * retain: drop every revision not named in the array `names`. */
void wh_inject_registry_cluster_mode(wh_inject_registry *reg);
int wh_inject_registry_unchanged(wh_inject_registry *reg, const char *name, const json_t *inputs);
void wh_inject_registry_put(wh_inject_registry *reg, const char *name, const json_t *inputs, wh_inject_revision *rev,
                            const char *error);
void wh_inject_registry_retain(wh_inject_registry *reg, const json_t *names);

/* ------------------------------------------------------------------------ */
/* Mesh and proxy config (wh_inject_proxyconfig.c, _merge.c)               */

/* Istio's DefaultProxyConfig / DefaultMeshConfig of a release (NULL: the
 * newest); new references, never NULL. */
json_t *wh_inject_default_proxy_config(const wh_inject_release *rel);
json_t *wh_inject_default_mesh(const wh_inject_release *rel);
/* Apply a mesh document onto `mesh` (DefaultMeshConfig) as Istio's
 * ApplyMeshConfig does. */
wh_code wh_inject_mesh_apply(json_t *mesh, const json_t *doc, wh_err *err);
/* Overlay a ProxyConfig document onto `pc` (an object; fields replace, proxyMetadata
 * merges by key) after normalising it (enum names, durations); errors in
 * protojson's spirit. */
wh_code wh_inject_proxy_config_apply(json_t *pc, const json_t *doc, wh_err *err);
/* istiod's EffectiveProxyConfig (wh_inject_proxyconfig_merge.c): the mesh's
 * defaultConfig, the ProxyConfig resources (wh_inject_cluster_view's array,
 * oldest first; NULL: none) of the root namespace, of the pod's namespace,
 * then the parsed proxy.istio.io/config `annotation` (NULL: none) under the
 * workload's resource.  *out is a new reference (the mesh's own object when
 * nothing applies). */
wh_code wh_inject_effective_proxy_config(const json_t *mesh, const json_t *proxyconfigs, const json_t *pod,
                                         const json_t *annotation, json_t **out, wh_err *err);
/* Istio's agent-side ProxyConfig validation; NULL when valid, else a new
 * message (caller frees). */
char *wh_inject_proxy_config_invalid(const json_t *pc);
/* protoToJSON: defaults cleared, fields in .proto order, compact. */
void wh_inject_proxy_config_json(const json_t *pc, const wh_inject_release *rel, wh_buf *out);
/* Enum value name of interceptionMode ("REDIRECT" when unset). */
const char *wh_inject_interception_mode(const json_t *pc);

#endif
