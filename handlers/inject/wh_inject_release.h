/*
 * wh_inject_release.h - which Istio release a revision is, and the one table
 * of istiod's release-dependent injection behaviour (issue #11).
 *
 * A revision of release X must be injected as istiod X's Go code would, not
 * as master's: the goldens of every release in ../shared/conformance/
 * istio-inject/<set> say so.  The release comes, in this order, from an
 * explicit source (<revisions-dir>/<rev>/version, `webhookctl kube-inject
 * --istio-version`), the injector ConfigMap's app.kubernetes.io/version
 * label, values.global.tag when it is a version, else the newest behaviour.
 * Releases are compared by major.minor (1.31.0-alpha.0 behaves as 1.31),
 * except where a row names the patch releases a backport changed: there a
 * version without a patch counts as the minor's first (x.y.0).
 *
 * Every behaviour that differs between releases is one row of the table in
 * wh_inject_release.c, naming the first and last release it applies to; the
 * pipeline asks wh_inject_release_has() at the one place that behaviour is
 * implemented.  Releases older than the table's oldest (1.20) behave as
 * 1.20, with a warning; releases newer than the newest behave as the newest.
 */
#ifndef WH_INJECT_RELEASE_H
#define WH_INJECT_RELEASE_H

#include <jansson.h>

#include "wh_result.h"

/* A parsed Istio version: "1.21.0", "1.21", "v1.22.3", "1.31.0-alpha.0". */
typedef struct wh_istio_version {
    int major, minor, patch; /* patch -1 when not given */
    char text[48];           /* as given, trimmed */
} wh_istio_version;

/* Parse `s` (surrounding whitespace and a leading 'v' allowed; a pre-release
 * or build suffix after '-' or '+' is kept in text only). */
wh_code wh_istio_version_parse(const char *s, wh_istio_version *out, wh_err *err);
/* Order by major.minor only (the patch never changes injection). */
int wh_istio_version_cmp(const wh_istio_version *a, const wh_istio_version *b);

/* Where a revision's release came from. */
typedef enum wh_release_source {
    WH_RELEASE_NEWEST = 0, /* nothing said which: the newest behaviour */
    WH_RELEASE_FILE,       /* <revisions-dir>/<rev>/version */
    WH_RELEASE_FLAG,       /* webhookctl kube-inject --istio-version */
    WH_RELEASE_LABEL,      /* the injector ConfigMap's app.kubernetes.io/version */
    WH_RELEASE_TAG         /* values.global.tag */
} wh_release_source;

/* Short text for logs, /readyz and metrics labels: "newest", "file", "flag",
 * "configmap-label", "values-tag". */
const char *wh_release_source_name(wh_release_source s);

typedef struct wh_inject_release {
    wh_release_source source;
    wh_istio_version declared; /* what the source said (text "" for WH_RELEASE_NEWEST) */
    wh_istio_version behaves;  /* the release whose behaviour applies */
    char warning[200];         /* "" or why behaves differs from declared */
    /* bit b set: behaviour b (below) applies to `behaves`; worked out from
     * the table once, when the release is settled, not per review */
    unsigned behaviours;
} wh_inject_release;

/* The newest behaviour (what a revision gets when nothing says its release). */
void wh_inject_release_newest(wh_inject_release *out);

/* What a revision says about its release, in detection order. */
typedef struct wh_release_hints {
    const char *explicit_version;      /* file or flag text, or NULL */
    wh_release_source explicit_source; /* WH_RELEASE_FILE or WH_RELEASE_FLAG */
    const char *configmap_label;       /* app.kubernetes.io/version of the injector ConfigMap, or NULL */
    const json_t *values;              /* the revision's values (values.global.tag), or NULL */
} wh_release_hints;

/* Pick the release: an explicit version that does not parse is an error
 * (the operator said something wrong); a label that does not parse is
 * skipped (a chart may label with anything); a tag that is not a version
 * ("latest", "master-…") is skipped. */
wh_code wh_inject_release_detect(const wh_release_hints *h, wh_inject_release *out, wh_err *err);

/* One line for logs and diagnostics:
 * "1.21 (from file 1.21.0)", "1.20 (from flag 1.19.3; older than 1.20: ...)". */
void wh_inject_release_describe(const wh_inject_release *r, char *buf, size_t size);

/* ---- the behaviour table ---------------------------------------------- */

typedef enum wh_release_behaviour {
    /* mesh.DefaultProxyConfig() carries tracing.zipkin.address
     * zipkin.istio-system:9411, so cleanProxyConfig drops an equal tracer
     * from PROXY_CONFIG and templates see it when the mesh sets none. */
    WH_REL_DEFAULT_ZIPKIN_TRACER,
    /* mesh.DefaultMeshConfig() sets inboundTrafficPolicy {mode: PASSTHROUGH}. */
    WH_REL_DEFAULT_INBOUND_POLICY,
    /* appendMultusNetwork splits "ns/name" in the JSON form of
     * k8s.v1.cni.cncf.io/networks: {"name": "istio-cni", "namespace": "default"};
     * before, {"name": "default/istio-cni"}, matched on the whole text
     * (backported to 1.23.6, 1.24.4 and 1.25.1). */
    WH_REL_MULTUS_JSON_NAMESPACE,
    /* sidecar.istio.io/inject accepts only "true"/"false" (anything else: a
     * warning and the default policy); before, y/yes/true/on in any case
     * inject and any other non-empty value is an explicit no. */
    WH_REL_INJECT_VALUE_STRICT,
    /* ENABLE_NATIVE_SIDECARS is a mode defaulting to auto (kubelets >= 1.33);
     * before, a boolean defaulting to false ("auto" unparsable: false). */
    WH_REL_NATIVE_SIDECARS_AUTO,
    /* sidecar.istio.io/enableCoreDump must be a bool (annotation validation). */
    WH_REL_VALIDATE_CORE_DUMP_ANNOTATION,
    /* lifecycle preStop/postStart httpGet/tcpSocket hooks are rewritten to
     * the agent (/app-lifecycle/<c>/prestopz|poststartz). */
    WH_REL_REWRITE_LIFECYCLE_HOOKS,
    /* sidecar.istio.io/proxyCPU, proxyMemory and their limits must be quantities. */
    WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS,
    /* excludeInterfaces, kubevirtInterfaces, reroute-virtual-interfaces must be interface names. */
    WH_REL_VALIDATE_INTERFACE_ANNOTATIONS,
    /* prometheus.io/port is validated (range, agent port, Istio's reserved
     * ports) and prometheus.istio.io/scrape-targets is merged. */
    WH_REL_PROMETHEUS_SCRAPE_TARGETS,
    /* prometheus.istio.io/secure-port follows ENVOY_SECURE_MERGED_METRICS_PORT. */
    WH_REL_PROMETHEUS_SECURE_PORT,
    /* a re-injected pod (it has sidecar.istio.io/status) whose proxy lacks
     * ISTIO_KUBE_APP_PROBERS gets it appended; before, it stayed without. */
    WH_REL_PROBERS_APPEND_ON_REINJECT,
    /* re-applying the pod's own version of a template container drops its
     * runAsUser/runAsGroup when it has a securityContext and the template's
     * container runs as a user other than 1337 (resetFieldsInAutoImageContainer;
     * backported to 1.20.1, reverted by backports in 1.20.7, 1.21.3 and 1.22.1). */
    WH_REL_OVERRIDE_RESETS_FOREIGN_UID,
    /* PLATFORM=openshift: the pod's istio-proxy runAsUser/runAsGroup are
     * dropped before injection when its runAsUser equals the app's (the one
     * OpenShift assigned to every container); before, kept as overrides
     * (backported to 1.23.1). */
    WH_REL_OPENSHIFT_PROXY_UID_RESET,
    /* sidecar.istio.io/nativeSidecar "true"/"false" overrides
     * ENABLE_NATIVE_SIDECARS when istiod moves the pod's own istio-proxy into
     * initContainers; before, only the global setting counted. */
    WH_REL_NATIVE_SIDECAR_ANNOTATION,
    /* the proxy image's type is values.global.variant when the effective
     * ProxyConfig has no image (before: no type, the tag as it is). */
    WH_REL_PROXY_IMAGE_VARIANT,
    /* a ProxyConfig image without an imageType falls back to the variant too;
     * before, naming an image at all replaced the variant with its type. */
    WH_REL_VARIANT_FILLS_EMPTY_IMAGE_TYPE,
    /* the pod's own istio-proxy runAsUser/runAsGroup reach the init side
     * (adjustInitContainerUser): with TPROXY the proxy runs as 0, otherwise
     * istio-validation takes them; it came with the backport that ended
     * WH_REL_OVERRIDE_RESETS_FOREIGN_UID (1.20.7, 1.21.3, 1.22.1). */
    WH_REL_ADJUST_INIT_CONTAINER_USER,
    /* ProxyConfigs created in the same second rank by "<name>.<namespace>"
     * (sortConfigByCreationTime; from 1.23: by name, then namespace). */
    WH_REL_PROXYCONFIG_TIE_DOTTED_NAME,
    /* Template functions (createInjectionFuncmap, and the Sprig in go.mod):
     * a template of a release without one fails to parse when the config
     * loads, "function \"x\" not defined" (wh_inject_set_funcs). */
    WH_REL_FUNC_MERGE_MAPS,     /* Istio's mergeMaps */
    WH_REL_FUNC_SPRIG_3_3,      /* Sprig v3.3.0 (before: v3.2.3): sha512sum */
    WH_REL_FUNC_OMIT_NIL,       /* Istio's omitNil (backported to 1.28.6, 1.29.1) */
    WH_REL_FUNC_OTEL_RES_ATTRS, /* Istio's otelResourceAttributes */
    /* Fields of SidecarTemplateData: a template of a release without one
     * fails when it renders, "can't evaluate field X in type
     * *inject.SidecarTemplateData" (wh_inject_render_data.c). */
    WH_REL_DATA_COMPLIANCE_POLICY, /* .CompliancePolicy (backported to 1.20.4) */
    WH_REL_DATA_INBOUND_MODE,      /* .InboundTrafficPolicyMode */
    WH_REL_DATA_NATIVE_SIDECARS,   /* .NativeSidecars */
    WH_REL_DATA_PROXY_INIT_IMAGE,  /* .ProxyInitImage */
    WH_REL_NBEHAVIOURS
} wh_release_behaviour;

/* Whether behaviour `b` applies to the revision's release (r made by
 * wh_inject_release_newest or _detect; NULL: the newest). */
int wh_inject_release_has(const wh_inject_release *r, wh_release_behaviour b);

/* A table row, for diagnostics and tests: name, first and last release
 * ("" when open-ended), the patch releases in which a backport changed the
 * behaviour within their minor ("" when none), and what it is.  Each backport
 * flips the behaviour in its minor from its patch on: in a minor the row
 * covers the first one ends it (e.g. "1.21.3 1.22.1": 1.21.0 to 1.21.2 and
 * 1.22.0 have it), in a minor outside it begins it (e.g. first "1.26",
 * "1.25.1": 1.25.1 and later 1.25 patches have it too), a second one
 * flips it back ("1.20.1 1.20.7": only 1.20.1 to 1.20.6). */
typedef struct wh_release_row {
    wh_release_behaviour id;
    const char *name;
    const char *first, *last;
    const char *backports;
    const char *what;
} wh_release_row;

const wh_release_row *wh_inject_release_table(size_t *n);
/* Oldest and newest release the table knows ("1.20", "1.31"). */
const char *wh_inject_release_oldest(void);
const char *wh_inject_release_newest_known(void);

#endif
