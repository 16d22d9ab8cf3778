/*
 * kube_inject.c - `webhookctl kube-inject`: istioctl kube-inject on files.
 *
 * Reads Kubernetes manifests (multi-document YAML, v1 Lists), injects every
 * pod template with the same pipeline the /inject webhook runs
 * (wh_inject_pod), and prints the manifests back as YAML.  Objects without a
 * pod template pass through; skipped pods say why on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wh_buf.h"
#include "wh_ctl.h"
#include "wh_inject.h"
#include "wh_inject_endpoint.h"
#include "wh_inject_schema.h"
#include "wh_yaml.h"

#define MAX_INPUT ((size_t)64 * 1024 * 1024)

typedef struct kube_inject {
    wh_inject_revision *rev;
    wh_inject_settings settings;
    const char *revision; /* .Revision: "" unless --revision */
} kube_inject;

static const char *kind_of(const json_t *doc)
{
    const char *k = json_string_value(json_object_get(doc, "kind"));
    return k != NULL ? k : "";
}

static const char *meta_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
    return s != NULL ? s : "";
}

/* Where a workload keeps its pod: the object holding the pod's metadata and
 * the one holding its spec (borrowed; NULL when the kind has no pod).  For a
 * CronJob istioctl reads and writes the *job template's* metadata, with the
 * spec of the job's pod template. */
static void pod_holders(json_t *doc, json_t **meta_holder, json_t **spec_holder)
{
    static const char *const kinds[] = {
        "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicationController", "Job", "DeploymentConfig"};
    const char *kind = kind_of(doc);
    json_t *spec = json_object_get(doc, "spec"), *t;
    size_t i;

    *meta_holder = *spec_holder = NULL;
    if (strcmp(kind, "Pod") == 0) {
        *meta_holder = *spec_holder = doc;
        return;
    }
    if (strcmp(kind, "CronJob") == 0) {
        json_t *job = json_object_get(spec, "jobTemplate");
        t = json_object_get(json_object_get(job, "spec"), "template");
        if (json_is_object(job) && json_is_object(t)) {
            *meta_holder = job;
            *spec_holder = t;
        }
        return;
    }
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kind, kinds[i]) == 0 && json_is_object(t = json_object_get(spec, "template")))
            *meta_holder = *spec_holder = t;
}

/* Inject one object in place (a Pod, or a workload's pod template). */
static int inject_object(kube_inject *ki, json_t *doc)
{
    const char *kind = kind_of(doc), *ns = meta_str(doc, "namespace"), *name = meta_str(doc, "name");
    int is_pod = strcmp(kind, "Pod") == 0;
    json_t *meta_holder, *spec_holder, *pod = NULL, *spec;
    wh_inject_deploy_meta deploy;
    wh_inject_pod_request req;
    wh_inject_pod_result res = {0};
    wh_err err = {0};
    char full[512];
    int status = 0;

    pod_holders(doc, &meta_holder, &spec_holder);
    if (meta_holder == NULL)
        return 0; /* nothing to inject: passes through */
    snprintf(full, sizeof(full), "%s%s%s", ns, *ns != '\0' ? "/" : "", name);
    spec = json_object_get(spec_holder, "spec");
    if (json_is_true(json_object_get(spec, "hostNetwork"))) {
        fprintf(stderr, "===> Skipping injection because %s \"%s\" has host networking enabled\n", kind, full);
        return 0;
    }
    pod = json_pack("{s:O?,s:O?}", "metadata", json_object_get(meta_holder, "metadata"), "spec", spec);
    if (json_is_null(json_object_get(pod, "metadata")))
        json_object_set_new(pod, "metadata", json_object());
    if (json_is_null(json_object_get(pod, "spec")))
        json_object_set_new(pod, "spec", json_object());
    deploy.name = name;
    deploy.namespace_ = ns;
    deploy.kind = kind;
    deploy.api_version = json_string_value(json_object_get(doc, "apiVersion")) != NULL
                             ? json_string_value(json_object_get(doc, "apiVersion"))
                             : "";
    memset(&req, 0, sizeof(req));
    req.rev = ki->rev;
    req.settings = &ki->settings;
    req.pod = pod;
    req.revision = ki->revision;
    req.deploy = is_pod ? NULL : &deploy; /* a Pod's owner comes from its ownerReferences */
    req.kube_inject = 1;
    if (wh_inject_pod(&req, &res, &err) != WH_OK) {
        /* the message may quote a value holding a NUL: written whole, as istioctl prints it */
        fputs("Error: ", stderr);
        fwrite(wh_err_msg(&err), 1, wh_err_msg_len(&err), stderr);
        fputc('\n', stderr);
        status = 1;
        goto out;
    }
    if (res.final == NULL) {
        fprintf(stderr, "===> Skipping injection because %s \"%s\": %s\n", kind, full, res.skip_reason);
        goto out;
    }
    /* the injected pod has both: metadata and spec went in as objects */
    json_object_set(meta_holder, "metadata", json_object_get(res.final, "metadata"));
    json_object_set(spec_holder, "spec", json_object_get(res.final, "spec"));
out:
    wh_inject_pod_result_clear(&res);
    json_decref(pod);
    return status;
}

static int inject_doc(kube_inject *ki, json_t *doc)
{
    wh_err err = {0};

    if (strcmp(kind_of(doc), "List") == 0) {
        json_t *items = json_object_get(doc, "items");
        size_t i;
        for (i = 0; i < json_array_size(items); i++)
            if (json_is_object(json_array_get(items, i)) && inject_doc(ki, json_array_get(items, i)) != 0)
                return 1;
        return 0;
    }
    if (inject_object(ki, doc) != 0)
        return 1;
    /* istioctl prints the object as Go encodes its typed form */
    if (wh_inject_go_roundtrip(doc, wh_inject_schema_workload(kind_of(doc)), &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        return 1;
    }
    return 0;
}

static wh_code read_optional(const char *path, wh_buf *b, wh_err *err)
{
    if (path == NULL)
        return WH_OK;
    return wh_buf_read_file(b, path, MAX_INPUT, err);
}

/* 1 when applied (or absent), 2 (message printed) when the value is bad. */
static int apply_setting(const wh_ctl_args *a, kube_inject *ki, const char *key, const char *value)
{
    wh_err err = {0};

    if (value == NULL || wh_inject_settings_set(&ki->settings, key, value, &err) == WH_OK)
        return 1;
    return wh_ctl_usage_error(a, "%s", wh_err_msg(&err)); /* names the flag and the value */
}

#define SETTING(name, repeatable, usage) {name, repeatable},
static const struct {
    const char *name;
    int repeatable;
} settings[] = {WH_INJECT_SETTINGS_FLAGS(SETTING)};

static int run(const wh_ctl_args *a)
{
    const char *in_path = wh_ctl_string(a, "filename"), *out_path = wh_ctl_string(a, "output");
    const char *config_path = wh_ctl_string(a, "injectConfigFile"), *mesh_path = wh_ctl_string(a, "meshConfigFile");
    const char *values_path = wh_ctl_string(a, "valuesFile"), *rev_name = wh_ctl_string(a, "revision");
    const char *istio_version = wh_ctl_string(a, "istio-version");
    wh_release_hints hints = {istio_version, WH_RELEASE_FLAG, NULL, NULL};
    kube_inject ki;
    wh_buf input = WH_BUF_INIT, config = WH_BUF_INIT, mesh = WH_BUF_INIT, values = WH_BUF_INIT, output = WH_BUF_INIT;
    json_t *docs = NULL;
    wh_err err = {0};
    FILE *out = NULL;
    size_t i;
    int status = 1;

    memset(&ki, 0, sizeof(ki));
    ki.settings = (wh_inject_settings)WH_INJECT_SETTINGS_INIT;
    /* istioctl kube-inject on files has no Kubernetes client, so it reads no
     * nodes: IntoResourceFile turns native sidecars on only when
     * ENABLE_NATIVE_SIDECARS is explicitly true, and auto means off. */
    ki.settings.nodes = json_false();
    if (a->nargs > 0) {
        status = wh_ctl_usage_error(a, "unexpected argument \"%s\": give the manifests with -f", a->args[0]);
        goto out;
    }
    /* istiod's settings, checked as webhookd checks its own flags */
    for (i = 0; i < sizeof(settings) / sizeof(settings[0]) && status == 1; i++) {
        if (!settings[i].repeatable) {
            status = apply_setting(a, &ki, settings[i].name, wh_ctl_string(a, settings[i].name));
            continue;
        }
        for (const char *const *v = wh_ctl_strings(a, settings[i].name, NULL); *v != NULL && status == 1; v++)
            status = apply_setting(a, &ki, settings[i].name, *v);
    }
    if (status != 1)
        goto out;
    if (in_path == NULL) {
        status = wh_ctl_usage_error(a, "filename not specified (-f)");
        goto out;
    }
    if ((config_path == NULL) != (values_path == NULL)) {
        status = wh_ctl_usage_error(a, "--injectConfigFile and --valuesFile go together (or neither, for the built-in "
                                       "default revision)");
        goto out;
    }
    if (istio_version != NULL && config_path == NULL) {
        status = wh_ctl_usage_error(a, "--istio-version goes with --injectConfigFile and --valuesFile (the built-in "
                                       "revision is the newest release's)");
        goto out;
    }
    ki.revision = rev_name != NULL ? rev_name : "";
    if (config_path != NULL) {
        const wh_inject_release *r;
        if (read_optional(config_path, &config, &err) != WH_OK || read_optional(values_path, &values, &err) != WH_OK ||
            read_optional(mesh_path, &mesh, &err) != WH_OK ||
            wh_inject_revision_load_release(rev_name != NULL ? rev_name : "default", config.data ? config.data : "",
                                            config.len, values.data ? values.data : "", values.len, mesh.data, mesh.len,
                                            &hints, &ki.rev, &err) != WH_OK) {
            fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
            goto out;
        }
        if ((r = wh_inject_revision_release(ki.rev))->warning[0] != '\0')
            fprintf(stderr, "Warning: %s\n", r->warning);
    } else if (wh_inject_revision_embedded(rev_name, &ki.rev, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    if (wh_buf_read_file(&input, in_path, MAX_INPUT, &err) != WH_OK ||
        wh_yaml_load_all(input.data != NULL ? input.data : "", input.len, &docs, &err) != WH_OK) {
        fprintf(stderr, "Error: %s: %s\n", in_path, wh_err_msg(&err));
        goto out;
    }
    for (i = 0; i < json_array_size(docs); i++) {
        json_t *doc = json_array_get(docs, i);
        if (json_is_null(doc))
            continue;
        if (json_is_object(doc) && inject_doc(&ki, doc) != 0)
            goto out;
        if (wh_yaml_dump(doc, &output, &err) != WH_OK) {
            fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
            goto out;
        }
        wh_buf_puts(&output, "---\n");
    }
    out = out_path != NULL ? fopen(out_path, "w") : stdout;
    if (out == NULL) {
        perror(out_path);
        goto out;
    }
    if (output.len != 0 && fwrite(output.data, 1, output.len, out) != output.len) {
        perror(out_path != NULL ? out_path : "stdout");
        goto out;
    }
    status = 0;
out:
    if (out != NULL && out != stdout && fclose(out) != 0 && status == 0) {
        perror(out_path);
        status = 1;
    }
    json_decref(docs);
    wh_inject_revision_unref(ki.rev);
    wh_inject_settings_clear(&ki.settings);
    wh_buf_free(&input);
    wh_buf_free(&config);
    wh_buf_free(&mesh);
    wh_buf_free(&values);
    wh_buf_free(&output);
    return status;
}

static const wh_ctl_flag flags[] = {
#define CTL_FLAG(flag, repeatable, text)                                                                               \
    {.name = flag, .type = (repeatable) ? WH_CTL_STRING_ARRAY : WH_CTL_STRING, .usage = text},
    WH_INJECT_SETTINGS_FLAGS(CTL_FLAG) /* declared once, beside webhookd's /inject */
    {.name = "filename",
     .shorthand = 'f',
     .type = WH_CTL_STRING,
     .usage = "Input Kubernetes resource filename (- for stdin)"},
    {.name = "injectConfigFile",
     .type = WH_CTL_STRING,
     .usage = "Injection configuration filename (the \"config\" key of the istio-sidecar-injector ConfigMap)",
     .aliases = "inject-config-file"},
    {.name = "meshConfigFile",
     .type = WH_CTL_STRING,
     .usage = "Mesh configuration filename (the \"mesh\" key of the istio ConfigMap)",
     .aliases = "mesh-config-file"},
    {.name = "istio-version",
     .type = WH_CTL_STRING,
     .usage = "Istio release the revision runs, e.g. 1.22.3: inject as istiod of that release (default: "
              "values.global.tag when it is a version, else the newest)"},
    {.name = "output",
     .shorthand = 'o',
     .type = WH_CTL_STRING,
     .usage = "Modified output Kubernetes resource filename (default: stdout)"},
    {.name = "revision",
     .shorthand = 'r',
     .type = WH_CTL_STRING,
     .usage = "Control plane revision to inject as (istio.io/rev)"},
    {.name = "valuesFile",
     .type = WH_CTL_STRING,
     .usage = "Injection values filename (the \"values\" key of the istio-sidecar-injector ConfigMap)",
     .aliases = "values-file"},
};

const wh_ctl_cmd wh_ctl_cmd_kube_inject = {
    .name = "kube-inject",
    .use = "-f FILE|- [flags]",
    .summary = "Inject the Istio sidecar into workload manifests (like istioctl kube-inject)",
    .long_help = "Inject the Istio sidecar into Kubernetes workload manifests (Deployments, Pods, Jobs, Lists ...),\n"
                 "with the same pipeline webhookd's /inject runs.  Objects without a pod template pass through;\n"
                 "skipped pods say why on stderr.\n"
                 "\n"
                 "Without --injectConfigFile and --valuesFile (which go together) the built-in default revision\n"
                 "is used.  The kebab-case spellings --inject-config-file, --mesh-config-file and --values-file\n"
                 "are accepted too.\n",
    .examples = "  # Inject with the built-in default revision\n"
                "  webhookctl kube-inject -f deployment.yaml\n"
                "\n"
                "  # Inject with a revision's own configuration, as istiod would\n"
                "  kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.config}' > "
                "inject-config.yaml\n"
                "  kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.values}' > "
                "inject-values.yaml\n"
                "  kubectl -n istio-system get configmap istio -o jsonpath='{.data.mesh}' > mesh-config.yaml\n"
                "  webhookctl kube-inject -f deployment.yaml --injectConfigFile inject-config.yaml \\\n"
                "      --valuesFile inject-values.yaml --meshConfigFile mesh-config.yaml -o injected.yaml\n",
    WH_CTL_FLAGS(flags),
    .run = run,
};
