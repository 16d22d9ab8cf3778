/*
 * test_release.c - unit tests of handlers/inject/wh_inject_release.c:
 * version parsing, the detection order (explicit > ConfigMap label >
 * values.global.tag > newest), newest behaviour for unknown or newer
 * releases, 1.20's behaviour with a warning for older ones, and the table's
 * own consistency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "wh_inject_release.h"

static void version_parsing(void **state)
{
    static const struct {
        const char *text;
        int ok, major, minor, patch;
    } cases[] = {
        {"1.21.0", 1, 1, 21, 0},
        {"1.21", 1, 1, 21, -1},
        {"v1.22.3", 1, 1, 22, 3},
        {" 1.26.0\n", 1, 1, 26, 0},
        {"1.31.0-alpha.0", 1, 1, 31, 0},
        {"1.24.0-distroless", 1, 1, 24, 0},
        {"1.29.1+build.5", 1, 1, 29, 1},
        {"2.0", 1, 2, 0, -1},
        {"latest", 0, 0, 0, 0},
        {"master-2026-08-22T19-00-53", 0, 0, 0, 0},
        {"1", 0, 0, 0, 0},
        {"1.", 0, 0, 0, 0},
        {"1.x", 0, 0, 0, 0},
        {"1.21.0-", 0, 0, 0, 0},
        {"1.21.0 beta", 0, 0, 0, 0},
        {"", 0, 0, 0, 0},
        {"   ", 0, 0, 0, 0},
        {"1.99999999999999999999", 0, 0, 0, 0},
        {"1.21.0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, 0, 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_istio_version v;
        wh_err err = {0};
        wh_code rc = wh_istio_version_parse(cases[i].text, &v, &err);
        if (!cases[i].ok) {
            if (rc == WH_OK)
                fail_msg("\"%s\" parsed", cases[i].text);
            assert_true(strlen(err.msg) > 0);
            continue;
        }
        if (rc != WH_OK)
            fail_msg("\"%s\": %s", cases[i].text, err.msg);
        assert_int_equal(v.major, cases[i].major);
        assert_int_equal(v.minor, cases[i].minor);
        assert_int_equal(v.patch, cases[i].patch);
    }
    assert_int_not_equal(wh_istio_version_parse(NULL, &(wh_istio_version){0}, NULL), WH_OK);
}

static wh_inject_release detect(const char *explicit_, wh_release_source src, const char *label, const char *values)
{
    wh_inject_release r;
    json_t *v = values ? json_loads(values, 0, NULL) : NULL;
    wh_release_hints h = {explicit_, src, label, v};
    wh_err err = {0};

    if (wh_inject_release_detect(&h, &r, &err) != WH_OK)
        fail_msg("detect: %s", err.msg);
    json_decref(v);
    return r;
}

static void detection_order(void **state)
{
    const char *tag121 = "{\"global\":{\"tag\":\"1.21.2\"}}";
    wh_inject_release r;
    (void)state;

    /* explicit beats label beats tag */
    r = detect("1.22.0", WH_RELEASE_FILE, "1.23.0", tag121);
    assert_int_equal(r.source, WH_RELEASE_FILE);
    assert_int_equal(r.behaves.minor, 22);
    r = detect("1.26", WH_RELEASE_FLAG, "1.23.0", tag121);
    assert_int_equal(r.source, WH_RELEASE_FLAG);
    assert_int_equal(r.behaves.minor, 26);
    r = detect(NULL, WH_RELEASE_FILE, "1.23.0", tag121);
    assert_int_equal(r.source, WH_RELEASE_LABEL);
    assert_int_equal(r.behaves.minor, 23);
    /* a label that is no version is skipped, the tag is next */
    r = detect(NULL, WH_RELEASE_FILE, "canary", tag121);
    assert_int_equal(r.source, WH_RELEASE_TAG);
    assert_int_equal(r.behaves.minor, 21);
    assert_string_equal(r.declared.text, "1.21.2");
    /* Helm may keep a tag as a number */
    r = detect(NULL, WH_RELEASE_FILE, NULL, "{\"global\":{\"tag\":1.25}}");
    assert_int_equal(r.source, WH_RELEASE_TAG);
    assert_int_equal(r.behaves.minor, 25);
    /* a tag that is no version, or none: the newest behaviour */
    r = detect(NULL, WH_RELEASE_FILE, NULL, "{\"global\":{\"tag\":\"latest\"}}");
    assert_int_equal(r.source, WH_RELEASE_NEWEST);
    assert_string_equal(r.warning, "");
    r = detect(NULL, WH_RELEASE_FILE, NULL, NULL);
    assert_int_equal(r.source, WH_RELEASE_NEWEST);
    {
        wh_inject_release n;
        wh_inject_release_newest(&n);
        assert_int_equal(wh_istio_version_cmp(&n.behaves, &r.behaves), 0);
    }
}

static void explicit_garbage_is_an_error(void **state)
{
    wh_inject_release r;
    wh_release_hints h = {"one.twenty", WH_RELEASE_FLAG, "1.22.0", NULL};
    wh_err err = {0};
    (void)state;

    assert_int_equal(wh_inject_release_detect(&h, &r, &err), WH_E_INVALID);
    assert_non_null(strstr(err.msg, "--istio-version"));
    assert_non_null(strstr(err.msg, "one.twenty"));
    h.explicit_source = WH_RELEASE_FILE;
    assert_int_equal(wh_inject_release_detect(&h, &r, &err), WH_E_INVALID);
    assert_non_null(strstr(err.msg, "version file"));
}

/* An unknown newer release (and master's pre-release) behaves as the newest. */
static void newer_gets_newest_behaviour(void **state)
{
    static const char *const newer[] = {"1.31.0-alpha.0", "1.32.0", "1.40.1", "2.0.0"};
    wh_inject_release newest, r;
    (void)state;

    wh_inject_release_newest(&newest);
    for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
        r = detect(newer[i], WH_RELEASE_FILE, NULL, NULL);
        assert_string_equal(r.warning, "");
        for (int b = 0; b < WH_REL_NBEHAVIOURS; b++)
            if (wh_inject_release_has(&r, b) != wh_inject_release_has(&newest, b))
                fail_msg("%s differs from the newest behaviour in row %d", newer[i], b);
    }
    /* NULL is the newest too */
    for (int b = 0; b < WH_REL_NBEHAVIOURS; b++)
        assert_int_equal(wh_inject_release_has(NULL, b), wh_inject_release_has(&newest, b));
}

/* Older than 1.20: 1.20's behaviour, with a warning saying so. */
static void older_gets_oldest_with_warning(void **state)
{
    wh_inject_release r, r120;
    char line[512];
    (void)state;

    r = detect("1.19.3", WH_RELEASE_FLAG, NULL, NULL);
    r120 = detect("1.20.0", WH_RELEASE_FLAG, NULL, NULL);
    assert_int_equal(r.behaves.minor, 20);
    assert_non_null(strstr(r.warning, "1.19.3"));
    assert_non_null(strstr(r.warning, "1.20's behaviour"));
    assert_string_equal(r120.warning, "");
    for (int b = 0; b < WH_REL_NBEHAVIOURS; b++)
        assert_int_equal(wh_inject_release_has(&r, b), wh_inject_release_has(&r120, b));
    wh_inject_release_describe(&r, line, sizeof(line));
    assert_non_null(strstr(line, "from flag 1.19.3"));
    assert_non_null(strstr(line, "1.20's behaviour"));
}

/* Rows in enum order, each naming a bound, bounds parseable and ordered,
 * and the rows the goldens exercise at their edges. */
static void table_rows(void **state)
{
    size_t n;
    const wh_release_row *t = wh_inject_release_table(&n);
    (void)state;

    assert_int_equal(n, WH_REL_NBEHAVIOURS);
    for (size_t i = 0; i < n; i++) {
        wh_istio_version a, b;
        assert_int_equal(t[i].id, (int)i);
        assert_true(t[i].first[0] || t[i].last[0]);
        assert_true(strlen(t[i].name) > 0 && strlen(t[i].what) > 0);
        if (t[i].first[0])
            assert_int_equal(wh_istio_version_parse(t[i].first, &a, NULL), WH_OK);
        if (t[i].last[0])
            assert_int_equal(wh_istio_version_parse(t[i].last, &b, NULL), WH_OK);
        if (t[i].first[0] && t[i].last[0])
            assert_true(wh_istio_version_cmp(&a, &b) <= 0);
        /* a backport names a patch release (inside the row's minors it ends
         * the behaviour, outside them it begins it) */
        for (const char *p = t[i].backports; *p;) {
            char word[16];
            int used;
            wh_istio_version fix;
            assert_int_equal(sscanf(p, " %15s%n", word, &used), 1);
            assert_int_equal(wh_istio_version_parse(word, &fix, NULL), WH_OK);
            assert_true(fix.patch > 0);
            p += used;
            while (*p == ' ')
                p++;
        }
    }
    {
        wh_inject_release r121 = detect("1.21.0", WH_RELEASE_FILE, NULL, NULL);
        wh_inject_release r122 = detect("1.22.0", WH_RELEASE_FILE, NULL, NULL);
        wh_inject_release r125 = detect("1.25.0", WH_RELEASE_FILE, NULL, NULL);
        wh_inject_release r126 = detect("1.26.0", WH_RELEASE_FILE, NULL, NULL);
        assert_true(wh_inject_release_has(&r121, WH_REL_DEFAULT_ZIPKIN_TRACER));
        assert_false(wh_inject_release_has(&r122, WH_REL_DEFAULT_ZIPKIN_TRACER));
        assert_false(wh_inject_release_has(&r125, WH_REL_MULTUS_JSON_NAMESPACE));
        assert_true(wh_inject_release_has(&r126, WH_REL_MULTUS_JSON_NAMESPACE));
    }
}

/* A row backports ended within its minors (and began, then ended again, in
 * 1.20): by patch there, by minor elsewhere; a version without a patch is the
 * minor's first release. */
static void backported_rows(void **state)
{
    static const struct {
        const char *v;
        int has;
    } cases[] = {{"1.20.0", 0}, {"1.20.1", 1}, {"1.20.6", 1},      {"1.20.7", 0}, {"1.20.9", 0},
                 {"1.21.0", 1}, {"1.21", 1},   {"v1.21.2", 1},     {"1.21.3", 0}, {"1.21.6", 0},
                 {"1.22.0", 1}, {"1.22", 1},   {"1.22.1-rc.0", 0}, {"1.22.8", 0}, {"1.23.0", 0}};
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_inject_release r = detect(cases[i].v, WH_RELEASE_FLAG, NULL, NULL);
        if (wh_inject_release_has(&r, WH_REL_OVERRIDE_RESETS_FOREIGN_UID) != cases[i].has)
            fail_msg("%s: override-resets-foreign-uid should be %d", cases[i].v, cases[i].has);
    }
}

/* A row a backport began within a minor outside its range: from that patch
 * on there, by minor inside it. */
static void backports_that_begin(void **state)
{
    static const struct {
        const char *v;
        wh_release_behaviour b;
        int has;
    } cases[] = {
        {"1.22.8", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.23.5", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.23.6", WH_REL_MULTUS_JSON_NAMESPACE, 1},
        {"1.24.0", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.24.3", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.24.4", WH_REL_MULTUS_JSON_NAMESPACE, 1},
        {"1.25", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.25.0", WH_REL_MULTUS_JSON_NAMESPACE, 0},
        {"1.25.1", WH_REL_MULTUS_JSON_NAMESPACE, 1},
        {"1.25.5", WH_REL_MULTUS_JSON_NAMESPACE, 1},
        {"1.26.0", WH_REL_MULTUS_JSON_NAMESPACE, 1},
        {"1.22.8", WH_REL_OPENSHIFT_PROXY_UID_RESET, 0},
        {"1.23.0", WH_REL_OPENSHIFT_PROXY_UID_RESET, 0},
        {"1.23.1", WH_REL_OPENSHIFT_PROXY_UID_RESET, 1},
        {"1.23.6", WH_REL_OPENSHIFT_PROXY_UID_RESET, 1},
        {"1.24.0", WH_REL_OPENSHIFT_PROXY_UID_RESET, 1},
        {"1.26.8", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 0},
        {"1.27.5", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 0},
        {"1.27.6", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 1},
        {"1.28.3", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 0},
        {"1.28.4", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 1},
        {"1.29.0", WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS, 1},
        {"1.20.6", WH_REL_ADJUST_INIT_CONTAINER_USER, 0},
        {"1.20.7", WH_REL_ADJUST_INIT_CONTAINER_USER, 1},
        {"1.21.2", WH_REL_ADJUST_INIT_CONTAINER_USER, 0},
        {"1.21.3", WH_REL_ADJUST_INIT_CONTAINER_USER, 1},
        {"1.22", WH_REL_ADJUST_INIT_CONTAINER_USER, 0},
        {"1.22.1", WH_REL_ADJUST_INIT_CONTAINER_USER, 1},
        {"1.23.0", WH_REL_ADJUST_INIT_CONTAINER_USER, 1},
        {"1.30.3", WH_REL_ADJUST_INIT_CONTAINER_USER, 1},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_inject_release r = detect(cases[i].v, WH_RELEASE_FLAG, NULL, NULL);
        if (wh_inject_release_has(&r, cases[i].b) != cases[i].has)
            fail_msg("%s: behaviour %d should be %d", cases[i].v, (int)cases[i].b, cases[i].has);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_parsing),
        cmocka_unit_test(detection_order),
        cmocka_unit_test(explicit_garbage_is_an_error),
        cmocka_unit_test(newer_gets_newest_behaviour),
        cmocka_unit_test(older_gets_oldest_with_warning),
        cmocka_unit_test(table_rows),
        cmocka_unit_test(backported_rows),
        cmocka_unit_test(backports_that_begin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
