/*
 * check.c - `webhookctl check`: is the cluster's Istio webhook setup healthy?
 * In the style of `linkerd check`: a list of named checks, each passed,
 * failed or warned about, with what is wrong and what to do.  It looks for
 * the failures users hit most (README.md, webhookctl check): webhooks calling Services
 * that are gone or have no endpoints, missing or stale caBundles, expiring
 * certificates, overlapping injectors (double injection), namespaces with
 * both injection labels, labels that no injector serves, dangling tags.
 */
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "wh_alloc.h"
#include "diag.h"
#include "inventory.h"
#include "tag_int.h"
#include "wh_buf.h"
#include "wh_certs_cabundle.h"
#include "wh_ctl.h"
#include "wh_go.h"
#include "wh_inject_cluster.h"
#include "wh_validate.h"

#define EXPIRY_WARN_DAYS 60
#define TLS_TIMEOUT_S 10

typedef enum { CK_OK, CK_FAIL, CK_WARN, CK_SKIP } result;
static const char *const result_names[] = {"success", "error", "warning", "skipped"};

typedef struct check_ctx {
    wh_kube_client *client;
    json_t *mwcs, *vwcs, *namespaces; /* lists */
    json_t *checks;                   /* output: [{name, result, messages}] */
    STACK_OF(X509) * serving;         /* leaf first, or NULL */
    const char *serving_from;         /* where it came from */
    const char *service_filter;       /* NS/NAME or NULL */
    const char *istio_ns;             /* istiod's namespace: its ConfigMaps are the revisions */
} check_ctx;

/* Add a check's outcome; messages (may be NULL) is stolen. */
static void add(check_ctx *c, const char *name, result r, json_t *messages)
{
    json_array_append_new(c->checks, json_pack("{s:s, s:s, s:o}", "name", name, "result", result_names[r], "messages",
                                               messages != NULL ? messages : json_array()));
}

static void msg(json_t *messages, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(json_t *messages, const char *fmt, ...)
{
    wh_buf b = WH_BUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    wh_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    /* the same sentence once, even when several entries share the problem */
    for (size_t i = 0; i < json_array_size(messages); i++)
        if (strcmp(json_string_value(json_array_get(messages, i)), b.data) == 0)
            goto out;
    json_array_append_new(messages, json_string(b.data));
out:
    wh_buf_free(&b);
}

static int has_entry(const json_t *cfg, int (*pred)(const json_t *))
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(cfg, "webhooks"), i, w) if (pred(w)) return 1;
    return 0;
}

/* Each Istio entry of both kinds: fn(ctx, kind, cfg, entry). */
typedef void (*entry_fn)(check_ctx *c, const char *kind, const json_t *cfg, const json_t *entry, void *arg);
static void each_entry(check_ctx *c, entry_fn fn, void *arg)
{
    size_t i, j;
    json_t *cfg, *w;

    json_array_foreach(c->mwcs, i, cfg)
        json_array_foreach(json_object_get(cfg, "webhooks"), j, w) if (diag_is_injector(w))
            fn(c, "MutatingWebhookConfiguration", cfg, w, arg);
    json_array_foreach(c->vwcs, i, cfg)
        json_array_foreach(json_object_get(cfg, "webhooks"), j, w) if (diag_is_validator(w))
            fn(c, "ValidatingWebhookConfiguration", cfg, w, arg);
}

static const json_t *entry_service(const json_t *entry)
{
    const json_t *s = json_object_get(json_object_get(entry, "clientConfig"), "service");
    return json_is_object(s) ? s : NULL;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s != NULL ? s : "";
}

/* ---- existence ------------------------------------------------------------------ */

/* One existence check: some configuration of `cfgs` has an entry `pred` accepts,
 * else `missing` with the message `why`. */
static void check_exists(check_ctx *c, const char *name, const json_t *cfgs, int (*pred)(const json_t *),
                         result missing, const char *why)
{
    int n = 0;
    size_t i;
    json_t *cfg, *m = json_array();

    json_array_foreach(cfgs, i, cfg) n += has_entry(cfg, pred);
    if (n == 0)
        msg(m, "%s", why);
    add(c, name, n > 0 ? CK_OK : missing, m);
}

static void check_exist(check_ctx *c)
{
    check_exists(c, "injector webhook configurations exist", c->mwcs, diag_is_injector, CK_FAIL,
                 "No MutatingWebhookConfiguration has an Istio injector webhook (entries named "
                 "*sidecar-injector.istio.io or calling /inject): no pod gets a sidecar. Install a control plane "
                 "revision (istiod or webhookd's chart).");
    check_exists(c, "validator webhook configurations exist", c->vwcs, diag_is_validator, CK_WARN,
                 "No ValidatingWebhookConfiguration validates Istio resources (entries named *validation.istio.io or "
                 "calling /validate): invalid configuration is accepted. Enable validation (webhookd chart value "
                 "validation.enabled, or istiod's validator).");
}

/* ---- Services and endpoints ----------------------------------------------------- */

typedef struct svc_arg {
    json_t *missing, *no_endpoints;
    json_t *seen; /* "ns/name" -> service object or null (absent) */
    int endpoints_unsupported, services;
} svc_arg;

static void svc_entry(check_ctx *c, const char *kind, const json_t *cfg, const json_t *entry, void *arg)
{
    svc_arg *a = arg;
    const json_t *s = entry_service(entry), *svc, *p;
    wh_buf key = WH_BUF_INIT;
    json_t *obj = NULL;
    wh_err err = {0};
    long port = json_integer_value(json_object_get(s, "port"));
    size_t i;
    int found = 0;

    if (s == NULL)
        return;
    if (port == 0)
        port = 443;
    wh_buf_printf(&key, "%s/%s", str(s, "namespace"), str(s, "name"));
    if ((svc = json_object_get(a->seen, key.data)) == NULL) {
        wh_code rc = wh_kube_get(c->client, &wh_kube_services, str(s, "namespace"), str(s, "name"), &obj, &err);
        if (rc != WH_OK && rc != WH_E_NOTFOUND) {
            msg(a->missing, "Cannot read Service %s: %s", key.data, wh_err_msg(&err));
            goto out;
        }
        json_object_set_new(a->seen, key.data, obj != NULL ? obj : json_null());
        svc = json_object_get(a->seen, key.data);
        a->services++;
    }
    if (json_is_null(svc)) {
        msg(a->missing,
            "%s %s calls Service %s, which does not exist: every request it selects fails. Reinstall that "
            "control plane revision, or delete the stale configuration (kubectl delete %s %s).",
            kind, diag_name(cfg), key.data,
            strcmp(kind, "MutatingWebhookConfiguration") == 0 ? "mutatingwebhookconfiguration"
                                                              : "validatingwebhookconfiguration",
            diag_name(cfg));
        goto out;
    }
    json_array_foreach(json_object_get(json_object_get(svc, "spec"), "ports"), i, p) found |=
        json_integer_value(json_object_get(p, "port")) == port;
    if (!found)
        msg(a->missing,
            "%s %s calls port %ld of Service %s, which has no such port. Fix the port in the "
            "webhook's clientConfig.service or in the Service.",
            kind, diag_name(cfg), port, key.data);
out:
    wh_buf_free(&key);
}

static void check_services(check_ctx *c)
{
    svc_arg a = {json_array(), json_array(), json_object(), 0, 0};
    const char *key;
    json_t *svc;

    each_entry(c, svc_entry, &a);
    add(c, "webhooks call existing Services", json_array_size(a.missing) ? CK_FAIL : CK_OK, a.missing);
    /* endpoints of the Services that exist */
    json_object_foreach(a.seen, key, svc)
    {
        wh_buf path = WH_BUF_INIT;
        json_t *ep = NULL, *subset;
        long http = 0;
        wh_err err = {0};
        size_t i;
        int ready = 0;
        const char *slash = strchr(key, '/');
        if (json_is_null(svc) || a.endpoints_unsupported)
            continue;
        wh_buf_printf(&path, "/api/v1/namespaces/%.*s/endpoints/%s", (int)(slash - key), key, slash + 1);
        wh_code rc = wh_kube_request(c->client, "GET", path.data, NULL, NULL, 0, &http, &ep, &err);
        if (rc == WH_E_NOTFOUND && json_object_get(json_object_get(ep, "details"), "name") == NULL) {
            a.endpoints_unsupported = 1; /* the resource itself is not served */
        } else if (rc == WH_E_NOTFOUND) {
            msg(a.no_endpoints,
                "Service %s has no Endpoints object: no pod backs it, so calls to its webhooks fail "
                "(no endpoints available). Check that its pods run (kubectl get pods -n %.*s).",
                key, (int)(slash - key), key);
        } else if (rc != WH_OK) {
            msg(a.no_endpoints, "Cannot read the endpoints of Service %s: %s", key, wh_err_msg(&err));
        } else {
            json_array_foreach(json_object_get(ep, "subsets"), i, subset) ready +=
                json_array_size(json_object_get(subset, "addresses")) > 0;
            if (!ready)
                msg(a.no_endpoints,
                    "Service %s has no ready endpoints: its webhooks cannot be reached (no endpoints "
                    "available). Check that its pods run and are ready (kubectl get pods -n %.*s).",
                    key, (int)(slash - key), key);
        }
        json_decref(ep);
        wh_buf_free(&path);
    }
    if (a.endpoints_unsupported)
        add(c, "webhook Services have ready endpoints", CK_SKIP,
            json_pack("[s]", "The API server does not serve Endpoints; not checked."));
    else
        add(c, "webhook Services have ready endpoints", json_array_size(a.no_endpoints) ? CK_FAIL : CK_OK,
            json_incref(a.no_endpoints));
    json_decref(a.no_endpoints);
    json_decref(a.seen);
}

/* ---- certificates ----------------------------------------------------------------- */

static STACK_OF(X509) * pem_certs(const char *pem, size_t len)
{
    STACK_OF(X509) *sk = sk_X509_new_null();
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *x;

    if (sk == NULL || bio == NULL) {
        sk_X509_free(sk);
        BIO_free(bio);
        return NULL;
    }
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
        if (!sk_X509_push(sk, x))
            X509_free(x);
    ERR_clear_error();
    BIO_free(bio);
    return sk;
}

/* Days from now to the certificate's notAfter (negative once expired). */
static int days_left(const X509 *x)
{
    int days = 0, secs = 0;
    if (!ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(x)))
        return -1;
    return days - (days <= 0 && secs < 0 ? 1 : 0);
}

static void subject(const X509 *x, char *buf, size_t n)
{
    X509_NAME_oneline(X509_get_subject_name(x), buf, (int)n);
}

typedef struct ca_arg {
    json_t *bad, *expiry, *verify;
    int bad_fail, expiry_fail, verified;
} ca_arg;

static const char *lower_kind(const char *kind)
{
    return strcmp(kind, "MutatingWebhookConfiguration") == 0 ? "mutating" : "validating";
}

static void ca_entry(check_ctx *c, const char *kind, const json_t *cfg, const json_t *entry, void *arg)
{
    ca_arg *a = arg;
    const char *b64 = json_string_value(json_object_get(json_object_get(entry, "clientConfig"), "caBundle"));
    const json_t *s = entry_service(entry);
    wh_buf pem = WH_BUF_INIT;
    STACK_OF(X509) *cas = NULL;
    X509_STORE *store = NULL;
    X509_STORE_CTX *sctx = NULL;
    wh_err err = {0};
    size_t len = b64 != NULL ? strlen(b64) : 0;
    int n, i;
    char name[256];

    (void)c;
    if (len == 0) {
        msg(a->bad,
            "%s %s has no caBundle: the API server cannot trust the webhook's certificate (x509: "
            "certificate signed by unknown authority). Put the serving CA there: webhookctl certs patch-ca-bundle "
            "--ca-file ca.crt --%s %s (or let cert-manager's cainjector do it).",
            kind, diag_name(cfg), lower_kind(kind), diag_name(cfg));
        a->bad_fail = 1;
        return;
    }
    n = wh_go_base64_decode(&pem, b64, len, 0) < 0 && pem.len > 0 ? (int)pem.len : 0;
    if (n <= 0 || wh_certs_check_ca_pem(pem.data, pem.len, &err) != WH_OK) {
        msg(a->bad,
            "%s %s: the caBundle is not valid: %s. Put the serving CA there: webhookctl certs "
            "patch-ca-bundle --ca-file ca.crt --%s %s.",
            kind, diag_name(cfg), n <= 0 ? "not base64" : wh_err_msg(&err), lower_kind(kind), diag_name(cfg));
        a->bad_fail = 1;
        goto out;
    }
    cas = pem_certs(pem.data, pem.len);
    for (i = 0; cas != NULL && i < sk_X509_num(cas); i++) {
        X509 *x = sk_X509_value(cas, i);
        int d = days_left(x);
        subject(x, name, sizeof(name));
        if (d < 0) {
            msg(a->expiry,
                "%s %s: the caBundle's certificate %s has expired: the webhook's certificate "
                "cannot be trusted. Renew the CA and patch the caBundle.",
                kind, diag_name(cfg), name);
            a->expiry_fail = 1;
        } else if (d < EXPIRY_WARN_DAYS) {
            msg(a->expiry,
                "%s %s: the caBundle's certificate %s expires in %d days. Renew the CA and "
                "patch the caBundle before then.",
                kind, diag_name(cfg), name, d);
        }
    }
    /* Does this caBundle verify the serving certificate? */
    if (c->serving == NULL || cas == NULL)
        goto out;
    if (c->service_filter != NULL) {
        wh_buf want = WH_BUF_INIT;
        int skip;
        wh_buf_printf(&want, "%s/%s", str(s, "namespace"), str(s, "name"));
        skip = s == NULL || strcmp(want.data, c->service_filter) != 0;
        wh_buf_free(&want);
        if (skip)
            goto out;
    }
    a->verified++;
    if ((store = X509_STORE_new()) == NULL || (sctx = X509_STORE_CTX_new()) == NULL)
        goto out;
    for (i = 0; i < sk_X509_num(cas); i++)
        X509_STORE_add_cert(store, sk_X509_value(cas, i));
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN); /* an intermediate in the bundle is a trust anchor */
    if (!X509_STORE_CTX_init(sctx, store, sk_X509_value(c->serving, 0), c->serving))
        goto out;
    X509_STORE_CTX_set_purpose(sctx, X509_PURPOSE_SSL_SERVER);
    if (X509_verify_cert(sctx) != 1) {
        subject(sk_X509_value(c->serving, 0), name, sizeof(name));
        msg(a->verify,
            "%s %s: its caBundle does not verify the serving certificate %s from %s (%s): the "
            "API server rejects the webhook (x509: certificate signed by unknown authority). Patch the "
            "caBundle with the CA that signed it: webhookctl certs patch-ca-bundle --ca-file ca.crt --%s %s.",
            kind, diag_name(cfg), name, c->serving_from, X509_verify_cert_error_string(X509_STORE_CTX_get_error(sctx)),
            lower_kind(kind), diag_name(cfg));
    } else if (s != NULL) {
        wh_buf host = WH_BUF_INIT;
        wh_buf_printf(&host, "%s.%s.svc", str(s, "name"), str(s, "namespace"));
        if (X509_check_host(sk_X509_value(c->serving, 0), host.data, host.len, 0, NULL) != 1)
            msg(a->verify,
                "%s %s: the serving certificate from %s is not valid for %s, the name the API "
                "server checks. Reissue it with that DNS name.",
                kind, diag_name(cfg), c->serving_from, host.data);
        wh_buf_free(&host);
    }
out:
    X509_STORE_CTX_free(sctx);
    X509_STORE_free(store);
    sk_X509_pop_free(cas, X509_free);
    wh_buf_free(&pem);
}

static void check_certs(check_ctx *c)
{
    ca_arg a = {json_array(), json_array(), json_array(), 0, 0, 0};
    json_t *m;

    each_entry(c, ca_entry, &a);
    add(c, "webhooks have a valid caBundle", a.bad_fail ? CK_FAIL : CK_OK, a.bad);
    add(c, "caBundle certificates are valid for at least 60 days",
        a.expiry_fail               ? CK_FAIL
        : json_array_size(a.expiry) ? CK_WARN
                                    : CK_OK,
        a.expiry);
    if (c->serving == NULL) {
        json_decref(a.verify);
        add(c, "caBundle verifies the serving certificate", CK_SKIP,
            json_pack("[s]", "Give --tls-cert-file or --server to verify the serving certificate."));
        add(c, "serving certificate is valid for at least 60 days", CK_SKIP, NULL);
        return;
    }
    if (a.verified == 0)
        msg(a.verify, "No webhook calls %s: nothing to verify the serving certificate against.",
            c->service_filter != NULL ? c->service_filter : "a Service");
    add(c, "caBundle verifies the serving certificate", json_array_size(a.verify) ? CK_FAIL : CK_OK, a.verify);
    m = json_array();
    {
        X509 *leaf = sk_X509_value(c->serving, 0);
        int d = days_left(leaf);
        char name[256];
        subject(leaf, name, sizeof(name));
        if (d < 0)
            msg(m,
                "The serving certificate %s from %s has expired: the API server rejects the webhook. Renew it "
                "(webhookctl certs generate, or cert-manager).",
                name, c->serving_from);
        else if (d < EXPIRY_WARN_DAYS)
            msg(m, "The serving certificate %s from %s expires in %d days. Renew it before then.", name,
                c->serving_from, d);
        add(c, "serving certificate is valid for at least 60 days",
            d < 0                  ? CK_FAIL
            : d < EXPIRY_WARN_DAYS ? CK_WARN
                                   : CK_OK,
            m);
    }
}

/* The certificate chain a TLS server presents (leaf first); NULL + err. */
static STACK_OF(X509) * fetch_chain(const char *server, wh_err *err)
{
    char host[256], port[16] = "443";
    const char *p = strstr(server, "://") != NULL ? strstr(server, "://") + 3 : server, *colon, *end;
    struct addrinfo hints = {0}, *ai = NULL, *it;
    struct timeval tv = {TLS_TIMEOUT_S, 0};
    SSL_CTX *ctx = NULL;
    SSL *ssl = NULL;
    STACK_OF(X509) *out = NULL, *peer;
    int fd = -1, r;

    end = p + strcspn(p, "/?");
    if (*p == '[') { /* [v6]:port */
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (close == NULL || (size_t)(close - p - 1) >= sizeof(host)) {
            wh_err_set(err, WH_E_INVALID, "invalid --server \"%s\"", server);
            return NULL;
        }
        snprintf(host, sizeof(host), "%.*s", (int)(close - p - 1), p + 1);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        snprintf(host, sizeof(host), "%.*s", (int)((colon != NULL ? colon : end) - p), p);
    }
    if (colon != NULL)
        snprintf(port, sizeof(port), "%.*s", (int)(end - colon - 1), colon + 1);
    if (host[0] == '\0' || port[0] == '\0') {
        wh_err_set(err, WH_E_INVALID, "invalid --server \"%s\" (want HOST:PORT)", server);
        return NULL;
    }
    hints.ai_socktype = SOCK_STREAM;
    if ((r = getaddrinfo(host, port, &hints, &ai)) != 0) {
        wh_err_set(err, WH_E_IO, "cannot resolve %s: %s", host, gai_strerror(r));
        return NULL;
    }
    for (it = ai; it != NULL; it = it->ai_next) {
        if ((fd = socket(it->ai_family, it->ai_socktype, it->ai_protocol)) < 0)
            continue;
        /* bounds connect() too on Linux, and every read/write of the handshake */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(fd, it->ai_addr, it->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        wh_err_set(err, WH_E_IO, "cannot connect to %s:%s", host, port);
        return NULL;
    }
    if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL || (ssl = SSL_new(ctx)) == NULL || !SSL_set_fd(ssl, fd)) {
        wh_err_set(err, WH_E_TLS, "cannot set up a TLS connection to %s:%s", host, port);
        goto out;
    }
    SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL); /* verified against each caBundle afterwards */
    SSL_set_tlsext_host_name(ssl, host);
    if (SSL_connect(ssl) != 1) {
        wh_err_set(err, WH_E_TLS, "TLS handshake with %s:%s failed", host, port);
        goto out;
    }
    if ((peer = SSL_get_peer_cert_chain(ssl)) == NULL || sk_X509_num(peer) == 0) {
        wh_err_set(err, WH_E_TLS, "%s:%s presented no certificate", host, port);
        goto out;
    }
    out = X509_chain_up_ref(peer);
out:
    ERR_clear_error();
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    return out;
}

/* ---- overlaps and labels ----------------------------------------------------------- */

static void check_overlaps(check_ctx *c)
{
    json_t *findings = json_array(), *cfg;
    wh_err err = {0};
    size_t i;

    json_array_foreach(c->mwcs, i, cfg)
    {
        if (!has_entry(cfg, diag_is_injector))
            continue;
        if (tag_analyze_overlaps(c->mwcs, diag_name(cfg), findings, &err) != WH_OK) {
            msg(findings, "Cannot analyse the overlaps: %s", wh_err_msg(&err));
            break;
        }
    }
    if (json_array_size(findings) > 0)
        json_array_append_new(findings,
                              json_string("Pods selected by two injectors get the sidecar twice. Keep one: remove the "
                                          "stale configuration (kubectl delete mutatingwebhookconfiguration NAME) or "
                                          "move the tag (webhookctl tag set TAG --revision REV --overwrite)."));
    add(c, "no overlapping injector webhooks", json_array_size(findings) ? CK_FAIL : CK_OK, findings);
}

/* Would any injector entry select an unlabelled pod of namespace `ns`? */
static int ns_served(check_ctx *c, const json_t *ns)
{
    json_t *none = json_object();
    int matches = 0;

    diag_injecting_revision(c->mwcs, json_object_get(json_object_get(ns, "metadata"), "labels"), none, NULL, &matches);
    json_decref(none);
    return matches > 0;
}

static void check_namespaces(check_ctx *c)
{
    json_t *both = json_array(), *unserved = json_array(), *ns;
    size_t i;

    json_array_foreach(c->namespaces, i, ns)
    {
        const char *inj = diag_label(ns, "istio-injection"), *rev = diag_label(ns, REV_LABEL), *name = diag_name(ns);
        if (inj != NULL && rev != NULL && strcmp(inj, "enabled") == 0)
            msg(both,
                "Namespace %s has both istio-injection=%s and istio.io/rev=%s: istio-injection wins, so the default "
                "revision injects its pods, not \"%s\". Keep one label: kubectl label namespace %s istio-injection- "
                "(or %s-).",
                name, inj, rev, rev, name, REV_LABEL);
        else if (inj != NULL && rev != NULL)
            msg(both,
                "Namespace %s has both istio-injection=%s and istio.io/rev=%s: istio-injection wins, so its pods are "
                "not injected at all. Keep one label: kubectl label namespace %s istio-injection- (or %s-).",
                name, inj, rev, name, REV_LABEL);
        if ((inj != NULL && strcmp(inj, "enabled") == 0) || (inj == NULL && rev != NULL)) {
            if (!ns_served(c, ns))
                msg(unserved,
                    "Namespace %s is labelled %s=%s but no injector webhook selects its pods: they get no sidecar. "
                    "%s",
                    name, inj != NULL ? "istio-injection" : REV_LABEL, inj != NULL ? inj : rev,
                    inj != NULL ? "Install the default revision or set the default tag (webhookctl tag set default "
                                  "--revision REV)."
                                : "Install that revision, point a tag of that name at one (webhookctl tag set NAME "
                                  "--revision REV), or relabel the namespace.");
        }
    }
    add(c, "namespaces carry one injection label", json_array_size(both) ? CK_WARN : CK_OK, both);
    add(c, "namespace injection labels are served by an injector", json_array_size(unserved) ? CK_WARN : CK_OK,
        unserved);
}

static void check_tags(check_ctx *c)
{
    json_t *m = json_array(), *cfg, *other;
    size_t i, j;

    json_array_foreach(c->mwcs, i, cfg)
    {
        const char *tag = diag_label(cfg, TAG_LABEL), *rev = diag_label(cfg, REV_LABEL);
        int found = 0;
        if (tag == NULL || !has_entry(cfg, diag_is_injector))
            continue;
        json_array_foreach(c->mwcs, j, other)
        {
            const char *orev = diag_label(other, REV_LABEL);
            if (diag_label(other, TAG_LABEL) == NULL && orev != NULL && rev != NULL && strcmp(orev, rev) == 0 &&
                has_entry(other, diag_is_injector))
                found = 1;
        }
        if (!found)
            msg(m,
                "Tag \"%s\" (MutatingWebhookConfiguration %s) points at revision \"%s\", which has no injector "
                "webhook (no MutatingWebhookConfiguration labelled istio.io/rev=%s without istio.io/tag): the tag is "
                "dangling. Move it (webhookctl tag set %s --revision REV --overwrite) or remove it (webhookctl tag "
                "remove %s).",
                tag, diag_name(cfg), rev != NULL ? rev : "", rev != NULL ? rev : "", tag, tag);
    }
    add(c, "revision tags point at installed revisions", json_array_size(m) ? CK_FAIL : CK_OK, m);
}

/* ---- revisions in use ---------------------------------------------------------------- */

/* Pods that run another revision than the one injecting them now (one line
 * per workload), and revisions nothing uses any more (inventory.h). */
static void check_revisions(check_ctx *c, const char *istio_ns)
{
    inv_cluster cl = {0};
    wh_err err = {0};
    json_t *inv, *stale = json_array(), *unused = json_array(), *counts = json_object(), *e, *r;
    const char *key;
    size_t i;

    if (inv_load(c->client, istio_ns, &cl, &err) != WH_OK) {
        add(c, "pods run the revision that injects them now", CK_SKIP, json_pack("[s]", wh_err_msg(&err)));
        add(c, "every revision is in use", CK_SKIP, json_pack("[s]", wh_err_msg(&err)));
        json_decref(stale);
        json_decref(unused);
        json_decref(counts);
        return;
    }
    inv = inv_build(&cl, NULL);
    json_array_foreach(json_object_get(inv, "needsRestart"), i, e)
    {
        wh_buf k = WH_BUF_INIT;
        const char *owner = str(e, "owner");
        wh_buf_printf(&k, "%s\t%s\t%s\t%s", str(e, "namespace"), owner[0] ? owner : str(e, "pod"), str(e, "running"),
                      str(e, "selected"));
        json_object_set_new(counts, k.data, json_integer(json_integer_value(json_object_get(counts, k.data)) + 1));
        wh_buf_free(&k);
    }
    json_object_foreach(counts, key, e)
    {
        char ns[256], owner[512], running[256], selected[256];
        long long n = json_integer_value(e);
        if (sscanf(key, "%255[^\t]\t%511[^\t]\t%255[^\t]\t%255[^\t]", ns, owner, running, selected) != 4)
            continue;
        if (strchr(owner, '/') == NULL)
            msg(stale,
                "Pod %s in namespace %s runs revision %s, but its labels now select revision %s. No workload controls "
                "it: recreate it to move it.",
                owner, ns, running, selected);
        else
            msg(stale,
                "%s in namespace %s: %lld pod%s run%s revision %s, but %s labels now select revision %s. Restart it: "
                "webhookctl revision migrate --to %s -n %s --restart (or kubectl -n %s rollout restart %s).",
                owner, ns, n, n == 1 ? "" : "s", n == 1 ? "s" : "", running, n == 1 ? "its" : "their", selected,
                selected, ns, ns, owner);
    }
    json_array_foreach(json_object_get(inv, "revisions"), i, r)
    {
        if (json_array_size(json_object_get(r, "namespaces")) == 0 &&
            json_array_size(json_object_get(r, "tags")) == 0 && json_integer_value(json_object_get(r, "pods")) == 0)
            msg(unused,
                "Revision %s (served by %s) is used by no namespace, tag or pod: once you are done with it, "
                "remove it (webhookctl revision remove %s).",
                str(r, "name"), str(r, "servedBy"), str(r, "name"));
    }
    add(c, "pods run the revision that injects them now", json_array_size(stale) ? CK_WARN : CK_OK, stale);
    add(c, "every revision is in use", json_array_size(unused) ? CK_WARN : CK_OK, unused);
    json_decref(counts);
    json_decref(inv);
    inv_free(&cl);
}

/* Every revision webhookd's injector configurations (the chart's, labelled
 * app.kubernetes.io/name=webhookd) serve has istiod's ConfigMaps, and they load
 * as webhookd loads them in cluster mode (wh_inject_cluster.h). */
static void check_revision_configmaps(check_ctx *c)
{
    json_t *m = json_array(), *seen = json_object(), *cfg;
    size_t i;
    int failed = 0, warned = 0;

    json_array_foreach(c->mwcs, i, cfg)
    {
        const char *rev = diag_label(cfg, REV_LABEL);
        char injector[300], mesh[300];
        json_t *icm = NULL, *mcm = NULL, *inputs;
        wh_inject_revision *loaded = NULL;
        wh_err err = {0};
        const char *app = diag_label(cfg, "app.kubernetes.io/name");
        if (rev == NULL || app == NULL || strcmp(app, "webhookd") != 0 || diag_label(cfg, TAG_LABEL) != NULL ||
            !has_entry(cfg, diag_is_injector) || json_object_get(seen, rev) != NULL)
            continue;
        json_object_set_new(seen, rev, json_true());
        snprintf(injector, sizeof(injector), "istio-sidecar-injector%s%s", strcmp(rev, "default") ? "-" : "",
                 strcmp(rev, "default") ? rev : "");
        snprintf(mesh, sizeof(mesh), "istio%s%s", strcmp(rev, "default") ? "-" : "", strcmp(rev, "default") ? rev : "");
        if (wh_kube_get(c->client, &wh_kube_configmaps, c->istio_ns, injector, &icm, &err) != WH_OK) {
            failed = 1;
            msg(m,
                "Revision \"%s\" (MutatingWebhookConfiguration %s) has no ConfigMap %s in %s (%s): webhookd in "
                "cluster mode answers its pods \"unknown revision\". Install that istiod revision, or remove \"%s\" "
                "from the chart's injection.revisions.",
                rev, diag_name(cfg), injector, c->istio_ns, wh_err_msg(&err), rev);
            continue;
        }
        wh_kube_get(c->client, &wh_kube_configmaps, c->istio_ns, mesh, &mcm, NULL);
        inputs = json_deep_copy(json_object_get(icm, "data"));
        if (!json_is_object(inputs))
            inputs = json_object();
        json_object_del(inputs, "mesh");
        json_object_del(inputs, "meshNetworks");
        if (json_is_string(json_object_get(json_object_get(mcm, "data"), "mesh")))
            json_object_set(inputs, "mesh", json_object_get(json_object_get(mcm, "data"), "mesh"));
        if (json_is_string(json_object_get(json_object_get(mcm, "data"), "meshNetworks")))
            json_object_set(inputs, "meshNetworks", json_object_get(json_object_get(mcm, "data"), "meshNetworks"));
        if (wh_inject_cluster_load_revision(rev, inputs, &loaded, &err) != WH_OK) {
            failed = 1;
            msg(m,
                "Revision \"%s\": ConfigMaps %s/%s do not load: %s. webhookd keeps serving the last settings "
                "that loaded (none if it started after this edit); fix the ConfigMap.",
                rev, injector, mesh, wh_err_msg(&err));
        }
        wh_err_clear(&err);
        if (json_is_string(json_object_get(inputs, "meshNetworks")) &&
            wh_validate_mesh_networks(json_string_value(json_object_get(inputs, "meshNetworks")),
                                      json_string_length(json_object_get(inputs, "meshNetworks")), &err) != WH_OK) {
            warned = 1;
            msg(m,
                "Revision \"%s\": meshNetworks of ConfigMap %s is invalid (istiod warns \"invalid mesh networks, "
                "using last known state\" and keeps its previous networks; injection is not affected): %s",
                rev, mesh, wh_err_msg(&err));
        }
        wh_inject_revision_unref(loaded);
        json_decref(inputs);
        json_decref(icm);
        json_decref(mcm);
    }
    if (json_object_size(seen) > 0) /* only where webhookd (cluster mode) serves revisions */
        add(c, "webhookd's revisions have istiod ConfigMaps that load", failed ? CK_FAIL : warned ? CK_WARN : CK_OK, m);
    else
        json_decref(m);
    json_decref(seen);
}

/* ---- output ---------------------------------------------------------------------- */

static void print_checks(const json_t *checks, int tty)
{
    static const char *const marks_tty[] = {"✔", "✖", "‼", "–"};
    static const char *const marks_ascii[] = {"[ok]  ", "[FAIL]", "[warn]", "[skip]"};
    size_t i, j;
    json_t *ck, *m;
    int failed = 0;

    printf("Istio webhooks\n--------------\n");
    json_array_foreach(checks, i, ck)
    {
        const char *r = str(ck, "result");
        int k = 0;
        while (k < CK_SKIP && strcmp(result_names[k], r) != 0)
            k++;
        failed |= k == CK_FAIL;
        printf("%s %s\n", tty ? marks_tty[k] : marks_ascii[k], str(ck, "name"));
        json_array_foreach(json_object_get(ck, "messages"), j, m) printf("    %s\n", json_string_value(m));
    }
    printf("\nStatus check results are %s\n", failed ? (tty ? "✖" : "FAILED") : (tty ? "✔" : "OK"));
}

static int run(const wh_ctl_args *a)
{
    const char *cert_file = wh_ctl_string(a, "tls-cert-file"), *server = wh_ctl_string(a, "server");
    const char *output = wh_ctl_string(a, "output");
    check_ctx c = {0};
    wh_err err = {0};
    wh_buf pem = WH_BUF_INIT, from = WH_BUF_INIT;
    int status = 1, failed = 0;
    size_t i;
    json_t *ck;

    c.service_filter = wh_ctl_string(a, "service");
    c.istio_ns = wh_ctl_string(a, "istioNamespace");
    if (c.istio_ns == NULL || c.istio_ns[0] == '\0')
        c.istio_ns = "istio-system";
    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unknown argument \"%s\": check takes none", a->args[0]);
    if (wh_ctl_changed(a, "namespace"))
        return wh_ctl_usage_error(a, "check looks at every namespace: -n is not accepted");
    if (cert_file != NULL && server != NULL)
        return wh_ctl_usage_error(a, "give --tls-cert-file or --server, not both");
    if (c.service_filter != NULL && strchr(c.service_filter, '/') == NULL)
        return wh_ctl_usage_error(a, "--service wants NAMESPACE/NAME");
    if (wh_ctl_output_check(a, output) != 0)
        return 2;
    if (cert_file != NULL) {
        if (wh_buf_read_file(&pem, cert_file, 1024 * 1024, &err) != WH_OK) {
            fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
            goto out;
        }
        c.serving = pem_certs(pem.data, pem.len);
        if (c.serving == NULL || sk_X509_num(c.serving) == 0) {
            fprintf(stderr, "Error: %s holds no PEM certificate\n", cert_file);
            goto out;
        }
        c.serving_from = cert_file;
    } else if (server != NULL) {
        if ((c.serving = fetch_chain(server, &err)) == NULL) {
            fprintf(stderr, "Error: cannot fetch the serving certificate: %s\n", wh_err_msg(&err));
            goto out;
        }
        wh_buf_printf(&from, "%s", server);
        c.serving_from = from.data;
    }
    if (wh_ctl_kube_client(a, &c.client, &err) != WH_OK ||
        wh_kube_list(c.client, &wh_kube_mutating_webhooks, NULL, NULL, &c.mwcs, &err) != WH_OK ||
        wh_kube_list(c.client, &wh_kube_validating_webhooks, NULL, NULL, &c.vwcs, &err) != WH_OK ||
        wh_kube_list(c.client, &wh_kube_namespaces, NULL, NULL, &c.namespaces, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    c.checks = json_array();
    check_exist(&c);
    check_services(&c);
    check_certs(&c);
    check_overlaps(&c);
    check_namespaces(&c);
    check_tags(&c);
    check_revisions(&c, wh_ctl_string(a, "istioNamespace"));
    check_revision_configmaps(&c);
    json_array_foreach(c.checks, i, ck) failed |= strcmp(str(ck, "result"), "error") == 0;
    status = failed ? 1 : 0;
    if (strcmp(output, "table") != 0) {
        json_t *doc = json_pack("{s:b, s:O}", "success", !failed, "checks", c.checks);
        if (wh_ctl_output_doc(output, doc) != 0)
            status = 1;
        json_decref(doc);
    } else {
        print_checks(c.checks, isatty(STDOUT_FILENO));
    }
out:
    sk_X509_pop_free(c.serving, X509_free);
    json_decref(c.mwcs);
    json_decref(c.vwcs);
    json_decref(c.namespaces);
    json_decref(c.checks);
    wh_kube_client_free(c.client);
    wh_buf_free(&pem);
    wh_buf_free(&from);
    return status;
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const wh_ctl_flag flags[] = {
    WH_CTL_OUTPUT_FLAG,
    {.name = "server",
     .type = WH_CTL_STRING,
     .usage = "`HOST:PORT` (or https://HOST:PORT) of a webhook server: its certificate is fetched over TLS and "
              "verified against the caBundles"},
    {.name = "service",
     .type = WH_CTL_STRING,
     .usage = "`NAMESPACE/NAME`: verify only the webhooks calling this Service"},
    {.name = "tls-cert-file",
     .type = WH_CTL_STRING,
     .usage = "Serving certificate chain (PEM, leaf first) to verify against the caBundles"},
};

const wh_ctl_cmd wh_ctl_cmd_check = {
    .name = "check",
    .use = "[flags]",
    .summary = "Check the webhooks' health: objects, Services, certificates, overlaps, labels",
    .long_help =
        "Check the health of the Istio webhooks in the cluster (injector and validator configurations of\n"
        "istiod, revision tags and webhookd), in the style of `linkerd check`.\n\n"
        "Checks: the webhook configurations exist; the Services they call exist, have the port, and have\n"
        "ready endpoints; each caBundle holds valid, unexpired certificates and verifies the serving certificate\n"
        "(when one is given); the serving certificate is valid for at least " STR(
            EXPIRY_WARN_DAYS) " days; no two "
                              "injector webhooks\n"
                              "select the same pods; no namespace carries both istio-injection and istio.io/rev; every "
                              "injection\n"
                              "label is served by an injector; every revision tag points at an installed revision; "
                              "every pod\n"
                              "runs the revision that injects it now (else it needs a restart); every revision is "
                              "used.\n\n"
                              "Exit status: 0 when no check failed (warnings allowed), 1 when one did, 2 on a usage "
                              "error.\n",
    .examples = "  webhookctl check\n"
                "  webhookctl check --server 127.0.0.1:15017 --service istio-system/webhookd -o json\n",
    WH_CTL_FLAGS(flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run,
};
