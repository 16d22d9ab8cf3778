/*
 * virtual_service.c - VirtualService: delegates, gateway references, hosts,
 * HTTP routes (conflicts, matches, headers, CORS, fault injection, mirrors,
 * redirects, direct responses, retries, rewrites, destinations and weights),
 * TLS and TCP routes, exportTo, and the unreachable-rule warnings.
 */
#include "wh_go.h"
#include "wh_alloc.h"
#include "wh_validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JWT_CLAIM_PREFIX "@request.auth.claims"
/* Hosts compared pairwise for duplicates (n^2/2 comparisons). */
#define WH_VS_MAX_HOSTS 4096
/* URI-prefix matches compared pairwise for overlaps (warnings only); later ones are not compared. */
#define WH_VS_MAX_PREFIX_MATCHES 4096

static int is_jwt_claim(const char *name)
{
    const char *rest;
    size_t n;

    if (strncasecmp(name, JWT_CLAIM_PREFIX, strlen(JWT_CLAIM_PREFIX)) != 0)
        return 0;
    rest = name + strlen(JWT_CLAIM_PREFIX);
    n = strlen(rest);
    if (rest[0] == '.' && n > 1)
        return 1;
    return rest[0] == '[' && n > 2 && rest[n - 1] == ']';
}

static int is_tchar_token(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              strchr("!#$%&'*+-.^_`|~", ch) != NULL))
            return 0;
    }
    return 1;
}

static int is_authority_header(const char *name)
{
    return strcasecmp(name, ":authority") == 0 || strcasecmp(name, "host") == 0;
}

/* Headers Envoy owns: pseudo-headers and Host. */
static int is_internal_header(const char *name)
{
    return name[0] == ':' || strcasecmp(name, "host") == 0;
}

/* Match keys: a JWT claim, one of the five HTTP/2 pseudo-headers, or an RFC 7230 token. */
static void check_header_name_or_claim(wh_vctx *c, const char *name)
{
    static const char *const pseudo[] = {":method", ":scheme", ":authority", ":path", ":status"};
    size_t i;

    if (*name == '\0') {
        wh_verr(c, "header name cannot be empty");
        return;
    }
    if (is_jwt_claim(name))
        return;
    for (i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
        if (strcmp(name, pseudo[i]) == 0)
            return;
    if (!is_tchar_token(name))
        wh_verr(c, "header name %s is not a valid header name", name);
}

/* A header name in a request add/set (the authority may be set there, no other
 * internal header), or in a request remove / any response operation (neither). */
static void check_header_op_name(wh_vctx *c, const char *name, int authority_ok)
{
    if (*name == '\0')
        wh_verr(c, "header name cannot be empty");
    else if (authority_ok && is_internal_header(name) && !is_authority_header(name))
        wh_verr(c, "invalid header %s: header cannot have \":\" prefix", wh_vq(c, name));
    else if (!authority_ok && strcasecmp(name, "host") == 0)
        wh_verr(c, "invalid header %s: cannot set Host header", wh_vq(c, name));
    else if (!authority_ok && is_internal_header(name))
        wh_verr(c, "invalid header %s: header cannot have \":\" prefix", wh_vq(c, name));
}

/* Envoy's header formatter grammar (source/common/router/header_parser.cc):
 * "%%" is a literal percent, "%VAR%" or "%VAR([\"arg\", ...])%" a command.
 * Returns NULL or the parser's complaint. */
static const char *header_value_syntax(const char *v)
{
    enum { LIT, VAR, EXPECT_ARRAY, EXPECT_STRING, STRING, EXPECT_DELIM, EXPECT_ARGS_END, EXPECT_VAR_END } st = LIT;
    size_t pos, n = strlen(v);

    for (pos = 0; pos < n; pos++) {
        char ch = v[pos];
        int has_next = pos + 1 < n;
        switch (st) {
        case LIT:
            if (ch != '%')
                break;
            if (!has_next)
                return "invalid header configuration. Un-escaped %";
            if (v[pos + 1] == '%')
                pos++;
            else
                st = VAR;
            break;
        case VAR:
            if (ch == '%')
                st = LIT;
            else if (ch == '(')
                st = EXPECT_ARRAY;
            break;
        case EXPECT_ARRAY:
            if (ch == '[')
                st = EXPECT_STRING;
            else if (ch != ' ')
                st = STRING;
            break;
        case EXPECT_DELIM:
            if (ch == ',')
                st = EXPECT_STRING;
            else if (ch == ']')
                st = EXPECT_ARGS_END;
            else if (ch != ' ')
                return "invalid header configuration. Expecting ',', ']', or whitespace";
            break;
        case EXPECT_STRING:
            if (ch == '"')
                st = STRING;
            else if (ch != ' ')
                return "invalid header configuration. Expecting '\"'";
            break;
        case STRING:
            if (ch == '\\') {
                if (!has_next)
                    return "invalid header configuration. Un-terminated backslash in JSON string";
                pos++;
            } else if (ch == ')') {
                st = EXPECT_VAR_END;
            } else if (ch == '"') {
                st = EXPECT_DELIM;
            }
            break;
        case EXPECT_ARGS_END:
            if (ch == ')')
                st = EXPECT_VAR_END;
            else if (ch != ' ')
                return "invalid header configuration. Expecting ')' or whitespace after '{}', but found '{}'";
            break;
        case EXPECT_VAR_END:
            if (ch == '%')
                st = LIT;
            else if (ch != ' ')
                return "invalid header configuration. Expecting '%' or whitespace after";
            break;
        }
    }
    return st == LIT ? NULL : "";
}

static void check_header_value(wh_vctx *c, const char *v)
{
    const unsigned char *p;
    const char *why;

    for (p = (const unsigned char *)v; *p; p++) {
        if ((*p <= 0x08) || (*p >= 0x0a && *p <= 0x1f) || *p == 0x7f) {
            wh_verr(c, "header value configuration %s is invalid", v);
            return;
        }
    }
    why = header_value_syntax(v);
    if (why != NULL && *why == '\0')
        wh_verr(c, "header value configuration: invalid header configuration. Un-terminated variable expression '%s'",
                v);
    else if (why != NULL)
        wh_verr(c, "header value configuration: %s", why);
}

static void check_header_ops(wh_vctx *c, const json_t *ops, int request)
{
    const char *k;
    json_t *v;
    const char *which[] = {"add", "set"};
    size_t i;

    if (ops == NULL)
        return;
    for (i = 0; i < 2; i++) {
        json_object_foreach((json_t *)wh_vobj(ops, which[i]), k, v)
        {
            check_header_op_name(c, k, request);
            check_header_value(c, json_string_value(v));
        }
    }
    for (i = 0; i < json_array_size(wh_varr(ops, "remove")); i++)
        check_header_op_name(c, json_string_value(json_array_get(wh_varr(ops, "remove"), i)), 0);
}

static void check_headers(wh_vctx *c, const json_t *headers)
{
    check_header_ops(c, wh_vobj(headers, "request"), 1);
    check_header_ops(c, wh_vobj(headers, "response"), 0);
}

static void check_string_match(wh_vctx *c, const json_t *sm, const char *where, int uri)
{
    const json_t *prefix = wh_vget(sm, "prefix"), *regex = wh_vget(sm, "regex");

    if (sm == NULL)
        return;
    if (prefix != NULL && !uri && *json_string_value(prefix) == '\0')
        wh_verr(c, "%s: prefix string match should not be empty", wh_vq(c, where));
    if (regex != NULL) {
        if (*json_string_value(regex) == '\0')
            wh_verr(c, "%s: regex string match should not be empty", wh_vq(c, where));
        else
            wh_vcheck_regex(c, json_string_value(regex), where);
    }
}

static void check_gateway_names(wh_vctx *c, const json_t *gws)
{
    size_t i;

    for (i = 0; i < json_array_size(gws); i++) {
        const char *g = json_string_value(json_array_get(gws, i));
        const char *slash = strchr(g, '/');
        if (slash == NULL) {
            const char *dot = strchr(g, '.');
            if (dot != NULL) {
                const char *dot2 = strchr(dot + 1, '.');
                char *first = wh_strndup(g, (size_t)(dot - g));
                char *second = wh_strndup(dot + 1, dot2 ? (size_t)(dot2 - dot - 1) : strlen(dot + 1));
                char *rec = wh_asprintf("%s/%s", second, first);
                wh_vwarn(c, "using legacy gatewayName format %s; prefer the <namespace>/<name> format: %s", wh_vq(c, g),
                         wh_vq(c, rec));
                free(rec);
                free(first);
                free(second);
            }
            wh_vadd_err(c, wh_vmsg_fqdn(c, g));
            return; /* istiod stops at the first entry without a namespace */
        }
        {
            char *ns = wh_strndup(g, (size_t)(slash - g));
            const char *name = slash + 1;
            if (*ns == '\0' || *name == '\0')
                wh_verr(c, "config namespace and gateway name cannot be empty");
            if (!wh_vis_dns1123_label(ns))
                wh_verr(c, "invalid value for namespace: %s", wh_vq(c, ns));
            if (!wh_vis_dns1123_label(name))
                wh_verr(c, "invalid value for gateway name: %s", wh_vq(c, name));
            free(ns);
        }
    }
}

/* Every match's string matches first, then every match's port, labels,
 * gateways and source namespace (istiod's two passes, hence its error order). */
static void check_match_requests(wh_vctx *c, const json_t *route)
{
    const json_t *matches = wh_varr(route, "match");
    size_t i;

    for (i = 0; i < json_array_size(matches); i++) {
        const json_t *m = json_array_get(matches, i);
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)wh_vobj(m, "headers"), k, v)
        {
            check_header_name_or_claim(c, k);
            check_string_match(c, v, "headers", 0);
        }
        json_object_foreach((json_t *)wh_vobj(m, "withoutHeaders"), k, v)
        {
            check_header_name_or_claim(c, k);
            if (strcmp(wh_vstr(v, "regex"), "*") != 0)
                check_string_match(c, v, "withoutHeaders", 0);
        }
        check_string_match(c, wh_vobj(m, "uri"), "uri", 1);
        check_string_match(c, wh_vobj(m, "scheme"), "scheme", 0);
        check_string_match(c, wh_vobj(m, "method"), "method", 0);
        check_string_match(c, wh_vobj(m, "authority"), "authority", 0);
        json_object_foreach((json_t *)wh_vobj(m, "queryParams"), k, v)
        {
            check_string_match(c, v, "queryParams", 0);
        }
    }
    for (i = 0; i < json_array_size(matches); i++) {
        const json_t *m = json_array_get(matches, i);
        if (wh_vint(m, "port") != 0)
            wh_vcheck_port(c, wh_vint(m, "port"));
        wh_vcheck_labels(c, wh_vobj(m, "sourceLabels"));
        check_gateway_names(c, wh_varr(m, "gateways"));
        if (*wh_vstr(m, "sourceNamespace") && !wh_vis_dns1123_label(wh_vstr(m, "sourceNamespace")))
            wh_verr(c, "sourceNamespace match %s is invalid", wh_vstr(m, "sourceNamespace"));
    }
}

static void check_percentage(wh_vctx *c, const json_t *p)
{
    double v;

    if (p == NULL)
        return;
    v = wh_vnum(p, "value");
    if (v < 0.0 || v > 100.0 || (v > 0.0 && v < 0.0001)) {
        wh_buf text = WH_BUF_INIT; /* %v of a float64 */
        wh_go_float(&text, v, 'g', -1);
        wh_verr(c, "percentage %s is neither 0.0, nor in range [0.0001, 100.0]", text.data);
        wh_buf_free(&text);
    }
}

/* istiod's mirror percentage bounds, for a route's mirrorPercentage or a mirror's percentage (their
 * messages name them differently); the value as Go's %f prints it (+Inf, -Inf: jsonpb reads them). */
static void check_mirror_percentage(wh_vctx *c, int route, double v)
{
    wh_buf text = WH_BUF_INIT;

    wh_go_float(&text, v, 'f', 6);
    if (v > 100 && route)
        wh_verr(c, "mirror_percentage must have a max value of 100 (it has %s)", text.data);
    else if (v > 100)
        wh_verr(c, "mirror percentage must have a max value of 100 (it has %s)", text.data);
    if (v < 0 && route)
        wh_verr(c, "mirror_percentage must have a min value of 0 (it has %s)", text.data);
    else if (v < 0)
        wh_verr(c, "mirror percentage must have a min value of 0 (it has %s)", text.data);
    wh_buf_free(&text);
}

static void check_http_status(wh_vctx *c, long long status)
{
    if (status < 200 || status > 600)
        wh_verr(c, "HTTP status %lld is not in range 200-599", status);
}

static void check_fault(wh_vctx *c, const json_t *fault)
{
    static const char *const grpc_codes[] = {
        "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED"};
    const json_t *abort = wh_vobj(fault, "abort"), *delay = wh_vobj(fault, "delay");

    if (fault == NULL)
        return;
    if (abort == NULL && delay == NULL)
        wh_verr(c, "HTTP fault injection must have an abort and/or a delay");
    if (abort != NULL) {
        check_percentage(c, wh_vobj(abort, "percentage"));
        if (wh_vget(abort, "grpcStatus") != NULL) {
            const char *g = wh_vstr(abort, "grpcStatus");
            size_t i;
            for (i = 0; i < sizeof(grpc_codes) / sizeof(grpc_codes[0]); i++)
                if (strcmp(g, grpc_codes[i]) == 0)
                    break;
            if (i == sizeof(grpc_codes) / sizeof(grpc_codes[0]))
                wh_verr(c,
                        "gRPC status %s is not supported. See "
                        "https://github.com/grpc/grpc/blob/master/doc/statuscodes.md for a list of supported codes, "
                        "for example 'NOT_FOUND'",
                        wh_vq(c, g));
        } else if (wh_vget(abort, "http2Error") != NULL) {
            wh_verr(c, "HTTP/2 abort fault injection not supported yet");
        } else if (wh_vget(abort, "httpStatus") != NULL) {
            check_http_status(c, wh_vint(abort, "httpStatus"));
        } else {
            wh_vwarn(c, "abort configured, but error type not set");
        }
    }
    if (delay != NULL) {
        check_percentage(c, wh_vobj(delay, "percentage"));
        if (wh_vget(delay, "fixedDelay") != NULL) {
            wh_vcheck_duration(c, wh_vget(delay, "fixedDelay"));
        } else if (wh_vget(delay, "exponentialDelay") != NULL) {
            wh_vcheck_duration(c, wh_vget(delay, "exponentialDelay"));
            wh_verr(c, "exponentialDelay not supported yet");
        }
    }
}

static void check_cors(wh_vctx *c, const json_t *cors)
{
    static const char *const methods[] = {"GET",     "HEAD",    "POST",  "PUT",   "DELETE",
                                          "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"};
    const json_t *a;
    size_t i, j;

    if (cors == NULL)
        return;
    a = wh_varr(cors, "allowOrigins");
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *o = json_array_get(a, i);
        const char *m = wh_vget(o, "exact")    ? wh_vstr(o, "exact")
                        : wh_vget(o, "prefix") ? wh_vstr(o, "prefix")
                                               : wh_vstr(o, "regex");
        if (*m == '\0')
            wh_verr(c, "'%s' is not a valid match type for CORS allow origins", m);
        else if (wh_vget(o, "regex") != NULL)
            wh_vcheck_regex(c, m, "corsPolicy.allowOrigins");
    }
    a = wh_varr(cors, "allowMethods");
    for (i = 0; i < json_array_size(a); i++) {
        const char *m = json_string_value(json_array_get(a, i));
        for (j = 0; j < sizeof(methods) / sizeof(methods[0]); j++)
            if (strcmp(m, methods[j]) == 0)
                break;
        if (j == sizeof(methods) / sizeof(methods[0]))
            wh_verr(c, "%s is not a supported HTTP method", wh_vq(c, m));
    }
    for (j = 0; j < 2; j++) {
        a = wh_varr(cors, j ? "exposeHeaders" : "allowHeaders");
        for (i = 0; i < json_array_size(a); i++) {
            const char *h = json_string_value(json_array_get(a, i));
            if (*h == '\0')
                wh_verr(c, "header name cannot be empty");
            else if (strcmp(h, "*") != 0 && !is_tchar_token(h))
                wh_verr(c, "header name %s is not a valid header name", h);
        }
    }
    if (wh_vget(cors, "maxAge") != NULL) {
        int64_t ns = 0;
        wh_vcheck_duration(c, wh_vget(cors, "maxAge"));
        if (wh_vparse_duration(wh_vstr(cors, "maxAge"), &ns, NULL) == 0 && ns % 1000000000LL != 0)
            wh_verr(c, "max_age duration is accurate only to seconds precision");
    }
}

static void check_mirrors(wh_vctx *c, const json_t *mirrors)
{
    size_t i;

    for (i = 0; i < json_array_size(mirrors); i++) {
        const json_t *m = json_array_get(mirrors, i);
        const json_t *p = wh_vobj(m, "percentage");
        if (wh_vget(m, "destination") == NULL) {
            wh_verr(c, "destination is required for mirrors");
            continue;
        }
        wh_vcheck_destination(c, wh_vobj(m, "destination"));
        if (p != NULL)
            check_mirror_percentage(c, 0, wh_vnum(p, "value"));
    }
}

/* A redirect's prefixRewrite replaces the matched prefix, so it needs every URI match of the
 * route to be a prefix match (routes without a URI match are fine: they match any path). */
static int uri_matches_are_prefixes(const json_t *matches)
{
    size_t i;
    const json_t *m;

    json_array_foreach(matches, i, m)
    {
        const json_t *uri = wh_vobj(m, "uri");
        if (uri != NULL && wh_vget(uri, "prefix") == NULL)
            return 0;
    }
    return 1;
}

static void check_redirect(wh_vctx *c, const json_t *r, const json_t *matches)
{
    long long code;
    const char *scheme;

    if (r == NULL)
        return;
    if (*wh_vstr(r, "uri") != '\0' && *wh_vstr(r, "prefixRewrite") != '\0') {
        wh_verr(c, "redirect may only specify one of uri or prefix_rewrite");
        return;
    }
    if (*wh_vstr(r, "prefixRewrite") != '\0' && !uri_matches_are_prefixes(matches)) {
        wh_verr(c, "redirect prefix_rewrite requires all URI matches to use prefix match type");
        return;
    }
    if (*wh_vstr(r, "uri") == '\0' && *wh_vstr(r, "prefixRewrite") == '\0' && *wh_vstr(r, "authority") == '\0' &&
        wh_vget(r, "port") == NULL && wh_vget(r, "derivePort") == NULL && *wh_vstr(r, "scheme") == '\0') {
        wh_verr(c, "redirect must specify URI, authority, scheme, or port");
        return;
    }
    code = wh_vint(r, "redirectCode");
    if (code != 0 && (code < 300 || code > 399)) {
        wh_verr(c, "%lld is not a valid redirect code, must be 3xx", code);
        return;
    }
    scheme = wh_vstr(r, "scheme");
    if (*scheme && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        wh_verr(c, "invalid redirect scheme, must be \"http\" or \"https\"");
        return;
    }
    if (wh_vint(r, "port") > 0)
        wh_vcheck_port(c, wh_vint(r, "port"));
}

/* Decoded length of a base64 string (padding ignored). */
static size_t b64_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '=')
        n--;
    return n * 3 / 4;
}

static void check_direct_response(wh_vctx *c, const json_t *dr)
{
    const json_t *body = wh_vobj(dr, "body");

    if (dr == NULL)
        return;
    if (body != NULL) {
        size_t size = wh_vget(body, "string") ? strlen(wh_vstr(body, "string")) : b64_len(wh_vstr(body, "bytes"));
        if (size > 1024 * 1024)
            wh_verr(c, "large direct_responses may impact control plane performance, must be less than 1MB");
        else if (size > 100 * 1024)
            wh_vwarn(c, "large direct_responses may impact control plane performance");
    }
    check_http_status(c, wh_vint(dr, "status"));
}

static int retry_policy_known(const char *p, size_t n)
{
    static const char *const policies[] = {"5xx",
                                           "gateway-error",
                                           "reset",
                                           "reset-before-request",
                                           "connect-failure",
                                           "envoy-ratelimited",
                                           "retriable-4xx",
                                           "refused-stream",
                                           "retriable-status-codes",
                                           "retriable-headers",
                                           "http3-post-connect-failure",
                                           "cancelled",
                                           "deadline-exceeded",
                                           "internal",
                                           "resource-exhausted",
                                           "unavailable"};
    static const int codes[] = {100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301,
                                302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409,
                                410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425, 426, 428,
                                429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511};
    size_t i;
    char num[16];

    for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        if (strlen(policies[i]) == n && memcmp(policies[i], p, n) == 0)
            return 1;
    if (n > 0 && n < sizeof(num)) {
        char *end;
        long v;
        memcpy(num, p, n);
        num[n] = '\0';
        v = strtol(num, &end, 10);
        if (*end == '\0' && (num[0] == '+' || num[0] == '-' || (num[0] >= '0' && num[0] <= '9')))
            for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
                if (codes[i] == v)
                    return 1;
    }
    return 0;
}

static void check_retry(wh_vctx *c, const json_t *r)
{
    long long attempts;
    const char *on, *p;

    if (r == NULL)
        return;
    attempts = wh_vint(r, "attempts");
    on = wh_vstr(r, "retryOn");
    if (attempts < 0)
        wh_verr(c, "attempts cannot be negative");
    if (attempts == 0 && (wh_vget(r, "perTryTimeout") != NULL || *on || wh_vget(r, "retryRemoteLocalities") != NULL))
        wh_verr(c, "http retry policy configured when attempts are set to 0 (disabled)");
    wh_vcheck_duration(c, wh_vget(r, "perTryTimeout"));
    wh_vcheck_duration(c, wh_vget(r, "backoff"));
    for (p = on; *on;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (!retry_policy_known(p, n)) {
            char *pol = wh_strndup(p, n);
            wh_verr(c, "%s is not a valid retryOn policy", wh_vq(c, pol));
            free(pol);
        }
        if (comma == NULL)
            break;
        p = comma + 1;
    }
}

static void check_rewrite(wh_vctx *c, const json_t *rw)
{
    const json_t *rr = wh_vobj(rw, "uriRegexRewrite");

    if (rw == NULL)
        return;
    if (*wh_vstr(rw, "uri") && rr != NULL) {
        wh_verr(c, "rewrite may only contain one of URI or UriRegexRewrite");
        return;
    }
    if (*wh_vstr(rw, "uri") == '\0' && rr == NULL && *wh_vstr(rw, "authority") == '\0') {
        wh_verr(c, "rewrite must specify at least one of URI, UriRegexRewrite, or authority. Only one of URI or "
                   "UriRegexRewrite may be specified");
        return;
    }
    if (rr != NULL) {
        /* istiod joins the cause under a heading (errors.Join: one error, two lines) */
        size_t mark = wh_verr_mark(c);
        if (*wh_vstr(rr, "match") == '\0' || *wh_vstr(rr, "rewrite") == '\0')
            wh_verr(c, "UriRegexRewrite requires both Rewrite and Match fields to be specified");
        else
            wh_vcheck_regex(c, wh_vstr(rr, "match"), "HTTPRewrite.UriRegexRewrite.Match");
        if (wh_verr_mark(c) > mark) {
            char *cause = c->errs.v[--c->errs.n];
            wh_verr(c, "UriRegexRewrite has errors\n%s", cause);
            free(cause);
        }
    }
}

static void check_authority_rewrite(wh_vctx *c, const json_t *rw, const json_t *headers)
{
    const char *current = wh_vstr(rw, "authority");
    const json_t *req = wh_vobj(headers, "request");
    const char *which[] = {"set", "add"};
    size_t i;

    for (i = 0; i < 2; i++) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)wh_vobj(req, which[i]), k, v)
        {
            if (!is_authority_header(k))
                continue;
            if (*current) {
                wh_verr(c, "authority header cannot be set multiple times: have %s, attempting to set %s",
                        wh_vq(c, current), wh_vq(c, json_string_value(v)));
                return;
            }
            current = json_string_value(v);
        }
    }
}

static void check_route_destinations(wh_vctx *c, const json_t *dests, int http)
{
    size_t i;
    unsigned int total = 0;

    for (i = 0; i < json_array_size(dests); i++) {
        const json_t *d = json_array_get(dests, i);
        long long w = wh_vint(d, "weight");
        if (wh_vget(d, "destination") == NULL) {
            wh_verr(c, "destination is required");
            continue;
        }
        wh_vcheck_destination(c, wh_vobj(d, "destination"));
        if (w < 0)
            wh_verr(c, "weight %lld < 0", w);
        if (http)
            check_headers(c, wh_vobj(d, "headers"));
        total += (unsigned int)w;
    }
    if (json_array_size(dests) > 1 && total == 0)
        wh_verr(c, "total destination weight = 0");
}

/* istiod's route kinds: a route of a delegate VS, a root route (one that
 * delegates), or an independent one. */
enum route_kind { ROUTE_INDEPENDENT, ROUTE_ROOT, ROUTE_DELEGATE };

static void check_conflicts(wh_vctx *c, const json_t *h, enum route_kind kind)
{
    int has_route = wh_varr(h, "route") != NULL;

    if (kind == ROUTE_ROOT) {
        /* only the delegate may be set; nothing else is compared */
        if (wh_vget(h, "redirect") != NULL)
            wh_verr(c, "root HTTP route %s must not specify redirect", wh_vstr(h, "name"));
        if (has_route)
            wh_verr(c, "root HTTP route %s must not specify route", wh_vstr(h, "name"));
        return;
    }
    if (kind == ROUTE_DELEGATE && wh_vget(h, "delegate") != NULL)
        wh_verr(c, "delegate HTTP route cannot contain delegate");
    if (wh_vget(h, "redirect") != NULL) {
        if (has_route)
            wh_verr(c, "HTTP route cannot contain both route and redirect");
        if (wh_vget(h, "fault") != NULL)
            wh_verr(c, "HTTP route cannot contain both fault and redirect");
        if (wh_vget(h, "rewrite") != NULL)
            wh_verr(c, "HTTP route rule cannot contain both rewrite and redirect");
        if (wh_vget(h, "directResponse") != NULL)
            wh_verr(c, "HTTP route rule cannot contain both direct_response and redirect");
    } else if (wh_vget(h, "directResponse") != NULL) {
        if (has_route)
            wh_verr(c, "HTTP route cannot contain both route and direct_response");
        if (wh_vget(h, "fault") != NULL)
            wh_verr(c, "HTTP route cannot contain both fault and direct_response");
        if (wh_vget(h, "rewrite") != NULL)
            wh_verr(c, "HTTP route rule cannot contain both rewrite and direct_response");
    } else if (!has_route) {
        wh_verr(c, "HTTP route, redirect or direct_response is required");
    }
    if (wh_vget(h, "mirror") != NULL && wh_varr(h, "mirrors") != NULL)
        wh_verr(c, "HTTP route cannot contain both mirror and mirrors");
}

static void check_http_route(wh_vctx *c, const json_t *h, int delegate_vs)
{
    const json_t *mp = wh_vget(h, "mirrorPercent");
    enum route_kind kind = delegate_vs                      ? ROUTE_DELEGATE
                           : wh_vobj(h, "delegate") != NULL ? ROUTE_ROOT
                                                            : ROUTE_INDEPENDENT;

    check_conflicts(c, h, kind);
    check_match_requests(c, h);
    check_headers(c, wh_vobj(h, "headers"));
    check_cors(c, wh_vobj(h, "corsPolicy"));
    check_fault(c, wh_vobj(h, "fault"));
    if (mp != NULL) {
        if (json_integer_value(mp) > 100)
            wh_verr(c, "mirror_percent must have a max value of 100 (it has %lld)", (long long)json_integer_value(mp));
        wh_vwarn(c, "using deprecated setting \"mirrorPercent\", use \"mirrorPercentage\" instead");
    }
    if (wh_vobj(h, "mirrorPercentage") != NULL)
        check_mirror_percentage(c, 1, wh_vnum(wh_vobj(h, "mirrorPercentage"), "value"));
    wh_vcheck_destination(c, wh_vobj(h, "mirror"));
    check_mirrors(c, wh_varr(h, "mirrors"));
    check_redirect(c, wh_vobj(h, "redirect"), wh_varr(h, "match"));
    check_direct_response(c, wh_vobj(h, "directResponse"));
    check_retry(c, wh_vobj(h, "retries"));
    check_rewrite(c, wh_vobj(h, "rewrite"));
    check_authority_rewrite(c, wh_vobj(h, "rewrite"), wh_vobj(h, "headers"));
    check_route_destinations(c, wh_varr(h, "route"), 1);
    wh_vcheck_duration(c, wh_vget(h, "timeout"));
}

/* The host check of a VS bound to gateways: a TLS VS may also use the SNI
 * names Envoy generates for AUTO_PASSTHROUGH, outbound_.<PORT>_._.<HOSTNAME>. */
static char *gateway_domain_msg(wh_vctx *c, int sni, const char *host)
{
    const char *fmt = "outbound_.<PORT>_._.<HOSTNAME>";
    const char *p[4];
    char *port = NULL, *name = NULL, *m = NULL;
    size_t i, n = 0;

    if (!sni || strncmp(host, "outbound_", 9) != 0 || strlen(host) > 255)
        return wh_vmsg_wildcard_domain(c, host);
    /* strings.Split on '_': parts[1] is the port, parts[3] the host name, each trimmed of dots */
    for (p[n++] = host; n < 4 && (p[n] = strchr(p[n - 1], '_')) != NULL; n++)
        p[n]++;
    if (n < 4) {
        return wh_asprintf("domain name %s invalid, should follow '%s' format", host, fmt);
    }
    port = wh_strndup(p[1], (size_t)(p[2] - 1 - p[1]));
    name = wh_strndup(p[3], strcspn(p[3], "_"));
    for (i = 0; i < 2; i++) {
        char *t = i ? name : port, *e = t + strlen(t);
        size_t lead = strspn(t, ".");
        while (e > t + lead && e[-1] == '.')
            e--;
        *e = '\0';
        memmove(t, t + lead, strlen(t + lead) + 1);
    }
    if (strpbrk(port, "0123456789") == NULL) {
        m = wh_asprintf("domain name %s invalid (label %s invalid). should follow %s format", wh_vq(c, host),
                        wh_vq(c, port), fmt);
    } else if (strpbrk(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == NULL) {
        m = wh_asprintf("domain name %s invalid (label %s invalid). should follow %s format", wh_vq(c, host),
                        wh_vq(c, name), fmt);
    }
    free(port);
    free(name);
    return m;
}

/* isGateway: a VS whose gateway list does not name "mesh" (an empty list included). */
static int names_no_mesh(const json_t *gateways)
{
    size_t i;

    for (i = 0; i < json_array_size(gateways); i++)
        if (strcmp(json_string_value(json_array_get(gateways, i)), "mesh") == 0)
            return 0;
    return 1;
}

/* Whether any TLS match of the VS names SNI hosts. */
static int has_sni_hosts(const json_t *spec)
{
    const json_t *tls = wh_varr(spec, "tls");
    size_t i, j;

    for (i = 0; i < json_array_size(tls); i++) {
        const json_t *matches = wh_varr(json_array_get(tls, i), "match");
        for (j = 0; j < json_array_size(matches); j++)
            if (wh_varr(json_array_get(matches, j), "sniHosts") != NULL)
                return 1;
    }
    return 0;
}

/* What TLS and TCP matches share (istiod's L4 match attributes). */
static void check_l4_match(wh_vctx *c, const json_t *m)
{
    const json_t *subnets = wh_varr(m, "destinationSubnets");

    for (size_t j = 0; j < json_array_size(subnets); j++)
        wh_vadd_err(c, wh_vmsg_ip_subnet(c, json_string_value(json_array_get(subnets, j))));
    if (wh_vint(m, "port") != 0)
        wh_vcheck_port(c, wh_vint(m, "port"));
    wh_vcheck_labels(c, wh_vobj(m, "sourceLabels"));
    check_gateway_names(c, wh_varr(m, "gateways"));
}

/* ... and their routes: `proto` is "TLS" or "TCP" in the message. */
static void check_l4_route(wh_vctx *c, const json_t *t, const char *proto)
{
    if (wh_varr(t, "route") == NULL)
        wh_verr(c, "%s route is required", proto);
    check_route_destinations(c, wh_varr(t, "route"), 0);
}

static void check_tls_route(wh_vctx *c, const json_t *t, const json_t *hosts, int gateway)
{
    const json_t *matches = wh_varr(t, "match");
    size_t i, j, k;

    if (matches == NULL)
        wh_verr(c, "TLS route must have at least one match condition");
    for (i = 0; i < json_array_size(matches); i++) {
        const json_t *m = json_array_get(matches, i);
        const json_t *snis = wh_varr(m, "sniHosts");
        if (snis == NULL)
            wh_verr(c, "TLS match must have at least one SNI host");
        for (j = 0; j < json_array_size(snis); j++) {
            const char *sni = json_string_value(json_array_get(snis, j));
            char *e = gateway ? gateway_domain_msg(c, 1, sni) : wh_vmsg_wildcard_domain(c, sni);
            if (e != NULL) {
                if (wh_vis_ip(sni)) {
                    free(e);
                    wh_vwarn(c, "using an IP address (%s) goes against SNI spec and most clients do not support this",
                             wh_vq(c, sni));
                } else {
                    wh_vadd_err(c, e);
                }
                continue;
            }
            if (json_array_size(hosts) > WH_VS_MAX_HOSTS)
                continue; /* denied for its host count; comparing every SNI with every host would not end */
            for (k = 0; k < json_array_size(hosts); k++)
                if (wh_vhost_subset_of(sni, json_string_value(json_array_get(hosts, k))))
                    break;
            if (k == json_array_size(hosts)) {
                wh_buf list = WH_BUF_INIT;
                for (k = 0; k < json_array_size(hosts); k++)
                    wh_buf_printf(&list, "%s%s", k ? ", " : "", json_string_value(json_array_get(hosts, k)));
                wh_verr(c, "SNI host %s is not a compatible subset of any of the virtual service hosts: [%s]",
                        wh_vq(c, sni), list.data ? list.data : "");
                wh_buf_free(&list);
            }
        }
        check_l4_match(c, m);
    }
    check_l4_route(c, t, "TLS");
}

static void check_tcp_route(wh_vctx *c, const json_t *t)
{
    const json_t *matches = wh_varr(t, "match");

    for (size_t i = 0; i < json_array_size(matches); i++)
        check_l4_match(c, json_array_get(matches, i));
    check_l4_route(c, t, "TCP");
}

/* "#<i>" or the quoted name, as istiod names rules and matches in warnings. */
static const char *rule_name(wh_vctx *c, const json_t *o, size_t i, char *buf, size_t len)
{
    const char *name = wh_vstr(o, "name");

    if (*name)
        return wh_vq(c, name);
    snprintf(buf, len, "#%zu", i);
    return buf;
}

/* The match as JSON with its name removed, keys sorted: two matches that print alike route alike (HTTP,
 * TLS and TCP matches alike; only HTTP routes and matches have names). */
static char *match_key(const json_t *m)
{
    json_t *copy = json_copy((json_t *)m);
    wh_buf text = WH_BUF_INIT;

    json_object_del(copy, "name");
    wh_go_json(&text, copy, WH_GO_JSON_SORTED | WH_GO_JSON_MINIMAL);
    json_decref(copy);
    return wh_buf_steal(&text, NULL);
}

/* "exact:<v>", "prefix:<v>" or "" for a StringMatch, as istiod keys the overlap comparison. */
static const char *exact_or_prefix(wh_vctx *c, const json_t *sm)
{
    if (*wh_vstr(sm, "exact"))
        return wh_vfmt(c, "exact:%s", wh_vstr(sm, "exact"));
    if (*wh_vstr(sm, "prefix"))
        return wh_vfmt(c, "prefix:%s", wh_vstr(sm, "prefix"));
    return "";
}

/* a equals b, or a extends b */
static int same_or_extends(const char *a, const char *b)
{
    return strcmp(a, b) == 0 || strncmp(a, b, strlen(b)) == 0;
}

/* Every key of the string-match map `a` is in `b` with a value that `a`'s extends (same size). */
static int map_covered(wh_vctx *c, const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;

    if (json_object_size(a) != json_object_size(b))
        return 0;
    json_object_foreach((json_t *)a, k, v)
    {
        const json_t *w = json_object_get(b, k);
        if (w == NULL || !same_or_extends(exact_or_prefix(c, v), exact_or_prefix(c, w)))
            return 0;
    }
    return 1;
}

/* Match `a` (earlier, URI prefix pa) takes all traffic of match `b` (later, prefix pb): pb extends pa,
 * the ports agree, and b's method, authority, headers, query parameters and withoutHeaders are each
 * equal to or a prefix of a's (a missing method counts as exact GET). */
static int prefix_covers(wh_vctx *c, const json_t *a, const json_t *b)
{
    const char *ma = exact_or_prefix(c, wh_vobj(a, "method")), *mb = exact_or_prefix(c, wh_vobj(b, "method"));

    if (strncmp(wh_vstr(wh_vobj(b, "uri"), "prefix"), wh_vstr(wh_vobj(a, "uri"), "prefix"),
                strlen(wh_vstr(wh_vobj(a, "uri"), "prefix"))) != 0)
        return 0;
    if (wh_vint(a, "port") != wh_vint(b, "port"))
        return 0;
    if (!same_or_extends(*ma ? ma : "exact:GET", *mb ? mb : "exact:GET"))
        return 0;
    if (!same_or_extends(exact_or_prefix(c, wh_vobj(a, "authority")), exact_or_prefix(c, wh_vobj(b, "authority"))))
        return 0;
    return map_covered(c, wh_vobj(a, "headers"), wh_vobj(b, "headers")) &&
           map_covered(c, wh_vobj(a, "queryParams"), wh_vobj(b, "queryParams")) &&
           map_covered(c, wh_vobj(a, "withoutHeaders"), wh_vobj(b, "withoutHeaders"));
}

typedef struct prefix_match {
    const json_t *m;
    const char *rule, *match, *prefix;
} prefix_match;

static void analyze_unreachable(wh_vctx *c, const json_t *routes, int http)
{
    size_t n = json_array_size(routes), i, j, np = 0;
    long empty_seen = -1;
    char a[32], b[32], d[32];
    wh_vset seen; /* match key -> index of the last rule that had it */
    prefix_match *pm = NULL;

    if (n == 0)
        return;
    wh_vset_init(&seen, n);
    for (i = 0; i < n; i++) {
        const json_t *r = json_array_get(routes, i);
        const json_t *matches = wh_varr(r, "match");
        size_t dups = 0;
        if (matches == NULL) {
            if (empty_seen >= 0)
                wh_vwarn(c, "virtualService rule %s not used (only the last rule can have no matches)",
                         rule_name(c, r, i, a, sizeof(a)));
            empty_seen = (long)i;
            continue;
        }
        for (j = 0; j < json_array_size(matches); j++) {
            const json_t *m = json_array_get(matches, j);
            const char *key;
            size_t owner;
            int found;
            if (empty_seen >= 0) {
                wh_vwarn(c, "virtualService rule %s not used (route without matches defined before)",
                         rule_name(c, r, i, a, sizeof(a)));
                continue;
            }
            key = wh_vown(c, match_key(m));
            if ((found = wh_vset_put(&seen, key, i, &owner))) {
                wh_vwarn(c, "virtualService rule %s match %s is not used (duplicate/overlapping match in rule %s)",
                         rule_name(c, r, i, a, sizeof(a)), rule_name(c, m, j, b, sizeof(b)),
                         rule_name(c, json_array_get(routes, owner), owner, d, sizeof(d)));
                dups++;
                continue;
            }
            if (http && *wh_vstr(wh_vobj(m, "uri"), "prefix") && np < WH_VS_MAX_PREFIX_MATCHES) {
                if (pm == NULL)
                    pm = wh_calloc(WH_VS_MAX_PREFIX_MATCHES, sizeof(*pm));
                pm[np].m = m;
                pm[np].rule = wh_vfmt(c, "%s", rule_name(c, r, i, a, sizeof(a)));
                pm[np].match = wh_vfmt(c, "%s", rule_name(c, m, j, b, sizeof(b)));
                pm[np].prefix = wh_vstr(wh_vobj(m, "uri"), "prefix");
                np++;
            }
        }
        if (dups == json_array_size(matches))
            wh_vwarn(c, "virtualService rule %s not used (all matches used by prior rules)",
                     rule_name(c, r, i, a, sizeof(a)));
    }
    /* a later URI prefix that extends an earlier one, with nothing else to tell them apart */
    for (i = 0; np > 1 && i < np; i++)
        for (j = i + 1; j < np; j++)
            /* the cheap test of prefix_covers first: 4096 prefixes make 8M pairs */
            if (strcmp(pm[i].prefix, pm[j].prefix) != 0 &&
                strncmp(pm[j].prefix, pm[i].prefix, strlen(pm[i].prefix)) == 0 && prefix_covers(c, pm[i].m, pm[j].m))
                wh_vwarn(c,
                         "virtualService rule %s match %s of prefix %s is not used (duplicate/overlapping match in "
                         "rule %s of prefix %s on %s)",
                         pm[j].rule, pm[j].match, pm[j].prefix, pm[i].match, pm[i].prefix, pm[i].rule);
    free(pm);
    wh_vset_free(&seen);
}

static void check_jwt_claims(wh_vctx *c, const json_t *spec, const json_t *gateways)
{
    const json_t *http = wh_varr(spec, "http");
    wh_buf list = WH_BUF_INIT;
    size_t i, j, k;

    for (k = 0; k < json_array_size(gateways); k++)
        wh_buf_printf(&list, "%s%s", k ? " " : "", json_string_value(json_array_get(gateways, k)));
    for (i = 0; i < json_array_size(http); i++) {
        const json_t *matches = wh_varr(json_array_get(http, i), "match");
        for (j = 0; j < json_array_size(matches); j++) {
            const char *which[] = {"headers", "withoutHeaders"};
            for (k = 0; k < 2; k++) {
                const char *key;
                json_t *v;
                json_object_foreach((json_t *)wh_vobj(json_array_get(matches, j), which[k]), key, v)
                {
                    if (is_jwt_claim(key))
                        wh_verr(c,
                                "JWT claim based routing (key: %s) is only supported for gateway, found no gateways: "
                                "[%s]",
                                key, list.data ? list.data : "");
                }
            }
        }
    }
    wh_buf_free(&list);
}

void wh_validate_virtual_service(wh_vctx *c, const json_t *spec)
{
    const json_t *hosts = wh_varr(spec, "hosts"), *gateways = wh_varr(spec, "gateways");
    const json_t *http = wh_varr(spec, "http"), *tls = wh_varr(spec, "tls"), *tcp = wh_varr(spec, "tcp");
    int delegate = hosts == NULL, to_mesh = 0, to_gateway = 0, all_valid = 1;
    size_t i, j;

    if (delegate) {
        if (gateways != NULL)
            wh_verr(c, "delegate virtual service must have no gateways specified");
        if (tls != NULL)
            wh_verr(c, "delegate virtual service must have no tls route specified");
        if (tcp != NULL)
            wh_verr(c, "delegate virtual service must have no tcp route specified");
    }
    if (gateways != NULL) {
        check_gateway_names(c, gateways);
        to_gateway = names_no_mesh(gateways);
    }
    to_mesh = !to_gateway;
    if (!to_gateway)
        check_jwt_claims(c, spec, gateways);

    for (i = 0; i < json_array_size(hosts); i++) {
        const char *h = json_string_value(json_array_get(hosts, i));
        char *e = to_gateway ? gateway_domain_msg(c, has_sni_hosts(spec), h) : wh_vmsg_wildcard_domain(c, h);
        if (e != NULL) {
            if (!wh_vis_ip(h)) {
                wh_vadd_err(c, e);
                all_valid = 0;
            } else {
                free(e);
            }
        } else if (to_mesh && strcmp(h, "*") == 0) {
            wh_verr(c, "wildcard host * is not allowed for virtual services bound to the mesh gateway");
            all_valid = 0;
        }
    }
    if (json_array_size(hosts) > WH_VS_MAX_HOSTS) {
        /* istiod compares every pair of hosts; past this many that is a denial of service, not a check. */
        wh_verr(c, "virtual service has %zu hosts, more than the %d this webhook compares for duplicates",
                json_array_size(hosts), WH_VS_MAX_HOSTS);
    } else if (all_valid) {
        for (i = 0; i < json_array_size(hosts); i++)
            for (j = i + 1; j < json_array_size(hosts); j++) {
                const char *a = json_string_value(json_array_get(hosts, i));
                const char *b = json_string_value(json_array_get(hosts, j));
                if (wh_vhost_matches(a, b))
                    wh_verr(c, "duplicate hosts in virtual service: %s & %s", a, b);
            }
    }
    if (http == NULL && tcp == NULL && tls == NULL)
        wh_verr(c, "http, tcp or tls must be provided in virtual service");
    for (i = 0; i < json_array_size(http); i++)
        check_http_route(c, json_array_get(http, i), delegate);
    for (i = 0; i < json_array_size(tls); i++)
        check_tls_route(c, json_array_get(tls, i), hosts, names_no_mesh(gateways));
    for (i = 0; i < json_array_size(tcp); i++)
        check_tcp_route(c, json_array_get(tcp, i));
    wh_vcheck_export_to(c, wh_varr(spec, "exportTo"), 0, 0);
    analyze_unreachable(c, http, 1);
    analyze_unreachable(c, tcp, 0);
    analyze_unreachable(c, tls, 0);
}
