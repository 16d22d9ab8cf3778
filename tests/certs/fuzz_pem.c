/*
 * fuzz_pem.c - libFuzzer target for the PEM text webhookd loads: the
 * serving pair (--tls-cert-file/--tls-key-file, a Secret's tls.crt/tls.key;
 * certs/wh_certs.c: wh_certs_ctx_from_pem), the client CA bundle
 * (--client-ca-file: wh_certs_ctx_set_client_ca) and the caBundle it
 * patches into webhook configurations (certs/wh_certs_cabundle.c:
 * wh_certs_check_ca_pem).
 *
 * Input: the certificate PEM, a NUL byte, the key PEM (no NUL: the whole
 * input is both).  Invariants: every refusal says why; a loaded pair
 * describes its leaf; a bundle the caBundle check accepts is one the client
 * CA loader accepts too, with at least one certificate.
 */
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_certs.h"
#include "wh_certs_cabundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(const wh_err *err)
{
    if (wh_err_msg(err)[0] == '\0')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    SSL_CTX *client_ctx;
    const char *text = (const char *)data, *nul = memchr(data, '\0', size);
    size_t cert_len = nul != NULL ? (size_t)(nul - text) : size;
    const char *key = nul != NULL ? nul + 1 : text;
    size_t key_len = nul != NULL ? size - cert_len - 1 : size;
    SSL_CTX *ctx = NULL;
    wh_certs_info info;
    wh_err err = {0};
    int count = 0;

    if (wh_certs_ctx_from_pem(text, cert_len, key, key_len, &ctx, &info, &err) == WH_OK) {
        if (ctx == NULL || memchr(info.subject, '\0', sizeof(info.subject)) == NULL || info.chain_len < 0)
            abort();
        SSL_CTX_free(ctx);
    } else {
        refused(&err);
    }

    if ((client_ctx = SSL_CTX_new(TLS_server_method())) == NULL)
        abort();
    memset(&err, 0, sizeof(err));
    int ca_ok = wh_certs_check_ca_pem(text, cert_len, &err) == WH_OK;
    if (!ca_ok)
        refused(&err);
    memset(&err, 0, sizeof(err));
    if (wh_certs_ctx_set_client_ca(client_ctx, text, cert_len, &count, &err) == WH_OK) {
        if (count < 1)
            abort();
    } else {
        refused(&err);
        if (ca_ok)
            abort(); /* a caBundle we would patch in is one we could not trust ourselves */
    }
    SSL_CTX_free(client_ctx);
    return 0;
}
