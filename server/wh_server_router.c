/*
 * wh_server_router.c - what webhookd answers, independent of how bytes
 * arrive: every request under an endpoint's prefix to that endpoint (which
 * answers its own 413: wh_endpoint.h), health, readiness, metrics and
 * version, 404/405/413 elsewhere, which paths need a verified client
 * certificate (--client-ca-file), plus the HTTP request metrics.  It knows
 * HTTP only: what a review amounted to is counted and logged by the
 * admission layer (handlers/admission/wh_admission.h).
 *
 * Paths are taken as istiod's Go ServeMux (Go >= 1.22, istiod 1.22 on)
 * takes them, since the API server's webhook URL is written for istiod
 * (canonical_path): a path that is not clean ("//inject", "/inject/.",
 * "/inject/x/..") is redirected (301) to its clean form, a path with a bad
 * percent-escape is a 400, and a route matches segment by segment after each
 * segment is decoded ("/inj%65ct" is /inject, "/inject%2Fcluster%2Fc1" is
 * not; "/inject/cluster%2Fc1" is, with the decoded path /inject/cluster/c1).
 *
 * For every revision, also one of release 1.20 or 1.21: their istiod was
 * built with go 1.21 in go.mod, so its mux is Go's older one (GODEBUG
 * httpmuxgo121), which decodes the path first and cleans and matches the
 * decoded text.  The two differ only for %2F and %2E: "/inject/%2E%2E" is a
 * 301 to "/" there, "/inject%2Fcluster%2Fc1" is served there.  The router
 * cannot route as the addressed revision's release would, because which
 * revision is addressed is read from that same path (/inject/rev/<name>/...,
 * wh_inject_decode.c) and the two readings can name different revisions:
 * "/inject/rev/a%2F..%2Fb" is revision a (with the decoded suffix) read as
 * Go >= 1.22 reads it, and a 301 to revision b's "/inject/rev/b" read as Go
 * 1.21 does.  Picking the release would need the path already read.  No
 * istiod-written URL has either escape (istioctl and the charts write
 * "/inject/cluster/X/net/Y", values escaped as --slash--), so one rule for
 * every revision, the newer one (tests/server/test_router.c:
 * test_mux_paths).
 *
 * Kept apart from the h2o adapter so that every routing rule is unit-tested
 * without a socket (tests/server/test_router.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_log.h"
#include "wh_server.h"

#define CT_TEXT "text/plain; charset=utf-8"
#define CT_JSON "application/json"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"

struct wh_router {
    wh_router_route *routes;
    size_t nroutes;
    size_t max_body;
    wh_metrics *metrics;
    wh_metric *requests;  /* webhookd_http_requests_total{path,code} */
    wh_metric *duration;  /* webhookd_http_request_duration_seconds{path} */
    pthread_mutex_t lock; /* guards the three fields below */
    int certs_loaded;
    char *certs_detail;
    char *cabundle_detail;
    atomic_int shutting_down;
    int client_cert_required;         /* wh_router_require_client_cert */
    wh_metric *client_cert_refusals;  /* webhookd_client_certificate_refusals_total{path,reason} */
    _Atomic long long refusal_logged; /* CLOCK_MONOTONIC second of the last refusal log line */
};

static const double duration_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                         0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

wh_code wh_router_new(const wh_router_route *routes, size_t nroutes, size_t max_body, wh_metrics *metrics,
                      wh_router **out, wh_err *err)
{
    static const char *const path_code[] = {"path", "code", NULL};
    static const char *const path_only[] = {"path", NULL};
    wh_router *r = wh_calloc(1, sizeof(*r));
    wh_code rc = WH_OK;

    *out = NULL;
    if (nroutes != 0)
        r->routes = wh_memdup(routes, nroutes * sizeof(*routes));
    r->nroutes = nroutes;
    r->max_body = max_body;
    r->metrics = metrics;
    pthread_mutex_init(&r->lock, NULL);
    r->requests = wh_metrics_counter(metrics, "webhookd_http_requests_total",
                                     "HTTP requests answered, by route and status code.", path_code);
    r->duration = wh_metrics_histogram(metrics, "webhookd_http_request_duration_seconds",
                                       "Time from a complete request to its answer, by route.", path_only,
                                       duration_bounds, sizeof(duration_bounds) / sizeof(duration_bounds[0]));
    if (r->requests == NULL || r->duration == NULL) {
        rc = wh_err_set(err, WH_E_CONFLICT, "cannot register the router's metrics");
        goto out;
    }
    *out = r;
    r = NULL;
out:
    wh_router_free(r);
    return rc;
}

void wh_router_free(wh_router *r)
{
    if (r == NULL)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r->certs_detail);
    free(r->cabundle_detail);
    free(r->routes);
    free(r);
}

void wh_router_set_certs(wh_router *r, int loaded, const char *detail)
{
    char *copy = wh_strdup(detail != NULL ? detail : "");

    pthread_mutex_lock(&r->lock);
    r->certs_loaded = loaded && copy != NULL;
    free(r->certs_detail);
    r->certs_detail = copy;
    pthread_mutex_unlock(&r->lock);
}

void wh_router_set_cabundle(wh_router *r, const char *detail)
{
    char *copy = detail != NULL ? wh_strdup(detail) : NULL;

    pthread_mutex_lock(&r->lock);
    free(r->cabundle_detail);
    r->cabundle_detail = copy;
    pthread_mutex_unlock(&r->lock);
}

wh_code wh_router_require_client_cert(wh_router *r, wh_err *err)
{
    static const char *const labels[] = {"path", "reason", NULL};

    if (r->client_cert_required)
        return WH_OK;
    r->client_cert_refusals = wh_metrics_counter(
        r->metrics, "webhookd_client_certificate_refusals_total",
        "Requests refused for want of a client certificate verified against --client-ca-file, by route and reason "
        "(missing, expired, untrusted, invalid).",
        labels);
    if (r->client_cert_refusals == NULL)
        return wh_err_set(err, WH_E_CONFLICT, "cannot register the client certificate metric");
    r->client_cert_required = 1;
    return WH_OK;
}

void wh_router_set_shutting_down(wh_router *r)
{
    atomic_store(&r->shutting_down, 1);
}

/* --- answers -------------------------------------------------------------- */

static void answer(wh_http_response *res, int status, const char *content_type, const char *text)
{
    res->status = status;
    res->content_type = content_type;
    wh_buf_reset(&res->body);
    wh_buf_puts(&res->body, text);
}

static void method_not_allowed(wh_http_response *res, const char *allow)
{
    answer(res, 405, CT_JSON, "{\"error\":\"method not allowed\"}");
    res->allow = allow;
}

/* `verbose` = 0 leaves out the details (file names, subjects, revisions):
 * only the verdict line, for callers without a client certificate. */
static void readyz(wh_router *r, int verbose, wh_http_response *res)
{
    wh_buf detail = WH_BUF_INIT;
    int ready;
    size_t i;

    pthread_mutex_lock(&r->lock);
    ready = r->certs_loaded;
    wh_buf_printf(&res->body, "[%c]certificates %s: %s\n", ready ? '+' : '-', ready ? "ok" : "not loaded",
                  r->certs_detail != NULL ? r->certs_detail : "");
    if (r->cabundle_detail != NULL)
        wh_buf_printf(&res->body, "[+]cabundle: %s\n", r->cabundle_detail);
    pthread_mutex_unlock(&r->lock);
    for (i = 0; i < r->nroutes; i++) {
        wh_endpoint *ep = r->routes[i].endpoint;
        int ok;

        wh_buf_reset(&detail);
        ok = ep->ready(ep, &detail);
        ready = ready && ok;
        wh_buf_printf(&res->body, "[%c]%s %s%s%s\n", ok ? '+' : '-', ep->name, ok ? "ok" : "not ready",
                      detail.len != 0 ? ": " : "", detail.len != 0 ? detail.data : "");
    }
    if (atomic_load(&r->shutting_down)) {
        ready = 0;
        wh_buf_puts(&res->body, "[-]shutdown: webhookd is shutting down\n");
    }
    if (!verbose)
        wh_buf_reset(&res->body);
    wh_buf_puts(&res->body, ready ? "readyz check passed\n" : "readyz check failed\n");
    wh_buf_free(&detail);
    res->status = ready ? 200 : 503;
    res->content_type = CT_TEXT;
}

static void metrics(wh_router *r, wh_http_response *res)
{
    res->content_type = CT_METRICS;
    wh_metrics_render(r->metrics, &res->body);
    res->status = 200;
}

/* --- paths as Go's ServeMux takes them ----------------------------------- */

/* Decode the percent-escapes of p[0..n) into out (n + 1 bytes, NUL-ended);
 * -1 at a '%' without two hex digits after it (Go's url.ParseRequestURI
 * fails: net/http answers 400), else the decoded length. */
static long unescape(const char *p, size_t n, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        if (p[i] != '%') {
            out[o++] = p[i];
            continue;
        }
        if (n - i < 3 || wh_hex_digit(p[i + 1]) < 0 || wh_hex_digit(p[i + 2]) < 0)
            return -1;
        out[o++] = (char)(wh_hex_digit(p[i + 1]) << 4 | wh_hex_digit(p[i + 2]));
        i += 2;
    }
    out[o] = '\0';
    return (long)o;
}

/* Go's cleanPath: path.Clean (one slash between elements, no "." elements,
 * ".." eats the element before it and stays at the root) keeping a trailing
 * slash.  p starts with '/'; out has room for n + 2 bytes; returns the length. */
static size_t clean_path(const char *p, size_t n, char *out)
{
    size_t r = 0, w = 0;

    out[w++] = '/';
    while (r < n) {
        size_t start, len;
        while (r < n && p[r] == '/')
            r++;
        start = r;
        while (r < n && p[r] != '/')
            r++;
        len = r - start;
        if (len == 0 || (len == 1 && p[start] == '.'))
            continue;
        if (len == 2 && p[start] == '.' && p[start + 1] == '.') {
            /* back to the slash before the last element (never past the root) */
            if (w > 1) {
                w--;
                while (w > 1 && out[w - 1] != '/')
                    w--;
                if (w > 1)
                    w--;
            }
            continue;
        }
        if (w > 1)
            out[w++] = '/';
        memcpy(out + w, p + start, len);
        w += len;
    }
    if (n > 1 && p[n - 1] == '/' && w > 1)
        out[w++] = '/';
    out[w] = '\0';
    return w;
}

/* What net/url's String() writes for a path: every byte but the unreserved
 * ones and $&+,/:;=@ percent-escaped (so an escape of the redirected path
 * is escaped once more, as istiod's mux does), then ?query when there is one. */
static void location_of(const char *path, size_t n, const char *query, size_t qlen, wh_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_.~$&+,/:;=@", c))
            wh_buf_putc(out, (char)c);
        else
            wh_buf_printf(out, "%%%c%c", hex[c >> 4], hex[c & 15]);
    }
    if (query != NULL && qlen != 0) {
        wh_buf_putc(out, '?');
        wh_buf_append(out, query, qlen);
    }
}

/* <a href="LOCATION">Moved Permanently</a>. with the Location HTML-escaped
 * as Go's htmlEscape does. */
static void redirect_body(const wh_buf *location, wh_buf *body)
{
    wh_buf_puts(body, "<a href=\"");
    for (size_t i = 0; i < location->len; i++) {
        switch (location->data[i]) {
        case '&':
            wh_buf_puts(body, "&amp;");
            break;
        case '<':
            wh_buf_puts(body, "&lt;");
            break;
        case '>':
            wh_buf_puts(body, "&gt;");
            break;
        case '"':
            wh_buf_puts(body, "&#34;");
            break;
        case '\'':
            wh_buf_puts(body, "&#39;");
            break;
        default:
            wh_buf_putc(body, location->data[i]);
        }
    }
    wh_buf_puts(body, "\">Moved Permanently</a>.\n\n");
}

/* The request as the mux routes it.  Returns 0 with *routed ready (its
 * `path` the decoded path, in *heap when it needed memory: free it), or
 * the status already written to res (301 to the clean path, 400 for a bad
 * escape).  A request without a raw path, or whose raw path does not start
 * with '/', is routed as it is. */
static int canonical_path(const wh_http_request *req, wh_http_request *routed, char **heap, wh_http_response *res)
{
    const char *raw = req->raw_path;
    size_t n = req->raw_path_len;
    char stack[512], *buf;
    long len;
    size_t clen;

    *routed = *req;
    *heap = NULL;
    if (raw == NULL || n == 0 || raw[0] != '/')
        return 0;
    buf = n + 2 <= sizeof(stack) ? stack : (*heap = wh_malloc(n + 2));
    clen = clean_path(raw, n, buf);
    if (clen != n || memcmp(buf, raw, n) != 0) {
        res->status = 301;
        res->content_type = CT_TEXT;
        wh_buf_reset(&res->body);
        wh_buf_reset(&res->location);
        location_of(buf, clen, req->query, req->query_len, &res->location);
        if (strcmp(req->method, "GET") == 0) /* http.Redirect's body, for GET only */
            redirect_body(&res->location, &res->body);
        goto answered;
    }
    if (memchr(raw, '%', n) == NULL) {
        /* the path as sent; `path` must stay NUL-terminated (raw may go on
         * with "?query"): the server's copy when it is the same text */
        if (req->path_len == n && memcmp(req->path, raw, n) == 0)
            goto out;
        memcpy(buf, raw, n);
        buf[n] = '\0';
        len = (long)n;
    } else if ((len = unescape(raw, n, buf)) < 0) {
        answer(res, 400, CT_TEXT, "400 Bad Request: invalid URL escape in the request path\n");
        goto answered;
    }
    if (*heap == NULL) {
        *heap = wh_malloc((size_t)len + 1);
        memcpy(*heap, buf, (size_t)len + 1);
    }
    routed->path = *heap;
    routed->path_len = (size_t)len;
out:
    return 0;
answered:
    free(*heap);
    *heap = NULL;
    return res->status;
}

/* Whether the raw path's leading segments, each decoded, are those of
 * `pattern` ("/inject"): exactly (`exact`) or with more segments after. */
static int segments_match(const char *raw, size_t n, const char *pattern, int exact)
{
    size_t i = 0, plen = strlen(pattern);
    const char *q = pattern;

    while (*q == '/') {
        const char *qend = strchr(q + 1, '/');
        size_t qlen = qend != NULL ? (size_t)(qend - q - 1) : strlen(q + 1), k = 0;
        if (i >= n || raw[i] != '/')
            return 0;
        i++;
        while (i < n && raw[i] != '/') {
            int c = (unsigned char)raw[i];
            if (c == '%' && n - i >= 3 && wh_hex_digit(raw[i + 1]) >= 0 && wh_hex_digit(raw[i + 2]) >= 0) {
                c = wh_hex_digit(raw[i + 1]) << 4 | wh_hex_digit(raw[i + 2]);
                i += 2;
            }
            if (k >= qlen || q[1 + k] != c)
                return 0;
            k++;
            i++;
        }
        if (k != qlen)
            return 0;
        q = qend != NULL ? qend : pattern + plen;
    }
    return exact ? i == n : (i == n || raw[i] == '/');
}

/* --- dispatch ------------------------------------------------------------- */

static int has_prefix(const wh_http_request *req, const char *prefix)
{
    size_t n = strlen(prefix);
    if (req->raw_path != NULL && req->raw_path_len != 0 && req->raw_path[0] == '/')
        return segments_match(req->raw_path, req->raw_path_len, prefix, 0);
    return req->path_len >= n && memcmp(req->path, prefix, n) == 0 && (req->path_len == n || req->path[n] == '/');
}

static int is_path(const wh_http_request *req, const char *path)
{
    if (req->raw_path != NULL && req->raw_path_len != 0 && req->raw_path[0] == '/')
        return segments_match(req->raw_path, req->raw_path_len, path, 1);
    return req->path_len == strlen(path) && memcmp(req->path, path, req->path_len) == 0;
}

static int is_get(const wh_http_request *req)
{
    return strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The closed set of refusal reasons (metric label, log field). */
static const char *refusal_reason(wh_http_client_cert cert)
{
    switch (cert) {
    case WH_CLIENT_CERT_NONE:
        return "missing";
    case WH_CLIENT_CERT_EXPIRED:
        return "expired";
    case WH_CLIENT_CERT_UNTRUSTED:
        return "untrusted";
    default:
        return "invalid";
    }
}

/* 403 for a request without a verified client certificate.  Not 401: TLS
 * client authentication has no WWW-Authenticate challenge to offer.  One
 * log line a second at most (a scanner must not flood the log); nothing of
 * the request is echoed. */
static void refuse_client(wh_router *r, const char *label, const wh_http_request *req, wh_http_response *res)
{
    const char *reason = refusal_reason(req->client_cert);
    struct timespec now;
    long long last;

    wh_metric_add(r->client_cert_refusals, (const char *const[]){label, reason}, 1);
    clock_gettime(CLOCK_MONOTONIC, &now);
    last = atomic_load(&r->refusal_logged);
    if ((long long)now.tv_sec != last &&
        atomic_compare_exchange_strong(&r->refusal_logged, &last, (long long)now.tv_sec))
        wh_log(WH_LOG_WARN, "request refused: no verified client certificate (--client-ca-file)", "path", label,
               "reason", reason, "error",
               req->client_cert_error != NULL ? req->client_cert_error : "no certificate presented", NULL);
    res->status = 403;
    res->content_type = CT_TEXT;
    wh_buf_reset(&res->body);
    if (req->client_cert == WH_CLIENT_CERT_NONE)
        wh_buf_puts(&res->body, "client certificate required: webhookd only serves this path to callers whose TLS "
                                "client certificate verifies against its --client-ca-file\n");
    else
        wh_buf_printf(&res->body,
                      "client certificate refused (%s): it does not verify against webhookd's "
                      "--client-ca-file\n",
                      req->client_cert_error != NULL ? req->client_cert_error : reason);
}

/* `monitoring`: the plain-HTTP listener, which needs no client certificate. */
/* The status's decimal text (the metrics' code label) in code, without
 * snprintf's format parsing: ~600 instructions of every request. */
static void status_label(char code[16], int status)
{
    char digits[12], *q = digits + sizeof(digits);
    unsigned u = status < 0 ? 0u - (unsigned)status : (unsigned)status;

    *--q = '\0';
    do
        *--q = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (status < 0)
        *--q = '-';
    memcpy(code, q, (size_t)(digits + sizeof(digits) - q));
}

static void serve(wh_router *r, const wh_http_request *orig, int monitoring, wh_http_response *res)
{
    struct timespec start;
    const char *label = "other";
    wh_endpoint *ep = NULL;
    wh_http_request canon, *req = &canon;
    char code[16], *heap;
    double elapsed;
    int authenticated, answered;
    size_t i;

    clock_gettime(CLOCK_MONOTONIC, &start);
    authenticated = !r->client_cert_required || monitoring || orig->client_cert == WH_CLIENT_CERT_VERIFIED;
    if ((answered = canonical_path(orig, &canon, &heap, res)) != 0 && !authenticated) {
        wh_buf_free(&res->location);
        refuse_client(r, label, orig, res);
    }
    for (i = 0; i < r->nroutes && !answered; i++) {
        if (has_prefix(req, r->routes[i].prefix)) {
            ep = r->routes[i].endpoint;
            label = r->routes[i].prefix;
            break;
        }
    }
    if (answered) {
        /* 301 or 400 (or the refusal) written above */
    } else if (ep == NULL) {
        static const char *const system_paths[] = {"/healthz", "/readyz", "/metrics", "/version"};
        for (i = 0; i < sizeof(system_paths) / sizeof(system_paths[0]); i++)
            if (is_path(req, system_paths[i]))
                label = system_paths[i];
    }

    /* Everything but the kubelet's probes needs the client certificate. */
    if (answered) {
        /* done */
    } else if (!authenticated && strcmp(label, "/healthz") != 0 && strcmp(label, "/readyz") != 0) {
        refuse_client(r, label, req, res);
    } else if (ep != NULL) {
        /* the endpoint's: its methods, its answer to a body over the cap */
        wh_http_request routed = *req;
        routed.prefix = label;
        routed.body_limit = r->max_body;
        if (routed.body_len > r->max_body)
            routed.body = NULL;
        ep->serve(ep, &routed, res);
    } else if (req->body_len > r->max_body) {
        answer(res, 413, CT_JSON, "{\"error\":\"request body too large\"}");
    } else if (strcmp(label, "other") == 0) {
        answer(res, 404, CT_JSON, "{\"error\":\"not found\"}");
    } else if (!is_get(req)) {
        method_not_allowed(res, "GET, HEAD");
    } else if (strcmp(label, "/healthz") == 0) {
        answer(res, 200, CT_TEXT, "ok\n");
    } else if (strcmp(label, "/readyz") == 0) {
        readyz(r, authenticated, res);
    } else if (strcmp(label, "/metrics") == 0) {
        metrics(r, res);
    } else {
        answer(res, 200, CT_JSON, "{\"name\":\"webhookd\",\"version\":\"" WH_VERSION "\"}");
    }

    free(heap);
    elapsed = seconds_since(&start);
    status_label(code, res->status);
    wh_metric_add(r->requests, (const char *const[]){label, code}, 1);
    wh_metric_observe(r->duration, (const char *const[]){label}, elapsed);
}

void wh_router_serve(wh_router *r, const wh_http_request *req, wh_http_response *res)
{
    serve(r, req, 0, res);
}

void wh_router_serve_monitoring(wh_router *r, const wh_http_request *req, wh_http_response *res)
{
    static const char *const paths[] = {"/healthz", "/readyz", "/metrics", "/version"};

    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (is_path(req, paths[i])) {
            serve(r, req, 1, res);
            return;
        }
    answer(res, 404, CT_JSON, "{\"error\":\"not found\"}");
}
