/*
 * certs.c - `webhookctl certs`: bootstrap and wire up webhookd's serving certificate.
 *
 *   generate          a self-signed ECDSA P-256 certificate for the webhook Service
 *   patch-ca-bundle   put a CA into the webhook configurations that call webhookd
 *
 * Both do what webhookd does for itself at start-up, for setups where a Job,
 * an init container or a human does it instead (and for debugging).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wh_certs.h"
#include "wh_certs_cabundle.h"
#include "wh_ctl.h"
#include "wh_kube.h"

#define MAX_NAMES 32

static const char certs_usage[] =
    "Create webhookd's serving certificate and register its CA with the API server.\n"
    "\n"
    "Usage:\n"
    "  webhookctl certs [command]\n"
    "\n"
    "Available Commands:\n"
    "  generate         Write a self-signed ECDSA P-256 certificate and key for the webhook Service\n"
    "  patch-ca-bundle  Set clientConfig.caBundle of the webhook configurations that call webhookd\n"
    "\n"
    "Use \"webhookctl certs [command] --help\" for more information about a command.\n";

static const char generate_usage[] =
    "Write a self-signed ECDSA P-256 certificate and its key.  The first --dns-name is also the\n"
    "subject CN; IP literals become IP SANs.  The certificate is its own CA: give the same file\n"
    "to \"patch-ca-bundle --ca-file\".\n"
    "\n"
    "Usage:\n"
    "  webhookctl certs generate --dns-name NAME [--dns-name NAME...] --cert-file FILE --key-file FILE [flags]\n"
    "\n"
    "Examples:\n"
    "  webhookctl certs generate --dns-name webhookd.istio-system.svc \\\n"
    "      --dns-name webhookd.istio-system.svc.cluster.local --cert-file tls.crt --key-file tls.key\n"
    "\n"
    "Flags:\n"
    "      --cert-file string   where to write the certificate (PEM)\n"
    "      --days int           validity in days (default 365)\n"
    "      --dns-name string    a name the certificate is valid for (repeatable)\n"
    "  -h, --help               help for generate\n"
    "      --key-file string    where to write the private key (PEM, mode 0600)\n";

static const char patch_usage[] =
    "Set clientConfig.caBundle of webhook configurations to the certificates in --ca-file, so that\n"
    "the API server trusts webhookd's serving certificate.  Configurations already carrying the\n"
    "bundle are not written.  Select configurations by name and/or label selector; with --service,\n"
    "only the webhooks that call that Service are changed.\n"
    "\n"
    "Usage:\n"
    "  webhookctl certs patch-ca-bundle --ca-file FILE [--mutating NAME]... [--validating NAME]... [flags]\n"
    "\n"
    "Examples:\n"
    "  webhookctl certs patch-ca-bundle --ca-file ca.crt --selector app=webhookd \\\n"
    "      --service istio-system/webhookd\n"
    "\n"
    "Flags:\n"
    "      --ca-file string      PEM file with the CA certificate(s)\n"
    "      --context string      name of the kubeconfig context to use\n"
    "  -h, --help                help for patch-ca-bundle\n"
    "  -c, --kubeconfig string   Kubernetes configuration file (default $KUBECONFIG or ~/.kube/config)\n"
    "      --mutating string     MutatingWebhookConfiguration name (repeatable)\n"
    "  -l, --selector string     label selector for configurations of both kinds\n"
    "      --service string      only webhooks calling this Service, as NAMESPACE/NAME\n"
    "      --validating string   ValidatingWebhookConfiguration name (repeatable)\n";

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "Error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return 2;
}

static int write_file(const char *path, const wh_buf *data, mode_t mode)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || chmod(path, mode) != 0 || fwrite(data->data, 1, data->len, f) != data->len) {
        perror(path);
        if (f != NULL)
            fclose(f);
        return 1;
    }
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static int cmd_generate(int argc, char **argv)
{
    static const struct option opts[] = {{"dns-name", required_argument, NULL, 'n'},
                                         {"days", required_argument, NULL, 'd'},
                                         {"cert-file", required_argument, NULL, 'C'},
                                         {"key-file", required_argument, NULL, 'K'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *names[MAX_NAMES], *cert_file = NULL, *key_file = NULL;
    size_t nnames = 0;
    int days = 365, c, status = 1;
    wh_buf cert = WH_BUF_INIT, key = WH_BUF_INIT;
    wh_err err;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (nnames == MAX_NAMES)
                return usage_error(generate_usage, "at most %s --dns-name flags", "32");
            names[nnames++] = optarg;
            break;
        case 'd': {
            char *end;
            long d = strtol(optarg, &end, 10);
            if (*end != '\0' || d < 1 || d > 36500)
                return usage_error(generate_usage, "invalid --days \"%s\": a whole number of days, 1 to 36500",
                                   optarg);
            days = (int)d;
            break;
        }
        case 'C':
            cert_file = optarg;
            break;
        case 'K':
            key_file = optarg;
            break;
        case 'h':
            fputs(generate_usage, stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (optind < argc)
        return usage_error(generate_usage, "unexpected argument \"%s\"", argv[optind]);
    if (nnames == 0)
        return usage_error(generate_usage, "%s", "at least one --dns-name is required");
    if (cert_file == NULL || key_file == NULL)
        return usage_error(generate_usage, "%s", "--cert-file and --key-file are required");
    if (wh_certs_generate_self_signed(names, nnames, days, &cert, &key, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\n", wh_err_msg(&err));
        goto out;
    }
    if (write_file(key_file, &key, 0600) != 0 || write_file(cert_file, &cert, 0644) != 0)
        goto out;
    printf("wrote %s and %s (self-signed, %d days, CN=%s)\n", cert_file, key_file, days, names[0]);
    status = 0;
out:
    wh_buf_free(&cert);
    wh_buf_free(&key);
    return status;
}

static int cmd_patch(int argc, char **argv)
{
    static const struct option opts[] = {{"ca-file", required_argument, NULL, 'a'},
                                         {"mutating", required_argument, NULL, 'm'},
                                         {"validating", required_argument, NULL, 'v'},
                                         {"selector", required_argument, NULL, 'l'},
                                         {"service", required_argument, NULL, 's'},
                                         {"kubeconfig", required_argument, NULL, 'c'},
                                         {"context", required_argument, NULL, 'x'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *mutating[MAX_NAMES + 1], *validating[MAX_NAMES + 1], *ca_file = NULL;
    size_t nm = 0, nv = 0;
    char *service = NULL;
    wh_certs_ca_targets t;
    wh_kube_options ko;
    wh_kube_client *client = NULL;
    wh_buf ca = WH_BUF_INIT, report = WH_BUF_INIT;
    wh_err err;
    int c, status = 1;

    memset(&t, 0, sizeof(t));
    memset(&ko, 0, sizeof(ko));
    optind = 1;
    while ((c = getopt_long(argc, argv, "hc:l:", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            ca_file = optarg;
            break;
        case 'm':
        case 'v':
            if ((c == 'm' ? nm : nv) == MAX_NAMES)
                return usage_error(patch_usage, "at most %s configurations of each kind", "32");
            if (c == 'm')
                mutating[nm++] = optarg;
            else
                validating[nv++] = optarg;
            break;
        case 'l':
            t.selector = optarg;
            break;
        case 's':
            service = optarg;
            break;
        case 'c':
            ko.kubeconfig = optarg;
            break;
        case 'x':
            ko.context = optarg;
            break;
        case 'h':
            fputs(patch_usage, stdout);
            return 0;
        default:
            return 2;
        }
    }
    mutating[nm] = validating[nv] = NULL;
    if (optind < argc)
        return usage_error(patch_usage, "unexpected argument \"%s\"", argv[optind]);
    if (ca_file == NULL)
        return usage_error(patch_usage, "%s", "--ca-file is required");
    if (nm == 0 && nv == 0 && t.selector == NULL)
        return usage_error(patch_usage, "%s", "name at least one configuration (--mutating, --validating, --selector)");
    if (service != NULL) {
        char *slash = strchr(service, '/');
        if (slash == NULL || slash == service || slash[1] == '\0')
            return usage_error(patch_usage, "invalid --service \"%s\": use NAMESPACE/NAME", service);
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
    if (wh_kube_client_new(&ko, &client, &err) != WH_OK) {
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
    return status;
}

int wh_ctl_certs(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(certs_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "generate") == 0)
        return cmd_generate(argc - 1, argv + 1);
    if (strcmp(argv[1], "patch-ca-bundle") == 0)
        return cmd_patch(argc - 1, argv + 1);
    fprintf(stderr, "Error: unknown command \"%s\" for \"webhookctl certs\"\n\n%s", argv[1], certs_usage);
    return 2;
}
