/*
 * wh_inject_registry.c - every revision webhookd serves: one subdirectory
 * of --revisions-dir per revision (files `config`, `values`, `mesh`, i.e.
 * the mounted ConfigMaps, and optionally `version`, the revision's Istio
 * release: wh_inject_release.h), reloaded when the files change.  Requests take a
 * reference to an immutable snapshot, so a reload never disturbs a request
 * in flight; a broken new config keeps the previous snapshot serving and is
 * reported in logs, metrics and the readiness detail.
 *
 * "Broken" includes a config that parses but cannot render: every new
 * snapshot first renders a plain pod (wh_inject_registry_check), so a
 * template that fails at execution never replaces a good one.  Readiness
 * says whether webhookd can serve, not whether every revision is perfect:
 * all replicas read the same config, so one bad edit must not take every
 * pod out of the Service (with failurePolicy Fail that stops the cluster).
 */
#include "wh_inject_revision.h"
#include "wh_inject_revision_load.h"
#include "wh_inject_render.h"
#include "wh_inject_shape.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wh_log.h"

#define FILE_MAX (8u << 20) /* a ConfigMap is at most 1 MiB; leave room */

#define NFILES 4
static const char *const files[NFILES] = {"config", "values", "mesh", "version"};
enum { F_MESH = 2, F_VERSION = 3 }; /* optional files */

/* What a revision's files looked like when last read. */
typedef struct sig {
    long long mtime_ns[NFILES], size[NFILES], ino[NFILES];
    int present[NFILES];
} sig;

typedef struct entry {
    char *name;
    wh_inject_revision *rev; /* serving snapshot, or NULL if never loaded */
    sig loaded;              /* files of `rev` */
    sig seen;                /* files last tried */
    char *error;             /* why the last try failed, or NULL */
    int mark;                /* still present in this scan */
    json_t *inputs;          /* cluster source: the ConfigMaps' contents last tried */
    int rev_renders;         /* `rev` passed wh_inject_registry_check */
    char release[16];        /* release label last published ("" none) */
    const char *source;      /* its source label */
} entry;

struct wh_inject_registry {
    pthread_rwlock_t lock; /* guards entries / n */
    pthread_mutex_t reload_mu;
    entry *entries;
    size_t n;
    char *dir;
    /* The built-in revision (wh_inject_embedded.c), loaded only while it
     * serves "default" (no revision of that name does: serving_default);
     * never in cluster mode, where "default" is what the cluster says. */
    wh_inject_revision *embedded;
    int cluster;
    pthread_mutex_t embed_mu; /* one load of it at a time */
    wh_metric *reloads, *loaded, *refused, *release;
    /* wh_inject_registry_on_serve: held while the callback runs, so that a
     * callback being replaced is not running any more */
    pthread_mutex_t serve_mu;
    wh_inject_serve_fn on_serve;
    void *serve_ctx;
    /* watcher */
    pthread_mutex_t watch_mu;
    pthread_cond_t watch_cv;
    pthread_t thread;
    int watching, stopping;
    unsigned interval_ms;
};

static void read_sig(const char *dir, const char *name, sig *s)
{
    char path[4096];
    struct stat st;

    memset(s, 0, sizeof(*s));
    for (int i = 0; i < NFILES; i++) {
        snprintf(path, sizeof(path), "%s/%s/%s", dir, name, files[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            s->present[i] = 1;
            s->mtime_ns[i] = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
            s->size[i] = (long long)st.st_size;
            s->ino[i] = (long long)st.st_ino;
        }
    }
}

static void count(wh_inject_registry *reg, const char *rev, const char *result)
{
    const char *labels[] = {rev, result};
    if (reg->reloads != NULL)
        wh_metric_add(reg->reloads, labels, 1);
}

/* Read and parse one revision directory. */
static wh_code load_dir(const char *dir, const char *name, wh_inject_revision **out, wh_err *err)
{
    wh_buf b[NFILES] = {WH_BUF_INIT, WH_BUF_INIT, WH_BUF_INIT, WH_BUF_INIT};
    wh_release_hints hints = {NULL, WH_RELEASE_FILE, NULL, NULL};
    char path[4096];
    wh_code rc = WH_OK;

    for (int i = 0; i < NFILES && rc == WH_OK; i++) {
        snprintf(path, sizeof(path), "%s/%s/%s", dir, name, files[i]);
        if ((i == F_MESH || i == F_VERSION) && access(path, F_OK) != 0)
            continue; /* mesh: Istio's defaults; version: from the values, else the newest */
        if ((rc = wh_buf_read_file(&b[i], path, FILE_MAX, err)) != WH_OK)
            wh_err_prefix(err, "revision %s", name);
    }
    if (b[F_VERSION].data != NULL)
        hints.explicit_version = b[F_VERSION].data;
    if (rc == WH_OK && (rc = wh_inject_revision_load_release(name, b[0].data ? b[0].data : "", b[0].len, b[1].data,
                                                             b[1].len, b[2].data, b[2].len, &hints, out, err)) != WH_OK)
        wh_err_prefix(err, "revision %s", name);
    for (int i = 0; i < NFILES; i++)
        wh_buf_free(&b[i]);
    return rc;
}

wh_code wh_inject_registry_check(const wh_inject_revision *rev, wh_err *err)
{
    static const char pod_json[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                                   "\"webhookd-check\",\"namespace\":\"default\",\"labels\":{\"app\":\"check\"}},"
                                   "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"app:1\"}]}}";
    json_t *pod = json_loads(pod_json, 0, NULL);
    wh_inject_input in;
    wh_inject_rendered r;
    wh_inject_shaped *shaped = NULL;
    wh_code rc;

    if (json_array_size(rev->template_names) == 0) { /* nothing to render (an injection-less config) */
        json_decref(pod);
        return WH_OK;
    }
    memset(&in, 0, sizeof(in));
    memset(&r, 0, sizeof(r));
    in.rev = rev;
    in.pod = pod;
    if ((rc = wh_inject_render(&in, &r, err)) == WH_OK)
        rc = wh_inject_shape_overlays(r.overlays, (const char *const *)r.names, &shaped, err);
    if (rc != WH_OK)
        wh_err_prefix(err, "check render of a plain pod: failed to run injection template");
    free(shaped);
    wh_inject_rendered_clear(&r);
    json_decref(pod);
    return rc;
}

/* webhookd_inject_revision_release{revision,release,source} = 1 for the
 * serving snapshot; the previous combination drops to 0.  Under the lock. */
static void publish_release(wh_inject_registry *reg, entry *e)
{
    const wh_inject_release *r = e->rev != NULL ? wh_inject_revision_release(e->rev) : NULL;
    char now[16];

    if (reg->release == NULL)
        return;
    if (r == NULL) {
        now[0] = '\0';
    } else {
        snprintf(now, sizeof(now), "%d.%d", r->behaves.major, r->behaves.minor);
        if (strcmp(now, e->release) == 0 && e->source == wh_release_source_name(r->source))
            return;
    }
    if (e->release[0] != '\0') {
        const char *old[] = {e->name, e->release, e->source};
        wh_metric_set(reg->release, old, 0);
    }
    snprintf(e->release, sizeof(e->release), "%s", now);
    if (r != NULL) {
        const char *labels[] = {e->name, e->release, wh_release_source_name(r->source)};
        e->source = labels[2];
        wh_metric_set(reg->release, labels, 1);
    }
}

/* Tell the on_serve callback that `rev` serves from now on. */
static void served(wh_inject_registry *reg, const char *name, const wh_inject_revision *rev)
{
    pthread_mutex_lock(&reg->serve_mu);
    if (reg->on_serve != NULL)
        reg->on_serve(reg->serve_ctx, name, rev);
    pthread_mutex_unlock(&reg->serve_mu);
}

static entry *find(wh_inject_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->entries[i].name, name) == 0)
            return &reg->entries[i];
    return NULL;
}

/* Whether a revision named "default" serves (else the built-in one does,
 * outside cluster mode).  Under the lock. */
static int serving_default(wh_inject_registry *reg)
{
    const entry *e = find(reg, "default");
    return e != NULL && e->rev != NULL;
}

/* A new reference to the built-in revision when it is what serves "default"
 * (NULL otherwise, or when it does not load: logged), loaded now if this is
 * the first need since it last served; *fresh (optional): loaded by this
 * call, and the on_serve callback told. */
static wh_inject_revision *builtin_default(wh_inject_registry *reg, int *fresh)
{
    wh_inject_revision *rev = NULL;
    wh_err err = {0};
    int wanted;

    if (fresh != NULL)
        *fresh = 0;
    pthread_mutex_lock(&reg->embed_mu);
    pthread_rwlock_rdlock(&reg->lock);
    wanted = !reg->cluster && !serving_default(reg);
    if (wanted)
        rev = wh_inject_revision_ref(reg->embedded);
    pthread_rwlock_unlock(&reg->lock);
    if (wanted && rev == NULL) {
        wh_json_arena *request = wh_json_arena_pause(); /* a request's first need: it outlives the request */
        if (wh_inject_revision_embedded("default", &rev, &err) != WH_OK) {
            wh_log(WH_LOG_ERROR, "the built-in revision does not load; \"default\" is not served", "error",
                   wh_err_msg(&err), NULL);
        } else {
            pthread_rwlock_wrlock(&reg->lock);
            reg->embedded = wh_inject_revision_ref(rev);
            pthread_rwlock_unlock(&reg->lock);
            served(reg, "default", rev);
            if (fresh != NULL)
                *fresh = 1;
        }
        wh_json_arena_resume(request);
    }
    pthread_mutex_unlock(&reg->embed_mu);
    return rev;
}

/* After a change of what serves: the built-in revision loaded when it
 * serves "default" from now on, released when a revision of that name
 * does (requests holding it keep their reference). */
static void update_builtin(wh_inject_registry *reg)
{
    wh_inject_revision *rev = builtin_default(reg, NULL), *old = NULL;

    if (rev == NULL) {
        pthread_mutex_lock(&reg->embed_mu);
        pthread_rwlock_wrlock(&reg->lock);
        if (serving_default(reg)) {
            old = reg->embedded;
            reg->embedded = NULL;
        }
        pthread_rwlock_unlock(&reg->lock);
        pthread_mutex_unlock(&reg->embed_mu);
    }
    wh_inject_revision_unref(rev);
    wh_inject_revision_unref(old);
}

void wh_inject_registry_on_serve(wh_inject_registry *reg, wh_inject_serve_fn fn, void *ctx)
{
    wh_inject_revision *embedded;
    json_t *names;
    size_t i;
    json_t *v;
    int fresh;

    pthread_mutex_lock(&reg->serve_mu);
    reg->on_serve = fn;
    reg->serve_ctx = ctx;
    pthread_mutex_unlock(&reg->serve_mu);
    if (fn == NULL)
        return;
    /* what serves already (a put racing with this may be told twice) */
    names = wh_inject_registry_names(reg);
    json_array_foreach(names, i, v)
    {
        wh_inject_revision *rev = wh_inject_registry_get(reg, json_string_value(v));
        if (rev != NULL)
            served(reg, json_string_value(v), rev);
        wh_inject_revision_unref(rev);
    }
    json_decref(names);
    if ((embedded = builtin_default(reg, &fresh)) != NULL && !fresh)
        served(reg, "default", embedded);
    wh_inject_revision_unref(embedded);
}

static void entry_clear(entry *e)
{
    free(e->name);
    free(e->error);
    json_decref(e->inputs);
    wh_inject_revision_unref(e->rev);
}

static int valid_name(const char *n)
{
    /* a DNS-1123 label, as Istio revision names are */
    size_t len = strlen(n);
    if (len == 0 || len > 63 || n[0] == '-' || n[len - 1] == '-')
        return 0;
    return strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

wh_code wh_inject_registry_reload(wh_inject_registry *reg, wh_err *err)
{
    DIR *d;
    struct dirent *de;
    int failures = 0;

    if (reg->dir == NULL)
        return WH_OK;
    pthread_mutex_lock(&reg->reload_mu);
    if ((d = opendir(reg->dir)) == NULL) {
        int e = errno;
        pthread_mutex_unlock(&reg->reload_mu);
        return wh_err_set(err, WH_E_IO, "revisions dir %s: %s", reg->dir, strerror(e));
    }
    pthread_rwlock_wrlock(&reg->lock);
    for (size_t i = 0; i < reg->n; i++)
        reg->entries[i].mark = 0;
    pthread_rwlock_unlock(&reg->lock);

    while ((de = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        sig s;
        entry *e;
        wh_inject_revision *rev = NULL;
        wh_err lerr;
        wh_code checked;
        int had_good;

        if (de->d_name[0] == '.' || !valid_name(de->d_name))
            continue;
        snprintf(path, sizeof(path), "%s/%s", reg->dir, de->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        read_sig(reg->dir, de->d_name, &s);
        if (!s.present[0] && !s.present[1] && !s.present[F_MESH])
            continue; /* not a revision directory */

        pthread_rwlock_wrlock(&reg->lock);
        if ((e = find(reg, de->d_name)) == NULL) {
            entry *grown = wh_realloc(reg->entries, (reg->n + 1) * sizeof(*grown));
            char *name = wh_strdup(de->d_name);
            reg->entries = grown;
            e = &reg->entries[reg->n++];
            memset(e, 0, sizeof(*e));
            e->name = name;
            e->seen.present[0] = -1; /* never tried */
        }
        e->mark = 1;
        if (memcmp(&e->seen, &s, sizeof(s)) == 0) {
            failures += e->error != NULL;
            pthread_rwlock_unlock(&reg->lock);
            continue; /* unchanged since the last attempt */
        }
        e->seen = s;
        pthread_rwlock_unlock(&reg->lock);

        /* Parse outside the lock: requests keep being served meanwhile. */
        wh_err_clear(&lerr);
        checked = WH_OK;
        if (load_dir(reg->dir, de->d_name, &rev, &lerr) == WH_OK &&
            (checked = wh_inject_registry_check(rev, &lerr)) != WH_OK) {
            /* Renders fail: refused when a good config is serving; otherwise
             * served anyway (each review then gets the template's own error,
             * as with istiod) and reported as refused. */
            wh_err_prefix(&lerr, "revision %s", de->d_name);
            pthread_rwlock_rdlock(&reg->lock);
            had_good = (e = find(reg, de->d_name)) != NULL && e->rev != NULL && e->rev_renders;
            pthread_rwlock_unlock(&reg->lock);
            if (had_good) {
                wh_inject_revision_unref(rev);
                rev = NULL;
            }
        }
        if (rev == NULL) {
            char *msg = wh_strdup(wh_err_msg(&lerr));
            wh_log(WH_LOG_ERROR, "revision config refused; its previous config (if any) keeps serving", "revision",
                   de->d_name, "error", wh_err_msg(&lerr), NULL);
            count(reg, de->d_name, "failure");
            failures++;
            pthread_rwlock_wrlock(&reg->lock);
            if ((e = find(reg, de->d_name)) != NULL) {
                free(e->error);
                e->error = msg;
            } else {
                free(msg);
            }
            pthread_rwlock_unlock(&reg->lock);
            continue;
        }
        if (checked != WH_OK)
            wh_log(WH_LOG_ERROR, "revision loaded, but it cannot render a plain pod", "revision", de->d_name, "error",
                   wh_err_msg(&lerr), NULL);
        else {
            const wh_inject_release *r = wh_inject_revision_release(rev);
            char line[320];
            wh_inject_release_describe(r, line, sizeof(line));
            wh_log(WH_LOG_INFO, "revision loaded", "revision", de->d_name, "istio_release", line, NULL);
            if (r->warning[0] != '\0')
                wh_log(WH_LOG_WARN, "revision is older than the releases webhookd knows", "revision", de->d_name,
                       "warning", r->warning, NULL);
        }
        count(reg, de->d_name, "success");
        served(reg, de->d_name, rev);
        pthread_rwlock_wrlock(&reg->lock);
        if ((e = find(reg, de->d_name)) != NULL) {
            wh_inject_revision *old = e->rev;
            e->rev = rev;
            e->loaded = s;
            free(e->error);
            e->error = checked != WH_OK ? wh_strdup(wh_err_msg(&lerr)) : NULL;
            e->rev_renders = checked == WH_OK;
            rev = old;
            publish_release(reg, e);
        }
        pthread_rwlock_unlock(&reg->lock);
        wh_inject_revision_unref(rev);
    }
    closedir(d);

    /* Revisions whose directory went away stop being served. */
    pthread_rwlock_wrlock(&reg->lock);
    for (size_t i = 0; i < reg->n;) {
        if (!reg->entries[i].mark) {
            wh_log(WH_LOG_INFO, "revision removed", "revision", reg->entries[i].name, NULL);
            wh_inject_revision_unref(reg->entries[i].rev);
            reg->entries[i].rev = NULL;
            publish_release(reg, &reg->entries[i]);
            entry_clear(&reg->entries[i]);
            reg->entries[i] = reg->entries[--reg->n];
        } else {
            i++;
        }
    }
    for (size_t i = 0; i < reg->n; i++) {
        const char *labels[] = {reg->entries[i].name};
        wh_metric_set(reg->loaded, labels, reg->entries[i].rev != NULL);
        wh_metric_set(reg->refused, labels, reg->entries[i].error != NULL);
    }
    pthread_rwlock_unlock(&reg->lock);
    update_builtin(reg);
    pthread_mutex_unlock(&reg->reload_mu);
    /* Each refused config was logged once, when it changed; saying so again
     * on every scan (the caller logs errors) would be an ERROR line a second. */
    (void)failures;
    return WH_OK;
}

wh_code wh_inject_registry_open(const char *dir, wh_metrics *metrics, wh_inject_registry **out, wh_err *err)
{
    static const char *const rl_labels[] = {"revision", "result", NULL};
    static const char *const l_labels[] = {"revision", NULL};
    static const char *const r_labels[] = {"revision", "release", "source", NULL};
    wh_inject_registry *reg = wh_calloc(1, sizeof(*reg));

    *out = NULL;
    pthread_rwlock_init(&reg->lock, NULL);
    pthread_mutex_init(&reg->reload_mu, NULL);
    pthread_mutex_init(&reg->serve_mu, NULL);
    pthread_mutex_init(&reg->watch_mu, NULL);
    pthread_cond_init(&reg->watch_cv, NULL);
    pthread_mutex_init(&reg->embed_mu, NULL);
    if (metrics != NULL) {
        reg->reloads = wh_metrics_counter(metrics, "webhookd_inject_revision_reload_total",
                                          "Revision configuration loads by result.", rl_labels);
        reg->loaded = wh_metrics_gauge(metrics, "webhookd_inject_revision_loaded",
                                       "1 when the revision has a configuration serving.", l_labels);
        reg->refused = wh_metrics_gauge(metrics, "webhookd_inject_revision_config_refused",
                                        "1 when the revision's latest configuration was refused (the previous "
                                        "one, if any, keeps serving; see /readyz).",
                                        l_labels);
        reg->release = wh_metrics_gauge(metrics, "webhookd_inject_revision_release",
                                        "1 for the Istio release (major.minor) whose injection behaviour the "
                                        "revision gets, and where that came from (file, configmap-label, "
                                        "values-tag, newest).",
                                        r_labels);
    }
    if (dir != NULL) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            wh_inject_registry_free(reg);
            return wh_err_set(err, WH_E_IO, "--revisions-dir %s: not a directory", dir);
        }
        reg->dir = wh_strdup(dir);
        /* A broken revision at startup is reported, not fatal. */
        wh_inject_registry_reload(reg, NULL);
    }
    *out = reg;
    return WH_OK;
}

static void *watch_main(void *arg)
{
    wh_inject_registry *reg = arg;

    pthread_mutex_lock(&reg->watch_mu);
    while (!reg->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += reg->interval_ms / 1000;
        ts.tv_nsec += (long)(reg->interval_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&reg->watch_cv, &reg->watch_mu, &ts);
        if (reg->stopping)
            break;
        pthread_mutex_unlock(&reg->watch_mu);
        wh_inject_registry_reload(reg, NULL);
        pthread_mutex_lock(&reg->watch_mu);
    }
    pthread_mutex_unlock(&reg->watch_mu);
    return NULL;
}

wh_code wh_inject_registry_watch(wh_inject_registry *reg, unsigned interval_ms, wh_err *err)
{
    if (reg->dir == NULL || reg->watching)
        return WH_OK;
    reg->interval_ms = interval_ms > 0 ? interval_ms : 1000;
    if (pthread_create(&reg->thread, NULL, watch_main, reg) != 0)
        return wh_err_set(err, WH_E_INTERNAL, "cannot start the revisions watcher thread");
    reg->watching = 1;
    return WH_OK;
}

void wh_inject_registry_free(wh_inject_registry *reg)
{
    if (reg == NULL)
        return;
    if (reg->watching) {
        pthread_mutex_lock(&reg->watch_mu);
        reg->stopping = 1;
        pthread_cond_signal(&reg->watch_cv);
        pthread_mutex_unlock(&reg->watch_mu);
        pthread_join(reg->thread, NULL);
    }
    for (size_t i = 0; i < reg->n; i++)
        entry_clear(&reg->entries[i]);
    free(reg->entries);
    free(reg->dir);
    wh_inject_revision_unref(reg->embedded);
    pthread_rwlock_destroy(&reg->lock);
    pthread_mutex_destroy(&reg->reload_mu);
    pthread_mutex_destroy(&reg->serve_mu);
    pthread_mutex_destroy(&reg->watch_mu);
    pthread_cond_destroy(&reg->watch_cv);
    pthread_mutex_destroy(&reg->embed_mu);
    free(reg);
}

wh_inject_revision *wh_inject_registry_get(wh_inject_registry *reg, const char *name)
{
    wh_inject_revision *rev = NULL;
    const char *want = name != NULL && name[0] != '\0' ? name : "default";
    entry *e;
    int builtin = 0;

    pthread_rwlock_rdlock(&reg->lock);
    if ((e = find(reg, want)) != NULL)
        rev = wh_inject_revision_ref(e->rev);
    if (rev == NULL && strcmp(want, "default") == 0) {
        rev = wh_inject_revision_ref(reg->embedded);
        builtin = !reg->cluster;
    }
    pthread_rwlock_unlock(&reg->lock);
    if (rev == NULL && builtin)
        rev = builtin_default(reg, NULL); /* its first need (or a reload has not loaded it yet) */
    return rev;
}

char *wh_inject_registry_refusal(wh_inject_registry *reg, const char *name)
{
    char *why = NULL;
    entry *e;

    pthread_rwlock_rdlock(&reg->lock);
    if ((e = find(reg, name != NULL && name[0] != '\0' ? name : "default")) != NULL && e->rev == NULL &&
        e->error != NULL)
        why = wh_strdup(e->error);
    pthread_rwlock_unlock(&reg->lock);
    return why;
}

int wh_inject_registry_ready(wh_inject_registry *reg, wh_buf *detail)
{
    pthread_rwlock_rdlock(&reg->lock);
    for (size_t i = 0; i < reg->n; i++) {
        const entry *e = &reg->entries[i];
        if (e->rev != NULL && detail != NULL) {
            char line[320];
            wh_inject_release_describe(wh_inject_revision_release(e->rev), line, sizeof(line));
            wh_buf_printf(detail, "%srevision %s: Istio %s", detail->len ? "\n" : "", e->name, line);
        }
        if (e->error != NULL && detail != NULL)
            wh_buf_printf(detail, "%srevision %s: latest config refused (%s): %s", detail->len ? "\n" : "", e->name,
                          e->rev != NULL ? "the previous config keeps serving" : "not served", e->error);
    }
    pthread_rwlock_unlock(&reg->lock);
    return 1; /* a refused revision is reported, never a reason to leave the Service (issue #15) */
}

json_t *wh_inject_registry_names(wh_inject_registry *reg)
{
    json_t *a = json_array();

    pthread_rwlock_rdlock(&reg->lock);
    for (size_t i = 0; a != NULL && i < reg->n; i++)
        if (reg->entries[i].rev != NULL)
            json_array_append_new(a, json_string(reg->entries[i].name));
    pthread_rwlock_unlock(&reg->lock);
    return a;
}

/* ---- the cluster source (wh_inject_cluster.c) ------------------------------ */

void wh_inject_registry_cluster_mode(wh_inject_registry *reg)
{
    wh_inject_revision *old;

    pthread_mutex_lock(&reg->embed_mu);
    pthread_rwlock_wrlock(&reg->lock);
    reg->cluster = 1;
    old = reg->embedded;
    reg->embedded = NULL;
    pthread_rwlock_unlock(&reg->lock);
    pthread_mutex_unlock(&reg->embed_mu);
    wh_inject_revision_unref(old);
}

int wh_inject_registry_unchanged(wh_inject_registry *reg, const char *name, const json_t *inputs)
{
    entry *e;
    int same;

    pthread_rwlock_rdlock(&reg->lock);
    e = find(reg, name);
    same = e != NULL && e->inputs != NULL && json_equal(e->inputs, inputs);
    pthread_rwlock_unlock(&reg->lock);
    return same;
}

void wh_inject_registry_put(wh_inject_registry *reg, const char *name, const json_t *inputs, wh_inject_revision *rev,
                            const char *error)
{
    entry *e;
    wh_inject_revision *old = NULL;

    pthread_rwlock_wrlock(&reg->lock);
    if ((e = find(reg, name)) == NULL) {
        reg->entries = wh_realloc(reg->entries, (reg->n + 1) * sizeof(*reg->entries));
        e = &reg->entries[reg->n++];
        memset(e, 0, sizeof(*e));
        e->name = wh_strdup(name);
    }
    json_decref(e->inputs);
    e->inputs = json_deep_copy(inputs);
    free(e->error);
    e->error = error != NULL ? wh_strdup(error) : NULL;
    if (rev != NULL) {
        old = e->rev;
        e->rev = wh_inject_revision_ref(rev);
        publish_release(reg, e);
    }
    if (reg->loaded != NULL)
        wh_metric_set(reg->loaded, (const char *const[]){e->name}, e->rev != NULL);
    pthread_rwlock_unlock(&reg->lock);
    count(reg, name, rev != NULL ? "success" : "failure");
    if (rev != NULL)
        served(reg, name, rev);
    wh_inject_revision_unref(old);
}

void wh_inject_registry_retain(wh_inject_registry *reg, const json_t *names)
{
    pthread_rwlock_wrlock(&reg->lock);
    for (size_t i = 0; i < reg->n;) {
        entry *e = &reg->entries[i];
        size_t k;
        json_t *v;
        int keep = 0;
        json_array_foreach(names, k, v) keep |= strcmp(json_string_value(v), e->name) == 0;
        if (keep) {
            i++;
            continue;
        }
        wh_log(WH_LOG_INFO, "revision removed", "revision", e->name, NULL);
        if (reg->loaded != NULL)
            wh_metric_set(reg->loaded, (const char *const[]){e->name}, 0);
        wh_inject_revision_unref(e->rev);
        e->rev = NULL;
        publish_release(reg, e);
        entry_clear(e);
        reg->entries[i] = reg->entries[--reg->n];
    }
    pthread_rwlock_unlock(&reg->lock);
}
