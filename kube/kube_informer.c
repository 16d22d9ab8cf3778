/*
 * kube_informer.c - LIST + WATCH of one kind on its own thread, a trimmed
 * local cache, change callbacks, backoff and status (see wh_kube_informer.h).
 */
#include "wh_kube_informer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wh_alloc.h"
#include "kube_internal.h"
#include "wh_json.h"
#include "wh_log.h"

#define LIST_PAGE "500"

enum watch_end { WATCH_ENDED, WATCH_EXPIRED, WATCH_FAILED };

struct wh_kube_informer {
    wh_kube_informer_options o;
    char *ns, *label_selector, *field_selector, *cache_file;
    char what[160]; /* "configmaps in istio-system" */
    wh_kube_client *client;
    pthread_t thread;
    int started;
    atomic_int stop;
    unsigned seed;

    /* informer thread only */
    json_t *cache;
    char rv[64];
    int expired;      /* the watch saw a 410 */
    int watch_failed; /* the watch saw another ERROR event */
    int save_failed;  /* the last write of cache_file failed (logged once) */
    long events;      /* events in the current watch */
    char event_error[256];

    /* status, under mu; cv wakes sleeps on stop */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int synced, unavailable, healthy;
    int from_snapshot;       /* the cache is cache_file's until a LIST succeeds */
    struct timespec last_ok; /* CLOCK_MONOTONIC */
    size_t nobjects;
    char problem[512];

    wh_metric *m_restarts, *m_relists, *m_objects, *m_age;
};

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const *label(const wh_kube_informer *inf)
{
    static __thread const char *v[1];
    v[0] = inf->o.resource->plural;
    return v;
}

/* ---- status ----------------------------------------------------------------- */

static void set_healthy(wh_kube_informer *inf)
{
    int was;

    pthread_mutex_lock(&inf->mu);
    was = inf->healthy;
    inf->healthy = 1;
    clock_gettime(CLOCK_MONOTONIC, &inf->last_ok);
    inf->problem[0] = '\0';
    pthread_mutex_unlock(&inf->mu);
    if (!was && inf->synced)
        wh_log(WH_LOG_INFO, "kube: watch resumed", "resource", inf->what, NULL);
    if (inf->m_age != NULL)
        wh_metric_set(inf->m_age, label(inf), 0);
}

static void set_problem(wh_kube_informer *inf, const char *what, const wh_err *err)
{
    int was;

    pthread_mutex_lock(&inf->mu);
    was = inf->healthy;
    inf->healthy = 0;
    snprintf(inf->problem, sizeof(inf->problem), "%s: %s", what, wh_err_msg(err));
    pthread_mutex_unlock(&inf->mu);
    /* Once per outage at WARN; every retry at DEBUG. */
    wh_log(was || !inf->synced ? WH_LOG_WARN : WH_LOG_DEBUG, "kube: cannot read from the API server; retrying",
           "resource", inf->what, "error", inf->problem, NULL);
}

double wh_kube_informer_sync_age(wh_kube_informer *inf)
{
    double age = 0;

    pthread_mutex_lock(&inf->mu);
    if (!inf->healthy && (inf->last_ok.tv_sec != 0 || inf->last_ok.tv_nsec != 0))
        age = now_mono() - ((double)inf->last_ok.tv_sec + (double)inf->last_ok.tv_nsec / 1e9);
    pthread_mutex_unlock(&inf->mu);
    return age;
}

int wh_kube_informer_synced(wh_kube_informer *inf)
{
    int v;
    pthread_mutex_lock(&inf->mu);
    v = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return v;
}

int wh_kube_informer_unavailable(wh_kube_informer *inf)
{
    int v;
    pthread_mutex_lock(&inf->mu);
    v = inf->unavailable;
    pthread_mutex_unlock(&inf->mu);
    return v;
}

void wh_kube_informer_describe(wh_kube_informer *inf, wh_buf *out)
{
    pthread_mutex_lock(&inf->mu);
    if (inf->unavailable)
        wh_buf_printf(out, "%s: not available (%s); none assumed", inf->what, inf->problem);
    else if (!inf->synced)
        wh_buf_printf(out, "%s: waiting for the first list%s%s", inf->what, inf->problem[0] ? ": " : "", inf->problem);
    else if (inf->from_snapshot)
        wh_buf_printf(out, "%s: %zu objects from the snapshot %s; reconnecting (%s)", inf->what, inf->nobjects,
                      inf->cache_file, inf->problem);
    else if (!inf->healthy)
        wh_buf_printf(out, "%s: %zu objects as last seen; reconnecting (%s)", inf->what, inf->nobjects, inf->problem);
    else
        wh_buf_printf(out, "%s: watching, %zu objects", inf->what, inf->nobjects);
    pthread_mutex_unlock(&inf->mu);
}

/* Sleep `seconds` unless stopped; returns nonzero when stopping.  The sync age
 * gauge moves on meanwhile. */
static int nap(wh_kube_informer *inf, double seconds)
{
    double end = now_mono() + seconds;

    pthread_mutex_lock(&inf->mu);
    while (!atomic_load(&inf->stop)) {
        double left = end - now_mono();
        struct timespec ts;
        if (left <= 0)
            break;
        if (left > 1)
            left = 1;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)left;
        ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&inf->cv, &inf->mu, &ts);
        if (inf->m_age != NULL && !inf->healthy && inf->synced) {
            pthread_mutex_unlock(&inf->mu);
            wh_metric_set(inf->m_age, label(inf), wh_kube_informer_sync_age(inf));
            pthread_mutex_lock(&inf->mu);
        }
    }
    pthread_mutex_unlock(&inf->mu);
    return atomic_load(&inf->stop);
}

/* Exponential backoff with jitter: a wait in [b/2, b), then b doubles up to the cap. */
static double next_wait(wh_kube_informer *inf, double *backoff)
{
    double w = *backoff * (0.5 + 0.5 * (double)rand_r(&inf->seed) / ((double)RAND_MAX + 1.0));
    double cap = inf->o.backoff_max_s > 0 ? inf->o.backoff_max_s : 30.0;

    *backoff = *backoff * 2 > cap ? cap : *backoff * 2;
    return w;
}

/* ---- cache -------------------------------------------------------------------- */

static int object_key(const json_t *obj, char *key, size_t size)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));

    if (name == NULL)
        return -1;
    if (ns != NULL && ns[0] != '\0')
        snprintf(key, size, "%s/%s", ns, name);
    else
        snprintf(key, size, "%s", name);
    return 0;
}

static json_t *trim(wh_kube_informer *inf, const json_t *obj)
{
    return inf->o.trim != NULL ? inf->o.trim(obj, inf->o.ctx) : json_incref((json_t *)obj);
}

/* ---- snapshot on disk ------------------------------------------------------- */

/* What a snapshot must say to be loaded: written by this build (the trimmed
 * shape may change between releases) for the same collection. */
static json_t *snapshot_header(const wh_kube_informer *inf)
{
    return json_pack("{s:s, s:s}", "writer", "webhookd " WH_VERSION, "what", inf->what);
}

/* Write the cache to cache_file (a temporary file renamed over it, so a
 * crash never leaves half a snapshot); a failure is logged once and never
 * stops the informer. */
static void snapshot_save(wh_kube_informer *inf)
{
    json_t *doc = snapshot_header(inf);
    wh_buf tmp = WH_BUF_INIT;
    int ok;

    json_object_set_new(doc, "unavailable", json_boolean(inf->unavailable));
    json_object_set_new(doc, "objects", inf->cache != NULL ? json_incref(inf->cache) : json_object());
    wh_buf_printf(&tmp, "%s.tmp", inf->cache_file);
    errno = 0;
    ok = json_dump_file(doc, tmp.data, JSON_COMPACT) == 0 && rename(tmp.data, inf->cache_file) == 0;
    if (!ok) {
        const char *why = errno != 0 ? strerror(errno) : "cannot write the file";
        if (!inf->save_failed)
            wh_log(WH_LOG_WARN, "kube: cannot write the snapshot; a restart during an API server outage will wait",
                   "resource", inf->what, "file", inf->cache_file, "error", why, NULL);
        remove(tmp.data);
    } else if (inf->save_failed) {
        wh_log(WH_LOG_INFO, "kube: snapshot written again", "resource", inf->what, "file", inf->cache_file, NULL);
    }
    inf->save_failed = !ok;
    json_decref(doc);
    wh_buf_free(&tmp);
}

/* Load cache_file as the cache (and whether the kind was unavailable); 0
 * when it is there and ours. */
static int snapshot_load(wh_kube_informer *inf)
{
    json_error_t jerr;
    json_t *doc = NULL, *want = snapshot_header(inf), *objects;
    int ok = 0;

    if (access(inf->cache_file, F_OK) != 0) /* none written yet */
        goto out;
    if ((doc = json_load_file(inf->cache_file, 0, &jerr)) == NULL) {
        wh_log(WH_LOG_WARN, "kube: snapshot unreadable; ignored", "resource", inf->what, "file", inf->cache_file,
               "error", jerr.text, NULL);
        goto out;
    }
    objects = json_object_get(doc, "objects");
    if (!json_is_object(objects) || !json_equal(json_object_get(doc, "writer"), json_object_get(want, "writer")) ||
        !json_equal(json_object_get(doc, "what"), json_object_get(want, "what"))) {
        wh_log(WH_LOG_WARN, "kube: snapshot of another collection or webhookd release; ignored", "resource", inf->what,
               "file", inf->cache_file, NULL);
        goto out;
    }
    json_decref(inf->cache);
    inf->cache = json_incref(objects);
    pthread_mutex_lock(&inf->mu);
    inf->unavailable = json_is_true(json_object_get(doc, "unavailable"));
    pthread_mutex_unlock(&inf->mu);
    ok = 1;
out:
    json_decref(doc);
    json_decref(want);
    return ok ? 0 : -1;
}

static void notify(wh_kube_informer *inf)
{
    size_t n = json_object_size(inf->cache);

    pthread_mutex_lock(&inf->mu);
    inf->nobjects = n;
    pthread_mutex_unlock(&inf->mu);
    if (inf->m_objects != NULL)
        wh_metric_set(inf->m_objects, label(inf), (double)n);
    if (inf->o.on_change != NULL)
        inf->o.on_change(inf->o.ctx, inf, inf->cache);
    if (inf->cache_file != NULL && !inf->from_snapshot)
        snapshot_save(inf);
}

/* Put (trimmed != NULL) or remove `key`; 1 when the cache changed.  The
 * cache's objects are replaced, never modified: consumers may hold them. */
static int cache_set(wh_kube_informer *inf, const char *key, json_t *trimmed)
{
    json_t *cur = json_object_get(inf->cache, key);

    if (trimmed == NULL) {
        if (cur == NULL)
            return 0;
        json_object_del(inf->cache, key);
        return 1;
    }
    if (cur != NULL && json_equal(cur, trimmed)) {
        json_decref(trimmed);
        return 0;
    }
    if (inf->cache == NULL || json_is_null(inf->cache))
        inf->cache = json_object();
    json_object_set_new(inf->cache, key, trimmed);
    return 1;
}

/* ---- LIST --------------------------------------------------------------------- */

static wh_code collection_path(wh_kube_informer *inf, wh_buf *path, wh_err *err)
{
    wh_code rc;

    if ((rc = kube_resource_path(inf->client, inf->o.resource, inf->ns, NULL, path, err)) != WH_OK)
        return rc;
    if (inf->label_selector != NULL)
        kube_add_query(inf->client, path, "labelSelector", inf->label_selector);
    if (inf->field_selector != NULL)
        kube_add_query(inf->client, path, "fieldSelector", inf->field_selector);
    return WH_OK;
}

/* Read everything (pages of 500) into a new cache; on success it replaces
 * the old one and the list's resourceVersion is where the watch starts. */
static wh_code list_all(wh_kube_informer *inf, long *http_status, wh_err *err)
{
    json_t *fresh = json_object(), *page = NULL, *it;
    char *token = NULL, rv[64] = "";
    wh_buf path = WH_BUF_INIT;
    size_t i;
    int changed;
    wh_code rc = WH_OK;

    do {
        const char *next, *prv;
        wh_buf_reset(&path);
        if ((rc = collection_path(inf, &path, err)) != WH_OK)
            goto out;
        kube_add_query(inf->client, &path, "limit", LIST_PAGE);
        if (token != NULL)
            kube_add_query(inf->client, &path, "continue", token);
        json_decref(page);
        page = NULL;
        if ((rc = wh_kube_request(inf->client, "GET", path.data, NULL, NULL, 0, http_status, &page, err)) != WH_OK)
            goto out;
        if (!json_is_array(json_object_get(page, "items")) && !json_is_null(json_object_get(page, "items"))) {
            rc = wh_err_set(err, WH_E_PARSE, "list of %s: the answer has no items", inf->o.resource->plural);
            goto out;
        }
        prv = json_string_value(json_object_get(json_object_get(page, "metadata"), "resourceVersion"));
        if (rv[0] == '\0' && prv != NULL)
            snprintf(rv, sizeof(rv), "%s", prv);
        json_array_foreach(json_object_get(page, "items"), i, it)
        {
            char key[600];
            json_t *t;
            if (object_key(it, key, sizeof(key)) != 0 || (t = trim(inf, it)) == NULL)
                continue;
            json_object_set_new(fresh, key, t);
        }
        next = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
        free(token);
        token = next != NULL && next[0] != '\0' ? wh_strdup(next) : NULL;
    } while (token != NULL && !atomic_load(&inf->stop));
    changed = inf->cache == NULL || !json_equal(inf->cache, fresh) || !inf->synced || inf->from_snapshot;
    json_decref(inf->cache);
    inf->cache = fresh;
    fresh = NULL;
    snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
    /* Available again before the consumer hears of it (it reads unavailable in on_change). */
    pthread_mutex_lock(&inf->mu);
    changed |= inf->unavailable;
    inf->from_snapshot = inf->unavailable = 0;
    pthread_mutex_unlock(&inf->mu);
    set_healthy(inf);
    if (changed)
        notify(inf);
    /* Synced only once the consumer has seen the list (revisions loaded before /readyz says 200). */
    pthread_mutex_lock(&inf->mu);
    inf->synced = 1;
    pthread_mutex_unlock(&inf->mu);
out:
    json_decref(fresh);
    json_decref(page);
    free(token);
    wh_buf_free(&path);
    return rc;
}

/* ---- WATCH -------------------------------------------------------------------- */

static int on_event(void *ctx, const char *line, size_t len)
{
    wh_kube_informer *inf = ctx;
    json_t *ev = wh_json_loadb(line, len, 0, NULL), *obj;
    const char *type, *rv;
    char key[600];
    int stop = 0;

    if (ev == NULL) {
        snprintf(inf->event_error, sizeof(inf->event_error), "the watch sent a line that is not JSON");
        inf->watch_failed = 1;
        return 1;
    }
    type = json_string_value(json_object_get(ev, "type"));
    obj = json_object_get(ev, "object");
    if (type == NULL || !json_is_object(obj)) {
        snprintf(inf->event_error, sizeof(inf->event_error), "the watch sent an event without type or object");
        inf->watch_failed = 1;
        stop = 1;
        goto out;
    }
    if (strcmp(type, "ERROR") == 0) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        if (code == 410)
            inf->expired = 1;
        else
            inf->watch_failed = 1;
        snprintf(inf->event_error, sizeof(inf->event_error), "%s (%lld)", msg != NULL ? msg : "watch error",
                 (long long)code);
        stop = 1;
        goto out;
    }
    rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (rv != NULL)
        snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
    inf->events++;
    if (inf->events == 1)
        set_healthy(inf);
    if (strcmp(type, "BOOKMARK") == 0 || object_key(obj, key, sizeof(key)) != 0)
        goto out;
    if (strcmp(type, "DELETED") == 0                                  ? cache_set(inf, key, NULL)
        : strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0 ? cache_set(inf, key, trim(inf, obj))
                                                                      : 0)
        notify(inf);
out:
    json_decref(ev);
    return stop;
}

static enum watch_end watch_once(wh_kube_informer *inf, wh_err *err)
{
    wh_buf path = WH_BUF_INIT;
    char tmo[16];
    int timeout_s = inf->o.watch_timeout_s > 0 ? inf->o.watch_timeout_s : 300 + rand_r(&inf->seed) % 300;
    long status = 0;
    wh_code rc;

    inf->expired = inf->watch_failed = 0;
    inf->events = 0;
    inf->event_error[0] = '\0';
    snprintf(tmo, sizeof(tmo), "%d", timeout_s);
    if ((rc = collection_path(inf, &path, err)) != WH_OK)
        goto out;
    kube_add_query(inf->client, &path, "watch", "true");
    kube_add_query(inf->client, &path, "allowWatchBookmarks", "true");
    kube_add_query(inf->client, &path, "resourceVersion", inf->rv);
    kube_add_query(inf->client, &path, "timeoutSeconds", tmo);
    rc = wh_kube_stream(inf->client, path.data, (timeout_s + 30) * 1000L, on_event, inf, &inf->stop, &status, err);
out:
    wh_buf_free(&path);
    if (inf->expired || status == 410)
        return WATCH_EXPIRED;
    if (inf->watch_failed) {
        wh_err_set(err, WH_E_REMOTE, "%s", inf->event_error);
        return WATCH_FAILED;
    }
    if (rc != WH_OK)
        return status == 403 || status == 404 ? WATCH_EXPIRED : WATCH_FAILED; /* relist decides what it means */
    return WATCH_ENDED;
}

/* The first LIST failed: serve cache_file's objects, when there are some of
 * ours, until a LIST succeeds. */
static void serve_snapshot(wh_kube_informer *inf)
{
    if (snapshot_load(inf) != 0)
        return;
    pthread_mutex_lock(&inf->mu);
    inf->from_snapshot = 1;
    pthread_mutex_unlock(&inf->mu);
    wh_log(WH_LOG_WARN, "kube: API server unreachable at start; serving the last snapshot until it answers", "resource",
           inf->what, "file", inf->cache_file, NULL);
    notify(inf);
    pthread_mutex_lock(&inf->mu);
    inf->synced = 1;
    pthread_mutex_unlock(&inf->mu);
}

static void *run(void *arg)
{
    wh_kube_informer *inf = arg;
    double start = inf->o.backoff_start_s > 0 ? inf->o.backoff_start_s : 0.5, backoff = start;
    int need_list = 1, listed_once = 0;

    while (!atomic_load(&inf->stop)) {
        wh_err err = {0};
        if (need_list) {
            long status = 0;
            if (list_all(inf, &status, &err) != WH_OK) {
                if (atomic_load(&inf->stop))
                    break;
                if (status == 403 || status == 404) {
                    int was;
                    pthread_mutex_lock(&inf->mu);
                    was = inf->unavailable;
                    inf->unavailable = inf->synced = 1;
                    inf->healthy = 1;
                    snprintf(inf->problem, sizeof(inf->problem), "%s", wh_err_msg(&err));
                    pthread_mutex_unlock(&inf->mu);
                    if (!was) {
                        wh_log(WH_LOG_WARN, "kube: not allowed to read, or not installed; treated as empty", "resource",
                               inf->what, "error", wh_err_msg(&err), NULL);
                        json_decref(inf->cache);
                        inf->cache = json_object();
                        notify(inf);
                    }
                    nap(inf, WH_KUBE_INFORMER_UNAVAILABLE_RETRY_S);
                    continue;
                }
                set_problem(inf, "list", &err);
                if (!listed_once && inf->cache_file != NULL && !inf->synced)
                    serve_snapshot(inf);
                nap(inf, next_wait(inf, &backoff));
                continue;
            }
            if (listed_once && inf->m_relists != NULL)
                wh_metric_add(inf->m_relists, label(inf), 1);
            listed_once = 1;
            need_list = 0;
            backoff = start;
        }
        {
            double t0 = now_mono();
            enum watch_end end = watch_once(inf, &err);
            if (atomic_load(&inf->stop))
                break;
            if (inf->m_restarts != NULL)
                wh_metric_add(inf->m_restarts, label(inf), 1);
            if (end == WATCH_EXPIRED) {
                wh_log(WH_LOG_INFO, "kube: watch history expired; listing again", "resource", inf->what, NULL);
                need_list = 1;
                continue;
            }
            if (end == WATCH_ENDED && (inf->events > 0 || now_mono() - t0 >= 1.0)) {
                set_healthy(inf);
                backoff = start;
                continue;
            }
            if (end == WATCH_ENDED) /* ended at once: do not hammer the server */
                wh_err_set(&err, WH_E_REMOTE, "the watch ended immediately");
            set_problem(inf, "watch", &err);
            nap(inf, next_wait(inf, &backoff));
        }
    }
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------ */

static char *dup_opt(const char *s)
{
    return s != NULL && s[0] != '\0' ? wh_strdup(s) : NULL;
}

wh_code wh_kube_informer_start(const wh_kube_informer_options *o, wh_kube_informer **out, wh_err *err)
{
    static const char *const labels[] = {"resource", NULL};
    wh_kube_informer *inf = wh_calloc(1, sizeof(*inf));
    wh_code rc;

    *out = NULL;
    inf->o = *o;
    inf->ns = dup_opt(o->ns);
    inf->label_selector = dup_opt(o->label_selector);
    inf->field_selector = dup_opt(o->field_selector);
    inf->cache_file = dup_opt(o->cache_file);
    inf->o.ns = inf->o.label_selector = inf->o.field_selector = inf->o.cache_file = NULL;
    inf->o.kube = NULL;
    inf->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)inf;
    atomic_init(&inf->stop, 0);
    pthread_mutex_init(&inf->mu, NULL);
    pthread_cond_init(&inf->cv, NULL);
    snprintf(inf->what, sizeof(inf->what), "%s%s%s%s%s", o->resource->plural, inf->ns ? " in " : "",
             inf->ns ? inf->ns : "", inf->label_selector ? " with " : "",
             inf->label_selector ? inf->label_selector : "");
    if (o->metrics != NULL) {
        inf->m_restarts = wh_metrics_counter(o->metrics, "webhookd_kube_watch_restarts_total",
                                             "Watches started again after they ended or failed, by resource.", labels);
        inf->m_relists = wh_metrics_counter(o->metrics, "webhookd_kube_relists_total",
                                            "Full lists after the first (watch history expired), by resource.", labels);
        inf->m_objects = wh_metrics_gauge(o->metrics, "webhookd_kube_cached_objects",
                                          "Objects held by the informer of a resource (trimmed).", labels);
        inf->m_age = wh_metrics_gauge(o->metrics, "webhookd_kube_sync_age_seconds",
                                      "Seconds since the informer of a resource was last in sync with the API "
                                      "server (0 while its watch is healthy).",
                                      labels);
    }
    if ((rc = wh_kube_client_new(o->kube, &inf->client, err)) != WH_OK)
        goto fail;
    if (pthread_create(&inf->thread, NULL, run, inf) != 0) {
        rc = wh_err_set(err, WH_E_INTERNAL, "cannot start the informer thread for %s", inf->what);
        goto fail;
    }
    inf->started = 1;
    *out = inf;
    return WH_OK;
fail:
    wh_kube_informer_stop(inf);
    return rc;
}

void wh_kube_informer_stop(wh_kube_informer *inf)
{
    if (inf == NULL)
        return;
    if (inf->started) {
        pthread_mutex_lock(&inf->mu);
        atomic_store(&inf->stop, 1);
        pthread_cond_broadcast(&inf->cv);
        pthread_mutex_unlock(&inf->mu);
        pthread_join(inf->thread, NULL);
    }
    wh_kube_client_free(inf->client);
    json_decref(inf->cache);
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->cache_file);
    pthread_mutex_destroy(&inf->mu);
    pthread_cond_destroy(&inf->cv);
    free(inf);
}
