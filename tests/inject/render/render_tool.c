/*
 * render_tool.c - runs the render side on one pod for the test harnesses:
 *
 *   inject_render_tool [--config F --values F --mesh F | --embedded]
 *                      [--set KEY=VALUE]... [--node NAME=KUBELET]...
 *                      [--namespace F] [--path SUFFIX] < pod.json
 *   inject_render_tool --prune < pods.json
 *
 * --set takes the settings flags (native-sidecars, compliance-policy,
 * platform, env).  Prints one JSON object: {"inject":bool,"reason":s} when
 * skipped, {"error":s} on failure, else the rendered result (template
 * names, overlays, proxyConfig, proxyEnvs, network, native, hold, tproxy,
 * revision).  --prune reads a JSON array of pods and prints it with the
 * fields a core/v1 Pod does not have dropped, as webhookd drops them from a
 * rendered overlay (for comparing overlays rendered elsewhere).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_inject_decide.h"
#include "wh_inject_decode.h"
#include "wh_inject_render.h"
#include "wh_inject_schema.h"
#include "wh_inject_shape.h"
#include "wh_inject_revision_load.h"

static int usage(void)
{
    fprintf(stderr, "usage: inject_render_tool [--config F --values F --mesh F | --embedded] [--set K=V]... "
                    "[--node NAME=VERSION]... [--namespace F] [--path SUFFIX] < pod.json\n"
                    "       inject_render_tool --prune < pods.json\n");
    return 2;
}

/* --prune: each pod of the array on stdin, unknown fields dropped. */
static int prune(void)
{
    json_t *pods = json_loadf(stdin, 0, NULL), *pod;
    char *dump;
    size_t i;

    if (!json_is_array(pods)) {
        fprintf(stderr, "inject_render_tool: stdin is not a JSON array\n");
        json_decref(pods);
        return 1;
    }
    json_array_foreach(pods, i, pod)
    {
        wh_err ignored; /* type errors are not this mode's business */
        wh_inject_go_decode(pod, &wh_inject_type_pod, 1, NULL, &ignored);
    }
    dump = json_dumps(pods, JSON_COMPACT);
    puts(dump ? dump : "null");
    free(dump);
    json_decref(pods);
    return 0;
}

int main(int argc, char **argv)
{
    const char *files[3] = {NULL, NULL, NULL}, *ns_file = NULL, *path = "";
    wh_buf text[3] = {WH_BUF_INIT, WH_BUF_INIT, WH_BUF_INIT}, podtext = WH_BUF_INIT;
    wh_inject_settings settings = WH_INJECT_SETTINGS_INIT;
    wh_inject_revision *rev = NULL;
    wh_inject_rendered out = {0};
    wh_inject_input in = {0};
    json_t *pod = NULL, *ns = NULL, *envs = NULL, *res = NULL;
    char *rev_name = NULL, *dump;
    int embedded = 0, status = 1;
    const char *reason = NULL;
    wh_err err;

    wh_err_clear(&err);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--prune") == 0)
            return prune();
        if (strcmp(a, "--embedded") == 0) {
            embedded = 1;
            continue;
        }
        if (v == NULL)
            return usage();
        i++;
        if (strcmp(a, "--config") == 0)
            files[0] = v;
        else if (strcmp(a, "--values") == 0)
            files[1] = v;
        else if (strcmp(a, "--mesh") == 0)
            files[2] = v;
        else if (strcmp(a, "--namespace") == 0)
            ns_file = v;
        else if (strcmp(a, "--path") == 0)
            path = v;
        else if (strcmp(a, "--node") == 0) {
            char *eq = strchr(v, '=');
            if (eq == NULL)
                return usage();
            *eq = '\0';
            wh_inject_settings_set_node(&settings, v, eq + 1);
        } else if (strcmp(a, "--set") == 0) {
            char *eq = strchr(v, '=');
            if (eq == NULL)
                return usage();
            *eq = '\0';
            if (wh_inject_settings_set(&settings, v, eq + 1, &err) != WH_OK) {
                fprintf(stderr, "%s\n", wh_err_msg(&err));
                return 2;
            }
        } else
            return usage();
    }
    if (embedded) {
        if (wh_inject_revision_embedded(NULL, &rev, &err) != WH_OK)
            goto fail;
    } else {
        for (int i = 0; i < 3; i++)
            if (files[i] == NULL || wh_buf_read_file(&text[i], files[i], 64u << 20, &err) != WH_OK)
                goto fail;
        if (wh_inject_revision_load("default", text[0].data, text[0].len, text[1].data, text[1].len, text[2].data,
                                    text[2].len, &rev, &err) != WH_OK)
            goto fail;
    }
    if (wh_buf_read_file(&podtext, "-", 64u << 20, &err) != WH_OK)
        goto fail;
    if ((pod = json_loadb(podtext.data ? podtext.data : "", podtext.len, 0, NULL)) == NULL) {
        wh_err_set(&err, WH_E_PARSE, "stdin is not JSON");
        goto fail;
    }
    if (ns_file != NULL && (ns = json_load_file(ns_file, 0, NULL)) == NULL) {
        wh_err_set(&err, WH_E_PARSE, "%s is not JSON", ns_file);
        goto fail;
    }
    if (wh_inject_path_parse(path, strlen(path), &rev_name, &envs, &err) != WH_OK)
        goto fail;
    if (!wh_inject_decide(rev, pod, 0, &reason)) {
        res = json_pack("{sbss}", "inject", 0, "reason", reason);
    } else {
        in.rev = rev;
        in.settings = &settings;
        in.pod = pod;
        in.url_envs = envs;
        in.namespace_obj = ns;
        wh_inject_shaped *shaped = NULL; /* the overlays as the merge stage gets them */
        if (wh_inject_render(&in, &out, &err) != WH_OK ||
            wh_inject_shape_overlays(out.overlays, (const char *const *)out.names, &shaped, &err) != WH_OK) {
            res = json_pack("{sbss}", "inject", 1, "error", wh_err_msg(&err));
        } else {
            json_t *names = json_array();
            for (size_t i = 0; i < out.n; i++)
                json_array_append_new(names, json_string(out.names[i]));
            res = json_pack("{sb sO sO sO sO ss* sb sb sb ss sI sI sO}", "inject", 1, "names", names, "overlays",
                            out.overlays, "proxyConfig", out.proxy_config, "proxyEnvs", out.proxy_envs, "network",
                            out.network, "native", out.native, "hold", out.hold, "tproxy", out.tproxy, "revision",
                            out.revision, "proxyUID", (json_int_t)out.proxy_uid, "proxyGID", (json_int_t)out.proxy_gid,
                            "templatePod", out.template_pod);
            json_decref(names);
        }
        free(shaped);
    }
    dump = json_dumps(res, JSON_INDENT(1));
    puts(dump ? dump : "null");
    free(dump);
    status = 0;
    goto out;
fail:
    fprintf(stderr, "inject_render_tool: %s\n", wh_err_msg(&err));
out:
    wh_inject_rendered_clear(&out);
    wh_inject_settings_clear(&settings);
    for (int i = 0; i < 3; i++)
        wh_buf_free(&text[i]);
    wh_buf_free(&podtext);
    json_decref(pod);
    json_decref(ns);
    json_decref(envs);
    json_decref(res);
    /* last: what was rendered shares the revision's immortal values (its config's, its templates' constant YAML) */
    wh_inject_revision_unref(rev);
    free(rev_name);
    return status;
}
