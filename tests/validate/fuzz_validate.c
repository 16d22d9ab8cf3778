/*
 * fuzz_validate.c - libFuzzer target over the validator: the input is taken
 * as an Istio object (JSON) and judged directly with wh_validate_object and,
 * wrapped in an AdmissionReview, through the whole /validate admit path
 * (wh_admission_serve + wh_validate_admit); input that is not JSON is served
 * as a raw request body.  Every input is also read as a mesh ConfigMap's
 * meshNetworks document (wh_validate_mesh_networks: YAML, jsonpb, checks).
 * Invariants: a verdict is either allowed without a message or denied with
 * one, a refused meshNetworks says why, and every request gets an HTTP answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wh_validate.h"

static void serve_body(const char *body, size_t len)
{
    wh_http_request req;
    wh_http_response res;

    memset(&req, 0, sizeof(req));
    memset(&res, 0, sizeof(res));
    req.method = "POST";
    req.path = "/validate";
    req.path_len = strlen(req.path);
    req.prefix = "/validate";
    req.content_type = "application/json";
    req.content_type_len = strlen(req.content_type);
    req.body = body;
    req.body_len = len;
    wh_admission_serve(NULL, &req, wh_validate_admit, NULL, &res, NULL);
    if (res.status < 200 || res.status > 599)
        abort();
    wh_buf_free(&res.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    wh_validate_verdict v;
    json_t *review;
    char *text;
    wh_err err = {0};

    if (wh_validate_mesh_networks((const char *)data, size, &err) != WH_OK && wh_err_msg(&err)[0] == '\0')
        abort();
    if (obj == NULL) {
        serve_body((const char *)data, size);
        return 0;
    }
    if (wh_validate_object(obj, NULL, &v, NULL) == WH_OK) {
        if ((v.allowed && v.message != NULL) || (!v.allowed && v.message == NULL))
            abort();
        if (!v.allowed && v.warnings != NULL)
            abort();
        wh_validate_verdict_clear(&v);
    }
    review = json_pack("{s:s, s:s, s:{s:s, s:s, s:b, s:O}}", "apiVersion", "admission.k8s.io/v1", "kind",
                       "AdmissionReview", "request", "uid", "fuzz", "operation", "CREATE", "dryRun", 0, "object", obj);
    text = review ? json_dumps(review, JSON_COMPACT) : NULL;
    if (text != NULL)
        serve_body(text, strlen(text));
    free(text);
    json_decref(review);
    json_decref(obj);
    return 0;
}
