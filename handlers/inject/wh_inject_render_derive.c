/*
 * wh_inject_render_derive.c - inputs the injection templates need that istiod
 * derives from the pod before rendering (CONTRIBUTING.md, stage 3): the owning workload
 * (DeploymentMeta/TypeMeta), proxy images, OpenShift UID/GID, removal of a
 * previous injection, and the list of templates to render.
 */
#include "wh_inject_render_int.h"
#include "wh_inject_render_funcs.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wh_inject_owner_clear(wh_inject_owner *o)
{
    free(o->name);
    free(o->namespace_);
    free(o->kind);
    free(o->api_version);
    memset(o, 0, sizeof(*o));
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return b <= a && memcmp(s + a - b, suffix, b) == 0;
}

/* The name without "-<suffix>" when it ends that way (strings.TrimSuffix). */
static char *trim_dash_suffix(const char *name, const char *suffix)
{
    size_t a = strlen(name), b = strlen(suffix);
    if (b + 1 <= a && name[a - b - 1] == '-' && memcmp(name + a - b, suffix, b) == 0)
        return wh_strndup(name, a - b - 1);
    return wh_strdup(name);
}

/* ^(.+)-\d{8,10}$ -> length of group 1, or 0. */
static size_t cronjob_prefix(const char *name)
{
    size_t n = strlen(name), d = 0;

    while (d < n && isdigit((unsigned char)name[n - 1 - d]))
        d++;
    /* The regexp is greedy on (.+): it takes the last 8-10 digits. */
    if (d < 8)
        return 0;
    for (size_t take = 8; take <= 10 && take <= d; take++) {
        size_t dash = n - take - 1;
        if (take < n && name[dash] == '-' && dash >= 1)
            return dash;
    }
    return 0;
}

void wh_inject_deploy_meta_of(const json_t *pod, wh_inject_owner *out)
{
    const json_t *meta = json_object_get(pod, "metadata"), *labels = json_object_get(meta, "labels"), *ref, *r;
    const char *pod_name = wh_inject_jstr(meta, "name"), *gen = wh_inject_jstr(meta, "generateName");
    const char *ns = wh_inject_jstr(meta, "namespace");
    char *name = NULL, *kind = NULL, *api = NULL;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (pod_name == NULL)
        pod_name = "";
    name = wh_strdup(pod_name);
    kind = wh_strdup("Pod");
    api = wh_strdup("v1");
    ref = NULL;
    if (gen != NULL && gen[0] != '\0') {
        json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
        {
            if (json_is_true(json_object_get(r, "controller"))) {
                ref = r;
                break;
            }
        }
    }
    if (ref != NULL && name && kind && api) {
        const char *rk = wh_inject_jstr(ref, "kind"), *rn = wh_inject_jstr(ref, "name"),
                   *ra = wh_inject_jstr(ref, "apiVersion");
        const char *hash = wh_inject_jstr(labels, "pod-template-hash"),
                   *rhash = wh_inject_jstr(labels, "rollouts-pod-template-hash"),
                   *dc = wh_inject_jstr(labels, "deploymentconfig");
        free(kind);
        free(api);
        free(name);
        kind = wh_strdup(rk ? rk : "");
        api = wh_strdup(ra ? ra : "");
        name = wh_strdup(rn ? rn : "");
        if (kind && name && api) {
            if (strcmp(kind, "ReplicaSet") == 0 && hash && hash[0] && ends_with(name, hash)) {
                char *t = trim_dash_suffix(name, hash);
                free(name);
                name = t;
                free(kind);
                kind = wh_strdup("Deployment");
            } else if (strcmp(kind, "ReplicaSet") == 0 && rhash && rhash[0] && ends_with(name, rhash)) {
                char *t = trim_dash_suffix(name, rhash);
                free(name);
                name = t;
                free(kind);
                kind = wh_strdup("Rollout");
                free(api);
                api = wh_strdup("v1alpha1");
            } else if (strcmp(kind, "ReplicationController") == 0 && dc && dc[0]) {
                free(name);
                name = wh_strdup(dc);
                free(kind);
                kind = wh_strdup("DeploymentConfig");
            } else if (strcmp(kind, "Job") == 0) {
                size_t p = cronjob_prefix(name);
                if (p > 0) {
                    char *t = wh_strndup(name, p);
                    free(name);
                    name = t;
                    free(kind);
                    kind = wh_strdup("CronJob");
                    free(api);
                    api = wh_strdup("batch/v1");
                }
            }
        }
    }
    if (name != NULL && name[0] == '\0') {
        free(name);
        name = wh_strdup(pod_name);
    }
    out->name = name;
    out->kind = kind;
    out->api_version = api;
    out->namespace_ = wh_strdup(ns ? ns : "");
}

/* global.tag printed with %v. */
static void tag_text(const json_t *tag, char *buf, size_t size)
{
    if (json_is_string(tag))
        snprintf(buf, size, "%s", json_string_value(tag));
    else if (json_is_integer(tag))
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(tag));
    else if (json_is_real(tag)) {
        wh_buf text = WH_BUF_INIT;
        wh_go_float(&text, json_real_value(tag), 'g', -1);
        snprintf(buf, size, "%s", text.data);
        wh_buf_free(&text);
    } else if (json_is_boolean(tag))
        snprintf(buf, size, "%s", json_is_true(tag) ? "true" : "false");
    else if (tag == NULL || json_is_null(tag))
        snprintf(buf, size, "%s", tag ? "<nil>" : "");
    else
        buf[0] = '\0';
}

char *wh_inject_image(const json_t *values, const char *name_key, const char *image_type, const json_t *annotations,
                      const wh_inject_release *release)
{
    const json_t *global = json_object_get(values, "global");
    const char *name = wh_inject_jstr(json_object_get(global, name_key), "image"), *hub = wh_inject_jstr(global, "hub");
    const char *type = image_type, *ann;
    char tag[256];
    wh_buf b = WH_BUF_INIT;
    size_t tl;

    if (name == NULL || name[0] == '\0')
        name = "proxyv2";
    if (type == NULL ? wh_inject_release_has(release, WH_REL_PROXY_IMAGE_VARIANT)
                     : type[0] == '\0' && wh_inject_release_has(release, WH_REL_VARIANT_FILLS_EMPTY_IMAGE_TYPE))
        type = wh_inject_jstr(global, "variant");
    if ((ann = wh_inject_jstr(annotations, "sidecar.istio.io/proxyImageType")) != NULL)
        type = ann;
    tag_text(json_object_get(global, "tag"), tag, sizeof(tag));
    if (type != NULL && type[0] != '\0') {
        tl = strlen(tag);
        if (tl >= 11 && strcmp(tag + tl - 11, "-distroless") == 0)
            tag[tl - 11] = '\0';
        else if (tl >= 6 && strcmp(tag + tl - 6, "-debug") == 0)
            tag[tl - 6] = '\0';
        if (strcmp(type, "default") != 0) {
            size_t n = strlen(tag);
            snprintf(tag + n, sizeof(tag) - n, "-%s", type);
        }
    }
    /* HUB/NAME:TAG (appends: this runs twice per review) */
    wh_buf_puts(&b, hub ? hub : "");
    wh_buf_putc(&b, '/');
    wh_buf_puts(&b, name);
    wh_buf_putc(&b, ':');
    wh_buf_puts(&b, tag);
    return wh_buf_steal(&b, NULL);
}

char *wh_inject_proxy_image(const json_t *values, const json_t *pc, const json_t *annotations,
                            const wh_inject_release *release)
{
    const json_t *image = json_object_get(pc, "image");
    const char *type = wh_inject_jstr(image, "imageType");

    return wh_inject_image(values, "proxy", image == NULL ? NULL : type ? type : "", annotations, release);
}

void wh_inject_revision_images(const json_t *values, const json_t *pc, const wh_inject_release *release,
                               char **proxy_image, char **proxy_init_image)
{
    *proxy_image = wh_inject_proxy_image(values, pc, NULL, release);
    *proxy_init_image = wh_inject_image(values, "proxy_init", NULL, NULL, release);
}

/* The largest id of "start/size" or "start-end" (first block of a comma
 * list); -1 when it does not parse. */
static long long range_max(const char *s)
{
    char *end;
    long long start, n;

    if (s == NULL)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    start = strtoll(s, &end, 10);
    if (end == s || start < 0)
        return -1;
    if (*end == '/') {
        const char *p = end + 1;
        n = strtoll(p, &end, 10);
        if (end == p || n <= 0)
            return -1;
        return start + n - 1;
    }
    if (*end == '-') {
        const char *p = end + 1;
        n = strtoll(p, &end, 10);
        if (end == p || n < start)
            return -1;
        return n;
    }
    return -1;
}

void wh_inject_openshift_ids(const json_t *ns, long long *uid, long long *gid)
{
    const json_t *ann = wh_inject_jpath(ns, "metadata", "annotations", NULL);
    const char *uids = wh_inject_jstr(ann, "openshift.io/sa.scc.uid-range"),
               *groups = wh_inject_jstr(ann, "openshift.io/sa.scc.supplemental-groups");
    long long u = range_max(uids), g = range_max(groups != NULL ? groups : uids);

    if (u >= 0)
        *uid = u;
    if (g >= 0)
        *gid = g;
    else if (groups != NULL && (g = range_max(uids)) >= 0)
        *gid = g;
}

/* Remove every entry named `name` from the container list `list`. */
static void remove_named(json_t *list, const char *name)
{
    for (size_t i = 0; i < json_array_size(list);) {
        const char *n = wh_inject_jstr(json_array_get(list, i), "name");
        if (n != NULL && strcmp(n, name) == 0)
            json_array_remove(list, i);
        else
            i++;
    }
}

static int has_named(const json_t *list, const char *name)
{
    size_t i;
    json_t *c;

    json_array_foreach((json_t *)list, i, c)
    {
        const char *n = wh_inject_jstr(c, "name");
        if (n != NULL && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/* json.Unmarshal of a sidecar.istio.io/status value into istiod's
 * SidecarInjectionStatus: 0 with the container and init-container names it
 * lists (either may be NULL), or -1 where Go fails and istiod strips nothing.
 * Keys match the fields whatever their case, a later key replacing an
 * earlier; null is an empty status, a null name ""; a field of the wrong type
 * (a string for a list, a number for a name) fails the whole. */
static int injection_status(const char *text, json_t **containers, json_t **init)
{
    static const char *const fields[] = {"containers", "initContainers", "volumes", "imagePullSecrets", "revision"};
    json_t *st = json_loads(text, JSON_DECODE_ANY, NULL), *v, *item;
    int rc = st != NULL && (json_is_object(st) || json_is_null(st)) ? 0 : -1;

    *containers = *init = NULL;
    for (void *it = json_object_iter(st); it != NULL && rc == 0; it = json_object_iter_next(st, it)) {
        const char *key = json_object_iter_key(it);
        size_t f = 0, i;
        v = json_object_iter_value(it);
        while (f < 5 && !(strlen(fields[f]) == json_object_iter_key_len(it) && strcasecmp(key, fields[f]) == 0))
            f++;
        if (f == 4 && !json_is_string(v) && !json_is_null(v))
            rc = -1;
        if (f >= 4)
            continue;
        if (!json_is_array(v) && !json_is_null(v))
            rc = -1;
        json_array_foreach(v, i, item) if (!json_is_string(item) && !json_is_null(item)) rc = -1;
        if (f < 2) {
            json_t **list = f == 0 ? containers : init;
            json_decref(*list);
            *list = json_incref(json_is_array(v) ? v : NULL);
        }
    }
    json_decref(st);
    if (rc != 0) {
        json_decref(*containers);
        json_decref(*init);
        *containers = *init = NULL;
    }
    return rc;
}

static void remove_listed(json_t *spec, const char *key, const json_t *names)
{
    size_t i;
    json_t *c;

    json_array_foreach((json_t *)names, i, c)
        remove_named(json_object_get(spec, key), json_is_string(c) ? json_string_value(c) : "");
}

json_t *wh_inject_strip(const json_t *pod, int status_port)
{
    const json_t *ann = wh_inject_jpath(pod, "metadata", "annotations", NULL);
    const char *status = wh_inject_jstr(ann, "sidecar.istio.io/status"),
               *overrides = wh_inject_jstr(ann, "proxy.istio.io/overrides"), *port;
    json_t *copy, *spec, *meta_ann, *list, *c, *ov, *names = NULL, *init_names = NULL;
    int strip = status != NULL && injection_status(status, &names, &init_names) == 0;
    char target[16];
    size_t i;

    if (!strip && overrides == NULL)
        return json_incref((json_t *)pod);
    copy = json_deep_copy(pod);
    spec = json_object_get(copy, "spec");
    meta_ann = (json_t *)wh_inject_jpath(copy, "metadata", "annotations", NULL);
    if (strip) {
        remove_listed(spec, "containers", names);
        remove_listed(spec, "initContainers", init_names);
        json_decref(names);
        json_decref(init_names);
        snprintf(target, sizeof(target), "%d", status_port);
        if ((port = wh_inject_jstr(meta_ann, "prometheus.io/port")) != NULL && strcmp(port, target) == 0) {
            json_object_del(meta_ann, "prometheus.io/scrape");
            json_object_del(meta_ann, "prometheus.io/port");
            json_object_del(meta_ann, "prometheus.io/path");
        }
        json_object_del(meta_ann, "sidecar.istio.io/status");
    }

    /* Containers the user had overridden come back (they were recorded),
     * previous status or not. */
    if (overrides != NULL && (ov = json_loads(overrides, 0, NULL)) != NULL) {
        static const char *const lists[] = {"containers", "initContainers"};
        for (size_t l = 0; l < 2; l++) {
            json_array_foreach(json_object_get(ov, lists[l]), i, c)
            {
                const char *n = wh_inject_jstr(c, "name");
                if (n == NULL || !json_is_object(spec))
                    continue;
                if ((list = json_object_get(spec, lists[l])) == NULL) {
                    list = json_array();
                    json_object_set_new(spec, lists[l], list);
                }
                if (!has_named(list, n))
                    json_array_append(list, c);
            }
        }
        json_decref(ov);
    }
    return copy;
}

wh_code wh_inject_select_templates(const wh_inject_revision *rev, const json_t *annotations, json_t **out, wh_err *err)
{
    const char *ann = wh_inject_jstr(annotations, "inject.istio.io/templates");
    json_t *names = json_array(), *res = json_array(), *n;
    size_t i;

    *out = NULL;
    if (ann != NULL) {
        for (const char *s = ann;;) {
            const char *c = strchr(s, ','), *name = s;
            size_t len = (size_t)((c ? c : s + strlen(s)) - s);
            wh_go_trim_space(&name, &len);
            /* cut at ',' and whole space runes in a JSON string: still UTF-8 */
            json_array_append_new(names, json_stringn_nocheck(name, len));
            if (!c)
                break;
            s = c + 1;
        }
    } else {
        json_array_extend(names, rev->default_templates);
    }
    json_array_foreach(names, i, n)
    {
        const json_t *alias = json_object_get(rev->aliases, json_string_value(n));
        if (json_is_array(alias))
            json_array_extend(res, (json_t *)alias);
        else
            json_array_append(res, n);
    }
    json_array_foreach(res, i, n)
    {
        if (!wh_inject_revision_has_template(rev, json_string_value(n))) {
            wh_buf have = WH_BUF_INIT, quoted = WH_BUF_INIT;
            size_t k;
            json_t *t;
            json_array_foreach(rev->template_names, k, t)
                wh_buf_printf(&have, "%s%s", k ? ", " : "", json_string_value(t));
            wh_go_quote(&quoted, json_string_value(n), json_string_length(n), '"', 0); /* Go's %q */
            wh_err_set(err, WH_E_NOTFOUND, "requested template %s not found; have %s", quoted.data,
                       have.data ? have.data : "");
            wh_buf_free(&have);
            wh_buf_free(&quoted);
            json_decref(names);
            json_decref(res);
            return WH_E_NOTFOUND;
        }
    }
    json_decref(names);
    *out = res;
    return WH_OK;
}
