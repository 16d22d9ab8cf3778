/*
 * service_entry.c - ServiceEntry (workload selector, hosts, addresses,
 * ports, resolution modes and their endpoint rules, exportTo with "~") and
 * the WorkloadEntry rules its STATIC endpoints share with WorkloadEntry /
 * WorkloadGroup objects.
 */
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void wh_vcheck_workload_entry(wh_vctx *c, const json_t *we, const wh_vset *port_names, size_t nports, int allow_fqdn)
{
    const char *addr = wh_vstr(we, "address");
    int unix_ep = 0;
    const char *k;
    json_t *v;

    if (*addr == '\0') {
        if (*wh_vstr(we, "network") == '\0') {
            wh_verr(c, "address is required");
            return;
        }
        wh_vwarn(c, "address is unset with network %s", wh_vq(c, wh_vstr(we, "network")));
    }
    if (strncmp(addr, "unix://", 7) == 0) {
        unix_ep = 1;
        wh_vadd_err(c, wh_vmsg_unix_address(c, addr + 7));
        if (wh_vlen(we, "ports") != 0)
            wh_verr(c, "unix endpoint %s must not include ports", addr);
    } else if (*addr && !wh_vis_ip(addr)) {
        if (!allow_fqdn) {
            wh_verr(c, "endpoint address %s is not a valid IP address", wh_vq(c, addr));
        } else {
            char *e = wh_vmsg_fqdn(c, addr);
            if (e != NULL)
                wh_verr(c, "endpoint address %s is not a valid FQDN or an IP address", wh_vq(c, addr));
            free(e);
        }
    }
    json_object_foreach((json_t *)wh_vobj(we, "ports"), k, v)
    {
        if (port_names != NULL && !wh_vset_has(port_names, k))
            wh_verr(c, "endpoint port %lld is not defined by the service entry", (long long)json_integer_value(v));
        wh_vcheck_port_name(c, k);
        wh_vcheck_port(c, json_integer_value(v));
    }
    wh_vcheck_labels(c, wh_vobj(we, "labels"));
    if (unix_ep && port_names != NULL && nports != 1)
        wh_verr(c, "exactly 1 service port required for unix endpoints");
}

void wh_validate_service_entry(wh_vctx *c, const json_t *spec)
{
    const json_t *selector = wh_vobj(spec, "workloadSelector");
    const json_t *hosts = wh_varr(spec, "hosts"), *addrs = wh_varr(spec, "addresses");
    const json_t *ports = wh_varr(spec, "ports"), *eps = wh_varr(spec, "endpoints");
    const char *res = wh_venum(spec, "resolution", "NONE");
    const char *label = wh_vstr(c->labels, "networking.istio.io/enable-autoallocate-ip");
    int dynamic = strcmp(res, "DYNAMIC_DNS") == 0, cidr = 0, autoalloc;
    size_t i;
    wh_vset names = {NULL, NULL, 0, 0}, numbers = {NULL, NULL, 0, 0};

    if (!wh_vcheck_workload_selector(c, selector, "service entry"))
        return;
    if (selector != NULL && eps != NULL)
        wh_verr(c, "only one of WorkloadSelector or Endpoints is allowed in Service Entry");
    if (hosts == NULL)
        wh_verr(c, "service entry must have at least one host");
    for (i = 0; i < json_array_size(hosts); i++) {
        const char *h = json_string_value(json_array_get(hosts, i));
        if (strcmp(h, "*") == 0) {
            wh_verr(c, "invalid host %s", h);
            continue;
        }
        wh_vadd_err(c, wh_vmsg_wildcard_domain(c, h));
        if (dynamic)
            wh_vadd_err(c, wh_vmsg_partial_wildcard(c, h));
        else
            wh_vadd_warn(c, wh_vmsg_partial_wildcard(c, h));
    }
    for (i = 0; i < json_array_size(addrs); i++) {
        const char *a = json_string_value(json_array_get(addrs, i));
        cidr |= strchr(a, '/') != NULL;
        wh_vadd_err(c, wh_vmsg_ip_subnet(c, a));
    }
    if (cidr && strcmp(res, "NONE") != 0 && strcmp(res, "STATIC") != 0)
        wh_verr(c, "CIDR addresses are allowed only for NONE/STATIC resolution types");

    autoalloc = strcmp(res, "NONE") != 0 && strcmp(label, "false") != 0;
    wh_vset_init(&names, json_array_size(ports));
    wh_vset_init(&numbers, json_array_size(ports));
    for (i = 0; i < json_array_size(ports); i++) {
        const json_t *p = json_array_get(ports, i);
        const char *name = wh_vstr(p, "name"), *proto = wh_vstr(p, "protocol");
        long long num = wh_vint(p, "number");
        if (wh_vset_put(&names, name, i, NULL) == 1)
            wh_verr(c, "service entry port name %s already defined", wh_vq(c, name));
        if (wh_vset_put(&numbers, wh_vfmt(c, "%lld", num), i, NULL) == 1)
            wh_verr(c, "service entry port %lld already defined", num);
        if (wh_vint(p, "targetPort") != 0)
            wh_vcheck_port(c, wh_vint(p, "targetPort"));
        if (addrs == NULL && !autoalloc && (*proto == '\0' || strcmp(proto, "TCP") == 0))
            wh_vwarn(c, "addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is "
                        "not enabled");
        wh_vcheck_port_name(c, name);
        wh_vcheck_protocol(c, proto);
        wh_vcheck_port(c, num);
    }

    if (strcmp(res, "NONE") == 0) {
        if (eps != NULL)
            wh_verr(c, "no endpoints should be provided for resolution type none");
        if (selector != NULL)
            wh_vwarn(c, "workloadSelector should not be set when resolution mode is NONE");
    } else if (strcmp(res, "STATIC") == 0) {
        for (i = 0; i < json_array_size(eps); i++)
            wh_vcheck_workload_entry(c, json_array_get(eps, i), &names, json_array_size(ports), 0);
    } else if (strcmp(res, "DNS") == 0 || strcmp(res, "DNS_ROUND_ROBIN") == 0) {
        if (eps == NULL) {
            for (i = 0; i < json_array_size(hosts); i++) {
                char *e = wh_vmsg_fqdn(c, json_string_value(json_array_get(hosts, i)));
                if (e != NULL)
                    wh_verr(c,
                            "hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for "
                            "resolution mode %s",
                            res);
                free(e);
            }
        }
        if (strcmp(res, "DNS_ROUND_ROBIN") == 0 && json_array_size(eps) > 1)
            wh_verr(c, "there must only be 0 or 1 endpoint for resolution mode %s", res);
        for (i = 0; i < json_array_size(eps); i++) {
            const json_t *ep = json_array_get(eps, i);
            const char *addr = wh_vstr(ep, "address");
            const char *k;
            json_t *v;
            if (!wh_vis_ip(addr)) {
                char *e = wh_vmsg_fqdn(c, addr);
                if (e != NULL)
                    wh_verr(c, "endpoint address %s is not a valid FQDN or an IP address", wh_vq(c, addr));
                free(e);
            }
            wh_vcheck_labels(c, wh_vobj(ep, "labels"));
            json_object_foreach((json_t *)wh_vobj(ep, "ports"), k, v)
            {
                if (!wh_vset_has(&names, k))
                    wh_verr(c, "endpoint port %lld is not defined by the service entry",
                            (long long)json_integer_value(v));
                wh_vcheck_port_name(c, k);
                wh_vcheck_port(c, json_integer_value(v));
            }
        }
        if (addrs != NULL) {
            for (i = 0; i < json_array_size(ports); i++) {
                if (wh_vproto_is_tcp(wh_vproto_parse(wh_vstr(json_array_get(ports, i), "protocol")))) {
                    if (json_array_size(hosts) > 1)
                        wh_vwarn(c, "service entry can not have more than one host specified simultaneously with "
                                    "address and tcp port");
                    break;
                }
            }
        }
    } else if (dynamic) {
        /* istiod's ValidateServiceEntry: one error per offending host and port */
        const char *loc = wh_venum(spec, "location", "MESH_EXTERNAL");
        const char *waypoint = wh_vstr(c->labels, "istio.io/use-waypoint");
        if (hosts == NULL)
            wh_verr(c, "at least one wildcard host must be provided for resolution type DYNAMIC_DNS");
        for (i = 0; i < json_array_size(hosts); i++)
            if (json_string_value(json_array_get(hosts, i))[0] != '*')
                wh_verr(c, "host must be wildcarded for resolution mode DYNAMIC_DNS");
        if (addrs != NULL)
            wh_verr(c, "addresses cannot be set for resolution type DYNAMIC_DNS. HTTP route domains will only be "
                       "generatedfrom the hosts field values");
        if (eps != NULL)
            wh_verr(c, "endpoints cannot be set for resolution type DYNAMIC_DNS. Destination IP address determined "
                       "from hostsfield values");
        for (i = 0; i < json_array_size(ports); i++) {
            int p = wh_vproto_parse(wh_vstr(json_array_get(ports, i), "protocol"));
            if (p != WH_PROTO_HTTP && p != WH_PROTO_TLS && p != WH_PROTO_GRPC && p != WH_PROTO_HTTP2)
                wh_verr(c, "only HTTP, TLS, GRPC, and HTTP2 protocols are supported for resolution type DYNAMIC_DNS");
        }
        if (strcmp(loc, "MESH_INTERNAL") == 0 && *waypoint != '\0' && strcasecmp(waypoint, "none") != 0)
            wh_verr(c, "location MESH_INTERNAL with resolution type DYNAMIC_DNS is not supported when using waypoints");
    } else {
        wh_verr(c, "unsupported resolution type %s", res);
    }

    if (strcmp(res, "NONE") != 0 && json_array_size(hosts) > 1) {
        for (i = 0; i < json_array_size(ports); i++) {
            int p = wh_vproto_parse(wh_vstr(json_array_get(ports, i), "protocol"));
            if (!wh_vproto_is_http(p) && !wh_vproto_is_tls(p)) {
                wh_verr(c, "multiple hosts provided with non-HTTP, non-TLS ports");
                break;
            }
        }
    }
    wh_vcheck_export_to(c, wh_varr(spec, "exportTo"), 1, 0);
    wh_vset_free(&names);
    wh_vset_free(&numbers);
}
