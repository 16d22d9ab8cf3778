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
 *
 * Wire details follow istiod (tests/admission/cases.json holds each):
 *   - 400 `no body found`, 415 ``invalid Content-Type, want `application/json` ``
 *     (exact string equality, checked after the empty-body check), 413
 *     `Request entity too large: limit is N`; all three are plain text.
 *   - Reply key order: kind, apiVersion, response{uid, allowed, status{metadata,
 *     message, reason, code}, patch, patchType, auditAnnotations, warnings}.
 *   - A body that is not an AdmissionReview of a known version is answered
 *     like istiod does: no kind/apiVersion, uid "", allowed:false, message
 *     `could not decode body: <why>`.
 */
#ifndef WH_ADMISSION_H
#define WH_ADMISSION_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_endpoint.h"
#include "wh_result.h"

#define WH_ADMISSION_V1 "admission.k8s.io/v1"
#define WH_ADMISSION_V1BETA1 "admission.k8s.io/v1beta1"
/* istiod's body cap (6 MiB); the server's --max-request-bytes default. */
#define WH_ADMISSION_DEFAULT_MAX_BODY ((size_t)6 * 1024 * 1024)

typedef struct wh_admission_request {
    const json_t *review;    /* the decoded AdmissionReview (borrowed) */
    const json_t *request;   /* review.request (borrowed, always an object) */
    const char *api_version; /* WH_ADMISSION_V1 or WH_ADMISSION_V1BETA1 */
    const char *uid;         /* request.uid ("" when absent) */
    const char *operation;   /* request.operation ("" when absent) */
    const char *name;        /* request.name ("" when absent) */
    const char *namespace;   /* request.namespace ("" when absent) */
    const char *kind;        /* request.kind.kind, e.g. "Pod" ("" when absent) */
    int dry_run;             /* request.dryRun */
    const char *path_suffix; /* the URL path after the route prefix, e.g. "/rev/1-24" ("" for none) */
} wh_admission_request;

typedef struct wh_admission_response {
    int allowed;
    int status_code; /* status.code; 0 = omit */
    char *message;   /* status.message, malloc'd or NULL */
    char *reason;    /* status.reason, malloc'd or NULL */
    char *patch;     /* JSON Patch bytes, malloc'd or NULL (base64-encoded on the wire) */
    size_t patch_len;
    json_t *warnings;          /* array of strings, or NULL (owned reference) */
    json_t *audit_annotations; /* object of string values, or NULL (owned reference) */
} wh_admission_response;

/* Release everything the response owns and zero it. */
void wh_admission_response_clear(wh_admission_response *resp);

/* Deny with a formatted message (sets allowed = 0, message; status_code 0 =
 * omit).  Drops warnings and any patch already set, as istiod never sends
 * them with a denial.  Always WH_OK, so that an admit function can end with
 * `return wh_admission_deny(...)`. */
wh_code wh_admission_deny(wh_admission_response *resp, int status_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append one warning string (formatted) to resp->warnings.  Always WH_OK. */
wh_code wh_admission_warn(wh_admission_response *resp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The admit function: look at `req`, fill `resp` (which starts zeroed, i.e.
 * allowed = 0; set allowed = 1 to admit).  A non-OK return turns into
 * allowed:false with err's message (whatever `resp` holds is discarded).
 * Called concurrently from every worker thread. */
typedef wh_code (*wh_admit_fn)(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err);

/* Serve one HTTP request end to end: checks, decode, admit, encode.  Fills
 * res->status, res->content_type, res->body and res->review (the outcome,
 * wh_endpoint.h; also copied to `outcome` unless NULL).  Never fails to
 * answer (out of memory becomes a 500). */
void wh_admission_serve(const wh_http_request *http, wh_admit_fn admit, void *ctx, wh_http_response *res,
                        wh_admission_outcome *outcome);

/* Fill `res` with the 413 answer for a body over `limit` bytes (the server
 * calls this when its body cap trips, so the text matches the protocol). */
void wh_admission_too_large(size_t limit, wh_http_response *res);

/* Encode a response for `req` into `out` (exposed for tests and webhookctl).
 * `req` may be NULL: the reply then has no kind/apiVersion and uid "" (the
 * answer to a body that could not be decoded). */
void wh_admission_encode(const wh_admission_request *req, const wh_admission_response *resp, wh_buf *out);

/* Decode an AdmissionReview body into `req` (pointers borrowed from *review,
 * a new reference the caller releases, set even on failure when the body was
 * JSON).  On failure returns WH_E_PARSE with a message saying why (without the
 * "could not decode body: " prefix); when the review type itself was known
 * (kind and apiVersion fine, request missing or malformed) req->api_version
 * is set so that the denial can be answered in that version. */
wh_code wh_admission_decode(const char *body, size_t len, json_t **review, wh_admission_request *req, wh_err *err);

#endif
