/*
 * bench_validate.c - CPU cost of one validation review, in process: the whole
 * wh_admission_serve path as webhookd runs it (inside its JSON arena), then
 * split into decode (AdmissionReview JSON), validate (the kind's rules) and
 * encode (the AdmissionReview reply).  Reported, not asserted; the transport
 * (TLS, HTTP/1.1) comes on top and is measured by bench/bench.py.
 *
 *   bench_validate REVIEW.json [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_review.h"
#include "wh_admission.h"
#include "wh_json_arena.h"
#include "wh_validate.h"

enum { S_DECODE, S_VALIDATE, S_ENCODE, S_N };
static const char *const stage_names[S_N] = {"decode", "validate", "encode"};

int main(int argc, char **argv)
{
    wh_buf body = WH_BUF_INIT;
    wh_err err = {0};
    double stage[S_N] = {0}, t, t0, full;
    long i, n = argc > 2 ? atol(argv[2]) : 20000;
    int status = 1, allowed = -1;

    wh_json_arena_install(); /* as webhookd does */
    if (argc < 2) {
        fprintf(stderr, "usage: bench_validate REVIEW.json [ITERATIONS]\n");
        return 2;
    }
    if (wh_buf_read_file(&body, argv[1], (size_t)64 << 20, &err) != WH_OK) {
        fprintf(stderr, "bench_validate: %s\n", wh_err_msg(&err));
        goto out;
    }
    for (i = 0; i < n; i++) {
        wh_admission_request req;
        wh_admission_response resp;
        wh_json_arena arena;
        wh_buf reply = WH_BUF_INIT;
        json_t *review = NULL;
        wh_code rc;

        memset(&resp, 0, sizeof(resp));
        wh_json_arena_begin(&arena);
        t = bench_cpu_now();
        rc = wh_admission_decode(body.data, body.len, &review, &req, &err);
        t0 = bench_cpu_now(), stage[S_DECODE] += t0 - t, t = t0;
        if (rc == WH_OK)
            rc = wh_validate_admit(NULL, &req, &resp, &err);
        t0 = bench_cpu_now(), stage[S_VALIDATE] += t0 - t, t = t0;
        if (rc == WH_OK)
            wh_admission_encode(&req, &resp, &reply);
        t0 = bench_cpu_now(), stage[S_ENCODE] += t0 - t;
        allowed = resp.allowed;
        wh_buf_free(&reply);
        wh_admission_response_clear(&resp);
        json_decref(review);
        wh_json_arena_end(&arena);
        if (rc != WH_OK) {
            fprintf(stderr, "bench_validate: %s\n", wh_err_msg(&err));
            goto out;
        }
    }
    t = bench_cpu_now();
    for (i = 0; i < n; i++)
        bench_serve("/validate", &body, wh_validate_admit, NULL);
    full = (bench_cpu_now() - t) / (double)n;
    printf("%s: %zu bytes in, %s, %ld iterations\n", argv[1], body.len, allowed ? "allowed" : "denied", n);
    printf("  whole review (wh_admission_serve): %.2f us CPU\n", full);
    for (i = 0; i < S_N; i++)
        printf("  %-9s %7.2f us\n", stage_names[i], stage[i] / (double)n);
    status = 0;
out:
    wh_buf_free(&body);
    return status;
}
