/*
 * wh_inject_endpoint.c - the /inject endpoint webhookd serves: the revision
 * registry (--revisions-dir), istiod's environment settings (--native-sidecars,
 * --compliance-policy, --platform, --env), the AdmissionReview codec around
 * wh_inject_admit, and istiod's injection metrics.
 */
#include "wh_inject_endpoint.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wh_admission.h"
#include "wh_inject.h"
#include "wh_log.h"

typedef struct inject_endpoint {
    wh_endpoint super;
    wh_inject_registry *registry;
    wh_inject_settings settings;
    wh_metric *requests, *success, *failure, *skip, *duration, *by_revision;
} inject_endpoint;

static void serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    inject_endpoint *ep = self->data;
    wh_inject_call call;
    wh_admission_outcome outcome;
    struct timespec t0, t1;
    const char *result, *labels[2];
    double secs;

    memset(&call, 0, sizeof(call));
    memset(&outcome, 0, sizeof(outcome));
    call.registry = ep->registry;
    call.settings = &ep->settings;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wh_metric_add(ep->requests, NULL, 1);
    wh_admission_serve(req, wh_inject_admit, &call, res, &outcome);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (!outcome.decoded || call.failed) {
        wh_metric_add(ep->failure, NULL, 1);
        result = "failure";
    } else if (call.skipped) {
        wh_metric_add(ep->skip, NULL, 1);
        result = "skip";
    } else {
        result = "injected";
    }
    if (res->status == 200)
        wh_metric_add(ep->success, NULL, 1);
    wh_metric_observe(ep->duration, NULL, secs);
    labels[0] = call.revision;
    labels[1] = result;
    wh_metric_add(ep->by_revision, labels, 1);
}

static int ready(wh_endpoint *self, wh_buf *detail)
{
    inject_endpoint *ep = self->data;
    return wh_inject_registry_ready(ep->registry, detail);
}

static wh_code reload(wh_endpoint *self, int forced, wh_err *err)
{
    inject_endpoint *ep = self->data;
    return wh_inject_registry_reload(ep->registry, err);
}

static void destroy(wh_endpoint *self)
{
    inject_endpoint *ep = self->data;

    wh_inject_registry_free(ep->registry);
    wh_inject_settings_clear(&ep->settings);
    free(ep);
}

/* --env KEY=VALUE[,KEY=VALUE...]: a comma starts a new pair only when a
 * KEY= follows it, so values may contain commas. */
static wh_code set_envs(wh_inject_settings *s, const char *list, wh_err *err)
{
    char *copy = strdup(list), *start, *p;
    wh_code rc = WH_OK;

    if (copy == NULL)
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
    for (start = p = copy; rc == WH_OK; p++) {
        if (*p == ',' || *p == '\n') {
            const char *k = p + 1;
            while (isalnum((unsigned char)*k) || *k == '_')
                k++;
            if (k == p + 1 || *k != '=' || isdigit((unsigned char)p[1]))
                continue;
        } else if (*p != '\0') {
            continue;
        }
        {
            int end = *p == '\0';
            *p = '\0';
            if (*start != '\0')
                rc = wh_inject_settings_set(s, "env", start, err);
            if (end)
                break;
            start = p + 1;
        }
    }
    free(copy);
    return rc;
}

wh_code wh_inject_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err)
{
    static const double buckets[] = {.1, 1, 3, 5, 10, 20, 30, 60};
    static const char *const rev_labels[] = {"revision", "result", NULL};
    static const char *const settings_flags[] = {"native-sidecars", "compliance-policy", "platform"};
    inject_endpoint *ep = calloc(1, sizeof(*ep));
    const char *dir = env->flag(env, "revisions-dir"), *v;
    size_t i;
    wh_code rc;

    if (ep == NULL)
        return wh_err_set(err, WH_E_NOMEM, "out of memory");
    ep->settings = (wh_inject_settings)WH_INJECT_SETTINGS_INIT;
    for (i = 0; i < sizeof(settings_flags) / sizeof(settings_flags[0]); i++)
        if ((v = env->flag(env, settings_flags[i])) != NULL && *v != '\0' &&
            (rc = wh_inject_settings_set(&ep->settings, settings_flags[i], v, err)) != WH_OK) {
            wh_err_prefix(err, "--%s", settings_flags[i]);
            goto out;
        }
    if ((v = env->flag(env, "env")) != NULL && (rc = set_envs(&ep->settings, v, err)) != WH_OK) {
        wh_err_prefix(err, "--env");
        goto out;
    }
    if ((rc = wh_inject_registry_open(dir != NULL && *dir != '\0' ? dir : NULL, env->metrics, &ep->registry, err)) !=
        WH_OK)
        goto out;
    ep->requests = wh_metrics_counter(env->metrics, "sidecar_injection_requests_total",
                                      "Total number of sidecar injection requests.", NULL);
    ep->success = wh_metrics_counter(env->metrics, "sidecar_injection_success_total",
                                     "Total number of successful sidecar injection requests.", NULL);
    ep->failure = wh_metrics_counter(env->metrics, "sidecar_injection_failure_total",
                                     "Total number of failed sidecar injection requests.", NULL);
    ep->skip = wh_metrics_counter(env->metrics, "sidecar_injection_skip_total",
                                  "Total number of skipped sidecar injection requests.", NULL);
    ep->duration = wh_metrics_histogram(env->metrics, "sidecar_injection_time_seconds",
                                        "Total time taken for injection in seconds.", NULL, buckets,
                                        sizeof(buckets) / sizeof(buckets[0]));
    ep->by_revision = wh_metrics_counter(env->metrics, "webhookd_inject_requests_total",
                                         "Injection requests by the revision that answered and their result "
                                         "(injected, skip, failure).",
                                         rev_labels);
    if (ep->requests == NULL || ep->success == NULL || ep->failure == NULL || ep->skip == NULL ||
        ep->duration == NULL || ep->by_revision == NULL) {
        rc = wh_err_set(err, WH_E_CONFLICT, "injection metrics already registered with another shape");
        goto out;
    }
    ep->super.name = env->name;
    ep->super.serve = serve;
    ep->super.ready = ready;
    ep->super.reload = reload;
    ep->super.destroy = destroy;
    ep->super.data = ep;
    *out = &ep->super;
    ep = NULL;
    rc = WH_OK;
out:
    if (ep != NULL) {
        wh_inject_registry_free(ep->registry);
        wh_inject_settings_clear(&ep->settings);
        free(ep);
    }
    return rc;
}
