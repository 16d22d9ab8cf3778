/*
 * main.c - webhookd: flags, start-up, and the main thread's signal loop.
 *
 * The main thread owns everything that is not request serving: it blocks
 * SIGINT/SIGTERM/SIGHUP before any worker exists and sigwait()s for them
 * (no h2o call ever runs in a signal handler), polls the certificate files,
 * has the certificate lifecycle (wh_server_certs.h) poll for changes and
 * reload off the event loops, and drives shutdown.  It only wires the parts
 * of wh_server.h and wh_server_certs.h together.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "wh_alloc.h"
#include "wh_json_arena.h"
#include "wh_log.h"
#include "wh_server.h"
#include "wh_server_certs.h"

extern char **environ;

/* The flag rows: the core ones, the certificate's, then the endpoints'. */
#define ENDPOINT_FLAGS (WH_SERVER_CORE_FLAGS + WH_SERVER_CERTS_FLAGS)
#define MAX_ENDPOINTS 16

typedef struct app {
    wh_server_config cfg;
    wh_server_certs_config certs_cfg;
    wh_server_flag *flags;
    const char **endpoint_flag_values; /* parallel to the endpoint flag rows */
    wh_metrics *metrics;
    wh_server_certs *certs;
    wh_endpoint **endpoints;
    size_t nendpoints;
    wh_router *router;
    wh_http_server *http;
    wh_http_server *monitoring; /* --monitoring-listen */
} app;

/* --- flags ---------------------------------------------------------------- */

typedef struct endpoint_impl {
    const app *app;
    const wh_server_endpoint_def *def;
} endpoint_impl;

/* An endpoint's own flag, or a core string flag it shares (--kubeconfig). */
static const char *endpoint_flag(const wh_endpoint_env *env, const char *name)
{
    const endpoint_impl *impl = env->impl;
    const wh_server_flag *f;

    for (f = impl->app->flags + ENDPOINT_FLAGS; f->name != NULL; f++)
        if (strcmp(f->name, name) == 0)
            return *(const char **)f->value;
    for (f = impl->app->flags; f < impl->app->flags + WH_SERVER_CORE_FLAGS && f->name != NULL; f++)
        if (f->type == WH_FLAG_STRING && strcmp(f->name, name) == 0)
            return *(const char **)f->value;
    return NULL;
}

static void build_flags(app *a)
{
    size_t n = ENDPOINT_FLAGS, i, k = 0;
    const wh_endpoint_flag *ef;

    for (i = 0; i < wh_server_endpoint_ndefs; i++)
        for (ef = wh_server_endpoint_defs[i].flags; ef != NULL && ef->name != NULL; ef++)
            k++;
    a->flags = wh_calloc(n + k + 1, sizeof(*a->flags));
    a->endpoint_flag_values = wh_calloc(k + 1, sizeof(*a->endpoint_flag_values));
    wh_server_core_flags(&a->cfg, a->flags, WH_SERVER_CORE_FLAGS);
    wh_server_certs_flags(&a->certs_cfg, a->flags + WH_SERVER_CORE_FLAGS, WH_SERVER_CERTS_FLAGS);
    k = 0;
    for (i = 0; i < wh_server_endpoint_ndefs; i++) {
        for (ef = wh_server_endpoint_defs[i].flags; ef != NULL && ef->name != NULL; ef++, k++) {
            a->flags[n + k] =
                (wh_server_flag){ef->name, WH_FLAG_STRING, &a->endpoint_flag_values[k], ef->defval, ef->usage};
        }
    }
}

static void usage(const app *a, FILE *out)
{
    fprintf(out,
            "webhookd %s: Istio's admission webhooks (sidecar injection, validation) over HTTPS.\n\n"
            "Usage:\n  webhookd [flags]\n\n"
            "Endpoints: POST /inject[/...], POST /validate[/...], GET /healthz, /readyz, /metrics, /version.\n"
            "Signals: SIGHUP reloads the certificate (and endpoint configuration) and re-checks the caBundle; "
            "SIGTERM/SIGINT drain and "
            "exit.\n\nFlags (each also read from the environment variable shown):\n",
            WH_VERSION);
    wh_server_flags_usage(a->flags, out);
}

/* Every connection is a descriptor: the default soft limit (1024) is far
 * below what the hard limit allows, and hitting it turns into EMFILE. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    char soft[32], hard[32];

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
        return;
    snprintf(soft, sizeof(soft), "%llu", (unsigned long long)rl.rlim_cur);
    rl.rlim_cur = rl.rlim_max;
    snprintf(hard, sizeof(hard), "%llu", (unsigned long long)rl.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
        wh_log(WH_LOG_DEBUG, "raised the open-files limit", "from", soft, "to", hard, NULL);
    else
        wh_log(WH_LOG_WARN, "cannot raise the open-files limit", "soft", soft, "hard", hard, "error", strerror(errno),
               NULL);
}

static int cpu_count(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void reload_endpoints(app *a, int forced)
{
    size_t i;

    for (i = 0; i < a->nendpoints; i++) {
        wh_endpoint *ep = a->endpoints[i];
        wh_err err;

        wh_err_clear(&err);
        if (ep->reload != NULL && ep->reload(ep, forced, &err) != WH_OK)
            wh_log(WH_LOG_ERROR, "endpoint reload failed; keeping its previous configuration", "endpoint", ep->name,
                   "error", wh_err_msg(&err), NULL);
    }
}

/* --- main ----------------------------------------------------------------- */

static wh_code create_endpoints(app *a, endpoint_impl *impls, wh_router_route *routes, wh_err *err)
{
    size_t i;
    wh_code rc;

    a->endpoints = wh_calloc(wh_server_endpoint_ndefs + 1, sizeof(*a->endpoints));
    for (i = 0; i < wh_server_endpoint_ndefs; i++) {
        const wh_server_endpoint_def *def = &wh_server_endpoint_defs[i];
        wh_endpoint_env env = {def->name, def->prefix, a->metrics, endpoint_flag, &impls[i]};

        impls[i] = (endpoint_impl){a, def};
        if ((rc = def->create(&env, &a->endpoints[i], err)) != WH_OK)
            return wh_err_prefix(err, "cannot set up the %s endpoint", def->name);
        a->nendpoints++;
        routes[i] = (wh_router_route){def->prefix, a->endpoints[i]};
    }
    return WH_OK;
}

/* What a start checks before it reads a file or the network, and all that
 * --check-config checks: the flags' values and how they combine, the
 * certificate's (a->certs, which reads nothing yet) and each endpoint's. */
static wh_code check_config(app *a, int *level, int *format, wh_err *err)
{
    wh_code rc;
    size_t i;

    if ((*level = wh_log_level_parse(a->cfg.log_level)) < 0 || (*format = wh_log_format_parse(a->cfg.log_format)) < 0)
        return wh_err_set(err, WH_E_INVALID,
                          "--log-level must be debug|info|warn|error|off and --log-format json|text");
    if (a->cfg.threads < 0 || a->cfg.threads > 1024 || a->cfg.max_request_bytes == 0 ||
        wh_server_endpoint_ndefs > MAX_ENDPOINTS)
        return wh_err_set(err, WH_E_INVALID, "--threads must be 0..1024 and --max-request-bytes positive");
    if ((rc = wh_server_certs_new(&a->certs_cfg, a->cfg.kubeconfig, a->cfg.kube_timeout, &a->certs, err)) != WH_OK)
        return rc;
    for (i = 0; i < wh_server_endpoint_ndefs; i++) {
        const wh_server_endpoint_def *def = &wh_server_endpoint_defs[i];
        endpoint_impl impl = {a, def};
        wh_endpoint_env env = {def->name, def->prefix, NULL, endpoint_flag, &impl};

        if (def->check != NULL && (rc = def->check(&env, err)) != WH_OK)
            return wh_err_prefix(err, "cannot set up the %s endpoint", def->name);
    }
    return WH_OK;
}

/* --shutdown-delay: keep serving while the endpoint goes away (the kubelet
 * and the endpoints controller learn about the terminating pod in parallel,
 * so the API server may still open connections to it for a few seconds).
 * Certificates keep being watched; a second SIGTERM/SIGINT ends the wait. */
static void shutdown_delay(app *a, const sigset_t *signals)
{
    struct timespec end, now, left;
    char secs[32];

    snprintf(secs, sizeof(secs), "%g", a->cfg.shutdown_delay);
    wh_log(WH_LOG_INFO, "shutdown delay: still serving before closing the listener", "seconds", secs, NULL);
    wh_http_begin_drain(a->http);
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)a->cfg.shutdown_delay;
    end.tv_nsec += (long)((a->cfg.shutdown_delay - (double)(time_t)a->cfg.shutdown_delay) * 1e9);
    if (end.tv_nsec >= 1000000000L)
        end.tv_sec++, end.tv_nsec -= 1000000000L;
    for (;;) {
        int sig;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
            return;
        left.tv_sec = end.tv_sec - now.tv_sec;
        left.tv_nsec = end.tv_nsec - now.tv_nsec;
        if (left.tv_nsec < 0)
            left.tv_sec--, left.tv_nsec += 1000000000L;
        if (left.tv_sec >= 1)
            left.tv_sec = 1, left.tv_nsec = 0;
        sig = sigtimedwait(signals, NULL, &left);
        if (sig == SIGINT || sig == SIGTERM) {
            wh_log(WH_LOG_INFO, "second signal: ending the shutdown delay", NULL);
            return;
        }
        wh_server_certs_poll(a->certs);
    }
}

static int run(app *a, char **argv, int argc)
{
    endpoint_impl impls[MAX_ENDPOINTS];
    wh_router_route routes[MAX_ENDPOINTS];
    wh_http_config hc;
    SSL_CTX *ctx = NULL;
    sigset_t signals;
    struct timespec tick;
    wh_err err;
    int level = 0, format = 0, sig, status = 1;
    double interval;
    char threads[16], inflight[32];
    size_t cut;

    wh_err_clear(&err);
    build_flags(a);
    if (wh_server_flags_parse(a->flags, argc, argv, environ, &err) != WH_OK) {
        fprintf(stderr, "webhookd: %s\nRun 'webhookd --help' for usage.\n", wh_err_msg(&err));
        return 2;
    }
    if (a->cfg.help) {
        usage(a, stdout);
        return 0;
    }
    if (a->cfg.version) {
        printf("webhookd %s\n", WH_VERSION);
        return 0;
    }
    if (check_config(a, &level, &format, &err) != WH_OK) {
        fprintf(stderr, "webhookd: %s\n", wh_err_msg(&err));
        return 2;
    }
    if (a->cfg.check_config) {
        printf("config ok\n");
        return 0;
    }
    if (a->cfg.threads == 0)
        a->cfg.threads = cpu_count();
    if (a->cfg.max_inflight_bytes == 0)
        a->cfg.max_inflight_bytes = wh_server_default_inflight("/sys/fs/cgroup", a->cfg.max_request_bytes);
    if (a->cfg.write_timeout < 0.1)
        a->cfg.write_timeout = 0.1;
    wh_log_configure((wh_log_level)level, (wh_log_format)format);
    raise_fd_limit();

    /* Before any thread exists, so that every thread inherits the mask. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    a->metrics = wh_metrics_new();
    wh_metric_set(wh_metrics_gauge(a->metrics, "webhookd_build_info", "webhookd's version (value is always 1).",
                                   (const char *const[]){"version", NULL}),
                  (const char *const[]){WH_VERSION}, 1);
    if (create_endpoints(a, impls, routes, &err) != WH_OK ||
        wh_router_new(routes, a->nendpoints, a->cfg.max_request_bytes, a->metrics, &a->router, &err) != WH_OK)
        goto fail;
    if (wh_server_certs_load(a->certs, a->metrics, a->router, &ctx, &err) != WH_OK)
        goto fail;
    memset(&hc, 0, sizeof(hc));
    hc.listen = a->cfg.listen;
    hc.threads = a->cfg.threads;
    hc.http2 = a->cfg.http2;
    hc.max_request_bytes = a->cfg.max_request_bytes;
    hc.max_inflight_bytes = a->cfg.max_inflight_bytes;
    hc.write_timeout_ms = (uint64_t)(a->cfg.write_timeout * 1000);
    hc.router = a->router;
    hc.metrics = a->metrics;
    if (wh_http_start(&hc, ctx, &a->http, &err) != WH_OK)
        goto fail;
    snprintf(threads, sizeof(threads), "%d", a->cfg.threads);
    snprintf(inflight, sizeof(inflight), "%zu", a->cfg.max_inflight_bytes);
    wh_log(WH_LOG_INFO, "listening", "address", wh_http_bound_address(a->http), "threads", threads, "protocols",
           a->cfg.http2 ? "h2,http/1.1" : "http/1.1", "maxInflightBytes", inflight, "version", WH_VERSION, NULL);
    if (a->cfg.monitoring_listen[0] != '\0') {
        wh_http_config mc = hc;
        mc.listen = a->cfg.monitoring_listen;
        mc.threads = 1;
        mc.http2 = 0;
        mc.monitoring = 1;
        mc.max_request_bytes = 65536; /* GETs */
        mc.max_inflight_bytes = 0;    /* the minimum: one such request */
        if (wh_http_start(&mc, NULL, &a->monitoring, &err) != WH_OK)
            goto fail;
        wh_log(WH_LOG_INFO, "monitoring listening", "address", wh_http_bound_address(a->monitoring), "paths",
               "/healthz /readyz /metrics /version", "protocols", "http/1.1 (plain)", NULL);
    }
    /* Once serving, so that the API server can call us as soon as it trusts us. */
    wh_server_certs_serve(a->certs, a->http);

    interval = wh_server_certs_poll_interval(a->certs);
    tick.tv_sec = (time_t)interval;
    tick.tv_nsec = (long)((interval - (double)tick.tv_sec) * 1e9);
    for (;;) {
        sig = sigtimedwait(&signals, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM)
            break;
        if (sig == SIGHUP) {
            wh_log(WH_LOG_INFO, "SIGHUP: reloading", NULL);
            wh_server_certs_sighup(a->certs);
            reload_endpoints(a, 1);
            continue;
        }
        wh_server_certs_poll(a->certs);
        reload_endpoints(a, 0);
    }

    wh_log(WH_LOG_INFO, "shutting down", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
    wh_router_set_shutting_down(a->router);
    if (a->cfg.shutdown_delay > 0)
        shutdown_delay(a, &signals);
    cut = wh_http_shutdown(a->http, a->cfg.shutdown_timeout);
    if (a->monitoring != NULL) /* last: probes see the drain */
        wh_http_shutdown(a->monitoring, 1);
    wh_server_certs_free(a->certs); /* the patcher waits for a request in flight, at most --kube-timeout */
    a->certs = NULL;
    if (cut != 0) {
        char n[32];
        snprintf(n, sizeof(n), "%zu", cut);
        wh_log(WH_LOG_WARN, "shutdown deadline reached; closing remaining connections", "connections", n, NULL);
    } else {
        wh_log(WH_LOG_INFO, "stopped", NULL);
    }
    status = 0;
    goto out;

fail:
    wh_log(WH_LOG_ERROR, "cannot start", "error", wh_err_msg(&err), NULL);
    if (a->http != NULL) /* the monitoring listener could not start */
        wh_http_shutdown(a->http, 0);
out:
    SSL_CTX_free(ctx);
    return status;
}

int main(int argc, char **argv)
{
    app a;
    int status;
    size_t i;

    wh_json_arena_install(); /* before any thread or JSON value exists */
    memset(&a, 0, sizeof(a));
    status = run(&a, argv, argc);
    wh_server_certs_free(a.certs); /* a failed start */
    wh_http_free(a.http);
    wh_http_free(a.monitoring);
    wh_router_free(a.router);
    for (i = 0; i < a.nendpoints; i++)
        a.endpoints[i]->destroy(a.endpoints[i]);
    free(a.endpoints);
    wh_metrics_free(a.metrics);
    free(a.flags);
    free((void *)a.endpoint_flag_values);
    return status;
}
