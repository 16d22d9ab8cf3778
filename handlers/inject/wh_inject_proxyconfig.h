/*
 * wh_inject_proxyconfig.h - MeshConfig and ProxyConfig as istiod reads them:
 * a release's defaults, the mesh file applied onto them, ProxyConfig
 * documents (resources, the proxy.istio.io/config annotation) and their
 * validation and protoToJSON text (wh_inject_proxyconfig.c), and istiod's
 * EffectiveProxyConfig over all of them (wh_inject_proxyconfig_merge.c).
 * Shared by every stage of injection: it includes no stage's header.
 */
#ifndef WH_INJECT_PROXYCONFIG_H
#define WH_INJECT_PROXYCONFIG_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_inject_release.h"
#include "wh_result.h"

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
/* The ProxyConfig istiod's webhook starts a pod from (the revision computes
 * it once): EffectiveProxyConfig prints every layer with protojson before
 * merging it (mergeWithPrecedence), so the mesh's defaultConfig lands on the
 * release's DefaultProxyConfig without its zero-valued fields: a
 * `discoveryAddress: ""` or `statusPort: 0` there leaves the default's value
 * (istioctl kube-inject keeps them: it reads the mesh's defaultConfig
 * itself).  New reference. */
json_t *wh_inject_webhook_proxy_config(const json_t *mesh, const wh_inject_release *rel);
/* istiod's EffectiveProxyConfig (wh_inject_proxyconfig_merge.c): from `base`
 * (the mesh's defaultConfig for kube-inject, wh_inject_webhook_proxy_config's
 * for /inject), the ProxyConfig resources (wh_inject_cluster_view's array,
 * oldest first; NULL: none) of the root namespace (the `mesh`'s), of the pod's
 * namespace, then the parsed proxy.istio.io/config `annotation` (NULL: none)
 * under the workload's resource; `webhook` (istiod's /inject, not istioctl
 * kube-inject): the annotation's zero-valued fields change nothing, as
 * mergeWithPrecedence goes through protojson; release `rel` breaks ties of
 * creation time.  *out is a new reference
 * (`base` itself when nothing applies). */
wh_code wh_inject_effective_proxy_config(const json_t *mesh, const json_t *base, const json_t *proxyconfigs,
                                         const json_t *pod, const json_t *annotation, int webhook,
                                         const wh_inject_release *rel, json_t **out, wh_err *err);
/* Drop from a normalised ProxyConfig what protojson does not print (EmitUnpopulated
 * false): fields at their proto3 zero value ("", 0, the enum's first name, an empty
 * list or map).  Messages, durations and wrappers stay whenever set. */
void wh_inject_proxy_config_drop_zero(json_t *pc);
/* Istio's agent-side ProxyConfig validation; NULL when valid, else a new
 * message (caller frees). */
char *wh_inject_proxy_config_invalid(const json_t *pc);
/* protoToJSON: defaults cleared, fields in .proto order, compact. */
void wh_inject_proxy_config_json(const json_t *pc, const wh_inject_release *rel, wh_buf *out);
/* Enum value name of interceptionMode ("REDIRECT" when unset). */
const char *wh_inject_interception_mode(const json_t *pc);

#endif
