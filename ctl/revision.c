/*
 * revision.c - `webhookctl revision list|describe|migrate|remove`: the
 * bookkeeping of a canary upgrade, done by the tool.  After installing
 * revision B beside A and moving the tags, people still have to find the
 * namespaces and pods left on A, relabel `istio-injection=enabled`
 * namespaces to `istio.io/rev`, restart every workload and remove A without
 * leaving its webhooks behind (landscape.md, B1/B3; issue #13).
 *
 * What exists and who uses it comes from the inventory (inventory.h), so
 * `list`, `migrate`, `remove` and `check` agree on every answer.  Changes are
 * planned first, printed, confirmed, then made one at a time, each reported;
 * a re-run after an interruption skips what is done.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "inventory.h"
#include "tag_int.h"
#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_ctl.h"

#define RESTARTED_AT "kubectl.kubernetes.io/restartedAt"
/* Which revision a restart was for: a re-run waits for that rollout instead of restarting again. */
#define RESTARTED_FOR "webhookd.io/restarted-for-revision"
#define INJECTION_LABEL "istio-injection"
#define POLL_FIRST_MS 100 /* rollout polls start fast and back off to POLL_MAX_MS */
#define POLL_MAX_MS 1000
/* A running migrate's claim on a namespace (see "lease" below). */
#define LEASE_ANNOTATION "webhookd.io/revision-migrate-lease"

/* SIGINT/SIGTERM once the migration holds leases: the request under way finishes (a
 * namespace's relabel is one patch, so each namespace is either relabelled whole or not at
 * all), nothing new starts, the leases are released and the run says how to resume.  The
 * handler is one-shot (SA_RESETHAND): a second signal ends the run at once, and the leases
 * it still holds then expire after --lease-duration. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    static const char msg[] = "\nInterrupted: finishing the request under way, then releasing the migration leases "
                              "(interrupt again to quit at once: the leases then expire after --lease-duration)\n";
    ssize_t w;

    (void)sig;
    interrupted = 1;
    w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)w;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s != NULL ? s : "";
}

static const char *meta(const json_t *o, const char *k)
{
    return str(json_object_get(o, "metadata"), k);
}

static int has_namespace(const inv_cluster *cl, const char *name)
{
    const json_t *ns;
    size_t i;

    json_array_foreach(cl->namespaces, i, ns) if (strcmp(meta(ns, "name"), name) == 0) return 1;
    return 0;
}

/* The client and the inventory, of namespace `only_ns` alone unless NULL
 * (list and describe -n, as kubectl limits a listing); 0, or 1 after
 * printing the error. */
static int load(const wh_ctl_args *a, const char *only_ns, wh_kube_client **c, inv_cluster *cl, json_t **inv)
{
    wh_err err = {0};

    signal(SIGPIPE, SIG_IGN); /* libcurl runs with CURLOPT_NOSIGNAL */
    if (wh_ctl_kube_client(a, c, &err) != WH_OK || inv_load(*c, wh_ctl_string(a, "istioNamespace"), cl, &err) != WH_OK)
        return wh_ctl_fail("%s", wh_err_msg(&err));
    if (only_ns != NULL && !has_namespace(cl, only_ns))
        return wh_ctl_fail("namespace \"%s\" not found", only_ns);
    *inv = inv_build(cl, only_ns);
    return 0;
}

/* -n of list and describe: the namespace to limit them to, or NULL. */
static const char *namespace_filter(const wh_ctl_args *a)
{
    return wh_ctl_changed(a, "namespace") ? wh_ctl_string(a, "namespace") : NULL;
}

/* ---- tables -------------------------------------------------------------------- */

/* Rows of strings (arrays), the first the header: columns three spaces apart, as kubectl prints. */
static void print_table(const json_t *rows, const char *indent)
{
    size_t widths[16] = {0}, i, j;
    json_t *row, *cell;

    json_array_foreach(rows, i, row)
        json_array_foreach(row, j, cell) if (j < 16 && diag_width(json_string_value(cell)) > widths[j]) widths[j] =
            diag_width(json_string_value(cell));
    json_array_foreach(rows, i, row)
    {
        fputs(indent, stdout);
        json_array_foreach(row, j, cell)
        {
            if (j + 1 == json_array_size(row))
                fputs(json_string_value(cell), stdout);
            else {
                diag_pad(stdout, json_string_value(cell), j < 16 ? widths[j] : 0);
                fputs("   ", stdout);
            }
        }
        fputc('\n', stdout);
    }
}

/* "a,b,c", or "-" for none. */
static json_t *joined(const json_t *arr)
{
    wh_buf b = WH_BUF_INIT;
    size_t i;
    json_t *v, *out;

    json_array_foreach(arr, i, v) wh_buf_printf(&b, "%s%s", i > 0 ? "," : "", json_string_value(v));
    out = json_string(b.len > 0 ? b.data : "-");
    wh_buf_free(&b);
    return out;
}

static void print_restarts(const json_t *restart, const char *indent)
{
    json_t *rows = json_pack("[[s,s,s,s,s]]", "NAMESPACE", "POD", "OWNER", "RUNNING", "SELECTED"), *p;
    size_t i;

    json_array_foreach(restart, i, p) json_array_append_new(
        rows, json_pack("[s,s,s,s,s]", str(p, "namespace"), str(p, "pod"), str(p, "owner")[0] ? str(p, "owner") : "-",
                        str(p, "running"), str(p, "selected")));
    print_table(rows, indent);
    json_decref(rows);
}

/* ---- list ------------------------------------------------------------------------ */

static int run_list(const wh_ctl_args *a)
{
    const char *fmt = wh_ctl_string(a, "output");
    wh_kube_client *c = NULL;
    inv_cluster cl = {0};
    json_t *inv = NULL, *revs, *restart, *r, *rows;
    size_t i, n;
    int rc;

    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "revision list takes no arguments");
    if ((rc = wh_ctl_output_check(a, fmt)) != 0)
        return rc;
    if ((rc = load(a, namespace_filter(a), &c, &cl, &inv)) != 0)
        goto out;
    if (strcmp(fmt, "table") != 0) {
        /* the documented shape, without the extra configMaps field of the inventory */
        json_t *doc = json_deep_copy(inv);
        json_array_foreach(json_object_get(doc, "revisions"), i, r) json_object_del(r, "configMaps");
        rc = wh_ctl_output_doc(fmt, doc);
        json_decref(doc);
        goto out;
    }
    revs = json_object_get(inv, "revisions");
    restart = json_object_get(inv, "needsRestart");
    if (json_array_size(revs) == 0) {
        printf("No Istio control plane revisions found.\n");
        goto out;
    }
    rows = json_pack("[[s,s,s,s,s,s,s]]", "REVISION", "VERSION", "SERVED BY", "TAGS", "NAMESPACES", "PODS", "WEBHOOKS");
    json_array_foreach(revs, i, r)
    {
        char pods[32];
        snprintf(pods, sizeof(pods), "%lld", (long long)json_integer_value(json_object_get(r, "pods")));
        json_array_append_new(
            rows, json_pack("[s,s,s,o,o,s,o]", str(r, "name"), str(r, "version")[0] ? str(r, "version") : "-",
                            str(r, "servedBy"), joined(json_object_get(r, "tags")),
                            joined(json_object_get(r, "namespaces")), pods, joined(json_object_get(r, "webhooks"))));
    }
    print_table(rows, "");
    json_decref(rows);
    n = json_array_size(restart);
    if (n == 0) {
        printf("\nNo pod needs a restart: every injected pod runs the revision that injects its namespace now.\n");
    } else {
        printf("\n%zu pod%s run%s another revision than the one that injects %s now (restart to move):\n", n,
               n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "them");
        print_restarts(restart, "");
    }
out:
    json_decref(inv);
    inv_free(&cl);
    wh_kube_client_free(c);
    return rc;
}

/* ---- describe ----------------------------------------------------------------------- */

/* The namespaces that name the revision or one of its tags in istio.io/rev,
 * or select it by another label: [{name, label}] (new reference). */
static json_t *namespace_details(const inv_cluster *cl, const json_t *rev, const char *only_ns)
{
    json_t *out = json_array(), *ns, *v;
    const char *name = str(rev, "name");
    size_t i, j;

    json_array_foreach(cl->namespaces, i, ns)
    {
        const char *label = diag_label(ns, REV_LABEL), *inj = diag_label(ns, INJECTION_LABEL);
        int selects = 0, names = label != NULL && strcmp(label, name) == 0;
        wh_buf how = WH_BUF_INIT;
        if (only_ns != NULL && strcmp(meta(ns, "name"), only_ns) != 0)
            continue;
        json_array_foreach(json_object_get(rev, "namespaces"), j, v) selects |=
            strcmp(json_string_value(v), meta(ns, "name")) == 0;
        json_array_foreach(json_object_get(rev, "tags"), j, v) names |=
            label != NULL && strcmp(label, json_string_value(v)) == 0;
        if (!selects && !names)
            continue;
        if (inj != NULL)
            wh_buf_printf(&how, "%s=%s", INJECTION_LABEL, inj);
        if (label != NULL)
            wh_buf_printf(&how, "%s%s=%s", how.len > 0 ? "," : "", REV_LABEL, label);
        if (how.len == 0)
            wh_buf_puts(&how, "no injection label");
        if (!selects)
            wh_buf_puts(&how, " (not injected by it: another label or webhook wins)");
        json_array_append_new(
            out, json_pack("{s:s, s:s, s:b}", "name", meta(ns, "name"), "labels", how.data, "selects", selects));
        wh_buf_free(&how);
    }
    return out;
}

/* Pods running the revision (in `only_ns` unless NULL): [{namespace, pod, owner}] (new reference). */
static json_t *pods_running(const inv_cluster *cl, const char *name, const char *only_ns)
{
    json_t *out = json_array(), *pod;
    size_t i;

    json_array_foreach(cl->pods, i, pod)
    {
        char rev[256], owner[512];
        if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL ||
            (only_ns != NULL && strcmp(meta(pod, "namespace"), only_ns) != 0) ||
            !inv_pod_revision(pod, rev, sizeof(rev)) || strcmp(rev, name) != 0)
            continue;
        inv_pod_owner(cl, pod, owner, sizeof(owner));
        json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "namespace", meta(pod, "namespace"), "pod",
                                             meta(pod, "name"), "owner", owner));
    }
    return out;
}

static int run_describe(const wh_ctl_args *a)
{
    const char *fmt = wh_ctl_string(a, "output");
    wh_kube_client *c = NULL;
    inv_cluster cl = {0};
    json_t *inv = NULL, *doc = NULL, *moving, *p, *v;
    const json_t *rev;
    size_t i;
    int rc;

    if (a->nargs != 1)
        return wh_ctl_usage_error(a, a->nargs == 0 ? "must provide a revision to describe"
                                                   : "must provide a single revision to describe");
    if ((rc = wh_ctl_output_check(a, fmt)) != 0)
        return rc;
    if ((rc = load(a, namespace_filter(a), &c, &cl, &inv)) != 0)
        goto out;
    if ((rev = inv_find_revision(inv, a->args[0])) == NULL) {
        rc = wh_ctl_fail("revision \"%s\" not found: no injector ConfigMap, injector webhook, tag or pod names it "
                         "(webhookctl revision list shows the revisions)",
                         a->args[0]);
        goto out;
    }
    doc = json_deep_copy(rev);
    moving = json_array();
    json_array_foreach(json_object_get(inv, "needsRestart"), i,
                       p) if (strcmp(str(p, "running"), a->args[0]) == 0 || strcmp(str(p, "selected"), a->args[0]) == 0)
        json_array_append(moving, p);
    json_object_set_new(doc, "namespaceLabels", namespace_details(&cl, rev, namespace_filter(a)));
    json_object_set_new(doc, "podList", pods_running(&cl, a->args[0], namespace_filter(a)));
    json_object_set_new(doc, "needsRestart", moving);
    if (strcmp(fmt, "table") != 0) {
        rc = wh_ctl_output_doc(fmt, doc);
        goto out;
    }
    printf("Revision:     %s\n", str(doc, "name"));
    printf("Version:      %s\n", str(doc, "version")[0] ? str(doc, "version") : "unknown");
    printf("Served by:    %s\n", str(doc, "servedBy"));
    printf("Webhooks:     %s\n", json_string_value(v = joined(json_object_get(doc, "webhooks"))));
    json_decref(v);
    printf("Tags:         %s\n", json_string_value(v = joined(json_object_get(doc, "tags"))));
    json_decref(v);
    printf("ConfigMaps:   %s\n", json_string_value(v = joined(json_object_get(doc, "configMaps"))));
    json_decref(v);
    printf("Namespaces:   %zu\n", json_array_size(json_object_get(doc, "namespaceLabels")));
    if (json_array_size(json_object_get(doc, "namespaceLabels")) > 0) {
        json_t *rows = json_pack("[[s,s]]", "NAMESPACE", "LABELS");
        json_array_foreach(json_object_get(doc, "namespaceLabels"), i, p)
            json_array_append_new(rows, json_pack("[s,s]", str(p, "name"), str(p, "labels")));
        print_table(rows, "  ");
        json_decref(rows);
    }
    printf("Pods:         %zu\n", json_array_size(json_object_get(doc, "podList")));
    if (json_array_size(json_object_get(doc, "podList")) > 0) {
        json_t *rows = json_pack("[[s,s,s]]", "NAMESPACE", "POD", "OWNER");
        json_array_foreach(json_object_get(doc, "podList"), i, p) json_array_append_new(
            rows, json_pack("[s,s,s]", str(p, "namespace"), str(p, "pod"), str(p, "owner")[0] ? str(p, "owner") : "-"));
        print_table(rows, "  ");
        json_decref(rows);
    }
    if (json_array_size(moving) > 0) {
        printf("Pods that change revision on restart: %zu\n", json_array_size(moving));
        print_restarts(moving, "  ");
    }
out:
    json_decref(doc);
    json_decref(inv);
    inv_free(&cl);
    wh_kube_client_free(c);
    return rc;
}

/* ---- confirmation ------------------------------------------------------------------ */

/* -y, or a "y" typed on a terminal: 1 to go ahead.  Otherwise 0, with *rc = 0
 * when the user said no, and *rc untouched when nobody could answer (no
 * terminal: refused with a message rather than guessed). */
static int confirmed(const wh_ctl_args *a, int *rc)
{
    if (wh_ctl_bool(a, "skip-confirmation"))
        return 1;
    if (!isatty(STDIN_FILENO)) {
        wh_ctl_fail("refusing to change the cluster without confirmation: standard input is not a terminal. Review the "
                    "plan with --dry-run, then run again with -y (--skip-confirmation)");
        return 0;
    }
    if (wh_ctl_ask("Proceed? [y/N] "))
        return 1;
    printf("Aborting: nothing was changed.\n");
    *rc = 0;
    return 0;
}

/* ---- rollouts (kubectl rollout status, per kind) ------------------------------------- */

typedef enum { RO_WAIT, RO_DONE, RO_ERROR } ro_state;

static long long num(const json_t *o, const char *k, long long def)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

/* kubectl's rollout-status verdict and message for a Deployment, StatefulSet or DaemonSet. */
static ro_state rollout_status(const char *kind, const json_t *obj, char *msg, size_t n)
{
    const json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    const char *name = meta(obj, "name");
    long long gen = num(json_object_get(obj, "metadata"), "generation", 0), observed = num(st, "observedGeneration", 0);
    const char *strategy = str(json_object_get(spec, "updateStrategy"), "type");

    if (strcmp(kind, "Deployment") == 0) {
        long long want = num(spec, "replicas", 1), updated = num(st, "updatedReplicas", 0);
        long long replicas = num(st, "replicas", 0), available = num(st, "availableReplicas", 0);
        size_t i;
        json_t *cond;
        if (gen > observed) {
            snprintf(msg, n, "Waiting for deployment spec update to be observed...");
            return RO_WAIT;
        }
        json_array_foreach(json_object_get(st, "conditions"), i,
                           cond) if (strcmp(str(cond, "type"), "Progressing") == 0 &&
                                     strcmp(str(cond, "reason"), "ProgressDeadlineExceeded") == 0)
        {
            snprintf(msg, n, "deployment \"%s\" exceeded its progress deadline", name);
            return RO_ERROR;
        }
        if (updated < want)
            snprintf(msg, n,
                     "Waiting for deployment \"%s\" rollout to finish: %lld out of %lld new replicas have been "
                     "updated...",
                     name, updated, want);
        else if (replicas > updated)
            snprintf(msg, n,
                     "Waiting for deployment \"%s\" rollout to finish: %lld old replicas are pending termination...",
                     name, replicas - updated);
        else if (available < updated)
            snprintf(msg, n,
                     "Waiting for deployment \"%s\" rollout to finish: %lld of %lld updated replicas are available...",
                     name, available, updated);
        else {
            snprintf(msg, n, "deployment \"%s\" successfully rolled out", name);
            return RO_DONE;
        }
        return RO_WAIT;
    }
    if (strategy[0] != '\0' && strcmp(strategy, "RollingUpdate") != 0) {
        snprintf(msg, n, "rollout status is only available for RollingUpdate strategy type");
        return RO_ERROR;
    }
    if (strcmp(kind, "DaemonSet") == 0) {
        long long desired = num(st, "desiredNumberScheduled", 0), updated = num(st, "updatedNumberScheduled", 0);
        long long available = num(st, "numberAvailable", 0);
        if (gen > observed)
            snprintf(msg, n, "Waiting for daemon set spec update to be observed...");
        else if (updated < desired)
            snprintf(msg, n,
                     "Waiting for daemon set \"%s\" rollout to finish: %lld out of %lld new pods have been updated...",
                     name, updated, desired);
        else if (available < desired)
            snprintf(msg, n,
                     "Waiting for daemon set \"%s\" rollout to finish: %lld of %lld updated pods are available...",
                     name, available, desired);
        else {
            snprintf(msg, n, "daemon set \"%s\" successfully rolled out", name);
            return RO_DONE;
        }
        return RO_WAIT;
    }
    /* StatefulSet */
    {
        long long want = num(spec, "replicas", 1), ready = num(st, "readyReplicas", 0);
        long long partition =
            num(json_object_get(json_object_get(spec, "updateStrategy"), "rollingUpdate"), "partition", 0);
        long long updated = num(st, "updatedReplicas", 0);
        const char *cur = str(st, "currentRevision"), *upd = str(st, "updateRevision");
        if (observed == 0 || gen > observed)
            snprintf(msg, n, "Waiting for statefulset spec update to be observed...");
        else if (ready < want)
            snprintf(msg, n, "Waiting for %lld pods to be ready...", want - ready);
        else if (partition > 0 && updated < want - partition)
            snprintf(msg, n,
                     "Waiting for partitioned roll out to finish: %lld out of %lld new pods have been updated...",
                     updated, want - partition);
        else if (partition > 0) {
            snprintf(msg, n, "partitioned roll out complete: %lld new pods have been updated...", updated);
            return RO_DONE;
        } else if (strcmp(cur, upd) != 0)
            snprintf(msg, n, "waiting for statefulset rolling update to complete %lld pods at revision %s...", updated,
                     upd);
        else {
            snprintf(msg, n, "statefulset rolling update complete %lld pods at revision %s...",
                     num(st, "currentReplicas", 0), cur);
            return RO_DONE;
        }
        return RO_WAIT;
    }
}

/* The controller's ReplicaFailure condition (pods it cannot create: a webhook refusing them, a quota),
 * which kubectl's rollout status does not show but which says why a rollout is stuck. */
static void add_replica_failure(const json_t *obj, char *msg, size_t n)
{
    size_t i, len = strlen(msg);
    json_t *cond;

    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, cond)
    {
        if (strcmp(str(cond, "type"), "ReplicaFailure") == 0 && strcmp(str(cond, "status"), "True") == 0 && len < n)
            snprintf(msg + len, n - len, " (%s: %s)", str(cond, "reason"), str(cond, "message"));
    }
}

static const wh_kube_resource *workload_resource(const char *kind)
{
    if (strcmp(kind, "Deployment") == 0)
        return &wh_kube_deployments;
    if (strcmp(kind, "StatefulSet") == 0)
        return &wh_kube_statefulsets;
    if (strcmp(kind, "DaemonSet") == 0)
        return &wh_kube_daemonsets;
    return NULL;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Go's time.Duration.String() for whole seconds and up, e.g. "5m0s", "30s", "1h0m0s". */
static void duration_text(long long ns, char *buf, size_t n)
{
    long long s = ns / 1000000000LL, ms = (ns / 1000000LL) % 1000;
    if (s < 1 && ms > 0)
        snprintf(buf, n, "%lldms", ns / 1000000LL);
    else if (s < 60)
        snprintf(buf, n, "%llds", s);
    else if (s < 3600)
        snprintf(buf, n, "%lldm%llds", s / 60, s % 60);
    else
        snprintf(buf, n, "%lldh%lldm%llds", s / 3600, (s % 3600) / 60, s % 60);
}

/* "istio-injection=enabled", "istio.io/rev=1-9", "no injection label". */
static void label_text(const json_t *labels, wh_buf *b)
{
    const char *inj = json_string_value(json_object_get(labels, INJECTION_LABEL));
    const char *rev = json_string_value(json_object_get(labels, REV_LABEL));
    if (inj != NULL)
        wh_buf_printf(b, "%s=%s", INJECTION_LABEL, inj);
    if (rev != NULL)
        wh_buf_printf(b, "%s%s=%s", inj != NULL ? "," : "", REV_LABEL, rev);
    if (inj == NULL && rev == NULL)
        wh_buf_puts(b, "no injection label");
}

/* ---- lease ------------------------------------------------------------------------- */
/* Two migrations of one namespace at once would restart its workloads twice and report each
 * other's rollouts.  A run claims every chosen namespace first with the annotation
 * LEASE_ANNOTATION = {"holder", "to", "acquired", "expires"} (read-modify-write on the
 * resourceVersion, so two runs cannot both win), refuses a namespace another holder's
 * unexpired lease names (--force takes it over), and removes its own at the end.
 *
 * A lease lasts --lease-duration and is renewed while the run lasts: before each namespace's
 * relabel and rollouts, and every third of the duration while it waits (the waits never sleep
 * past a renewal), so a run slower than anyone could estimate keeps its claim and a run killed
 * outright blocks nobody longer than one duration.  A renewal that finds the lease gone or
 * another holder's (a run with --force took over) stops this run's work in that namespace: the
 * other run owns it now.  A renewal that fails for another reason (the API server unreachable)
 * is retried at the next one; the lease is only lost if someone else took it meanwhile. */

typedef struct lease_ctx {
    const char *holder, *to, *ns;
    time_t now;
    long long duration_s;
    long long next_renewal_ms; /* monotonic (now_ms) */
    int force, renewing;       /* renewing: the lease must still be this run's */
    json_t *planned;           /* namespace -> its injection labels as the plan read them (label_text) */
    json_t *lost;              /* namespace -> why this run lost its lease there */
} lease_ctx;

static void utc_text(time_t t, char *buf, size_t n)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* RFC 3339 in UTC as written by utc_text; -1 when it is not. */
static time_t utc_parse(const char *s)
{
    struct tm tm;
    const char *end;

    memset(&tm, 0, sizeof(tm));
    if (s == NULL || (end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) == NULL || *end != '\0')
        return (time_t)-1;
    return timegm(&tm);
}

static json_t *annotations_of(json_t *obj, int create)
{
    json_t *m = json_object_get(obj, "metadata"), *ann = json_object_get(m, "annotations");
    if (!json_is_object(ann) && create && json_is_object(m)) {
        ann = json_object();
        json_object_set_new(m, "annotations", ann);
    }
    return json_is_object(ann) ? ann : NULL;
}

/* Another run's claim on `ns` as it reads in messages; 1 when that claim stands at `now`
 * (unexpired, or unreadable: nobody can tell when it ends), 0 when it has expired, -1 when
 * there is none or it is `holder`'s own. */
static int lease_other(const json_t *ns, const char *holder, time_t now, char *buf, size_t n)
{
    const json_t *ann = json_object_get(json_object_get(ns, "metadata"), "annotations");
    json_t *cur;
    time_t until;
    int readable, live;

    if (json_object_get(ann, LEASE_ANNOTATION) == NULL)
        return -1;
    cur = json_loads(str(ann, LEASE_ANNOTATION), 0, NULL);
    if (strcmp(str(cur, "holder"), holder) == 0) {
        json_decref(cur);
        return -1;
    }
    until = utc_parse(str(cur, "expires"));
    readable = str(cur, "holder")[0] != '\0' && until != (time_t)-1;
    live = !readable || until > now;
    if (readable)
        snprintf(buf, n, "%s (to \"%s\", since %s; its lease ends %s)", str(cur, "holder"), str(cur, "to"),
                 str(cur, "acquired"), str(cur, "expires"));
    else
        snprintf(buf, n, "another run (unreadable lease)");
    json_decref(cur);
    return live;
}

/* Take (or, renewing, extend) this run's lease on a namespace: expires = now + duration. */
static wh_code lease_take(json_t *ns, void *vctx, int *unchanged, wh_err *err)
{
    lease_ctx *l = vctx;
    json_t *ann = annotations_of(ns, 1), *cur, *mine;
    char acquired[32], expires[32], other[512];
    int claim;

    (void)unchanged;
    if (ann == NULL)
        return wh_err_set(err, WH_E_INVALID, "namespace %s has no metadata", l->ns);
    claim = lease_other(ns, l->holder, l->now, other, sizeof(other));
    /* not CONFLICT below: update_retry would retry it */
    if (l->renewing && claim >= 0)
        return wh_err_set(err, WH_E_INVALID, "its lease was taken over by %s", other);
    if (l->renewing && json_object_get(ann, LEASE_ANNOTATION) == NULL)
        return wh_err_set(err, WH_E_INVALID,
                          "its lease was removed (by a run that took it over with --force and finished, or by hand)");
    if (claim == 1 && !l->force)
        return wh_err_set(err, WH_E_INVALID,
                          "namespace %s is being migrated by %s. Wait for that run to finish; if it is gone (killed), "
                          "run again with --force to take the namespace over",
                          l->ns, other);
    if (!l->renewing) {
        /* the plan (and the answer to its question) was made on the labels read before; someone
         * relabelling the namespace since (kubectl label, another tool) must not be overwritten */
        const char *was = json_string_value(json_object_get(l->planned, l->ns));
        wh_buf now = WH_BUF_INIT;
        wh_code rc = WH_OK;
        label_text(json_object_get(json_object_get(ns, "metadata"), "labels"), &now);
        if (was != NULL && strcmp(was, now.data) != 0)
            rc = wh_err_set(err, WH_E_INVALID,
                            "namespace %s was relabelled after the plan was made: it was %s, it is now %s. Run the "
                            "same command again to plan with its labels as they are now",
                            l->ns, was, now.data);
        wh_buf_free(&now);
        if (rc != WH_OK)
            return rc;
    }
    cur = json_loads(str(ann, LEASE_ANNOTATION), 0, NULL);
    if (l->renewing)
        snprintf(acquired, sizeof(acquired), "%s", str(cur, "acquired"));
    else
        utc_text(l->now, acquired, sizeof(acquired));
    json_decref(cur);
    utc_text(l->now + (time_t)l->duration_s, expires, sizeof(expires));
    mine =
        json_pack("{s:s, s:s, s:s, s:s}", "holder", l->holder, "to", l->to, "acquired", acquired, "expires", expires);
    {
        char *dump = json_dumps(mine, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_object_set_new(ann, LEASE_ANNOTATION, json_string(dump != NULL ? dump : "{}"));
        free(dump);
    }
    json_decref(mine);
    return WH_OK;
}

static wh_code lease_drop(json_t *ns, void *vctx, int *unchanged, wh_err *err)
{
    lease_ctx *l = vctx;
    json_t *ann = annotations_of(ns, 0), *cur = json_loads(str(ann, LEASE_ANNOTATION), 0, NULL);

    (void)err;
    if (strcmp(str(cur, "holder"), l->holder) == 0)
        json_object_del(ann, LEASE_ANNOTATION);
    else
        *unchanged = 1; /* gone, or taken over with --force: not ours to remove */
    json_decref(cur);
    return WH_OK;
}

/* Who this run is, for the lease and the messages of the runs it blocks. */
static void lease_holder(char *buf, size_t n)
{
    char host[256] = "";
    const char *user = getenv("USER");

    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
        snprintf(host, sizeof(host), "unknown-host");
    snprintf(buf, n, "webhookctl %s@%s pid %ld", user != NULL && user[0] ? user : "unknown", host, (long)getpid());
}

static long long lease_interval_ms(const lease_ctx *l)
{
    return l->duration_s * 1000 / 3;
}

static int lease_lost(const lease_ctx *l, const char *ns)
{
    return l->lost != NULL && json_object_get(l->lost, ns) != NULL;
}

/* Release the leases of the first `n` namespaces of `chosen` (best effort: a
 * lease left behind expires). */
static void lease_release_all(wh_kube_client *c, lease_ctx *l, const json_t *chosen, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wh_err err = {0};
        l->ns = json_string_value(json_array_get(chosen, i));
        if (lease_lost(l, l->ns))
            continue;
        if (wh_kube_update_retry(c, &wh_kube_namespaces, NULL, l->ns, lease_drop, l, "webhookctl", NULL, &err) != WH_OK)
            fprintf(stderr, "Warning: cannot release the migration lease of namespace %s (it expires by itself): %s\n",
                    l->ns, wh_err_msg(&err));
    }
}

/* Claim every chosen namespace; on a refusal or an interruption release what was taken;
 * 0 or 1 after the error. */
static int lease_acquire_all(wh_kube_client *c, lease_ctx *l, const json_t *chosen)
{
    l->now = time(NULL);
    l->next_renewal_ms = now_ms() + lease_interval_ms(l);
    for (size_t i = 0; i < json_array_size(chosen); i++) {
        wh_err err = {0};
        if (interrupted) {
            lease_release_all(c, l, chosen, i);
            fprintf(stderr, "Interrupted before any change: the leases taken were released. Nothing was changed.\n");
            return 1;
        }
        l->ns = json_string_value(json_array_get(chosen, i));
        if (wh_kube_update_retry(c, &wh_kube_namespaces, NULL, l->ns, lease_take, l, "webhookctl", NULL, &err) !=
            WH_OK) {
            wh_ctl_fail("%s\nNothing was changed.", wh_err_msg(&err));
            lease_release_all(c, l, chosen, i);
            return 1;
        }
    }
    return 0;
}

/* Renew the lease on `ns` now; 0 while it is this run's (a renewal that could not be
 * written counts: it is retried next time), 1 when it was lost: that is said at once and
 * the namespace's work stops. */
static int lease_renew(wh_kube_client *c, lease_ctx *l, const char *ns)
{
    wh_err err = {0};
    wh_code rc;

    if (lease_lost(l, ns))
        return 1;
    l->ns = ns;
    l->now = time(NULL);
    l->renewing = 1;
    rc = wh_kube_update_retry(c, &wh_kube_namespaces, NULL, ns, lease_take, l, "webhookctl", NULL, &err);
    l->renewing = 0;
    if (rc == WH_OK)
        return 0;
    if (rc != WH_E_INVALID && rc != WH_E_NOTFOUND) {
        fprintf(stderr, "Warning: cannot renew the migration lease of namespace %s (retried in %llds): %s\n", ns,
                (lease_interval_ms(l) + 999) / 1000, wh_err_msg(&err));
        return 0;
    }
    if (l->lost == NULL)
        l->lost = json_object();
    json_object_set_new(l->lost, ns, json_string(wh_err_msg(&err)));
    fprintf(stderr,
            "Error: namespace %s: this run lost its migration lease: %s. Stopped working on namespace %s: the run "
            "holding it now migrates it (or, once that run is gone, run the same command again to resume).\n",
            ns, wh_err_msg(&err), ns);
    fflush(stderr);
    return 1;
}

/* Renew every lease still held when a renewal is due. */
static void lease_tick(wh_kube_client *c, lease_ctx *l, const json_t *chosen)
{
    size_t i;
    json_t *v;

    if (now_ms() < l->next_renewal_ms)
        return;
    json_array_foreach(chosen, i, v) lease_renew(c, l, json_string_value(v));
    l->next_renewal_ms = now_ms() + lease_interval_ms(l);
}

/* Sleep up to `ms`, but not past the next renewal. */
static void lease_sleep(const lease_ctx *l, long ms)
{
    long long until_renewal = l->next_renewal_ms - now_ms();

    if (until_renewal < ms)
        ms = until_renewal < 10 ? 10 : (long)until_renewal;
    usleep((useconds_t)ms * 1000);
}

/* --dry-run: which leases the run would take, and which other runs' leases would refuse it
 * (0) or it would take over (--force; expired ones); 1 when one would refuse it. */
static int lease_preview(const wh_ctl_args *a, const inv_cluster *cl, const json_t *chosen, const char *holder)
{
    char d[32], every[32], other[512];
    size_t i;
    json_t *v;
    int blocked = 0, force = wh_ctl_bool(a, "force");

    duration_text(wh_ctl_duration_ns(a, "lease-duration"), d, sizeof(d));
    duration_text(wh_ctl_duration_ns(a, "lease-duration") / 3, every, sizeof(every));
    printf("Leases (annotation %s; each lasts %s, renewed every %s while the run lasts):\n", LEASE_ANNOTATION, d,
           every);
    json_array_foreach(chosen, i, v)
    {
        const char *name = json_string_value(v);
        const json_t *ns = NULL, *e;
        size_t k;
        json_array_foreach(cl->namespaces, k, e) if (strcmp(meta(e, "name"), name) == 0) ns = e;
        switch (lease_other(ns, holder, time(NULL), other, sizeof(other))) {
        case 1:
            if (force) {
                printf("  namespace %s: would take it over from %s (--force)\n", name, other);
                break;
            }
            printf("  namespace %s: held by %s: the run would be refused here (--force takes it over)\n", name, other);
            blocked = 1;
            break;
        case 0:
            printf("  namespace %s: would take it (the lease of %s has expired)\n", name, other);
            break;
        default:
            printf("  namespace %s: would take it\n", name);
        }
    }
    return blocked;
}

/* ---- migrate ----------------------------------------------------------------------- */

/* LEFT: lease lost; GONE: the workload was deleted since the plan (nothing left to restart) */
typedef enum { JOB_PENDING, JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_LEFT, JOB_GONE } job_state;

typedef struct job {
    const char *kind, *ns, *name; /* borrowed from the plan */
    const char *running;          /* the revision(s) its pods run now, for messages */
    size_t pods;
    job_state state;
    long long started;
    int resumed;    /* the rollout for this revision was already under way */
    char msg[512];  /* last rollout-status message */
    char note[256]; /* why it cannot be restarted (plan), "" if it can */
} job;

typedef struct migrate_plan {
    const char *to, *target_rev;
    json_t *relabel;  /* [{name, from, patch}] namespaces to relabel */
    json_t *already;  /* namespaces already on --to */
    json_t *restarts; /* needsRestart entries of the chosen namespaces, after relabelling */
    job *jobs;
    size_t njobs, nmanual;
} migrate_plan;

static void plan_free(migrate_plan *p)
{
    json_decref(p->relabel);
    json_decref(p->already);
    json_decref(p->restarts);
    free(p->jobs);
}

/* Which namespaces to relabel; 0, or an exit status after the message. */
static int choose_namespaces(const wh_ctl_args *a, inv_cluster *cl, migrate_plan *p, json_t *chosen)
{
    size_t nwanted, i, j;
    const char *const *wanted = wh_ctl_strings(a, "namespace", &nwanted);
    json_t *ns;

    for (i = 0; i < nwanted; i++) {
        const json_t *labels = inv_namespace_labels(cl, wanted[i]);
        const char *inj = json_string_value(json_object_get(labels, INJECTION_LABEL));
        int dup = 0;
        for (j = 0; j < i; j++)
            dup |= strcmp(wanted[j], wanted[i]) == 0;
        if (dup)
            continue;
        if (labels == NULL)
            return wh_ctl_fail("namespace \"%s\" not found", wanted[i]);
        if (inj != NULL && strcmp(inj, "enabled") != 0)
            return wh_ctl_fail(
                "namespace \"%s\" is labelled %s=%s: injection is switched off there. Migrating it would "
                "switch it on; if that is what you want, remove the label first (kubectl label namespace %s "
                "%s-)",
                wanted[i], INJECTION_LABEL, inj, wanted[i], INJECTION_LABEL);
        json_array_append_new(chosen, json_string(wanted[i]));
    }
    if (!wh_ctl_bool(a, "all-namespaces"))
        return 0;
    json_array_foreach(cl->namespaces, i, ns)
    {
        const char *inj = diag_label(ns, INJECTION_LABEL), *rev = diag_label(ns, REV_LABEL);
        if (inj != NULL ? strcmp(inj, "enabled") == 0 : rev != NULL)
            json_array_append_new(chosen, json_string(meta(ns, "name")));
    }
    (void)p;
    return 0;
}

static int cmp_jobs(const void *x, const void *y)
{
    const job *a = x, *b = y;
    int r = strcmp(a->ns, b->ns);
    if (r == 0)
        r = strcmp(a->kind, b->kind);
    return r != 0 ? r : strcmp(a->name, b->name);
}

/* The workloads to restart: one job per owner of a pod in needsRestart. */
static void plan_jobs(const inv_cluster *cl, migrate_plan *p)
{
    size_t i, n = json_array_size(p->restarts);
    json_t *e;

    p->jobs = wh_calloc(n > 0 ? n : 1, sizeof(*p->jobs));
    json_array_foreach(p->restarts, i, e)
    {
        const char *owner = str(e, "owner"), *slash = strchr(owner, '/');
        job *j = NULL;
        for (size_t k = 0; slash != NULL && k < p->njobs && j == NULL; k++) {
            const job *o = &p->jobs[k];
            if (strcmp(o->ns, str(e, "namespace")) == 0 && strlen(o->kind) == (size_t)(slash - owner) &&
                strncmp(o->kind, owner, (size_t)(slash - owner)) == 0 && strcmp(o->name, slash + 1) == 0)
                j = &p->jobs[k];
        }
        if (j == NULL) {
            j = &p->jobs[p->njobs++];
            j->ns = str(e, "namespace");
            j->running = str(e, "running");
            if (slash == NULL) {
                j->kind = "Pod";
                j->name = str(e, "pod");
            } else {
                /* kind and name point into the entry's owner string: split it in a copy kept by the plan */
                json_t *k = json_stringn(owner, (size_t)(slash - owner));
                json_object_set_new(e, "ownerKind", k);
                j->kind = json_string_value(k);
                j->name = slash + 1;
            }
        }
        j->pods++;
    }
    qsort(p->jobs, p->njobs, sizeof(*p->jobs), cmp_jobs);
    for (i = 0; i < p->njobs; i++) {
        job *j = &p->jobs[i];
        const wh_kube_resource *r = workload_resource(j->kind);
        wh_buf key = WH_BUF_INIT;
        const json_t *w, *spec;
        const char *strategy;
        wh_buf_printf(&key, "%s/%s/%s", j->kind, j->ns, j->name);
        w = json_object_get(cl->index, key.data);
        wh_buf_free(&key);
        spec = json_object_get(w, "spec");
        strategy = str(json_object_get(spec, "updateStrategy"), "type");
        if (r == NULL)
            snprintf(j->note, sizeof(j->note),
                     "no Deployment, StatefulSet or DaemonSet controls it: delete the pod%s "
                     "yourself once its controller recreates pods (or recreate it)",
                     j->pods == 1 ? "" : "s");
        else if (w == NULL)
            snprintf(j->note, sizeof(j->note), "%s not found", j->kind);
        else if (json_is_true(json_object_get(spec, "paused")))
            snprintf(j->note, sizeof(j->note),
                     "the deployment is paused: resume it first (kubectl -n %s rollout "
                     "resume deployment/%s)",
                     j->ns, j->name);
        else if (strcmp(j->kind, "Deployment") != 0 && strategy[0] != '\0' && strcmp(strategy, "RollingUpdate") != 0)
            snprintf(j->note, sizeof(j->note),
                     "its updateStrategy is %s: a restart replaces no pod; delete its "
                     "pods yourself",
                     strategy);
        if (j->note[0] != '\0')
            p->nmanual++;
    }
}

static void print_plan(const wh_ctl_args *a, const migrate_plan *p)
{
    size_t i, nrestart = p->njobs - p->nmanual;
    json_t *e;

    printf("Migrating to \"%s\"", p->to);
    if (strcmp(p->to, p->target_rev) != 0)
        printf(" (revision %s)", p->target_rev);
    printf(":\n");
    json_array_foreach(p->relabel, i, e)
        printf("  namespace %s: %s -> %s=%s\n", str(e, "name"), str(e, "from"), REV_LABEL, p->to);
    json_array_foreach(p->already, i, e)
        printf("  namespace %s: already %s=%s\n", json_string_value(e), REV_LABEL, p->to);
    if (!wh_ctl_bool(a, "restart")) {
        if (json_array_size(p->restarts) > 0)
            printf("%zu pod%s in these namespaces will still run another revision until restarted (run again with "
                   "--restart, or restart them yourself).\n",
                   json_array_size(p->restarts), json_array_size(p->restarts) == 1 ? "" : "s");
        return;
    }
    if (nrestart == 0)
        printf("No workload to restart: no pod in these namespaces runs another revision.\n");
    else
        printf("Workloads to restart, one at a time%s (their pods run another revision):\n",
               wh_ctl_int(a, "parallel") > 1 ? " or in parallel" : "");
    for (i = 0; i < p->njobs; i++)
        if (p->jobs[i].note[0] == '\0')
            printf("  %s %s/%s (%zu pod%s on %s)\n", p->jobs[i].kind, p->jobs[i].ns, p->jobs[i].name, p->jobs[i].pods,
                   p->jobs[i].pods == 1 ? "" : "s", p->jobs[i].running);
    if (p->nmanual > 0) {
        printf("Not restarted (do it yourself):\n");
        for (i = 0; i < p->njobs; i++)
            if (p->jobs[i].note[0] != '\0')
                printf("  %s %s/%s: %s\n", p->jobs[i].kind, p->jobs[i].ns, p->jobs[i].name, p->jobs[i].note);
    }
}

/* Relabel the chosen namespaces whose lease is still this run's (renewed when due),
 * stopping between namespaces when interrupted; 0 or 1. */
static int relabel(wh_kube_client *c, const migrate_plan *p, lease_ctx *l, const json_t *chosen, size_t *done)
{
    size_t i;
    json_t *e;

    json_array_foreach(p->relabel, i, e)
    {
        wh_err err = {0};
        if (interrupted) {
            fprintf(stderr,
                    "Interrupted: %zu of %zu namespaces relabelled (each whole: its label change is one patch); no "
                    "workload was restarted. Run the same command again to continue.\n",
                    *done, json_array_size(p->relabel));
            return 1;
        }
        lease_tick(c, l, chosen);
        if (lease_lost(l, str(e, "name")))
            continue;
        if (wh_kube_patch(c, &wh_kube_namespaces, NULL, str(e, "name"), WH_KUBE_PATCH_MERGE,
                          json_object_get(e, "patch"), "webhookctl", 0, NULL, &err) != WH_OK) {
            wh_ctl_fail(
                "cannot relabel namespace %s: %s\n%zu of %zu namespaces were relabelled; run the same command again "
                "to continue",
                str(e, "name"), wh_err_msg(&err), *done, json_array_size(p->relabel));
            return 1;
        }
        (*done)++;
        printf("namespace %s relabelled: %s=%s%s\n", str(e, "name"), REV_LABEL, p->to,
               strstr(str(e, "from"), INJECTION_LABEL) != NULL ? " (istio-injection removed)" : "");
    }
    return 0;
}

/* Restart one workload the way `kubectl rollout restart` does, unless a
 * restart for this revision is already rolling out (a resumed run). */
static int start_job(wh_kube_client *c, const migrate_plan *p, job *j, size_t k, size_t total)
{
    const wh_kube_resource *r = workload_resource(j->kind);
    json_t *obj = NULL, *patch;
    wh_err err = {0};
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    const char *prev;
    wh_code rc;

    j->started = now_ms();
    j->state = JOB_RUNNING;
    if ((rc = wh_kube_get(c, r, j->ns, j->name, &obj, &err)) != WH_OK)
        goto failed;
    prev = str(json_object_get(json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "metadata"),
                               "annotations"),
               RESTARTED_FOR);
    if (strcmp(prev, p->target_rev) == 0 && rollout_status(j->kind, obj, j->msg, sizeof(j->msg)) == RO_WAIT) {
        j->resumed = 1;
        printf("[%zu/%zu] %s %s/%s: a restart for revision %s is already rolling out; waiting for it\n", k, total,
               j->kind, j->ns, j->name, p->target_rev);
        json_decref(obj);
        return 0;
    }
    json_decref(obj);
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    patch = json_pack("{s:{s:{s:{s:{s:s, s:s}}}}}", "spec", "template", "metadata", "annotations", RESTARTED_AT, stamp,
                      RESTARTED_FOR, p->target_rev);
    rc = wh_kube_patch(c, r, j->ns, j->name, WH_KUBE_PATCH_STRATEGIC, patch, "webhookctl", 0, NULL, &err);
    json_decref(patch);
    if (rc != WH_OK)
        goto failed;
    printf("[%zu/%zu] %s %s/%s restarted\n", k, total, j->kind, j->ns, j->name);
    fflush(stdout);
    return 0;
failed:
    if (rc == WH_E_NOTFOUND) {
        j->state = JOB_GONE;
        printf("[%zu/%zu] %s %s/%s: deleted since the plan was made; nothing to restart\n", k, total, j->kind, j->ns,
               j->name);
        return 0;
    }
    snprintf(j->msg, sizeof(j->msg), "cannot restart: %s", wh_err_msg(&err));
    j->state = JOB_FAILED;
    return 1;
}

/* Poll a running job once: done, failed (error or timeout) or still waiting. */
static void poll_job(wh_kube_client *c, job *j, long long timeout_ms)
{
    json_t *obj = NULL;
    wh_err err = {0};
    char msg[512];
    ro_state s;
    wh_code rc;

    if ((rc = wh_kube_get(c, workload_resource(j->kind), j->ns, j->name, &obj, &err)) == WH_E_NOTFOUND) {
        printf("    %s %s/%s: deleted while it rolled out; nothing left to wait for\n", j->kind, j->ns, j->name);
        j->state = JOB_GONE;
        return;
    }
    if (rc != WH_OK) {
        snprintf(j->msg, sizeof(j->msg), "%s", wh_err_msg(&err));
        j->state = JOB_FAILED;
        return;
    }
    s = rollout_status(j->kind, obj, msg, sizeof(msg));
    if (s == RO_WAIT)
        add_replica_failure(obj, msg, sizeof(msg));
    json_decref(obj);
    if (s == RO_WAIT && strcmp(msg, j->msg) != 0)
        printf("    %s/%s: %s\n", j->ns, j->name, msg);
    snprintf(j->msg, sizeof(j->msg), "%s", msg);
    if (s == RO_DONE)
        j->state = JOB_DONE;
    else if (s == RO_ERROR || now_ms() - j->started >= timeout_ms)
        j->state = JOB_FAILED;
}

static void report_failure(const migrate_plan *p, const job *j, long long timeout_ns, size_t ok, size_t failed,
                           size_t not_started)
{
    char d[32];

    duration_text(timeout_ns, d, sizeof(d));
    if (now_ms() - j->started >= timeout_ns / 1000000)
        fprintf(stderr, "Error: %s %s/%s did not finish rolling out within %s (--timeout): %s\n", j->kind, j->ns,
                j->name, d, j->msg);
    else
        fprintf(stderr, "Error: %s %s/%s failed to roll out: %s\n", j->kind, j->ns, j->name, j->msg);
    fprintf(stderr,
            "Stopped at the first failed rollout: %zu workload%s restarted, %zu failed, %zu not started.\n"
            "  To resume: find the cause (kubectl -n %s describe %s %s; kubectl -n %s get pods), fix it, and run the "
            "same command again: namespaces already relabelled and workloads already on revision %s are skipped, and "
            "a rollout still under way is waited for, not restarted again.\n"
            "  To roll back this workload: kubectl -n %s rollout undo %s/%s (while namespace %s selects \"%s\" its "
            "new pods still get revision %s: to return to %s, relabel it first: kubectl label namespace %s %s=%s "
            "--overwrite).\n",
            ok, ok == 1 ? "" : "s", failed, not_started, j->ns, j->kind, j->name, j->ns, p->target_rev, j->ns, j->kind,
            j->name, j->ns, p->to, p->target_rev, j->running, j->ns, REV_LABEL, j->running);
}

/* Restart the jobs, `parallel` at a time, stopping at the first failure.  The lease of a
 * namespace is renewed before its rollouts start and on lease_tick's schedule while they are
 * waited for; a namespace whose lease is lost is left: its jobs not started yet stay so, its
 * rollouts under way are no longer waited for. */
static int restart_all(wh_kube_client *c, migrate_plan *p, lease_ctx *l, const json_t *chosen, long long parallel,
                       long long timeout_ns, size_t *restarted)
{
    size_t total = p->njobs - p->nmanual, next = 0, running = 0, k = 0, failed = 0, ok = 0;
    long poll_ms = POLL_FIRST_MS;
    const char *renewed = NULL; /* the namespace whose lease was renewed before its rollouts */
    job *first_failed = NULL;

    for (;;) {
        while (first_failed == NULL && !interrupted && running < (size_t)parallel && next < p->njobs) {
            job *j = &p->jobs[next++];
            if (j->note[0] != '\0')
                continue;
            if (renewed == NULL || strcmp(renewed, j->ns) != 0)
                lease_renew(c, l, renewed = j->ns);
            if (lease_lost(l, j->ns)) {
                j->state = JOB_LEFT;
                continue;
            }
            k++;
            poll_ms = POLL_FIRST_MS;
            if (start_job(c, p, j, k, total) != 0) {
                failed++;
                first_failed = j;
            } else if (j->state == JOB_RUNNING) {
                running++;
            }
        }
        if (running == 0 || interrupted)
            break;
        lease_sleep(l, poll_ms);
        poll_ms = poll_ms * 2 > POLL_MAX_MS ? POLL_MAX_MS : poll_ms * 2;
        lease_tick(c, l, chosen);
        for (size_t i = 0; i < p->njobs; i++) {
            job *j = &p->jobs[i];
            if (j->state != JOB_RUNNING)
                continue;
            if (lease_lost(l, j->ns)) {
                j->state = JOB_LEFT;
                running--;
                printf("    %s %s/%s: no longer waited for (the lease of namespace %s was lost)\n", j->kind, j->ns,
                       j->name, j->ns);
                continue;
            }
            poll_job(c, j, timeout_ns / 1000000);
            if (j->state == JOB_DONE) {
                running--;
                ok++;
                printf("    %s %s/%s: %s (%llds)\n", j->kind, j->ns, j->name, j->msg,
                       (now_ms() - j->started + 500) / 1000);
            } else if (j->state == JOB_FAILED) {
                running--;
                failed++;
                if (first_failed == NULL)
                    first_failed = j;
            } else if (j->state == JOB_GONE) {
                running--;
            }
        }
        fflush(stdout);
    }
    *restarted = ok;
    if (interrupted) {
        fprintf(stderr,
                "Interrupted: %zu workload%s restarted; rollouts under way continue without us. Run the same command "
                "again to resume (workloads already on revision %s are skipped, rollouts under way are waited for).\n",
                ok, ok == 1 ? "" : "s", p->target_rev);
        return 1;
    }
    if (first_failed != NULL) {
        size_t not_started = 0;
        for (size_t i = 0; i < p->njobs; i++)
            not_started += p->jobs[i].note[0] == '\0' && p->jobs[i].state == JOB_PENDING;
        report_failure(p, first_failed, timeout_ns, ok, failed, not_started);
        return 1;
    }
    return 0;
}

/* ---- after the migration: pods not on their revision yet --------------------------- */

/* Pods of the chosen namespaces that injection would give a proxy of revision
 * R (their namespace's or own labels select R) but that have none, or one of
 * another revision: [{namespace, pod, owner, running ("" = no sidecar),
 * selected}], by namespace (new reference). */
static json_t *laggards(const inv_cluster *cl, const json_t *chosen, const lease_ctx *l)
{
    json_t *out = json_array(), *pod, *v;
    size_t i, k;

    json_array_foreach(chosen, k, v)
    {
        const char *ns = json_string_value(v);
        if (l != NULL && lease_lost(l, ns))
            continue; /* another run's now */
        json_array_foreach(cl->pods, i, pod)
        {
            char running[256] = "", owner[512];
            const json_t *workload;
            const char *selected;
            if (strcmp(meta(pod, "namespace"), ns) != 0 || inv_pod_done(pod))
                continue;
            workload = inv_pod_owner(cl, pod, owner, sizeof(owner));
            selected = diag_injecting_revision(cl->mwcs, inv_namespace_labels(cl, ns),
                                               inv_pod_template_labels(workload, pod), NULL, NULL);
            if (selected == NULL)
                continue; /* not injected at all (opted out): nothing to lag behind */
            if (!inv_pod_revision(pod, running, sizeof(running)))
                running[0] = '\0';
            else if (strcmp(running, selected) == 0)
                continue;
            json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:s}", "namespace", ns, "pod", meta(pod, "name"),
                                                 "owner", owner, "running", running, "selected", selected));
        }
    }
    return out;
}

static void print_laggards(FILE *f, const json_t *lag)
{
    const char *last = NULL;
    json_t *e;
    size_t i;

    json_array_foreach(lag, i, e)
    {
        if (last == NULL || strcmp(last, str(e, "namespace")) != 0)
            fprintf(f, "  namespace %s:\n", last = str(e, "namespace"));
        fprintf(f, "    pod %s (%s): %s%s, its labels select %s\n", str(e, "pod"),
                str(e, "owner")[0] ? str(e, "owner") : "no controller",
                str(e, "running")[0] ? "runs revision " : "has no sidecar", str(e, "running"), str(e, "selected"));
    }
}

/* Look at the chosen namespaces' pods once, or with `wait_ns` > 0 until none
 * lags or the time is up (renewing the leases `l` meanwhile, when the run holds
 * them); 0 when none lags (or without --wait), else 1 after saying which. */
static int report_laggards(const wh_ctl_args *a, wh_kube_client *c, const json_t *chosen, lease_ctx *l,
                           long long wait_ns)
{
    long long deadline = now_ms() + wait_ns / 1000000;
    long poll_ms = POLL_FIRST_MS;
    json_t *lag = NULL;
    char d[32];
    int rc = 0;

    for (;;) {
        inv_cluster cl = {0};
        wh_err err = {0};
        json_decref(lag);
        lag = NULL;
        if (inv_load(c, wh_ctl_string(a, "istioNamespace"), &cl, &err) != WH_OK) {
            fprintf(stderr, "Warning: cannot list the pods to check them: %s\n", wh_err_msg(&err));
            return wait_ns > 0;
        }
        lag = laggards(&cl, chosen, l);
        inv_free(&cl);
        if (json_array_size(lag) == 0 || wait_ns <= 0 || interrupted || now_ms() >= deadline)
            break;
        if (l != NULL) {
            lease_sleep(l, poll_ms);
            lease_tick(c, l, chosen);
        } else {
            usleep((useconds_t)poll_ms * 1000);
        }
        poll_ms = poll_ms * 2 > POLL_MAX_MS ? POLL_MAX_MS : poll_ms * 2;
    }
    if (json_array_size(lag) == 0) {
        if (wait_ns > 0)
            printf("Every injected pod of the migrated namespaces runs the revision its labels select.\n");
    } else if (wait_ns > 0) {
        duration_text(wait_ns, d, sizeof(d));
        fprintf(stderr,
                "Error: %zu pod%s of the migrated namespaces %s not on the revision %s labels select after %s "
                "(--wait):\n",
                json_array_size(lag), json_array_size(lag) == 1 ? "" : "s", json_array_size(lag) == 1 ? "is" : "are",
                json_array_size(lag) == 1 ? "its" : "their", d);
        print_laggards(stderr, lag);
        fprintf(stderr, "  Restart them (kubectl -n NAMESPACE rollout restart KIND/NAME, or delete a pod without "
                        "controller), or look at why their new pods are not injected (webhookctl check).\n");
        rc = 1;
    } else {
        printf("Not on their revision yet (%zu pod%s; restart them, or use --restart, and --wait to wait for them):\n",
               json_array_size(lag), json_array_size(lag) == 1 ? "" : "s");
        print_laggards(stdout, lag);
    }
    json_decref(lag);
    return rc;
}

/* The Service the injector of `to` calls must exist: namespaces moved to a tag or revision
 * whose control plane is gone could create no pod, or only pods without a sidecar (istioctl's
 * IST0139 "Injector refers to a control plane service that does not exist", checked before
 * anything changes).  0, or 1 after the message. */
static int injector_installed(wh_kube_client *c, const char *to, const char *rev, const json_t *mwc)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(mwc, "webhooks"), i, e)
    {
        const json_t *ref = json_object_get(json_object_get(e, "clientConfig"), "service");
        const char *sn = str(ref, "name"), *sns = str(ref, "namespace");
        const char *what = strcmp(str(e, "failurePolicy"), "Ignore") == 0 ? "would get no sidecar"
                                                                          : "would be refused (failurePolicy Fail)";
        wh_err err = {0};
        wh_code rc;
        if (!diag_is_injector(e) || sn[0] == '\0')
            continue;
        rc = wh_kube_get(c, &wh_kube_services, sns, sn, NULL, &err);
        if (rc == WH_OK)
            return 0;
        if (rc != WH_E_NOTFOUND)
            return wh_ctl_fail("cannot check the injector Service %s/%s: %s", sns, sn, wh_err_msg(&err));
        if (strcmp(to, rev) != 0)
            return wh_ctl_fail("tag \"%s\" points to revision %s, whose injector (MutatingWebhookConfiguration %s) "
                               "calls the Service %s/%s, which does not exist: pods created in the migrated "
                               "namespaces %s. Point the tag at an installed revision first (webhookctl tag set %s "
                               "--revision REVISION --overwrite; webhookctl revision list shows them)",
                               to, rev, meta(mwc, "name"), sns, sn, what, to);
        return wh_ctl_fail("the injector of revision %s (MutatingWebhookConfiguration %s) calls the Service %s/%s, "
                           "which does not exist: pods created in the migrated namespaces %s. Install that "
                           "revision's control plane first, or migrate to another (webhookctl revision list shows "
                           "them)",
                           rev, meta(mwc, "name"), sns, sn, what);
    }
    return 0;
}

static int run_migrate(const wh_ctl_args *a)
{
    const char *to = wh_ctl_string(a, "to");
    long long parallel = wh_ctl_int(a, "parallel"), timeout_ns = wh_ctl_duration_ns(a, "timeout");
    long long lease_ns = wh_ctl_duration_ns(a, "lease-duration");
    int all = wh_ctl_bool(a, "all-namespaces"), dry = wh_ctl_bool(a, "dry-run"), restart = wh_ctl_bool(a, "restart");
    int wait = wh_ctl_bool(a, "wait"), leased = 0, handlers = 0;
    size_t nns, i, relabelled = 0, restarted = 0;
    char holder[512];
    lease_ctx lease = {0};
    struct sigaction sa, old_int, old_term;
    wh_kube_client *c = NULL;
    inv_cluster cl = {0};
    json_t *inv = NULL, *after = NULL, *chosen = json_array(), *ns_copy = NULL, *probe = NULL, *none = json_object();
    json_t *e;
    const json_t *target_mwc = NULL;
    migrate_plan p = {0};
    wh_err err = {0};
    int rc;

    lease.planned = json_object();
    wh_ctl_strings(a, "namespace", &nns);
    if (a->nargs > 0) {
        rc = wh_ctl_usage_error(a, "unexpected argument \"%s\": name namespaces with -n", a->args[0]);
        goto out;
    }
    if (to == NULL || to[0] == '\0') {
        rc = wh_ctl_usage_error(a, "required flag(s) \"to\" not set");
        goto out;
    }
    if ((nns > 0) == all) {
        rc = wh_ctl_usage_error(a, all ? "give -n NAMESPACE or --all-namespaces, not both"
                                       : "say which namespaces to migrate: -n NAMESPACE (repeatable) or "
                                         "--all-namespaces");
        goto out;
    }
    if (parallel < 1 || timeout_ns <= 0) {
        rc = wh_ctl_usage_error(a, parallel < 1 ? "--parallel must be at least 1" : "--timeout must be positive");
        goto out;
    }
    if (lease_ns < 1000000000LL) {
        rc = wh_ctl_usage_error(a, "--lease-duration must be at least 1s");
        goto out;
    }
    if (wh_kube_check_label_value(to, &err) != WH_OK) {
        rc = wh_ctl_usage_error(a, "invalid --to %s", wh_err_msg(&err));
        goto out;
    }
    if ((rc = load(a, NULL, &c, &cl, &inv)) != 0)
        goto out;
    rc = 1;
    /* what a namespace labelled istio.io/rev=<to> gets: the revision itself, or the one the tag points to */
    probe = json_pack("{s:s}", REV_LABEL, to);
    p.to = to;
    p.target_rev = diag_injecting_revision(cl.mwcs, probe, none, &target_mwc, NULL);
    if (p.target_rev == NULL) {
        wh_ctl_fail(
            "no injector serves \"%s\": it is neither an installed revision nor a revision tag (webhookctl revision "
            "list shows both)",
            to);
        goto out;
    }
    if (injector_installed(c, to, p.target_rev, target_mwc) != 0)
        goto out;
    if ((rc = choose_namespaces(a, &cl, &p, chosen)) != 0)
        goto out;
    rc = 1;
    /* the namespaces as they will be, and what their pods will then need */
    p.relabel = json_array();
    p.already = json_array();
    ns_copy = json_deep_copy(cl.namespaces);
    json_array_foreach(ns_copy, i, e)
    {
        json_t *labels = json_object_get(json_object_get(e, "metadata"), "labels"), *v;
        size_t k;
        int is_chosen = 0;
        json_array_foreach(chosen, k, v) is_chosen |= strcmp(json_string_value(v), meta(e, "name")) == 0;
        if (!is_chosen)
            continue;
        {
            wh_buf was = WH_BUF_INIT;
            label_text(labels, &was);
            json_object_set_new(lease.planned, meta(e, "name"), json_string(was.data));
            wh_buf_free(&was);
        }
        if (labels == NULL) {
            labels = json_object();
            json_object_set_new(json_object_get(e, "metadata"), "labels", labels);
        }
        if (json_object_get(labels, INJECTION_LABEL) == NULL &&
            strcmp(json_string_value(json_object_get(labels, REV_LABEL)) != NULL
                       ? json_string_value(json_object_get(labels, REV_LABEL))
                       : "",
                   to) == 0) {
            json_array_append_new(p.already, json_string(meta(e, "name")));
            continue;
        }
        {
            json_t *plabels = json_pack("{s:s}", REV_LABEL, to);
            if (json_object_get(labels, INJECTION_LABEL) != NULL)
                json_object_set_new(plabels, INJECTION_LABEL, json_null());
            json_array_append_new(p.relabel, json_pack("{s:s, s:O, s:{s:{s:o}}}", "name", meta(e, "name"), "from",
                                                       json_object_get(lease.planned, meta(e, "name")), "patch",
                                                       "metadata", "labels", plabels));
        }
        json_object_del(labels, INJECTION_LABEL);
        json_object_set_new(labels, REV_LABEL, json_string(to));
    }
    {
        inv_cluster future = cl;
        future.namespaces = ns_copy;
        after = inv_build(&future, NULL);
    }
    p.restarts = json_array();
    json_array_foreach(json_object_get(after, "needsRestart"), i, e)
    {
        json_t *v;
        size_t k;
        json_array_foreach(chosen, k, v) if (strcmp(json_string_value(v), str(e, "namespace")) == 0)
            json_array_append(p.restarts, e);
    }
    plan_jobs(&cl, &p);
    if (json_array_size(p.relabel) == 0 && (!restart || p.njobs == p.nmanual)) {
        print_plan(a, &p);
        printf("Nothing to do.\n");
        fflush(stdout);
        rc = dry ? 0 : report_laggards(a, c, chosen, NULL, wait ? timeout_ns : 0);
        goto out;
    }
    print_plan(a, &p);
    lease_holder(holder, sizeof(holder));
    if (dry) {
        int blocked = lease_preview(a, &cl, chosen, holder);
        printf("Dry run: nothing was changed.\n");
        rc = blocked ? wh_ctl_fail("the migration would be refused: another run holds a namespace (listed above); "
                                   "wait for it to finish, or use --force if it is gone")
                     : 0;
        goto out;
    }
    if (!confirmed(a, &rc))
        goto out;
    lease.holder = holder;
    lease.to = to;
    lease.force = wh_ctl_bool(a, "force");
    lease.duration_s = (lease_ns + 999999999LL) / 1000000000LL;
    /* From the first lease on, an interruption releases them (on_interrupt). */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    handlers = 1;
    if (lease_acquire_all(c, &lease, chosen) != 0)
        goto out;
    leased = 1;
    if (relabel(c, &p, &lease, chosen, &relabelled) != 0)
        goto out;
    if (restart && restart_all(c, &p, &lease, chosen, parallel, timeout_ns, &restarted) != 0)
        goto out;
    printf("Done: %zu namespace%s relabelled, %zu already on \"%s\"", relabelled, relabelled == 1 ? "" : "s",
           json_array_size(p.already), to);
    if (restart)
        printf("; %zu workload%s restarted onto revision %s", restarted, restarted == 1 ? "" : "s", p.target_rev);
    if (restart && p.nmanual > 0)
        printf("; %zu left to restart by hand (listed above)", p.nmanual);
    printf(".\n");
    fflush(stdout);
    rc = report_laggards(a, c, chosen, &lease, wait ? timeout_ns : 0);
    if (lease.lost != NULL && json_object_size(lease.lost) > 0) {
        const char *ns;
        json_t *why;
        fprintf(stderr, "Error: this run lost its lease on %zu namespace%s and stopped working there:\n",
                json_object_size(lease.lost), json_object_size(lease.lost) == 1 ? "" : "s");
        json_object_foreach(lease.lost, ns, why) fprintf(stderr, "  namespace %s: %s\n", ns, json_string_value(why));
        fprintf(stderr, "  The run holding a namespace now migrates it; once it is gone, run the same command again "
                        "to resume there.\n");
        rc = 1;
    }
out:
    if (leased)
        lease_release_all(c, &lease, chosen, json_array_size(chosen));
    if (handlers) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (interrupted)
            rc = 130;
    }
    json_decref(lease.lost);
    json_decref(lease.planned);
    plan_free(&p);
    json_decref(after);
    json_decref(ns_copy);
    json_decref(chosen);
    json_decref(probe);
    json_decref(none);
    json_decref(inv);
    inv_free(&cl);
    wh_kube_client_free(c);
    return rc;
}

/* ---- remove -------------------------------------------------------------------------- */

/* Objects of the revision that istiod's uninstall would remove: labelled
 * istio.io/rev=<rev> (not tags), webhookd's injectors excepted. */
static void print_istiod_leftovers(wh_kube_client *c, const char *istio_ns, const char *rev)
{
    static const struct {
        const wh_kube_resource *r;
        int in_istio_ns;
    } kinds[] = {{&wh_kube_mutating_webhooks, 0},
                 {&wh_kube_validating_webhooks, 0},
                 {&wh_kube_deployments, 1},
                 {&wh_kube_services, 1},
                 {&wh_kube_configmaps, 1}};
    wh_buf sel = WH_BUF_INIT;
    char release[256] = "";
    json_t *found = json_array(), *it;
    size_t i, j;

    wh_buf_printf(&sel, "%s=%s,!%s", REV_LABEL, rev, TAG_LABEL);
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        json_t *items = NULL;
        wh_err err = {0};
        if (wh_kube_list(c, kinds[i].r, kinds[i].in_istio_ns ? istio_ns : NULL, sel.data, &items, &err) != WH_OK) {
            json_array_append_new(found, json_sprintf("(%ss not listed: %s)", kinds[i].r->kind, wh_err_msg(&err)));
            continue;
        }
        json_array_foreach(items, j, it)
        {
            const char *rel =
                str(json_object_get(json_object_get(it, "metadata"), "annotations"), "meta.helm.sh/release-name");
            if (diag_is_webhookd(it)) /* webhookd's own objects are not istiod's leftovers */
                continue;
            json_array_append_new(found,
                                  json_sprintf("%s %s%s%s", kinds[i].r->kind, kinds[i].in_istio_ns ? istio_ns : "",
                                               kinds[i].in_istio_ns ? "/" : "", meta(it, "name")));
            if (release[0] == '\0' && rel[0] != '\0')
                snprintf(release, sizeof(release), "%s", rel);
        }
        json_decref(items);
    }
    if (json_array_size(found) > 0) {
        printf("Revision %s is istiod's, and its control plane is still installed. Uninstalling it removes:\n", rev);
        json_array_foreach(found, i, it) printf("  %s\n", json_string_value(it));
        printf("  and the rest of that installation (ServiceAccount, RBAC, autoscaler, disruption budget).\n"
               "Uninstall it with:\n  istioctl uninstall --revision %s\n",
               rev);
        if (release[0] != '\0')
            printf("or, as it was installed with Helm:\n  helm uninstall %s -n %s\n", release, istio_ns);
        else
            printf("or, if you installed it with Helm:\n  helm uninstall <release> -n %s   (helm list -n %s shows "
                   "it)\n",
                   istio_ns, istio_ns);
    }
    json_decref(found);
    wh_buf_free(&sel);
}

/* Workloads outside `nss` (the namespaces already listed) whose pod template selects the
 * revision, directly or through a tag (pod label istio.io/rev in a namespace without an
 * injection label), and none of whose pods is in `pods`: scaled to zero, or running another
 * revision until their next restart.  Their next pods would lose the sidecar once the
 * revision is gone.  ["Kind ns/name"] (new reference). */
static json_t *workloads_selecting(const inv_cluster *cl, const char *name, const json_t *nss, const json_t *pods)
{
    const json_t *lists[] = {cl->deployments, cl->statefulsets, cl->daemonsets};
    const char *kinds[] = {"Deployment", "StatefulSet", "DaemonSet"};
    json_t *out = json_array(), *w, *it;
    size_t k, i, j;

    for (k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
        json_array_foreach(lists[k], i, w)
        {
            const char *ns = meta(w, "namespace"), *sel;
            char owner[512];
            int listed = 0;
            snprintf(owner, sizeof(owner), "%s/%s", kinds[k], meta(w, "name"));
            json_array_foreach(nss, j, it) listed |= strcmp(str(it, "name"), ns) == 0;
            json_array_foreach(pods, j, it) listed |=
                strcmp(str(it, "namespace"), ns) == 0 && strcmp(str(it, "owner"), owner) == 0;
            sel = listed ? NULL
                         : diag_injecting_revision(cl->mwcs, inv_namespace_labels(cl, ns),
                                                   inv_pod_template_labels(w, NULL), NULL, NULL);
            if (sel != NULL && strcmp(sel, name) == 0)
                json_array_append_new(out, json_sprintf("%s %s/%s", kinds[k], ns, meta(w, "name")));
        }
    }
    return out;
}

static int run_remove(const wh_ctl_args *a)
{
    wh_kube_client *c = NULL;
    inv_cluster cl = {0};
    json_t *inv = NULL, *nss = NULL, *pods = NULL, *workloads = NULL, *mwcs = NULL, *it, *v;
    const json_t *rev;
    const char *name, *istio_ns = wh_ctl_string(a, "istioNamespace");
    size_t i, j, ntags;
    int rc, helm_managed = 0;

    if (a->nargs != 1)
        return wh_ctl_usage_error(a, a->nargs == 0 ? "must provide a revision to remove"
                                                   : "must provide a single revision to remove");
    if (wh_ctl_changed(a, "namespace"))
        return wh_ctl_usage_error(a, "remove looks at every namespace: -n is not accepted");
    mwcs = json_array();
    name = a->args[0];
    if ((rc = load(a, NULL, &c, &cl, &inv)) != 0)
        goto out;
    rc = 1;
    if ((rev = inv_find_revision(inv, name)) == NULL) {
        wh_ctl_fail(
            "revision \"%s\" not found: no injector ConfigMap, injector webhook, tag or pod names it (webhookctl "
            "revision list shows the revisions)",
            name);
        goto out;
    }
    nss = namespace_details(&cl, rev, NULL);
    pods = pods_running(&cl, name, NULL);
    workloads = workloads_selecting(&cl, name, nss, pods);
    if (json_array_size(nss) > 0 || json_array_size(pods) > 0 || json_array_size(workloads) > 0) {
        fprintf(stderr, "Error: cannot remove revision \"%s\": it is still in use by\n", name);
        json_array_foreach(nss, i, it) fprintf(stderr, "  namespace %s (%s)\n", str(it, "name"), str(it, "labels"));
        json_array_foreach(json_object_get(rev, "tags"), i, v)
        {
            wh_buf users = WH_BUF_INIT;
            json_array_foreach(cl.namespaces, j, it)
            {
                const char *label = diag_label(it, REV_LABEL);
                if (label != NULL && strcmp(label, json_string_value(v)) == 0)
                    wh_buf_printf(&users, "%s%s", users.len > 0 ? "," : "", meta(it, "name"));
            }
            if (users.len > 0)
                fprintf(stderr, "  tag %s (namespaces %s)\n", json_string_value(v), users.data);
            wh_buf_free(&users);
        }
        json_array_foreach(pods, i, it)
        {
            if (i == 20) {
                fprintf(stderr, "  ... and %zu more pods\n", json_array_size(pods) - 20);
                break;
            }
            fprintf(stderr, "  pod %s/%s%s%s%s\n", str(it, "namespace"), str(it, "pod"),
                    str(it, "owner")[0] ? " (" : "", str(it, "owner"), str(it, "owner")[0] ? ")" : "");
        }
        json_array_foreach(workloads, i, it) fprintf(
            stderr, "  %s (its pod template's labels select it: change them, or its next pods get no sidecar)\n",
            json_string_value(it));
        fprintf(stderr, "Move them to another revision first: point the tags elsewhere (webhookctl tag set TAG "
                        "--revision NEW --overwrite), relabel the namespaces and restart their workloads (webhookctl "
                        "revision migrate --to NEW --all-namespaces --restart), then run this again.\n");
        goto out;
    }
    /* what webhookd serves for it: its injector configurations; and the tags nobody uses any more */
    json_array_foreach(cl.mwcs, i, it)
    {
        const char *r = diag_label(it, REV_LABEL);
        if (r != NULL && strcmp(r, name) == 0 && diag_label(it, TAG_LABEL) == NULL && diag_is_webhookd(it)) {
            json_array_append(mwcs, it);
            helm_managed |=
                strcmp(str(json_object_get(json_object_get(it, "metadata"), "labels"), "app.kubernetes.io/managed-by"),
                       "Helm") == 0;
        }
    }
    ntags = json_array_size(json_object_get(rev, "tags"));
    if (json_array_size(mwcs) == 0 && ntags == 0) {
        printf("Revision %s is used by no namespace, tag or pod, and webhookd serves nothing for it.\n", name);
    } else {
        printf("Removing revision %s, which no namespace, tag or pod uses:\n", name);
        json_array_foreach(json_object_get(rev, "tags"), i, v)
            printf("  tag %s (its MutatingWebhookConfiguration, ValidatingWebhookConfiguration and Service)\n",
                   json_string_value(v));
        json_array_foreach(mwcs, i, it)
            printf("  MutatingWebhookConfiguration %s (webhookd's injector)\n", meta(it, "name"));
        if (wh_ctl_bool(a, "dry-run")) {
            printf("Dry run: nothing was changed.\n");
        } else {
            if (!confirmed(a, &rc))
                goto out;
            json_array_foreach(json_object_get(rev, "tags"), i, v)
            {
                if (tag_delete_objects(c, istio_ns, json_string_value(v), NULL, NULL) != 0)
                    goto out;
                printf("Revision tag %s removed\n", json_string_value(v));
            }
            json_array_foreach(mwcs, i, it)
            {
                wh_err err = {0};
                wh_code dc = wh_kube_delete(c, &wh_kube_mutating_webhooks, NULL, meta(it, "name"), &err);
                if (dc != WH_OK && dc != WH_E_NOTFOUND) {
                    wh_ctl_fail("cannot delete MutatingWebhookConfiguration %s: %s", meta(it, "name"),
                                wh_err_msg(&err));
                    goto out;
                }
                printf("MutatingWebhookConfiguration %s removed\n", meta(it, "name"));
            }
            if (helm_managed)
                printf("webhookd's Helm chart renders this injector from injection.revisions: remove \"%s\" from that "
                       "list before the next helm upgrade, or the upgrade brings it back.\n",
                       name);
        }
    }
    print_istiod_leftovers(c, istio_ns, name);
    rc = 0;
out:
    json_decref(nss);
    json_decref(pods);
    json_decref(workloads);
    json_decref(mwcs);
    json_decref(inv);
    inv_free(&cl);
    wh_kube_client_free(c);
    return rc;
}

/* ---- commands -------------------------------------------------------------------------- */

static const wh_ctl_flag output_flags[] = {WH_CTL_OUTPUT_FLAG};

static const wh_ctl_flag migrate_flags[] = {
    {.name = "all-namespaces",
     .shorthand = 'A',
     .type = WH_CTL_BOOL,
     .usage = "Migrate every namespace with an injection label (istio-injection=enabled or istio.io/rev)"},
    {.name = "dry-run",
     .type = WH_CTL_BOOL,
     .usage = "Print the plan (namespaces to relabel, workloads to restart) and change nothing"},
    {.name = "force",
     .type = WH_CTL_BOOL,
     .usage = "Take over namespaces another migrate run holds (its lease: use only when that run is gone)"},
    {.name = "lease-duration",
     .type = WH_CTL_DURATION,
     .usage = "How long each namespace's lease lasts unless renewed (every third of it while the run lasts); a "
              "killed run blocks others this long",
     .def = "5m0s"},
    {.name = "namespace",
     .shorthand = 'n',
     .type = WH_CTL_STRING_ARRAY,
     .usage = "`NAMESPACE` to migrate (repeatable)"},
    {.name = "parallel", .type = WH_CTL_INT, .usage = "How many workloads to restart at the same time", .def = "1"},
    {.name = "restart",
     .type = WH_CTL_BOOL,
     .usage = "Also restart the Deployments, StatefulSets and DaemonSets whose pods run another revision, waiting "
              "for each rollout"},
    {.name = "skip-confirmation",
     .shorthand = 'y',
     .type = WH_CTL_BOOL,
     .usage = "Do not ask before changing the cluster (required without a terminal)"},
    {.name = "timeout",
     .type = WH_CTL_DURATION,
     .usage = "How long to wait for each workload's rollout (and with --wait, for the pods) before stopping",
     .def = "5m0s"},
    {.name = "to", .type = WH_CTL_STRING, .usage = "`REVISION` or revision tag to move the namespaces to (required)"},
    {.name = "wait",
     .type = WH_CTL_BOOL,
     .usage = "Wait (--timeout) until every injected pod of the namespaces runs the revision its labels select; fail "
              "listing those that do not"},
};

static const wh_ctl_flag remove_flags[] = {
    {.name = "dry-run", .type = WH_CTL_BOOL, .usage = "Print what would be removed and change nothing"},
    {.name = "skip-confirmation",
     .shorthand = 'y',
     .type = WH_CTL_BOOL,
     .usage = "Do not ask before removing (required without a terminal)"},
};

static const wh_ctl_cmd revision_list = {
    .name = "list",
    .aliases = "show",
    .use = "[flags]",
    .summary = "List the control plane revisions, who serves and uses them, and the pods that need a restart",
    .long_help =
        "List every control plane revision found in the cluster (injector ConfigMaps, injector webhooks of istiod or\n"
        "webhookd, revision tags, pods) with its Istio version, who serves its injection (istiod, webhookd or\n"
        "nobody), its injector webhook configurations, the tags pointing to it, the namespaces whose pods it injects\n"
        "(labelled with it, with one of its tags, or istio-injection=enabled through the default tag) and the number\n"
        "of pods running its proxy.\n"
        "\n"
        "Then the pods that need a restart: they run one revision while the labels of their namespace (or their\n"
        "workload's pod template) now select another, e.g. after a tag moved.\n",
    .examples = "  # Revisions, tags, namespaces and pods at a glance\n"
                "  webhookctl revision list\n"
                "\n"
                "  # The same as JSON, for scripts\n"
                "  webhookctl revision list -o json\n",
    WH_CTL_FLAGS(output_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_list,
};

static const wh_ctl_cmd revision_describe = {
    .name = "describe",
    .use = "<revision> [flags]",
    .summary = "Show one control plane revision in full",
    .long_help = "Show one revision: its version, who serves it, its webhooks, tags and ConfigMaps, every namespace\n"
                 "that names it or selects it (with the labels that do), every pod running its proxy, and the pods\n"
                 "that will move to or away from it on their next restart.\n",
    .examples = "  webhookctl revision describe 1-24-0\n",
    WH_CTL_FLAGS(output_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_describe,
};

static const wh_ctl_cmd revision_migrate = {
    .name = "migrate",
    .use = "--to <revision|tag> (-n <namespace>... | --all-namespaces) [flags]",
    .summary = "Move namespaces to a revision or tag, and restart their workloads onto it",
    .long_help =
        "Move namespaces to a revision or revision tag: each is labelled istio.io/rev=<to>, and the label that would\n"
        "win over it (istio-injection) is removed, as Istio's canary upgrade requires.  With --restart, every\n"
        "Deployment, StatefulSet and DaemonSet in those namespaces whose pods run another revision is restarted the\n"
        "way \"kubectl rollout restart\" does it, one at a time (or --parallel N), and each rollout is waited for\n"
        "(--timeout each).  Pods without such a controller are listed for you to restart.\n"
        "\n"
        "The plan is printed first and confirmed (-y skips the question; without a terminal -y is required).\n"
        "Nothing changes when the injector of --to calls a Service that does not exist (pods there could not be\n"
        "created), or when a namespace was relabelled after the plan was read.  A workload deleted meanwhile is\n"
        "skipped.  The first rollout that fails or times out stops the migration with what to do next.\n"
        "Running the same command again resumes: relabelled namespaces and restarted workloads are skipped, and\n"
        "a rollout still under way is waited for, not restarted again.\n"
        "\n"
        "At the end the pods of those namespaces that still run another revision, or no sidecar, are listed with\n"
        "their workload; --wait waits for them (up to --timeout) and fails if some remain.\n"
        "\n"
        "While it runs, a migration holds a lease on each namespace (annotation " LEASE_ANNOTATION "),\n"
        "renewed every third of --lease-duration; a second migrate of the same namespace is refused until the\n"
        "first ends or its lease expires (--force takes it over, for a run that was killed; the run it was taken\n"
        "from stops working on that namespace at its next renewal).  --dry-run lists the leases it would take and\n"
        "those of other runs in the way.\n"
        "\n"
        "Interrupted (Ctrl-C, SIGTERM), it finishes the request under way, starts nothing new, releases its leases\n"
        "and exits 130; each namespace is relabelled whole or not at all, and rollouts under way go on.  Run the\n"
        "same command again to resume.  A second interruption quits at once; its leases then expire.\n",
    .examples = "  # See what moving two namespaces to the tag \"prod\" would do\n"
                "  webhookctl revision migrate --to prod -n app-a -n app-b --restart --dry-run\n"
                "\n"
                "  # Do it\n"
                "  webhookctl revision migrate --to prod -n app-a -n app-b --restart\n"
                "\n"
                "  # Every injected namespace, two workloads at a time, unattended\n"
                "  webhookctl revision migrate --to 1-25-0 --all-namespaces --restart --parallel 2 -y\n",
    WH_CTL_FLAGS(migrate_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_migrate,
};

static const wh_ctl_cmd revision_remove = {
    .name = "remove",
    .aliases = "delete",
    .use = "<revision> [flags]",
    .summary = "Remove a control plane revision nobody uses any more",
    .long_help =
        "Remove a revision once nothing uses it.  It refuses, listing them, while namespaces select it (directly,\n"
        "through a tag, or through istio-injection=enabled and the default tag), pods run its proxy, or the pod\n"
        "template of a Deployment, StatefulSet or DaemonSet selects it (its next pods would get no sidecar).\n"
        "Otherwise it removes the tags still pointing to it and the injector webhook configurations webhookd\n"
        "serves for it.\n"
        "An istiod revision's own objects are left to its installer: what \"istioctl uninstall\" or \"helm\n"
        "uninstall\" would still remove is listed, with the command.\n",
    .examples = "  # After migrating everything to 1-25-0\n"
                "  webhookctl revision remove 1-24-0\n",
    WH_CTL_FLAGS(remove_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_remove,
};

static const wh_ctl_cmd *const revision_subcommands[] = {&revision_list, &revision_describe, &revision_migrate,
                                                         &revision_remove, NULL};

const wh_ctl_cmd wh_ctl_cmd_revision = {
    .name = "revision",
    .aliases = "rev",
    .summary = "List, migrate to and remove control plane revisions (the canary upgrade's bookkeeping)",
    .long_help = "A canary upgrade installs revision B beside A, moves the tags, relabels namespaces, restarts\n"
                 "workloads and removes A.  These commands do the bookkeeping: \"list\" shows what runs where and\n"
                 "which pods need a restart, \"migrate\" relabels namespaces and restarts workloads safely,\n"
                 "\"remove\" removes a revision once nothing uses it.\n",
    .examples = "  webhookctl tag set prod --revision 1-25-0 --overwrite\n"
                "  webhookctl revision list\n"
                "  webhookctl revision migrate --to prod --all-namespaces --restart\n"
                "  webhookctl revision remove 1-24-0\n",
    .inherited = &wh_ctl_cluster_flags,
    .subcommands = revision_subcommands,
};
