/*
 * wh_inject_endpoint.h - webhookd's /inject endpoint (listed in
 * server/wh_server_endpoints.c) and its flags, declared here once: the
 * endpoint's own (--revisions-dir) and istiod's environment, which
 * `webhookctl kube-inject` (ctl/kube_inject.c) takes too.
 */
#ifndef WH_INJECT_ENDPOINT_H
#define WH_INJECT_ENDPOINT_H

#include "wh_endpoint.h"
#include "wh_result.h"

/* istiod's environment as flags, X(name, repeatable, usage): webhookd's
 * /inject and webhookctl kube-inject both list these and hand each value to
 * wh_inject_settings_set(settings, name, value) (kube-inject takes a
 * `repeatable` flag several times; webhookd once, as a comma list). */
#define WH_INJECT_SETTINGS_FLAGS(X)                                                                                    \
    X("native-sidecars", 0,                                                                                            \
      "istiod's ENABLE_NATIVE_SIDECARS: true, false or auto (the default: on when every node's kubelet is 1.33 or "    \
      "newer, read from the API server; kube-inject, like istioctl on files, reads no nodes: auto is false there)")    \
    X("compliance-policy", 0, "istiod's COMPLIANCE_POLICY (e.g. fips-140-3)")                                          \
    X("platform", 0,                                                                                                   \
      "istiod's PLATFORM for the revisions whose values.global.platform names none (openshift: the webhook takes the " \
      "proxy UID/GID from the namespace's annotations)")                                                               \
    X("env", 1,                                                                                                        \
      "istiod environment variables the injection templates read, `KEY=VALUE`[,KEY=VALUE...] (e.g. "                   \
      "ENABLE_NATIVE_SIDECARS=false)")

/* --revisions-dir, then WH_INJECT_SETTINGS_FLAGS; ends with a NULL name. */
extern const wh_endpoint_flag wh_inject_endpoint_flags[];

wh_code wh_inject_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err);

/* The endpoint's wh_endpoint_check_fn: istiod's settings and how
 * --revisions-source and --revisions-dir combine. */
wh_code wh_inject_endpoint_check(const wh_endpoint_env *env, wh_err *err);

#endif
