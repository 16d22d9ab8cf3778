/*
 * certs.c - `webhookctl certs`: bootstrap and wire up webhookd's serving certificate.
 *
 *   generate          a self-signed ECDSA P-256 certificate for the webhook Service
 *   patch-ca-bundle   put a CA into the webhook configurations that call webhookd
 *
 * Both do what webhookd does for itself at start-up, for setups where a Job,
 * an init container or a human does it instead (and for debugging).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wh_certs.h"
#include "wh_alloc.h"
#include "wh_certs_cabundle.h"
#include "wh_ctl.h"
#include "wh_kube.h"

#define MAX_NAMES 32

static int write_file(const char *path, const wh_buf *data, mode_t mode)
{
    wh_err err;

    if (wh_certs_write_file(path, data->data, data->len, mode, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        return 1;
    }
    return 0;
}

static int run_generate(const wh_ctl_args *a)
{
    const char *cert_file = wh_ctl_string(a, "cert-file"), *key_file = wh_ctl_string(a, "key-file");
    size_t nnames;
    const char *const *names = wh_ctl_strings(a, "dns-name", &nnames);
    long long days = wh_ctl_int(a, "days");
    int status = 1;
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_err err;

    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unexpected argument \"%s\"", a->args[0]);
    if (nnames == 0)
        return wh_ctl_usage_error(a, "at least one --dns-name is required");
    if (nnames > MAX_NAMES)
        return wh_ctl_usage_error(a, "at most %d --dns-name flags", MAX_NAMES);
    if (days < 1 || days > 36500)
        return wh_ctl_usage_error(a, "invalid --days %lld: a whole number of days, 1 to 36500", days);
    if (cert_file == NULL || key_file == NULL)
        return wh_ctl_usage_error(a, "--cert-file and --key-file are required");
    if (wh_certs_generate_self_signed(names, nnames, (int)days, &cert, &key, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    if (write_file(key_file, &key, 0600) != 0 || write_file(cert_file, &cert, 0644) != 0)
        goto out;
    printf("wrote %s and %s (self-signed, %lld days, CN=%s)\n", cert_file, key_file, days, names[0]);
    status = 0;
out:
    wh_buf_free(&cert);
    wh_buf_free(&key);
    return status;
}

static int run_patch(const wh_ctl_args *a)
{
    const char *ca_file = wh_ctl_string(a, "ca-file"), *service_flag = wh_ctl_string(a, "service");
    size_t nm, nv;
    const char *const *mutating = wh_ctl_strings(a, "mutating", &nm);
    const char *const *validating = wh_ctl_strings(a, "validating", &nv);
    char *service = NULL;
    wh_certs_ca_targets t;
    wh_kube_client *client = NULL;
    wh_buf ca = WH_BUF_INIT, report = WH_BUF_INIT;
    wh_err err;
    int status = 1;

    memset(&t, 0, sizeof(t));
    t.selector = wh_ctl_string(a, "selector");
    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unexpected argument \"%s\"", a->args[0]);
    if (ca_file == NULL)
        return wh_ctl_usage_error(a, "--ca-file is required");
    if (nm == 0 && nv == 0 && t.selector == NULL)
        return wh_ctl_usage_error(a, "name at least one configuration (--mutating, --validating, --selector)");
    if (nm > MAX_NAMES || nv > MAX_NAMES)
        return wh_ctl_usage_error(a, "at most %d configurations of each kind", MAX_NAMES);
    if (service_flag != NULL) {
        char *slash = strchr(service_flag, '/');
        if (slash == NULL || slash == service_flag || slash[1] == '\0')
            return wh_ctl_usage_error(a, "invalid --service \"%s\": use NAMESPACE/NAME", service_flag);
        service = wh_strdup(service_flag);
        slash = service + (slash - service_flag);
        *slash = '\0';
        t.service_namespace = service;
        t.service_name = slash + 1;
    }
    t.mutating = mutating;
    t.validating = validating;
    if (wh_buf_read_file(&ca, ca_file, WH_CERTS_MAX_FILE, &err) != WH_OK ||
        wh_certs_check_ca_pem(ca.data, ca.len, &err) != WH_OK) {
        fprintf(stderr, "Error: %s: %s\n", ca_file, wh_err_msg(&err));
        goto out;
    }
    if (wh_ctl_kube_client(a, &client, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    wh_code rc = wh_certs_patch_ca_bundle(client, &t, ca.data, ca.len, &report, &err);
    fputs(report.data != NULL ? report.data : "", stdout);
    if (rc != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    status = 0;
out:
    wh_kube_client_free(client);
    wh_buf_free(&ca);
    wh_buf_free(&report);
    free(service);
    return status;
}

static const wh_ctl_flag generate_flags[] = {
    {.name = "cert-file", .type = WH_CTL_STRING, .usage = "Where to write the certificate (PEM)"},
    {.name = "days", .type = WH_CTL_INT, .usage = "Validity in days", .def = "365"},
    {.name = "dns-name", .type = WH_CTL_STRING_ARRAY, .usage = "A name the certificate is valid for (repeatable)"},
    {.name = "key-file", .type = WH_CTL_STRING, .usage = "Where to write the private key (PEM, mode 0600)"},
};

static const wh_ctl_cmd generate = {
    .name = "generate",
    .use = "--dns-name NAME [--dns-name NAME...] --cert-file FILE --key-file FILE [flags]",
    .summary = "Write a self-signed ECDSA P-256 certificate and key for the webhook Service",
    .long_help = "Write a self-signed ECDSA P-256 certificate and its key.  The first --dns-name is also the\n"
                 "subject CN; IP literals become IP SANs.  The certificate is its own CA: give the same file\n"
                 "to \"patch-ca-bundle --ca-file\".\n",
    .examples = "  webhookctl certs generate --dns-name webhookd.istio-system.svc \\\n"
                "      --dns-name webhookd.istio-system.svc.cluster.local --cert-file tls.crt --key-file tls.key\n",
    WH_CTL_FLAGS(generate_flags),
    .run = run_generate,
};

static const wh_ctl_flag patch_flags[] = {
    {.name = "ca-file", .type = WH_CTL_STRING, .usage = "PEM file with the CA certificate(s)"},
    {.name = "mutating", .type = WH_CTL_STRING_ARRAY, .usage = "MutatingWebhookConfiguration name (repeatable)"},
    {.name = "selector",
     .shorthand = 'l',
     .type = WH_CTL_STRING,
     .usage = "Label selector for configurations of both kinds"},
    {.name = "service", .type = WH_CTL_STRING, .usage = "Only the webhooks calling the Service `NAMESPACE/NAME`"},
    {.name = "validating", .type = WH_CTL_STRING_ARRAY, .usage = "ValidatingWebhookConfiguration name (repeatable)"},
};

static const wh_ctl_cmd patch = {
    .name = "patch-ca-bundle",
    .use = "--ca-file FILE [--mutating NAME]... [--validating NAME]... [flags]",
    .summary = "Set clientConfig.caBundle of the webhook configurations that call webhookd",
    .long_help = "Set clientConfig.caBundle of webhook configurations to the certificates in --ca-file, so that\n"
                 "the API server trusts webhookd's serving certificate.  Configurations already carrying the\n"
                 "bundle are not written.  Select configurations by name and/or label selector; with --service,\n"
                 "only the webhooks that call that Service are changed.\n",
    .examples = "  webhookctl certs patch-ca-bundle --ca-file ca.crt --selector app=webhookd \\\n"
                "      --service istio-system/webhookd\n",
    WH_CTL_FLAGS(patch_flags),
    .inherited = &wh_ctl_cluster_flags,
    .run = run_patch,
};

static const wh_ctl_cmd *const subcommands[] = {&generate, &patch, NULL};

const wh_ctl_cmd wh_ctl_cmd_certs = {
    .name = "certs",
    .summary = "Create webhookd's serving certificate and register its CA (caBundle)",
    .long_help = "Create webhookd's serving certificate and register its CA with the API server.\n",
    .subcommands = subcommands,
};
