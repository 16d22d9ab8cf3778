/*
 * wh_server.h - webhookd's parts, as main.c wires them together.
 *
 *   flags     command line + WEBHOOKD_* environment -> wh_server_config
 *   endpoints the table of admission endpoints (route prefix, flags, constructor)
 *   router    pure request -> response dispatch: endpoints, health, metrics
 *   http      the one h2o adapter: threads, event loops, TLS, shutdown
 *
 * Only wh_server_h2o.c includes h2o; everything else here is plain C and
 * unit-tested without sockets.
 */
#ifndef WH_SERVER_H
#define WH_SERVER_H

#include <openssl/ssl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "wh_buf.h"
#include "wh_endpoint.h"
#include "wh_metrics.h"
#include "wh_result.h"

/* --- flags ---------------------------------------------------------------- */

typedef enum wh_server_flag_type {
    WH_FLAG_STRING,  /* const char * (borrowed from argv/environ/default) */
    WH_FLAG_INT,     /* int */
    WH_FLAG_BOOL,    /* int: --x, --x=true|false */
    WH_FLAG_BYTES,   /* size_t: 6291456, 6MiB, 512KiB, 1GiB */
    WH_FLAG_SECONDS, /* double: 30s, 500ms, 1m, 1.5 (seconds) */
} wh_server_flag_type;

typedef struct wh_server_flag {
    const char *name; /* "listen": --listen and WEBHOOKD_LISTEN */
    wh_server_flag_type type;
    void *value;        /* where the parsed value goes (see the types) */
    const char *defval; /* default, parsed like a given value; NULL = none */
    const char *usage;
} wh_server_flag;

typedef struct wh_server_config {
    const char *listen;
    const char *monitoring_listen; /* plain-HTTP probes and metrics on their own thread; "" = off */
    int threads;                   /* 0 = one per CPU */
    int http2;
    size_t max_request_bytes;
    size_t max_inflight_bytes; /* 0 = derived from the memory limit (wh_server_default_inflight) */
    double write_timeout;
    double shutdown_timeout;
    double shutdown_delay;
    const char *log_level;
    const char *log_format;
    int help;
    int version;
    int check_config;       /* --check-config: run the start-up checks, print the verdict, exit */
    const char *kubeconfig; /* the cluster reads of /inject and the caBundle patcher */
    double kube_timeout;
} wh_server_config;

/* The core flags, bound to `cfg` (rows end with a NULL name).  The
 * certificate's flags are beside it (wh_server_certs.h), the endpoints'
 * beside each endpoint. */
void wh_server_core_flags(wh_server_config *cfg, wh_server_flag *rows, size_t nrows);
#define WH_SERVER_CORE_FLAGS 16

/* Set every flag from its default, then WEBHOOKD_<NAME> (dashes become
 * underscores), then argv (--name=value, --name value, --bool).  `rows` is
 * NULL-name terminated; `env` is a NULL-terminated environ. */
wh_code wh_server_flags_parse(const wh_server_flag *rows, int argc, char **argv, char **env, wh_err *err);
void wh_server_flags_usage(const wh_server_flag *rows, FILE *out);

/* The default of --max-inflight-bytes: a quarter of the container's memory
 * limit (cgroup v2 memory.max, else v1 memory.limit_in_bytes), 1 GiB when
 * there is none; never below one whole request.  `cgroup_root` is
 * "/sys/fs/cgroup" (a parameter for tests). */
size_t wh_server_default_inflight(const char *cgroup_root, size_t max_request_bytes);

/* Value parsers, exposed for tests. */
wh_code wh_server_parse_bytes(const char *text, size_t *out);
wh_code wh_server_parse_seconds(const char *text, double *out);

/* --- endpoints ------------------------------------------------------------ */

typedef struct wh_server_endpoint_def {
    const char *name;              /* "inject" */
    const char *prefix;            /* "/inject": serves /inject and /inject/... */
    const wh_endpoint_flag *flags; /* declared beside the endpoint; ends with a NULL name; NULL for none */
    wh_endpoint_check_fn check;    /* NULL: nothing to check before create */
    wh_endpoint_create_fn create;
} wh_server_endpoint_def;

extern const wh_server_endpoint_def wh_server_endpoint_defs[];
extern const size_t wh_server_endpoint_ndefs;

/* The placeholder for an endpoint whose implementation is not plugged in:
 * every review gets allowed:false saying so (it is ready: nothing to load). */
wh_code wh_server_not_configured_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err);

/* --- router --------------------------------------------------------------- */

typedef struct wh_router wh_router;

typedef struct wh_router_route {
    const char *prefix;    /* "/inject" */
    wh_endpoint *endpoint; /* borrowed */
} wh_router_route;

/* `routes` is copied; the endpoints stay owned by the caller.  The router
 * registers its HTTP metric families in `metrics`.  Every request under a
 * route's prefix goes to its endpoint, with body_limit = max_body (a body
 * over it is not handed over: the endpoint words the 413); elsewhere the
 * router answers a body over max_body with 413 itself. */
wh_code wh_router_new(const wh_router_route *routes, size_t nroutes, size_t max_body, wh_metrics *metrics,
                      wh_router **out, wh_err *err);
void wh_router_free(wh_router *router);

/* Readiness inputs owned by main: the certificate state (a one-line detail
 * shown by /readyz) and shutdown. */
void wh_router_set_certs(wh_router *router, int loaded, const char *detail);
/* The caBundle patcher's last state, shown by /readyz as an informational
 * "[+]cabundle: DETAIL" line: it never makes webhookd unready (an API server
 * outage must not take the webhook down too).  NULL removes the line. */
void wh_router_set_cabundle(wh_router *router, const char *detail);
void wh_router_set_shutting_down(wh_router *router);
/* From now on (set before serving) every path but /healthz and /readyz
 * needs a verified client certificate (req->client_cert): others get 403, a
 * metric and a rate-limited log line; /readyz without one shows only its
 * verdict line.  The monitoring listener is not affected. */
wh_code wh_router_require_client_cert(wh_router *router, wh_err *err);

/* Answer one request (any thread).  `res` starts zeroed; the caller frees
 * res->body. */
void wh_router_serve(wh_router *router, const wh_http_request *req, wh_http_response *res);
/* The same for the monitoring listener: /healthz, /readyz, /metrics and
 * /version only (admission endpoints are 404 there). */
void wh_router_serve_monitoring(wh_router *router, const wh_http_request *req, wh_http_response *res);

/* --- http (the h2o adapter) ----------------------------------------------- */

typedef struct wh_http_server wh_http_server;

typedef struct wh_http_config {
    const char *listen;        /* ":8443", "127.0.0.1:8443", "[::1]:8443", "localhost:8443" */
    int threads;               /* >= 1 */
    int http2;                 /* offer h2 in ALPN (otherwise HTTP/1.1 only, prior knowledge refused too) */
    int monitoring;            /* plain HTTP (no ssl_ctx), wh_router_serve_monitoring */
    size_t max_request_bytes;  /* the router's cap; h2o's own limit is wh_http_entity_limit() of it */
    size_t max_inflight_bytes; /* request bytes buffered + answers not yet written, all connections
                                  (at least one whole request) */
    uint64_t write_timeout_ms; /* an answer not drained by then closes its connection (0 = 15 s) */
    wh_router *router;         /* borrowed */
    wh_metrics *metrics;       /* borrowed: connection gauges */
} wh_http_config;

/* Bind the listeners (one SO_REUSEPORT socket per thread) and start the
 * worker threads.  `ssl_ctx` is borrowed (the server takes its own reference). */
wh_code wh_http_start(const wh_http_config *cfg, SSL_CTX *ssl_ctx, wh_http_server **out, wh_err *err);

/* h2o's limit on one request body (max_request_entity_size): the cap plus
 * one byte, so that a body over the cap is told from one at it (P6). */
size_t wh_http_entity_limit(size_t max_request_bytes);

/* The address actually bound (useful with port 0). */
const char *wh_http_bound_address(const wh_http_server *server);

/* Hand a new TLS context to every worker; new connections use it from their
 * next accept on, established ones keep theirs.  `ssl_ctx` is borrowed. */
void wh_http_set_tls(wh_http_server *server, SSL_CTX *ssl_ctx);

/* Keep accepting and serving, but end every HTTP/1.1 answer from now on with
 * "Connection: close", so that clients move their keep-alive connections to
 * other replicas while this one is being removed from the endpoints. */
void wh_http_begin_drain(wh_http_server *server);

/* Stop accepting, finish in-flight requests, close idle keep-alive
 * connections, and join the workers; gives up on stragglers after
 * `timeout` seconds.  Returns the number of connections cut at the deadline. */
size_t wh_http_shutdown(wh_http_server *server, double timeout);
void wh_http_free(wh_http_server *server);

#endif
