/*
 * wh_ctl_flags.h - webhookctl's one command-line parser, so that every
 * subcommand reads its flags the way istioctl's (cobra + pflag) do.
 *
 * A command is a declarative wh_ctl_cmd: its name, help texts, a table of
 * flag specs, optionally the shared cluster flags ("Global Flags") and
 * subcommands.  wh_ctl_execute() finds the subcommand in argv, parses the
 * flags into a wh_ctl_args, answers -h/--help with the generated help text,
 * reports bad command lines with pflag's and cobra's own messages
 * ("Error: unknown flag: --x", "Error: flag needs an argument: --x",
 * "invalid argument \"x\" for \"--days\" flag: strconv.ParseInt: ..."), and
 * otherwise calls the command's run().
 *
 * Syntax (pflag's): --name=value, --name value, -x value, -xvalue, -x=value;
 * bool flags as --name, --name=false, -x, combined -xy; flags anywhere among
 * the arguments; "--" ends the flags; a lone "-" is an argument; repeated
 * flags: the last wins, string arrays collect every value.
 */
#ifndef WH_CTL_FLAGS_H
#define WH_CTL_FLAGS_H

#include <stddef.h>
#include <stdio.h>

#include "wh_result.h"

typedef enum wh_ctl_flag_type {
    WH_CTL_BOOL,        /* strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False */
    WH_CTL_STRING,      /* anything, "" included */
    WH_CTL_INT,         /* strconv.ParseInt(s, 0, 64): 42, -1, 0x2a, 0o52, 052, 0b101010, 1_000 */
    WH_CTL_DURATION,    /* time.ParseDuration: 300ms, 1.5h, 2h45m, 0 (units ns us µs ms s m h) */
    WH_CTL_STRING_ARRAY /* repeatable; each occurrence adds one value (no comma splitting) */
} wh_ctl_flag_type;

/* wh_ctl_flag.opts */
#define WH_CTL_HIDDEN 1u       /* accepted, not listed in --help (compatibility spellings) */
#define WH_CTL_BARE_SECONDS 2u /* duration: a plain integer means seconds, as kubectl's --request-timeout */

typedef struct wh_ctl_flag {
    const char *name;      /* canonical long name: in --help and in messages */
    char shorthand;        /* one letter, 0 for none */
    wh_ctl_flag_type type; /* how the value is parsed */
    const char *usage;     /* help text; a `word` in backquotes names the value in --help (pflag's rule) */
    const char *def;       /* default, spelled as on the command line; NULL: the zero value; string arrays have none */
    const char *aliases;   /* other accepted long names, comma-separated (camelCase/kebab-case); not in --help */
    const char *env;       /* environment variable that replaces the default when set and not empty */
    unsigned opts;         /* WH_CTL_HIDDEN, WH_CTL_BARE_SECONDS */
    const char *values;    /* the values shell completion offers, comma-separated ("table,json,yaml"); NULL: file
                              names for a flag that takes a value */
} wh_ctl_flag;

/* A table of flags, e.g. the cluster flags every cluster command inherits. */
typedef struct wh_ctl_flagset {
    const wh_ctl_flag *flags;
    size_t n;
} wh_ctl_flagset;

typedef struct wh_ctl_args wh_ctl_args;
typedef struct wh_ctl_cmd wh_ctl_cmd;

struct wh_ctl_cmd {
    const char *name;                     /* as typed: "set" */
    const char *aliases;                  /* other names, comma-separated: "show" */
    const char *suggest_for;              /* names that earn a "Did you mean this?" for this command, comma-separated */
    const char *use;                      /* the Usage line(s) after the command path: "<revision-tag> [flags]"; several
                                             alternatives are separated by '\n' */
    const char *summary;                  /* one line, for the parent's "Available Commands" */
    const char *long_help;                /* paragraphs above "Usage:"; NULL: the summary */
    const char *examples;                 /* indented example lines, NULL for none */
    const wh_ctl_flag *flags;             /* the command's own flags ("Flags:", with -h/--help added) */
    size_t nflags;                        /* entries in flags */
    const wh_ctl_flagset *inherited;      /* "Global Flags:", or NULL */
    const wh_ctl_cmd *const *subcommands; /* NULL-terminated, or NULL */
    int (*run)(const wh_ctl_args *a);     /* the exit status; NULL for a group (prints its help) */
    const char *version;                  /* root only: adds cobra's -v/--version ("<name> version <version>") */
};

#define WH_CTL_FLAGS(table) .flags = (table), .nflags = sizeof(table) / sizeof((table)[0])

/* One flag's parsed value. */
typedef struct wh_ctl_value {
    int changed;        /* how many times it was given on the command line */
    const char *text;   /* the value as typed last (bool: "true"/"false"), else the environment's or the
                           default; NULL when none (borrowed from argv, environ or the spec) */
    int b;              /* WH_CTL_BOOL */
    long long i;        /* WH_CTL_INT */
    long long ns;       /* WH_CTL_DURATION, nanoseconds */
    const char **items; /* WH_CTL_STRING_ARRAY: NULL-terminated, never NULL (owned, strings borrowed) */
    size_t nitems;
} wh_ctl_value;

struct wh_ctl_args {
    const wh_ctl_cmd *cmd;     /* the command being run */
    char path[128];            /* its command path: "webhookctl tag set" */
    const wh_ctl_flag **flags; /* own flags, the implicit help flag, then inherited ones (owned array) */
    wh_ctl_value *values;      /* one per flags[] (owned) */
    size_t nflags;
    char **args; /* positional arguments, borrowed from argv (owned array) */
    size_t nargs;
    int help; /* -h/--help was given */
};

/* Parse argv (the arguments after the command path) for `cmd`.  `path` is
 * the command path used in messages and help ("webhookctl tag set").  On
 * success `out` owns its arrays (wh_ctl_args_free); on a bad command line
 * WH_E_INVALID and err holds pflag's message, e.g. "unknown flag: --x".
 * Values borrow from argv and the specs: keep them alive meanwhile. */
wh_code wh_ctl_parse(const wh_ctl_cmd *cmd, const char *path, int argc, char **argv, wh_ctl_args *out, wh_err *err);
void wh_ctl_args_free(wh_ctl_args *a);

/* Find the subcommand chain in argv[1..] from `root`, parse, then print help
 * (exit 0), report a usage error (exit 2) or return cmd->run().
 * `<root> __complete WORD... CURRENT` (hidden) answers shell completion:
 * wh_ctl_complete(). */
int wh_ctl_execute(const wh_ctl_cmd *root, int argc, char **argv);

/* Shell completion, cobra's protocol: what may replace `current` (the word
 * under the cursor, maybe "") after the command-line words `words`: one
 * candidate a line ("value\tdescription"), then ":<directive>", a sum of
 * WH_CTL_COMP_*.  The completion scripts (ctl/completion.c) call it through
 * the hidden `__complete` command, so the command tree and flag tables stay
 * the one source of what completes. */
#define WH_CTL_COMP_NOSPACE 2u /* do not add a space after the candidate (a "--flag=" prefix) */
#define WH_CTL_COMP_NOFILES 4u /* no file names when no candidate fits */
void wh_ctl_complete(const wh_ctl_cmd *root, char **words, int n, const char *current, FILE *out);

/* The generated help of `cmd` (cobra's layout: long help, Usage, Aliases,
 * Examples, Available Commands, Flags, Global Flags). */
void wh_ctl_help(const wh_ctl_cmd *cmd, const char *path, FILE *out);

/* Print "Error: <message>" and "Run '<path> --help' for usage." on stderr;
 * returns 2, the exit status of a usage error. */
int wh_ctl_usage_error(const wh_ctl_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Values by canonical flag name (own or inherited).  A name the command does
 * not have reads as unset: zero, NULL, an empty array. */
const char *wh_ctl_string(const wh_ctl_args *a, const char *name);
int wh_ctl_bool(const wh_ctl_args *a, const char *name);
long long wh_ctl_int(const wh_ctl_args *a, const char *name);
long long wh_ctl_duration_ns(const wh_ctl_args *a, const char *name);
/* NULL-terminated; *n (optional) gets the count. */
const char *const *wh_ctl_strings(const wh_ctl_args *a, const char *name, size_t *n);
/* Times the flag was given on the command line. */
int wh_ctl_changed(const wh_ctl_args *a, const char *name);

/* Go's time.ParseDuration, with its messages ("time: invalid duration \"x\""). */
wh_code wh_ctl_parse_duration(const char *s, long long *ns, wh_err *err);

#endif
