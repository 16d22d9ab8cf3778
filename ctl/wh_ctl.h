/*
 * wh_ctl.h - webhookctl's commands and what they share.  Each command is a
 * declarative wh_ctl_cmd (wh_ctl_flags.h) defined in its own file and listed
 * once in main.c's root command; run() returns the process exit status
 * (0 success, 1 failure, 2 usage error).
 */
#ifndef WH_CTL_H
#define WH_CTL_H

#include "wh_ctl_flags.h"
#include "wh_kube.h"

/* The flags of every command that talks to the cluster (cobra's persistent
 * root flags of istioctl plus kubectl's client flags), shown as "Global
 * Flags": --as, --as-group, --context, -i/--istioNamespace, -c/--kubeconfig,
 * -n/--namespace, --request-timeout. */
extern const wh_ctl_flagset wh_ctl_cluster_flags;

/* -o of the commands that print a document: "table" (the command's own
 * layout), "json" or "yaml" (output.c).  wh_ctl_output_check() is 0 for a
 * known format, else the usage error's exit status (2);
 * wh_ctl_output_doc() prints `doc` in json or yaml and returns 0, or 1 when
 * it cannot. */
#define WH_CTL_OUTPUT_FORMATS "table,json,yaml"
int wh_ctl_output_check(const wh_ctl_args *a, const char *format);
int wh_ctl_output_doc(const char *format, const json_t *doc);

/* -o as each of those commands declares it (one row of its flags table). */
#define WH_CTL_OUTPUT_FLAG                                                                                             \
    {                                                                                                                  \
        .name = "output", .shorthand = 'o', .type = WH_CTL_STRING, .usage = "Output format: table, json or yaml",      \
        .def = "table", .values = WH_CTL_OUTPUT_FORMATS                                                                \
    }

/* console.c: wh_ctl_fail() prints cobra's "Error: <message>" line to stderr
 * and returns 1 (the exit status of a failed command); wh_ctl_ask() prints
 * `prompt` and reads answers until one is y/yes (1) or n/no/empty/end of
 * input (0), case-insensitively, as istioctl's confirmations do. */
int wh_ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int wh_ctl_ask(const char *prompt);

/* The Kubernetes client those flags describe; err says what failed. */
wh_code wh_ctl_kube_client(const wh_ctl_args *a, wh_kube_client **out, wh_err *err);

extern const wh_ctl_cmd wh_ctl_cmd_kube_inject;  /* kube_inject.c */
extern const wh_ctl_cmd wh_ctl_cmd_validate;     /* validate.c */
extern const wh_ctl_cmd wh_ctl_cmd_check_inject; /* check_inject.c */
extern const wh_ctl_cmd wh_ctl_cmd_check;        /* check.c */
extern const wh_ctl_cmd wh_ctl_cmd_certs;        /* certs.c */
extern const wh_ctl_cmd wh_ctl_cmd_tag;          /* tag.c */
extern const wh_ctl_cmd wh_ctl_cmd_revision;     /* revision.c */
extern const wh_ctl_cmd wh_ctl_cmd_completion;   /* completion.c */

#endif
