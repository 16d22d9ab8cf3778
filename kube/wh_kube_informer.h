/*
 * wh_kube_informer.h - keep a local copy of one kind of Kubernetes object up
 * to date, the way client-go's reflector does, on a thread of its own.
 *
 * webhookd reads everything it needs from the cluster (istiod's ConfigMaps,
 * ProxyConfigs, nodes, namespaces) through informers, so that no admission
 * request ever waits on the API server and an API server outage only freezes
 * what webhookd knows (see handlers/inject/wh_inject_cluster.c, the user).
 *
 * The loop: LIST (paged) -> WATCH from the list's resourceVersion with
 * allowWatchBookmarks and a server-side timeout of 5-10 minutes -> when the
 * server ends the stream, WATCH again from the last resourceVersion seen
 * (bookmarks included); on `410 Expired/Gone` (an ERROR event or the HTTP
 * status) LIST again; on any other failure wait with jittered exponential
 * backoff (capped) and WATCH again from where it stopped.  A quiet cluster
 * therefore costs one long-lived request per informer and no LIST at all.
 *
 * A LIST refused with 403 (no RBAC) or 404 (the CRD is not installed) makes
 * the kind "unavailable": the cache is empty, the informer counts as synced
 * (the consumer decides what absence means) and it tries again every
 * WH_KUBE_INFORMER_UNAVAILABLE_RETRY_S seconds.
 *
 * Each object is reduced by the caller's `trim` function to the fields it
 * needs before it is cached; an event that leaves the trimmed copy unchanged
 * (a node's heartbeat, a namespace's unrelated label) calls nobody.
 * `on_change` runs on the informer's thread after the first sync and after
 * every change, with the whole cache: an object "ns/name" (cluster-scoped:
 * "name") -> trimmed object.  The cache is borrowed for the call only; the
 * objects in it are never modified afterwards, so a consumer may keep
 * references to them (or a shallow copy of the cache) in its snapshots.
 *
 * With a cache_file, the trimmed cache is also written there (atomically)
 * after every change the API server reported.  When the first LIST fails -
 * webhookd restarted while the API server is away - the informer loads that
 * file if this build wrote it for the same resource, namespace and selectors,
 * hands it to on_change and counts as synced: the consumer serves what was
 * last seen instead of nothing, and the next LIST replaces it.
 */
#ifndef WH_KUBE_INFORMER_H
#define WH_KUBE_INFORMER_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_kube.h"
#include "wh_metrics.h"
#include "wh_result.h"

#define WH_KUBE_INFORMER_UNAVAILABLE_RETRY_S 300

typedef struct wh_kube_informer wh_kube_informer;

/* The fields worth keeping of `obj` (new reference), or NULL to keep nothing
 * of it (as if it did not exist).  Runs on the informer's thread. */
typedef json_t *(*wh_kube_trim_fn)(const json_t *obj, void *ctx);
/* The cache changed (or the first sync finished, or the kind turned out
 * unavailable: then wh_kube_informer_unavailable(inf) says so). */
typedef void (*wh_kube_change_fn)(void *ctx, wh_kube_informer *inf, const json_t *cache);

typedef struct wh_kube_informer_options {
    const wh_kube_options *kube; /* how to reach the API server (copied) */
    const wh_kube_resource *resource;
    const char *ns;             /* NULL: all namespaces (or cluster-scoped) */
    const char *label_selector; /* NULL: everything */
    const char *field_selector; /* NULL: everything */
    wh_kube_trim_fn trim;       /* NULL: keep whole objects */
    const char *cache_file;     /* NULL: no snapshot on disk */
    wh_kube_change_fn on_change;
    void *ctx;
    wh_metrics *metrics;    /* optional: restarts, relists, objects, sync age by resource */
    int watch_timeout_s;    /* 0: 300-600 s, random per watch (as client-go) */
    double backoff_max_s;   /* 0: 30 s */
    double backoff_start_s; /* 0: 0.5 s */
} wh_kube_informer_options;

/* Create the client and start the thread.  Fails only when the options are
 * unusable (no kubeconfig, bad server URL); the API server being down is
 * not a failure: the informer keeps trying. */
wh_code wh_kube_informer_start(const wh_kube_informer_options *o, wh_kube_informer **out, wh_err *err);
/* Stop the thread (within about a second) and free everything. */
void wh_kube_informer_stop(wh_kube_informer *inf);

/* 1 once the first LIST succeeded (or the kind turned out unavailable). */
int wh_kube_informer_synced(wh_kube_informer *inf);
/* 1 when the kind is not served to us (403/404); what was said goes to detail. */
int wh_kube_informer_unavailable(wh_kube_informer *inf);
/* Seconds since the informer was last known in sync with the API server
 * (0 while its watch is healthy). */
double wh_kube_informer_sync_age(wh_kube_informer *inf);
/* One line: "configmaps in istio-system: watching, 4 objects" and the like. */
void wh_kube_informer_describe(wh_kube_informer *inf, wh_buf *out);

#endif
