/*
 * wh_inject_revision.h - what every stage of injection reads: a control-plane
 * revision's configuration.
 *
 * A revision (wh_inject_revision.c) is the `config`, `values` and `mesh`
 * files of istiod's ConfigMaps parsed once into an immutable,
 * reference-counted snapshot with every template parsed; the registry
 * (wh_inject_registry.c) holds the revisions of --revisions-dir and reloads
 * them; wh_inject_embedded.c is the revision compiled into webhookd.
 * istiod's environment (wh_inject_settings.h) and MeshConfig / ProxyConfig
 * (wh_inject_proxyconfig.h) have headers of their own, so that their files
 * need nothing of the revision.
 *
 * Not a stage of the pipeline (see wh_inject.h): the stages' input.  It
 * includes no stage's header.  Everything here is thread-safe for
 * concurrent readers: a revision is immutable once loaded.
 */
#ifndef WH_INJECT_REVISION_H
#define WH_INJECT_REVISION_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "wh_buf.h"
#include "wh_json_arena.h"
#include "wh_inject_release.h"
#include "wh_metrics.h"
#include "wh_result.h"
#include "wh_tmpl.h"

/* ------------------------------------------------------------------------ */
/* Revisions                                                                */

typedef struct wh_inject_revision wh_inject_revision; /* immutable, refcounted */

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
/* A revision's templates, each parsed into its own set (wh_inject_revision_load.c).
 * The sets of the revision's defaultTemplates bound to its own proxy config
 * (set_pc, what pods without a proxy config of their own render) are made at
 * load; the others (their plain sets; gateway, waypoint, ... templates most
 * revisions' pods never use) only had their text parsed there, to refuse a
 * broken config, and are made on their first render: a revision pays memory
 * for the sets it renders.
 * Either way a set is made once the revision's JSON is immortal
 * (wh_json_freeze), so every set goes before the thaw. */
struct tmpl_entry {
    char *name;
    const json_t *text; /* the template's text: a string in the revision's config */
    /* NULL until made (then never changed): read with acquire, made under the table's lock */
    _Atomic(wh_tmpl_set *) set;
    _Atomic(wh_tmpl_set *) set_pc; /* the same, `.ProxyConfig` bound to webhook_pc: for pods that change nothing
                                    * of it */
};

/* The parsed templates, sorted by name, and how the loader makes a set:
 * `make` (wh_inject_revision_load.c; pc: bound to webhook_pc) returns NULL
 * only where the engine itself fails (the text parsed at load). */
struct wh_inject_tmpls {
    size_t n;
    struct tmpl_entry *e;
    pthread_mutex_t make_mu;
    wh_tmpl_set *(*make)(const struct wh_inject_revision *rev, const struct tmpl_entry *e, int pc);
};

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
    char *default_pc_json;             /* protoToJSON of mesh.defaultConfig: most pods' proxy config, printed
                                        * once here for their renders (wh_inject_render_funcs.c) */
    json_t *webhook_pc;                /* what /inject starts a pod's proxy config from
                                        * (wh_inject_webhook_proxy_config): mesh.defaultConfig itself
                                        * unless that has zero-valued fields */
    char *proxy_image;                 /* .ProxyImage / .ProxyInitImage of a pod whose proxy config is webhook_pc */
    char *proxy_init_image;            /* and that has no proxyImageType annotation: computed at load */
    json_t *template_names;            /* sorted array of the names in `templates` */
    struct wh_inject_tmpls *templates; /* every template parsed, each its own set */
    wh_inject_release release;         /* the Istio release whose behaviour applies */
    int own_templates;                 /* webhookd's embedded templates (wh_inject_revision_load_own) */
    /* The JSON above is immortal once loaded (wh_json_freeze): requests share
     * it into their trees without reference counts; thawed when freed. */
    wh_json_frozen *frozen;
};

/* Whether the revision has a template `name` (no set is made). */
int wh_inject_revision_has_template(const wh_inject_revision *rev, const char *name);
/* The parsed template `name` for a render whose proxy config is `pc`: where
 * pc is the revision's own webhook_pc, the set that computed what depends
 * only on it when it was made.  Made now if this is its first use; NULL: no
 * such template, or the engine failed to make its set. */
const wh_tmpl_set *wh_inject_revision_template_pc(const wh_inject_revision *rev, const char *name, const json_t *pc);

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
 * the revision named "default", else (outside cluster mode) the embedded
 * default revision, which is loaded only while it serves so: on first need,
 * or by the scan that finds no "default" serving; released by the scan that
 * finds one. */
wh_inject_revision *wh_inject_registry_get(wh_inject_registry *reg, const char *name);
/* Why revision `name` (NULL/"": default) has no config to serve: its last
 * config's error (new string, free()), or NULL when it is simply unknown. */
char *wh_inject_registry_refusal(wh_inject_registry *reg, const char *name);
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
/* Call `fn` whenever a revision starts serving (loaded or changed, from
 * either source), at once for those already serving, on the registry's or
 * the cluster source's thread, never under the registry's lock (`rev` is
 * borrowed for the call).  `fn` NULL stops the calls; once that returns, no
 * call is running. */
typedef void (*wh_inject_serve_fn)(void *ctx, const char *name, const wh_inject_revision *rev);
void wh_inject_registry_on_serve(wh_inject_registry *reg, wh_inject_serve_fn fn, void *ctx);

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

#endif
