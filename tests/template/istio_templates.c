/*
 * istio_templates.c - every template of an Istio revision's injection config
 * (the conformance fixture's inject-config.yaml) parses with the engine and
 * renders without error against the injection code's default template data
 * for the `hello` pod, each selected through inject.istio.io/templates.
 * Templates written for istiod's gateway deployment controller (waypoint,
 * kube-gateway, ...) read fields the injection data does not have; for them
 * the only acceptable failure is Go's own "can't evaluate field X in type
 * *inject.SidecarTemplateData", which is what istiod answers when a pod
 * selects one (they are reported as such, every other error fails).
 *
 *   istio_templates FIXTURES_DIR
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "wh_inject_render.h"
#include "wh_inject_revision_load.h"
#include "wh_yaml.h"

static int load(const char *dir, const char *name, wh_buf *b)
{
    char path[4096];
    wh_err err;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (wh_buf_read_file(b, path, 64 << 20, &err) != WH_OK) {
        fprintf(stderr, "%s\n", wh_err_msg(&err));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    wh_buf config = WH_BUF_INIT, values = WH_BUF_INIT, mesh = WH_BUF_INIT, input = WH_BUF_INIT;
    wh_inject_settings settings = WH_INJECT_SETTINGS_INIT;
    wh_inject_revision *rev = NULL;
    json_t *cfg = NULL, *doc = NULL;
    const char *name;
    json_t *tmpl;
    char casedir[4096];
    int failures = 0, count = 0;
    wh_err err;

    if (argc != 2) {
        fprintf(stderr, "usage: istio_templates FIXTURES_DIR\n");
        return 2;
    }
    snprintf(casedir, sizeof(casedir), "%s/cases/TestInjection-096-hello.yaml.injected", argv[1]);
    if (load(argv[1], "inject-config.yaml", &config) || load(argv[1], "values.json", &values) ||
        load(argv[1], "mesh.yaml", &mesh) || load(casedir, "input.yaml", &input))
        return 1;
    if (wh_yaml_load(config.data, config.len, &cfg, &err) != WH_OK ||
        wh_yaml_load(input.data, input.len, &doc, &err) != WH_OK ||
        wh_inject_revision_load("default", config.data, config.len, values.data, values.len, mesh.data, mesh.len, &rev,
                                &err) != WH_OK) {
        fprintf(stderr, "FAIL loading the revision (every template must parse): %s\n", wh_err_msg(&err));
        return 1;
    }
    json_object_foreach(json_object_get(cfg, "templates"), name, tmpl)
    {
        json_t *pod = json_deep_copy(json_object_get(json_object_get(doc, "spec"), "template"));
        json_t *meta = json_object_get(pod, "metadata");
        wh_inject_rendered out = {0};
        wh_inject_input in = {0};

        count++;
        if (json_object_get(meta, "annotations") == NULL)
            json_object_set_new(meta, "annotations", json_object());
        json_object_set_new(json_object_get(meta, "annotations"), "inject.istio.io/templates", json_string(name));
        json_object_set_new(meta, "namespace", json_string("default"));
        in.rev = rev;
        in.settings = &settings;
        in.pod = pod;
        if (wh_inject_render(&in, &out, &err) != WH_OK) {
            const char *m = wh_err_msg(&err), *p = strstr(m, "can't evaluate field ");
            if (p != NULL && strstr(p, " in type *inject.SidecarTemplateData") != NULL &&
                strcmp(strstr(p, " in type ") + 9, "*inject.SidecarTemplateData") == 0) {
                printf("ok   %s: not an injection template (%s)\n", name, p);
            } else {
                printf("FAIL %s: %s\n", name, m);
                failures++;
            }
        } else {
            printf("ok   %s: %zu overlay(s)\n", name, out.n);
        }
        wh_inject_rendered_clear(&out);
        json_decref(pod);
    }
    printf("%d/%d templates render\n", count - failures, count);
    wh_inject_revision_unref(rev);
    json_decref(cfg);
    json_decref(doc);
    wh_buf_free(&config);
    wh_buf_free(&values);
    wh_buf_free(&mesh);
    wh_buf_free(&input);
    return failures == 0 && count > 0 ? 0 : 1;
}
