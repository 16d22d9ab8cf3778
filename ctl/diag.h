/*
 * diag.h - what `webhookctl check-inject` and `webhookctl check` share:
 * how they recognise Istio's injector and validator webhooks (istiod's and
 * webhookd's alike) among a cluster's webhook configurations.
 */
#ifndef WH_CTL_DIAG_H
#define WH_CTL_DIAG_H

#include <jansson.h>

#include "wh_kube.h"
#include "wh_result.h"

/* Does the webhook entry call Istio's sidecar injector?  Its name ends in
 * "sidecar-injector.istio.io" (istiod's and the tags' entries) or the path
 * it calls starts with "/inject" (webhookd's /inject[/rev/R]). */
int diag_is_injector(const json_t *entry);
/* ... Istio's config validation: name ends in "validation.istio.io" or the
 * path starts with "/validate". */
int diag_is_validator(const json_t *entry);
/* The revision whose injector the API server calls for a pod labelled
 * `pod_labels` in a namespace labelled `ns_labels`: the istio.io/rev label of
 * the first MutatingWebhookConfiguration of `mwcs` with an injector entry
 * whose namespaceSelector and objectSelector both select them (tags carry
 * their revision's label, so a tag resolves to its revision; deactivated
 * injectors select nothing).  NULL when none does.  *mwc (may be NULL) gets
 * that configuration, *matches (may be NULL) the number of configurations
 * that select the pod (more than one: double injection). */
const char *diag_injecting_revision(const json_t *mwcs, const json_t *ns_labels, const json_t *pod_labels,
                                    const json_t **mwc, int *matches);
/* Is the MutatingWebhookConfiguration webhookd's (its chart's
 * app.kubernetes.io/name label, or an entry calling /inject/rev/...)? */
int diag_is_webhookd(const json_t *mwc);
/* The label value, or NULL. */
const char *diag_label(const json_t *obj, const char *key);
/* metadata.name, "" when absent. */
const char *diag_name(const json_t *obj);

/* Print `s` padded with spaces to `width` display columns (UTF-8 aware). */
void diag_pad(FILE *out, const char *s, size_t width);
/* Display columns of a UTF-8 string. */
size_t diag_width(const char *s);

#endif
