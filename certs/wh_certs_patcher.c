/*
 * wh_certs_patcher.c - the caBundle patcher thread (see wh_certs_patcher.h).
 *
 * The main thread only hands over CAs and kicks; every Kubernetes request
 * happens here, so a slow or absent API server delays nothing but the next
 * patch.  The mutex guards the hand-over fields only, never a request.
 */
#include "wh_certs_patcher.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_alloc.h"
#include "wh_log.h"

#define BACKOFF_FIRST 1.0 /* seconds before the first retry; doubles up to the interval */

struct wh_certs_patcher {
    wh_certs_patcher_config cfg;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    /* guarded by lock */
    int stop;
    int due;         /* patch at once, for `why` */
    const char *why; /* static string */
    char *ca;        /* the CA bundle to publish (NULL until the first one) */
    size_t ca_len;
    /* metrics */
    wh_metric *total;
    wh_metric *last_success;
};

/* State of the thread between attempts (thread-local to run()). */
typedef struct attempt_state {
    wh_kube_client *client;
    int failures;
    int selected_nothing; /* the last success selected no configuration (warned once) */
} attempt_state;

static void timespec_add(struct timespec *t, double seconds)
{
    time_t whole = (time_t)seconds;
    long nsec = t->tv_nsec + (long)((seconds - (double)whole) * 1e9);

    t->tv_sec += whole + nsec / 1000000000L;
    t->tv_nsec = nsec % 1000000000L;
}

static int timespec_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void utc_now(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "a: x\nb: y\n" -> "a: x; b: y" */
static void one_line(const wh_buf *report, wh_buf *out)
{
    size_t i, len = report->len;

    while (len > 0 && report->data[len - 1] == '\n')
        len--;
    for (i = 0; i < len; i++)
        wh_buf_puts(out, report->data[i] == '\n' ? "; " : (char[]){report->data[i], '\0'});
}

static void publish(wh_certs_patcher *p, const char *detail)
{
    if (p->cfg.on_status != NULL)
        p->cfg.on_status(p->cfg.status_ctx, detail);
}

/* One attempt; returns the seconds until the next one. */
static double attempt(wh_certs_patcher *p, attempt_state *st, const char *ca, size_t ca_len, const char *why)
{
    wh_buf raw = WH_BUF_INIT, report = WH_BUF_INIT, status = WH_BUF_INIT;
    wh_certs_patch_stats stats = {0, 0, 0};
    char when[32], n1[16], n2[16], n3[16], retry[32];
    double delay = p->cfg.interval;
    wh_err err;
    wh_code rc = WH_OK;

    wh_err_clear(&err);
    utc_now(when, sizeof(when));
    if (st->client == NULL)
        rc = wh_kube_client_new(&p->cfg.kube, &st->client, &err);
    if (rc == WH_OK)
        rc = wh_certs_patch_ca_bundle_stats(st->client, &p->cfg.targets, ca, ca_len, &raw, &stats, &err);
    one_line(&raw, &report);
    snprintf(n1, sizeof(n1), "%d", stats.configurations);
    snprintf(n2, sizeof(n2), "%d", stats.webhooks);

    if (rc == WH_OK) {
        wh_metric_add(p->total, (const char *const[]){stats.written != 0 ? "updated" : "unchanged"}, 1);
        wh_metric_set(p->last_success, NULL, (double)time(NULL));
        if (stats.written != 0)
            wh_log(WH_LOG_INFO, "caBundle patched", "trigger", why, "configurations", n1, "webhooks_updated", n2,
                   "report", report.len != 0 ? report.data : "", NULL);
        else
            wh_log(st->failures != 0 || strcmp(why, "drift check") != 0 ? WH_LOG_INFO : WH_LOG_DEBUG,
                   "caBundle up to date", "trigger", why, "configurations", n1, "report",
                   report.len != 0 ? report.data : "", NULL);
        if (stats.configurations == 0 && !st->selected_nothing)
            wh_log(WH_LOG_WARN, "caBundle: no webhook configuration matched the selection; nothing to patch", NULL);
        st->selected_nothing = stats.configurations == 0;
        if (st->failures != 0) {
            snprintf(n3, sizeof(n3), "%d", st->failures);
            wh_log(WH_LOG_INFO, "caBundle patching recovered", "failed_attempts", n3, NULL);
        }
        st->failures = 0;
        wh_buf_printf(&status, "ok at %s (%s): %d configuration%s checked, %d webhook%s updated", when, why,
                      stats.configurations, stats.configurations == 1 ? "" : "s", stats.webhooks,
                      stats.webhooks == 1 ? "" : "s");
    } else {
        wh_metric_add(p->total, (const char *const[]){"failure"}, 1);
        st->failures++;
        delay = BACKOFF_FIRST;
        for (int i = 1; i < st->failures && delay < p->cfg.interval; i++)
            delay *= 2;
        if (delay > p->cfg.interval)
            delay = p->cfg.interval;
        snprintf(n3, sizeof(n3), "%d", st->failures);
        snprintf(retry, sizeof(retry), "%gs", delay);
        wh_log(WH_LOG_ERROR, "caBundle patch failed; serving continues, will retry", "trigger", why, "attempt", n3,
               "retry_in", retry, "error", wh_err_msg(&err), "report", report.len != 0 ? report.data : "", NULL);
        wh_buf_printf(&status, "failing: attempt %d at %s (%s) failed, retry in %s: %s", st->failures, when, why, retry,
                      wh_err_msg(&err));
    }
    publish(p, status.data); /* both branches printed it */
    wh_buf_free(&raw);
    wh_buf_free(&report);
    wh_buf_free(&status);
    return delay;
}

static void *run(void *arg)
{
    wh_certs_patcher *p = arg;
    attempt_state st = {NULL, 0, 0};
    struct timespec next = {0, 0}, now;
    char *ca = NULL;
    size_t ca_len = 0;
    const char *why;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && (p->ca == NULL || !p->due)) {
            if (p->ca == NULL) {
                pthread_cond_wait(&p->cond, &p->lock);
                continue;
            }
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (!timespec_before(&now, &next))
                break; /* time for the periodic check or the retry */
            pthread_cond_timedwait(&p->cond, &p->lock, &next);
        }
        if (p->stop)
            break;
        why = p->due ? p->why : st.failures != 0 ? "retry" : "drift check";
        p->due = 0;
        free(ca);
        ca_len = p->ca_len;
        if ((ca = wh_malloc(ca_len + 1)) != NULL)
            memcpy(ca, p->ca, ca_len + 1);
        pthread_mutex_unlock(&p->lock);

        double delay = ca != NULL ? attempt(p, &st, ca, ca_len, why) : BACKOFF_FIRST;

        pthread_mutex_lock(&p->lock);
        clock_gettime(CLOCK_MONOTONIC, &next);
        timespec_add(&next, delay);
    }
    pthread_mutex_unlock(&p->lock);
    free(ca);
    wh_kube_client_free(st.client);
    return NULL;
}

wh_code wh_certs_patcher_start(const wh_certs_patcher_config *cfg, wh_certs_patcher **out, wh_err *err)
{
    static const char *const result_label[] = {"result", NULL};
    static const char *const results[] = {"updated", "unchanged", "failure"};
    wh_certs_patcher *p;
    pthread_condattr_t attr;
    int e;

    *out = NULL;
    if (!(cfg->interval > 0))
        return wh_err_set(err, WH_E_INVALID, "the caBundle check interval must be positive");
    p = wh_calloc(1, sizeof(*p));
    p->cfg = *cfg;
    p->total = wh_metrics_counter(cfg->metrics, "webhookd_cabundle_patch_total",
                                  "caBundle patch attempts, by result (updated: at least one webhook configuration "
                                  "written; unchanged: all up to date; failure: retried with backoff).",
                                  result_label);
    p->last_success = wh_metrics_gauge(cfg->metrics, "webhookd_cabundle_last_success_timestamp_seconds",
                                       "When the webhook configurations were last found or made right, in Unix "
                                       "seconds.",
                                       NULL);
    if (p->total == NULL || p->last_success == NULL) {
        free(p);
        return wh_err_set(err, WH_E_CONFLICT, "cannot register the caBundle metrics");
    }
    for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++)
        wh_metric_add(p->total, (const char *const[]){results[i]}, 0);
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &attr);
    pthread_condattr_destroy(&attr);
    if ((e = pthread_create(&p->tid, NULL, run, p)) != 0) {
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return wh_err_set(err, WH_E_INTERNAL, "cannot start the caBundle patcher thread: %s", strerror(e));
    }
    *out = p;
    return WH_OK;
}

void wh_certs_patcher_set_ca(wh_certs_patcher *p, const char *ca_pem, size_t len, const char *why)
{
    char *copy = wh_malloc(len + 1);

    memcpy(copy, ca_pem, len);
    copy[len] = '\0';
    pthread_mutex_lock(&p->lock);
    free(p->ca);
    p->ca = copy;
    p->ca_len = len;
    p->due = 1;
    p->why = why;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void wh_certs_patcher_kick(wh_certs_patcher *p, const char *why)
{
    pthread_mutex_lock(&p->lock);
    p->due = 1;
    p->why = why;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void wh_certs_patcher_stop(wh_certs_patcher *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->tid, NULL);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p->ca);
    free(p);
}
