/*
 * wh_validate.h - istiod's configuration validation, as a pure library.
 *
 * One verdict function (wh_validate_object) judges a decoded Kubernetes
 * object the way istiod's /validate handler does after it has read the
 * AdmissionReview: generic-wrapper decode, kind lookup by group+kind (version
 * ignored), typed decode of `spec`, metadata annotation checks, the kind's own
 * validator, and the unknown-top-level-field check.  The webhook
 * (wh_validate_admit / wh_validate_endpoint_new) and `webhookctl validate`
 * both call it, so they cannot disagree.
 */
#ifndef WH_VALIDATE_H
#define WH_VALIDATE_H

#include <jansson.h>

#include "wh_admission.h"
#include "wh_endpoint.h"
#include "wh_metrics.h"
#include "wh_result.h"

/* Why an object was refused; the names are istiod's `reason` metric label. */
typedef enum wh_validate_reason {
    WH_VALIDATE_OK = 0,
    WH_VALIDATE_UNSUPPORTED_OPERATION, /* never a denial: DELETE/CONNECT are allowed */
    WH_VALIDATE_DECODE_ERROR,          /* "yaml_decode_error": the generic wrapper did not decode */
    WH_VALIDATE_UNKNOWN_TYPE,          /* "unknown_type" */
    WH_VALIDATE_CONVERSION_ERROR,      /* "crd_conversion_error": spec did not decode into the kind's type */
    WH_VALIDATE_INVALID                /* "invalid_resource": the validator or the top-level field check refused it */
} wh_validate_reason;

/* The metric label for a reason ("invalid_resource", ...). */
const char *wh_validate_reason_name(wh_validate_reason reason);

typedef struct wh_validate_verdict {
    int allowed;
    wh_validate_reason reason;
    char *message;    /* full denial text (e.g. "configuration is invalid: ..."), malloc'd; NULL when allowed */
    json_t *warnings; /* array of strings when allowed with warnings, else NULL */
    /* What the object claims to be (for messages and metrics); "" when unknown. */
    char group[128];
    char version[64];
    char kind[64];
    char resource[64]; /* lower-case plural of a known kind, "" otherwise */
    char name[254];
    char namespace_[64];
} wh_validate_verdict;

/* Release what the verdict owns and zero it. */
void wh_validate_verdict_clear(wh_validate_verdict *v);

/* istiod's settings that change verdicts, each declared once, here: X(field, flag, usage).  The struct
 * below holds them (0 = false, istiod's default), webhookd's /validate flags (handlers/validate/admit.c)
 * and `webhookctl validate`'s (ctl/validate.c) are generated from this list, and both read a value as
 * istiod reads its environment (Go's strconv.ParseBool, wh_validate_setting_parse). */
#define WH_VALIDATE_SETTINGS(X)                                                                                        \
    X(alpha_gateway_api, "enable-alpha-gateway-api",                                                                   \
      "true: know the alpha Gateway API kinds (UDPRoute, XBackend, XBackendTrafficPolicy) as istiod does with "        \
      "PILOT_ENABLE_ALPHA_GATEWAY_API=true; false (istiod's default): they are unrecognized types")

typedef struct wh_validate_settings {
#define WH_VALIDATE_SETTING_FIELD(field, flag, usage) int field;
    WH_VALIDATE_SETTINGS(WH_VALIDATE_SETTING_FIELD)
#undef WH_VALIDATE_SETTING_FIELD
} wh_validate_settings;

/* Set the setting named `flag` (a WH_VALIDATE_SETTINGS flag name) from `value` (NULL: leave it); a value
 * strconv.ParseBool refuses is WH_E_INVALID with its message ("--<flag>: strconv.ParseBool: parsing ..."). */
wh_code wh_validate_setting_parse(wh_validate_settings *s, const char *flag, const char *value, wh_err *err);

/* Options describing where the object came from. */
typedef struct wh_validate_input {
    /* request.kind.kind (the unknown-field message names it); NULL = the object's own kind. */
    const char *request_kind;
    /* request.namespace; NULL = the object's metadata.namespace. */
    const char *request_namespace;
    /* Namespace used for namespace-relative rules (exportTo ".", sidecar "./host") when the object's
     * metadata has none; NULL = "". */
    const char *default_namespace;
    /* istiod's settings (WH_VALIDATE_SETTINGS); all 0 = istiod's defaults. */
    wh_validate_settings settings;
} wh_validate_input;

/* Judge one object (borrowed; JSON null is treated like Go's zero value, any other non-object is a decode
 * error).  Fills *out (which the caller clears).  Returns WH_OK whenever a verdict was produced
 * (WH_E_INTERNAL: a warning that is not UTF-8, a bug). */
wh_code wh_validate_object(const json_t *obj, const wh_validate_input *in, wh_validate_verdict *out, wh_err *err);

/* istiod's mesh.ParseMeshNetworks on the `meshNetworks` document of an `istio[-<rev>]` ConfigMap (`len`
 * bytes of YAML): decoded into istio.mesh.v1alpha1.MeshNetworks as jsonpb does, then checked by
 * agent.ValidateMeshNetworks (each network's endpoints fromCidr / fromRegistry, gateways
 * registryServiceName / address and port).  WH_OK when istiod takes it; else WH_E_INVALID and istiod's
 * error text in err ("failed to convert to proto. ...", or "1 error occurred:\n\t* invalid network n1:
 * ..."), which istiod logs as "invalid mesh networks, using last known state: <text>". */
wh_code wh_validate_mesh_networks(const char *yaml, size_t len, wh_err *err);

/* Metrics with istiod's names; all NULL when metrics are off. */
typedef struct wh_validate_metrics {
    wh_metric *passed;     /* galley_validation_passed{group,version,resource} */
    wh_metric *failed;     /* galley_validation_failed{group,version,resource,reason} */
    wh_metric *http_error; /* galley_validation_http_error{status} */
} wh_validate_metrics;

/* Register the three families in `registry` (NULL registry: all NULL). */
wh_code wh_validate_metrics_init(wh_validate_metrics *m, wh_metrics *registry, wh_err *err);

/* What the admit function needs beside the request: metrics and istiod's settings that change verdicts. */
typedef struct wh_validate_admit_ctx {
    wh_validate_metrics metrics;
    wh_validate_settings settings; /* as wh_validate_input.settings */
} wh_validate_admit_ctx;

/* The admit function for wh_admission_serve: operation check, then wh_validate_object on request.object,
 * then metrics.  ctx is a wh_validate_admit_ctx * (or NULL: no metrics, istiod's defaults). */
wh_code wh_validate_admit(void *ctx, const wh_admission_request *req, wh_admission_response *resp, wh_err *err);

/* The /validate endpoint (a wh_endpoint_create_fn for the server's endpoint table): serves every
 * AdmissionReview through wh_admission_serve + wh_validate_admit and registers the metrics in
 * env->metrics (when not NULL). */
wh_code wh_validate_endpoint_new(const wh_endpoint_env *env, wh_endpoint **out, wh_err *err);

/* Its wh_endpoint_check_fn: each setting's value. */
wh_code wh_validate_endpoint_check(const wh_endpoint_env *env, wh_err *err);

/* The /validate endpoint's own flags (--help, --name, WEBHOOKD_NAME). */
extern const wh_endpoint_flag wh_validate_endpoint_flags[];

#endif
