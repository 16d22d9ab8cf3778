/*
 * wh_certs_cabundle.h - puts our CA into the webhook configurations that call us.
 *
 * The API server only trusts a webhook's serving certificate when the
 * webhook's clientConfig.caBundle holds its CA.  With a self-signed or
 * rotated certificate somebody has to write that field; this is the one
 * place that does it, for webhookd at start-up/reload and for
 * `webhookctl certs patch-ca-bundle`.
 */
#ifndef WH_CERTS_CABUNDLE_H
#define WH_CERTS_CABUNDLE_H

#include "wh_buf.h"
#include "wh_kube.h"
#include "wh_result.h"

/* Which webhook configurations to patch.  Every field may be NULL. */
typedef struct wh_certs_ca_targets {
    const char *const *mutating;   /* MutatingWebhookConfiguration names, NULL-terminated */
    const char *const *validating; /* ValidatingWebhookConfiguration names, NULL-terminated */
    const char *selector;          /* label selector: every configuration of both kinds it matches */
    /* Only webhooks whose clientConfig.service is this one ("" / NULL: every
     * webhook of the selected configurations, URL-based ones included). */
    const char *service_namespace;
    const char *service_name;
} wh_certs_ca_targets;

/* Check that `ca_pem` holds at least one certificate and nothing else that
 * is not a certificate.  Fails with a message naming the problem. */
wh_code wh_certs_check_ca_pem(const char *ca_pem, size_t len, wh_err *err);

/* Set clientConfig.caBundle = base64(ca_pem) on every selected webhook,
 * leaving configurations that already carry it untouched (no write), and
 * retrying on conflicts.  Appends one line per configuration to `report`
 * ("mutatingwebhookconfiguration/NAME: 2 webhooks updated" / "up to date").
 * A named configuration that does not exist is an error; the others are
 * still patched and the first error is returned. */
wh_code wh_certs_patch_ca_bundle(wh_kube_client *client, const wh_certs_ca_targets *targets, const char *ca_pem,
                                 size_t len, wh_buf *report, wh_err *err);

/* What one wh_certs_patch_ca_bundle_stats call did (zeroed on entry). */
typedef struct wh_certs_patch_stats {
    int configurations; /* configurations read (named or selected) */
    int written;        /* configurations written (at least one webhook changed) */
    int webhooks;       /* webhooks whose caBundle changed */
} wh_certs_patch_stats;

/* wh_certs_patch_ca_bundle, also counting what it did (`stats` may be NULL). */
wh_code wh_certs_patch_ca_bundle_stats(wh_kube_client *client, const wh_certs_ca_targets *targets, const char *ca_pem,
                                       size_t len, wh_buf *report, wh_certs_patch_stats *stats, wh_err *err);

/* --- which CA to publish ----------------------------------------------------- */

/* The CA bundle that goes with the serving files, first found of:
 *   1. `ca_file` when not NULL/"" (must exist and hold certificates);
 *   2. "ca.crt" in the directory of `cert_file` (what cert-manager and
 *      kubernetes.io/tls Secrets mount next to tls.crt), when it exists;
 *   3. the trust anchor of the chain in `cert_file` (its last certificate:
 *      the root when the chain carries it, else the topmost intermediate).
 * Appends the PEM to `out` and a description of where it came from to
 * `source` (the file name, or "the chain of FILE"). */
wh_code wh_certs_load_ca_bundle(const char *ca_file, const char *cert_file, wh_buf *out, wh_buf *source, wh_err *err);

/* The path wh_certs_load_ca_bundle would read (1 or 2 above) in `out`, or
 * "" when the chain itself is used: what the caller watches for changes. */
void wh_certs_ca_bundle_path(const char *ca_file, const char *cert_file, wh_buf *out);

#endif
