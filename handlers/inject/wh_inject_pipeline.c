/*
 * wh_inject_pipeline.c - the injection pipeline stage by stage (see
 * wh_inject.h and CONTRIBUTING.md's stage table) and the admit function that
 * answers an AdmissionReview with its JSON Patch (stage 8, encode).
 */
#include "wh_inject.h"

#include <stdlib.h>
#include <string.h>

#include "wh_inject_decide.h"
#include "wh_inject_decode.h"
#include "wh_inject_diff.h"
#include "wh_inject_merge.h"
#include "wh_inject_post.h"
#include "wh_inject_render.h"
#include "wh_inject_shape.h"
#include "wh_json_arena.h"

#define TEMPLATE_PREFIX "failed to run injection template"

void wh_inject_pod_result_clear(wh_inject_pod_result *res)
{
    /* inside a review's arena scope, reclaimed with it (no walk) */
    wh_json_arena_drop(res->original);
    wh_json_arena_drop(res->final);
    memset(res, 0, sizeof(*res));
}

wh_code wh_inject_pod(const wh_inject_pod_request *req, wh_inject_pod_result *res, wh_err *err)
{
    wh_inject_rendered r;
    wh_inject_input in;
    wh_inject_post_params post;
    json_t *merged = NULL, *tmpl = NULL;
    wh_inject_shaped *shaped = NULL;
    wh_inject_go_leaves *leaves = NULL;
    const char *reason = NULL;
    wh_code rc;

    memset(res, 0, sizeof(*res));
    memset(&r, 0, sizeof(r));
    if ((rc = wh_inject_decode_pod(req->pod, req->namespace_, &res->original, &leaves, err)) != WH_OK)
        return rc;
    if (!wh_inject_decide(req->rev, res->original, req->kube_inject, &reason)) {
        res->skip_reason = reason != NULL ? reason : "not selected";
        wh_inject_go_leaves_free(leaves);
        return WH_OK;
    }
    memset(&in, 0, sizeof(in));
    in.rev = req->rev;
    in.settings = req->settings;
    in.pod = res->original;
    in.url_envs = req->url_envs;
    in.namespace_obj = req->namespace_obj;
    in.revision = req->revision;
    in.deploy = req->deploy;
    in.proxyconfigs = req->proxyconfigs;
    in.kube_inject = req->kube_inject;
    /* the copies of constant YAML the render makes, remembered until shape
     * has walked them (nothing edits them in between) */
    wh_json_mold_copies_begin();
    if ((rc = wh_inject_render(&in, &r, err)) != WH_OK) {
        wh_err_prefix(err, "%s", TEMPLATE_PREFIX); /* "failed to run injection template: <why>" */
        goto out;
    }
    rc = wh_inject_shape_overlays(r.overlays, (const char *const *)r.names, &shaped, err);
    wh_json_mold_copies_end();
    if (rc != WH_OK) {
        wh_err_prefix(err, "%s", TEMPLATE_PREFIX);
        goto out;
    }
    if ((rc = wh_inject_apply_overlays(r.merge_pod, leaves, r.overlays, (const char *const *)r.names, shaped, r.native,
                                       &req->rev->release, &merged, &tmpl, err)) != WH_OK ||
        (rc = wh_inject_reapply_overrides(merged, r.merge_pod, tmpl, r.tproxy, &req->rev->release, err)) != WH_OK)
        goto out;
    post.rev = req->rev;
    post.r = &r;
    post.original = r.merge_pod;
    post.tmpl = tmpl;
    post.kube_inject = req->kube_inject;
    if ((rc = wh_inject_postprocess(merged, &post, err)) != WH_OK)
        goto out;
    res->final = merged;
    merged = NULL;
out:
    wh_json_mold_copies_end(); /* (after a failed render) */
    free(shaped);
    wh_inject_go_leaves_free(leaves);
    wh_json_arena_drop(merged);
    wh_json_arena_drop(tmpl);
    wh_inject_rendered_clear(&r);
    if (rc != WH_OK)
        wh_inject_pod_result_clear(res);
    return rc;
}

/* What the API server's audit log records of this review, under the webhook's
 * name (e.g. "namespace.sidecar-injector.istio.io/injected"): which revision
 * answered and whether it injected, or why not.  istiod sets none; audit trails
 * of "who injected what" otherwise need the pod itself. */
static void audit(wh_admission_response *resp, const char *revision, const char *skip_reason)
{
    static const wh_json_key keys[3] = {{"revision", 8}, {"injected", 8}, {"skip-reason", 11}};
    /* revision: a registry name (a DNS-1123 label); skip_reason: one of
     * wh_inject_decide's texts; ASCII both, so they need no UTF-8 check */
    json_t *values[3] = {json_string_nocheck(revision), json_string_nocheck(skip_reason == NULL ? "true" : "false"),
                         skip_reason != NULL ? json_string_nocheck(skip_reason) : NULL};

    /* one bump of the review's arena (jansson's calls: ~1.5 k instructions) */
    wh_json_arena_drop(resp->audit_annotations);
    resp->audit_annotations = wh_json_arena_object(keys, values, skip_reason != NULL ? 3 : 2, 0);
}

static void release_revision(void *rev)
{
    wh_inject_revision_unref(rev);
}

wh_code wh_inject_admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err)
{
    wh_inject_call *call = ctx;
    wh_inject_pod_request preq;
    wh_inject_pod_result res = {0};
    wh_inject_revision *rev = NULL;
    const json_t *object = json_object_get(req->request, "object");
    json_t *envs = NULL;
    char *rev_name = NULL;
    int deferred = 0;
    wh_code rc;

    if ((rc = wh_inject_path_parse(req->path_suffix, strlen(req->path_suffix), &rev_name, &envs, err)) != WH_OK)
        goto out;
    /* The response's trees share the revision's immortal values and are
     * encoded after this returns: the scope's end releases the revision. */
    if ((rev = wh_inject_registry_get(call->registry, rev_name)) != NULL && wh_json_arena_defer(release_revision, rev))
        deferred = 1;
    if (rev == NULL) {
        char *why = wh_inject_registry_refusal(call->registry, rev_name);
        call->failed = 1;
        if (why != NULL)
            rc = wh_admission_deny(resp, 0, "revision \"%s\" is not served: its config was refused: %s",
                                   rev_name != NULL ? rev_name : "default", why);
        else
            rc = wh_admission_deny(resp, 0, "unknown revision \"%s\": this webhookd serves no such revision",
                                   rev_name != NULL ? rev_name : "default");
        free(why);
        goto out;
    }
    snprintf(call->revision, sizeof(call->revision), "%s", wh_inject_revision_name(rev));
    if (!json_is_object(object)) {
        call->failed = 1;
        rc = wh_admission_deny(resp, 0, "could not decode pod: request.object is %s",
                               object == NULL ? "missing" : "not a JSON object");
        goto out;
    }
    memset(&preq, 0, sizeof(preq));
    preq.rev = rev;
    preq.settings = call->settings;
    preq.pod = object;
    preq.namespace_ = req->namespace;
    preq.url_envs = envs;
    preq.proxyconfigs = call->proxyconfigs;
    if (call->namespaces != NULL) {
        const char *ns = json_string_value(json_object_get(json_object_get(object, "metadata"), "namespace"));
        preq.namespace_obj = json_object_get(call->namespaces, ns != NULL && *ns != '\0' ? ns : req->namespace);
    }
    if ((rc = wh_inject_pod(&preq, &res, err)) != WH_OK) {
        call->failed = 1;
        rc = wh_admission_deny_bytes(resp, 0, wh_err_msg(err), wh_err_msg_len(err));
        goto out;
    }
    resp->allowed = 1;
    if (res.final == NULL) {
        call->skipped = 1;
        audit(resp, call->revision, res.skip_reason);
        goto out;
    }
    audit(resp, call->revision, NULL);
    wh_inject_json_diff(res.original, res.final, &resp->patch); /* the codec base64-encodes it (handlers/admission) */
out:
    wh_inject_pod_result_clear(&res);
    if (!deferred)
        wh_inject_revision_unref(rev);
    wh_json_arena_drop(envs);
    free(rev_name);
    return rc;
}
