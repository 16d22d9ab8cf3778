/*
 * diag.h - what `webhookctl check-inject` and `webhookctl check` share:
 * their common flags, the client they build from them, and how they
 * recognise Istio's injector and validator webhooks (istiod's and
 * webhookd's alike) among a cluster's webhook configurations.
 */
#ifndef WH_CTL_DIAG_H
#define WH_CTL_DIAG_H

#include <jansson.h>

#include "wh_kube.h"
#include "wh_result.h"

/* Flags both commands accept. */
typedef struct diag_flags {
    const char *kubeconfig, *context, *request_timeout, *namespace_, *output;
    int help;
} diag_flags;

/* Try argv[*i] as one of the common flags (--kubeconfig/-c, --context,
 * --request-timeout, -n/--namespace, -o/--output, -h/--help), consuming its
 * value.  Returns 1 when taken, 0 when not a common flag, -1 (message on
 * stderr) when its value is missing. */
int diag_common_flag(diag_flags *f, int argc, char **argv, int *i);

/* "--name=value" or "--name value" for a command's own flag. */
int diag_flag_value(const char *name, const char *alias, int argc, char **argv, int *i, const char **value);

/* The client for the flags; err says what failed. */
wh_code diag_client(const diag_flags *f, wh_kube_client **out, wh_err *err);

/* Does the webhook entry call Istio's sidecar injector?  Its name ends in
 * "sidecar-injector.istio.io" (istiod's and the tags' entries) or the path
 * it calls starts with "/inject" (webhookd's /inject[/rev/R]). */
int diag_is_injector(const json_t *entry);
/* ... Istio's config validation: name ends in "validation.istio.io" or the
 * path starts with "/validate". */
int diag_is_validator(const json_t *entry);
/* The label value, or NULL. */
const char *diag_label(const json_t *obj, const char *key);
/* metadata.name, "" when absent. */
const char *diag_name(const json_t *obj);

/* Print `s` padded with spaces to `width` display columns (UTF-8 aware). */
void diag_pad(FILE *out, const char *s, size_t width);
/* Display columns of a UTF-8 string. */
size_t diag_width(const char *s);

#endif
