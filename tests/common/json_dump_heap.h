/*
 * json_dump_heap.h - a compact JSON dump into malloc'd memory, for the tests
 * that compare two loaders' values inside a request arena scope
 * (fuzz_yaml.c, yaml_fast_diff.c): json_dumps would take its buffer from the
 * arena (common/wh_json_arena.h), which ends before the comparison is freed.
 */
#ifndef WH_TESTS_JSON_DUMP_HEAP_H
#define WH_TESTS_JSON_DUMP_HEAP_H

#include <jansson.h>
#include <stdlib.h>

/* NULL for a NULL value, an empty dump or no memory; free() the result. */
static inline char *json_dump_heap(const json_t *v)
{
    size_t n = v != NULL ? json_dumpb(v, NULL, 0, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_COMPACT) : 0;
    char *s = n != 0 ? malloc(n + 1) : NULL;

    if (s == NULL || json_dumpb(v, s, n, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_COMPACT) != n) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

#endif
