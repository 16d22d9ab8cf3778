/*
 * helm.c - the functions Helm 3 adds to Sprig for charts: toYaml (through
 * sigs.k8s.io/yaml's output, trailing newline trimmed), fromYaml,
 * fromYamlArray, fromJsonArray, required, include and tpl.
 */
#include <string.h>

#include "tmpl_int.h"
#include "wh_go.h"
#include "wh_yaml.h"

#define FN(name) static wh_code name(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)

FN(fn_toyaml)
{
    json_t *j = NULL;
    wh_buf *b;
    wh_err err;
    wh_code rc;

    if ((rc = tm_value_to_json(ctx, &a[0], &j)) != WH_OK) {
        /* Helm: a marshalling error gives "" */
        ctx->failed = 0;
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    b = wh_tmpl_tmpbuf(ctx);
    rc = wh_yaml_dump(j, b, &err);
    json_decref(j);
    if (rc != WH_OK) {
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    if (b->len > 0 && b->data[b->len - 1] == '\n')
        b->data[--b->len] = 0;
    return tm_ret_buf(ctx, out, b);
}

/* Go's yaml error text as sigs.k8s.io/yaml reports it */
static wh_code yaml_error(wh_tmpl_ctx *ctx, const char *msg, wh_tmpl_value *s)
{
    return wh_tmpl_printf(ctx, s, "error converting YAML to JSON: %s", msg);
}

/* Helm's text for a document of the wrong JSON type (`prefix` first). */
static wh_code unmarshal_error(wh_tmpl_ctx *ctx, const char *prefix, const json_t *j, const char *go_type,
                               wh_tmpl_value *msg)
{
    wh_buf text = WH_BUF_INIT;
    wh_code rc;

    wh_buf_puts(&text, prefix);
    wh_go_unmarshal_error(&text, wh_go_json_kind(j), NULL, NULL, go_type);
    rc = wh_tmpl_printf(ctx, msg, "%s", text.data);
    wh_buf_free(&text);
    return rc;
}

FN(fn_fromyaml)
{
    json_t *j = NULL;
    wh_err err;
    wh_code rc;

    wh_err_clear(&err);
    *out = wh_tmpl_map_new(ctx, NULL);
    rc = wh_yaml_load(a[0].u.s, a[0].len, &j, &err);
    if (rc == WH_OK && (json_is_object(j) || json_is_null(j))) {
        if (json_is_object(j)) {
            *out = tm_adopt_json(ctx, j);
        } else {
            json_decref(j);
        }
        return WH_OK;
    }
    {
        wh_tmpl_value msg;
        if (rc == WH_OK) {
            rc = unmarshal_error(ctx, "error unmarshaling JSON: while decoding JSON: ", j, "map[string]interface {}",
                                 &msg);
            json_decref(j);
        } else {
            rc = yaml_error(ctx, wh_err_msg(&err), &msg);
        }
        if (rc != WH_OK)
            return rc;
        return wh_tmpl_map_set(ctx, out, "Error", 5, msg);
    }
}

static wh_code from_array(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int yaml, wh_tmpl_value *out)
{
    json_t *j = NULL;
    json_error_t jerr;
    wh_err err;
    wh_code rc = WH_OK;
    wh_tmpl_value msg;

    wh_err_clear(&err);
    if (yaml) {
        rc = wh_yaml_load(s->u.s, s->len, &j, &err);
    } else if ((j = json_loadb(s->u.s, s->len, JSON_DECODE_ANY, &jerr)) == NULL) {
        rc = WH_E_PARSE;
        wh_err_set(&err, rc, "%s", s->len == 0 ? "unexpected end of JSON input" : jerr.text);
    }
    if (rc == WH_OK && (json_is_array(j) || json_is_null(j))) {
        if (json_is_null(j)) {
            json_decref(j);
            *out = wh_tmpl_list_new(ctx, 0, NULL);
            return WH_OK;
        }
        *out = tm_adopt_json(ctx, j);
        return WH_OK;
    }
    if (rc == WH_OK) {
        rc = unmarshal_error(ctx, yaml ? "error unmarshaling JSON: while decoding JSON: " : "", j, "[]interface {}",
                             &msg);
        json_decref(j);
    } else if (yaml) {
        rc = yaml_error(ctx, wh_err_msg(&err), &msg);
    } else {
        rc = wh_tmpl_printf(ctx, &msg, "%s", wh_err_msg(&err));
    }
    if (rc != WH_OK)
        return rc;
    *out = wh_tmpl_list_new(ctx, 1, NULL);
    return wh_tmpl_list_push(ctx, out, msg);
}

FN(fn_fromyamlarray)
{
    return from_array(ctx, &a[0], 1, out);
}

FN(fn_fromjsonarray)
{
    return from_array(ctx, &a[0], 0, out);
}

FN(fn_required)
{
    if (a[1].kind == WH_TMPL_NIL || a[1].kind == WH_TMPL_INVALID ||
        (a[1].kind == WH_TMPL_STRING && a[1].len == 0 && a[1].type == NULL))
        return wh_tmpl_errorf(ctx, "%.*s", (int)a[0].len, a[0].u.s);
    *out = a[1];
    return WH_OK;
}

FN(fn_include)
{
    char name[512];

    if (a[0].len >= sizeof(name))
        return wh_tmpl_errorf(ctx, "template: no template \"%.*s\"", (int)a[0].len, a[0].u.s);
    memcpy(name, a[0].u.s, a[0].len);
    name[a[0].len] = 0;
    return wh_tmpl_exec_named(ctx, name, a[1], out);
}

FN(fn_tpl)
{
    return wh_tmpl_exec_text(ctx, a[0].u.s, a[0].len, a[1], out);
}

const wh_tmpl_func tm_helm_funcs[] = {
    {"fromJsonArray", fn_fromjsonarray, "s", WH_TMPL_FN_PURE},
    {"fromYaml", fn_fromyaml, "s", WH_TMPL_FN_PURE},
    {"fromYamlArray", fn_fromyamlarray, "s", WH_TMPL_FN_PURE},
    {"include", fn_include, "sv", 0},
    {"required", fn_required, "sv", WH_TMPL_FN_PURE},
    {"toYaml", fn_toyaml, "v", WH_TMPL_FN_PURE},
    {"tpl", fn_tpl, "sm", 0},
};
const size_t tm_helm_nfuncs = sizeof(tm_helm_funcs) / sizeof(tm_helm_funcs[0]);
