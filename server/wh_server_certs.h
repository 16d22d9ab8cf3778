/*
 * wh_server_certs.h - webhookd's serving certificate over the process's life:
 * its flags, the first load (files or a self-signed certificate), reloads
 * when the files change (polled, following Secret-volume symlinks) or on
 * SIGHUP, what /readyz and the metrics say about it, the client CAs that
 * callers' certificates must verify against (--client-ca-file, reloaded the
 * same way; the router decides per path), and the caBundle patcher thread
 * that publishes its CA (--patch-ca-bundle).
 *
 * main.c only wires it: parse the flags, create, load once before serving,
 * attach the running server, then poll from the signal loop.  The pieces it
 * is made of (PEM loading, TLS policy, generation, caBundle patching) live in
 * certs/ (wh_certs.h, wh_certs_cabundle.h, wh_certs_patcher.h).  Everything
 * here runs on the main thread; tests/integration/test_webhookd.py
 * (TestCertificates) and tests/certs/test_webhookd_cabundle.py cover it.
 */
#ifndef WH_SERVER_CERTS_H
#define WH_SERVER_CERTS_H

#include <openssl/ssl.h>

#include "wh_metrics.h"
#include "wh_result.h"
#include "wh_server.h"

typedef struct wh_server_certs_config {
    const char *tls_cert_file;
    const char *tls_key_file;
    const char *tls_san;              /* extra SANs of the self-signed certificate, comma-separated */
    const char *self_signed_cert_out; /* write the self-signed certificate (PEM) here */
    int self_signed_days;
    double cert_check_interval;
    const char *client_ca_file; /* callers' certificates must verify against it; "" = not asked for */
    /* caBundle patching (certs/wh_certs_patcher.h) */
    int patch_ca_bundle;
    const char *ca_file;              /* CA bundle to publish; default ca.crt beside the cert, else the chain's root */
    const char *ca_bundle_mutating;   /* MutatingWebhookConfiguration names, comma-separated */
    const char *ca_bundle_validating; /* ValidatingWebhookConfiguration names, comma-separated */
    const char *ca_bundle_selector;   /* label selector for both kinds */
    const char *ca_bundle_service;    /* only webhooks calling NAMESPACE/NAME */
    double ca_bundle_check_interval;
} wh_server_certs_config;

/* The certificate flags, bound to `cfg` (same row format as the core flags). */
void wh_server_certs_flags(wh_server_certs_config *cfg, wh_server_flag *rows, size_t nrows);
#define WH_SERVER_CERTS_FLAGS 14

typedef struct wh_server_certs wh_server_certs;

/* Check the parsed flags (WH_E_INVALID with the sentence for the user on a
 * usage error).  `cfg` and `kubeconfig` (--kubeconfig and --kube-timeout,
 * for the patcher; "" or NULL = the default search) are borrowed for the
 * object's life. */
wh_code wh_server_certs_new(const wh_server_certs_config *cfg, const char *kubeconfig, double kube_timeout,
                            wh_server_certs **out, wh_err *err);

/* Register the certificate metrics in `metrics` and load the certificate;
 * *ctx is a new reference for wh_http_start.  `router` (borrowed) gets the
 * certificate's description for /readyz. */
wh_code wh_server_certs_load(wh_server_certs *c, wh_metrics *metrics, wh_router *router, SSL_CTX **ctx, wh_err *err);

/* Once serving: reloads go to `http` (borrowed), and with --patch-ca-bundle
 * the patcher thread starts (a failure is logged; serving goes on). */
void wh_server_certs_serve(wh_server_certs *c, wh_http_server *http);

/* How often wh_server_certs_poll wants to run. */
double wh_server_certs_poll_interval(const wh_server_certs *c);

/* Reload what changed on disk (certificate/key pair, CA file). */
void wh_server_certs_poll(wh_server_certs *c);

/* SIGHUP: reload the files (a self-signed certificate stays what clients
 * were given; the patcher re-checks the webhook configurations instead). */
void wh_server_certs_sighup(wh_server_certs *c);

/* Stop the patcher (waits for a request in flight, at most its timeout) and
 * free everything; NULL is fine. */
void wh_server_certs_free(wh_server_certs *c);

#endif
