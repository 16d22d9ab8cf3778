/*
 * fuzz_yaml.c - libFuzzer target for wh_yaml.
 *
 * Any byte string must load without crashing; whatever loads must dump, and
 * the dump must load back to the same values (numbers compared by value, as
 * 1 and 1.0 are the same number to Go's float64).  The one exception is a
 * mapping key spelled "<<" (loaded from a tagged or quoted scalar): go-yaml
 * writes it plain, which reads back as a merge key; we write what Go writes.
 * The fast path of wh_yaml_load must, whenever it answers, answer exactly
 * what the full loader answers (types and key order included); both load
 * inside a request arena scope, as webhookd loads templates' output, so
 * that the strings the fast path makes in the arena are compared too (ASan
 * sees the arena's blocks: common/wh_json_arena.c).  Parts of the input
 * standing for a template's constant text whose YAML was read once must
 * not change the fast path's answer (yaml_pieces_check.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_dump_heap.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"
#include "yaml_pieces_check.h"

static int same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        const char *k;
        json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach((json_t *)a, k, v)
        {
            json_t *w = json_object_get(b, k);
            if (w == NULL || !same(v, w))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

static int has_merge_key(const json_t *v)
{
    const char *k;
    json_t *c;
    size_t i;

    if (json_is_array(v)) {
        json_array_foreach(v, i, c) if (has_merge_key(c)) return 1;
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, c) if (strcmp(k, "<<") == 0 || has_merge_key(c)) return 1;
    }
    return 0;
}

static void check_fast_path(const char *text, size_t size)
{
    static int installed;
    json_t *a = NULL, *b = NULL;
    wh_err err;
    wh_json_arena arena;

    if (!installed) {
        wh_json_arena_install();
        installed = 1;
    }
    {
        /* the constant text: the whole input, and a part the input's first byte picks */
        int had = 0;
        size_t a0 = size > 0 ? (unsigned char)text[0] % (size / 2 + 1) : 0;
        if (pieces_agree("input", text, size, 0, size, &had) ||
            pieces_agree("input", text, size, a0, size - a0 / 2, &had))
            abort();
    }
    wh_json_arena_begin(&arena);
    wh_code ra = wh_yaml_fast_load(text, size, WH_YAML_MAX_DEPTH, &a);
    if (ra == WH_E_UNSUPPORTED) {
        wh_json_arena_end(&arena);
        return;
    }
    wh_code rb = wh_yaml_load_reference(text, size, &b, &err);
    char *sa = json_dump_heap(a), *sb = json_dump_heap(b);
    if (ra != rb || (ra == WH_OK && (!json_equal(a, b) || strcmp(sa, sb) != 0))) {
        fprintf(stderr, "fast path disagrees: %s vs %s (%s)\n  fast %s\n  full %s\n", wh_strerror(ra), wh_strerror(rb),
                wh_err_msg(&err), sa ? sa : "-", sb ? sb : "-");
        abort();
    }
    free(sa);
    free(sb);
    json_decref(a);
    json_decref(b);
    wh_json_arena_end(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *docs = NULL, *back = NULL;
    wh_buf out = WH_BUF_INIT;
    wh_err err;
    size_t i;
    json_t *doc;

    check_fast_path((const char *)data, size);
    if (wh_yaml_load_all((const char *)data, size, &docs, &err) != WH_OK)
        return 0;
    json_array_foreach(docs, i, doc)
    {
        wh_buf_reset(&out);
        if (wh_yaml_dump(doc, &out, &err) != WH_OK) {
            if (err.code == WH_E_LIMIT)
                continue;
            fprintf(stderr, "dump failed: %s\n", wh_err_msg(&err));
            abort();
        }
        if (has_merge_key(doc))
            continue;
        if (wh_yaml_load(out.data, out.len, &back, &err) != WH_OK) {
            fprintf(stderr, "reload failed: %s\n%s\n", wh_err_msg(&err), out.data);
            abort();
        }
        if (!same(doc, back)) {
            fprintf(stderr, "round trip changed the value:\n%s\n", out.data);
            abort();
        }
        json_decref(back);
        back = NULL;
    }
    json_decref(docs);
    wh_buf_free(&out);
    return 0;
}
