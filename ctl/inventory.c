/*
 * inventory.c - the revision inventory of inventory.h: what exists, who
 * serves it, who uses it, and which pods run a revision their namespace no
 * longer selects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "inventory.h"
#include "tag_int.h"
#include "wh_alloc.h"
#include "wh_buf.h"

#define INJECTOR_CM "istio-sidecar-injector"
#define STATUS_ANNOTATION "sidecar.istio.io/status"

static const char *meta_str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, "metadata"), k));
    return s != NULL ? s : "";
}

wh_code inv_load(wh_kube_client *c, const char *istio_ns, inv_cluster *out, wh_err *err)
{
    static const struct {
        const wh_kube_resource *r;
        size_t off;
        int istio_ns_only;
        const char *selector;
    } lists[] = {
        {&wh_kube_mutating_webhooks, offsetof(inv_cluster, mwcs), 0, NULL},
        {&wh_kube_namespaces, offsetof(inv_cluster, namespaces), 0, NULL},
        {&wh_kube_pods, offsetof(inv_cluster, pods), 0, NULL},
        {&wh_kube_replicasets, offsetof(inv_cluster, replicasets), 0, NULL},
        {&wh_kube_deployments, offsetof(inv_cluster, deployments), 0, NULL},
        {&wh_kube_statefulsets, offsetof(inv_cluster, statefulsets), 0, NULL},
        {&wh_kube_daemonsets, offsetof(inv_cluster, daemonsets), 0, NULL},
        {&wh_kube_configmaps, offsetof(inv_cluster, configmaps), 1, NULL},
        {&wh_kube_services, offsetof(inv_cluster, services), 1, REV_LABEL},
    };
    static const struct {
        const char *kind;
        size_t off;
    } indexed[] = {{"ReplicaSet", offsetof(inv_cluster, replicasets)},
                   {"Deployment", offsetof(inv_cluster, deployments)},
                   {"StatefulSet", offsetof(inv_cluster, statefulsets)},
                   {"DaemonSet", offsetof(inv_cluster, daemonsets)}};

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        json_t **slot = (json_t **)((char *)out + lists[i].off);
        if (wh_kube_list(c, lists[i].r, lists[i].istio_ns_only ? istio_ns : NULL, lists[i].selector, slot, err) !=
            WH_OK) {
            inv_free(out);
            return wh_err_prefix(err, "cannot list %ss: ", lists[i].r->kind);
        }
    }
    out->index = json_object();
    for (size_t i = 0; i < sizeof(indexed) / sizeof(indexed[0]); i++) {
        const json_t *items = *(json_t **)((char *)out + indexed[i].off);
        size_t j;
        json_t *it;
        json_array_foreach(items, j, it)
        {
            wh_buf key = WH_BUF_INIT;
            wh_buf_printf(&key, "%s/%s/%s", indexed[i].kind, meta_str(it, "namespace"), meta_str(it, "name"));
            json_object_set(out->index, key.data, it);
            wh_buf_free(&key);
        }
    }
    return WH_OK;
}

void inv_free(inv_cluster *cl)
{
    json_decref(cl->mwcs);
    json_decref(cl->namespaces);
    json_decref(cl->pods);
    json_decref(cl->replicasets);
    json_decref(cl->deployments);
    json_decref(cl->statefulsets);
    json_decref(cl->daemonsets);
    json_decref(cl->configmaps);
    json_decref(cl->services);
    json_decref(cl->index);
    memset(cl, 0, sizeof(*cl));
}

static int has_proxy_container(const json_t *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const json_t *spec = json_object_get(pod, "spec"), *ctr;
    size_t i;

    for (size_t l = 0; l < 2; l++)
        json_array_foreach(json_object_get(spec, lists[l]), i, ctr)
        {
            const char *name = json_string_value(json_object_get(ctr, "name"));
            if (name != NULL && strcmp(name, "istio-proxy") == 0)
                return 1;
        }
    return 0;
}

int inv_pod_revision(const json_t *pod, char *rev, size_t n)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *status = json_string_value(json_object_get(json_object_get(meta, "annotations"), STATUS_ANNOTATION));
    const char *label = json_string_value(json_object_get(json_object_get(meta, "labels"), REV_LABEL));
    json_t *parsed = status != NULL ? json_loads(status, 0, NULL) : NULL;
    const char *from_status = json_string_value(json_object_get(parsed, "revision"));
    int yes = status != NULL || has_proxy_container(pod);

    if (yes)
        snprintf(rev, n, "%s",
                 from_status != NULL && from_status[0] != '\0' ? from_status
                 : label != NULL && label[0] != '\0'           ? label
                                                               : TAG_DEFAULT);
    json_decref(parsed);
    return yes;
}

/* The controller ownerReference of `obj` (the first one when none says controller). */
static const json_t *controller_ref(const json_t *obj)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
    {
        if (json_is_true(json_object_get(ref, "controller")))
            return ref;
    }
    return json_array_get(refs, 0);
}

static const json_t *lookup(const inv_cluster *cl, const char *kind, const char *ns, const char *name)
{
    wh_buf key = WH_BUF_INIT;
    const json_t *o;

    wh_buf_printf(&key, "%s/%s/%s", kind, ns, name);
    o = json_object_get(cl->index, key.data);
    wh_buf_free(&key);
    return o;
}

const json_t *inv_pod_owner(const inv_cluster *cl, const json_t *pod, char *owner, size_t n)
{
    const json_t *ref = controller_ref(pod), *rs, *rsref, *w;
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *ns = meta_str(pod, "namespace");

    owner[0] = '\0';
    if (kind == NULL || name == NULL)
        return NULL;
    snprintf(owner, n, "%s/%s", kind, name);
    if (strcmp(kind, "ReplicaSet") == 0) {
        if ((rs = lookup(cl, "ReplicaSet", ns, name)) == NULL)
            return NULL;
        rsref = controller_ref(rs);
        kind = json_string_value(json_object_get(rsref, "kind"));
        name = json_string_value(json_object_get(rsref, "name"));
        if (kind == NULL || name == NULL)
            return rs; /* a ReplicaSet of its own */
        snprintf(owner, n, "%s/%s", kind, name);
        w = lookup(cl, kind, ns, name);
        return w != NULL ? w : rs;
    }
    return lookup(cl, kind, ns, name);
}

const json_t *inv_pod_template_labels(const json_t *workload, const json_t *pod)
{
    const json_t *tmpl = json_object_get(json_object_get(json_object_get(workload, "spec"), "template"), "metadata");

    if (workload != NULL && tmpl != NULL)
        return json_object_get(tmpl, "labels");
    return json_object_get(json_object_get(pod, "metadata"), "labels");
}

const json_t *inv_namespace_labels(const inv_cluster *cl, const char *name)
{
    size_t i;
    json_t *ns;

    json_array_foreach(cl->namespaces, i, ns)
    {
        if (strcmp(meta_str(ns, "name"), name) == 0)
            return json_object_get(json_object_get(ns, "metadata"), "labels");
    }
    return NULL;
}

/* ---- building --------------------------------------------------------------- */

static json_t *revision(json_t *revs, const char *name)
{
    json_t *r = json_object_get(revs, name);

    if (r == NULL) {
        r = json_pack("{s:s, s:s, s:s, s:[], s:[], s:[], s:i, s:[]}", "name", name, "version", "", "servedBy", "nobody",
                      "webhooks", "tags", "namespaces", "pods", 0, "configMaps");
        json_object_set_new(revs, name, r);
    }
    return r;
}

static void add_unique(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(arr, i, v)
    {
        if (strcmp(json_string_value(v), s) == 0)
            return;
    }
    json_array_append_new(arr, json_string(s));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static void sort_strings(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v;

    if (n < 2)
        return;
    v = wh_calloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), cmp_str);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

static void set_version(json_t *r, const char *v)
{
    if (v != NULL && v[0] != '\0' && json_string_value(json_object_get(r, "version"))[0] == '\0')
        json_object_set_new(r, "version", json_string(v));
}

/* istio-sidecar-injector[-<rev>]: the revision and its release (cluster.md §1). */
static void add_configmaps(const inv_cluster *cl, json_t *revs)
{
    size_t i;
    json_t *cm;

    json_array_foreach(cl->configmaps, i, cm)
    {
        const char *name = meta_str(cm, "name"), *rev = diag_label(cm, REV_LABEL);
        const char *values = json_string_value(json_object_get(json_object_get(cm, "data"), "values"));
        size_t plen = strlen(INJECTOR_CM);
        json_t *r, *parsed;
        if (strncmp(name, INJECTOR_CM, plen) != 0 || (name[plen] != '\0' && name[plen] != '-'))
            continue;
        if (rev == NULL || rev[0] == '\0')
            rev = name[plen] == '-' ? name + plen + 1 : TAG_DEFAULT;
        r = revision(revs, rev);
        add_unique(json_object_get(r, "configMaps"), name);
        set_version(r, diag_label(cm, "app.kubernetes.io/version"));
        parsed = values != NULL ? json_loads(values, 0, NULL) : NULL;
        set_version(r, json_string_value(json_object_get(json_object_get(parsed, "global"), "tag")));
        json_decref(parsed);
    }
}

static int has_injector(const json_t *mwc)
{
    size_t i;
    json_t *w;

    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        if (diag_is_injector(w))
            return 1;
    }
    return 0;
}

static void add_webhooks(const inv_cluster *cl, json_t *revs)
{
    size_t i;
    json_t *mwc, *svc;

    json_array_foreach(cl->mwcs, i, mwc)
    {
        const char *rev = diag_label(mwc, REV_LABEL), *tag = diag_label(mwc, TAG_LABEL);
        json_t *r;
        if (rev == NULL || !has_injector(mwc))
            continue;
        r = revision(revs, rev);
        if (tag != NULL) {
            add_unique(json_object_get(r, "tags"), tag);
            continue;
        }
        add_unique(json_object_get(r, "webhooks"), diag_name(mwc));
        if (tag_is_deactivated(mwc))
            continue;
        if (diag_is_webhookd(mwc)) {
            json_object_set_new(r, "servedBy", json_string("webhookd"));
        } else {
            if (strcmp(json_string_value(json_object_get(r, "servedBy")), "nobody") == 0)
                json_object_set_new(r, "servedBy", json_string("istiod"));
            set_version(r, diag_label(mwc, "app.kubernetes.io/version"));
        }
    }
    json_array_foreach(cl->services, i, svc)
    {
        const char *rev = diag_label(svc, REV_LABEL), *tag = diag_label(svc, TAG_LABEL);
        if (rev != NULL && tag != NULL)
            add_unique(json_object_get(revision(revs, rev), "tags"), tag);
    }
}

static void add_namespaces(const inv_cluster *cl, const char *only_ns, json_t *revs)
{
    json_t *none = json_object(), *ns;
    size_t i;

    json_array_foreach(cl->namespaces, i, ns)
    {
        const char *rev;
        if (only_ns != NULL && strcmp(meta_str(ns, "name"), only_ns) != 0)
            continue;
        rev = diag_injecting_revision(cl->mwcs, json_object_get(json_object_get(ns, "metadata"), "labels"), none, NULL,
                                      NULL);
        if (rev != NULL)
            add_unique(json_object_get(revision(revs, rev), "namespaces"), meta_str(ns, "name"));
    }
    json_decref(none);
}

int inv_pod_done(const json_t *pod)
{
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL ||
           (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0));
}

static void add_pods(const inv_cluster *cl, const char *only_ns, json_t *revs, json_t *restart)
{
    size_t i;
    json_t *pod;

    json_array_foreach(cl->pods, i, pod)
    {
        char running[256], owner[512];
        const json_t *workload;
        const char *ns = meta_str(pod, "namespace"), *selected;
        json_t *r;
        if (inv_pod_done(pod) || (only_ns != NULL && strcmp(ns, only_ns) != 0) ||
            !inv_pod_revision(pod, running, sizeof(running)))
            continue;
        r = revision(revs, running);
        json_object_set_new(r, "pods", json_integer(json_integer_value(json_object_get(r, "pods")) + 1));
        workload = inv_pod_owner(cl, pod, owner, sizeof(owner));
        selected = diag_injecting_revision(cl->mwcs, inv_namespace_labels(cl, ns),
                                           inv_pod_template_labels(workload, pod), NULL, NULL);
        if (selected != NULL && strcmp(selected, running) != 0)
            json_array_append_new(restart,
                                  json_pack("{s:s, s:s, s:s, s:s, s:s}", "namespace", ns, "pod", meta_str(pod, "name"),
                                            "owner", owner, "running", running, "selected", selected));
    }
}

json_t *inv_build(const inv_cluster *cl, const char *only_ns)
{
    json_t *revs = json_object(), *restart = json_array(), *names = json_array(), *out, *list = json_array(), *r;
    const char *name;
    size_t i;

    add_configmaps(cl, revs);
    add_webhooks(cl, revs);
    add_namespaces(cl, only_ns, revs);
    add_pods(cl, only_ns, revs, restart);
    json_object_foreach(revs, name, r)
    {
        json_array_append_new(names, json_string(name));
        sort_strings(json_object_get(r, "webhooks"));
        sort_strings(json_object_get(r, "tags"));
        sort_strings(json_object_get(r, "namespaces"));
        sort_strings(json_object_get(r, "configMaps"));
    }
    sort_strings(names);
    for (i = 0; i < json_array_size(names); i++)
        json_array_append(list, json_object_get(revs, json_string_value(json_array_get(names, i))));
    out = json_pack("{s:o, s:o}", "revisions", list, "needsRestart", restart);
    json_decref(names);
    json_decref(revs);
    return out;
}

const json_t *inv_find_revision(const json_t *inventory, const char *name)
{
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(inventory, "revisions"), i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
            return r;
    }
    return NULL;
}
