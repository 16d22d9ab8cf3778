/*
 * kube_probe.c - drives the wh_kube client from tests, one request per line
 * of stdin, one JSON answer per line of stdout, so a test can change the
 * world (rotate a token, inject a fault) between two requests of the same
 * client.
 *
 *   kube_probe [--kubeconfig F] [--context C] [--timeout-ms N] [--sa-dir D]
 *   commands:  config
 *              get <resource> <ns|-> <name>
 *              list <resource> <ns|-> [selector]
 *              create|update|apply <resource> <ns|-> <json> [manager] [force]
 *              patch <resource> <ns|-> <name> merge|json|strategic|apply <json> [manager] [force]
 *              delete <resource> <ns|-> <name>
 *              label <resource> <ns|-> <name> <key> <value>   (read-modify-write with 409 retry)
 * answers:     {"ok": true, "result": ...} or {"ok": false, "code": "...", "error": "..."}
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_kube.h"

typedef struct label_ctx {
    const char *key, *value;
} label_ctx;

static wh_code set_label(json_t *obj, void *ud, int *unchanged, wh_err *err)
{
    label_ctx *l = ud;
    json_t *meta = json_object_get(obj, "metadata"), *labels = json_object_get(meta, "labels");
    const char *have = json_string_value(json_object_get(labels, l->key));

    if (have != NULL && strcmp(have, l->value) == 0) {
        *unchanged = 1;
        return WH_OK;
    }
    if (labels == NULL) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    if (json_object_set_new(labels, l->key, json_string(l->value)) != 0)
        return wh_err_set(err, WH_E_INVALID, "label %s=%s is not UTF-8", l->key, l->value);
    return WH_OK;
}

static json_t *parse_arg(const char *s, wh_err *err)
{
    json_error_t jerr;
    json_t *v = json_loads(s, 0, &jerr);
    if (v == NULL)
        wh_err_set(err, WH_E_PARSE, "bad JSON argument: %s", jerr.text);
    return v;
}

static wh_code run(wh_kube_client *c, char **w, int n, json_t **result, wh_err *err)
{
    const wh_kube_resource *r;
    const char *ns;
    json_t *arg = NULL;
    wh_code rc;

    *result = NULL;
    if (n == 1 && strcmp(w[0], "config") == 0) {
        *result = wh_kube_config_describe(wh_kube_client_config(c));
        json_object_set_new(*result, "effectiveNamespace", json_string(wh_kube_client_namespace(c)));
        return WH_OK;
    }
    if (n < 3)
        return wh_err_set(err, WH_E_INVALID, "usage: <verb> <resource> <ns|-> ...");
    if ((r = wh_kube_resource_lookup(w[1])) == NULL)
        return wh_err_set(err, WH_E_INVALID, "unknown resource %s", w[1]);
    ns = strcmp(w[2], "-") == 0 ? NULL : w[2];
    if (strcmp(w[0], "get") == 0 && n == 4)
        return wh_kube_get(c, r, ns, w[3], result, err);
    if (strcmp(w[0], "list") == 0)
        return wh_kube_list(c, r, ns, n > 3 ? w[3] : NULL, result, err);
    if (strcmp(w[0], "delete") == 0 && n == 4)
        return wh_kube_delete(c, r, ns, w[3], err);
    if (strcmp(w[0], "label") == 0 && n == 6) {
        label_ctx l = {w[4], w[5]};
        return wh_kube_update_retry(c, r, ns, w[3], set_label, &l, "kube-probe", result, err);
    }
    if ((strcmp(w[0], "create") == 0 || strcmp(w[0], "update") == 0 || strcmp(w[0], "apply") == 0) && n >= 4) {
        if ((arg = parse_arg(w[3], err)) == NULL)
            return WH_E_PARSE;
        if (w[0][0] == 'c')
            rc = wh_kube_create(c, r, ns, arg, n > 4 ? w[4] : NULL, result, err);
        else if (w[0][0] == 'u')
            rc = wh_kube_update(c, r, ns, arg, n > 4 ? w[4] : NULL, result, err);
        else
            rc = wh_kube_apply(c, r, ns, arg, n > 4 ? w[4] : NULL, n > 5 && strcmp(w[5], "force") == 0, result, err);
        json_decref(arg);
        return rc;
    }
    if (strcmp(w[0], "patch") == 0 && n >= 6) {
        wh_kube_patch_type t;
        if (strcmp(w[4], "merge") == 0)
            t = WH_KUBE_PATCH_MERGE;
        else if (strcmp(w[4], "json") == 0)
            t = WH_KUBE_PATCH_JSON;
        else if (strcmp(w[4], "strategic") == 0)
            t = WH_KUBE_PATCH_STRATEGIC;
        else if (strcmp(w[4], "apply") == 0)
            t = WH_KUBE_PATCH_APPLY;
        else
            return wh_err_set(err, WH_E_INVALID, "unknown patch type %s", w[4]);
        if ((arg = parse_arg(w[5], err)) == NULL)
            return WH_E_PARSE;
        rc = wh_kube_patch(c, r, ns, w[3], t, arg, n > 6 ? w[6] : NULL, n > 7 && strcmp(w[7], "force") == 0, result,
                           err);
        json_decref(arg);
        return rc;
    }
    return wh_err_set(err, WH_E_INVALID, "unknown command %s", w[0]);
}

/* Split on tabs so JSON arguments may contain spaces. */
static int split(char *line, char **w, int max)
{
    int n = 0;
    char *save = NULL, *t;

    for (t = strtok_r(line, "\t\n", &save); t != NULL && n < max; t = strtok_r(NULL, "\t\n", &save))
        w[n++] = t;
    return n;
}

int main(int argc, char **argv)
{
    wh_kube_options o = {0};
    wh_kube_client *c = NULL;
    wh_err err = {0};
    char *line = NULL;
    size_t cap = 0;
    int i;

    signal(SIGPIPE, SIG_IGN); /* as wh_kube.h asks */
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--kubeconfig") == 0)
            o.kubeconfig = argv[i + 1];
        else if (strcmp(argv[i], "--context") == 0)
            o.context = argv[i + 1];
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            o.timeout_ms = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--sa-dir") == 0)
            o.service_account_dir = argv[i + 1];
        else if (strcmp(argv[i], "--as") == 0)
            o.impersonate_user = argv[i + 1];
        else
            break;
    }
    if (i < argc) {
        fprintf(stderr, "kube_probe: unknown argument %s\n", argv[i]);
        return 2;
    }
    if (wh_kube_client_new(&o, &c, &err) != WH_OK) {
        json_t *a = json_pack("{s:b, s:s, s:s}", "ok", 0, "code", wh_strerror(err.code), "error", wh_err_msg(&err));
        json_dumpf(a, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(a);
        return 1;
    }
    while (getline(&line, &cap, stdin) > 0) {
        char *w[10];
        int n = split(line, w, 10);
        json_t *result = NULL, *a;
        wh_code rc;
        if (n == 0)
            continue;
        wh_err_clear(&err);
        rc = run(c, w, n, &result, &err);
        if (rc == WH_OK)
            a = json_pack("{s:b, s:o}", "ok", 1, "result", result != NULL ? result : json_null());
        else {
            json_decref(result);
            a = json_pack("{s:b, s:s, s:s}", "ok", 0, "code", wh_strerror(rc), "error", wh_err_msg(&err));
        }
        json_dumpf(a, stdout, JSON_COMPACT);
        putchar('\n');
        fflush(stdout);
        json_decref(a);
    }
    free(line);
    wh_kube_client_free(c);
    return 0;
}
