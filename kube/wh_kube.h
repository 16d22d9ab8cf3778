/*
 * wh_kube.h - a small Kubernetes API client: configuration, transport, verbs.
 *
 * webhookctl (tags, diagnostics) and webhookd (caBundle patching) talk to the
 * API server through this one client so that they all find the cluster the
 * way kubectl does and all explain failures the same way.
 *
 * Configuration (wh_kube_config_load) follows client-go's loading rules:
 *   1. an explicit file (`--kubeconfig`), which must exist;
 *   2. else $KUBECONFIG, a colon-separated list merged file by file: the first
 *      file to define a cluster, user or context name wins, the first
 *      current-context wins, missing files are skipped;
 *   3. else ~/.kube/config;
 *   4. else in-cluster: KUBERNETES_SERVICE_HOST/PORT with the service-account
 *      token (re-read whenever the file changes), ca.crt and namespace.
 * Relative paths in a file are relative to that file's directory.
 *
 * Authentication: client certificates (file or inline data), bearer token,
 * tokenFile (re-read on change), username/password, and exec credential
 * plugins (client.authentication.k8s.io/v1 and v1beta1), whose credential is
 * cached in the client until its expirationTimestamp and refreshed once when
 * the server answers 401.
 *
 * Requests never hang: each one is bounded by the client's timeout
 * (`--request-timeout`), exec plugins included; a 429/5xx answer carrying
 * Retry-After is retried up to 3 times, waiting at most 5 s each.  Failures return a wh_code and
 * an error sentence made of the API server's Status message (or the transport
 * failure) plus what the user can do about it.
 *
 * Typical use (e.g. patching a webhook's caBundle):
 *
 *     wh_kube_options o = {.kubeconfig = flag_kubeconfig, .timeout_ms = 10000};
 *     wh_kube_client *c = NULL;
 *     json_t *patch = json_pack("[{s:s, s:s, s:s}]", "op", "replace",
 *                               "path", "/webhooks/0/clientConfig/caBundle", "value", b64);
 *     if ((rc = wh_kube_client_new(&o, &c, err)) != WH_OK ||
 *         (rc = wh_kube_patch(c, &wh_kube_mutating_webhooks, NULL, "name", WH_KUBE_PATCH_JSON,
 *                             patch, "webhookd", 0, NULL, err)) != WH_OK)
 *         goto out;            // err says what failed and what to check
 *   out:
 *     json_decref(patch);
 *     wh_kube_client_free(c);
 *
 * libcurl runs with CURLOPT_NOSIGNAL (safe in threads), so the process must
 * ignore SIGPIPE, as servers do anyway.
 *
 * Objects travel as jansson values.  Unless stated, `json_t **out` receives a
 * new reference owned by the caller and may be NULL when the caller does not
 * want it; on failure the typed verbs leave *out NULL.  Input objects are
 * borrowed.
 */
#ifndef WH_KUBE_H
#define WH_KUBE_H

#include <jansson.h>
#include <stdatomic.h>

#include "wh_result.h"

#define WH_KUBE_DEFAULT_TIMEOUT_MS 30000L
#define WH_KUBE_DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* Upper bound of a response body; a bigger answer is an error, not an OOM. */
#define WH_KUBE_MAX_RESPONSE (64u * 1024u * 1024u)

/* A REST resource.  Callers may define their own; the common ones follow. */
typedef struct wh_kube_resource {
    const char *group_version; /* "v1" or "<group>/<version>" */
    const char *plural;        /* "services" */
    const char *kind;          /* "Service" */
    int namespaced;
} wh_kube_resource;

extern const wh_kube_resource wh_kube_namespaces;
extern const wh_kube_resource wh_kube_services;
extern const wh_kube_resource wh_kube_secrets;
extern const wh_kube_resource wh_kube_configmaps;
extern const wh_kube_resource wh_kube_mutating_webhooks;   /* MutatingWebhookConfiguration */
extern const wh_kube_resource wh_kube_validating_webhooks; /* ValidatingWebhookConfiguration */
extern const wh_kube_resource wh_kube_pods;
extern const wh_kube_resource wh_kube_replicasets; /* apps/v1, as the three workload kinds below */
extern const wh_kube_resource wh_kube_deployments;
extern const wh_kube_resource wh_kube_statefulsets;
extern const wh_kube_resource wh_kube_daemonsets;

/* One of the resources above by plural or kind (case-insensitive); NULL if unknown. */
const wh_kube_resource *wh_kube_resource_lookup(const char *name);

/* How to find and reach the cluster.  Every field may be NULL/0. */
typedef struct wh_kube_options {
    const char *kubeconfig;                /* explicit kubeconfig file (--kubeconfig) */
    const char *context;                   /* context name (--context); default: current-context */
    long timeout_ms;                       /* per request (--request-timeout); 0: WH_KUBE_DEFAULT_TIMEOUT_MS */
    const char *user_agent;                /* default "webhookctl/<version>" */
    const char *impersonate_user;          /* --as */
    const char *const *impersonate_groups; /* --as-group, NULL-terminated */
    const char *service_account_dir;       /* in-cluster files; default WH_KUBE_DEFAULT_SA_DIR */
} wh_kube_options;

/* ---- configuration ---------------------------------------------------- */

typedef struct wh_kube_config wh_kube_config;

/* Resolve the configuration as described at the top (new object). */
wh_code wh_kube_config_load(const wh_kube_options *opts, wh_kube_config **out, wh_err *err);
void wh_kube_config_free(wh_kube_config *cfg);

/* What was resolved, for diagnostics and tests (new reference):
 * {"source", "context", "cluster", "user", "server", "namespace", "auth":
 *  "none|token|tokenFile|basic|clientCertificate|exec", "insecure", "tlsServerName", "proxyURL"}. */
json_t *wh_kube_config_describe(const wh_kube_config *cfg);

/* ---- client ------------------------------------------------------------- */

typedef struct wh_kube_client wh_kube_client;

/* Load the configuration and prepare a client (new object; not thread-safe:
 * use one client per thread). */
wh_code wh_kube_client_new(const wh_kube_options *opts, wh_kube_client **out, wh_err *err);
void wh_kube_client_free(wh_kube_client *c);

/* Borrowed; valid while the client lives. */
const wh_kube_config *wh_kube_client_config(const wh_kube_client *c);
/* The context's namespace, the in-cluster pod's namespace, else "default". */
const char *wh_kube_client_namespace(const wh_kube_client *c);

/* The raw call.  `path` starts with "/" and may carry a query; `body` may be
 * NULL.  2xx: WH_OK and *out = parsed body (JSON null when empty).  Otherwise
 * the error code follows the HTTP status (404 WH_E_NOTFOUND, 409 WH_E_CONFLICT,
 * 408/504 or a local deadline WH_E_TIMEOUT, others WH_E_REMOTE; transport
 * failures WH_E_IO/WH_E_TLS), *out = the Status object if one came back, and
 * *http_status (may be NULL) = the status, or 0 when no answer arrived. */
wh_code wh_kube_request(wh_kube_client *c, const char *method, const char *path, const char *content_type,
                        const char *body, size_t body_len, long *http_status, json_t **out, wh_err *err);

/* A streaming GET (a watch): each newline-terminated line of a 2xx body goes
 * to `on_line` as soon as it arrives; on_line returns nonzero to end the
 * stream early (WH_OK).  The request may last `timeout_ms` (0: the client's
 * timeout); setting *stop (may be NULL) ends it within about a second
 * (WH_E_IO "stopped").  A non-2xx answer is an error as for wh_kube_request,
 * *http_status (may be NULL) says which. */
typedef int (*wh_kube_line_fn)(void *ctx, const char *line, size_t len);
wh_code wh_kube_stream(wh_kube_client *c, const char *path, long timeout_ms, wh_kube_line_fn on_line, void *ctx,
                       const atomic_int *stop, long *http_status, wh_err *err);

/* GET one object.  404 is WH_E_NOTFOUND with the server's message. */
wh_code wh_kube_get(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, json_t **out,
                    wh_err *err);

/* LIST objects (ns NULL: all namespaces / cluster-scoped).  `label_selector`
 * is a selector string ("a=b,!c,d in (x,y)"), NULL for all.  Follows
 * `continue` tokens (pages of 500) and returns the items as one array. */
wh_code wh_kube_list(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *label_selector,
                     json_t **items, wh_err *err);

/* POST.  An existing object is WH_E_CONFLICT ("... already exists"). */
wh_code wh_kube_create(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                       const char *field_manager, json_t **out, wh_err *err);

/* PUT (the name comes from obj.metadata.name).  A stale
 * metadata.resourceVersion is WH_E_CONFLICT. */
wh_code wh_kube_update(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                       const char *field_manager, json_t **out, wh_err *err);

/* Read-modify-write that is safe to repeat: GET, call `mutate` on the fresh
 * object, PUT; on a 409 start over (at most 5 times).  `mutate` returns
 * WH_OK to write, WH_E_NOTFOUND... any error to stop; it may set *unchanged
 * (never NULL) to skip the PUT when nothing needs to change. */
typedef wh_code (*wh_kube_mutate_fn)(json_t *obj, void *ctx, int *unchanged, wh_err *err);
wh_code wh_kube_update_retry(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name,
                             wh_kube_mutate_fn mutate, void *ctx, const char *field_manager, json_t **out, wh_err *err);

typedef enum wh_kube_patch_type {
    WH_KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    WH_KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    WH_KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
    WH_KUBE_PATCH_APPLY      /* application/apply-patch+yaml: server-side apply */
} wh_kube_patch_type;

/* PATCH.  `field_manager` is required for WH_KUBE_PATCH_APPLY; `force` is
 * only meaningful for apply (take over fields owned by other managers). */
wh_code wh_kube_patch(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name,
                      wh_kube_patch_type type, const json_t *patch, const char *field_manager, int force, json_t **out,
                      wh_err *err);

/* Server-side apply of a whole object (name from obj.metadata.name). */
wh_code wh_kube_apply(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const json_t *obj,
                      const char *field_manager, int force, json_t **out, wh_err *err);

/* DELETE.  404 is WH_E_NOTFOUND. */
wh_code wh_kube_delete(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, wh_err *err);

/* ---- selectors and names ------------------------------------------------ */

/* Does a LabelSelector object ({matchLabels, matchExpressions}) select the
 * label map `labels` (an object of strings; NULL = no labels)?  A NULL or
 * empty selector selects everything.  Returns 1/0, or -1 when the selector is
 * malformed (unknown operator, non-string values). */
int wh_kube_selector_matches(const json_t *selector, const json_t *labels);

/* Name checks with the API server's own messages (err filled when invalid). */
wh_code wh_kube_check_dns1123_label(const char *s, wh_err *err);
wh_code wh_kube_check_dns1123_subdomain(const char *s, wh_err *err);
wh_code wh_kube_check_label_value(const char *s, wh_err *err);

#endif
