/*
 * wh_inject_post.c - overlay merge, user overrides and post-processing
 * (spec 3.1 steps 6-8, 3.7, 3.8, 3.10); see wh_inject_post.h.
 */
#include "wh_inject_post.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_buf.h"
#include "wh_inject_merge.h"

#define PROXY "istio-proxy"
#define INIT "istio-init"
#define VALIDATION "istio-validation"
#define CORE_DUMP "enable-core-dump"
#define A_STATUS "sidecar.istio.io/status"
#define A_OVERRIDES "proxy.istio.io/overrides"

static wh_code nomem(wh_err *err)
{
    return wh_err_set(err, WH_E_NOMEM, "out of memory");
}

int wh_inject_parse_bool(const char *s)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    size_t i;

    if (s == NULL)
        return -1;
    for (i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* ---- small accessors ---- */

static json_t *obj_child(json_t *parent, const char *key, int create)
{
    json_t *v = json_object_get(parent, key);

    if (json_is_object(v) || !create || !json_is_object(parent))
        return json_is_object(v) ? v : NULL;
    v = json_object();
    if (v == NULL || json_object_set_new(parent, key, v) != 0)
        return NULL;
    return v;
}

static json_t *spec_list(const json_t *pod, const char *key)
{
    json_t *l = json_object_get(json_object_get(pod, "spec"), key);
    return json_is_array(l) ? l : NULL;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* First container called `name` in list (may be NULL); *idx its index. */
static json_t *find_named(const json_t *list, const char *name, size_t *idx)
{
    size_t i;

    for (i = 0; i < json_array_size(list); i++) {
        const char *n = str_of(json_array_get(list, i), "name");
        if (n != NULL && strcmp(n, name) == 0) {
            if (idx != NULL)
                *idx = i;
            return json_array_get(list, i);
        }
    }
    return NULL;
}

/* istiod's FindSidecar: istio-proxy in containers, else in initContainers. */
static json_t *find_sidecar(const json_t *pod)
{
    json_t *c = find_named(spec_list(pod, "containers"), PROXY, NULL);
    return c != NULL ? c : find_named(spec_list(pod, "initContainers"), PROXY, NULL);
}

static const char *annotation(const json_t *pod, const char *key)
{
    return str_of(json_object_get(json_object_get(pod, "metadata"), "annotations"), key);
}

static wh_code set_string(json_t *obj, const char *key, const char *value, wh_err *err)
{
    if (obj == NULL || json_object_set_new(obj, key, json_string(value)) != 0)
        return nomem(err);
    return WH_OK;
}

static wh_code set_env(json_t *container, const char *name, const char *value, wh_err *err)
{
    json_t *env = json_object_get(container, "env"), *e;

    if (!json_is_array(env)) {
        if ((env = json_array()) == NULL || json_object_set_new(container, "env", env) != 0)
            return nomem(err);
    }
    if ((e = json_pack("{s:s,s:s}", "name", name, "value", value)) == NULL || json_array_append_new(env, e) != 0)
        return nomem(err);
    return WH_OK;
}

/* ---- step 6 ---- */

static wh_code move_proxy_to_init(json_t *pod, wh_err *err)
{
    json_t *spec = obj_child(pod, "spec", 1), *containers = spec_list(pod, "containers"), *init, *proxy;
    size_t idx;

    if ((proxy = find_named(containers, PROXY, &idx)) == NULL)
        return WH_OK;
    if ((init = spec_list(pod, "initContainers")) == NULL) {
        if ((init = json_array()) == NULL || json_object_set_new(spec, "initContainers", init) != 0)
            return nomem(err);
    }
    if (json_array_append(init, proxy) != 0 || json_array_remove(containers, idx) != 0)
        return nomem(err);
    return WH_OK;
}

wh_code wh_inject_apply_overlays(const json_t *merge_pod, const json_t *overlays, const char *const *names,
                                 int native, json_t **merged_out, json_t **tmpl_out, wh_err *err)
{
    json_t *merged = json_deep_copy(merge_pod), *tmpl = json_object();
    size_t i;
    wh_code rc = WH_OK;

    *merged_out = *tmpl_out = NULL;
    if (merged == NULL || tmpl == NULL) {
        rc = nomem(err);
        goto out;
    }
    if ((rc = wh_inject_go_roundtrip(merged, &wh_inject_type_pod, err)) != WH_OK) {
        wh_err_prefix(err, "could not decode pod");
        goto out;
    }
    for (i = 0; i < json_array_size(overlays); i++) {
        const json_t *overlay = json_array_get(overlays, i);
        const char *name = names != NULL ? names[i] : "?";
        if (!json_is_object(overlay)) {
            rc = wh_err_set(err, WH_E_RENDER,
                            "failed parsing generated injected YAML (check Istio sidecar injector configuration): "
                            "template %s did not render a YAML object",
                            name);
            goto out;
        }
        if ((rc = wh_inject_smp(tmpl, overlay, &wh_inject_type_pod, err)) != WH_OK ||
            (rc = wh_inject_go_roundtrip(tmpl, &wh_inject_type_pod, err)) != WH_OK) {
            wh_err_prefix(err, "failed parsing generated injected YAML (check Istio sidecar injector "
                               "configuration): template %s",
                          name);
            goto out;
        }
        if (native && find_named(spec_list(tmpl, "initContainers"), PROXY, NULL) != NULL &&
            (rc = move_proxy_to_init(merged, err)) != WH_OK)
            goto out;
        if ((rc = wh_inject_smp(merged, overlay, &wh_inject_type_pod, err)) != WH_OK ||
            (rc = wh_inject_go_roundtrip(merged, &wh_inject_type_pod, err)) != WH_OK) {
            wh_err_prefix(err, "failed applying injection overlay: template %s", name);
            goto out;
        }
    }
    *merged_out = merged;
    *tmpl_out = tmpl;
    merged = tmpl = NULL;
out:
    json_decref(merged);
    json_decref(tmpl);
    return rc;
}

/* ---- step 7 ---- */

/* Names listed under `key` in a parsed status/overrides object. */
static int listed(const json_t *parsed, const char *key, const char *name)
{
    const json_t *l = json_object_get(parsed, key);
    size_t i;

    for (i = 0; i < json_array_size(l); i++) {
        const json_t *e = json_array_get(l, i);
        const char *n = json_is_string(e) ? json_string_value(e) : str_of(e, "name");
        if (n != NULL && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

static wh_code apply_container(json_t *pod, const char *list, const json_t *overlay, wh_err *err)
{
    json_t *patch = json_pack("{s:{s:[O]}}", "spec", list, overlay);
    wh_code rc;

    if (patch == NULL)
        return nomem(err);
    if ((rc = wh_inject_smp(pod, patch, &wh_inject_type_pod, err)) == WH_OK)
        rc = wh_inject_go_roundtrip(pod, &wh_inject_type_pod, err);
    json_decref(patch);
    if (rc != WH_OK)
        wh_err_prefix(err, "failed to apply sidecar container");
    return rc;
}

/* 3.8.3: the user's runAsUser/runAsGroup on istio-proxy reach the init container. */
static wh_code adjust_init_user(json_t *pod, const json_t *original, int tproxy, wh_err *err)
{
    const json_t *user = find_sidecar(original), *sc = json_object_get(user, "securityContext");
    const json_t *uid = json_object_get(sc, "runAsUser"), *gid = json_object_get(sc, "runAsGroup");
    json_t *init, *args, *proxy;
    size_t i;

    if (!json_is_integer(uid))
        uid = NULL;
    if (!json_is_integer(gid))
        gid = NULL;
    if (uid == NULL && gid == NULL)
        return WH_OK;
    init = find_named(spec_list(pod, "initContainers"), INIT, NULL);
    if (init == NULL)
        init = find_named(spec_list(pod, "initContainers"), VALIDATION, NULL);
    if (init == NULL)
        return WH_OK;
    if (tproxy && uid != NULL && (proxy = find_sidecar(pod)) != NULL) {
        json_t *psc = obj_child(proxy, "securityContext", 1);
        if (psc == NULL || json_object_set_new(psc, "runAsUser", json_integer(0)) != 0)
            return nomem(err);
    }
    if (!tproxy && strcmp(str_of(init, "name"), VALIDATION) == 0) {
        json_t *isc = obj_child(init, "securityContext", 1);
        if (isc == NULL || (uid != NULL && json_object_set(isc, "runAsUser", (json_t *)uid) != 0) ||
            (gid != NULL && json_object_set(isc, "runAsGroup", (json_t *)gid) != 0))
            return nomem(err);
    }
    if (uid != NULL && json_integer_value(uid) != 0 && json_is_array(args = json_object_get(init, "args"))) {
        char text[32];
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(uid));
        for (i = 0; i + 1 < json_array_size(args); i++) {
            const char *a = json_string_value(json_array_get(args, i));
            if (a != NULL && strcmp(a, "-u") == 0) {
                if (json_array_set_new(args, i + 1, json_string(text)) != 0)
                    return nomem(err);
                break;
            }
        }
    }
    return WH_OK;
}

wh_code wh_inject_reapply_overrides(json_t *pod, const json_t *original, const json_t *tmpl, int tproxy,
                                    wh_err *err)
{
    static const char *const lists[2] = {"containers", "initContainers"};
    const char *status_text = annotation(original, A_STATUS), *overrides_text = annotation(original, A_OVERRIDES);
    json_t *status = NULL, *existing = NULL, *recorded = NULL;
    json_error_t jerr;
    wh_buf text = WH_BUF_INIT;
    wh_code rc = WH_OK;
    int l;

    if (overrides_text != NULL && ((existing = json_loads(overrides_text, 0, &jerr)) == NULL || !json_is_object(existing))) {
        rc = wh_err_set(err, WH_E_INVALID, "invalid %s annotation: %s", A_OVERRIDES,
                        existing == NULL ? jerr.text : "not a JSON object");
        goto out;
    }
    if (status_text != NULL)
        status = json_loads(status_text, 0, NULL); /* unparsable: as if absent, like istiod */
    if ((recorded = json_object()) == NULL) {
        rc = nomem(err);
        goto out;
    }
    for (l = 0; l < 2; l++) {
        const json_t *tlist = spec_list(tmpl, lists[l]);
        json_t *rlist = NULL;
        size_t i;
        for (i = 0; i < json_array_size(tlist); i++) {
            const char *name = str_of(json_array_get(tlist, i), "name");
            const json_t *match;
            json_t *overlay, *ordered;
            if (name == NULL || listed(status, lists[l], name))
                continue;
            match = find_named(json_object_get(existing, lists[l]), name, NULL);
            if (match == NULL)
                match = find_named(spec_list(original, "containers"), name, NULL);
            if (match == NULL && l == 1)
                match = find_named(spec_list(original, "initContainers"), name, NULL);
            if (match == NULL || !json_is_object(match))
                continue;
            if ((overlay = json_deep_copy(match)) == NULL) {
                rc = nomem(err);
                goto out;
            }
            if ((rc = wh_inject_go_roundtrip(overlay, &wh_inject_type_container, err)) != WH_OK) {
                json_decref(overlay);
                goto out;
            }
            if (json_is_string(json_object_get(overlay, "image")) && strcmp(str_of(overlay, "image"), "auto") == 0)
                json_object_del(overlay, "image");
            ordered = wh_inject_go_ordered(overlay, &wh_inject_type_container);
            json_decref(overlay);
            if (ordered == NULL) {
                rc = nomem(err);
                goto out;
            }
            if (rlist == NULL && ((rlist = json_array()) == NULL || json_object_set_new(recorded, lists[l], rlist) != 0)) {
                json_decref(ordered);
                rc = nomem(err);
                goto out;
            }
            if (json_array_append_new(rlist, ordered) != 0) {
                rc = nomem(err);
                goto out;
            }
            if ((rc = apply_container(pod, lists[l], ordered, err)) != WH_OK)
                goto out;
        }
    }
    if (status_text == NULL && json_object_size(recorded) != 0) {
        json_t *ann = obj_child(obj_child(pod, "metadata", 1), "annotations", 1);
        if (ann == NULL || wh_inject_json_go(recorded, &text) != WH_OK) {
            rc = nomem(err);
            goto out;
        }
        if ((rc = set_string(ann, A_OVERRIDES, text.data, err)) != WH_OK)
            goto out;
    }
    rc = adjust_init_user(pod, original, tproxy, err);
out:
    json_decref(status);
    json_decref(existing);
    json_decref(recorded);
    wh_buf_free(&text);
    return rc;
}

/* ---- step 8 ---- */

/* 3.10.1 */
static wh_code cluster_envs(json_t *pod, const json_t *envs, wh_err *err)
{
    json_t *proxy = find_sidecar(pod), *env;
    const char **keys = NULL;
    const char *key;
    json_t *v;
    size_t n = 0, i;
    wh_code rc = WH_OK;

    if (json_object_size(envs) == 0 || proxy == NULL)
        return WH_OK;
    if (json_is_array(env = json_object_get(proxy, "env")))
        for (i = json_array_size(env); i-- > 0;) {
            const char *name = str_of(json_array_get(env, i), "name");
            if (name != NULL && json_object_get(envs, name) != NULL)
                json_array_remove(env, i);
        }
    if ((keys = malloc(json_object_size(envs) * sizeof(*keys))) == NULL)
        return nomem(err);
    json_object_foreach((json_t *)envs, key, v) keys[n++] = key;
    for (i = 1; i < n; i++) { /* insertion sort: a handful of keys */
        const char *k = keys[i];
        size_t j = i;
        for (; j > 0 && strcmp(keys[j - 1], k) > 0; j--)
            keys[j] = keys[j - 1];
        keys[j] = k;
    }
    for (i = 0; i < n && rc == WH_OK; i++) {
        const char *value = json_string_value(json_object_get(envs, keys[i]));
        rc = set_env(proxy, keys[i], value != NULL ? value : "", err);
    }
    free(keys);
    return rc;
}

/* Annotation keys compared the way istiod's prometheus code does. */
static void sanitize(const char *in, char *out, size_t size)
{
    size_t i;

    for (i = 0; in[i] != '\0' && i + 1 < size; i++)
        out[i] = (char)(isalnum((unsigned char)in[i]) || in[i] == '_' ? in[i] : '_');
    out[i] = '\0';
}

static int sanitized_is(const char *key, const char *want)
{
    char buf[256];

    if (strlen(key) >= sizeof(buf))
        return 0;
    sanitize(key, buf, sizeof(buf));
    return strcmp(buf, want) == 0;
}

static const char *sanitized_get(const json_t *ann, const char *want)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)ann, key, v) if (json_is_string(v) && sanitized_is(key, want)) return
        json_string_value(v);
    return NULL;
}

static int reserved_port(long p)
{
    static const long ports[] = {15000, 15001, 15004, 15006, 15008, 15020, 15021, 15053, 15090};
    size_t i;

    for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
        if (ports[i] == p)
            return 1;
    return 0;
}

static wh_code check_scrape_port(const char *port, long target, wh_err *err)
{
    char *end;
    long p;

    errno = 0;
    p = strtol(port, &end, 10);
    if (*port == '\0' || *end != '\0' || errno != 0 || p < 1 || p > 65535)
        return wh_err_set(err, WH_E_INVALID, "invalid prometheus scrape port \"%s\": must be an integer in 1-65535",
                          port);
    if (p == target || reserved_port(p))
        return wh_err_set(err, WH_E_INVALID,
                          "invalid prometheus scrape port \"%s\": the port is reserved by the Istio sidecar", port);
    return WH_OK;
}

/* Trim ASCII whitespace at both ends, in place. */
static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    return s;
}

/* prometheus.istio.io/scrape-targets: "port[:path],...", path default
 * /metrics; entries without a port are ignored. */
static wh_code parse_targets(const char *list, json_t *targets, wh_err *err)
{
    char *copy = strdup(list), *save = NULL, *tok;
    wh_code rc = WH_OK;

    if (copy == NULL)
        return nomem(err);
    for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == WH_OK; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':'), *port, *path = "/metrics";
        json_t *t;
        if (colon != NULL) {
            *colon = '\0';
            path = trim(colon + 1);
            if (*path == '\0')
                path = "/metrics";
        }
        port = trim(tok);
        if (*port == '\0')
            continue;
        if ((t = json_pack("{s:s,s:s}", "port", port, "path", path)) == NULL || json_array_append_new(targets, t) != 0)
            rc = nomem(err);
    }
    free(copy);
    return rc;
}

/* 3.10.2 */
static wh_code prometheus_merge(json_t *pod, const wh_inject_revision *rev, wh_err *err)
{
    json_t *ann = obj_child(obj_child(pod, "metadata", 1), "annotations", 1), *cfg = NULL, *targets = NULL;
    const json_t *mesh = wh_inject_revision_mesh(rev);
    const char *key, *merge, *port, *path, *scrape, *tlist;
    json_t *v, *proxy;
    void *tmp;
    int target = wh_inject_revision_status_port(rev), enabled = 1;
    char target_text[16];
    wh_buf text = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (ann == NULL)
        return nomem(err);
    json_object_foreach(ann, key, v) if (json_is_string(v) && sanitized_is(key, "prometheus_io_scrape") &&
                                         wh_inject_parse_bool(json_string_value(v)) == 0) return WH_OK;
    merge = str_of(ann, "prometheus.istio.io/merge-metrics");
    if (merge != NULL && wh_inject_parse_bool(merge) >= 0)
        enabled = wh_inject_parse_bool(merge);
    else if (json_is_boolean(json_object_get(mesh, "enablePrometheusMerge")))
        enabled = json_is_true(json_object_get(mesh, "enablePrometheusMerge"));
    if (!enabled)
        return WH_OK;
    snprintf(target_text, sizeof(target_text), "%d", target);
    port = sanitized_get(ann, "prometheus_io_port");
    if (port != NULL && strcmp(port, target_text) == 0)
        return WH_OK;
    scrape = sanitized_get(ann, "prometheus_io_scrape");
    path = sanitized_get(ann, "prometheus_io_path");
    tlist = sanitized_get(ann, "prometheus_istio_io_scrape_targets");
    if ((targets = json_array()) == NULL) {
        rc = nomem(err);
        goto out;
    }
    if (tlist != NULL && (rc = parse_targets(tlist, targets, err)) != WH_OK)
        goto out;
    if (json_array_size(targets) > 0) {
        size_t i;
        port = str_of(json_array_get(targets, 0), "port");
        path = str_of(json_array_get(targets, 0), "path");
        for (i = 0; i < json_array_size(targets); i++)
            if ((rc = check_scrape_port(str_of(json_array_get(targets, i), "port"), target, err)) != WH_OK)
                goto out;
    } else if (port != NULL && (rc = check_scrape_port(port, target, err)) != WH_OK) {
        goto out;
    }
    proxy = find_sidecar(pod);
    if (proxy != NULL && (scrape != NULL || path != NULL || port != NULL || json_array_size(targets) > 0)) {
        cfg = json_pack("{s:s,s:s,s:s}", "scrape", scrape != NULL ? scrape : "", "path", path != NULL ? path : "",
                        "port", port != NULL ? port : "");
        if (cfg == NULL || (json_array_size(targets) > 0 && json_object_set(cfg, "targets", targets) != 0) ||
            wh_inject_json_go(cfg, &text) != WH_OK) {
            rc = nomem(err);
            goto out;
        }
        if ((rc = set_env(proxy, "ISTIO_PROMETHEUS_ANNOTATIONS", text.data, err)) != WH_OK)
            goto out;
    }
    json_object_foreach_safe(ann, tmp, key, v)
    {
        if (sanitized_is(key, "prometheus_io_path") || sanitized_is(key, "prometheus_io_port") ||
            sanitized_is(key, "prometheus_io_scrape") || sanitized_is(key, "prometheus_istio_io_scrape_targets"))
            json_object_del(ann, key);
    }
    if ((rc = set_string(ann, "prometheus.io/port", target_text, err)) != WH_OK ||
        (rc = set_string(ann, "prometheus.io/path", "/stats/prometheus", err)) != WH_OK ||
        (rc = set_string(ann, "prometheus.io/scrape", "true", err)) != WH_OK)
        goto out;
out:
    json_decref(cfg);
    json_decref(targets);
    wh_buf_free(&text);
    return rc;
}

/* 3.10.3 */
static wh_code secure_port(json_t *pod, wh_err *err)
{
    json_t *ann = obj_child(obj_child(pod, "metadata", 1), "annotations", 1), *proxy = find_sidecar(pod);
    const json_t *env = json_object_get(proxy, "env");
    size_t i;

    if (ann == NULL)
        return nomem(err);
    if (proxy == NULL || sanitized_get(ann, "prometheus_istio_io_secure_port") != NULL)
        return WH_OK;
    for (i = 0; i < json_array_size(env); i++) {
        const json_t *e = json_array_get(env, i);
        const char *name = str_of(e, "name"), *value = str_of(e, "value");
        if (name != NULL && strcmp(name, "ENVOY_SECURE_MERGED_METRICS_PORT") == 0 && value != NULL &&
            *value != '\0' && strcmp(value, "0") != 0)
            return set_string(ann, "prometheus.istio.io/secure-port", value, err);
    }
    return WH_OK;
}

/* ---- 3.10.4 application probes ---- */

static const struct {
    const char *field, *sub, *suffix;
    int is_probe;
} probe_slots[] = {
    {"readinessProbe", NULL, "/app-health/%s/readyz", 1},    {"livenessProbe", NULL, "/app-health/%s/livez", 1},
    {"startupProbe", NULL, "/app-health/%s/startupz", 1},    {"lifecycle", "preStop", "/app-lifecycle/%s/prestopz", 0},
    {"lifecycle", "postStart", "/app-lifecycle/%s/poststartz", 0},
};
#define N_SLOTS (sizeof(probe_slots) / sizeof(probe_slots[0]))

static json_t *slot_handler(const json_t *container, size_t s)
{
    json_t *h = json_object_get(container, probe_slots[s].field);
    if (h != NULL && probe_slots[s].sub != NULL)
        h = json_object_get(h, probe_slots[s].sub);
    return json_is_object(h) ? h : NULL;
}

/* The prober istio-agent runs for one handler, or NULL when none applies
 * (named port unknown, already pointing at the status port, exec). */
static json_t *prober_of(const json_t *container, const json_t *handler, int is_probe, int status_port)
{
    static const char *const kinds[3] = {"httpGet", "tcpSocket", "grpc"};
    const wh_inject_type *types[3] = {&wh_inject_type_http_get, &wh_inject_type_tcp_socket, &wh_inject_type_grpc};
    const json_t *action = NULL, *port, *timeout;
    json_t *copy, *out;
    int k;

    for (k = 0; k < (is_probe ? 3 : 2); k++)
        if (json_is_object(action = json_object_get(handler, kinds[k])))
            break;
    if (k == (is_probe ? 3 : 2))
        return NULL;
    if ((copy = json_deep_copy(action)) == NULL)
        return NULL;
    port = json_object_get(copy, "port");
    if (k < 2 && json_is_string(port)) {
        const json_t *ports = json_object_get(container, "ports");
        size_t i;
        for (i = 0; i < json_array_size(ports); i++) {
            const char *n = str_of(json_array_get(ports, i), "name");
            if (n != NULL && *n != '\0' && strcmp(n, json_string_value(port)) == 0)
                break;
        }
        if (i == json_array_size(ports)) {
            json_decref(copy);
            return NULL;
        }
        json_object_set(copy, "port", json_object_get(json_array_get(ports, i), "containerPort"));
    } else if (k < 2 && json_is_integer(port) && json_integer_value(port) == status_port) {
        json_decref(copy);
        return NULL;
    }
    out = json_object();
    if (out != NULL)
        json_object_set_new(out, kinds[k], wh_inject_go_ordered(copy, types[k]));
    json_decref(copy);
    timeout = json_object_get(handler, "timeoutSeconds");
    if (out != NULL && is_probe && json_is_integer(timeout) && json_integer_value(timeout) != 0)
        json_object_set(out, "timeoutSeconds", (json_t *)timeout);
    return out;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static wh_code dump_sorted(const json_t *map, wh_buf *out)
{
    const char **keys = malloc((json_object_size(map) + 1) * sizeof(*keys)), *key;
    json_t *v, *sorted = json_object();
    size_t n = 0, i;
    wh_code rc = WH_E_NOMEM;

    if (keys == NULL || sorted == NULL)
        goto out;
    json_object_foreach((json_t *)map, key, v) keys[n++] = key;
    qsort(keys, n, sizeof(*keys), cmp_cstr);
    for (i = 0; i < n; i++)
        if (json_object_set(sorted, keys[i], json_object_get(map, keys[i])) != 0)
            goto out;
    rc = wh_inject_json_go(sorted, out);
out:
    free(keys);
    json_decref(sorted);
    return rc;
}

static wh_code collect_probers(const json_t *pod, int status_port, json_t *probers, wh_err *err)
{
    static const char *const lists[2] = {"initContainers", "containers"};
    int l;

    for (l = 0; l < 2; l++) {
        const json_t *list = spec_list(pod, lists[l]);
        size_t i, s;
        for (i = 0; i < json_array_size(list); i++) {
            const json_t *c = json_array_get(list, i);
            const char *name = str_of(c, "name");
            if (name == NULL || strcmp(name, PROXY) == 0)
                continue;
            for (s = 0; s < N_SLOTS; s++) {
                const json_t *h = slot_handler(c, s);
                char url[512];
                json_t *p;
                if (h == NULL || (p = prober_of(c, h, probe_slots[s].is_probe, status_port)) == NULL)
                    continue;
                snprintf(url, sizeof(url), probe_slots[s].suffix, name);
                if (json_object_set_new(probers, url, p) != 0)
                    return nomem(err);
            }
        }
    }
    return WH_OK;
}

static wh_code rewrite_handler(json_t *h, const char *url, long port, wh_err *err)
{
    json_t *get = json_object_get(h, "httpGet");

    if (!json_is_object(get)) {
        if (json_object_get(h, "tcpSocket") == NULL && json_object_get(h, "grpc") == NULL)
            return WH_OK;
        json_object_del(h, "tcpSocket");
        json_object_del(h, "grpc");
        if ((get = json_object()) == NULL || json_object_set_new(h, "httpGet", get) != 0)
            return nomem(err);
    }
    if (json_object_set_new(get, "path", json_string(url)) != 0 ||
        json_object_set_new(get, "port", json_integer(port)) != 0)
        return nomem(err);
    if (json_is_string(json_object_get(get, "scheme")) && strcmp(str_of(get, "scheme"), "HTTPS") == 0)
        return set_string(get, "scheme", "HTTP", err);
    return WH_OK;
}

static wh_code rewrite_probes(json_t *pod, const json_t *ann, int status_port, wh_err *err)
{
    static const char *const lists[2] = {"containers", "initContainers"};
    const char *ann_port = str_of(ann, "status.sidecar.istio.io/port");
    long port = status_port;
    int l;
    wh_code rc;

    if (ann_port != NULL) {
        char *end;
        errno = 0;
        port = strtol(ann_port, &end, 10);
        if (*ann_port == '\0' || *end != '\0' || errno != 0)
            return WH_OK; /* istiod logs and leaves the probes alone */
    }
    for (l = 0; l < 2; l++) {
        json_t *list = spec_list(pod, lists[l]);
        size_t i, s;
        for (i = 0; i < json_array_size(list); i++) {
            json_t *c = json_array_get(list, i);
            const char *name = str_of(c, "name");
            if (name == NULL || strcmp(name, PROXY) == 0)
                continue;
            for (s = 0; s < N_SLOTS; s++) {
                json_t *h = slot_handler(c, s);
                char url[512];
                if (h == NULL)
                    continue;
                snprintf(url, sizeof(url), probe_slots[s].suffix, name);
                if (!probe_slots[s].is_probe && json_object_get(h, "grpc") != NULL)
                    continue;
                if ((rc = rewrite_handler(h, url, port, err)) != WH_OK)
                    return rc;
            }
        }
    }
    return WH_OK;
}

static wh_code app_probes(json_t *pod, const wh_inject_revision *rev, wh_err *err)
{
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations"), *proxy = find_sidecar(pod);
    const json_t *values_flag = json_object_get(json_object_get(wh_inject_revision_values(rev), "sidecarInjectorWebhook"),
                                                "rewriteAppHTTPProbe");
    const char *a = str_of(ann, "sidecar.istio.io/rewriteAppHTTPProbers");
    int status_port = wh_inject_revision_status_port(rev), enabled;
    json_t *probers = NULL, *env, *old = NULL;
    wh_buf text = WH_BUF_INIT;
    wh_code rc = WH_OK;
    size_t i;

    if (proxy == NULL)
        return WH_OK;
    enabled = a != NULL && wh_inject_parse_bool(a) >= 0 ? wh_inject_parse_bool(a) : json_is_true(values_flag);
    if (!enabled)
        return WH_OK;
    if ((probers = json_object()) == NULL)
        return nomem(err);
    if ((rc = collect_probers(pod, status_port, probers, err)) != WH_OK)
        goto out;
    if (json_object_size(probers) > 0) {
        json_t *existing = NULL;
        env = json_object_get(proxy, "env");
        if (str_of(ann, A_STATUS) != NULL)
            for (i = 0; i < json_array_size(env); i++)
                if (strcmp(str_of(json_array_get(env, i), "name") ? str_of(json_array_get(env, i), "name") : "",
                           "ISTIO_KUBE_APP_PROBERS") == 0) {
                    existing = json_array_get(env, i);
                    break;
                }
        if (existing != NULL) {
            const char *key;
            json_t *v;
            old = json_loads(str_of(existing, "value") != NULL ? str_of(existing, "value") : "", 0, NULL);
            if (json_is_object(old))
                json_object_foreach(old, key, v) json_object_set(probers, key, v);
        }
        if (dump_sorted(probers, &text) != WH_OK) {
            rc = nomem(err);
            goto out;
        }
        rc = existing != NULL ? set_string(existing, "value", text.data, err)
                              : set_env(proxy, "ISTIO_KUBE_APP_PROBERS", text.data, err);
        if (rc != WH_OK)
            goto out;
    }
    rc = rewrite_probes(pod, ann, status_port, err);
out:
    json_decref(probers);
    json_decref(old);
    wh_buf_free(&text);
    return rc;
}

/* ---- 3.10.5 metadata ---- */

static json_t *names_of(const json_t *list)
{
    json_t *out;
    size_t i;

    if (json_array_size(list) == 0)
        return json_null();
    if ((out = json_array()) == NULL)
        return NULL;
    for (i = 0; i < json_array_size(list); i++) {
        const char *n = str_of(json_array_get(list, i), "name");
        if (json_array_append_new(out, json_string(n != NULL ? n : "")) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static wh_code metadata(json_t *pod, const wh_inject_post_params *p, wh_err *err)
{
    json_t *meta = obj_child(pod, "metadata", 1), *ann = obj_child(meta, "annotations", 1), *status;
    const char *key;
    json_t *v;
    wh_buf text = WH_BUF_INIT;
    wh_code rc;

    if (ann == NULL)
        return nomem(err);
    if (p->r->network != NULL && *p->r->network != '\0' &&
        (rc = set_string(obj_child(meta, "labels", 1), "topology.istio.io/network", p->r->network, err)) != WH_OK)
        return rc;
    status = json_pack("{s:o*,s:o*,s:o*,s:o*,s:s}", "initContainers", names_of(spec_list(p->tmpl, "initContainers")),
                       "containers", names_of(spec_list(p->tmpl, "containers")), "volumes",
                       names_of(spec_list(p->tmpl, "volumes")), "imagePullSecrets",
                       names_of(spec_list(p->tmpl, "imagePullSecrets")), "revision",
                       p->r->revision != NULL && *p->r->revision != '\0' ? p->r->revision : "default");
    if (status == NULL || wh_inject_json_go(status, &text) != WH_OK) {
        json_decref(status);
        wh_buf_free(&text);
        return nomem(err);
    }
    json_decref(status);
    rc = set_string(ann, A_STATUS, text.data, err);
    wh_buf_free(&text);
    if (rc != WH_OK || p->kube_inject)
        return rc;
    json_object_foreach((json_t *)wh_inject_revision_injected_annotations(p->rev), key, v)
    {
        if (json_is_string(v) && (rc = set_string(ann, key, json_string_value(v), err)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

/* ---- 3.10.6 / 3.7 reorder ---- */

static wh_code move_named(json_t *list, const char *name, int first, wh_err *err)
{
    size_t idx;
    json_t *c = find_named(list, name, &idx);

    if (c == NULL)
        return WH_OK;
    json_incref(c);
    if (json_array_remove(list, idx) != 0 ||
        (first ? json_array_insert_new(list, 0, c) : json_array_append_new(list, c)) != 0)
        return nomem(err);
    return WH_OK;
}

static wh_code reorder(json_t *pod, int hold, wh_err *err)
{
    json_t *containers = spec_list(pod, "containers"), *init = spec_list(pod, "initContainers");
    wh_code rc;

    if ((rc = move_named(containers, PROXY, hold, err)) != WH_OK)
        return rc;
    if (find_named(init, PROXY, NULL) != NULL) {
        if ((rc = move_named(init, CORE_DUMP, 1, err)) != WH_OK || (rc = move_named(init, PROXY, 1, err)) != WH_OK ||
            (rc = move_named(init, VALIDATION, 1, err)) != WH_OK || (rc = move_named(init, INIT, 1, err)) != WH_OK)
            return rc;
        return WH_OK;
    }
    if ((rc = move_named(init, VALIDATION, 1, err)) != WH_OK || (rc = move_named(init, INIT, 0, err)) != WH_OK ||
        (rc = move_named(init, CORE_DUMP, 0, err)) != WH_OK)
        return rc;
    return WH_OK;
}

wh_code wh_inject_postprocess(json_t *pod, const wh_inject_post_params *p, wh_err *err)
{
    wh_code rc;

    if (obj_child(obj_child(pod, "metadata", 1), "annotations", 1) == NULL)
        return nomem(err);
    if ((rc = cluster_envs(pod, p->r->proxy_envs, err)) != WH_OK || (rc = prometheus_merge(pod, p->rev, err)) != WH_OK ||
        (rc = secure_port(pod, err)) != WH_OK || (rc = app_probes(pod, p->rev, err)) != WH_OK ||
        (rc = metadata(pod, p, err)) != WH_OK || (rc = reorder(pod, p->r->hold, err)) != WH_OK)
        return rc;
    return wh_inject_go_roundtrip(pod, &wh_inject_type_pod, err);
}
