/*
 * fuzz_ctl_flags.c - libFuzzer target for webhookctl's flag parser: any
 * command line must parse or fail with a message, never crash, leak or read
 * out of bounds.  The input is argv, one word per line; every word is also
 * tried as a duration, and the parsed values are read back through the
 * getters.  Corpus: fuzz-corpus/ (replayed by ctest in every build).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "test_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = wh_malloc(size + 1), **argv = NULL;
    size_t argc = 0;
    wh_ctl_args a;
    wh_err err = {0};

    memcpy(text, data, size);
    text[size] = '\0';
    argv = wh_calloc(size + 2, sizeof(*argv));
    for (char *p = text, *nl; p != NULL && argc < size + 1; p = nl != NULL ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        argv[argc++] = p;
        if (nl == NULL)
            break;
    }
    for (size_t i = 0; i < argc; i++) {
        long long ns;
        (void)wh_ctl_parse_duration(argv[i], &ns, &err);
    }
    if (wh_ctl_parse(&leaf, "prog group do", (int)argc, argv, &a, &err) == WH_OK) {
        size_t n;
        const char *const *items = wh_ctl_strings(&a, "label", &n);
        if (items[n] != NULL || strlen(wh_ctl_string(&a, "output")) > size + 5 ||
            (wh_ctl_bool(&a, "assume-yes") != 0 && wh_ctl_bool(&a, "assume-yes") != 1))
            abort(); /* a broken invariant */
        (void)wh_ctl_int(&a, "days");
        (void)wh_ctl_duration_ns(&a, "interval");
        (void)wh_ctl_changed(&a, "request-timeout");
        wh_ctl_args_free(&a);
    } else if (wh_err_msg(&err)[0] == '\0') {
        abort(); /* an error must say why */
    }
    free(argv);
    free(text);
    return 0;
}
