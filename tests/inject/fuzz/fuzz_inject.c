/*
 * fuzz_inject.c - libFuzzer target over the whole injection pipeline: any
 * bytes as the body of POST /inject, through the AdmissionReview codec,
 * decision, render, merge, post-processing and JSON Patch.  It must always
 * answer and never crash, leak or hang.
 *
 * The revision comes from $WH_FUZZ_REVISIONS_DIR (a --revisions-dir layout,
 * e.g. one holding the conformance corpus' files as revision `default`),
 * else the embedded default revision.  The JSON arena is installed first, as
 * webhookd does (server/main.c), so that every stage runs on jansson's
 * layouts as in production (ASan sees the arena's blocks:
 * common/wh_json_arena.c).  Registered with wh_add_fuzz_target:
 * a libFuzzer binary with -DWH_FUZZ=ON, and always a replay of corpus/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_admission.h"
#include "wh_inject.h"
#include "wh_json_arena.h"

static wh_inject_registry *registry;
static wh_inject_settings settings = WH_INJECT_SETTINGS_INIT;

static void cleanup(void)
{
    wh_inject_registry_free(registry);
    wh_inject_settings_clear(&settings);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = {"/inject", "/inject/cluster/c1/net/n1", "/inject/rev/default"};
    wh_http_request req;
    wh_http_response res;
    wh_admission_outcome outcome;
    wh_inject_call call;
    const char *path = paths[size % 3];

    if (registry == NULL) {
        wh_err err = {0};
        wh_json_arena_install(); /* before any JSON value exists */
        if (wh_inject_registry_open(getenv("WH_FUZZ_REVISIONS_DIR"), NULL, &registry, &err) != WH_OK) {
            fprintf(stderr, "fuzz_inject: %s\n", wh_err_msg(&err));
            abort();
        }
        atexit(cleanup);
    }

    memset(&req, 0, sizeof(req));
    memset(&res, 0, sizeof(res));
    memset(&call, 0, sizeof(call));
    call.registry = registry;
    call.settings = &settings;
    req.method = "POST";
    req.path = path;
    req.path_len = strlen(path);
    req.prefix = "/inject";
    req.content_type = "application/json";
    req.content_type_len = strlen(req.content_type);
    req.body = (const char *)data;
    req.body_len = size;
    wh_admission_serve(NULL, &req, wh_inject_admit, &call, &res, &outcome);
    if (res.status == 0 || (res.status == 200 && res.body.len == 0))
        abort(); /* every request gets an answer */
    wh_buf_free(&res.body);
    return 0;
}
