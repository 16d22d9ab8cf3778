/*
 * tag.c - `webhookctl tag set|generate|list|remove`: revision tags, the
 * aliases that let namespaces say `istio.io/rev=prod` while an operator moves
 * `prod` from one control-plane revision to the next.  Same flags, objects
 * and messages as `istioctl tag`, with its known pitfalls fixed: names are
 * checked before anything is sent, nothing changes before the user confirms,
 * writes are ordered so that an interrupted run leaves a working cluster, and
 * every change is reported.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tag_int.h"
#include "wh_alloc.h"
#include "wh_ctl.h"
#include "wh_go.h"
#include "wh_kube.h"
#include "wh_yaml.h"

typedef struct tag_cli {
    const wh_ctl_args *a; /* the parsed command line */
    const char *istio_ns, *revision, *webhook_name, *manifests, *output;
    int overwrite, skip_confirmation, auto_inject;
    char **args;
    size_t nargs;
} tag_cli;

static void load_cli(const wh_ctl_args *a, tag_cli *cli)
{
    memset(cli, 0, sizeof(*cli));
    cli->a = a;
    cli->istio_ns = wh_ctl_string(a, "istioNamespace");
    cli->revision = wh_ctl_string(a, "revision");
    cli->webhook_name = wh_ctl_string(a, "webhook-name");
    cli->manifests = wh_ctl_string(a, "manifests");
    cli->output = wh_ctl_string(a, "output");
    cli->overwrite = wh_ctl_bool(a, "overwrite");
    cli->skip_confirmation = wh_ctl_bool(a, "skip-confirmation");
    cli->auto_inject = wh_ctl_bool(a, "auto-inject-namespaces");
    cli->args = a->args;
    cli->nargs = a->nargs;
}

static int run_set(const wh_ctl_args *a);
static int run_generate(const wh_ctl_args *a);
static int run_list(const wh_ctl_args *a);
static int run_remove(const wh_ctl_args *a);

static const wh_ctl_flag set_flags[] = {
    {.name = "auto-inject-namespaces",
     .type = WH_CTL_BOOL,
     .usage = "Inject sidecars into every namespace that has no injection label (default tag only; system namespaces "
              "are excluded)"},
    {.name = "manifests",
     .shorthand = 'd',
     .type = WH_CTL_STRING,
     .usage = "Not supported: webhookctl renders the tag objects itself",
     .opts = WH_CTL_HIDDEN},
    {.name = "overwrite",
     .type = WH_CTL_BOOL,
     .usage = "Replace an existing revision tag of the same name instead of refusing to"},
    {.name = "revision",
     .shorthand = 'r',
     .type = WH_CTL_STRING,
     .usage = "Control plane revision the tag points to (required)"},
    {.name = "skip-confirmation",
     .shorthand = 'y',
     .type = WH_CTL_BOOL,
     .usage = "Do not ask before applying a tag whose webhooks would overlap with existing ones"},
    {.name = "webhook-name",
     .type = WH_CTL_STRING,
     .usage = "Name of the tag's MutatingWebhookConfiguration (default istio-revision-tag-<tag>)"},
};

static const wh_ctl_flag list_flags[] = {
    WH_CTL_OUTPUT_FLAG,
};

static const wh_ctl_flag remove_flags[] = {
    {.name = "skip-confirmation",
     .shorthand = 'y',
     .type = WH_CTL_BOOL,
     .usage = "Do not ask before removing a tag that namespaces still use"},
};

static const wh_ctl_cmd tag_set = {
    .name = "set",
    .suggest_for = "create",
    .use = "<revision-tag> [flags]",
    .summary = "Create or modify revision tags",
    .long_help = "Create a revision tag, or move an existing one to another control plane revision (with\n"
                 "--overwrite).  The tag's webhook copies the connection (service or URL, path, caBundle) of the\n"
                 "revision's own injector webhook.  Setting the tag \"default\" also creates\n"
                 "\"istiod-default-validator\" and, once everything else is in place, switches off the\n"
                 "non-revisioned injector \"istio-sidecar-injector\" (kept, with never-matching selectors, so\n"
                 "that you can switch back).\n"
                 "\n"
                 "Nothing is changed when the tag would collide with a revision, already exists (without\n"
                 "--overwrite), or its webhooks would overlap with others and you do not confirm.\n",
    .examples = "  # Create the tag \"prod\" for revision \"1-24-0\"\n"
                "  webhookctl tag set prod --revision 1-24-0\n"
                "\n"
                "  # Use it: new pods in test-ns are injected by whatever \"prod\" points to\n"
                "  kubectl label namespace test-ns istio.io/rev=prod\n"
                "\n"
                "  # Canary done: move \"prod\" to revision \"1-25-0\"\n"
                "  webhookctl tag set prod --revision 1-25-0 --overwrite\n"
                "\n"
                "  # Make \"1-25-0\" the default revision (istio-injection=enabled namespaces, cluster-wide\n"
                "  # validation)\n"
                "  webhookctl tag set default --revision 1-25-0\n",
    WH_CTL_FLAGS(set_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_set,
};

static const wh_ctl_cmd tag_generate = {
    .name = "generate",
    .use = "<revision-tag> [flags]",
    .summary = "Generate configuration for a revision tag to stdout",
    .long_help = "Print the objects \"tag set\" would apply (MutatingWebhookConfiguration, for \"default\" the\n"
                 "ValidatingWebhookConfiguration, and the Service) as YAML, without changing the cluster.\n"
                 "The cluster is still read: the revision's injector webhook is the template, and existing tags\n"
                 "and overlapping webhooks are reported.\n",
    .examples = "  # Review the tag before applying it with kubectl or a GitOps tool\n"
                "  webhookctl tag generate prod --revision 1-24-0 > prod-tag.yaml\n"
                "  kubectl apply -f prod-tag.yaml\n",
    WH_CTL_FLAGS(set_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_generate,
};

static const wh_ctl_cmd tag_list = {
    .name = "list",
    .aliases = "show",
    .use = "[flags]",
    .summary = "List existing revision tags",
    .long_help = "List revision tags with the revision each points to and the namespaces labeled with the tag\n"
                 "(\"istio.io/rev=<tag>\").  Revisions that no tag points to are listed with an empty TAG.\n",
    .examples = "  # Tags and the namespaces using them\n"
                "  webhookctl tag list\n"
                "\n"
                "  # The same as JSON, for scripts\n"
                "  webhookctl tag list -o json\n",
    WH_CTL_FLAGS(list_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_list,
};

static const wh_ctl_cmd tag_remove = {
    .name = "remove",
    .aliases = "delete",
    .use = "<revision-tag> [flags]",
    .summary = "Remove Istio control plane revision tag",
    .long_help = "Remove a revision tag: its MutatingWebhookConfiguration(s), the ValidatingWebhookConfiguration\n"
                 "it owns (\"istiod-default-validator\" for \"default\") and its Service.  Namespaces labeled\n"
                 "with the tag (for \"default\", also those labeled istio-injection=enabled) are not relabeled;\n"
                 "you are asked first if any exist, because their new pods will no longer be injected.  Running\n"
                 "pods are not touched.\n",
    .examples = "  # Remove the tag \"prod\"\n"
                "  webhookctl tag remove prod\n",
    WH_CTL_FLAGS(remove_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_remove,
};

static const wh_ctl_cmd *const tag_subcommands[] = {&tag_set, &tag_generate, &tag_list, &tag_remove, NULL};

const wh_ctl_cmd wh_ctl_cmd_tag = {
    .name = "tag",
    .summary = "Create, list and remove revision tags (aliases of control plane revisions)",
    .long_help = "Revision tags are stable names for Istio control plane revisions.  Label a namespace\n"
                 "\"istio.io/rev=prod\" once; point the tag \"prod\" at revision \"1-24\" today and at \"1-25\"\n"
                 "after the canary upgrade, and every pod created in that namespace from then on is injected\n"
                 "by the new revision, without relabeling a single namespace.\n"
                 "\n"
                 "A tag is a MutatingWebhookConfiguration that selects namespaces and pods by the tag name and\n"
                 "sends them to the revision's injector (istiod's or webhookd's), plus a Service\n"
                 "\"istiod-revision-tag-<tag>\".  The tag \"default\" also serves \"istio-injection=enabled\"\n"
                 "namespaces and owns the cluster-wide validator \"istiod-default-validator\".\n",
    .inherited = &wh_ctl_cluster_flags,
    .subcommands = tag_subcommands,
};

/* ---- shared plumbing ------------------------------------------------------ */

static int usage_error(const tag_cli *cli, const char *msg)
{
    return wh_ctl_usage_error(cli->a, "%s", msg);
}

static int make_client(const tag_cli *cli, wh_kube_client **c)
{
    wh_err err = {0};

    if (wh_ctl_kube_client(cli->a, c, &err) != WH_OK)
        return wh_ctl_fail("%s", wh_err_msg(&err));
    return 0;
}

static const char *obj_name(const json_t *o)
{
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    return n != NULL ? n : "";
}

static const char *obj_ns(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
}

/* ---- set / generate --------------------------------------------------------- */

static int check_names(const tag_cli *cli, const char *tag)
{
    wh_err err = {0};
    wh_buf svc = WH_BUF_INIT;
    int bad = 0;

    wh_buf_printf(&svc, "%s%s", TAG_SERVICE_PREFIX, tag);
    if (wh_kube_check_dns1123_label(tag, &err) != WH_OK)
        bad = wh_ctl_fail("invalid revision tag name %s", wh_err_msg(&err));
    else if (svc.len > 63)
        bad = wh_ctl_fail(
            "invalid revision tag name \"%s\": the tag Service name \"%s\" would be longer than 63 characters "
            "(keep tags to %zu characters)",
            tag, svc.data, 63 - strlen(TAG_SERVICE_PREFIX));
    else if (cli->revision != NULL &&
             (cli->revision[0] == '\0' || wh_kube_check_label_value(cli->revision, &err) != WH_OK))
        bad = wh_ctl_fail("invalid --revision %s",
                          cli->revision[0] == '\0' ? "\"\": must not be empty" : wh_err_msg(&err));
    else if (cli->webhook_name != NULL && wh_kube_check_dns1123_subdomain(cli->webhook_name, &err) != WH_OK)
        bad = wh_ctl_fail("invalid --webhook-name %s", wh_err_msg(&err));
    else if (wh_kube_check_dns1123_label(cli->istio_ns, &err) != WH_OK)
        bad = wh_ctl_fail("invalid --istioNamespace %s", wh_err_msg(&err));
    wh_buf_free(&svc);
    return bad ? 2 : 0;
}

static int list_or_fail(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *sel, json_t **items,
                        const char *what)
{
    wh_err err = {0};
    if (wh_kube_list(c, r, ns, sel, items, &err) != WH_OK)
        return wh_ctl_fail("%s: %s", what, wh_err_msg(&err));
    return 0;
}

static void print_findings(const json_t *findings)
{
    size_t i, j;
    json_t *f, *g;

    json_array_foreach(findings, i, f)
    {
        int dup = 0;
        json_array_foreach(findings, j, g)
        {
            if (j < i && json_equal(f, g))
                dup = 1;
        }
        if (!dup)
            fprintf(stderr, "%s\n", json_string_value(f));
    }
}

/* Apply each object in order; report each; on failure say what was and was not done. */
static int apply_all(wh_kube_client *c, json_t *const *objs, const wh_kube_resource *const *res, size_t n)
{
    wh_err err = {0};

    for (size_t i = 0; i < n; i++) {
        if (wh_kube_apply(c, res[i], obj_ns(objs[i]), objs[i], TAG_FIELD_MANAGER, 1, NULL, &err) != WH_OK) {
            fprintf(stderr,
                    "Error: failed to apply tag webhook %s to cluster: failed to apply tag manifests to cluster: %s\n",
                    res[i]->kind, wh_err_msg(&err));
            if (i > 0)
                fprintf(stderr, "The objects listed above were applied; the rest were not. The cluster is "
                                "consistent: run the command again (with --overwrite) to finish.\n");
            else
                fprintf(stderr, "Nothing was changed.\n");
            return 1;
        }
        printf("%s %s%s%s applied\n", res[i]->kind, obj_ns(objs[i]) != NULL ? obj_ns(objs[i]) : "",
               obj_ns(objs[i]) != NULL ? "/" : "", obj_name(objs[i]));
    }
    return 0;
}

static wh_code deactivate_cb(json_t *obj, void *ctx, int *unchanged, wh_err *err)
{
    *(int *)ctx = *unchanged = tag_is_deactivated(obj);
    return *unchanged ? WH_OK : tag_deactivate(obj, err);
}

static wh_code reactivate_cb(json_t *obj, void *ctx, int *unchanged, wh_err *err)
{
    (void)ctx;
    if (!tag_is_deactivated(obj)) {
        *unchanged = 1;
        return WH_OK;
    }
    return tag_reactivate(obj, err);
}

static int cmd_set(tag_cli *cli, int generate)
{
    const char *tag, *rev = cli->revision, *ns = cli->istio_ns;
    int is_default, rc = 1;
    wh_kube_client *c = NULL;
    json_t *svcs = NULL, *mwcs = NULL, *tag_mwcs = NULL, *tag_svcs = NULL, *legacy = NULL, *all = NULL;
    json_t *mwc = NULL, *vwc = NULL, *svc = NULL, *existing_vwc = NULL, *findings = NULL, *planned = NULL;
    wh_buf sel = WH_BUF_INIT, sel2 = WH_BUF_INIT, mwc_name = WH_BUF_INIT;
    tag_render_opts ro;
    wh_err err = {0};
    size_t i;
    json_t *it;

    if (cli->nargs == 0)
        return usage_error(cli, "must provide a tag for modification");
    if (cli->nargs > 1)
        return usage_error(cli, "must provide a single tag for creation");
    if (rev == NULL)
        return usage_error(cli, "required flag(s) \"revision\" not set");
    if (cli->manifests != NULL)
        return usage_error(cli, "--manifests is not supported: webhookctl renders the tag objects itself");
    tag = cli->args[0];
    if ((rc = check_names(cli, tag)) != 0)
        return rc;
    rc = 1;
    findings = json_array();
    is_default = strcmp(tag, TAG_DEFAULT) == 0;
    ro = (tag_render_opts){tag, rev, ns, cli->webhook_name, cli->auto_inject && is_default};
    if (tag_mwc_name(&ro, &mwc_name) != WH_OK || make_client(cli, &c) != 0)
        goto out;

    /* 1. a tag must not be named like a revision (two control planes would claim it) */
    if (!generate && !is_default) {
        wh_buf_printf(&sel, "%s=%s,!%s,app=istiod", REV_LABEL, tag, TAG_LABEL);
        wh_buf_printf(&sel2, "%s=%s,!%s", REV_LABEL, tag, TAG_LABEL);
        if (list_or_fail(c, &wh_kube_services, ns, sel.data, &svcs,
                         "cannot check for a revision with the tag's name") ||
            list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel2.data, &mwcs,
                         "cannot check for a revision with the tag's name"))
            goto out;
        if (json_array_size(svcs) > 0 || json_array_size(mwcs) > 0) {
            if (!cli->overwrite) {
                wh_ctl_fail("cannot create revision tag \"%s\": found existing control plane revision with same name",
                            tag);
                goto out;
            }
            fprintf(stderr,
                    "Warning: revision tag \"%s\" has the same name as an existing control plane revision; "
                    "both will claim namespaces labeled istio.io/rev=%s\n",
                    tag, tag);
        }
        json_decref(svcs);
        json_decref(mwcs);
        svcs = mwcs = NULL;
        wh_buf_reset(&sel);
        wh_buf_reset(&sel2);
    }

    /* 2. the revision: exactly one canonical injector webhook (the template) */
    wh_buf_printf(&sel, "%s=%s,!%s,app=istiod", REV_LABEL, rev, TAG_LABEL);
    wh_buf_printf(&sel2, "%s=%s,!%s", REV_LABEL, rev, TAG_LABEL);
    if (list_or_fail(c, &wh_kube_services, ns, sel.data, &svcs, "cannot modify tag") ||
        list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel2.data, &mwcs, "cannot modify tag"))
        goto out;
    if (json_array_size(svcs) > 1) {
        wh_ctl_fail("cannot modify tag: found multiple canonical services with revision \"%s\" in namespace \"%s\"",
                    rev, ns);
        goto out;
    }
    if (json_array_size(mwcs) == 0 && json_array_size(svcs) == 0) {
        wh_ctl_fail("cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision \"%s\"", rev);
        goto out;
    }
    if (json_array_size(mwcs) > 1) {
        wh_ctl_fail("cannot modify tag: found multiple canonical webhooks or services with revision \"%s\"", rev);
        goto out;
    }
    if (json_array_size(mwcs) == 0) {
        wh_ctl_fail(
            "cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision \"%s\": Service "
            "%s/%s exists, but no MutatingWebhookConfiguration, which the tag needs as its template",
            rev, ns, obj_name(json_array_get(svcs, 0)));
        goto out;
    }

    /* 3. an existing tag is only replaced on request */
    if (!cli->overwrite) {
        wh_buf_reset(&sel);
        wh_buf_printf(&sel, "%s=%s", TAG_LABEL, tag);
        if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &tag_mwcs, "cannot check for existing tags") ||
            list_or_fail(c, &wh_kube_services, ns, sel.data, &tag_svcs, "cannot check for existing tags"))
            goto out;
        if (json_array_size(tag_mwcs) > 0 || json_array_size(tag_svcs) > 0) {
            wh_ctl_fail("revision tag \"%s\" already exists, and --overwrite is false", tag);
            goto out;
        }
    }

    /* 4-7. render */
    if (tag_render_mwc(&ro, json_array_get(mwcs, 0), &mwc, &err) != WH_OK) {
        wh_ctl_fail("%s", wh_err_msg(&err));
        goto out;
    }
    if (is_default) {
        wh_err gerr = {0};
        wh_code grc = wh_kube_get(c, &wh_kube_validating_webhooks, NULL, TAG_DEFAULT_VALIDATOR, &existing_vwc, &gerr);
        if (grc != WH_OK && grc != WH_E_NOTFOUND) {
            wh_ctl_fail("cannot read %s: %s", TAG_DEFAULT_VALIDATOR, wh_err_msg(&gerr));
            goto out;
        }
        if (tag_render_validator(&ro, json_array_get(mwcs, 0), existing_vwc, &vwc, &err) != WH_OK) {
            wh_ctl_fail("failed to create the default validator: %s", wh_err_msg(&err));
            goto out;
        }
        if (!generate) {
            wh_buf_reset(&sel);
            wh_buf_printf(&sel, "%s=%s,!%s", REV_LABEL, TAG_DEFAULT, TAG_LABEL);
            if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &legacy,
                             "failed deactivating existing default revision"))
                goto out;
            if (json_array_size(legacy) > 1) {
                wh_ctl_fail(
                    "failed deactivating existing default revision: expected a single webhook for default revision");
                goto out;
            }
        }
    }
    if (tag_render_service(&ro, &svc, &err) != WH_OK) {
        wh_ctl_fail("%s", wh_err_msg(&err));
        goto out;
    }

    /* 9. overlap analysis on the cluster as it will be after this command */
    if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, NULL, &all, "cannot analyze webhook overlaps"))
        goto out;
    planned = json_array();
    json_array_foreach(all, i, it)
    {
        const char *n = obj_name(it);
        json_t *copy;
        if (strcmp(n, mwc_name.data) == 0)
            continue;
        copy = json_deep_copy(it);
        if (json_array_size(legacy) == 1 && strcmp(n, obj_name(json_array_get(legacy, 0))) == 0)
            tag_deactivate(copy, NULL);
        json_array_append_new(planned, copy);
    }
    json_array_append(planned, mwc);
    if (tag_analyze_overlaps(planned, mwc_name.data, findings, &err) != WH_OK) {
        wh_ctl_fail("cannot analyze webhook overlaps: %s", wh_err_msg(&err));
        goto out;
    }
    /* the service the tag sends pods to must exist */
    json_array_foreach(json_object_get(mwc, "webhooks"), i, it)
    {
        const json_t *ref = json_object_get(json_object_get(it, "clientConfig"), "service");
        const char *sn = json_string_value(json_object_get(ref, "name"));
        const char *sns = json_string_value(json_object_get(ref, "namespace"));
        wh_err gerr = {0};
        wh_code grc;
        if (sn == NULL || sns == NULL || i > 0)
            continue;
        grc = wh_kube_get(c, &wh_kube_services, sns, sn, NULL, &gerr);
        if (grc == WH_E_NOTFOUND) {
            wh_buf m = WH_BUF_INIT;
            wh_buf_printf(&m,
                          "Error [IST0139] (MutatingWebhookConfiguration %s) Injector refers to a control plane "
                          "service that does not exist: %s/%s.",
                          mwc_name.data, sns, sn);
            json_array_append_new(findings, json_string(m.data));
            wh_buf_free(&m);
        } else if (grc != WH_OK) {
            wh_ctl_fail("cannot analyze webhook overlaps: %s", wh_err_msg(&gerr));
            goto out;
        }
    }
    if (json_array_size(findings) > 0 && !cli->skip_confirmation) {
        fprintf(stderr, "creating tag would conflict, pass --skip-confirmation to proceed:\n");
        print_findings(findings);
        if (!generate && !wh_ctl_ask("Apply anyways? [y/N] ")) {
            rc = 0;
            goto out;
        }
    }

    if (generate) {
        json_t *docs[3] = {mwc, vwc, svc};
        wh_buf yaml = WH_BUF_INIT;
        int first = 1;
        for (i = 0; i < 3; i++) {
            if (docs[i] == NULL)
                continue;
            if (!first)
                wh_buf_puts(&yaml, "---\n");
            if (wh_yaml_dump(docs[i], &yaml, &err) != WH_OK) {
                wh_buf_free(&yaml);
                wh_ctl_fail("cannot print YAML: %s", wh_err_msg(&err));
                goto out;
            }
            first = 0;
        }
        fwrite(yaml.data, 1, yaml.len, stdout);
        wh_buf_free(&yaml);
        rc = 0;
        goto out;
    }

    /* 10. apply: Service, then the webhook (pods start using the tag), then the
     * validator, and only then switch off the legacy injector, so that a stop
     * at any point leaves injection working. */
    {
        json_t *objs[3];
        const wh_kube_resource *res[3];
        size_t n = 0;
        objs[n] = svc;
        res[n++] = &wh_kube_services;
        objs[n] = mwc;
        res[n++] = &wh_kube_mutating_webhooks;
        if (vwc != NULL) {
            objs[n] = vwc;
            res[n++] = &wh_kube_validating_webhooks;
        }
        if (apply_all(c, objs, res, n) != 0)
            goto out;
    }
    if (json_array_size(legacy) == 1) {
        const char *ln = obj_name(json_array_get(legacy, 0));
        int already = 0;
        if (wh_kube_update_retry(c, &wh_kube_mutating_webhooks, NULL, ln, deactivate_cb, &already, TAG_FIELD_MANAGER,
                                 NULL, &err) != WH_OK) {
            wh_ctl_fail(
                "failed deactivating existing default revision: %s\nThe tag was applied; both injectors are active "
                "until this succeeds: run the command again with --overwrite.",
                wh_err_msg(&err));
            goto out;
        }
        if (already)
            printf("MutatingWebhookConfiguration %s was already deactivated\n", ln);
        else
            printf("MutatingWebhookConfiguration %s deactivated (selectors set to %s=%s; kept so you can switch "
                   "back)\n",
                   ln, TAG_NEVER_MATCH_KEY, TAG_NEVER_MATCH_VALUE);
    }
    printf("Revision tag \"%s\" created, referencing control plane revision \"%s\". To enable injection using this\n"
           "revision tag, use 'kubectl label namespace <NAMESPACE> istio.io/rev=%s'\n",
           tag, rev, tag);
    rc = 0;
out:
    json_decref(svcs);
    json_decref(mwcs);
    json_decref(tag_mwcs);
    json_decref(tag_svcs);
    json_decref(legacy);
    json_decref(all);
    json_decref(planned);
    json_decref(mwc);
    json_decref(vwc);
    json_decref(svc);
    json_decref(existing_vwc);
    json_decref(findings);
    wh_buf_free(&sel);
    wh_buf_free(&sel2);
    wh_buf_free(&mwc_name);
    wh_kube_client_free(c);
    return rc;
}

/* ---- list ------------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int r =
        strcmp(json_string_value(json_object_get(x, "revision")), json_string_value(json_object_get(y, "revision")));
    return r != 0 ? r
                  : strcmp(json_string_value(json_object_get(x, "tag")), json_string_value(json_object_get(y, "tag")));
}

static void add_pair(json_t *rows, const char *tag, const char *rev)
{
    size_t i;
    json_t *r;

    json_array_foreach(rows, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "tag")), tag) == 0 &&
            strcmp(json_string_value(json_object_get(r, "revision")), rev) == 0)
            return;
    }
    json_array_append_new(rows, json_pack("{s:s, s:s, s:[]}", "tag", tag, "revision", rev, "namespaces"));
}

static void print_json_string(const char *s)
{
    wh_buf q = WH_BUF_INIT;

    wh_go_json_string(&q, s != NULL ? s : "", s != NULL ? strlen(s) : 0, WH_GO_JSON_HTML);
    fputs(q.data, stdout);
    wh_buf_free(&q);
}

static int cmd_list(tag_cli *cli)
{
    const char *fmt = cli->output != NULL ? cli->output : "table";
    wh_kube_client *c = NULL;
    json_t *mwcs = NULL, *svcs = NULL, *nss = NULL, *rows = NULL, *kept = NULL, **sorted = NULL;
    size_t i, j, n;
    json_t *it;
    int rc = 1;

    if (cli->nargs > 0)
        return usage_error(cli, "tag list command does not accept arguments");
    if (strcmp(fmt, "table") != 0 && strcmp(fmt, "json") != 0 && strcmp(fmt, "yaml") != 0)
        return wh_ctl_fail("unknown format: %s", fmt);
    rows = json_array();
    kept = json_array();
    if (make_client(cli, &c) != 0)
        goto out;
    if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, REV_LABEL, &mwcs, "failed to retrieve revision tags") ||
        list_or_fail(c, &wh_kube_services, cli->istio_ns, REV_LABEL, &svcs,
                     "failed to retrieve revision tag services") ||
        list_or_fail(c, &wh_kube_namespaces, NULL, REV_LABEL, &nss, "error retrieving namespaces for tags"))
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        json_array_foreach(pass == 0 ? mwcs : svcs, i, it)
        {
            const json_t *labels = json_object_get(json_object_get(it, "metadata"), "labels");
            const char *rev = json_string_value(json_object_get(labels, REV_LABEL));
            const char *tag = json_string_value(json_object_get(labels, TAG_LABEL));
            if (rev != NULL)
                add_pair(rows, tag != NULL ? tag : "", rev);
        }
    }
    /* revision-only rows disappear when a tag points to the revision */
    json_array_foreach(rows, i, it)
    {
        const char *rev = json_string_value(json_object_get(it, "revision"));
        int shadowed = 0;
        json_t *other;
        if (json_string_value(json_object_get(it, "tag"))[0] == '\0')
            json_array_foreach(rows, j, other)
            {
                if (json_string_value(json_object_get(other, "tag"))[0] != '\0' &&
                    strcmp(json_string_value(json_object_get(other, "revision")), rev) == 0)
                    shadowed = 1;
            }
        if (!shadowed)
            json_array_append(kept, it);
    }
    n = json_array_size(kept);
    if (n == 0) {
        printf("No Istio revision tags found.\n");
        rc = 0;
        goto out;
    }
    json_array_foreach(kept, i, it)
    {
        const char *tag = json_string_value(json_object_get(it, "tag"));
        json_t *ns;
        json_array_foreach(nss, j, ns)
        {
            const char *v = json_string_value(
                json_object_get(json_object_get(json_object_get(ns, "metadata"), "labels"), REV_LABEL));
            if (v != NULL && strcmp(v, tag) == 0)
                json_array_append_new(json_object_get(it, "namespaces"), json_string(obj_name(ns)));
        }
    }
    sorted = wh_calloc(n, sizeof(*sorted));
    for (i = 0; i < n; i++)
        sorted[i] = json_array_get(kept, i);
    qsort(sorted, n, sizeof(*sorted), cmp_rows);

    if (strcmp(fmt, "table") == 0) {
        size_t wt = 3, wr = 8;
        for (i = 0; i < n; i++) {
            size_t a = strlen(json_string_value(json_object_get(sorted[i], "tag")));
            size_t b = strlen(json_string_value(json_object_get(sorted[i], "revision")));
            wt = a > wt ? a : wt;
            wr = b > wr ? b : wr;
        }
        printf("%-*s %-*s %s\n", (int)wt, "TAG", (int)wr, "REVISION", "NAMESPACES");
        for (i = 0; i < n; i++) {
            json_t *v;
            printf("%-*s %-*s ", (int)wt, json_string_value(json_object_get(sorted[i], "tag")), (int)wr,
                   json_string_value(json_object_get(sorted[i], "revision")));
            json_array_foreach(json_object_get(sorted[i], "namespaces"), j, v)
                printf("%s%s", j > 0 ? "," : "", json_string_value(v));
            putchar('\n');
        }
    } else if (strcmp(fmt, "json") == 0) {
        /* Go's json.MarshalIndent(rows, "", "\t") */
        printf("[\n");
        for (i = 0; i < n; i++) {
            json_t *v, *nl = json_object_get(sorted[i], "namespaces");
            printf("\t{\n\t\t\"tag\": ");
            print_json_string(json_string_value(json_object_get(sorted[i], "tag")));
            printf(",\n\t\t\"revision\": ");
            print_json_string(json_string_value(json_object_get(sorted[i], "revision")));
            printf(",\n\t\t\"namespaces\": ");
            if (json_array_size(nl) == 0)
                printf("[]");
            else {
                printf("[\n");
                json_array_foreach(nl, j, v)
                {
                    printf("\t\t\t");
                    print_json_string(json_string_value(v));
                    printf("%s\n", j + 1 < json_array_size(nl) ? "," : "");
                }
                printf("\t\t]");
            }
            printf("\n\t}%s\n", i + 1 < n ? "," : "");
        }
        printf("]\n");
    } else {
        json_t *arr = json_array();
        wh_buf y = WH_BUF_INIT;
        wh_err err = {0};
        for (i = 0; i < n; i++)
            json_array_append(arr, sorted[i]);
        if (wh_yaml_dump(arr, &y, &err) != WH_OK) {
            json_decref(arr);
            wh_buf_free(&y);
            wh_ctl_fail("cannot print YAML: %s", wh_err_msg(&err));
            goto out;
        }
        fwrite(y.data, 1, y.len, stdout);
        json_decref(arr);
        wh_buf_free(&y);
    }
    rc = 0;
out:
    free(sorted);
    json_decref(mwcs);
    json_decref(svcs);
    json_decref(nss);
    json_decref(rows);
    json_decref(kept);
    wh_kube_client_free(c);
    return rc;
}

/* ---- remove ------------------------------------------------------------------ */

/* Delete every object of `items`; 404 counts as done (someone was faster); *removed counts them. */
static int delete_all(wh_kube_client *c, const wh_kube_resource *r, const json_t *items, const char *what,
                      size_t *removed)
{
    size_t i;
    json_t *it;
    wh_buf errs = WH_BUF_INIT;
    int rc = 0;

    json_array_foreach(items, i, it)
    {
        wh_err err = {0};
        wh_code dc = wh_kube_delete(c, r, obj_ns(it), obj_name(it), &err);
        if (dc != WH_OK && dc != WH_E_NOTFOUND) {
            wh_buf_printf(&errs, "%s%s", errs.len > 0 ? "; " : "", wh_err_msg(&err));
            continue;
        }
        (*removed)++;
        printf("%s %s%s%s removed\n", r->kind, obj_ns(it) != NULL ? obj_ns(it) : "", obj_ns(it) != NULL ? "/" : "",
               obj_name(it));
    }
    if (errs.len > 0)
        rc = wh_ctl_fail("failed to delete Istio revision tag %s: %s", what, errs.data);
    wh_buf_free(&errs);
    return rc;
}

int tag_delete_objects(wh_kube_client *c, const char *istio_ns, const char *tag, const json_t *mwcs, const json_t *svcs)
{
    json_t *own_mwcs = NULL, *own_svcs = NULL, *vwcs = NULL;
    wh_buf sel = WH_BUF_INIT;
    size_t removed = 0;
    int rc = 1;

    wh_buf_printf(&sel, "%s=%s", TAG_LABEL, tag);
    if ((mwcs == NULL && list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &own_mwcs,
                                      "failed to delete Istio revision tag MutatingConfigurationWebhook")) ||
        (svcs == NULL && list_or_fail(c, &wh_kube_services, istio_ns, sel.data, &own_svcs,
                                      "failed to delete Istio revision tag Services")))
        goto out;
    /* webhooks first (the tag stops injecting), then the validator, then the Service */
    if (delete_all(c, &wh_kube_mutating_webhooks, mwcs != NULL ? mwcs : own_mwcs, "MutatingConfigurationWebhook",
                   &removed) != 0 ||
        list_or_fail(c, &wh_kube_validating_webhooks, NULL, sel.data, &vwcs,
                     "failed to delete Istio revision tag ValidatingWebhookConfiguration") ||
        delete_all(c, &wh_kube_validating_webhooks, vwcs, "ValidatingWebhookConfiguration", &removed) != 0 ||
        delete_all(c, &wh_kube_services, svcs != NULL ? svcs : own_svcs, "Services", &removed) != 0) {
        /* the Service goes last, so what remains still names the tag and a re-run finds it */
        if (removed > 0)
            fprintf(stderr,
                    "The objects listed above were removed; the rest of tag \"%s\" remains: run the same "
                    "command again to remove it.\n",
                    tag);
        goto out;
    }
    rc = 0;
out:
    json_decref(own_mwcs);
    json_decref(own_svcs);
    json_decref(vwcs);
    wh_buf_free(&sel);
    return rc;
}

/* Without a default tag, a deactivated non-revisioned injector leaves
 * istio-injection=enabled namespaces uninjected: offer to switch it back on
 * (only when the Service it calls still exists: with failurePolicy Fail a
 * dangling injector would block pod creation). */
static int offer_reactivation(wh_kube_client *c, const tag_cli *cli)
{
    json_t *legacy = NULL, *it;
    wh_buf sel = WH_BUF_INIT, prompt = WH_BUF_INIT;
    wh_err err = {0};
    size_t i;
    int rc = 0;

    wh_buf_printf(&sel, "%s=%s,!%s", REV_LABEL, TAG_DEFAULT, TAG_LABEL);
    if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &legacy,
                     "cannot look for the deactivated injector")) {
        rc = 1;
        goto out;
    }
    json_array_foreach(legacy, i, it)
    {
        const char *name = obj_name(it);
        const json_t *svc = json_object_get(
            json_object_get(json_array_get(json_object_get(it, "webhooks"), 0), "clientConfig"), "service");
        const char *sn = json_string_value(json_object_get(svc, "name"));
        const char *sns = json_string_value(json_object_get(svc, "namespace"));
        if (!tag_is_deactivated(it))
            continue;
        if (sn != NULL && sns != NULL && wh_kube_get(c, &wh_kube_services, sns, sn, NULL, &err) == WH_E_NOTFOUND) {
            printf("MutatingWebhookConfiguration %s stays deactivated: the Service %s/%s it calls does not exist\n",
                   name, sns, sn);
            continue;
        }
        if (cli->skip_confirmation) {
            printf("MutatingWebhookConfiguration %s stays deactivated: istio-injection=enabled namespaces are not "
                   "injected until a default tag exists again\n",
                   name);
            continue;
        }
        wh_buf_reset(&prompt);
        wh_buf_printf(&prompt,
                      "MutatingWebhookConfiguration %s is deactivated, so without the default tag "
                      "istio-injection=enabled namespaces are not injected.\nRe-activate it? [y/N] ",
                      name);
        if (!wh_ctl_ask(prompt.data)) {
            printf("MutatingWebhookConfiguration %s stays deactivated\n", name);
            continue;
        }
        if (wh_kube_update_retry(c, &wh_kube_mutating_webhooks, NULL, name, reactivate_cb, NULL, TAG_FIELD_MANAGER,
                                 NULL, &err) != WH_OK) {
            rc = wh_ctl_fail("failed to re-activate %s: %s", name, wh_err_msg(&err));
            continue;
        }
        printf("MutatingWebhookConfiguration %s re-activated\n", name);
    }
out:
    json_decref(legacy);
    wh_buf_free(&sel);
    wh_buf_free(&prompt);
    return rc;
}

static int cmd_remove(tag_cli *cli)
{
    wh_kube_client *c = NULL;
    json_t *svcs = NULL, *mwcs = NULL, *nss = NULL, *legacy_nss = NULL;
    wh_buf sel = WH_BUF_INIT, prompt = WH_BUF_INIT;
    wh_err err = {0};
    const char *tag;
    int rc = 1;
    size_t i;
    json_t *it;

    if (cli->nargs == 0)
        return usage_error(cli, "must provide a tag for removal");
    if (cli->nargs > 1)
        return usage_error(cli, "must provide a single tag for removal");
    tag = cli->args[0];
    if (tag[0] == '\0' || wh_kube_check_label_value(tag, &err) != WH_OK) {
        wh_ctl_fail("invalid revision tag name %s", tag[0] == '\0' ? "\"\": must not be empty" : wh_err_msg(&err));
        return 2;
    }
    if (make_client(cli, &c) != 0)
        goto out;
    wh_buf_printf(&sel, "%s=%s", TAG_LABEL, tag);
    if (list_or_fail(c, &wh_kube_services, cli->istio_ns, sel.data, &svcs, "cannot look up the tag") ||
        list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &mwcs, "cannot look up the tag"))
        goto out;
    if (json_array_size(svcs) == 0 && json_array_size(mwcs) == 0) {
        wh_ctl_fail("cannot remove tag \"%s\": cannot find MutatingWebhookConfiguration or Service for tag", tag);
        goto out;
    }
    wh_buf_reset(&sel);
    wh_buf_printf(&sel, "%s=%s", REV_LABEL, tag);
    if (list_or_fail(c, &wh_kube_namespaces, NULL, sel.data, &nss, "failed to retrieve namespaces dependent on tag"))
        goto out;
    /* the default tag also injects istio-injection=enabled namespaces (its namespace. entry); istioctl
     * does not count them, and removing the tag silently stops their injection */
    if (strcmp(tag, TAG_DEFAULT) == 0 &&
        list_or_fail(c, &wh_kube_namespaces, NULL, "istio-injection=enabled," REV_LABEL "!=" TAG_DEFAULT, &legacy_nss,
                     "failed to retrieve namespaces dependent on tag"))
        goto out;
    if (json_array_size(nss) + json_array_size(legacy_nss) > 0 && !cli->skip_confirmation) {
        wh_buf_printf(&prompt, "Caution, found %zu namespace(s) still injected by tag \"%s\":",
                      json_array_size(nss) + json_array_size(legacy_nss), tag);
        json_array_foreach(nss, i, it) wh_buf_printf(&prompt, " %s", obj_name(it));
        json_array_foreach(legacy_nss, i, it) wh_buf_printf(&prompt, " %s (istio-injection=enabled)", obj_name(it));
        wh_buf_puts(&prompt, "\nProceed with operation? [y/N] ");
        if (!wh_ctl_ask(prompt.data)) {
            printf("Aborting operation.\n");
            rc = 0;
            goto out;
        }
    }
    if (tag_delete_objects(c, cli->istio_ns, tag, mwcs, svcs) != 0)
        goto out;
    printf("Revision tag %s removed\n", tag);
    rc = strcmp(tag, TAG_DEFAULT) == 0 ? offer_reactivation(c, cli) : 0;
out:
    json_decref(svcs);
    json_decref(mwcs);
    json_decref(nss);
    json_decref(legacy_nss);
    wh_buf_free(&sel);
    wh_buf_free(&prompt);
    wh_kube_client_free(c);
    return rc;
}

/* ---- entry -------------------------------------------------------------------- */

static int run_tag(const wh_ctl_args *a, int (*fn)(tag_cli *cli, int generate), int generate)
{
    tag_cli cli;

    /* wh_kube runs libcurl with CURLOPT_NOSIGNAL: a peer closing mid-write must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    load_cli(a, &cli);
    return fn(&cli, generate);
}

static int list_entry(tag_cli *cli, int generate)
{
    (void)generate;
    return cmd_list(cli);
}

static int remove_entry(tag_cli *cli, int generate)
{
    (void)generate;
    return cmd_remove(cli);
}

static int run_set(const wh_ctl_args *a)
{
    return run_tag(a, cmd_set, 0);
}

static int run_generate(const wh_ctl_args *a)
{
    return run_tag(a, cmd_set, 1);
}

static int run_list(const wh_ctl_args *a)
{
    return run_tag(a, list_entry, 0);
}

static int run_remove(const wh_ctl_args *a)
{
    return run_tag(a, remove_entry, 0);
}
