/*
 * destination_rule.c - DestinationRule: host, top-level traffic policy,
 * subsets (null, duplicate names, DNS-label names, labels, per-subset policy
 * whose warnings istiod drops), exportTo with the workload-selector rules, and
 * the workload selector.
 */
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>

/* Subset names seen so far: an open-addressing hash set, so 10k subsets stay linear. */
typedef struct nameset {
    const char **slots;
    size_t cap;
} nameset;

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* 1 when `s` was already present, 0 when inserted. */
static int nameset_insert(nameset *set, const char *s)
{
    size_t i = hash_str(s) & (set->cap - 1);

    while (set->slots[i] != NULL) {
        if (strcmp(set->slots[i], s) == 0)
            return 1;
        i = (i + 1) & (set->cap - 1);
    }
    set->slots[i] = s;
    return 0;
}

void wh_validate_destination_rule(wh_vctx *c, const json_t *spec)
{
    const json_t *subsets = wh_varr(spec, "subsets");
    const json_t *selector = wh_vobj(spec, "workloadSelector");
    size_t n = json_array_size(subsets), i;
    nameset set = {NULL, 16};

    wh_vadd_err(c, wh_vmsg_wildcard_domain(c, wh_vstr(spec, "host")));
    wh_vcheck_traffic_policy(c, wh_vobj(spec, "trafficPolicy"));

    while (set.cap < 2 * n)
        set.cap <<= 1;
    if ((set.slots = calloc(set.cap, sizeof(*set.slots))) == NULL) {
        c->nomem = 1;
        return;
    }
    for (i = 0; i < n; i++) {
        const json_t *s = json_array_get(subsets, i);
        const char *name = wh_vstr(s, "name");
        size_t mark;
        if (nameset_insert(&set, name))
            wh_verr(c, "duplicate subset names: %s", name);
        wh_vcheck_subset_name(c, name);
        wh_vcheck_labels(c, wh_vobj(s, "labels"));
        mark = wh_vwarn_mark(c);
        wh_vcheck_traffic_policy(c, wh_vobj(s, "trafficPolicy"));
        wh_vwarn_drop(c, mark);
    }
    free(set.slots);

    wh_vcheck_export_to(c, wh_varr(spec, "exportTo"), 0, selector != NULL);
    if (wh_vcheck_selector(c, selector, "matchLabels"))
        wh_vwarn(c, "workload selector specified without labels");
}
