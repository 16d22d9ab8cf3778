/*
 * inject_merge_tool.c - exposes the merge-side primitives of wh_inject to the
 * declarative test runner (run.py): one operation per invocation, JSON in on
 * files, JSON out on stdout, errors on stderr with exit status 1.
 *
 *   inject_merge_tool smp TYPE ORIGINAL PATCH   (TYPE: pod, container, none)
 *   inject_merge_tool roundtrip TYPE DOC
 *   inject_merge_tool diff FROM TO
 *   inject_merge_tool diff-shared FROM TO   (the same, TO sharing FROM's equal subtrees)
 *   inject_merge_tool quantity TEXT
 *   inject_merge_tool json go|plain DOC      (compact JSON text, Go's escaping or plain)
 *   inject_merge_tool overlays NATIVE(0|1) POD OVERLAYS   -> {"merged":…,"template":…}
 *   inject_merge_tool reapply TPROXY(0|1) POD ORIGINAL TEMPLATE
 *   inject_merge_tool post CASE   (CASE: {"revision": {config, values, mesh}, "pod", "template",
 *                                  "rendered": {proxy_envs, network, revision, hold}, "kube_inject"})
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wh_go.h"
#include "wh_inject_diff.h"
#include "wh_inject_merge.h"
#include "wh_inject_post.h"
#include "wh_inject_quantity.h"
#include "wh_inject_shape.h"
#include "wh_inject_revision_load.h"

static const wh_inject_type *type_named(const char *name)
{
    if (strcmp(name, "pod") == 0)
        return &wh_inject_type_pod;
    if (strcmp(name, "container") == 0)
        return &wh_inject_type_container;
    return NULL;
}

static json_t *load(const char *path)
{
    json_error_t jerr;
    json_t *v = json_load_file(path, JSON_DECODE_ANY, &jerr);

    if (v == NULL)
        fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
    return v;
}

static int print(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

    if (s == NULL)
        return 1;
    puts(s);
    free(s);
    return 0;
}

/* The pipeline diffs the request's pod against the injected one, which
 * shares values with it (wh_inject_apply_overlays' merge target): the stages
 * that change the injected pod in place must never reach the request's. */
/* The stable leaves of `pod` as the pipeline finds them (wh_inject_decode_pod
 * type-checks the request's pod): what the merge target may share with it.
 * A pod that does not decode shares nothing. */
static wh_inject_go_leaves *leaves_of(json_t *pod)
{
    wh_inject_go_leaves *leaves = NULL;
    wh_err ignored = {0};

    wh_inject_go_decode(pod, &wh_inject_type_pod, 0, &leaves, &ignored);
    return leaves;
}

/* `to` with every value that equals the one at the same place in `from`
 * replaced by from's own, as the injected pod shares the request pod's
 * untouched lists (new reference): the JSON Patch must not depend on it. */
static json_t *share_equal(const json_t *from, const json_t *to)
{
    json_t *out;
    size_t i;
    void *it;

    if (from != NULL && json_equal(from, to))
        return json_incref((json_t *)from);
    if (json_is_object(to)) {
        out = json_object();
        for (it = json_object_iter((json_t *)to); it != NULL; it = json_object_iter_next((json_t *)to, it)) {
            const char *key = json_object_iter_key(it);
            json_object_set_new(out, key, share_equal(json_object_get(from, key), json_object_iter_value(it)));
        }
        return out;
    }
    if (json_is_array(to)) {
        out = json_array();
        for (i = 0; i < json_array_size(to); i++)
            json_array_append_new(out, share_equal(json_array_get(from, i), json_array_get(to, i)));
        return out;
    }
    return json_incref((json_t *)to);
}

static int pod_untouched(const json_t *pod, const json_t *before)
{
    if (json_equal(pod, before))
        return 1;
    fprintf(stderr, "error: the request's pod changed under the injected one\n");
    return 0;
}

/* What later steps read of the template pod (wh_inject_apply_overlays): the
 * names of its four lists' items; an item may carry more (the overlay's own
 * item, shared), which is left out.  A new reference. */
static json_t *template_read(const json_t *tmpl)
{
    static const char *const lists[] = {"containers", "initContainers", "volumes", "imagePullSecrets"};
    json_t *out = json_deep_copy(tmpl), *spec = json_object_get(out, "spec");
    size_t l, i;

    for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        json_t *list = json_object_get(spec, lists[l]);
        for (i = 0; i < json_array_size(list); i++) {
            json_t *item = json_array_get(list, i), *name = json_object_get(item, "name");
            if (json_is_object(item))
                json_array_set_new(list, i, name != NULL ? json_pack("{s:O}", "name", name) : json_object());
        }
    }
    return out;
}

int main(int argc, char **argv)
{
    wh_err err = {0};
    json_t *a = NULL, *b = NULL, *ops = NULL;
    int status = 1;

    if (argc == 3 && strcmp(argv[1], "quantity") == 0) {
        char out[96];
        if (wh_inject_quantity_canonical(argv[2], out, sizeof(out), &err) != WH_OK)
            goto fail;
        puts(out);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "smp") == 0) {
        /* Every case also runs through wh_inject_smp_move (on a copy of the
         * target), which must answer exactly the same, error included. */
        json_t *moved;
        wh_err merr = {0};
        wh_code rc, mrc;
        if ((a = load(argv[3])) == NULL || (b = load(argv[4])) == NULL || (moved = json_deep_copy(a)) == NULL)
            goto out;
        rc = wh_inject_smp(a, b, type_named(argv[2]), &err);
        mrc = wh_inject_smp_move(moved, b, type_named(argv[2]), &merr);
        if (rc == WH_OK && mrc == WH_OK) { /* the same text: key order too */
            char *sa = json_dumps(a, JSON_COMPACT), *sm = json_dumps(moved, JSON_COMPACT);
            if (sa == NULL || sm == NULL || strcmp(sa, sm) != 0)
                mrc = wh_err_set(&merr, WH_E_INVALID, "wh_inject_smp_move merged differently: %s", sm ? sm : "?");
            free(sa);
            free(sm);
        }
        json_decref(moved);
        if (rc != mrc || strcmp(wh_err_msg(&err), wh_err_msg(&merr)) != 0) {
            fprintf(stderr, "smp and smp_move disagree: \"%s\" vs \"%s\"\n", wh_err_msg(&err), wh_err_msg(&merr));
            goto out;
        }
        if (rc != WH_OK || wh_inject_go_roundtrip(a, type_named(argv[2]), &err) != WH_OK)
            goto fail;
        status = print(a);
        goto out;
    }
    if (argc == 4 && strcmp(argv[1], "roundtrip") == 0) {
        if ((a = load(argv[3])) == NULL)
            goto out;
        if (wh_inject_go_roundtrip(a, type_named(argv[2]), &err) != WH_OK)
            goto fail;
        status = print(a);
        goto out;
    }
    if (argc == 4 && (strcmp(argv[1], "diff") == 0 || strcmp(argv[1], "diff-shared") == 0)) {
        if ((a = load(argv[2])) == NULL || (b = load(argv[3])) == NULL)
            goto out;
        if (strcmp(argv[1], "diff-shared") == 0) {
            json_t *shared = share_equal(a, b);
            json_decref(b);
            b = shared;
        }
        ops = wh_inject_json_diff(a, b);
        status = print(ops);
        goto out;
    }
    if (argc == 4 && strcmp(argv[1], "json") == 0) {
        wh_buf text = WH_BUF_INIT;
        if ((a = load(argv[3])) == NULL)
            goto out;
        wh_go_json(&text, a, strcmp(argv[2], "go") == 0 ? WH_GO_JSON_HTML : WH_GO_JSON_MINIMAL);
        fwrite(text.data, 1, text.len, stdout);
        wh_buf_free(&text);
        status = 0;
        goto out;
    }
    if (argc == 5 && strcmp(argv[1], "overlays") == 0) {
        json_t *merged = NULL, *tmpl = NULL;
        wh_inject_shaped *shaped = NULL;
        wh_inject_go_leaves *leaves;
        wh_code rc;
        if ((a = load(argv[3])) == NULL || (b = load(argv[4])) == NULL)
            goto out;
        /* as the pipeline runs them: shape every overlay, then merge */
        if (wh_inject_shape_overlays(b, NULL, &shaped, &err) != WH_OK)
            goto fail;
        ops = json_deep_copy(a);
        leaves = leaves_of(a);
        rc = wh_inject_apply_overlays(a, leaves, b, NULL, shaped, atoi(argv[2]), NULL, &merged, &tmpl, &err);
        wh_inject_go_leaves_free(leaves);
        free(shaped);
        if (rc != WH_OK)
            goto fail;
        {
            json_t *both = json_pack("{s:O,s:o}", "merged", merged, "template", template_read(tmpl));
            status = print(both);
            json_decref(both);
        }
        /* then what the pipeline does to the merged pod in place */
        if (wh_inject_reapply_overrides(merged, a, tmpl, 0, NULL, &err) != WH_OK ||
            wh_inject_go_roundtrip(merged, &wh_inject_type_pod, &err) != WH_OK)
            status = 1;
        else if (!pod_untouched(a, ops))
            status = 1;
        json_decref(merged);
        json_decref(tmpl);
        goto out;
    }
    if (argc == 6 && strcmp(argv[1], "reapply") == 0) {
        json_t *tmpl;
        if ((a = load(argv[3])) == NULL || (b = load(argv[4])) == NULL || (ops = load(argv[5])) == NULL)
            goto out;
        tmpl = ops;
        if (wh_inject_reapply_overrides(a, b, tmpl, atoi(argv[2]), NULL, &err) != WH_OK)
            goto fail;
        status = print(a);
        goto out;
    }
    if (argc == 3 && strcmp(argv[1], "post") == 0) {
        const json_t *files, *rend;
        wh_inject_revision *rev = NULL;
        wh_inject_rendered r;
        wh_inject_post_params p;
        const char *cfg, *vals, *mesh;
        json_t *tmpl = NULL, *merged_tmpl = NULL;
        wh_inject_go_leaves *leaves;
        wh_code rc;
        if ((a = load(argv[2])) == NULL)
            goto out;
        files = json_object_get(a, "revision");
        rend = json_object_get(a, "rendered");
        cfg = json_string_value(json_object_get(files, "config"));
        vals = json_string_value(json_object_get(files, "values"));
        mesh = json_string_value(json_object_get(files, "mesh"));
        if (wh_inject_revision_load("default", cfg ? cfg : "", cfg ? strlen(cfg) : 0, vals ? vals : "{}",
                                    vals ? strlen(vals) : 2, mesh, mesh ? strlen(mesh) : 0, &rev, &err) != WH_OK)
            goto fail;
        memset(&r, 0, sizeof(r));
        r.proxy_envs = json_object_get(rend, "proxy_envs");
        r.network = (char *)json_string_value(json_object_get(rend, "network"));
        r.revision = (char *)json_string_value(json_object_get(rend, "revision"));
        r.hold = json_is_true(json_object_get(rend, "hold"));
        memset(&p, 0, sizeof(p));
        p.rev = rev;
        p.r = &r;
        p.original = json_object_get(a, "pod");
        p.tmpl = json_object_get(a, "template");
        p.kube_inject = json_is_true(json_object_get(a, "kube_inject"));
        /* the merge target of the pod, as the pipeline makes it (no overlays) */
        ops = json_deep_copy(p.original);
        tmpl = json_array();
        leaves = leaves_of((json_t *)p.original);
        rc = wh_inject_apply_overlays(p.original, leaves, tmpl, NULL, NULL, 0, wh_inject_revision_release(rev), &b,
                                      &merged_tmpl, &err);
        wh_inject_go_leaves_free(leaves);
        json_decref(tmpl);
        json_decref(merged_tmpl);
        if (rc == WH_OK)
            rc = wh_inject_postprocess(b, &p, &err);
        wh_inject_revision_unref(rev);
        if (rc != WH_OK)
            goto fail;
        status = pod_untouched(p.original, ops) ? print(b) : 1;
        goto out;
    }
    fprintf(stderr, "usage: inject_merge_tool smp|roundtrip|diff|diff-shared|quantity|overlays|reapply|post ...\n");
    return 2;
fail:
    fprintf(stderr, "error: %s\n", wh_err_msg(&err));
out:
    json_decref(a);
    json_decref(b);
    json_decref(ops);
    return status;
}
