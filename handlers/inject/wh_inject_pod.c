/*
 * wh_inject_pod.c - small accessors on pod JSON and the cheap JSON copy,
 * shared by every stage (see wh_inject_pod.h).
 */
#include "wh_inject_pod.h"

#include "wh_alloc.h"
#include "wh_json_arena.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

json_t *wh_inject_obj_child(json_t *parent, const char *key, int create)
{
    json_t *v = wh_json_get(parent, key);

    if (json_is_object(v) || !create || !json_is_object(parent))
        return json_is_object(v) ? v : NULL;
    v = json_object();
    json_object_set_new(parent, key, v); /* key: one of ours, UTF-8 */
    return v;
}

json_t *wh_inject_spec_list(const json_t *pod, const char *key)
{
    json_t *l = wh_json_get(wh_json_get(pod, "spec"), key);
    return json_is_array(l) ? l : NULL;
}

const char *wh_inject_jstr(const json_t *o, const char *key)
{
    return json_string_value(wh_json_get(o, key));
}

const json_t *wh_inject_jpath(const json_t *v, ...)
{
    va_list ap;
    const char *key;

    va_start(ap, v);
    while (v != NULL && (key = va_arg(ap, const char *)) != NULL)
        v = wh_json_get(v, key);
    va_end(ap);
    return v;
}

const json_t *wh_inject_name_json(const json_t *o)
{
    const json_t *v = NULL;

    if (!json_is_object(o))
        return NULL;
    if (wh_json_object_layout_known) {
        const struct wh_json_object_layout *jo = (const struct wh_json_object_layout *)o;
        if (jo->ordered_list.next != &jo->ordered_list) {
            const struct wh_json_pair_layout *first = wh_json_pair_at(jo->ordered_list.next);
            if (first->key_len == 4 && memcmp(first->key, "name", 4) == 0)
                v = first->value;
        }
    }
    if (v == NULL)
        v = wh_json_getn(o, "name", 4);
    return json_is_string(v) ? v : NULL;
}

const char *wh_inject_name(const json_t *o)
{
    const json_t *v = wh_inject_name_json(o);
    size_t len;

    return v != NULL ? wh_json_string_text(v, &len) : NULL;
}

/* First container called `name` in list (may be NULL); *idx its index. */
json_t *wh_inject_find_named(const json_t *list, const char *name, size_t *idx)
{
    size_t i, n;
    json_t *const *items = wh_json_array_items(list, &n);

    if (items == NULL)
        n = json_array_size(list);
    for (i = 0; i < n; i++) {
        json_t *item = items != NULL ? items[i] : json_array_get(list, i);
        const char *in = wh_inject_name(item);
        if (in != NULL && strcmp(in, name) == 0) {
            if (idx != NULL)
                *idx = i;
            return item;
        }
    }
    return NULL;
}

/* istiod's FindSidecar: istio-proxy in containers, else in initContainers. */
json_t *wh_inject_find_sidecar(const json_t *pod)
{
    json_t *c = wh_inject_find_named(wh_inject_spec_list(pod, "containers"), WH_PROXY, NULL);
    return c != NULL ? c : wh_inject_find_named(wh_inject_spec_list(pod, "initContainers"), WH_PROXY, NULL);
}

const char *wh_inject_annotation(const json_t *pod, const char *key)
{
    return wh_inject_jstr(wh_json_get(wh_json_get(pod, "metadata"), "annotations"), key);
}

void wh_inject_set_string(json_t *obj, const char *key, const char *value)
{
    json_object_set_new(obj, key, json_string(value));
}

void wh_inject_set_json_text(json_t *obj, const char *key, const wh_buf *text)
{
    const char *data = text->data != NULL ? text->data : "";
    json_t *v = wh_json_arena_string(data, text->len);

    json_object_set_new_nocheck(obj, key, v != NULL ? v : json_stringn_nocheck(data, text->len));
}

void wh_inject_append_env(json_t *container, const char *name, const char *value)
{
    json_t *env = wh_json_get(container, "env");

    if (!json_is_array(env)) {
        env = json_array();
        json_object_set_new(container, "env", env);
    }
    json_array_append_new(env, json_pack("{s:s,s:s}", "name", name, "value", value));
}

#define COPY_ON_STACK 24

json_t *wh_inject_json_copy(const json_t *value)
{
    size_t i, n;
    json_t *out;

    switch (json_typeof(value)) {
    case JSON_OBJECT: {
        wh_json_member mstack[COPY_ON_STACK], *mheap;
        wh_json_key kstack[COPY_ON_STACK], *keys = kstack;
        json_t *vstack[COPY_ON_STACK], **values = vstack;
        const wh_json_member *m = wh_json_members(value, mstack, COPY_ON_STACK, &mheap, &n);
        if (n > COPY_ON_STACK) {
            keys = wh_malloc(n * sizeof(*keys));
            values = wh_malloc(n * sizeof(*values));
        }
        for (i = 0; i < n; i++) {
            keys[i] = (wh_json_key){m[i].key, m[i].len};
            values[i] = wh_inject_json_copy(m[i].value);
        }
        out = wh_json_arena_object(keys, values, n, 0); /* made in one piece: distinct keys of an object */
        if (keys != kstack) {
            free(keys);
            free(values);
        }
        free(mheap);
        return out;
    }
    case JSON_ARRAY: {
        json_t *stack[COPY_ON_STACK], **items = stack, *const *table = wh_json_array_items(value, &n);
        if (table == NULL)
            n = json_array_size(value);
        if (n > COPY_ON_STACK)
            items = wh_malloc(n * sizeof(*items));
        for (i = 0; i < n; i++)
            items[i] = wh_inject_json_copy(table != NULL ? table[i] : json_array_get(value, i));
        out = wh_json_arena_array(items, n);
        if (items != stack)
            free(items);
        return out;
    }
    default:
        return json_incref((json_t *)value);
    }
}
