/*
 * wh_certs.c - serving certificate loading, TLS policy and self-signed
 * generation (see wh_certs.h).
 *
 * The TLS policy lives here, in one function, so that the first context and
 * every reloaded one are configured identically.
 */
#include "wh_alloc.h"
#include "wh_certs.h"

#include "wh_alloc.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* TLS 1.2 suites: ECDHE + AEAD only (what Go, i.e. the kube-apiserver, offers
 * first).  TLS 1.3 suites stay OpenSSL's defaults. */
#define TLS12_CIPHERS                                                                                                  \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"                         \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/* Record OpenSSL's most recent error after `what`, and clear its queue. */
static wh_code tls_error(wh_err *err, wh_code code, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    char detail[256];

    if (e != 0) {
        ERR_error_string_n(e, detail, sizeof(detail));
        wh_err_set(err, code, "%s: %s", what, detail);
    } else {
        wh_err_set(err, code, "%s", what);
    }
    ERR_clear_error();
    return code;
}

/* Never prompt on a terminal for a passphrase: encrypted keys are refused. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

static time_t asn1_to_time(const ASN1_TIME *t)
{
    struct tm tm;

    if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return timegm(&tm);
}

static void describe(X509 *leaf, int chain_len, wh_certs_info *info)
{
    const ASN1_INTEGER *serial = X509_get0_serialNumber(leaf);
    BIGNUM *bn = ASN1_INTEGER_to_BN(serial, NULL);
    char *hex = bn != NULL ? BN_bn2hex(bn) : NULL;

    BIO *bio = BIO_new(BIO_s_mem());
    char *text;
    long n;

    memset(info, 0, sizeof(*info));
    if (bio != NULL && X509_NAME_print_ex(bio, X509_get_subject_name(leaf), 0, XN_FLAG_RFC2253) >= 0 &&
        (n = BIO_get_mem_data(bio, &text)) > 0)
        snprintf(info->subject, sizeof(info->subject), "%.*s", (int)n, text);
    BIO_free(bio);
    snprintf(info->serial, sizeof(info->serial), "%s", hex != NULL ? hex : "");
    info->not_before = asn1_to_time(X509_get0_notBefore(leaf));
    info->not_after = asn1_to_time(X509_get0_notAfter(leaf));
    info->chain_len = chain_len;
    OPENSSL_free(hex);
    BN_free(bn);
}

wh_code wh_certs_ctx_from_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len, SSL_CTX **out,
                              wh_certs_info *info, wh_err *err)
{
    SSL_CTX *ctx = NULL;
    BIO *bio = NULL;
    X509 *leaf = NULL, *extra = NULL;
    EVP_PKEY *key = NULL;
    int chain_len = 0;
    wh_code rc = WH_OK;

    *out = NULL;
    ERR_clear_error();
    if (cert_len > INT32_MAX || key_len > INT32_MAX) {
        rc = wh_err_set(err, WH_E_LIMIT, "certificate or key too large");
        goto out;
    }
    if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
        rc = tls_error(err, WH_E_TLS, "cannot create a TLS context");
        goto out;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    if (SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1) {
        rc = tls_error(err, WH_E_TLS, "cannot set the TLS 1.2 cipher list");
        goto out;
    }

    /* The leaf, then any number of chain certificates. */
    if ((bio = BIO_new_mem_buf(cert_pem, (int)cert_len)) == NULL)
        wh_oom(sizeof(BIO *)); /* OpenSSL's own malloc failed: the same policy (wh_alloc.h) */
    if ((leaf = PEM_read_bio_X509(bio, NULL, no_password, NULL)) == NULL) {
        rc = tls_error(err, WH_E_PARSE, "no PEM certificate found in the certificate file");
        goto out;
    }
    if (SSL_CTX_use_certificate(ctx, leaf) != 1) {
        rc = tls_error(err, WH_E_TLS, "the certificate was refused");
        goto out;
    }
    while ((extra = PEM_read_bio_X509(bio, NULL, no_password, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            rc = tls_error(err, WH_E_TLS, "a chain certificate was refused");
            goto out;
        }
        chain_len++;
    }
    ERR_clear_error(); /* the loop ends on "no start line", which is not an error */
    BIO_free(bio);

    if ((bio = BIO_new_mem_buf(key_pem, (int)key_len)) == NULL)
        wh_oom(sizeof(BIO *));
    if ((key = PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL)) == NULL) {
        rc = tls_error(err, WH_E_PARSE,
                       "no usable PEM private key found in the key file (encrypted keys are not supported)");
        goto out;
    }
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        rc = tls_error(err, WH_E_TLS, "the private key does not match the certificate");
        goto out;
    }
    if (info != NULL)
        describe(leaf, chain_len, info);
    *out = ctx;
    ctx = NULL;
out:
    BIO_free(bio);
    X509_free(leaf);
    EVP_PKEY_free(key);
    SSL_CTX_free(ctx);
    return rc;
}

wh_code wh_certs_ctx_from_files(const char *cert_file, const char *key_file, SSL_CTX **out, wh_certs_info *info,
                                wh_err *err)
{
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_code rc;

    *out = NULL;
    if ((rc = wh_buf_read_file(&cert, cert_file, WH_CERTS_MAX_FILE, err)) != WH_OK ||
        (rc = wh_buf_read_file(&key, key_file, WH_CERTS_MAX_FILE, err)) != WH_OK)
        goto out;
    if ((rc = wh_certs_ctx_from_pem(cert.data, cert.len, key.data, key.len, out, info, err)) != WH_OK)
        wh_err_prefix(err, "%s + %s", cert_file, key_file);
out:
    if (key.data != NULL)
        OPENSSL_cleanse(key.data, key.len);
    wh_buf_free(&cert);
    wh_buf_free(&key);
    return rc;
}

/* --- self-signed generation ---------------------------------------------- */

static wh_code add_ext(X509 *cert, int nid, const char *value, wh_err *err)
{
    X509V3_CTX v3;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
    if ((ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value)) == NULL)
        return tls_error(err, WH_E_INVALID, "cannot build a certificate extension");
    ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok == 1 ? WH_OK : tls_error(err, WH_E_TLS, "cannot add a certificate extension");
}

static int is_ip(const char *name)
{
    unsigned char addr[16];
    return inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
}

/* Letters, digits, '-', '.', and a leading "*." wildcard; 1-253 bytes. */
static int is_dns_name(const char *name)
{
    size_t i, len = strlen(name);

    if (len == 0 || len > 253)
        return 0;
    for (i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
              (c == '*' && i == 0 && name[1] == '.')))
            return 0;
    }
    return 1;
}

static int bio_to_buf(BIO *bio, wh_buf *out)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    if (n < 0)
        return 0;
    wh_buf_append(out, data, (size_t)n);
    return 1;
}

wh_code wh_certs_generate_self_signed(const char *const *names, size_t nnames, int days, wh_buf *cert_pem,
                                      wh_buf *key_pem, wh_err *err)
{
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    X509_NAME *subject;
    BIGNUM *serial = NULL;
    BIO *bio = NULL;
    wh_buf san = WH_BUF_INIT;
    size_t i;
    wh_code rc = WH_OK;

    ERR_clear_error();
    if (nnames == 0 || days <= 0) {
        rc = wh_err_set(err, WH_E_INVALID, "a self-signed certificate needs at least one name and a positive lifetime");
        goto out;
    }
    for (i = 0; i < nnames; i++) {
        if (!is_ip(names[i]) && !is_dns_name(names[i])) {
            rc = wh_err_set(err, WH_E_INVALID, "\"%s\" is neither a DNS name nor an IP address", names[i]);
            goto out;
        }
        wh_buf_printf(&san, "%s%s:%s", i == 0 ? "" : ",", is_ip(names[i]) ? "IP" : "DNS", names[i]);
    }
    if ((key = EVP_EC_gen("P-256")) == NULL) {
        rc = tls_error(err, WH_E_TLS, "cannot generate a P-256 key");
        goto out;
    }
    if ((cert = X509_new()) == NULL || (serial = BN_new()) == NULL)
        wh_oom(0);
    /* A random positive 127-bit serial, as RFC 5280 wants them unpredictable. */
    if (BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) == NULL) {
        rc = tls_error(err, WH_E_TLS, "cannot pick a serial number");
        goto out;
    }
    subject = X509_get_subject_name(cert);
    if (X509_set_version(cert, 2) != 1 ||
        X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8, (const unsigned char *)"webhookd", -1, -1, 0) != 1 ||
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, (const unsigned char *)names[0], -1, -1, 0) != 1 ||
        X509_set_issuer_name(cert, subject) != 1 || X509_gmtime_adj(X509_getm_notBefore(cert), -3600) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 86400) == NULL || X509_set_pubkey(cert, key) != 1) {
        rc = tls_error(err, WH_E_TLS, "cannot fill in the certificate");
        goto out;
    }
    /* Self-signed and used as its own CA bundle: CA:TRUE lets every client
     * (Go, OpenSSL, curl) accept it as a trust anchor. */
    if ((rc = add_ext(cert, NID_basic_constraints, "critical,CA:TRUE", err)) != WH_OK ||
        (rc = add_ext(cert, NID_key_usage, "critical,digitalSignature,keyCertSign", err)) != WH_OK ||
        (rc = add_ext(cert, NID_ext_key_usage, "serverAuth", err)) != WH_OK ||
        (rc = add_ext(cert, NID_subject_key_identifier, "hash", err)) != WH_OK ||
        (rc = add_ext(cert, NID_subject_alt_name, san.data, err)) != WH_OK)
        goto out;
    if (X509_sign(cert, key, EVP_sha256()) == 0) {
        rc = tls_error(err, WH_E_TLS, "cannot sign the certificate");
        goto out;
    }
    if ((bio = BIO_new(BIO_s_mem())) == NULL || PEM_write_bio_X509(bio, cert) != 1 || !bio_to_buf(bio, cert_pem)) {
        rc = tls_error(err, WH_E_TLS, "cannot encode the certificate");
        goto out;
    }
    BIO_free(bio);
    if ((bio = BIO_new(BIO_s_mem())) == NULL || PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) != 1 ||
        !bio_to_buf(bio, key_pem)) {
        rc = tls_error(err, WH_E_TLS, "cannot encode the key");
        goto out;
    }
out:
    BIO_free(bio);
    BN_free(serial);
    X509_free(cert);
    EVP_PKEY_free(key);
    wh_buf_free(&san);
    return rc;
}

/* --- client certificates ------------------------------------------------- */

/* Every verification outcome goes on to the end of the handshake:
 * SSL_get_verify_result() keeps the first failure, and the server decides
 * per path (the kubelet's probes present no certificate). */
static int continue_handshake(int preverified, X509_STORE_CTX *store)
{
    (void)preverified, (void)store;
    return 1;
}

wh_code wh_certs_ctx_set_client_ca(SSL_CTX *ctx, const char *pem, size_t len, int *count, wh_err *err)
{
    X509_STORE *store = NULL;
    STACK_OF(X509_NAME) *names = NULL;
    BIO *bio = NULL;
    X509 *cert;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned long e;
    int n = 0;
    wh_code rc = WH_OK;

    ERR_clear_error();
    if (len > INT32_MAX) {
        rc = wh_err_set(err, WH_E_LIMIT, "client CA bundle too large");
        goto out;
    }
    if ((store = X509_STORE_new()) == NULL || (names = sk_X509_NAME_new_null()) == NULL ||
        (bio = BIO_new_mem_buf(pem, (int)len)) == NULL)
        wh_oom(sizeof(void *)); /* OpenSSL's own malloc failed: the same policy (wh_alloc.h) */
    while ((cert = PEM_read_bio_X509(bio, NULL, no_password, NULL)) != NULL) {
        X509_NAME *name = X509_NAME_dup(X509_get_subject_name(cert));
        int added = X509_STORE_add_cert(store, cert);

        X509_free(cert);
        if (name == NULL || sk_X509_NAME_push(names, name) == 0) {
            X509_NAME_free(name);
            wh_oom(sizeof(void *));
        }
        if (added != 1 && ERR_GET_REASON(ERR_peek_last_error()) != X509_R_CERT_ALREADY_IN_HASH_TABLE) {
            rc = tls_error(err, WH_E_TLS, "a client CA certificate was refused");
            goto out;
        }
        ERR_clear_error();
        n++;
    }
    /* The loop ends on "no start line" at the end of the text; anything else
     * is a damaged certificate. */
    e = ERR_peek_last_error();
    if (e != 0 && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
        rc = tls_error(err, WH_E_PARSE, "cannot read a certificate of the client CA bundle");
        goto out;
    }
    ERR_clear_error();
    if (n == 0) {
        rc = wh_err_set(err, WH_E_PARSE, "no PEM certificate found in the client CA bundle");
        goto out;
    }
    /* Sessions are only resumed under the same client CAs (OpenSSL also
     * refuses resumption with SSL_VERIFY_PEER and no session id context). */
    SHA256((const unsigned char *)pem, len, digest);
    if (SSL_CTX_set_session_id_context(ctx, digest, sizeof(digest)) != 1) {
        rc = tls_error(err, WH_E_TLS, "cannot set the TLS session id context");
        goto out;
    }
    SSL_CTX_set_cert_store(ctx, store); /* the context owns both from here */
    store = NULL;
    SSL_CTX_set_client_CA_list(ctx, names);
    names = NULL;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, continue_handshake);
    if (count != NULL)
        *count = n;
out:
    BIO_free(bio);
    X509_STORE_free(store);
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    return rc;
}

/* --- change detection ----------------------------------------------------- */

void wh_certs_stamp_read(wh_certs_stamp *stamp, const char *cert_file, const char *key_file)
{
    memset(stamp, 0, sizeof(*stamp));
    stamp->cert_ok = stat(cert_file, &stamp->cert) == 0;
    stamp->key_ok = stat(key_file, &stamp->key) == 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int wh_certs_stamp_equal(const wh_certs_stamp *a, const wh_certs_stamp *b)
{
    return a->cert_ok == b->cert_ok && a->key_ok == b->key_ok && (!a->cert_ok || same_file(&a->cert, &b->cert)) &&
           (!a->key_ok || same_file(&a->key, &b->key));
}

/* --- files ---------------------------------------------------------------- */

wh_code wh_certs_write_file(const char *path, const void *data, size_t len, mode_t mode, wh_err *err)
{
    size_t plen = strlen(path), done = 0;
    char *tmp = wh_malloc(plen + sizeof(".XXXXXX"));
    int fd = -1;
    wh_code rc = WH_OK;

    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".XXXXXX", sizeof(".XXXXXX"));
    if ((fd = mkstemp(tmp)) == -1) {
        rc = wh_err_set(err, WH_E_IO, "cannot create a temporary file beside %s: %s", path, strerror(errno));
        goto out;
    }
    if (fchmod(fd, mode) != 0)
        goto fail;
    while (done < len) {
        ssize_t n = write(fd, (const char *)data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto fail;
        done += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = wh_err_set(err, WH_E_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
    goto out;
fail:
    rc = wh_err_set(err, WH_E_IO, "cannot write %s: %s", tmp, strerror(errno));
    if (fd != -1)
        close(fd);
    unlink(tmp);
out:
    free(tmp);
    return rc;
}
