/*
 * fuzz_router.c - libFuzzer target for the router's reading of request paths
 * (server/wh_server_router.c: canonical_path, segment matching), the one
 * decoder of client bytes the server has before an endpoint takes over.
 *
 * Input: the first byte picks the method (even: POST, odd: GET), the rest
 * is the raw request path, a '?' starting the query.  Beyond ASan/UBSan it
 * checks that every answer is one of the router's statuses, that an
 * endpoint is handed a NUL-terminated path starting with its prefix, and
 * that a redirect's Location, served in turn, is never redirected again
 * (the clean form is a fixed point, as Go's cleanPath is).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_server.h"

static void echo(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    (void)self;
    if (req->path[req->path_len] != '\0' || strncmp(req->path, req->prefix, strlen(req->prefix)) != 0)
        abort();
    res->status = 200;
    wh_buf_append(&res->body, req->path, req->path_len);
}

static int ready(wh_endpoint *self, wh_buf *detail)
{
    (void)self;
    (void)detail;
    return 1;
}

static wh_router *router;

static int serve(const char *method, const char *raw, size_t n, wh_http_response *res)
{
    const char *q = memchr(raw, '?', n);
    wh_http_request req = {.method = method,
                           .path = "/",
                           .path_len = 1,
                           .raw_path = raw,
                           .raw_path_len = q != NULL ? (size_t)(q - raw) : n};

    if (q != NULL) {
        req.query = q + 1;
        req.query_len = n - (size_t)(q + 1 - raw);
    }
    memset(res, 0, sizeof(*res));
    wh_router_serve(router, &req, res);
    switch (res->status) {
    case 200:
    case 301:
    case 400:
    case 404:
    case 405:
        break;
    default:
        abort();
    }
    if ((res->status == 301) != (res->location.len != 0))
        abort();
    return res->status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wh_endpoint inject = {"inject", echo, ready, NULL, NULL, NULL};
    static wh_endpoint validate = {"validate", echo, ready, NULL, NULL, NULL};
    const char *method;
    wh_http_response res, again;

    if (router == NULL) {
        wh_router_route routes[] = {{"/inject", &inject}, {"/validate", &validate}};
        if (wh_router_new(routes, 2, 1 << 20, wh_metrics_new(), &router, NULL) != WH_OK)
            abort();
        wh_router_set_certs(router, 1, "fuzz");
    }
    if (size == 0)
        return 0;
    method = data[0] % 2 == 0 ? "POST" : "GET";
    if (serve(method, (const char *)data + 1, size - 1, &res) == 301) {
        if (serve(method, res.location.data, res.location.len, &again) == 301)
            abort();
        wh_buf_free(&again.body);
        wh_buf_free(&again.location);
    }
    wh_buf_free(&res.body);
    wh_buf_free(&res.location);
    return 0;
}
