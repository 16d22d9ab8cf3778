/*
 * sidecar.c - Sidecar: workload selector, emptiness, ingress listeners
 * (ports, binds, default endpoints, TLS, connection pools), egress listeners
 * (catch-all placement, ports, unix sockets, "namespace/dnsName" hosts and the
 * duplicate-host warnings) and the outbound traffic policy.
 */
#include "wh_validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* net.SplitHostPort: fills host/port (both empty on error) and returns Go's complaint or NULL. */
static const char *split_host_port(const char *ep, char *host, size_t hostlen, const char **port)
{
    const char *colon = strrchr(ep, ':');
    const char *open = ep, *close;
    size_t hl;

    *host = '\0';
    *port = "";
    if (colon == NULL)
        return "missing port in address";
    if (ep[0] == '[') {
        if ((close = strchr(ep, ']')) == NULL)
            return "missing ']' in address";
        if (close + 1 == ep + strlen(ep))
            return "missing port in address";
        if (close + 1 != colon)
            return close[1] == ':' ? "too many colons in address" : "missing port in address";
        open = ep + 1;
        hl = (size_t)(close - open);
        if (memchr(open, '[', hl) != NULL)
            return "unexpected '[' in address";
        if (strchr(colon, ']') != NULL)
            return "unexpected ']' in address";
    } else {
        hl = (size_t)(colon - ep);
        if (memchr(ep, ':', hl) != NULL)
            return "too many colons in address";
        if (memchr(ep, '[', hl) != NULL || strchr(colon, '[') != NULL)
            return "unexpected '[' in address";
        if (memchr(ep, ']', hl) != NULL || strchr(colon, ']') != NULL)
            return "unexpected ']' in address";
    }
    if (hl >= hostlen)
        return "too long";
    memcpy(host, open, hl);
    host[hl] = '\0';
    *port = colon + 1;
    return NULL;
}

static void check_default_endpoint(wh_vctx *c, const char *ep)
{
    char host[256];
    const char *port, *why, *p;
    long long pn = 0;
    int digits = 0, range = 0;

    if (strncmp(ep, "unix://", 7) == 0) {
        wh_vadd_err(c, wh_vmsg_unix_address(c, ep + 7));
        return;
    }
    /* format should be 127.0.0.1:port, [::1]:port or :port; a split error is reported and checking goes on */
    if ((why = split_host_port(ep, host, sizeof(host), &port)) != NULL)
        wh_verr(c, "address %s: %s", ep, why);
    if (*host && strcmp(host, "127.0.0.1") != 0 && strcmp(host, "0.0.0.0") != 0 && strcmp(host, "::1") != 0 &&
        strcmp(host, "::") != 0)
        wh_verr(c, "sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,"
                   "unix://filepath or unset");
    /* strconv.Atoi: optional sign, decimal digits, int64 range */
    p = port + (*port == '+' || *port == '-');
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (pn > (9223372036854775807LL - (*p - '0')) / 10)
            range = 1;
        else
            pn = pn * 10 + (*p - '0');
    }
    if (digits == 0 || *p != '\0')
        wh_verr(c, "sidecar: defaultEndpoint port (%s) is not a number: strconv.Atoi: parsing %s: invalid syntax", port,
                wh_vq(c, port));
    else if (range)
        wh_verr(c, "sidecar: defaultEndpoint port (%s) is not a number: strconv.Atoi: parsing %s: value out of range",
                port, wh_vq(c, port));
    else
        wh_vcheck_port(c, *port == '-' ? -pn : pn);
}

static void check_ingress(wh_vctx *c, const json_t *ingress)
{
    size_t n = json_array_size(ingress), i;
    wh_vset ports;

    wh_vset_init(&ports, n);

    for (i = 0; i < n; i++) {
        const json_t *l = json_array_get(ingress, i);
        const json_t *port = wh_vobj(l, "port"), *tls = wh_vobj(l, "tls"), *pool = wh_vobj(l, "connectionPool");
        const char *bind = wh_vstr(l, "bind");
        int proto;
        if (port == NULL) {
            wh_verr(c, "sidecar: port is required for ingress listeners");
            continue;
        }
        proto = wh_vproto_parse(wh_vstr(port, "protocol"));
        if (wh_vint(port, "targetPort") > 0)
            wh_verr(c, "targetPort has no impact on Sidecars");
        if (*wh_vstr(port, "name"))
            wh_vcheck_port_name(c, wh_vstr(port, "name"));
        wh_vcheck_protocol(c, wh_vstr(port, "protocol"));
        wh_vcheck_port(c, wh_vint(port, "number"));
        if (*bind)
            wh_vcheck_ip(c, bind);
        if (wh_vset_put(&ports, wh_vfmt(c, "%lld", wh_vint(port, "number")), i, NULL) == 1)
            wh_verr(c, "sidecar: ports on IP bound listeners must be unique");
        if (*wh_vstr(l, "defaultEndpoint"))
            check_default_endpoint(c, wh_vstr(l, "defaultEndpoint"));
        if (tls != NULL) {
            const char *mode = wh_venum(tls, "mode", "PASSTHROUGH");
            if (wh_varr(tls, "subjectAltNames") != NULL)
                wh_verr(c, "sidecar: subjectAltNames is not supported in ingress tls");
            if (wh_vbool(tls, "httpsRedirect"))
                wh_verr(c, "sidecar: httpsRedirect is not supported");
            if (*wh_vstr(tls, "credentialName"))
                wh_verr(c, "sidecar: credentialName is not currently supported");
            if (wh_varr(tls, "credentialNames") != NULL)
                wh_verr(c, "sidecar: credentialNames is not currently supported");
            if (wh_varr(tls, "tlsCertificates") != NULL)
                wh_verr(c, "sidecar: tls_certificates is not currently supported");
            if (strcmp(mode, "ISTIO_MUTUAL") == 0 || strcmp(mode, "AUTO_PASSTHROUGH") == 0)
                wh_verr(c, "configuration is invalid: cannot set mode to %s in sidecar ingress tls", mode);
            if (!wh_vproto_is_tls(proto))
                wh_verr(c, "server cannot have TLS settings for non HTTPS/TLS ports");
            wh_vcheck_server_tls(c, tls);
        }
        wh_vcheck_connection_pool(c, pool);
        if (pool != NULL && wh_vobj(pool, "http") != NULL && !wh_vproto_is_http(proto))
            wh_vwarn(c,
                     "sidecar: HTTP connection pool settings are configured for port %lld (%s) but its protocol is "
                     "not HTTP (%s); only TCP settings will apply",
                     wh_vint(port, "number"), wh_vq(c, wh_vstr(port, "name")), wh_vstr(port, "protocol"));
    }
    wh_vset_free(&ports);
}

/* Duplicate-host warnings of one egress listener: (namespace, host) pairs seen, namespaces seen, and
 * namespaces imported whole (host "*" in them); "." means the Sidecar's own namespace. */
static void check_egress_hosts(wh_vctx *c, const json_t *hosts)
{
    size_t n = json_array_size(hosts), i;
    wh_vset pairs, namespaces = {NULL, NULL, 0, 0}, whole = {NULL, NULL, 0, 0};
    int star_star = 0;

    wh_vset_init(&pairs, n);
    wh_vset_init(&namespaces, n);
    wh_vset_init(&whole, n);
    for (i = 0; i < n; i++) {
        const char *h = json_string_value(json_array_get(hosts, i));
        const char *slash = strchr(h, '/');
        /* "~ns/..." excludes a namespace: it selects nothing, so it duplicates nothing. */
        if (slash != NULL && h[0] != '~') {
            const char *svc = slash + 1;
            const char *ns = (slash - h == 1 && h[0] == '.') ? c->ns : wh_vfmt(c, "%.*s", (int)(slash - h), h);
            if (strcmp(svc, "*") != 0) {
                if (wh_vset_has(&pairs, wh_vfmt(c, "%s/%s", ns, svc)) || wh_vset_has(&whole, ns))
                    wh_vwarn(c, "duplicated egress host: %s", h);
            } else {
                if (wh_vset_has(&namespaces, ns))
                    wh_vwarn(c, "duplicated egress host: %s", h);
                wh_vset_put(&whole, ns, i, NULL);
                if (strcmp(ns, "*") == 0)
                    star_star = 1;
            }
            wh_vset_put(&pairs, wh_vfmt(c, "%s/%s", ns, svc), i, NULL);
            wh_vset_put(&namespaces, ns, i, NULL);
        }
        wh_vcheck_ns_host(c, h, 0);
    }
    if (star_star && namespaces.n != 1)
        wh_vwarn(c, "`*/*` host select all resources, no other hosts can be added");
    wh_vset_free(&pairs);
    wh_vset_free(&namespaces);
    wh_vset_free(&whole);
}

static void check_egress(wh_vctx *c, const json_t *egress)
{
    size_t n = json_array_size(egress), i;
    int catch_all = 0;
    wh_vset ports, binds = {NULL, NULL, 0, 0};

    wh_vset_init(&ports, n);
    wh_vset_init(&binds, n);

    for (i = 0; i < n; i++) {
        const json_t *l = json_array_get(egress, i);
        const json_t *port = wh_vobj(l, "port");
        const char *bind = wh_vstr(l, "bind");
        if (port == NULL) {
            if (!catch_all) {
                if (i == n - 1)
                    catch_all = 1;
                else
                    wh_verr(c, "sidecar: the egress listener with empty port should be the last listener in the list");
            } else {
                wh_verr(c, "sidecar: egress can have only one listener with empty port");
                continue;
            }
        } else {
            long long num = wh_vint(port, "number");
            if (wh_vint(port, "targetPort") > 0)
                wh_verr(c, "targetPort has no impact on Sidecars");
            if (*wh_vstr(port, "name"))
                wh_vcheck_port_name(c, wh_vstr(port, "name"));
            if (num == 0) {
                const char *mode = wh_venum(l, "captureMode", "DEFAULT");
                wh_vcheck_protocol(c, wh_vstr(port, "protocol"));
                if (strncmp(bind, "unix://", 7) != 0)
                    wh_verr(c, "sidecar: ports with 0 value must have a unix domain socket bind address");
                else
                    wh_vadd_err(c, wh_vmsg_unix_address(c, bind + 7));
                if (strcmp(mode, "DEFAULT") != 0 && strcmp(mode, "NONE") != 0)
                    wh_verr(c, "sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners");
                if (wh_vset_put(&binds, bind, i, NULL) == 1)
                    wh_verr(c, "sidecar: unix domain socket values for listeners must be unique");
            } else {
                wh_vcheck_protocol(c, wh_vstr(port, "protocol"));
                wh_vcheck_port(c, num);
                if (*bind)
                    wh_vcheck_ip(c, bind);
                if (wh_vset_put(&ports, wh_vfmt(c, "%lld", num), i, NULL) == 1)
                    wh_verr(c, "sidecar: ports on IP bound listeners must be unique");
            }
        }
        if (wh_varr(l, "hosts") == NULL)
            wh_verr(c, "sidecar: egress listener must contain at least one host");
        else
            check_egress_hosts(c, wh_varr(l, "hosts"));
    }
    wh_vset_free(&ports);
    wh_vset_free(&binds);
}

static void check_outbound(wh_vctx *c, const json_t *tp)
{
    const char *mode;
    const json_t *proxy;

    if (tp == NULL)
        return;
    mode = wh_venum(tp, "mode", "REGISTRY_ONLY");
    proxy = wh_vobj(tp, "egressProxy");
    /* MeshConfig's ALLOW_ANY_DYNAMIC_DNS is mode 3; the Sidecar's own enum has no name for it, so
     * it can only arrive as that number, which istiod refuses here. */
    if (json_is_integer(wh_vget(tp, "mode")) && wh_vint(tp, "mode") == 3) {
        wh_verr(c, "sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource");
        return;
    }
    if (proxy == NULL)
        return;
    if (strcmp(mode, "ALLOW_ANY") != 0) {
        wh_verr(c, "sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode");
        return;
    }
    wh_vadd_err(c, wh_vmsg_fqdn(c, wh_vstr(proxy, "host")));
    if (wh_vobj(proxy, "port") == NULL) {
        wh_verr(c, "sidecar: egress_proxy port must be non-nil");
        return;
    }
    wh_vcheck_destination(c, proxy);
}

void wh_validate_sidecar(wh_vctx *c, const json_t *spec)
{
    if (!wh_vcheck_workload_selector(c, wh_vobj(spec, "workloadSelector"), "sidecar"))
        return;
    if (wh_varr(spec, "egress") == NULL && wh_varr(spec, "ingress") == NULL &&
        wh_vget(spec, "outboundTrafficPolicy") == NULL && wh_vget(spec, "inboundConnectionPool") == NULL) {
        wh_verr(c, "sidecar: empty configuration provided");
        return;
    }
    check_ingress(c, wh_varr(spec, "ingress"));
    check_egress(c, wh_varr(spec, "egress"));
    check_outbound(c, wh_vobj(spec, "outboundTrafficPolicy"));
    wh_vcheck_connection_pool(c, wh_vobj(spec, "inboundConnectionPool"));
}
