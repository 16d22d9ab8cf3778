/*
 * test_kube_unit.c - the pure parts of wh_kube that tag analysis and
 * kubeconfig loading stand on: label selector evaluation (the API server's
 * semantics, including malformed selectors), the API server's name rules,
 * RFC 3339 timestamps (exec credential expiry) and base64 (inline
 * certificates).  Declarative tables, one runner per table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube_internal.h"
#include "wh_kube.h"

typedef struct selector_case {
    const char *selector; /* JSON or NULL */
    const char *labels;   /* JSON or NULL */
    int want;             /* 1 match, 0 no match, -1 malformed */
} selector_case;

static const selector_case selector_cases[] = {
    {NULL, "{\"a\":\"b\"}", 1},
    {"{}", NULL, 1},
    {"{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"b\",\"c\":\"d\"}", 1},
    {"{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"x\"}", 0},
    {"{\"matchLabels\":{\"a\":\"b\"}}", NULL, 0},
    /* NotIn matches when the label is absent: the sidecar.istio.io/inject rule */
    {"{\"matchExpressions\":[{\"key\":\"inject\",\"operator\":\"NotIn\",\"values\":[\"false\"]}]}", "{}", 1},
    {"{\"matchExpressions\":[{\"key\":\"inject\",\"operator\":\"NotIn\",\"values\":[\"false\"]}]}",
     "{\"inject\":\"false\"}", 0},
    {"{\"matchExpressions\":[{\"key\":\"rev\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}", "{\"rev\":\"b\"}", 1},
    {"{\"matchExpressions\":[{\"key\":\"rev\",\"operator\":\"In\",\"values\":[\"a\"]}]}", "{}", 0},
    {"{\"matchExpressions\":[{\"key\":\"rev\",\"operator\":\"Exists\"}]}", "{\"rev\":\"\"}", 1},
    {"{\"matchExpressions\":[{\"key\":\"rev\",\"operator\":\"DoesNotExist\"}]}", "{\"rev\":\"\"}", 0},
    {"{\"matchExpressions\":[{\"key\":\"rev\",\"operator\":\"DoesNotExist\"}]}", "{\"other\":\"x\"}", 1},
    /* all requirements must hold */
    {"{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"c\",\"operator\":\"DoesNotExist\"}]}",
     "{\"a\":\"b\",\"c\":\"d\"}", 0},
    /* malformed: unknown operator, In without values, non-string matchLabels value, wrong types */
    {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Like\",\"values\":[\"x\"]}]}", "{}", -1},
    {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[]}]}", "{}", -1},
    {"{\"matchLabels\":{\"a\":1}}", "{\"a\":\"1\"}", -1},
    {"{\"matchExpressions\":{}}", "{}", -1},
    {"[]", "{}", -1},
};

static void test_selectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(selector_cases) / sizeof(selector_cases[0]); i++) {
        const selector_case *c = &selector_cases[i];
        json_t *sel = c->selector != NULL ? json_loads(c->selector, 0, NULL) : NULL;
        json_t *labels = c->labels != NULL ? json_loads(c->labels, 0, NULL) : NULL;
        int got = wh_kube_selector_matches(sel, labels);
        if (got != c->want)
            fail_msg("case %zu: %s on %s: got %d, want %d", i, c->selector ? c->selector : "NULL",
                     c->labels ? c->labels : "NULL", got, c->want);
        json_decref(sel);
        json_decref(labels);
    }
}

typedef struct name_case {
    wh_code (*check)(const char *, wh_err *);
    const char *name;
    int ok;
} name_case;

static const name_case name_cases[] = {
    {wh_kube_check_dns1123_label, "prod-stable", 1},
    {wh_kube_check_dns1123_label, "1-24", 1},
    {wh_kube_check_dns1123_label, "a", 1},
    {wh_kube_check_dns1123_label, "", 0},
    {wh_kube_check_dns1123_label, "Prod", 0},
    {wh_kube_check_dns1123_label, "prod_1", 0},
    {wh_kube_check_dns1123_label, "-prod", 0},
    {wh_kube_check_dns1123_label, "prod-", 0},
    {wh_kube_check_dns1123_label, "a.b", 0},
    {wh_kube_check_dns1123_label, "a23456789012345678901234567890123456789012345678901234567890123", 1},
    {wh_kube_check_dns1123_label, "a234567890123456789012345678901234567890123456789012345678901234", 0},
    {wh_kube_check_dns1123_subdomain, "istio-revision-tag-prod", 1},
    {wh_kube_check_dns1123_subdomain, "a.b-c.d", 1},
    {wh_kube_check_dns1123_subdomain, "a..b", 0},
    {wh_kube_check_dns1123_subdomain, ".a", 0},
    {wh_kube_check_dns1123_subdomain, "a.", 0},
    {wh_kube_check_dns1123_subdomain, "A.b", 0},
    {wh_kube_check_label_value, "", 1},
    {wh_kube_check_label_value, "My_Value.1", 1},
    {wh_kube_check_label_value, "_x", 0},
    {wh_kube_check_label_value, "x y", 0},
};

static void test_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
        wh_err err = {0};
        int ok = name_cases[i].check(name_cases[i].name, &err) == WH_OK;
        if (ok != name_cases[i].ok)
            fail_msg("case %zu: \"%s\": got %s (%s)", i, name_cases[i].name, ok ? "valid" : "invalid", err.msg);
        if (!ok && strstr(err.msg, name_cases[i].name) == NULL)
            fail_msg("case %zu: the message does not name the value: %s", i, err.msg);
    }
}

static void test_rfc3339(void **state)
{
    (void)state;
    assert_int_equal(kube_parse_rfc3339("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T12:34:56Z"), 1709210096);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T12:34:56.123456789Z"), 1709210096);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T14:34:56+02:00"), 1709210096);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T07:04:56-05:30"), 1709210096);
    assert_int_equal(kube_parse_rfc3339("2024-02-29 12:34:56"), -1);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T12:34:56"), -1);
    assert_int_equal(kube_parse_rfc3339("2024-02-29T12:34:56Zjunk"), -1);
    assert_int_equal(kube_parse_rfc3339("yesterday"), -1);
}

static void test_base64(void **state)
{
    static const struct {
        const char *in, *out;
        size_t len;
    } cases[] = {{"", "", 0},
                 {"Zg==", "f", 1},
                 {"Zm8=", "fo", 2},
                 {"Zm9v", "foo", 3},
                 {"Zm9vYg", "foob", 4},
                 {"Zm9v\nYmFy", "foobar", 6},
                 {"AP8=", "\x00\xff", 2}};
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_blob b = {0};
        assert_int_equal(kube_base64_decode(cases[i].in, &b, NULL), WH_OK);
        assert_int_equal(b.len, cases[i].len);
        assert_memory_equal(b.data, cases[i].out, cases[i].len);
        free(b.data);
    }
    {
        kube_blob b = {0};
        wh_err err = {0};
        assert_int_equal(kube_base64_decode("Zm9v*", &b, &err), WH_E_PARSE);
        assert_non_null(strstr(err.msg, "offset 4"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
