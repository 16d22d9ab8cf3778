/*
 * test_table.h - the commands the flag parser's tests and fuzz target run:
 * "prog group do" with one flag of every type and option (aliases, hidden,
 * defaults, environment, bare seconds) and inherited "global" flags.
 * Included once per test program.
 */
#ifndef WH_CTL_FLAGS_TEST_TABLE_H
#define WH_CTL_FLAGS_TEST_TABLE_H

#include "wh_ctl_flags.h"

static const wh_ctl_flag local_flags[] = {
    {.name = "all", .shorthand = 'a', .type = WH_CTL_BOOL, .usage = "Everything (on unless false)", .def = "true"},
    {.name = "days", .type = WH_CTL_INT, .usage = "Validity in days", .def = "365"},
    {.name = "dry-run", .type = WH_CTL_BOOL, .usage = "Print, do not apply"},
    {.name = "file", .shorthand = 'f', .type = WH_CTL_STRING, .usage = "Input `FILE` (- for stdin)"},
    {.name = "injectConfigFile",
     .type = WH_CTL_STRING,
     .usage = "Injection configuration filename",
     .aliases = "inject-config-file,injectconfigfile"},
    {.name = "interval", .type = WH_CTL_DURATION, .usage = "How often to poll"},
    {.name = "label", .shorthand = 'l', .type = WH_CTL_STRING_ARRAY, .usage = "A label to add (repeatable)"},
    {.name = "legacy", .type = WH_CTL_STRING, .usage = "Old spelling", .opts = WH_CTL_HIDDEN},
    {.name = "output", .shorthand = 'o', .type = WH_CTL_STRING, .usage = "Output format", .def = "table"},
    {.name = "retries", .shorthand = 'r', .type = WH_CTL_INT, .usage = "Attempts before giving up"},
    {.name = "assume-yes", .shorthand = 'y', .type = WH_CTL_BOOL, .usage = "Do not ask"},
};

static const wh_ctl_flag global_flags[] = {
    {.name = "istioNamespace",
     .shorthand = 'i',
     .type = WH_CTL_STRING,
     .usage = "Istio system namespace",
     .def = "istio-system",
     .aliases = "istio-namespace",
     .env = "TEST_CTL_FLAGS_ISTIONAMESPACE"},
    {.name = "kubeconfig", .shorthand = 'c', .type = WH_CTL_STRING, .usage = "Kubernetes configuration file"},
    {.name = "request-timeout",
     .type = WH_CTL_DURATION,
     .usage = "Per request (a plain number is seconds)",
     .def = "30s",
     .aliases = "kubeclient-timeout",
     .opts = WH_CTL_BARE_SECONDS},
};

static const wh_ctl_flagset globals = {global_flags, sizeof(global_flags) / sizeof(global_flags[0])};

static int run_noop(const wh_ctl_args *a)
{
    return (int)a->nargs;
}

static const wh_ctl_cmd leaf = {
    .name = "do",
    .aliases = "run,go",
    .use = "<thing> [flags]",
    .summary = "Do a thing",
    .long_help = "Do a thing, with every kind of flag.\n",
    .examples = "  # Do it\n  prog group do it --days 7\n",
    WH_CTL_FLAGS(local_flags),
    .inherited = &globals,
    .run = run_noop,
};

static const wh_ctl_cmd *const group_subs[] = {&leaf, NULL};

static const wh_ctl_cmd group = {
    .name = "group",
    .summary = "A group of commands",
    .inherited = &globals,
    .subcommands = group_subs,
};

#endif
