/*
 * kube_exec.c - client.authentication.k8s.io exec credential plugins, the way
 * cloud clusters (GKE, EKS, AKS) hand out credentials: run the command with
 * KUBERNETES_EXEC_INFO, read an ExecCredential from its stdout, never wait
 * longer than the deadline.
 */
#define _GNU_SOURCE /* strptime, pipe2, timegm */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wh_alloc.h"
#include "kube_internal.h"

#define EXEC_MAX_OUTPUT (1024u * 1024u)

extern char **environ;

void kube_exec_credential_clear(kube_exec_credential *cred)
{
    free(cred->token);
    free(cred->cert.data);
    free(cred->key.data);
    memset(cred, 0, sizeof(*cred));
}

time_t kube_parse_rfc3339(const char *s)
{
    struct tm tm;
    const char *p;
    long off = 0;
    time_t t;

    memset(&tm, 0, sizeof(tm));
    if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
        return -1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L + ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
        if (*p == '-')
            off = -off;
        p += 6;
    } else {
        return -1;
    }
    if (*p != '\0')
        return -1;
    t = timegm(&tm);
    return t == (time_t)-1 ? -1 : t - off;
}

/* The KUBERNETES_EXEC_INFO value: an ExecCredential with the spec. */
static char *exec_info(const wh_kube_config *cfg, int interactive)
{
    json_t *spec = json_pack("{s:b}", "interactive", interactive), *info;
    char *s;

    if (spec != NULL && cfg->exec->provide_cluster_info) {
        json_t *cluster = json_pack("{s:s, s:b}", "server", cfg->server, "insecure-skip-tls-verify", cfg->insecure);
        if (cluster != NULL && cfg->tls_server_name != NULL)
            json_object_set_new(cluster, "tls-server-name", json_string(cfg->tls_server_name));
        if (cluster != NULL && cfg->proxy_url != NULL)
            json_object_set_new(cluster, "proxy-url", json_string(cfg->proxy_url));
        json_object_set_new(spec, "cluster", cluster);
    }
    info = json_pack("{s:s, s:s, s:o}", "apiVersion", cfg->exec->api_version, "kind", "ExecCredential", "spec", spec);
    s = info != NULL ? json_dumps(info, JSON_COMPACT) : NULL;
    json_decref(info);
    return s;
}

static char **build_env(const wh_kube_config *cfg, const char *info)
{
    size_t n = 0, m = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    while (cfg->exec->env[m] != NULL)
        m++;
    env = wh_calloc(n + m + 2, sizeof(*env));
    for (size_t i = 0; i < n; i++) {
        int overridden = strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) == 0;
        for (size_t j = 0; j < m && !overridden; j++) {
            size_t kl = strcspn(cfg->exec->env[j], "=");
            overridden = strncmp(environ[i], cfg->exec->env[j], kl + 1) == 0;
        }
        if (!overridden)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++)
        env[k++] = cfg->exec->env[j];
    env[k] = (char *)info;
    return env;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Read the child's stdout until EOF or the deadline. */
static wh_code read_output(int fd, long deadline, long allowed_ms, wh_buf *out, const char *cmd, wh_err *err)
{
    char chunk[4096];

    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        long left = deadline - now_ms();
        ssize_t r;
        int pr;
        if (left <= 0)
            return wh_err_set(err, WH_E_TIMEOUT, "exec plugin %s did not finish within %ld ms: killed it", cmd,
                              allowed_ms);
        pr = poll(&pfd, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return wh_err_set(err, WH_E_IO, "exec plugin %s: poll: %s", cmd, strerror(errno));
        if (pr == 0)
            continue;
        r = read(fd, chunk, sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return wh_err_set(err, WH_E_IO, "exec plugin %s: read: %s", cmd, strerror(errno));
        if (r == 0)
            return WH_OK;
        if (out->len + (size_t)r > EXEC_MAX_OUTPUT)
            return wh_err_set(err, WH_E_LIMIT, "exec plugin %s wrote more than %u bytes", cmd, EXEC_MAX_OUTPUT);
        wh_buf_append(out, chunk, (size_t)r);
    }
}

static wh_code parse_credential(const wh_kube_config *cfg, const wh_buf *outb, kube_exec_credential *cred, wh_err *err)
{
    const char *cmd = cfg->exec->command;
    json_error_t jerr;
    json_t *doc = json_loadb(outb->data != NULL ? outb->data : "", outb->len, 0, &jerr);
    json_t *status;
    const char *api, *exp, *cert, *key, *token;
    wh_code rc = WH_OK;

    if (doc == NULL) {
        rc = wh_err_set(err, WH_E_PARSE, "exec plugin %s: output is not an ExecCredential: %s", cmd, jerr.text);
        goto out;
    }
    api = json_string_value(json_object_get(doc, "apiVersion"));
    if (api == NULL || strcmp(api, cfg->exec->api_version) != 0) {
        rc = wh_err_set(err, WH_E_PARSE,
                        "exec plugin %s: ExecCredential apiVersion \"%s\" does not match the configured \"%s\"", cmd,
                        api != NULL ? api : "", cfg->exec->api_version);
        goto out;
    }
    status = json_object_get(doc, "status");
    if (!json_is_object(status)) {
        rc = wh_err_set(err, WH_E_PARSE, "exec plugin %s: ExecCredential has no status", cmd);
        goto out;
    }
    token = json_string_value(json_object_get(status, "token"));
    cert = json_string_value(json_object_get(status, "clientCertificateData"));
    key = json_string_value(json_object_get(status, "clientKeyData"));
    exp = json_string_value(json_object_get(status, "expirationTimestamp"));
    if ((cert != NULL) != (key != NULL)) {
        rc = wh_err_set(err, WH_E_PARSE,
                        "exec plugin %s: clientCertificateData and clientKeyData must both be present or absent", cmd);
        goto out;
    }
    if ((token == NULL || token[0] == '\0') && cert == NULL) {
        rc = wh_err_set(err, WH_E_PARSE,
                        "exec plugin %s: ExecCredential status has neither a token nor a client certificate", cmd);
        goto out;
    }
    if (exp != NULL && (cred->expires = kube_parse_rfc3339(exp)) == (time_t)-1) {
        rc = wh_err_set(err, WH_E_PARSE, "exec plugin %s: invalid expirationTimestamp \"%s\"", cmd, exp);
        goto out;
    }
    if (token != NULL && token[0] != '\0')
        cred->token = wh_strdup(token);
    if (cert != NULL) {
        size_t cl = strlen(cert), kl = strlen(key);
        cred->cert.data = (unsigned char *)wh_strdup(cert);
        cred->key.data = (unsigned char *)wh_strdup(key);
        cred->cert.len = cl;
        cred->key.len = kl;
    }
out:
    json_decref(doc);
    return rc;
}

wh_code kube_exec_run(const wh_kube_config *cfg, long timeout_ms, kube_exec_credential *cred, wh_err *err)
{
    const kube_exec_config *e = cfg->exec;
    int interactive = strcmp(e->interactive_mode, "Never") != 0 && isatty(STDIN_FILENO);
    int pipefd[2] = {-1, -1}, status = 0, spawned = 0;
    posix_spawn_file_actions_t fa;
    char **argv = NULL, **env = NULL, *info = NULL;
    wh_buf infob = WH_BUF_INIT, outb = WH_BUF_INIT;
    size_t nargs = 0;
    pid_t pid = -1;
    long deadline, allowed;
    wh_code rc = WH_OK;

    memset(cred, 0, sizeof(*cred));
    if (strcmp(e->interactive_mode, "Always") == 0 && !interactive)
        return wh_err_set(err, WH_E_UNSUPPORTED,
                          "exec plugin %s needs an interactive terminal (interactiveMode: Always) and stdin is not one",
                          e->command);
    if (posix_spawn_file_actions_init(&fa) != 0)
        wh_oom(0); /* its only failure */
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        rc = wh_err_set(err, WH_E_IO, "exec plugin: pipe: %s", strerror(errno));
        goto out;
    }
    while (e->args[nargs] != NULL)
        nargs++;
    if ((info = exec_info(cfg, interactive)) == NULL) {
        rc = wh_err_set(err, WH_E_INVALID, "exec plugin: cannot encode the ExecCredential spec");
        goto out;
    }
    argv = wh_calloc(nargs + 2, sizeof(*argv));
    wh_buf_printf(&infob, "KUBERNETES_EXEC_INFO=%s", info);
    env = build_env(cfg, infob.data);
    argv[0] = e->command;
    for (size_t i = 0; i < nargs; i++)
        argv[i + 1] = e->args[i];
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    if (!interactive)
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if ((errno = posix_spawnp(&pid, e->command, &fa, NULL, argv, env)) != 0) {
        rc = wh_err_set(err, WH_E_NOTFOUND, "exec plugin: cannot run \"%s\": %s%s%s", e->command, strerror(errno),
                        e->install_hint != NULL ? "\n" : "", e->install_hint != NULL ? e->install_hint : "");
        goto out;
    }
    spawned = 1;
    close(pipefd[1]);
    pipefd[1] = -1;
    /* A plugin talking to a person (login prompt) gets at least five minutes. */
    allowed = interactive && timeout_ms < 300000 ? 300000 : timeout_ms;
    deadline = now_ms() + allowed;
    if ((rc = read_output(pipefd[0], deadline, allowed, &outb, e->command, err)) != WH_OK)
        goto out;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    spawned = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        rc = wh_err_set(err, WH_E_REMOTE, "exec plugin %s failed (%s %d)%s%s", e->command,
                        WIFEXITED(status) ? "exit status" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), e->install_hint != NULL ? ": " : "",
                        e->install_hint != NULL ? e->install_hint : "");
        goto out;
    }
    rc = parse_credential(cfg, &outb, cred, err);
out:
    if (spawned) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (rc != WH_OK)
        kube_exec_credential_clear(cred);
    posix_spawn_file_actions_destroy(&fa);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    free(argv);
    free(env);
    free(info);
    wh_buf_free(&infob);
    wh_buf_free(&outb);
    return rc;
}
