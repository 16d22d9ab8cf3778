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
#include "wh_json_arena.h"

/* The injected pod shares the request pod's untouched lists
 * (wh_inject_apply_overlays): the same address is the same value, without
 * a walk. */
static int same_value(const json_t *a, const json_t *b)
{
    if (a == b)
        return 1;
    if (json_is_number(a) && json_is_number(b))
        return json_typeof(a) == json_typeof(b) ? json_equal(a, b) : json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

/* Append "/" and `token` escaped as RFC 6901 says ("~" -> "~0", "/" ->
 * "~1"), the runs between escapes in one copy each. */
static void push_token(wh_buf *path, const char *token, size_t len)
{
    size_t i, run = 0;

    wh_buf_putc(path, '/');
    for (i = 0; i < len; i++) {
        if (token[i] != '~' && token[i] != '/')
            continue;
        wh_buf_append(path, token + run, i - run);
        wh_buf_append(path, token[i] == '~' ? "~0" : "~1", 2);
        run = i + 1;
    }
    wh_buf_append(path, token + run, len - run);
}

/* path: object keys (UTF-8, as jansson holds them) and indexes, so it needs
 * no UTF-8 check; value: NULL for "remove" only. */
static void emit(json_t *ops, const char *op, const wh_buf *path, const json_t *value)
{
    json_t *o = json_object();

    json_object_set_new_nocheck(o, "op", json_string_nocheck(op));
    json_object_set_new_nocheck(o, "path", json_stringn_nocheck(path->data != NULL ? path->data : "", path->len));
    if (value != NULL)
        json_object_set_nocheck(o, "value", (json_t *)value);
    json_array_append_new(ops, o);
}

static void truncate_to(wh_buf *path, size_t mark)
{
    path->len = mark;
    path->data[mark] = '\0';
}

/* `a` and `b` differ (same_value): the ops for them, at `path`.  A
 * member's or item's token is appended only when it differs too. */
static void diff(json_t *ops, wh_buf *path, const json_t *a, const json_t *b)
{
    size_t mark = path->len, i;
    void *it;

    if (json_is_object(a) && json_is_object(b)) {
        for (it = json_object_iter((json_t *)a); it != NULL; it = json_object_iter_next((json_t *)a, it)) {
            const char *key = json_object_iter_key(it);
            size_t len = json_object_iter_key_len(it);
            if (wh_json_getn(b, key, len) != NULL)
                continue;
            push_token(path, key, len);
            emit(ops, "remove", path, NULL);
            truncate_to(path, mark);
        }
        for (it = json_object_iter((json_t *)b); it != NULL; it = json_object_iter_next((json_t *)b, it)) {
            const char *key = json_object_iter_key(it);
            size_t len = json_object_iter_key_len(it);
            const json_t *v = json_object_iter_value(it), *old = wh_json_getn(a, key, len);
            if (old != NULL && same_value(old, v))
                continue;
            push_token(path, key, len);
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
            const json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
            if (same_value(x, y))
                continue;
            int n = snprintf(idx, sizeof(idx), "%zu", i);
            push_token(path, idx, (size_t)n);
            diff(ops, path, x, y);
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
    if (!same_value(from, to))
        diff(ops, &path, from, to);
    wh_buf_free(&path);
    return ops;
}
