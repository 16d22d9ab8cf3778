/*
 * wh_admission.c - the AdmissionReview codec (see wh_admission.h).
 *
 * Every webhook answers through wh_admission_serve(), so the HTTP rules
 * (413/400/415 texts; like istiod, no method check), the review versions, uid echo, key order and patch
 * encoding are decided here once, the way istiod decides them, and so is
 * what is counted and logged of each review (the server's router knows
 * HTTP only: tests/server/test_router.c).
 */
#include "wh_admission.h"

#include "wh_alloc.h"

#include "wh_chars.h"
#include "wh_go.h"
#include "wh_json.h"
#include "wh_json_arena.h"
#include "wh_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define DECODE_PREFIX "could not decode body: "

void wh_admission_response_clear(wh_admission_response *resp)
{
    free(resp->message);
    free(resp->reason);
    wh_buf_free(&resp->patch);
    /* made in the review's arena scope: reclaimed with it, no walk */
    wh_json_arena_drop(resp->warnings);
    wh_json_arena_drop(resp->audit_annotations);
    memset(resp, 0, sizeof(*resp));
}

/* A JSON string of `s` (new reference).  Messages
 * are built from user input and may have been cut mid-character, so bytes
 * that are not UTF-8 become U+FFFD instead of failing the whole reply. */
static json_t *string_value_n(const char *s, size_t len)
{
    wh_buf clean = WH_BUF_INIT;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    json_t *str = json_stringn(s, len);
    size_t n;

    if (str != NULL)
        return str;
    while (p < end) {
        unsigned cp;
        if ((n = wh_utf8_decode(p, (size_t)(end - p), &cp)) == 0) {
            wh_buf_puts(&clean, "\xef\xbf\xbd");
            p++;
        } else {
            wh_buf_append(&clean, p, n);
            p += n;
        }
    }
    str = json_stringn(clean.data != NULL ? clean.data : "", clean.len);
    wh_buf_free(&clean);
    return str;
}

static json_t *string_value(const char *s)
{
    return string_value_n(s, strlen(s));
}

wh_code wh_admission_deny_bytes(wh_admission_response *resp, int status_code, const char *msg, size_t len)
{
    wh_admission_response_clear(resp);
    resp->allowed = 0;
    resp->status_code = status_code;
    resp->message = wh_malloc(len + 1);
    memcpy(resp->message, msg, len);
    resp->message[len] = '\0';
    resp->message_len = len;
    return WH_OK;
}

wh_code wh_admission_deny(wh_admission_response *resp, int status_code, const char *fmt, ...)
{
    wh_buf msg = WH_BUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    wh_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    wh_admission_response_clear(resp);
    resp->allowed = 0;
    resp->status_code = status_code;
    resp->message = wh_buf_steal(&msg, &resp->message_len);
    return WH_OK;
}

wh_code wh_admission_warn(wh_admission_response *resp, const char *fmt, ...)
{
    wh_buf msg = WH_BUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    wh_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    if (resp->warnings == NULL)
        resp->warnings = json_array();
    json_array_append_new(resp->warnings, string_value(msg.data != NULL ? msg.data : ""));
    wh_buf_free(&msg);
    return WH_OK;
}

/* --- decoding ------------------------------------------------------------- */

/* A member name and its length (keys may hold \u0000: they are compared
 * whole). */
typedef struct member_name {
    const char *s;
    size_t len;
} member_name;
#define NAME(s)                                                                                                        \
    {                                                                                                                  \
        s, sizeof(s) - 1                                                                                               \
    }

/* The members of `obj` named in `names` (ending with {NULL}), each in the
 * same place of `vals` (NULL when absent): one walk of the object's members
 * (read off jansson's layout where it is known: wh_json_members) instead
 * of a lookup per name, and a name's first byte before its whole text. */
static void members(const json_t *obj, const member_name *names, const json_t **vals)
{
    wh_json_member buf[16], *heap, *m;
    size_t i, j, n;

    for (i = 0; names[i].s != NULL; i++)
        vals[i] = NULL;
    m = wh_json_members(obj, buf, 16, &heap, &n);
    for (j = 0; j < n; j++)
        for (i = 0; names[i].s != NULL; i++)
            if (names[i].len == m[j].len && names[i].s[0] == m[j].key[0] &&
                memcmp(names[i].s, m[j].key, m[j].len) == 0) {
                vals[i] = m[j].value;
                break;
            }
    free(heap);
}

/* The typed fields of AdmissionRequest: a value of another JSON type fails
 * decoding (as Go's typed decode does); null is the zero value, so it passes.
 * object/oldObject/options are raw and take anything. */
typedef enum field_type { F_STRING, F_BOOL, F_OBJECT, F_GVK, F_GVR } field_type;

enum {
    R_UID,
    R_KIND,
    R_RESOURCE,
    R_SUB,
    R_REQ_KIND,
    R_REQ_RESOURCE,
    R_REQ_SUB,
    R_NAME,
    R_NAMESPACE,
    R_OPERATION,
    R_USER_INFO,
    R_DRY_RUN,
    R_N
};
static const member_name request_names[R_N + 1] = {NAME("uid"),
                                                   NAME("kind"),
                                                   NAME("resource"),
                                                   NAME("subResource"),
                                                   NAME("requestKind"),
                                                   NAME("requestResource"),
                                                   NAME("requestSubResource"),
                                                   NAME("name"),
                                                   NAME("namespace"),
                                                   NAME("operation"),
                                                   NAME("userInfo"),
                                                   NAME("dryRun"),
                                                   {NULL, 0}};
static const field_type request_types[R_N] = {F_STRING, F_GVK,    F_GVR,    F_STRING, F_GVK,    F_GVR,
                                              F_STRING, F_STRING, F_STRING, F_STRING, F_OBJECT, F_BOOL};

/* The strings of a GroupVersionKind or GroupVersionResource (the first two
 * names are group and version; the third is kind or resource). */
static const member_name gvk_names[] = {NAME("group"), NAME("version"), NAME("kind"), {NULL, 0}};
static const member_name gvr_names[] = {NAME("group"), NAME("version"), NAME("resource"), {NULL, 0}};

static wh_code check_strings(const json_t *obj, const char *field, const member_name *keys, const json_t **vals,
                             wh_err *err)
{
    size_t i;

    members(obj, keys, vals);
    for (i = 0; keys[i].s != NULL; i++)
        if (vals[i] != NULL && !json_is_string(vals[i]) && !json_is_null(vals[i]))
            return wh_err_set(err, WH_E_PARSE, "request.%s.%s must be a string, got %s", field, keys[i].s,
                              wh_go_json_kind(vals[i]));
    return WH_OK;
}

/* Checks request's typed fields, in the order above, and leaves them in
 * vals (R_*) and the members of request.kind in kind (group, version, kind). */
static wh_code check_request_fields(const json_t *request, const json_t **vals, const json_t **kind, wh_err *err)
{
    const json_t *gv[3];
    size_t i;

    members(request, request_names, vals);
    kind[0] = kind[1] = kind[2] = NULL;
    for (i = 0; i < R_N; i++) {
        const json_t *v = vals[i];
        const char *want = NULL;

        if (v == NULL || json_is_null(v))
            continue;
        switch (request_types[i]) {
        case F_STRING:
            if (!json_is_string(v))
                want = "a string";
            break;
        case F_BOOL:
            if (!json_is_boolean(v))
                want = "a boolean";
            break;
        case F_OBJECT:
        case F_GVK:
        case F_GVR:
            if (!json_is_object(v))
                want = "an object";
            break;
        }
        if (want != NULL)
            return wh_err_set(err, WH_E_PARSE, "request.%s must be %s, got %s", request_names[i].s, want,
                              wh_go_json_kind(v));
        if (request_types[i] == F_GVK &&
            check_strings(v, request_names[i].s, gvk_names, i == R_KIND ? kind : gv, err) != WH_OK)
            return WH_E_PARSE;
        if (request_types[i] == F_GVR && check_strings(v, request_names[i].s, gvr_names, gv, err) != WH_OK)
            return WH_E_PARSE;
    }
    return WH_OK;
}

/* The text of a string member, "" when absent or null. */
static const char *text_or_empty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s != NULL ? s : "";
}

wh_code wh_admission_decode(const char *body, size_t len, json_t **review, wh_admission_request *req, wh_err *err)
{
    static const member_name review_names[] = {NAME("kind"), NAME("apiVersion"), NAME("request"), {NULL, 0}};
    json_error_t jerr;
    const json_t *top[3], *fields[R_N], *kind[3], *request;
    const char *k, *v;

    memset(req, 0, sizeof(req[0]));
    req->uid = req->operation = req->name = req->namespace = req->kind = req->path_suffix = "";
    *review = wh_json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    if (*review == NULL)
        return wh_err_set(err, WH_E_PARSE, "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    if (!json_is_object(*review))
        return wh_err_set(err, WH_E_PARSE, "expected an AdmissionReview object, got a JSON %s",
                          wh_go_json_kind(*review));

    members(*review, review_names, top);
    if (top[0] != NULL && !json_is_string(top[0]) && !json_is_null(top[0]))
        return wh_err_set(err, WH_E_PARSE, "kind must be a string, got %s", wh_go_json_kind(top[0]));
    if (top[1] != NULL && !json_is_string(top[1]) && !json_is_null(top[1]))
        return wh_err_set(err, WH_E_PARSE, "apiVersion must be a string, got %s", wh_go_json_kind(top[1]));
    k = json_string_value(top[0]);
    v = json_string_value(top[1]);
    if (k == NULL || *k == '\0')
        return wh_err_set(err, WH_E_PARSE, "Object 'Kind' is missing: the body is not an AdmissionReview");
    if (v == NULL || *v == '\0')
        return wh_err_set(err, WH_E_PARSE, "Object 'apiVersion' is missing: the body is not an AdmissionReview");
    if (strcmp(k, "AdmissionReview") != 0 || (strcmp(v, WH_ADMISSION_V1) != 0 && strcmp(v, WH_ADMISSION_V1BETA1) != 0))
        return wh_err_set(err, WH_E_PARSE,
                          "no kind \"%s\" is registered for version \"%s\" (want AdmissionReview in %s or %s)", k, v,
                          WH_ADMISSION_V1, WH_ADMISSION_V1BETA1);
    req->api_version = strcmp(v, WH_ADMISSION_V1) == 0 ? WH_ADMISSION_V1 : WH_ADMISSION_V1BETA1;
    req->review = *review;

    request = top[2];
    if (request == NULL || json_is_null(request))
        return wh_err_set(err, WH_E_PARSE, "the AdmissionReview has no request");
    if (!json_is_object(request))
        return wh_err_set(err, WH_E_PARSE, "request must be an object, got %s", wh_go_json_kind(request));
    if (check_request_fields(request, fields, kind, err) != WH_OK)
        return WH_E_PARSE;

    req->request = request;
    req->uid = text_or_empty(fields[R_UID]);
    req->uid_len = json_is_string(fields[R_UID]) ? json_string_length(fields[R_UID]) : 0;
    req->operation = text_or_empty(fields[R_OPERATION]);
    req->name = text_or_empty(fields[R_NAME]);
    req->namespace = text_or_empty(fields[R_NAMESPACE]);
    req->kind = text_or_empty(kind[2]);
    req->dry_run = json_is_true(fields[R_DRY_RUN]);
    return WH_OK;
}

/* --- encoding ------------------------------------------------------------- */

/* Append `value` as compact JSON (a string, an array, an object). */
static void put_json(wh_buf *out, const json_t *value)
{
    wh_go_json(out, value, WH_GO_JSON_MINIMAL);
}

/* Append the `len` bytes of `s` as a JSON string, repaired as string_value_n() does. */
static void put_string_n(wh_buf *out, const char *s, size_t len)
{
    json_t *str = string_value_n(s, len);

    wh_go_json_string(out, json_string_value(str), json_string_length(str), WH_GO_JSON_MINIMAL);
    json_decref(str);
}

/* Append `s` as a JSON string, repaired as string_value() does. */
static void put_string(wh_buf *out, const char *s)
{
    json_t *str = string_value(s);

    wh_go_json_string(out, json_string_value(str), json_string_length(str), WH_GO_JSON_MINIMAL);
    json_decref(str);
}

/* Append the literal s. */
#define PUT(out, s) wh_buf_append(out, s, sizeof(s) - 1)

void wh_admission_encode(const wh_admission_request *req, const wh_admission_response *resp, wh_buf *out)
{
    /* Written by hand rather than through a json_t tree: the key order is
     * part of the contract, and the request path stays allocation-light.
     * A patch is several KB (hello's 5 KB, 7 KB once in base64): room for
     * it at once rather than by the 7 doublings from wh_buf's 64 bytes. */
    if (resp->patch.len != 0)
        wh_buf_reserve(out, 4 * (resp->patch.len / 3 + 1) + 512);
    if (req != NULL && req->api_version != NULL) {
        PUT(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"");
        wh_buf_puts(out, req->api_version);
        PUT(out, "\",\"response\":{\"uid\":");
    } else {
        PUT(out, "{\"response\":{\"uid\":");
    }
    /* The uid as it came, byte for byte: a C string would end at a \u0000. */
    if (req != NULL && req->uid != NULL)
        wh_go_json_string(out, req->uid, req->uid_len, WH_GO_JSON_MINIMAL);
    else
        PUT(out, "\"\"");
    if (resp->allowed)
        PUT(out, ",\"allowed\":true");
    else
        PUT(out, ",\"allowed\":false");
    if (resp->message != NULL || resp->reason != NULL || resp->status_code != 0) {
        PUT(out, ",\"status\":{\"metadata\":{}");
        if (resp->message != NULL) {
            PUT(out, ",\"message\":");
            put_string_n(out, resp->message, resp->message_len ? resp->message_len : strlen(resp->message));
        }
        if (resp->reason != NULL) {
            PUT(out, ",\"reason\":");
            put_string(out, resp->reason);
        }
        if (resp->status_code != 0)
            wh_buf_printf(out, ",\"code\":%d", resp->status_code);
        wh_buf_putc(out, '}');
    }
    if (resp->patch.len != 0) {
        PUT(out, ",\"patch\":\"");
        wh_go_base64(out, resp->patch.data, resp->patch.len);
        PUT(out, "\",\"patchType\":\"JSONPatch\"");
    }
    if (resp->audit_annotations != NULL && json_object_size(resp->audit_annotations) != 0) {
        PUT(out, ",\"auditAnnotations\":");
        put_json(out, resp->audit_annotations);
    }
    if (resp->warnings != NULL && json_array_size(resp->warnings) != 0) {
        PUT(out, ",\"warnings\":");
        put_json(out, resp->warnings);
    }
    PUT(out, "}}");
}

/* --- serving -------------------------------------------------------------- */

static void plain(wh_http_response *res, int status, const char *text)
{
    res->status = status;
    res->content_type = CT_TEXT;
    wh_buf_reset(&res->body);
    wh_buf_puts(&res->body, text);
    wh_buf_putc(&res->body, '\n');
}

/* src cut to size - 1 bytes, as snprintf would, without its format parsing. */
static void copy_field(char *dst, size_t size, const char *src)
{
    size_t n = src != NULL ? strnlen(src, size - 1) : 0;

    if (n != 0)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

wh_code wh_admission_stats_init(wh_admission_stats *stats, const char *endpoint, wh_metrics *registry, wh_err *err)
{
    static const char *const labels[] = {"endpoint", "result", NULL};

    stats->endpoint = endpoint;
    stats->reviews = NULL;
    if (registry == NULL)
        return WH_OK;
    stats->reviews = wh_metrics_counter(registry, "webhookd_admission_reviews_total",
                                        "AdmissionReviews answered, by endpoint and result "
                                        "(allowed, patched, denied, undecodable, rejected = not reviewed: 4xx/5xx).",
                                        labels);
    if (stats->reviews == NULL)
        return wh_err_set(err, WH_E_CONFLICT, "cannot register webhookd_admission_reviews_total");
    return WH_OK;
}

static const char *review_result(const wh_admission_outcome *o, int status)
{
    if (status != 200)
        return "rejected";
    if (!o->decoded)
        return "undecodable";
    if (!o->allowed)
        return "denied";
    return o->has_patch ? "patched" : "allowed";
}

/* start is NULL when the review was not timed (debug logging off when it arrived). */
static void record(const wh_admission_stats *stats, const wh_http_request *http, const wh_http_response *res,
                   const wh_admission_outcome *o, const struct timespec *start)
{
    const char *result = review_result(o, res->status);
    char status[16], micros[32], bytes_in[32], bytes_out[32];
    struct timespec now;

    wh_metric_add(stats->reviews, (const char *const[]){stats->endpoint, result}, 1);
    if (start == NULL || !wh_log_enabled(WH_LOG_DEBUG))
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(status, sizeof(status), "%d", res->status);
    snprintf(micros, sizeof(micros), "%.0f",
             (double)(now.tv_sec - start->tv_sec) * 1e6 + (double)(now.tv_nsec - start->tv_nsec) / 1e3);
    snprintf(bytes_in, sizeof(bytes_in), "%zu", http->body_len);
    snprintf(bytes_out, sizeof(bytes_out), "%zu", res->body.len);
    wh_log(WH_LOG_DEBUG, "review", "endpoint", stats->endpoint, "path", http->path, "status", status, "result", result,
           "uid", o->uid, "kind", o->kind, "operation", o->operation, "apiVersion", o->api_version, "dryRun",
           o->dry_run ? "true" : "false", "bytesIn", bytes_in, "bytesOut", bytes_out, "durationMicros", micros, NULL);
}

static void serve(const wh_http_request *http, wh_admit_fn admit, void *ctx, wh_http_response *res,
                  wh_admission_outcome *result);

void wh_admission_serve(const wh_admission_stats *stats, const wh_http_request *http, wh_admit_fn admit, void *ctx,
                        wh_http_response *res, wh_admission_outcome *outcome)
{
    wh_admission_outcome o;
    struct timespec start;
    /* Only the debug access-log line reads the duration: no clock otherwise. */
    int timed = stats != NULL && wh_log_enabled(WH_LOG_DEBUG);

    if (timed)
        clock_gettime(CLOCK_MONOTONIC, &start);
    memset(&o, 0, sizeof(o));
    /* No method check: istiod's /inject and /validate handlers take any
     * method (a GET after our 301 gets the 400 "no body found" istiod gives). */
    if (http->body_limit != 0 && http->body_len > http->body_limit) {
        char text[96];
        o.refused = 1;
        snprintf(text, sizeof(text), "Request entity too large: limit is %zu", http->body_limit);
        /* istiod answers this 400 (http.Error with StatusBadRequest); 413 is
         * the accurate status, the one the validation corpus's
         * http-body-too-large pins, and the API server treats any non-200
         * alike (a failed call), so the text is istiod's and the status ours. */
        plain(res, 413, text);
    } else {
        serve(http, admit, ctx, res, &o);
    }
    if (stats != NULL)
        record(stats, http, res, &o, timed ? &start : NULL);
    if (outcome != NULL)
        *outcome = o;
}

static void serve(const wh_http_request *http, wh_admit_fn admit, void *ctx, wh_http_response *res,
                  wh_admission_outcome *result)
{
    wh_admission_request req;
    wh_admission_response resp;
    wh_json_arena arena;
    json_t *review = NULL;
    wh_err err;
    size_t prefix_len;
    int typed;

    /* Every json_t of this review lives and dies inside this call: its trees
     * are dropped whole (wh_json_arena_drop) when it ends. */
    wh_json_arena_begin(&arena);
    memset(&resp, 0, sizeof(resp));
    wh_err_clear(&err);

    if (http->body == NULL || http->body_len == 0) {
        plain(res, 400, "no body found");
        goto out;
    }
    if (http->content_type == NULL || http->content_type_len != sizeof(CT_JSON) - 1 ||
        memcmp(http->content_type, CT_JSON, sizeof(CT_JSON) - 1) != 0) {
        plain(res, 415, "invalid Content-Type, want `application/json`");
        goto out;
    }

    if (wh_admission_decode(http->body, http->body_len, &review, &req, &err) != WH_OK) {
        typed = req.api_version != NULL;
        wh_admission_deny(&resp, 0, DECODE_PREFIX "%s", wh_err_msg(&err));
        if (typed)
            copy_field(result->api_version, sizeof(result->api_version), req.api_version);
    } else {
        prefix_len = http->prefix != NULL ? strlen(http->prefix) : 0;
        req.path_suffix = http->path != NULL && http->path_len >= prefix_len ? http->path + prefix_len : "";
        result->decoded = 1;
        result->dry_run = req.dry_run;
        copy_field(result->uid, sizeof(result->uid), req.uid);
        copy_field(result->kind, sizeof(result->kind), req.kind);
        copy_field(result->operation, sizeof(result->operation), req.operation);
        copy_field(result->api_version, sizeof(result->api_version), req.api_version);
        if (admit(ctx, &req, &resp, &err) != WH_OK)
            wh_admission_deny(&resp, 0, "%s", wh_err_msg(&err));
        if (!resp.allowed) {
            /* A denial never carries a patch or warnings (istiod drops them). */
            wh_buf_free(&resp.patch);
            wh_json_arena_drop(resp.warnings);
            resp.warnings = NULL;
        }
    }

    result->allowed = resp.allowed;
    result->has_patch = resp.patch.len != 0;
    res->status = 200;
    res->content_type = CT_JSON;
    wh_buf_reset(&res->body);
    wh_admission_encode(req.api_version != NULL ? &req : NULL, &resp, &res->body);
out:
    wh_admission_response_clear(&resp);
    wh_json_arena_drop(review); /* parsed in this scope, read-only since: no walk to free it */
    wh_json_arena_end(&arena);
}
