/*
 * wh_inject_endpoint.c - the /inject endpoint webhookd serves: its flags
 * (wh_inject_endpoint.h: the revision registry's --revisions-dir and
 * istiod's environment settings), the AdmissionReview codec around
 * wh_inject_admit, and istiod's injection metrics.
 *
 * What istiod reads from the cluster while injecting - node kubelet versions
 * for `--native-sidecars auto`, namespace annotations for `--platform
 * openshift` - is listed from the API server off the request path, in the
 * endpoint's reload hook (main thread, every 30 s and on SIGHUP), and
 * published as an immutable snapshot the workers read.  Without API access
 * (no kubeconfig, not in a cluster) nothing is known: auto then means native
 * sidecars on, as istiod does with zero nodes.
 */
#include "wh_inject_endpoint.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_alloc.h"
#include "wh_admission.h"
#include "wh_inject.h"
#include "wh_kube.h"
#include "wh_log.h"

#define REFRESH_SECONDS 30
#define KUBE_TIMEOUT_MS 5000L

static const wh_kube_resource kube_nodes = {"v1", "nodes", "Node", 0};

#define ENDPOINT_FLAG(name, repeatable, usage) {name, "", usage},
const wh_endpoint_flag wh_inject_endpoint_flags[] = {
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

/* What one refresh of the cluster gave: immutable once published. */
typedef struct cluster_view {
    atomic_int refs;
    wh_inject_settings settings; /* the flags, plus the nodes' kubelet versions */
    json_t *namespaces;          /* object: name -> Namespace, or NULL */
} cluster_view;

typedef struct inject_endpoint {
    wh_endpoint super;
    wh_inject_registry *registry;
    const char *settings_flags[NSETTINGS]; /* WH_INJECT_SETTINGS_FLAGS' values, borrowed from the server */
    wh_kube_client *kube;                  /* NULL: no API access, or nothing to read */
    int want_nodes, want_namespaces;
    time_t refreshed;     /* last successful or failed attempt */
    pthread_mutex_t lock; /* guards `view` (the pointer, not the view) */
    cluster_view *view;
    wh_metric *requests, *success, *failure, *skip, *duration, *by_revision;
} inject_endpoint;

static void view_unref(cluster_view *v)
{
    if (v != NULL && atomic_fetch_sub(&v->refs, 1) == 1) {
        wh_inject_settings_clear(&v->settings);
        json_decref(v->namespaces);
        free(v);
    }
}

static cluster_view *view_get(inject_endpoint *ep)
{
    cluster_view *v;

    pthread_mutex_lock(&ep->lock);
    v = ep->view;
    atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&ep->lock);
    return v;
}

static void view_publish(inject_endpoint *ep, cluster_view *v)
{
    cluster_view *old;

    pthread_mutex_lock(&ep->lock);
    old = ep->view;
    ep->view = v;
    pthread_mutex_unlock(&ep->lock);
    view_unref(old);
}

/* A view holding the flags (and later the cluster's facts). */
static wh_code view_new(const inject_endpoint *ep, cluster_view **out, wh_err *err)
{
    cluster_view *v = wh_calloc(1, sizeof(*v));
    wh_code rc = WH_OK;
    size_t i;

    atomic_init(&v->refs, 1);
    v->settings = (wh_inject_settings)WH_INJECT_SETTINGS_INIT;
    for (i = 0; i < NSETTINGS && rc == WH_OK; i++)
        if (ep->settings_flags[i] != NULL && *ep->settings_flags[i] != '\0')
            rc = wh_inject_settings_set(&v->settings, setting_names[i], ep->settings_flags[i], err);
    if (rc != WH_OK) {
        view_unref(v);
        return rc;
    }
    *out = v;
    return WH_OK;
}

/* List what injection reads from the cluster and publish it. */
static wh_code refresh(inject_endpoint *ep, wh_err *err)
{
    cluster_view *v = NULL;
    json_t *nodes = NULL, *nss = NULL, *item;
    size_t i;
    wh_code rc;

    ep->refreshed = time(NULL);
    if ((rc = view_new(ep, &v, err)) != WH_OK)
        goto out;
    if (ep->want_nodes) {
        if ((rc = wh_kube_list(ep->kube, &kube_nodes, NULL, NULL, &nodes, err)) != WH_OK) {
            wh_err_prefix(err, "listing nodes for --native-sidecars auto");
            goto out;
        }
        json_array_foreach(nodes, i, item)
        {
            const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
            const char *kubelet = json_string_value(
                json_object_get(json_object_get(json_object_get(item, "status"), "nodeInfo"), "kubeletVersion"));
            if (name != NULL && wh_inject_settings_set_node(&v->settings, name, kubelet) != WH_OK) {
                rc = wh_err_set(err, WH_E_NOMEM, "out of memory");
                goto out;
            }
        }
    }
    if (ep->want_namespaces) {
        if ((rc = wh_kube_list(ep->kube, &wh_kube_namespaces, NULL, NULL, &nss, err)) != WH_OK) {
            wh_err_prefix(err, "listing namespaces for --platform openshift");
            goto out;
        }
        v->namespaces = json_object();
        json_array_foreach(nss, i, item)
        {
            const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
            if (name != NULL && json_object_set(v->namespaces, name, item) != 0) {
                rc = wh_err_set(err, WH_E_NOMEM, "out of memory");
                goto out;
            }
        }
    }
    view_publish(ep, v);
    v = NULL;
out:
    view_unref(v);
    json_decref(nodes);
    json_decref(nss);
    return rc;
}

static void serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    inject_endpoint *ep = self->data;
    cluster_view *view = view_get(ep);
    wh_inject_call call;
    wh_admission_outcome outcome;
    struct timespec t0, t1;
    const char *result, *labels[2];
    double secs;

    memset(&call, 0, sizeof(call));
    memset(&outcome, 0, sizeof(outcome));
    call.registry = ep->registry;
    call.settings = &view->settings;
    call.namespaces = view->namespaces;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wh_metric_add(ep->requests, NULL, 1);
    wh_admission_serve(req, wh_inject_admit, &call, res, &outcome);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    view_unref(view);
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
    return wh_inject_registry_ready(ep->registry, detail);
}

static wh_code reload(wh_endpoint *self, int forced, wh_err *err)
{
    inject_endpoint *ep = self->data;
    wh_code rc = wh_inject_registry_reload(ep->registry, err);

    if (ep->kube != NULL && (forced || time(NULL) - ep->refreshed >= REFRESH_SECONDS)) {
        wh_err kerr = {0};
        if (refresh(ep, &kerr) != WH_OK)
            wh_log(WH_LOG_WARN, "inject: could not refresh the cluster view; keeping the previous one", "error",
                   wh_err_msg(&kerr), NULL);
    }
    return rc;
}

static void destroy(wh_endpoint *self)
{
    inject_endpoint *ep = self->data;

    wh_inject_registry_free(ep->registry);
    wh_kube_client_free(ep->kube);
    view_unref(ep->view);
    pthread_mutex_destroy(&ep->lock);
    free(ep);
}

/* Reach the API server when injection needs cluster facts. */
static void connect_cluster(inject_endpoint *ep)
{
    const wh_inject_settings *s = &ep->view->settings;
    wh_kube_options opts;
    wh_err err = {0};

    ep->want_nodes = s->native_mode_set ? s->native_mode == WH_INJECT_NATIVE_AUTO
                                        : wh_inject_settings_env(s, "ENABLE_NATIVE_SIDECARS") == NULL ||
                                              strcmp(wh_inject_settings_env(s, "ENABLE_NATIVE_SIDECARS"), "auto") == 0;
    ep->want_namespaces = strcmp(wh_inject_settings_platform(s), "openshift") == 0;
    if (!ep->want_nodes && !ep->want_namespaces)
        return;
    memset(&opts, 0, sizeof(opts));
    opts.timeout_ms = KUBE_TIMEOUT_MS;
    opts.user_agent = "webhookd/" WH_VERSION;
    if (wh_kube_client_new(&opts, &ep->kube, &err) != WH_OK) {
        wh_log(WH_LOG_INFO,
               "inject: no Kubernetes API access; native sidecars follow no node versions and "
               "OpenShift namespaces are unknown",
               "reason", wh_err_msg(&err), NULL);
        ep->kube = NULL;
        return;
    }
    if (refresh(ep, &err) != WH_OK)
        wh_log(WH_LOG_WARN, "inject: could not read the cluster view; retrying every 30s", "error", wh_err_msg(&err),
               NULL);
}

wh_code wh_inject_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err)
{
    static const double buckets[] = {.1, 1, 3, 5, 10, 20, 30, 60};
    static const char *const rev_labels[] = {"revision", "result", NULL};
    inject_endpoint *ep = wh_calloc(1, sizeof(*ep));
    const char *dir = env->flag(env, "revisions-dir");
    wh_code rc;

    pthread_mutex_init(&ep->lock, NULL);
    for (size_t i = 0; i < NSETTINGS; i++)
        ep->settings_flags[i] = env->flag(env, setting_names[i]);
    if ((rc = view_new(ep, &ep->view, err)) != WH_OK)
        goto out;
    if ((rc = wh_inject_registry_open(dir != NULL && *dir != '\0' ? dir : NULL, env->metrics, &ep->registry, err)) !=
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
    connect_cluster(ep);
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
    if (ep != NULL) {
        wh_inject_registry_free(ep->registry);
        view_unref(ep->view);
        pthread_mutex_destroy(&ep->lock);
        free(ep);
    }
    return rc;
}
