/*
 * wh_inject_schema_go.c - Go's encoding/json over the Pod type table (see
 * wh_inject_schema.h): decoding (the type check and the keys closed types
 * drop, in one walk), the round trip (omitempty zeros, canonical
 * quantities) and Go's field order for the JSON istiod prints.
 */
#include "wh_inject_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_inject_quantity.h"

static wh_code canonical_quantity(json_t *parent, const char *key, json_t *v, wh_err *err)
{
    char buf[96], out[96];
    const char *text;
    wh_code rc;

    if (json_is_string(v)) {
        text = json_string_value(v);
    } else if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        text = buf;
    } else if (json_is_real(v)) {
        snprintf(buf, sizeof(buf), "%.9f", json_real_value(v));
        text = buf;
    } else {
        return wh_err_set(err, WH_E_INVALID, "%s: a quantity must be a string or a number", key);
    }
    if ((rc = wh_inject_quantity_canonical(text, out, sizeof(out), err)) != WH_OK) {
        wh_err_prefix(err, "%s", key);
        return rc;
    }
    if (json_is_string(v) && strcmp(out, text) == 0)
        return WH_OK;
    json_object_set_new_nocheck(parent, key, json_string_nocheck(out)); /* ASCII */
    return WH_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Fields Go prints even when the input lacked them (WH_F_FILL). */
static void fill_zero_fields(json_t *value, const wh_inject_type *type)
{
    const wh_inject_field *f;

    for (f = type->fields; f->name != NULL; f++) {
        if (!(f->flags & WH_F_FILL) || json_object_get(value, f->name) != NULL)
            continue;
        json_object_set_new_nocheck(value, f->name,
                                    f->kind == WH_K_INT    ? json_integer(0)
                                    : f->kind == WH_K_BOOL ? json_false()
                                    : f->kind == WH_K_QTY  ? json_string_nocheck("0")
                                                           : json_object());
    }
}

wh_code wh_inject_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err)
{
    const char *key;
    json_t *v;
    void *tmp;
    wh_code rc;

    if (!json_is_object(value) || type == NULL)
        return WH_OK;
    fill_zero_fields(value, type);
    json_object_foreach_safe(value, tmp, key, v)
    {
        const wh_inject_field *f = wh_inject_schema_field(type, key);
        if (json_is_null(v)) {
            json_object_del(value, key);
            continue;
        }
        if (f == NULL)
            continue;
        switch (f->kind) {
        case WH_K_STR:
        case WH_K_INT:
        case WH_K_BOOL:
            if ((f->flags & WH_F_OMIT) && wh_go_is_empty(v))
                json_object_del(value, key);
            break;
        case WH_K_OBJ:
            if ((rc = wh_inject_go_roundtrip(v, f->type, err)) != WH_OK)
                return rc;
            break;
        case WH_K_LIST: {
            size_t i;
            if (!json_is_array(v) || f->type == NULL)
                break;
            for (i = json_array_size(v); i-- > 0;) {
                if (json_is_null(json_array_get(v, i)))
                    continue;
                if ((rc = wh_inject_go_roundtrip(json_array_get(v, i), f->type, err)) != WH_OK)
                    return rc;
            }
            break;
        }
        case WH_K_QTY:
            if ((rc = canonical_quantity(value, key, v, err)) != WH_OK)
                return rc;
            break;
        case WH_K_QMAP: {
            const char *qk;
            json_t *qv;
            void *qtmp;
            if (!json_is_object(v))
                break;
            json_object_foreach_safe(v, qtmp, qk, qv)
            {
                if (json_is_null(qv)) {
                    json_object_del(v, qk);
                    continue;
                }
                if ((rc = canonical_quantity(v, qk, qv, err)) != WH_OK) {
                    wh_err_prefix(err, "%s", key);
                    return rc;
                }
            }
            break;
        }
        default:
            break;
        }
    }
    return WH_OK;
}

static json_t *sorted_copy(const json_t *map)
{
    const char **keys;
    const char *key;
    json_t *v, *out = json_object();
    size_t n = 0, i;

    keys = wh_malloc((json_object_size(map) + 1) * sizeof(*keys));
    json_object_foreach((json_t *)map, key, v) keys[n++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (i = 0; i < n; i++)
        json_object_set_new_nocheck(out, keys[i], wh_inject_json_copy(json_object_get(map, keys[i])));
    free(keys);
    return out;
}

json_t *wh_inject_go_ordered(const json_t *value, const wh_inject_type *type)
{
    const wh_inject_field *f;
    json_t *out;

    if (!json_is_object(value) || type == NULL)
        return wh_inject_json_copy(value);
    out = json_object();
    for (f = type->fields; f->name != NULL; f++) {
        const json_t *v = json_object_get(value, f->name);
        json_t *nv = NULL;
        if (v == NULL || json_is_null(v)) {
            if (!(f->flags & WH_F_ALWAYS))
                continue;
            nv = json_object();
        } else if ((f->flags & WH_F_OMIT) && wh_go_is_empty(v)) {
            continue;
        } else if (f->kind == WH_K_OBJ) {
            nv = wh_inject_go_ordered(v, f->type);
        } else if (f->kind == WH_K_LIST && f->type != NULL && json_is_array(v)) {
            size_t i;
            nv = json_array();
            for (i = 0; i < json_array_size(v); i++)
                json_array_append_new(nv, wh_inject_go_ordered(json_array_get(v, i), f->type));
        } else if ((f->kind == WH_K_MAP || f->kind == WH_K_QMAP) && json_is_object(v)) {
            nv = sorted_copy(v);
        } else {
            nv = wh_inject_json_copy(v);
        }
        json_object_set_new_nocheck(out, f->name, nv);
    }
    return out;
}

/* Where the checker is, as a chain of frames on the stack: the text is only
 * built when something is wrong. */
typedef struct check_path {
    const struct check_path *up;
    const char *key; /* field name */
} check_path;

/* Go's encoding/json names the field by the chain of field names only
 * ("spec.containers.readinessProbe.periodSeconds"): list positions and map
 * keys are not part of it. */
static void path_text(const check_path *p, wh_buf *out)
{
    if (p == NULL)
        return;
    path_text(p->up, out);
    wh_buf_printf(out, "%s%s", out->len != 0 ? "." : "", p->key);
}

static wh_code type_error(wh_err *err, const char *value, const wh_inject_type *owner, const check_path *p,
                          const char *want)
{
    wh_buf path = WH_BUF_INIT, text = WH_BUF_INIT;

    path_text(p, &path);
    wh_go_unmarshal_error(&text, value, owner != NULL ? owner->name : NULL, path.data != NULL ? path.data : "", want);
    wh_err_set(err, WH_E_INVALID, "%s", text.data);
    wh_buf_free(&path);
    wh_buf_free(&text);
    return WH_E_INVALID;
}

/* One walk of a value against its Go type.  `drop`: remove the keys closed
 * types lack (in place) and walk everything, keeping the first error;
 * otherwise stop at the first error. */
typedef struct decode_walk {
    int drop;
    wh_code rc;
    wh_err *err;
} decode_walk;

static int fail(decode_walk *w, const char *value, const wh_inject_type *owner, const check_path *p, const char *want)
{
    if (w->rc == WH_OK)
        w->rc = type_error(w->err, value, owner, p, want);
    return !w->drop; /* 1: stop walking */
}

static int walk_object(json_t *value, const wh_inject_type *type, const check_path *up, decode_walk *w);

static int walk_field(json_t *v, const wh_inject_field *f, const wh_inject_type *owner, const check_path *path,
                      decode_walk *w)
{
    size_t i;

    switch (f->kind) {
    case WH_K_STR:
        return json_is_string(v) ? 0 : fail(w, wh_go_json_kind(v), owner, path, "string");
    case WH_K_INT:
        if (json_is_integer(v) || (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v)))
            return 0;
        if (json_is_real(v)) {
            char number[64];
            return fail(w, wh_go_unmarshal_number(json_real_value(v), number, sizeof(number)), owner, path, "int32");
        }
        return fail(w, wh_go_json_kind(v), owner, path, "int32");
    case WH_K_BOOL:
        return json_is_boolean(v) ? 0 : fail(w, wh_go_json_kind(v), owner, path, "bool");
    case WH_K_OBJ:
        return json_is_object(v) ? walk_object(v, f->type, path, w)
                                 : fail(w, wh_go_json_kind(v), owner, path, f->type->name);
    case WH_K_MAP:
    case WH_K_QMAP: {
        const char *key;
        json_t *mv;
        if (!json_is_object(v))
            return fail(w, wh_go_json_kind(v), owner, path, "map[string]string");
        json_object_foreach(v, key, mv)
        {
            if (!json_is_null(mv) && !json_is_string(mv) && !(f->kind == WH_K_QMAP && json_is_number(mv)) &&
                fail(w, wh_go_json_kind(mv), owner, path, "string"))
                return 1;
        }
        return 0;
    }
    case WH_K_LIST:
    case WH_K_PLIST:
        if (!json_is_array(v))
            return fail(w, wh_go_json_kind(v), owner, path,
                        f->kind == WH_K_LIST && f->type != NULL ? f->type->name : "list");
        for (i = 0; i < json_array_size(v); i++) {
            json_t *elem = json_array_get(v, i);
            if (json_is_null(elem))
                continue;
            if (f->kind == WH_K_PLIST ? (json_is_object(elem) || json_is_array(elem)) : !json_is_object(elem)) {
                if (fail(w, wh_go_json_kind(elem), owner, path,
                         f->kind == WH_K_PLIST ? "scalar" : (f->type != NULL ? f->type->name : "object")))
                    return 1;
                continue;
            }
            if (f->kind == WH_K_LIST && f->type != NULL && walk_object(elem, f->type, path, w))
                return 1;
        }
        return 0;
    default:
        return 0;
    }
}

static int walk_object(json_t *value, const wh_inject_type *type, const check_path *up, decode_walk *w)
{
    const char *key;
    json_t *v;
    void *tmp;

    json_object_foreach_safe(value, tmp, key, v)
    {
        const wh_inject_field *f = wh_inject_schema_field(type, key);
        check_path here = {up, key};
        if (f == NULL) {
            if (w->drop && type->closed && key[0] != '$')
                json_object_del(value, key);
            continue;
        }
        if (!json_is_null(v) && walk_field(v, f, type, &here, w))
            return 1;
    }
    return 0;
}

wh_code wh_inject_go_decode(json_t *value, const wh_inject_type *type, int drop, wh_err *err)
{
    decode_walk w = {drop, WH_OK, err};

    if (!json_is_object(value))
        return type_error(err, wh_go_json_kind(value), NULL, NULL, type->name);
    walk_object(value, type, NULL, &w);
    return w.rc;
}
