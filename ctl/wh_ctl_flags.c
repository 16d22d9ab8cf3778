/*
 * wh_ctl_flags.c - the flag parser, help generator and command dispatcher
 * every webhookctl command runs through, with pflag's and cobra's syntax and
 * messages (see wh_ctl_flags.h), so that istioctl users meet the same rules
 * in every subcommand.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_chars.h"
#include "wh_go.h"
#include "wh_ctl_flags.h"

static const wh_ctl_flag help_flag = {.name = "help", .shorthand = 'h', .type = WH_CTL_BOOL, .usage = "help"};
/* cobra's version flag of a root command with a version */
static const wh_ctl_flag version_flag = {.name = "version", .shorthand = 'v', .type = WH_CTL_BOOL, .usage = "version"};
static const char *const no_items[] = {NULL};

/* ---- values --------------------------------------------------------------- */

/* Go's strconv.Quote, enough for command-line text: escapes quotes,
 * backslashes and control characters, keeps UTF-8. */
static void quote(wh_buf *b, const char *s)
{
    wh_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            wh_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            wh_buf_puts(b, "\\n");
        else if (c == '\t')
            wh_buf_puts(b, "\\t");
        else if (c == '\r')
            wh_buf_puts(b, "\\r");
        else if (c < 0x20 || c == 0x7f)
            wh_buf_printf(b, "\\x%02x", c);
        else
            wh_buf_putc(b, (char)c);
    }
    wh_buf_putc(b, '"');
}

/* err = "<fn>: parsing <quoted s>: <what>" (strconv.NumError). */
static wh_code num_error(wh_err *err, const char *fn, const char *s, const char *what)
{
    wh_buf q = WH_BUF_INIT;
    quote(&q, s);
    wh_err_set(err, WH_E_INVALID, "%s: parsing %s: %s", fn, q.data != NULL ? q.data : "\"\"", what);
    wh_buf_free(&q);
    return WH_E_INVALID;
}

static wh_code parse_bool(const char *s, int *out, wh_err *err)
{
    int v = wh_go_parse_bool(s);

    if (v >= 0) {
        *out = v;
        return WH_OK;
    }
    return num_error(err, "strconv.ParseBool", s, "invalid syntax");
}

/* Go's underscoreOK: underscores only between digits (a base prefix counts). */
static int underscores_ok(const char *s)
{
    char saw = '^';
    int hex = 0;

    if (*s == '-' || *s == '+')
        s++;
    if (s[0] == '0' && s[1] != '\0' && strchr("bBoOxX", s[1]) != NULL) {
        hex = s[1] == 'x' || s[1] == 'X';
        saw = '0';
        s += 2;
    }
    for (; *s; s++) {
        if (isdigit((unsigned char)*s) || (hex && isxdigit((unsigned char)*s))) {
            saw = '0';
            continue;
        }
        if (*s == '_') {
            if (saw != '0')
                return 0;
            saw = '_';
            continue;
        }
        if (saw == '_')
            return 0;
        saw = '!';
    }
    return saw != '_';
}

/* strconv.ParseInt(s, 0, 64). */
static wh_code parse_int(const char *s0, long long *out, wh_err *err)
{
    const char *s = s0;
    unsigned long long n = 0, limit;
    unsigned base = 10;
    int neg = 0, digits = 0, underscores = 0;

    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && s[1] != '\0')
        base = 8, s++, digits = 1;
    limit = neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX;
    for (; *s; s++) {
        int d;
        if (*s == '_') {
            underscores = 1;
            continue;
        }
        d = wh_hex_digit(*s);
        if (d < 0 || (unsigned)d >= base)
            return num_error(err, "strconv.ParseInt", s0, "invalid syntax");
        if (n > (limit - d) / base)
            return num_error(err, "strconv.ParseInt", s0, "value out of range");
        n = n * base + d;
        digits = 1;
    }
    if (!digits || (underscores && !underscores_ok(s0)))
        return num_error(err, "strconv.ParseInt", s0, "invalid syntax");
    *out = neg ? (long long)(0 - n) : (long long)n;
    return WH_OK;
}

static wh_code bad_duration(wh_err *err, const char *what, const char *unit, const char *s)
{
    wh_buf q = WH_BUF_INIT, u = WH_BUF_INIT;
    quote(&q, s);
    if (unit != NULL) {
        quote(&u, unit);
        wh_err_set(err, WH_E_INVALID, "time: unknown unit %s in duration %s", u.data, q.data);
    } else {
        wh_err_set(err, WH_E_INVALID, "time: %s %s", what, q.data);
    }
    wh_buf_free(&q);
    wh_buf_free(&u);
    return WH_E_INVALID;
}

wh_code wh_ctl_parse_duration(const char *orig, long long *out, wh_err *err)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1},           {"us", 1000},      {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
                 {"\xce\xbcs", 1000},                                         /* U+03BC Greek mu */
                 {"ms", 1000000},     {"s", 1000000000}, {"m", 60ull * 1000000000}, {"h", 3600ull * 1000000000}};
    const uint64_t max = (uint64_t)1 << 63;
    const char *s = orig;
    uint64_t d = 0;
    int neg = 0;

    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return WH_OK;
    }
    if (*s == '\0')
        return bad_duration(err, "invalid duration", NULL, orig);
    while (*s != '\0') {
        uint64_t v = 0, f = 0, unit = 0;
        double scale = 1;
        int pre = 0, post = 0, overflow = 0;
        size_t ulen;
        char u[16];

        if (!(*s == '.' || isdigit((unsigned char)*s)))
            return bad_duration(err, "invalid duration", NULL, orig);
        for (; isdigit((unsigned char)*s); s++, pre = 1) {
            if (v > max / 10)
                return bad_duration(err, "invalid duration", NULL, orig);
            v = v * 10 + (uint64_t)(*s - '0');
            if (v > max)
                return bad_duration(err, "invalid duration", NULL, orig);
        }
        if (*s == '.') {
            for (s++; isdigit((unsigned char)*s); s++) {
                post = 1;
                if (overflow || f > (max - 1) / 10 || f * 10 + (uint64_t)(*s - '0') > max) {
                    overflow = 1;
                    continue;
                }
                f = f * 10 + (uint64_t)(*s - '0');
                scale *= 10;
            }
        }
        if (!pre && !post)
            return bad_duration(err, "invalid duration", NULL, orig);
        ulen = strcspn(s, ".0123456789");
        if (ulen == 0)
            return bad_duration(err, "missing unit in duration", NULL, orig);
        snprintf(u, sizeof(u), "%.*s", (int)(ulen < sizeof(u) - 1 ? ulen : sizeof(u) - 1), s);
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (strlen(units[i].name) == ulen && strncmp(units[i].name, s, ulen) == 0)
                unit = units[i].ns;
        if (unit == 0) {
            char *whole = wh_strndup(s, ulen);
            wh_code rc = bad_duration(err, NULL, whole != NULL ? whole : u, orig);
            free(whole);
            return rc;
        }
        s += ulen;
        if (v > max / unit)
            return bad_duration(err, "invalid duration", NULL, orig);
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > max)
                return bad_duration(err, "invalid duration", NULL, orig);
        }
        d += v;
        if (d > max)
            return bad_duration(err, "invalid duration", NULL, orig);
    }
    if (neg) {
        *out = d == max ? INT64_MIN : -(long long)d;
        return WH_OK;
    }
    if (d > max - 1)
        return bad_duration(err, "invalid duration", NULL, orig);
    *out = (long long)d;
    return WH_OK;
}

/* "--name" or "-x, --name", as pflag names a flag in its messages. */
static void flag_display(const wh_ctl_flag *f, char *buf, size_t n)
{
    if (f->shorthand)
        snprintf(buf, n, "-%c, --%s", f->shorthand, f->name);
    else
        snprintf(buf, n, "--%s", f->name);
}

/* Store `text` into v; WH_E_INVALID with the type's parse error. */
static wh_code convert(const wh_ctl_flag *f, wh_ctl_value *v, const char *text, wh_err *err)
{
    switch (f->type) {
    case WH_CTL_BOOL:
        if (parse_bool(text, &v->b, err) != WH_OK)
            return WH_E_INVALID;
        text = v->b ? "true" : "false";
        break;
    case WH_CTL_STRING:
        break;
    case WH_CTL_INT:
        if (parse_int(text, &v->i, err) != WH_OK)
            return WH_E_INVALID;
        break;
    case WH_CTL_DURATION:
        if ((f->opts & WH_CTL_BARE_SECONDS) && text[0] != '\0' && strspn(text, "0123456789") == strlen(text)) {
            long long secs;
            if (parse_int(text, &secs, err) != WH_OK || secs > INT64_MAX / 1000000000)
                return bad_duration(err, "invalid duration", NULL, text);
            v->ns = secs * 1000000000;
        } else if (wh_ctl_parse_duration(text, &v->ns, err) != WH_OK) {
            return WH_E_INVALID;
        }
        break;
    case WH_CTL_STRING_ARRAY: {
        const char **items = wh_realloc(v->items == no_items ? NULL : v->items, (v->nitems + 2) * sizeof(*items));
        items[v->nitems++] = text;
        items[v->nitems] = NULL;
        v->items = items;
        break;
    }
    }
    v->text = text;
    return WH_OK;
}

/* A command-line value: pflag's "invalid argument" wrapping. */
static wh_code set_value(const wh_ctl_flag *f, wh_ctl_value *v, const char *text, wh_err *err)
{
    wh_err inner = {0};
    char name[96];
    wh_buf q = WH_BUF_INIT;

    if (convert(f, v, text, &inner) != WH_OK) {
        flag_display(f, name, sizeof(name));
        quote(&q, text);
        wh_err_set(err, WH_E_INVALID, "invalid argument %s for \"%s\" flag: %s", q.data, name, wh_err_msg(&inner));
        wh_buf_free(&q);
        return WH_E_INVALID;
    }
    v->changed++;
    return WH_OK;
}

/* ---- parsing -------------------------------------------------------------- */

static int name_in_list(const char *list, const char *name, size_t len)
{
    while (list != NULL && *list != '\0') {
        size_t n = strcspn(list, ",");
        if (n == len && strncmp(list, name, len) == 0)
            return 1;
        list += n + (list[n] == ',');
    }
    return 0;
}

static ptrdiff_t find_long(const wh_ctl_args *a, const char *name, size_t len)
{
    for (size_t i = 0; i < a->nflags; i++)
        if ((strlen(a->flags[i]->name) == len && strncmp(a->flags[i]->name, name, len) == 0) ||
            name_in_list(a->flags[i]->aliases, name, len))
            return (ptrdiff_t)i;
    return -1;
}

static ptrdiff_t find_short(const wh_ctl_args *a, char c)
{
    for (size_t i = 0; i < a->nflags; i++)
        if (a->flags[i]->shorthand == c)
            return (ptrdiff_t)i;
    return -1;
}

static ptrdiff_t find_name(const wh_ctl_args *a, const char *name)
{
    return a == NULL || name == NULL ? -1 : find_long(a, name, strlen(name));
}

static wh_code add_arg(wh_ctl_args *a, char *arg, wh_err *err)
{
    char **args = wh_realloc(a->args, (a->nargs + 1) * sizeof(*args));
    args[a->nargs++] = arg;
    a->args = args;
    return WH_OK;
}

/* Flags and their defaults (and environment). */
static wh_code init_args(const wh_ctl_cmd *cmd, const char *path, wh_ctl_args *a, wh_err *err)
{
    size_t n = cmd->nflags + 2 + (cmd->inherited != NULL ? cmd->inherited->n : 0), k = 0;

    memset(a, 0, sizeof(*a));
    a->cmd = cmd;
    snprintf(a->path, sizeof(a->path), "%s", path);
    a->flags = wh_calloc(n, sizeof(*a->flags));
    a->values = wh_calloc(n, sizeof(*a->values));
    for (size_t i = 0; i < cmd->nflags; i++)
        a->flags[k++] = &cmd->flags[i];
    a->flags[k++] = &help_flag;
    if (cmd->version != NULL)
        a->flags[k++] = &version_flag;
    for (size_t i = 0; cmd->inherited != NULL && i < cmd->inherited->n; i++)
        a->flags[k++] = &cmd->inherited->flags[i];
    a->nflags = k;
    for (size_t i = 0; i < a->nflags; i++) {
        const wh_ctl_flag *f = a->flags[i];
        const char *env = f->env != NULL ? getenv(f->env) : NULL;
        wh_ctl_value *v = &a->values[i];
        v->items = (const char **)no_items;
        if (f->def != NULL && f->type != WH_CTL_STRING_ARRAY && convert(f, v, f->def, err) != WH_OK)
            return wh_err_prefix(err, "default of --%s: ", f->name);
        if (env != NULL && env[0] != '\0' && convert(f, v, env, err) != WH_OK)
            return wh_err_prefix(err, "invalid %s=%s for --%s: ", f->env, env, f->name);
    }
    return WH_OK;
}

/* "-abc" at argv[*i]: shorthand flags, pflag's rules. */
static wh_code parse_shorts(wh_ctl_args *a, int argc, char **argv, int *i, wh_err *err)
{
    const char *s = argv[*i] + 1;

    while (*s != '\0') {
        ptrdiff_t k = find_short(a, *s);
        const char *value;
        int rest = 1; /* the value takes the rest of the word */
        if (k < 0)
            return wh_err_set(err, WH_E_INVALID, "unknown shorthand flag: '%c' in -%s", *s, s);
        if (s[1] == '=' && s[2] != '\0') {
            value = s + 2; /* -x=value (pflag: "-x=" is not this form) */
        } else if (a->flags[k]->type == WH_CTL_BOOL) {
            value = "true"; /* -x, maybe followed by more shorthands */
            rest = 0;
        } else if (s[1] != '\0') {
            value = s + 1; /* -xvalue */
        } else if (*i + 1 < argc) {
            value = argv[++*i];
        } else {
            return wh_err_set(err, WH_E_INVALID, "flag needs an argument: '%c' in -%s", *s, s);
        }
        if (set_value(a->flags[k], &a->values[k], value, err) != WH_OK)
            return WH_E_INVALID;
        if (rest)
            break;
        s++;
    }
    return WH_OK;
}

wh_code wh_ctl_parse(const wh_ctl_cmd *cmd, const char *path, int argc, char **argv, wh_ctl_args *out, wh_err *err)
{
    wh_code rc;
    int only_args = 0;

    if ((rc = init_args(cmd, path, out, err)) != WH_OK)
        goto out;
    for (int i = 0; i < argc; i++) {
        char *s = argv[i];
        if (only_args || s[0] != '-' || s[1] == '\0') {
            if ((rc = add_arg(out, s, err)) != WH_OK)
                goto out;
        } else if (strcmp(s, "--") == 0) {
            only_args = 1;
        } else if (s[1] == '-') {
            const char *name = s + 2, *eq = strchr(name, '='), *value;
            size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
            ptrdiff_t k;
            if (name[0] == '-' || name[0] == '=') {
                rc = wh_err_set(err, WH_E_INVALID, "bad flag syntax: %s", s);
                goto out;
            }
            if ((k = find_long(out, name, len)) < 0) {
                rc = wh_err_set(err, WH_E_INVALID, "unknown flag: --%.*s", (int)len, name);
                goto out;
            }
            if (eq != NULL)
                value = eq + 1;
            else if (out->flags[k]->type == WH_CTL_BOOL)
                value = "true";
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                rc = wh_err_set(err, WH_E_INVALID, "flag needs an argument: %s", s);
                goto out;
            }
            if ((rc = set_value(out->flags[k], &out->values[k], value, err)) != WH_OK)
                goto out;
        } else if ((rc = parse_shorts(out, argc, argv, &i, err)) != WH_OK) {
            goto out;
        }
    }
    out->help = wh_ctl_bool(out, "help");
out:
    if (rc != WH_OK)
        wh_ctl_args_free(out);
    return rc;
}

void wh_ctl_args_free(wh_ctl_args *a)
{
    for (size_t i = 0; a->values != NULL && i < a->nflags; i++)
        if (a->values[i].items != no_items)
            free(a->values[i].items);
    free(a->values);
    free(a->flags);
    free(a->args);
    memset(a, 0, sizeof(*a));
}

/* ---- getters -------------------------------------------------------------- */

const char *wh_ctl_string(const wh_ctl_args *a, const char *name)
{
    ptrdiff_t k = find_name(a, name);
    return k < 0 ? NULL : a->values[k].text;
}

int wh_ctl_bool(const wh_ctl_args *a, const char *name)
{
    ptrdiff_t k = find_name(a, name);
    return k < 0 ? 0 : a->values[k].b;
}

long long wh_ctl_int(const wh_ctl_args *a, const char *name)
{
    ptrdiff_t k = find_name(a, name);
    return k < 0 ? 0 : a->values[k].i;
}

long long wh_ctl_duration_ns(const wh_ctl_args *a, const char *name)
{
    ptrdiff_t k = find_name(a, name);
    return k < 0 ? 0 : a->values[k].ns;
}

const char *const *wh_ctl_strings(const wh_ctl_args *a, const char *name, size_t *n)
{
    ptrdiff_t k = find_name(a, name);
    if (n != NULL)
        *n = k < 0 ? 0 : a->values[k].nitems;
    return k < 0 ? no_items : a->values[k].items;
}

int wh_ctl_changed(const wh_ctl_args *a, const char *name)
{
    ptrdiff_t k = find_name(a, name);
    return k < 0 ? 0 : a->values[k].changed;
}

/* ---- help ----------------------------------------------------------------- */

static int cmp_flag_names(const void *x, const void *y)
{
    return strcmp((*(const wh_ctl_flag *const *)x)->name, (*(const wh_ctl_flag *const *)y)->name);
}

/* pflag's FlagUsages: sorted, "  -x, --name type" then the usage aligned
 * three columns after the longest left part. */
static void print_flags(FILE *out, const char *title, const wh_ctl_flag *const *in, size_t nin, const char *cmd_name)
{
    const wh_ctl_flag *flags[64];
    wh_buf left[64], usage[64];
    size_t n = 0, width = 0;

    for (size_t i = 0; i < nin && n < 64; i++)
        if (!(in[i]->opts & WH_CTL_HIDDEN))
            flags[n++] = in[i];
    if (n == 0)
        return;
    qsort(flags, n, sizeof(flags[0]), cmp_flag_names);
    for (size_t i = 0; i < n; i++) {
        const wh_ctl_flag *f = flags[i];
        static const char *const type_names[] = {"", "string", "int", "duration", "stringArray"};
        const char *text = f == &help_flag || f == &version_flag ? NULL : f->usage,
                   *bq = text != NULL ? strchr(text, '`') : NULL;
        const char *eq = bq != NULL ? strchr(bq + 1, '`') : NULL;
        left[i] = (wh_buf)WH_BUF_INIT;
        usage[i] = (wh_buf)WH_BUF_INIT;
        if (f->shorthand)
            wh_buf_printf(&left[i], "  -%c, --%s", f->shorthand, f->name);
        else
            wh_buf_printf(&left[i], "      --%s", f->name);
        if (f == &help_flag || f == &version_flag) {
            wh_buf_printf(&usage[i], "%s for %s", f->name, cmd_name);
        } else if (eq != NULL) { /* `NAME` names the value */
            wh_buf_printf(&left[i], " %.*s", (int)(eq - bq - 1), bq + 1);
            wh_buf_printf(&usage[i], "%.*s%.*s%s", (int)(bq - text), text, (int)(eq - bq - 1), bq + 1, eq + 1);
        } else {
            if (type_names[f->type][0] != '\0')
                wh_buf_printf(&left[i], " %s", type_names[f->type]);
            wh_buf_puts(&usage[i], text != NULL ? text : "");
        }
        if (f->def != NULL && f->type == WH_CTL_STRING)
            wh_buf_printf(&usage[i], " (default \"%s\")", f->def);
        else if (f->def != NULL)
            wh_buf_printf(&usage[i], " (default %s)", f->def);
        if (left[i].len > width)
            width = left[i].len;
    }
    fprintf(out, "\n%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%-*s   %s\n", (int)width, left[i].data, usage[i].data != NULL ? usage[i].data : "");
        wh_buf_free(&left[i]);
        wh_buf_free(&usage[i]);
    }
}

static size_t count_subs(const wh_ctl_cmd *cmd)
{
    size_t n = 0;
    while (cmd->subcommands != NULL && cmd->subcommands[n] != NULL)
        n++;
    return n;
}

static int cmp_cmd_names(const void *x, const void *y)
{
    return strcmp((*(const wh_ctl_cmd *const *)x)->name, (*(const wh_ctl_cmd *const *)y)->name);
}

/* Print `text` without its trailing blank lines, then one newline. */
static void print_trimmed(FILE *out, const char *text)
{
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    fprintf(out, "%.*s\n", (int)n, text);
}

void wh_ctl_help(const wh_ctl_cmd *cmd, const char *path, FILE *out)
{
    const wh_ctl_cmd *subs[64];
    const wh_ctl_flag *own[64];
    size_t nsubs = count_subs(cmd), nown = 0, width = 11;
    const char *name = strrchr(path, ' ') != NULL ? strrchr(path, ' ') + 1 : path;

    print_trimmed(out, cmd->long_help != NULL ? cmd->long_help : cmd->summary);
    fprintf(out, "\nUsage:\n");
    if (cmd->run != NULL) {
        const char *u = cmd->use != NULL ? cmd->use : "[flags]";
        while (*u != '\0') {
            size_t len = strcspn(u, "\n");
            fprintf(out, "  %s %.*s\n", path, (int)len, u);
            u += len + (u[len] == '\n');
        }
    }
    if (nsubs > 0)
        fprintf(out, "  %s [command]\n", path);
    if (cmd->aliases != NULL) {
        fprintf(out, "\nAliases:\n  %s", cmd->name);
        for (const char *a = cmd->aliases; *a != '\0';) {
            size_t len = strcspn(a, ",");
            fprintf(out, ", %.*s", (int)len, a);
            a += len + (a[len] == ',');
        }
        fputc('\n', out);
    }
    if (cmd->examples != NULL) {
        fprintf(out, "\nExamples:\n");
        print_trimmed(out, cmd->examples);
    }
    if (nsubs > 0) {
        /* cobra lists its built-in help command under the root's commands */
        static const wh_ctl_cmd help_cmd = {.name = "help", .summary = "Help about any command"};
        nsubs = nsubs > 63 ? 63 : nsubs;
        memcpy(subs, cmd->subcommands, nsubs * sizeof(subs[0]));
        if (strchr(path, ' ') == NULL)
            subs[nsubs++] = &help_cmd;
        qsort(subs, nsubs, sizeof(subs[0]), cmp_cmd_names);
        for (size_t i = 0; i < nsubs; i++)
            if (strlen(subs[i]->name) > width)
                width = strlen(subs[i]->name);
        fprintf(out, "\nAvailable Commands:\n");
        for (size_t i = 0; i < nsubs; i++)
            fprintf(out, "  %-*s %s\n", (int)width, subs[i]->name, subs[i]->summary);
    }
    for (size_t i = 0; i < cmd->nflags && nown < 63; i++)
        own[nown++] = &cmd->flags[i];
    own[nown++] = &help_flag;
    if (cmd->version != NULL)
        own[nown++] = &version_flag;
    print_flags(out, "Flags", own, nown, name);
    if (cmd->inherited != NULL) {
        const wh_ctl_flag *inh[64];
        size_t ninh = 0;
        /* a command's own flag shadows the inherited one of the same name (cobra's rule) */
        for (size_t i = 0; i < cmd->inherited->n && ninh < 64; i++) {
            int shadowed = 0;
            for (size_t j = 0; j < cmd->nflags; j++)
                shadowed |= strcmp(cmd->flags[j].name, cmd->inherited->flags[i].name) == 0;
            if (!shadowed)
                inh[ninh++] = &cmd->inherited->flags[i];
        }
        print_flags(out, "Global Flags", inh, ninh, name);
    }
    if (nsubs > 0)
        fprintf(out, "\nUse \"%s [command] --help\" for more information about a command.\n", path);
}

int wh_ctl_usage_error(const wh_ctl_args *a, const char *fmt, ...)
{
    va_list ap;

    fputs("Error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun '%s --help' for usage.\n", a->path);
    return 2;
}

/* ---- dispatch ------------------------------------------------------------- */

static int names_cmd(const wh_ctl_cmd *c, const char *name)
{
    return strcmp(c->name, name) == 0 || name_in_list(c->aliases, name, strlen(name));
}

/* Levenshtein distance, case-insensitive (cobra's suggestion metric). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64], i, j;

    if (la >= 63 || lb >= 63)
        return 64;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t cur = row[j], cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

static int suggested(const wh_ctl_cmd *c, const char *typed)
{
    size_t n = strlen(typed);
    return distance(typed, c->name) <= 2 || name_in_list(c->suggest_for, typed, n) ||
           (n > 0 && strncasecmp(c->name, typed, n) == 0);
}

/* cobra's `unknown command "x" for "path"`, with "Did you mean this?". */
static int unknown_command(const wh_ctl_cmd *group, const char *path, const char *typed)
{
    size_t n = count_subs(group), shown = 0;

    fprintf(stderr, "Error: unknown command \"%s\" for \"%s\"", typed, path);
    for (size_t i = 0; i < n; i++)
        if (suggested(group->subcommands[i], typed))
            fprintf(stderr, "%s\t%s\n", shown++ == 0 ? "\n\nDid you mean this?\n" : "", group->subcommands[i]->name);
    fprintf(stderr, "\nRun '%s --help' for usage.\n", path);
    return 2;
}

/* The i-th flag spec of `cmd`: own, help, version, inherited; NULL past the end. */
static const wh_ctl_flag *nth_flag(const wh_ctl_cmd *cmd, size_t i)
{
    if (i < cmd->nflags)
        return &cmd->flags[i];
    i -= cmd->nflags;
    if (i == 0)
        return &help_flag;
    i--;
    if (cmd->version != NULL && i-- == 0)
        return &version_flag;
    return cmd->inherited != NULL && i < cmd->inherited->n ? &cmd->inherited->flags[i] : NULL;
}

/* A flag spec of `cmd` by long name (name != NULL) or shorthand. */
static const wh_ctl_flag *cmd_flag(const wh_ctl_cmd *cmd, const char *name, size_t len, char shorthand)
{
    const wh_ctl_flag *f;

    for (size_t i = 0; (f = nth_flag(cmd, i)) != NULL; i++) {
        if (name != NULL &&
            ((strlen(f->name) == len && strncmp(f->name, name, len) == 0) || name_in_list(f->aliases, name, len)))
            return f;
        if (name == NULL && f->shorthand == shorthand)
            return f;
    }
    return NULL;
}

/* The flag whose value is the word after the flag word `w`, NULL when `w`
 * carries its own value or names bool flags only (cobra's stripFlags). */
static const wh_ctl_flag *value_flag(const wh_ctl_cmd *cmd, const char *w)
{
    const wh_ctl_flag *f;

    if (w[1] == '-') {
        if (strchr(w, '=') != NULL)
            return NULL;
        f = cmd_flag(cmd, w + 2, strlen(w + 2), 0);
        return f != NULL && f->type != WH_CTL_BOOL ? f : NULL;
    }
    for (const char *s = w + 1; *s != '\0'; s++) {
        if ((f = cmd_flag(cmd, NULL, 0, *s)) == NULL || f->type != WH_CTL_BOOL)
            return f != NULL && s[1] == '\0' ? f : NULL;
    }
    return NULL;
}

/* Index in words[0..n) of the first word that is neither a flag nor a flag's
 * value, -1 when none (or after "--"). */
static int find_command_word(const wh_ctl_cmd *cmd, char **words, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(words[i], "--") == 0)
            return -1;
        if (words[i][0] != '-' || words[i][1] == '\0')
            return i;
        if (value_flag(cmd, words[i]) != NULL)
            i++;
    }
    return -1;
}

/* Walk argv[1..] down the command tree: command names may come before or
 * after the (inherited) flags, as with cobra.  `words` gets what is left for
 * the command's flag parser. */
static int execute(const wh_ctl_cmd *root, char **words, int n)
{
    const wh_ctl_cmd *cmd = root;
    char path[128];
    int rc, help_cmd = 0, k;
    wh_ctl_args a;
    wh_err err = {0};

    snprintf(path, sizeof(path), "%s", root->name);
    if (n > 0 && strcmp(words[0], "__complete") == 0) {
        wh_ctl_complete(root, words + 1, n > 1 ? n - 2 : 0, n > 1 ? words[n - 1] : "", stdout);
        return 0;
    }
    /* `webhookctl help [command...]` is `webhookctl [command...] --help` */
    if (n > 0 && strcmp(words[0], "help") == 0 && root->subcommands != NULL) {
        help_cmd = 1;
        words++;
        n--;
    }
    while (cmd->subcommands != NULL && (k = find_command_word(cmd, words, n)) >= 0) {
        const wh_ctl_cmd *next = NULL;
        for (size_t j = 0; cmd->subcommands[j] != NULL && next == NULL; j++)
            if (names_cmd(cmd->subcommands[j], words[k]))
                next = cmd->subcommands[j];
        if (next == NULL)
            return unknown_command(cmd, path, words[k]);
        cmd = next;
        snprintf(path + strlen(path), sizeof(path) - strlen(path), " %s", cmd->name);
        memmove(&words[k], &words[k + 1], (size_t)(n - k - 1) * sizeof(*words));
        n--;
    }
    if (help_cmd) {
        wh_ctl_help(cmd, path, stdout);
        return 0;
    }
    if (wh_ctl_parse(cmd, path, n, words, &a, &err) != WH_OK) {
        fprintf(stderr, "Error: %s\nRun '%s --help' for usage.\n", wh_err_msg(&err), path);
        return 2;
    }
    if (!a.help && cmd->version != NULL && wh_ctl_bool(&a, "version")) {
        printf("%s version %s\n", cmd->name, cmd->version);
        rc = 0;
    } else if (a.help || cmd->run == NULL) {
        if (!a.help && a.nargs > 0)
            rc = unknown_command(cmd, path, a.args[0]);
        else
            wh_ctl_help(cmd, path, stdout), rc = 0;
    } else {
        rc = cmd->run(&a);
    }
    wh_ctl_args_free(&a);
    return rc;
}

int wh_ctl_execute(const wh_ctl_cmd *root, int argc, char **argv)
{
    char **words = wh_calloc((size_t)(argc > 0 ? argc : 1), sizeof(*words));
    int rc;

    if (argc > 1)
        memcpy(words, argv + 1, (size_t)(argc - 1) * sizeof(*words));
    rc = execute(root, words, argc > 1 ? argc - 1 : 0);
    free(words);
    return rc;
}

/* ---- shell completion ----------------------------------------------------- */

/* "value\tdescription": the description on one line, without the backquotes
 * that name a flag's value in --help. */
static void candidate(FILE *out, const char *prefix, const char *value, size_t vlen, const char *desc)
{
    fprintf(out, "%s%.*s", prefix, (int)vlen, value);
    if (desc != NULL && *desc != '\0') {
        fputc('\t', out);
        for (; *desc != '\0'; desc++)
            if (*desc != '`')
                fputc(*desc == '\n' || *desc == '\t' ? ' ' : *desc, out);
    }
    fputc('\n', out);
}

/* The flag's completion values that start with `cur`, each after `prefix`. */
static void flag_values(FILE *out, const wh_ctl_flag *f, const char *prefix, const char *cur)
{
    for (const char *v = f->values; v != NULL && *v != '\0';) {
        size_t len = strcspn(v, ",");
        if (len >= strlen(cur) && strncmp(v, cur, strlen(cur)) == 0)
            candidate(out, prefix, v, len, NULL);
        v += len + (v[len] == ',');
    }
}

void wh_ctl_complete(const wh_ctl_cmd *root, char **words, int n, const char *cur, FILE *out)
{
    static const wh_ctl_cmd help_cmd = {.name = "help", .summary = "Help about any command"};
    const wh_ctl_cmd *cmd = root;
    const wh_ctl_flag *pending = NULL, *f;
    unsigned directive = 0;
    int only_args = 0, nargs = 0;
    size_t clen = strlen(cur);

    for (int i = 0; i < n; i++) {
        const char *w = words[i];
        const wh_ctl_cmd *sub = NULL;
        if (!only_args && strcmp(w, "--") == 0) {
            only_args = 1;
        } else if (!only_args && w[0] == '-' && w[1] != '\0') {
            if ((f = value_flag(cmd, w)) != NULL && i + 1 == n)
                pending = f; /* `cur` is its value */
            else if (f != NULL)
                i++;
        } else {
            for (size_t j = 0; nargs == 0 && cmd->subcommands != NULL && cmd->subcommands[j] != NULL && sub == NULL;
                 j++)
                if (names_cmd(cmd->subcommands[j], w))
                    sub = cmd->subcommands[j];
            if (sub != NULL)
                cmd = sub;
            else if (!(cmd == root && i == 0 && strcmp(w, "help") == 0))
                nargs++;
        }
    }
    if (pending != NULL) {
        flag_values(out, pending, "", cur);
        directive = pending->values != NULL ? WH_CTL_COMP_NOFILES : 0;
    } else if (!only_args && cur[0] == '-') {
        const char *eq = strchr(cur, '=');
        directive = WH_CTL_COMP_NOFILES;
        if (cur[1] == '-' && eq != NULL) { /* --flag=partial */
            f = cmd_flag(cmd, cur + 2, (size_t)(eq - cur - 2), 0);
            if (f != NULL && f->type != WH_CTL_BOOL && f->values == NULL)
                directive = 0;
            else if (f != NULL && f->type != WH_CTL_BOOL) {
                wh_buf prefix = WH_BUF_INIT;
                wh_buf_printf(&prefix, "%.*s", (int)(eq - cur + 1), cur);
                flag_values(out, f, prefix.data, eq + 1);
                wh_buf_free(&prefix);
            }
        } else {
            for (size_t i = 0; (f = nth_flag(cmd, i)) != NULL; i++) {
                char name[96];
                if (f->opts & WH_CTL_HIDDEN)
                    continue;
                snprintf(name, sizeof(name), "--%s", f->name);
                if (strncmp(name, cur, clen) != 0)
                    continue;
                if (f == &help_flag || f == &version_flag) {
                    char desc[96];
                    snprintf(desc, sizeof(desc), "%s for %s", f->name, cmd->name);
                    candidate(out, "", name, strlen(name), desc);
                } else {
                    candidate(out, "", name, strlen(name), f->usage);
                }
            }
        }
    } else if (cmd->subcommands != NULL && nargs == 0) {
        directive = WH_CTL_COMP_NOFILES;
        for (size_t j = 0; cmd->subcommands[j] != NULL; j++)
            if (strncmp(cmd->subcommands[j]->name, cur, clen) == 0)
                candidate(out, "", cmd->subcommands[j]->name, strlen(cmd->subcommands[j]->name),
                          cmd->subcommands[j]->summary);
        if (cmd == root && strncmp(help_cmd.name, cur, clen) == 0)
            candidate(out, "", help_cmd.name, strlen(help_cmd.name), help_cmd.summary);
    }
    fprintf(out, ":%u\n", directive);
}
