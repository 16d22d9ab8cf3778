/*
 * main.c - webhookd: flags, start-up, and the main thread's signal loop.
 *
 * The main thread owns everything that is not request serving: it blocks
 * SIGINT/SIGTERM/SIGHUP before any worker exists and sigwait()s for them
 * (no h2o call ever runs in a signal handler), polls the certificate files,
 * builds replacement TLS contexts off the event loops, and drives shutdown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wh_certs.h"
#include "wh_json_arena.h"
#include "wh_log.h"
#include "wh_server.h"

extern char **environ;

typedef struct app {
    wh_server_config cfg;
    wh_server_flag *flags;
    const char **endpoint_flag_values; /* parallel to the endpoint flag rows */
    wh_metrics *metrics;
    wh_metric *cert_reloads;
    wh_metric *cert_expiry;
    wh_endpoint **endpoints;
    size_t nendpoints;
    wh_router *router;
    wh_http_server *http;
    wh_certs_stamp stamp;
} app;

/* --- flags ---------------------------------------------------------------- */

typedef struct endpoint_impl {
    const app *app;
    const wh_server_endpoint_def *def;
} endpoint_impl;

static const char *endpoint_flag(const wh_endpoint_env *env, const char *name)
{
    const endpoint_impl *impl = env->impl;
    const wh_server_flag *f;

    for (f = impl->app->flags + WH_SERVER_CORE_FLAGS; f->name != NULL; f++)
        if (strcmp(f->name, name) == 0)
            return *(const char **)f->value;
    return NULL;
}

static wh_code build_flags(app *a)
{
    size_t n = WH_SERVER_CORE_FLAGS, i, k = 0;
    const wh_server_endpoint_flag *ef;

    for (i = 0; i < wh_server_endpoint_ndefs; i++)
        for (ef = wh_server_endpoint_defs[i].flags; ef != NULL && ef->name != NULL; ef++)
            k++;
    if ((a->flags = calloc(n + k + 1, sizeof(*a->flags))) == NULL ||
        (a->endpoint_flag_values = calloc(k + 1, sizeof(*a->endpoint_flag_values))) == NULL)
        return WH_E_NOMEM;
    wh_server_core_flags(&a->cfg, a->flags, n);
    k = 0;
    for (i = 0; i < wh_server_endpoint_ndefs; i++) {
        for (ef = wh_server_endpoint_defs[i].flags; ef != NULL && ef->name != NULL; ef++, k++) {
            a->flags[n + k] =
                (wh_server_flag){ef->name, WH_FLAG_STRING, &a->endpoint_flag_values[k], ef->defval, ef->usage};
        }
    }
    return WH_OK;
}

static void usage(const app *a, FILE *out)
{
    fprintf(out,
            "webhookd %s: Istio's admission webhooks (sidecar injection, validation) over HTTPS.\n\n"
            "Usage:\n  webhookd [flags]\n\n"
            "Endpoints: POST /inject[/...], POST /validate[/...], GET /healthz, /readyz, /metrics, /version.\n"
            "Signals: SIGHUP reloads the certificate (and endpoint configuration); SIGTERM/SIGINT drain and "
            "exit.\n\nFlags (each also read from the environment variable shown):\n",
            WH_VERSION);
    wh_server_flags_usage(a->flags, out);
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

/* --- certificates --------------------------------------------------------- */

static int have_cert_files(const app *a)
{
    return a->cfg.tls_cert_file[0] != '\0';
}

static void describe_cert(const wh_certs_info *info, const char *source, char *out, size_t size)
{
    char expiry[32];
    struct tm tm;

    gmtime_r(&info->not_after, &tm);
    strftime(expiry, sizeof(expiry), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(out, size, "%s, serial %s, expires %s (%s)", info->subject, info->serial, expiry, source);
}

static wh_code write_file_atomically(const char *path, const wh_buf *data, wh_err *err)
{
    wh_buf tmp = WH_BUF_INIT;
    FILE *f = NULL;
    wh_code rc;

    if ((rc = wh_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid())) != WH_OK)
        goto out;
    if ((f = fopen(tmp.data, "wb")) == NULL || fwrite(data->data, 1, data->len, f) != data->len || fclose(f) != 0) {
        f = NULL;
        rc = wh_err_set(err, WH_E_IO, "cannot write %s: %s", tmp.data, strerror(errno));
        unlink(tmp.data);
        goto out;
    }
    f = NULL;
    if (rename(tmp.data, path) != 0) {
        rc = wh_err_set(err, WH_E_IO, "cannot rename %s to %s: %s", tmp.data, path, strerror(errno));
        unlink(tmp.data);
    }
out:
    if (f != NULL)
        fclose(f);
    wh_buf_free(&tmp);
    return rc;
}

static wh_code self_signed(const app *a, SSL_CTX **ctx, wh_certs_info *info, wh_err *err)
{
    const char *names[64] = {"localhost", "127.0.0.1", "::1"};
    size_t n = 3;
    char *sans = strdup(a->cfg.tls_san), *tok, *save = NULL;
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (sans == NULL)
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
    for (tok = strtok_r(sans, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok == '\0')
            continue;
        if (n == sizeof(names) / sizeof(names[0])) {
            rc = wh_err_set(err, WH_E_LIMIT, "--tls-san: at most %zu names", n - 3);
            goto out;
        }
        /* The first configured name becomes the CN (the service name). */
        if (n == 3)
            names[n++] = names[0], names[0] = tok;
        else
            names[n++] = tok;
    }
    if ((rc = wh_certs_generate_self_signed(names, n, a->cfg.self_signed_days, &cert, &key, err)) != WH_OK ||
        (rc = wh_certs_ctx_from_pem(cert.data, cert.len, key.data, key.len, ctx, info, err)) != WH_OK)
        goto out;
    if (a->cfg.self_signed_cert_out[0] != '\0' &&
        (rc = write_file_atomically(a->cfg.self_signed_cert_out, &cert, err)) != WH_OK) {
        SSL_CTX_free(*ctx);
        *ctx = NULL;
    }
out:
    free(sans);
    wh_buf_free(&cert);
    wh_buf_free(&key);
    return rc;
}

/* Build the TLS context the configuration asks for; on success record its
 * description for /readyz and the metrics. */
static wh_code load_tls(app *a, SSL_CTX **ctx, wh_err *err)
{
    wh_certs_info info;
    char detail[512];
    wh_code rc;

    if (have_cert_files(a)) {
        wh_certs_stamp_read(&a->stamp, a->cfg.tls_cert_file, a->cfg.tls_key_file);
        rc = wh_certs_ctx_from_files(a->cfg.tls_cert_file, a->cfg.tls_key_file, ctx, &info, err);
    } else {
        rc = self_signed(a, ctx, &info, err);
    }
    wh_metric_add(a->cert_reloads, (const char *const[]){rc == WH_OK ? "success" : "failure"}, 1);
    if (rc != WH_OK)
        return rc;
    describe_cert(&info, have_cert_files(a) ? a->cfg.tls_cert_file : "self-signed", detail, sizeof(detail));
    wh_router_set_certs(a->router, 1, detail);
    wh_metric_set(a->cert_expiry, NULL, (double)info.not_after);
    wh_log(WH_LOG_INFO, "certificate loaded", "certificate", detail, NULL);
    if (info.not_after < time(NULL))
        wh_log(WH_LOG_WARN, "the serving certificate has expired; clients will refuse it", "certificate", detail,
               NULL);
    return WH_OK;
}

static void reload_tls(app *a, const char *why)
{
    SSL_CTX *ctx = NULL;
    wh_err err;

    wh_err_clear(&err);
    if (load_tls(a, &ctx, &err) != WH_OK || wh_http_set_tls(a->http, ctx, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "certificate reload failed; keeping the previous certificate", "trigger", why, "error",
               wh_err_msg(&err), NULL);
    SSL_CTX_free(ctx); /* the workers hold their own references */
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

    if ((a->endpoints = calloc(wh_server_endpoint_ndefs + 1, sizeof(*a->endpoints))) == NULL)
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
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

static int run(app *a, char **argv, int argc)
{
    endpoint_impl impls[16];
    wh_router_route routes[16];
    wh_http_config hc;
    SSL_CTX *ctx = NULL;
    sigset_t signals;
    struct timespec tick;
    wh_err err;
    int level, format, sig, status = 1;
    char threads[16];
    size_t cut;

    wh_err_clear(&err);
    if (build_flags(a) != WH_OK) {
        fprintf(stderr, "webhookd: out of memory\n");
        return 1;
    }
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
    if ((level = wh_log_level_parse(a->cfg.log_level)) < 0 || (format = wh_log_format_parse(a->cfg.log_format)) < 0) {
        fprintf(stderr, "webhookd: --log-level must be debug|info|warn|error|off and --log-format json|text\n");
        return 2;
    }
    if ((a->cfg.tls_cert_file[0] == '\0') != (a->cfg.tls_key_file[0] == '\0')) {
        fprintf(stderr, "webhookd: --tls-cert-file and --tls-key-file go together\n");
        return 2;
    }
    if (a->cfg.threads < 0 || a->cfg.threads > 1024 || a->cfg.max_request_bytes == 0 ||
        wh_server_endpoint_ndefs > sizeof(routes) / sizeof(routes[0])) {
        fprintf(stderr, "webhookd: --threads must be 0..1024 and --max-request-bytes positive\n");
        return 2;
    }
    if (a->cfg.threads == 0)
        a->cfg.threads = cpu_count();
    wh_log_configure((wh_log_level)level, (wh_log_format)format);

    /* Before any thread exists, so that every thread inherits the mask. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    if ((a->metrics = wh_metrics_new()) == NULL) {
        wh_err_set(&err, WH_E_NOMEM, "out of memory");
        goto fail;
    }
    wh_metric_set(wh_metrics_gauge(a->metrics, "webhookd_build_info", "webhookd's version (value is always 1).",
                                   (const char *const[]){"version", NULL}),
                  (const char *const[]){WH_VERSION}, 1);
    a->cert_reloads =
        wh_metrics_counter(a->metrics, "webhookd_certificate_loads_total", "Serving certificate loads, by result.",
                           (const char *const[]){"result", NULL});
    a->cert_expiry = wh_metrics_gauge(a->metrics, "webhookd_certificate_expiry_timestamp_seconds",
                                      "notAfter of the serving certificate, in Unix seconds.", NULL);
    if (create_endpoints(a, impls, routes, &err) != WH_OK ||
        wh_router_new(routes, a->nendpoints, a->cfg.max_request_bytes, a->metrics, &a->router, &err) != WH_OK)
        goto fail;
    if (load_tls(a, &ctx, &err) != WH_OK)
        goto fail;
    hc = (wh_http_config){a->cfg.listen, a->cfg.threads, a->cfg.http2, a->cfg.max_request_bytes, a->router, a->metrics};
    if (wh_http_start(&hc, ctx, &a->http, &err) != WH_OK)
        goto fail;
    snprintf(threads, sizeof(threads), "%d", a->cfg.threads);
    wh_log(WH_LOG_INFO, "listening", "address", wh_http_bound_address(a->http), "threads", threads, "protocols",
           a->cfg.http2 ? "h2,http/1.1" : "http/1.1", "version", WH_VERSION, NULL);

    tick.tv_sec = (time_t)a->cfg.cert_check_interval;
    tick.tv_nsec = (long)((a->cfg.cert_check_interval - (double)tick.tv_sec) * 1e9);
    if (tick.tv_sec == 0 && tick.tv_nsec < 10000000)
        tick.tv_nsec = 10000000;
    for (;;) {
        sig = sigtimedwait(&signals, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM)
            break;
        if (sig == SIGHUP) {
            wh_log(WH_LOG_INFO, "SIGHUP: reloading", NULL);
            if (have_cert_files(a)) /* a self-signed certificate stays what clients were given */
                reload_tls(a, "SIGHUP");
            reload_endpoints(a, 1);
            continue;
        }
        if (have_cert_files(a)) {
            wh_certs_stamp now;
            wh_certs_stamp_read(&now, a->cfg.tls_cert_file, a->cfg.tls_key_file);
            if (!wh_certs_stamp_equal(&now, &a->stamp))
                reload_tls(a, "file change"); /* records the new stamp even on failure */
        }
        reload_endpoints(a, 0);
    }

    wh_log(WH_LOG_INFO, "shutting down", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
    wh_router_set_shutting_down(a->router);
    cut = wh_http_shutdown(a->http, a->cfg.shutdown_timeout);
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
    wh_http_free(a.http);
    wh_router_free(a.router);
    for (i = 0; i < a.nendpoints; i++)
        a.endpoints[i]->destroy(a.endpoints[i]);
    free(a.endpoints);
    wh_metrics_free(a.metrics);
    free(a.flags);
    free((void *)a.endpoint_flag_values);
    return status;
}
