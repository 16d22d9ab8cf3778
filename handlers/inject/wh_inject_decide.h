/*
 * wh_inject_decide.h - stage 2 of injection: whether this pod gets a
 * sidecar, by istiod's injectRequired rule chain.
 */
#ifndef WH_INJECT_DECIDE_H
#define WH_INJECT_DECIDE_H

#include <jansson.h>

#include "wh_inject_revision.h"

/* istiod's injectRequired rule chain on `pod` (metadata.namespace filled).
 * kube_inject = 1 applies istioctl's variant (policy enabled, no selectors).
 * Returns 1 to inject, 0 to skip with *reason (static text: "host network",
 * "system namespace", "sidecar.istio.io/inject=false", "neverInjectSelector",
 * "policy disabled", "unknown injection policy"). */
int wh_inject_decide(const wh_inject_revision *rev, const json_t *pod, int kube_inject, const char **reason);

/* 1 if the metav1.LabelSelector matches `labels`; 0 if not; -1 if invalid.
 * An empty selector never matches (istiod's injection semantics). */
int wh_inject_selector_matches(const json_t *selector, const json_t *labels);

#endif
