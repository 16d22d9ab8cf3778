/*
 * common.c - rules shared by several kinds: exportTo (VirtualService,
 * DestinationRule, ServiceEntry), workload selectors, route destinations,
 * subset names, and the selector/targetRef(s) block of the policy kinds
 * (security.c, telemetry.c, extensions.c).
 */
#include "wh_alloc.h"
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>

void wh_vcheck_subset_name(wh_vctx *c, const char *name)
{
    if (*name == '\0')
        wh_verr(c, "subset name cannot be empty");
    else if (!wh_vis_dns1123_label(name))
        wh_verr(c, "subset name is invalid: %s", name);
}

void wh_vcheck_destination(wh_vctx *c, const json_t *dest)
{
    const char *host = wh_vstr(dest, "host");
    const json_t *port = wh_vobj(dest, "port");

    if (dest == NULL)
        return;
    if (strcmp(host, "*") == 0)
        wh_verr(c, "invalid destination host %s", host);
    else
        wh_vadd_err(c, wh_vmsg_wildcard_domain(c, host));
    if (*wh_vstr(dest, "subset") != '\0')
        wh_vcheck_subset_name(c, wh_vstr(dest, "subset"));
    if (port != NULL)
        wh_vcheck_port(c, wh_vint(port, "number"));
}

int wh_vcheck_selector(wh_vctx *c, const json_t *selector, const char *labels_key)
{
    const json_t *labels = wh_vobj(selector, labels_key);
    const char *k;
    json_t *v;

    if (selector == NULL)
        return 0;
    json_object_foreach((json_t *)labels, k, v)
    {
        const char *val = json_string_value(v);
        const char *pair = wh_vfmt(c, "%s=%s", k, val ? val : "");
        if (*k == '\0')
            wh_verr(c, "empty key is not supported in selector: %s", wh_vq(c, pair));
        if (strchr(k, '*') != NULL || (val && strchr(val, '*') != NULL))
            wh_verr(c, "wildcard is not supported in selector: %s", wh_vq(c, pair));
    }
    return labels == NULL || json_object_size(labels) == 0;
}

int wh_vcheck_workload_selector(wh_vctx *c, const json_t *selector, const char *what)
{
    size_t mark = wh_verr_mark(c);
    int empty = wh_vcheck_selector(c, selector, "labels");

    if (wh_verr_mark(c) != mark)
        return 0;
    if (empty)
        wh_vwarn(c, "%s: workload selector specified without labels, will be applied to all services in namespace",
                 what);
    return 1;
}

/* A small string set for the exportTo rules (lists are short; linear is fine). */
typedef struct strset {
    const char **v;
    size_t n;
} strset;

static int set_has(const strset *s, const char *k)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], k) == 0)
            return 1;
    return 0;
}

void wh_vcheck_export_to(wh_vctx *c, const json_t *export_to, int is_service_entry, int dr_with_selector)
{
    size_t n = json_array_size(export_to), i;
    strset set = {NULL, 0};

    if (n == 0)
        return;
    set.v = wh_calloc(n, sizeof(*set.v));
    for (i = 0; i < n; i++) {
        const char *e = json_string_value(json_array_get(export_to, i));
        const char *key = e;
        if (e == NULL)
            continue;
        if (strcmp(e, ".") == 0)
            key = c->ns;
        if (set_has(&set, key)) {
            if (key != e)
                wh_verr(c, "duplicate entries in exportTo: . and current namespace %s", c->ns);
            else
                wh_verr(c, "duplicate entries in exportTo for entry %s", e);
        } else if (is_service_entry && strcmp(e, "~") == 0) {
            set.v[set.n++] = key;
        } else if (strcmp(key, ".") == 0 || strcmp(key, "*") == 0) {
            set.v[set.n++] = key;
        } else if (strcmp(key, "~") == 0) {
            wh_verr(c, "exportTo ~ (none) is not allowed for Istio configuration objects");
        } else if (!wh_vis_dns1123_label(key)) {
            wh_verr(c, "only .,*, or a valid DNS 1123 label is allowed as exportTo entry");
        } else {
            set.v[set.n++] = key;
        }
    }
    if (dr_with_selector && set.n > 0) {
        if (set_has(&set, c->ns)) {
            if (set.n > 1)
                wh_verr(c, "destination rule with workload selector cannot have multiple entries in exportTo");
        } else {
            wh_verr(c, "destination rule with workload selector cannot have exportTo beyond current namespace");
        }
    }
    if (set_has(&set, "*") && n > 1)
        wh_verr(c, "cannot have both public (*) and non-public exportTo values for a resource");
    if (set_has(&set, "~") && n > 1)
        wh_verr(c, "cannot export service entry to no one (~) and someone");
    free(set.v);
}

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
void wh_vcheck_policy_target(wh_vctx *c, const json_t *spec, const char *selector_key)
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
