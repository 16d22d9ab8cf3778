/*
 * other_kinds.c - the kinds outside the core five: WorkloadEntry,
 * WorkloadGroup, EnvoyFilter, ProxyConfig (networking.istio.io),
 * AuthorizationPolicy, PeerAuthentication, RequestAuthentication
 * (security.istio.io), Telemetry, WasmPlugin and TrafficExtension.  Each gets
 * the typed decode plus istiod's structural rules: selectors, target
 * references, required fields, ports, addresses and URLs.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include "wh_json.h"
#include "wh_validate_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One PolicyTargetReference: a name, no namespace, and a kind istiod can attach
 * policies to (group "" is the core group). */
static void check_target_ref(wh_vctx *c, const json_t *r)
{
    static const char *const allowed[][2] = {{"core", "Service"},
                                             {"networking.istio.io", "ServiceEntry"},
                                             {"gateway.networking.k8s.io", "Gateway"},
                                             {"gateway.networking.k8s.io", "GatewayClass"}};
    const char *group = wh_vstr(r, "group"), *kind = wh_vstr(r, "kind");
    const char *canonical = *group ? group : "core";
    size_t i;

    if (*wh_vstr(r, "name") == '\0')
        wh_verr(c, "targetRef name must be set");
    if (*wh_vstr(r, "namespace"))
        wh_verr(c, "targetRef namespace must not be set; cross namespace referencing is not supported");
    for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
        if (strcmp(allowed[i][0], canonical) == 0 && strcmp(allowed[i][1], kind) == 0)
            return;
    wh_verr(c,
            "targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry "
            "gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was %s/%s",
            group, kind);
}

/* istiod's selector / targetRef / targetRefs block shared by the policy kinds:
 * at most one of the three, the workload selector rules (empty selector is a
 * warning), then each target reference. */
static void check_policy_target(wh_vctx *c, const json_t *spec, const char *selector_key)
{
    const json_t *sel = wh_vobj(spec, selector_key), *refs = wh_varr(spec, "targetRefs");
    int set = (sel != NULL) + (wh_vobj(spec, "targetRef") != NULL) + (refs != NULL);
    size_t i;

    if (set > 1)
        wh_verr(c, "only one of targetRefs or workloadSelector can be set");
    if (wh_vcheck_selector(c, sel, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
    if (wh_vobj(spec, "targetRef") != NULL)
        check_target_ref(c, wh_vobj(spec, "targetRef"));
    for (i = 0; i < json_array_size(refs); i++)
        check_target_ref(c, json_array_get(refs, i));
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
    size_t mark = wh_verr_mark(c), i;
    int empty;

    wh_vwarn(c, "EnvoyFilter exposes internal implementation details that may change at any time. Prefer other APIs "
                "if possible, and exercise extreme caution, especially around upgrades.");
    empty = wh_vcheck_selector(c, sel, "labels");
    if (wh_verr_mark(c) != mark)
        return; /* istiod returns the selector errors alone */
    if (empty)
        wh_vwarn(c, "Envoy filter: workload selector specified without labels, will be applied to all services in "
                    "namespace");
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
        if (*wh_vstr(proxy, "proxyVersion")) {
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

/* ------------------------------------------------------------------ AuthorizationPolicy */

/* Source IPs / CIDR blocks (istiod reports them through a list, so even one prints as a list). */
static void check_ips(wh_vctx *c, const json_t *ips)
{
    size_t i;

    for (i = 0; i < json_array_size(ips); i++) {
        const char *v = json_string_value(json_array_get(ips, i));
        char *e = wh_vmsg_ip_subnet(c, v);
        if (e == NULL)
            continue;
        free(e);
        if (strchr(v, '/') != NULL)
            wh_verr_listed(c, "bad CIDR range (%s): netip.ParsePrefix(%s): invalid prefix", v, wh_vq(c, v));
        else
            wh_verr_listed(c, "bad IP address (%s)", v);
    }
}

/* strconv.ParseUint(p, 10, 32) and at most 65535. */
static void check_ports(wh_vctx *c, const json_t *ports)
{
    size_t i;

    for (i = 0; i < json_array_size(ports); i++) {
        const char *p = json_string_value(json_array_get(ports, i)), *q = p;
        unsigned long long v = 0;
        int range = 0;
        for (; *q >= '0' && *q <= '9'; q++) {
            v = v * 10 + (unsigned long long)(*q - '0');
            if (v > 0xffffffffULL)
                range = 1, v = 0xffffffffULL;
        }
        if (*p == '\0' || *q != '\0')
            wh_verr_listed(c, "bad port (%s): strconv.ParseUint: parsing %s: invalid syntax", p, wh_vq(c, p));
        else if (range)
            wh_verr_listed(c, "bad port (%s): strconv.ParseUint: parsing %s: value out of range", p, wh_vq(c, p));
        else if (v > 65535)
            wh_verr_listed(c, "bad port (%s): <nil>", p);
    }
}

/* The text of the first empty value in a string list, or NULL. */
static int has_empty(const json_t *values)
{
    size_t i;

    for (i = 0; i < json_array_size(values); i++)
        if (*json_string_value(json_array_get(values, i)) == '\0')
            return 1;
    return 0;
}

static void check_empty(wh_vctx *c, const char *key, const json_t *values)
{
    if (has_empty(values))
        wh_verr(c, "empty value not allowed, found in %s", key);
}

/* security.CheckServiceAccount: "sa" or "ns/sa", no wildcard, at most 16 values of 320 bytes. */
static const char *service_account_problem(wh_vctx *c, const char *key, const json_t *values)
{
    size_t i;

    if (json_array_size(values) > 16)
        return "may not have more than 16 values";
    for (i = 0; i < json_array_size(values); i++) {
        const char *v = json_string_value(json_array_get(values, i));
        const char *slash = strchr(v, '/');
        if (*v == '\0')
            return wh_vfmt(c, "empty value not allowed, found in %s", key);
        if (strchr(v, '*') != NULL)
            return wh_vfmt(c, "wildcard not allowed, found in %s", key);
        if (slash != NULL && strchr(slash + 1, '/') != NULL)
            return wh_vfmt(c, "expected format 'serviceAccount' or 'namespace/serviceAccount', found %s in %s",
                           wh_vq(c, v), key);
        if (strlen(v) > 320)
            return wh_vfmt(c, "value cannot exceed 320 characters, found %s in %s", wh_vq(c, v), key);
        if (slash == v)
            return wh_vfmt(
                c, "expected format 'serviceAccount' or 'namespace/serviceAccount', found empty namespace %s in %s",
                wh_vq(c, v), key);
        if (slash != NULL && slash[1] == '\0')
            return wh_vfmt(c,
                           "expected format 'serviceAccount' or 'namespace/serviceAccount', found empty serviceAccount "
                           "%s in %s",
                           wh_vq(c, v), key);
    }
    return NULL;
}

static void check_service_accounts(wh_vctx *c, const char *key, const json_t *values)
{
    const char *why = service_account_problem(c, key, values);
    if (why != NULL)
        wh_verr(c, "%s", why);
}

static int literal_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           strchr("-._~%!$&'()+,;:@=", ch) != NULL;
}

/* security.CheckValidPathTemplate: {*} anywhere, {**} only last, no other braces, and with a template every
 * segment a valid pchar literal. */
static void check_path_templates(wh_vctx *c, const char *key, const json_t *paths)
{
    size_t i;

    for (i = 0; i < json_array_size(paths); i++) {
        const char *raw = json_string_value(json_array_get(paths, i));
        int templ = strstr(raw, "{*}") != NULL || strstr(raw, "{**}") != NULL, any = 0;
        const char *b = raw, *e = raw + strlen(raw), *seg;
        while (b < e && *b == '/')
            b++;
        while (e > b && e[-1] == '/')
            e--;
        for (seg = b; seg <= e;) {
            const char *end = memchr(seg, '/', (size_t)(e - seg));
            size_t n = end ? (size_t)(end - seg) : (size_t)(e - seg), k;
            int one = n == 3 && strncmp(seg, "{*}", 3) == 0, all = n == 4 && strncmp(seg, "{**}", 4) == 0;
            if ((one || all) && any) {
                wh_verr(c, "invalid or unsupported path %.*s, found in %s. {**} is not the last operator", (int)(e - b),
                        b, key);
                break;
            }
            if (all)
                any = 1;
            if (!one && !all) {
                if (memchr(seg, '{', n) != NULL || memchr(seg, '}', n) != NULL) {
                    wh_verr(
                        c,
                        "invalid or unsupported path %.*s, found in %s. Contains '{' or '}' beyond a supported path "
                        "template",
                        (int)(e - b), b, key);
                    break;
                }
                for (k = 0; templ && k < n; k++)
                    if (!literal_char(seg[k]))
                        break;
                if (templ && (n == 0 || k < n)) {
                    wh_verr(c,
                            "invalid or unsupported path %.*s, found in %s. Contains segment %.*s with invalid string "
                            "literal",
                            (int)(e - b), b, key, (int)n, seg);
                    break;
                }
            }
            if (end == NULL)
                break;
            seg = end + 1;
        }
    }
}

/* security.validateMapKey: "a[b]". */
static int map_key_ok(const char *key)
{
    const char *open = strchr(key, '[');
    size_t n = strlen(key);

    return n > 0 && key[n - 1] == ']' && open != NULL && open > key && (size_t)(open - key) < n - 2;
}

/* security.ValidateAttribute: the reason `values` do not fit `key`, or NULL. */

/* hashicorp/go-multierror's text of the `n` items in `list` ("\n\t* item" each),
 * owned by the context; NULL when there are none.  Frees list. */
static const char *multi_text(wh_vctx *c, wh_buf *list, size_t n)
{
    const char *out = n == 0 ? NULL : wh_vfmt(c, "%zu error%s occurred:%s\n\n", n, n == 1 ? "" : "s", list->data);
    wh_buf_free(list);
    return out;
}

static void multi_add(wh_vctx *c, wh_buf *list, size_t *n, const char *item)
{
    (void)c;
    wh_buf_printf(list, "\n\t* %s", item);
    (*n)++;
}

static const char *attribute_problem(wh_vctx *c, const char *key, const json_t *values)
{
    static const char *const plain[] = {"source.namespace",       "source.principal",       "request.auth.principal",
                                        "request.auth.audiences", "request.auth.presenter", "connection.sni"};
    const char *const *p;
    size_t i, n = 0;
    wh_buf list = WH_BUF_INIT;

    if (has_empty(values))
        return wh_vfmt(c, "empty value not allowed, found in %s", key);
    if (strncmp(key, "request.headers", 15) == 0 || strncmp(key, "request.experimental.inline.headers", 35) == 0 ||
        strncmp(key, "request.auth.claims", 19) == 0 || strncmp(key, "experimental.envoy.filters.", 27) == 0)
        return map_key_ok(key) ? NULL : wh_vfmt(c, "bad key (%s): should have format a[b]", key);
    if (strcmp(key, "source.ip") == 0 || strcmp(key, "remote.ip") == 0 || strcmp(key, "destination.ip") == 0) {
        /* security.ValidateIPs: every bad value, as a multierror */
        for (i = 0; i < json_array_size(values); i++) {
            const char *v = json_string_value(json_array_get(values, i));
            char *e = wh_vmsg_ip_subnet(c, v);
            if (e != NULL) {
                free(e);
                multi_add(c, &list, &n,
                          strchr(v, '/')
                              ? wh_vfmt(c, "bad CIDR range (%s): netip.ParsePrefix(%s): invalid prefix", v, wh_vq(c, v))
                              : wh_vfmt(c, "bad IP address (%s)", v));
            }
        }
        return multi_text(c, &list, n);
    }
    if (strcmp(key, "source.serviceAccount") == 0)
        return service_account_problem(c, key, values);
    if (strcmp(key, "destination.port") == 0) {
        /* security.ValidatePorts: strconv.ParseUint(v, 10, 32), then at most 65535; every bad value */
        for (i = 0; i < json_array_size(values); i++) {
            const char *v = json_string_value(json_array_get(values, i)), *q = v;
            unsigned long long n32 = 0;
            int range = 0;
            for (; *q >= '0' && *q <= '9'; q++) {
                n32 = n32 * 10 + (unsigned long long)(*q - '0');
                if (n32 > 0xffffffffULL)
                    range = 1, n32 = 0xffffffffULL;
            }
            if (*v == '\0' || *q != '\0')
                multi_add(c, &list, &n,
                          wh_vfmt(c, "bad port (%s): strconv.ParseUint: parsing %s: invalid syntax", v, wh_vq(c, v)));
            else if (range)
                multi_add(
                    c, &list, &n,
                    wh_vfmt(c, "bad port (%s): strconv.ParseUint: parsing %s: value out of range", v, wh_vq(c, v)));
            else if (n32 > 65535)
                multi_add(c, &list, &n, wh_vfmt(c, "bad port (%s): <nil>", v));
        }
        return multi_text(c, &list, n);
    }
    for (p = plain; p < plain + sizeof(plain) / sizeof(plain[0]); p++)
        if (strcmp(key, *p) == 0)
            return NULL;
    if (strcmp(key, "destination.namespace") == 0)
        return wh_vfmt(c, "attribute %s is replaced by the metadata.namespace", key);
    if (strncmp(key, "destination.labels", 18) == 0)
        return wh_vfmt(c, "attribute %s is replaced by the workload selector", key);
    if (strcmp(key, "destination.name") == 0 || strcmp(key, "destination.user") == 0)
        return wh_vfmt(c, "deprecated attribute %s: only supported in v1alpha1", key);
    return wh_vfmt(c, "unknown attribute: %s", key);
}

static const char *const source_lists[] = {
    "principals",     "requestPrincipals", "namespaces",           "ipBlocks",
    "remoteIpBlocks", "notPrincipals",     "notRequestPrincipals", "notNamespaces",
    "notIpBlocks",    "notRemoteIpBlocks", "serviceAccounts",      "notServiceAccounts"};

static void check_custom_rule(wh_vctx *c, const json_t *rule)
{
    static const char *const from_fields[][2] = {{"namespaces", "From.Namespaces"},
                                                 {"notNamespaces", "From.NotNamespaces"},
                                                 {"serviceAccounts", "From.ServiceAccounts"},
                                                 {"notServiceAccounts", "From.NotServiceAccounts"},
                                                 {"principals", "From.Principals"},
                                                 {"notPrincipals", "From.NotPrincipals"},
                                                 {"requestPrincipals", "From.RequestPrincipals"},
                                                 {"notRequestPrincipals", "From.NotRequestPrincipals"}};
    const json_t *from = wh_varr(rule, "from"), *when = wh_varr(rule, "when");
    size_t i, j;

    for (i = 0; i < json_array_size(from); i++) {
        const json_t *src = wh_vobj(json_array_get(from, i), "source");
        for (j = 0; src != NULL && j < sizeof(from_fields) / sizeof(from_fields[0]); j++)
            if (wh_varr(src, from_fields[j][0]) != NULL)
                wh_verr(c, "%s is currently not supported with CUSTOM action", from_fields[j][1]);
    }
    for (i = 0; i < json_array_size(when); i++) {
        const char *key = wh_vstr(json_array_get(when, i), "key");
        if (strcmp(key, "source.namespace") == 0 || strcmp(key, "source.serviceAccount") == 0 ||
            strcmp(key, "source.principal") == 0 || strncmp(key, "request.auth.", 13) == 0)
            wh_verr(c, "%s is currently not supported with CUSTOM action", key);
    }
}

/* Every error of an AuthorizationPolicy is prefixed "invalid policy <name>.<namespace>:". */
static void prefix_errors(wh_vctx *c, size_t from)
{
    size_t i;

    for (i = from; i < c->errs.n; i++) {
        char *m = NULL;
        if (asprintf(&m, "invalid policy %s.%s: %s", c->name, c->ns, c->errs.v[i]) < 0) {
            c->nomem = 1;
            return;
        }
        free(c->errs.v[i]);
        c->errs.v[i] = m;
    }
}

void wh_validate_authorization_policy(wh_vctx *c, const json_t *spec)
{
    const char *action = wh_venum(spec, "action", "ALLOW");
    const json_t *rules = wh_vget(spec, "rules"), *provider = wh_vobj(spec, "provider");
    size_t mark = wh_verr_mark(c), i, j;

    check_policy_target(c, spec, "selector");
    if (strcmp(action, "CUSTOM") == 0) {
        if (rules == NULL)
            wh_verr(c, "CUSTOM action without `rules` is meaningless as it will never be triggered, add an empty "
                       "rule `{}` if you want it be triggered for every request");
        else if (provider == NULL || *wh_vstr(provider, "name") == '\0')
            wh_verr(c, "`provider.name` must not be empty");
        for (i = 0; i < json_array_size(rules); i++)
            check_custom_rule(c, json_array_get(rules, i));
    }
    if (provider != NULL && strcmp(action, "CUSTOM") != 0)
        wh_verr(c, "`provider` must not be with non CUSTOM action, found %s", action);
    if (strcmp(action, "DENY") == 0 && rules == NULL)
        wh_verr(c, "DENY action without `rules` is meaningless as it will never be triggered, add an empty rule "
                   "`{}` if you want it be triggered for every request");
    for (i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i);
        const json_t *from = wh_varr(r, "from"), *to = wh_varr(r, "to"), *when = wh_varr(r, "when");
        int tcp_from = 0, tcp_to = 0, from_exist = 0, to_exist = 0;
        for (j = 0; j < json_array_size(from); j++) {
            const json_t *src = wh_vobj(json_array_get(from, j), "source");
            size_t k;
            int any = 0;
            if (src == NULL) {
                wh_verr(c, "`from.source` must not be nil, found at rule %zu", i);
                continue;
            }
            from_exist = 1;
            if ((wh_varr(src, "principals") || wh_varr(src, "notPrincipals") || wh_varr(src, "namespaces") ||
                 wh_varr(src, "notNamespaces")) &&
                (wh_varr(src, "serviceAccounts") || wh_varr(src, "notServiceAccounts")))
                wh_verr(c, "cannot set serviceAccounts with namespaces or principals, found at rule %zu", i);
            for (k = 0; k < sizeof(source_lists) / sizeof(source_lists[0]); k++)
                any |= wh_varr(src, source_lists[k]) != NULL;
            if (!any)
                wh_verr(c, "`from.source` must not be empty, found at rule %zu", i);
            check_ips(c, wh_varr(src, "ipBlocks"));
            check_ips(c, wh_varr(src, "notIpBlocks"));
            check_ips(c, wh_varr(src, "remoteIpBlocks"));
            check_ips(c, wh_varr(src, "notRemoteIpBlocks"));
            check_empty(c, "Principals", wh_varr(src, "principals"));
            check_empty(c, "RequestPrincipals", wh_varr(src, "requestPrincipals"));
            check_empty(c, "Namespaces", wh_varr(src, "namespaces"));
            check_service_accounts(c, "ServiceAccounts", wh_varr(src, "serviceAccounts"));
            check_empty(c, "IpBlocks", wh_varr(src, "ipBlocks"));
            check_empty(c, "RemoteIpBlocks", wh_varr(src, "remoteIpBlocks"));
            check_empty(c, "NotPrincipals", wh_varr(src, "notPrincipals"));
            check_empty(c, "NotRequestPrincipals", wh_varr(src, "notRequestPrincipals"));
            check_empty(c, "NotNamespaces", wh_varr(src, "notNamespaces"));
            check_service_accounts(c, "NotServiceAccounts", wh_varr(src, "notServiceAccounts"));
            check_empty(c, "NotIpBlocks", wh_varr(src, "notIpBlocks"));
            check_empty(c, "NotRemoteIpBlocks", wh_varr(src, "notRemoteIpBlocks"));
            /* any identity or address attribute also applies to TCP traffic */
            for (k = 0; k < sizeof(source_lists) / sizeof(source_lists[0]); k++)
                if (strstr(source_lists[k], "equestPrincipals") == NULL && wh_varr(src, source_lists[k]) != NULL)
                    tcp_from = 1;
        }
        for (j = 0; j < json_array_size(to); j++) {
            const json_t *op = wh_vobj(json_array_get(to, j), "operation");
            static const char *const ops[][2] = {{"ports", "Ports"},       {"methods", "Methods"},
                                                 {"paths", "Paths"},       {"hosts", "Hosts"},
                                                 {"notPorts", "NotPorts"}, {"notMethods", "NotMethods"},
                                                 {"notPaths", "NotPaths"}, {"notHosts", "NotHosts"}};
            size_t k;
            int any = 0;
            if (op == NULL) {
                wh_verr(c, "`to.operation` must not be nil, found at rule %zu", i);
                continue;
            }
            to_exist = 1;
            for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
                any |= wh_varr(op, ops[k][0]) != NULL;
            if (!any)
                wh_verr(c, "`to.operation` must not be empty, found at rule %zu", i);
            check_ports(c, wh_varr(op, "ports"));
            check_ports(c, wh_varr(op, "notPorts"));
            for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
                check_empty(c, ops[k][1], wh_varr(op, ops[k][0]));
            check_path_templates(c, "Paths", wh_varr(op, "paths"));
            check_path_templates(c, "NotPaths", wh_varr(op, "notPaths"));
            if (wh_varr(op, "ports") != NULL || wh_varr(op, "notPorts") != NULL)
                tcp_to = 1;
        }
        for (j = 0; j < json_array_size(when); j++) {
            const json_t *cond = json_array_get(when, j);
            const char *key = wh_vstr(cond, "key"), *why;
            if (*key == '\0') {
                wh_verr(c, "`key` must not be empty");
                continue;
            }
            if (wh_varr(cond, "values") == NULL && wh_varr(cond, "notValues") == NULL) {
                wh_verr(c, "at least one of `values` or `notValues` must be set for key %s", key);
                continue;
            }
            if ((why = attribute_problem(c, key, wh_varr(cond, "values"))) != NULL)
                wh_verr(c, "invalid `value` for `key` %s: %s", key, why);
            if ((why = attribute_problem(c, key, wh_varr(cond, "notValues"))) != NULL)
                wh_verr(c, "invalid `notValue` for `key` %s: %s", key, why);
        }
        if (((from_exist && !to_exist && !tcp_from) || (to_exist && !tcp_to)) && strcmp(action, "DENY") == 0)
            wh_vwarn(c, "configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the "
                        "use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port");
    }
    prefix_errors(c, mark);
}

/* ------------------------------------------------------------------ PeerAuthentication */

void wh_validate_peer_authentication(wh_vctx *c, const json_t *spec)
{
    const json_t *sel = wh_vobj(spec, "selector"), *ports = wh_vobj(spec, "portLevelMtls");
    const char *k;
    json_t *v;

    if ((sel == NULL || wh_vlen(sel, "matchLabels") == 0) && json_object_size(ports) != 0)
        wh_verr(c, "mesh/namespace peer authentication cannot have port level mTLS");
    if (ports != NULL && json_object_size(ports) == 0)
        wh_verr(c, "port level mTLS, if defined, must have at least one element");
    /* keys are uint32 (the decode refused anything else) */
    json_object_foreach((json_t *)ports, k, v)
    {
        (void)v;
        if (strcmp(k, "0") == 0 || strtoul(k, NULL, 10) > 65535)
            wh_verr(c, "port must be in range 1..65535");
    }
    if (wh_vcheck_selector(c, sel, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}

/* ------------------------------------------------------------------ RequestAuthentication */

/* security.ParseJwksURI: an http or https URL whose port, if any, is a number. */
static void check_jwks_uri(wh_vctx *c, const char *uri)
{
    const char *colon = strchr(uri, ':'), *p, *host, *end, *pc;
    char scheme[16];
    size_t n = colon ? (size_t)(colon - uri) : 0, i;
    int valid = n > 0 && n < sizeof(scheme) && ((uri[0] | 32) >= 'a' && (uri[0] | 32) <= 'z');

    for (i = 1; valid && i < n; i++)
        valid = isalnum((unsigned char)uri[i]) || uri[i] == '+' || uri[i] == '-' || uri[i] == '.';
    if (!valid)
        n = 0;
    for (i = 0; i < n; i++)
        scheme[i] = (char)((uri[i] >= 'A' && uri[i] <= 'Z') ? uri[i] + 32 : uri[i]);
    scheme[n] = '\0';
    p = uri + (n ? n + 1 : 0);
    if (n && strncmp(p, "//", 2) == 0) {
        /* url.Parse: the port after the host must be all digits */
        host = p + 2;
        end = host + strcspn(host, "/?#");
        pc = memchr(host, ']', (size_t)(end - host));
        pc = memchr(pc ? pc : host, ':', (size_t)(end - (pc ? pc : host)));
        if (pc != NULL) {
            const char *d;
            for (d = pc + 1; d < end && *d >= '0' && *d <= '9'; d++)
                ;
            if (d != end) {
                wh_verr_listed(c, "parse %s: invalid port %s after host", wh_vq(c, uri),
                               wh_vq(c, wh_vfmt(c, "%.*s", (int)(end - pc), pc)));
                return;
            }
        }
    }
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        wh_verr_listed(c, "URI scheme %s is not supported", wh_vq(c, scheme));
}

/* jwk.Parse: a JSON object that is a key (with "kty") or a set ("keys": keys with "kty"). */
static int jwks_ok(const char *text)
{
    json_t *doc = wh_json_loadb(text, strlen(text), 0, NULL);
    const json_t *keys;
    size_t i;
    int ok = 0;

    if (!json_is_object(doc))
        goto out;
    keys = json_object_get(doc, "keys");
    if (keys == NULL) {
        ok = json_is_string(json_object_get(doc, "kty"));
        goto out;
    }
    if (!json_is_array(keys))
        goto out;
    for (i = 0; i < json_array_size(keys); i++)
        if (!json_is_string(json_object_get(json_array_get(keys, i), "kty")))
            goto out;
    ok = 1;
out:
    json_decref(doc);
    return ok;
}

static int strict_header_name_ok(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-')
            return 0;
    return 1;
}

void wh_validate_request_authentication(wh_vctx *c, const json_t *spec)
{
    const json_t *rules = wh_varr(spec, "jwtRules");
    size_t i, j;

    check_policy_target(c, spec, "selector");
    /* each rule's problems come back as a list, so even a single one prints as a list */
    for (i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i), *a;
        a = wh_varr(r, "audiences");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr_listed(c, "audience must be non-empty string");
        if (*wh_vstr(r, "issuer") == '\0' && *wh_vstr(r, "jwksUri") == '\0')
            wh_verr_listed(c, "issuer or jwksUri must be non-empty string");
        if (*wh_vstr(r, "jwksUri"))
            check_jwks_uri(c, wh_vstr(r, "jwksUri"));
        if (*wh_vstr(r, "jwks") && !jwks_ok(wh_vstr(r, "jwks")))
            wh_verr_listed(c, "jwks parse error: failed to unmarshal JWK set");
        a = wh_varr(r, "fromHeaders");
        for (j = 0; j < json_array_size(a); j++)
            if (*wh_vstr(json_array_get(a, j), "name") == '\0')
                wh_verr_listed(c, "location header name must be non-empty string");
        a = wh_varr(r, "fromParams");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr_listed(c, "location query must be non-empty string");
        a = wh_varr(r, "fromCookies");
        for (j = 0; j < json_array_size(a); j++)
            if (*json_string_value(json_array_get(a, j)) == '\0')
                wh_verr_listed(c, "cookie name must be non-empty string");
        a = wh_varr(r, "outputClaimToHeaders");
        for (j = 0; j < json_array_size(a); j++) {
            const json_t *ch = json_array_get(a, j);
            const char *header = wh_vstr(ch, "header");
            if (*header == '\0' || *wh_vstr(ch, "claim") == '\0')
                wh_verr_listed(c, "outputClaimToHeaders header and claim value must be non-empty string");
            else if (!strict_header_name_ok(header))
                wh_verr_listed(c, "header name %s is not a valid header name", header);
        }
        if (wh_vget(r, "timeout") != NULL) {
            size_t mark = wh_verr_mark(c);
            wh_vcheck_duration(c, wh_vget(r, "timeout"));
            if (wh_verr_mark(c) > mark && mark == 0)
                c->first_err_listed = 1;
        }
    }
}

/* ------------------------------------------------------------------ Telemetry */

/* The first provider without a name is the one error of a provider list. */
static void check_providers(wh_vctx *c, const json_t *providers)
{
    size_t i;

    for (i = 0; i < json_array_size(providers); i++)
        if (*wh_vstr(json_array_get(providers, i), "name") == '\0') {
            wh_verr(c, "providers.name may not be empty");
            return;
        }
}

void wh_validate_telemetry(wh_vctx *c, const json_t *spec)
{
    const json_t *a;
    size_t i, j;

    check_policy_target(c, spec, "selector");
    a = wh_varr(spec, "metrics");
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *m = json_array_get(a, i), *ov = wh_varr(m, "overrides");
        check_providers(c, wh_varr(m, "providers"));
        for (j = 0; j < json_array_size(ov); j++) {
            const json_t *o = json_array_get(ov, j), *match = wh_vobj(o, "match");
            const char *name;
            json_t *to;
            json_object_foreach((json_t *)wh_vobj(o, "tagOverrides"), name, to)
            {
                const char *op = wh_venum(to, "operation", "UPSERT");
                if (*name == '\0')
                    wh_vwarn(c, "tagOverrides.name may not be empty");
                if (strcmp(op, "UPSERT") == 0 && *wh_vstr(to, "value") == '\0')
                    wh_verr(c, "tagOverrides.value must be set when operation is UPSERT");
                else if (strcmp(op, "REMOVE") == 0 && *wh_vstr(to, "value") != '\0')
                    wh_verr(c, "tagOverrides.value may only be set when operation is UPSERT");
            }
            if (wh_vget(match, "customMetric") != NULL && *wh_vstr(match, "customMetric") == '\0')
                wh_verr(c, "customMetric may not be empty");
        }
    }
    a = wh_varr(spec, "tracing");
    if (json_array_size(a) > 1)
        wh_vwarn(c, "multiple tracing is not currently supported");
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *t = json_array_get(a, i);
        double p = wh_vnum(t, "randomSamplingPercentage");
        const char *name;
        json_t *tag;
        if (json_array_size(wh_varr(t, "providers")) > 1)
            wh_vwarn(c, "multiple providers is not currently supported");
        check_providers(c, wh_varr(t, "providers"));
        if (p < 0 || p > 100)
            wh_verr(c, "randomSamplingPercentage must be in range [0.0, 100.0]");
        json_object_foreach((json_t *)wh_vobj(t, "customTags"), name, tag)
        {
            if (*name == '\0')
                wh_verr(c, "tag name may not be empty");
            if (wh_vget(tag, "literal") != NULL && *wh_vstr(wh_vobj(tag, "literal"), "value") == '\0')
                wh_verr(c, "literal tag value may not be empty");
            else if (wh_vget(tag, "header") != NULL && *wh_vstr(wh_vobj(tag, "header"), "name") == '\0')
                wh_verr(c, "header tag name may not be empty");
            else if (wh_vget(tag, "environment") != NULL && *wh_vstr(wh_vobj(tag, "environment"), "name") == '\0')
                wh_verr(c, "environment tag name may not be empty");
        }
    }
    a = wh_varr(spec, "accessLogging");
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *l = json_array_get(a, i);
        if (wh_vobj(l, "filter") != NULL)
            wh_vcheck_cel(c, wh_vstr(wh_vobj(l, "filter"), "expression"));
        check_providers(c, wh_varr(l, "providers"));
    }
}

/* ------------------------------------------------------------------ WasmPlugin */

/* The scheme istiod's strictParseURL finds: the URL's own when it parses as a request URI, else "http". */
static const char *wasm_url_scheme(wh_vctx *c, const char *url)
{
    size_t n = strcspn(url, ":/?#"), i;
    int valid = n > 0 && url[n] == ':' && isalpha((unsigned char)url[0]);
    char *s;

    for (i = 1; valid && i < n; i++)
        valid = isalnum((unsigned char)url[i]) || url[i] == '+' || url[i] == '-' || url[i] == '.';
    if (!valid)
        return url[0] == '/' ? "" : "http";
    s = (char *)wh_vfmt(c, "%.*s", (int)n, url);
    for (i = 0; i < n; i++)
        s[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
    return s;
}

void wh_validate_wasm_plugin(wh_vctx *c, const json_t *spec)
{
    const char *url = wh_vstr(spec, "url"), *sha = wh_vstr(spec, "sha256");
    const json_t *env = wh_varr(wh_vobj(spec, "vmConfig"), "env"), *match = wh_varr(spec, "match");
    wh_vset env_names;
    size_t i, j;

    check_policy_target(c, spec, "selector");
    if (*url == '\0') {
        wh_verr(c, "url field needs to be set");
    } else {
        const char *scheme = wasm_url_scheme(c, url);
        if (*scheme && strcmp(scheme, "file") != 0 && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0 &&
            strcmp(scheme, "oci") != 0)
            wh_verr(c, "url contains unsupported scheme: %s", scheme);
    }
    if (*sha) {
        if (strlen(sha) != 64)
            wh_verr(c, "sha256 field must be 64 characters long");
        else if (strspn(sha, "0123456789abcdef") != 64)
            wh_verr(c, "sha256 field must match [a-f0-9]{64} pattern");
    }
    if (strlen(wh_vstr(spec, "imagePullSecret")) > 253)
        wh_verr(c, "imagePullSecret field must be less than 253 characters long");
    if (strlen(wh_vstr(spec, "pluginName")) > 256)
        wh_verr(c, "pluginName field must be less than 255 characters long");
    /* the VM environment stops at its first problem */
    if (wh_vset_init(c, &env_names, json_array_size(env)) == 0) {
        for (i = 0; i < json_array_size(env); i++) {
            const json_t *e = json_array_get(env, i);
            const char *name = wh_vstr(e, "name");
            if (*name == '\0') {
                wh_verr(c, "spec.vmConfig.env invalid");
                break;
            }
            if (strlen(name) > 256) {
                wh_verr(c, "env.name field must be less than 255 characters long");
                break;
            }
            if (wh_vset_put(c, &env_names, name, i, NULL) == 1) {
                wh_verr(c, "duplicate env");
                break;
            }
            if (strcmp(wh_venum(e, "valueFrom", "INLINE"), "INLINE") != 0 && *wh_vstr(e, "value")) {
                wh_verr(c, "value may only be set when valueFrom is INLINE");
                break;
            }
        }
        wh_vset_free(&env_names);
    }
    for (i = 0; i < json_array_size(match); i++) {
        const json_t *ports = wh_varr(json_array_get(match, i), "ports");
        for (j = 0; j < json_array_size(ports); j++) {
            long long n = wh_vint(json_array_get(ports, j), "number");
            if (n <= 0 || n > 65535) {
                wh_verr(c, "spec.Match[%zu].Ports[%zu] is out of range: %lld", i, j, n);
                return;
            }
        }
    }
}

void wh_validate_traffic_extension(wh_vctx *c, const json_t *spec)
{
    check_policy_target(c, spec, "selector");
}
