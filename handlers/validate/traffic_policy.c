/*
 * traffic_policy.c - DestinationRule traffic policies (top level, per
 * subset, per port): load balancer (consistent hash, maglev, locality and
 * warmup), connection pool, outlier detection, client TLS, tunnel and proxy
 * protocol.  The connection pool check is shared with Sidecar.
 */
#include "wh_alloc.h"
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>

static void check_outlier(wh_vctx *c, const json_t *o)
{
    if (o == NULL)
        return;
    wh_vcheck_duration(c, wh_vget(o, "baseEjectionTime"));
    if (wh_vint(o, "consecutiveErrors") != 0)
        wh_vwarn(c, "outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or "
                    "consecutive5xxErrors instead");
    if (!wh_vbool(o, "splitExternalLocalOriginErrors") && wh_vint(o, "consecutiveLocalOriginFailures") > 0)
        wh_verr(c, "outlier detection consecutive local origin failures is specified, but split external local "
                   "origin errors is set to false");
    wh_vcheck_duration(c, wh_vget(o, "interval"));
    wh_vcheck_percent(c, wh_vint(o, "maxEjectionPercent"));
    wh_vcheck_percent(c, wh_vint(o, "minHealthPercent"));
}

void wh_vcheck_connection_pool(wh_vctx *c, const json_t *pool)
{
    const json_t *http = wh_vobj(pool, "http"), *tcp = wh_vobj(pool, "tcp");

    if (pool == NULL)
        return;
    if (http == NULL && tcp == NULL) {
        wh_verr(c, "connection pool must have at least one field");
        return;
    }
    if (http != NULL) {
        const json_t *ka = wh_vobj(http, "http2KeepAlive");
        if (wh_vint(http, "http1MaxPendingRequests") < 0)
            wh_verr(c, "http1 max pending requests must be non-negative");
        if (wh_vint(http, "http2MaxRequests") < 0)
            wh_verr(c, "http2 max requests must be non-negative");
        if (wh_vint(http, "maxRequestsPerConnection") < 0)
            wh_verr(c, "max requests per connection must be non-negative");
        if (wh_vint(http, "maxRetries") < 0)
            wh_verr(c, "max retries must be non-negative");
        if (wh_vint(http, "maxConcurrentStreams") < 0)
            wh_verr(c, "max concurrent streams must be non-negative");
        wh_vcheck_duration(c, wh_vget(http, "idleTimeout"));
        if (strcmp(wh_venum(http, "h2UpgradePolicy", "DEFAULT"), "UPGRADE") == 0 && wh_vbool(http, "useClientProtocol"))
            wh_verr(c, "use client protocol must not be true when H2UpgradePolicy is UPGRADE");
        if (ka != NULL) {
            if (wh_vget(ka, "interval") == NULL)
                wh_verr(c, "http2 keepalive interval is required");
            else
                wh_vcheck_duration(c, wh_vget(ka, "interval"));
            if (wh_vget(ka, "timeout") == NULL)
                wh_verr(c, "http2 keepalive timeout is required");
            else
                wh_vcheck_duration(c, wh_vget(ka, "timeout"));
        }
    }
    if (tcp != NULL) {
        const json_t *idle = wh_vget(tcp, "idleTimeout");
        const json_t *ka = wh_vobj(tcp, "tcpKeepalive");
        int64_t ns;
        if (wh_vint(tcp, "maxConnections") < 0)
            wh_verr(c, "max connections must be non-negative");
        wh_vcheck_duration(c, wh_vget(tcp, "connectTimeout"));
        wh_vcheck_duration(c, wh_vget(tcp, "maxConnectionDuration"));
        /* a timeout under a millisecond (0s included) disables it and is not checked */
        if (idle != NULL &&
            !(wh_vparse_duration(json_string_value(idle), &ns, NULL) == 0 && ns > -1000000 && ns < 1000000))
            wh_vcheck_duration(c, idle);
        if (ka != NULL) {
            wh_vcheck_duration(c, wh_vget(ka, "time"));
            wh_vcheck_duration(c, wh_vget(ka, "interval"));
        }
    }
}

static int is_prime(unsigned long long n)
{
    static const unsigned long long bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    unsigned long long d;
    int r = 0;
    size_t i;

    if (n == 0)
        return 0;
    if (n == 1)
        return 1; /* Envoy's (and so istiod's) isPrime counts 1 as prime */
    for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        if (n % bases[i] == 0)
            return n == bases[i];
    }
    d = n - 1;
    while ((d & 1) == 0) {
        d >>= 1;
        r++;
    }
    for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        unsigned __int128 x = 1, b = bases[i] % n;
        unsigned long long e = d;
        int j, composite = 1;
        while (e) {
            if (e & 1)
                x = x * b % n;
            b = b * b % n;
            e >>= 1;
        }
        if (x == 1 || x == n - 1)
            continue;
        for (j = 1; j < r; j++) {
            x = x * x % n;
            if (x == n - 1) {
                composite = 0;
                break;
            }
        }
        if (composite)
            return 0;
    }
    return 1;
}

/* istiod's validateLocalities: at most one trailing '*', no empty segments, and no locality overlapping an
 * earlier one (a region, zone or subzone already covered, or "*" before anything).  Keys in `seen`:
 * "R|region", "Z|region|zone" ("*" zone = the whole region), "S|region|zone|subzone" ("*" = whole zone). */
static int check_localities(wh_vctx *c, const char **items, size_t n)
{
    wh_vset seen;
    size_t i;
    int any_region_star = 0, ok = 1;

    wh_vset_init(&seen, 3 * n);
    for (i = 0; i < n && ok; i++) {
        const char *l = items[i], *star = strchr(l, '*');
        const char *p[3] = {"*", "*", "*"};
        int pl[3] = {1, 1, 1}, level, overlap = 0;
        const char *s = l;

        if (star != NULL && (strchr(star + 1, '*') != NULL || star[1] != '\0')) {
            wh_verr(c, "locality %s wildcard '*' number can not exceed 1 and must be in the end", l);
            ok = 0;
            break;
        }
        if (any_region_star) {
            wh_verr(c, "locality %s overlap with previous specified ones", l);
            ok = 0;
            break;
        }
        for (level = 0; level < 3; level++) {
            const char *slash = level < 2 ? strchr(s, '/') : NULL;
            p[level] = s;
            pl[level] = (int)(slash ? (size_t)(slash - s) : strlen(s));
            if (pl[level] == 0) {
                wh_verr(c, "locality %s must not contain empty region/zone/subzone info", l);
                ok = 0;
                break;
            }
            if (slash == NULL)
                break;
            s = slash + 1;
        }
        if (!ok)
            break;
        if (level == 0 && pl[0] == 1 && p[0][0] == '*')
            any_region_star = 1;
        if (wh_vset_has(&seen, wh_vfmt(c, "R|%.*s", pl[0], p[0]))) {
            if (level == 0 || wh_vset_has(&seen, wh_vfmt(c, "Z|%.*s|*", pl[0], p[0])))
                overlap = 1;
            else if (wh_vset_has(&seen, wh_vfmt(c, "Z|%.*s|%.*s", pl[0], p[0], pl[1], p[1])))
                overlap = level == 1 || wh_vset_has(&seen, wh_vfmt(c, "S|%.*s|%.*s|*", pl[0], p[0], pl[1], p[1])) ||
                          wh_vset_has(&seen, wh_vfmt(c, "S|%.*s|%.*s|%.*s", pl[0], p[0], pl[1], p[1], pl[2], p[2]));
        }
        if (overlap) {
            wh_verr(c, "locality %s overlap with previous specified ones", l);
            ok = 0;
            break;
        }
        wh_vset_put(&seen, wh_vfmt(c, "R|%.*s", pl[0], p[0]), i, NULL);
        wh_vset_put(&seen, wh_vfmt(c, "Z|%.*s|%.*s", pl[0], p[0], level >= 1 ? pl[1] : 1, level >= 1 ? p[1] : "*"), i,
                    NULL);
        wh_vset_put(&seen,
                    wh_vfmt(c, "S|%.*s|%.*s|%.*s", pl[0], p[0], level >= 1 ? pl[1] : 1, level >= 1 ? p[1] : "*",
                            level >= 2 ? pl[2] : 1, level >= 2 ? p[2] : "*"),
                    i, NULL);
    }
    wh_vset_free(&seen);
    return ok;
}

/* The topology labels of failoverPriority that locality failover and zone-aware load balancing treat apart:
 * topology.kubernetes.io/region, .../zone and topology.istio.io/subzone. */
static int is_topology_label(const char *l)
{
    return strcmp(l, "topology.kubernetes.io/region") == 0 || strcmp(l, "topology.kubernetes.io/zone") == 0 ||
           strcmp(l, "topology.istio.io/subzone") == 0;
}

static void check_locality_lb(wh_vctx *c, const json_t *lb, const json_t *outlier)
{
    const json_t *dist = wh_varr(lb, "distribute"), *fo = wh_varr(lb, "failover");
    const json_t *prio = wh_varr(lb, "failoverPriority");
    const char **srcs = NULL;
    size_t i, nsrc = 0;

    if (lb == NULL)
        return;
    if (dist != NULL && fo != NULL) {
        wh_verr(c, "can not simultaneously specify 'distribute' and 'failover'");
        return;
    }
    if (fo != NULL && prio != NULL) {
        for (i = 0; i < json_array_size(prio); i++) {
            const char *l = json_string_value(json_array_get(prio, i));
            if (is_topology_label(l)) {
                wh_verr(c, "can not simultaneously set 'failover' and topology label '%s' in 'failover_priority'", l);
                return;
            }
        }
    }
    if (dist != NULL)
        srcs = wh_calloc(json_array_size(dist), sizeof(*srcs));
    for (i = 0; i < json_array_size(dist); i++) {
        const json_t *d = json_array_get(dist, i);
        const json_t *to = wh_vobj(d, "to");
        const char **dests = NULL;
        size_t nd = 0;
        unsigned int total = 0;
        const char *k;
        json_t *w;

        srcs[nsrc++] = wh_vstr(d, "from");
        if (to != NULL)
            dests = wh_calloc(json_object_size(to), sizeof(*dests));
        json_object_foreach((json_t *)to, k, w)
        {
            long long weight = json_integer_value(w);
            dests[nd++] = k;
            if (weight <= 0 || weight > 100) {
                wh_verr(c, "locality weight must be in range [1, 100]");
                free(dests);
                goto out;
            }
            total += (unsigned int)weight;
        }
        if (total != 100) {
            wh_verr(c, "total locality weight %u != 100", total);
            free(dests);
            goto out;
        }
        check_localities(c, dests, nd);
        free(dests);
    }
    check_localities(c, srcs, nsrc);
    if ((fo != NULL || prio != NULL) && outlier == NULL)
        wh_vwarn(c, "outlier detection policy must be provided for failover");
    for (i = 0; i < json_array_size(fo); i++) {
        const json_t *f = json_array_get(fo, i);
        const char *from = wh_vstr(f, "from"), *to = wh_vstr(f, "to");
        if (strcmp(from, to) == 0)
            wh_verr(c, "locality lb failover settings must specify different regions");
        if (strchr(from, '/') != NULL || strchr(to, '/') != NULL)
            wh_verr(c, "locality lb failover only specify region");
        if (strchr(from, '*') != NULL || strchr(to, '*') != NULL)
            wh_verr(c, "locality lb failover region should not contain '*' wildcard");
    }
out:
    free(srcs);
}

/* istiod's agent.ValidateZoneAwareLbSetting: failover orders regions only (Envoy handles zones and
 * subzones), so failoverPriority must not name a topology label; every problem is reported. */
static void check_zone_aware_lb(wh_vctx *c, const json_t *lb, const json_t *outlier)
{
    const json_t *fo = wh_varr(lb, "failover"), *prio = wh_varr(lb, "failoverPriority");
    size_t i;

    if (lb == NULL)
        return;
    for (i = 0; i < json_array_size(prio); i++) {
        const char *l = json_string_value(json_array_get(prio, i));
        if (is_topology_label(l))
            wh_verr(c,
                    "'failover_priority' for zone aware lb must not use topology label '%s'; region- and zone-level "
                    "routing are handled automatically",
                    l);
    }
    if ((fo != NULL || prio != NULL) && outlier == NULL)
        wh_vwarn(c, "outlier detection policy must be provided for failover");
    for (i = 0; i < json_array_size(fo); i++) {
        const json_t *f = json_array_get(fo, i);
        const char *from = wh_vstr(f, "from"), *to = wh_vstr(f, "to");
        if (strcmp(from, to) == 0)
            wh_verr(c, "zone aware lb failover settings must specify different regions");
        if (strchr(from, '/') != NULL || strchr(to, '/') != NULL)
            wh_verr(c, "zone aware lb failover only specifies region; zone and subzone failover are handled "
                       "automatically");
        if (strchr(from, '*') != NULL || strchr(to, '*') != NULL)
            wh_verr(c, "zone aware lb failover region should not contain '*' wildcard");
    }
}

static void check_load_balancer(wh_vctx *c, const json_t *lb, const json_t *outlier)
{
    const json_t *ch = wh_vobj(lb, "consistentHash"), *warmup = wh_vobj(lb, "warmup");

    if (lb == NULL)
        return;
    if (ch != NULL) {
        const json_t *cookie = wh_vobj(ch, "httpCookie");
        const json_t *maglev = wh_vobj(ch, "maglev");
        if (cookie != NULL) {
            const json_t *attrs = wh_varr(cookie, "attributes");
            wh_vset names;
            size_t i;
            if (*wh_vstr(cookie, "name") == '\0')
                wh_verr(c, "name required for HttpCookie");
            wh_vset_init(&names, json_array_size(attrs));
            for (i = 0; i < json_array_size(attrs); i++) {
                const char *an = wh_vstr(json_array_get(attrs, i), "name");
                if (*an == '\0') {
                    wh_verr(c, "cookie attribute name cannot be empty");
                    continue;
                }
                if (wh_vset_put(&names, an, i, NULL) == 1)
                    wh_verr(c, "duplicate cookie attribute name: %s", an);
            }
            wh_vset_free(&names);
        }
        if (wh_vint(ch, "minimumRingSize") != 0) {
            wh_vwarn(c, "consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash "
                        "configuration instead");
            if (wh_vget(ch, "ringHash") != NULL || maglev != NULL)
                wh_verr(c, "only one of MinimumRingSize or Maglev/Ringhash can be specified");
        }
        if (maglev != NULL) {
            unsigned long long ts = (unsigned long long)wh_vint(maglev, "tableSize");
            if (ts == 0)
                wh_verr(c, "tableSize must be set for maglev");
            if (ts >= 5000011ULL)
                wh_verr(c, "tableSize must be less than 5000011 for maglev");
            if (!is_prime(ts))
                wh_verr(c, "tableSize must be a prime number for maglev");
        }
    }
    if (wh_vget(lb, "localityLbSetting") != NULL && wh_vget(lb, "zoneAwareLbSetting") != NULL)
        wh_verr(c, "only one of localityLbSetting and zoneAwareLbSetting can be set");
    check_locality_lb(c, wh_vobj(lb, "localityLbSetting"), outlier);
    check_zone_aware_lb(c, wh_vobj(lb, "zoneAwareLbSetting"), outlier);
    wh_vcheck_duration(c, wh_vget(lb, "warmupDurationSecs"));
    if (warmup != NULL) {
        if (wh_vget(warmup, "duration") == NULL)
            wh_verr(c, "duration is required");
        else
            wh_vcheck_duration(c, wh_vget(warmup, "duration"));
        if (wh_vnum(warmup, "minimumPercent") > 100)
            wh_verr(c, "minimumPercent value should be less than or equal to 100");
        if (wh_vget(warmup, "aggression") != NULL && wh_vnum(warmup, "aggression") <= 0)
            wh_verr(c, "aggression should be greater than 0");
    }
}

static void check_client_tls(wh_vctx *c, const json_t *tls)
{
    const char *mode, *cred;
    int simple, mutual;

    if (tls == NULL)
        return;
    mode = wh_venum(tls, "mode", "DISABLE");
    cred = wh_vstr(tls, "credentialName");
    simple = strcmp(mode, "SIMPLE") == 0;
    mutual = strcmp(mode, "MUTUAL") == 0;
    if (strncmp(cred, "configmap://", 12) == 0) {
        /* configmap://<namespace>/<name>: the namespace is required and must be the DestinationRule's own */
        const char *rest = cred + 12, *slash = strchr(rest, '/');
        const char *why = slash == NULL                         ? "Expected namespace and name"
                          : slash == rest                       ? "Expected namespace"
                          : slash[1] == '\0' || slash[1] == '/' ? "Expected name"
                                                                : NULL;
        if (why != NULL)
            wh_verr(c, "invalid configmap:// credentialName: invalid resource name %s. %s", wh_vq(c, cred), why);
        else if (*c->ns == '\0' || strlen(c->ns) != (size_t)(slash - rest) || strncmp(rest, c->ns, strlen(c->ns)) != 0)
            wh_verr(c, "invalid configmap:// credentialName: namespace must match the configuration namespace %s",
                    wh_vq(c, c->ns));
    }
    if (wh_vbool(tls, "insecureSkipVerify")) {
        if (simple && (*wh_vstr(tls, "caCertificates") || *cred || wh_varr(tls, "subjectAltNames")))
            wh_verr(c, "cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is "
                       "set true");
        if (mutual && (*wh_vstr(tls, "caCertificates") || wh_varr(tls, "subjectAltNames")))
            wh_verr(c, "cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true");
    }
    if ((simple || mutual) && *cred) {
        if (*wh_vstr(tls, "clientCertificate") || *wh_vstr(tls, "caCertificates") || *wh_vstr(tls, "privateKey") ||
            *wh_vstr(tls, "caCrl"))
            wh_verr(c, "cannot specify client certificates or CA certificate or CA CRL If credentialName is set");
        return;
    }
    if (mutual) {
        if (*wh_vstr(tls, "clientCertificate") == '\0')
            wh_verr(c, "client certificate required for mutual tls");
        if (*wh_vstr(tls, "privateKey") == '\0')
            wh_verr(c, "private key required for mutual tls");
    }
}

static void check_tunnel(wh_vctx *c, const json_t *t)
{
    const char *proto = wh_vstr(t, "protocol"), *host = wh_vstr(t, "targetHost");
    long long port = wh_vint(t, "targetPort");
    char *fq;

    if (t == NULL)
        return;
    if (*proto && strcmp(proto, "CONNECT") != 0 && strcmp(proto, "POST") != 0)
        wh_verr(c, "tunnel protocol must be \"CONNECT\" or \"POST\"");
    fq = wh_vmsg_fqdn(c, host);
    if (fq != NULL && !wh_vis_ip(host))
        wh_verr(c, "tunnel target host must be valid FQDN or IP address: %s; %s is not a valid IP", fq, host);
    free(fq);
    if (port < 1 || port > 65535)
        wh_verr(c, "tunnel target port is invalid: port number %lld must be in the range 1..65535", port);
}

static void check_port_policies(wh_vctx *c, const json_t *pls)
{
    size_t i;

    for (i = 0; i < json_array_size(pls); i++) {
        const json_t *p = json_array_get(pls, i);
        if (wh_vget(p, "port") == NULL)
            wh_verr(c, "portTrafficPolicy must have valid port");
        if (wh_vget(p, "outlierDetection") == NULL && wh_vget(p, "connectionPool") == NULL &&
            wh_vget(p, "loadBalancer") == NULL && wh_vget(p, "tls") == NULL) {
            wh_verr(c, "port traffic policy must have at least one field");
        } else {
            check_outlier(c, wh_vobj(p, "outlierDetection"));
            wh_vcheck_connection_pool(c, wh_vobj(p, "connectionPool"));
            check_load_balancer(c, wh_vobj(p, "loadBalancer"), wh_vobj(p, "outlierDetection"));
            check_client_tls(c, wh_vobj(p, "tls"));
        }
    }
}

void wh_vcheck_traffic_policy(wh_vctx *c, const json_t *tp)
{
    size_t mark;

    if (tp == NULL)
        return;
    if (json_object_size(tp) == 0) {
        wh_verr(c, "traffic policy must have at least one field");
        return;
    }
    if (wh_vget(tp, "tunnel") != NULL && wh_vget(tp, "proxyProtocol") != NULL) {
        wh_verr(c, "tunnel and proxyProtocol must not be set together");
        return;
    }
    check_outlier(c, wh_vobj(tp, "outlierDetection"));
    wh_vcheck_connection_pool(c, wh_vobj(tp, "connectionPool"));
    check_load_balancer(c, wh_vobj(tp, "loadBalancer"), wh_vobj(tp, "outlierDetection"));
    check_client_tls(c, wh_vobj(tp, "tls"));
    /* istiod folds port-level results in as plain errors: their warnings are lost. */
    mark = wh_vwarn_mark(c);
    check_port_policies(c, wh_varr(tp, "portLevelSettings"));
    wh_vwarn_drop(c, mark);
    check_tunnel(c, wh_vobj(tp, "tunnel"));
    if (wh_vget(tp, "proxyProtocol") != NULL) {
        const json_t *v = wh_vget(wh_vobj(tp, "proxyProtocol"), "version");
        if (json_is_integer(v))
            wh_verr(c, "proxy protocol version is invalid: %lld", (long long)json_integer_value(v));
    }
}
