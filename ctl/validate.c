/*
 * validate.c - `webhookctl validate -f FILE|DIR|-`: judges Istio objects
 * offline exactly as webhookd's /validate would (same wh_validate_object), in
 * the spirit of `istioctl validate -f`.  Input is multi-document YAML or JSON
 * (a `kind: List` is expanded); one line per object; exit status 0 only when
 * every object is valid.
 */
#define _GNU_SOURCE /* asprintf, strndup */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_ctl.h"
#include "wh_validate.h"
#include "wh_yaml.h"

#define VALIDATE_MAX_FILE (64u * 1024 * 1024)

typedef struct run_state {
    const char *ns;                /* default namespace for objects without one */
    wh_validate_settings settings; /* istiod's settings, from the WH_VALIDATE_SETTINGS flags */
    int valid, invalid, errors;
} run_state;

static void judge(run_state *r, const char *source, size_t index, const json_t *obj)
{
    wh_validate_input in = {NULL, NULL, r->ns, r->settings};
    wh_validate_verdict v;
    wh_err err;
    char id[512];
    size_t i;

    wh_err_clear(&err);
    if (wh_validate_object(obj, &in, &v, &err) != WH_OK) {
        fprintf(stdout, "%s: document %zu: %s\n", source, index, wh_err_msg(&err));
        r->errors++;
        return;
    }
    snprintf(id, sizeof(id), "\"%s/%s/%s\"", v.kind, v.namespace_, v.name);
    if (v.allowed) {
        r->valid++;
        if (v.warnings == NULL) {
            printf("%s is valid\n", id);
        } else {
            printf("%s is valid with warnings:", id);
            for (i = 0; i < json_array_size(v.warnings); i++)
                printf("%s %s", i ? ";" : "", json_string_value(json_array_get(v.warnings, i)));
            printf("\n");
        }
    } else {
        r->invalid++;
        printf("%s is invalid: %s\n", id, v.message ? v.message : "");
    }
    wh_validate_verdict_clear(&v);
}

/* One document: an object, or a List whose items are judged one by one. */
static void judge_doc(run_state *r, const char *source, size_t index, const json_t *doc)
{
    const json_t *items = json_object_get(doc, "items");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    size_t i;

    if (json_is_null(doc))
        return;
    if (kind != NULL && strcmp(kind, "List") == 0 && json_is_array(items)) {
        for (i = 0; i < json_array_size(items); i++)
            judge(r, source, index, json_array_get(items, i));
        return;
    }
    judge(r, source, index, doc);
}

static int looks_like_json(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    return *s == '{' || *s == '[';
}

static void validate_text(run_state *r, const char *source, const char *text, size_t len)
{
    json_t *docs = NULL;
    json_error_t jerr;
    wh_err err;
    size_t i;

    wh_err_clear(&err);
    if (looks_like_json(text)) {
        /* A JSON stream: one or more concatenated values. */
        size_t off = 0, index = 0;
        while (off < len) {
            json_t *doc = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
            size_t k;
            if (doc == NULL) {
                for (k = off; k < len && (text[k] == ' ' || text[k] == '\n' || text[k] == '\t' || text[k] == '\r'); k++)
                    ;
                if (k < len) {
                    printf("%s: document %zu: cannot parse JSON: %s (line %d)\n", source, index, jerr.text, jerr.line);
                    r->errors++;
                }
                return;
            }
            judge_doc(r, source, index++, doc);
            json_decref(doc);
            off += jerr.position;
        }
        return;
    }
    if (wh_yaml_load_all(text, len, &docs, &err) != WH_OK) {
        printf("%s: cannot parse YAML: %s\n", source, wh_err_msg(&err));
        r->errors++;
        return;
    }
    for (i = 0; i < json_array_size(docs); i++)
        judge_doc(r, source, i, json_array_get(docs, i));
    json_decref(docs);
}

static int has_manifest_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 || strcmp(dot, ".json") == 0);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void validate_path(run_state *r, const char *path, int depth);

static void validate_dir(run_state *r, const char *path, int depth)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;

    if (d == NULL) {
        printf("%s: cannot open directory\n", path);
        r->errors++;
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char *full;
        if (e->d_name[0] == '.')
            continue;
        full = wh_asprintf("%s/%s", path, e->d_name);
        if (n == cap) {
            char **nn = wh_realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));
            names = nn;
        }
        names[n++] = full;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_names);
    for (i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && (S_ISDIR(st.st_mode) || has_manifest_ext(names[i])))
            validate_path(r, names[i], depth + 1);
        free(names[i]);
    }
    free(names);
}

static void validate_path(run_state *r, const char *path, int depth)
{
    struct stat st;
    wh_buf b = WH_BUF_INIT;
    wh_err err;

    wh_err_clear(&err);
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (depth < 32)
            validate_dir(r, path, depth);
        return;
    }
    if (wh_buf_read_file(&b, path, VALIDATE_MAX_FILE, &err) != WH_OK) {
        printf("%s: %s\n", path, wh_err_msg(&err));
        r->errors++;
    } else {
        validate_text(r, strcmp(path, "-") == 0 ? "<stdin>" : path, b.data, b.len);
    }
    wh_buf_free(&b);
}

static int run(const wh_ctl_args *a)
{
    run_state r = {wh_ctl_string(a, "namespace"), {0}, 0, 0, 0};
    size_t nfiles, i;
    const char *const *files = wh_ctl_strings(a, "filename", &nfiles);

#define READ_SETTING(field, flag, usage) r.settings.field = wh_ctl_bool(a, flag);
    WH_VALIDATE_SETTINGS(READ_SETTING)
#undef READ_SETTING

    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unexpected argument \"%s\": give the inputs with -f", a->args[0]);
    if (nfiles == 0)
        return wh_ctl_usage_error(a, "-f FILE|DIR|- is required");
    for (i = 0; i < nfiles; i++)
        validate_path(&r, files[i], 0);
    if (r.valid + r.invalid == 0 && r.errors == 0)
        fprintf(stderr, "Error: no objects found\n");
    return r.invalid == 0 && r.errors == 0 && r.valid > 0 ? 0 : 1;
}

static const wh_ctl_flag flags[] = {
    {.name = "filename",
     .shorthand = 'f',
     .type = WH_CTL_STRING_ARRAY,
     .usage = "A file, a directory (*.yaml, *.yml, *.json, recursively) or - for stdin (repeatable)"},
    {.name = "namespace",
     .shorthand = 'n',
     .type = WH_CTL_STRING,
     .usage = "Namespace for objects that have none",
     .def = "default"},
/* the same switches as webhookd's /validate, declared once beside the validator (wh_validate.h) */
#define SETTING_FLAG(field, flag, text) {.name = flag, .type = WH_CTL_BOOL, .usage = text},
    WH_VALIDATE_SETTINGS(SETTING_FLAG)
#undef SETTING_FLAG
};

const wh_ctl_cmd wh_ctl_cmd_validate = {
    .name = "validate",
    .use = "-f FILE|DIR|- [flags]",
    .summary = "Validate Istio resources offline, exactly as webhookd's /validate does",
    .long_help = "Validate Istio resources the way webhookd's /validate does, without a cluster.  Input is\n"
                 "multi-document YAML or JSON (a \"kind: List\" is expanded).  Prints one line per object;\n"
                 "exits 0 only when every object is valid.\n",
    .examples = "  # Validate a file and a directory of manifests\n"
                "  webhookctl validate -f gateway.yaml -f manifests/\n"
                "\n"
                "  # Validate what a chart renders\n"
                "  helm template ./chart | webhookctl validate -f -\n",
    WH_CTL_FLAGS(flags),
    .run = run,
};
