/*
 * wh_inject_cluster.h - what istiod's sidecar injector reads from the
 * cluster, read by informers (kube/wh_kube_informer.h) and handed to /inject
 * as immutable snapshots (spec: /work/shared/spec/cluster.md §1-3):
 *
 *   ConfigMaps in the Istio namespace  -> the revision registry:
 *       istio-sidecar-injector[-<rev>] (config, values) + istio[-<rev>] (mesh,
 *       meshNetworks) = revision `default` / <rev>; a revision appears, changes
 *       and disappears with its injector ConfigMap; an edit that does not load
 *       (YAML, template parse, failing check render) keeps the last good one;
 *       an invalid meshNetworks gets istiod's warning and refuses nothing
 *       (injection does not read it; wh_validate_mesh_networks);
 *   ProxyConfigs (networking.istio.io/v1beta1, all namespaces) -> the view;
 *   Nodes (kubelet versions, for --native-sidecars auto)        -> the view;
 *   Namespaces (OpenShift UID/GID annotations: --platform openshift, or from
 *       the first revision whose values say so) -> the view.
 *
 * Every callback runs on an informer thread; requests only take a reference
 * to the current view (wh_inject_cluster_view_get), never wait for the API.
 * With a cache_dir, each source keeps its last state in <cache_dir>/<plural>.json
 * and a webhookd started while the API server is away serves that
 * (wh_kube_informer.h, cache_file).
 */
#ifndef WH_INJECT_CLUSTER_H
#define WH_INJECT_CLUSTER_H

#include <jansson.h>
#include <stdatomic.h>

#include "wh_buf.h"
#include "wh_inject_render.h"
#include "wh_kube.h"
#include "wh_metrics.h"

typedef struct wh_inject_cluster wh_inject_cluster;

/* What the cluster says, immutable once published. */
typedef struct wh_inject_cluster_view {
    atomic_int refs;
    json_t *nodes;        /* object nodeName -> kubeletVersion; false: no access to nodes; NULL: not read */
    json_t *namespaces;   /* object name -> Namespace (annotations istiod reads), or NULL */
    json_t *proxyconfigs; /* array, oldest first: {namespace, name, selector, doc}, or NULL */
} wh_inject_cluster_view;

typedef struct wh_inject_cluster_options {
    const wh_kube_options *kube;
    const char *istio_namespace;  /* read revisions from its ConfigMaps; NULL: not */
    wh_inject_registry *registry; /* where revisions go (borrowed) */
    int proxyconfigs;             /* read ProxyConfig resources */
    int nodes;                    /* read node kubelet versions */
    int namespaces;               /* read namespaces */
    wh_metrics *metrics;
    int watch_timeout_s;   /* 0: the informer's default */
    const char *cache_dir; /* each source's snapshot, for restarts while the API server is away; NULL: none */
} wh_inject_cluster_options;

/* Start the informers (they keep retrying while the API server is away). */
wh_code wh_inject_cluster_start(const wh_inject_cluster_options *o, wh_inject_cluster **out, wh_err *err);
void wh_inject_cluster_stop(wh_inject_cluster *c);
/* Watch namespaces from now on (a revision needs them: its istiod runs on
 * OpenShift); nothing when they are watched already.  Any thread. */
wh_code wh_inject_cluster_watch_namespaces(wh_inject_cluster *c, wh_err *err);

/* A reference to the current view (never NULL); release it with _unref. */
wh_inject_cluster_view *wh_inject_cluster_view_get(wh_inject_cluster *c);
void wh_inject_cluster_view_unref(wh_inject_cluster_view *v);

/* 1 once every source had its first sync (then for good: an outage later
 * does not make webhookd unready).  Appends "source: state; ..." to detail. */
int wh_inject_cluster_ready(wh_inject_cluster *c, wh_buf *detail);

/* Load a revision from its ConfigMaps' contents and check-render a plain pod
 * with it, as the cluster source does before serving it (for tests and
 * webhookctl too).  `inputs`: {"config", "values", "mesh"} (strings; mesh
 * optional; a "meshNetworks" there is not read: callers validate it apart). */
wh_code wh_inject_cluster_load_revision(const char *name, const json_t *inputs, wh_inject_revision **out, wh_err *err);

#endif
