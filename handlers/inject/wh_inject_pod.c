/*
 * wh_inject_pod.c - small accessors on pod JSON shared by the merge side
 * (see wh_inject_pod.h).
 */
#include "wh_inject_pod.h"

#include <string.h>

#include "wh_inject_post.h"

static wh_code nomem(wh_err *err)
{
    return wh_err_set(err, WH_E_NOMEM, "out of memory");
}

int wh_inject_parse_bool(const char *s)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    size_t i;

    if (s == NULL)
        return -1;
    for (i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

json_t *wh_inject_obj_child(json_t *parent, const char *key, int create)
{
    json_t *v = json_object_get(parent, key);

    if (json_is_object(v) || !create || !json_is_object(parent))
        return json_is_object(v) ? v : NULL;
    v = json_object();
    if (json_object_set_new(parent, key, v) != 0)
        return NULL;
    return v;
}

json_t *wh_inject_spec_list(const json_t *pod, const char *key)
{
    json_t *l = json_object_get(json_object_get(pod, "spec"), key);
    return json_is_array(l) ? l : NULL;
}

const char *wh_inject_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* First container called `name` in list (may be NULL); *idx its index. */
json_t *wh_inject_find_named(const json_t *list, const char *name, size_t *idx)
{
    size_t i;

    for (i = 0; i < json_array_size(list); i++) {
        const char *n = wh_inject_str(json_array_get(list, i), "name");
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
    return wh_inject_str(json_object_get(json_object_get(pod, "metadata"), "annotations"), key);
}

wh_code wh_inject_set_string(json_t *obj, const char *key, const char *value, wh_err *err)
{
    if (obj == NULL || json_object_set_new(obj, key, json_string(value)) != 0)
        return nomem(err);
    return WH_OK;
}

wh_code wh_inject_set_json_text(json_t *obj, const char *key, const wh_buf *text, wh_err *err)
{
    if (obj == NULL ||
        json_object_set_new(obj, key, json_stringn_nocheck(text->data != NULL ? text->data : "", text->len)) != 0)
        return nomem(err);
    return WH_OK;
}

wh_code wh_inject_append_env(json_t *container, const char *name, const char *value, wh_err *err)
{
    json_t *env = json_object_get(container, "env"), *e;

    if (!json_is_array(env)) {
        env = json_array();
        if (json_object_set_new(container, "env", env) != 0)
            return nomem(err);
    }
    if ((e = json_pack("{s:s,s:s}", "name", name, "value", value)) == NULL || json_array_append_new(env, e) != 0)
        return nomem(err);
    return WH_OK;
}
