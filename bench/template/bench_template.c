/*
 * bench_template.c - how fast the template engine renders Istio's sidecar
 * injection template for one pod (the `hello` Deployment of the conformance
 * fixtures, kube-inject path), with the template data built by the injection
 * code exactly as webhookd builds it.
 *
 *   bench_template [--fixtures DIR] [--case NAME] [--iterations N] [--print]
 *
 * The template is parsed once (by the revision load); the injection code's
 * call to wh_tmpl_render for the first template is intercepted (linker
 * --wrap) and repeated N times with the very same set, data and options, so
 * only the render itself is timed.  Allocations are counted by wrapping
 * malloc/calloc/realloc at this binary's link (below) during the timed loop.
 * Times are this thread's CPU time per render.
 * --print writes the rendered sidecar text instead (for comparing with Go).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_inject_render.h"
#include "wh_inject_revision_load.h"
#include "wh_tmpl.h"
#include "wh_yaml.h"

/* ---- allocation counting ----
 * The link wraps malloc, calloc and realloc for this binary only
 * (-Wl,--wrap, CMakeLists.txt): every allocation of ours goes through
 * common/wh_alloc.c and jansson allocates through it too, so the calls it
 * makes are the ones counted.  Nothing else in the tree sees these symbols. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);

static unsigned long long n_allocs;
static int counting;

void *__wrap_malloc(size_t n)
{
    if (counting)
        n_allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    if (counting)
        n_allocs++;
    return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (counting)
        n_allocs++;
    return __real_realloc(p, n);
}

/* ---- the intercepted render ---- */
wh_code __real_wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                              wh_buf *out, wh_err *err);
wh_code __wrap_wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                              wh_buf *out, wh_err *err);

static struct {
    int done;
    long iterations;
    int print;
    double us_scratch, us_fresh;
    double allocs_scratch, allocs_fresh;
    size_t bytes;
    wh_code rc;
} bench;

/* CPU time of this thread: the machine is shared, wall time would count
 * other processes' turns */
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void measure(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                    wh_tmpl_scratch *scratch, double *us, double *allocs)
{
    wh_tmpl_opts o = *opts;
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    long i, warm = bench.iterations / 10 + 1;
    double t0;

    o.scratch = scratch;
    for (i = 0; i < warm; i++) {
        wh_buf_reset(&out);
        __real_wh_tmpl_render(set, name, data, &o, &out, &err);
    }
    n_allocs = 0;
    counting = 1;
    t0 = now_us();
    for (i = 0; i < bench.iterations; i++) {
        wh_buf_reset(&out);
        if ((bench.rc = __real_wh_tmpl_render(set, name, data, &o, &out, &err)) != WH_OK)
            break;
    }
    *us = (now_us() - t0) / bench.iterations;
    counting = 0;
    *allocs = (double)n_allocs / bench.iterations;
    bench.bytes = out.len;
    if (bench.rc != WH_OK)
        fprintf(stderr, "render failed: %s\n", wh_err_msg(&err));
    wh_buf_free(&out);
}

wh_code __wrap_wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                              wh_buf *out, wh_err *err)
{
    if (!bench.done) {
        bench.done = 1;
        if (bench.print) {
            wh_code rc = __real_wh_tmpl_render(set, name, data, opts, out, err);
            if (rc == WH_OK)
                fwrite(out->data, 1, out->len, stdout);
            return rc;
        }
        wh_tmpl_scratch *s = wh_tmpl_scratch_new();
        measure(set, name, data, opts, s, &bench.us_scratch, &bench.allocs_scratch);
        wh_tmpl_scratch_free(s);
        measure(set, name, data, opts, NULL, &bench.us_fresh, &bench.allocs_fresh);
    }
    return __real_wh_tmpl_render(set, name, data, opts, out, err);
}

static int read_file(const char *dir, const char *name, wh_buf *b)
{
    char path[4096];
    wh_err err;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (wh_buf_read_file(b, path, 64 << 20, &err) != WH_OK) {
        fprintf(stderr, "%s\n", wh_err_msg(&err));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *fixtures = WH_BENCH_FIXTURES, *casename = "TestInjection-096-hello.yaml.injected";
    wh_buf config = WH_BUF_INIT, values = WH_BUF_INIT, mesh = WH_BUF_INIT, input = WH_BUF_INIT;
    wh_inject_settings settings = WH_INJECT_SETTINGS_INIT;
    wh_inject_revision *rev = NULL;
    wh_inject_rendered rendered = {0};
    wh_inject_input in = {0};
    wh_inject_deploy_meta deploy = {0};
    json_t *doc = NULL, *pod = NULL;
    char casedir[4096];
    wh_err err;
    int status = 1, i;

    bench.iterations = 20000;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--print") == 0)
            bench.print = 1;
        else if (strcmp(argv[i], "--fixtures") == 0 && i + 1 < argc)
            fixtures = argv[++i];
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            casename = argv[++i];
        else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            bench.iterations = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_template [--fixtures DIR] [--case NAME] [--iterations N] [--print]\n");
            return 2;
        }
    }
    if (bench.iterations < 1)
        bench.iterations = 1;
    snprintf(casedir, sizeof(casedir), "%s/cases/%s", fixtures, casename);
    if (read_file(fixtures, "inject-config.yaml", &config) || read_file(fixtures, "values.json", &values) ||
        read_file(fixtures, "mesh.yaml", &mesh) || read_file(casedir, "input.yaml", &input))
        goto out;
    if (wh_inject_revision_load("", config.data, config.len, values.data, values.len, mesh.data, mesh.len, &rev,
                                &err) != WH_OK ||
        wh_yaml_load(input.data, input.len, &doc, &err) != WH_OK ||
        wh_inject_settings_set(&settings, "native-sidecars", "true", &err) != WH_OK) {
        fprintf(stderr, "setup: %s\n", wh_err_msg(&err));
        goto out;
    }
    /* kube-inject of a Deployment: the pod template, owner from the Deployment */
    pod = json_deep_copy(json_object_get(json_object_get(doc, "spec"), "template"));
    if (pod == NULL) {
        fprintf(stderr, "%s: not a workload with spec.template\n", casename);
        goto out;
    }
    deploy.name = json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
    deploy.namespace_ = "";
    deploy.kind = json_string_value(json_object_get(doc, "kind"));
    deploy.api_version = json_string_value(json_object_get(doc, "apiVersion"));
    in.rev = rev;
    in.settings = &settings;
    in.pod = pod;
    in.revision = "";
    in.deploy = &deploy;
    if (wh_inject_render(&in, &rendered, &err) != WH_OK || bench.rc != WH_OK) {
        fprintf(stderr, "render: %s\n", wh_err_msg(&err));
        goto out;
    }
    if (!bench.print) {
        printf("template render (C, %s, %ld iterations): %zu bytes\n", rendered.names[0], bench.iterations,
               bench.bytes);
        printf("  reused scratch: %8.2f us/render  %6.1f allocs/render\n", bench.us_scratch, bench.allocs_scratch);
        printf("  fresh context:  %8.2f us/render  %6.1f allocs/render\n", bench.us_fresh, bench.allocs_fresh);
    }
    status = 0;
out:
    wh_inject_rendered_clear(&rendered);
    wh_inject_revision_unref(rev);
    wh_inject_settings_clear(&settings);
    json_decref(doc);
    json_decref(pod);
    wh_buf_free(&config);
    wh_buf_free(&values);
    wh_buf_free(&mesh);
    wh_buf_free(&input);
    return status;
}
