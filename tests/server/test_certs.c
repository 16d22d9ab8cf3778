/*
 * test_certs.c - the serving certificate: self-signed generation (names,
 * key type), loading (chain, key mismatch, garbage, encrypted keys), the TLS
 * policy of every context, and change detection on the files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wh_certs.h"

static void generate(const char *const *names, size_t n, wh_buf *cert, wh_buf *key)
{
    wh_err err;
    wh_err_clear(&err);
    if (wh_certs_generate_self_signed(names, n, 30, cert, key, &err) != WH_OK)
        fail_msg("generate: %s", wh_err_msg(&err));
}

static X509 *parse_cert(const wh_buf *pem)
{
    BIO *bio = BIO_new_mem_buf(pem->data, (int)pem->len);
    X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    assert_non_null(x);
    return x;
}

static void test_self_signed(void **state)
{
    const char *names[] = {"webhookd.istio-system.svc", "localhost", "127.0.0.1", "::1"};
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_certs_info info;
    SSL_CTX *ctx = NULL;
    X509 *x;
    EVP_PKEY *pub;

    generate(names, 4, &cert, &key);
    x = parse_cert(&cert);
    assert_int_equal(X509_check_host(x, "webhookd.istio-system.svc", 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(x, "localhost", 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(x, "other.svc", 0, 0, NULL), 0);
    assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "::1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "10.0.0.1", 0), 0);
    pub = X509_get0_pubkey(x);
    assert_true(EVP_PKEY_is_a(pub, "EC"));
    assert_int_equal(EVP_PKEY_get_bits(pub), 256);
    assert_int_equal(X509_check_ca(x) > 0, 1);
    assert_int_equal(X509_verify(x, pub), 1); /* self-signed */
    X509_free(x);

    assert_int_equal(wh_certs_ctx_from_pem(cert.data, cert.len, key.data, key.len, &ctx, &info, NULL), WH_OK);
    assert_non_null(strstr(info.subject, "CN=webhookd.istio-system.svc"));
    assert_true(info.not_after - info.not_before > 29 * 86400);
    assert_int_equal(info.chain_len, 0);
    /* The TLS policy. */
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
    assert_true(SSL_CTX_get_options(ctx) & SSL_OP_NO_RENEGOTIATION);
    assert_true(SSL_CTX_get_options(ctx) & SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_free(ctx);
    wh_buf_free(&cert);
    wh_buf_free(&key);
}

static void test_bad_names(void **state)
{
    const char *bad[][1] = {{"a,b"}, {"has space"}, {""}, {"DNS:x"}};
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wh_err err;
        assert_int_equal(wh_certs_generate_self_signed(bad[i], 1, 30, &cert, &key, &err), WH_E_INVALID);
        assert_non_null(strstr(err.msg, "neither a DNS name nor an IP"));
    }
    assert_int_equal(wh_certs_generate_self_signed(bad[0], 0, 30, &cert, &key, NULL), WH_E_INVALID);
    assert_int_equal(cert.len + key.len, 0);
}

static void test_mismatch_and_garbage(void **state)
{
    const char *a[] = {"a.example"}, *b[] = {"b.example"};
    wh_buf ca = WH_BUF_INIT, ka = WH_BUF_INIT, cb = WH_BUF_INIT, kb = WH_BUF_INIT, chain = WH_BUF_INIT;
    wh_certs_info info;
    SSL_CTX *ctx = (SSL_CTX *)1;
    wh_err err;

    generate(a, 1, &ca, &ka);
    generate(b, 1, &cb, &kb);
    assert_int_equal(wh_certs_ctx_from_pem(ca.data, ca.len, kb.data, kb.len, &ctx, NULL, &err), WH_E_TLS);
    assert_null(ctx);
    assert_non_null(strstr(err.msg, "does not match"));
    assert_int_equal(wh_certs_ctx_from_pem("junk", 4, ka.data, ka.len, &ctx, NULL, &err), WH_E_PARSE);
    assert_non_null(strstr(err.msg, "no PEM certificate"));
    assert_int_equal(wh_certs_ctx_from_pem(ca.data, ca.len, "junk", 4, &ctx, NULL, &err), WH_E_PARSE);
    assert_non_null(strstr(err.msg, "private key"));
    /* A key file holding a certificate is not a key. */
    assert_int_equal(wh_certs_ctx_from_pem(ca.data, ca.len, ca.data, ca.len, &ctx, NULL, &err), WH_E_PARSE);

    /* Leaf + one more certificate: a chain of one. */
    wh_buf_append(&chain, ca.data, ca.len);
    wh_buf_append(&chain, cb.data, cb.len);
    assert_int_equal(wh_certs_ctx_from_pem(chain.data, chain.len, ka.data, ka.len, &ctx, &info, NULL), WH_OK);
    assert_int_equal(info.chain_len, 1);
    SSL_CTX_free(ctx);
    wh_buf_free(&ca), wh_buf_free(&ka), wh_buf_free(&cb), wh_buf_free(&kb), wh_buf_free(&chain);
}

static void test_encrypted_key_refused(void **state)
{
    const char *n[] = {"enc.example"};
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    BIO *in, *out = BIO_new(BIO_s_mem());
    EVP_PKEY *pkey;
    char *enc;
    long len;
    SSL_CTX *ctx;
    wh_err err;

    generate(n, 1, &cert, &key);
    in = BIO_new_mem_buf(key.data, (int)key.len);
    pkey = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
    assert_non_null(pkey);
    assert_int_equal(PEM_write_bio_PKCS8PrivateKey(out, pkey, EVP_aes_128_cbc(), "pw", 2, NULL, NULL), 1);
    len = BIO_get_mem_data(out, &enc);
    /* Must fail without prompting on a terminal. */
    assert_int_equal(wh_certs_ctx_from_pem(cert.data, cert.len, enc, (size_t)len, &ctx, NULL, &err), WH_E_PARSE);
    assert_non_null(strstr(err.msg, "encrypted keys are not supported"));
    EVP_PKEY_free(pkey);
    BIO_free(in);
    BIO_free(out);
    wh_buf_free(&cert);
    wh_buf_free(&key);
}

static void write_file(const char *path, const wh_buf *b)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    fclose(f);
}

static void test_files_and_stamp(void **state)
{
    const char *n[] = {"files.example"};
    char dir[] = "/tmp/wh-certs-XXXXXX", cpath[64], kpath[64], tmp[64];
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_certs_stamp s1, s2;
    wh_certs_info info;
    SSL_CTX *ctx;
    wh_err err;

    assert_non_null(mkdtemp(dir));
    snprintf(cpath, sizeof(cpath), "%s/tls.crt", dir);
    snprintf(kpath, sizeof(kpath), "%s/tls.key", dir);
    snprintf(tmp, sizeof(tmp), "%s/tls.crt.new", dir);
    assert_int_equal(wh_certs_ctx_from_files(cpath, kpath, &ctx, NULL, &err), WH_E_NOTFOUND);
    assert_non_null(strstr(err.msg, cpath));

    generate(n, 1, &cert, &key);
    write_file(cpath, &cert);
    write_file(kpath, &key);
    assert_int_equal(wh_certs_ctx_from_files(cpath, kpath, &ctx, &info, &err), WH_OK);
    assert_non_null(strstr(info.subject, "files.example"));
    SSL_CTX_free(ctx);

    wh_certs_stamp_read(&s1, cpath, kpath);
    wh_certs_stamp_read(&s2, cpath, kpath);
    assert_true(wh_certs_stamp_equal(&s1, &s2));
    /* Replacing the file by rename (what Kubernetes volumes do) changes it. */
    write_file(tmp, &cert);
    assert_int_equal(rename(tmp, cpath), 0);
    wh_certs_stamp_read(&s2, cpath, kpath);
    assert_false(wh_certs_stamp_equal(&s1, &s2));
    /* So does deleting it. */
    unlink(kpath);
    wh_certs_stamp_read(&s1, cpath, kpath);
    assert_false(wh_certs_stamp_equal(&s1, &s2));
    assert_int_equal(wh_certs_ctx_from_files(cpath, kpath, &ctx, NULL, &err), WH_E_NOTFOUND);

    unlink(cpath);
    rmdir(dir);
    wh_buf_free(&cert);
    wh_buf_free(&key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_signed),          cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_mismatch_and_garbage), cmocka_unit_test(test_encrypted_key_refused),
        cmocka_unit_test(test_files_and_stamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
