/*
 * security.c - the security.istio.io kinds: AuthorizationPolicy (sources,
 * operations, conditions, CUSTOM providers), PeerAuthentication and
 * RequestAuthentication (issuers, JWKS URIs and documents as jwx's jwk.Parse
 * reads them, header rules), with istiod's rules and messages
 * (tests/validate/fixtures; JWKS texts: 88-jwks.yaml).
 */
#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_json.h"
#include "wh_validate_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* security.ValidateIPs' error for one value (NULL when it is fine): a value with a '/' is a
 * netip.ParsePrefix, whose error is quoted whole (netip.c); any other value a netip.ParseAddr. */
static const char *ip_value_error(wh_vctx *c, const char *v)
{
    wh_buf b = WH_BUF_INIT;

    if (strchr(v, '/') == NULL)
        return wh_vis_ip(v) ? NULL : wh_vfmt(c, "bad IP address (%s)", v);
    if (wh_vnetip_prefix(v, NULL))
        return NULL;
    wh_vnetip_prefix(v, &b); /* again, for the text: the common case builds none */
    return wh_vfmt(c, "bad CIDR range (%s): %s", v, wh_vown(c, wh_buf_steal(&b, NULL)));
}

/* Source IPs / CIDR blocks (istiod reports them through a list, so even one prints as a list). */
static void check_ips(wh_vctx *c, const json_t *ips)
{
    for (size_t i = 0; i < json_array_size(ips); i++) {
        const char *e = ip_value_error(c, json_string_value(json_array_get(ips, i)));
        if (e != NULL)
            wh_verr_listed(c, "%s", e);
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

/* security.CheckWildcardValues: no empty value, at most one '*', and only at the start or end. */
static const char *wildcard_problem(wh_vctx *c, const char *key, const json_t *values)
{
    size_t i;

    if (has_empty(values))
        return wh_vfmt(c, "empty value not allowed, found in %s", key);
    for (i = 0; i < json_array_size(values); i++) {
        const char *v = json_string_value(json_array_get(values, i)), *star = strchr(v, '*');
        size_t n = strlen(v);
        if (star != NULL && strchr(star + 1, '*') != NULL)
            return wh_vfmt(c, "at most one wildcard is allowed, found in %s: %s", key, wh_vq(c, v));
        if (star != NULL && star != v && star != v + n - 1)
            return wh_vfmt(c, "wildcard is only allowed at the start or end, found in %s: %s", key, wh_vq(c, v));
    }
    return NULL;
}

/* security.CheckTrustDomainValues: wildcard values that are not paths. */
static void check_trust_domains(wh_vctx *c, const char *key, const json_t *values)
{
    const char *why = wildcard_problem(c, key, values);
    size_t i;

    for (i = 0; why == NULL && i < json_array_size(values); i++) {
        const char *v = json_string_value(json_array_get(values, i));
        if (strchr(v, '/') != NULL)
            why = wh_vfmt(c, "trust domain must not contain '/', found in %s: %s", key, wh_vq(c, v));
    }
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
            const char *e = ip_value_error(c, json_string_value(json_array_get(values, i)));
            if (e != NULL)
                multi_add(c, &list, &n, e);
        }
        return multi_text(c, &list, n);
    }
    if (strcmp(key, "source.serviceAccount") == 0)
        return service_account_problem(c, key, values);
    if (strcmp(key, "source.trustDomain") == 0)
        return wildcard_problem(c, key, values);
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
                                                 {"trustDomains", "From.TrustDomains"},
                                                 {"notTrustDomains", "From.NotTrustDomains"},
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
            strcmp(key, "source.trustDomain") == 0 || strcmp(key, "source.principal") == 0 ||
            strncmp(key, "request.auth.", 13) == 0)
            wh_verr(c, "%s is currently not supported with CUSTOM action", key);
    }
}

/* Every error of an AuthorizationPolicy is prefixed "invalid policy <name>.<namespace>:". */
static void prefix_errors(wh_vctx *c, size_t from)
{
    size_t i;

    for (i = from; i < c->errs.n; i++) {
        char *m = wh_asprintf("invalid policy %s.%s: %s", c->name, c->ns, c->errs.v[i]);
        free(c->errs.v[i]);
        c->errs.v[i] = m;
    }
}

void wh_validate_authorization_policy(wh_vctx *c, const json_t *spec)
{
    const char *action = wh_venum(spec, "action", "ALLOW");
    const json_t *rules = wh_vget(spec, "rules"), *provider = wh_vobj(spec, "provider");
    size_t mark = wh_verr_mark(c), i, j;

    wh_vcheck_policy_target(c, spec, "selector");
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
            any |= wh_varr(src, "trustDomains") != NULL || wh_varr(src, "notTrustDomains") != NULL;
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
            check_trust_domains(c, "TrustDomains", wh_varr(src, "trustDomains"));
            check_empty(c, "IpBlocks", wh_varr(src, "ipBlocks"));
            check_empty(c, "RemoteIpBlocks", wh_varr(src, "remoteIpBlocks"));
            check_empty(c, "NotPrincipals", wh_varr(src, "notPrincipals"));
            check_empty(c, "NotRequestPrincipals", wh_varr(src, "notRequestPrincipals"));
            check_empty(c, "NotNamespaces", wh_varr(src, "notNamespaces"));
            check_service_accounts(c, "NotServiceAccounts", wh_varr(src, "notServiceAccounts"));
            check_trust_domains(c, "NotTrustDomains", wh_varr(src, "notTrustDomains"));
            check_empty(c, "NotIpBlocks", wh_varr(src, "notIpBlocks"));
            check_empty(c, "NotRemoteIpBlocks", wh_varr(src, "notRemoteIpBlocks"));
            /* any identity or address attribute also applies to TCP traffic (trust domains do not count) */
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

/* jwx's base64.Decode: the alphabet (URL unless '+' or '/' appear) and padding (when the text ends in
 * '=') chosen from the text, then Go's decoder of that encoding.  Returns -1 with the bytes in out, or the
 * offset of Go's CorruptInputError. */
static long jwx_base64_decode(wh_buf *out, const char *s)
{
    size_t n = strlen(s);
    int flags = (n == 0 || s[n - 1] != '=' ? WH_GO_BASE64_RAW : 0) | (strpbrk(s, "+/") == NULL ? WH_GO_BASE64_URL : 0);

    return wh_go_base64_decode(out, s, n, flags);
}

static int jwx_base64_valid(const char *s)
{
    wh_buf bytes = WH_BUF_INIT;
    long at = jwx_base64_decode(&bytes, s);

    wh_buf_free(&bytes);
    return at < 0;
}

/* key_ops decodes into jwk.KeyOperationList ([]jwk.KeyOperation, strings): NULL, or the part of
 * encoding/json's text after "json: cannot unmarshal ". */
static const char *key_ops_problem(const json_t *v)
{
    if (json_is_null(v))
        return NULL;
    if (!json_is_array(v))
        return json_is_object(v)   ? "object into Go value of type jwk.KeyOperationList"
               : json_is_string(v) ? "string into Go value of type jwk.KeyOperationList"
               : json_is_number(v) ? "number into Go value of type jwk.KeyOperationList"
                                   : "bool into Go value of type jwk.KeyOperationList";
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (json_is_string(e) || json_is_null(e))
            continue;
        return json_is_object(e)   ? "object into Go value of type jwk.KeyOperation"
               : json_is_array(e)  ? "array into Go value of type jwk.KeyOperation"
               : json_is_number(e) ? "number into Go value of type jwk.KeyOperation"
                                   : "bool into Go value of type jwk.KeyOperation";
    }
    return NULL;
}

/* x5c decodes into jwk.CertificateChain: its UnmarshalJSON reads a []string, then each string (null reads
 * as "") is jwx base64 that x509.ParseCertificate must accept.  NULL, or the error after "failed to decode
 * value for key x5c: ". */
static const char *x5c_problem(wh_vctx *c, const json_t *v)
{
    const char *why = NULL;
    size_t i;

    if (json_is_null(v))
        return NULL;
    if (!json_is_array(v))
        return wh_vfmt(c,
                       "failed to unmarshal JSON into []string: json: cannot unmarshal %s into Go value of type "
                       "[]string",
                       wh_go_json_kind(v));
    for (i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e) && !json_is_null(e))
            return wh_vfmt(c,
                           "failed to unmarshal JSON into []string: json: cannot unmarshal %s into Go value of type "
                           "string",
                           wh_go_json_kind(e));
    }
    for (i = 0; i < json_array_size(v) && why == NULL; i++) {
        const char *text = json_is_string(json_array_get(v, i)) ? json_string_value(json_array_get(v, i)) : "";
        wh_buf der = WH_BUF_INIT;
        long at = jwx_base64_decode(&der, text);
        if (at >= 0)
            why = wh_vfmt(c,
                          "failed to base64 decode list element: failed to decode source: illegal base64 data at "
                          "input byte %ld",
                          at);
        else if ((why = wh_vx509_problem(c, (const unsigned char *)der.data, der.len)) != NULL)
            why = wh_vfmt(c, "failed to parse certificate: %s", why);
        wh_buf_free(&der);
    }
    return why;
}

/* One key as jwx v1's ParseKey reads it: the "kty"/"d" hint, then the key type's UnmarshalJSON (its
 * members in order: strings must be strings, byte fields base64, crv a string, key_ops a list of strings;
 * x5c a list of strings; then its required fields).  NULL when it reads. */
static const char *jwk_key_problem(wh_vctx *c, const json_t *k)
{
    static const struct {
        const char *kty, *pub, *priv;
        const char *bytes_pub, *bytes_priv; /* space-separated; required ones are checked in this order */
        const char *required_pub, *required_priv;
    } types[] = {
        {"RSA", "rsaPublicKey", "rsaPrivateKey", " e n ", " d dp dq e n p q qi ", "e n", "d e n"},
        {"EC", "ecdsaPublicKey", "ecdsaPrivateKey", " x y ", " d x y ", "crv x y", "crv d x y"},
        {"oct", "symmetricKey", "symmetricKey", " k ", " k ", "k", "k"},
        {"OKP", "okpPublicKey", "okpPrivateKey", " x ", " d x ", "crv x", "crv d x"},
    };
    static const char *const strings = " kty alg kid use x5t x5t#S256 x5u ";
    const json_t *kty = json_object_get(k, "kty"), *v;
    const char *name, *required, *bytes, *go_type, *problem;
    char word[32];
    size_t i;
    int priv;

    if (json_is_null(k))
        return "invalid key type from JSON ()";
    if (!json_is_object(k))
        return wh_vfmt(c,
                       "failed to unmarshal JSON into key hint: json: cannot unmarshal %s into Go value of type "
                       "struct { Kty string \"json:\\\"kty\\\"\"; D json.RawMessage \"json:\\\"d\\\"\" }",
                       wh_go_json_kind(k));
    if (kty != NULL && !json_is_null(kty) && !json_is_string(kty))
        return wh_vfmt(c,
                       "failed to unmarshal JSON into key hint: json: cannot unmarshal %s into Go struct field .kty "
                       "of type string",
                       wh_go_json_kind(kty));
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (json_is_string(kty) && strcmp(json_string_value(kty), types[i].kty) == 0)
            break;
    if (i == sizeof(types) / sizeof(types[0]))
        return wh_vfmt(c, "invalid key type from JSON (%s)", json_is_string(kty) ? json_string_value(kty) : "");
    priv = json_object_get(k, "d") != NULL;
    go_type = priv ? types[i].priv : types[i].pub;
    bytes = priv ? types[i].bytes_priv : types[i].bytes_pub;
    json_object_foreach((json_t *)k, name, v)
    {
        int is_bytes, is_string;
        if (strlen(name) + 3 > sizeof(word))
            continue;
        snprintf(word, sizeof(word), " %s ", name);
        is_bytes = strstr(bytes, word) != NULL;
        is_string = strstr(strings, word) != NULL;
        if ((is_bytes || is_string) && !json_is_string(v) && !json_is_null(v))
            return wh_vfmt(c,
                           "failed to unmarshal JSON into key (*jwk.%s): failed to decode value for key %s: error "
                           "reading next value: json: cannot unmarshal %s into Go value of type string",
                           go_type, name, wh_go_json_kind(v));
        if (strcmp(name, "crv") == 0 && (strcmp(types[i].kty, "EC") == 0 || strcmp(types[i].kty, "OKP") == 0) &&
            !json_is_string(v) && !json_is_null(v))
            return wh_vfmt(c,
                           "failed to unmarshal JSON into key (*jwk.%s): failed to decode value for key %s: json: "
                           "cannot unmarshal %s into Go value of type jwa.EllipticCurveAlgorithm",
                           go_type, name, wh_go_json_kind(v));
        if (strcmp(name, "key_ops") == 0 && (problem = key_ops_problem(v)) != NULL)
            return wh_vfmt(c,
                           "failed to unmarshal JSON into key (*jwk.%s): failed to decode value for key %s: json: "
                           "cannot unmarshal %s",
                           go_type, name, problem);
        if (strcmp(name, "x5c") == 0 && (problem = x5c_problem(c, v)) != NULL)
            return wh_vfmt(c, "failed to unmarshal JSON into key (*jwk.%s): failed to decode value for key %s: %s",
                           go_type, name, problem);
        if (is_bytes && json_is_string(v) && !jwx_base64_valid(json_string_value(v)))
            return wh_vfmt(c,
                           "failed to unmarshal JSON into key (*jwk.%s): failed to decode value for key %s: expected "
                           "base64 encoded []byte (string)",
                           go_type, name);
    }
    required = priv ? types[i].required_priv : types[i].required_pub;
    while (*required) {
        size_t n = strcspn(required, " ");
        snprintf(word, sizeof(word), "%.*s", (int)n, required);
        if (json_object_get(k, word) == NULL)
            return wh_vfmt(c, "failed to unmarshal JSON into key (*jwk.%s): required field %s is missing", go_type,
                           word);
        required += n + (required[n] == ' ');
    }
    return NULL;
}

/* jwx v1's jwk.Parse of a jwtRules[].jwks text (istiod's validateJwtRule: "jwks parse error: %v"): NULL
 * when it parses, else the error after "failed to unmarshal JWK set: ": Go's JSON syntax error, the set's
 * own reading (jwk/set.go: tokens of an object, "keys" a list, else the object is the sole key), then
 * each key's (jwk_key_problem). */
static const char *jwks_problem(wh_vctx *c, const char *text)
{
    wh_buf syntax = WH_BUF_INIT;
    json_t *doc = NULL;
    const json_t *keys;
    const char *p = text, *why = NULL;
    size_t i;

    if (wh_vgo_json_check(text, strlen(text), &syntax) != 0) {
        why = wh_vown(c, wh_buf_steal(&syntax, NULL));
        goto out;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p == '[') {
        why = "expected '{', but got '['";
        goto out;
    }
    doc = wh_json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL);
    if (*p == '"') {
        /* a lone string is read as a member name whose value never comes */
        const char *s = json_string_value(doc) ? json_string_value(doc) : "";
        why = strcmp(s, "keys") == 0 ? "failed to decode \"keys\": EOF"
                                     : wh_vfmt(c, "failed to decode value for key %s: EOF", wh_vq(c, s));
        goto out;
    }
    if (*p != '{') {
        why = "error reading token: EOF"; /* a number, true, false or null: no member, then the end */
        goto out;
    }
    if (!json_is_object(doc))
        goto out; /* valid to Go, not to the JSON reader (e.g. a number beyond a double): not judged */
    keys = json_object_get(doc, "keys");
    if (keys == NULL) {
        if ((why = jwk_key_problem(c, doc)) != NULL)
            why = wh_vfmt(c, "failed to parse sole key in key set: %s", why);
    } else if (!json_is_array(keys) && !json_is_null(keys)) {
        why = wh_vfmt(c, "failed to decode \"keys\": json: cannot unmarshal %s into Go value of type []json.RawMessage",
                      wh_go_json_kind(keys));
    } else {
        for (i = 0; i < json_array_size(keys) && why == NULL; i++)
            if ((why = jwk_key_problem(c, json_array_get(keys, i))) != NULL)
                why = wh_vfmt(c, "failed to decode key #%zu in \"keys\": %s", i, why);
    }
out:
    wh_buf_free(&syntax);
    json_decref(doc);
    return why;
}

/* istiod warns about each key of a parsed set that carries private material (jwx's private RSA, EC and
 * OKP keys, which it picks by the presence of "d", and every symmetric "oct" key): Envoy verifies with
 * public keys only.  Call only for a text jwks_problem accepted. */
static void warn_private_jwks_keys(wh_vctx *c, const char *text)
{
    json_t *doc = wh_json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL);
    const json_t *keys;
    size_t i, n;

    if (!json_is_object(doc))
        goto out;
    keys = json_object_get(doc, "keys");
    n = keys == NULL ? 1 : json_array_size(keys);
    for (i = 0; i < n; i++) {
        const json_t *k = keys == NULL ? doc : json_array_get(keys, i);
        const char *kty = json_string_value(json_object_get(k, "kty"));
        if (kty == NULL)
            continue;
        if (strcmp(kty, "oct") == 0 || json_object_get(k, "d") != NULL)
            wh_vwarn(c,
                     "jwks key at index %zu contains private key material; only public keys are used for "
                     "verification",
                     i);
    }
out:
    json_decref(doc);
}

/* istiod's "strict" header names: ASCII letters, digits, '-' and '_' (kept for compatibility). */
static int strict_header_name_ok(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return 0;
    return 1;
}

void wh_validate_request_authentication(wh_vctx *c, const json_t *spec)
{
    const json_t *rules = wh_varr(spec, "jwtRules");
    const char *why;
    size_t i, j;

    wh_vcheck_policy_target(c, spec, "selector");
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
        if (*wh_vstr(r, "jwks") && (why = jwks_problem(c, wh_vstr(r, "jwks"))) != NULL)
            wh_verr_listed(c, "jwks parse error: failed to unmarshal JWK set: %s", why);
        else if (*wh_vstr(r, "jwks"))
            warn_private_jwks_keys(c, wh_vstr(r, "jwks"));
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
