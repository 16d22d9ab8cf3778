/*
 * wh_inject_diff.c - stage 7 of injection, JSON Patch generation (see
 * wh_inject_diff.h).
 *
 * The diff runs against the raw request object, so fields webhookd does not
 * know survive untouched: only what injection changed appears in the patch.
 */
#include "wh_inject_diff.h"

#include <stdio.h>
#include <string.h>

#include "wh_buf.h"

static int same_value(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_typeof(a) == json_typeof(b) ? json_equal(a, b) : json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

static void push_token(wh_buf *path, const char *token, size_t len)
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
}

/* path: object keys (UTF-8, as jansson holds them) and indexes, so
 * json_string cannot refuse it; value: NULL for "remove" only. */
static void emit(json_t *ops, const char *op, const wh_buf *path, const json_t *value)
{
    json_t *o = json_object();

    json_object_set_new(o, "op", json_string(op));
    json_object_set_new(o, "path", json_string(path->data != NULL ? path->data : ""));
    if (value != NULL)
        json_object_set(o, "value", (json_t *)value);
    json_array_append_new(ops, o);
}

static void truncate_to(wh_buf *path, size_t mark)
{
    path->len = mark;
    path->data[mark] = '\0';
}

static void diff(json_t *ops, wh_buf *path, const json_t *a, const json_t *b)
{
    size_t mark = path->len, i;
    const char *key;
    json_t *v;

    if (same_value(a, b))
        return;
    if (json_is_object(a) && json_is_object(b)) {
        json_object_foreach((json_t *)a, key, v)
        {
            if (json_object_get(b, key) != NULL)
                continue;
            push_token(path, key, strlen(key));
            emit(ops, "remove", path, NULL);
            truncate_to(path, mark);
        }
        json_object_foreach((json_t *)b, key, v)
        {
            const json_t *old = json_object_get(a, key);
            push_token(path, key, strlen(key));
            if (old == NULL)
                emit(ops, "add", path, v);
            else
                diff(ops, path, old, v);
            truncate_to(path, mark);
        }
        return;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        char idx[32];
        for (i = 0; i < json_array_size(a); i++) {
            int n = snprintf(idx, sizeof(idx), "%zu", i);
            push_token(path, idx, (size_t)n);
            diff(ops, path, json_array_get(a, i), json_array_get(b, i));
            truncate_to(path, mark);
        }
        return;
    }
    emit(ops, "replace", path, b);
}

json_t *wh_inject_json_diff(const json_t *from, const json_t *to)
{
    wh_buf path = WH_BUF_INIT;
    json_t *ops = json_array();

    wh_buf_puts(&path, "");
    diff(ops, &path, from, to);
    wh_buf_free(&path);
    return ops;
}
