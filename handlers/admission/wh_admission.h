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
#include "wh_metrics.h"
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
    size_t uid_len;          /* its length (a uid may hold \u0000: the reply echoes it whole) */
    const char *operation;   /* request.operation ("" when absent) */
    const char *name;        /* request.name ("" when absent) */
    const char *namespace;   /* request.namespace ("" when absent) */
    const char *kind;        /* request.kind.kind, e.g. "Pod" ("" when absent) */
    int dry_run;             /* request.dryRun */
    const char *path_suffix; /* the URL path after the route prefix, e.g. "/rev/1-24" ("" for none) */
} wh_admission_request;

typedef struct wh_admission_response {
    int allowed;
    int status_code;           /* status.code; 0 = omit */
    char *message;             /* status.message, malloc'd or NULL */
    size_t message_len;        /* its length when it holds a NUL (wh_admission_deny_bytes); 0: strlen */
    char *reason;              /* status.reason, malloc'd or NULL */
    wh_buf patch;              /* the JSON Patch's compact JSON text (empty: none), written by the admit function
                                * (handlers/inject/wh_inject_diff.h); the codec base64-encodes it */
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

/* wh_admission_deny with the `len` bytes of `msg` as they are (a message may
 * hold a NUL: istiod's texts quote annotation values whole).  Always WH_OK. */
wh_code wh_admission_deny_bytes(wh_admission_response *resp, int status_code, const char *msg, size_t len);

/* Append one warning string (formatted) to resp->warnings.  Always WH_OK. */
wh_code wh_admission_warn(wh_admission_response *resp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The admit function: look at `req`, fill `resp` (which starts zeroed, i.e.
 * allowed = 0; set allowed = 1 to admit).  A non-OK return turns into
 * allowed:false with err's message (whatever `resp` holds is discarded).
 * Called concurrently from every worker thread, inside the review's JSON
 * arena scope (common/wh_json_arena.h): the trees it leaves in `resp` are
 * dropped whole once encoded, so they may hold values made in the scope or
 * immortal ones, nothing else; what those borrow must outlive the scope
 * (wh_json_arena_defer). */
typedef wh_code (*wh_admit_fn)(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err);

/* What an AdmissionReview exchange amounted to, for an endpoint's metrics
 * and the access log. */
typedef struct wh_admission_outcome {
    int refused; /* 1 when answered 413 (a body over the cap) */
    int decoded; /* 1 when the body was a usable AdmissionReview */
    int allowed;
    int has_patch;
    int dry_run;
    char uid[128];
    char kind[64]; /* request.kind.kind, e.g. "Pod" */
    char operation[16];
    char api_version[32];
} wh_admission_outcome;

/* What every admission endpoint records of each exchange: the counter
 * webhookd_admission_reviews_total{endpoint,result} and the "review" line of
 * the access log (at debug level). */
typedef struct wh_admission_stats {
    const char *endpoint; /* "inject", "validate": the label (borrowed, lives as long as the endpoint) */
    wh_metric *reviews;   /* NULL: not counted */
} wh_admission_stats;

/* Register the counter in `registry` (one family that every endpoint shares;
 * NULL registry: nothing is counted).  WH_E_CONFLICT when the name is taken
 * by a family of another shape. */
wh_code wh_admission_stats_init(wh_admission_stats *stats, const char *endpoint, wh_metrics *registry, wh_err *err);

/* Serve one HTTP request end to end: HTTP checks (a body over
 * http->body_limit: 413 with istiod's text; no body: 400; not JSON: 415;
 * the method is not looked at, as istiod's handlers never do), decode,
 * admit, encode.  Fills res->status, res->content_type and res->body, and
 * `outcome` unless NULL; counts and logs the exchange in `stats` unless
 * NULL.  Never fails to answer. */
void wh_admission_serve(const wh_admission_stats *stats, const wh_http_request *http, wh_admit_fn admit, void *ctx,
                        wh_http_response *res, wh_admission_outcome *outcome);

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
