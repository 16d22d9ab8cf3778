/*
 * fuzz_template.c - libFuzzer target for the template engine: parse a
 * template and render it against JSON data.  Input: template text, then a
 * NUL byte, then the data as JSON (absent or invalid: null).  Limits keep
 * hostile templates (exponential template calls, huge repeats) bounded.
 * The text is also rendered against a host root whose one field, Values, is
 * that data: once looked up by the render, once declared const
 * (wh_tmpl_set_const_field, chains resolved at parse time) with the
 * pipelines of pure functions over constants computed once there too and
 * those of stable ones (`value`, reading the render's data) once per render,
 * and once with nothing computed ahead (WH_TMPL_NO_FOLD); the two must give
 * the same output and the same error.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct root {
    const json_t *values;
};

static wh_code root_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                          size_t nargs, wh_tmpl_value *out)
{
    const struct root *r = recv->u.host;

    if (strcmp(name, "Values") != 0)
        return WH_E_NOTFOUND;
    if (r == NULL)
        return wh_tmpl_errorf(ctx, "nil pointer evaluating *fuzz.Root.Values");
    *out = wh_tmpl_json(r->values);
    return WH_OK;
}

static const wh_tmpl_type root_type = {.name = "*fuzz.Root", .kind = WH_TMPL_HOST, .field = root_field, .pointer = 1};

/* value KEY: the data's KEY read through the render's user data (stable
 * within a render, WH_TMPL_FN_STABLE). */
static wh_code fn_value(wh_tmpl_ctx *ctx, const wh_tmpl_value *args, size_t nargs, wh_tmpl_value *out)
{
    const struct root *r = wh_tmpl_user(ctx);
    wh_tmpl_value data = wh_tmpl_json(r != NULL ? r->values : NULL);

    if (wh_tmpl_map_get(&data, args[0].u.s, args[0].len, out) != WH_OK)
        *out = wh_tmpl_nil();
    return WH_OK;
}

static const wh_tmpl_func funcs[] = {{"value", fn_value, "s", WH_TMPL_FN_STABLE}};

static const wh_tmpl_opts *limits(wh_tmpl_opts *opts, wh_tmpl_pos *pos, const struct root *root)
{
    memset(opts, 0, sizeof(*opts));
    opts->user = (void *)root;
    opts->max_output = 1 << 20;
    opts->max_steps = 200000;
    opts->max_depth = 200;
    opts->pos = pos;
    return opts;
}

/* Render `text` against the root; `konst`: with Values declared const and
 * pipelines folded, else with nothing computed ahead. */
static wh_code render_root(const char *text, size_t tlen, const struct root *root, int konst, wh_buf *out, wh_err *err)
{
    wh_tmpl_set *set = wh_tmpl_set_new(WH_TMPL_SPRIG | WH_TMPL_HELM | (konst ? 0 : WH_TMPL_NO_FOLD));
    wh_tmpl_opts opts;
    wh_tmpl_pos pos;
    wh_code rc;

    if (set == NULL)
        abort();
    if (wh_tmpl_set_funcs(set, funcs, 1, err) != WH_OK)
        abort();
    if (konst && wh_tmpl_set_const_field(set, &root_type, "Values", wh_tmpl_json(root->values), err) != WH_OK)
        abort();
    rc = wh_tmpl_parse(set, "fuzz", text, tlen, err);
    if (rc == WH_OK)
        rc = wh_tmpl_render(set, "fuzz", wh_tmpl_host(&root_type, root), limits(&opts, &pos, root), out, err);
    wh_tmpl_set_free(set);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(data, 0, size);
    size_t tlen = nul != NULL ? (size_t)(nul - text) : size;
    json_t *doc = NULL;
    wh_tmpl_set *set;
    wh_buf out = WH_BUF_INIT, a = WH_BUF_INIT, b = WH_BUF_INIT;
    wh_tmpl_opts opts;
    wh_tmpl_pos pos;
    wh_err err, erra = {0}, errb = {0};
    wh_code rca, rcb;
    struct root root;

    if (nul != NULL)
        doc = json_loadb(nul + 1, size - tlen - 1, JSON_DECODE_ANY, NULL);
    root.values = doc;
    if ((set = wh_tmpl_set_new(WH_TMPL_SPRIG | WH_TMPL_HELM)) == NULL ||
        wh_tmpl_set_funcs(set, funcs, 1, &err) != WH_OK)
        goto out;
    if (wh_tmpl_parse(set, "fuzz", text, tlen, &err) != WH_OK)
        goto out;
    (void)wh_tmpl_render(set, "fuzz", wh_tmpl_json(doc), limits(&opts, &pos, &root), &out, &err);

    rca = render_root(text, tlen, &root, 0, &a, &erra);
    rcb = render_root(text, tlen, &root, 1, &b, &errb);
    if (rca != WH_E_LIMIT && rcb != WH_E_LIMIT &&
        (rca != rcb || a.len != b.len || (a.len != 0 && memcmp(a.data, b.data, a.len) != 0) ||
         (rca != WH_OK && strcmp(wh_err_msg(&erra), wh_err_msg(&errb)) != 0)))
        abort(); /* a const field or a fold changed what the template renders */
out:
    wh_buf_free(&out);
    wh_buf_free(&a);
    wh_buf_free(&b);
    wh_tmpl_set_free(set);
    json_decref(doc);
    return 0;
}
