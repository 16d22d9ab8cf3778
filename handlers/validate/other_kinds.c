/*
 * other_kinds.c - the kinds outside the core five: WorkloadEntry,
 * WorkloadGroup, EnvoyFilter, ProxyConfig (networking.istio.io),
 * AuthorizationPolicy, PeerAuthentication, RequestAuthentication
 * (security.istio.io), Telemetry, WasmPlugin and TrafficExtension.  Each gets
 * the typed decode plus istiod's structural rules: selectors, target
 * references, required fields, ports, addresses and URLs.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "wh_validate_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* selector (istio.type WorkloadSelector) and targetRef(s) are mutually exclusive. */
static void check_policy_target(wh_vctx *c, const json_t *spec, const char *selector_key)
{
    const json_t *sel = wh_vobj(spec, selector_key);
    size_t i;

    if (sel != NULL && (wh_vget(spec, "targetRef") != NULL || wh_varr(spec, "targetRefs") != NULL))
        wh_verr(c, "only one of targetRefs or workloadSelector can be set");
    if (wh_vget(spec, "targetRef") != NULL && wh_varr(spec, "targetRefs") != NULL)
        wh_verr(c, "only one of targetRef or targetRefs can be set");
    for (i = 0; i < json_array_size(wh_varr(spec, "targetRefs")); i++) {
        const json_t *r = json_array_get(wh_varr(spec, "targetRefs"), i);
        if (*wh_vstr(r, "name") == '\0')
            wh_verr(c, "targetRef name must be set");
        if (*wh_vstr(r, "kind") == '\0')
            wh_verr(c, "targetRef kind must be set");
        if (*wh_vstr(r, "namespace") && strcmp(wh_vstr(r, "namespace"), c->ns) != 0)
            wh_verr(c, "targetRef namespace %s must match the policy namespace %s", wh_vstr(r, "namespace"), c->ns);
    }
    if (wh_vcheck_selector(c, sel, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}

void wh_validate_workload_entry(wh_vctx *c, const json_t *spec)
{
    wh_vcheck_workload_entry(c, spec, NULL, 0, 1);
}

/* A probe header name follows Kubernetes: letters, digits and '-'. */
static int probe_header_name_ok(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-')
            return 0;
    return 1;
}

static void check_readiness_probe(wh_vctx *c, const json_t *probe)
{
    const char *const counts[] = {"periodSeconds", "initialDelaySeconds", "timeoutSeconds", "successThreshold",
                                  "failureThreshold"};
    const json_t *http = wh_vobj(probe, "httpGet"), *tcp = wh_vobj(probe, "tcpSocket");
    const json_t *exec = wh_vobj(probe, "exec"), *grpc = wh_vobj(probe, "grpc");
    size_t i;

    for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        if (wh_vint(probe, counts[i]) < 0)
            wh_verr(c, "%s must be non-negative", counts[i]);
    if (http != NULL) {
        const char *scheme = wh_vstr(http, "scheme");
        const json_t *headers = wh_varr(http, "httpHeaders");
        wh_vcheck_port(c, wh_vint(http, "port"));
        if (*scheme && strcmp(scheme, "HTTPS") != 0 && strcmp(scheme, "HTTP") != 0)
            wh_verr(c, "httpGet.scheme must be one of \"HTTPS\", \"HTTP\"");
        for (i = 0; i < json_array_size(headers); i++) {
            const char *name = wh_vstr(json_array_get(headers, i), "name");
            if (*name == '\0')
                wh_verr(c, "header name cannot be empty");
            else if (!probe_header_name_ok(name))
                wh_verr(c, "header name %s is not a valid header name", name);
        }
    } else if (tcp != NULL) {
        wh_vcheck_port(c, wh_vint(tcp, "port"));
    } else if (exec != NULL) {
        if (wh_varr(exec, "command") == NULL)
            wh_verr(c, "exec.command is required");
    } else if (grpc != NULL) {
        wh_vcheck_port(c, wh_vint(grpc, "port"));
    } else {
        wh_verr(c, "unknown health check method <nil>");
    }
}

/* The template may leave out what a WorkloadEntry requires (the address is
 * filled in at registration); only the labels and the probe are checked, and
 * a missing template or bad labels stop the check. */
void wh_validate_workload_group(wh_vctx *c, const json_t *spec)
{
    const json_t *labels = wh_vobj(wh_vobj(spec, "metadata"), "labels");

    if (wh_vget(spec, "template") == NULL) {
        wh_verr(c, "template is required");
        return;
    }
    if (labels != NULL) {
        wh_vctx sub;
        wh_vctx_init(&sub, c->ns, c->name);
        wh_vcheck_labels(&sub, labels);
        if (sub.errs.n > 0) {
            wh_buf text = WH_BUF_INIT;
            if (wh_vctx_error_text(&sub, &text) != WH_OK)
                c->nomem = 1;
            else
                wh_verr(c, "invalid labels: %s", text.data);
            wh_buf_free(&text);
            wh_vctx_free(&sub);
            return;
        }
        wh_vctx_free(&sub);
    }
    if (wh_vobj(spec, "probe") != NULL)
        check_readiness_probe(c, wh_vobj(spec, "probe"));
}

void wh_validate_envoy_filter(wh_vctx *c, const json_t *spec)
{
    const json_t *sel = wh_vobj(spec, "workloadSelector"), *patches = wh_varr(spec, "configPatches");
    size_t i;

    if (sel != NULL && wh_vlen(sel, "labels") == 0)
        wh_verr(c, "Envoy filter: workloadSelector cannot have empty labels");
    if (sel != NULL && wh_varr(spec, "targetRefs") != NULL)
        wh_verr(c, "only one of targetRefs or workloadSelector can be set");
    for (i = 0; i < json_array_size(patches); i++) {
        const json_t *cp = json_array_get(patches, i), *patch = wh_vobj(cp, "patch");
        const json_t *proxy = wh_vobj(wh_vobj(cp, "match"), "proxy");
        const char *op = wh_venum(patch, "operation", "INVALID");
        if (strcmp(wh_venum(cp, "applyTo", "INVALID"), "INVALID") == 0) {
            wh_verr(c, "Envoy filter: missing applyTo");
            continue;
        }
        if (patch == NULL) {
            wh_verr(c, "Envoy filter: missing patch");
            continue;
        }
        if (strcmp(op, "INVALID") == 0 || *op == '\0') {
            wh_verr(c, "Envoy filter: missing patch operation");
            continue;
        }
        if (strcmp(op, "REMOVE") != 0 && wh_vget(patch, "value") == NULL) {
            wh_verr(c, "Envoy filter: missing patch value for non-remove operation");
            continue;
        }
        if (*wh_vstr(proxy, "proxyVersion")) {
            size_t mark = wh_verr_mark(c);
            wh_vcheck_regex(c, wh_vstr(proxy, "proxyVersion"), "proxyVersion");
            if (wh_verr_mark(c) != mark) {
                free(c->errs.v[--c->errs.n]);
                wh_verr(c, "Envoy filter: invalid regex for proxy version, [%s]", wh_vstr(proxy, "proxyVersion"));
            }
        }
    }
}

void wh_validate_proxy_config(wh_vctx *c, const json_t *spec)
{
    const char *img = wh_vstr(wh_vobj(spec, "image"), "imageType");

    if (wh_vint(spec, "concurrency") < 0)
        wh_verr(c, "concurrency must be greater than or equal to 0");
    if (*img && strcmp(img, "default") != 0 && strcmp(img, "debug") != 0 && strcmp(img, "distroless") != 0)
        wh_verr(c, "imageType must be one of default, debug, distroless");
    if (wh_vcheck_selector(c, wh_vobj(spec, "selector"), "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}

static void check_ip_blocks(wh_vctx *c, const json_t *blocks)
{
    size_t i;

    for (i = 0; i < json_array_size(blocks); i++) {
        const char *b = json_string_value(json_array_get(blocks, i));
        char *e = wh_vmsg_ip_subnet(c, b);
        if (e != NULL) {
            free(e);
            wh_verr(c, "invalid IP address or CIDR range: %s", b);
        }
    }
}

static void check_authz_ports(wh_vctx *c, const json_t *ports)
{
    size_t i;

    for (i = 0; i < json_array_size(ports); i++) {
        const char *p = json_string_value(json_array_get(ports, i));
        char *end;
        long v = strtol(p, &end, 10);
        if (*p == '\0' || *end != '\0' || v < 0 || v > 65535)
            wh_verr(c, "invalid port: %s", p);
    }
}

void wh_validate_authorization_policy(wh_vctx *c, const json_t *spec)
{
    const char *action = wh_venum(spec, "action", "ALLOW");
    const json_t *rules = wh_varr(spec, "rules"), *provider = wh_vobj(spec, "provider");
    size_t i, j;

    check_policy_target(c, spec, "selector");
    if (strcmp(action, "CUSTOM") == 0) {
        if (rules == NULL)
            wh_verr(c, "CUSTOM action without `rules` is meaningless as it will never be triggered, add an empty "
                       "rule `{}` if you want it be triggered for every request");
        if (provider == NULL || *wh_vstr(provider, "name") == '\0')
            wh_verr(c, "`provider.name` must not be empty");
    } else if (provider != NULL) {
        wh_verr(c, "`provider` must not be with non CUSTOM action, found %s", action);
    }
    for (i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i);
        const json_t *from = wh_varr(r, "from"), *to = wh_varr(r, "to"), *when = wh_varr(r, "when");
        for (j = 0; j < json_array_size(from); j++) {
            const json_t *src = wh_vobj(json_array_get(from, j), "source");
            if (src == NULL) {
                wh_verr(c, "`from.source` must not be nil, found at rule %zu", i);
                continue;
            }
            if (json_object_size(src) == 0)
                wh_verr(c, "`from.source` must not be empty, found at rule %zu", i);
            check_ip_blocks(c, wh_varr(src, "ipBlocks"));
            check_ip_blocks(c, wh_varr(src, "notIpBlocks"));
            check_ip_blocks(c, wh_varr(src, "remoteIpBlocks"));
            check_ip_blocks(c, wh_varr(src, "notRemoteIpBlocks"));
        }
        for (j = 0; j < json_array_size(to); j++) {
            const json_t *op = wh_vobj(json_array_get(to, j), "operation");
            if (op == NULL) {
                wh_verr(c, "`to.operation` must not be nil, found at rule %zu", i);
                continue;
            }
            if (json_object_size(op) == 0)
                wh_verr(c, "`to.operation` must not be empty, found at rule %zu", i);
            check_authz_ports(c, wh_varr(op, "ports"));
            check_authz_ports(c, wh_varr(op, "notPorts"));
        }
        for (j = 0; j < json_array_size(when); j++) {
            const json_t *cond = json_array_get(when, j);
            const char *key = wh_vstr(cond, "key");
            if (*key == '\0')
                wh_verr(c, "`key` must not be empty");
            else if (wh_varr(cond, "values") == NULL && wh_varr(cond, "notValues") == NULL)
                wh_verr(c, "at least one of `values` or `notValues` must be set for key %s", key);
            if (strcmp(key, "source.ip") == 0 || strcmp(key, "remote.ip") == 0 || strcmp(key, "destination.ip") == 0) {
                check_ip_blocks(c, wh_varr(cond, "values"));
                check_ip_blocks(c, wh_varr(cond, "notValues"));
            } else if (strcmp(key, "destination.port") == 0) {
                check_authz_ports(c, wh_varr(cond, "values"));
                check_authz_ports(c, wh_varr(cond, "notValues"));
            }
        }
    }
}

void wh_validate_peer_authentication(wh_vctx *c, const json_t *spec)
{
    const json_t *sel = wh_vobj(spec, "selector"), *ports = wh_vobj(spec, "portLevelMtls");
    const char *k;
    json_t *v;

    if ((sel == NULL || wh_vlen(sel, "matchLabels") == 0) && ports != NULL)
        wh_verr(c, "portLevelMtls requires selector");
    /* Keys are uint32 (the decode refused anything else); 0 is not a port. */
    json_object_foreach((json_t *)ports, k, v)
    {
        (void)v;
        if (strcmp(k, "0") == 0)
            wh_verr(c, "port cannot be 0");
    }
    if (wh_vcheck_selector(c, sel, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}

static void check_jwks_uri(wh_vctx *c, const char *uri)
{
    const char *rest;

    if (strncmp(uri, "http://", 7) == 0)
        rest = uri + 7;
    else if (strncmp(uri, "https://", 8) == 0)
        rest = uri + 8;
    else {
        wh_verr(c, "URI scheme of %s is not supported; jwksUri must be an http or https URL", wh_vq(c, uri));
        return;
    }
    if (*rest == '\0' || *rest == '/' || *rest == ':')
        wh_verr(c, "jwksUri %s has no host", wh_vq(c, uri));
}

void wh_validate_request_authentication(wh_vctx *c, const json_t *spec)
{
    const json_t *rules = wh_varr(spec, "jwtRules");
    size_t i, j;

    check_policy_target(c, spec, "selector");
    for (i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i);
        const json_t *a;
        if (*wh_vstr(r, "issuer") == '\0')
            wh_verr(c, "issuer must be set");
        a = wh_varr(r, "audiences");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr(c, "audience must be non-empty string");
        if (*wh_vstr(r, "jwksUri"))
            check_jwks_uri(c, wh_vstr(r, "jwksUri"));
        a = wh_varr(r, "fromHeaders");
        for (j = 0; j < json_array_size(a); j++)
            if (*wh_vstr(json_array_get(a, j), "name") == '\0')
                wh_verr(c, "location header name must be non-empty string");
        a = wh_varr(r, "fromParams");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr(c, "location query must be non-empty string");
        a = wh_varr(r, "fromCookies");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr(c, "cookie name must be non-empty string");
        a = wh_varr(r, "outputClaimToHeaders");
        for (j = 0; j < json_array_size(a); j++) {
            const json_t *ch = json_array_get(a, j);
            if (*wh_vstr(ch, "header") == '\0' || *wh_vstr(ch, "claim") == '\0')
                wh_verr(c, "outputClaimToHeaders header and claim value must be non-empty string");
        }
        wh_vcheck_duration(c, wh_vget(r, "timeout"));
    }
}

static void check_providers(wh_vctx *c, const json_t *providers, const char *what)
{
    size_t i;

    for (i = 0; i < json_array_size(providers); i++)
        if (*wh_vstr(json_array_get(providers, i), "name") == '\0')
            wh_verr(c, "%s: providers name must be set", what);
}

void wh_validate_telemetry(wh_vctx *c, const json_t *spec)
{
    const json_t *a;
    size_t i;

    check_policy_target(c, spec, "selector");
    a = wh_varr(spec, "tracing");
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *t = json_array_get(a, i);
        double p = wh_vnum(t, "randomSamplingPercentage");
        if (json_array_size(wh_varr(t, "providers")) > 1)
            wh_vwarn(c, "multiple providers is not currently supported");
        check_providers(c, wh_varr(t, "providers"), "tracing");
        if (p < 0 || p > 100)
            wh_verr(c, "randomSamplingPercentage must be in range [0.0, 100.0]");
    }
    a = wh_varr(spec, "metrics");
    for (i = 0; i < json_array_size(a); i++) {
        check_providers(c, wh_varr(json_array_get(a, i), "providers"), "metrics");
        wh_vcheck_duration(c, wh_vget(json_array_get(a, i), "reportingInterval"));
    }
    a = wh_varr(spec, "accessLogging");
    for (i = 0; i < json_array_size(a); i++)
        check_providers(c, wh_varr(json_array_get(a, i), "providers"), "accessLogging");
}

void wh_validate_wasm_plugin(wh_vctx *c, const json_t *spec)
{
    const char *url = wh_vstr(spec, "url"), *sha = wh_vstr(spec, "sha256");
    const json_t *env = wh_varr(wh_vobj(spec, "vmConfig"), "env");
    wh_vset env_names;
    size_t i;

    check_policy_target(c, spec, "selector");
    if (*url == '\0') {
        wh_verr(c, "url field needs to be set");
    } else {
        const char *colon = strstr(url, "://");
        if (colon != NULL) {
            size_t n = (size_t)(colon - url);
            if (!((n == 3 && strncmp(url, "oci", 3) == 0) || (n == 4 && strncmp(url, "file", 4) == 0) ||
                  (n == 4 && strncmp(url, "http", 4) == 0) || (n == 5 && strncmp(url, "https", 5) == 0)))
                wh_verr(c, "unsupported scheme %.*s in url", (int)n, url);
        }
    }
    if (*sha) {
        size_t n = strlen(sha);
        int hex = 1;
        for (i = 0; i < n; i++)
            hex &= isxdigit((unsigned char)sha[i]) != 0;
        if (n != 64 || !hex)
            wh_verr(c, "sha256 field must be 64 characters long hex string");
    }
    if (wh_vset_init(c, &env_names, json_array_size(env)) != 0)
        return;
    for (i = 0; i < json_array_size(env); i++) {
        const char *name = wh_vstr(json_array_get(env, i), "name");
        if (*name == '\0') {
            wh_verr(c, "spec.vmConfig.env invalid: name is required");
            continue;
        }
        if (wh_vset_put(c, &env_names, name, i, NULL) == 1)
            wh_verr(c, "duplicate env name: %s", name);
    }
    wh_vset_free(&env_names);
}

void wh_validate_traffic_extension(wh_vctx *c, const json_t *spec)
{
    check_policy_target(c, spec, "selector");
}
