/*
 * value.c - the engine's Go values: types, truth, collections (JSON-backed or
 * built during a render), fmt's %v printing and encoding/json's encoding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl_int.h"
#include "wh_chars.h"
#include "wh_go.h"

const wh_tmpl_type wh_tmpl_type_bool = {.name = "bool", .kind = WH_TMPL_BOOL};
const wh_tmpl_type wh_tmpl_type_string = {.name = "string", .kind = WH_TMPL_STRING};
const wh_tmpl_type wh_tmpl_type_int = {.name = "int", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_int32 = {.name = "int32", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_int64 = {.name = "int64", .kind = WH_TMPL_INT};
const wh_tmpl_type wh_tmpl_type_float64 = {.name = "float64", .kind = WH_TMPL_FLOAT};
const wh_tmpl_type wh_tmpl_type_map_string_string = {
    .name = "map[string]string", .kind = WH_TMPL_MAP, .elem = &wh_tmpl_type_string};
const wh_tmpl_type wh_tmpl_type_string_slice = {.name = "[]string", .kind = WH_TMPL_LIST, .elem = &wh_tmpl_type_string};
const wh_tmpl_type wh_tmpl_type_map_string_interface = {.name = "map[string]interface {}", .kind = WH_TMPL_MAP};
const wh_tmpl_type wh_tmpl_type_interface_slice = {.name = "[]interface {}", .kind = WH_TMPL_LIST};

/* Several lists may share one items array (Sprig's append extends its
 * argument's array in place, like Go's append into spare capacity): `used`
 * counts the array's slots taken by any of them, so only the list that ends
 * where the array's use ends may extend it; any other copies first. */
struct wh_tmpl_list {
    size_t len, cap;
    wh_tmpl_value *items;
    size_t *used; /* shared with the array; NULL while items is NULL */
};

struct wh_tmpl_map {
    size_t len, cap;
    wh_tmpl_kv *ents; /* sorted by key */
};

/* ---- constructors ---- */

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

    if (type != NULL)
        v.kind = type->kind;
    else
        v.kind = (j != NULL && json_is_array(j)) ? WH_TMPL_LIST : WH_TMPL_MAP;
    if (type == &wh_tmpl_type_map_string_interface || type == &wh_tmpl_type_interface_slice)
        type = NULL;
    v.rep = WH_TMPL_REP_JSON;
    v.type = type;
    v.u.json = j;
    if (j != NULL && ((v.kind == WH_TMPL_LIST && !json_is_array(j)) || (v.kind == WH_TMPL_MAP && !json_is_object(j))))
        v.u.json = NULL;
    return v;
}

/* Element of a JSON-backed collection as a value of the collection's element type. */
static wh_tmpl_value tm_json_elem(const json_t *j, const wh_tmpl_type *elem)
{
    wh_tmpl_value v;

    if (elem == NULL) {
        v = wh_tmpl_json(j);
        v.flags_ |= TM_F_IFACE;
        return v;
    }
    switch (elem->kind) {
    case WH_TMPL_STRING:
        v = json_is_string(j) ? wh_tmpl_strn(json_string_value(j), json_string_length(j)) : wh_tmpl_strn("", 0);
        break;
    case WH_TMPL_INT:
        v = wh_tmpl_int(json_is_integer(j) ? json_integer_value(j) : (int64_t)json_number_value(j));
        break;
    case WH_TMPL_UINT:
        v = wh_tmpl_uint_typed(json_is_integer(j) ? (uint64_t)json_integer_value(j) : (uint64_t)json_number_value(j),
                               elem);
        break;
    case WH_TMPL_FLOAT:
        v = wh_tmpl_float(json_number_value(j));
        break;
    case WH_TMPL_BOOL:
        v = wh_tmpl_bool(json_is_true(j));
        break;
    case WH_TMPL_LIST:
    case WH_TMPL_MAP:
        return wh_tmpl_json_typed(json_is_null(j) ? NULL : j, elem);
    default:
        return wh_tmpl_json(j);
    }
    v.type = elem;
    return v;
}

/* ---- types ---- */

static const char *const kind_names[] = {
    "<nil>", "<nil>", "bool", "int", "uint", "float64", "string", "[]interface {}", "map[string]interface {}",
    "struct"};

const char *tm_type_name(const wh_tmpl_value *v)
{
    if (v->type != NULL)
        return v->type->name;
    return kind_names[v->kind <= WH_TMPL_HOST ? v->kind : 0];
}

const char *wh_tmpl_type_name(const wh_tmpl_value *v)
{
    return tm_type_name(v);
}

static const wh_tmpl_type *const default_types[] = {NULL,
                                                    NULL,
                                                    &wh_tmpl_type_bool,
                                                    &wh_tmpl_type_int,
                                                    NULL,
                                                    &wh_tmpl_type_float64,
                                                    &wh_tmpl_type_string,
                                                    &wh_tmpl_type_interface_slice,
                                                    &wh_tmpl_type_map_string_interface,
                                                    NULL};

int tm_same_type(const wh_tmpl_value *v, const wh_tmpl_type *t, wh_tmpl_kind kind)
{
    const wh_tmpl_type *a, *b;

    if (v->kind != kind)
        return 0;
    if (v->type == t)
        return 1;
    /* NULL and the engine's default descriptor are the same type */
    a = v->type != NULL ? v->type : default_types[kind];
    b = t != NULL ? t : default_types[kind];
    if (a == b)
        return 1;
    return strcmp(tm_type_name(v), t != NULL ? t->name : kind_names[kind]) == 0;
}

const wh_tmpl_type *tm_elem_type(const wh_tmpl_value *v)
{
    return v->type != NULL ? v->type->elem : NULL;
}

wh_tmpl_value tm_zero(const wh_tmpl_type *t)
{
    wh_tmpl_value v = {0};

    if (t == NULL)
        return wh_tmpl_nil();
    v.kind = t->kind;
    v.type = t;
    if (t->kind == WH_TMPL_STRING)
        v.u.s = "";
    return v;
}

int tm_truth(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_BOOL:
        return v->u.b;
    case WH_TMPL_INT:
        return v->u.i != 0;
    case WH_TMPL_UINT:
        return v->u.u != 0;
    case WH_TMPL_FLOAT:
        return v->u.f != 0;
    case WH_TMPL_STRING:
        return v->len != 0;
    case WH_TMPL_LIST:
    case WH_TMPL_MAP:
        return wh_tmpl_len(v) > 0;
    case WH_TMPL_HOST:
        return !(v->type != NULL && v->type->pointer && v->u.host == NULL);
    default:
        return 0;
    }
}

/* ---- collections ---- */

long wh_tmpl_len(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_STRING:
        return (long)v->len;
    case WH_TMPL_LIST:
        if (v->rep == WH_TMPL_REP_JSON)
            return v->u.json != NULL ? (long)json_array_size(v->u.json) : 0;
        return v->u.list != NULL ? (long)v->u.list->len : 0;
    case WH_TMPL_MAP:
        if (v->rep == WH_TMPL_REP_JSON)
            return v->u.json != NULL ? (long)json_object_size(v->u.json) : 0;
        return v->u.map != NULL ? (long)v->u.map->len : 0;
    default:
        return -1;
    }
}

wh_tmpl_value wh_tmpl_list_at(const wh_tmpl_value *list, size_t i)
{
    if (list->kind != WH_TMPL_LIST || (long)i >= wh_tmpl_len(list))
        return wh_tmpl_invalid();
    if (list->rep == WH_TMPL_REP_JSON)
        return tm_json_elem(json_array_get(list->u.json, i), tm_elem_type(list));
    if (list->type == NULL) {
        wh_tmpl_value v = list->u.list->items[i];
        v.flags_ |= TM_F_IFACE;
        return v;
    }
    return list->u.list->items[i];
}

int tm_strcmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;

    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Binary search in an engine map: index of key, or -(insertion point)-1. */
static long map_find(const wh_tmpl_map *m, const char *key, size_t key_len)
{
    long lo = 0, hi = (long)m->len - 1;

    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        int c = tm_strcmp(m->ents[mid].key, m->ents[mid].key_len, key, key_len);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

wh_code wh_tmpl_map_get(const wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value *out)
{
    if (map->kind != WH_TMPL_MAP)
        return WH_E_NOTFOUND;
    if (map->rep == WH_TMPL_REP_JSON) {
        const json_t *j;
        if (map->u.json == NULL || (j = json_object_getn(map->u.json, key, key_len)) == NULL)
            return WH_E_NOTFOUND;
        *out = tm_json_elem(j, tm_elem_type(map));
        return WH_OK;
    }
    if (map->u.map != NULL) {
        long i = map_find(map->u.map, key, key_len);
        if (i >= 0) {
            *out = map->u.map->ents[i].val;
            if (map->type == NULL)
                out->flags_ |= TM_F_IFACE;
            return WH_OK;
        }
    }
    return WH_E_NOTFOUND;
}

static int kv_cmp(const void *a, const void *b)
{
    const wh_tmpl_kv *x = a, *y = b;
    return tm_strcmp(x->key, x->key_len, y->key, y->key_len);
}

wh_code wh_tmpl_map_entries(wh_tmpl_ctx *ctx, const wh_tmpl_value *map, wh_tmpl_kv **out, size_t *n)
{
    size_t len = (size_t)(wh_tmpl_len(map) > 0 ? wh_tmpl_len(map) : 0), i = 0;
    wh_tmpl_kv *ents;
    const char *k;
    json_t *v;
    const wh_tmpl_type *elem = tm_elem_type(map);

    *out = NULL;
    *n = 0;
    if (map->kind != WH_TMPL_MAP || len == 0)
        return WH_OK;
    if (map->rep == WH_TMPL_REP_ENGINE) {
        *out = map->u.map->ents;
        *n = len;
        return WH_OK;
    }
    ents = tm_alloc(ctx->arena, len * sizeof(*ents));
    json_object_foreach((json_t *)map->u.json, k, v)
    {
        ents[i].key = k;
        ents[i].key_len = strlen(k);
        ents[i].val = tm_json_elem(v, elem);
        i++;
    }
    qsort(ents, i, sizeof(*ents), kv_cmp);
    *out = ents;
    *n = i;
    return WH_OK;
}

wh_tmpl_value wh_tmpl_list_new(wh_tmpl_ctx *ctx, size_t cap_hint, const wh_tmpl_type *type)
{
    wh_tmpl_value v = {0};
    wh_tmpl_list *l = tm_alloc(ctx->arena, sizeof(*l));

    v.kind = WH_TMPL_LIST;
    v.rep = WH_TMPL_REP_ENGINE;
    v.type = type == &wh_tmpl_type_interface_slice ? NULL : type;
    l->len = 0;
    l->cap = cap_hint;
    l->items = NULL;
    l->used = NULL;
    if (cap_hint && ((l->items = tm_alloc(ctx->arena, cap_hint * sizeof(wh_tmpl_value))) == NULL ||
                     (l->used = tm_alloc(ctx->arena, sizeof(*l->used))) == NULL))
        return wh_tmpl_invalid();
    if (l->used != NULL)
        *l->used = 0;
    v.u.list = l;
    return v;
}

wh_code tm_list_append(wh_tmpl_ctx *ctx, const wh_tmpl_value *list, wh_tmpl_value item, wh_tmpl_value *out)
{
    wh_tmpl_list *l = tm_alloc(ctx->arena, sizeof(*l));

    *l = *list->u.list;
    *out = *list;
    out->flags_ = 0;
    out->u.list = l;
    return wh_tmpl_list_push(ctx, out, item);
}

wh_code wh_tmpl_list_push(wh_tmpl_ctx *ctx, wh_tmpl_value *list, wh_tmpl_value item)
{
    wh_tmpl_list *l = list->u.list;

    if (list->kind != WH_TMPL_LIST || list->rep != WH_TMPL_REP_ENGINE || l == NULL)
        return WH_E_INVALID;
    if (list->type == NULL) /* an element of []interface{} */
        item.flags_ |= TM_F_IFACE;
    if (l->len == l->cap || (l->used != NULL && *l->used != l->len)) {
        /* full, or another list took the next slot: a new array of our own */
        size_t cap = l->len ? l->len * 2 : 4;
        wh_tmpl_value *items = tm_alloc(ctx->arena, cap * sizeof(*items));
        size_t *used = tm_alloc(ctx->arena, sizeof(*used));
        if (l->len)
            memcpy(items, l->items, l->len * sizeof(*items));
        l->items = items;
        l->cap = cap;
        l->used = used;
    }
    l->items[l->len++] = item;
    *l->used = l->len;
    return WH_OK;
}

wh_tmpl_value wh_tmpl_map_new(wh_tmpl_ctx *ctx, const wh_tmpl_type *type)
{
    wh_tmpl_value v = {0};
    wh_tmpl_map *m = tm_alloc(ctx->arena, sizeof(*m));

    memset(m, 0, sizeof(*m));
    v.kind = WH_TMPL_MAP;
    v.rep = WH_TMPL_REP_ENGINE;
    v.type = type == &wh_tmpl_type_map_string_interface ? NULL : type;
    v.u.map = m;
    return v;
}

wh_code wh_tmpl_map_set(wh_tmpl_ctx *ctx, wh_tmpl_value *map, const char *key, size_t key_len, wh_tmpl_value val)
{
    wh_tmpl_map *m = map->u.map;
    long i;
    char *k;

    if (map->kind != WH_TMPL_MAP || map->rep != WH_TMPL_REP_ENGINE || m == NULL)
        return WH_E_INVALID;
    if (map->type == NULL) /* an element of map[string]interface{} */
        val.flags_ |= TM_F_IFACE;
    i = map_find(m, key, key_len);
    if (i >= 0) {
        m->ents[i].val = val;
        return WH_OK;
    }
    i = -i - 1;
    if (m->len == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        wh_tmpl_kv *ents = tm_alloc(ctx->arena, cap * sizeof(*ents));
        if (m->len)
            memcpy(ents, m->ents, m->len * sizeof(*ents));
        m->ents = ents;
        m->cap = cap;
    }
    k = tm_strndup(ctx->arena, key, key_len);
    memmove(&m->ents[i + 1], &m->ents[i], (m->len - (size_t)i) * sizeof(*m->ents));
    m->ents[i].key = k;
    m->ents[i].key_len = key_len;
    m->ents[i].val = val;
    m->len++;
    return WH_OK;
}

wh_tmpl_value *tm_list_items(wh_tmpl_value *list)
{
    return list->rep == WH_TMPL_REP_ENGINE && list->u.list != NULL ? list->u.list->items : NULL;
}

/* Remove a key from an engine map (sprig's unset). */
void tm_map_delete(wh_tmpl_value *map, const char *key, size_t key_len)
{
    wh_tmpl_map *m = map->u.map;
    long i;

    if (map->kind != WH_TMPL_MAP || map->rep != WH_TMPL_REP_ENGINE || m == NULL)
        return;
    if ((i = map_find(m, key, key_len)) < 0)
        return;
    memmove(&m->ents[i], &m->ents[i + 1], (m->len - (size_t)i - 1) * sizeof(*m->ents));
    m->len--;
}

/* ---- floats ---- */

/* Append a signed integer in decimal. */
static wh_code tm_put_int(wh_buf *out, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[sizeof(tmp) - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        tmp[sizeof(tmp) - 1 - n++] = '-';
    wh_buf_append(out, tmp + sizeof(tmp) - n, (size_t)n);
    return WH_OK;
}

/* ---- %v ---- */

wh_code tm_print_value(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out, int top)
{
    wh_code rc = WH_OK;

    if (v->type != NULL && v->type->format != NULL &&
        !(v->kind == WH_TMPL_HOST && v->u.host == NULL && v->type->pointer))
        return v->type->format(ctx, v, out);
    switch (v->kind) {
    case WH_TMPL_INVALID:
        wh_buf_puts(out, "<no value>");
        return WH_OK;
    case WH_TMPL_NIL:
        wh_buf_puts(out, "<nil>");
        return WH_OK;
    case WH_TMPL_BOOL:
        wh_buf_puts(out, v->u.b ? "true" : "false");
        return WH_OK;
    case WH_TMPL_INT:
        return tm_put_int(out, v->u.i);
    case WH_TMPL_UINT:
        wh_buf_printf(out, "%llu", (unsigned long long)v->u.u);
        return WH_OK;
    case WH_TMPL_FLOAT:
        wh_go_float(out, v->u.f, 'g', -1);
        return WH_OK;
    case WH_TMPL_STRING:
        wh_buf_append(out, v->u.s, v->len);
        return WH_OK;
    case WH_TMPL_LIST: {
        long n = wh_tmpl_len(v), i;
        wh_buf_putc(out, '[');
        for (i = 0; i < n && rc == WH_OK; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
            if (i > 0)
                wh_buf_putc(out, ' ');
            rc = tm_print_value(ctx, &e, out, 0);
        }
        if (rc == WH_OK)
            wh_buf_putc(out, ']');
        return rc;
    }
    case WH_TMPL_MAP: {
        wh_tmpl_kv *ents;
        size_t n, i;
        if ((rc = wh_tmpl_map_entries(ctx, v, &ents, &n)) != WH_OK)
            return rc;
        wh_buf_puts(out, "map[");
        for (i = 0; i < n && rc == WH_OK; i++) {
            if (i > 0)
                wh_buf_putc(out, ' ');
            wh_buf_append(out, ents[i].key, ents[i].key_len);
            wh_buf_putc(out, ':');
            rc = tm_print_value(ctx, &ents[i].val, out, 0);
        }
        if (rc == WH_OK)
            wh_buf_putc(out, ']');
        return rc;
    }
    case WH_TMPL_HOST:
        if (v->u.host == NULL) {
            wh_buf_puts(out, "<nil>");
            return WH_OK;
        }
        wh_buf_printf(out, "%s{%s}", top || v->type == NULL || !v->type->pointer ? "" : "&",
                      v->type != NULL ? v->type->name : "");
        return WH_OK;
    }
    return WH_OK;
}

wh_code wh_tmpl_sprint(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    if (v->kind == WH_TMPL_INVALID) {
        wh_buf_puts(out, "<nil>");
        return WH_OK;
    }
    return tm_print_value(ctx, v, out, 1);
}

/* ---- encoding/json ---- */

size_t tm_utf8_decode(const char *s, size_t n, unsigned *cp)
{
    return wh_utf8_decode((const unsigned char *)s, n, cp);
}

/* Go's json.Marshal / MarshalIndent of the value: the value as JSON, written
 * by common/wh_go_json.c with Go's sorted map keys. */
wh_code tm_json_encode(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out, const char *indent, int escape_html)
{
    int flags = WH_GO_JSON_SORTED | (escape_html ? WH_GO_JSON_HTML : 0);
    json_t *j;
    wh_code rc = tm_value_to_json(ctx, v, &j);

    if (rc != WH_OK)
        return rc;
    if (indent != NULL)
        wh_go_json_indent(out, j, flags, indent);
    else
        wh_go_json(out, j, flags);
    json_decref(j);
    return WH_OK;
}

static wh_code to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out, int depth)
{
    wh_code rc = WH_OK;

    *out = NULL;
    if (depth > 1000) /* a dict that holds itself: Go stops such a cycle at its depth 1000 too */
        return tm_fail(ctx, WH_E_LIMIT, "json: nesting too deep");
    if (v->type != NULL && v->type->to_json != NULL &&
        !(v->kind == WH_TMPL_HOST && v->type->pointer && v->u.host == NULL)) {
        if ((*out = v->type->to_json(ctx, v)) == NULL)
            return ctx->failed ? WH_E_RENDER : tm_fail(ctx, WH_E_RENDER, "json: cannot encode %s", v->type->name);
        return WH_OK;
    }
    switch (v->kind) {
    case WH_TMPL_INVALID:
    case WH_TMPL_NIL:
        *out = json_null();
        break;
    case WH_TMPL_BOOL:
        *out = json_boolean(v->u.b);
        break;
    case WH_TMPL_INT:
        *out = json_integer(v->u.i);
        break;
    case WH_TMPL_UINT:
        *out = json_integer((json_int_t)v->u.u);
        break;
    case WH_TMPL_FLOAT:
        if (isnan(v->u.f) || isinf(v->u.f))
            return tm_fail(ctx, WH_E_RENDER, "json: unsupported value: %s",
                           isnan(v->u.f) ? "NaN"
                           : v->u.f > 0  ? "+Inf"
                                         : "-Inf");
        /* encoding/json prints integral floats without a fraction: keep them integers (but -0, "-0") */
        if (v->u.f == floor(v->u.f) && fabs(v->u.f) < 9.2e18 && !signbit(v->u.f))
            *out = json_integer((json_int_t)v->u.f);
        else
            *out = json_real(v->u.f);
        break;
    case WH_TMPL_STRING:
        *out = json_stringn_nocheck(v->u.s, v->len);
        break;
    case WH_TMPL_LIST: {
        long n = wh_tmpl_len(v), i;
        if (v->rep == WH_TMPL_REP_JSON ? v->u.json == NULL : v->u.list == NULL) {
            *out = json_null();
            break;
        }
        if (v->rep == WH_TMPL_REP_JSON && v->type == NULL) {
            *out = json_incref((json_t *)v->u.json);
            break;
        }
        *out = json_array();
        for (i = 0; i < n; i++) {
            wh_tmpl_value e = wh_tmpl_list_at(v, (size_t)i);
            json_t *je;
            if ((rc = to_json(ctx, &e, &je, depth + 1)) != WH_OK) {
                json_decref(*out);
                *out = NULL;
                return rc;
            }
            json_array_append_new(*out, je);
        }
        break;
    }
    case WH_TMPL_MAP: {
        wh_tmpl_kv *ents;
        size_t n, i;
        if (v->rep == WH_TMPL_REP_JSON ? v->u.json == NULL : v->u.map == NULL) {
            *out = json_null();
            break;
        }
        if (v->rep == WH_TMPL_REP_JSON && v->type == NULL) {
            *out = json_incref((json_t *)v->u.json);
            break;
        }
        if ((rc = wh_tmpl_map_entries(ctx, v, &ents, &n)) != WH_OK)
            return rc;
        *out = json_object();
        for (i = 0; i < n; i++) {
            json_t *je;
            if ((rc = to_json(ctx, &ents[i].val, &je, depth + 1)) != WH_OK) {
                json_decref(*out);
                *out = NULL;
                return rc;
            }
            json_object_setn_new_nocheck(*out, ents[i].key, ents[i].key_len, je);
        }
        break;
    }
    case WH_TMPL_HOST:
        if (v->u.host == NULL) {
            *out = json_null();
            break;
        }
        return tm_fail(ctx, WH_E_RENDER, "json: unsupported type: %s", tm_type_name(v));
    }
    return WH_OK;
}

wh_code tm_value_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out)
{
    return to_json(ctx, v, out, 0);
}

wh_code wh_tmpl_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, json_t **out)
{
    return to_json(ctx, v, out, 0);
}

wh_tmpl_value tm_adopt_json(wh_tmpl_ctx *ctx, json_t *j)
{
    if (ctx->owned == NULL)
        ctx->owned = json_array();
    json_array_append_new(ctx->owned, j);
    return wh_tmpl_json(j);
}
