/*
 * sprig_defaults.c - Sprig's defaults.go: default, empty, coalesce, all/any,
 * ternary, fail, and its JSON functions (toJson, toPrettyJson, toRawJson,
 * fromJson and their must* forms).
 */
#define _GNU_SOURCE

#include "sprig_int.h"

FN(fn_default)
{
    if (n < 2 || sprig_empty(&a[1]))
        *out = a[0];
    else
        *out = a[1];
    return WH_OK;
}

FN(fn_empty)
{
    return sprig_ret_bool(out, sprig_empty(&a[0]));
}

FN(fn_coalesce)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (!sprig_empty(&a[i])) {
            *out = a[i];
            return WH_OK;
        }
    }
    *out = wh_tmpl_nil();
    return WH_OK;
}

FN(fn_all)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (sprig_empty(&a[i]))
            return sprig_ret_bool(out, 0);
    return sprig_ret_bool(out, 1);
}

FN(fn_any)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!sprig_empty(&a[i]))
            return sprig_ret_bool(out, 1);
    return sprig_ret_bool(out, 0);
}

FN(fn_ternary)
{
    *out = a[2].u.b ? a[0] : a[1];
    return WH_OK;
}

FN(fn_fail)
{
    return wh_tmpl_errorf(ctx, "%.*s", (int)a[0].len, a[0].u.s);
}

/* ---- JSON ---- */

static wh_code from_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *s, int must, wh_tmpl_value *out)
{
    json_error_t jerr;
    json_t *j = json_loadb(s->u.s, s->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

    if (j == NULL) {
        if (must)
            return wh_tmpl_errorf(ctx, "%s", s->len == 0 ? "unexpected end of JSON input" : jerr.text);
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    *out = tm_adopt_json(ctx, j);
    out->flags_ |= TM_F_IFACE;
    return WH_OK;
}

FN(fn_fromjson)
{
    return from_json(ctx, &a[0], 0, out);
}

FN(fn_mustfromjson)
{
    return from_json(ctx, &a[0], 1, out);
}

static wh_code to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char *indent, int html, int must,
                       wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = tm_json_encode(ctx, v, b, indent, html);

    if (rc != WH_OK)
        return sprig_or_zero(ctx, rc, must, wh_tmpl_strn("", 0), out);
    return tm_ret_buf(ctx, out, b);
}

FN(fn_tojson)
{
    return to_json(ctx, &a[0], NULL, 1, 0, out);
}

FN(fn_musttojson)
{
    return to_json(ctx, &a[0], NULL, 1, 1, out);
}

FN(fn_toprettyjson)
{
    return to_json(ctx, &a[0], "  ", 1, 0, out);
}

FN(fn_musttoprettyjson)
{
    return to_json(ctx, &a[0], "  ", 1, 1, out);
}

FN(fn_torawjson)
{
    return to_json(ctx, &a[0], NULL, 0, 1, out);
}

const wh_tmpl_func tm_sprig_defaults_funcs[] = {
    {"all", fn_all, "v*", WH_TMPL_FN_PURE},
    {"any", fn_any, "v*", WH_TMPL_FN_PURE},
    {"coalesce", fn_coalesce, "v*", WH_TMPL_FN_PURE},
    {"default", fn_default, "vv*", WH_TMPL_FN_PURE},
    {"empty", fn_empty, "v", WH_TMPL_FN_PURE},
    {"fail", fn_fail, "s", 0},
    {"fromJson", fn_fromjson, "s", WH_TMPL_FN_PURE},
    {"mustFromJson", fn_mustfromjson, "s", WH_TMPL_FN_PURE},
    {"mustToJson", fn_musttojson, "v", WH_TMPL_FN_PURE},
    {"mustToPrettyJson", fn_musttoprettyjson, "v", WH_TMPL_FN_PURE},
    {"mustToRawJson", fn_torawjson, "v", WH_TMPL_FN_PURE},
    {"ternary", fn_ternary, "vvb", WH_TMPL_FN_PURE},
    {"toJson", fn_tojson, "v", WH_TMPL_FN_PURE},
    {"toPrettyJson", fn_toprettyjson, "v", WH_TMPL_FN_PURE},
    {"toRawJson", fn_torawjson, "v", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_defaults_nfuncs = sizeof(tm_sprig_defaults_funcs) / sizeof(tm_sprig_defaults_funcs[0]);
