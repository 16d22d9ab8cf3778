/*
 * wh_inject_render.c - stage 3 of injection (see wh_inject_render.h; spec
 * 3.1 steps 1-6a): derive the template inputs from the pod and the
 * revision, validate the annotations, strip a previous injection, render
 * every selected template and parse each result into a JSON document for
 * the shape stage.
 */
#include "wh_inject_render.h"
#include "wh_inject_render_int.h"
#include "wh_inject_render_funcs.h"
#include "wh_inject_proxyconfig.h"

#include "wh_inject_pod.h"
#include "wh_inject_quantity.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"
#include "wh_alloc.h"

#include <stdlib.h>
#include <string.h>

void wh_inject_rendered_clear(wh_inject_rendered *out)
{
    for (size_t i = 0; out->names != NULL && i < out->n; i++)
        free(out->names[i]);
    free(out->names);
    /* a request's trees: reclaimed with its arena scope (no walk) */
    wh_json_arena_drop(out->overlays);
    wh_json_arena_drop(out->merge_pod);
    wh_json_arena_drop(out->template_pod);
    wh_json_arena_drop(out->proxy_config);
    wh_json_arena_drop(out->proxy_envs);
    free(out->network);
    free(out->revision);
    memset(out, 0, sizeof(*out));
}

/* OpenShift (3.8.4; WH_REL_OPENSHIFT_PROXY_UID_RESET: istiod's webhook from
 * 1.24, and from 1.23.1 by backport, wh_inject_release.c): a user istio-proxy running as the "app user" gets its
 * runAsUser/runAsGroup cleared so that the namespace's UID applies. */
static json_t *openshift_reset(const json_t *pod)
{
    const json_t *containers = wh_inject_jpath(pod, "spec", "containers", NULL), *c;
    json_t *copy, *sc;
    long long app_user = 0;
    size_t i, proxy = (size_t)-1;

    json_array_foreach((json_t *)containers, i, c)
    {
        const char *n = wh_inject_jstr(c, "name");
        const json_t *u = wh_inject_jpath(c, "securityContext", "runAsUser", NULL);
        if (n != NULL && strcmp(n, "istio-proxy") == 0) {
            proxy = i;
            continue;
        }
        if (n != NULL && (strcmp(n, "istio-init") == 0 || strcmp(n, "istio-validation") == 0))
            continue;
        if (json_is_integer(u))
            app_user = json_integer_value(u);
    }
    if (proxy == (size_t)-1)
        return json_incref((json_t *)pod);
    c = json_array_get(containers, proxy);
    sc = json_object_get(c, "securityContext");
    if (!json_is_object(sc) || json_integer_value(json_object_get(sc, "runAsUser")) != app_user)
        return json_incref((json_t *)pod);
    copy = json_deep_copy(pod);
    sc = (json_t *)wh_inject_jpath(json_array_get(wh_inject_jpath(copy, "spec", "containers", NULL), proxy),
                                   "securityContext", NULL);
    json_object_del(sc, "runAsUser");
    json_object_del(sc, "runAsGroup");
    return copy;
}

/* Cluster and network envs (3.1 step 3) on top of the URL's. */
static void proxy_envs(const wh_inject_input *in, const json_t *labels, json_t **envs, char **network)
{
    const json_t *global = json_object_get(in->rev->values, "global");
    const char *cluster = wh_inject_jstr(json_object_get(global, "multiCluster"), "clusterName");
    const char *vnet = wh_inject_jstr(global, "network"), *lnet = wh_inject_jstr(labels, "topology.istio.io/network");
    const char *net;
    json_t *e = in->url_envs != NULL ? json_deep_copy(in->url_envs) : json_object();

    *network = NULL;
    if (json_object_get(e, "ISTIO_META_CLUSTER_ID") == NULL && cluster != NULL && cluster[0] != '\0')
        json_object_set_new(e, "ISTIO_META_CLUSTER_ID", json_string(cluster));
    if (lnet != NULL && lnet[0] != '\0')
        json_object_set_new(e, "ISTIO_META_NETWORK", json_string(lnet));
    else if (json_object_get(e, "ISTIO_META_NETWORK") == NULL && vnet != NULL && vnet[0] != '\0')
        json_object_set_new(e, "ISTIO_META_NETWORK", json_string(vnet));
    net = wh_inject_jstr(e, "ISTIO_META_NETWORK");
    if (net != NULL && net[0] != '\0')
        *network = wh_strdup(net);
    *envs = e;
}

/* The proxy concurrency older templates print (`.EstimatedConcurrency`), as
 * istiod sized it: ProxyConfig.concurrency when positive; when it is set to
 * 0, from the CPU limit annotation, else the CPU request annotation, else
 * the values' proxy resources (limit, then request), in whole cores rounded
 * up; 2 otherwise (unset, or nothing parses). */
static long long estimate_concurrency(const json_t *pc, const json_t *annotations, const json_t *values)
{
    const json_t *c = json_object_get(pc, "concurrency"), *res;
    const char *limit = wh_inject_jstr(annotations, "sidecar.istio.io/proxyCPULimit");
    const char *request = wh_inject_jstr(annotations, "sidecar.istio.io/proxyCPU");
    long long n;

    if (c == NULL || json_is_null(c))
        return 2;
    if (json_is_number(c) && json_number_value(c) > 0)
        return (long long)json_number_value(c);
    if (limit != NULL)
        return wh_inject_quantity_cores(limit, &n) == WH_OK ? n : 2;
    if (request != NULL)
        return wh_inject_quantity_cores(request, &n) == WH_OK ? n : 2;
    res = wh_inject_jpath(values, "global", "proxy", "resources", NULL);
    if (wh_inject_quantity_cores(wh_inject_jstr(json_object_get(res, "limits"), "cpu"), &n) == WH_OK ||
        wh_inject_quantity_cores(wh_inject_jstr(json_object_get(res, "requests"), "cpu"), &n) == WH_OK)
        return n;
    return 2;
}

wh_code wh_inject_render(const wh_inject_input *in, wh_inject_rendered *out, wh_err *err)
{
    const wh_inject_revision *rev = in->rev;
    const json_t *meta, *annotations, *labels, *pca, *hold;
    const char *mode_ann, *native_ann, *node, *revision;
    wh_inject_settings settings; /* what the revision's own istiod ran with (its PLATFORM) */
    json_t *names = NULL, *pc = NULL, *pc_doc = NULL, *doc = NULL;
    wh_inject_owner owner = {0};
    char *bad = NULL, *proxy_image = NULL, *init_image = NULL;
    size_t bad_len = 0;
    wh_buf text = WH_BUF_INIT;
    wh_tmpl_runs runs = {0}; /* where the render wrote constant text whose YAML was read once */
    wh_yaml_at *at = NULL;
    size_t at_cap = 0;
    wh_inject_data data;
    wh_code rc;
    size_t i;
    int native_global;

    memset(out, 0, sizeof(*out));
    memset(&data, 0, sizeof(data));
    if (rev == NULL || !json_is_object(in->pod))
        return wh_err_set(err, WH_E_INVALID, "injection needs a revision and a pod object");
    out->proxy_uid = out->proxy_gid = 1337;

    /* The pod as istiod's webhook works on it: on OpenShift it reads the
     * namespace's UID/GID and may reset the proxy's user (istioctl
     * kube-inject does neither). */
    wh_inject_settings_for_revision(in->settings, rev->values, &settings);
    if (!in->kube_inject && strcmp(wh_inject_settings_platform(&settings), "openshift") == 0) {
        if (in->namespace_obj != NULL)
            wh_inject_openshift_ids(in->namespace_obj, &out->proxy_uid, &out->proxy_gid);
        out->merge_pod = wh_inject_release_has(&rev->release, WH_REL_OPENSHIFT_PROXY_UID_RESET)
                             ? openshift_reset(in->pod)
                             : json_incref((json_t *)in->pod);
    } else {
        out->merge_pod = json_incref((json_t *)in->pod);
    }
    meta = json_object_get(out->merge_pod, "metadata");
    annotations = json_object_get(meta, "annotations");
    labels = json_object_get(meta, "labels");

    /* 2. annotations */
    if ((bad = wh_inject_validate_annotations(annotations, &rev->release, &bad_len)) != NULL) {
        rc = wh_err_set_bytes(err, WH_E_INVALID, bad, bad_len);
        goto fail;
    }

    /* 1. proxy config: mesh defaultConfig, ProxyConfig resources and the
     * pod's annotation.  With neither it is the revision's own object,
     * shared: nothing changes it after this point (and jansson's reference
     * counts are atomic). */
    pca = json_object_get(annotations, "proxy.istio.io/config");
    if (pca != NULL && json_is_string(pca) &&
        (rc = wh_yaml_load(json_string_value(pca), json_string_length(pca), &pc_doc, err)) != WH_OK) {
        wh_err_prefix(err, "invalid value for annotation 'proxy.istio.io/config'");
        goto fail;
    }
    if ((rc = wh_inject_effective_proxy_config(
             rev->mesh, in->kube_inject ? json_object_get(rev->mesh, "defaultConfig") : rev->webhook_pc,
             in->proxyconfigs, out->merge_pod, json_is_null(pc_doc) ? NULL : pc_doc, !in->kube_inject, &rev->release,
             &pc, err)) != WH_OK)
        goto fail;

    /* deploy meta */
    if (in->deploy != NULL) {
        owner.name = wh_strdup(in->deploy->name ? in->deploy->name : "");
        owner.namespace_ = wh_strdup(in->deploy->namespace_ ? in->deploy->namespace_ : "");
        owner.kind = wh_strdup(in->deploy->kind ? in->deploy->kind : "");
        owner.api_version = wh_strdup(in->deploy->api_version ? in->deploy->api_version : "");
    } else {
        wh_inject_deploy_meta_of(out->merge_pod, &owner);
    }

    /* native sidecars: global flag, then the per-pod annotation (from 1.24) */
    node = wh_inject_jstr(json_object_get(out->merge_pod, "spec"), "nodeName");
    native_global = wh_inject_settings_native(&settings, node, &rev->release);
    native_ann = wh_inject_release_has(&rev->release, WH_REL_NATIVE_SIDECAR_ANNOTATION)
                     ? wh_inject_jstr(annotations, "sidecar.istio.io/nativeSidecar")
                     : NULL;
    out->native = native_global;
    if (native_ann != NULL && strcmp(native_ann, "true") == 0)
        out->native = 1;
    else if (native_ann != NULL && strcmp(native_ann, "false") == 0)
        out->native = 0;

    /* 3. cluster / network */
    proxy_envs(in, labels, &out->proxy_envs, &out->network);

    /* 4. strip a previous injection */
    out->template_pod = wh_inject_strip(out->merge_pod, wh_inject_revision_status_port(rev));

    /* 5. templates */
    if ((rc = wh_inject_select_templates(rev, annotations, &names, err)) != WH_OK)
        goto fail;

    /* template data */
    revision = in->revision != NULL ? in->revision : rev->name;
    out->revision = wh_strdup(revision[0] ? revision : "default");
    if (wh_inject_jstr(annotations, "sidecar.istio.io/proxyImageType") == NULL) { /* the revision's, from its load */
        data.proxy_init_image = rev->proxy_init_image;
        if (pc == rev->webhook_pc)
            data.proxy_image = rev->proxy_image;
    }
    if (data.proxy_image == NULL)
        data.proxy_image = proxy_image = wh_inject_proxy_image(rev->values, pc, annotations, &rev->release);
    if (data.proxy_init_image == NULL)
        data.proxy_init_image = init_image =
            wh_inject_image(rev->values, "proxy_init", NULL, annotations, &rev->release);
    data.type_api_version = owner.api_version;
    data.type_kind = owner.kind;
    data.deploy_name = owner.name;
    data.deploy_namespace = owner.namespace_;
    data.object_meta = json_object_get(out->template_pod, "metadata");
    data.spec = json_object_get(out->template_pod, "spec");
    data.proxy_config = pc;
    data.default_pc = json_object_get(rev->mesh, "defaultConfig");
    data.default_pc_json = rev->default_pc_json;
    data.mesh = rev->mesh;
    data.values = rev->values;
    data.revision = revision;
    data.native = native_global;
    data.proxy_uid = out->proxy_uid;
    data.proxy_gid = out->proxy_gid;
    data.inbound_mode = wh_inject_inbound_mode(rev->mesh);
    data.compliance = wh_inject_settings_compliance(&settings);
    data.concurrency = estimate_concurrency(pc, annotations, rev->values);
    data.settings = &settings;
    data.release = &rev->release;

    /* 6a. render and parse each template */
    out->n = json_array_size(names);
    out->names = wh_calloc(out->n + 1, sizeof(*out->names));
    out->overlays = json_array();
    for (i = 0; i < out->n; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        wh_tmpl_opts opts = {0};
        out->names[i] = wh_strdup(name);
        opts.user = &data;
        opts.max_output = 16u << 20;
        opts.runs = &runs;
        runs.n = 0;
        wh_buf_reset(&text);
        if ((rc = wh_tmpl_render(wh_inject_revision_template_pc(rev, name, pc), "inject", wh_inject_data_value(&data),
                                 &opts, &text, err)) != WH_OK) {
            json_decref(data.captured);
            data.captured = NULL;
            goto fail;
        }
        /* A template may hand its overlay over as data (`overlay`), or print
         * JSON (a YAML subset, much cheaper to read than YAML). */
        doc = data.captured;
        data.captured = NULL;
        if (doc == NULL) {
            size_t k = 0;
            while (k < text.len &&
                   (text.data[k] == ' ' || text.data[k] == '\n' || text.data[k] == '\t' || text.data[k] == '\r'))
                k++;
            if (k < text.len && text.data[k] == '{')
                doc = json_loadb(text.data + k, text.len - k, JSON_REJECT_DUPLICATES, NULL);
        }
        if (doc == NULL) {
            if (runs.n > at_cap) {
                at_cap = runs.cap;
                at = wh_realloc(at, at_cap * sizeof(*at));
            }
            for (size_t r = 0; r < runs.n; r++)
                at[r] = (wh_yaml_at){runs.at[r].off, runs.at[r].note};
        }
        if (doc == NULL &&
            (rc = wh_yaml_load_at(text.data ? text.data : "", text.len, at, runs.n, &doc, err)) != WH_OK) {
            wh_err_prefix(err, "template \"%s\" rendered invalid YAML", name);
            goto fail;
        }
        json_array_append_new(out->overlays, doc); /* not NULL: an empty document is JSON null */
        doc = NULL;
    }

    /* what post-processing needs */
    mode_ann = wh_inject_jstr(annotations, "sidecar.istio.io/interceptionMode");
    out->tproxy = strcmp(mode_ann != NULL ? mode_ann : wh_inject_interception_mode(pc), "TPROXY") == 0;
    hold = wh_inject_jpath(rev->values, "global", "proxy", "holdApplicationUntilProxyStarts", NULL);
    out->hold = json_is_true(json_object_get(pc, "holdApplicationUntilProxyStarts")) || json_is_true(hold);
    out->proxy_config = pc;
    pc = NULL;
    rc = WH_OK;
    goto out;
fail:
    wh_inject_rendered_clear(out);
out:
    json_decref(doc);
    json_decref(names);
    json_decref(pc);
    json_decref(pc_doc);
    wh_inject_owner_clear(&owner);
    free(bad);
    free(proxy_image);
    free(init_image);
    wh_buf_free(&text);
    free(runs.at);
    free(at);
    return rc;
}
