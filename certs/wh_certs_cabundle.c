/*
 * wh_certs_cabundle.c - caBundle patching (see wh_certs_cabundle.h).
 *
 * A read-modify-write per configuration (wh_kube_update_retry) rather than a
 * JSON patch by index: webhooks can be added or reordered between our read
 * and our write, and a conflict then simply means "read again".
 */
#include "wh_certs_cabundle.h"

#include "wh_alloc.h"
#include "wh_certs.h"
#include "wh_go.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIELD_MANAGER "webhookd"

wh_code wh_certs_check_ca_pem(const char *ca_pem, size_t len, wh_err *err)
{
    BIO *bio = NULL;
    X509 *x = NULL;
    int n = 0;
    wh_code rc = WH_OK;

    if (len == 0 || len > (size_t)INT32_MAX)
        return wh_err_set(err, WH_E_INVALID, "the CA bundle is empty");
    if ((bio = BIO_new_mem_buf(ca_pem, (int)len)) == NULL)
        wh_oom(sizeof(BIO *)); /* OpenSSL's own malloc failed: the same policy (wh_alloc.h) */
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        n++;
        X509_free(x);
    }
    /* The loop ends with "no start line" at the end of the input; anything
     * else means a damaged certificate. */
    unsigned long e = ERR_peek_last_error();
    if (n == 0)
        rc = wh_err_set(err, WH_E_PARSE, "the CA bundle holds no PEM certificate");
    else if (e != 0 && ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
        rc = wh_err_set(err, WH_E_PARSE, "the CA bundle holds a damaged certificate after %d good one(s)", n);
    ERR_clear_error();
    BIO_free(bio);
    return rc;
}

typedef struct patch_ctx {
    const wh_certs_ca_targets *targets;
    const char *b64;
    int updated, matched;
} patch_ctx;

static int service_selected(const wh_certs_ca_targets *t, const json_t *client_config)
{
    const json_t *svc = json_object_get(client_config, "service");
    const char *ns, *name;

    if (t->service_name == NULL || t->service_name[0] == '\0')
        return 1;
    if (!json_is_object(svc))
        return 0;
    name = json_string_value(json_object_get(svc, "name"));
    ns = json_string_value(json_object_get(svc, "namespace"));
    return name != NULL && strcmp(name, t->service_name) == 0 &&
           (t->service_namespace == NULL || t->service_namespace[0] == '\0' ||
            (ns != NULL && strcmp(ns, t->service_namespace) == 0));
}

static wh_code set_bundle(json_t *obj, void *data, int *unchanged, wh_err *err)
{
    patch_ctx *p = data;
    json_t *webhooks = json_object_get(obj, "webhooks"), *wh;
    size_t i;

    p->updated = p->matched = 0;
    json_array_foreach(webhooks, i, wh)
    {
        json_t *cc = json_object_get(wh, "clientConfig");
        if (!json_is_object(cc) || !service_selected(p->targets, cc))
            continue;
        p->matched++;
        const char *cur = json_string_value(json_object_get(cc, "caBundle"));
        if (cur != NULL && strcmp(cur, p->b64) == 0)
            continue;
        json_object_set_new(cc, "caBundle", json_string(p->b64)); /* base64: ASCII */
        p->updated++;
    }
    *unchanged = p->updated == 0;
    return WH_OK;
}

static wh_code patch_one(wh_kube_client *c, const wh_kube_resource *r, const char *name, patch_ctx *p, wh_buf *report,
                         wh_certs_patch_stats *stats, wh_err *err)
{
    wh_code rc = wh_kube_update_retry(c, r, NULL, name, set_bundle, p, FIELD_MANAGER, NULL, err);
    char kind[64];
    size_t i;

    if (rc == WH_OK) {
        stats->configurations++;
        stats->written += p->updated != 0;
        stats->webhooks += p->updated;
    }

    for (i = 0; r->kind[i] != '\0' && i + 1 < sizeof(kind); i++)
        kind[i] = (char)(r->kind[i] >= 'A' && r->kind[i] <= 'Z' ? r->kind[i] - 'A' + 'a' : r->kind[i]);
    kind[i] = '\0';
    if (rc != WH_OK) {
        wh_err_prefix(err, "%s/%s", kind, name);
        if (report != NULL)
            wh_buf_printf(report, "%s/%s: %s\n", kind, name, wh_err_msg(err));
        return rc;
    }
    if (report == NULL)
        return WH_OK;
    if (p->matched == 0) {
        wh_buf_printf(report, "%s/%s: no webhook calls the selected service\n", kind, name);
        return WH_OK;
    }
    if (p->updated == 0) {
        wh_buf_printf(report, "%s/%s: up to date\n", kind, name);
        return WH_OK;
    }
    wh_buf_printf(report, "%s/%s: %d webhook%s updated\n", kind, name, p->updated, p->updated == 1 ? "" : "s");
    return WH_OK;
}

/* Names already patched, so a configuration named and also selected is done once. */
static int seen(json_t *done, const wh_kube_resource *r, const char *name)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", r->kind, name);
    if (json_object_get(done, key) != NULL)
        return 1;
    json_object_set_new(done, key, json_true());
    return 0;
}

wh_code wh_certs_patch_ca_bundle(wh_kube_client *client, const wh_certs_ca_targets *targets, const char *ca_pem,
                                 size_t len, wh_buf *report, wh_err *err)
{
    return wh_certs_patch_ca_bundle_stats(client, targets, ca_pem, len, report, NULL, err);
}

wh_code wh_certs_patch_ca_bundle_stats(wh_kube_client *client, const wh_certs_ca_targets *targets, const char *ca_pem,
                                       size_t len, wh_buf *report, wh_certs_patch_stats *stats, wh_err *err)
{
    wh_certs_patch_stats ignored;
    static const wh_kube_resource *const kinds[2] = {&wh_kube_mutating_webhooks, &wh_kube_validating_webhooks};
    patch_ctx p = {targets, NULL, 0, 0};
    json_t *done = NULL, *items = NULL;
    wh_buf b64 = WH_BUF_INIT;
    wh_code rc, first = WH_OK;
    wh_err one, first_err;

    if (stats == NULL)
        stats = &ignored;
    memset(stats, 0, sizeof(*stats));
    wh_err_clear(&first_err);
    if ((rc = wh_certs_check_ca_pem(ca_pem, len, err)) != WH_OK)
        return rc;
    done = json_object();
    wh_go_base64(&b64, ca_pem, len);
    p.b64 = b64.data;
    for (int k = 0; k < 2; k++) {
        const char *const *names = k == 0 ? targets->mutating : targets->validating;
        for (size_t i = 0; names != NULL && names[i] != NULL; i++) {
            if (seen(done, kinds[k], names[i]))
                continue;
            wh_err_clear(&one);
            if ((rc = patch_one(client, kinds[k], names[i], &p, report, stats, &one)) != WH_OK && first == WH_OK)
                first = rc, first_err = one;
        }
        if (targets->selector == NULL || targets->selector[0] == '\0')
            continue;
        json_decref(items);
        items = NULL;
        wh_err_clear(&one);
        if ((rc = wh_kube_list(client, kinds[k], NULL, targets->selector, &items, &one)) != WH_OK) {
            if (first == WH_OK)
                first = rc, first_err = one;
            continue;
        }
        size_t j;
        json_t *item;
        json_array_foreach(items, j, item)
        {
            const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
            if (name == NULL || seen(done, kinds[k], name))
                continue;
            wh_err_clear(&one);
            if ((rc = patch_one(client, kinds[k], name, &p, report, stats, &one)) != WH_OK && first == WH_OK)
                first = rc, first_err = one;
        }
    }
    rc = first;
    if (rc != WH_OK && err != NULL)
        *err = first_err;
    wh_buf_free(&b64);
    json_decref(done);
    json_decref(items);
    return rc;
}

/* --- which CA to publish ----------------------------------------------------- */

/* The trust anchor of a serving chain (PEM, leaf first): its last
 * certificate -- the root when the chain carries it, else the topmost
 * intermediate (Go's verifier, i.e. the API server's, accepts any
 * certificate of the bundle as an anchor); a lone self-signed leaf is its
 * own CA.  Appends that certificate's PEM to `out`. */
static wh_code chain_anchor_pem(const char *chain_pem, size_t len, wh_buf *out, wh_err *err)
{
    BIO *in = NULL, *pem = NULL;
    X509 *x, *last = NULL;
    char *data;
    long n;
    wh_code rc = WH_OK;

    if (len > (size_t)INT32_MAX)
        return wh_err_set(err, WH_E_LIMIT, "the certificate chain is too large");
    if ((in = BIO_new_mem_buf(chain_pem, (int)len)) == NULL || (pem = BIO_new(BIO_s_mem())) == NULL)
        wh_oom(sizeof(BIO *));
    while ((x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL) {
        X509_free(last);
        last = x;
    }
    ERR_clear_error(); /* the loop ends on "no start line" */
    if (last == NULL) {
        rc = wh_err_set(err, WH_E_PARSE, "the certificate chain holds no PEM certificate");
        goto out;
    }
    if (PEM_write_bio_X509(pem, last) != 1 || (n = BIO_get_mem_data(pem, &data)) <= 0) {
        ERR_clear_error();
        rc = wh_err_set(err, WH_E_TLS, "cannot encode the chain's anchor certificate");
        goto out;
    }
    wh_buf_append(out, data, (size_t)n);
out:
    X509_free(last);
    BIO_free(in);
    BIO_free(pem);
    return rc;
}

void wh_certs_ca_bundle_path(const char *ca_file, const char *cert_file, wh_buf *out)
{
    const char *slash;
    size_t before = out->len;

    if (ca_file != NULL && ca_file[0] != '\0') {
        wh_buf_puts(out, ca_file);
        return;
    }
    if (cert_file == NULL || cert_file[0] == '\0')
        return;
    slash = strrchr(cert_file, '/');
    if (slash != NULL)
        wh_buf_printf(out, "%.*sca.crt", (int)(slash - cert_file + 1), cert_file);
    else
        wh_buf_puts(out, "ca.crt");
    if (access(out->data + before, F_OK) != 0) {
        out->len = before; /* no ca.crt beside the certificate: the chain is used */
        out->data[before] = '\0';
    }
}

wh_code wh_certs_load_ca_bundle(const char *ca_file, const char *cert_file, wh_buf *out, wh_buf *source, wh_err *err)
{
    wh_buf path = WH_BUF_INIT, chain = WH_BUF_INIT;
    size_t before = out->len;
    wh_code rc;

    wh_certs_ca_bundle_path(ca_file, cert_file, &path);
    if (path.len != 0) {
        if ((rc = wh_buf_read_file(out, path.data, WH_CERTS_MAX_FILE, err)) != WH_OK ||
            (rc = wh_certs_check_ca_pem(out->data != NULL ? out->data + before : "", out->len - before, err)) !=
                WH_OK) {
            wh_err_prefix(err, "CA bundle %s", path.data);
            goto out;
        }
        wh_buf_puts(source, path.data);
        goto out;
    }
    if ((rc = wh_buf_read_file(&chain, cert_file, WH_CERTS_MAX_FILE, err)) != WH_OK ||
        (rc = chain_anchor_pem(chain.data, chain.len, out, err)) != WH_OK) {
        wh_err_prefix(err, "CA bundle from %s", cert_file);
        goto out;
    }
    wh_buf_printf(source, "the chain of %s", cert_file);
out:
    if (rc != WH_OK && out->data != NULL) {
        out->len = before;
        out->data[before] = '\0';
    }
    wh_buf_free(&path);
    wh_buf_free(&chain);
    return rc;
}
