/*
 * wh_inject_endpoint.c - the /inject endpoint webhookd serves: its flags
 * (wh_inject_endpoint.h: where revisions come from - --revisions-source,
 * --istio-namespace, --revisions-dir - and istiod's environment settings),
 * the AdmissionReview codec around wh_inject_admit, and istiod's injection
 * metrics.
 *
 * What istiod reads from the cluster while injecting - revisions, ProxyConfig
 * resources, node kubelet versions for `--native-sidecars auto`, namespace
 * annotations on OpenShift - is watched by informers off the request path
 * (wh_inject_cluster.h); a request takes a reference to the current
 * immutable view.  Without API access nodes cannot be read: auto then means
 * native sidecars off, as istiod without a node client.
 *
 * OpenShift is a revision's own setting (its values' global.platform, else
 * --platform: wh_inject_settings_revision_platform), so namespaces are
 * watched from the start with --platform openshift, and otherwise from the
 * moment the first revision whose istiod runs on OpenShift serves.
 */
#include "wh_inject_endpoint.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_admission.h"
#include "wh_alloc.h"
#include "wh_inject.h"
#include "wh_inject_cluster.h"
#include "wh_kube.h"
#include "wh_log.h"

#define KUBE_TIMEOUT_MS 10000L

#define ENDPOINT_FLAG(name, repeatable, usage) {name, "", usage},
const wh_endpoint_flag wh_inject_endpoint_flags[] = {
    {"revisions-source", "auto",
     "where the injection revisions come from: cluster (istiod's ConfigMaps istio-sidecar-injector[-<rev>] and "
     "istio[-<rev>] in --istio-namespace, watched), dir (--revisions-dir), builtin (webhookd's own revision "
     "`default`), or auto: dir when --revisions-dir is given, else cluster when a Kubernetes configuration is "
     "found (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster), else builtin"},
    {"istio-namespace", "istio-system", "the namespace of istiod and its ConfigMaps (cluster source)"},
    {"cluster-cache-dir", "",
     "directory (writable, e.g. an emptyDir) where what is read from the cluster (revisions' ConfigMaps, "
     "ProxyConfigs, nodes, namespaces) is kept after every change: started while the API server is unreachable, "
     "webhookd serves and is ready with that instead of waiting for the API server (default: none)"},
    {"revisions-dir", "",
     "directory with one subdirectory per injection revision, named after it, holding the files config, values "
     "and mesh (the ConfigMaps istio-sidecar-injector-<rev> and istio-<rev>) and optionally version (the "
     "revision's Istio release, e.g. 1.21.0: it is injected as istiod of that release; default: values.global.tag "
     "when it is a version, else the newest); reloaded when they change. "
     "/inject serves the revision `default`, else the built-in one; /inject/rev/<rev>[/...] a named one"},
    WH_INJECT_SETTINGS_FLAGS(ENDPOINT_FLAG){NULL, NULL, NULL},
};

#define SETTING_NAME(name, repeatable, usage) name,
static const char *const setting_names[] = {WH_INJECT_SETTINGS_FLAGS(SETTING_NAME)};
#define NSETTINGS (sizeof(setting_names) / sizeof(setting_names[0]))

typedef struct inject_endpoint {
    wh_endpoint super;
    wh_inject_registry *registry;
    wh_inject_settings settings; /* the flags; never changes after start */
    wh_inject_cluster *cluster;  /* NULL: no API access */
    int nodes_unreadable;        /* native auto without API access: off */
    wh_metric *requests, *success, *failure, *skip, *duration, *by_revision;
    wh_admission_stats stats;
} inject_endpoint;

/* The flags as istiod's environment. */
static wh_code settings_init(wh_inject_settings *s, const wh_endpoint_env *env, wh_err *err)
{
    wh_code rc = WH_OK;

    *s = (wh_inject_settings)WH_INJECT_SETTINGS_INIT;
    for (size_t i = 0; i < NSETTINGS && rc == WH_OK; i++) {
        const char *v = env->flag(env, setting_names[i]);
        if (v != NULL && *v != '\0')
            rc = wh_inject_settings_set(s, setting_names[i], v, err);
    }
    return rc;
}

static void serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    inject_endpoint *ep = self->data;
    wh_inject_cluster_view *view = ep->cluster != NULL ? wh_inject_cluster_view_get(ep->cluster) : NULL;
    wh_inject_settings settings = ep->settings; /* a shallow copy: the cluster's nodes go in, nothing is freed */
    wh_inject_call call;
    wh_admission_outcome outcome;
    struct timespec t0, t1;
    const char *result, *labels[2];
    double secs;

    memset(&call, 0, sizeof(call));
    memset(&outcome, 0, sizeof(outcome));
    if (view != NULL && view->nodes != NULL)
        settings.nodes = view->nodes;
    else if (ep->nodes_unreadable)
        settings.nodes = json_false();
    call.registry = ep->registry;
    call.settings = &settings;
    call.namespaces = view != NULL ? view->namespaces : NULL;
    call.proxyconfigs = view != NULL ? view->proxyconfigs : NULL;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wh_admission_serve(&ep->stats, req, wh_inject_admit, &call, res, &outcome);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    wh_inject_cluster_view_unref(view);
    /* a 413 is webhookd's, counted as "rejected" in
     * webhookd_admission_reviews_total only, not in istiod's counters */
    if (outcome.refused)
        return;
    wh_metric_add(ep->requests, NULL, 1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (!outcome.decoded || call.failed) {
        wh_metric_add(ep->failure, NULL, 1);
        result = "failure";
    } else if (call.skipped) {
        wh_metric_add(ep->skip, NULL, 1);
        result = "skip";
    } else {
        result = "injected";
    }
    if (res->status == 200)
        wh_metric_add(ep->success, NULL, 1);
    wh_metric_observe(ep->duration, NULL, secs);
    labels[0] = call.revision;
    labels[1] = result;
    wh_metric_add(ep->by_revision, labels, 1);
}

static int ready(wh_endpoint *self, wh_buf *detail)
{
    inject_endpoint *ep = self->data;
    int ok = wh_inject_registry_ready(ep->registry, detail);

    if (ep->cluster != NULL)
        ok &= wh_inject_cluster_ready(ep->cluster, detail);
    return ok;
}

static wh_code reload(wh_endpoint *self, int forced, wh_err *err)
{
    inject_endpoint *ep = self->data;
    return wh_inject_registry_reload(ep->registry, err);
}

/* A revision starts serving: if its istiod runs on OpenShift, the
 * namespaces' UID/GID ranges are needed from now on. */
static void on_serve(void *ctx, const char *name, const wh_inject_revision *rev)
{
    inject_endpoint *ep = ctx;
    wh_err err = {0};

    if (strcmp(wh_inject_settings_revision_platform(&ep->settings, wh_inject_revision_values(rev)), "openshift") != 0)
        return;
    if (ep->cluster == NULL)
        wh_log(WH_LOG_WARN,
               "inject: revision runs on OpenShift, but there is no Kubernetes API access to read the namespaces' "
               "UID/GID ranges: its proxies get 1337",
               "revision", name, NULL);
    else if (wh_inject_cluster_watch_namespaces(ep->cluster, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "inject: cannot watch namespaces for an OpenShift revision", "revision", name, "error",
               wh_err_msg(&err), NULL);
}

static void endpoint_free(inject_endpoint *ep)
{
    if (ep->registry != NULL)
        wh_inject_registry_on_serve(ep->registry, NULL, NULL); /* no call is running after this */
    wh_inject_cluster_stop(ep->cluster);                       /* then: its threads feed the registry */
    wh_inject_registry_free(ep->registry);
    wh_inject_settings_clear(&ep->settings);
    free(ep);
}

static void destroy(wh_endpoint *self)
{
    endpoint_free(self->data);
}

static int is_set(const char *v)
{
    return v != NULL && *v != '\0';
}

wh_code wh_inject_endpoint_check(const wh_endpoint_env *env, wh_err *err)
{
    const char *src = env->flag(env, "revisions-source"), *dir = env->flag(env, "revisions-dir");
    wh_inject_settings settings;
    wh_code rc;

    rc = settings_init(&settings, env, err);
    wh_inject_settings_clear(&settings);
    if (rc != WH_OK)
        return rc;
    if (!is_set(src) || strcmp(src, "auto") == 0)
        return WH_OK; /* dir when --revisions-dir is given: nothing conflicts */
    if (strcmp(src, "dir") != 0 && strcmp(src, "cluster") != 0 && strcmp(src, "builtin") != 0)
        return wh_err_set(err, WH_E_INVALID, "--revisions-source must be auto, cluster, dir or builtin, not \"%s\"",
                          src);
    if (strcmp(src, "dir") != 0 && is_set(dir))
        return wh_err_set(err, WH_E_INVALID,
                          "--revisions-dir is read only with --revisions-source dir (or auto), not %s", src);
    if (strcmp(src, "dir") == 0 && !is_set(dir))
        return wh_err_set(err, WH_E_INVALID, "--revisions-source dir needs --revisions-dir");
    return WH_OK;
}

/* --revisions-source auto: the directory when given, else the cluster when a
 * Kubernetes configuration is found, else the built-in revision.  The flags
 * passed wh_inject_endpoint_check. */
static wh_code pick_source(const wh_endpoint_env *env, const wh_kube_options *ko, const char **source, int *kube_ok,
                           wh_err *err)
{
    const char *src = env->flag(env, "revisions-source"), *dir = env->flag(env, "revisions-dir");
    wh_kube_config *cfg = NULL;
    wh_err kerr = {0};

    *kube_ok = wh_kube_config_load(ko, &cfg, &kerr) == WH_OK;
    wh_kube_config_free(cfg);
    if (!is_set(src) || strcmp(src, "auto") == 0)
        src = is_set(dir) ? "dir" : *kube_ok ? "cluster" : "builtin";
    if (strcmp(src, "cluster") == 0 && !*kube_ok)
        return wh_err_set(err, WH_E_INVALID, "--revisions-source cluster: no Kubernetes configuration: %s",
                          wh_err_msg(&kerr));
    *source = src;
    return WH_OK;
}

wh_code wh_inject_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err)
{
    static const double buckets[] = {.1, 1, 3, 5, 10, 20, 30, 60};
    static const char *const rev_labels[] = {"revision", "result", NULL};
    inject_endpoint *ep = wh_calloc(1, sizeof(*ep));
    const char *dir = env->flag(env, "revisions-dir"), *source = NULL, *native;
    wh_kube_options ko = {.kubeconfig = env->flag(env, "kubeconfig"),
                          .timeout_ms = KUBE_TIMEOUT_MS,
                          .user_agent = "webhookd/" WH_VERSION};
    wh_inject_cluster_options co = {.kube = &ko, .metrics = env->metrics};
    int kube_ok = 0;
    wh_code rc;

    if (ko.kubeconfig != NULL && *ko.kubeconfig == '\0')
        ko.kubeconfig = NULL;
    if ((rc = settings_init(&ep->settings, env, err)) != WH_OK ||
        (rc = pick_source(env, &ko, &source, &kube_ok, err)) != WH_OK)
        goto out;
    if ((rc = wh_inject_registry_open(strcmp(source, "dir") == 0 ? dir : NULL, env->metrics, &ep->registry, err)) !=
        WH_OK)
        goto out;
    ep->requests = wh_metrics_counter(env->metrics, "sidecar_injection_requests_total",
                                      "Total number of sidecar injection requests.", NULL);
    ep->success = wh_metrics_counter(env->metrics, "sidecar_injection_success_total",
                                     "Total number of successful sidecar injection requests.", NULL);
    ep->failure = wh_metrics_counter(env->metrics, "sidecar_injection_failure_total",
                                     "Total number of failed sidecar injection requests.", NULL);
    ep->skip = wh_metrics_counter(env->metrics, "sidecar_injection_skip_total",
                                  "Total number of skipped sidecar injection requests.", NULL);
    ep->duration = wh_metrics_histogram(env->metrics, "sidecar_injection_time_seconds",
                                        "Total time taken for injection in seconds.", NULL, buckets,
                                        sizeof(buckets) / sizeof(buckets[0]));
    ep->by_revision = wh_metrics_counter(env->metrics, "webhookd_inject_requests_total",
                                         "Injection requests by the revision that answered and their result "
                                         "(injected, skip, failure).",
                                         rev_labels);
    if (ep->requests == NULL || ep->success == NULL || ep->failure == NULL || ep->skip == NULL ||
        ep->duration == NULL || ep->by_revision == NULL) {
        rc = wh_err_set(err, WH_E_CONFLICT, "injection metrics already registered with another shape");
        goto out;
    }
    if ((rc = wh_admission_stats_init(&ep->stats, env->name, env->metrics, err)) != WH_OK)
        goto out;

    /* What to watch in the cluster. */
    native = wh_inject_settings_getenv(&ep->settings, "ENABLE_NATIVE_SIDECARS");
    co.nodes = native == NULL || strcmp(native, "auto") == 0;
    co.namespaces = strcmp(wh_inject_settings_platform(&ep->settings), "openshift") == 0;
    if (strcmp(source, "cluster") == 0) {
        co.istio_namespace = env->flag(env, "istio-namespace");
        if (co.istio_namespace == NULL || *co.istio_namespace == '\0')
            co.istio_namespace = "istio-system";
        co.proxyconfigs = 1;
        co.registry = ep->registry;
        wh_inject_registry_cluster_mode(ep->registry);
    }
    co.cache_dir = env->flag(env, "cluster-cache-dir");
    wh_log(WH_LOG_INFO, "inject: revisions source", "source", source, "istio_namespace",
           co.istio_namespace != NULL ? co.istio_namespace : "", NULL);
    /* With API access there is always a cluster, maybe without informers:
     * a revision on OpenShift may need namespaces later (on_serve). */
    if (kube_ok) {
        if ((rc = wh_inject_cluster_start(&co, &ep->cluster, err)) != WH_OK)
            goto out;
    } else if (co.nodes || co.namespaces) {
        wh_log(WH_LOG_INFO,
               "inject: no Kubernetes API access; native sidecars stay off under auto (as istiod without a node "
               "client) and OpenShift namespaces are unknown",
               NULL);
        ep->nodes_unreadable = co.nodes;
    }
    wh_inject_registry_on_serve(ep->registry, on_serve, ep);
    ep->super.name = env->name;
    ep->super.serve = serve;
    ep->super.ready = ready;
    ep->super.reload = reload;
    ep->super.destroy = destroy;
    ep->super.data = ep;
    *out = &ep->super;
    ep = NULL;
    rc = WH_OK;
out:
    if (ep != NULL)
        endpoint_free(ep);
    return rc;
}
