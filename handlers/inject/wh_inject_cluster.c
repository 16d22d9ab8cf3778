/*
 * wh_inject_cluster.c - the informers behind /inject in cluster mode and
 * what each one's cache becomes: revisions in the registry, and the view of
 * ProxyConfigs, nodes and namespaces requests read (see wh_inject_cluster.h).
 */
#include "wh_inject_cluster.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_inject.h"
#include "wh_kube_informer.h"
#include "wh_log.h"
#include "wh_validate.h"

#define INJECTOR_CM "istio-sidecar-injector"
#define MESH_CM "istio"

static const wh_kube_resource kube_nodes = {"v1", "nodes", "Node", 0};
static const wh_kube_resource kube_proxyconfigs = {"networking.istio.io/v1beta1", "proxyconfigs", "ProxyConfig", 1};

enum source { SRC_CONFIGMAPS, SRC_PROXYCONFIGS, SRC_NODES, SRC_NAMESPACES, SRC_N };

typedef struct source_ctx {
    struct wh_inject_cluster *cluster;
    enum source kind;
} source_ctx;

struct wh_inject_cluster {
    wh_inject_registry *registry;
    char *istio_namespace;
    wh_kube_options kube; /* a copy (strings owned), for informers started later */
    char *kube_strings[4];
    wh_metrics *metrics;
    int watch_timeout_s;
    char *cache_dir;        /* NULL: no snapshots */
    pthread_mutex_t inf_mu; /* guards inf[] (the namespaces informer may start late) and ready_once */
    wh_kube_informer *inf[SRC_N];
    source_ctx ctx[SRC_N];
    int ready_once;             /* readiness reported once: informers started later do not take it back */
    int stopping;               /* no informer starts any more */
    pthread_mutex_t publish_mu; /* one publisher at a time: read-modify-publish of `view` */
    pthread_mutex_t view_mu;    /* guards the pointer only */
    wh_inject_cluster_view *view;
};

/* ---- views -------------------------------------------------------------------- */

static wh_inject_cluster_view *view_new(const wh_inject_cluster_view *from)
{
    wh_inject_cluster_view *v = wh_calloc(1, sizeof(*v));

    atomic_init(&v->refs, 1);
    if (from != NULL) {
        v->nodes = json_incref(from->nodes);
        v->namespaces = json_incref(from->namespaces);
        v->proxyconfigs = json_incref(from->proxyconfigs);
    }
    return v;
}

void wh_inject_cluster_view_unref(wh_inject_cluster_view *v)
{
    if (v != NULL && atomic_fetch_sub(&v->refs, 1) == 1) {
        json_decref(v->nodes);
        json_decref(v->namespaces);
        json_decref(v->proxyconfigs);
        free(v);
    }
}

wh_inject_cluster_view *wh_inject_cluster_view_get(wh_inject_cluster *c)
{
    wh_inject_cluster_view *v;

    pthread_mutex_lock(&c->view_mu);
    v = c->view;
    atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&c->view_mu);
    return v;
}

/* Publish a copy of the current view with one field replaced (the new
 * value's reference is taken over). */
static void publish(wh_inject_cluster *c, enum source kind, json_t *value)
{
    wh_inject_cluster_view *v, *old;

    pthread_mutex_lock(&c->publish_mu);
    v = view_new(c->view);
    json_t **slot = kind == SRC_NODES ? &v->nodes : kind == SRC_NAMESPACES ? &v->namespaces : &v->proxyconfigs;
    json_decref(*slot);
    *slot = value;
    pthread_mutex_lock(&c->view_mu);
    old = c->view;
    c->view = v;
    pthread_mutex_unlock(&c->view_mu);
    pthread_mutex_unlock(&c->publish_mu);
    wh_inject_cluster_view_unref(old);
}

/* ---- revisions from ConfigMaps ---------------------------------------------- */

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Keep istiod's ConfigMaps only, with the keys it reads and the labels that
 * name the release. */
static json_t *trim_configmap(const json_t *obj, void *ctx)
{
    static const char *const keys[] = {"config", "values", "mesh", "meshNetworks"};
    const json_t *meta = json_object_get(obj, "metadata"), *data = json_object_get(obj, "data");
    const json_t *labels = json_object_get(meta, "labels");
    const char *name = json_string_value(json_object_get(meta, "name"));
    json_t *out, *d, *l;

    if (name == NULL || !(strcmp(name, MESH_CM) == 0 || has_prefix(name, MESH_CM "-")))
        return NULL;
    d = json_object();
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_is_string(json_object_get(data, keys[i])))
            json_object_set(d, keys[i], json_object_get(data, keys[i]));
    if (json_object_size(d) == 0) {
        json_decref(d);
        return NULL;
    }
    out = json_object();
    json_object_set_new(out, "data", d);
    l = json_object();
    if (json_is_string(json_object_get(labels, "app.kubernetes.io/version")))
        json_object_set(l, "app.kubernetes.io/version", json_object_get(labels, "app.kubernetes.io/version"));
    json_object_set_new(out, "labels", l);
    return out;
}

static json_t *check_pod(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                     "name", "webhookd-check", "namespace", "webhookd-check", "spec", "containers", "name", "app",
                     "image", "app");
}

wh_code wh_inject_cluster_load_revision(const char *name, const json_t *inputs, wh_inject_revision **out, wh_err *err)
{
    const json_t *cfg = json_object_get(inputs, "config"), *vals = json_object_get(inputs, "values"),
                 *mesh = json_object_get(inputs, "mesh");
    wh_inject_pod_request req;
    wh_inject_pod_result res;
    json_t *pod = NULL;
    wh_release_hints hints = {NULL, WH_RELEASE_FILE, NULL, NULL};
    wh_code rc;

    *out = NULL;
    memset(&req, 0, sizeof(req));
    memset(&res, 0, sizeof(res));
    if (!json_is_string(cfg))
        return wh_err_set(err, WH_E_INVALID, "the injector ConfigMap has no key \"config\"");
    /* The release: the ConfigMap's app.kubernetes.io/version, else values.global.tag (wh_inject_release.h). */
    hints.configmap_label =
        json_string_value(json_object_get(json_object_get(inputs, "labels"), "app.kubernetes.io/version"));
    if ((rc = wh_inject_revision_load_release(
             name, json_string_value(cfg), json_string_length(cfg), json_string_value(vals), json_string_length(vals),
             json_string_value(mesh), json_string_length(mesh), &hints, out, err)) != WH_OK)
        goto out;
    /* A template that parses may still fail when it runs: try a plain pod. */
    pod = check_pod();
    req.rev = *out;
    req.pod = pod;
    req.namespace_ = "webhookd-check";
    if ((rc = wh_inject_pod(&req, &res, err)) != WH_OK)
        wh_err_prefix(err, "check render of a plain pod");
out:
    if (rc != WH_OK) {
        wh_inject_revision_unref(*out);
        *out = NULL;
    }
    wh_inject_pod_result_clear(&res);
    json_decref(pod);
    return rc;
}

static void on_configmaps(wh_inject_cluster *c, const json_t *cache, const char *ns)
{
    json_t *names = json_array();
    const char *key;
    json_t *cm;
    size_t plen = strlen(ns) + 1;

    json_object_foreach((json_t *)cache, key, cm)
    {
        const char *cm_name = key + plen, *rev_name;
        char mesh_key[512];
        json_t *inputs, *mesh_cm;
        wh_inject_revision *rev = NULL;
        wh_err err = {0};

        if (strcmp(cm_name, INJECTOR_CM) == 0)
            rev_name = "default";
        else if (has_prefix(cm_name, INJECTOR_CM "-") && cm_name[sizeof(INJECTOR_CM)] != '\0')
            rev_name = cm_name + sizeof(INJECTOR_CM);
        else
            continue;
        json_array_append_new(names, json_string(rev_name));
        if (strcmp(rev_name, "default") == 0)
            snprintf(mesh_key, sizeof(mesh_key), "%s/%s", ns, MESH_CM);
        else
            snprintf(mesh_key, sizeof(mesh_key), "%s/%s-%s", ns, MESH_CM, rev_name);
        mesh_cm = json_object_get(json_object_get(cache, mesh_key), "data");
        inputs = json_deep_copy(json_object_get(cm, "data"));
        json_object_del(inputs, "mesh");
        json_object_del(inputs, "meshNetworks");
        if (json_object_get(mesh_cm, "mesh") != NULL)
            json_object_set(inputs, "mesh", json_object_get(mesh_cm, "mesh"));
        if (json_object_get(mesh_cm, "meshNetworks") != NULL)
            json_object_set(inputs, "meshNetworks", json_object_get(mesh_cm, "meshNetworks"));
        json_object_set(inputs, "labels", json_object_get(cm, "labels"));
        if (wh_inject_registry_unchanged(c->registry, rev_name, inputs)) {
            json_decref(inputs);
            continue;
        }
        /* istiod validates meshNetworks (wh_validate_mesh_networks) and, when it is invalid, warns and keeps
         * its last networks; injection does not read them, so the revision loads either way. */
        if (json_is_string(json_object_get(inputs, "meshNetworks")) &&
            wh_validate_mesh_networks(json_string_value(json_object_get(inputs, "meshNetworks")),
                                      json_string_length(json_object_get(inputs, "meshNetworks")), &err) != WH_OK)
            wh_log(WH_LOG_WARN, "invalid mesh networks, using last known state", "revision", rev_name, "configmap",
                   mesh_key + plen, "error", wh_err_msg(&err), NULL);
        wh_err_clear(&err);
        if (wh_inject_cluster_load_revision(rev_name, inputs, &rev, &err) != WH_OK) {
            wh_log(WH_LOG_ERROR, "revision config rejected; previous config keeps serving", "revision", rev_name,
                   "configmap", cm_name, "error", wh_err_msg(&err), NULL);
            wh_inject_registry_put(c->registry, rev_name, inputs, NULL, wh_err_msg(&err));
        } else {
            char release[160];
            wh_inject_release_describe(wh_inject_revision_release(rev), release, sizeof(release));
            wh_log(WH_LOG_INFO, "revision loaded", "revision", rev_name, "configmap", cm_name, "istio_release", release,
                   NULL);
            wh_inject_registry_put(c->registry, rev_name, inputs, rev, NULL);
            wh_inject_revision_unref(rev);
        }
        json_decref(inputs);
    }
    wh_inject_registry_retain(c->registry, names);
    json_decref(names);
}

/* ---- ProxyConfigs, nodes, namespaces ------------------------------------------ */

/* What a ProxyConfig contributes (cluster.md §2): concurrency,
 * environmentVariables (as proxyMetadata) and image, plus its selector's
 * matchLabels ({} when it has none). */
static json_t *trim_proxyconfig(const json_t *obj, void *ctx)
{
    const json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *doc = json_object(), *out;
    const json_t *v;

    if ((v = json_object_get(spec, "concurrency")) != NULL && !json_is_null(v))
        json_object_set(doc, "concurrency", (json_t *)v);
    if ((v = json_object_get(spec, "environmentVariables")) != NULL && json_is_object(v))
        json_object_set(doc, "proxyMetadata", (json_t *)v);
    if ((v = json_object_get(spec, "image")) != NULL && json_is_object(v))
        json_object_set(doc, "image", (json_t *)v);
    out = json_pack("{s:O?, s:O?, s:O?, s:o}", "namespace", json_object_get(meta, "namespace"), "name",
                    json_object_get(meta, "name"), "created", json_object_get(meta, "creationTimestamp"), "doc", doc);
    /* A selector without labels (`selector: {}`) still makes the resource a
     * workload one, which then selects nothing: istiod ignores it. */
    if (json_is_object(v = json_object_get(spec, "selector"))) {
        v = json_object_get(v, "matchLabels");
        json_object_set_new(out, "selector", json_is_object(v) ? json_incref((json_t *)v) : json_object());
    }
    return out;
}

static int by_age(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *cx = json_string_value(json_object_get(x, "created")),
               *cy = json_string_value(json_object_get(y, "created"));
    int d = strcmp(cx != NULL ? cx : "", cy != NULL ? cy : "");

    if (d == 0)
        d = strcmp(json_string_value(json_object_get(x, "namespace")) ?: "",
                   json_string_value(json_object_get(y, "namespace")) ?: "");
    if (d == 0)
        d = strcmp(json_string_value(json_object_get(x, "name")) ?: "",
                   json_string_value(json_object_get(y, "name")) ?: "");
    return d;
}

static json_t *proxyconfigs_oldest_first(const json_t *cache)
{
    size_t n = json_object_size(cache), i = 0;
    json_t **all = wh_calloc(n + 1, sizeof(*all)), *arr = json_array(), *v;
    const char *key;

    json_object_foreach((json_t *)cache, key, v) all[i++] = v;
    qsort(all, n, sizeof(*all), by_age);
    for (i = 0; i < n; i++)
        json_array_append(arr, all[i]);
    free(all);
    return arr;
}

static json_t *trim_node(const json_t *obj, void *ctx)
{
    const char *v = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "status"), "nodeInfo"), "kubeletVersion"));
    return json_string(v != NULL ? v : "");
}

/* istiod reads a namespace for OpenShift's UID/GID ranges only. */
static json_t *trim_namespace(const json_t *obj, void *ctx)
{
    static const char *const keys[] = {"openshift.io/sa.scc.uid-range", "openshift.io/sa.scc.supplemental-groups"};
    const json_t *meta = json_object_get(obj, "metadata"), *ann = json_object_get(meta, "annotations");
    json_t *a = json_object();

    for (size_t i = 0; i < 2; i++)
        if (json_is_string(json_object_get(ann, keys[i])))
            json_object_set(a, keys[i], json_object_get(ann, keys[i]));
    return json_pack("{s:{s:O?, s:o}}", "metadata", "name", json_object_get(meta, "name"), "annotations", a);
}

static void on_change(void *ctx, wh_kube_informer *inf, const json_t *cache)
{
    const source_ctx *s = ctx;
    wh_inject_cluster *c = s->cluster;

    switch (s->kind) {
    case SRC_CONFIGMAPS:
        on_configmaps(c, cache, c->istio_namespace);
        break;
    case SRC_PROXYCONFIGS:
        publish(c, SRC_PROXYCONFIGS, proxyconfigs_oldest_first(cache));
        break;
    case SRC_NODES:
        /* No node access: istiod without a node client turns native sidecars off. */
        publish(c, SRC_NODES, wh_kube_informer_unavailable(inf) ? json_false() : json_copy((json_t *)cache));
        break;
    case SRC_NAMESPACES:
        /* Started because a revision runs on OpenShift: say what a missing
         * grant costs, beside the informer's RBAC wording. */
        if (wh_kube_informer_unavailable(inf))
            wh_log(WH_LOG_ERROR,
                   "inject: namespaces cannot be read: pods of revisions on OpenShift get the proxy UID/GID 1337 "
                   "instead of their namespace's openshift.io/sa.scc ranges until get/list/watch on namespaces is "
                   "granted (the chart grants it unless cluster.revisionsSource is builtin)",
                   NULL);
        publish(c, SRC_NAMESPACES, json_copy((json_t *)cache));
        break;
    default:
        break;
    }
}

/* ---- lifecycle ------------------------------------------------------------------ */

/* Start the informer of source `k` unless it runs; called with inf_mu held. */
static wh_code start_source(wh_inject_cluster *c, enum source k, wh_err *err)
{
    wh_kube_informer_options io = {
        .kube = &c->kube, .on_change = on_change, .metrics = c->metrics, .watch_timeout_s = c->watch_timeout_s};
    wh_buf file = WH_BUF_INIT;
    wh_code rc;

    if (c->inf[k] != NULL || c->stopping)
        return WH_OK;
    c->ctx[k].cluster = c;
    c->ctx[k].kind = k;
    io.ctx = &c->ctx[k];
    switch (k) {
    case SRC_CONFIGMAPS:
        io.resource = &wh_kube_configmaps;
        io.ns = c->istio_namespace;
        io.trim = trim_configmap;
        break;
    case SRC_PROXYCONFIGS:
        io.resource = &kube_proxyconfigs;
        io.trim = trim_proxyconfig;
        break;
    case SRC_NODES:
        io.resource = &kube_nodes;
        io.trim = trim_node;
        break;
    default:
        io.resource = &wh_kube_namespaces;
        io.trim = trim_namespace;
        break;
    }
    if (c->cache_dir != NULL) {
        wh_buf_printf(&file, "%s/%s.json", c->cache_dir, io.resource->plural);
        io.cache_file = file.data;
    }
    rc = wh_kube_informer_start(&io, &c->inf[k], err);
    wh_buf_free(&file);
    return rc;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? wh_strdup(s) : NULL;
}

wh_code wh_inject_cluster_start(const wh_inject_cluster_options *o, wh_inject_cluster **out, wh_err *err)
{
    wh_inject_cluster *c = wh_calloc(1, sizeof(*c));
    const int want[SRC_N] = {o->istio_namespace != NULL, o->proxyconfigs, o->nodes, o->namespaces};
    wh_code rc = WH_OK;

    c->registry = o->registry;
    c->istio_namespace = o->istio_namespace != NULL ? wh_strdup(o->istio_namespace) : NULL;
    c->kube = *o->kube;
    c->kube.kubeconfig = c->kube_strings[0] = dup_or_null(o->kube->kubeconfig);
    c->kube.context = c->kube_strings[1] = dup_or_null(o->kube->context);
    c->kube.user_agent = c->kube_strings[2] = dup_or_null(o->kube->user_agent);
    c->kube.service_account_dir = c->kube_strings[3] = dup_or_null(o->kube->service_account_dir);
    c->metrics = o->metrics;
    c->watch_timeout_s = o->watch_timeout_s;
    c->cache_dir = o->cache_dir != NULL && o->cache_dir[0] != '\0' ? wh_strdup(o->cache_dir) : NULL;
    pthread_mutex_init(&c->inf_mu, NULL);
    pthread_mutex_init(&c->publish_mu, NULL);
    pthread_mutex_init(&c->view_mu, NULL);
    c->view = view_new(NULL);
    pthread_mutex_lock(&c->inf_mu);
    for (int k = 0; k < SRC_N && rc == WH_OK; k++)
        if (want[k])
            rc = start_source(c, (enum source)k, err);
    pthread_mutex_unlock(&c->inf_mu);
    if (rc != WH_OK) {
        wh_inject_cluster_stop(c);
        return rc;
    }
    *out = c;
    return WH_OK;
}

wh_code wh_inject_cluster_watch_namespaces(wh_inject_cluster *c, wh_err *err)
{
    wh_code rc;
    int started;

    pthread_mutex_lock(&c->inf_mu);
    started = c->inf[SRC_NAMESPACES] == NULL && !c->stopping;
    rc = start_source(c, SRC_NAMESPACES, err);
    pthread_mutex_unlock(&c->inf_mu);
    if (rc == WH_OK && started)
        wh_log(WH_LOG_INFO, "inject: watching namespaces (OpenShift UID/GID ranges)", NULL);
    return rc;
}

void wh_inject_cluster_stop(wh_inject_cluster *c)
{
    wh_kube_informer *inf[SRC_N];

    if (c == NULL)
        return;
    /* Joined outside the lock: an informer's callback may be starting another one. */
    pthread_mutex_lock(&c->inf_mu);
    c->stopping = 1;
    memcpy(inf, c->inf, sizeof(inf));
    pthread_mutex_unlock(&c->inf_mu);
    for (int k = 0; k < SRC_N; k++)
        wh_kube_informer_stop(inf[k]);
    wh_inject_cluster_view_unref(c->view);
    pthread_mutex_destroy(&c->inf_mu);
    pthread_mutex_destroy(&c->publish_mu);
    pthread_mutex_destroy(&c->view_mu);
    for (size_t i = 0; i < sizeof(c->kube_strings) / sizeof(c->kube_strings[0]); i++)
        free(c->kube_strings[i]);
    free(c->istio_namespace);
    free(c->cache_dir);
    free(c);
}

int wh_inject_cluster_ready(wh_inject_cluster *c, wh_buf *detail)
{
    int ok = 1, first = 1;

    pthread_mutex_lock(&c->inf_mu);
    for (int k = 0; k < SRC_N; k++) {
        if (c->inf[k] == NULL)
            continue;
        ok &= wh_kube_informer_synced(c->inf[k]);
        if (detail != NULL) {
            wh_buf_puts(detail, first ? (detail->len ? "\n" : "") : "; ");
            wh_kube_informer_describe(c->inf[k], detail);
            first = 0;
        }
    }
    /* once ready, for good: a source started later (namespaces, when a
     * revision turns out to need them) must not take every replica out of
     * the Service at once */
    ok |= c->ready_once;
    c->ready_once = ok;
    pthread_mutex_unlock(&c->inf_mu);
    return ok;
}
