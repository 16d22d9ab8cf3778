/*
 * test_registry.c - the revision registry: loading a --revisions-dir,
 * reload on change, a broken config keeping the old snapshot serving (and
 * showing in readiness), removal, the default/embedded fallback (the
 * embedded revision loaded only while it serves), a
 * revision's `version` file (readiness detail, metric, reload), template
 * sets made on first use (once, under concurrent renders, .ProxyConfig
 * bound; a broken one refused at load), and references staying valid
 * across reloads while readers run concurrently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wh_inject_render.h"
#include "wh_inject_revision.h"

static char root[256];

static void put(const char *rev, const char *file, const char *text)
{
    char path[512], final[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rev);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/%s/.%s.tmp", root, rev, file);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    /* Replace atomically, as a ConfigMap volume update does. */
    snprintf(final, sizeof(final), "%s/%s/%s", root, rev, file);
    assert_int_equal(rename(path, final), 0);
}

/* A revision's injector config and values, in that order. */
static void put_revision(const char *rev, const char *config, const char *values)
{
    put(rev, "config", config);
    put(rev, "values", values);
}

static void rm_rev(const char *rev)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", root, rev);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    snprintf(root, sizeof(root), "/tmp/wh-registry-XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

static const char *policy_of(wh_inject_registry *reg, const char *name)
{
    static char buf[64];
    wh_inject_revision *rev = wh_inject_registry_get(reg, name);
    if (rev == NULL)
        return NULL;
    snprintf(buf, sizeof(buf), "%s", wh_inject_revision_policy(rev));
    wh_inject_revision_unref(rev);
    return buf;
}

/* New values and config for "canary" (serving policy "disabled") that do not
 * load: the reload is not an error (logged once, not per scan), the previous
 * config keeps serving, and readiness says why (`reason`). */
static void expect_rejected(wh_inject_registry *reg, const char *values, const char *config, const char *reason)
{
    wh_buf detail = WH_BUF_INIT;
    wh_err err;

    put("canary", "values", values);
    put("canary", "config", config);
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_string_equal(policy_of(reg, "canary"), "disabled");
    assert_int_equal(wh_inject_registry_ready(reg, &detail), 1);
    assert_non_null(strstr(detail.data, reason));
    assert_non_null(strstr(detail.data, "the previous config keeps serving"));
    wh_buf_free(&detail);
}

static void test_load_reload_broken_remove(void **state)
{
    wh_inject_registry *reg = NULL;
    wh_inject_revision *held, *emb;
    wh_buf detail = WH_BUF_INIT;
    wh_err err;

    put_revision("canary", "policy: enabled\n", "{\"global\": {\"hub\": \"h\"}}");
    put("canary", "mesh", "defaultConfig:\n  discoveryAddress: istiod-canary.istio-system.svc:15012\n");
    put_revision("broken", "policy: [unclosed\n", "{}");
    assert_int_equal(wh_inject_registry_open(root, NULL, &reg, &err), WH_OK);

    assert_string_equal(policy_of(reg, "canary"), "enabled");
    assert_null(wh_inject_registry_get(reg, "broken"));
    assert_null(wh_inject_registry_get(reg, "nope"));
    /* Reported, but webhookd stays ready: it can serve (issue #15). */
    assert_int_equal(wh_inject_registry_ready(reg, &detail), 1);
    assert_non_null(strstr(detail.data, "revision broken:"));
    assert_non_null(strstr(detail.data, "not served"));

    /* "/inject" without a default revision: the embedded one. */
    emb = wh_inject_registry_get(reg, NULL);
    assert_non_null(emb);
    assert_string_equal(wh_inject_revision_name(emb), "default");
    wh_inject_revision_unref(emb);

    /* A held reference survives a reload to a new config. */
    held = wh_inject_registry_get(reg, "canary");
    sleep(1); /* mtime granularity on some filesystems */
    put("canary", "config", "policy: disabled\n");
    wh_inject_registry_reload(reg, &err);
    assert_string_equal(policy_of(reg, "canary"), "disabled");
    assert_string_equal(wh_inject_revision_policy(held), "enabled");
    wh_inject_revision_unref(held);

    /* A broken new config keeps the previous one serving and is reported. */
    expect_rejected(reg, "{not json", "policy: enabled\ntemplates: [1]\n", "revision canary:");
    /* A config that parses but cannot render does not replace a good one. */
    expect_rejected(reg, "{}", "policy: enabled\ntemplates:\n  sidecar: '{{ fail \"boom at render\" }}'\n",
                    "boom at render");

    /* Fixed: serving the new one, ready again once broken/ is gone. */
    put("canary", "values", "{}");
    put("canary", "config", "policy: enabled\n");
    rm_rev("broken");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_string_equal(policy_of(reg, "canary"), "enabled");
    assert_int_equal(wh_inject_registry_ready(reg, NULL), 1);

    /* A "default" directory takes over "/inject". */
    put_revision("default", "policy: disabled\n", "{}");
    wh_inject_registry_reload(reg, &err);
    assert_string_equal(policy_of(reg, NULL), "disabled");
    assert_string_equal(policy_of(reg, ""), "disabled");

    /* Removed directories stop being served. */
    rm_rev("canary");
    wh_inject_registry_reload(reg, &err);
    assert_null(wh_inject_registry_get(reg, "canary"));
    wh_buf_free(&detail);
    wh_inject_registry_free(reg);
}

static double release_metric(wh_metrics *m, const char *rev, const char *release, const char *source)
{
    const char *const labels[] = {rev, release, source};
    wh_metric *g = wh_metrics_gauge(m, "webhookd_inject_revision_release", "",
                                    (const char *const[]){"revision", "release", "source", NULL});
    return wh_metric_get(g, labels);
}

/* A revision's `version` file: its release in the readiness detail and the
 * metric, a change reloads it, garbage is a load error, no file falls back
 * to values.global.tag, then the newest. */
static void test_version_file(void **state)
{
    wh_metrics *m = wh_metrics_new();
    wh_inject_registry *reg = NULL;
    wh_inject_revision *rev;
    wh_buf detail = WH_BUF_INIT;
    wh_err err;

    put_revision("r1", "policy: enabled\n", "{\"global\": {\"tag\": \"1.26.1\"}}");
    put("r1", "version", "1.21.0\n");
    put_revision("r2", "policy: enabled\n", "{\"global\": {\"tag\": \"1.26.1\"}}");
    assert_int_equal(wh_inject_registry_open(root, m, &reg, &err), WH_OK);
    assert_int_equal(wh_inject_registry_ready(reg, &detail), 1);
    assert_non_null(strstr(detail.data, "revision r1: Istio 1.21 (from file 1.21.0)"));
    assert_non_null(strstr(detail.data, "revision r2: Istio 1.26 (from values-tag 1.26.1)"));
    assert_true(release_metric(m, "r1", "1.21", "file") == 1);
    rev = wh_inject_registry_get(reg, "r1");
    assert_int_equal(wh_inject_release_has(wh_inject_revision_release(rev), WH_REL_DEFAULT_ZIPKIN_TRACER), 1);
    wh_inject_revision_unref(rev);

    /* a new version file reloads the revision; the old series drops to 0 */
    sleep(1);
    put("r1", "version", "1.22.3");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_true(release_metric(m, "r1", "1.21", "file") == 0);
    assert_true(release_metric(m, "r1", "1.22", "file") == 1);

    /* garbage: reported (readiness stays: issue #15), the previous snapshot keeps serving */
    put("r1", "version", "latest");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    wh_buf_reset(&detail);
    assert_int_equal(wh_inject_registry_ready(reg, &detail), 1);
    assert_non_null(strstr(detail.data, "version file: \"latest\" is not an Istio version"));
    assert_non_null(strstr(detail.data, "the previous config keeps serving"));
    assert_true(release_metric(m, "r1", "1.22", "file") == 1);

    /* no file, no version tag: the newest */
    put("r2", "values", "{\"global\": {\"tag\": \"latest\"}}");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK); /* r1 still refused: logged once, not an error */
    rev = wh_inject_registry_get(reg, "r2");
    assert_int_equal(wh_inject_revision_release(rev)->source, WH_RELEASE_NEWEST);
    wh_inject_revision_unref(rev);
    assert_true(release_metric(m, "r2", wh_inject_release_newest_known(), "newest") == 1);

    wh_buf_free(&detail);
    wh_inject_registry_free(reg);
    wh_metrics_free(m);
}

/* A revision's trees nest at most WH_YAML_MAX_DEPTH levels whatever their
 * syntax: JSON values deeper than that (jansson reads up to 2048) or beyond
 * jansson's limit (then read as YAML) are a load error, never a stack
 * overflow, and the previous config keeps serving. */
static void test_deep_values(void **state)
{
    wh_inject_registry *reg = NULL;
    wh_buf deep = WH_BUF_INIT;
    wh_err err;

    put_revision("canary", "policy: disabled\n", "{}");
    assert_int_equal(wh_inject_registry_open(root, NULL, &reg, &err), WH_OK);
    for (int levels = 600, round = 0; round < 2; levels = 100000, round++) {
        wh_buf_reset(&deep);
        for (int i = 0; i < levels; i++)
            wh_buf_puts(&deep, "{\"a\":");
        wh_buf_puts(&deep, "1");
        for (int i = 0; i < levels; i++)
            wh_buf_puts(&deep, "}");
        expect_rejected(reg, deep.data, "policy: enabled\n",
                        round == 0 ? "values: nesting deeper than 512 levels"
                                   : "values: yaml: line 1: nesting deeper than 512 levels");
    }
    wh_buf_free(&deep);
    wh_inject_registry_free(reg);
}

/* A default template has one set made at load, the one for the revision's
 * own proxy config: its plain set is made for the first pod with a proxy
 * config of its own.  A template outside defaultTemplates gets its sets on
 * first use, each kind when it is asked for, once (the same set for every
 * thread asking at the same time); the one for the revision's own proxy
 * config has .ProxyConfig bound, rendered through the pipeline as an eager
 * one is.  A broken one is still refused at load, with the template's name. */
struct first_use {
    const wh_inject_revision *rev;
    pthread_barrier_t *go;
    const wh_tmpl_set *got;
};

static void *first_use_main(void *arg)
{
    struct first_use *u = arg;
    pthread_barrier_wait(u->go);
    u->got = wh_inject_revision_template_pc(u->rev, "gw", NULL);
    return NULL;
}

/* Render `rev`'s default template for a plain pod whose proxy.istio.io/config
 * annotation is `pc` (NULL: none): its "addr" label is `want`. */
static void sidecar_addr(const wh_inject_revision *rev, const char *pc, const char *want)
{
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "name", "p", "namespace", "ns", "annotations",
                            pc != NULL ? json_pack("{s:s}", "proxy.istio.io/config", pc) : json_object(), "spec",
                            "containers", "name", "app", "image", "app:1");
    wh_inject_input in = {0};
    wh_inject_rendered r = {0};
    json_t *labels;
    wh_err err;

    in.rev = rev;
    in.pod = pod;
    assert_int_equal(wh_inject_render(&in, &r, &err), WH_OK);
    assert_int_equal(r.n, 1);
    labels = json_object_get(json_object_get(json_array_get(r.overlays, 0), "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "addr")), want);
    wh_inject_rendered_clear(&r);
    json_decref(pod);
}

static void test_template_sets_on_first_use(void **state)
{
    static const char config[] = "policy: enabled\n"
                                 "templates:\n"
                                 "  sidecar: |\n"
                                 "    metadata: {labels: {side: car, addr: \"{{ .ProxyConfig.DiscoveryAddress }}\"}}\n"
                                 "  gw: |\n"
                                 "    metadata: {labels: {addr: \"{{ .ProxyConfig.DiscoveryAddress }}\", "
                                 "hub: \"{{ .Values.global.hub }}\"}}\n";
    wh_inject_registry *reg = NULL;
    wh_inject_revision *rev;
    struct first_use u[4];
    pthread_t t[4];
    pthread_barrier_t go;
    const struct tmpl_entry *gw = NULL, *sidecar = NULL;
    wh_inject_input in;
    wh_inject_rendered r;
    wh_buf detail = WH_BUF_INIT;
    json_t *pod, *labels;
    wh_err err;

    put_revision("lazy", config, "{\"global\": {\"hub\": \"h.example\"}}");
    put("lazy", "mesh", "defaultConfig:\n  discoveryAddress: istiod-lazy.istio-system.svc:15012\n");
    put_revision("bad", "policy: enabled\ntemplates:\n  sidecar: 'a: b'\n  gw: '{{ nosuch 1 }}'\n", "{}");
    assert_int_equal(wh_inject_registry_open(root, NULL, &reg, &err), WH_OK);
    assert_null(wh_inject_registry_get(reg, "bad"));
    assert_int_equal(wh_inject_registry_ready(reg, &detail), 1);
    assert_non_null(strstr(detail.data, "revision bad: config: template \"gw\""));
    assert_non_null(strstr(detail.data, "\"nosuch\" not defined"));
    wh_buf_free(&detail);

    rev = wh_inject_registry_get(reg, "lazy");
    assert_non_null(rev);
    for (size_t i = 0; i < rev->templates->n; i++) {
        const struct tmpl_entry *e = &rev->templates->e[i];
        if (strcmp(e->name, "gw") == 0)
            gw = e;
        else if (strcmp(e->name, "sidecar") == 0)
            sidecar = e;
    }
    assert_non_null(gw);
    assert_non_null(sidecar);
    /* the default: made at load for the revision's own proxy config (one
     * parse); the plain kind only for a pod with a proxy config of its own */
    assert_non_null(atomic_load(&sidecar->set_pc));
    assert_null(atomic_load(&sidecar->set));
    assert_null(atomic_load(&gw->set)); /* not yet used */
    assert_null(atomic_load(&gw->set_pc));

    /* rendered as a pod asking for it: the revision's own proxy config */
    pod = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
                     "\"annotations\":{\"inject.istio.io/templates\":\"gw\"}},"
                     "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"app:1\"}]}}",
                     0, NULL);
    memset(&in, 0, sizeof(in));
    in.rev = rev;
    in.pod = pod;
    assert_int_equal(wh_inject_render(&in, &r, &err), WH_OK);
    assert_int_equal(r.n, 1);
    labels = json_object_get(json_object_get(json_array_get(r.overlays, 0), "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "addr")), "istiod-lazy.istio-system.svc:15012");
    assert_string_equal(json_string_value(json_object_get(labels, "hub")), "h.example");
    assert_non_null(atomic_load(&gw->set_pc));
    assert_null(atomic_load(&gw->set)); /* the other kind is made only when asked for */

    /* threads asking for the other kind at once: one set, made once */
    assert_int_equal(pthread_barrier_init(&go, NULL, 4), 0);
    for (int i = 0; i < 4; i++) {
        u[i] = (struct first_use){rev, &go, NULL};
        assert_int_equal(pthread_create(&t[i], NULL, first_use_main, &u[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    assert_non_null(u[0].got);
    for (int i = 1; i < 4; i++)
        assert_ptr_equal(u[i].got, u[0].got);
    assert_ptr_equal(atomic_load(&gw->set), u[0].got);
    assert_ptr_not_equal(atomic_load(&gw->set_pc), u[0].got);
    assert_ptr_equal(wh_inject_revision_template_pc(rev, "gw", NULL), u[0].got);
    wh_inject_rendered_clear(&r);
    json_decref(pod);

    /* the default template for a pod without a proxy config of its own: the
     * set made at load, nothing more; with one: the plain set, made now */
    sidecar_addr(rev, NULL, "istiod-lazy.istio-system.svc:15012");
    assert_null(atomic_load(&sidecar->set));
    sidecar_addr(rev, "discoveryAddress: istiod-own.istio-system.svc:15012", "istiod-own.istio-system.svc:15012");
    assert_non_null(atomic_load(&sidecar->set));
    assert_ptr_not_equal(atomic_load(&sidecar->set), atomic_load(&sidecar->set_pc));
    assert_true(wh_inject_revision_has_template(rev, "gw"));
    assert_false(wh_inject_revision_has_template(rev, "nope"));
    assert_null(wh_inject_revision_template_pc(rev, "nope", NULL));
    wh_inject_revision_unref(rev);
    wh_inject_registry_free(reg);
}

/* What the on_serve callback was told about "default": the revision from the
 * directory, or the built-in one (which alone has a "grpc-simple" template). */
struct told {
    int dir, builtin;
};

static void tell(void *ctx, const char *name, const wh_inject_revision *rev)
{
    struct told *t = ctx;
    if (strcmp(name, "default") == 0)
        (wh_inject_revision_has_template(rev, "grpc-simple") ? &t->builtin : &t->dir)[0]++;
}

static int get_is_builtin(wh_inject_registry *reg)
{
    wh_inject_revision *rev = wh_inject_registry_get(reg, NULL);
    int builtin;
    assert_non_null(rev);
    builtin = wh_inject_revision_has_template(rev, "grpc-simple");
    wh_inject_revision_unref(rev);
    return builtin;
}

/* The built-in revision is loaded only while it serves "default": not while
 * a revision of that name from the directory does, at once when none does
 * (removed, or refused before it ever served: the fallback), released when
 * one serves again; never in cluster mode. */
static void test_builtin_loaded_when_served(void **state)
{
    wh_inject_registry *reg = NULL;
    struct told told = {0};
    wh_err err;

    put_revision("default", "policy: disabled\n", "{}");
    assert_int_equal(wh_inject_registry_open(root, NULL, &reg, &err), WH_OK);
    wh_inject_registry_on_serve(reg, tell, &told);
    assert_int_equal(told.dir, 1);
    assert_int_equal(told.builtin, 0); /* not loaded */
    assert_false(get_is_builtin(reg));

    rm_rev("default");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_int_equal(told.builtin, 1); /* loaded by the scan, serving */
    assert_true(get_is_builtin(reg));
    assert_int_equal(told.builtin, 1);

    put_revision("default", "policy: [unclosed\n", "{}"); /* refused: the built-in one keeps serving */
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_true(get_is_builtin(reg));
    assert_int_equal(told.builtin, 1);

    put_revision("default", "policy: disabled\n", "{}");
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_false(get_is_builtin(reg));
    assert_int_equal(told.dir, 2);

    rm_rev("default"); /* released above: loaded again */
    assert_int_equal(wh_inject_registry_reload(reg, &err), WH_OK);
    assert_int_equal(told.builtin, 2);
    assert_true(get_is_builtin(reg));
    wh_inject_registry_on_serve(reg, NULL, NULL);
    wh_inject_registry_free(reg);

    /* no directory: loaded on first need; cluster mode: never */
    memset(&told, 0, sizeof(told));
    assert_int_equal(wh_inject_registry_open(NULL, NULL, &reg, &err), WH_OK);
    assert_true(get_is_builtin(reg));
    wh_inject_registry_on_serve(reg, tell, &told);
    assert_int_equal(told.builtin, 1);
    wh_inject_registry_on_serve(reg, NULL, NULL);
    wh_inject_registry_free(reg);
    memset(&told, 0, sizeof(told));
    assert_int_equal(wh_inject_registry_open(NULL, NULL, &reg, &err), WH_OK);
    wh_inject_registry_cluster_mode(reg);
    wh_inject_registry_on_serve(reg, tell, &told);
    assert_null(wh_inject_registry_get(reg, NULL));
    assert_int_equal(told.builtin, 0);
    wh_inject_registry_on_serve(reg, NULL, NULL);
    wh_inject_registry_free(reg);
}

static void test_bad_dir(void **state)
{
    wh_inject_registry *reg = NULL;
    wh_err err;
    assert_int_not_equal(wh_inject_registry_open("/nonexistent/revisions", NULL, &reg, &err), WH_OK);
    assert_null(reg);
    assert_non_null(strstr(err.msg, "not a directory"));
}

struct reader {
    wh_inject_registry *reg;
    volatile int stop;
    long gets;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    while (!r->stop) {
        wh_inject_revision *rev = wh_inject_registry_get(r->reg, "busy");
        if (rev != NULL) {
            /* use it: the snapshot must stay intact while we hold it */
            if (strcmp(wh_inject_revision_policy(rev), "enabled") != 0 &&
                strcmp(wh_inject_revision_policy(rev), "disabled") != 0)
                abort();
            wh_inject_revision_unref(rev);
        }
        r->gets++;
    }
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    wh_inject_registry *reg = NULL;
    struct reader r = {0};
    pthread_t t[2];
    wh_err err;

    put_revision("busy", "policy: enabled\n", "{}");
    assert_int_equal(wh_inject_registry_open(root, NULL, &reg, &err), WH_OK);
    assert_int_equal(wh_inject_registry_watch(reg, 5, &err), WH_OK);
    r.reg = reg;
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, reader_main, &r);
    for (int i = 0; i < 40; i++) {
        char mesh[128];
        snprintf(mesh, sizeof(mesh), "defaultConfig:\n  statusPort: %d\n", 15000 + i); /* size changes */
        put("busy", "mesh", mesh);
        put("busy", "config", i % 2 ? "policy: disabled\n" : "policy: enabled\n");
        usleep(3000);
    }
    r.stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_true(r.gets > 0);
    wh_inject_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load_reload_broken_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_template_sets_on_first_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin_loaded_when_served, setup, teardown),
        cmocka_unit_test(test_bad_dir),
        cmocka_unit_test_setup_teardown(test_concurrent_readers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
