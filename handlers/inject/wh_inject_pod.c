/*
 * wh_inject_pod.c - small accessors on pod JSON and the cheap JSON copy,
 * shared by every stage (see wh_inject_pod.h).
 */
#include "wh_inject_pod.h"

#include "wh_json_arena.h"

#include <stdarg.h>
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

/* First container called `name` in list (may be NULL); *idx its index. */
json_t *wh_inject_find_named(const json_t *list, const char *name, size_t *idx)
{
    size_t i;

    for (i = 0; i < json_array_size(list); i++) {
        const char *n = wh_inject_jstr(json_array_get(list, i), "name");
        if (n != NULL && strcmp(n, name) == 0) {
            if (idx != NULL)
                *idx = i;
            return json_array_get(list, i);
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
    json_object_set_new(obj, key, json_stringn_nocheck(text->data != NULL ? text->data : "", text->len));
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

json_t *wh_inject_json_copy(const json_t *value)
{
    size_t i, n;
    json_t *out;
    void *it;

    switch (json_typeof(value)) {
    case JSON_OBJECT:
        out = json_object();
        for (it = json_object_iter((json_t *)value); it != NULL; it = json_object_iter_next((json_t *)value, it))
            json_object_setn_new_nocheck(out, json_object_iter_key(it), json_object_iter_key_len(it),
                                         wh_inject_json_copy(json_object_iter_value(it)));
        return out;
    case JSON_ARRAY:
        out = json_array();
        for (i = 0, n = json_array_size(value); i < n; i++)
            json_array_append_new(out, wh_inject_json_copy(json_array_get(value, i)));
        return out;
    default:
        return json_incref((json_t *)value);
    }
}
