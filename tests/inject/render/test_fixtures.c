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

#include "wh_go.h"
#include "wh_inject_decide.h"
#include "wh_inject_decode.h"
#include "wh_inject_pod.h"
#include "wh_alloc.h"
#include "wh_inject_proxyconfig.h"
#include "wh_inject_render.h"
#include "wh_inject_render_int.h"
#include "wh_inject_shape.h"
#include "wh_inject_revision_load.h"
#include "wh_yaml.h"

static int failures;

static void fail(size_t i, const char *what, const json_t *want, const json_t *got)
{
    char *w = want ? json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : wh_strdup("(none)");
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : wh_strdup("(none)");
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
    if (wh_inject_settings_native(&s, node, NULL) != json_is_true(want)) {
        json_t *got = json_boolean(!json_is_true(want));
        fail(i, "native", want, got);
        json_decref(got);
    }
    if (json_object_get(c, "platform")) {
        /* with "values": the platform of a revision with those values, also as its templates' env */
        const json_t *values = json_object_get(c, "values");
        wh_inject_settings rev;
        const char *env;
        json_t *got = json_string(values != NULL ? wh_inject_settings_revision_platform(&s, values)
                                                 : wh_inject_settings_platform(&s));
        if (!json_equal(got, json_object_get(c, "platform")))
            fail(i, "platform", json_object_get(c, "platform"), got);
        json_decref(got);
        wh_inject_settings_for_revision(&s, values, &rev);
        env = wh_inject_settings_getenv(&rev, "PLATFORM");
        got = json_string(env != NULL ? env : "");
        if (!json_equal(got, json_object_get(c, "platform")))
            fail(i, "env PLATFORM", json_object_get(c, "platform"), got);
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

static void expect_str(size_t i, const char *what, const json_t *want, const char *got)
{
    json_t *g = got ? json_string(got) : json_null();
    if (!json_equal(want ? want : json_null(), g))
        fail(i, what, want, g);
    json_decref(g);
}

/* A revision from {"config": "...yaml...", "values": {...}, "mesh": "...yaml...", "own": true|false}
 * (own: loaded as webhookd's embedded templates are, wh_inject_revision_load_own). */
static wh_inject_revision *load_rev(size_t i, json_t *c)
{
    const char *config = json_string_value(json_object_get(c, "config"));
    const char *mesh = json_string_value(json_object_get(c, "mesh"));
    char *values = json_object_get(c, "values") ? json_dumps(json_object_get(c, "values"), 0) : NULL;
    wh_inject_revision *rev = NULL;
    wh_err err;

    if ((json_is_true(json_object_get(c, "own")) ? wh_inject_revision_load_own : wh_inject_revision_load)(
            "default", config ? config : "", config ? strlen(config) : 0, values, values ? strlen(values) : 0, mesh,
            mesh ? strlen(mesh) : 0, &rev, &err) != WH_OK) {
        json_t *m = json_string(wh_err_msg(&err));
        fail(i, "revision load", NULL, m);
        json_decref(m);
    }
    free(values);
    return rev;
}

/* {"config": yaml, "pod": {...}, "kubeInject": bool, "inject": bool, "reason": s} */
static void check_decide(size_t i, json_t *c)
{
    wh_inject_revision *rev = load_rev(i, c);
    const char *reason = NULL;
    int got;

    if (rev == NULL)
        return;
    got = wh_inject_decide(rev, json_object_get(c, "pod"), json_is_true(json_object_get(c, "kubeInject")), &reason);
    if (got != json_is_true(json_object_get(c, "inject"))) {
        json_t *g = json_boolean(got);
        fail(i, "inject", json_object_get(c, "inject"), g);
        json_decref(g);
    }
    if (json_object_get(c, "reason"))
        expect_str(i, "reason", json_object_get(c, "reason"), reason);
    wh_inject_revision_unref(rev);
}

/* {"annotations": {...}, "error": s|null} */
static void check_validate(size_t i, json_t *c)
{
    size_t len = 0;
    char *msg = wh_inject_validate_annotations(json_object_get(c, "annotations"), NULL, &len);
    json_t *got = msg != NULL ? json_stringn(msg, len) : json_null(); /* it may hold a NUL */

    if (!json_equal(json_object_get(c, "error") ? json_object_get(c, "error") : json_null(), got))
        fail(i, "error", json_object_get(c, "error"), got);
    json_decref(got);
    free(msg);
}

/* {"pod": {...}, "name": s, "namespace": s, "kind": s, "apiVersion": s} */
static void check_deploymeta(size_t i, json_t *c)
{
    wh_inject_owner o;

    wh_inject_deploy_meta_of(json_object_get(c, "pod"), &o);
    expect_str(i, "name", json_object_get(c, "name"), o.name);
    expect_str(i, "namespace", json_object_get(c, "namespace"), o.namespace_);
    expect_str(i, "kind", json_object_get(c, "kind"), o.kind);
    expect_str(i, "apiVersion", json_object_get(c, "apiVersion"), o.api_version);
    wh_inject_owner_clear(&o);
}

/* {"mesh": yaml|null, "annotation": yaml|null, "proxyConfig": s (protoToJSON) | "error": s,
 *  "mode": s, "statusPort": n, "effective": the whole ProxyConfig object, "invalid": s|null}; with "webhook": bool the
 * mesh and the annotation go through wh_inject_effective_proxy_config as /inject (true) or kube-inject (false) merge
 * them. */
static void check_proxyconfig(size_t i, json_t *c)
{
    wh_inject_revision *rev = load_rev(i, c);
    const char *ann = json_string_value(json_object_get(c, "annotation"));
    const json_t *webhook = json_object_get(c, "webhook");
    json_t *pc, *doc = NULL;
    wh_buf b = WH_BUF_INIT;
    wh_err err;

    if (rev == NULL) {
        return;
    }
    pc = json_deep_copy(json_object_get(wh_inject_revision_mesh(rev), "defaultConfig"));
    wh_err_clear(&err);
    if (webhook != NULL && (ann == NULL || wh_yaml_load(ann, strlen(ann), &doc, &err) == WH_OK)) {
        json_t *pod = json_pack("{s{ss}}", "metadata", "namespace", "default"), *eff = NULL;
        const json_t *base = json_is_true(webhook) ? rev->webhook_pc : json_object_get(rev->mesh, "defaultConfig");
        if (wh_inject_effective_proxy_config(rev->mesh, base, NULL, pod, json_is_null(doc) ? NULL : doc,
                                             json_is_true(webhook), &rev->release, &eff, &err) == WH_OK) {
            json_decref(pc);
            pc = json_deep_copy(eff);
            json_decref(doc);
            doc = NULL;
            ann = NULL; /* applied */
        }
        json_decref(eff);
        json_decref(pod);
    }
    if (ann != NULL &&
        (wh_yaml_load(ann, strlen(ann), &doc, &err) != WH_OK || wh_inject_proxy_config_apply(pc, doc, &err) != WH_OK)) {
        expect_str(i, "error", json_object_get(c, "error"), wh_err_msg(&err));
    } else {
        wh_inject_proxy_config_json(pc, NULL, &b);
        expect_str(i, "proxyConfig", json_object_get(c, "proxyConfig"), b.data);
        if (json_object_get(c, "mode"))
            expect_str(i, "mode", json_object_get(c, "mode"), wh_inject_interception_mode(pc));
        if (json_object_get(c, "statusPort") &&
            json_integer_value(json_object_get(c, "statusPort")) != wh_inject_revision_status_port(rev))
            fail(i, "statusPort", json_object_get(c, "statusPort"), NULL);
        if (json_object_get(c, "effective") && !json_equal(json_object_get(c, "effective"), pc))
            fail(i, "effective", json_object_get(c, "effective"), pc);
        if (json_object_get(c, "invalid")) {
            char *m = wh_inject_proxy_config_invalid(pc);
            expect_str(i, "invalid", json_object_get(c, "invalid"), m);
            free(m);
        }
    }
    wh_buf_free(&b);
    json_decref(doc);
    json_decref(pc);
    wh_inject_revision_unref(rev);
}

/* {"values": {...}, "annotations": {...}, "imageType": s|null, "proxy": s, "init": s} */
static void check_image(size_t i, json_t *c)
{
    const json_t *v = json_object_get(c, "values"), *a = json_object_get(c, "annotations");
    char *p = wh_inject_image(v, "proxy", json_string_value(json_object_get(c, "imageType")), a, NULL);
    char *n = wh_inject_image(v, "proxy_init", NULL, a, NULL);
    expect_str(i, "proxy", json_object_get(c, "proxy"), p);
    expect_str(i, "init", json_object_get(c, "init"), n);
    free(p);
    free(n);
}

/* {"pod": {...}, "statusPort": n, "stripped": {...}} */
static void check_strip(size_t i, json_t *c)
{
    json_t *s = wh_inject_strip(json_object_get(c, "pod"), (int)json_integer_value(json_object_get(c, "statusPort")));
    if (!json_equal(s, json_object_get(c, "stripped")))
        fail(i, "stripped", json_object_get(c, "stripped"), s);
    json_decref(s);
}

/* {"namespace": {...}, "uid": n, "gid": n} */
static void check_openshift(size_t i, json_t *c)
{
    long long uid = 1337, gid = 1337;
    wh_inject_openshift_ids(json_object_get(c, "namespace"), &uid, &gid);
    if (uid != json_integer_value(json_object_get(c, "uid")) || gid != json_integer_value(json_object_get(c, "gid"))) {
        json_t *g = json_pack("{sIsI}", "uid", (json_int_t)uid, "gid", (json_int_t)gid);
        fail(i, "ids", c, g);
        json_decref(g);
    }
}

/* {"value": any, "text": s} */
static void check_gojson(size_t i, json_t *c)
{
    wh_buf b = WH_BUF_INIT;
    wh_go_json(&b, json_object_get(c, "value"), WH_GO_JSON_HTML);
    expect_str(i, "text", json_object_get(c, "text"), b.data);
    wh_buf_free(&b);
}

/* Render one template with the revision's functions:
 * {"template": s, "values": {...}, "mesh": yaml, "pod": {...}, "settings": [[k, v]...],
 *  "overlay": {...} | "error": substring} */
/* The overlays as the pipeline hands them to the merge: shaped (a template
 * that renders no mapping fails here). */
static wh_code shape(wh_inject_rendered *out, wh_err *err)
{
    wh_inject_shaped *shaped = NULL;
    wh_code rc = wh_inject_shape_overlays(out->overlays, (const char *const *)out->names, &shaped, err);

    free(shaped);
    return rc;
}

static void check_funcs(size_t i, json_t *c)
{
    json_t *config = json_pack("{s:s, s:{s:O}}", "policy", "enabled", "templates", "t", json_object_get(c, "template"));
    json_t *cfgcase = json_deep_copy(c), *flag;
    wh_inject_settings settings = WH_INJECT_SETTINGS_INIT;
    wh_inject_rendered out = {0};
    wh_inject_input in = {0};
    wh_inject_revision *rev;
    wh_buf text = WH_BUF_INIT;
    size_t k;
    wh_err err;

    wh_yaml_dump(config, &text, NULL);
    json_object_set_new(cfgcase, "config", json_string(text.data));
    rev = load_rev(i, cfgcase);
    if (rev == NULL)
        goto out;
    json_array_foreach(json_object_get(c, "settings"), k, flag) wh_inject_settings_set(
        &settings, json_string_value(json_array_get(flag, 0)), json_string_value(json_array_get(flag, 1)), NULL);
    in.rev = rev;
    in.settings = &settings;
    in.pod = json_object_get(c, "pod");
    {
        json_t *pod_ann = json_pack("{s:s}", "inject.istio.io/templates", "t");
        json_t *pod = json_deep_copy(in.pod ? in.pod : json_object());
        json_t *meta = json_object_get(pod, "metadata");
        if (meta == NULL) {
            meta = json_object();
            json_object_set_new(pod, "metadata", meta);
        }
        if (json_object_get(meta, "annotations") == NULL)
            json_object_set_new(meta, "annotations", json_object());
        if (json_object_get(json_object_get(meta, "annotations"), "inject.istio.io/templates") == NULL)
            json_object_update(json_object_get(meta, "annotations"), pod_ann);
        json_decref(pod_ann);
        in.pod = pod;
        wh_err_clear(&err);
        if (wh_inject_render(&in, &out, &err) != WH_OK || shape(&out, &err) != WH_OK) {
            const char *want = json_string_value(json_object_get(c, "error"));
            if (want == NULL || strstr(wh_err_msg(&err), want) == NULL) {
                json_t *g = json_string(wh_err_msg(&err));
                fail(i, "render error", json_object_get(c, "error"), g);
                json_decref(g);
            }
        } else if (json_object_get(c, "error")) {
            fail(i, "expected an error", json_object_get(c, "error"), json_array_get(out.overlays, 0));
        } else if (!json_equal(json_array_get(out.overlays, 0), json_object_get(c, "overlay"))) {
            fail(i, "overlay", json_object_get(c, "overlay"), json_array_get(out.overlays, 0));
        }
        json_decref(pod);
    }
out:
    wh_inject_rendered_clear(&out);
    wh_inject_revision_unref(rev);
    wh_inject_settings_clear(&settings);
    wh_buf_free(&text);
    json_decref(config);
    json_decref(cfgcase);
}

struct family {
    const char *name;
    void (*check)(size_t i, json_t *c);
};

static const struct family families[] = {
    {"path", check_path},         {"native", check_native},         {"decide", check_decide},
    {"validate", check_validate}, {"deploymeta", check_deploymeta}, {"proxyconfig", check_proxyconfig},
    {"image", check_image},       {"strip", check_strip},           {"openshift", check_openshift},
    {"gojson", check_gojson},     {"funcs", check_funcs},
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
    if ((cases = json_load_file(argv[2], JSON_ALLOW_NUL, &jerr)) == NULL || !json_is_array(cases) ||
        json_array_size(cases) == 0) {
        fprintf(stderr, "%s: not a non-empty JSON array: %s (line %d)\n", argv[2], jerr.text, jerr.line);
        return 2;
    }
    json_array_foreach(cases, i, c) f->check(i, c);
    printf("%s: %zu cases, %d failures\n", argv[1], json_array_size(cases), failures);
    json_decref(cases);
    return failures == 0 ? 0 : 1;
}
