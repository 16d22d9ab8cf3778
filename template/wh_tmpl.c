/*
 * wh_tmpl.c - first landing of the template engine's API (see wh_tmpl.h) so
 * that its users can build against it: the value model works, parsing and
 * rendering answer WH_E_UNSUPPORTED until the engine lands.
 */
#include "wh_tmpl.h"

#include <stdlib.h>
#include <string.h>

const wh_tmpl_type wh_tmpl_type_bool = {.name = "bool", .kind = WH_TMPL_BOOL};
const wh_tmpl_type wh_tmpl_type_string = {.name = "string", .kind = WH_TMPL_STRING};
const wh_tmpl_type wh_tmpl_type_int = {.name = "int", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_int32 = {.name = "int32", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_int64 = {.name = "int64", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_uint32 = {.name = "uint32", .kind = WH_TMPL_UINT};
const wh_tmpl_type wh_tmpl_type_uint64 = {.name = "uint64", .kind = WH_TMPL_UINT};
const wh_tmpl_type wh_tmpl_type_float64 = {.name = "float64", .kind = WH_TMPL_FLOAT};
const wh_tmpl_type wh_tmpl_type_map_string_string = {
    .name = "map[string]string", .kind = WH_TMPL_MAP, .elem = &wh_tmpl_type_string};
const wh_tmpl_type wh_tmpl_type_string_slice = {.name = "[]string", .kind = WH_TMPL_LIST, .elem = &wh_tmpl_type_string};
const wh_tmpl_type wh_tmpl_type_map_string_interface = {.name = "map[string]interface {}", .kind = WH_TMPL_MAP};
const wh_tmpl_type wh_tmpl_type_interface_slice = {.name = "[]interface {}", .kind = WH_TMPL_LIST};

struct wh_tmpl_set {
    unsigned flags;
};

wh_tmpl_value wh_tmpl_str(const char *s)
{
    return s != NULL ? wh_tmpl_strn(s, strlen(s)) : wh_tmpl_strn("", 0);
}

wh_tmpl_value wh_tmpl_json(const json_t *j)
{
    if (j == NULL)
        return wh_tmpl_nil();
    switch (json_typeof(j)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        return wh_tmpl_json_typed(j, NULL);
    case JSON_STRING:
        return wh_tmpl_strn(json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        return wh_tmpl_float((double)json_integer_value(j));
    case JSON_REAL:
        return wh_tmpl_float(json_real_value(j));
    case JSON_TRUE:
        return wh_tmpl_bool(1);
    case JSON_FALSE:
        return wh_tmpl_bool(0);
    default:
        return wh_tmpl_nil();
    }
}

wh_tmpl_value wh_tmpl_json_typed(const json_t *j, const wh_tmpl_type *type)
{
    wh_tmpl_value v = {0};

    v.kind = (type != NULL ? type->kind : (j != NULL && json_is_array(j)) ? WH_TMPL_LIST : WH_TMPL_MAP);
    v.rep = WH_TMPL_REP_JSON;
    v.type = type;
    v.u.json = j;
    return v;
}

wh_tmpl_set *wh_tmpl_set_new(unsigned flags)
{
    wh_tmpl_set *set = calloc(1, sizeof(*set));

    if (set != NULL)
        set->flags = flags;
    return set;
}

void wh_tmpl_set_free(wh_tmpl_set *set)
{
    free(set);
}

wh_code wh_tmpl_set_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, wh_err *err)
{
    return wh_err_set(err, WH_E_UNSUPPORTED, "template engine not implemented yet");
}

wh_code wh_tmpl_parse(wh_tmpl_set *set, const char *name, const char *text, size_t len, wh_err *err)
{
    return wh_err_set(err, WH_E_UNSUPPORTED, "template engine not implemented yet");
}

wh_code wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                       wh_buf *out, wh_err *err)
{
    return wh_err_set(err, WH_E_UNSUPPORTED, "template engine not implemented yet");
}

#define NOT_YET WH_E_UNSUPPORTED

const char *wh_tmpl_type_name(const wh_tmpl_value *v) { return v->type != NULL ? v->type->name : "<nil>"; }
int wh_tmpl_truth(const wh_tmpl_value *v) { return 0; }
long wh_tmpl_len(const wh_tmpl_value *v) { return -1; }
wh_tmpl_value wh_tmpl_list_at(const wh_tmpl_value *list, size_t i) { return wh_tmpl_invalid(); }
wh_code wh_tmpl_map_get(const wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value *out) { return NOT_YET; }
wh_code wh_tmpl_map_entries(wh_tmpl_ctx *ctx, const wh_tmpl_value *map, wh_tmpl_kv **out, size_t *n) { return NOT_YET; }
wh_tmpl_value wh_tmpl_list_new(wh_tmpl_ctx *ctx, size_t cap_hint, const wh_tmpl_type *type) { return wh_tmpl_invalid(); }
wh_code wh_tmpl_list_push(wh_tmpl_ctx *ctx, wh_tmpl_value *list, wh_tmpl_value item) { return NOT_YET; }
wh_tmpl_value wh_tmpl_map_new(wh_tmpl_ctx *ctx, const wh_tmpl_type *type) { return wh_tmpl_invalid(); }
wh_code wh_tmpl_map_set(wh_tmpl_ctx *ctx, wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value val) { return NOT_YET; }
wh_code wh_tmpl_sprint(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out) { return NOT_YET; }
wh_code wh_tmpl_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out) { return NOT_YET; }
void *wh_tmpl_func_data(wh_tmpl_ctx *ctx) { return NULL; }
wh_code wh_tmpl_set_delims(wh_tmpl_set *set, const char *left, const char *right, wh_err *err) { return wh_err_set(err, NOT_YET, "template engine not implemented yet"); }
int wh_tmpl_has(const wh_tmpl_set *set, const char *name) { return 0; }
wh_tmpl_scratch *wh_tmpl_scratch_new(void) { return NULL; }
void wh_tmpl_scratch_free(wh_tmpl_scratch *s) { }
void *wh_tmpl_user(wh_tmpl_ctx *ctx) { return NULL; }
void *wh_tmpl_alloc(wh_tmpl_ctx *ctx, size_t size) { return NULL; }
wh_code wh_tmpl_strdup(wh_tmpl_ctx *ctx, const char *s, size_t len, wh_tmpl_value *out) { return NOT_YET; }
wh_code wh_tmpl_printf(wh_tmpl_ctx *ctx, wh_tmpl_value *out, const char *fmt, ...) { return NOT_YET; }
wh_buf *wh_tmpl_tmpbuf(wh_tmpl_ctx *ctx) { return NULL; }
wh_code wh_tmpl_errorf(wh_tmpl_ctx *ctx, const char *fmt, ...) { return WH_E_RENDER; }
wh_code wh_tmpl_exec_named(wh_tmpl_ctx *ctx, const char *name, wh_tmpl_value data, wh_tmpl_value *out) { return NOT_YET; }
wh_code wh_tmpl_exec_text(wh_tmpl_ctx *ctx, const char *text, size_t len, wh_tmpl_value data, wh_tmpl_value *out) { return NOT_YET; }
