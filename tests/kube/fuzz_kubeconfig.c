/*
 * fuzz_kubeconfig.c - libFuzzer target for kubeconfig files as webhookctl
 * and webhookd read them (kube/kube_config.c: YAML, contexts, clusters,
 * users, exec plugins, relative paths), a file any user hands us.
 *
 * Input: the file's bytes (written to a temporary file: the loader reads a
 * path as kubectl does).  Invariants: a refused file says why; a loaded one
 * describes itself with a server and an auth kind.  Nothing is run or
 * contacted: loading never starts an exec plugin.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wh_kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[] = "/tmp/fuzz-kubeconfig-XXXXXX";

static void cleanup(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *f;
    wh_kube_options opts = {0};
    wh_kube_config *cfg = NULL;
    wh_err err = {0};

    if (f == NULL) {
        int fd = mkstemp(path);
        if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
            abort();
        atexit(cleanup);
    }
    if (ftruncate(fileno(f), 0) != 0 || fseek(f, 0, SEEK_SET) != 0 || fwrite(data, 1, size, f) != size ||
        fflush(f) != 0)
        abort();
    opts.kubeconfig = path;
    if (wh_kube_config_load(&opts, &cfg, &err) != WH_OK) {
        if (cfg != NULL || wh_err_msg(&err)[0] == '\0')
            abort();
        return 0;
    }
    json_t *d = wh_kube_config_describe(cfg);
    if (json_string_value(json_object_get(d, "server")) == NULL ||
        json_string_value(json_object_get(d, "auth")) == NULL)
        abort();
    json_decref(d);
    wh_kube_config_free(cfg);
    return 0;
}
