/*
 * wh_ctl.h - webhookctl's subcommands.  Each lives in its own file and is
 * listed once in main.c's command table; each parses its own flags and
 * returns the process exit status (0 success, 1 failure, 2 usage error).
 */
#ifndef WH_CTL_H
#define WH_CTL_H

typedef struct wh_ctl_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} wh_ctl_command;

/* kube_inject.c */
int wh_ctl_kube_inject(int argc, char **argv);
/* validate.c */
int wh_ctl_validate(int argc, char **argv);
/* check_inject.c */
int wh_ctl_check_inject(int argc, char **argv);
/* check.c */
int wh_ctl_check(int argc, char **argv);
/* certs.c */
int wh_ctl_certs(int argc, char **argv);

#endif
