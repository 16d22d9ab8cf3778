/*
 * wh_endpoint.h - the seam between the HTTP server and admission logic.
 *
 * server/ owns sockets, TLS and h2o; it turns each request into a
 * wh_http_request (the whole body already read, size cap already enforced)
 * and hands it to the endpoint registered for the path prefix.  An endpoint
 * is pure: bytes in, status + bytes out, no h2o and no I/O on the request
 * path, so it is unit-testable and fuzzable alone.  serve() is called
 * concurrently from every worker thread.
 */
#ifndef WH_ENDPOINT_H
#define WH_ENDPOINT_H

#include <stddef.h>

#include "wh_buf.h"
#include "wh_metrics.h"

typedef struct wh_http_request {
    const char *method;       /* "POST", "GET", ... */
    const char *path;         /* path without query string, e.g. "/inject/rev/1-24/cluster/c1" */
    size_t path_len;
    const char *prefix;       /* the route prefix that matched, e.g. "/inject" */
    const char *query;        /* after '?', or NULL */
    size_t query_len;
    const char *content_type; /* Content-Type header value, or NULL */
    size_t content_type_len;
    const char *body;         /* NULL when the request had no body */
    size_t body_len;
} wh_http_request;

typedef struct wh_http_response {
    int status;               /* HTTP status code */
    const char *content_type; /* static string; "application/json" when NULL */
    wh_buf body;              /* owned by the response; server frees it */
} wh_http_response;

typedef struct wh_endpoint wh_endpoint;

struct wh_endpoint {
    const char *name; /* "inject", "validate": used in logs and metric labels */
    /* Fill `res`; must never fail to produce an answer (errors become 4xx/5xx
     * or a denying AdmissionResponse). */
    void (*serve)(wh_endpoint *self, const wh_http_request *req, wh_http_response *res);
    /* 1 when ready to serve; append a one-line reason to `detail` when not (or
     * when degraded, e.g. a revision whose new config failed to load). */
    int (*ready)(wh_endpoint *self, wh_buf *detail);
    void (*destroy)(wh_endpoint *self);
    void *data; /* the implementation's state */
};

#endif
