/*
 * wh_inject_settings.h - what istiod takes from its process environment
 * rather than from a revision's ConfigMaps (native sidecars, platform,
 * compliance policy, --env), set by the /inject flags
 * (WH_INJECT_SETTINGS_FLAGS, wh_inject_endpoint.h) and by `webhookctl
 * kube-inject`; defined in wh_inject_settings.c.  Shared by every stage of
 * injection: it includes no stage's header.
 *
 * One process serves many revisions, each of which had an istiod of its
 * own: where istiod's chart derives an environment variable from the
 * revision's values, the revision's values win over the process flag
 * (wh_inject_settings_for_revision: PLATFORM from values.global.platform).
 */
#ifndef WH_INJECT_SETTINGS_H
#define WH_INJECT_SETTINGS_H

#include <jansson.h>

#include "wh_inject_release.h"
#include "wh_result.h"

typedef enum wh_inject_native_mode {
    WH_INJECT_NATIVE_AUTO = 0, /* on when every known node's kubelet is >= 1.33 (zero nodes: on) */
    WH_INJECT_NATIVE_TRUE,
    WH_INJECT_NATIVE_FALSE
} wh_inject_native_mode;

/*
 * Mapping of the corpus' case.yaml `settings` keys:
 *   values / mesh / injectConfig  -> the revision's `values`, `mesh`, `config` files
 *   enableNativeSidecars          -> native_mode (--native-sidecars true|false|auto)
 *   kubeletVersions               -> nodes (webhookd reads them from the API server)
 *   nativeSidecars                -> the result of the two above (not a setting itself)
 *   platform                      -> platform (--platform openshift)
 *   compliancePolicy              -> compliance_policy (--compliance-policy)
 *   env                           -> env (--env KEY=VALUE); PLATFORM, COMPLIANCE_POLICY and
 *                                    ENABLE_NATIVE_SIDECARS in env also set the matching field
 *                                    unless given explicitly
 *   namespaces                    -> wh_inject_input.namespace_obj (webhook path, OpenShift)
 */
typedef struct wh_inject_settings {
    wh_inject_native_mode native_mode;
    int native_mode_set;     /* 1 once given explicitly (env ENABLE_NATIVE_SIDECARS then ignored) */
    char *compliance_policy; /* "" / NULL: unset */
    char *platform;          /* "openshift" or NULL */
    json_t *env;             /* object KEY -> string: the environment templates read via `env` */
    json_t *nodes;           /* object nodeName -> kubeletVersion (for auto); NULL: no nodes known;
                                JSON false: nodes cannot be read (auto: off, as istiod without a node client) */
} wh_inject_settings;

/* An initializer, which clang-format would lay out as a block. */
/* clang-format off */
#define WH_INJECT_SETTINGS_INIT {WH_INJECT_NATIVE_AUTO, 0, NULL, NULL, NULL, NULL}
/* clang-format on */

/* Apply one flag (WH_INJECT_SETTINGS_FLAGS, wh_inject_endpoint.h): key is
 * "native-sidecars", "compliance-policy", "platform" or "env" (value
 * KEY=VALUE[,KEY=VALUE...]).  Unknown key or bad value -> WH_E_INVALID. */
wh_code wh_inject_settings_set(wh_inject_settings *s, const char *key, const char *value, wh_err *err);
/* Add/replace a node's kubelet version (for native auto detection). */
wh_code wh_inject_settings_set_node(wh_inject_settings *s, const char *node, const char *kubelet_version);
void wh_inject_settings_clear(wh_inject_settings *s);

/* Effective values: the explicit flag, else the env pair istiod would read
 * (PLATFORM, COMPLIANCE_POLICY).  Never NULL ("" when unset), except _env
 * which returns NULL for a key that was not given. */
const char *wh_inject_settings_env(const wh_inject_settings *s, const char *key);
/* What os.Getenv(key) gives in istiod, for the templates' `env`: the --env
 * pair, except that ENABLE_NATIVE_SIDECARS, PLATFORM and COMPLIANCE_POLICY
 * given as flags are those same variables of istiod (a template of Istio
 * 1.20-1.24 decides native sidecars with `env "ENABLE_NATIVE_SIDECARS"`).
 * NULL when unset. */
const char *wh_inject_settings_getenv(const wh_inject_settings *s, const char *key);
const char *wh_inject_settings_platform(const wh_inject_settings *s);

/* istiod's PLATFORM for a revision whose injector ConfigMap holds `values`:
 * istiod's chart sets that revision's PLATFORM from values.global.platform
 * (`coalesce .Values.global.platform .Values.platform` from 1.24; the
 * top-level `platform` is not copied into the ConfigMap), so a non-empty
 * global.platform is the revision's own; otherwise the process's setting
 * (--platform, or PLATFORM in --env) stands for what the values cannot show.
 * Never NULL ("" when unset). */
const char *wh_inject_settings_revision_platform(const wh_inject_settings *s, const json_t *values);
/* The settings the istiod of the revision with `values` ran with: a shallow
 * copy of `process` (NULL: the defaults) with the revision's PLATFORM.  It
 * borrows from both; never wh_inject_settings_clear it. */
void wh_inject_settings_for_revision(const wh_inject_settings *process, const json_t *values, wh_inject_settings *out);
const char *wh_inject_settings_compliance(const wh_inject_settings *s);

/* The global native flag for a pod (3.2.4, before the per-pod annotation):
 * `node_name` = the pod's spec.nodeName or NULL; `rel` the revision's
 * release (NULL: the newest; before 1.27 there is no auto mode). */
int wh_inject_settings_native(const wh_inject_settings *s, const char *node_name, const wh_inject_release *rel);

#endif
