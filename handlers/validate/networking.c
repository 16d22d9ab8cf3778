/*
 * networking.c - the networking.istio.io kinds outside the core five:
 * WorkloadEntry, WorkloadGroup (its template, labels and readiness probe),
 * EnvoyFilter (patch contexts, listener matches, typed configs) and
 * ProxyConfig, with istiod's rules and messages (tests/validate/fixtures).
 */
#include "wh_validate_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
            wh_vctx_error_text(&sub, &text);
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

/* Envoy's old filter names istiod still matches, each with the canonical name it asks for instead.
 * ("envoy.ext_authz" names both the HTTP and the network filter; istiod's reverse map keeps either.) */
static const char *const deprecated_filter_names[][2] = {
    {"envoy.buffer", "envoy.filters.http.buffer"},
    {"envoy.cors", "envoy.filters.http.cors"},
    {"envoy.csrf", "envoy.filters.http.csrf"},
    {"envoy.http_dynamo_filter", "envoy.filters.http.dynamo"},
    {"envoy.ext_authz", "envoy.filters.http.ext_authz"},
    {"envoy.fault", "envoy.filters.http.fault"},
    {"envoy.grpc_http1_bridge", "envoy.filters.http.grpc_http1_bridge"},
    {"envoy.grpc_json_transcoder", "envoy.filters.http.grpc_json_transcoder"},
    {"envoy.grpc_web", "envoy.filters.http.grpc_web"},
    {"envoy.gzip", "envoy.filters.http.gzip"},
    {"envoy.health_check", "envoy.filters.http.health_check"},
    {"envoy.ip_tagging", "envoy.filters.http.ip_tagging"},
    {"envoy.lua", "envoy.filters.http.lua"},
    {"envoy.rate_limit", "envoy.filters.http.ratelimit"},
    {"envoy.router", "envoy.filters.http.router"},
    {"envoy.squash", "envoy.filters.http.squash"},
    {"envoy.listener.http_inspector", "envoy.filters.listener.http_inspector"},
    {"envoy.listener.original_dst", "envoy.filters.listener.original_dst"},
    {"envoy.listener.original_src", "envoy.filters.listener.original_src"},
    {"envoy.listener.proxy_protocol", "envoy.filters.listener.proxy_protocol"},
    {"envoy.listener.tls_inspector", "envoy.filters.listener.tls_inspector"},
    {"envoy.client_ssl_auth", "envoy.filters.network.client_ssl_auth"},
    {"envoy.http_connection_manager", "envoy.filters.network.http_connection_manager"},
    {"envoy.mongo_proxy", "envoy.filters.network.mongo_proxy"},
    {"envoy.ratelimit", "envoy.filters.network.ratelimit"},
    {"envoy.redis_proxy", "envoy.filters.network.redis_proxy"},
    {"envoy.tcp_proxy", "envoy.filters.network.tcp_proxy"},
};

static void check_listener_match_name(wh_vctx *c, const char *name)
{
    size_t i;

    for (i = 0; i < sizeof deprecated_filter_names / sizeof deprecated_filter_names[0]; i++)
        if (strcmp(name, deprecated_filter_names[i][0]) == 0) {
            wh_vwarn(c, "using deprecated filter name \"%s\"; use \"%s\" instead", name, deprecated_filter_names[i][1]);
            return;
        }
}

/* istiod decodes the patch value into the Envoy proto for applyTo; the v2 xDS types are no longer
 * linked in, so a typed config naming one cannot resolve.  Only the value's own typed config (the
 * Any every filter and extension config carries) is looked at here. */
static void check_patch_typed_config(wh_vctx *c, const char *apply, const json_t *value)
{
    const json_t *tc;
    const char *url;

    if (strcmp(apply, "HTTP_FILTER") != 0 && strcmp(apply, "NETWORK_FILTER") != 0 &&
        strcmp(apply, "LISTENER_FILTER") != 0 && strcmp(apply, "EXTENSION_CONFIG") != 0)
        return;
    tc = json_object_get(value, "typed_config");
    if (!json_is_object(tc))
        tc = json_object_get(value, "typedConfig");
    url = json_string_value(json_object_get(tc, "@type"));
    if (url != NULL && strstr(url, ".v2.") != NULL)
        wh_verr(c,
                "referenced type unknown (hint: try using the v3 XDS API): Envoy filter: could not resolve Any "
                "message type: %s",
                url);
}

/* What an EnvoyFilter patch's match may name for its applyTo: listener class objects need a listener
 * match, route class objects a route configuration match, clusters a cluster match.  Returns 1 when
 * istiod would leave the rest of this patch unchecked. */
static int check_patch_match(wh_vctx *c, const char *apply, const json_t *match)
{
    const json_t *listener = wh_vobj(match, "listener");
    const json_t *filter = wh_vobj(wh_vobj(listener, "filterChain"), "filter");
    int has_object = wh_vget(match, "listener") || wh_vget(match, "routeConfiguration") || wh_vget(match, "cluster");

    if (!has_object)
        return 0;
    if (strcmp(apply, "LISTENER") == 0 || strcmp(apply, "FILTER_CHAIN") == 0 || strcmp(apply, "NETWORK_FILTER") == 0 ||
        strcmp(apply, "HTTP_FILTER") == 0) {
        if (listener == NULL) {
            wh_verr(c, "Envoy filter: applyTo for listener class objects cannot have non listener match");
            return 1;
        }
        if (filter == NULL)
            return 0;
        if (strcmp(apply, "LISTENER") == 0 || strcmp(apply, "FILTER_CHAIN") == 0)
            wh_vwarn(c, "Envoy filter: filter match has no effect when used with %s", apply);
        if (*wh_vstr(filter, "name") == '\0') {
            wh_verr(c, "Envoy filter: filter match has no name to match on");
            return 1;
        }
        if (wh_vget(filter, "subFilter") != NULL) {
            if (strcmp(apply, "HTTP_FILTER") != 0) {
                wh_verr(c, "Envoy filter: subfilter match can be used with applyTo HTTP_FILTER only");
                return 1;
            }
            if (strcmp(wh_vstr(filter, "name"), "envoy.filters.network.http_connection_manager") != 0 &&
                strcmp(wh_vstr(filter, "name"), "envoy.http_connection_manager") != 0) {
                wh_verr(c, "Envoy filter: subfilter match requires filter match with "
                           "envoy.filters.network.http_connection_manager");
                return 1;
            }
            if (*wh_vstr(wh_vobj(filter, "subFilter"), "name") == '\0') {
                wh_verr(c, "Envoy filter: subfilter match has no name to match on");
                return 1;
            }
        }
        check_listener_match_name(c, wh_vstr(filter, "name"));
        check_listener_match_name(c, wh_vstr(wh_vobj(filter, "subFilter"), "name"));
    } else if (strcmp(apply, "ROUTE_CONFIGURATION") == 0 || strcmp(apply, "VIRTUAL_HOST") == 0 ||
               strcmp(apply, "HTTP_ROUTE") == 0) {
        if (wh_vget(match, "routeConfiguration") == NULL)
            wh_verr(c, "Envoy filter: applyTo for http route class objects cannot have non route configuration match");
    } else if (strcmp(apply, "CLUSTER") == 0) {
        if (wh_vget(match, "cluster") == NULL)
            wh_verr(c, "Envoy filter: applyTo for cluster class objects cannot have non cluster match");
    }
    return 0;
}

/* Every EnvoyFilter earns istiod's caution; then the selector and each patch
 * (applyTo, patch, operation, value, proxyVersion regex, match kind).  The
 * patch value itself is an Envoy proto this webhook does not model. */
void wh_validate_envoy_filter(wh_vctx *c, const json_t *spec)
{
    const json_t *sel = wh_vobj(spec, "workloadSelector"), *patches = wh_varr(spec, "configPatches");
    size_t i;

    wh_vwarn(c, "EnvoyFilter exposes internal implementation details that may change at any time. Prefer other APIs "
                "if possible, and exercise extreme caution, especially around upgrades.");
    if (!wh_vcheck_workload_selector(c, sel, "Envoy filter"))
        return;
    if (sel != NULL && wh_varr(spec, "targetRefs") != NULL)
        wh_verr(c, "only one of targetRefs or workloadSelector can be set");
    for (i = 0; i < json_array_size(patches); i++) {
        const json_t *cp = json_array_get(patches, i), *patch = wh_vobj(cp, "patch");
        const json_t *proxy = wh_vobj(wh_vobj(cp, "match"), "proxy");
        const char *op = wh_venum(patch, "operation", "INVALID"), *apply = wh_venum(cp, "applyTo", "INVALID");
        /* istiod's validateEnvoyFilter does not check waypoint patches (yet) */
        if (strcmp(wh_venum(wh_vobj(cp, "match"), "context", "ANY"), "WAYPOINT") == 0)
            continue;
        if (strcmp(apply, "INVALID") == 0) {
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
        if (json_string_length(wh_vget(proxy, "proxyVersion")) > 1024) {
            /* istiod (maxProxyVersionLen) does not compile such a pattern and ignores it when translating */
            wh_vwarn(c, "Envoy filter: proxyVersion match exceeds 1024 characters and will be ignored");
        } else if (*wh_vstr(proxy, "proxyVersion")) {
            size_t before = wh_verr_mark(c);
            wh_vcheck_regex(c, wh_vstr(proxy, "proxyVersion"), "proxyVersion");
            if (wh_verr_mark(c) != before) {
                /* keep Go's regexp error ("error parsing regexp: ...: `...`") without the RE2 advice */
                char *m = c->errs.v[--c->errs.n];
                char *go = strstr(m, "error parsing regexp:"), *tail = go ? strstr(go, "; Istio uses RE2") : NULL;
                if (tail != NULL)
                    *tail = '\0';
                wh_verr(c, "Envoy filter: invalid regex for proxy version, [%s]", go ? go : m);
                free(m);
                continue;
            }
        }
        if (check_patch_match(c, apply, wh_vobj(cp, "match")))
            continue; /* istiod moves on to the next patch */
        check_patch_typed_config(c, apply, wh_vobj(patch, "value"));
    }
}

void wh_validate_proxy_config(wh_vctx *c, const json_t *spec)
{
    if (wh_vcheck_selector(c, wh_vobj(spec, "selector"), "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
    if (wh_vint(spec, "concurrency") < 0)
        wh_verr(c, "concurrency must be greater than or equal to 0");
}
