/*
 * fuzz_json.c - differential target for the fast JSON reader (wh_json.h).
 *
 * For every input and each flag combination webhookd uses, whenever the fast
 * path answers, jansson must accept the same bytes and build the same values
 * (same types, same key order: compared through jansson's own writer); and
 * wh_json_loadb must always agree with json_loadb on success or failure.
 * Each input is read inside a request arena scope, as webhookd reads
 * reviews, so that the values the reader makes in the arena are compared
 * too (ASan sees the arena's blocks; the replay test also runs natively
 * and under valgrind).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_json.h"
#include "wh_json_arena.h"

/* Not json_dumps: its buffer would come from the arena (wh_json_arena.h). */
static char *dump(const json_t *v)
{
    size_t n = json_dumpb(v, NULL, 0, JSON_ENCODE_ANY | JSON_COMPACT);
    char *s;

    if (n == 0)
        return NULL;
    s = malloc(n + 1);
    if (s == NULL || json_dumpb(v, s, n, JSON_ENCODE_ANY | JSON_COMPACT) != n) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

static void check(const char *data, size_t size, size_t flags)
{
    json_t *fast = wh_json_fast_loadb(data, size, flags), *ref = json_loadb(data, size, flags, NULL),
           *both = wh_json_loadb(data, size, flags, NULL);
    char *a, *b;

    if ((both == NULL) != (ref == NULL)) {
        fprintf(stderr, "fuzz_json: wh_json_loadb and json_loadb disagree (flags %zx)\n", flags);
        abort();
    }
    if (fast != NULL) {
        if (ref == NULL) {
            fprintf(stderr, "fuzz_json: fast path accepted what jansson rejects (flags %zx)\n", flags);
            abort();
        }
        a = dump(fast);
        b = dump(ref);
        if (a == NULL || b == NULL || strcmp(a, b) != 0) {
            fprintf(stderr, "fuzz_json: values differ (flags %zx):\n fast %s\n ref  %s\n", flags, a ? a : "?",
                    b ? b : "?");
            abort();
        }
        free(a);
        free(b);
    }
    json_decref(fast);
    json_decref(ref);
    json_decref(both);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t flags[] = {0, JSON_ALLOW_NUL, JSON_DECODE_ANY | JSON_ALLOW_NUL, JSON_REJECT_DUPLICATES};
    static int installed;
    wh_json_arena arena;

    if (!installed) {
        wh_json_arena_install();
        installed = 1;
    }
    wh_json_arena_begin(&arena);
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        check((const char *)data, size, flags[i]);
    wh_json_arena_end(&arena);
    return 0;
}
