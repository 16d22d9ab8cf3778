/*
 * main.c - webhookctl: the command-line companion of webhookd.
 *
 * Dispatches to a subcommand (tag, kube-inject, validate, ...); everything
 * else lives in the subcommand's own file.
 */
#include <stdio.h>
#include <string.h>

#include "wh_ctl.h"
#include "wh_ctl_tag.h"

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("webhookctl %s\n", WH_VERSION);
    return 0;
}

static const wh_ctl_command commands[] = {
    {"check", "Check the webhooks' health: objects, Services, certificates, overlaps, labels", wh_ctl_check},
    {"check-inject", "Explain which webhook injects a pod, or why none does", wh_ctl_check_inject},
    {"certs", "Create webhookd's serving certificate and register its CA (caBundle)", wh_ctl_certs},
    {"kube-inject", "Inject the Istio sidecar into workload manifests (like istioctl kube-inject)",
     wh_ctl_kube_inject},
    {"version", "Print the webhookctl version", cmd_version},
    {"validate", "Validate Istio resources offline, exactly as webhookd's /validate does", wh_ctl_validate},
    {"tag", "Create, list and remove revision tags (aliases of control plane revisions)", wh_ctl_tag},
};

static void usage(FILE *out)
{
    size_t i;

    fprintf(out, "webhookctl controls webhookd, Istio's admission webhooks rebuilt in C.\n\n"
                 "Usage:\n  webhookctl [command]\n\nAvailable Commands:\n");
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nUse \"webhookctl [command] --help\" for more information about a command.\n");
}

int main(int argc, char **argv)
{
    size_t i;

    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "Error: unknown command \"%s\" for \"webhookctl\"\nRun 'webhookctl --help' for usage.\n", argv[1]);
    return 2;
}
