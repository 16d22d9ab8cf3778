/*
 * inventory.h - the cluster's control-plane revisions and who uses them:
 * which revisions exist (injector ConfigMaps, injector webhooks of istiod or
 * webhookd, tags), who serves each, which namespaces select it, which pods
 * run its proxy, and which pods run another revision than the one that would
 * inject them today (they need a restart).
 *
 * One model for `webhookctl revision list|describe|migrate|remove` (revision.c)
 * and `webhookctl check` (check.c).  Which revision a namespace or pod
 * selects is decided by diag_injecting_revision() (diag.h), the same
 * selector evaluation check and check-inject use: what the API server would
 * do, tags and deactivated injectors included.
 */
#ifndef WH_CTL_INVENTORY_H
#define WH_CTL_INVENTORY_H

#include <stddef.h>

#include <jansson.h>

#include "wh_kube.h"
#include "wh_result.h"

/* What the inventory is computed from: LIST results (arrays), borrowed by
 * the functions below and owned by the struct. */
typedef struct inv_cluster {
    json_t *mwcs;       /* every MutatingWebhookConfiguration */
    json_t *namespaces; /* every Namespace */
    json_t *pods;       /* every Pod */
    json_t *replicasets, *deployments, *statefulsets, *daemonsets;
    json_t *configmaps; /* ConfigMaps of the Istio namespace */
    json_t *services;   /* Services of the Istio namespace labelled istio.io/rev */
    json_t *index;      /* "Kind/ns/name" -> workload or ReplicaSet (built by inv_load) */
} inv_cluster;

/* LIST what the inventory needs; err says which list failed. */
wh_code inv_load(wh_kube_client *c, const char *istio_ns, inv_cluster *out, wh_err *err);
void inv_free(inv_cluster *cl);

/* Does the pod run an Istio proxy (a sidecar.istio.io/status annotation or
 * an istio-proxy container)?  Its revision (the annotation's "revision",
 * else the pod's istio.io/rev label, else "default") goes to rev. */
int inv_pod_revision(const json_t *pod, char *rev, size_t n);

/* Is the pod gone or going (terminating, Succeeded or Failed)? */
int inv_pod_done(const json_t *pod);

/* The pod's owning workload as "Kind/name" (a ReplicaSet is followed to
 * its Deployment) into owner ("" for a pod without a controller), and the
 * workload object when it was listed (NULL otherwise). */
const json_t *inv_pod_owner(const inv_cluster *cl, const json_t *pod, char *owner, size_t n);

/* The labels that decide a pod's injection: its workload's pod template's
 * when known, else the pod's own (borrowed). */
const json_t *inv_pod_template_labels(const json_t *workload, const json_t *pod);

/* The labels of namespace `name` (borrowed; NULL when unknown). */
const json_t *inv_namespace_labels(const inv_cluster *cl, const char *name);

/* The inventory (new reference), sorted by name; with `only_ns` (NULL: every
 * namespace) the namespaces, pod counts and needsRestart of that namespace
 * only, the revisions all the same (they are cluster-wide):
 *   {"revisions": [{"name", "version", "servedBy": "istiod"|"webhookd"|"nobody",
 *                   "webhooks": [MWC names], "tags": [...], "namespaces": [...],
 *                   "pods": N, "configMaps": [...]}],
 *    "needsRestart": [{"namespace", "pod", "owner", "running", "selected"}]} */
json_t *inv_build(const inv_cluster *cl, const char *only_ns);

/* The revision object named `name` of an inventory (borrowed), or NULL. */
const json_t *inv_find_revision(const json_t *inventory, const char *name);

#endif
