/*
 * test_common.c - unit tests of common/: buffers, error messages, the
 * metrics registry (exposition format, concurrency) and YAML edge cases that
 * the differential test cannot express (limits, errors).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wh_buf.h"
#include "wh_metrics.h"
#include "wh_result.h"
#include "wh_yaml.h"

static void test_buf(void **state)
{
    wh_buf b = WH_BUF_INIT;
    (void)state;
    wh_buf_puts(&b, "abc");
    wh_buf_printf(&b, "-%d-%s", 42, "x");
    assert_string_equal(b.data, "abc-42-x");
    for (int i = 0; i < 10000; i++)
        wh_buf_putc(&b, 'z');
    assert_int_equal(b.len, 8 + 10000);
    wh_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    size_t n;
    char *s = wh_buf_steal(&b, &n);
    assert_non_null(s);
    assert_int_equal(n, 0);
    free(s);
    assert_null(b.data);
    wh_buf_free(&b);
}

static void test_err(void **state)
{
    wh_err err;
    (void)state;
    wh_err_clear(&err);
    assert_string_equal(wh_err_msg(&err), "ok");
    assert_int_equal(wh_err_set(&err, WH_E_INVALID, "bad %s", "thing"), WH_E_INVALID);
    assert_string_equal(wh_err_msg(&err), "bad thing");
    wh_err_prefix(&err, "while loading %s", "x.yaml");
    assert_string_equal(wh_err_msg(&err), "while loading x.yaml: bad thing");
    assert_int_equal(err.code, WH_E_INVALID);
    assert_int_equal(wh_err_set(NULL, WH_E_IO, "ignored"), WH_E_IO);
}

static void test_metrics_render(void **state)
{
    wh_metrics *r = wh_metrics_new();
    const char *const labels[] = {"path", "code", NULL};
    const double bounds[] = {0.1, 1, 5};
    wh_buf out = WH_BUF_INIT;
    (void)state;

    wh_metric *c = wh_metrics_counter(r, "requests_total", "Requests by path and code.", labels);
    wh_metric *g = wh_metrics_gauge(r, "inflight", "In flight.", NULL);
    wh_metric *h = wh_metrics_histogram(r, "latency_seconds", "Latency.", NULL, bounds, 3);
    assert_non_null(c);
    assert_ptr_equal(wh_metrics_counter(r, "requests_total", "x", labels), c);
    assert_null(wh_metrics_gauge(r, "requests_total", "x", labels));
    wh_metric_add(c, (const char *const[]){"/inject", "200"}, 1);
    wh_metric_add(c, (const char *const[]){"/inject", "200"}, 2);
    wh_metric_add(c, (const char *const[]){"/x\"y", "404"}, 1);
    wh_metric_add(c, (const char *const[]){"/inject", "200"}, -5); /* ignored: counters only go up */
    wh_metric_set(g, NULL, 7);
    wh_metric_observe(h, NULL, 0.05);
    wh_metric_observe(h, NULL, 0.5);
    wh_metric_observe(h, NULL, 100);
    assert_true(wh_metric_get(c, (const char *const[]){"/inject", "200"}) == 3);
    wh_metrics_render(r, &out);
    assert_string_equal(out.data, "# HELP requests_total Requests by path and code.\n"
                                  "# TYPE requests_total counter\n"
                                  "requests_total{path=\"/inject\",code=\"200\"} 3\n"
                                  "requests_total{path=\"/x\\\"y\",code=\"404\"} 1\n"
                                  "# HELP inflight In flight.\n"
                                  "# TYPE inflight gauge\n"
                                  "inflight 7\n"
                                  "# HELP latency_seconds Latency.\n"
                                  "# TYPE latency_seconds histogram\n"
                                  "latency_seconds_bucket{le=\"0.1\"} 1\n"
                                  "latency_seconds_bucket{le=\"1\"} 2\n"
                                  "latency_seconds_bucket{le=\"5\"} 2\n"
                                  "latency_seconds_bucket{le=\"+Inf\"} 3\n"
                                  "latency_seconds_sum 100.55\n"
                                  "latency_seconds_count 3\n");
    wh_buf_free(&out);
    wh_metrics_free(r);
}

static wh_metric *shared_counter;

static void *bump(void *arg)
{
    const char *const v[] = {arg};
    for (int i = 0; i < 20000; i++)
        wh_metric_add(shared_counter, v, 1);
    return NULL;
}

static void test_metrics_threads(void **state)
{
    wh_metrics *r = wh_metrics_new();
    const char *const labels[] = {"k", NULL};
    pthread_t t[4];
    char *names[] = {"a", "b", "a", "b"};
    (void)state;
    shared_counter = wh_metrics_counter(r, "c_total", "c", labels);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, bump, names[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_true(wh_metric_get(shared_counter, (const char *const[]){"a"}) == 40000);
    assert_true(wh_metric_get(shared_counter, (const char *const[]){"b"}) == 40000);
    wh_metrics_free(r);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Finding one series must not cost more as a family grows (issue #15: 40k
 * series made every update scan them all), and a family stops growing at
 * WH_METRICS_MAX_SERIES instead of taking all memory. */
static void test_metrics_many_series(void **state)
{
    wh_metrics *r = wh_metrics_new();
    const char *const labels[] = {"group", "resource", NULL};
    wh_metric *c = wh_metrics_counter(r, "c_total", "c", labels);
    wh_metric *one = wh_metrics_counter(r, "one_total", "one", labels);
    wh_buf out = WH_BUF_INIT;
    char g[32];
    double t0, few, many;
    (void)state;

    /* The series looked up is the newest: a list scan would pass 4000 others. */
    for (int i = 0; i < 4000; i++) {
        snprintf(g, sizeof(g), "g%d", i);
        wh_metric_add(c, (const char *const[]){g, "x"}, 1);
    }
    t0 = now_seconds();
    for (int i = 0; i < 200000; i++)
        wh_metric_add(one, (const char *const[]){"networking.istio.io", "gateways"}, 1);
    few = now_seconds() - t0;
    t0 = now_seconds();
    for (int i = 0; i < 200000; i++)
        wh_metric_add(c, (const char *const[]){"networking.istio.io", "gateways"}, 2);
    many = now_seconds() - t0;
    for (int i = 4000; i < 3 * WH_METRICS_MAX_SERIES; i++) {
        snprintf(g, sizeof(g), "g%d", i);
        wh_metric_add(c, (const char *const[]){g, "x"}, 1);
    }
    /* A scan over 4096 series costs ~1000x one comparison; allow noise. */
    assert_true(many < few * 10 + 0.05);
    assert_true(wh_metric_get(c, (const char *const[]){"networking.istio.io", "gateways"}) == 400000);
    assert_true(wh_metric_get(c, (const char *const[]){"g0", "x"}) == 1);
    assert_true(wh_metric_get(c, (const char *const[]){"g4094", "x"}) == 1);
    assert_true(wh_metric_get(c, (const char *const[]){"g4095", "x"}) == 0); /* dropped: the family is full */
    wh_metrics_render(r, &out);
    assert_non_null(strstr(out.data, "webhookd_metrics_series_dropped_total 8193\n"));
    wh_buf_free(&out);
    wh_metrics_free(r);
}

static void test_yaml_limits(void **state)
{
    wh_err err;
    json_t *v = NULL;
    (void)state;
    /* Deep nesting is refused, not a stack overflow. */
    wh_buf deep = WH_BUF_INIT;
    for (int i = 0; i < 2000; i++)
        wh_buf_putc(&deep, '[');
    assert_int_equal(wh_yaml_load(deep.data, deep.len, &v, &err), WH_E_LIMIT);
    wh_buf_free(&deep);
    /* A billion-laughs document is refused. */
    const char *bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
                       "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                       "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";
    assert_int_equal(wh_yaml_load(bomb, strlen(bomb), &v, &err), WH_E_LIMIT);
    assert_non_null(strstr(wh_err_msg(&err), "aliasing"));
    /* Errors say where. */
    assert_int_equal(wh_yaml_load("a: b\nc: [d\n", 11, &v, &err), WH_E_PARSE);
    assert_non_null(strstr(wh_err_msg(&err), "line"));
    /* More than one document is an error for wh_yaml_load. */
    assert_int_equal(wh_yaml_load("a: 1\n---\nb: 2\n", 14, &v, &err), WH_E_PARSE);
    /* Empty input is null. */
    assert_int_equal(wh_yaml_load("", 0, &v, &err), WH_OK);
    assert_true(json_is_null(v));
    json_decref(v);
    /* An alias is a copy: changing one does not change the other. */
    assert_int_equal(wh_yaml_load("a: &x {k: 1}\nb: *x\n", 19, &v, &err), WH_OK);
    json_object_set_new(json_object_get(v, "a"), "k", json_integer(2));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "b"), "k")), 1);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_err),
        cmocka_unit_test(test_metrics_render),
        cmocka_unit_test(test_metrics_threads),
        cmocka_unit_test(test_metrics_many_series),
        cmocka_unit_test(test_yaml_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
