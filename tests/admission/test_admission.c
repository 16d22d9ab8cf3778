/*
 * test_admission.c - unit tests of the AdmissionReview codec.
 *
 * Most behaviour is pinned declaratively in cases.json (an HTTP request and
 * an admit behaviour in, the exact status, Content-Type and body out); this
 * runner turns each case into a cmocka test.  The helpers the handlers call
 * directly (deny, warn, encode, too_large) are tested below (base64: tests/common/test_go.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_admission.h"

/* --- the admit behaviours cases.json can ask for ------------------------- */

static wh_code set_patch(wh_admission_response *resp, const char *patch)
{
    wh_buf_reset(&resp->patch);
    wh_buf_puts(&resp->patch, patch);
    return WH_OK;
}

static wh_code annotate(wh_admission_response *resp, const char *key, const char *value)
{
    if (resp->audit_annotations == NULL)
        resp->audit_annotations = json_object();
    json_object_set_new(resp->audit_annotations, key, json_string(value));
    return WH_OK;
}

static wh_code test_admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err)
{
    const char *mode = ctx;

    assert_non_null(req->request);
    assert_true(json_is_object(req->request));
    assert_ptr_equal(json_object_get(req->review, "request"), req->request);
    if (strcmp(mode, "allow") == 0) {
        resp->allowed = 1;
    } else if (strcmp(mode, "deny") == 0) {
        return wh_admission_deny(resp, 0, "denied by test: \"%s\" \xc3\xa9", "quoted");
    } else if (strcmp(mode, "deny_code") == 0) {
        assert_int_equal(wh_admission_deny(resp, 403, "nope"), WH_OK);
        resp->reason = wh_strdup("Forbidden");
    } else if (strcmp(mode, "deny_bad_utf8") == 0) {
        return wh_admission_deny(resp, 0, "cut \xc3");
    } else if (strcmp(mode, "patch") == 0) {
        resp->allowed = 1;
        return set_patch(resp, "[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"b\"}]");
    } else if (strcmp(mode, "warn") == 0) {
        resp->allowed = 1;
        assert_int_equal(wh_admission_warn(resp, "first warning"), WH_OK);
        assert_int_equal(wh_admission_warn(resp, "second %d", 2), WH_OK);
        return annotate(resp, "k", "v");
    } else if (strcmp(mode, "deny_after_patch") == 0) {
        resp->allowed = 1;
        assert_int_equal(set_patch(resp, "[]"), WH_OK);
        assert_int_equal(wh_admission_warn(resp, "w"), WH_OK);
        resp->allowed = 0;
        resp->message = wh_strdup("late denial");
    } else if (strcmp(mode, "fail") == 0) {
        resp->allowed = 1;
        assert_int_equal(set_patch(resp, "[]"), WH_OK);
        return wh_err_set(err, WH_E_INVALID, "admit failed: %s", "bad input");
    } else if (strcmp(mode, "echo") == 0) {
        resp->allowed = 1;
        annotate(resp, "suffix", req->path_suffix);
        annotate(resp, "operation", req->operation);
        annotate(resp, "name", req->name);
        annotate(resp, "namespace", req->namespace);
        annotate(resp, "kind", req->kind);
        annotate(resp, "dryRun", req->dry_run ? "true" : "false");
        return annotate(resp, "apiVersion", req->api_version);
    } else {
        fail_msg("unknown admit mode %s", mode);
    }
    return WH_OK;
}

/* --- the declarative cases ------------------------------------------------ */

static const char *str(const json_t *c, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(c, key);
    return v == NULL ? dflt : json_string_value(v); /* JSON null -> NULL */
}

static size_t base64_decode(const char *in, unsigned char *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;

    for (; *in != '\0' && *in != '='; in++) {
        acc = acc << 6 | (unsigned)(strchr(alphabet, *in) - alphabet);
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

static void run_case(void **state)
{
    const json_t *c = *state;
    const char *path = str(c, "path", "/validate");
    wh_http_request http = {.method = str(c, "method", "POST"), .path = path, .path_len = strlen(path)};
    wh_http_response res = {0};
    wh_admission_outcome outcome;
    char *dumped = NULL;
    unsigned char raw[256];
    const char *expect;
    const json_t *body_json = json_object_get(c, "body_json");

    http.prefix = str(c, "prefix", "/validate");
    http.content_type = str(c, "content_type", "application/json");
    http.content_type_len = http.content_type != NULL ? strlen(http.content_type) : 0;
    if (body_json != NULL) {
        dumped = json_dumps(body_json, JSON_COMPACT);
        http.body = dumped;
    } else if (str(c, "body_base64", NULL) != NULL) {
        http.body = (const char *)raw;
        http.body_len = base64_decode(str(c, "body_base64", NULL), raw);
    } else {
        http.body = str(c, "body", NULL);
    }
    if (http.body != NULL && http.body_len == 0)
        http.body_len = strlen(http.body);
    /* the server's cap: a body over it is not handed over, only its length */
    http.body_limit = (size_t)json_integer_value(json_object_get(c, "body_limit"));
    if (http.body_limit != 0 && http.body_len > http.body_limit)
        http.body = NULL;

    wh_admission_serve(NULL, &http, test_admit, (void *)str(c, "admit", "allow"), &res, &outcome);

    assert_int_equal(res.status, json_integer_value(json_object_get(c, "status")));
    assert_int_equal(outcome.refused, res.status == 413);
    if ((expect = str(c, "allow_out", NULL)) != NULL)
        assert_string_equal(res.allow != NULL ? res.allow : "(none)", expect);
    else
        assert_null(res.allow);
    if ((expect = str(c, "content_type_out", NULL)) != NULL)
        assert_string_equal(res.content_type, expect);
    assert_non_null(res.body.data);
    if ((expect = str(c, "expect_body", NULL)) != NULL)
        assert_string_equal(res.body.data, expect);
    if ((expect = str(c, "expect_prefix", NULL)) != NULL && strncmp(res.body.data, expect, strlen(expect)) != 0)
        fail_msg("body %s\ndoes not start with %s", res.body.data, expect);
    if ((expect = str(c, "expect_contains", NULL)) != NULL && strstr(res.body.data, expect) == NULL)
        fail_msg("body %s\ndoes not contain %s", res.body.data, expect);
    if (res.status == 200) {
        /* Every 200 is a well-formed review whose outcome matches the body. */
        json_t *doc = json_loads(res.body.data, 0, NULL);
        assert_non_null(doc);
        assert_int_equal(outcome.allowed, json_is_true(json_object_get(json_object_get(doc, "response"), "allowed")));
        json_decref(doc);
    }
    wh_buf_free(&res.body);
    free(dumped);
}

/* --- the helpers ---------------------------------------------------------- */

/* webhookd_admission_reviews_total: one family for every endpoint, each
 * exchange counted under its endpoint by result. */
static void test_stats(void **state)
{
    static const char allowed[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                                  "\"request\":{\"uid\":\"s\"}}";
    wh_metrics *registry = wh_metrics_new();
    wh_admission_stats inject, validate;
    wh_http_request http = {.method = "POST",
                            .path = "/inject",
                            .path_len = 7,
                            .prefix = "/inject",
                            .content_type = "application/json",
                            .content_type_len = 16,
                            .body = allowed,
                            .body_len = sizeof(allowed) - 1,
                            .body_limit = 1000};
    wh_http_response res = {0};
    wh_buf text = WH_BUF_INIT;
    const struct {
        const char *method, *admit, *content_type;
        size_t body_len;
    } steps[] = {
        {"POST", "allow", "application/json", sizeof(allowed) - 1}, /* allowed */
        {"POST", "patch", "application/json", sizeof(allowed) - 1}, /* patched */
        {"POST", "deny", "application/json", sizeof(allowed) - 1},  /* denied */
        {"POST", "allow", "application/json", 3},                   /* undecodable: "{\"a" */
        {"GET", "allow", "application/json", 0},                    /* rejected: 400 (no body, any method) */
        {"POST", "allow", "application/json", 1001},                /* rejected: 413 */
        {"POST", "allow", "text/plain", sizeof(allowed) - 1},       /* rejected: 415 */
    };

    assert_int_equal(wh_admission_stats_init(&inject, "inject", registry, NULL), WH_OK);
    assert_int_equal(wh_admission_stats_init(&validate, "validate", registry, NULL), WH_OK);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        http.method = steps[i].method;
        http.content_type = steps[i].content_type;
        http.content_type_len = strlen(steps[i].content_type);
        http.body_len = steps[i].body_len;
        http.body = steps[i].body_len > http.body_limit ? NULL : allowed; /* as the router hands it over */
        wh_admission_serve(&inject, &http, test_admit, (void *)steps[i].admit, &res, NULL);
        wh_buf_free(&res.body);
        memset(&res, 0, sizeof(res));
    }
    http.method = "POST";
    http.content_type = "application/json";
    http.content_type_len = 16;
    http.body = allowed;
    http.body_len = sizeof(allowed) - 1;
    wh_admission_serve(&validate, &http, test_admit, (void *)"allow", &res, NULL);
    wh_buf_free(&res.body);

    wh_metrics_render(registry, &text);
    for (const char *const *line =
             (const char *const[]){"webhookd_admission_reviews_total{endpoint=\"inject\",result=\"allowed\"} 1",
                                   "webhookd_admission_reviews_total{endpoint=\"inject\",result=\"patched\"} 1",
                                   "webhookd_admission_reviews_total{endpoint=\"inject\",result=\"denied\"} 1",
                                   "webhookd_admission_reviews_total{endpoint=\"inject\",result=\"undecodable\"} 1",
                                   "webhookd_admission_reviews_total{endpoint=\"inject\",result=\"rejected\"} 3",
                                   "webhookd_admission_reviews_total{endpoint=\"validate\",result=\"allowed\"} 1",
                                   NULL};
         *line != NULL; line++)
        if (strstr(text.data, *line) == NULL)
            fail_msg("no %s in\n%s", *line, text.data);
    /* a family of another shape under the name is refused */
    wh_metrics_free(registry);
    registry = wh_metrics_new();
    assert_non_null(wh_metrics_gauge(registry, "webhookd_admission_reviews_total", "taken", NULL));
    assert_int_equal(wh_admission_stats_init(&inject, "inject", registry, NULL), WH_E_CONFLICT);
    wh_metrics_free(registry);
    wh_buf_free(&text);
}

static void test_deny_clears_previous(void **state)
{
    wh_admission_response resp = {0};

    resp.allowed = 1;
    assert_int_equal(set_patch(&resp, "[]"), WH_OK);
    assert_int_equal(wh_admission_warn(&resp, "w%d", 1), WH_OK);
    assert_int_equal(wh_admission_deny(&resp, 0, "no %s", "way"), WH_OK);
    assert_false(resp.allowed);
    assert_null(resp.patch.data);
    assert_null(resp.warnings);
    assert_string_equal(resp.message, "no way");
    wh_admission_response_clear(&resp);
    assert_null(resp.message);
}

static void test_encode_untyped(void **state)
{
    wh_admission_response resp = {0};
    wh_buf out = WH_BUF_INIT;

    resp.allowed = 1;
    wh_admission_encode(NULL, &resp, &out);
    assert_string_equal(out.data, "{\"response\":{\"uid\":\"\",\"allowed\":true}}");
    wh_buf_free(&out);
}

static void test_decode_direct(void **state)
{
    static const char body[] = "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                               "\"request\":{\"uid\":\"x\",\"operation\":\"DELETE\",\"namespace\":\"n\"}}";
    wh_admission_request req;
    json_t *review = NULL;
    wh_err err;

    assert_int_equal(wh_admission_decode(body, strlen(body), &review, &req, &err), WH_OK);
    assert_string_equal(req.api_version, WH_ADMISSION_V1BETA1);
    assert_string_equal(req.uid, "x");
    assert_string_equal(req.operation, "DELETE");
    assert_string_equal(req.namespace, "n");
    assert_string_equal(req.name, "");
    json_decref(review);

    assert_int_equal(wh_admission_decode("nope", 4, &review, &req, &err), WH_E_PARSE);
    assert_null(review);
    assert_null(req.api_version);
    assert_non_null(strstr(wh_err_msg(&err), "invalid JSON"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest helpers[] = {
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_deny_clears_previous),
        cmocka_unit_test(test_encode_untyped),
        cmocka_unit_test(test_decode_direct),
    };
    struct CMUnitTest *cases = NULL;
    json_error_t jerr;
    json_t *doc;
    size_t i, n;
    int failed;

    if (argc != 2) {
        fprintf(stderr, "usage: %s cases.json\n", argv[0]);
        return 2;
    }
    if ((doc = json_load_file(argv[1], 0, &jerr)) == NULL || !json_is_array(doc) || json_array_size(doc) == 0) {
        fprintf(stderr, "%s: cannot load cases: %s\n", argv[1], jerr.text);
        return 2;
    }
    n = json_array_size(doc);
    cases = wh_calloc(n, sizeof(*cases));
    for (i = 0; i < n; i++) {
        cases[i].name = json_string_value(json_object_get(json_array_get(doc, i), "name"));
        cases[i].test_func = run_case;
        cases[i].initial_state = json_array_get(doc, i);
    }
    failed = cmocka_run_group_tests_name("admission helpers", helpers, NULL, NULL);
    failed += _cmocka_run_group_tests("admission cases", cases, n, NULL, NULL);
    free(cases);
    json_decref(doc);
    return failed != 0;
}
