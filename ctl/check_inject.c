/*
 * check_inject.c - `webhookctl check-inject`: which injector webhook, if
 * any, will add a sidecar to this pod, and why (istioctl x check-inject).
 *
 * The API server picks the webhooks by label selectors only (namespace and
 * object selectors, as tests/kube's simulated admission chain does it),
 * so this evaluates every Istio injector webhook's namespaceSelector and
 * objectSelector against the namespace's and the pod's labels, then runs the
 * injector's own rule chain (wh_inject_decide) with the revision's
 * injector config when the cluster holds it.  Zero webhooks means no
 * sidecar; two mean double injection, reported as an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wh_alloc.h"
#include "diag.h"
#include "tag_int.h"

/* The label Istio's chart puts on the injector ConfigMap: its release. */
#define VERSION_LABEL "app.kubernetes.io/version"
#include "wh_buf.h"
#include "wh_ctl.h"
#include "wh_inject_decide.h"
#include "wh_inject_revision_load.h"

/* "k=v,k2=v2" -> object; NULL (message on stderr) when malformed. */
static json_t *parse_labels(const char *text)
{
    json_t *labels = json_object();
    char *copy = wh_strdup(text), *save = NULL, *tok;

    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        wh_err err = {0};
        if (eq == NULL || eq == tok) {
            fprintf(stderr, "Error: invalid label \"%s\": want key=value\n", tok);
            goto bad;
        }
        *eq = '\0';
        if (wh_kube_check_label_value(eq + 1, &err) != WH_OK) {
            fprintf(stderr, "Error: invalid value of label \"%s\": %s\n", tok, wh_err_msg(&err));
            goto bad;
        }
        json_object_set_new(labels, tok, json_string(eq + 1));
    }
    free(copy);
    return labels;
bad:
    free(copy);
    json_decref(labels);
    return NULL;
}

/* ---- selector explanation ------------------------------------------------ */

static int is_positive(const char *op)
{
    return strcmp(op, "In") == 0 || strcmp(op, "Exists") == 0;
}

/* Append "side label k=v" for each requirement of `sel` that positively
 * holds on `labels` (matchLabels, In, Exists). */
static void positive_hits(const json_t *sel, const json_t *labels, const char *side, json_t *hits)
{
    const char *key, *have;
    json_t *v, *e;
    size_t i;

    json_object_foreach(json_object_get(sel, "matchLabels"), key, v)
    {
        have = json_string_value(json_object_get(labels, key));
        if (have != NULL && json_is_string(v) && strcmp(have, json_string_value(v)) == 0)
            json_array_append_new(hits, json_sprintf("%s label %s=%s", side, key, have));
    }
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *k = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        json_t *one;
        if (k == NULL || op == NULL || !is_positive(op) ||
            (have = json_string_value(json_object_get(labels, k))) == NULL)
            continue;
        json_t *sel1 = json_pack("{s:[O]}", "matchExpressions", e);
        one = json_pack("{s:s}", k, have);
        if (wh_kube_selector_matches(sel1, one) == 1)
            json_array_append_new(hits, json_sprintf("%s label %s=%s", side, k, have));
        json_decref(one);
        json_decref(sel1);
    }
}

/* The first negative requirement (NotIn, DoesNotExist, matchLabels mismatch
 * excluded) of `sel` that a present label violates: "side label k=v". */
static json_t *negative_miss(const json_t *sel, const json_t *labels, const char *side)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *k = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const char *have;
        json_t *one, *sel1;
        int m;
        if (k == NULL || op == NULL || is_positive(op) ||
            (have = json_string_value(json_object_get(labels, k))) == NULL)
            continue;
        one = json_pack("{s:s}", k, have);
        sel1 = json_pack("{s:[O]}", "matchExpressions", e);
        m = wh_kube_selector_matches(sel1, one);
        json_decref(one);
        json_decref(sel1);
        if (m == 0)
            return json_sprintf("%s label %s=%s", side, k, have);
    }
    return NULL;
}

/* What the entry asks for, for the "no match" reason: "namespace label
 * istio.io/rev=canary", "pod label sidecar.istio.io/inject=true". */
static void wanted(const json_t *sel, const char *side, wh_buf *b, int *n)
{
    const char *key;
    json_t *v, *e, *x;
    size_t i, j;

    json_object_foreach(json_object_get(sel, "matchLabels"), key, v)
    {
        wh_buf_printf(b, "%s%s label %s=%s", (*n)++ ? ", " : "", side, key, json_string_value(v) ?: "");
    }
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *k = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        if (k == NULL || op == NULL || !is_positive(op))
            continue;
        wh_buf_printf(b, "%s%s label %s", (*n)++ ? ", " : "", side, k);
        if (strcmp(op, "In") == 0) {
            json_array_foreach(json_object_get(e, "values"), j, x)
            {
                wh_buf_printf(b, "%s%s", j == 0 ? "=" : "|", json_string_value(x) ?: "");
            }
        }
    }
}

/* ---- per configuration ----------------------------------------------------- */

typedef struct ci {
    wh_kube_client *client;
    const json_t *ns_labels, *pod_labels, *pod;
    const char *ns;
} ci;

/* The revision's injector config from its ConfigMap (istio-sidecar-injector[-R]
 * in the namespace of the webhook's Service); NULL when absent or unreadable,
 * with *where saying what was looked for. */
static wh_inject_revision *load_revision(ci *c, const char *rev, const json_t *entry, wh_buf *where)
{
    const char *svc_ns = json_string_value(
        json_object_get(json_object_get(json_object_get(entry, "clientConfig"), "service"), "namespace"));
    wh_buf name = WH_BUF_INIT;
    json_t *cm = NULL;
    wh_inject_revision *r = NULL;
    const char *config, *values;
    wh_release_hints hints = {NULL, WH_RELEASE_LABEL, NULL, NULL};
    wh_err err = {0};

    if (rev == NULL || *rev == '\0' || strcmp(rev, "default") == 0)
        wh_buf_puts(&name, "istio-sidecar-injector");
    else
        wh_buf_printf(&name, "istio-sidecar-injector-%s", rev);
    if (svc_ns == NULL)
        svc_ns = "istio-system";
    wh_buf_printf(where, "%s/%s", svc_ns, name.data);
    if (wh_kube_get(c->client, &wh_kube_configmaps, svc_ns, name.data, &cm, &err) != WH_OK)
        goto out;
    config = json_string_value(json_object_get(json_object_get(cm, "data"), "config"));
    values = json_string_value(json_object_get(json_object_get(cm, "data"), "values"));
    if (config == NULL)
        goto out;
    if (values == NULL)
        values = "{}";
    /* the injector's release: the ConfigMap's app.kubernetes.io/version, else values.global.tag */
    hints.configmap_label =
        json_string_value(json_object_get(json_object_get(json_object_get(cm, "metadata"), "labels"), VERSION_LABEL));
    if (wh_inject_revision_load_release(rev != NULL ? rev : "default", config, strlen(config), values, strlen(values),
                                        NULL, 0, &hints, &r, &err) != WH_OK) {
        fprintf(stderr, "Warning: ConfigMap %s: %s; the injector's own rules are checked with defaults\n", where->data,
                wh_err_msg(&err));
        r = NULL;
    }
out:
    json_decref(cm);
    wh_buf_free(&name);
    return r;
}

/* Analyse one injector configuration; a new object for the JSON output. */
static json_t *analyse(ci *c, const json_t *mwc)
{
    const char *rev = diag_label(mwc, REV_LABEL);
    json_t *entries = json_array(), *res, *w, *matched = NULL;
    json_t *reason = NULL;
    size_t i;

    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        int nsm, objm;
        if (!diag_is_injector(w))
            continue;
        nsm = wh_kube_selector_matches(json_object_get(w, "namespaceSelector"), c->ns_labels);
        objm = wh_kube_selector_matches(json_object_get(w, "objectSelector"), c->pod_labels);
        json_array_append_new(entries,
                              json_pack("{s:s?, s:b, s:b}", "name", json_string_value(json_object_get(w, "name")),
                                        "namespaceSelector", nsm == 1, "objectSelector", objm == 1));
        if (nsm == 1 && objm == 1 && matched == NULL)
            matched = w;
    }
    res = json_pack("{s:s, s:s, s:o}", "name", diag_name(mwc), "revision", rev != NULL ? rev : "", "entries", entries);
    if (diag_label(mwc, TAG_LABEL) != NULL)
        json_object_set_new(res, "tag", json_string(diag_label(mwc, TAG_LABEL)));
    if (matched != NULL) {
        json_t *hits = json_array();
        wh_buf b = WH_BUF_INIT, where = WH_BUF_INIT;
        wh_inject_revision *r;
        const char *skip = NULL;
        json_object_set_new(res, "entry", json_string(json_string_value(json_object_get(matched, "name")) ?: ""));
        positive_hits(json_object_get(matched, "objectSelector"), c->pod_labels, "Pod", hits);
        positive_hits(json_object_get(matched, "namespaceSelector"), c->ns_labels, "Namespace", hits);
        if (json_array_size(hits) == 0)
            wh_buf_puts(&b,
                        "Neither the namespace nor the pod has an injection label; this webhook injects by default");
        for (i = 0; i < json_array_size(hits); i++)
            wh_buf_printf(&b, "%s%s", i == 0 ? "" : " and ", json_string_value(json_array_get(hits, i)));
        if (json_array_size(hits) > 0)
            wh_buf_puts(&b, json_array_size(hits) > 1 ? " match" : " matches");
        /* The API server calls the injector; its own rule chain may still skip. */
        r = load_revision(c, rev, matched, &where);
        json_object_set_new(res, "injectorConfig", r != NULL ? json_string(where.data) : json_null());
        if (r != NULL) {
            /* which istiod release's behaviour the injector has (wh_inject_release.h) */
            const wh_inject_release *rel = wh_inject_revision_release(r);
            char line[320];
            wh_inject_release_describe(rel, line, sizeof(line));
            json_object_set_new(res, "istioRelease",
                                json_pack("{s:s, s:s, s:s, s:s}", "behaves", line, "source",
                                          wh_release_source_name(rel->source), "declared", rel->declared.text,
                                          "warning", rel->warning));
        }
        if (!wh_inject_decide(r, c->pod, 0, &skip)) {
            wh_buf_reset(&b);
            wh_buf_printf(&b, "The webhook is called, but the injector skips the pod: %s", skip != NULL ? skip : "");
            json_object_set_new(res, "injected", json_false());
        } else {
            json_object_set_new(res, "injected", json_true());
        }
        wh_inject_revision_unref(r);
        json_object_set_new(res, "reason", json_string(b.data));
        wh_buf_free(&b);
        wh_buf_free(&where);
        json_decref(hits);
        return res;
    }
    json_object_set_new(res, "injected", json_false());
    if (tag_is_deactivated(mwc)) {
        json_object_set_new(res, "reason",
                            json_string("The webhook is deactivated (" TAG_NEVER_MATCH_KEY "=" TAG_NEVER_MATCH_VALUE
                                        "), e.g. by `tag set default`"));
        return res;
    }
    /* Label the entry wants but another label vetoes: say which one wins. */
    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        const json_t *nss = json_object_get(w, "namespaceSelector"), *objs = json_object_get(w, "objectSelector");
        json_t *hits = json_array(), *veto;
        if (!diag_is_injector(w))
            continue;
        positive_hits(objs, c->pod_labels, "pod", hits);
        positive_hits(nss, c->ns_labels, "namespace", hits);
        veto = negative_miss(nss, c->ns_labels, "Namespace");
        if (veto == NULL)
            veto = negative_miss(objs, c->pod_labels, "Pod");
        if (json_array_size(hits) > 0 && veto != NULL)
            reason =
                json_sprintf("%s overrides %s", json_string_value(veto), json_string_value(json_array_get(hits, 0)));
        json_decref(veto);
        json_decref(hits);
        if (reason != NULL)
            break;
    }
    if (reason == NULL) {
        wh_buf b = WH_BUF_INIT;
        int n = 0;
        wh_buf_puts(&b, "No matching labels; this webhook selects ");
        json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
        {
            if (!diag_is_injector(w))
                continue;
            int m = 0;
            wh_buf w1 = WH_BUF_INIT;
            wanted(json_object_get(w, "namespaceSelector"), "namespace", &w1, &m);
            wanted(json_object_get(w, "objectSelector"), "pod", &w1, &m);
            if (m > 0)
                wh_buf_printf(&b, "%s%s", n++ > 0 ? " or " : "", w1.data);
            wh_buf_free(&w1);
        }
        if (n == 0)
            wh_buf_puts(&b, "pods only by default");
        reason = json_string(b.data);
        wh_buf_free(&b);
    }
    json_object_set_new(res, "reason", reason);
    return res;
}

/* ---- target ------------------------------------------------------------------ */

/* The pod to check: a Pod, a Deployment's template, or labels.  New reference
 * with metadata.namespace set; NULL with a message on stderr. */
static json_t *resolve_pod(wh_kube_client *client, const char *target, const char *labels, const char **ns)
{
    static const char *const deploy_kinds[] = {"deploy/", "deployment/", "deployments/", "deployment.apps/", NULL};
    json_t *obj = NULL, *pod = NULL;
    wh_err err = {0};
    const char *name = target;
    const wh_kube_resource *res = &wh_kube_pods;
    char *copy = NULL;

    if (labels != NULL) {
        json_t *l = parse_labels(labels);
        if (l == NULL)
            return NULL;
        pod = json_pack("{s:{s:s, s:o}, s:{}}", "metadata", "namespace", *ns, "labels", l, "spec");
        return pod;
    }
    for (size_t i = 0; deploy_kinds[i] != NULL; i++)
        if (strncmp(target, deploy_kinds[i], strlen(deploy_kinds[i])) == 0) {
            name = target + strlen(deploy_kinds[i]);
            res = &wh_kube_deployments;
        }
    if (res == &wh_kube_pods) {
        const char *slash = strchr(target, '/');
        if (slash != NULL) {
            if (strncmp(target, "pod/", 4) != 0 && strncmp(target, "pods/", 5) != 0 && strncmp(target, "po/", 3) != 0) {
                fprintf(stderr, "Error: cannot check \"%.*s\" objects: give pod/NAME, deploy/NAME or -l labels\n",
                        (int)(slash - target), target);
                return NULL;
            }
            name = slash + 1;
        }
        /* istioctl's NAME.NAMESPACE shorthand for pods */
        if (strchr(name, '.') != NULL) {
            copy = wh_strdup(name);
            *strchr(copy, '.') = '\0';
            *ns = strchr(name, '.') + 1;
            name = copy;
        }
    }
    if (*name == '\0') {
        fprintf(stderr, "Error: the target has no name\n");
        goto out;
    }
    if (wh_kube_get(client, res, *ns, name, &obj, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    if (res == &wh_kube_pods) {
        pod = json_incref(obj);
    } else {
        json_t *tmpl = json_object_get(json_object_get(obj, "spec"), "template");
        pod = json_pack("{s:O?, s:O?}", "metadata", json_object_get(tmpl, "metadata"), "spec",
                        json_object_get(tmpl, "spec"));
        if (pod != NULL && !json_is_object(json_object_get(pod, "metadata")))
            json_object_set_new(pod, "metadata", json_object());
    }
    if (pod != NULL)
        json_object_set_new(json_object_get(pod, "metadata"), "namespace", json_string(*ns));
out:
    json_decref(obj);
    free(copy);
    return pod;
}

/* ---- output -------------------------------------------------------------------- */

static void print_table(const json_t *results, int tty)
{
    static const char *const head[] = {"WEBHOOK", "REVISION", "INJECTED", "REASON"};
    size_t wname = strlen(head[0]), wrev = strlen(head[1]), winj = strlen(head[2]), i;
    json_t *r;

    json_array_foreach(results, i, r)
    {
        size_t a = diag_width(json_string_value(json_object_get(r, "name")));
        size_t b = diag_width(json_string_value(json_object_get(r, "revision")));
        wname = a > wname ? a : wname;
        wrev = b > wrev ? b : wrev;
    }
    diag_pad(stdout, head[0], wname + 2);
    diag_pad(stdout, head[1], wrev + 2);
    diag_pad(stdout, head[2], winj + 2);
    printf("%s\n", head[3]);
    json_array_foreach(results, i, r)
    {
        int yes = json_is_true(json_object_get(r, "injected"));
        diag_pad(stdout, json_string_value(json_object_get(r, "name")), wname + 2);
        diag_pad(stdout, json_string_value(json_object_get(r, "revision")), wrev + 2);
        diag_pad(stdout, tty ? (yes ? "✔" : "✘") : (yes ? "yes" : "no"), winj + 2);
        printf("%s\n", json_string_value(json_object_get(r, "reason")));
    }
}

static int run(const wh_ctl_args *a)
{
    const char *labels = wh_ctl_string(a, "labels"), *target = a->nargs > 0 ? a->args[0] : NULL, *ns;
    const char *output = wh_ctl_string(a, "output");
    wh_kube_client *client = NULL;
    json_t *pod = NULL, *nsobj = NULL, *mwcs = NULL, *results = json_array(), *injecting = json_array(), *m, *rel;
    wh_err err = {0};
    ci c;
    size_t i;
    int status = 1;

    if (a->nargs > 1) {
        status = wh_ctl_usage_error(a, "more than one target: %s", a->args[1]);
        goto out;
    }
    if ((target == NULL) == (labels == NULL)) {
        status = wh_ctl_usage_error(a, "give either a pod/deployment or -l labels");
        goto out;
    }
    if (wh_ctl_output_check(a, output) != 0) {
        status = 2;
        goto out;
    }
    if (wh_ctl_kube_client(a, &client, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    ns = wh_ctl_string(a, "namespace") != NULL ? wh_ctl_string(a, "namespace") : wh_kube_client_namespace(client);
    if ((pod = resolve_pod(client, target, labels, &ns)) == NULL)
        goto out;
    if (wh_kube_get(client, &wh_kube_namespaces, NULL, ns, &nsobj, &err) != WH_OK ||
        wh_kube_list(client, &wh_kube_mutating_webhooks, NULL, NULL, &mwcs, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    c.client = client;
    c.ns = ns;
    c.pod = pod;
    c.pod_labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    c.ns_labels = json_object_get(json_object_get(nsobj, "metadata"), "labels");
    json_array_foreach(mwcs, i, m)
    {
        size_t j;
        json_t *w;
        int relevant = 0;
        json_array_foreach(json_object_get(m, "webhooks"), j, w) relevant |= diag_is_injector(w);
        if (!relevant)
            continue;
        json_t *res = analyse(&c, m);
        if (json_is_true(json_object_get(res, "injected")))
            json_array_append(injecting, res);
        json_array_append_new(results, res);
    }
    status = json_array_size(injecting) > 1 ? 1 : 0;
    if (strcmp(output, "table") != 0) {
        const char *verdict = json_array_size(injecting) == 0   ? "not-injected"
                              : json_array_size(injecting) == 1 ? "injected"
                                                                : "double-injection";
        json_t *names = json_array(), *out;
        json_array_foreach(injecting, i, m) json_array_append(names, json_object_get(m, "name"));
        out = json_pack("{s:s, s:s, s:o, s:O}", "namespace", ns, "result", verdict, "injectedBy", names, "webhooks",
                        results);
        if (wh_ctl_output_doc(output, out) != 0)
            status = 1;
        json_decref(out);
        goto out;
    }
    if (json_array_size(results) == 0) {
        printf("No Istio injector webhook (MutatingWebhookConfiguration) found: no pod will be injected. "
               "Install a control plane revision, or check the kubeconfig context.\n");
        goto out;
    }
    print_table(results, isatty(STDOUT_FILENO));
    if (json_array_size(injecting) == 0) {
        printf("\nThe pod will not be injected: no webhook injects it.\n");
    } else if (json_array_size(injecting) == 1) {
        m = json_array_get(injecting, 0);
        printf("\nThe pod will be injected by revision \"%s\" (webhook %s).\n",
               json_string_value(json_object_get(m, "revision")), json_string_value(json_object_get(m, "name")));
        if ((rel = json_object_get(m, "istioRelease")) != NULL &&
            strcmp(json_string_value(json_object_get(rel, "source")), "newest") != 0)
            printf("The injector runs as Istio %s.\n", json_string_value(json_object_get(rel, "behaves")));
    } else {
        printf("\nError: the pod would be injected %zu times, by", json_array_size(injecting));
        json_array_foreach(injecting, i, m)
        {
            printf("%s %s (revision \"%s\")",
                   i == 0                                ? ""
                   : i + 1 == json_array_size(injecting) ? " and"
                                                         : ",",
                   json_string_value(json_object_get(m, "name")), json_string_value(json_object_get(m, "revision")));
        }
        printf(". Their selectors overlap: deactivate or remove all but one (`webhookctl check` lists the "
               "overlapping webhooks).\n");
    }
out:
    json_decref(pod);
    json_decref(nsobj);
    json_decref(mwcs);
    json_decref(results);
    json_decref(injecting);
    wh_kube_client_free(client);
    return status;
}

static const wh_ctl_flag flags[] = {
    {.name = "labels",
     .shorthand = 'l',
     .type = WH_CTL_STRING,
     .usage = "Pod labels to check (k=v,k2=v2) instead of a pod or deployment"},
    WH_CTL_OUTPUT_FLAG,
};

const wh_ctl_cmd wh_ctl_cmd_check_inject = {
    .name = "check-inject",
    .use = "[<type>/]<name>[.<namespace>] [flags]\n-l <pod labels> [flags]",
    .summary = "Explain which webhook injects a pod, or why none does",
    .long_help =
        "Check which injector webhook, if any, will inject the Istio sidecar into a pod, and why.\n"
        "Every Istio injector MutatingWebhookConfiguration (istiod's, revision tags', webhookd's) is evaluated\n"
        "against the namespace's and the pod's labels, then the injector's own rules (host network, system\n"
        "namespace, sidecar.istio.io/inject annotation, neverInjectSelector, policy) are applied.\n\n"
        "Targets: pod/NAME (or NAME; NAME.NAMESPACE also names the namespace), deploy/NAME (its pod template).\n"
        "The namespace is -n, else the kubeconfig context's.\n\n"
        "Exit status: 0 when the analysis ran (injected or not), 1 when two webhooks would inject the pod\n"
        "(double injection) or the cluster could not be read, 2 on a usage error.\n",
    .examples = "  # Check the injection status of a pod\n"
                "  webhookctl check-inject details-v1-fcff6c49c-kqnfk.test\n\n"
                "  # Check the injection status of a pod under a deployment\n"
                "  webhookctl check-inject deploy/details-v1 -n test\n\n"
                "  # Check the injection status of a pod with the given labels in a namespace\n"
                "  webhookctl check-inject -n test -l app=helloworld,version=v1\n",
    WH_CTL_FLAGS(flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run,
};
