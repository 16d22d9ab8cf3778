/*
 * tag_render.c - the objects a revision tag consists of, rendered directly
 * (no Helm): the tag's MutatingWebhookConfiguration with the selector matrix
 * the API server evaluates, the default tag's istiod-default-validator, and
 * the tag's Service.  The injector connection (service or URL, path, port,
 * caBundle, reinvocation policy) is copied from the revision's own injector
 * webhook, so a tag works whether that injector is istiod or webhookd.
 */
#include <string.h>

#include "tag_int.h"

static const char *const system_namespaces[] = {"kube-system", "kube-public", "kube-node-lease", "local-path-storage"};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* {key, operator[, values]} */
static json_t *expr(const char *key, const char *op, const char *value)
{
    if (value == NULL)
        return json_pack("{s:s, s:s}", "key", key, "operator", op);
    return json_pack("{s:s, s:s, s:[s]}", "key", key, "operator", op, "values", value);
}

static json_t *selector(json_t *e1, json_t *e2, json_t *e3)
{
    json_t *list = json_array();
    json_array_append_new(list, e1);
    if (e2 != NULL)
        json_array_append_new(list, e2);
    if (e3 != NULL)
        json_array_append_new(list, e3);
    return json_pack("{s:o}", "matchExpressions", list);
}

static json_t *system_ns_expr(void)
{
    json_t *values = json_array();
    for (size_t i = 0; i < sizeof(system_namespaces) / sizeof(system_namespaces[0]); i++)
        json_array_append_new(values, json_string(system_namespaces[i]));
    return json_pack("{s:s, s:s, s:o}", "key", "kubernetes.io/metadata.name", "operator", "NotIn", "values", values);
}

/* istiod's selector matrix (tests/integration/test_chart.py writes it out too) for the entry with this name
 * prefix, `value` being the tag (or revision) the namespace/pod label names.
 * WH_E_NOTFOUND for a prefix outside the matrix. */
static wh_code entry_selectors(const char *prefix, const char *value, json_t **ns, json_t **obj)
{
    *ns = *obj = NULL;
    if (strcmp(prefix, "rev.namespace.") == 0) {
        *ns = selector(expr(REV_LABEL, "In", value), expr("istio-injection", "DoesNotExist", NULL), NULL);
        *obj = selector(expr("sidecar.istio.io/inject", "NotIn", "false"), NULL, NULL);
    } else if (strcmp(prefix, "rev.object.") == 0) {
        *ns = selector(expr(REV_LABEL, "DoesNotExist", NULL), expr("istio-injection", "DoesNotExist", NULL), NULL);
        *obj = selector(expr("sidecar.istio.io/inject", "NotIn", "false"), expr(REV_LABEL, "In", value), NULL);
    } else if (strcmp(prefix, "namespace.") == 0) {
        *ns = selector(expr("istio-injection", "In", "enabled"), NULL, NULL);
        *obj = selector(expr("sidecar.istio.io/inject", "NotIn", "false"), NULL, NULL);
    } else if (strcmp(prefix, "object.") == 0) {
        *ns = selector(expr("istio-injection", "DoesNotExist", NULL), expr(REV_LABEL, "DoesNotExist", NULL), NULL);
        *obj = selector(expr("sidecar.istio.io/inject", "In", "true"), expr(REV_LABEL, "DoesNotExist", NULL), NULL);
    } else if (strcmp(prefix, "auto.") == 0) {
        *ns = selector(expr("istio-injection", "DoesNotExist", NULL), expr(REV_LABEL, "DoesNotExist", NULL),
                       system_ns_expr());
        *obj = selector(expr("sidecar.istio.io/inject", "DoesNotExist", NULL), expr(REV_LABEL, "DoesNotExist", NULL),
                        NULL);
    } else {
        return WH_E_NOTFOUND;
    }
    return WH_OK;
}

/* The first entry of the canonical webhook that is a sidecar injector. */
static const json_t *injector_entry(const json_t *canonical)
{
    size_t i;
    json_t *w;

    json_array_foreach(json_object_get(canonical, "webhooks"), i, w)
    {
        const char *name = json_string_value(json_object_get(w, "name"));
        if (name != NULL && ends_with(name, "sidecar-injector.istio.io"))
            return w;
    }
    return NULL;
}

static const char *canonical_name(const json_t *mwc)
{
    const char *n = json_string_value(json_object_get(json_object_get(mwc, "metadata"), "name"));
    return n != NULL ? n : "";
}

/* The revision the canonical webhook belongs to ("default" for the
 * non-revisioned install). */
static const char *canonical_revision(const json_t *canonical)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(canonical, "metadata"), "labels"), REV_LABEL));
}

/* Labels: ours <- canonical's except "app" <- minus operator-owned keys
 * (tags are user-managed: installers must not prune them). */
static wh_code merge_labels(json_t *labels, const json_t *canonical, wh_err *err)
{
    const char *k;
    json_t *v;
    void *tmp;

    json_object_foreach(json_object_get(json_object_get(canonical, "metadata"), "labels"), k, v)
    {
        if (strcmp(k, "app") != 0 && json_is_string(v))
            json_object_set(labels, k, v);
    }
    json_object_foreach_safe(labels, tmp, k, v)
    {
        (void)v;
        if (strstr(k, "operator.istio.io") != NULL)
            json_object_del(labels, k);
    }
    return WH_OK;
}

wh_code tag_mwc_name(const tag_render_opts *o, wh_buf *out)
{
    if (o->webhook_name != NULL) {
        wh_buf_puts(out, o->webhook_name);
        return WH_OK;
    }
    if (strcmp(o->istio_ns, "istio-system") == 0) {
        wh_buf_printf(out, "%s%s", TAG_MWC_PREFIX, o->tag);
        return WH_OK;
    }
    wh_buf_printf(out, "%s%s-%s", TAG_MWC_PREFIX, o->tag, o->istio_ns);
    return WH_OK;
}

/* The clientConfig of the tag entries, copied from the injector entry. */
static wh_code injector_client_config(const tag_render_opts *o, const json_t *entry, json_t **out, wh_err *err)
{
    const json_t *cc = json_object_get(entry, "clientConfig");
    const json_t *svc = json_object_get(cc, "service"), *ca = json_object_get(cc, "caBundle");
    const char *url = json_string_value(json_object_get(cc, "url"));
    json_t *res;

    if (url != NULL) {
        res = json_pack("{s:s}", "url", url);
    } else if (json_is_object(svc) && json_string_value(json_object_get(svc, "name")) != NULL) {
        const char *ns = json_string_value(json_object_get(svc, "namespace"));
        const char *path = json_string_value(json_object_get(svc, "path"));
        json_t *port = json_object_get(svc, "port");
        /* Deliberately the injector's own namespace and port (not -i / 443):
         * webhookd's Service need not live in the Istio namespace. */
        res = json_pack("{s:{s:O, s:s, s:s, s:o}}", "service", "name", json_object_get(svc, "name"), "namespace",
                        ns != NULL ? ns : o->istio_ns, "path", path != NULL ? path : "/inject", "port",
                        json_is_integer(port) ? json_incref(port) : json_integer(443));
    } else {
        return wh_err_set(err, WH_E_INVALID,
                          "webhook entry \"%s\" has neither clientConfig.url nor clientConfig.service",
                          json_string_value(json_object_get(entry, "name")) ?: "");
    }
    if (res == NULL) /* json_pack: a name or namespace that is not a string */
        return wh_err_set(err, WH_E_INVALID, "webhook entry \"%s\": clientConfig.service is not a valid reference",
                          json_string_value(json_object_get(entry, "name")) ?: "");
    if (json_is_string(ca) && json_string_length(ca) > 0)
        json_object_set(res, "caBundle", (json_t *)ca);
    *out = res;
    return WH_OK;
}

static json_t *entry(const char *prefix, const json_t *cc, const char *reinvocation, json_t *ns_sel, json_t *obj_sel)
{
    char name[128];

    snprintf(name, sizeof(name), "%ssidecar-injector.istio.io", prefix);
    return json_pack("{s:s, s:O, s:[{s:[s], s:[s], s:[s], s:[s]}], s:s, s:s, s:s, s:[s], s:o, s:o}", "name", name,
                     "clientConfig", cc, "rules", "operations", "CREATE", "apiGroups", "", "apiVersions", "v1",
                     "resources", "pods", "sideEffects", "None", "failurePolicy", "Fail", "reinvocationPolicy",
                     reinvocation, "admissionReviewVersions", "v1", "namespaceSelector", ns_sel, "objectSelector",
                     obj_sel);
}

wh_code tag_render_mwc(const tag_render_opts *o, const json_t *canonical, json_t **out, wh_err *err)
{
    const json_t *inj = injector_entry(canonical), *ann;
    const char *rev = canonical_revision(canonical), *reinv;
    json_t *cc = NULL, *mwc = NULL, *webhooks, *labels;
    wh_buf name = WH_BUF_INIT;
    int is_default = strcmp(o->tag, TAG_DEFAULT) == 0;
    wh_code rc;

    *out = NULL;
    if (rev == NULL)
        return wh_err_set(err, WH_E_INVALID, "could not extract tag revision from webhook \"%s\"",
                          canonical_name(canonical));
    if (inj == NULL)
        return wh_err_set(err, WH_E_NOTFOUND,
                          "failed to create tag webhook config: could not find sidecar-injector webhook in canonical "
                          "webhook \"%s\"",
                          canonical_name(canonical));
    if ((rc = injector_client_config(o, inj, &cc, err)) != WH_OK) {
        wh_err_prefix(err, "failed to create tag webhook config");
        goto out;
    }
    reinv = json_string_value(json_object_get(inj, "reinvocationPolicy"));
    if (reinv == NULL || reinv[0] == '\0')
        reinv = "Never";
    if ((rc = tag_mwc_name(o, &name)) != WH_OK)
        goto out;

    webhooks = json_array();
    {
        static const char *const prefixes[] = {"rev.namespace.", "rev.object.", "namespace.", "object.", "auto."};
        size_t n = is_default ? (o->auto_inject_namespaces ? 5 : 4) : 2;
        for (size_t i = 0; i < n; i++) {
            json_t *ns_sel = NULL, *obj_sel = NULL;
            entry_selectors(prefixes[i], o->tag, &ns_sel, &obj_sel);
            json_array_append_new(webhooks, entry(prefixes[i], cc, reinv, ns_sel, obj_sel));
        }
    }
    labels = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", TAG_LABEL, o->tag, REV_LABEL, rev, "app", "sidecar-injector",
                       "release", "istio", "app.kubernetes.io/name", "istiod", "app.kubernetes.io/part-of", "istio");
    mwc = json_pack("{s:s, s:s, s:{s:s, s:o}, s:o}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
                    "MutatingWebhookConfiguration", "metadata", "name", name.data, "labels", labels, "webhooks",
                    webhooks);
    if (mwc == NULL || json_array_size(webhooks) != (is_default ? (o->auto_inject_namespaces ? 5u : 4u) : 2u)) {
        rc = wh_err_set(err, WH_E_INTERNAL, "cannot build the MutatingWebhookConfiguration of tag %s", o->tag);
        goto out;
    }
    if ((rc = merge_labels(labels, canonical, err)) != WH_OK)
        goto out;
    ann = json_object_get(json_object_get(canonical, "metadata"), "annotations");
    if (json_is_object(ann) && json_object_size(ann) > 0)
        json_object_set_new(json_object_get(mwc, "metadata"), "annotations", json_deep_copy(ann));
    *out = mwc;
    mwc = NULL;
out:
    json_decref(cc);
    json_decref(mwc);
    wh_buf_free(&name);
    return rc;
}

/* The validator's connection: the injector's service (or URL host) with path /validate. */
static wh_code validator_client_config(const json_t *inj_cc, json_t **out, wh_err *err)
{
    const char *url = json_string_value(json_object_get(inj_cc, "url"));
    const json_t *svc = json_object_get(inj_cc, "service"), *ca = json_object_get(inj_cc, "caBundle");
    json_t *res;

    if (url != NULL) {
        const char *host = strstr(url, "://");
        size_t n = host != NULL ? (size_t)(host + 3 - url) + strcspn(host + 3, "/?#") : strcspn(url, "/?#");
        wh_buf b = WH_BUF_INIT;
        wh_buf_append(&b, url, n);
        wh_buf_puts(&b, "/validate");
        res = json_pack("{s:s}", "url", b.data);
        wh_buf_free(&b);
    } else {
        res = json_pack("{s:{s:O, s:O, s:s, s:O}}", "service", "name", json_object_get(svc, "name"), "namespace",
                        json_object_get(svc, "namespace"), "path", "/validate", "port", json_object_get(svc, "port"));
    }
    if (res == NULL) /* json_pack: a service without name, namespace or port */
        return wh_err_set(err, WH_E_INVALID, "the injector's clientConfig.service lacks a name, namespace or port");
    if (json_is_string(ca))
        json_object_set(res, "caBundle", (json_t *)ca);
    *out = res;
    return WH_OK;
}

wh_code tag_render_validator(const tag_render_opts *o, const json_t *canonical, const json_t *existing, json_t **out,
                             wh_err *err)
{
    const json_t *inj = injector_entry(canonical);
    const char *rev = canonical_revision(canonical);
    json_t *inj_cc = NULL, *cc = NULL, *vwc = NULL, *hook, *labels, *old;
    wh_code rc;

    *out = NULL;
    if (rev == NULL || inj == NULL)
        return wh_err_set(err, WH_E_INVALID, "canonical webhook \"%s\" cannot be used for the default validator",
                          canonical_name(canonical));
    if ((rc = injector_client_config(o, inj, &inj_cc, err)) != WH_OK ||
        (rc = validator_client_config(inj_cc, &cc, err)) != WH_OK)
        goto out;
    hook = json_pack("{s:s, s:O, s:[{s:[s,s], s:[s,s,s,s], s:[s], s:[s]}], s:s, s:s, s:[s], s:{s:[{s:s, s:s}]}}",
                     "name", "validation.istio.io", "clientConfig", cc, "rules", "operations", "CREATE", "UPDATE",
                     "apiGroups", "security.istio.io", "networking.istio.io", "telemetry.istio.io",
                     "extensions.istio.io", "apiVersions", "*", "resources", "*", "failurePolicy", "Ignore",
                     "sideEffects", "None", "admissionReviewVersions", "v1", "objectSelector", "matchExpressions",
                     "key", REV_LABEL, "operator", "DoesNotExist");
    labels = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "app", "istiod", "istio", "istiod", REV_LABEL, rev,
                       TAG_LABEL, TAG_DEFAULT, "app.kubernetes.io/name", "istiod", "release", "istio",
                       "app.kubernetes.io/part-of", "istio");
    vwc = json_pack("{s:s, s:s, s:{s:s, s:o}, s:[o]}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
                    "ValidatingWebhookConfiguration", "metadata", "name", TAG_DEFAULT_VALIDATOR, "labels", labels,
                    "webhooks", hook);
    if (vwc == NULL) {
        rc = wh_err_set(err, WH_E_INTERNAL, "cannot build the default ValidatingWebhookConfiguration");
        goto out;
    }
    if ((rc = merge_labels(labels, canonical, err)) != WH_OK)
        goto out;
    /* Keep what istiod decided: once it flipped the policy to Fail, do not
     * reset it to Ignore (leaving it unset keeps Fail, the API default). */
    old = NULL;
    {
        size_t i;
        json_t *w;
        json_array_foreach(json_object_get(existing, "webhooks"), i, w)
        {
            const char *n = json_string_value(json_object_get(w, "name"));
            if (n != NULL && strcmp(n, "validation.istio.io") == 0) {
                old = w;
                break;
            }
        }
        if (old == NULL)
            old = json_array_get(json_object_get(existing, "webhooks"), 0);
    }
    if (old != NULL) {
        const char *fp = json_string_value(json_object_get(old, "failurePolicy"));
        if (fp == NULL || strcmp(fp, "Fail") == 0)
            json_object_del(hook, "failurePolicy");
        else
            json_object_set_new(hook, "failurePolicy", json_string(fp));
    }
    *out = vwc;
    vwc = NULL;
out:
    json_decref(inj_cc);
    json_decref(cc);
    json_decref(vwc);
    return rc;
}

wh_code tag_render_service(const tag_render_opts *o, json_t **out, wh_err *err)
{
    int empty_rev = o->revision_flag[0] == '\0' || strcmp(o->revision_flag, TAG_DEFAULT) == 0;
    wh_buf name = WH_BUF_INIT;
    json_t *svc, *sel;

    *out = NULL;
    wh_buf_printf(&name, "%s%s", TAG_SERVICE_PREFIX, o->tag);
    sel = empty_rev ? json_pack("{s:s, s:s}", "app", "istiod", "istio", "pilot")
                    : json_pack("{s:s, s:s}", "app", "istiod", REV_LABEL, o->revision_flag);
    svc = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}, "
                    "s:{s:[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:i, s:s}, {s:s, s:i, s:s}], s:o}}",
                    "apiVersion", "v1", "kind", "Service", "metadata", "name", name.data, "namespace", o->istio_ns,
                    "labels", REV_LABEL, o->revision_flag, TAG_LABEL, o->tag, "app", "istiod", "istio", "pilot",
                    "release", "istio", "app.kubernetes.io/name", "istiod", "app.kubernetes.io/part-of", "istio",
                    "spec", "ports", "name", "grpc-xds", "port", 15010, "protocol", "TCP", "name", "https-dns", "port",
                    15012, "protocol", "TCP", "name", "https-webhook", "port", 443, "targetPort", 15017, "protocol",
                    "TCP", "name", "http-monitoring", "port", 15014, "protocol", "TCP", "selector", sel);
    wh_buf_free(&name);
    if (svc == NULL)
        return wh_err_set(err, WH_E_INTERNAL, "cannot build the Service of tag %s", o->tag);
    *out = svc;
    return WH_OK;
}

static int never_matches(const json_t *sel)
{
    const char *v = json_string_value(json_object_get(json_object_get(sel, "matchLabels"), TAG_NEVER_MATCH_KEY));
    return v != NULL && strcmp(v, TAG_NEVER_MATCH_VALUE) == 0;
}

int tag_is_deactivated(const json_t *mwc)
{
    size_t i;
    json_t *w;

    if (json_array_size(json_object_get(mwc, "webhooks")) == 0)
        return 0;
    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        if (!never_matches(json_object_get(w, "namespaceSelector")) ||
            !never_matches(json_object_get(w, "objectSelector")))
            return 0;
    }
    return 1;
}

wh_code tag_deactivate(json_t *mwc, wh_err *err)
{
    size_t i;
    json_t *w;

    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        json_t *never = json_pack("{s:{s:s}}", "matchLabels", TAG_NEVER_MATCH_KEY, TAG_NEVER_MATCH_VALUE);
        json_object_set(w, "namespaceSelector", never);
        json_object_set_new(w, "objectSelector", json_deep_copy(never));
        json_decref(never);
    }
    return WH_OK;
}

wh_code tag_reactivate(json_t *mwc, wh_err *err)
{
    const char *rev =
        json_string_value(json_object_get(json_object_get(json_object_get(mwc, "metadata"), "labels"), REV_LABEL));
    size_t i;
    json_t *w;

    if (rev == NULL)
        return wh_err_set(err, WH_E_INVALID, "webhook \"%s\" has no %s label", canonical_name(mwc), REV_LABEL);
    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        const char *name = json_string_value(json_object_get(w, "name"));
        char prefix[128];
        json_t *ns_sel, *obj_sel;
        wh_code rc;
        size_t n = name != NULL && ends_with(name, "sidecar-injector.istio.io")
                       ? strlen(name) - strlen("sidecar-injector.istio.io")
                       : sizeof(prefix);
        if (n >= sizeof(prefix))
            return wh_err_set(err, WH_E_UNSUPPORTED, "cannot restore the selectors of webhook entry \"%s\" in \"%s\"",
                              name != NULL ? name : "", canonical_name(mwc));
        memcpy(prefix, name, n);
        prefix[n] = '\0';
        if ((rc = entry_selectors(prefix, rev, &ns_sel, &obj_sel)) != WH_OK)
            return wh_err_set(err, WH_E_UNSUPPORTED, "cannot restore the selectors of webhook entry \"%s\" in \"%s\"",
                              name, canonical_name(mwc));
        json_object_set_new(w, "namespaceSelector", ns_sel);
        json_object_set_new(w, "objectSelector", obj_sel);
    }
    return WH_OK;
}
