/*
 * main.c - webhookd: flags, start-up, and the main thread's signal loop.
 *
 * The main thread owns everything that is not request serving: it blocks
 * SIGINT/SIGTERM/SIGHUP before any worker exists and sigwait()s for them
 * (no h2o call ever runs in a signal handler), polls the certificate files,
 * builds replacement TLS contexts off the event loops, and drives shutdown.
 * With --patch-ca-bundle it also hands every new CA to the caBundle patcher
 * thread (certs/wh_certs_patcher.h), which does all Kubernetes calls.
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
#include "wh_certs.h"
#include "wh_certs_cabundle.h"
#include "wh_certs_patcher.h"
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
    wh_http_server *monitoring; /* --monitoring-listen */
    wh_certs_stamp stamp;
    /* caBundle patching */
    wh_buf ca;         /* the CA bundle of the current certificate */
    wh_buf ca_source;  /* where it came from, for the logs */
    wh_buf ca_path;    /* the CA file watched for changes ("" = the chain itself) */
    struct stat ca_st; /* its stamp */
    int ca_st_ok;
    char *target_strings;  /* one allocation holding the parsed names below */
    const char **mutating; /* NULL-terminated */
    const char **validating;
    wh_certs_ca_targets targets;
    wh_certs_patcher *patcher;
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
    const wh_endpoint_flag *ef;

    for (i = 0; i < wh_server_endpoint_ndefs; i++)
        for (ef = wh_server_endpoint_defs[i].flags; ef != NULL && ef->name != NULL; ef++)
            k++;
    a->flags = wh_calloc(n + k + 1, sizeof(*a->flags));
    a->endpoint_flag_values = wh_calloc(k + 1, sizeof(*a->endpoint_flag_values));
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

/* Generate the self-signed certificate; its PEM (its own CA) goes to a->ca. */
static wh_code self_signed(app *a, SSL_CTX **ctx, wh_certs_info *info, wh_err *err)
{
    const char *names[64] = {"localhost", "127.0.0.1", "::1"};
    size_t n = 3;
    char *sans = wh_strdup(a->cfg.tls_san), *tok, *save = NULL;
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_code rc = WH_OK;

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
        (rc = wh_certs_write_file(a->cfg.self_signed_cert_out, cert.data, cert.len, 0644, err)) != WH_OK) {
        SSL_CTX_free(*ctx);
        *ctx = NULL;
        goto out;
    }
    wh_buf_reset(&a->ca);
    wh_buf_reset(&a->ca_source);
    wh_buf_append(&a->ca, cert.data, cert.len);
    wh_buf_puts(&a->ca_source, "the self-signed certificate");
out:
    free(sans);
    wh_buf_free(&cert);
    wh_buf_free(&key);
    return rc;
}

/* The CA bundle of the certificate files into a->ca (the previous one is
 * kept on failure), and the stamp of the CA file watched for changes. */
static wh_code load_ca_from_files(app *a, wh_err *err)
{
    wh_buf ca = WH_BUF_INIT, source = WH_BUF_INIT;
    wh_code rc;

    wh_buf_reset(&a->ca_path);
    wh_certs_ca_bundle_path(a->cfg.ca_file, a->cfg.tls_cert_file, &a->ca_path);
    a->ca_st_ok = a->ca_path.len != 0 && stat(a->ca_path.data, &a->ca_st) == 0;
    if ((rc = wh_certs_load_ca_bundle(a->cfg.ca_file, a->cfg.tls_cert_file, &ca, &source, err)) != WH_OK)
        goto out;
    wh_buf_free(&a->ca);
    wh_buf_free(&a->ca_source);
    a->ca = ca;
    a->ca_source = source;
    ca = (wh_buf)WH_BUF_INIT;
    source = (wh_buf)WH_BUF_INIT;
out:
    wh_buf_free(&ca);
    wh_buf_free(&source);
    return rc;
}

/* Give the current CA to the patcher (when patching). */
static void publish_ca(app *a, const char *why)
{
    if (a->patcher == NULL || a->ca.len == 0)
        return;
    wh_log(WH_LOG_INFO, "caBundle: publishing the CA", "trigger", why, "source", a->ca_source.data, NULL);
    if (wh_certs_patcher_set_ca(a->patcher, a->ca.data, a->ca.len, why) != WH_OK)
        wh_log(WH_LOG_ERROR, "caBundle: out of memory handing over the CA", NULL);
}

/* Re-read the CA when only its file changed (a CA rotation ahead of the leaf). */
static void check_ca_file(app *a)
{
    struct stat st;
    int ok;
    wh_err err;

    if (a->patcher == NULL || !have_cert_files(a) || a->ca_path.len == 0)
        return;
    ok = stat(a->ca_path.data, &st) == 0;
    if (ok == a->ca_st_ok &&
        (!ok || (st.st_ino == a->ca_st.st_ino && st.st_dev == a->ca_st.st_dev && st.st_size == a->ca_st.st_size &&
                 st.st_mtim.tv_sec == a->ca_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == a->ca_st.st_mtim.tv_nsec &&
                 st.st_ctim.tv_sec == a->ca_st.st_ctim.tv_sec && st.st_ctim.tv_nsec == a->ca_st.st_ctim.tv_nsec)))
        return;
    wh_err_clear(&err);
    if (load_ca_from_files(a, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "caBundle: cannot read the changed CA file; keeping the previous CA", "error",
               wh_err_msg(&err), NULL);
    else
        publish_ca(a, "CA file change");
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
        /* A CA that cannot be read does not stop serving: the patcher keeps
         * publishing the previous one (if any) until the file is fixed. */
        wh_err ca_err;
        wh_err_clear(&ca_err);
        if (rc == WH_OK && a->cfg.patch_ca_bundle && load_ca_from_files(a, &ca_err) != WH_OK)
            wh_log(WH_LOG_ERROR, "caBundle: cannot read the CA bundle; keeping the previous one", "error",
                   wh_err_msg(&ca_err), NULL);
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
        wh_log(WH_LOG_WARN, "the serving certificate has expired; clients will refuse it", "certificate", detail, NULL);
    return WH_OK;
}

static void reload_tls(app *a, const char *why)
{
    SSL_CTX *ctx = NULL;
    wh_err err;

    wh_err_clear(&err);
    if (load_tls(a, &ctx, &err) != WH_OK) {
        wh_log(WH_LOG_ERROR, "certificate reload failed; keeping the previous certificate", "trigger", why, "error",
               wh_err_msg(&err), NULL);
    } else {
        wh_http_set_tls(a->http, ctx);
        publish_ca(a, "certificate reload");
    }
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

/* --- caBundle patching ---------------------------------------------------- */

/* Split `list` (comma-separated, blanks ignored) into a NULL-terminated
 * array of pointers into `store`, which it advances past the copies. */
static const char **split_names(const char *list, char **store)
{
    size_t n = 1;
    const char **out;
    char *tok, *save = NULL;

    for (const char *c = list; *c != '\0'; c++)
        n += *c == ',';
    out = wh_calloc(n + 1, sizeof(*out));
    strcpy(*store, list);
    n = 0;
    for (tok = strtok_r(*store, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save))
        out[n++] = tok;
    *store += strlen(list) + 1;
    return out;
}

/* Check the --patch-ca-bundle flags and fill a->targets; 2 on a usage error. */
static int setup_targets(app *a)
{
    const wh_server_config *c = &a->cfg;
    char *store, *slash;

    if (!c->patch_ca_bundle)
        return 0;
    if (c->ca_bundle_mutating[0] == '\0' && c->ca_bundle_validating[0] == '\0' && c->ca_bundle_selector[0] == '\0') {
        fprintf(stderr, "webhookd: --patch-ca-bundle needs --ca-bundle-mutating, --ca-bundle-validating and/or "
                        "--ca-bundle-selector\n");
        return 2;
    }
    if (c->ca_file[0] != '\0' && c->tls_cert_file[0] == '\0') {
        fprintf(stderr, "webhookd: --ca-file goes with --tls-cert-file (a self-signed certificate is its own CA)\n");
        return 2;
    }
    if (!(c->ca_bundle_check_interval >= 1)) {
        fprintf(stderr, "webhookd: --ca-bundle-check-interval must be at least 1s\n");
        return 2;
    }
    if (!(c->kube_timeout >= 0.1)) {
        fprintf(stderr, "webhookd: --kube-timeout must be at least 100ms\n");
        return 2;
    }
    a->target_strings =
        wh_malloc(strlen(c->ca_bundle_mutating) + strlen(c->ca_bundle_validating) + strlen(c->ca_bundle_service) + 3);
    store = a->target_strings;
    if ((a->mutating = split_names(c->ca_bundle_mutating, &store)) == NULL ||
        (a->validating = split_names(c->ca_bundle_validating, &store)) == NULL)
        return 1;
    a->targets.mutating = a->mutating;
    a->targets.validating = a->validating;
    a->targets.selector = c->ca_bundle_selector;
    if (c->ca_bundle_service[0] != '\0') {
        strcpy(store, c->ca_bundle_service);
        if ((slash = strchr(store, '/')) == NULL || slash == store || slash[1] == '\0' || strchr(slash + 1, '/')) {
            fprintf(stderr, "webhookd: --ca-bundle-service wants NAMESPACE/NAME, not \"%s\"\n", c->ca_bundle_service);
            return 2;
        }
        *slash = '\0';
        a->targets.service_namespace = store;
        a->targets.service_name = slash + 1;
    }
    return 0;
}

static void on_cabundle_status(void *ctx, const char *detail)
{
    wh_router_set_cabundle(ctx, detail);
}

static wh_code start_patcher(app *a, wh_err *err)
{
    wh_certs_patcher_config pc;
    wh_code rc;

    memset(&pc, 0, sizeof(pc));
    pc.kube.kubeconfig = a->cfg.kubeconfig[0] != '\0' ? a->cfg.kubeconfig : NULL;
    pc.kube.timeout_ms = (long)(a->cfg.kube_timeout * 1000);
    pc.kube.user_agent = "webhookd/" WH_VERSION;
    pc.targets = a->targets;
    pc.interval = a->cfg.ca_bundle_check_interval;
    pc.metrics = a->metrics;
    pc.on_status = on_cabundle_status;
    pc.status_ctx = a->router;
    wh_router_set_cabundle(a->router, "pending: first patch not done yet");
    if ((rc = wh_certs_patcher_start(&pc, &a->patcher, err)) != WH_OK)
        return rc;
    publish_ca(a, "startup");
    return WH_OK;
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
        if (have_cert_files(a)) {
            wh_certs_stamp st;
            wh_certs_stamp_read(&st, a->cfg.tls_cert_file, a->cfg.tls_key_file);
            if (!wh_certs_stamp_equal(&st, &a->stamp))
                reload_tls(a, "file change");
        }
    }
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
    char threads[16], inflight[32];
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
    if ((status = setup_targets(a)) != 0) {
        if (status == 1)
            fprintf(stderr, "webhookd: out of memory\n");
        return status;
    }
    status = 1;
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
    if (a->cfg.patch_ca_bundle && start_patcher(a, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "caBundle patching disabled: cannot start the patcher", "error", wh_err_msg(&err), NULL);

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
            else if (a->patcher != NULL)
                wh_certs_patcher_kick(a->patcher, "SIGHUP");
            reload_endpoints(a, 1);
            continue;
        }
        if (have_cert_files(a)) {
            wh_certs_stamp now;
            wh_certs_stamp_read(&now, a->cfg.tls_cert_file, a->cfg.tls_key_file);
            if (!wh_certs_stamp_equal(&now, &a->stamp))
                reload_tls(a, "file change"); /* records the new stamp even on failure */
            check_ca_file(a);
        }
        reload_endpoints(a, 0);
    }

    wh_log(WH_LOG_INFO, "shutting down", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
    wh_router_set_shutting_down(a->router);
    if (a->cfg.shutdown_delay > 0)
        shutdown_delay(a, &signals);
    cut = wh_http_shutdown(a->http, a->cfg.shutdown_timeout);
    if (a->monitoring != NULL) /* last: probes see the drain */
        wh_http_shutdown(a->monitoring, 1);
    wh_certs_patcher_stop(a->patcher); /* waits for a request in flight, at most --kube-timeout */
    a->patcher = NULL;
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
    wh_certs_patcher_stop(a.patcher); /* a failed start */
    wh_http_free(a.http);
    wh_http_free(a.monitoring);
    wh_router_free(a.router);
    for (i = 0; i < a.nendpoints; i++)
        a.endpoints[i]->destroy(a.endpoints[i]);
    free(a.endpoints);
    wh_metrics_free(a.metrics);
    free(a.flags);
    free((void *)a.endpoint_flag_values);
    free(a.mutating);
    free(a.validating);
    free(a.target_strings);
    wh_buf_free(&a.ca);
    wh_buf_free(&a.ca_source);
    wh_buf_free(&a.ca_path);
    return status;
}
