/*
 * tag.c - `webhookctl tag set|generate|list|remove`: revision tags, the
 * aliases that let namespaces say `istio.io/rev=prod` while an operator moves
 * `prod` from one control-plane revision to the next.  Same flags, objects
 * and messages as `istioctl tag`, with its known pitfalls fixed: names are
 * checked before anything is sent, nothing changes before the user confirms,
 * writes are ordered so that an interrupted run leaves a working cluster, and
 * every change is reported.
 */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tag.h"
#include "wh_ctl_tag.h"
#include "wh_kube.h"
#include "wh_yaml.h"

#define MAX_POSITIONAL 16
#define MAX_GROUPS 8

typedef enum flag_type { F_BOOL, F_STRING, F_GROUPS } flag_type;

typedef struct tag_cli {
    const char *kubeconfig, *context, *istio_ns, *request_timeout, *as_user;
    const char *as_groups[MAX_GROUPS + 1];
    int n_groups;
    int help;
    const char *revision, *webhook_name, *manifests, *output, *unused_namespace;
    int overwrite, skip_confirmation, auto_inject;
    char *args[MAX_POSITIONAL];
    int nargs;
} tag_cli;

typedef struct flag {
    const char *name;
    char shorthand;
    flag_type type;
    size_t offset;
    const char *usage;
    int hidden; /* accepted, not listed in help */
} flag;

#define OFF(field) offsetof(tag_cli, field)

static const flag global_flags[] = {
    {"context", 0, F_STRING, OFF(context), "Name of the kubeconfig context to use", 0},
    {"istioNamespace", 'i', F_STRING, OFF(istio_ns),
     "Namespace of the Istio control plane (default \"istio-system\"; env ISTIOCTL_ISTIONAMESPACE)", 0},
    {"kubeconfig", 'c', F_STRING, OFF(kubeconfig),
     "Kubernetes configuration file (default $KUBECONFIG or ~/.kube/config)", 0},
    {"request-timeout", 0, F_STRING, OFF(request_timeout),
     "How long to wait for each API request, e.g. 10s, 1m (default \"30s\"; always bounded)", 0},
    {"as", 0, F_STRING, OFF(as_user), "Username to impersonate for the operation", 0},
    {"as-group", 0, F_GROUPS, OFF(as_groups), "Group to impersonate for the operation (repeatable)", 0},
    {"help", 'h', F_BOOL, OFF(help), "help for this command", 0},
    /* istioctl compatibility: accepted so existing scripts keep working */
    {"kubeclient-timeout", 0, F_STRING, OFF(request_timeout), "Alias of --request-timeout", 1},
    {"namespace", 'n', F_STRING, OFF(unused_namespace), "Accepted and ignored, as by istioctl tag", 1},
};

#define NGLOBAL (sizeof(global_flags) / sizeof(global_flags[0]))

static const flag set_flags[] = {
    {"auto-inject-namespaces", 0, F_BOOL, OFF(auto_inject),
     "Inject sidecars into every namespace that has no injection label (default tag only; system namespaces are "
     "excluded)",
     0},
    {"manifests", 'd', F_STRING, OFF(manifests), "Not supported: webhookctl renders the tag objects itself", 1},
    {"overwrite", 0, F_BOOL, OFF(overwrite), "Replace an existing revision tag of the same name instead of refusing to",
     0},
    {"revision", 'r', F_STRING, OFF(revision), "Control plane revision the tag points to (required)", 0},
    {"skip-confirmation", 'y', F_BOOL, OFF(skip_confirmation),
     "Do not ask before applying a tag whose webhooks would overlap with existing ones", 0},
    {"webhook-name", 0, F_STRING, OFF(webhook_name),
     "Name of the tag's MutatingWebhookConfiguration (default istio-revision-tag-<tag>)", 0},
};

static const flag list_flags[] = {
    {"output", 'o', F_STRING, OFF(output), "Output format: table, json or yaml (default \"table\")", 0},
};

static const flag remove_flags[] = {
    {"skip-confirmation", 'y', F_BOOL, OFF(skip_confirmation),
     "Do not ask before removing a tag that namespaces still use", 0},
};

typedef struct subcommand {
    const char *name;
    const char *alias;
    const char *use;
    const char *summary;
    const char *long_help;
    const char *examples;
    const flag *flags;
    size_t nflags;
} subcommand;

static const char tag_long[] =
    "Revision tags are stable names for Istio control plane revisions.  Label a namespace\n"
    "\"istio.io/rev=prod\" once; point the tag \"prod\" at revision \"1-24\" today and at \"1-25\"\n"
    "after the canary upgrade, and every pod created in that namespace from then on is injected\n"
    "by the new revision, without relabeling a single namespace.\n"
    "\n"
    "A tag is a MutatingWebhookConfiguration that selects namespaces and pods by the tag name and\n"
    "sends them to the revision's injector (istiod's or webhookd's), plus a Service\n"
    "\"istiod-revision-tag-<tag>\".  The tag \"default\" also serves \"istio-injection=enabled\"\n"
    "namespaces and owns the cluster-wide validator \"istiod-default-validator\".\n";

static const subcommand subcommands[] = {
    {"set", NULL, "set <revision-tag>", "Create or modify revision tags",
     "Create a revision tag, or move an existing one to another control plane revision (with\n"
     "--overwrite).  The tag's webhook copies the connection (service or URL, path, caBundle) of the\n"
     "revision's own injector webhook.  Setting the tag \"default\" also creates\n"
     "\"istiod-default-validator\" and, once everything else is in place, switches off the\n"
     "non-revisioned injector \"istio-sidecar-injector\" (kept, with never-matching selectors, so\n"
     "that you can switch back).\n"
     "\n"
     "Nothing is changed when the tag would collide with a revision, already exists (without\n"
     "--overwrite), or its webhooks would overlap with others and you do not confirm.\n",
     "  # Create the tag \"prod\" for revision \"1-24-0\"\n"
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
     set_flags, sizeof(set_flags) / sizeof(set_flags[0])},
    {"generate", NULL, "generate <revision-tag>", "Generate configuration for a revision tag to stdout",
     "Print the objects \"tag set\" would apply (MutatingWebhookConfiguration, for \"default\" the\n"
     "ValidatingWebhookConfiguration, and the Service) as YAML, without changing the cluster.\n"
     "The cluster is still read: the revision's injector webhook is the template, and existing tags\n"
     "and overlapping webhooks are reported.\n",
     "  # Review the tag before applying it with kubectl or a GitOps tool\n"
     "  webhookctl tag generate prod --revision 1-24-0 > prod-tag.yaml\n"
     "  kubectl apply -f prod-tag.yaml\n",
     set_flags, sizeof(set_flags) / sizeof(set_flags[0])},
    {"list", "show", "list", "List existing revision tags",
     "List revision tags with the revision each points to and the namespaces labeled with the tag\n"
     "(\"istio.io/rev=<tag>\").  Revisions that no tag points to are listed with an empty TAG.\n",
     "  # Tags and the namespaces using them\n"
     "  webhookctl tag list\n"
     "\n"
     "  # The same as JSON, for scripts\n"
     "  webhookctl tag list -o json\n",
     list_flags, sizeof(list_flags) / sizeof(list_flags[0])},
    {"remove", "delete", "remove <revision-tag>", "Remove Istio control plane revision tag",
     "Remove a revision tag: its MutatingWebhookConfiguration(s), the ValidatingWebhookConfiguration\n"
     "it owns (\"istiod-default-validator\" for \"default\") and its Service.  Namespaces labeled\n"
     "with the tag are not relabeled; you are asked first if any exist, because their new pods will\n"
     "no longer be injected.  Running pods are not touched.\n",
     "  # Remove the tag \"prod\"\n"
     "  webhookctl tag remove prod\n",
     remove_flags, sizeof(remove_flags) / sizeof(remove_flags[0])},
};

#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

/* ---- help ----------------------------------------------------------------- */

static const flag *find_flag(const flag *a, size_t na, const char *name, char shorthand);

static void flag_left(const flag *f, char *buf, size_t n)
{
    const char *arg = f->type == F_BOOL ? "" : f->type == F_GROUPS ? " stringArray" : " string";
    if (f->shorthand)
        snprintf(buf, n, "  -%c, --%s%s", f->shorthand, f->name, arg);
    else
        snprintf(buf, n, "      --%s%s", f->name, arg);
}

static int cmp_flags(const void *a, const void *b)
{
    return strcmp(((const flag *)a)->name, ((const flag *)b)->name);
}

/* Cobra's layout: sorted by name, descriptions aligned. */
static void print_flags(FILE *out, const char *title, const flag *in, size_t nin, const char *help_for)
{
    flag flags[16];
    char left[96];
    size_t width = 0, i, n = 0;

    for (i = 0; i < nin && n < 16; i++)
        if (!in[i].hidden && (help_for != NULL || strcmp(in[i].name, "help") != 0))
            flags[n++] = in[i];
    qsort(flags, n, sizeof(flags[0]), cmp_flags);
    for (i = 0; i < n; i++) {
        flag_left(&flags[i], left, sizeof(left));
        if (strlen(left) > width)
            width = strlen(left);
    }
    fprintf(out, "\n%s:\n", title);
    for (i = 0; i < n; i++) {
        flag_left(&flags[i], left, sizeof(left));
        if (strcmp(flags[i].name, "help") == 0 && help_for != NULL)
            fprintf(out, "%-*s   help for %s\n", (int)width, left, help_for);
        else
            fprintf(out, "%-*s   %s\n", (int)width, left, flags[i].usage);
    }
}

static void tag_usage(FILE *out)
{
    fprintf(out, "%s\nUsage:\n  webhookctl tag [command]\n\nAvailable Commands:\n", tag_long);
    for (size_t i = 0; i < NSUB; i++)
        fprintf(out, "  %-11s %s\n", subcommands[i].name, subcommands[i].summary);
    print_flags(out, "Flags", find_flag(NULL, 0, "help", 0), 1, "tag");
    print_flags(out, "Global Flags", global_flags, NGLOBAL, NULL);
    fprintf(out, "\nUse \"webhookctl tag [command] --help\" for more information about a command.\n");
}

static void sub_usage(FILE *out, const subcommand *s)
{
    fprintf(out, "%s\nUsage:\n  webhookctl tag %s [flags]\n", s->long_help, s->use);
    if (s->alias != NULL)
        fprintf(out, "\nAliases:\n  %s, %s\n", s->name, s->alias);
    fprintf(out, "\nExamples:\n%s", s->examples);
    {
        flag all[16];
        size_t n = 0;
        for (size_t i = 0; i < s->nflags; i++)
            all[n++] = s->flags[i];
        all[n++] = *find_flag(NULL, 0, "help", 0);
        print_flags(out, "Flags", all, n, s->name);
    }
    print_flags(out, "Global Flags", global_flags, NGLOBAL, NULL);
}

/* ---- flags ---------------------------------------------------------------- */

static const flag *find_flag(const flag *a, size_t na, const char *name, char shorthand)
{
    for (size_t i = 0; i < na; i++)
        if ((name != NULL && strcmp(a[i].name, name) == 0) || (shorthand && a[i].shorthand == shorthand))
            return &a[i];
    for (size_t i = 0; i < NGLOBAL; i++)
        if ((name != NULL && strcmp(global_flags[i].name, name) == 0) ||
            (shorthand && global_flags[i].shorthand == shorthand))
            return &global_flags[i];
    return NULL;
}

static int set_flag(tag_cli *cli, const flag *f, const char *value, char *msg, size_t msglen)
{
    char *base = (char *)cli + f->offset;

    switch (f->type) {
    case F_BOOL:
        if (value == NULL || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            *(int *)base = 1;
        else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
            *(int *)base = 0;
        else {
            snprintf(msg, msglen, "invalid argument \"%s\" for \"--%s\" flag: expected true or false", value, f->name);
            return -1;
        }
        break;
    case F_STRING:
        *(const char **)base = value;
        break;
    case F_GROUPS:
        if (cli->n_groups >= MAX_GROUPS) {
            snprintf(msg, msglen, "too many --%s flags (at most %d)", f->name, MAX_GROUPS);
            return -1;
        }
        cli->as_groups[cli->n_groups++] = value;
        break;
    }
    return 0;
}

/* Cobra-style parsing: flags anywhere, --name=value, --name value, -x value,
 * -xvalue, "--" ends the flags.  Returns 0, or -1 with msg filled. */
static int parse_flags(tag_cli *cli, const subcommand *s, int argc, char **argv, char *msg, size_t msglen)
{
    int only_args = 0;

    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        const flag *f;
        const char *value = NULL;
        if (only_args || a[0] != '-' || a[1] == '\0') {
            if (cli->nargs >= MAX_POSITIONAL) {
                snprintf(msg, msglen, "too many arguments");
                return -1;
            }
            cli->args[cli->nargs++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_args = 1;
            continue;
        }
        if (a[1] == '-') {
            char name[64];
            const char *eq = strchr(a + 2, '=');
            size_t n = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
            snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), a + 2);
            if ((f = find_flag(s != NULL ? s->flags : NULL, s != NULL ? s->nflags : 0, name, 0)) == NULL) {
                snprintf(msg, msglen, "unknown flag: --%s", name);
                return -1;
            }
            if (eq != NULL)
                value = eq + 1;
        } else {
            if ((f = find_flag(s != NULL ? s->flags : NULL, s != NULL ? s->nflags : 0, NULL, a[1])) == NULL) {
                snprintf(msg, msglen, "unknown shorthand flag: '%c' in %s", a[1], a);
                return -1;
            }
            if (a[2] != '\0')
                value = a[2] == '=' ? a + 3 : a + 2;
        }
        if (value == NULL && f->type != F_BOOL) {
            if (i + 1 >= argc) {
                snprintf(msg, msglen, "flag needs an argument: --%s", f->name);
                return -1;
            }
            value = argv[++i];
        }
        if (set_flag(cli, f, value, msg, msglen) != 0)
            return -1;
    }
    return 0;
}

/* "30s", "1m30s", "500ms", "2h", or bare seconds. */
static long parse_duration_ms(const char *s)
{
    long total = 0;
    const char *p = s;

    if (*p == '\0')
        return -1;
    if (strspn(p, "0123456789") == strlen(p))
        return atol(p) * 1000L;
    while (*p != '\0') {
        char *end;
        double v = strtod(p, &end);
        if (end == p || v < 0)
            return -1;
        p = end;
        if (strncmp(p, "ms", 2) == 0) {
            total += (long)v;
            p += 2;
        } else if (*p == 's') {
            total += (long)(v * 1000);
            p++;
        } else if (*p == 'm') {
            total += (long)(v * 60000);
            p++;
        } else if (*p == 'h') {
            total += (long)(v * 3600000);
            p++;
        } else {
            return -1;
        }
    }
    return total;
}

/* ---- shared plumbing ------------------------------------------------------ */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    fputs("Error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static int usage_error(const subcommand *s, const char *msg)
{
    fprintf(stderr, "Error: %s\nRun 'webhookctl tag%s%s --help' for usage.\n", msg, s != NULL ? " " : "",
            s != NULL ? s->name : "");
    return 2;
}

/* Ask; 1 on y/yes, 0 on n/no/empty/EOF; anything else asks again. */
static int confirm(const char *prompt)
{
    char line[256];

    for (;;) {
        fputs(prompt, stdout);
        fflush(stdout);
        if (fgets(line, sizeof(line), stdin) == NULL) {
            fputc('\n', stdout);
            return 0;
        }
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (strcmp(line, "y") == 0 || strcmp(line, "yes") == 0)
            return 1;
        if (strcmp(line, "n") == 0 || strcmp(line, "no") == 0 || line[0] == '\0')
            return 0;
    }
}

static int make_client(const tag_cli *cli, wh_kube_client **c)
{
    wh_kube_options o = {0};
    wh_err err = {0};

    o.kubeconfig = cli->kubeconfig;
    o.context = cli->context;
    o.impersonate_user = cli->as_user;
    o.impersonate_groups = cli->n_groups > 0 ? cli->as_groups : NULL;
    if (cli->request_timeout != NULL) {
        o.timeout_ms = parse_duration_ms(cli->request_timeout);
        if (o.timeout_ms < 0)
            return fail("invalid --request-timeout \"%s\": use a duration such as 10s or 1m", cli->request_timeout);
    }
    if (wh_kube_client_new(&o, c, &err) != WH_OK)
        return fail("%s", wh_err_msg(&err));
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

    if (wh_kube_check_dns1123_label(tag, &err) != WH_OK)
        bad = fail("invalid revision tag name %s", wh_err_msg(&err));
    else if (wh_buf_printf(&svc, "%s%s", TAG_SERVICE_PREFIX, tag) == WH_OK && svc.len > 63)
        bad = fail("invalid revision tag name \"%s\": the tag Service name \"%s\" would be longer than 63 characters "
                   "(keep tags to %zu characters)",
                   tag, svc.data, 63 - strlen(TAG_SERVICE_PREFIX));
    else if (cli->revision != NULL &&
             (cli->revision[0] == '\0' || wh_kube_check_label_value(cli->revision, &err) != WH_OK))
        bad = fail("invalid --revision %s", cli->revision[0] == '\0' ? "\"\": must not be empty" : wh_err_msg(&err));
    else if (cli->webhook_name != NULL && wh_kube_check_dns1123_subdomain(cli->webhook_name, &err) != WH_OK)
        bad = fail("invalid --webhook-name %s", wh_err_msg(&err));
    else if (wh_kube_check_dns1123_label(cli->istio_ns, &err) != WH_OK)
        bad = fail("invalid --istioNamespace %s", wh_err_msg(&err));
    wh_buf_free(&svc);
    return bad ? 2 : 0;
}

static int list_or_fail(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *sel, json_t **items,
                        const char *what)
{
    wh_err err = {0};
    if (wh_kube_list(c, r, ns, sel, items, &err) != WH_OK)
        return fail("%s: %s", what, wh_err_msg(&err));
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

static int cmd_set(tag_cli *cli, const subcommand *s, int generate)
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
        return usage_error(s, "must provide a tag for modification");
    if (cli->nargs > 1)
        return usage_error(s, "must provide a single tag for creation");
    if (rev == NULL)
        return usage_error(s, "required flag(s) \"revision\" not set");
    if (cli->manifests != NULL)
        return usage_error(s, "--manifests is not supported: webhookctl renders the tag objects itself");
    tag = cli->args[0];
    if ((rc = check_names(cli, tag)) != 0)
        return rc;
    rc = 1;
    if ((findings = json_array()) == NULL)
        return fail("out of memory");
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
                fail("cannot create revision tag \"%s\": found existing control plane revision with same name", tag);
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
        fail("cannot modify tag: found multiple canonical services with revision \"%s\" in namespace \"%s\"", rev, ns);
        goto out;
    }
    if (json_array_size(mwcs) == 0 && json_array_size(svcs) == 0) {
        fail("cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision \"%s\"", rev);
        goto out;
    }
    if (json_array_size(mwcs) > 1) {
        fail("cannot modify tag: found multiple canonical webhooks or services with revision \"%s\"", rev);
        goto out;
    }
    if (json_array_size(mwcs) == 0) {
        fail("cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision \"%s\": Service "
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
            fail("revision tag \"%s\" already exists, and --overwrite is false", tag);
            goto out;
        }
    }

    /* 4-7. render */
    if (tag_render_mwc(&ro, json_array_get(mwcs, 0), &mwc, &err) != WH_OK) {
        fail("%s", wh_err_msg(&err));
        goto out;
    }
    if (is_default) {
        wh_err gerr = {0};
        wh_code grc = wh_kube_get(c, &wh_kube_validating_webhooks, NULL, TAG_DEFAULT_VALIDATOR, &existing_vwc, &gerr);
        if (grc != WH_OK && grc != WH_E_NOTFOUND) {
            fail("cannot read %s: %s", TAG_DEFAULT_VALIDATOR, wh_err_msg(&gerr));
            goto out;
        }
        if (tag_render_validator(&ro, json_array_get(mwcs, 0), existing_vwc, &vwc, &err) != WH_OK) {
            fail("failed to create the default validator: %s", wh_err_msg(&err));
            goto out;
        }
        if (!generate) {
            wh_buf_reset(&sel);
            wh_buf_printf(&sel, "%s=%s,!%s", REV_LABEL, TAG_DEFAULT, TAG_LABEL);
            if (list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &legacy,
                             "failed deactivating existing default revision"))
                goto out;
            if (json_array_size(legacy) > 1) {
                fail("failed deactivating existing default revision: expected a single webhook for default revision");
                goto out;
            }
        }
    }
    if (tag_render_service(&ro, &svc, &err) != WH_OK) {
        fail("%s", wh_err_msg(&err));
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
        fail("cannot analyze webhook overlaps: %s", wh_err_msg(&err));
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
            fail("cannot analyze webhook overlaps: %s", wh_err_msg(&gerr));
            goto out;
        }
    }
    if (json_array_size(findings) > 0 && !cli->skip_confirmation) {
        fprintf(stderr, "creating tag would conflict, pass --skip-confirmation to proceed:\n");
        print_findings(findings);
        if (!generate && !confirm("Apply anyways? [y/N] ")) {
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
                fail("cannot print YAML: %s", wh_err_msg(&err));
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
            fail("failed deactivating existing default revision: %s\nThe tag was applied; both injectors are active "
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
    json_t *v = json_string(s);
    char *q = v != NULL ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    fputs(q != NULL ? q : "\"\"", stdout);
    free(q);
    json_decref(v);
}

static int cmd_list(tag_cli *cli, const subcommand *s)
{
    const char *fmt = cli->output != NULL ? cli->output : "table";
    wh_kube_client *c = NULL;
    json_t *mwcs = NULL, *svcs = NULL, *nss = NULL, *rows = NULL, *kept = NULL, **sorted = NULL;
    size_t i, j, n;
    json_t *it;
    int rc = 1;

    if (cli->nargs > 0)
        return usage_error(s, "tag list command does not accept arguments");
    if (strcmp(fmt, "table") != 0 && strcmp(fmt, "json") != 0 && strcmp(fmt, "yaml") != 0)
        return fail("unknown format: %s", fmt);
    if ((rows = json_array()) == NULL || (kept = json_array()) == NULL || make_client(cli, &c) != 0)
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
    sorted = calloc(n, sizeof(*sorted));
    if (sorted == NULL)
        goto out;
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
            fail("cannot print YAML: %s", wh_err_msg(&err));
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

/* Delete every object of `items`; 404 counts as done (someone was faster). */
static int delete_all(wh_kube_client *c, const wh_kube_resource *r, const json_t *items, const char *what)
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
        printf("%s %s%s%s removed\n", r->kind, obj_ns(it) != NULL ? obj_ns(it) : "", obj_ns(it) != NULL ? "/" : "",
               obj_name(it));
    }
    if (errs.len > 0)
        rc = fail("failed to delete Istio revision tag %s: %s", what, errs.data);
    wh_buf_free(&errs);
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
        if (!confirm(prompt.data)) {
            printf("MutatingWebhookConfiguration %s stays deactivated\n", name);
            continue;
        }
        if (wh_kube_update_retry(c, &wh_kube_mutating_webhooks, NULL, name, reactivate_cb, NULL, TAG_FIELD_MANAGER,
                                 NULL, &err) != WH_OK) {
            rc = fail("failed to re-activate %s: %s", name, wh_err_msg(&err));
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

static int cmd_remove(tag_cli *cli, const subcommand *s)
{
    wh_kube_client *c = NULL;
    json_t *svcs = NULL, *mwcs = NULL, *vwcs = NULL, *nss = NULL;
    wh_buf sel = WH_BUF_INIT, prompt = WH_BUF_INIT;
    wh_err err = {0};
    const char *tag;
    int rc = 1;
    size_t i;
    json_t *it;

    if (cli->nargs == 0)
        return usage_error(s, "must provide a tag for removal");
    if (cli->nargs > 1)
        return usage_error(s, "must provide a single tag for removal");
    tag = cli->args[0];
    if (tag[0] == '\0' || wh_kube_check_label_value(tag, &err) != WH_OK) {
        fail("invalid revision tag name %s", tag[0] == '\0' ? "\"\": must not be empty" : wh_err_msg(&err));
        return 2;
    }
    if (make_client(cli, &c) != 0)
        goto out;
    wh_buf_printf(&sel, "%s=%s", TAG_LABEL, tag);
    if (list_or_fail(c, &wh_kube_services, cli->istio_ns, sel.data, &svcs, "cannot look up the tag") ||
        list_or_fail(c, &wh_kube_mutating_webhooks, NULL, sel.data, &mwcs, "cannot look up the tag"))
        goto out;
    if (json_array_size(svcs) == 0 && json_array_size(mwcs) == 0) {
        fail("cannot remove tag \"%s\": cannot find MutatingWebhookConfiguration or Service for tag", tag);
        goto out;
    }
    wh_buf_reset(&sel);
    wh_buf_printf(&sel, "%s=%s", REV_LABEL, tag);
    if (list_or_fail(c, &wh_kube_namespaces, NULL, sel.data, &nss, "failed to retrieve namespaces dependent on tag"))
        goto out;
    if (json_array_size(nss) > 0 && !cli->skip_confirmation) {
        wh_buf_printf(&prompt, "Caution, found %zu namespace(s) still injected by tag \"%s\":", json_array_size(nss),
                      tag);
        json_array_foreach(nss, i, it) wh_buf_printf(&prompt, " %s", obj_name(it));
        wh_buf_puts(&prompt, "\nProceed with operation? [y/N] ");
        if (!confirm(prompt.data)) {
            printf("Aborting operation.\n");
            rc = 0;
            goto out;
        }
    }
    /* webhooks first (the tag stops injecting), then the validator, then the Service */
    if (delete_all(c, &wh_kube_mutating_webhooks, mwcs, "MutatingConfigurationWebhook") != 0)
        goto out;
    wh_buf_reset(&sel);
    wh_buf_printf(&sel, "%s=%s", TAG_LABEL, tag);
    if (list_or_fail(c, &wh_kube_validating_webhooks, NULL, sel.data, &vwcs,
                     "failed to delete Istio revision tag ValidatingWebhookConfiguration") ||
        delete_all(c, &wh_kube_validating_webhooks, vwcs, "ValidatingWebhookConfiguration") != 0 ||
        delete_all(c, &wh_kube_services, svcs, "Services") != 0)
        goto out;
    printf("Revision tag %s removed\n", tag);
    rc = strcmp(tag, TAG_DEFAULT) == 0 ? offer_reactivation(c, cli) : 0;
out:
    json_decref(svcs);
    json_decref(mwcs);
    json_decref(vwcs);
    json_decref(nss);
    wh_buf_free(&sel);
    wh_buf_free(&prompt);
    wh_kube_client_free(c);
    return rc;
}

/* ---- entry -------------------------------------------------------------------- */

int wh_ctl_tag(int argc, char **argv)
{
    tag_cli cli;
    const subcommand *s = NULL;
    char msg[512];
    const char *env_ns = getenv("ISTIOCTL_ISTIONAMESPACE");

    memset(&cli, 0, sizeof(cli));
    /* wh_kube runs libcurl with CURLOPT_NOSIGNAL: a peer closing mid-write must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && argv[1][0] != '-') {
        for (size_t i = 0; i < NSUB; i++)
            if (strcmp(argv[1], subcommands[i].name) == 0 ||
                (subcommands[i].alias != NULL && strcmp(argv[1], subcommands[i].alias) == 0))
                s = &subcommands[i];
        if (s == NULL) {
            if (strcmp(argv[1], "create") == 0)
                fprintf(stderr, "Error: unknown subcommand \"create\"\n\nDid you mean this?\n\tset\n\n");
            else
                fprintf(stderr, "Error: unknown subcommand \"%s\"\n", argv[1]);
            fprintf(stderr, "Run 'webhookctl tag --help' for usage.\n");
            return 2;
        }
    }
    if (parse_flags(&cli, s, argc - (s != NULL ? 2 : 1), argv + (s != NULL ? 2 : 1), msg, sizeof(msg)) != 0)
        return usage_error(s, msg);
    if (cli.help || s == NULL) {
        if (s == NULL && cli.nargs > 0) {
            fprintf(stderr, "Error: unknown subcommand \"%s\"\nRun 'webhookctl tag --help' for usage.\n", cli.args[0]);
            return 2;
        }
        if (s != NULL)
            sub_usage(stdout, s);
        else
            tag_usage(stdout);
        return 0;
    }
    if (cli.istio_ns == NULL)
        cli.istio_ns = env_ns != NULL && env_ns[0] != '\0' ? env_ns : "istio-system";
    if (strcmp(s->name, "set") == 0 || strcmp(s->name, "generate") == 0)
        return cmd_set(&cli, s, s->name[0] == 'g');
    if (strcmp(s->name, "list") == 0)
        return cmd_list(&cli, s);
    return cmd_remove(&cli, s);
}
