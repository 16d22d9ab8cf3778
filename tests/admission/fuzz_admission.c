/*
 * fuzz_admission.c - libFuzzer target for the AdmissionReview codec: any
 * bytes as the body (the first byte picks the Content-Type and the admit
 * behaviour) must get an answer, and every 200 must be a well-formed review
 * whose uid is the request's (or "" when undecodable).  The JSON arena is
 * installed as webhookd installs it (server/main.c), so that the reader and
 * the Go JSON writer run on jansson's layouts as in production (ASan sees
 * the arena's blocks: common/wh_json_arena.c).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_admission.h"
#include "wh_go.h"
#include "wh_json_arena.h"

static wh_code admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err)
{
    unsigned mode = *(const unsigned char *)ctx % 4;

    switch (mode) {
    case 0:
        resp->allowed = 1;
        return WH_OK;
    case 1:
        resp->allowed = 1;
        /* a patch holding request text: the codec must write and base64 it */
        {
            json_t *ops = json_pack("[{s:s,s:s,s:s}]", "op", "add", "path", req->name, "value", req->uid);
            wh_go_json(&resp->patch, ops, WH_GO_JSON_MINIMAL);
            json_decref(ops);
        }
        return wh_admission_warn(resp, "kind %s operation %s", req->kind, req->operation);
    case 2:
        return wh_admission_deny(resp, 403, "denied %s/%s %s", req->namespace, req->name, req->path_suffix);
    default:
        return wh_err_set(err, WH_E_INVALID, "failed on %.*s", 40, req->uid);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const types[] = {"application/json", "application/json; charset=utf-8", NULL, "text/plain"};
    unsigned char selector = size > 0 ? data[0] : 0;
    const char *ct = types[(selector >> 2) % 4];
    wh_http_request req = {.method = "POST", .path = "/validate/x", .path_len = 11, .prefix = "/validate"};
    wh_http_response res = {0};
    wh_admission_outcome outcome;
    json_t *doc;
    static int installed;

    if (!installed) {
        wh_json_arena_install();
        installed = 1;
    }

    req.content_type = ct;
    req.content_type_len = ct != NULL ? strlen(ct) : 0;
    req.body = size > 1 ? (const char *)data + 1 : NULL;
    req.body_len = size > 1 ? size - 1 : 0;
    wh_admission_serve(NULL, &req, admit, &selector, &res, &outcome);

    if (res.status == 200) {
        const char *uid, *kind;
        /* A uid may hold "\u0000": Go decodes it and json.Marshal writes it back. */
        doc = json_loadb(res.body.data, res.body.len, JSON_ALLOW_NUL, NULL);
        uid = json_string_value(json_object_get(json_object_get(doc, "response"), "uid"));
        kind = json_string_value(json_object_get(doc, "kind"));
        if (uid == NULL || !json_is_boolean(json_object_get(json_object_get(doc, "response"), "allowed")))
            abort();
        /* Decoded: typed reply echoing the uid; otherwise an empty uid. */
        if (outcome.decoded && (kind == NULL || strcmp(kind, "AdmissionReview") != 0 ||
                                strncmp(uid, outcome.uid, sizeof(outcome.uid) - 1) != 0))
            abort();
        if (!outcome.decoded && uid[0] != '\0')
            abort();
        json_decref(doc);
    } else if (res.status != 400 && res.status != 415 && res.status != 500) {
        abort();
    }
    wh_buf_free(&res.body);
    return 0;
}
