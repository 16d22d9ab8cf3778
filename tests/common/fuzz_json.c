/*
 * fuzz_json.c - differential target for the fast JSON reader (wh_json.h).
 *
 * For every input and each flag combination webhookd uses, whenever the fast
 * path answers, jansson must accept the same bytes and build the same values
 * (same types, same key order: compared through jansson's own writer); and
 * wh_json_loadb must always agree with json_loadb on success or failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_json.h"

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
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

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        check((const char *)data, size, flags[i]);
    return 0;
}
