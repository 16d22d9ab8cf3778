/*
 * kube_internal.h - what the files of wh_kube share but callers must not see:
 * the resolved configuration and the exec-plugin runner.
 */
#ifndef WH_KUBE_INTERNAL_H
#define WH_KUBE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "wh_buf.h"
#include "wh_kube.h"

typedef struct kube_blob {
    unsigned char *data;
    size_t len;
} kube_blob;

typedef struct kube_exec_config {
    char *command;
    char **args; /* NULL-terminated */
    char **env;  /* "NAME=VALUE", NULL-terminated */
    char *api_version;
    char *install_hint;
    char *interactive_mode; /* Never | IfAvailable | Always */
    int provide_cluster_info;
} kube_exec_config;

struct wh_kube_config {
    char *source; /* "kubeconfig <files>" or "in-cluster" */
    char *context_name, *cluster_name, *user_name, *namespace;
    char *server;
    char *ca_file;
    kube_blob ca_data;
    int insecure;
    char *tls_server_name;
    char *proxy_url;
    char *cert_file, *key_file;
    kube_blob cert_data, key_data;
    char *token;
    char *token_file;
    char *username, *password;
    kube_exec_config *exec;
    char *impersonate_user;
    char **impersonate_groups; /* NULL-terminated or NULL */
};

/* A credential obtained from an exec plugin. */
typedef struct kube_exec_credential {
    char *token;
    kube_blob cert, key;
    time_t expires; /* 0: no expiry given */
} kube_exec_credential;

void kube_exec_credential_clear(kube_exec_credential *cred);

/* Run the plugin and parse its ExecCredential; bounded by timeout_ms. */
wh_code kube_exec_run(const wh_kube_config *cfg, long timeout_ms, kube_exec_credential *cred, wh_err *err);

/* The REST path of a collection (name NULL) or of one object, e.g.
 * "/api/v1/namespaces/istio-system/configmaps/istio". */
wh_code kube_resource_path(wh_kube_client *c, const wh_kube_resource *r, const char *ns, const char *name, wh_buf *out,
                           wh_err *err);
/* Append "?key=value" or "&key=value", the value URL-escaped. */
void kube_add_query(wh_kube_client *c, wh_buf *path, const char *key, const char *value);

/* RFC 3339 timestamp to time_t (UTC); -1 when malformed. */
time_t kube_parse_rfc3339(const char *s);

/* Standard base64 (with or without padding) into a new blob. */
wh_code kube_base64_decode(const char *in, kube_blob *out, wh_err *err);

#endif
