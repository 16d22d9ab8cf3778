/*
 * bench_review.h - what the in-process review benchmarks (bench/inject,
 * bench/validate) share, so both time the same thing the same way: the
 * process CPU clock, and one AdmissionReview POSTed through
 * wh_admission_serve the way webhookd's HTTP adapter hands it over.
 */
#ifndef WH_BENCH_REVIEW_H
#define WH_BENCH_REVIEW_H

#include <string.h>
#include <time.h>

#include "wh_admission.h"

/* CPU time this process has used, in µs. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Serve `body` as a POST of application/json to `path` with `admit` (and
 * its `ctx`), as webhookd would, and drop the reply. */
static inline void bench_serve(const char *path, const wh_buf *body, wh_admit_fn admit, void *ctx)
{
    wh_http_request req;
    wh_http_response res;

    memset(&req, 0, sizeof(req));
    memset(&res, 0, sizeof(res));
    req.method = "POST";
    req.path = path;
    req.path_len = strlen(path);
    req.prefix = path;
    req.content_type = "application/json";
    req.content_type_len = strlen(req.content_type);
    req.body = body->data;
    req.body_len = body->len;
    wh_admission_serve(NULL, &req, admit, ctx, &res, NULL);
    wh_buf_free(&res.body);
}

#endif
