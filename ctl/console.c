/*
 * console.c - what webhookctl's commands say to the user and ask of them:
 * cobra's "Error: ..." line and the [y/N] question (tag.c, revision.c; see
 * wh_ctl.h), one copy for every command that changes the cluster.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wh_ctl.h"

int wh_ctl_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("Error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int wh_ctl_ask(const char *prompt)
{
    char line[256];

    for (;;) {
        fputs(prompt, stdout);
        fflush(stdout);
        if (fgets(line, sizeof(line), stdin) == NULL) {
            fputc('\n', stdout);
            return 0;
        }
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (strcmp(line, "y") == 0 || strcmp(line, "yes") == 0)
            return 1;
        if (strcmp(line, "n") == 0 || strcmp(line, "no") == 0 || line[0] == '\0')
            return 0;
    }
}
