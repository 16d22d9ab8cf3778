/*
 * wh_server_endpoints.c - the one place that lists webhookd's admission
 * endpoints: route prefix, the flags each one reads, and its constructor.
 *
 * Plugging in an implementation is a one-line change of the `create` column
 * (any wh_endpoint_create_fn, see wh_endpoint.h).  An endpoint's own flags
 * go in a wh_server_endpoint_flag table next to it: they appear in --help,
 * are read from --name and WEBHOOKD_NAME, and reach the constructor through
 * env->flag(env, "name").
 */
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_admission.h"
#include "wh_inject_endpoint.h"
#include "wh_server.h"
#include "wh_validate.h"

/* --- the table ------------------------------------------------------------ */

const wh_server_endpoint_def wh_server_endpoint_defs[] = {
    {"inject", "/inject", wh_inject_endpoint_flags, wh_inject_endpoint_check, wh_inject_endpoint_new},
    {"validate", "/validate", wh_validate_endpoint_flags, wh_validate_endpoint_check, wh_validate_endpoint_new},
};
const size_t wh_server_endpoint_ndefs = sizeof(wh_server_endpoint_defs) / sizeof(wh_server_endpoint_defs[0]);

/* --- "not configured" ----------------------------------------------------- */

typedef struct not_configured {
    wh_endpoint super;
    wh_admission_stats stats;
    char message[160];
} not_configured;

static wh_code deny_not_configured(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err)
{
    const not_configured *self = ctx;
    return wh_admission_deny(resp, 0, "%s", self->message);
}

static void nc_serve(wh_endpoint *self, const wh_http_request *req, wh_http_response *res)
{
    not_configured *nc = self->data;
    wh_admission_serve(&nc->stats, req, deny_not_configured, nc, res, NULL);
}

/* Ready: there is no configuration to wait for, and the answer is final. */
static int nc_ready(wh_endpoint *self, wh_buf *detail)
{
    wh_buf_puts(detail, "not configured in this build");
    return 1;
}

static void nc_destroy(wh_endpoint *self)
{
    free(self);
}

wh_code wh_server_not_configured_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err)
{
    not_configured *self = wh_calloc(1, sizeof(*self));
    wh_code rc;

    if ((rc = wh_admission_stats_init(&self->stats, env->name, env->metrics, err)) != WH_OK) {
        free(self);
        return rc;
    }
    snprintf(self->message, sizeof(self->message),
             "webhookd: the %s endpoint is not configured in this build; no %s decision was made", env->name,
             env->name);
    self->super.name = env->name;
    self->super.serve = nc_serve;
    self->super.ready = nc_ready;
    self->super.destroy = nc_destroy;
    self->super.data = self;
    *out = &self->super;
    return WH_OK;
}
