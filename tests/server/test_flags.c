/*
 * test_flags.c - webhookd's flag table: defaults, WEBHOOKD_* environment,
 * command line precedence, value syntax and errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "wh_server.h"

typedef struct parsed {
    wh_server_config cfg;
    wh_server_flag rows[WH_SERVER_CORE_FLAGS + 2];
    const char *extra;
} parsed;

static wh_code parse(parsed *p, char **argv, char **env, wh_err *err)
{
    int argc = 0;

    memset(p, 0, sizeof(*p));
    wh_server_core_flags(&p->cfg, p->rows, WH_SERVER_CORE_FLAGS);
    p->rows[WH_SERVER_CORE_FLAGS] =
        (wh_server_flag){"inject-config", WH_FLAG_STRING, &p->extra, "/etc/istio/inject", "endpoint flag"};
    while (argv[argc] != NULL)
        argc++;
    return wh_server_flags_parse(p->rows, argc, argv, env, err);
}

static void test_defaults(void **state)
{
    parsed p;
    char *argv[] = {"webhookd", NULL};
    char *env[] = {NULL};

    assert_int_equal(parse(&p, argv, env, NULL), WH_OK);
    assert_string_equal(p.cfg.listen, ":8443");
    assert_string_equal(p.cfg.monitoring_listen, "");
    assert_int_equal(p.cfg.threads, 0);
    assert_int_equal(p.cfg.http2, 0);
    assert_int_equal(p.cfg.max_request_bytes, 6291456);
    assert_true(p.cfg.shutdown_timeout > 0);
    assert_string_equal(p.cfg.log_level, "info");
    assert_string_equal(p.cfg.log_format, "json");
    assert_string_equal(p.extra, "/etc/istio/inject");
}

static void test_env_then_argv(void **state)
{
    parsed p;
    char *argv[] = {"webhookd", "--listen=127.0.0.1:9443", "--threads", "3", "--http2", "--inject-config", "/x", NULL};
    char *env[] = {"WEBHOOKD_LISTEN=:1",
                   "WEBHOOKD_MAX_REQUEST_BYTES=512KiB",
                   "WEBHOOKD_SHUTDOWN_TIMEOUT=500ms",
                   "WEBHOOKD_KUBECONFIG=/k.yaml",
                   "WEBHOOKD_LOG_FORMAT=text",
                   "WEBHOOKD_INJECT_CONFIG=/env",
                   "OTHER=1",
                   NULL};

    assert_int_equal(parse(&p, argv, env, NULL), WH_OK);
    assert_string_equal(p.cfg.listen, "127.0.0.1:9443"); /* argv beats env */
    assert_int_equal(p.cfg.threads, 3);
    assert_int_equal(p.cfg.http2, 1);
    assert_int_equal(p.cfg.max_request_bytes, 512 * 1024);
    assert_true(p.cfg.shutdown_timeout > 0.499 && p.cfg.shutdown_timeout < 0.501);
    assert_string_equal(p.cfg.kubeconfig, "/k.yaml");
    assert_string_equal(p.cfg.log_format, "text");
    assert_string_equal(p.extra, "/x");
}

static void test_bool_forms(void **state)
{
    parsed p;
    char *a1[] = {"webhookd", "--http2=false", NULL};
    char *a2[] = {"webhookd", "--help", NULL};
    char *env[] = {"WEBHOOKD_HTTP2=true", NULL};

    assert_int_equal(parse(&p, a1, env, NULL), WH_OK);
    assert_int_equal(p.cfg.http2, 0);
    assert_int_equal(parse(&p, a2, env, NULL), WH_OK);
    assert_int_equal(p.cfg.http2, 1);
    assert_int_equal(p.cfg.help, 1);
}

static void test_errors(void **state)
{
    static char *cases[][3] = {
        {"--nope", NULL, NULL},
        {"listen", NULL, NULL},
        {"--threads", "x", NULL},
        {"--threads", NULL, NULL},
        {"--http2=maybe", NULL, NULL},
        {"--max-request-bytes=6XB", NULL, NULL},
        {"--shutdown-timeout=-1s", NULL, NULL},
        {"--shutdown-timeout=1d", NULL, NULL},
    };
    char *env[] = {NULL};
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        parsed p;
        wh_err err;
        char *argv[4] = {"webhookd", cases[i][0], cases[i][1], NULL};
        wh_err_clear(&err);
        assert_int_equal(parse(&p, argv, env, &err), WH_E_INVALID);
        assert_true(strlen(err.msg) > 0);
    }
    {
        parsed p;
        wh_err err;
        char *argv[] = {"webhookd", NULL};
        char *bad_env[] = {"WEBHOOKD_THREADS=many", NULL};
        assert_int_equal(parse(&p, argv, bad_env, &err), WH_E_INVALID);
        assert_non_null(strstr(err.msg, "WEBHOOKD_THREADS"));
    }
}

static void test_value_parsers(void **state)
{
    size_t n;
    double s;

    assert_int_equal(wh_server_parse_bytes("6291456", &n), WH_OK);
    assert_int_equal(n, 6291456);
    assert_int_equal(wh_server_parse_bytes("6MiB", &n), WH_OK);
    assert_int_equal(n, 6291456);
    assert_int_equal(wh_server_parse_bytes("1Gi", &n), WH_OK);
    assert_int_equal(n, 1073741824);
    assert_int_equal(wh_server_parse_bytes("12K", &n), WH_OK);
    assert_int_equal(n, 12288);
    assert_int_equal(wh_server_parse_bytes("-1", &n), WH_E_INVALID);
    assert_int_equal(wh_server_parse_bytes("1 MiB", &n), WH_E_INVALID);
    assert_int_equal(wh_server_parse_bytes("99999999999999999999", &n), WH_E_INVALID);
    assert_int_equal(wh_server_parse_seconds("30s", &s), WH_OK);
    assert_true(s == 30);
    assert_int_equal(wh_server_parse_seconds("2m", &s), WH_OK);
    assert_true(s == 120);
    assert_int_equal(wh_server_parse_seconds("250ms", &s), WH_OK);
    assert_true(s == 0.25);
    assert_int_equal(wh_server_parse_seconds("1.5", &s), WH_OK);
    assert_true(s == 1.5);
    assert_int_equal(wh_server_parse_seconds("soon", &s), WH_E_INVALID);
    assert_int_equal(wh_server_parse_seconds("nan", &s), WH_E_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_env_then_argv), cmocka_unit_test(test_bool_forms),
        cmocka_unit_test(test_errors),   cmocka_unit_test(test_value_parsers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
