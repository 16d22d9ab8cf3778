/*
 * fuzz_revision.c - libFuzzer target for a revision's ConfigMap payloads as
 * cluster mode reads them (wh_inject_cluster_load_revision: the injector
 * ConfigMap's `config` YAML with its templates, `values` JSON, the mesh
 * ConfigMap's `mesh` YAML, then a check render of a plain pod), which any
 * user with edit rights on istio-system can write.
 *
 * Input: config, values and mesh separated by NUL bytes (a missing part is
 * absent from the ConfigMap; text that is not UTF-8 cannot be in one).
 * Invariants: a refused revision says why and leaves nothing behind; a
 * loaded one is returned.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_inject_cluster.h"
#include "wh_inject_revision.h"
#include "wh_json_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keys[] = {"config", "values", "mesh"};
    static int installed;
    const char *p = (const char *)data, *end = p + size;
    json_t *inputs = json_object();
    wh_inject_revision *rev = NULL;
    wh_err err = {0};

    if (!installed) {
        wh_json_arena_install(); /* as webhookd does before any JSON value exists (server/main.c) */
        installed = 1;
    }
    for (size_t i = 0; i < 3 && p <= end; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t n = nul != NULL ? (size_t)(nul - p) : (size_t)(end - p);
        json_t *s = json_stringn(p, n);
        if (s == NULL)
            goto out;
        json_object_set_new(inputs, keys[i], s);
        p += n + 1;
    }
    if (wh_inject_cluster_load_revision("fuzz", inputs, &rev, &err) != WH_OK) {
        if (rev != NULL || wh_err_msg(&err)[0] == '\0')
            abort();
    } else if (rev == NULL) {
        abort();
    }
    wh_inject_revision_unref(rev);
out:
    json_decref(inputs);
    return 0;
}
