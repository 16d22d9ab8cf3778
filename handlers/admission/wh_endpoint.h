/*
 * wh_endpoint.h - the seam between the HTTP server and admission logic.
 *
 * server/ owns sockets, TLS and h2o; it turns each request into a
 * wh_http_request (the whole body already read) and hands every request
 * under a path prefix, whatever its method or size, to the endpoint
 * registered for it, as h2o hands a path to its handler.  The server speaks
 * HTTP only (status, headers, body): which methods an endpoint takes and
 * how it words a refusal (413) are the endpoint's, and so is what a
 * review amounted to (wh_admission_serve counts and logs it).  An endpoint
 * is pure: bytes in, status + bytes out, no h2o and no I/O on the request
 * path, so it is unit-testable and fuzzable alone.  serve() is called
 * concurrently from every worker thread.
 *
 * Endpoints are built by a wh_endpoint_create_fn listed, with the flags it
 * reads, in the table of server/wh_server_endpoints.c.
 */
#ifndef WH_ENDPOINT_H
#define WH_ENDPOINT_H

#include <stddef.h>

#include "wh_buf.h"
#include "wh_metrics.h"
#include "wh_result.h"

/* The TLS client certificate of the connection a request came on
 * (--client-ca-file; server/wh_server_router.c decides per path). */
typedef enum wh_http_client_cert {
    WH_CLIENT_CERT_NONE = 0,  /* plain HTTP, or no certificate presented */
    WH_CLIENT_CERT_VERIFIED,  /* presented and verified against the client CAs */
    WH_CLIENT_CERT_EXPIRED,   /* outside its validity period */
    WH_CLIENT_CERT_UNTRUSTED, /* not issued by one of the client CAs */
    WH_CLIENT_CERT_INVALID,   /* any other verification failure (purpose, signature, ...) */
} wh_http_client_cert;

typedef struct wh_http_request {
    const char *method; /* "POST", "GET", ... (NUL-terminated) */
    const char *path;   /* path without query string, e.g. "/inject/rev/1-24/cluster/c1" (NUL-terminated) */
    size_t path_len;    /* (percent-escapes decoded, as Go's r.URL.Path) */
    /* The path as the client sent it (escapes kept, no query), or NULL: then
     * `path` is routed as it is.  The server routes on it as istiod's Go
     * ServeMux does (server/wh_server_router.c: canonical_path). */
    const char *raw_path;
    size_t raw_path_len;
    const char *prefix; /* the route prefix that matched, e.g. "/inject" */
    const char *query;  /* after '?', or NULL */
    size_t query_len;
    const char *content_type; /* Content-Type header value, or NULL (not NUL-terminated: use the length) */
    size_t content_type_len;
    const char *body;  /* NULL when the request had no body, or one over body_limit */
    size_t body_len;   /* the body's length (also when it is over body_limit and not handed over) */
    size_t body_limit; /* the server's cap on a body (--max-request-bytes); 0: none */
    wh_http_client_cert client_cert;
    const char *client_cert_error; /* static text of a failed verification, or NULL */
} wh_http_request;

typedef struct wh_http_response {
    int status;               /* HTTP status code */
    const char *content_type; /* static string; "application/json" when NULL */
    const char *allow;        /* static string for the Allow header (405), or NULL */
    wh_buf body;              /* owned by the response; server frees it */
    wh_buf location;          /* the Location header of a redirect (301), when len != 0; the server frees it */
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
    /* Optional (NULL = nothing to reload).  Called from the main thread only,
     * once a second with forced = 0 (reload if your inputs changed) and on
     * SIGHUP with forced = 1, while serve() keeps running on the workers: swap
     * state atomically.  On failure keep serving the previous state, report
     * it through ready()'s detail, and return an error (the server logs it). */
    wh_code (*reload)(wh_endpoint *self, int forced, wh_err *err);
    void (*destroy)(wh_endpoint *self);
    void *data; /* the implementation's state */
};

/* One of an endpoint's own flags, declared beside the endpoint (as h2o keeps
 * a handler's configurator beside the handler) and listed with it in
 * server/wh_server_endpoints.c: webhookd shows it in --help, reads it from
 * --NAME and WEBHOOKD_NAME and hands it to the constructor through
 * env->flag(env, NAME).  A table ends with a NULL name. */
typedef struct wh_endpoint_flag {
    const char *name; /* e.g. "revisions-dir": --revisions-dir, WEBHOOKD_REVISIONS_DIR */
    const char *defval;
    const char *usage;
} wh_endpoint_flag;

/* What a constructor gets from the server. */
typedef struct wh_endpoint_env wh_endpoint_env;
struct wh_endpoint_env {
    const char *name;    /* "inject", "validate" (set it as wh_endpoint.name) */
    const char *prefix;  /* "/inject", "/validate" */
    wh_metrics *metrics; /* the server's registry: register families at creation */
    /* The value of one of this endpoint's own flags (its wh_endpoint_flag
     * table), e.g. flag(env, "revisions-dir"), or a core string flag it
     * shares (e.g. "kubeconfig"); the
     * default when unset; NULL when unset without default.  Borrowed, lives as
     * long as the process. */
    const char *(*flag)(const wh_endpoint_env *env, const char *name);
    const void *impl; /* the server's */
};

/* Build an endpoint.  Called once at start-up in the main thread; a failure
 * stops webhookd with err's message. *out is owned by the server (destroy()). */
typedef wh_code (*wh_endpoint_create_fn)(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err);

/* An endpoint's checks of its flags' values and of how they combine, without
 * reading a file or the network: webhookd runs them before any constructor
 * and for --check-config (env->metrics is NULL).  The constructor relies on
 * them having passed. */
typedef wh_code (*wh_endpoint_check_fn)(const wh_endpoint_env *env, wh_err *err);

#endif
