/*
 * wh_inject_proxyconfig_merge.c - istiod's effective proxy config for a pod:
 * the mesh's defaultConfig, then the ProxyConfig resources of the root
 * namespace, of the pod's namespace and of its workload, with the pod's
 * proxy.istio.io/config annotation under the workload's resource
 * (/work/shared/spec/cluster.md §2; the resources come from
 * wh_inject_cluster.c, already reduced to what they contribute).
 */
#include "wh_inject_proxyconfig.h"

#include <stdio.h>
#include <string.h>

#include "wh_kube.h"

static const char *field(const json_t *res, const char *key)
{
    const char *v = json_string_value(json_object_get(res, key));
    return v != NULL ? v : "";
}

/* Whether the resource applies at its level: without a selector for the
 * namespace level; for the workload level with a selector of at least one
 * label, all of which the pod's `labels` carry.  A selector without labels
 * belongs to neither level. */
static int applies(const json_t *res, int workload, const json_t *labels)
{
    const json_t *sel = json_object_get(res, "selector");
    json_t *s;
    int m;

    if (!workload || json_object_size(sel) == 0)
        return !workload && sel == NULL;
    s = json_pack("{s:O}", "matchLabels", sel);
    m = wh_kube_selector_matches(s, json_is_object(labels) ? labels : NULL);
    json_decref(s);
    return m == 1;
}

/* Releases up to 1.22 order a creation-time tie by "<name>.<namespace>". */
static int dotted_name_before(const json_t *a, const json_t *b)
{
    char ka[512], kb[512];

    snprintf(ka, sizeof(ka), "%s.%s", field(a, "name"), field(a, "namespace"));
    snprintf(kb, sizeof(kb), "%s.%s", field(b, "name"), field(b, "namespace"));
    return strcmp(ka, kb) < 0;
}

/* The first resource of namespace `ns` that applies at its level in istiod's
 * order: `pcs` is oldest first, a tie by name (wh_inject_cluster.c), which
 * older releases break otherwise (WH_REL_PROXYCONFIG_TIE_DOTTED_NAME). */
static const json_t *oldest(const json_t *pcs, const char *ns, int workload, const json_t *labels,
                            const wh_inject_release *rel)
{
    int dotted = wh_inject_release_has(rel, WH_REL_PROXYCONFIG_TIE_DOTTED_NAME);
    const json_t *p, *best = NULL;
    size_t i;

    json_array_foreach(pcs, i, p)
    {
        if (best != NULL && (!dotted || strcmp(field(p, "created"), field(best, "created")) != 0))
            break;
        if (strcmp(field(p, "namespace"), ns) != 0 || !applies(p, workload, labels))
            continue;
        if (best == NULL || dotted_name_before(p, best))
            best = p;
    }
    return best;
}

/* A resource's contribution; one that does not apply (it would have failed
 * the API server's validation) is left out rather than half applied. */
static void apply_resource(json_t *pc, const json_t *res)
{
    json_t *trial;

    if (res == NULL)
        return;
    trial = json_deep_copy(pc);
    if (wh_inject_proxy_config_apply(trial, json_object_get(res, "doc"), NULL) == WH_OK) {
        json_object_clear(pc); /* trial may lack a key of pc (a oneof's other member) */
        json_object_update(pc, trial);
    }
    json_decref(trial);
}

/* The annotation's layer as istiod's webhook merges it: parsed onto an empty
 * ProxyConfig (proxyConfigFromAnnotation), then printed by protojson and
 * applied again (mergeWithPrecedence), so a field the annotation sets to its
 * zero value ("", 0, REDIRECT, NONE, [] ...) leaves the value below it alone. */
static wh_code webhook_annotation_layer(const json_t *annotation, json_t **layer, wh_err *err)
{
    wh_code rc;

    *layer = json_object();
    if ((rc = wh_inject_proxy_config_apply(*layer, annotation, err)) != WH_OK) {
        json_decref(*layer);
        *layer = NULL;
        return rc;
    }
    wh_inject_proxy_config_drop_zero(*layer);
    return WH_OK;
}

json_t *wh_inject_webhook_proxy_config(const json_t *mesh, const wh_inject_release *rel)
{
    json_t *pc = wh_inject_default_proxy_config(rel), *layer = json_deep_copy(json_object_get(mesh, "defaultConfig"));

    /* The mesh's fields were normalised when the mesh loaded: applying them
     * again cannot fail. */
    wh_inject_proxy_config_drop_zero(layer);
    wh_inject_proxy_config_apply(pc, layer, NULL);
    json_decref(layer);
    return pc;
}

wh_code wh_inject_effective_proxy_config(const json_t *mesh, const json_t *base, const json_t *proxyconfigs,
                                         const json_t *pod, const json_t *annotation, int webhook,
                                         const wh_inject_release *rel, json_t **out, wh_err *err)
{
    json_t *layer = NULL;
    const json_t *meta = json_object_get(pod, "metadata");
    const char *root = json_string_value(json_object_get(mesh, "rootNamespace"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    json_t *pc;
    wh_code rc;

    *out = NULL;
    if (json_array_size(proxyconfigs) == 0 && annotation == NULL) {
        /* The revision's own object, shared: nobody changes it after loading. */
        *out = json_incref((json_t *)base);
        return WH_OK;
    }
    pc = json_deep_copy(base);
    if (root == NULL) /* a mesh's rootNamespace "" means no mesh-wide level */
        root = "";
    if (ns == NULL)
        ns = "";
    if (json_array_size(proxyconfigs) > 0) {
        if (root[0] != '\0')
            apply_resource(pc, oldest(proxyconfigs, root, 0, NULL, rel));
        if (strcmp(ns, root) != 0)
            apply_resource(pc, oldest(proxyconfigs, ns, 0, NULL, rel));
    }
    /* Workload level: the annotation (kube-inject: ApplyProxyConfig, all of
     * it), then the matching resource over it. */
    rc = WH_OK;
    if (annotation != NULL && webhook) {
        if ((rc = webhook_annotation_layer(annotation, &layer, err)) == WH_OK)
            rc = wh_inject_proxy_config_apply(pc, layer, err);
        json_decref(layer);
    } else if (annotation != NULL) {
        rc = wh_inject_proxy_config_apply(pc, annotation, err);
    }
    if (rc != WH_OK) {
        json_decref(pc);
        return wh_err_prefix(err, "invalid value for annotation 'proxy.istio.io/config'");
    }
    if (json_array_size(proxyconfigs) > 0)
        apply_resource(pc, oldest(proxyconfigs, ns, 1, json_object_get(meta, "labels"), rel));
    *out = pc;
    return WH_OK;
}
