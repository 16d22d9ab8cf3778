/*
 * wh_admission.h - the AdmissionReview codec shared by every webhook.
 *
 * Decodes an admission.k8s.io/v1 or v1beta1 AdmissionReview, hands the
 * `request` object to an admit function, and encodes the AdmissionResponse in
 * the same apiVersion/kind, with response.uid = request.uid.  The HTTP-level
 * rules live here too (they are part of the protocol, not of h2o): empty body
 * -> 400, Content-Type other than application/json -> 415, and an undecodable
 * body, a wrong kind or a missing request -> 200 with allowed:false and a
 * message naming the problem.
 */
#ifndef WH_ADMISSION_H
#define WH_ADMISSION_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_endpoint.h"
#include "wh_result.h"

typedef struct wh_admission_request {
    const json_t *review;      /* the decoded AdmissionReview (borrowed) */
    const json_t *request;     /* review.request (borrowed, always an object) */
    const char *api_version;   /* "admission.k8s.io/v1" or "admission.k8s.io/v1beta1" */
    const char *uid;           /* request.uid ("" when absent) */
    const char *operation;     /* request.operation ("" when absent) */
    int dry_run;               /* request.dryRun */
    const char *path_suffix;   /* the URL path after the route prefix, e.g. "/rev/1-24" ("" for none) */
} wh_admission_request;

typedef struct wh_admission_response {
    int allowed;
    int status_code;          /* status.code; 0 = omit */
    char *message;            /* status.message, malloc'd or NULL */
    char *reason;             /* status.reason, malloc'd or NULL */
    char *patch;              /* JSON Patch bytes, malloc'd or NULL (base64-encoded on the wire) */
    size_t patch_len;
    json_t *warnings;         /* array of strings, or NULL */
    json_t *audit_annotations;/* object of string values, or NULL */
} wh_admission_response;

/* Release everything the response owns and zero it. */
void wh_admission_response_clear(wh_admission_response *resp);

/* Deny with a formatted message (sets allowed = 0, message). */
wh_code wh_admission_deny(wh_admission_response *resp, int status_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The admit function: look at `req`, fill `resp`.  A non-OK return with `err`
 * set turns into allowed:false with err's message. */
typedef wh_code (*wh_admit_fn)(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err);

/* What happened, for metrics and access logs. */
typedef struct wh_admission_outcome {
    int decoded;      /* 1 when the body was a usable AdmissionReview */
    int allowed;
    int has_patch;
    char uid[128];
    char kind[64];    /* request.kind.kind, e.g. "Pod" */
    char operation[16];
} wh_admission_outcome;

/* Serve one HTTP request end to end: checks, decode, admit, encode.  Fills
 * res->status and res->body.  Never fails to answer. */
void wh_admission_serve(const wh_http_request *http, wh_admit_fn admit, void *ctx, wh_http_response *res,
                        wh_admission_outcome *outcome);

/* Encode a response for `req` into `out` (exposed for tests and webhookctl). */
wh_code wh_admission_encode(const wh_admission_request *req, const wh_admission_response *resp, wh_buf *out);

#endif
