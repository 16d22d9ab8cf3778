/*
 * wh_server_certs.c - the serving certificate's lifecycle in webhookd (see
 * wh_server_certs.h): flags, first load, reload on change and SIGHUP, its
 * /readyz line and metrics, the client CAs that callers' certificates are
 * verified against (--client-ca-file), and the CA handed to the caBundle
 * patcher.  Kept out of main.c so that main only wires the parts together.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/crypto.h>

#include "wh_alloc.h"
#include "wh_certs.h"
#include "wh_certs_cabundle.h"
#include "wh_certs_patcher.h"
#include "wh_log.h"
#include "wh_server_certs.h"

struct wh_server_certs {
    const wh_server_certs_config *cfg;
    wh_metric *loads;
    wh_metric *expiry;
    const char *kubeconfig; /* for the patcher; NULL = the default search */
    double kube_timeout;
    wh_metrics *metrics;  /* borrowed */
    wh_router *router;    /* borrowed */
    wh_http_server *http; /* borrowed; NULL until serving */
    wh_certs_stamp stamp;
    wh_buf self_cert, self_key; /* the self-signed pair, kept for rebuilding the context */
    /* --client-ca-file */
    wh_certs_stamp client_ca_stamp;
    wh_metric *client_ca_loads;
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
};

void wh_server_certs_flags(wh_server_certs_config *cfg, wh_server_flag *rows, size_t nrows)
{
    const wh_server_flag flags[WH_SERVER_CERTS_FLAGS] = {
        {"tls-cert-file", WH_FLAG_STRING, &cfg->tls_cert_file, "",
         "PEM certificate chain (leaf first); reloaded when it changes and on SIGHUP. "
         "Without it webhookd serves a self-signed ECDSA P-256 certificate generated at start"},
        {"tls-key-file", WH_FLAG_STRING, &cfg->tls_key_file, "", "PEM private key matching --tls-cert-file"},
        {"tls-san", WH_FLAG_STRING, &cfg->tls_san, "",
         "extra names of the self-signed certificate, comma-separated (e.g. webhookd.istio-system.svc); "
         "localhost, 127.0.0.1 and ::1 are always included"},
        {"self-signed-cert-out", WH_FLAG_STRING, &cfg->self_signed_cert_out, "",
         "write the self-signed certificate (PEM, no key) to this file, for clients' CA bundles"},
        {"self-signed-days", WH_FLAG_INT, &cfg->self_signed_days, "365", "lifetime of the self-signed certificate"},
        {"cert-check-interval", WH_FLAG_SECONDS, &cfg->cert_check_interval, "1s",
         "how often the certificate files (and --client-ca-file) are checked for changes"},
        {"client-ca-file", WH_FLAG_STRING, &cfg->client_ca_file, "",
         "PEM bundle of the CAs that callers' TLS client certificates must verify against (the kube-apiserver's, "
         "see README): then every path but /healthz and /readyz needs such a certificate (403 otherwise; the "
         "handshake only requests one, so the kubelet's probes pass). Reloaded when it changes and on SIGHUP; "
         "the --monitoring-listen port is not affected (default: off, no client certificate asked for)"},
        {"patch-ca-bundle", WH_FLAG_BOOL, &cfg->patch_ca_bundle, "false",
         "keep clientConfig.caBundle of the selected webhook configurations set to our CA: at start once serving, "
         "after every certificate reload, on SIGHUP and every --ca-bundle-check-interval (repairs overwrites); "
         "failures are logged and retried, never stop serving"},
        {"ca-file", WH_FLAG_STRING, &cfg->ca_file, "",
         "CA bundle (PEM) to publish with --patch-ca-bundle; default: ca.crt beside --tls-cert-file when it "
         "exists (cert-manager), else the last certificate of the chain; the self-signed certificate when "
         "there are no files"},
        {"ca-bundle-mutating", WH_FLAG_STRING, &cfg->ca_bundle_mutating, "",
         "MutatingWebhookConfiguration names to patch, comma-separated"},
        {"ca-bundle-validating", WH_FLAG_STRING, &cfg->ca_bundle_validating, "",
         "ValidatingWebhookConfiguration names to patch, comma-separated"},
        {"ca-bundle-selector", WH_FLAG_STRING, &cfg->ca_bundle_selector, "",
         "label selector: patch every webhook configuration of both kinds it matches (needs list permission)"},
        {"ca-bundle-service", WH_FLAG_STRING, &cfg->ca_bundle_service, "",
         "only patch the webhooks whose clientConfig.service is NAMESPACE/NAME (default: every webhook of the "
         "selected configurations)"},
        {"ca-bundle-check-interval", WH_FLAG_SECONDS, &cfg->ca_bundle_check_interval, "60s",
         "how often the webhook configurations are re-checked and repaired; also the longest retry backoff"},
    };
    size_t i;

    for (i = 0; i < WH_SERVER_CERTS_FLAGS && i < nrows; i++)
        rows[i] = flags[i];
}

/* --- set-up --------------------------------------------------------------- */

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

/* Check the --patch-ca-bundle flags and fill c->targets. */
static wh_code setup_targets(wh_server_certs *c, wh_err *err)
{
    const wh_server_certs_config *f = c->cfg;
    char *store, *slash;

    if (!f->patch_ca_bundle)
        return WH_OK;
    if (f->ca_bundle_mutating[0] == '\0' && f->ca_bundle_validating[0] == '\0' && f->ca_bundle_selector[0] == '\0')
        return wh_err_set(err, WH_E_INVALID,
                          "--patch-ca-bundle needs --ca-bundle-mutating, --ca-bundle-validating and/or "
                          "--ca-bundle-selector");
    if (f->ca_file[0] != '\0' && f->tls_cert_file[0] == '\0')
        return wh_err_set(err, WH_E_INVALID,
                          "--ca-file goes with --tls-cert-file (a self-signed certificate is its own CA)");
    if (!(f->ca_bundle_check_interval >= 1))
        return wh_err_set(err, WH_E_INVALID, "--ca-bundle-check-interval must be at least 1s");
    if (!(c->kube_timeout >= 0.1))
        return wh_err_set(err, WH_E_INVALID, "--kube-timeout must be at least 100ms");
    c->target_strings =
        wh_malloc(strlen(f->ca_bundle_mutating) + strlen(f->ca_bundle_validating) + strlen(f->ca_bundle_service) + 3);
    store = c->target_strings;
    c->mutating = split_names(f->ca_bundle_mutating, &store);
    c->validating = split_names(f->ca_bundle_validating, &store);
    c->targets.mutating = c->mutating;
    c->targets.validating = c->validating;
    c->targets.selector = f->ca_bundle_selector;
    if (f->ca_bundle_service[0] != '\0') {
        strcpy(store, f->ca_bundle_service);
        if ((slash = strchr(store, '/')) == NULL || slash == store || slash[1] == '\0' || strchr(slash + 1, '/'))
            return wh_err_set(err, WH_E_INVALID, "--ca-bundle-service wants NAMESPACE/NAME, not \"%s\"",
                              f->ca_bundle_service);
        *slash = '\0';
        c->targets.service_namespace = store;
        c->targets.service_name = slash + 1;
    }
    return WH_OK;
}

wh_code wh_server_certs_new(const wh_server_certs_config *cfg, const char *kubeconfig, double kube_timeout,
                            wh_server_certs **out, wh_err *err)
{
    wh_server_certs *c = wh_calloc(1, sizeof(*c));
    wh_code rc;

    c->cfg = cfg;
    c->kubeconfig = kubeconfig != NULL && kubeconfig[0] != '\0' ? kubeconfig : NULL;
    c->kube_timeout = kube_timeout;
    *out = NULL;
    if ((cfg->tls_cert_file[0] == '\0') != (cfg->tls_key_file[0] == '\0')) {
        rc = wh_err_set(err, WH_E_INVALID, "--tls-cert-file and --tls-key-file go together");
        goto out;
    }
    if ((rc = setup_targets(c, err)) != WH_OK)
        goto out;
    *out = c;
    c = NULL;
out:
    wh_server_certs_free(c);
    return rc;
}

/* --- loading -------------------------------------------------------------- */

static int have_cert_files(const wh_server_certs *c)
{
    return c->cfg->tls_cert_file[0] != '\0';
}

static void describe_cert(const wh_certs_info *info, const char *source, char *out, size_t size)
{
    char expiry[32];
    struct tm tm;

    gmtime_r(&info->not_after, &tm);
    strftime(expiry, sizeof(expiry), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(out, size, "%s, serial %s, expires %s (%s)", info->subject, info->serial, expiry, source);
}

/* The self-signed certificate: generated once (its PEM, its own CA, goes to
 * c->ca), then rebuilt from c->self_cert/self_key (a new client CA bundle
 * must not change what clients were given). */
static wh_code self_signed(wh_server_certs *c, SSL_CTX **ctx, wh_certs_info *info, wh_err *err)
{
    const char *names[64] = {"localhost", "127.0.0.1", "::1"};
    size_t n = 3;
    char *sans = wh_strdup(c->cfg->tls_san), *tok, *save = NULL;
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (c->self_cert.len != 0) {
        rc = wh_certs_ctx_from_pem(c->self_cert.data, c->self_cert.len, c->self_key.data, c->self_key.len, ctx, info,
                                   err);
        goto out;
    }
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
    if ((rc = wh_certs_generate_self_signed(names, n, c->cfg->self_signed_days, &cert, &key, err)) != WH_OK ||
        (rc = wh_certs_ctx_from_pem(cert.data, cert.len, key.data, key.len, ctx, info, err)) != WH_OK)
        goto out;
    if (c->cfg->self_signed_cert_out[0] != '\0' &&
        (rc = wh_certs_write_file(c->cfg->self_signed_cert_out, cert.data, cert.len, 0644, err)) != WH_OK) {
        SSL_CTX_free(*ctx);
        *ctx = NULL;
        goto out;
    }
    wh_buf_reset(&c->ca);
    wh_buf_reset(&c->ca_source);
    wh_buf_append(&c->ca, cert.data, cert.len);
    wh_buf_puts(&c->ca_source, "the self-signed certificate");
    c->self_cert = cert;
    c->self_key = key;
    cert = (wh_buf)WH_BUF_INIT;
    key = (wh_buf)WH_BUF_INIT;
out:
    free(sans);
    wh_buf_free(&cert);
    if (key.data != NULL)
        OPENSSL_cleanse(key.data, key.len);
    wh_buf_free(&key);
    return rc;
}

/* The CA bundle of the certificate files into c->ca (the previous one is
 * kept on failure), and the stamp of the CA file watched for changes. */
static wh_code load_ca_from_files(wh_server_certs *c, wh_err *err)
{
    wh_buf ca = WH_BUF_INIT, source = WH_BUF_INIT;
    wh_code rc;

    wh_buf_reset(&c->ca_path);
    wh_certs_ca_bundle_path(c->cfg->ca_file, c->cfg->tls_cert_file, &c->ca_path);
    c->ca_st_ok = c->ca_path.len != 0 && stat(c->ca_path.data, &c->ca_st) == 0;
    if ((rc = wh_certs_load_ca_bundle(c->cfg->ca_file, c->cfg->tls_cert_file, &ca, &source, err)) != WH_OK)
        goto out;
    wh_buf_free(&c->ca);
    wh_buf_free(&c->ca_source);
    c->ca = ca;
    c->ca_source = source;
    ca = (wh_buf)WH_BUF_INIT;
    source = (wh_buf)WH_BUF_INIT;
out:
    wh_buf_free(&ca);
    wh_buf_free(&source);
    return rc;
}

/* Give the current CA to the patcher (when patching). */
static void publish_ca(wh_server_certs *c, const char *why)
{
    if (c->patcher == NULL || c->ca.len == 0)
        return;
    wh_log(WH_LOG_INFO, "caBundle: publishing the CA", "trigger", why, "source", c->ca_source.data, NULL);
    wh_certs_patcher_set_ca(c->patcher, c->ca.data, c->ca.len, why);
}

/* Re-read the CA when only its file changed (a CA rotation ahead of the leaf). */
static void check_ca_file(wh_server_certs *c)
{
    struct stat st;
    int ok;
    wh_err err;

    if (c->patcher == NULL || !have_cert_files(c) || c->ca_path.len == 0)
        return;
    ok = stat(c->ca_path.data, &st) == 0;
    if (ok == c->ca_st_ok &&
        (!ok || (st.st_ino == c->ca_st.st_ino && st.st_dev == c->ca_st.st_dev && st.st_size == c->ca_st.st_size &&
                 st.st_mtim.tv_sec == c->ca_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == c->ca_st.st_mtim.tv_nsec &&
                 st.st_ctim.tv_sec == c->ca_st.st_ctim.tv_sec && st.st_ctim.tv_nsec == c->ca_st.st_ctim.tv_nsec)))
        return;
    wh_err_clear(&err);
    if (load_ca_from_files(c, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "caBundle: cannot read the changed CA file; keeping the previous CA", "error",
               wh_err_msg(&err), NULL);
    else
        publish_ca(c, "CA file change");
}

/* Add --client-ca-file to `ctx`; appends its description to `detail`. */
static wh_code add_client_ca(wh_server_certs *c, SSL_CTX *ctx, char *detail, size_t size, wh_err *err)
{
    const char *file = c->cfg->client_ca_file;
    wh_buf pem = WH_BUF_INIT;
    size_t used = strlen(detail);
    int count = 0;
    wh_code rc;

    wh_certs_stamp_read(&c->client_ca_stamp, file, file);
    if ((rc = wh_buf_read_file(&pem, file, WH_CERTS_MAX_FILE, err)) != WH_OK ||
        (rc = wh_certs_ctx_set_client_ca(ctx, pem.data, pem.len, &count, err)) != WH_OK)
        wh_err_prefix(err, "--client-ca-file %s", file);
    wh_metric_add(c->client_ca_loads, (const char *const[]){rc == WH_OK ? "success" : "failure"}, 1);
    if (rc == WH_OK)
        snprintf(detail + used, size - used, "; client certificates required, %d CA certificate%s from %s", count,
                 count == 1 ? "" : "s", file);
    wh_buf_free(&pem);
    return rc;
}

/* Build the TLS context the configuration asks for; on success record its
 * description for /readyz and the metrics. */
static wh_code load_tls(wh_server_certs *c, SSL_CTX **ctx, wh_err *err)
{
    wh_certs_info info;
    char detail[1024];
    wh_code rc;

    if (have_cert_files(c)) {
        wh_certs_stamp_read(&c->stamp, c->cfg->tls_cert_file, c->cfg->tls_key_file);
        rc = wh_certs_ctx_from_files(c->cfg->tls_cert_file, c->cfg->tls_key_file, ctx, &info, err);
        /* A CA that cannot be read does not stop serving: the patcher keeps
         * publishing the previous one (if any) until the file is fixed. */
        wh_err ca_err;
        wh_err_clear(&ca_err);
        if (rc == WH_OK && c->cfg->patch_ca_bundle && load_ca_from_files(c, &ca_err) != WH_OK)
            wh_log(WH_LOG_ERROR, "caBundle: cannot read the CA bundle; keeping the previous one", "error",
                   wh_err_msg(&ca_err), NULL);
    } else {
        rc = self_signed(c, ctx, &info, err);
    }
    wh_metric_add(c->loads, (const char *const[]){rc == WH_OK ? "success" : "failure"}, 1);
    if (rc != WH_OK)
        return rc;
    describe_cert(&info, have_cert_files(c) ? c->cfg->tls_cert_file : "self-signed", detail, sizeof(detail));
    if (c->cfg->client_ca_file[0] != '\0' && (rc = add_client_ca(c, *ctx, detail, sizeof(detail), err)) != WH_OK) {
        SSL_CTX_free(*ctx);
        *ctx = NULL;
        return rc;
    }
    wh_router_set_certs(c->router, 1, detail);
    wh_metric_set(c->expiry, NULL, (double)info.not_after);
    wh_log(WH_LOG_INFO, "certificate loaded", "certificate", detail, NULL);
    if (info.not_after < time(NULL))
        wh_log(WH_LOG_WARN, "the serving certificate has expired; clients will refuse it", "certificate", detail, NULL);
    return WH_OK;
}

static void reload_tls(wh_server_certs *c, const char *why)
{
    SSL_CTX *ctx = NULL;
    wh_err err;

    wh_err_clear(&err);
    if (load_tls(c, &ctx, &err) != WH_OK) {
        wh_log(WH_LOG_ERROR, "certificate reload failed; keeping the previous certificate", "trigger", why, "error",
               wh_err_msg(&err), NULL);
    } else {
        wh_http_set_tls(c->http, ctx);
        publish_ca(c, "certificate reload");
    }
    SSL_CTX_free(ctx); /* the workers hold their own references */
}

wh_code wh_server_certs_load(wh_server_certs *c, wh_metrics *metrics, wh_router *router, SSL_CTX **ctx, wh_err *err)
{
    c->router = router;
    c->metrics = metrics;
    c->loads = wh_metrics_counter(metrics, "webhookd_certificate_loads_total", "Serving certificate loads, by result.",
                                  (const char *const[]){"result", NULL});
    c->expiry = wh_metrics_gauge(metrics, "webhookd_certificate_expiry_timestamp_seconds",
                                 "notAfter of the serving certificate, in Unix seconds.", NULL);
    if (c->cfg->client_ca_file[0] != '\0') {
        wh_code rc;
        c->client_ca_loads = wh_metrics_counter(metrics, "webhookd_client_ca_loads_total",
                                                "Loads of the --client-ca-file bundle, by result.",
                                                (const char *const[]){"result", NULL});
        if ((rc = wh_router_require_client_cert(router, err)) != WH_OK)
            return rc;
    }
    return load_tls(c, ctx, err);
}

/* --- serving -------------------------------------------------------------- */

static void on_cabundle_status(void *ctx, const char *detail)
{
    wh_router_set_cabundle(ctx, detail);
}

static wh_code start_patcher(wh_server_certs *c, wh_err *err)
{
    wh_certs_patcher_config pc;
    wh_code rc;

    memset(&pc, 0, sizeof(pc));
    pc.kube.kubeconfig = c->kubeconfig;
    pc.kube.timeout_ms = (long)(c->kube_timeout * 1000);
    pc.kube.user_agent = "webhookd/" WH_VERSION;
    pc.targets = c->targets;
    pc.interval = c->cfg->ca_bundle_check_interval;
    pc.metrics = c->metrics;
    pc.on_status = on_cabundle_status;
    pc.status_ctx = c->router;
    wh_router_set_cabundle(c->router, "pending: first patch not done yet");
    if ((rc = wh_certs_patcher_start(&pc, &c->patcher, err)) != WH_OK)
        return rc;
    publish_ca(c, "startup");
    return WH_OK;
}

void wh_server_certs_serve(wh_server_certs *c, wh_http_server *http)
{
    wh_err err;

    c->http = http;
    wh_err_clear(&err);
    if (c->cfg->patch_ca_bundle && start_patcher(c, &err) != WH_OK)
        wh_log(WH_LOG_ERROR, "caBundle patching disabled: cannot start the patcher", "error", wh_err_msg(&err), NULL);
}

double wh_server_certs_poll_interval(const wh_server_certs *c)
{
    return c->cfg->cert_check_interval < 0.01 ? 0.01 : c->cfg->cert_check_interval;
}

void wh_server_certs_poll(wh_server_certs *c)
{
    const char *client_ca = c->cfg->client_ca_file;
    wh_certs_stamp now;

    /* Both record the new stamps even when the reload fails. */
    if (have_cert_files(c)) {
        wh_certs_stamp_read(&now, c->cfg->tls_cert_file, c->cfg->tls_key_file);
        if (!wh_certs_stamp_equal(&now, &c->stamp))
            reload_tls(c, "file change");
    }
    if (client_ca[0] != '\0') {
        wh_certs_stamp_read(&now, client_ca, client_ca);
        if (!wh_certs_stamp_equal(&now, &c->client_ca_stamp))
            reload_tls(c, "client CA file change");
    }
    check_ca_file(c);
}

void wh_server_certs_sighup(wh_server_certs *c)
{
    /* A self-signed certificate stays what clients were given; the client
     * CAs are re-read around it. */
    if (have_cert_files(c) || c->cfg->client_ca_file[0] != '\0')
        reload_tls(c, "SIGHUP");
    if (!have_cert_files(c) && c->patcher != NULL)
        wh_certs_patcher_kick(c->patcher, "SIGHUP");
}

void wh_server_certs_free(wh_server_certs *c)
{
    if (c == NULL)
        return;
    wh_certs_patcher_stop(c->patcher);
    free(c->mutating);
    free(c->validating);
    free(c->target_strings);
    wh_buf_free(&c->ca);
    wh_buf_free(&c->ca_source);
    wh_buf_free(&c->ca_path);
    wh_buf_free(&c->self_cert);
    if (c->self_key.data != NULL)
        OPENSSL_cleanse(c->self_key.data, c->self_key.len);
    wh_buf_free(&c->self_key);
    free(c);
}
