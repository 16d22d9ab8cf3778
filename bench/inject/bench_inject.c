/*
 * bench_inject.c - CPU cost of one injection review, in process, split by
 * stage: request decode, render (template data + templates + YAML parse of
 * the overlays), shape (drop + Go type check of each overlay), merge
 * (overlays + overrides), post-processing, JSON Patch
 * diff, response encode.  Reported, not asserted.
 *
 *   bench_inject REVISIONS_DIR REVIEW.json [ITERATIONS [PAUSE_US]]
 *
 * Prints µs of CPU per review (total and per stage) and the patch size.
 * The decode stage is the codec's AdmissionReview decode and the pod's Go
 * type check (which finds the list items the merge target shares); the
 * encode stage is the codec writing the AdmissionResponse with the patch in
 * base64 (wh_admission_encode), as wh_admission_serve does; the trees are
 * then dropped whole with the arena scope, as there.
 * With PAUSE_US the whole-review loop sleeps that long before each review
 * and times each alone: one review per wake-up, as webhookd serves one
 * connection's requests in turn (its caches cooled by whatever ran while it
 * slept), where the loop without pauses runs the same review hot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench_review.h"
#include "wh_admission.h"
#include "wh_inject.h"
#include "wh_inject_diff.h"
#include "wh_inject_merge.h"
#include "wh_inject_post.h"
#include "wh_inject_shape.h"
#include "wh_json.h"
#include "wh_json_arena.h"

enum { S_DECODE, S_RENDER, S_SHAPE, S_MERGE, S_POST, S_DIFF, S_ENCODE, S_N };
static const char *const stage_names[S_N] = {"decode", "render", "shape", "merge", "post", "diff", "encode"};

int main(int argc, char **argv)
{
    wh_inject_registry *reg = NULL;
    wh_inject_revision *rev = NULL;
    wh_buf body = WH_BUF_INIT;
    wh_err err = {0};
    double stage[S_N] = {0}, t, t0, full = 0;
    long i, n = argc > 3 ? atol(argv[3]) : 200, pause_us = argc > 4 ? atol(argv[4]) : 0;
    size_t out_len = 0;
    int status = 1;

    wh_json_arena_install(); /* as webhookd does */
    if (argc < 3) {
        fprintf(stderr, "usage: bench_inject REVISIONS_DIR REVIEW.json [ITERATIONS [PAUSE_US]]\n");
        return 2;
    }
    if (wh_inject_registry_open(argv[1], NULL, &reg, &err) != WH_OK ||
        wh_buf_read_file(&body, argv[2], (size_t)64 << 20, &err) != WH_OK) {
        fprintf(stderr, "bench_inject: %s\n", wh_err_msg(&err));
        goto out;
    }
    rev = wh_inject_registry_get(reg, NULL);
    for (i = 0; i < n; i++) {
        json_t *review = NULL, *merged = NULL, *tmpl = NULL;
        wh_inject_shaped *shaped = NULL;
        wh_inject_go_leaves *leaves = NULL;
        const json_t *pod;
        wh_inject_rendered r;
        wh_inject_input in;
        wh_inject_post_params post;
        wh_admission_request areq;
        wh_admission_response resp;
        wh_buf enc = WH_BUF_INIT;
        wh_json_arena arena;

        t = bench_cpu_now();
        wh_json_arena_begin(&arena);
        memset(&resp, 0, sizeof(resp));
        if (wh_admission_decode(body.data, body.len, &review, &areq, &err) != WH_OK) {
            fprintf(stderr, "decode: %s\n", wh_err_msg(&err));
            goto out;
        }
        pod = json_object_get(areq.request, "object");
        if (wh_inject_go_decode((json_t *)pod, &wh_inject_type_pod, 0, &leaves, &err) != WH_OK) {
            fprintf(stderr, "decode: %s\n", wh_err_msg(&err));
            json_decref(review);
            goto out;
        }
        t0 = bench_cpu_now(), stage[S_DECODE] += t0 - t, t = t0;
        memset(&in, 0, sizeof(in));
        in.rev = rev;
        in.pod = pod;
        wh_json_mold_copies_begin(); /* as wh_inject_pod does */
        if (wh_inject_render(&in, &r, &err) != WH_OK) {
            fprintf(stderr, "render: %s\n", wh_err_msg(&err));
            json_decref(review);
            goto out;
        }
        t0 = bench_cpu_now(), stage[S_RENDER] += t0 - t, t = t0;
        if (wh_inject_shape_overlays(r.overlays, (const char *const *)r.names, &shaped, &err) != WH_OK) {
            fprintf(stderr, "shape: %s\n", wh_err_msg(&err));
            goto out;
        }
        wh_json_mold_copies_end();
        t0 = bench_cpu_now(), stage[S_SHAPE] += t0 - t, t = t0;
        if (wh_inject_apply_overlays(r.merge_pod, leaves, r.overlays, (const char *const *)r.names, shaped, r.native,
                                     wh_inject_revision_release(rev), &merged, &tmpl, &err) != WH_OK ||
            wh_inject_reapply_overrides(merged, r.merge_pod, tmpl, r.tproxy, wh_inject_revision_release(rev), &err) !=
                WH_OK) {
            fprintf(stderr, "merge: %s\n", wh_err_msg(&err));
            goto out;
        }
        t0 = bench_cpu_now(), stage[S_MERGE] += t0 - t, t = t0;
        post.rev = rev;
        post.r = &r;
        post.original = r.merge_pod;
        post.tmpl = tmpl;
        post.kube_inject = 0;
        if (wh_inject_postprocess(merged, &post, &err) != WH_OK) {
            fprintf(stderr, "post: %s\n", wh_err_msg(&err));
            goto out;
        }
        t0 = bench_cpu_now(), stage[S_POST] += t0 - t, t = t0;
        wh_inject_json_diff(pod, merged, &resp.patch);
        t0 = bench_cpu_now(), stage[S_DIFF] += t0 - t, t = t0;
        resp.allowed = 1; /* and the audit annotations wh_inject_admit adds */
        resp.audit_annotations = json_pack("{ssss}", "revision", wh_inject_revision_name(rev), "injected", "true");
        wh_admission_encode(&areq, &resp, &enc);
        t0 = bench_cpu_now(), stage[S_ENCODE] += t0 - t, t = t0;
        out_len = enc.len;
        wh_buf_free(&enc);
        wh_admission_response_clear(&resp);
        wh_json_arena_drop(merged);
        wh_json_arena_drop(tmpl);
        free(shaped);
        wh_inject_go_leaves_free(leaves);
        wh_inject_rendered_clear(&r);
        wh_json_arena_drop(review);
        wh_json_arena_end(&arena);
    }
    /* The whole path as webhookd runs it (codec included), for comparison. */
    for (i = 0, t = bench_cpu_now(); i < n; i++) {
        wh_inject_call call;
        if (pause_us > 0) {
            full += bench_cpu_now() - t;
            usleep((useconds_t)pause_us);
            t = bench_cpu_now();
        }
        memset(&call, 0, sizeof(call));
        call.registry = reg;
        bench_serve("/inject", &body, wh_inject_admit, &call);
    }
    full = (full + bench_cpu_now() - t) / (double)n;
    printf("%s: %zu bytes in, %zu bytes of AdmissionReview out, %ld iterations\n", argv[2], body.len, out_len, n);
    printf("  whole review (wh_admission_serve): %.1f us CPU%s\n", full, pause_us > 0 ? " (one per wake-up)" : "");
    for (i = 0; i < S_N; i++)
        printf("  %-7s %9.1f us\n", stage_names[i], stage[i] / (double)n);
    status = 0;
out:
    wh_inject_revision_unref(rev);
    wh_inject_registry_free(reg);
    wh_buf_free(&body);
    return status;
}
