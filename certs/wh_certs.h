/*
 * wh_certs.h - the serving certificate: loading, TLS context building, change
 * detection and self-signed generation.
 *
 * Everything here runs off the event loops (in the main thread at start-up
 * and on reload); the server swaps the finished SSL_CTX into its workers.
 * No h2o here: ALPN is the HTTP layer's business and is added by server/.
 */
#ifndef WH_CERTS_H
#define WH_CERTS_H

#include <openssl/ssl.h>
#include <sys/types.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "wh_buf.h"
#include "wh_result.h"

/* Upper bound for a certificate chain or key file (a chain is a few KB). */
#define WH_CERTS_MAX_FILE (1024 * 1024)

/* What a loaded certificate is, for logs, metrics and /readyz. */
typedef struct wh_certs_info {
    char subject[256]; /* RFC 2253 subject, e.g. "CN=webhookd.istio-system.svc,O=webhookd" */
    char serial[80];   /* hex */
    time_t not_before;
    time_t not_after;
    int chain_len; /* certificates after the leaf */
} wh_certs_info;

/* Build a server SSL_CTX from PEM text: the leaf certificate followed by its
 * chain, and the private key (EC, RSA, Ed25519; PKCS#1/SEC1/PKCS#8, never
 * encrypted).  TLS >= 1.2, server cipher preference, ECDHE AEAD suites only
 * for TLS 1.2, no renegotiation.  Fails when the key does not match.
 * *out is a new reference (SSL_CTX_free).  `info` may be NULL. */
wh_code wh_certs_ctx_from_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len, SSL_CTX **out,
                              wh_certs_info *info, wh_err *err);

/* The same from two files (read whole, then parsed: a half-written pair is
 * an error, never a half-loaded context). */
wh_code wh_certs_ctx_from_files(const char *cert_file, const char *key_file, SSL_CTX **out, wh_certs_info *info,
                                wh_err *err);

/* Generate a self-signed ECDSA P-256 certificate valid for `days` whose SANs
 * are `names` (DNS names, or IPv4/IPv6 literals which become IP SANs; the
 * first one is also the CN).  Appends PEM text to cert_pem and key_pem. */
wh_code wh_certs_generate_self_signed(const char *const *names, size_t nnames, int days, wh_buf *cert_pem,
                                      wh_buf *key_pem, wh_err *err);

/* Client certificates (--client-ca-file): make `ctx` request, never
 * require, a client certificate and verify it against the CA certificates
 * of the PEM bundle `pem` (all of them trusted; at least one).  The
 * handshake goes on whatever the outcome, so that the server decides per
 * path (server/wh_server_h2o.c reads SSL_get_verify_result): the kubelet's HTTPS probes present no
 * certificate.  Also sends the CAs' names in the CertificateRequest, so that
 * a client with several certificates (Go's crypto/tls) picks the right one,
 * and ties session resumption to this bundle.  *count: the certificates read. */
wh_code wh_certs_ctx_set_client_ca(SSL_CTX *ctx, const char *pem, size_t len, int *count, wh_err *err);

/* Write `len` bytes to `path` atomically: a temporary file beside it made
 * by mkstemp (O_CREAT|O_EXCL: never follows a symlink, never reuses a name,
 * mode 0600 from the start), chmod'ed to `mode`, written, fsync'ed, then
 * renamed over `path` (a symlink at `path` is replaced, not followed).  On
 * failure nothing is left behind and `path` is untouched. */
wh_code wh_certs_write_file(const char *path, const void *data, size_t len, mode_t mode, wh_err *err);

/* A cheap fingerprint of a file pair (device, inode, size, mtime, ctime of
 * both, following symlinks as Kubernetes secret volumes need). */
typedef struct wh_certs_stamp {
    struct stat cert, key;
    int cert_ok, key_ok;
} wh_certs_stamp;

void wh_certs_stamp_read(wh_certs_stamp *stamp, const char *cert_file, const char *key_file);
/* 1 when the two stamps describe the same files and contents. */
int wh_certs_stamp_equal(const wh_certs_stamp *a, const wh_certs_stamp *b);

#endif
