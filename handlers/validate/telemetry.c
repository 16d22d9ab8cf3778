/*
 * telemetry.c - telemetry.istio.io's Telemetry: selector or target
 * references, providers, tracing, access logging and metrics overrides, with
 * istiod's rules and messages (tests/validate/fixtures).
 */
#include "wh_validate_int.h"

#include <string.h>

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

    wh_vcheck_policy_target(c, spec, "selector");
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
