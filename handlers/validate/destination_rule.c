/*
 * destination_rule.c - DestinationRule: host, top-level traffic policy,
 * subsets (null, duplicate names, DNS-label names, labels, per-subset policy
 * whose warnings istiod drops), exportTo with the workload-selector rules, and
 * the workload selector.
 */
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>

void wh_validate_destination_rule(wh_vctx *c, const json_t *spec)
{
    const json_t *subsets = wh_varr(spec, "subsets");
    const json_t *selector = wh_vobj(spec, "workloadSelector");
    size_t n = json_array_size(subsets), i;
    wh_vset set;

    wh_vadd_err(c, wh_vmsg_wildcard_domain(c, wh_vstr(spec, "host")));
    wh_vcheck_traffic_policy(c, wh_vobj(spec, "trafficPolicy"));

    wh_vset_init(&set, n);
    for (i = 0; i < n; i++) {
        const json_t *s = json_array_get(subsets, i);
        const char *name = wh_vstr(s, "name");
        size_t mark;
        if (wh_vset_put(&set, name, i, NULL) == 1)
            wh_verr(c, "duplicate subset names: %s", name);
        wh_vcheck_subset_name(c, name);
        wh_vcheck_labels(c, wh_vobj(s, "labels"));
        mark = wh_vwarn_mark(c);
        wh_vcheck_traffic_policy(c, wh_vobj(s, "trafficPolicy"));
        wh_vwarn_drop(c, mark);
    }
    wh_vset_free(&set);

    wh_vcheck_export_to(c, wh_varr(spec, "exportTo"), 0, selector != NULL);
    if (wh_vcheck_selector(c, selector, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}
