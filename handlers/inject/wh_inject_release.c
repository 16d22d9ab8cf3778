/*
 * wh_inject_release.c - Istio release detection and the table of istiod's
 * release-dependent injection behaviour (see wh_inject_release.h).
 *
 * Each row was read from istio/istio's release tags (pkg/kube/inject,
 * pkg/config/mesh, go.mod's Sprig; patch tags for backports) and, where a golden exercises it, checked against
 * ../shared/conformance/istio-inject/<set> by tests/inject/conformance.
 */
#include "wh_inject_release.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLDEST "1.20"
#define NEWEST "1.31" /* master: 1.31.0-alpha.0 */

static const wh_release_row table[] = {
    {WH_REL_DEFAULT_ZIPKIN_TRACER, "default-zipkin-tracer", "", "1.21", "",
     "DefaultProxyConfig has tracing.zipkin.address zipkin.istio-system:9411; cleanProxyConfig drops an equal tracer "
     "from PROXY_CONFIG"},
    {WH_REL_DEFAULT_INBOUND_POLICY, "default-inbound-policy", "1.22", "", "",
     "DefaultMeshConfig sets inboundTrafficPolicy PASSTHROUGH"},
    {WH_REL_MULTUS_JSON_NAMESPACE, "multus-json-namespace", "1.26", "", "1.23.6 1.24.4 1.25.1",
     "appendMultusNetwork writes {\"name\": \"istio-cni\", \"namespace\": \"default\"} into a JSON "
     "k8s.v1.cni.cncf.io/networks (before: {\"name\": \"default/istio-cni\"})"},
    {WH_REL_INJECT_VALUE_STRICT, "inject-value-strict", "1.27", "", "",
     "sidecar.istio.io/inject takes only true/false, other values fall back to the policy (before: y/yes/true/on "
     "inject, any other value does not)"},
    {WH_REL_NATIVE_SIDECARS_AUTO, "native-sidecars-auto", "1.27", "", "",
     "ENABLE_NATIVE_SIDECARS defaults to auto (kubelets >= 1.33) (before: a boolean defaulting to false)"},
    {WH_REL_VALIDATE_CORE_DUMP_ANNOTATION, "validate-core-dump-annotation", "", "1.24", "",
     "sidecar.istio.io/enableCoreDump must parse as a bool"},
    {WH_REL_REWRITE_LIFECYCLE_HOOKS, "rewrite-lifecycle-hooks", "1.25", "", "",
     "preStop/postStart httpGet and tcpSocket hooks go through the agent (/app-lifecycle/<c>/prestopz|poststartz)"},
    {WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, "validate-proxy-resource-annotations", "1.29", "", "1.27.6 1.28.4",
     "sidecar.istio.io/proxyCPU, proxyMemory, proxyCPULimit, proxyMemoryLimit must be quantities"},
    {WH_REL_VALIDATE_INTERFACE_ANNOTATIONS, "validate-interface-annotations", "1.30", "", "",
     "excludeInterfaces, kubevirtInterfaces and reroute-virtual-interfaces annotations must be interface names"},
    {WH_REL_PROMETHEUS_SCRAPE_TARGETS, "prometheus-scrape-targets", "1.31", "", "",
     "prometheus.io/port is validated and prometheus.istio.io/scrape-targets is merged into "
     "ISTIO_PROMETHEUS_ANNOTATIONS"},
    {WH_REL_PROMETHEUS_SECURE_PORT, "prometheus-secure-port", "1.31", "", "",
     "prometheus.istio.io/secure-port is set from ENVOY_SECURE_MERGED_METRICS_PORT"},
    {WH_REL_PROBERS_APPEND_ON_REINJECT, "probers-append-on-reinject", "1.27", "", "",
     "a re-injected pod whose proxy has no ISTIO_KUBE_APP_PROBERS gets it (before: left without)"},
    {WH_REL_OVERRIDE_RESETS_FOREIGN_UID, "override-resets-foreign-uid", "1.21", "1.22", "1.20.1 1.20.7 1.21.3 1.22.1",
     "the pod's own istio-proxy (or other template container) loses runAsUser/runAsGroup when the template's runs as "
     "a user other than 1337"},
    {WH_REL_OPENSHIFT_PROXY_UID_RESET, "openshift-proxy-uid-reset", "1.24", "", "1.23.1",
     "PLATFORM=openshift: the pod's istio-proxy runAsUser/runAsGroup are dropped when its runAsUser equals the app "
     "container's"},
    {WH_REL_NATIVE_SIDECAR_ANNOTATION, "native-sidecar-annotation", "1.24", "", "",
     "sidecar.istio.io/nativeSidecar true/false overrides ENABLE_NATIVE_SIDECARS when the pod's own istio-proxy moves "
     "to initContainers (before: the global setting only)"},
    {WH_REL_PROXY_IMAGE_VARIANT, "proxy-image-variant", "1.22", "", "",
     "values.global.variant is the proxy image type when the ProxyConfig has no image (before: ignored)"},
    {WH_REL_VARIANT_FILLS_EMPTY_IMAGE_TYPE, "variant-fills-empty-image-type", "1.31", "", "",
     "a ProxyConfig image without imageType takes values.global.variant (before: an image replaced the variant with "
     "its empty type)"},
    {WH_REL_ADJUST_INIT_CONTAINER_USER, "adjust-init-container-user", "1.23", "", "1.20.7 1.21.3 1.22.1",
     "the pod's own istio-proxy runAsUser/runAsGroup reach the init side: with TPROXY the proxy runs as 0, otherwise "
     "istio-validation takes them"},
    {WH_REL_PROXYCONFIG_TIE_DOTTED_NAME, "proxyconfig-tie-dotted-name", "", "1.22", "",
     "of the ProxyConfigs created in the same second the first by \"<name>.<namespace>\" counts (from 1.23: by name, "
     "then namespace; \"a-b\" before \"a\" only before)"},
    {WH_REL_FUNC_MERGE_MAPS, "func-mergeMaps", "1.21", "", "", "templates may call Istio's mergeMaps"},
    {WH_REL_FUNC_SPRIG_3_3, "func-sprig-3.3.0", "1.24", "", "",
     "istiod vendors Sprig v3.3.0 (before: v3.2.3): templates may call sha512sum"},
    {WH_REL_FUNC_OMIT_NIL, "func-omitNil", "1.30", "", "1.28.6 1.29.1", "templates may call Istio's omitNil"},
    {WH_REL_FUNC_OTEL_RES_ATTRS, "func-otelResourceAttributes", "1.30", "", "",
     "templates may call Istio's otelResourceAttributes"},
    {WH_REL_DATA_COMPLIANCE_POLICY, "data-CompliancePolicy", "1.21", "", "1.20.4",
     "templates may read .CompliancePolicy"},
    {WH_REL_DATA_INBOUND_MODE, "data-InboundTrafficPolicyMode", "1.22", "", "",
     "templates may read .InboundTrafficPolicyMode"},
    {WH_REL_DATA_NATIVE_SIDECARS, "data-NativeSidecars", "1.27", "", "", "templates may read .NativeSidecars"},
    {WH_REL_DATA_PROXY_INIT_IMAGE, "data-ProxyInitImage", "1.31", "", "", "templates may read .ProxyInitImage"},
};
#define NROWS (sizeof(table) / sizeof(table[0]))

_Static_assert(NROWS == WH_REL_NBEHAVIOURS, "one table row per behaviour");

const wh_release_row *wh_inject_release_table(size_t *n)
{
    *n = NROWS;
    return table;
}

const char *wh_inject_release_oldest(void)
{
    return OLDEST;
}

const char *wh_inject_release_newest_known(void)
{
    return NEWEST;
}

/* ---- versions ------------------------------------------------------------ */

static int number(const char **p, int *out)
{
    long v = 0;

    if (!isdigit((unsigned char)**p))
        return -1;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > 100000)
            return -1;
        (*p)++;
    }
    *out = (int)v;
    return 0;
}

wh_code wh_istio_version_parse(const char *s, wh_istio_version *out, wh_err *err)
{
    const char *p, *end;
    size_t len;

    memset(out, 0, sizeof(*out));
    out->patch = -1;
    if (s == NULL)
        return wh_err_set(err, WH_E_INVALID, "no Istio version given");
    while (isspace((unsigned char)*s))
        s++;
    len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    if (len == 0)
        return wh_err_set(err, WH_E_INVALID, "empty Istio version");
    if (len >= sizeof(out->text))
        return wh_err_set(err, WH_E_INVALID, "Istio version \"%.40s...\" is too long", s);
    memcpy(out->text, s, len);
    out->text[len] = '\0';
    p = out->text;
    end = p + len;
    if (*p == 'v')
        p++;
    if (number(&p, &out->major) != 0 || *p++ != '.' || number(&p, &out->minor) != 0)
        goto bad;
    if (*p == '.') {
        p++;
        if (number(&p, &out->patch) != 0)
            goto bad;
    }
    if (p == end)
        return WH_OK;
    /* a pre-release or build suffix: counts as that minor */
    if ((*p == '-' || *p == '+') && p + 1 < end) {
        for (const char *q = p + 1; q < end; q++)
            if (!isalnum((unsigned char)*q) && *q != '.' && *q != '-' && *q != '+' && *q != '_')
                goto bad;
        return WH_OK;
    }
bad:
    return wh_err_set(err, WH_E_INVALID, "\"%s\" is not an Istio version (want MAJOR.MINOR[.PATCH], e.g. 1.21.0)",
                      out->text);
}

int wh_istio_version_cmp(const wh_istio_version *a, const wh_istio_version *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor)
        return a->minor < b->minor ? -1 : 1;
    return 0;
}

static wh_istio_version fixed(const char *text)
{
    wh_istio_version v;

    wh_istio_version_parse(text, &v, NULL);
    return v;
}

const char *wh_release_source_name(wh_release_source s)
{
    switch (s) {
    case WH_RELEASE_FILE:
        return "file";
    case WH_RELEASE_FLAG:
        return "flag";
    case WH_RELEASE_LABEL:
        return "configmap-label";
    case WH_RELEASE_TAG:
        return "values-tag";
    case WH_RELEASE_NEWEST:
    default:
        return "newest";
    }
}

static unsigned behaviours_of(const wh_istio_version *v);

void wh_inject_release_newest(wh_inject_release *out)
{
    memset(out, 0, sizeof(*out));
    out->source = WH_RELEASE_NEWEST;
    out->behaves = fixed(NEWEST);
    out->behaviours = behaviours_of(&out->behaves);
}

/* The declared version with its behaviour: older than the table -> the
 * oldest, with a warning; anything newer simply has every open-ended row. */
static void settle(wh_inject_release *r, wh_release_source src, const wh_istio_version *v)
{
    wh_istio_version oldest = fixed(OLDEST);

    memset(r, 0, sizeof(*r));
    r->source = src;
    r->declared = *v;
    r->behaves = *v;
    if (wh_istio_version_cmp(v, &oldest) < 0) {
        r->behaves = oldest;
        snprintf(r->warning, sizeof(r->warning),
                 "Istio %s is older than %s, the oldest release webhookd knows: injecting with %s's behaviour", v->text,
                 OLDEST, OLDEST);
    }
    r->behaviours = behaviours_of(&r->behaves);
}

/* values.global.tag as text when it is a string or a number (Helm may keep 1.21 as a float). */
static const char *tag_text(const json_t *values, char *buf, size_t size)
{
    const json_t *g = json_object_get(values, "global"), *t = json_object_get(g, "tag");

    if (json_is_string(t))
        return json_string_value(t);
    if (json_is_real(t)) {
        snprintf(buf, size, "%g", json_real_value(t));
        return buf;
    }
    return NULL;
}

wh_code wh_inject_release_detect(const wh_release_hints *h, wh_inject_release *out, wh_err *err)
{
    wh_istio_version v;
    const char *tag;
    char buf[32];
    wh_code rc;

    wh_inject_release_newest(out);
    if (h == NULL)
        return WH_OK;
    if (h->explicit_version != NULL) {
        if ((rc = wh_istio_version_parse(h->explicit_version, &v, err)) != WH_OK)
            return wh_err_prefix(err, "%s", h->explicit_source == WH_RELEASE_FLAG ? "--istio-version" : "version file");
        settle(out, h->explicit_source, &v);
        return WH_OK;
    }
    if (h->configmap_label != NULL && wh_istio_version_parse(h->configmap_label, &v, NULL) == WH_OK) {
        settle(out, WH_RELEASE_LABEL, &v);
        return WH_OK;
    }
    if ((tag = tag_text(h->values, buf, sizeof(buf))) != NULL && wh_istio_version_parse(tag, &v, NULL) == WH_OK) {
        settle(out, WH_RELEASE_TAG, &v);
        return WH_OK;
    }
    return WH_OK;
}

void wh_inject_release_describe(const wh_inject_release *r, char *buf, size_t size)
{
    if (r->source == WH_RELEASE_NEWEST)
        snprintf(buf, size, "%d.%d (newest; no release given)", r->behaves.major, r->behaves.minor);
    else
        snprintf(buf, size, "%d.%d (from %s %s)%s%s", r->behaves.major, r->behaves.minor,
                 wh_release_source_name(r->source), r->declared.text, r->warning[0] ? "; " : "", r->warning);
}

/* ---- the table ----------------------------------------------------------- */

/* How many backports listed in the row changed the behaviour in v's minor at
 * or before v's patch (an unknown patch is the minor's first). */
static int backports_at(const wh_release_row *row, const wh_istio_version *v)
{
    const char *p = row->backports;
    char word[16];
    int n, count = 0;

    while (sscanf(p, " %15s%n", word, &n) == 1) {
        wh_istio_version fix = fixed(word);
        if (wh_istio_version_cmp(&fix, v) == 0 && (v->patch < 0 ? 0 : v->patch) >= fix.patch)
            count++;
        p += n;
    }
    return count;
}

_Static_assert(WH_REL_NBEHAVIOURS <= sizeof(unsigned) * CHAR_BIT, "a bit per behaviour");

/* The rows that apply to release v, a bit each: what wh_inject_release_has
 * answers, read from the table's texts once per release.  Each backport
 * flips the behaviour its minor has (inside the row's minors: on). */
static unsigned behaviours_of(const wh_istio_version *v)
{
    unsigned bits = 0;

    for (size_t b = 0; b < NROWS; b++) {
        const wh_release_row *row = &table[b];
        wh_istio_version bound;
        int inside = 1;
        if (row->first[0] && (bound = fixed(row->first), wh_istio_version_cmp(v, &bound) < 0))
            inside = 0;
        if (row->last[0] && (bound = fixed(row->last), wh_istio_version_cmp(v, &bound) > 0))
            inside = 0;
        if (inside != (backports_at(row, v) & 1))
            bits |= 1u << row->id;
    }
    return bits;
}

int wh_inject_release_has(const wh_inject_release *r, wh_release_behaviour b)
{
    wh_inject_release newest;

    if ((unsigned)b >= NROWS)
        return 0;
    if (r == NULL) {
        wh_inject_release_newest(&newest);
        r = &newest;
    }
    return (r->behaviours >> b) & 1u;
}
