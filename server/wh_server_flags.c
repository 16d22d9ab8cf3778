/*
 * wh_server_flags.c - webhookd's flags: one table, read from the command line
 * and from WEBHOOKD_* environment variables (containers configure through the
 * environment), with --help generated from the same table.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_server.h"

void wh_server_core_flags(wh_server_config *cfg, wh_server_flag *rows, size_t nrows)
{
    const wh_server_flag core[WH_SERVER_CORE_FLAGS] = {
        {"listen", WH_FLAG_STRING, &cfg->listen, ":8443",
         "HTTPS address to listen on: [HOST]:PORT, e.g. :8443, 127.0.0.1:8443, [::1]:8443"},
        {"monitoring-listen", WH_FLAG_STRING, &cfg->monitoring_listen, "",
         "also serve /healthz, /readyz, /metrics and /version over plain HTTP on this address (like istiod's "
         ":15014), from a thread of their own so that probes are answered while reviews keep the workers "
         "busy; e.g. :15014 (default: off)"},
        {"threads", WH_FLAG_INT, &cfg->threads, "0", "worker threads, each with its own event loop (0 = one per CPU)"},
        {"http2", WH_FLAG_BOOL, &cfg->http2, "false",
         "also serve HTTP/2 (ALPN h2); off by default: the kube-apiserver speaks HTTP/1.1 to webhooks"},
        {"max-request-bytes", WH_FLAG_BYTES, &cfg->max_request_bytes, "6MiB",
         "largest request body accepted; larger ones get 413"},
        {"max-inflight-bytes", WH_FLAG_BYTES, &cfg->max_inflight_bytes, "0",
         "bound on request bytes buffered plus answers not yet written, over all connections: new requests "
         "beyond it get a fast 503, while requests already admitted (with a Content-Length, for their whole "
         "body) always finish (0 = a quarter of the container's memory limit, 1GiB without one)"},
        {"write-timeout", WH_FLAG_SECONDS, &cfg->write_timeout, "15s",
         "a connection whose answer is not read within this time is closed"},
        {"shutdown-timeout", WH_FLAG_SECONDS, &cfg->shutdown_timeout, "15s",
         "on SIGTERM/SIGINT, how long in-flight requests may take before connections are cut"},
        {"shutdown-delay", WH_FLAG_SECONDS, &cfg->shutdown_delay, "0s",
         "on SIGTERM, keep accepting and serving this long before closing the listener (while the pod's "
         "endpoint is removed; /readyz fails and answers say Connection: close meanwhile); a second signal "
         "ends the delay"},
        {"log-level", WH_FLAG_STRING, &cfg->log_level, "info",
         "debug, info, warn, error or off (debug adds an access-log line per review)"},
        {"log-format", WH_FLAG_STRING, &cfg->log_format, "json", "json or text"},
        {"kubeconfig", WH_FLAG_STRING, &cfg->kubeconfig, "",
         "kubeconfig for --patch-ca-bundle and the cluster reads of /inject (default: $KUBECONFIG, ~/.kube/config, "
         "else the in-cluster "
         "service account)"},
        {"kube-timeout", WH_FLAG_SECONDS, &cfg->kube_timeout, "10s", "deadline of each Kubernetes API request"},
        {"help", WH_FLAG_BOOL, &cfg->help, "false", "print this help and exit"},
        {"version", WH_FLAG_BOOL, &cfg->version, "false", "print the version and exit"},
        {"check-config", WH_FLAG_BOOL, &cfg->check_config, "false",
         "read every flag and $WEBHOOKD_* variable as a start would, run the checks a start runs before it "
         "reads any file or the network (values, flags that conflict or need each other), print \"config ok\" "
         "and exit 0, or the error a start would print and exit 2; the files the flags name (certificates, "
         "--revisions-dir, kubeconfig) need not exist yet and the cluster is not contacted"},
    };
    size_t i;

    for (i = 0; i < WH_SERVER_CORE_FLAGS && i < nrows; i++)
        rows[i] = core[i];
}

/* --- value parsers -------------------------------------------------------- */

wh_code wh_server_parse_bytes(const char *text, size_t *out)
{
    static const struct {
        const char *suffix;
        unsigned shift;
    } units[] = {{"", 0},    {"B", 0},   {"K", 10},   {"KB", 10}, {"Ki", 10}, {"KiB", 10}, {"M", 20},
                 {"MB", 20}, {"Mi", 20}, {"MiB", 20}, {"G", 30},  {"GB", 30}, {"Gi", 30},  {"GiB", 30}};
    unsigned long long n;
    char *end;
    size_t i;

    if (!isdigit((unsigned char)text[0]))
        return WH_E_INVALID;
    errno = 0;
    n = strtoull(text, &end, 10);
    if (errno != 0)
        return WH_E_INVALID;
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            if (n > (SIZE_MAX >> units[i].shift))
                return WH_E_INVALID;
            *out = (size_t)n << units[i].shift;
            return WH_OK;
        }
    }
    return WH_E_INVALID;
}

wh_code wh_server_parse_seconds(const char *text, double *out)
{
    char *end;
    double v;

    if (!isdigit((unsigned char)text[0]) && text[0] != '.')
        return WH_E_INVALID;
    errno = 0;
    v = strtod(text, &end);
    if (errno != 0 || !isfinite(v))
        return WH_E_INVALID;
    if (strcmp(end, "ms") == 0)
        v /= 1000;
    else if (strcmp(end, "m") == 0)
        v *= 60;
    else if (strcmp(end, "h") == 0)
        v *= 3600;
    else if (strcmp(end, "") != 0 && strcmp(end, "s") != 0)
        return WH_E_INVALID;
    *out = v;
    return WH_OK;
}

static wh_code set_value(const wh_server_flag *f, const char *text, const char *source, wh_err *err)
{
    long v;
    char *end;

    switch (f->type) {
    case WH_FLAG_STRING:
        *(const char **)f->value = text;
        return WH_OK;
    case WH_FLAG_INT:
        errno = 0;
        v = strtol(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
            break;
        *(int *)f->value = (int)v;
        return WH_OK;
    case WH_FLAG_BOOL:
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
            *(int *)f->value = 1;
        else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
            *(int *)f->value = 0;
        else
            break;
        return WH_OK;
    case WH_FLAG_BYTES:
        if (wh_server_parse_bytes(text, f->value) != WH_OK)
            break;
        return WH_OK;
    case WH_FLAG_SECONDS:
        if (wh_server_parse_seconds(text, f->value) != WH_OK || *(double *)f->value < 0)
            break;
        return WH_OK;
    }
    return wh_err_set(err, WH_E_INVALID, "invalid value \"%s\" for %s%s", text, source, f->name);
}

/* "tls-cert-file" -> "WEBHOOKD_TLS_CERT_FILE" */
static void env_name(const char *flag, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "WEBHOOKD_%s", flag);
    for (size_t i = 9; i < n && i < size; i++)
        out[i] = out[i] == '-' ? '_' : (char)toupper((unsigned char)out[i]);
}

static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);
    for (; env != NULL && *env != NULL; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

static const wh_server_flag *find(const wh_server_flag *rows, const char *name, size_t len)
{
    for (; rows->name != NULL; rows++)
        if (strlen(rows->name) == len && strncmp(rows->name, name, len) == 0)
            return rows;
    return NULL;
}

wh_code wh_server_flags_parse(const wh_server_flag *rows, int argc, char **argv, char **env, wh_err *err)
{
    const wh_server_flag *f;
    char name[128];
    const char *v;
    wh_code rc;
    int i;

    for (f = rows; f->name != NULL; f++) {
        if (f->defval != NULL && (rc = set_value(f, f->defval, "the default of --", err)) != WH_OK)
            return rc;
        env_name(f->name, name, sizeof(name));
        if ((v = env_get(env, name)) != NULL && (rc = set_value(f, v, "$WEBHOOKD_* for --", err)) != WH_OK)
            return wh_err_set(err, WH_E_INVALID, "invalid value \"%s\" in %s", v, name);
    }
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq;

        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return wh_err_set(err, WH_E_INVALID, "unexpected argument \"%s\" (flags start with --)", arg);
        arg += 2;
        eq = strchr(arg, '=');
        if ((f = find(rows, arg, eq != NULL ? (size_t)(eq - arg) : strlen(arg))) == NULL)
            return wh_err_set(err, WH_E_INVALID, "unknown flag --%.*s",
                              (int)(eq != NULL ? eq - arg : (long)strlen(arg)), arg);
        if (eq != NULL)
            v = eq + 1;
        else if (f->type == WH_FLAG_BOOL)
            v = "true";
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return wh_err_set(err, WH_E_INVALID, "flag --%s needs a value", f->name);
        if ((rc = set_value(f, v, "--", err)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

void wh_server_flags_usage(const wh_server_flag *rows, FILE *out)
{
    static const char *const type_names[] = {"string", "int", "", "bytes", "duration"};
    char env[128];

    for (; rows->name != NULL; rows++) {
        env_name(rows->name, env, sizeof(env));
        fprintf(out, "  --%s %s\n        %s", rows->name, type_names[rows->type], rows->usage);
        if (rows->defval != NULL && rows->defval[0] != '\0' && rows->type != WH_FLAG_BOOL)
            fprintf(out, " (default %s)", rows->defval);
        fprintf(out, " [$%s]\n", env);
    }
}

/* --- defaults ------------------------------------------------------------- */

static int read_limit(const char *path, unsigned long long *out)
{
    FILE *f = fopen(path, "r");
    char line[64];
    char *end;
    int ok = 0;

    if (f == NULL)
        return 0;
    if (fgets(line, sizeof(line), f) != NULL && isdigit((unsigned char)line[0])) {
        errno = 0;
        *out = strtoull(line, &end, 10);
        ok = errno == 0 && (*end == '\n' || *end == '\0');
    }
    fclose(f);
    return ok;
}

size_t wh_server_default_inflight(const char *cgroup_root, size_t max_request_bytes)
{
    char path[512];
    unsigned long long limit = 0, v;
    size_t floor = max_request_bytes > SIZE_MAX - 65536 ? SIZE_MAX : max_request_bytes + 65536, out;

    snprintf(path, sizeof(path), "%s/memory.max", cgroup_root); /* v2; "max" = none */
    if (read_limit(path, &v))
        limit = v;
    snprintf(path, sizeof(path), "%s/memory/memory.limit_in_bytes", cgroup_root); /* v1; huge = none */
    if (limit == 0 && read_limit(path, &v) && v < (1ULL << 50))
        limit = v;
    out = limit != 0 ? (size_t)(limit / 4) : (size_t)1 << 30;
    return out > floor ? out : floor;
}
