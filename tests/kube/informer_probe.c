/*
 * informer_probe.c - runs one wh_kube_informer (kube/wh_kube_informer.h) for
 * tests/kube/test_informer.py: every change of its cache is printed as one
 * JSON line, and stdin commands ask for its status.
 *
 *   informer_probe --kubeconfig F --resource PLURAL [--namespace NS]
 *                  [--selector S] [--watch-timeout SECONDS]
 *   stdout:  {"change": N, "cache": {"ns/name": trimmed object, ...}}
 *   stdin:   status -> {"status": {"synced", "unavailable", "age", "describe"}}
 *            quit
 * Objects are trimmed to metadata.{name,namespace,labels} and data, so an
 * update that only moves resourceVersion or other fields is no change.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_kube.h"
#include "wh_kube_informer.h"

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int changes;

static void print_line(json_t *doc)
{
    char *s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);

    pthread_mutex_lock(&out_mu);
    printf("%s\n", s);
    fflush(stdout);
    pthread_mutex_unlock(&out_mu);
    free(s);
    json_decref(doc);
}

static json_t *trim(const json_t *obj, void *ctx)
{
    const json_t *meta = json_object_get(obj, "metadata");
    json_t *m = json_object(), *out = json_pack("{s:o}", "metadata", m);
    const char *keys[] = {"name", "namespace", "labels"};

    for (size_t i = 0; i < 3; i++)
        if (json_object_get(meta, keys[i]) != NULL)
            json_object_set(m, keys[i], json_object_get(meta, keys[i]));
    if (json_object_get(obj, "data") != NULL)
        json_object_set(out, "data", json_object_get(obj, "data"));
    return out;
}

static void on_change(void *ctx, const json_t *cache)
{
    json_t *d = json_object();

    json_object_set_new(d, "change", json_integer(++changes));
    json_object_set_new(d, "cache", json_deep_copy(cache));
    print_line(d);
}

int main(int argc, char **argv)
{
    static const wh_kube_resource nodes = {"v1", "nodes", "Node", 0};
    static const wh_kube_resource proxyconfigs = {"networking.istio.io/v1beta1", "proxyconfigs", "ProxyConfig", 1};
    wh_kube_options ko = {.timeout_ms = 5000, .user_agent = "informer_probe"};
    wh_kube_informer_options o = {.kube = &ko, .trim = trim, .on_change = on_change, .backoff_max_s = 2};
    wh_kube_informer *inf = NULL;
    wh_err err = {0};
    char line[256];

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--kubeconfig") == 0)
            ko.kubeconfig = argv[i + 1];
        else if (strcmp(argv[i], "--resource") == 0)
            o.resource = strcmp(argv[i + 1], "nodes") == 0          ? &nodes
                         : strcmp(argv[i + 1], "proxyconfigs") == 0 ? &proxyconfigs
                                                                    : wh_kube_resource_lookup(argv[i + 1]);
        else if (strcmp(argv[i], "--namespace") == 0)
            o.ns = argv[i + 1];
        else if (strcmp(argv[i], "--selector") == 0)
            o.label_selector = argv[i + 1];
        else if (strcmp(argv[i], "--watch-timeout") == 0)
            o.watch_timeout_s = atoi(argv[i + 1]);
    }
    if (o.resource == NULL) {
        fprintf(stderr, "informer_probe: --resource is required\n");
        return 2;
    }
    if (wh_kube_informer_start(&o, &inf, &err) != WH_OK) {
        fprintf(stderr, "informer_probe: %s\n", wh_err_msg(&err));
        return 1;
    }
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (strncmp(line, "status", 6) == 0) {
            wh_buf d = WH_BUF_INIT;
            json_t *st = json_object(), *doc = json_object();
            wh_kube_informer_describe(inf, &d);
            json_object_set_new(st, "synced", json_boolean(wh_kube_informer_synced(inf)));
            json_object_set_new(st, "unavailable", json_boolean(wh_kube_informer_unavailable(inf)));
            json_object_set_new(st, "age", json_real(wh_kube_informer_sync_age(inf)));
            json_object_set_new(st, "describe", json_string(d.data ? d.data : ""));
            json_object_set_new(doc, "status", st);
            print_line(doc);
            wh_buf_free(&d);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
    }
    wh_kube_informer_stop(inf);
    return 0;
}
