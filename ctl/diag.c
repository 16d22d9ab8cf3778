/*
 * diag.c - flags, client and webhook recognition shared by the diagnostics
 * commands (check_inject.c, check.c); see diag.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

int diag_flag_value(const char *name, const char *alias, int argc, char **argv, int *i, const char **value)
{
    const char *arg = argv[*i];
    size_t n;

    for (int k = 0; k < 2; k++) {
        const char *want = k == 0 ? name : alias;
        if (want == NULL)
            continue;
        n = strlen(want);
        if (strncmp(arg, want, n) == 0 && arg[n] == '=' && want[1] == '-') {
            *value = arg + n + 1;
            return 1;
        }
        if (strcmp(arg, want) == 0) {
            if (*i + 1 >= argc) {
                fprintf(stderr, "Error: flag needs an argument: %s\n", want);
                return -1;
            }
            *value = argv[++*i];
            return 1;
        }
    }
    return 0;
}

int diag_common_flag(diag_flags *f, int argc, char **argv, int *i)
{
    static const struct {
        const char *name, *alias;
        size_t offset;
    } flags[] = {
        {"--kubeconfig", "-c", offsetof(diag_flags, kubeconfig)},
        {"--context", NULL, offsetof(diag_flags, context)},
        {"--request-timeout", NULL, offsetof(diag_flags, request_timeout)},
        {"--namespace", "-n", offsetof(diag_flags, namespace_)},
        {"--output", "-o", offsetof(diag_flags, output)},
    };
    int r;

    if (strcmp(argv[*i], "-h") == 0 || strcmp(argv[*i], "--help") == 0) {
        f->help = 1;
        return 1;
    }
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        const char **slot = (const char **)((char *)f + flags[k].offset);
        if ((r = diag_flag_value(flags[k].name, flags[k].alias, argc, argv, i, slot)) != 0)
            return r;
    }
    return 0;
}

/* "30s", "1m", "500ms", "2" (seconds) -> milliseconds; -1 when malformed. */
static long parse_duration_ms(const char *s)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || v < 0)
        return -1;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        return (long)(v * 1000);
    if (strcmp(end, "ms") == 0)
        return (long)v;
    if (strcmp(end, "m") == 0)
        return (long)(v * 60000);
    return -1;
}

wh_code diag_client(const diag_flags *f, wh_kube_client **out, wh_err *err)
{
    wh_kube_options o = {.kubeconfig = f->kubeconfig, .context = f->context};

    if (f->request_timeout != NULL && (o.timeout_ms = parse_duration_ms(f->request_timeout)) <= 0)
        return wh_err_set(err, WH_E_INVALID, "invalid --request-timeout \"%s\" (use e.g. 10s, 1m)", f->request_timeout);
    return wh_kube_client_new(&o, out, err);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = s != NULL ? strlen(s) : 0, b = strlen(suffix);
    return s != NULL && a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The path the entry calls: clientConfig.service.path, or the URL's path. */
static const char *entry_path(const json_t *entry)
{
    const json_t *cc = json_object_get(entry, "clientConfig");
    const char *url = json_string_value(json_object_get(cc, "url")), *p;

    if (json_is_object(json_object_get(cc, "service")))
        return json_string_value(json_object_get(json_object_get(cc, "service"), "path"));
    if (url == NULL || (p = strstr(url, "://")) == NULL)
        return NULL;
    return strchr(p + 3, '/');
}

static int path_starts(const json_t *entry, const char *prefix)
{
    const char *p = entry_path(entry);
    size_t n = strlen(prefix);
    return p != NULL && strncmp(p, prefix, n) == 0 && (p[n] == '\0' || p[n] == '/' || p[n] == '?');
}

int diag_is_injector(const json_t *entry)
{
    return ends_with(json_string_value(json_object_get(entry, "name")), "sidecar-injector.istio.io") ||
           path_starts(entry, "/inject");
}

int diag_is_validator(const json_t *entry)
{
    return ends_with(json_string_value(json_object_get(entry, "name")), "validation.istio.io") ||
           path_starts(entry, "/validate");
}

const char *diag_label(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

const char *diag_name(const json_t *obj)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return s != NULL ? s : "";
}

size_t diag_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

void diag_pad(FILE *out, const char *s, size_t width)
{
    size_t w = diag_width(s);
    fputs(s, out);
    for (; w < width; w++)
        fputc(' ', out);
}
