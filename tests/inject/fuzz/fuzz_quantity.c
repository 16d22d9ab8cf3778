/*
 * fuzz_quantity.c - libFuzzer target for Kubernetes resource quantities
 * (handlers/inject/wh_inject_quantity.c), read from the overrides
 * annotation, resource annotations and templates' output.
 *
 * Input: the quantity text (up to the first NUL).  Invariants that Go's
 * resource.Quantity has: the canonical form parses, means the same number of
 * whole cores, and is a fixed point, but for a binary quantity that is no
 * whole number of 1024s: Go prints it in decimal digits (62.5Ki -> 64000),
 * which read back are a decimal quantity (-> 64k), a fixed point then; a
 * refusal says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_inject_quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* `text` has a binary suffix (Ki .. Ei) that its canonical form lost. */
static int binary_in_decimal(const char *text, const char *canon)
{
    size_t n = strlen(text), m = strlen(canon);

    return n > 0 && text[n - 1] == 'i' && (m == 0 || canon[m - 1] != 'i');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = wh_strndup((const char *)data, size), canon[128], again[128], third[128];
    long long cores = 0, canon_cores = 0;
    wh_err err = {0};
    wh_code rc, rc_cores;

    rc = wh_inject_quantity_canonical(text, canon, sizeof(canon), &err);
    rc_cores = wh_inject_quantity_cores(text, &cores);
    if (rc != WH_OK) {
        if (wh_err_msg(&err)[0] == '\0')
            abort();
        goto out;
    }
    if (strlen(canon) >= sizeof(canon) - 1)
        goto out; /* cut at the buffer: not a quantity to read back */
    rc = wh_inject_quantity_canonical(canon, again, sizeof(again), &err);
    if (rc == WH_OK)
        rc = wh_inject_quantity_canonical(again, third, sizeof(third), &err);
    if (rc != WH_OK || strcmp(again, third) != 0 || (strcmp(canon, again) != 0 && !binary_in_decimal(text, canon))) {
        fprintf(stderr, "fuzz_quantity: %s -> %s -> %s\n", text, canon, rc == WH_OK ? again : wh_err_msg(&err));
        abort();
    }
    if ((rc_cores == WH_OK) != (wh_inject_quantity_cores(canon, &canon_cores) == WH_OK) ||
        (rc_cores == WH_OK && cores != canon_cores)) {
        fprintf(stderr, "fuzz_quantity: cores of %s (%lld) and of %s (%lld) differ\n", text, cores, canon, canon_cores);
        abort();
    }
out:
    free(text);
    return 0;
}
