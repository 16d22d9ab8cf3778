/*
 * main.c - webhookctl: the command-line companion of webhookd.
 *
 * The root command: lists the subcommands and hands argv to the one flag
 * parser and dispatcher (wh_ctl_flags.h); everything else lives in the
 * subcommand's own file.
 */
#include <stdio.h>

#include "wh_ctl.h"

static int run_version(const wh_ctl_args *a)
{
    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unknown argument \"%s\": version takes none", a->args[0]);
    printf("webhookctl %s\n", WH_VERSION);
    return 0;
}

static const wh_ctl_cmd cmd_version = {
    .name = "version",
    .use = "[flags]",
    .summary = "Print the webhookctl version",
    .run = run_version,
};

static const wh_ctl_cmd *const commands[] = {
    &wh_ctl_cmd_certs,    &wh_ctl_cmd_check, &wh_ctl_cmd_check_inject, &wh_ctl_cmd_completion, &wh_ctl_cmd_kube_inject,
    &wh_ctl_cmd_revision, &wh_ctl_cmd_tag,   &wh_ctl_cmd_validate,     &cmd_version,           NULL,
};

static const wh_ctl_cmd root = {
    .name = "webhookctl",
    .summary = "webhookctl controls webhookd, Istio's admission webhooks rebuilt in C.",
    .long_help = "webhookctl controls webhookd, Istio's admission webhooks rebuilt in C: revision tags,\n"
                 "sidecar injection and validation of manifests offline, and diagnostics of the webhooks\n"
                 "in a cluster.  Run \"webhookctl help <command>\" for a command's flags.\n",
    .subcommands = commands,
    .version = WH_VERSION,
};

int main(int argc, char **argv)
{
    return wh_ctl_execute(&root, argc, argv);
}
