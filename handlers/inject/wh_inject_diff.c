/*
 * wh_inject_diff.c - stage 7 of injection, JSON Patch generation (see
 * wh_inject_diff.h).
 *
 * The diff runs against the raw request object, so fields webhookd does not
 * know survive untouched: only what injection changed appears in the patch.
 * Objects are read through jansson's layout (wh_json_members) and each op is
 * written as text the moment it is found (the codec base64-encodes the text:
 * handlers/admission): the injected pod keeps the
 * request's members in their order (wh_inject_apply_overlays copies it and
 * the merge appends), so a member's counterpart is looked for at the same
 * place first, and a hash lookup is left for when it is not there.
 */
#include "wh_inject_diff.h"

#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_go.h"
#include "wh_json_arena.h"

#define MEMBERS_ON_STACK 24

/* The member of `a` (its snapshot `am`, `na` members) named `key`, looked
 * for at am[*cursor] first, which moves past it when found there. */
static json_t *counterpart(const json_t *a, const wh_json_member *am, size_t na, size_t *cursor, const char *key,
                           size_t len)
{
    size_t c = *cursor;

    if (c < na && am[c].len == len && memcmp(am[c].key, key, len) == 0) {
        *cursor = c + 1;
        return am[c].value;
    }
    return wh_json_getn(a, key, len);
}

/* Whether `a` and `b` are the same JSON value, numbers compared by value
 * (an integer and a real of the same value are the same).  The injected pod
 * shares the request pod's untouched lists (wh_inject_apply_overlays): the
 * same address is the same value, without a walk. */
static int same_value(const json_t *a, const json_t *b)
{
    size_t i, n, nb, cursor = 0;

    if (a == b)
        return 1;
    if (json_is_number(a) && json_is_number(b))
        return json_typeof(a) == json_typeof(b) ? json_equal(a, b) : json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_string(a)) {
        size_t la, lb;
        const char *sa = wh_json_string_text(a, &la), *sb = wh_json_string_text(b, &lb);
        return la == lb && memcmp(sa, sb, la) == 0;
    }
    if (json_is_array(a)) {
        json_t *const *ia = wh_json_array_items(a, &n), *const *ib = wh_json_array_items(b, &nb);
        if (ia == NULL || ib == NULL) {
            n = json_array_size(a);
            if (n != json_array_size(b))
                return 0;
            for (i = 0; i < n; i++)
                if (!same_value(json_array_get(a, i), json_array_get(b, i)))
                    return 0;
            return 1;
        }
        if (n != nb)
            return 0;
        for (i = 0; i < n; i++)
            if (!same_value(ia[i], ib[i]))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        wh_json_member as[MEMBERS_ON_STACK], bs[MEMBERS_ON_STACK], *aheap, *bheap;
        const wh_json_member *am, *bm;
        int same;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        am = wh_json_members(a, as, MEMBERS_ON_STACK, &aheap, &n);
        bm = wh_json_members(b, bs, MEMBERS_ON_STACK, &bheap, &nb);
        for (i = 0, same = 1; i < nb && same; i++) {
            const json_t *old = counterpart(a, am, n, &cursor, bm[i].key, bm[i].len);
            same = old != NULL && same_value(old, bm[i].value);
        }
        free(aheap);
        free(bheap);
        return same;
    }
    return 1; /* true, false, null: the type is the value */
}

/* Append "/" and `token` escaped as RFC 6901 says ("~" -> "~0", "/" ->
 * "~1"), written in place (at most two bytes per byte); a token without
 * either (most keys, every index) is copied whole. */
static void push_token(wh_buf *path, const char *token, size_t len)
{
    char *out;
    size_t i;

    wh_buf_reserve(path, 1 + 2 * len);
    out = path->data + path->len;
    *out++ = '/';
    if (memchr(token, '/', len) == NULL && memchr(token, '~', len) == NULL) {
        memcpy(out, token, len);
        out += len;
    } else {
        for (i = 0; i < len; i++) {
            char c = token[i];
            if (c == '~' || c == '/') {
                *out++ = '~';
                c = c == '~' ? '0' : '1';
            }
            *out++ = c;
        }
    }
    *out = '\0';
    path->len = (size_t)(out - path->data);
}

/* The patch being written: its text and how many ops it holds. */
typedef struct patch {
    wh_buf *out;
    size_t ops;
} patch;

/* One op, its members in RFC 6902's order.  path: object keys (UTF-8, as
 * jansson holds them) and indexes, written as a JSON string; value: NULL
 * for "remove" only. */
static void emit(patch *pt, const char *op, size_t op_len, const wh_buf *path, const json_t *value)
{
    wh_buf *out = pt->out;

    wh_buf_append(out, pt->ops++ == 0 ? "[{\"op\":\"" : ",{\"op\":\"", 8);
    wh_buf_append(out, op, op_len);
    wh_buf_append(out, "\",\"path\":", 9);
    wh_go_json_string(out, path->data != NULL ? path->data : "", path->len, WH_GO_JSON_MINIMAL);
    if (value != NULL) {
        wh_buf_append(out, ",\"value\":", 9);
        wh_go_json(out, value, WH_GO_JSON_MINIMAL);
    }
    wh_buf_putc(out, '}');
}

#define EMIT(pt, op, path, value) emit(pt, op, sizeof(op) - 1, path, value)

static void truncate_to(wh_buf *path, size_t mark)
{
    path->len = mark;
    path->data[mark] = '\0';
}

/* An array index as a token: decimal digits. */
static size_t index_token(char *buf, size_t i)
{
    char tmp[24];
    size_t n = 0, k;

    do
        tmp[n++] = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    for (k = 0; k < n; k++)
        buf[k] = tmp[n - 1 - k];
    return n;
}

static void diff(patch *pt, wh_buf *path, const json_t *a, const json_t *b);

/* Objects `a` and `b`: the removes (in a's order) first, then the adds and
 * replaces (in b's order).  The counterparts in `a` of b's members are found
 * once; a remove is looked for only when fewer than all of a's members have
 * one (keys are distinct). */
static void diff_objects(patch *pt, wh_buf *path, const json_t *a, const json_t *b)
{
    wh_json_member as[MEMBERS_ON_STACK], bs[MEMBERS_ON_STACK], *aheap, *bheap;
    const json_t *olds_stack[MEMBERS_ON_STACK], **olds;
    size_t na, nb, i, found = 0, cursor = 0, mark = path->len;
    const wh_json_member *am = wh_json_members(a, as, MEMBERS_ON_STACK, &aheap, &na),
                         *bm = wh_json_members(b, bs, MEMBERS_ON_STACK, &bheap, &nb);

    olds = nb <= MEMBERS_ON_STACK ? olds_stack : wh_malloc(nb * sizeof(*olds));
    for (i = 0; i < nb; i++)
        if ((olds[i] = counterpart(a, am, na, &cursor, bm[i].key, bm[i].len)) != NULL)
            found++;
    for (i = 0; found < na && i < na; i++) {
        if (wh_json_getn(b, am[i].key, am[i].len) != NULL)
            continue;
        push_token(path, am[i].key, am[i].len);
        EMIT(pt, "remove", path, NULL);
        truncate_to(path, mark);
    }
    for (i = 0; i < nb; i++) {
        if (olds[i] != NULL && same_value(olds[i], bm[i].value))
            continue;
        push_token(path, bm[i].key, bm[i].len);
        if (olds[i] == NULL)
            EMIT(pt, "add", path, bm[i].value);
        else
            diff(pt, path, olds[i], bm[i].value);
        truncate_to(path, mark);
    }
    if (olds != olds_stack)
        free(olds);
    free(aheap);
    free(bheap);
}

/* `a` and `b` differ (same_value): the ops for them, at `path`.  A
 * member's or item's token is appended only when it differs too. */
static void diff(patch *pt, wh_buf *path, const json_t *a, const json_t *b)
{
    size_t mark = path->len, i;

    if (json_is_object(a) && json_is_object(b)) {
        diff_objects(pt, path, a, b);
        return;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        char idx[24];
        for (i = 0; i < json_array_size(a); i++) {
            const json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
            if (same_value(x, y))
                continue;
            push_token(path, idx, index_token(idx, i));
            diff(pt, path, x, y);
            truncate_to(path, mark);
        }
        return;
    }
    EMIT(pt, "replace", path, b);
}

void wh_inject_json_diff(const json_t *from, const json_t *to, wh_buf *out)
{
    wh_buf path = WH_BUF_INIT;
    patch pt = {out, 0};

    wh_buf_reserve(&path, 255);
    path.data[0] = '\0';
    /* An injection's patch is several KB (the hello pod's 5 KB): room at
     * once rather than by the doublings from wh_buf's 64 bytes. */
    wh_buf_reserve(out, 8192);
    if (!same_value(from, to))
        diff(&pt, &path, from, to);
    if (pt.ops == 0)
        wh_buf_putc(out, '[');
    wh_buf_putc(out, ']');
    wh_buf_free(&path);
}
