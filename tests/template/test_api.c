/*
 * test_api.c - the engine's C API as its users (the injection code, Helm-like
 * callers) rely on it: host values resolved through type descriptors
 * (fields, nil-safe methods, enums printing as names, methods with
 * arguments), registered functions (parameter conversion, overriding Sprig),
 * error positions, delimiters, missingkey, scratch reuse, concurrent renders
 * of one parsed set, include/tpl from a caller's function, and pipelines
 * computed once per render (WH_TMPL_FN_STABLE) giving what computing them
 * every time gives.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wh_tmpl.h"

/* ---- a small host model: a pod with a name, labels, an optional wrapper and an enum ---- */

struct wrapper {
    int value;
};

struct pod {
    const char *name;
    json_t *labels;             /* map[string]string */
    const struct wrapper *hold; /* *BoolValue, may be nil */
    int mode;                   /* enum */
    json_t *values;             /* map[string]interface {} */
};

static const char *const mode_names[] = {"REDIRECT", "TPROXY", "NONE"};

static wh_code mode_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    wh_buf_puts(out, v->u.i >= 0 && v->u.i < 3 ? mode_names[v->u.i] : "UNKNOWN");
    return WH_OK;
}

static wh_code mode_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out)
{
    if (strcmp(name, "String") == 0) {
        *out = wh_tmpl_str(recv->u.i >= 0 && recv->u.i < 3 ? mode_names[recv->u.i] : "UNKNOWN");
        return WH_OK;
    }
    return WH_E_NOTFOUND;
}

static const wh_tmpl_type mode_type = {
    .name = "v1.Mode", .kind = WH_TMPL_INT, .field = mode_field, .format = mode_format};

static wh_code wrapper_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                             size_t nargs, wh_tmpl_value *out)
{
    const struct wrapper *w = recv->u.host;

    if (strcmp(name, "GetValue") == 0) { /* nil-safe like protobuf getters */
        *out = wh_tmpl_bool(w != NULL && w->value);
        return WH_OK;
    }
    if (strcmp(name, "Value") == 0) {
        if (w == NULL)
            return wh_tmpl_errorf(ctx, "nil pointer evaluating *v1.BoolValue.Value");
        *out = wh_tmpl_bool(w->value);
        return WH_OK;
    }
    return WH_E_NOTFOUND;
}

static const wh_tmpl_type wrapper_type = {
    .name = "*v1.BoolValue", .kind = WH_TMPL_HOST, .field = wrapper_field, .pointer = 1};

/* The pod's Box: a map[string]interface {} made in the render (a
 * collection templates can change with set), the same one all render long. */
static wh_tmpl_value box;
static int box_made;

static wh_code pod_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                         size_t nargs, wh_tmpl_value *out)
{
    const struct pod *p = recv->u.host;

    if (strcmp(name, "Box") == 0) {
        if (!box_made)
            box = wh_tmpl_map_new(ctx, NULL);
        box_made = 1;
        *out = box;
    } else if (strcmp(name, "Name") == 0)
        *out = wh_tmpl_str(p->name);
    else if (strcmp(name, "Labels") == 0)
        *out = wh_tmpl_json_typed(p->labels, &wh_tmpl_type_map_string_string);
    else if (strcmp(name, "Hold") == 0)
        *out = wh_tmpl_host(&wrapper_type, p->hold);
    else if (strcmp(name, "Mode") == 0)
        *out = wh_tmpl_int_typed(p->mode, &mode_type);
    else if (strcmp(name, "Values") == 0)
        *out = wh_tmpl_json_typed(p->values, &wh_tmpl_type_map_string_interface);
    else if (strcmp(name, "Label") == 0) { /* a method with an argument */
        wh_tmpl_value v;
        if (nargs != 1 || args[0].kind != WH_TMPL_STRING)
            return wh_tmpl_errorf(ctx, "Label wants one string");
        if (wh_tmpl_map_get(&(wh_tmpl_value){0}, "", 0, &v) == WH_OK)
            return wh_tmpl_errorf(ctx, "unreachable");
        {
            wh_tmpl_value labels = wh_tmpl_json_typed(p->labels, &wh_tmpl_type_map_string_string);
            if (wh_tmpl_map_get(&labels, args[0].u.s, args[0].len, out) != WH_OK)
                *out = wh_tmpl_str("");
        }
    } else
        return WH_E_NOTFOUND;
    return WH_OK;
}

static const wh_tmpl_type pod_type = {.name = "*v1.Pod", .kind = WH_TMPL_HOST, .field = pod_field, .pointer = 1};

/* Istio-like functions: isset(map[string]string, string), indent that skips the first line */
static wh_code fn_isset(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value v;
    *out = wh_tmpl_bool(wh_tmpl_map_get(&a[0], a[1].u.s, a[1].len, &v) == WH_OK);
    return WH_OK;
}

static wh_code fn_indent_tail(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    uint32_t i;
    int64_t k;

    for (i = 0; i < a[1].len; i++) {
        wh_buf_putc(b, a[1].u.s[i]);
        if (a[1].u.s[i] == '\n')
            for (k = 0; k < a[0].u.i; k++)
                wh_buf_putc(b, ' ');
    }
    return wh_tmpl_strdup(ctx, b->data ? b->data : "", b->len, out);
}

/* builds a sorted map and a list in the arena */
static wh_code fn_pairs(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value m = wh_tmpl_map_new(ctx, &wh_tmpl_type_map_string_string);
    wh_tmpl_kv *ents;
    size_t cnt, i;
    wh_tmpl_value l;
    wh_code rc;

    wh_tmpl_map_set(ctx, &m, "b", 1, wh_tmpl_str("2"));
    wh_tmpl_map_set(ctx, &m, "a", 1, wh_tmpl_str("1"));
    wh_tmpl_map_set(ctx, &m, "c", 1, wh_tmpl_str("3"));
    if ((rc = wh_tmpl_map_entries(ctx, &m, &ents, &cnt)) != WH_OK)
        return rc;
    l = wh_tmpl_list_new(ctx, 0, &wh_tmpl_type_string_slice);
    for (i = 0; i < cnt; i++)
        wh_tmpl_list_push(ctx, &l, wh_tmpl_strn(ents[i].key, ents[i].key_len));
    *out = l;
    return WH_OK;
}

/* include-like: runs another template of the set */
static wh_code fn_call_tmpl(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)a[0].len, a[0].u.s);
    return wh_tmpl_exec_named(ctx, name, a[1], out);
}

static wh_code fn_user(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    *out = wh_tmpl_str(wh_tmpl_user(ctx));
    return WH_OK;
}

static const wh_tmpl_func funcs[] = {
    {"isset", fn_isset, "Ms", WH_TMPL_FN_PURE},
    {"indent", fn_indent_tail, "is", WH_TMPL_FN_PURE},
    {"pairs", fn_pairs, "", 0},
    {"call_tmpl", fn_call_tmpl, "sv", 0},
    {"user", fn_user, "", 0},
};

static struct pod the_pod;
static const struct wrapper hold_true = {1};

static int setup(void **state)
{
    the_pod.name = "hello";
    the_pod.labels = json_pack("{ssss}", "app", "hello", "tier", "web");
    the_pod.hold = NULL;
    the_pod.mode = 1;
    the_pod.values = json_loads("{\"a\": {\"b\": \"x\", \"n\": 1.5}, \"s\": \"str\", \"list\": [1, \"two\", null], "
                                "\"nil\": null, \"n\": 3}",
                                0, NULL);
    return 0;
}

static int teardown(void **state)
{
    json_decref(the_pod.labels);
    json_decref(the_pod.values);
    return 0;
}

static char *render(unsigned flags, const char *text, wh_tmpl_value data, wh_code *rc, wh_err *err,
                    const wh_tmpl_opts *opts)
{
    wh_tmpl_set *set = wh_tmpl_set_new(flags);
    wh_buf out = WH_BUF_INIT;

    assert_non_null(set);
    assert_int_equal(wh_tmpl_set_funcs(set, funcs, sizeof(funcs) / sizeof(funcs[0]), err), WH_OK);
    *rc = wh_tmpl_parse(set, "t", text, strlen(text), err);
    if (*rc == WH_OK)
        *rc = wh_tmpl_render(set, "t", data, opts, &out, err);
    wh_tmpl_set_free(set);
    return wh_buf_steal(&out, NULL);
}

static void expect(const char *text, const char *want)
{
    wh_err err;
    wh_code rc;
    char *got = render(WH_TMPL_SPRIG, text, wh_tmpl_host(&pod_type, &the_pod), &rc, &err, NULL);

    if (rc != WH_OK)
        fail_msg("%s: %s", text, wh_err_msg(&err));
    assert_string_equal(got, want);
    free(got);
}

static void expect_error(const char *text, const char *want)
{
    wh_err err;
    wh_code rc;
    char *got = render(WH_TMPL_SPRIG, text, wh_tmpl_host(&pod_type, &the_pod), &rc, &err, NULL);

    free(got);
    assert_int_not_equal(rc, WH_OK);
    assert_string_equal(wh_err_msg(&err), want);
}

static void test_host_values(void **state)
{
    expect(
        "{{ .Name }}/{{ .Labels.app }}/{{ index .Labels \"tier\" }}/[{{ index .Labels \"none\" }}]/{{ .Labels.none }}",
        "hello/hello/web/[]/<no value>");
    expect(
        "{{ .Mode }} {{ .Mode.String }} {{ printf \"%d %v %s\" .Mode .Mode .Mode }} {{ eq .Mode.String \"TPROXY\" }}",
        "TPROXY TPROXY 1 TPROXY TPROXY true");
    expect("{{ .Hold.GetValue }} {{ if .Hold }}set{{ else }}nil{{ end }} {{ .Hold }}", "false nil <nil>");
    expect("{{ .Label \"app\" }}|{{ .Label \"x\" }}", "hello|");
    expect("{{ range $k, $v := .Labels }}{{ $k }}={{ $v }};{{ end }}", "app=hello;tier=web;");
    expect("{{ typeOf .Labels }} {{ typeOf . }} {{ typeOf .Mode }}", "map[string]string *v1.Pod v1.Mode");
}

static void test_host_errors(void **state)
{
    expect_error("{{ .Nope }}",
                 "template: t:1:3: executing \"t\" at <.Nope>: can't evaluate field Nope in type *v1.Pod");
    expect_error("{{ .Hold.Value }}", "template: t:1:8: executing \"t\" at <.Hold.Value>: error calling Value: nil "
                                      "pointer evaluating *v1.BoolValue.Value");
    expect_error("{{ .Labels.app.x }}",
                 "template: t:1:10: executing \"t\" at <.Labels.app.x>: can't evaluate field x in type string");
    the_pod.hold = &hold_true;
    expect("{{ .Hold.Value }} {{ .Hold.GetValue }}", "true true");
    the_pod.hold = NULL;
}

/* Sprig's functions this engine does not compute load, and fail when called
 * (template/sprig_unsupported.c); their Go parameter types still apply */
static void test_sprig_unsupported(void **state)
{
    expect("{{ if false }}{{ genCA \"x\" 1 }}{{ now }}{{ end }}ok", "ok");
    expect_error("{{ genCA \"x\" 365 }}",
                 "template: t:1:3: executing \"t\" at <genCA \"x\" 365>: error calling genCA: this "
                 "Sprig function is not supported by webhookd's template engine");
    expect_error("{{ randInt 1 }}", "template: t:1:3: executing \"t\" at <randInt>: wrong number of args for "
                                    "randInt: want 2 got 1");
}

static void test_functions(void **state)
{
    /* the caller's indent replaces Sprig's (first line not indented) */
    expect("{{ indent 2 \"a\\nb\" }}", "a\n  b");
    expect("{{ isset .Labels \"app\" }} {{ isset .Labels \"x\" }}", "true false");
    expect("{{ pairs }}", "[a b c]");
    expect("{{ define \"x\" }}<{{ . }}>{{ end }}{{ call_tmpl \"x\" 5 | upper }}", "<5>");
    expect_error("{{ isset .Name \"a\" }}", "template: t:1:9: executing \"t\" at <.Name>: wrong type for value; "
                                            "expected map[string]string; got string");
    expect_error("{{ indent \"2\" \"a\" }}",
                 "template: t:1:10: executing \"t\" at <\"2\">: expected integer; found \"2\"");
    expect_error("{{ nofunc }}", "template: t:1: function \"nofunc\" not defined");
}

static void test_bad_params(void **state)
{
    wh_tmpl_set *set = wh_tmpl_set_new(0);
    wh_tmpl_func bad = {"bad", fn_user, "sx", 0};
    wh_err err;

    assert_int_equal(wh_tmpl_set_funcs(set, &bad, 1, &err), WH_E_INVALID);
    wh_tmpl_set_free(set);
}

static void test_positions(void **state)
{
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG);
    wh_buf out = WH_BUF_INIT;
    wh_tmpl_pos pos;
    wh_tmpl_opts opts = {0};
    wh_err err;
    const char *text = "line one\n{{ define \"inner\" }}\n  {{ fail \"boom\" }}{{ end }}{{ template \"inner\" }}";

    opts.pos = &pos;
    assert_int_equal(wh_tmpl_parse(set, "outer", text, strlen(text), &err), WH_OK);
    assert_int_equal(wh_tmpl_render(set, "outer", wh_tmpl_nil(), &opts, &out, &err), WH_E_RENDER);
    assert_string_equal(wh_err_msg(&err),
                        "template: outer:3:5: executing \"inner\" at <fail \"boom\">: error calling fail: boom");
    assert_string_equal(pos.name, "inner");
    assert_int_equal(pos.line, 3);
    assert_int_equal(pos.col, 5);
    assert_int_equal(wh_tmpl_render(set, "missing", wh_tmpl_nil(), NULL, &out, &err), WH_E_NOTFOUND);
    assert_int_equal(wh_tmpl_parse(set, "bad", "a\n{{ if }}", 10, &err), WH_E_PARSE);
    assert_string_equal(wh_err_msg(&err), "template: bad:2: missing value for if");
    assert_true(wh_tmpl_has(set, "inner"));
    assert_false(wh_tmpl_has(set, "bad"));
    wh_buf_free(&out);
    wh_tmpl_set_free(set);
}

static void test_options(void **state)
{
    json_t *data = json_pack("{s{si}}", "m", "a", 1);
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_MISSINGKEY_ERROR);
    wh_tmpl_opts opts = {0};
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    wh_code rc;
    char *got;

    assert_int_equal(wh_tmpl_parse(set, "t", "{{ .m.a }}{{ .m.b }}", 20, &err), WH_OK);
    assert_int_equal(wh_tmpl_render(set, "t", wh_tmpl_json(data), NULL, &out, &err), WH_E_RENDER);
    assert_string_equal(wh_err_msg(&err),
                        "template: t:1:15: executing \"t\" at <.m.b>: map has no entry for key \"b\"");
    wh_tmpl_set_free(set);

    /* delimiters */
    set = wh_tmpl_set_new(0);
    assert_int_equal(wh_tmpl_set_delims(set, "[[", "]]", &err), WH_OK);
    assert_int_equal(wh_tmpl_parse(set, "t", "{{ x }} [[ .m.a ]] [[- \" y\" ]]", 30, &err), WH_OK);
    wh_buf_reset(&out);
    assert_int_equal(wh_tmpl_render(set, "t", wh_tmpl_json(data), NULL, &out, &err), WH_OK);
    assert_string_equal(out.data, "{{ x }} 1 y");
    wh_tmpl_set_free(set);

    /* user pointer, output limit */
    opts.user = "me";
    got = render(0, "{{ user }}", wh_tmpl_nil(), &rc, &err, &opts);
    assert_int_equal(rc, WH_OK);
    assert_string_equal(got, "me");
    free(got);
    opts.max_output = 100;
    got = render(WH_TMPL_SPRIG, "{{ range until 1000 }}xxxxxxxxxx{{ end }}", wh_tmpl_nil(), &rc, &err, &opts);
    assert_int_equal(rc, WH_E_LIMIT);
    free(got);
    opts.max_output = 0;
    opts.max_depth = 50;
    got = render(0, "{{ define \"r\" }}{{ template \"r\" }}{{ end }}{{ template \"r\" }}", wh_tmpl_nil(), &rc, &err,
                 &opts);
    assert_int_equal(rc, WH_E_RENDER);
    assert_non_null(strstr(wh_err_msg(&err), "exceeded maximum template depth (50)"));
    free(got);
    wh_buf_free(&out);
    json_decref(data);
}

/* ---- budgets: a template can neither crash the process nor exhaust it ---- */

typedef struct budget_case {
    const char *text;
    unsigned depth;   /* opts.max_depth (0 = default) */
    const char *want; /* in the error message */
    wh_code rc;
} budget_case;

static void *render_case(void *arg)
{
    budget_case *c = arg;
    wh_tmpl_opts opts;
    wh_code rc;
    wh_err err;
    char *got;

    memset(&opts, 0, sizeof(opts));
    opts.max_depth = c->depth;
    got = render(WH_TMPL_SPRIG, c->text, wh_tmpl_nil(), &rc, &err, &opts);
    if (rc != c->rc && !(c->rc == WH_E_LIMIT && rc == WH_E_RENDER)) /* a limit inside a range or an if is the
                                                                     render's failure */
        fail_msg("rc %d for %s", rc, c->text);
    if (strstr(wh_err_msg(&err), c->want) == NULL)
        fail_msg("want \"%s\" in \"%s\"", c->want, wh_err_msg(&err));
    free(got);
    return NULL;
}

/* Issue #15: the 10,000-level default overflowed the 8 MiB stack at ~5,000
 * levels (a crash of every revision); a `repeat` in a loop took 2.8 GB. */
static void test_budgets(void **state)
{
    budget_case cases[] = {
        {"{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}", 0,
         "exceeded maximum template depth", WH_E_RENDER},
        {"{{ define \"r\" }}{{ if . }}{{ template \"r\" . }}{{ end }}{{ end }}{{ template \"r\" 1 }}", 1000000,
         "exceeded maximum template depth", WH_E_RENDER},
        {"{{ range until 1000 }}{{ $x := repeat 10000000 \"x\" }}{{ end }}", 0, "exceeded its memory budget (256 MiB)",
         WH_E_LIMIT},
        {"{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ if eq . 1 }}{{ end }}{{ end }}{{ end }}", 0,
         "exceeded its CPU time budget (2000 ms)", WH_E_LIMIT},
    };
    pthread_attr_t attr;
    pthread_t t;
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        render_case(&cases[i]);   /* this thread's stack */
        pthread_attr_init(&attr); /* and a small one */
        pthread_attr_setstacksize(&attr, 1 << 20);
        assert_int_equal(pthread_create(&t, &attr, render_case, &cases[i]), 0);
        pthread_join(t, NULL);
        pthread_attr_destroy(&attr);
    }
}

/* ---- one parsed set, several threads, a scratch each ---- */

struct thread_arg {
    const wh_tmpl_set *set;
    const char *want;
    int failures;
};

static void *render_thread(void *p)
{
    struct thread_arg *a = p;
    wh_tmpl_scratch *s = wh_tmpl_scratch_new();
    wh_tmpl_opts opts = {0};
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    int i;

    opts.scratch = s;
    for (i = 0; i < 300; i++) {
        wh_buf_reset(&out);
        if (wh_tmpl_render(a->set, "t", wh_tmpl_host(&pod_type, &the_pod), &opts, &out, &err) != WH_OK ||
            strcmp(out.data, a->want) != 0)
            a->failures++;
    }
    wh_buf_free(&out);
    wh_tmpl_scratch_free(s);
    return NULL;
}

/* Render `text` with `flags`, the set declaring `.Values` of *v1.Pod const as
 * `konst` (or not, when NULL): output or error message, malloc'd. */
static char *render_const(unsigned flags, const char *text, const json_t *konst)
{
    static const char define[] = "{{ define \"v\" }}{{ .Values.a.b }}{{ end }}";
    wh_tmpl_set *set = wh_tmpl_set_new(flags | (konst == NULL ? WH_TMPL_NO_FOLD : 0));
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    wh_code rc;

    assert_int_equal(wh_tmpl_set_funcs(set, funcs, sizeof(funcs) / sizeof(funcs[0]), &err), WH_OK);
    assert_int_equal(wh_tmpl_parse(set, "d", define, strlen(define), &err), WH_OK);
    if (konst != NULL) /* declared after one parse and before another: both are resolved */
        assert_int_equal(wh_tmpl_set_const_field(set, &pod_type, "Values",
                                                 wh_tmpl_json_typed(konst, &wh_tmpl_type_map_string_interface), &err),
                         WH_OK);
    rc = wh_tmpl_parse(set, "t", text, strlen(text), &err);
    if (rc == WH_OK)
        rc = wh_tmpl_render(set, "t", wh_tmpl_host(&pod_type, &the_pod), NULL, &out, &err);
    wh_tmpl_set_free(set);
    if (rc != WH_OK) {
        wh_buf_free(&out);
        return strdup(wh_err_msg(&err));
    }
    return wh_buf_steal(&out, NULL);
}

static void test_const_fields(void **state)
{
    static const char *const texts[] = {
        "{{ .Values.a.b }}|{{ .Values.a.missing }}|{{ .Values.missing.x.y }}|{{ .Values }}|{{ .Values.a.n }}",
        "{{ $.Values.a.b }}|{{ $p := . }}{{ $p.Values.list }}|{{ (.).Values.n }}|{{ template \"v\" . }}",
        "{{ with .Values.a }}{{ .b }}{{ end }}|{{ range .Values.list }}{{ . }},{{ end }}|{{ .Values.nil }}",
        "{{ toJson .Values.a }}|{{ typeOf .Values.a.b }} {{ typeOf .Values.nil }} {{ typeOf .Values.zz }}",
        "{{ .Values.a.missing }}",
        "{{ .Values.s.x }}",
        "{{ .Values.nil.x }}",
        "{{ .Values.a.b 1 }}",
        "{{ .Values.list.x }}",
        /* pipelines of pure functions over them are computed there too (WH_TMPL_FN_PURE) */
        "{{ eq .Values.a.b \"x\" }}|{{ .Values.s | quote | upper }}|{{ printf \"%v-%d\" .Values.list 3 }}|"
        "{{ toJson .Values.a | squote }}|{{ default \"d\" .Values.missing }}|{{ not .Values.zz }}",
        "{{ if eq .Values.s \"str\" }}{{ index .Values.list 1 }}{{ else }}{{ index .Values.list 9 }}{{ end }}",
        "{{ if ne .Values.s \"str\" }}ok{{ else }}{{ index .Values.list 9 }}{{ end }}",
        "{{ range eq .Values.a.b \"x\" }}{{ end }}",
        "{{ $x := len .Values.list }}{{ $x }}{{ $x = add $x 1 }}{{ $x }}|{{ (.Values.a).b }}|"
        "{{ (index .Values \"a\").n | printf \"%.1f\" }}|{{ (.Values.a).zz.y }}",
        "{{ $.Values.s | len }}|{{ with $p := (.Values.a) }}{{ $p.b }}{{ end }}|{{ (.Values.nil) | quote }}",
        "{{ \"a\" | printf \"%s-%s\" .Values.s | indent 2 }}|{{ isset .Values.a \"b\" }}|{{ user | len }}",
        "{{ .Values.s | .Values.s }}",
        "{{ range $i, $e := .Values.list }}{{ $i }}{{ $.Values.a.b | quote }}{{ . | quote }}{{ end }}",
        "{{ with .Values.a }}{{ eq .b \"x\" }}{{ eq $.Values.s \"str\" }}{{ end }}",
        "{{ define \"w\" }}{{ .Values.s | upper }}{{ end }}{{ template \"w\" .Values.a }}",
        /* runs of items that need no render (tm_run): text, comments, actions and ifs over constants */
        "a{{/* c */}}{{ if .Values.a.b }}x{{ .Values.s }}{{ if not .Values.zz }}y{{ .Values.n }}{{ end }}{{ else }}z"
        "{{ end }}b{{ .Name }}c{{ .Values.s }}{{ if .Values.zz }}{{ .Name }}{{ else if .Values.s }}e{{ end }}",
        "{{ define \"r\" }}<{{ .Values.s }}{{ if .Values.a.b }}!{{ .Values.a.b }}{{ end }}>{{ end }}{{ template \"r\" "
        ". }}"
        "{{ template \"r\" .Values }}{{ with .Values.a }}{{ template \"r\" $ }}{{ template \"r\" . }}{{ end }}"
        "{{ range .Values.list }}[{{ if $.Values.s }}{{ $.Values.a.b }}{{ end }}]{{ end }}",
        "{{ .Values.s }}x{{ if .Values.a.b }}y{{ .Values.list }}{{ end }}{{ .Values.a.missing.x }}z",
    };
    static const unsigned flags[] = {WH_TMPL_SPRIG, WH_TMPL_SPRIG | WH_TMPL_MISSINGKEY_ERROR,
                                     WH_TMPL_SPRIG | WH_TMPL_MISSINGKEY_ZERO};
    json_t *other = json_pack("{s{ss}}", "a", "b", "declared");
    size_t i, k;

    /* resolved at parse time, the chains give what the render gives: values, errors, missingkey's rules */
    for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
            char *want = render_const(flags[k], texts[i], NULL),
                 *got = render_const(flags[k], texts[i], the_pod.values);
            if (strcmp(want, got) != 0)
                fail_msg("flags %u: %s: want %s, got %s", flags[k], texts[i], want, got);
            free(want);
            free(got);
        }
    }
    /* ... and they are resolved there: the declared value wins over the callback's */
    {
        char *got = render_const(WH_TMPL_SPRIG, "{{ .Values.a.b }} {{ template \"v\" . }} {{ .Name }}", other);
        assert_string_equal(got, "declared declared hello");
        free(got);
    }
    json_decref(other);
    {
        wh_tmpl_set *set = wh_tmpl_set_new(0);
        wh_err err;
        assert_int_equal(wh_tmpl_set_const_field(set, &wh_tmpl_type_string, "Values", wh_tmpl_nil(), &err),
                         WH_E_INVALID);
        assert_int_equal(wh_tmpl_set_const_field(set, &pod_type, "", wh_tmpl_nil(), &err), WH_E_INVALID);
        wh_tmpl_set_free(set);
    }
}

/* A host type whose fields read only its object (wh_tmpl_type.pure_fields):
 * on a const field's value its chains are resolved when the set is made. */
struct cfg {
    long long port;
    const char *domain;
    const struct cfg *inner;
};
static int cfg_lookups;
static const wh_tmpl_type cfg_type;

static wh_code cfg_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                         size_t nargs, wh_tmpl_value *out)
{
    const struct cfg *c = recv->u.host;

    cfg_lookups++;
    if (c == NULL)
        return wh_tmpl_errorf(ctx, "nil pointer evaluating *x.Cfg.%s", name);
    if (strcmp(name, "Port") == 0)
        *out = wh_tmpl_int_typed(c->port, &wh_tmpl_type_int32);
    else if (strcmp(name, "Domain") == 0)
        *out = wh_tmpl_str(c->domain);
    else if (strcmp(name, "Inner") == 0)
        *out = wh_tmpl_host(&cfg_type, c->inner);
    else if (strcmp(name, "List") == 0) /* made in the render: never kept from the set's making */
        *out = wh_tmpl_list_new(ctx, 0, NULL);
    else if (strcmp(name, "Twice") == 0) /* a method */
        *out = wh_tmpl_int(nargs == 1 && args[0].kind == WH_TMPL_INT ? 2 * args[0].u.i : -1);
    else
        return WH_E_NOTFOUND;
    return WH_OK;
}

static const wh_tmpl_type cfg_type = {
    .name = "*x.Cfg", .kind = WH_TMPL_HOST, .field = cfg_field, .pointer = 1, .pure_fields = 1};
static const struct cfg cfg_inner = {7, "inner.local", NULL}, the_cfg = {15001, "cluster.local", &cfg_inner};

static wh_code root_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out)
{
    if (strcmp(name, "Mesh") != 0)
        return WH_E_NOTFOUND;
    *out = wh_tmpl_host(&cfg_type, &the_cfg);
    return WH_OK;
}

static const wh_tmpl_type root_type = {.name = "*x.Root", .kind = WH_TMPL_HOST, .field = root_field, .pointer = 1};

static void test_const_pure_host(void **state)
{
    static const char *const texts[] = {
        "{{ .Mesh.Port }}|{{ .Mesh.Domain }}|{{ .Mesh.Inner.Domain }}|{{ .Mesh.Inner.Port | default 3 | quote }}",
        "{{ .Mesh.Port | printf \"%05d\" }}|{{ len .Mesh.List }}|{{ .Mesh.Twice 4 }}|{{ typeOf .Mesh.Inner }}",
        "{{ with .Mesh.Inner }}{{ .Domain | upper }}{{ end }}|{{ $.Mesh.Domain }}|{{ if .Mesh.Port }}p{{ end }}",
        "{{ .Mesh.Inner.Inner.Port }}",
        "{{ .Mesh.Missing }}",
    };
    size_t i;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char *res[2];
        int lookups[2];
        for (int konst = 0; konst < 2; konst++) {
            wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | (konst ? 0 : WH_TMPL_NO_FOLD));
            wh_buf out = WH_BUF_INIT;
            wh_err err;
            wh_code rc = WH_OK;
            if (konst)
                assert_int_equal(
                    wh_tmpl_set_const_field(set, &root_type, "Mesh", wh_tmpl_host(&cfg_type, &the_cfg), &err), WH_OK);
            assert_int_equal(wh_tmpl_parse(set, "t", texts[i], strlen(texts[i]), &err), WH_OK);
            cfg_lookups = 0;
            for (int r = 0; r < 3 && rc == WH_OK; r++) {
                wh_buf_reset(&out);
                rc = wh_tmpl_render(set, "t", wh_tmpl_host(&root_type, (void *)1), NULL, &out, &err);
            }
            lookups[konst] = cfg_lookups;
            res[konst] = strdup(rc == WH_OK ? (out.data ? out.data : "") : wh_err_msg(&err));
            wh_buf_free(&out);
            wh_tmpl_set_free(set);
        }
        if (strcmp(res[0], res[1]) != 0)
            fail_msg("%s: want %s, got %s", texts[i], res[0], res[1]);
        if (i == 0 && lookups[1] != 0) /* all resolved when the set was made */
            fail_msg("%s: %d lookups in the renders", texts[i], lookups[1]);
        if (i == 0)
            assert_true(lookups[0] > 0);
        free(res[0]);
        free(res[1]);
    }
}

/* A pure function over constants runs once, when the set is made; over the
 * render's data, and an impure one always, on every render. */
static int ticks;

static wh_code fn_tick(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    ticks++;
    *out = a[0];
    return WH_OK;
}

static void test_folding(void **state)
{
    static const wh_tmpl_func tick_funcs[] = {{"tick", fn_tick, "v", WH_TMPL_FN_PURE}, {"tock", fn_tick, "v", 0}};
    static const char text[] = "{{ tick .Values.s }} {{ tick .Name }} {{ tock .Values.s }} {{ tick \"lit\" | tick }}";
    static const unsigned flags[] = {0, WH_TMPL_NO_FOLD};
    static const int want[] = {3 + 3 * 2 + 3, 3 * 5 + 5};
    json_t *other = json_pack("{s{ss}ss}", "Values", "s", "other", "Name", "n");
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    size_t k;
    int i;
    (void)state;

    for (k = 0; k < 2; k++) {
        wh_tmpl_set *set = wh_tmpl_set_new(flags[k]);
        ticks = 0;
        assert_int_equal(wh_tmpl_set_funcs(set, tick_funcs, 2, &err), WH_OK);
        assert_int_equal(wh_tmpl_set_const_field(set, &pod_type, "Values", wh_tmpl_json(the_pod.values), &err), WH_OK);
        assert_int_equal(wh_tmpl_parse(set, "t", text, strlen(text), &err), WH_OK);
        for (i = 0; i < 3; i++) {
            wh_buf_reset(&out);
            assert_int_equal(wh_tmpl_render(set, "t", wh_tmpl_host(&pod_type, &the_pod), NULL, &out, &err), WH_OK);
            assert_string_equal(out.data, "str hello str lit");
        }
        /* on a receiver the const field does not hold on, it is the render's again */
        wh_buf_reset(&out);
        assert_int_equal(wh_tmpl_render(set, "t", wh_tmpl_json(other), NULL, &out, &err), WH_OK);
        assert_string_equal(out.data, "other n other lit");
        if (ticks != want[k])
            fail_msg("flags %u: %d calls, want %d", flags[k], ticks, want[k]);
        wh_tmpl_set_free(set);
    }
    json_decref(other);
    wh_buf_free(&out);
}

/* The steps a render may take: exactly those of walking every node, whether
 * a run of items is written at once (tm_run) or walked. */
static void test_run_steps(void **state)
{
    static const char text[] =
        "a{{ if .Values.a.b }}x{{ .Values.s }}{{/* c */}}{{ if .Values.zz }}{{ .Name }}{{ else }}"
        "y{{ .Values.n }}{{ end }}{{ end }}b{{ .Name }}c{{ range .Values.a }}{{ . }}{{ end }}";
    static const unsigned flags[] = {WH_TMPL_NO_FOLD, 0};
    wh_buf out = WH_BUF_INIT;
    wh_tmpl_opts opts = {0};
    wh_err err;
    uint64_t need = 0;
    size_t k;
    (void)state;

    for (k = 0; k < 2; k++) {
        wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | flags[k]);
        uint64_t steps;
        assert_int_equal(wh_tmpl_set_funcs(set, funcs, sizeof(funcs) / sizeof(funcs[0]), &err), WH_OK);
        assert_int_equal(wh_tmpl_set_const_field(set, &pod_type, "Values", wh_tmpl_json(the_pod.values), &err), WH_OK);
        assert_int_equal(wh_tmpl_parse(set, "t", text, strlen(text), &err), WH_OK);
        for (steps = 1; steps < 100; steps++) { /* the fewest the render needs */
            opts.max_steps = steps;
            wh_buf_reset(&out);
            if (wh_tmpl_render(set, "t", wh_tmpl_host(&pod_type, &the_pod), &opts, &out, &err) == WH_OK)
                break;
            assert_non_null(strstr(wh_err_msg(&err), "exceeded"));
        }
        assert_string_equal(out.data, "axstry3bhellocx1.5");
        if (k == 0)
            need = steps;
        else if (steps != need)
            fail_msg("folded: %llu steps, walked: %llu", (unsigned long long)steps, (unsigned long long)need);
        wh_tmpl_set_free(set);
    }
    wh_buf_free(&out);
}

/* A stable function reading the render's data: calls counted. */
static int looks;

static wh_code fn_look(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    looks++;
    return wh_tmpl_printf(ctx, out, "%s:%.*s", (const char *)wh_tmpl_user(ctx), (int)a[0].len, a[0].u.s);
}

/* Render `text` with `user` as the render's data, once memoising (flags
 * 0) and once computing everything every time (WH_TMPL_NO_FOLD): the
 * output or error message, malloc'd; *calls: fn_look's calls. */
static char *render_memo(unsigned flags, const char *text, const char *const *users, size_t nusers, int *calls)
{
    static const wh_tmpl_func look_funcs[] = {{"look", fn_look, "s", WH_TMPL_FN_STABLE}};
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | flags);
    wh_buf out = WH_BUF_INIT;
    wh_tmpl_opts opts = {0};
    wh_err err;
    wh_code rc;
    size_t i;

    looks = 0;
    assert_int_equal(wh_tmpl_set_funcs(set, look_funcs, 1, &err), WH_OK);
    rc = wh_tmpl_parse(set, "t", text, strlen(text), &err);
    for (i = 0; rc == WH_OK && i < nusers; i++) { /* renders one after the other share nothing */
        box_made = 0;
        opts.user = (void *)users[i];
        wh_buf_puts(&out, "|");
        rc = wh_tmpl_render(set, "t", wh_tmpl_host(&pod_type, &the_pod), &opts, &out, &err);
    }
    wh_tmpl_set_free(set);
    *calls = looks;
    if (rc != WH_OK) {
        wh_buf_free(&out);
        return strdup(wh_err_msg(&err));
    }
    return wh_buf_steal(&out, NULL);
}

static void test_memo(void **state)
{
    static const struct {
        const char *text, *want;
        int calls, calls_memo; /* fn_look's calls over both renders: computed every time, memoised */
    } cases[] = {
        /* written alike, for the same `.` and `$`: once per render; another `.`: again */
        {"{{ define \"x\" }}{{ look .Name }}{{ end }}{{ look .Name }} {{ look .Name | upper }} {{ template \"x\" . }} "
         "{{ range until 3 }}{{ look $.Name }}{{ end }} {{ template \"y\" \"a\" }}{{ template \"y\" \"b\" }}"
         "{{ define \"y\" }}{{ look . }}{{ end }} {{ look $.Name }}",
         "|u1:hello U1:HELLO u1:hello u1:hellou1:hellou1:hello u1:au1:b u1:hello"
         "|u2:hello U2:HELLO u2:hello u2:hellou2:hellou2:hello u2:au2:b u2:hello",
         2 * 9, 2 * 5},
        /* what a template can change is read every time: a map made in the render, as `.`, `$` or a field */
        {"{{ with dict \"a\" \"1\" }}{{ hasKey . \"b\" }}{{ $_ := set . \"b\" \"2\" }}{{ hasKey . \"b\" }}{{ end }}"
         "{{ define \"h\" }}{{ hasKey $ \"c\" }}{{ end }}{{ $d := dict }}{{ template \"h\" $d }}"
         "{{ $_ := set $d \"c\" 1 }}{{ template \"h\" $d }}"
         "{{ hasKey .Box \"b\" }}{{ $_ := set .Box \"b\" 1 }}{{ hasKey .Box \"b\" }}{{ len .Box }}"
         "{{ $_ := set .Box \"c\" 1 }}{{ len .Box }}{{ and .Box 1 }}{{ $_ := unset .Box \"b\" }}"
         "{{ $_ := unset .Box \"c\" }}{{ and .Box 1 }}",
         "|falsetruefalsetruefalsetrue121map[]|falsetruefalsetruefalsetrue121map[]", 0, 0},
        /* errors after a memoised value are where computing it would have left them */
        {"{{ look .Name }}{{ range look .Name }}{{ end }}", NULL, 0, 0},
        {"{{ look .Name }}\n  {{ indent (look .Name) \"x\" }}", NULL, 0, 0},
        {"{{ look .Name | len }}{{ look .Name | len | printf \"%d\" | add 1 | printf \"%s\" }}", NULL, 0, 0},
    };
    static const char *const users[] = {"u1", "u2"};
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int calls, calls_memo;
        char *want = render_memo(WH_TMPL_NO_FOLD, cases[i].text, users, 2, &calls),
             *got = render_memo(0, cases[i].text, users, 2, &calls_memo);
        if (strcmp(want, got) != 0)
            fail_msg("%s: want %s, got %s", cases[i].text, want, got);
        if (cases[i].want != NULL && strcmp(cases[i].want, got) != 0)
            fail_msg("%s: want %s, got %s", cases[i].text, cases[i].want, got);
        if (cases[i].want != NULL && (calls != cases[i].calls || calls_memo != cases[i].calls_memo))
            fail_msg("%s: %d and %d calls, want %d and %d", cases[i].text, calls, calls_memo, cases[i].calls,
                     cases[i].calls_memo);
        free(want);
        free(got);
    }
}

static void test_threads(void **state)
{
    const char *text = "{{ $d := dict \"n\" .Name }}{{ $_ := set $d \"m\" .Mode.String }}{{ toJson $d }} "
                       "{{ range $k, $v := .Labels }}{{ $k | upper }}{{ end }} {{ toYaml .Labels | trim }}";
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | WH_TMPL_HELM);
    struct thread_arg args[4];
    pthread_t th[4];
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    int i;

    assert_int_equal(wh_tmpl_parse(set, "t", text, strlen(text), &err), WH_OK);
    assert_int_equal(wh_tmpl_render(set, "t", wh_tmpl_host(&pod_type, &the_pod), NULL, &out, &err), WH_OK);
    assert_string_equal(out.data, "{\"m\":\"TPROXY\",\"n\":\"hello\"} APPTIER app: hello\ntier: web");
    for (i = 0; i < 4; i++) {
        args[i].set = set;
        args[i].want = out.data;
        args[i].failures = 0;
        assert_int_equal(pthread_create(&th[i], NULL, render_thread, &args[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    wh_buf_free(&out);
    wh_tmpl_set_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_values),       cmocka_unit_test(test_host_errors),
        cmocka_unit_test(test_sprig_unsupported), cmocka_unit_test(test_functions),
        cmocka_unit_test(test_bad_params),        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_options),           cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_threads),           cmocka_unit_test(test_const_fields),
        cmocka_unit_test(test_const_pure_host),   cmocka_unit_test(test_folding),
        cmocka_unit_test(test_run_steps),         cmocka_unit_test(test_memo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
