/*
 * kube_client.c - the HTTP side of wh_kube: libcurl with the cluster's TLS
 * settings and the user's credentials, the REST verbs on top, and error
 * sentences built from the API server's Status plus what to do about it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <time.h>

#include <curl/curl.h>

#include "wh_alloc.h"
#include "kube_internal.h"
#include "wh_json.h"

#define KUBE_LIST_PAGE 500
#define KUBE_UPDATE_ATTEMPTS 5
#define KUBE_THROTTLE_RETRIES 3 /* 429/5xx answered with Retry-After */
#define KUBE_THROTTLE_MAX_WAIT_S 5

const wh_kube_resource wh_kube_namespaces = {"v1", "namespaces", "Namespace", 0};
const wh_kube_resource wh_kube_services = {"v1", "services", "Service", 1};
const wh_kube_resource wh_kube_secrets = {"v1", "secrets", "Secret", 1};
const wh_kube_resource wh_kube_configmaps = {"v1", "configmaps", "ConfigMap", 1};
const wh_kube_resource wh_kube_mutating_webhooks = {"admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations",
                                                    "MutatingWebhookConfiguration", 0};
const wh_kube_resource wh_kube_validating_webhooks = {
    "admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", 0};
const wh_kube_resource wh_kube_pods = {"v1", "pods", "Pod", 1};
const wh_kube_resource wh_kube_replicasets = {"apps/v1", "replicasets", "ReplicaSet", 1};
const wh_kube_resource wh_kube_deployments = {"apps/v1", "deployments", "Deployment", 1};
const wh_kube_resource wh_kube_statefulsets = {"apps/v1", "statefulsets", "StatefulSet", 1};
const wh_kube_resource wh_kube_daemonsets = {"apps/v1", "daemonsets", "DaemonSet", 1};

static const wh_kube_resource *const known[] = {
    &wh_kube_namespaces,   &wh_kube_services,          &wh_kube_secrets,
    &wh_kube_configmaps,   &wh_kube_mutating_webhooks, &wh_kube_validating_webhooks,
    &wh_kube_pods,         &wh_kube_replicasets,       &wh_kube_deployments,
    &wh_kube_statefulsets, &wh_kube_daemonsets};

const wh_kube_resource *wh_kube_resource_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcasecmp(name, known[i]->plural) == 0 || strcasecmp(name, known[i]->kind) == 0)
            return known[i];
    return NULL;
}

struct wh_kube_client {
    wh_kube_config *cfg;
    CURL *curl;
    long timeout_ms;
    char *user_agent;
    char *base;       /* server URL without a trailing slash, host replaced by tls-server-name */
    char *connect_to; /* "name:port:host:port" when tls-server-name is set */
    /* tokenFile: re-read whenever the file changes */
    char *file_token;
    struct stat file_st;
    /* exec plugin credential, cached until it expires */
    kube_exec_credential cred;
    int have_cred;
};

/* Work out the base URL; with tls-server-name, curl must both send that name
 * (SNI, verification) and connect to the real host, which CONNECT_TO does. */
static wh_code prepare_base(wh_kube_client *c, wh_err *err)
{
    const wh_kube_config *cfg = c->cfg;
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *url = NULL;
    wh_buf b = WH_BUF_INIT;
    size_t n;
    wh_code rc = WH_OK;

    if (curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK) {
        rc = wh_err_set(err, WH_E_INVALID, "cluster \"%s\": server \"%s\" is not a valid URL", cfg->cluster_name,
                        cfg->server);
        goto out;
    }
    if (cfg->tls_server_name != NULL) {
        if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
            curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0) != CURLUE_OK) {
            rc = wh_err_set(err, WH_E_INVALID, "cluster \"%s\": cannot use tls-server-name \"%s\" with server \"%s\"",
                            cfg->cluster_name, cfg->tls_server_name, cfg->server);
            goto out;
        }
        wh_buf_printf(&b, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
        c->connect_to = wh_buf_steal(&b, NULL);
    }
    if (curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        rc = wh_err_set(err, WH_E_INVALID, "cluster \"%s\": server \"%s\" is not a valid URL", cfg->cluster_name,
                        cfg->server);
        goto out;
    }
    n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    wh_buf_append(&b, url, n);
    c->base = wh_buf_steal(&b, NULL);
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    wh_buf_free(&b);
    return rc;
}

wh_code wh_kube_client_new(const wh_kube_options *opts, wh_kube_client **out, wh_err *err)
{
    wh_kube_client *c = wh_calloc(1, sizeof(*c));
    wh_code rc;

    *out = NULL;
    if ((rc = wh_kube_config_load(opts, &c->cfg, err)) != WH_OK)
        goto out;
    /* curl allocates through wh_alloc.h too: one out-of-memory policy */
    curl_global_init_mem(CURL_GLOBAL_DEFAULT, wh_malloc, free, wh_realloc, wh_strdup, wh_calloc);
    if ((c->curl = curl_easy_init()) == NULL) {
        rc = wh_err_set(err, WH_E_INTERNAL, "cannot initialise libcurl");
        goto out;
    }
    c->timeout_ms = opts != NULL && opts->timeout_ms > 0 ? opts->timeout_ms : WH_KUBE_DEFAULT_TIMEOUT_MS;
    c->user_agent = wh_strdup(opts != NULL && opts->user_agent != NULL ? opts->user_agent : "webhookctl/" WH_VERSION);
    rc = prepare_base(c, err);
out:
    if (rc != WH_OK)
        wh_kube_client_free(c);
    else
        *out = c;
    return rc;
}

void wh_kube_client_free(wh_kube_client *c)
{
    if (c == NULL)
        return;
    if (c->curl != NULL)
        curl_easy_cleanup(c->curl);
    wh_kube_config_free(c->cfg);
    free(c->user_agent);
    free(c->base);
    free(c->connect_to);
    free(c->file_token);
    kube_exec_credential_clear(&c->cred);
    free(c);
}

const wh_kube_config *wh_kube_client_config(const wh_kube_client *c)
{
    return c->cfg;
}

const char *wh_kube_client_namespace(const wh_kube_client *c)
{
    return c->cfg->namespace != NULL ? c->cfg->namespace : "default";
}

/* ---- credentials ---------------------------------------------------------- */

/* Re-read the token file when it changed since the last read. */
static wh_code refresh_file_token(wh_kube_client *c, wh_err *err)
{
    struct stat st;
    wh_buf b = WH_BUF_INIT;
    wh_code rc;

    if (stat(c->cfg->token_file, &st) != 0)
        return wh_err_set(err, WH_E_NOTFOUND, "cannot read token file %s: %s", c->cfg->token_file, strerror(errno));
    if (c->file_token != NULL && st.st_ino == c->file_st.st_ino && st.st_dev == c->file_st.st_dev &&
        st.st_size == c->file_st.st_size && st.st_mtim.tv_sec == c->file_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == c->file_st.st_mtim.tv_nsec)
        return WH_OK;
    if ((rc = wh_buf_read_file(&b, c->cfg->token_file, 1024 * 1024, err)) != WH_OK)
        return rc;
    while (b.len > 0 && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r' || b.data[b.len - 1] == ' '))
        b.data[--b.len] = '\0';
    free(c->file_token);
    c->file_token = wh_buf_steal(&b, NULL);
    c->file_st = st;
    return WH_OK;
}

static wh_code refresh_exec(wh_kube_client *c, wh_err *err)
{
    wh_code rc;

    if (c->have_cred && (c->cred.expires == 0 || time(NULL) < c->cred.expires))
        return WH_OK;
    kube_exec_credential_clear(&c->cred);
    c->have_cred = 0;
    if ((rc = kube_exec_run(c->cfg, c->timeout_ms, &c->cred, err)) != WH_OK)
        return wh_err_prefix(err, "getting credentials for user \"%s\"", c->cfg->user_name);
    c->have_cred = 1;
    return WH_OK;
}

/* ---- transport ------------------------------------------------------------ */

typedef struct sink {
    wh_buf body;
    int too_big;
    /* wh_kube_stream: the lines of a 2xx body go to on_line as they arrive */
    wh_kube_line_fn on_line;
    void *line_ctx;
    const atomic_int *stop;
    CURL *curl;
    int streaming; /* -1: not known yet; 1: 2xx, lines handed over; 0: an error body, buffered */
    int stopped;   /* on_line asked to stop */
    long timeout_ms;
} sink;

/* Hand over every complete line buffered so far; keep the rest.  `from`:
 * where the bytes appended since the last call begin. */
static int flush_lines(sink *s, size_t from)
{
    size_t start = 0;
    const char *nl;

    /* Only the bytes appended since the last call can hold a new '\n': what
     * was kept before is one unfinished line, so a long line arriving in
     * small pieces costs linear time, not quadratic. */
    while (from < s->body.len && (nl = memchr(s->body.data + from, '\n', s->body.len - from)) != NULL) {
        size_t i = (size_t)(nl - s->body.data);
        if (i > start && s->on_line(s->line_ctx, s->body.data + start, i - start) != 0) {
            s->stopped = 1;
            return -1;
        }
        start = from = i + 1;
    }
    if (start > 0) {
        memmove(s->body.data, s->body.data + start, s->body.len - start);
        s->body.len -= start;
        s->body.data[s->body.len] = '\0';
    }
    return 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;

    if (s->on_line != NULL && s->streaming < 0) {
        long code = 0;
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
        s->streaming = code >= 200 && code < 300;
    }
    if (s->body.len + len > WH_KUBE_MAX_RESPONSE) {
        s->too_big = 1;
        return 0;
    }
    size_t kept = s->body.len;
    wh_buf_append(&s->body, p, len);
    if (s->streaming == 1 && flush_lines(s, kept) != 0)
        return 0;
    return len;
}

/* Streams end early when the owner sets *stop (checked about once a second). */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    const sink *s = ud;
    return s->stop != NULL && atomic_load(s->stop) ? 1 : 0;
}

static void set_blob(CURL *curl, CURLoption opt, const kube_blob *b)
{
    struct curl_blob blob = {b->data, b->len, CURL_BLOB_COPY};
    curl_easy_setopt(curl, opt, &blob);
}

/* RBAC wording for a request: the verb and "resource.group". */
static void describe_rbac(const char *method, const char *path, wh_buf *out)
{
    char seg[8][128];
    int n = 0;
    const char *p = path, *verb, *group = "", *resource = "?", *ns = NULL;
    int named, i = 0;

    while (*p == '/' && n < 8) {
        size_t l = strcspn(p + 1, "/?");
        snprintf(seg[n++], sizeof(seg[0]), "%.*s", (int)(l < 127 ? l : 127), p + 1);
        p += 1 + l;
    }
    if (n >= 2 && strcmp(seg[0], "api") == 0)
        i = 2;
    else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        group = seg[1];
        i = 3;
    }
    if (i + 1 < n && strcmp(seg[i], "namespaces") == 0 && i + 2 < n) {
        ns = seg[i + 1];
        i += 2;
    }
    if (i < n)
        resource = seg[i];
    named = i + 1 < n;
    if (strcmp(method, "GET") == 0)
        verb = named ? "get" : "list";
    else if (strcmp(method, "POST") == 0)
        verb = "create";
    else if (strcmp(method, "PUT") == 0)
        verb = "update";
    else if (strcmp(method, "PATCH") == 0)
        verb = "patch";
    else if (strcmp(method, "DELETE") == 0)
        verb = "delete";
    else
        verb = method;
    wh_buf_printf(out, "needs RBAC verb \"%s\" on \"%s%s%s\"", verb, resource, group[0] != '\0' ? "." : "", group);
    if (ns != NULL)
        wh_buf_printf(out, " in namespace \"%s\"", ns);
    else
        wh_buf_puts(out, " (cluster-wide: a ClusterRole)");
}

static wh_code http_error(const wh_kube_client *c, const char *method, const char *path, long code,
                          const json_t *status, const wh_buf *raw, wh_err *err)
{
    const char *msg = json_string_value(json_object_get(status, "message"));
    wh_buf hint = WH_BUF_INIT;
    wh_code rc;

    switch (code) {
    case 401:
        rc = WH_E_REMOTE;
        wh_buf_printf(&hint,
                      "the API server did not accept the credentials of user \"%s\" (context \"%s\"): check "
                      "the token, client certificate or exec plugin login",
                      c->cfg->user_name, c->cfg->context_name);
        if (msg == NULL)
            msg = "Unauthorized";
        break;
    case 403:
        rc = WH_E_REMOTE;
        describe_rbac(method, path, &hint);
        break;
    case 404:
        rc = WH_E_NOTFOUND;
        break;
    case 409:
        rc = WH_E_CONFLICT;
        break;
    case 408:
    case 504:
        rc = WH_E_TIMEOUT;
        wh_buf_puts(&hint, "the API server timed out; retry, or raise --request-timeout");
        break;
    case 429:
    case 500:
    case 502:
    case 503:
        rc = WH_E_REMOTE;
        wh_buf_puts(&hint, "the API server is overloaded or failing; retry later");
        break;
    default:
        rc = WH_E_REMOTE;
    }
    if (msg != NULL)
        wh_err_set(err, rc, "%s%s%s", msg, hint.len > 0 ? " — " : "", hint.len > 0 ? hint.data : "");
    else
        wh_err_set(err, rc, "the server answered %s %s with HTTP %ld%s%.200s%s%s", method, path, code,
                   raw->len > 0 ? ": " : "", raw->len > 0 ? raw->data : "", hint.len > 0 ? " — " : "",
                   hint.len > 0 ? hint.data : "");
    wh_buf_free(&hint);
    return rc;
}

static wh_code curl_error(const wh_kube_client *c, CURLcode cc, const char *detail, wh_err *err)
{
    const wh_kube_config *cfg = c->cfg;
    const char *what = detail[0] != '\0' ? detail : curl_easy_strerror(cc);

    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
        return wh_err_set(err, WH_E_TIMEOUT,
                          "context deadline exceeded: no answer from %s within %ld ms (%s) — raise --request-timeout "
                          "or check that the API server is reachable",
                          cfg->server, c->timeout_ms, what);
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return wh_err_set(err, WH_E_IO,
                          "cannot reach the API server %s: %s — check the server of cluster \"%s\" (context \"%s\", "
                          "%s) and your network or proxy",
                          cfg->server, what, cfg->cluster_name, cfg->context_name, cfg->source);
    case CURLE_PEER_FAILED_VERIFICATION:
        return wh_err_set(err, WH_E_TLS,
                          "x509: certificate signed by unknown authority or not valid for this name (%s) — check "
                          "certificate-authority(-data)%s of cluster \"%s\"",
                          what, cfg->tls_server_name != NULL ? " and tls-server-name" : " (or set tls-server-name)",
                          cfg->cluster_name);
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
        return wh_err_set(err, WH_E_TLS,
                          "the client certificate or key cannot be used (%s) — check client-certificate(-data) and "
                          "client-key(-data) of user \"%s\"",
                          what, cfg->user_name);
    case CURLE_SSL_CACERT_BADFILE:
        return wh_err_set(err, WH_E_TLS,
                          "cannot load the certificate authority (%s) — check certificate-authority(-data) "
                          "of cluster \"%s\"",
                          what, cfg->cluster_name);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        return wh_err_set(err, WH_E_TLS,
                          "TLS/connection error talking to %s: %s — if the server requires a client certificate, "
                          "check user \"%s\"",
                          cfg->server, what, cfg->user_name);
    default:
        return wh_err_set(err, WH_E_IO, "request to %s failed: %s", cfg->server, what);
    }
}

static wh_code perform(wh_kube_client *c, const char *method, const char *path, const char *content_type,
                       const char *body, size_t body_len, long *http_status, sink *snk, wh_err *err)
{
    const wh_kube_config *cfg = c->cfg;
    CURL *curl = c->curl;
    struct curl_slist *hdrs = NULL, *connect_to = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    wh_buf url = WH_BUF_INIT, h = WH_BUF_INIT;
    const char *token = NULL;
    CURLcode cc;
    wh_code rc = WH_OK;

    *http_status = 0;
    if (cfg->exec != NULL && (rc = refresh_exec(c, err)) != WH_OK)
        return rc;
    if (cfg->exec != NULL) {
        token = c->cred.token;
    } else if (cfg->token_file != NULL) {
        /* As client-go: the file, re-read when it changes, wins over `token`,
         * which only stands in while the file cannot be read. */
        if ((rc = refresh_file_token(c, err)) == WH_OK)
            token = c->file_token;
        else if (cfg->token != NULL && c->file_token == NULL)
            token = cfg->token;
        else if (c->file_token != NULL)
            token = c->file_token; /* keep the last good token while the file is being replaced */
        else
            return rc;
        wh_err_clear(err);
        rc = WH_OK;
    } else if (cfg->token != NULL) {
        token = cfg->token;
    }

    curl_easy_reset(curl);
    wh_buf_printf(&url, "%s%s", c->base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url.data);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, snk->timeout_ms > 0 ? snk->timeout_ms : c->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
    if (snk->on_line != NULL) {
        snk->curl = curl;
        snk->streaming = -1;
        curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, snk);
    }
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, snk);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    if (body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    if (c->connect_to != NULL) {
        connect_to = curl_slist_append(NULL, c->connect_to);
        curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
    }
    if (cfg->proxy_url != NULL)
        curl_easy_setopt(curl, CURLOPT_PROXY, cfg->proxy_url);
    if (cfg->insecure) {
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_data.len > 0) {
        set_blob(curl, CURLOPT_CAINFO_BLOB, &cfg->ca_data);
        curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    } else if (cfg->ca_file != NULL) {
        curl_easy_setopt(curl, CURLOPT_CAINFO, cfg->ca_file);
        curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    if (cfg->exec != NULL && c->cred.cert.len > 0) {
        set_blob(curl, CURLOPT_SSLCERT_BLOB, &c->cred.cert);
        set_blob(curl, CURLOPT_SSLKEY_BLOB, &c->cred.key);
    } else if (cfg->cert_data.len > 0 || cfg->cert_file != NULL) {
        if (cfg->cert_data.len > 0)
            set_blob(curl, CURLOPT_SSLCERT_BLOB, &cfg->cert_data);
        else
            curl_easy_setopt(curl, CURLOPT_SSLCERT, cfg->cert_file);
        if (cfg->key_data.len > 0)
            set_blob(curl, CURLOPT_SSLKEY_BLOB, &cfg->key_data);
        else
            curl_easy_setopt(curl, CURLOPT_SSLKEY, cfg->key_file);
    }
    if (token != NULL) {
        wh_buf_printf(&h, "Authorization: Bearer %s", token);
        hdrs = curl_slist_append(hdrs, h.data);
    } else if (cfg->username != NULL) {
        curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(curl, CURLOPT_USERNAME, cfg->username);
        curl_easy_setopt(curl, CURLOPT_PASSWORD, cfg->password != NULL ? cfg->password : "");
    }
    if (cfg->impersonate_user != NULL) {
        wh_buf_reset(&h);
        wh_buf_printf(&h, "Impersonate-User: %s", cfg->impersonate_user);
        hdrs = curl_slist_append(hdrs, h.data);
    }
    for (char **g = cfg->impersonate_groups; g != NULL && *g != NULL; g++) {
        wh_buf_reset(&h);
        wh_buf_printf(&h, "Impersonate-Group: %s", *g);
        hdrs = curl_slist_append(hdrs, h.data);
    }
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    if (content_type != NULL) {
        wh_buf_reset(&h);
        wh_buf_printf(&h, "Content-Type: %s", content_type);
        hdrs = curl_slist_append(hdrs, h.data);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);

    cc = curl_easy_perform(curl);
    if (snk->stopped) /* the line handler had what it wanted */
        cc = CURLE_OK;
    if (snk->too_big) {
        rc = wh_err_set(err, WH_E_LIMIT, "the answer to %s %s is larger than %u bytes", method, path,
                        WH_KUBE_MAX_RESPONSE);
        goto out;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK) {
        rc = wh_err_set(err, WH_E_IO, "%s %s: stopped", method, path);
        goto out;
    }
    if (cc != CURLE_OK) {
        rc = curl_error(c, cc, errbuf, err);
        goto out;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, http_status);
out:
    /* Never keep the options pointing at our freed buffers. */
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(curl, CURLOPT_CONNECT_TO, NULL);
    curl_slist_free_all(hdrs);
    curl_slist_free_all(connect_to);
    wh_buf_free(&url);
    wh_buf_free(&h);
    return rc;
}

wh_code wh_kube_request(wh_kube_client *c, const char *method, const char *path, const char *content_type,
                        const char *body, size_t body_len, long *http_status, json_t **out, wh_err *err)
{
    sink snk = {.body = WH_BUF_INIT};
    json_t *doc = NULL;
    long status = 0;
    wh_code rc;

    if (out != NULL)
        *out = NULL;
    for (int reauth = 0, throttled = 0;;) {
        curl_off_t wait_s = 0;
        wh_buf_reset(&snk.body);
        if ((rc = perform(c, method, path, content_type, body, body_len, &status, &snk, err)) != WH_OK)
            goto out;
        /* An exec credential the server refuses may have been revoked early: get a fresh one once. */
        if (status == 401 && c->cfg->exec != NULL && !reauth) {
            reauth = 1;
            kube_exec_credential_clear(&c->cred);
            c->have_cred = 0;
            continue;
        }
        /* As client-go: 429/5xx with Retry-After means "not processed, come back"; a few short waits. */
        if ((status == 429 || status >= 500) && throttled < KUBE_THROTTLE_RETRIES &&
            curl_easy_getinfo(c->curl, CURLINFO_RETRY_AFTER, &wait_s) == CURLE_OK && wait_s > 0) {
            long ms = wait_s > KUBE_THROTTLE_MAX_WAIT_S ? KUBE_THROTTLE_MAX_WAIT_S * 1000L : (long)wait_s * 1000L;
            struct timespec ts = {0, 0};
            if (ms > c->timeout_ms)
                ms = c->timeout_ms;
            ts.tv_sec = ms / 1000;
            ts.tv_nsec = (ms % 1000) * 1000000L;
            throttled++;
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
            continue;
        }
        break;
    }
    if (snk.body.len > 0) {
        json_error_t jerr;
        doc = wh_json_loadb(snk.body.data, snk.body.len, 0, &jerr);
        if (doc == NULL && status >= 200 && status < 300) {
            rc = wh_err_set(err, WH_E_PARSE, "%s %s: the API server's answer is not JSON: %s", method, path, jerr.text);
            goto out;
        }
    }
    if (status < 200 || status >= 300) {
        rc = http_error(c, method, path, status, json_is_object(doc) ? doc : NULL, &snk.body, err);
        goto out;
    }
    if (doc == NULL)
        doc = json_null();
out:
    if (http_status != NULL)
        *http_status = status;
    if (out != NULL && doc != NULL && (rc == WH_OK || json_is_object(doc)))
        *out = json_incref(doc);
    json_decref(doc);
    wh_buf_free(&snk.body);
    return rc;
}

wh_code wh_kube_stream(wh_kube_client *c, const char *path, long timeout_ms, wh_kube_line_fn on_line, void *ctx,
                       const atomic_int *stop, long *http_status, wh_err *err)
{
    sink snk = {.body = WH_BUF_INIT, .on_line = on_line, .line_ctx = ctx, .stop = stop, .timeout_ms = timeout_ms};
    json_t *doc = NULL;
    long status = 0;
    wh_code rc;

    if ((rc = perform(c, "GET", path, NULL, NULL, 0, &status, &snk, err)) != WH_OK)
        goto out;
    if (status < 200 || status >= 300) {
        doc = snk.body.len > 0 ? wh_json_loadb(snk.body.data, snk.body.len, 0, NULL) : NULL;
        rc = http_error(c, "GET", path, status, json_is_object(doc) ? doc : NULL, &snk.body, err);
        goto out;
    }
    if (!snk.stopped && snk.body.len > 0) /* a last line without its newline */
        on_line(ctx, snk.body.data, snk.body.len);
out:
    if (http_status != NULL)
        *http_status = status;
    json_decref(doc);
    wh_buf_free(&snk.body);
    return rc;
}

/* ---- REST verbs ----------------------------------------------------------- */

/* wh_kube_request for the typed verbs: on failure *out stays NULL (the
 * Status already went into the error sentence). */
static wh_code call(wh_kube_client *c, const char *method, const char *path, const char *ctype, const char *body,
                    size_t len, json_t **out, wh_err *err)
{
    wh_code rc = wh_kube_request(c, method, path, ctype, body, len, NULL, out, err);

    if (rc != WH_OK && out != NULL) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

wh_code kube_resource_path(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, wh_buf *out,
                           wh_err *err)
{
    char *e;

    wh_buf_printf(out, "/%s/%s", strchr(r->group_version, '/') != NULL ? "apis" : "api", r->group_version);
    if (r->namespaced && ns != NULL) {
        e = curl_easy_escape(c->curl, ns, 0);
        wh_buf_printf(out, "/namespaces/%s", e);
        curl_free(e);
    } else if (r->namespaced && name != NULL) {
        return wh_err_set(err, WH_E_INVALID, "%s is namespaced: a namespace is required", r->kind);
    }
    wh_buf_printf(out, "/%s", r->plural);
    if (name != NULL) {
        e = curl_easy_escape(c->curl, name, 0);
        wh_buf_printf(out, "/%s", e);
        curl_free(e);
    }
    return WH_OK;
}

void kube_add_query(wh_kube_client *c, wh_buf *path, const char *key, const char *value)
{
    char *e = curl_easy_escape(c->curl, value, 0);

    wh_buf_printf(path, "%c%s=%s", strchr(path->data, '?') != NULL ? '&' : '?', key, e);
    curl_free(e);
}

static wh_code send_json(wh_kube_client *c, const char *method, const char *path, const char *ctype, const json_t *obj,
                         json_t **out, wh_err *err)
{
    char *body = json_dumps(obj, JSON_COMPACT); /* an object: never NULL */
    wh_code rc;

    rc = call(c, method, path, ctype, body, strlen(body), out, err);
    free(body);
    return rc;
}

static const char *object_name(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

/* A request without a body to one object (GET, DELETE). */
static wh_code call_object(wh_kube_client *c, const char *method, const wh_kube_resource *r, const char *ns,
                           const char *name, json_t **out, wh_err *err)
{
    wh_buf path = WH_BUF_INIT;
    wh_code rc;

    if ((rc = kube_resource_path(c, r, ns, name, &path, err)) == WH_OK)
        rc = call(c, method, path.data, NULL, NULL, 0, out, err);
    wh_buf_free(&path);
    return rc;
}

/* A JSON body sent to the collection (name NULL) or to one object, with
 * ?fieldManager= when field_manager is given and &force=true when force. */
static wh_code send_object(wh_kube_client *c, const char *method, const wh_kube_resource *r, const char *ns,
                           const char *name, const char *ctype, const json_t *body, const char *field_manager,
                           int force, json_t **out, wh_err *err)
{
    wh_buf path = WH_BUF_INIT;
    wh_code rc;

    if ((rc = kube_resource_path(c, r, ns, name, &path, err)) == WH_OK) {
        if (field_manager != NULL)
            kube_add_query(c, &path, "fieldManager", field_manager);
        if (force)
            kube_add_query(c, &path, "force", "true");
        rc = send_json(c, method, path.data, ctype, body, out, err);
    }
    wh_buf_free(&path);
    return rc;
}

wh_code wh_kube_get(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, json_t **out,
                    wh_err *err)
{
    return call_object(c, "GET", r, ns, name, out, err);
}

wh_code wh_kube_list(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *label_selector,
                     json_t **items, wh_err *err)
{
    json_t *all = json_array(), *page = NULL;
    char *token = NULL;
    wh_buf path = WH_BUF_INIT;
    char limit[32];
    wh_code rc = WH_OK;

    *items = NULL;
    snprintf(limit, sizeof(limit), "%d", KUBE_LIST_PAGE);
    do {
        size_t i;
        json_t *it;
        const char *next;
        wh_buf_reset(&path);
        if ((rc = kube_resource_path(c, r, ns, NULL, &path, err)) != WH_OK)
            goto out;
        kube_add_query(c, &path, "limit", limit);
        if (label_selector != NULL && label_selector[0] != '\0')
            kube_add_query(c, &path, "labelSelector", label_selector);
        if (token != NULL)
            kube_add_query(c, &path, "continue", token);
        json_decref(page);
        page = NULL;
        if ((rc = call(c, "GET", path.data, NULL, NULL, 0, &page, err)) != WH_OK)
            goto out;
        if (!json_is_array(json_object_get(page, "items")) && !json_is_null(json_object_get(page, "items"))) {
            rc = wh_err_set(err, WH_E_PARSE, "list of %s: the answer has no items", r->plural);
            goto out;
        }
        /* Items of a list carry no kind; add it so callers can print them as objects. */
        json_array_foreach(json_object_get(page, "items"), i, it)
        {
            if (json_object_get(it, "kind") == NULL) {
                json_object_set_new(it, "apiVersion", json_string(r->group_version));
                json_object_set_new(it, "kind", json_string(r->kind));
            }
            json_array_append(all, it);
        }
        next = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
        free(token);
        token = next != NULL && next[0] != '\0' ? wh_strdup(next) : NULL;
    } while (token != NULL);
out:
    if (rc == WH_OK)
        *items = all;
    else
        json_decref(all);
    json_decref(page);
    free(token);
    wh_buf_free(&path);
    return rc;
}

wh_code wh_kube_create(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                       const char *field_manager, json_t **out, wh_err *err)
{
    return send_object(c, "POST", r, ns, NULL, "application/json", obj, field_manager, 0, out, err);
}

wh_code wh_kube_update(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                       const char *field_manager, json_t **out, wh_err *err)
{
    if (object_name(obj) == NULL)
        return wh_err_set(err, WH_E_INVALID, "update of a %s without metadata.name", r->kind);
    return send_object(c, "PUT", r, ns, object_name(obj), "application/json", obj, field_manager, 0, out, err);
}

wh_code wh_kube_update_retry(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name,
                             wh_kube_mutate_fn mutate, void *ctx, const char *field_manager, json_t **out, wh_err *err)
{
    json_t *obj = NULL;
    wh_code rc = WH_OK;

    if (out != NULL)
        *out = NULL;
    for (int attempt = 0; attempt < KUBE_UPDATE_ATTEMPTS; attempt++) {
        int unchanged = 0;
        json_decref(obj);
        obj = NULL;
        if ((rc = wh_kube_get(c, r, ns, name, &obj, err)) != WH_OK || (rc = mutate(obj, ctx, &unchanged, err)) != WH_OK)
            break;
        if (unchanged) {
            if (out != NULL)
                *out = json_incref(obj);
            break;
        }
        rc = wh_kube_update(c, r, ns, obj, field_manager, out, err);
        if (rc != WH_E_CONFLICT)
            break;
    }
    if (rc == WH_E_CONFLICT)
        wh_err_prefix(err, "%s \"%s\" kept changing under us (%d attempts)", r->kind, name, KUBE_UPDATE_ATTEMPTS);
    json_decref(obj);
    return rc;
}

wh_code wh_kube_patch(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name,
                      wh_kube_patch_type type, const json_t *patch, const char *field_manager, int force, json_t **out,
                      wh_err *err)
{
    static const char *const ctypes[] = {"application/merge-patch+json", "application/json-patch+json",
                                         "application/strategic-merge-patch+json", "application/apply-patch+yaml"};

    if (type == WH_KUBE_PATCH_APPLY && (field_manager == NULL || field_manager[0] == '\0'))
        return wh_err_set(err, WH_E_INVALID, "server-side apply needs a field manager");
    return send_object(c, "PATCH", r, ns, name, ctypes[type], patch, field_manager,
                       type == WH_KUBE_PATCH_APPLY && force, out, err);
}

wh_code wh_kube_apply(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                      const char *field_manager, int force, json_t **out, wh_err *err)
{
    json_t *copy;
    wh_code rc;

    if (object_name(obj) == NULL)
        return wh_err_set(err, WH_E_INVALID, "apply of a %s without metadata.name", r->kind);
    copy = json_deep_copy(obj);
    /* Apply needs the type in the body. */
    if (json_object_get(copy, "apiVersion") == NULL)
        json_object_set_new(copy, "apiVersion", json_string(r->group_version));
    if (json_object_get(copy, "kind") == NULL)
        json_object_set_new(copy, "kind", json_string(r->kind));
    rc = wh_kube_patch(c, r, ns, object_name(obj), WH_KUBE_PATCH_APPLY, copy, field_manager, force, out, err);
    json_decref(copy);
    return rc;
}

wh_code wh_kube_delete(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, wh_err *err)
{
    return call_object(c, "DELETE", r, ns, name, NULL, err);
}
