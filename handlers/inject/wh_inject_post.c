/*
 * wh_inject_post.c - istiod's post-processing of the merged pod (envs,
 * probes, Prometheus, annotations, container ordering: CONTRIBUTING.md, stage
 * 6 post); see wh_inject_post.h and the goldens of tests/inject/conformance.
 */
#include "wh_inject_post.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_chars.h"
#include "wh_go.h"
#include "wh_log.h"
#include "wh_inject_pod.h"
#include "wh_inject_schema.h"
#include "wh_json_arena.h"

/* ---- step 8 ---- */

#define MEMBERS_ON_STACK 48 /* a Container has 22 fields; a pod's annotations are a handful */

/* What the steps below read of the merged pod, found once: they change
 * these objects and lists in place but never replace them (reorder, last,
 * permutes the lists in place). */
typedef struct pod_view {
    json_t *meta, *ann; /* metadata, metadata.annotations: objects */
    json_t *containers; /* spec.containers, or NULL when not a list */
    json_t *init;       /* spec.initContainers, or NULL when not a list */
    json_t *proxy;      /* istio-proxy in either, or NULL */
} pod_view;

static void view_of(json_t *pod, pod_view *v)
{
    const json_t *spec = wh_json_get(pod, "spec");

    v->meta = wh_inject_obj_child(pod, "metadata", 1); /* pod: an object (decode checked) */
    v->ann = wh_inject_obj_child(v->meta, "annotations", 1);
    v->containers = wh_json_get(spec, "containers");
    v->init = wh_json_get(spec, "initContainers");
    if (!json_is_array(v->containers))
        v->containers = NULL;
    if (!json_is_array(v->init))
        v->init = NULL;
    v->proxy = wh_inject_find_named(v->containers, WH_PROXY, NULL);
    if (v->proxy == NULL)
        v->proxy = wh_inject_find_named(v->init, WH_PROXY, NULL);
}

/* The string member `key` (`len` bytes) of object `o`, or NULL: small
 * objects (env entries: name and value) are walked, which costs less than
 * hashing the key. */
static const char *small_str(const json_t *o, const char *key, size_t len)
{
    void *it;

    if (json_object_size(o) > 4)
        return json_string_value(wh_json_getn(o, key, len));
    for (it = json_object_iter((json_t *)o); it != NULL; it = json_object_iter_next((json_t *)o, it))
        if (json_object_iter_key_len(it) == len && memcmp(json_object_iter_key(it), key, len) == 0)
            return json_string_value(json_object_iter_value(it));
    return NULL;
}

/* 3.10.1 */
static void cluster_envs(json_t *proxy, const json_t *envs)
{
    json_t *env;
    const char **keys = NULL;
    const char *key;
    json_t *v;
    size_t n = 0, i;

    if (json_object_size(envs) == 0 || proxy == NULL)
        return;
    if (json_is_array(env = wh_json_get(proxy, "env")))
        for (i = json_array_size(env); i-- > 0;) {
            const char *name = wh_inject_jstr(json_array_get(env, i), "name");
            if (name != NULL && wh_json_get(envs, name) != NULL)
                json_array_remove(env, i);
        }
    keys = wh_malloc(json_object_size(envs) * sizeof(*keys));
    json_object_foreach((json_t *)envs, key, v) keys[n++] = key;
    for (i = 1; i < n; i++) { /* insertion sort: a handful of keys */
        const char *k = keys[i];
        size_t j = i;
        for (; j > 0 && strcmp(keys[j - 1], k) > 0; j--)
            keys[j] = keys[j - 1];
        keys[j] = k;
    }
    for (i = 0; i < n; i++) {
        const char *value = json_string_value(wh_json_get(envs, keys[i]));
        wh_inject_append_env(proxy, keys[i], value != NULL ? value : "");
    }
    free(keys);
}

/* Whether annotation key `key` is `want` once sanitized the way istiod's
 * prometheus code does (every character but [A-Za-z0-9_] becomes '_');
 * compared in place, without a sanitized copy. */
static int sanitized_is(const char *key, const char *want)
{
    size_t i;

    for (i = 0; key[i] != '\0'; i++) {
        char c = isalnum((unsigned char)key[i]) || key[i] == '_' ? key[i] : '_';
        if (c != want[i])
            return 0;
    }
    return want[i] == '\0';
}

/* The annotations istiod's Prometheus code reads, by their sanitized keys
 * (its GetAnnotation over a sanitized map: the first key that sanitizes to
 * the name, string values only), found in one walk over the annotations. */
enum { PROM_SCRAPE, PROM_PORT, PROM_PATH, PROM_TARGETS, PROM_SECURE, PROM_N };
static const char *const prom_keys[PROM_N] = {"prometheus_io_scrape", "prometheus_io_port", "prometheus_io_path",
                                              "prometheus_istio_io_scrape_targets", "prometheus_istio_io_secure_port"};

typedef struct prom_annotations {
    const char *value[PROM_N]; /* NULL: none */
    int scrape_false;          /* some key sanitizing to prometheus_io_scrape says false */
} prom_annotations;

static void prom_scan(const json_t *ann, prom_annotations *pa)
{
    wh_json_member stack[MEMBERS_ON_STACK], *heap;
    size_t i, n;
    const wh_json_member *m = wh_json_members(ann, stack, MEMBERS_ON_STACK, &heap, &n);
    int k;

    memset(pa, 0, sizeof(*pa));
    for (i = 0; i < n; i++) {
        const char *key = m[i].key;
        const json_t *v = m[i].value;
        if (key[0] != 'p' || !json_is_string(v)) /* every name starts with 'p', which sanitizes to itself */
            continue;
        for (k = 0; k < PROM_N; k++) {
            if (!sanitized_is(key, prom_keys[k]))
                continue;
            if (pa->value[k] == NULL)
                pa->value[k] = json_string_value(v);
            if (k == PROM_SCRAPE && wh_go_parse_bool(json_string_value(v)) == 0)
                pa->scrape_false = 1;
        }
    }
    free(heap);
}

/* The data-plane ports the agent owns, and why (the agent's istioReservedPorts). */
static const char *reserved_port(const char *canon)
{
    static const struct {
        const char *port, *why;
    } ports[] = {{"15000", "Envoy admin"},
                 {"15001", "outbound traffic capture"},
                 {"15004", "pilot debug"},
                 {"15006", "inbound traffic capture"},
                 {"15008", "HBONE tunnel"},
                 {"15020", "pilot-agent status / merged Prometheus"},
                 {"15021", "Envoy health"},
                 {"15053", "DNS proxy"},
                 {"15090", "Envoy Prometheus (already merged)"}};

    for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
        if (strcmp(ports[i].port, canon) == 0)
            return ports[i].why;
    return NULL;
}

/* istiod's applyPrometheusMerge checks of one port: `what` is "configuration:
 * " for prometheus.io/port, "targets: target " for a scrape target. */
static wh_code check_scrape_port(const char *port, long target, int is_target, wh_err *err)
{
    const char *what = is_target ? "targets" : "configuration", *which = is_target ? "target port" : "port", *why;
    char canon[24], *end;
    long p;

    /* strconv.Atoi: optional sign, decimal digits */
    errno = 0;
    p = strtol(port, &end, 10);
    if (*port == '\0' || isspace((unsigned char)*port) || *end != '\0' || errno != 0 || p < 1 || p > 65535)
        return wh_err_set(err, WH_E_INVALID, "invalid prometheus scrape %s: invalid %s \"%s\"", what, which, port);
    snprintf(canon, sizeof(canon), "%ld", p);
    if (p == target)
        return wh_err_set(err, WH_E_INVALID, "invalid prometheus scrape %s: %s %s conflicts with agent port", what,
                          which, port);
    if ((why = reserved_port(canon)) != NULL)
        return wh_err_set(err, WH_E_INVALID,
                          "invalid prometheus scrape %s: %s %s is reserved for Istio (%s) and cannot be scraped", what,
                          which, port, why);
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
 * /metrics, empty entries skipped.  An entry with an empty port makes the
 * whole list ignored (the agent's ParseScrapeTargets fails; istiod warns). */
static void parse_targets(const char *list, json_t *targets)
{
    char *copy = wh_strdup(list), *save = NULL, *tok;

    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *entry = trim(tok), *colon, *port, *path = "/metrics";
        if (*entry == '\0')
            continue;
        if ((colon = strchr(entry, ':')) != NULL) {
            *colon = '\0';
            if (*trim(colon + 1) != '\0')
                path = trim(colon + 1);
        }
        port = trim(entry);
        if (*port == '\0') {
            wh_log(WH_LOG_WARN, "inject: ignoring prometheus.istio.io/scrape-targets: a target has no port", "value",
                   list, NULL);
            json_array_clear(targets);
            break;
        }
        /* the annotation's value is a JSON string, so UTF-8: json_pack cannot fail */
        json_array_append_new(targets, json_pack("{s:s,s:s}", "port", port, "path", path));
    }
    free(copy);
}

/* `v` in decimal into buf (at least 12 bytes), as "%d" prints it without
 * snprintf's cost (~700 instructions). */
static void decimal(char *buf, int v)
{
    char tmp[12];
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    size_t n = 0;

    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *buf++ = '-';
    while (n > 0)
        *buf++ = tmp[--n];
    *buf = '\0';
}

/* o[key] = `text` (`len` bytes); key and text ASCII, ours. */
static void set_ascii(json_t *o, const char *key, const char *text, size_t len)
{
    json_t *v = wh_json_arena_string(text, len);

    json_object_set_new_nocheck(o, key, v != NULL ? v : json_stringn_nocheck(text, len));
}

/* 3.10.2 */
static wh_code prometheus_merge(json_t *ann, json_t *proxy, const prom_annotations *pa, const wh_inject_revision *rev,
                                int target, wh_err *err)
{
    json_t *cfg = NULL, *targets = NULL;
    const json_t *mesh = wh_inject_revision_mesh(rev);
    const char *key, *merge, *port, *path, *scrape, *tlist;
    json_t *v;
    void *tmp;
    int enabled = 1;
    int targets_known = wh_inject_release_has(wh_inject_revision_release(rev), WH_REL_PROMETHEUS_SCRAPE_TARGETS);
    char target_text[16];
    wh_buf text = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (pa->scrape_false)
        return WH_OK;
    merge = wh_inject_jstr(ann, "prometheus.istio.io/merge-metrics");
    if (merge != NULL && wh_go_parse_bool(merge) >= 0)
        enabled = wh_go_parse_bool(merge);
    else if (json_is_boolean(wh_json_get(mesh, "enablePrometheusMerge")))
        enabled = json_is_true(wh_json_get(mesh, "enablePrometheusMerge"));
    if (!enabled)
        return WH_OK;
    decimal(target_text, target);
    port = pa->value[PROM_PORT];
    if (port != NULL && strcmp(port, target_text) == 0)
        return WH_OK;
    scrape = pa->value[PROM_SCRAPE];
    path = pa->value[PROM_PATH];
    tlist = targets_known ? pa->value[PROM_TARGETS] : NULL;
    targets = json_array();
    if (tlist != NULL)
        parse_targets(tlist, targets);
    if (json_array_size(targets) > 0) {
        size_t i;
        port = wh_inject_jstr(json_array_get(targets, 0), "port");
        path = wh_inject_jstr(json_array_get(targets, 0), "path");
        for (i = 0; i < json_array_size(targets); i++)
            if ((rc = check_scrape_port(wh_inject_jstr(json_array_get(targets, i), "port"), target, 1, err)) != WH_OK)
                goto out;
    } else if (targets_known && port != NULL && (rc = check_scrape_port(port, target, 0, err)) != WH_OK) {
        goto out;
    }
    if (proxy != NULL && (scrape != NULL || path != NULL || port != NULL || json_array_size(targets) > 0)) {
        cfg = json_pack("{s:s,s:s,s:s}", "scrape", scrape != NULL ? scrape : "", "path", path != NULL ? path : "",
                        "port", port != NULL ? port : "");
        if (json_array_size(targets) > 0)
            json_object_set(cfg, "targets", targets);
        wh_go_json(&text, cfg, WH_GO_JSON_HTML);
        wh_inject_append_env(proxy, "ISTIO_PROMETHEUS_ANNOTATIONS", text.data);
    }
    json_object_foreach_safe(ann, tmp, key, v)
    {
        if (key[0] == 'p' && (sanitized_is(key, "prometheus_io_path") || sanitized_is(key, "prometheus_io_port") ||
                              sanitized_is(key, "prometheus_io_scrape") ||
                              (targets_known && sanitized_is(key, "prometheus_istio_io_scrape_targets"))))
            json_object_del(ann, key);
    }
    /* ASCII keys and values */
    set_ascii(ann, "prometheus.io/port", target_text, strlen(target_text));
    set_ascii(ann, "prometheus.io/path", "/stats/prometheus", 17);
    set_ascii(ann, "prometheus.io/scrape", "true", 4);
out:
    json_decref(cfg);
    json_decref(targets);
    wh_buf_free(&text);
    return rc;
}

/* 3.10.3 */
/* `pa`: scanned before prometheus_merge, which adds or removes no key
 * sanitizing to prometheus_istio_io_secure_port. */
static void secure_port(json_t *ann, const json_t *proxy, const prom_annotations *pa)
{
    const json_t *env = wh_json_get(proxy, "env");
    size_t i;

    if (proxy == NULL || pa->value[PROM_SECURE] != NULL)
        return;
    for (i = 0; i < json_array_size(env); i++) {
        const json_t *e = json_array_get(env, i);
        const char *name = small_str(e, "name", 4), *value;
        if (name == NULL || strcmp(name, "ENVOY_SECURE_MERGED_METRICS_PORT") != 0)
            continue;
        value = wh_inject_jstr(e, "value");
        if (value != NULL && *value != '\0' && strcmp(value, "0") != 0) {
            wh_inject_set_string(ann, "prometheus.istio.io/secure-port", value);
            return;
        }
    }
}

/* ---- 3.10.4 application probes ---- */

static const struct {
    const char *field, *sub, *suffix;
    int is_probe;
} probe_slots[] = {
    {"readinessProbe", NULL, "/app-health/%s/readyz", 1},
    {"livenessProbe", NULL, "/app-health/%s/livez", 1},
    {"startupProbe", NULL, "/app-health/%s/startupz", 1},
    {"lifecycle", "preStop", "/app-lifecycle/%s/prestopz", 0},
    {"lifecycle", "postStart", "/app-lifecycle/%s/poststartz", 0},
};
#define N_SLOTS (sizeof(probe_slots) / sizeof(probe_slots[0]))

/* The handlers of `container` by slot (NULL: none), its members walked once
 * (first bytes compared before names) rather than looked up slot by slot. */
static void slot_handlers(const json_t *container, json_t *h[N_SLOTS])
{
    wh_json_member stack[MEMBERS_ON_STACK], *heap;
    size_t i, n, s;
    const wh_json_member *m = wh_json_members(container, stack, MEMBERS_ON_STACK, &heap, &n);

    for (s = 0; s < N_SLOTS; s++)
        h[s] = NULL;
    for (i = 0; i < n; i++) {
        const char *key = m[i].key;
        for (s = 0; s < N_SLOTS; s++) {
            json_t *v = m[i].value;
            if (key[0] != probe_slots[s].field[0] || strcmp(key, probe_slots[s].field) != 0)
                continue;
            if (probe_slots[s].sub != NULL)
                v = wh_json_get(v, probe_slots[s].sub);
            h[s] = json_is_object(v) ? v : NULL;
        }
    }
    free(heap);
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
        if (json_is_object(action = wh_json_get(handler, kinds[k])))
            break;
    if (k == (is_probe ? 3 : 2))
        return NULL;
    copy = wh_inject_json_copy(action);
    port = wh_json_get(copy, "port");
    if (k < 2 && json_is_string(port)) {
        const json_t *ports = wh_json_get(container, "ports");
        size_t i;
        for (i = 0; i < json_array_size(ports); i++) {
            const char *n = wh_inject_jstr(json_array_get(ports, i), "name");
            if (n != NULL && *n != '\0' && strcmp(n, json_string_value(port)) == 0)
                break;
        }
        if (i == json_array_size(ports)) {
            json_decref(copy);
            return NULL;
        }
        json_object_set(copy, "port", wh_json_get(json_array_get(ports, i), "containerPort"));
    } else if (k < 2 && json_is_integer(port) && json_integer_value(port) == status_port) {
        json_decref(copy);
        return NULL;
    }
    out = json_object();
    if (out != NULL) {
        json_t *action_out = wh_inject_go_ordered(copy, types[k]);
        /* corev1.GRPCAction's service is a *string without omitempty: Go prints "service":null */
        if (k == 2 && json_object_get(action_out, "service") == NULL)
            json_object_set_new(action_out, "service", json_null());
        json_object_set_new(out, kinds[k], action_out);
    }
    json_decref(copy);
    timeout = wh_json_get(handler, "timeoutSeconds");
    if (out != NULL && is_probe && json_is_integer(timeout) && json_integer_value(timeout) != 0)
        json_object_set(out, "timeoutSeconds", (json_t *)timeout);
    return out;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void dump_sorted(const json_t *map, wh_buf *out)
{
    const char **keys = wh_malloc((json_object_size(map) + 1) * sizeof(*keys)), *key;
    json_t *v, *sorted = json_object();
    size_t n = 0, i;

    json_object_foreach((json_t *)map, key, v) keys[n++] = key;
    qsort(keys, n, sizeof(*keys), cmp_cstr);
    for (i = 0; i < n; i++)
        json_object_set_nocheck(sorted, keys[i], wh_json_get(map, keys[i])); /* keys of an object: UTF-8 */
    wh_go_json(out, sorted, WH_GO_JSON_HTML);
    free(keys);
    json_decref(sorted);
}

/* url: UTF-8 (wh_asprintf of ASCII around a container's name) */
static void rewrite_handler(json_t *h, const char *url, long port)
{
    json_t *get = wh_json_get(h, "httpGet");

    if (!json_is_object(get)) {
        if (wh_json_get(h, "tcpSocket") == NULL && wh_json_get(h, "grpc") == NULL)
            return;
        json_object_del(h, "tcpSocket");
        json_object_del(h, "grpc");
        get = json_object();
        json_object_set_new(h, "httpGet", get);
    }
    json_object_set_new(get, "path", json_string(url));
    json_object_set_new(get, "port", json_integer(port));
    if (json_is_string(wh_json_get(get, "scheme")) && strcmp(wh_inject_jstr(get, "scheme"), "HTTPS") == 0)
        wh_inject_set_string(get, "scheme", "HTTP");
}

/* One pass over the containers but istio-proxy, init containers first (a
 * later prober under the same URL wins): each one's handlers' probers go to
 * `probers`, then, with `rewrite`, its handlers point at the agent's `port`.
 * A container's probers are taken before its handlers change and are copies;
 * no two containers of the merged pod share a handler (the merge rebuilds
 * what is not held once, and shares with the request's pod only plain list
 * items): collecting all first, as istiod does, gives the same.  `hooks`:
 * lifecycle handlers too (WH_REL_REWRITE_LIFECYCLE_HOOKS), else probes only. */
static void probe_pass(const pod_view *v, int status_port, int hooks, int rewrite, long port, json_t *probers)
{
    const json_t *lists[2] = {v->init, v->containers};
    int l;

    for (l = 0; l < 2; l++) {
        size_t i, s;
        for (i = 0; i < json_array_size(lists[l]); i++) {
            json_t *c = json_array_get(lists[l], i), *handlers[N_SLOTS];
            const char *name = wh_inject_name(c);
            char *urls[N_SLOTS] = {NULL};
            if (name == NULL || strcmp(name, WH_PROXY) == 0)
                continue;
            slot_handlers(c, handlers);
            for (s = 0; s < N_SLOTS; s++) {
                json_t *p;
                if (handlers[s] == NULL || (!hooks && !probe_slots[s].is_probe))
                    continue;
                urls[s] = wh_asprintf(probe_slots[s].suffix, name); /* ASCII around a JSON string: UTF-8 */
                if ((p = prober_of(c, handlers[s], probe_slots[s].is_probe, status_port)) != NULL)
                    json_object_set_new_nocheck(probers, urls[s], p);
            }
            for (s = 0; s < N_SLOTS; s++) {
                if (urls[s] != NULL && rewrite && (probe_slots[s].is_probe || wh_json_get(handlers[s], "grpc") == NULL))
                    rewrite_handler(handlers[s], urls[s], port);
                free(urls[s]);
            }
        }
    }
}

static void app_probes(const pod_view *pv, const wh_inject_revision *rev, int status_port)
{
    json_t *ann = pv->ann, *proxy = pv->proxy;
    const json_t *values_flag =
        wh_json_get(wh_json_get(wh_inject_revision_values(rev), "sidecarInjectorWebhook"), "rewriteAppHTTPProbe");
    const char *a = wh_inject_jstr(ann, "sidecar.istio.io/rewriteAppHTTPProbers"),
               *ann_port = wh_inject_jstr(ann, "status.sidecar.istio.io/port");
    const wh_inject_release *release = wh_inject_revision_release(rev);
    int enabled, rewrite = 1;
    int hooks = wh_inject_release_has(release, WH_REL_REWRITE_LIFECYCLE_HOOKS), reinjected;
    json_t *probers = NULL, *env, *old = NULL;
    wh_buf text = WH_BUF_INIT;
    long port = status_port;
    size_t i;

    if (proxy == NULL)
        return;
    enabled = a != NULL && wh_go_parse_bool(a) >= 0 ? wh_go_parse_bool(a) : json_is_true(values_flag);
    if (!enabled)
        return;
    if (ann_port != NULL) {
        char *end;
        errno = 0;
        port = strtol(ann_port, &end, 10);
        rewrite = *ann_port != '\0' && *end == '\0' && errno == 0; /* else istiod logs and leaves the probes alone */
    }
    probers = json_object();
    probe_pass(pv, status_port, hooks, rewrite, port, probers);
    reinjected = wh_inject_jstr(ann, WH_A_STATUS) != NULL;
    if (json_object_size(probers) > 0) {
        json_t *existing = NULL;
        env = wh_json_get(proxy, "env");
        if (reinjected)
            for (i = 0; i < json_array_size(env); i++)
                if (strcmp(wh_inject_jstr(json_array_get(env, i), "name")
                               ? wh_inject_jstr(json_array_get(env, i), "name")
                               : "",
                           "ISTIO_KUBE_APP_PROBERS") == 0) {
                    existing = json_array_get(env, i);
                    break;
                }
        if (existing != NULL) {
            const char *key;
            json_t *v;
            old = json_loads(wh_inject_jstr(existing, "value") != NULL ? wh_inject_jstr(existing, "value") : "",
                             JSON_DECODE_ANY, NULL);
            /* mergeOrAppendProbers: a value that does not decode as KubeAppProbers
             * (an object of probers, or null) leaves the env as it was */
            json_object_foreach(old, key, v) if (!json_is_object(v) && !json_is_null(v)) goto out;
            if (!json_is_object(old) && !json_is_null(old))
                goto out;
            json_object_foreach(old, key, v) json_object_set(probers, key, v);
        }
        dump_sorted(probers, &text);
        if (existing != NULL)
            wh_inject_set_json_text(existing, "value", &text);
        else if (!reinjected || wh_inject_release_has(release, WH_REL_PROBERS_APPEND_ON_REINJECT))
            wh_inject_append_env(proxy, "ISTIO_KUBE_APP_PROBERS", text.data);
    }
out:
    json_decref(probers);
    json_decref(old);
    wh_buf_free(&text);
}

/* ---- 3.10.5 metadata ---- */

/* `"field":` and the names of the items of `list` as a JSON list (null when
 * there are none; "" for an item without a name), as json.Marshal prints a
 * []string field of istiod's SidecarInjectionStatus. */
static void status_names(wh_buf *out, const char *field, size_t field_len, const json_t *list)
{
    size_t i, n;
    json_t *const *items = wh_json_array_items(list, &n);

    if (items == NULL)
        n = json_array_size(list);
    wh_buf_append(out, field, field_len);
    if (n == 0) {
        wh_buf_append(out, "null", 4);
        return;
    }
    for (i = 0; i < n; i++) {
        const json_t *item = items != NULL ? items[i] : json_array_get(list, i);
        const json_t *name = wh_inject_name_json(item);
        wh_buf_putc(out, i == 0 ? '[' : ',');
        if (name != NULL) {
            size_t len;
            const char *text = wh_json_string_text(name, &len);
            wh_go_json_string(out, text, len, WH_GO_JSON_HTML);
        } else {
            wh_buf_append(out, "\"\"", 2);
        }
    }
    wh_buf_putc(out, ']');
}

static int is_utf8(const char *s)
{
    size_t n = strlen(s), i, len;
    unsigned cp;

    for (i = 0; i < n; i += len)
        if ((len = wh_utf8_decode((const unsigned char *)s + i, n - i, &cp)) == 0)
            return 0;
    return 1;
}

static wh_code metadata(const pod_view *pv, const wh_inject_post_params *p, wh_err *err)
{
    json_t *meta = pv->meta, *ann = pv->ann;
    const json_t *tspec = wh_json_get(p->tmpl, "spec");
    const char *key, *revision = p->r->revision != NULL && *p->r->revision != '\0' ? p->r->revision : "default";
    json_t *v;
    wh_buf text = WH_BUF_INIT;

    if (!is_utf8(revision)) /* webhookctl's --revision */
        return wh_err_set(err, WH_E_INVALID, "the revision name is not UTF-8");
    if (p->r->network != NULL && *p->r->network != '\0')
        wh_inject_set_string(wh_inject_obj_child(meta, "labels", 1), "topology.istio.io/network", p->r->network);
        /* the status annotation: SidecarInjectionStatus's fields in Go's order */
#define STATUS_NAMES(text, field, list) status_names(text, field, sizeof(field) - 1, list)
    wh_buf_reserve(&text, 512); /* the hello pod's status annotation is ~250 bytes: one allocation */
    STATUS_NAMES(&text, "{\"initContainers\":", wh_json_get(tspec, "initContainers"));
    STATUS_NAMES(&text, ",\"containers\":", wh_json_get(tspec, "containers"));
    STATUS_NAMES(&text, ",\"volumes\":", wh_json_get(tspec, "volumes"));
    STATUS_NAMES(&text, ",\"imagePullSecrets\":", wh_json_get(tspec, "imagePullSecrets"));
#undef STATUS_NAMES
    wh_buf_puts(&text, ",\"revision\":");
    wh_go_json_string(&text, revision, strlen(revision), WH_GO_JSON_HTML);
    wh_buf_putc(&text, '}');
    wh_inject_set_json_text(ann, WH_A_STATUS, &text);
    wh_buf_free(&text);
    if (p->kube_inject)
        return WH_OK;
    json_object_foreach((json_t *)wh_inject_revision_injected_annotations(p->rev), key, v)
    {
        if (json_is_string(v))
            wh_inject_set_string(ann, key, json_string_value(v));
    }
    return WH_OK;
}

/* ---- 3.10.6 / 3.7 reorder ---- */

/* list: an array (or NULL: nothing to move) */
static void move_named(json_t *list, const char *name, int first)
{
    size_t idx;
    json_t *c = wh_inject_find_named(list, name, &idx);

    if (c == NULL)
        return;
    json_incref(c);
    json_array_remove(list, idx);
    if (first)
        json_array_insert_new(list, 0, c);
    else
        json_array_append_new(list, c);
}

static void reorder(const pod_view *pv, int hold)
{
    json_t *containers = pv->containers, *init = pv->init;

    move_named(containers, WH_PROXY, hold);
    if (wh_inject_find_named(init, WH_PROXY, NULL) != NULL) {
        move_named(init, WH_CORE_DUMP, 1);
        move_named(init, WH_PROXY, 1);
        move_named(init, WH_VALIDATION, 1);
        move_named(init, WH_INIT, 1);
        return;
    }
    move_named(init, WH_VALIDATION, 1);
    move_named(init, WH_INIT, 0);
    move_named(init, WH_CORE_DUMP, 0);
}

wh_code wh_inject_postprocess(json_t *pod, const wh_inject_post_params *p, wh_err *err)
{
    const wh_inject_release *release = wh_inject_revision_release(p->rev);
    int status_port = wh_inject_revision_status_port(p->rev);
    prom_annotations pa;
    pod_view pv;
    wh_code rc;

    view_of(pod, &pv);
    prom_scan(pv.ann, &pa);
    cluster_envs(pv.proxy, p->r->proxy_envs);
    if ((rc = prometheus_merge(pv.ann, pv.proxy, &pa, p->rev, status_port, err)) != WH_OK)
        return rc;
    if (wh_inject_release_has(release, WH_REL_PROMETHEUS_SECURE_PORT))
        secure_port(pv.ann, pv.proxy, &pa);
    app_probes(&pv, p->rev, status_port);
    if ((rc = metadata(&pv, p, err)) != WH_OK)
        return rc;
    reorder(&pv, p->r->hold);
    return wh_inject_go_roundtrip_beside(pod, p->original, &wh_inject_type_pod, err);
}
