/*
 * test_router.c - webhookd's routing rules, without sockets: which path and
 * method reach which answer (paths as istiod's Go ServeMux takes them),
 * readiness, metrics, the body cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_server.h"

/* An endpoint that answers 200 with "<name> <prefix> <path>" (and, for a
 * request with a body, " limit=<body_limit> body=<length>", or "body=none
 * (<length>)" when the router did not hand it over) and whose readiness the
 * test controls. */
typedef struct fake {
    wh_endpoint super;
    int ready;
    int calls;
} fake;

static void fake_serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    fake *f = self->data;
    f->calls++;
    res->status = 200;
    res->content_type = "text/plain";
    wh_buf_printf(&res->body, "%s %s %.*s", self->name, req->prefix, (int)req->path_len, req->path);
    if (req->body_len != 0 && req->body != NULL)
        wh_buf_printf(&res->body, " limit=%zu body=%zu", req->body_limit, req->body_len);
    else if (req->body_len != 0)
        wh_buf_printf(&res->body, " limit=%zu body=none (%zu)", req->body_limit, req->body_len);
}

static int fake_ready(wh_endpoint *self, wh_buf *detail)
{
    fake *f = self->data;
    if (!f->ready)
        wh_buf_puts(detail, "config missing");
    return f->ready;
}

typedef struct fixture {
    wh_metrics *metrics;
    fake inject, validate;
    wh_router *router;
} fixture;

static int setup(void **state)
{
    fixture *fx = wh_calloc(1, sizeof(*fx));
    wh_router_route routes[2];

    fx->metrics = wh_metrics_new();
    fx->inject = (fake){{"inject", fake_serve, fake_ready, NULL, NULL, &fx->inject}, 1, 0};
    fx->validate = (fake){{"validate", fake_serve, fake_ready, NULL, NULL, &fx->validate}, 1, 0};
    routes[0] = (wh_router_route){"/inject", &fx->inject.super};
    routes[1] = (wh_router_route){"/validate", &fx->validate.super};
    assert_int_equal(wh_router_new(routes, 2, 1000, fx->metrics, &fx->router, NULL), WH_OK);
    wh_router_set_certs(fx->router, 1, "CN=test");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    wh_router_free(fx->router);
    wh_metrics_free(fx->metrics);
    free(fx);
    return 0;
}

/* Serve one request; returns the status and leaves the body in *body
 * (caller frees). */
static int serve(fixture *fx, const char *method, const char *path, size_t body_len, wh_http_response *res)
{
    static char body[2000];
    wh_http_request req = {.method = method, .path = path, .path_len = strlen(path)};

    memset(body, 'x', sizeof(body));
    if (body_len != 0) {
        req.body = body;
        req.body_len = body_len;
    }
    memset(res, 0, sizeof(*res));
    wh_router_serve(fx->router, &req, res);
    return res->status;
}

static void expect(fixture *fx, const char *method, const char *path, int status, const char *body)
{
    wh_http_response res;

    assert_int_equal(serve(fx, method, path, 0, &res), status);
    if (body != NULL)
        assert_string_equal(res.body.data != NULL ? res.body.data : "", body);
    wh_buf_free(&res.body);
}

static void test_endpoint_prefixes(void **state)
{
    fixture *fx = *state;

    expect(fx, "POST", "/inject", 200, "inject /inject /inject");
    expect(fx, "POST", "/inject/cluster/c1/net/n1", 200, "inject /inject /inject/cluster/c1/net/n1");
    expect(fx, "POST", "/inject/", 200, "inject /inject /inject/");
    expect(fx, "POST", "/validate", 200, "validate /validate /validate");
    expect(fx, "POST", "/validate/networking", 200, "validate /validate /validate/networking");
    /* Prefixes match at segment boundaries only. */
    expect(fx, "POST", "/injectfoo", 404, "{\"error\":\"not found\"}");
    expect(fx, "POST", "/validatex/y", 404, "{\"error\":\"not found\"}");
    expect(fx, "POST", "/", 404, NULL);
    expect(fx, "POST", "/admitpilot", 404, NULL);
    assert_int_equal(fx->inject.calls, 3);
    assert_int_equal(fx->validate.calls, 2);
}

/* --client-ca-file: the rule per path and per certificate verdict. */
static void test_client_cert(void **state)
{
    static const struct {
        wh_http_client_cert cert;
        const char *method, *path;
        int status, monitoring;
        const char *body_start;
    } cases[] = {
        {WH_CLIENT_CERT_NONE, "POST", "/inject", 403, 0, "client certificate required"},
        {WH_CLIENT_CERT_NONE, "POST", "/validate/x", 403, 0, "client certificate required"},
        {WH_CLIENT_CERT_NONE, "GET", "/metrics", 403, 0, NULL},
        {WH_CLIENT_CERT_NONE, "GET", "/version", 403, 0, NULL},
        {WH_CLIENT_CERT_NONE, "GET", "/elsewhere", 403, 0, NULL},
        {WH_CLIENT_CERT_NONE, "GET", "/healthz", 200, 0, "ok\n"},
        {WH_CLIENT_CERT_NONE, "GET", "/readyz", 200, 0, "readyz check passed\n"}, /* no details */
        {WH_CLIENT_CERT_NONE, "GET", "/metrics", 200, 1, "# HELP"},               /* the monitoring port */
        {WH_CLIENT_CERT_NONE, "GET", "/readyz", 200, 1, "[+]certificates ok"},
        {WH_CLIENT_CERT_EXPIRED, "POST", "/inject", 403, 0, "client certificate refused (certificate has expired)"},
        {WH_CLIENT_CERT_UNTRUSTED, "POST", "/inject", 403, 0, "client certificate refused"},
        {WH_CLIENT_CERT_INVALID, "GET", "/metrics", 403, 0, "client certificate refused"},
        {WH_CLIENT_CERT_UNTRUSTED, "GET", "/healthz", 200, 0, "ok\n"},
        {WH_CLIENT_CERT_VERIFIED, "POST", "/inject", 200, 0, "inject /inject /inject"},
        {WH_CLIENT_CERT_VERIFIED, "GET", "/metrics", 200, 0, "# HELP"},
        {WH_CLIENT_CERT_VERIFIED, "GET", "/readyz", 200, 0, "[+]certificates ok"},
        {WH_CLIENT_CERT_VERIFIED, "GET", "/elsewhere", 404, 0, NULL},
    };
    fixture *fx = *state;
    wh_buf text = WH_BUF_INIT;
    size_t i;

    /* Off by default: no certificate needed. */
    expect(fx, "POST", "/inject", 200, NULL);
    assert_int_equal(wh_router_require_client_cert(fx->router, NULL), WH_OK);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_http_request req = {.method = cases[i].method, .path = cases[i].path, .path_len = strlen(cases[i].path)};
        wh_http_response res = {0};

        req.client_cert = cases[i].cert;
        if (cases[i].cert == WH_CLIENT_CERT_EXPIRED)
            req.client_cert_error = "certificate has expired";
        if (cases[i].monitoring)
            wh_router_serve_monitoring(fx->router, &req, &res);
        else
            wh_router_serve(fx->router, &req, &res);
        assert_int_equal(res.status, cases[i].status);
        if (cases[i].body_start != NULL) {
            assert_non_null(res.body.data);
            assert_memory_equal(res.body.data, cases[i].body_start, strlen(cases[i].body_start));
        }
        wh_buf_free(&res.body);
    }
    assert_int_equal(fx->inject.calls, 2);
    wh_metrics_render(fx->metrics, &text);
    assert_non_null(
        strstr(text.data, "webhookd_client_certificate_refusals_total{path=\"/inject\",reason=\"missing\"} 1\n"));
    assert_non_null(
        strstr(text.data, "webhookd_client_certificate_refusals_total{path=\"other\",reason=\"missing\"} 1\n"));
    assert_non_null(
        strstr(text.data, "webhookd_client_certificate_refusals_total{path=\"/inject\",reason=\"expired\"} 1\n"));
    wh_buf_free(&text);
}

static void test_methods(void **state)
{
    fixture *fx = *state;
    wh_http_response res;

    /* Under an endpoint's prefix every method is the endpoint's (an
     * admission endpoint takes any method, as istiod: tests/admission/cases.json). */
    expect(fx, "GET", "/inject", 200, "inject /inject /inject");
    expect(fx, "PUT", "/validate/x", 200, "validate /validate /validate/x");
    assert_int_equal(fx->inject.calls + fx->validate.calls, 2);
    assert_int_equal(serve(fx, "POST", "/healthz", 0, &res), 405);
    assert_string_equal(res.allow, "GET, HEAD");
    wh_buf_free(&res.body);
    expect(fx, "DELETE", "/metrics", 405, NULL);
    expect(fx, "HEAD", "/healthz", 200, "ok\n");
    assert_int_equal(fx->inject.calls + fx->validate.calls, 2);
}

static void test_system_paths(void **state)
{
    fixture *fx = *state;
    wh_http_response res;

    expect(fx, "GET", "/healthz", 200, "ok\n");
    expect(fx, "GET", "/healthz/x", 404, NULL);
    expect(fx, "GET", "/version", 200, "{\"name\":\"webhookd\",\"version\":\"" WH_VERSION "\"}");
    expect(fx, "GET", "/nope", 404, "{\"error\":\"not found\"}");
    assert_int_equal(serve(fx, "GET", "/metrics", 0, &res), 200);
    assert_string_equal(res.content_type, "text/plain; version=0.0.4; charset=utf-8");
    assert_non_null(strstr(res.body.data, "webhookd_http_requests_total{path=\"/healthz\",code=\"200\"} 1"));
    assert_non_null(strstr(res.body.data, "webhookd_http_requests_total{path=\"other\",code=\"404\"} 2"));
    assert_non_null(strstr(res.body.data, "# TYPE webhookd_http_request_duration_seconds histogram"));
    wh_buf_free(&res.body);
}

static void test_readiness(void **state)
{
    fixture *fx = *state;
    wh_http_response res;

    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 200);
    assert_string_equal(res.body.data,
                        "[+]certificates ok: CN=test\n[+]inject ok\n[+]validate ok\nreadyz check passed\n");
    wh_buf_free(&res.body);

    fx->validate.ready = 0;
    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 503);
    assert_non_null(strstr(res.body.data, "[-]validate not ready: config missing\n"));
    assert_non_null(strstr(res.body.data, "readyz check failed\n"));
    wh_buf_free(&res.body);
    fx->validate.ready = 1;

    wh_router_set_certs(fx->router, 0, "no certificate yet");
    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 503);
    assert_non_null(strstr(res.body.data, "[-]certificates not loaded: no certificate yet\n"));
    wh_buf_free(&res.body);
    wh_router_set_certs(fx->router, 1, "CN=again");
    expect(fx, "GET", "/readyz", 200, NULL);

    /* The caBundle state is informational: a failing patcher keeps webhookd ready. */
    wh_router_set_cabundle(fx->router, "failing: attempt 2 failed");
    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 200);
    assert_non_null(strstr(res.body.data, "[+]certificates ok: CN=again\n[+]cabundle: failing: attempt 2 failed\n"));
    wh_buf_free(&res.body);
    wh_router_set_cabundle(fx->router, NULL);
    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 200);
    assert_null(strstr(res.body.data, "cabundle"));
    wh_buf_free(&res.body);

    wh_router_set_shutting_down(fx->router);
    assert_int_equal(serve(fx, "GET", "/readyz", 0, &res), 503);
    assert_non_null(strstr(res.body.data, "shutting down"));
    wh_buf_free(&res.body);
    expect(fx, "GET", "/healthz", 200, NULL); /* alive while draining */
}

/* The cap: an endpoint gets the limit and, over it, the length without the
 * body (it words the 413); elsewhere the router answers 413 itself. */
static void test_body_cap(void **state)
{
    fixture *fx = *state;
    wh_http_response res;

    assert_int_equal(serve(fx, "POST", "/validate", 1000, &res), 200);
    assert_string_equal(res.body.data, "validate /validate /validate limit=1000 body=1000");
    wh_buf_free(&res.body);
    assert_int_equal(serve(fx, "POST", "/validate", 1001, &res), 200);
    assert_string_equal(res.body.data, "validate /validate /validate limit=1000 body=none (1001)");
    wh_buf_free(&res.body);
    assert_int_equal(fx->validate.calls, 2);
    assert_int_equal(serve(fx, "GET", "/healthz", 1001, &res), 413);
    assert_string_equal(res.body.data, "{\"error\":\"request body too large\"}");
    wh_buf_free(&res.body);
}

/* The router counts HTTP only: what a review amounted to is the admission
 * layer's (tests/admission/test_admission.c, test_stats). */
static void test_http_metrics(void **state)
{
    fixture *fx = *state;
    wh_http_response res;

    expect(fx, "POST", "/inject/x", 200, NULL);
    expect(fx, "POST", "/healthz", 405, NULL);
    assert_int_equal(serve(fx, "GET", "/metrics", 0, &res), 200);
    assert_non_null(strstr(res.body.data, "webhookd_http_requests_total{path=\"/inject\",code=\"200\"} 1"));
    assert_non_null(strstr(res.body.data, "webhookd_http_requests_total{path=\"/healthz\",code=\"405\"} 1"));
    assert_null(strstr(res.body.data, "webhookd_admission_reviews_total"));
    wh_buf_free(&res.body);
}

/* Paths as istiod's Go ServeMux (Go >= 1.22) takes them: the raw path is
 * what the client sent, `seen` what the endpoint gets (Go's r.URL.Path), or
 * for a 301 the Location. */
static void test_mux_paths(void **state)
{
    static const struct {
        const char *method, *raw, *query;
        int status;
        const char *seen; /* endpoint body (200), Location (301), or NULL */
    } cases[] = {
        {"POST", "/inject", NULL, 200, "inject /inject /inject"},
        {"POST", "/inject/", NULL, 200, "inject /inject /inject/"},
        {"POST", "/inject/cluster/c%31", NULL, 200, "inject /inject /inject/cluster/c1"},
        {"POST", "/inj%65ct", NULL, 200, "inject /inject /inject"},
        {"POST", "/inject/cluster%2Fc1", NULL, 200, "inject /inject /inject/cluster/c1"},
        {"POST", "/inject/%2E%2E", NULL, 200, "inject /inject /inject/.."}, /* escaped dots are a name */
        {"POST", "/inject%2Fcluster%2Fc1", NULL, 404, NULL},                /* one segment "inject/cluster/c1" */
        {"POST", "/inject%2F", NULL, 404, NULL},
        /* one rule whatever the revision's release (wh_server_router.c's top
         * comment): Go 1.21's mux, which 1.20/1.21 istiod use, would answer
         * 301 "/inject/rev/b"; Go 1.22's serves revision a */
        {"POST", "/inject/rev/a%2F..%2Fb", NULL, 200, "inject /inject /inject/rev/a/../b"},
        {"POST", "//inject", NULL, 301, "/inject"},
        {"POST", "/inject//cluster/c1", NULL, 301, "/inject/cluster/c1"},
        {"POST", "/inject/.", NULL, 301, "/inject"},
        {"POST", "/inject/./", NULL, 301, "/inject/"},
        {"POST", "/inject/..", NULL, 301, "/"},
        {"POST", "/inject/../../validate", NULL, 301, "/validate"},
        {"POST", "/inject/cluster/c1/..", "a=b", 301, "/inject/cluster?a=b"},
        {"POST", "/./inj%65ct/", NULL, 301, "/inj%2565ct/"}, /* net/url escapes the escaped path again */
        {"GET", "//healthz", NULL, 301, "/healthz"},
        {"GET", "//healthz", "a=1&b='<x>\"", 301, "/healthz?a=1&b='<x>\""},
        {"POST", "/inject/c%3", NULL, 400, NULL},
        {"POST", "/inject/%zz", NULL, 400, NULL},
        {"POST", "/inject/%", NULL, 400, NULL},
        {"GET", "/health%7A", NULL, 200, "ok\n"},
        {"GET", "/healthz/", NULL, 404, NULL},
    };
    fixture *fx = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_http_request req = {.method = cases[i].method,
                               .path = "/ignored",
                               .path_len = 8,
                               .raw_path = cases[i].raw,
                               .raw_path_len = strlen(cases[i].raw),
                               .query = cases[i].query,
                               .query_len = cases[i].query != NULL ? strlen(cases[i].query) : 0};
        wh_http_response res = {0};

        wh_router_serve(fx->router, &req, &res);
        if (res.status != cases[i].status)
            fail_msg("%s %s: status %d, want %d", cases[i].method, cases[i].raw, res.status, cases[i].status);
        if (cases[i].status == 301) {
            assert_non_null(res.location.data);
            assert_string_equal(res.location.data, cases[i].seen);
            /* Go's http.Redirect writes a body for GET only */
            assert_int_equal(res.body.len != 0, strcmp(cases[i].method, "GET") == 0);
            if (cases[i].query != NULL && strcmp(cases[i].method, "GET") == 0)
                assert_string_equal(res.body.data, "<a href=\"/healthz?a=1&amp;b=&#39;&lt;x&gt;&#34;\">Moved "
                                                   "Permanently</a>.\n\n");
        } else if (cases[i].seen != NULL) {
            assert_string_equal(res.body.data, cases[i].seen);
        }
        if (cases[i].status != 301)
            assert_int_equal(res.location.len, 0);
        wh_buf_free(&res.body);
        wh_buf_free(&res.location);
    }
}

/* Paths longer than the router's stack buffer: a redirect and a decoded path. */
static void test_mux_long_paths(void **state)
{
    fixture *fx = *state;
    wh_buf raw = WH_BUF_INIT, want = WH_BUF_INIT;
    wh_http_request req = {.method = "POST", .path = "/x", .path_len = 2};
    wh_http_response res = {0};

    wh_buf_puts(&raw, "/inject/k/");
    wh_buf_puts(&want, "inject /inject /inject/k/");
    for (int i = 0; i < 300; i++) {
        wh_buf_puts(&raw, "%41");
        wh_buf_putc(&want, 'A');
    }
    req.raw_path = raw.data;
    req.raw_path_len = raw.len;
    wh_router_serve(fx->router, &req, &res);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.body.data, want.data);
    wh_buf_free(&res.body);

    wh_buf_puts(&raw, "//x");
    req.raw_path = raw.data;
    req.raw_path_len = raw.len;
    memset(&res, 0, sizeof(res));
    wh_router_serve(fx->router, &req, &res);
    assert_int_equal(res.status, 301);
    assert_int_equal(res.location.len, raw.len - 1 + 300 * 2); /* one slash fewer, each %41 escaped as %2541 */
    wh_buf_free(&res.body);
    wh_buf_free(&res.location);
    wh_buf_free(&raw);
    wh_buf_free(&want);
}

/* With --client-ca-file a caller without a certificate learns nothing from
 * a redirect either. */
static void test_mux_redirect_needs_client_cert(void **state)
{
    fixture *fx = *state;
    wh_http_request req = {
        .method = "POST", .path = "/inject", .path_len = 7, .raw_path = "//inject", .raw_path_len = 8};
    wh_http_response res = {0};

    assert_int_equal(wh_router_require_client_cert(fx->router, NULL), WH_OK);
    wh_router_serve(fx->router, &req, &res);
    assert_int_equal(res.status, 403);
    assert_int_equal(res.location.len, 0);
    wh_buf_free(&res.body);
    memset(&res, 0, sizeof(res));
    req.client_cert = WH_CLIENT_CERT_VERIFIED;
    wh_router_serve(fx->router, &req, &res);
    assert_int_equal(res.status, 301);
    assert_string_equal(res.location.data, "/inject");
    wh_buf_free(&res.body);
    wh_buf_free(&res.location);
}

/* The placeholder endpoint: a clear denial in the review's own version. */
static void test_not_configured(void **state)
{
    static const char body[] = "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                               "\"request\":{\"uid\":\"nc\"}}";
    wh_endpoint_env env = {"inject", "/inject", NULL, NULL, NULL};
    wh_http_request req = {.method = "POST",
                           .path = "/inject/x",
                           .path_len = 9,
                           .prefix = "/inject",
                           .content_type = "application/json",
                           .content_type_len = 16,
                           .body = body,
                           .body_len = sizeof(body) - 1};
    wh_http_response res = {0};
    wh_buf detail = WH_BUF_INIT;
    wh_endpoint *ep = NULL;

    assert_int_equal(wh_server_not_configured_new(&env, &ep, NULL), WH_OK);
    ep->serve(ep, &req, &res);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.body.data,
                        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\",\"response\":{"
                        "\"uid\":\"nc\",\"allowed\":false,\"status\":{\"metadata\":{},\"message\":\"webhookd: the "
                        "inject endpoint is not configured in this build; no inject decision was made\"}}}");
    wh_buf_free(&res.body);
    memset(&res, 0, sizeof(res));
    req.method = "GET"; /* the admission layer's: any method, as istiod */
    req.body_len = 0;
    ep->serve(ep, &req, &res);
    assert_int_equal(res.status, 400);
    assert_string_equal(res.body.data, "no body found\n");
    assert_int_equal(ep->ready(ep, &detail), 1);
    assert_string_equal(detail.data, "not configured in this build");
    wh_buf_free(&detail);
    wh_buf_free(&res.body);
    ep->destroy(ep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_endpoint_prefixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_system_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readiness, setup, teardown),
        cmocka_unit_test_setup_teardown(test_body_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_cert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mux_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mux_long_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mux_redirect_needs_client_cert, setup, teardown),
        cmocka_unit_test(test_not_configured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
