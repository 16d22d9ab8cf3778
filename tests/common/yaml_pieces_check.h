/*
 * yaml_pieces_check.h - the check that common/wh_yaml_fast.c's pieces (the
 * YAML of a template's constant text, read once) never change an answer.
 * Shared by the differential test (yaml_fast_diff.c, on every YAML file we
 * hold) and the fuzzer (fuzz_yaml.c, on any bytes).
 *
 * A region text[a, b) stands for a constant text: its pieces are built from
 * a copy, as a revision builds them from a template's run.  Told that the
 * text holds that copy at a, wh_yaml_fast_load_at must answer exactly what
 * wh_yaml_fast_load answers (verdict, values, key order).  Then one byte of
 * the region is changed in the text (not in the copy): the pieces no longer
 * match what is there and must not be used, so the answer must again be
 * that of the plain load of the changed text.
 */
#ifndef YAML_PIECES_CHECK_H
#define YAML_PIECES_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_dump_heap.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"

/* 0 when both loads of `text` agree, else 1 (printed, naming `name`). */
static int pieces_agree_on(const char *name, const char *text, size_t len, const wh_yaml_at *at)
{
    json_t *a = NULL, *b = NULL;
    wh_json_arena arena;
    int bad = 0;

    wh_json_arena_begin(&arena);
    wh_code ra = wh_yaml_fast_load(text, len, WH_YAML_MAX_DEPTH, &a);
    wh_code rb = wh_yaml_fast_load_at(text, len, WH_YAML_MAX_DEPTH, at, 1, &b);
    if (ra != rb) {
        printf("FAIL %s: pieces at %zu: %s, without: %s\n", name, at->off, wh_strerror(rb), wh_strerror(ra));
        bad = 1;
    } else if (ra == WH_OK) {
        char *sa = json_dump_heap(a), *sb = json_dump_heap(b);
        if (!json_equal(a, b) || sa == NULL || sb == NULL || strcmp(sa, sb) != 0) {
            printf("FAIL %s: pieces at %zu:\n  with    %.400s\n  without %.400s\n", name, at->off, sb ? sb : "?",
                   sa ? sa : "?");
            bad = 1;
        }
        free(sa);
        free(sb);
    }
    json_decref(a);
    json_decref(b);
    wh_json_arena_end(&arena);
    return bad;
}

/* The check above for the region [a, b) of text; *had_pieces is set when the region had any. */
static int pieces_agree(const char *name, const char *text, size_t len, size_t a, size_t b, int *had_pieces)
{
    char *copy, *changed;
    const wh_yaml_pieces *ps;
    int bad = 0;

    if (a >= b || b > len)
        return 0;
    copy = malloc(b - a);
    memcpy(copy, text + a, b - a);
    if ((ps = wh_yaml_pieces_new(copy, b - a, WH_YAML_MAX_DEPTH)) != NULL) {
        wh_yaml_at at = {a, ps};
        *had_pieces = 1;
        bad = pieces_agree_on(name, text, len, &at);
        /* the region differs from the constant text by one byte: a letter or digit, which keeps the lines */
        changed = malloc(len);
        memcpy(changed, text, len);
        for (size_t i = a; i < b; i++)
            if ((changed[i] >= 'a' && changed[i] <= 'y') || (changed[i] >= '0' && changed[i] <= '8')) {
                changed[i]++;
                break;
            }
        bad |= pieces_agree_on(name, changed, len, &at);
        free(changed);
        wh_yaml_pieces_free(ps);
    }
    free(copy);
    return bad;
}

#endif
