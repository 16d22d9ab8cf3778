/*
 * wh_inject_diff.c - stage 7 of injection, JSON Patch generation (see
 * wh_inject_diff.h).
 *
 * The diff runs against the raw request object, so fields webhookd does not
 * know survive untouched: only what injection changed appears in the patch.
 */
#include "wh_inject_diff.h"

#include <string.h>

#include "wh_buf.h"

static int same_value(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_typeof(a) == json_typeof(b) ? json_equal(a, b) : json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

static wh_code push_token(wh_buf *path, const char *token, size_t len)
{
    size_t i;

    wh_buf_putc(path, '/');
    for (i = 0; i < len; i++) {
        if (token[i] == '~')
            wh_buf_puts(path, "~0");
        else if (token[i] == '/')
            wh_buf_puts(path, "~1");
        else
            wh_buf_putc(path, token[i]);
    }
    return WH_OK;
}

static wh_code emit(json_t *ops, const char *op, const wh_buf *path, const json_t *value, wh_err *err)
{
    json_t *o = json_object();

    if (json_object_set_new(o, "op", json_string(op)) != 0 ||
        json_object_set_new(o, "path", json_string(path->data != NULL ? path->data : "")) != 0 ||
        (value != NULL && json_object_set(o, "value", (json_t *)value) != 0) || json_array_append_new(ops, o) != 0) {
        json_decref(o);
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
    }
    return WH_OK;
}

static wh_code diff(json_t *ops, wh_buf *path, const json_t *a, const json_t *b, wh_err *err)
{
    size_t mark = path->len, i;
    const char *key;
    json_t *v;
    wh_code rc = WH_OK;

    if (same_value(a, b))
        return WH_OK;
    if (json_is_object(a) && json_is_object(b)) {
        json_object_foreach((json_t *)a, key, v)
        {
            if (json_object_get(b, key) != NULL)
                continue;
            if ((rc = push_token(path, key, strlen(key))) != WH_OK ||
                (rc = emit(ops, "remove", path, NULL, err)) != WH_OK)
                goto out;
            path->len = mark;
            path->data[mark] = '\0';
        }
        json_object_foreach((json_t *)b, key, v)
        {
            const json_t *old = json_object_get(a, key);
            if ((rc = push_token(path, key, strlen(key))) != WH_OK)
                goto out;
            rc = old == NULL ? emit(ops, "add", path, v, err) : diff(ops, path, old, v, err);
            if (rc != WH_OK)
                goto out;
            path->len = mark;
            path->data[mark] = '\0';
        }
        return WH_OK;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        char idx[32];
        for (i = 0; i < json_array_size(a); i++) {
            int n = snprintf(idx, sizeof(idx), "%zu", i);
            if ((rc = push_token(path, idx, (size_t)n)) != WH_OK ||
                (rc = diff(ops, path, json_array_get(a, i), json_array_get(b, i), err)) != WH_OK)
                goto out;
            path->len = mark;
            path->data[mark] = '\0';
        }
        return WH_OK;
    }
    return emit(ops, "replace", path, b, err);
out:
    if (rc == WH_E_NOMEM)
        wh_err_set(err, WH_E_NOMEM, "out of memory");
    return rc;
}

wh_code wh_inject_json_diff(const json_t *from, const json_t *to, json_t **ops, wh_err *err)
{
    wh_buf path = WH_BUF_INIT;
    json_t *list = json_array();
    wh_code rc;

    *ops = NULL;
    wh_buf_puts(&path, "");
    if ((rc = diff(list, &path, from, to, err)) != WH_OK)
        goto out;
    *ops = list;
    list = NULL;
out:
    json_decref(list);
    wh_buf_free(&path);
    return rc;
}
