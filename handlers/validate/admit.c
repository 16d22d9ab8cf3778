/*
 * admit.c - the /validate webhook: istiod's admit function (operation check,
 * then wh_validate_object on request.object), its metrics
 * (galley_validation_passed / _failed / _http_error) and the endpoint that
 * plugs it into the server through the AdmissionReview codec.
 */
#include "wh_alloc.h"
#include "wh_validate.h"
#include "wh_validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wh_code wh_validate_metrics_init(wh_validate_metrics *m, wh_metrics *registry, wh_err *err)
{
    static const char *const passed_labels[] = {"group", "version", "resource", NULL};
    static const char *const failed_labels[] = {"group", "version", "resource", "reason", NULL};
    static const char *const http_labels[] = {"status", NULL};

    memset(m, 0, sizeof(*m));
    if (registry == NULL)
        return WH_OK;
    m->passed = wh_metrics_counter(registry, "galley_validation_passed", "Resource is valid.", passed_labels);
    m->failed = wh_metrics_counter(registry, "galley_validation_failed", "Resource validation failed.", failed_labels);
    m->http_error = wh_metrics_counter(registry, "galley_validation_http_error",
                                       "Resource validation http serve errors", http_labels);
    if (m->passed == NULL || m->failed == NULL || m->http_error == NULL)
        return wh_err_set(err, WH_E_CONFLICT, "cannot register the galley_validation_* metrics");
    return WH_OK;
}

/* request.kind.group / .version and request.resource.resource, as istiod
 * labels its metrics, but only from closed sets: the group and resource of
 * a kind webhookd validates and an API version Istio or the Gateway API
 * serves; anything else is "other".  A label taken from the request would
 * let any client grow the metrics without bound. */
static void request_labels(const json_t *request, const char *labels[4], const char *reason)
{
    static const char *const versions[] = {"v1", "v1beta1", "v1alpha1", "v1alpha2", "v1alpha3"};
    const json_t *kind = json_object_get(request, "kind"), *res = json_object_get(request, "resource");
    const char *g = json_string_value(json_object_get(kind, "group"));
    const char *v = json_string_value(json_object_get(kind, "version"));
    const char *r = json_string_value(json_object_get(res, "resource"));
    const wh_vkind *k = g != NULL && r != NULL ? wh_vkind_find_resource(g, r) : NULL;

    labels[0] = k != NULL ? k->group : "other";
    labels[1] = "other";
    for (size_t i = 0; k != NULL && v != NULL && i < sizeof(versions) / sizeof(versions[0]); i++)
        if (strcmp(v, versions[i]) == 0)
            labels[1] = versions[i];
    labels[2] = k != NULL ? k->resource : "other";
    labels[3] = reason;
}

static void count_failed(const wh_validate_metrics *m, const wh_admission_request *req, wh_validate_reason reason)
{
    const char *labels[4];

    if (m == NULL || m->failed == NULL || req->dry_run)
        return;
    request_labels(req->request, labels, wh_validate_reason_name(reason));
    wh_metric_add(m->failed, labels, 1);
}

wh_code wh_validate_admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err)
{
    const wh_validate_admit_ctx *ac = ctx;
    const wh_validate_metrics *m = ac != NULL ? &ac->metrics : NULL;
    const json_t *request = req->request, *object;
    wh_validate_input in = {req->kind, req->namespace, NULL, {0}};
    wh_validate_verdict v;
    wh_code rc;

    if (ac != NULL)
        in.settings = ac->settings;
    if (strcmp(req->operation, "CREATE") != 0 && strcmp(req->operation, "UPDATE") != 0) {
        count_failed(m, req, WH_VALIDATE_UNSUPPORTED_OPERATION);
        resp->allowed = 1;
        return WH_OK;
    }
    /* request.object is a runtime.RawExtension, which keeps no bytes for a JSON null: istiod then decodes
     * an empty object text, exactly as when the member is absent. */
    object = json_object_get(request, "object");
    if ((rc = wh_validate_object(json_is_null(object) ? NULL : object, &in, &v, err)) != WH_OK)
        return rc;
    resp->allowed = v.allowed;
    if (!v.allowed) {
        count_failed(m, req, v.reason);
        resp->message = v.message;
        v.message = NULL;
    } else {
        if (m != NULL && m->passed != NULL) {
            const char *labels[4];
            request_labels(request, labels, NULL);
            wh_metric_add(m->passed, labels, 1);
        }
        resp->warnings = v.warnings;
        v.warnings = NULL;
    }
    wh_validate_verdict_clear(&v);
    return WH_OK;
}

typedef struct validate_endpoint {
    wh_endpoint ep;
    wh_validate_admit_ctx admit;
    wh_admission_stats stats;
} validate_endpoint;

const wh_endpoint_flag wh_validate_endpoint_flags[] = {
#define ENDPOINT_FLAG(field, flag, usage) {flag, "false", usage},
    WH_VALIDATE_SETTINGS(ENDPOINT_FLAG)
#undef ENDPOINT_FLAG
        {NULL, NULL, NULL},
};

static void serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    validate_endpoint *ve = self->data;
    wh_admission_outcome outcome;

    wh_admission_serve(&ve->stats, req, wh_validate_admit, &ve->admit, res, &outcome);
    /* a 413 (outcome.refused) is webhookd's, counted as "rejected"
     * in webhookd_admission_reviews_total only */
    if (res->status != 200 && !outcome.refused && ve->admit.metrics.http_error != NULL) {
        char status[16];
        const char *labels[1] = {status};
        snprintf(status, sizeof(status), "%d", res->status);
        wh_metric_add(ve->admit.metrics.http_error, labels, 1);
    }
}

/* Nothing to load: validation has no configuration. */
static int ready(wh_endpoint *self, wh_buf *detail)
{
    (void)self;
    (void)detail;
    return 1;
}

static void destroy(wh_endpoint *self)
{
    free(self->data);
}

static wh_code parse_settings(const wh_endpoint_env *env, wh_validate_settings *s, wh_err *err)
{
    const wh_endpoint_flag *f;
    wh_code rc;

    for (f = wh_validate_endpoint_flags; f->name != NULL; f++)
        if ((rc = wh_validate_setting_parse(s, f->name, env->flag(env, f->name), err)) != WH_OK)
            return rc;
    return WH_OK;
}

wh_code wh_validate_endpoint_check(const wh_endpoint_env *env, wh_err *err)
{
    wh_validate_settings s = {0};
    return parse_settings(env, &s, err);
}

wh_code wh_validate_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err)
{
    validate_endpoint *ve = wh_calloc(1, sizeof(*ve));
    wh_code rc;

    *out = NULL;
    if ((rc = parse_settings(env, &ve->admit.settings, err)) != WH_OK ||
        (rc = wh_validate_metrics_init(&ve->admit.metrics, env->metrics, err)) != WH_OK ||
        (rc = wh_admission_stats_init(&ve->stats, env->name, env->metrics, err)) != WH_OK) {
        free(ve);
        return rc;
    }
    ve->ep.name = env->name;
    ve->ep.serve = serve;
    ve->ep.ready = ready;
    ve->ep.destroy = destroy;
    ve->ep.data = ve;
    *out = &ve->ep;
    return WH_OK;
}
