/*
 * diag.c - webhook recognition and table output shared by the diagnostics
 * commands (check_inject.c, check.c); see diag.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

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

const char *diag_injecting_revision(const json_t *mwcs, const json_t *ns_labels, const json_t *pod_labels,
                                    const json_t **mwc, int *matches)
{
    const char *rev = NULL;
    const json_t *first = NULL, *cfg, *w;
    size_t i, j;
    int n = 0;

    json_array_foreach(mwcs, i, cfg)
    {
        int hit = 0;
        json_array_foreach(json_object_get(cfg, "webhooks"), j, w)
        {
            if (diag_is_injector(w) &&
                wh_kube_selector_matches(json_object_get(w, "namespaceSelector"), ns_labels) == 1 &&
                wh_kube_selector_matches(json_object_get(w, "objectSelector"), pod_labels) == 1)
                hit = 1;
        }
        if (!hit)
            continue;
        n++;
        if (first == NULL) {
            first = cfg;
            rev = diag_label(cfg, "istio.io/rev");
        }
    }
    if (mwc != NULL)
        *mwc = first;
    if (matches != NULL)
        *matches = n;
    return rev;
}

int diag_is_webhookd(const json_t *mwc)
{
    const char *name = diag_label(mwc, "app.kubernetes.io/name");
    size_t i;
    json_t *w;

    if (name != NULL && strcmp(name, "webhookd") == 0)
        return 1;
    json_array_foreach(json_object_get(mwc, "webhooks"), i, w)
    {
        if (path_starts(w, "/inject/rev"))
            return 1;
    }
    return 0;
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
