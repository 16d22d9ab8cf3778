/*
 * kube_config.c - find the cluster the way kubectl does: kubeconfig files
 * (explicit, $KUBECONFIG merged, ~/.kube/config) or the in-cluster service
 * account.  The result is a flat wh_kube_config with every path absolute.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wh_alloc.h"
#include "kube_internal.h"
#include "wh_go.h"
#include "wh_yaml.h"

#define KUBECONFIG_MAX_BYTES (16u * 1024u * 1024u)

static char *dupstr(const char *s)
{
    return s != NULL ? wh_strdup(s) : NULL;
}

static const char *jstr(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* Make `*slot` (a relative path found in `file`) absolute. */
static wh_code resolve_path(json_t *obj, const char *key, const char *dir, wh_err *err)
{
    const char *p = jstr(obj, key);
    wh_buf b = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (p == NULL || p[0] == '/' || dir == NULL)
        return WH_OK;
    wh_buf_printf(&b, "%s/%s", dir, p);
    /* the path is a kubeconfig string joined to a directory name: not UTF-8 is possible */
    if (json_object_set_new(obj, key, json_string(b.data)) != 0)
        rc = wh_err_set(err, WH_E_INVALID, "%s: the path %s is not UTF-8", key, b.data);
    wh_buf_free(&b);
    return rc;
}

/* Resolve the file references of one kubeconfig document relative to `dir`. */
static wh_code resolve_file_paths(json_t *doc, const char *dir, wh_err *err)
{
    size_t i;
    json_t *e;
    wh_code rc = WH_OK;

    json_array_foreach(json_object_get(doc, "clusters"), i, e)
    {
        json_t *cl = json_object_get(e, "cluster");
        if (json_is_object(cl) && (rc = resolve_path(cl, "certificate-authority", dir, err)) != WH_OK)
            return rc;
    }
    json_array_foreach(json_object_get(doc, "users"), i, e)
    {
        json_t *u = json_object_get(e, "user"), *ex;
        if (!json_is_object(u))
            continue;
        if ((rc = resolve_path(u, "client-certificate", dir, err)) != WH_OK ||
            (rc = resolve_path(u, "client-key", dir, err)) != WH_OK ||
            (rc = resolve_path(u, "tokenFile", dir, err)) != WH_OK)
            return rc;
        ex = json_object_get(u, "exec");
        /* client-go resolves the command only when it names a path. */
        if (json_is_object(ex) && jstr(ex, "command") != NULL && strchr(jstr(ex, "command"), '/') != NULL &&
            (rc = resolve_path(ex, "command", dir, err)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

/* Add the named entries of `doc[section]` to `merged[section]` unless a
 * previous file defined the name already (first file wins). */
static wh_code merge_section(json_t *merged, const json_t *doc, const char *section, const char *inner,
                             const char *file, wh_err *err)
{
    json_t *dst = json_object_get(merged, section), *e;
    const json_t *list = json_object_get(doc, section);
    size_t i;

    if (list == NULL || json_is_null(list))
        return WH_OK;
    if (!json_is_array(list))
        return wh_err_set(err, WH_E_PARSE, "%s: \"%s\" must be a list", file, section);
    json_array_foreach(list, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *body = json_object_get(e, inner);
        if (name == NULL)
            return wh_err_set(err, WH_E_PARSE, "%s: %s[%zu] has no name", file, section, i);
        if (body != NULL && !json_is_object(body))
            return wh_err_set(err, WH_E_PARSE, "%s: %s \"%s\" must be a mapping", file, section, name);
        if (json_object_get(dst, name) == NULL)
            json_object_set_new(dst, name, body != NULL ? json_deep_copy(body) : json_object());
    }
    return WH_OK;
}

/* Read one kubeconfig file and merge it.  *found = 0 when it does not exist. */
static wh_code merge_file(json_t *merged, const char *file, int *found, wh_err *err)
{
    wh_buf text = WH_BUF_INIT;
    json_t *doc = NULL;
    char *dir = NULL, *slash;
    wh_code rc;

    *found = 0;
    if ((rc = wh_buf_read_file(&text, file, KUBECONFIG_MAX_BYTES, err)) != WH_OK) {
        if (rc == WH_E_NOTFOUND) {
            wh_err_clear(err);
            rc = WH_OK;
        }
        goto out;
    }
    *found = 1;
    if ((rc = wh_yaml_load(text.data != NULL ? text.data : "", text.len, &doc, err)) != WH_OK) {
        wh_err_prefix(err, "cannot load kubeconfig %s", file);
        goto out;
    }
    if (json_is_null(doc))
        goto out; /* an empty file is an empty config */
    if (!json_is_object(doc)) {
        rc = wh_err_set(err, WH_E_PARSE, "cannot load kubeconfig %s: not a mapping", file);
        goto out;
    }
    dir = wh_strdup(file);
    slash = strrchr(dir, '/');
    if (slash != NULL)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        strcpy(dir, ".");
    if ((rc = resolve_file_paths(doc, dir, err)) != WH_OK ||
        (rc = merge_section(merged, doc, "clusters", "cluster", file, err)) != WH_OK ||
        (rc = merge_section(merged, doc, "users", "user", file, err)) != WH_OK ||
        (rc = merge_section(merged, doc, "contexts", "context", file, err)) != WH_OK)
        goto out;
    if (jstr(merged, "current-context") == NULL && jstr(doc, "current-context") != NULL)
        json_object_set(merged, "current-context", json_object_get(doc, "current-context"));
out:
    json_decref(doc);
    free(dir);
    wh_buf_free(&text);
    return rc;
}

static wh_code read_blob_field(const json_t *obj, const char *key, kube_blob *out, const char *what, wh_err *err)
{
    const char *s = jstr(obj, key);
    wh_code rc;

    if (s == NULL)
        return WH_OK;
    if ((rc = kube_base64_decode(s, out, err)) != WH_OK)
        wh_err_prefix(err, "%s: %s is not valid base64", what, key);
    return rc;
}

static char **string_list(const json_t *arr, int as_env)
{
    size_t n = json_array_size(arr), i, k = 0;
    char **v = wh_calloc(n + 1, sizeof(*v));
    json_t *e;

    json_array_foreach(arr, i, e)
    {
        if (as_env) {
            const char *name = jstr(e, "name");
            const char *value = json_string_value(json_object_get(e, "value"));
            wh_buf b = WH_BUF_INIT;
            if (name == NULL)
                continue;
            wh_buf_printf(&b, "%s=%s", name, value != NULL ? value : "");
            v[k++] = wh_buf_steal(&b, NULL);
        } else if (json_is_string(e)) {
            v[k++] = wh_strdup(json_string_value(e));
        }
    }
    return v;
}

static wh_code load_exec(const json_t *ex, const char *user, wh_kube_config *cfg, wh_err *err)
{
    kube_exec_config *e;
    const char *api = jstr(ex, "apiVersion");

    if (jstr(ex, "command") == NULL)
        return wh_err_set(err, WH_E_INVALID, "user \"%s\": exec plugin has no command", user);
    if (api == NULL)
        return wh_err_set(err, WH_E_INVALID, "user \"%s\": exec plugin: apiVersion must be specified", user);
    if (strcmp(api, "client.authentication.k8s.io/v1") != 0 && strcmp(api, "client.authentication.k8s.io/v1beta1") != 0)
        return wh_err_set(err, WH_E_UNSUPPORTED,
                          "user \"%s\": exec plugin apiVersion \"%s\" is not supported (use "
                          "client.authentication.k8s.io/v1 or v1beta1)",
                          user, api);
    e = wh_calloc(1, sizeof(*e));
    cfg->exec = e;
    e->command = dupstr(jstr(ex, "command"));
    e->api_version = dupstr(api);
    e->install_hint = dupstr(jstr(ex, "installHint"));
    e->interactive_mode = dupstr(jstr(ex, "interactiveMode") != NULL ? jstr(ex, "interactiveMode") : "IfAvailable");
    e->provide_cluster_info = json_is_true(json_object_get(ex, "provideClusterInfo"));
    e->args = string_list(json_object_get(ex, "args"), 0);
    e->env = string_list(json_object_get(ex, "env"), 1);
    return WH_OK;
}

static wh_code names_of(const json_t *section, wh_buf *out)
{
    const char *k;
    json_t *v;
    wh_code rc = WH_OK;

    json_object_foreach((json_t *)section, k, v)
    {
        (void)v;
        wh_buf_printf(out, "%s\"%s\"", out->len > 0 ? ", " : "", k);
    }
    return rc;
}

/* Build cfg from the merged kubeconfig. */
static wh_code from_kubeconfig(const json_t *merged, const char *context, wh_kube_config *cfg, wh_err *err)
{
    const json_t *ctx, *cl, *user = NULL;
    const char *cluster_name, *user_name;
    wh_buf names = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (context == NULL)
        context = jstr(merged, "current-context");
    if (context == NULL) {
        rc = wh_err_set(err, WH_E_INVALID,
                        "current-context is not set in %s: pass --context or run 'kubectl config use-context <name>'",
                        cfg->source);
        goto out;
    }
    ctx = json_object_get(json_object_get(merged, "contexts"), context);
    if (ctx == NULL) {
        names_of(json_object_get(merged, "contexts"), &names);
        rc = wh_err_set(err, WH_E_NOTFOUND, "context \"%s\" does not exist in %s (known contexts: %s)", context,
                        cfg->source, names.len > 0 ? names.data : "none");
        goto out;
    }
    cluster_name = jstr(ctx, "cluster");
    user_name = jstr(ctx, "user");
    if (cluster_name == NULL) {
        rc = wh_err_set(err, WH_E_INVALID, "context \"%s\" names no cluster", context);
        goto out;
    }
    cl = json_object_get(json_object_get(merged, "clusters"), cluster_name);
    if (cl == NULL) {
        rc = wh_err_set(err, WH_E_NOTFOUND, "context \"%s\": cluster \"%s\" does not exist in %s", context,
                        cluster_name, cfg->source);
        goto out;
    }
    if (user_name != NULL) {
        user = json_object_get(json_object_get(merged, "users"), user_name);
        if (user == NULL) {
            rc = wh_err_set(err, WH_E_NOTFOUND, "context \"%s\": user \"%s\" does not exist in %s", context, user_name,
                            cfg->source);
            goto out;
        }
    }
    cfg->context_name = dupstr(context);
    cfg->cluster_name = dupstr(cluster_name);
    cfg->user_name = wh_strdup(user_name != NULL ? user_name : "");
    cfg->namespace = dupstr(jstr(ctx, "namespace"));

    /* cluster */
    if (jstr(cl, "server") == NULL) {
        rc = wh_err_set(err, WH_E_INVALID, "cluster \"%s\" has no server", cluster_name);
        goto out;
    }
    cfg->server = dupstr(jstr(cl, "server"));
    cfg->ca_file = dupstr(jstr(cl, "certificate-authority"));
    cfg->tls_server_name = dupstr(jstr(cl, "tls-server-name"));
    cfg->proxy_url = dupstr(jstr(cl, "proxy-url"));
    if ((rc = read_blob_field(cl, "certificate-authority-data", &cfg->ca_data, "cluster", err)) != WH_OK)
        goto out;
    cfg->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
    if (cfg->insecure && (cfg->ca_file != NULL || cfg->ca_data.len > 0)) {
        rc = wh_err_set(err, WH_E_INVALID,
                        "cluster \"%s\": specifying a root certificates file with the insecure flag is not allowed "
                        "(remove insecure-skip-tls-verify or the certificate-authority)",
                        cluster_name);
        goto out;
    }

    /* user */
    if (user != NULL) {
        const json_t *ex = json_object_get(user, "exec"), *groups = json_object_get(user, "as-groups");
        if (json_object_get(user, "auth-provider") != NULL) {
            rc = wh_err_set(err, WH_E_UNSUPPORTED,
                            "user \"%s\": auth-provider \"%s\" is not supported: use its exec credential plugin "
                            "instead (e.g. gke-gcloud-auth-plugin, kubelogin)",
                            user_name,
                            json_string_value(json_object_get(json_object_get(user, "auth-provider"), "name")) ?: "?");
            goto out;
        }
        cfg->cert_file = dupstr(jstr(user, "client-certificate"));
        cfg->key_file = dupstr(jstr(user, "client-key"));
        cfg->token = dupstr(jstr(user, "token"));
        cfg->token_file = dupstr(jstr(user, "tokenFile"));
        cfg->username = dupstr(jstr(user, "username"));
        cfg->password = dupstr(jstr(user, "password"));
        cfg->impersonate_user = dupstr(jstr(user, "as"));
        if ((rc = read_blob_field(user, "client-certificate-data", &cfg->cert_data, "user", err)) != WH_OK ||
            (rc = read_blob_field(user, "client-key-data", &cfg->key_data, "user", err)) != WH_OK)
            goto out;
        if (json_array_size(groups) > 0)
            cfg->impersonate_groups = string_list(groups, 0);
        if ((cfg->token != NULL || cfg->token_file != NULL) && cfg->username != NULL) {
            rc = wh_err_set(err, WH_E_INVALID,
                            "user \"%s\": username/password or bearer token may be set, but not both", user_name);
            goto out;
        }
        if ((cfg->cert_file != NULL || cfg->cert_data.len > 0) != (cfg->key_file != NULL || cfg->key_data.len > 0)) {
            rc = wh_err_set(err, WH_E_INVALID,
                            "user \"%s\": a client certificate needs its key and a key its certificate "
                            "(client-certificate[-data] and client-key[-data])",
                            user_name);
            goto out;
        }
        if (json_is_object(ex) && (rc = load_exec(ex, user_name, cfg, err)) != WH_OK)
            goto out;
    }
out:
    wh_buf_free(&names);
    return rc;
}

static wh_code from_in_cluster(const char *sa_dir, wh_kube_config *cfg, wh_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    wh_buf b = WH_BUF_INIT, ns = WH_BUF_INIT;
    struct stat st;
    wh_code rc = WH_OK;

    wh_buf_printf(&b, strchr(host, ':') != NULL ? "https://[%s]:%s" : "https://%s:%s", host, port);
    cfg->server = wh_buf_steal(&b, NULL);
    wh_buf_printf(&b, "%s/token", sa_dir);
    cfg->token_file = wh_buf_steal(&b, NULL);
    if (stat(cfg->token_file, &st) != 0) {
        rc = wh_err_set(err, WH_E_NOTFOUND,
                        "in-cluster configuration: cannot read the service account token %s: %s (is "
                        "automountServiceAccountToken disabled?)",
                        cfg->token_file, strerror(errno));
        goto out;
    }
    wh_buf_printf(&b, "%s/ca.crt", sa_dir);
    cfg->ca_file = wh_buf_steal(&b, NULL);
    wh_buf_printf(&b, "%s/namespace", sa_dir);
    if (wh_buf_read_file(&ns, b.data, 4096, NULL) == WH_OK && ns.len > 0) {
        while (ns.len > 0 && (ns.data[ns.len - 1] == '\n' || ns.data[ns.len - 1] == ' '))
            ns.data[--ns.len] = '\0';
        cfg->namespace = wh_buf_steal(&ns, NULL);
    }
    cfg->source = wh_strdup("in-cluster");
    cfg->context_name = wh_strdup("");
    cfg->cluster_name = wh_strdup("");
    cfg->user_name = wh_strdup("");
out:
    wh_buf_free(&b);
    wh_buf_free(&ns);
    return rc;
}

wh_code wh_kube_config_load(const wh_kube_options *opts, wh_kube_config **out, wh_err *err)
{
    static const wh_kube_options none = {0};
    wh_kube_config *cfg = NULL;
    json_t *merged = NULL;
    wh_buf files = WH_BUF_INIT, path = WH_BUF_INIT;
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    int found, any = 0;
    wh_code rc = WH_OK;

    if (opts == NULL)
        opts = &none;
    *out = NULL;
    cfg = wh_calloc(1, sizeof(*cfg));
    merged = json_object();
    json_object_set_new(merged, "clusters", json_object());
    json_object_set_new(merged, "users", json_object());
    json_object_set_new(merged, "contexts", json_object());

    if (opts->kubeconfig != NULL && opts->kubeconfig[0] != '\0') {
        if ((rc = merge_file(merged, opts->kubeconfig, &found, err)) != WH_OK)
            goto out;
        if (!found) {
            rc = wh_err_set(err, WH_E_NOTFOUND, "kubeconfig %s does not exist (--kubeconfig)", opts->kubeconfig);
            goto out;
        }
        any = 1;
        wh_buf_puts(&files, opts->kubeconfig);
    } else if (env != NULL && env[0] != '\0') {
        const char *p = env;
        while (*p != '\0') {
            size_t n = strcspn(p, ":");
            if (n > 0) {
                wh_buf_reset(&path);
                wh_buf_append(&path, p, n);
                if ((rc = merge_file(merged, path.data, &found, err)) != WH_OK)
                    goto out;
                if (found)
                    wh_buf_printf(&files, "%s%s", any ? ":" : "", path.data);
                any |= found;
            }
            p += n + (p[n] == ':');
        }
    } else if (home != NULL) {
        wh_buf_printf(&path, "%s/.kube/config", home);
        if ((rc = merge_file(merged, path.data, &found, err)) != WH_OK)
            goto out;
        any = found;
        if (found)
            wh_buf_puts(&files, path.data);
    }

    if (!any && getenv("KUBERNETES_SERVICE_HOST") != NULL && getenv("KUBERNETES_SERVICE_PORT") != NULL) {
        rc = from_in_cluster(opts->service_account_dir != NULL ? opts->service_account_dir : WH_KUBE_DEFAULT_SA_DIR,
                             cfg, err);
        goto out;
    }
    if (!any) {
        rc = wh_err_set(err, WH_E_NOTFOUND,
                        "no Kubernetes configuration found: pass --kubeconfig, set KUBECONFIG, create "
                        "~/.kube/config, or run inside a cluster (KUBERNETES_SERVICE_HOST/PORT)");
        goto out;
    }
    wh_buf_printf(&path, "kubeconfig %s", files.data);
    cfg->source = wh_buf_steal(&path, NULL);
    rc = from_kubeconfig(merged, opts->context != NULL && opts->context[0] != '\0' ? opts->context : NULL, cfg, err);
out:
    if (rc == WH_OK && opts->impersonate_user != NULL) {
        free(cfg->impersonate_user);
        cfg->impersonate_user = wh_strdup(opts->impersonate_user);
    }
    if (rc == WH_OK && opts->impersonate_groups != NULL && opts->impersonate_groups[0] != NULL) {
        json_t *g = json_array();
        for (size_t i = 0; g != NULL && opts->impersonate_groups[i] != NULL; i++)
            json_array_append_new(g, json_string(opts->impersonate_groups[i]));
        if (cfg->impersonate_groups != NULL)
            for (char **p = cfg->impersonate_groups; *p != NULL; p++)
                free(*p);
        free(cfg->impersonate_groups);
        cfg->impersonate_groups = string_list(g, 0);
        json_decref(g);
    }
    json_decref(merged);
    wh_buf_free(&files);
    wh_buf_free(&path);
    if (rc != WH_OK)
        wh_kube_config_free(cfg);
    else
        *out = cfg;
    return rc;
}

static void free_list(char **v)
{
    if (v == NULL)
        return;
    for (char **p = v; *p != NULL; p++)
        free(*p);
    free(v);
}

void wh_kube_config_free(wh_kube_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->source);
    free(cfg->context_name);
    free(cfg->cluster_name);
    free(cfg->user_name);
    free(cfg->namespace);
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_data.data);
    free(cfg->tls_server_name);
    free(cfg->proxy_url);
    free(cfg->cert_file);
    free(cfg->key_file);
    free(cfg->cert_data.data);
    free(cfg->key_data.data);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    free(cfg->password);
    if (cfg->exec != NULL) {
        free(cfg->exec->command);
        free_list(cfg->exec->args);
        free_list(cfg->exec->env);
        free(cfg->exec->api_version);
        free(cfg->exec->install_hint);
        free(cfg->exec->interactive_mode);
        free(cfg->exec);
    }
    free(cfg->impersonate_user);
    free_list(cfg->impersonate_groups);
    free(cfg);
}

json_t *wh_kube_config_describe(const wh_kube_config *cfg)
{
    const char *auth = "none";

    if (cfg->exec != NULL)
        auth = "exec";
    else if (cfg->cert_file != NULL || cfg->cert_data.len > 0)
        auth = "clientCertificate";
    else if (cfg->token_file != NULL)
        auth = "tokenFile";
    else if (cfg->token != NULL)
        auth = "token";
    else if (cfg->username != NULL)
        auth = "basic";
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:b, s:s?, s:s?}", "source", cfg->source, "context",
                     cfg->context_name, "cluster", cfg->cluster_name, "user", cfg->user_name, "server", cfg->server,
                     "namespace", cfg->namespace, "auth", auth, "insecure", cfg->insecure, "tlsServerName",
                     cfg->tls_server_name, "proxyURL", cfg->proxy_url);
}

wh_code kube_base64_decode(const char *in, kube_blob *out, wh_err *err)
{
    wh_buf bytes = WH_BUF_INIT;
    long bad = wh_go_base64_decode(&bytes, in, strlen(in), WH_GO_BASE64_LENIENT);

    if (bad >= 0) {
        wh_buf_free(&bytes);
        return wh_err_set(err, WH_E_PARSE, "illegal base64 character at offset %ld", bad);
    }
    out->data = (unsigned char *)wh_buf_steal(&bytes, &out->len);
    return WH_OK;
}
