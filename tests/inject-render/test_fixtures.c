/*
 * test_fixtures.c - one runner for the render side's declarative fixtures:
 * `test_fixtures FAMILY FILE` reads a JSON array of cases from FILE and checks
 * each against the function the family names.  Prints every failing case and
 * exits non-zero if any failed.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_inject_render.h"

static int failures;

static void fail(size_t i, const char *what, const json_t *want, const json_t *got)
{
    char *w = want ? json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : strdup("(none)");
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : strdup("(none)");
    fprintf(stderr, "case %zu: %s: want %s, got %s\n", i, what, w, g);
    free(w);
    free(g);
    failures++;
}

static void check_path(size_t i, json_t *c)
{
    const char *suffix = json_string_value(json_object_get(c, "suffix"));
    char *rev = NULL;
    json_t *envs = NULL, *got_rev;

    if (wh_inject_path_parse(suffix, strlen(suffix), &rev, &envs, NULL) != WH_OK) {
        fail(i, "parse failed", NULL, NULL);
        return;
    }
    got_rev = rev ? json_string(rev) : json_null();
    if (!json_equal(got_rev, json_object_get(c, "rev")))
        fail(i, "rev", json_object_get(c, "rev"), got_rev);
    if (!json_equal(envs, json_object_get(c, "envs")))
        fail(i, "envs", json_object_get(c, "envs"), envs);
    json_decref(got_rev);
    json_decref(envs);
    free(rev);
}

/* {"flags": [[key, value]...], "nodes": {...}|null, "nodeName": s|null, "native": bool} */
static void check_native(size_t i, json_t *c)
{
    wh_inject_settings s = WH_INJECT_SETTINGS_INIT;
    json_t *flag, *nodes = json_object_get(c, "nodes"), *want = json_object_get(c, "native");
    const char *node;
    size_t k;
    wh_err err;

    json_array_foreach(json_object_get(c, "flags"), k, flag)
    {
        wh_code rc = wh_inject_settings_set(&s, json_string_value(json_array_get(flag, 0)),
                                            json_string_value(json_array_get(flag, 1)), &err);
        if (rc != WH_OK) {
            json_t *got = json_string(wh_err_msg(&err));
            if (!json_equal(json_object_get(c, "error"), got))
                fail(i, "flag error", json_object_get(c, "error"), got);
            json_decref(got);
            wh_inject_settings_clear(&s);
            return;
        }
    }
    if (json_is_object(nodes)) {
        const char *name;
        json_t *v;
        json_object_foreach(nodes, name, v) wh_inject_settings_set_node(&s, name, json_string_value(v));
    }
    node = json_string_value(json_object_get(c, "nodeName"));
    if (wh_inject_settings_native(&s, node) != json_is_true(want)) {
        json_t *got = json_boolean(!json_is_true(want));
        fail(i, "native", want, got);
        json_decref(got);
    }
    if (json_object_get(c, "platform")) {
        json_t *got = json_string(wh_inject_settings_platform(&s));
        if (!json_equal(got, json_object_get(c, "platform")))
            fail(i, "platform", json_object_get(c, "platform"), got);
        json_decref(got);
    }
    if (json_object_get(c, "compliance")) {
        json_t *got = json_string(wh_inject_settings_compliance(&s));
        if (!json_equal(got, json_object_get(c, "compliance")))
            fail(i, "compliance", json_object_get(c, "compliance"), got);
        json_decref(got);
    }
    wh_inject_settings_clear(&s);
}

struct family {
    const char *name;
    void (*check)(size_t i, json_t *c);
};

static const struct family families[] = {
    {"path", check_path},
    {"native", check_native},
};

int main(int argc, char **argv)
{
    json_error_t jerr;
    json_t *cases, *c;
    size_t i, n = sizeof(families) / sizeof(families[0]);
    const struct family *f = NULL;

    if (argc != 3) {
        fprintf(stderr, "usage: %s FAMILY FILE\n", argv[0]);
        return 2;
    }
    for (i = 0; i < n; i++)
        if (strcmp(families[i].name, argv[1]) == 0)
            f = &families[i];
    if (f == NULL) {
        fprintf(stderr, "unknown family %s\n", argv[1]);
        return 2;
    }
    if ((cases = json_load_file(argv[2], 0, &jerr)) == NULL || !json_is_array(cases) || json_array_size(cases) == 0) {
        fprintf(stderr, "%s: not a non-empty JSON array: %s (line %d)\n", argv[2], jerr.text, jerr.line);
        return 2;
    }
    json_array_foreach(cases, i, c) f->check(i, c);
    printf("%s: %zu cases, %d failures\n", argv[1], json_array_size(cases), failures);
    json_decref(cases);
    return failures == 0 ? 0 : 1;
}
