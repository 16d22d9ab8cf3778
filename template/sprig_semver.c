/*
 * sprig_semver.c - Sprig's semver.go: semverCompare with Masterminds/semver v3
 * constraints (what Istio's templates ask of Kubernetes versions), and semver,
 * which hands templates a *semver.Version with that type's methods.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprig_int.h"
#include "wh_alloc.h"
#include "wh_buf.h"

/* semver.Version: the strings NUL-terminated in the render's arena */
typedef struct version {
    uint64_t major, minor, patch;
    const char *pre, *meta, *orig;
} version;

static int cmp_pre(const char *a, const char *b)
{
    /* dot-separated identifiers: numeric compare numerically, lower than alnum */
    if (*a == 0 && *b == 0)
        return 0;
    if (*a == 0)
        return 1;
    if (*b == 0)
        return -1;
    while (*a && *b) {
        size_t la = strcspn(a, "."), lb = strcspn(b, ".");
        int na = la > 0 && strspn(a, "0123456789") >= la, nb = lb > 0 && strspn(b, "0123456789") >= lb, c;
        if (na && nb) {
            unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
            if (x != y)
                return x < y ? -1 : 1;
        } else if (na != nb) {
            return na ? -1 : 1;
        } else {
            c = tm_strcmp(a, la, b, lb);
            if (c != 0)
                return c < 0 ? -1 : 1;
        }
        a += la;
        b += lb;
        if (*a == '.')
            a++;
        if (*b == '.')
            b++;
    }
    if (*a == 0 && *b == 0)
        return 0;
    return *a == 0 ? -1 : 1;
}

/* Version.Compare */
static int version_cmp(const version *a, const version *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor)
        return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch)
        return a->patch < b->patch ? -1 : 1;
    return cmp_pre(a->pre, b->pre);
}

/* One constraint term like ">=1.2", "~1.2.3", "^1", "1.x", "!=2": 1 = ok,
 * 0 = no, -1 = bad syntax. */
static int check_term(const char *t, const version *v)
{
    char op[3] = "";
    size_t ol = 0;
    version c;
    char cpre[128];
    int wild_minor = 0, wild_patch = 0, nparts = 0, cmp;
    char buf[128];
    size_t i, k = 0;

    while (*t == ' ')
        t++;
    while (ol < 2 && strchr("=!<>~^", t[ol]) != NULL && t[ol] != 0) {
        op[ol] = t[ol];
        ol++;
    }
    op[ol] = 0;
    t += ol;
    while (*t == ' ')
        t++;
    if (*t == 'v')
        t++;
    /* parse with wildcards */
    for (i = 0; t[i] && t[i] != ' ' && k + 1 < sizeof(buf); i++)
        buf[k++] = t[i];
    buf[k] = 0;
    if (k == 0)
        return -1;
    {
        char *p = buf, *end;
        uint64_t nums[3] = {0, 0, 0};
        memset(&c, 0, sizeof(c));
        c.pre = "";
        while (nparts < 3) {
            if (*p == 'x' || *p == 'X' || *p == '*') {
                if (nparts == 0)
                    return strcmp(op, "") == 0 || strcmp(op, "=") == 0 || strcmp(op, ">=") == 0 ? 1 : -1;
                if (nparts == 1)
                    wild_minor = 1;
                wild_patch = 1;
                p++;
                nparts++;
            } else if (isdigit((unsigned char)*p)) {
                nums[nparts++] = strtoull(p, &end, 10);
                p = end;
            } else {
                return -1;
            }
            if (*p != '.')
                break;
            p++;
        }
        if (nparts < 2)
            wild_minor = 1;
        if (nparts < 3)
            wild_patch = 1;
        c.major = nums[0];
        c.minor = nums[1];
        c.patch = nums[2];
        if (*p == '-') {
            size_t pl = strcspn(p + 1, "+");
            if (pl >= sizeof(cpre))
                return -1;
            memcpy(cpre, p + 1, pl);
            cpre[pl] = 0;
            c.pre = cpre;
            p += 1 + pl;
        }
        if (*p == '+')
            p += strlen(p);
        if (*p != 0)
            return -1;
    }
    /* a prerelease version only satisfies terms that carry a prerelease */
    if (v->pre[0] && !c.pre[0])
        return 0;
    cmp = version_cmp(v, &c);
    if (strcmp(op, "") == 0 || strcmp(op, "=") == 0) {
        if (wild_minor)
            return v->major == c.major;
        if (wild_patch)
            return v->major == c.major && v->minor == c.minor;
        return cmp == 0;
    }
    if (strcmp(op, "!=") == 0) {
        if (wild_minor)
            return v->major != c.major;
        if (wild_patch)
            return !(v->major == c.major && v->minor == c.minor);
        return cmp != 0;
    }
    if (strcmp(op, ">") == 0) {
        if (wild_minor)
            return v->major > c.major;
        if (wild_patch)
            return v->major > c.major || (v->major == c.major && v->minor > c.minor);
        return cmp > 0;
    }
    if (strcmp(op, ">=") == 0 || strcmp(op, "=>") == 0)
        return cmp >= 0;
    if (strcmp(op, "<") == 0)
        return cmp < 0;
    if (strcmp(op, "<=") == 0 || strcmp(op, "=<") == 0) {
        if (wild_minor)
            return v->major <= c.major;
        if (wild_patch)
            return v->major < c.major || (v->major == c.major && v->minor <= c.minor);
        return cmp <= 0;
    }
    if (strcmp(op, "~") == 0 || strcmp(op, "~>") == 0) {
        if (cmp < 0)
            return 0;
        if (wild_minor && nparts < 2)
            return v->major == c.major;
        return v->major == c.major && v->minor == c.minor;
    }
    if (strcmp(op, "^") == 0) {
        if (cmp < 0)
            return 0;
        if (c.major > 0 || wild_minor)
            return v->major == c.major;
        if (c.minor > 0 || wild_patch)
            return v->major == 0 && v->minor == c.minor;
        return v->major == 0 && v->minor == 0 && v->patch == c.patch;
    }
    return -1;
}

static int new_version(wh_tmpl_ctx *ctx, const char *s, size_t len, version *v, char *err, size_t errlen);

FN(fn_semvercompare)
{
    version v;
    char cbuf[512], *alt, *save1 = NULL, verr[160];
    int any = 0;
    /* the version as semver.NewVersion reads it */
    int bad_version = new_version(ctx, a[1].u.s, a[1].len, &v, verr, sizeof(verr)) != 0;

    /* the constraint is checked first (on a stand-in version if need be) */
    if (bad_version) {
        memset(&v, 0, sizeof(v));
        v.pre = "";
    }
    if (a[0].len >= sizeof(cbuf))
        return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
    memcpy(cbuf, a[0].u.s, a[0].len);
    cbuf[a[0].len] = 0;
    for (alt = strtok_r(cbuf, "|", &save1); alt != NULL; alt = strtok_r(NULL, "|", &save1)) {
        char *term, *save2 = NULL;
        int ok = 1, terms = 0;
        char tbuf[512];
        /* hyphen ranges "1.2 - 1.4" and comma/space separated terms */
        snprintf(tbuf, sizeof(tbuf), "%s", alt);
        {
            char *h = strstr(tbuf, " - ");
            if (h != NULL) {
                char lo[600], hi[600];
                int r1, r2;
                *h = 0;
                snprintf(lo, sizeof(lo), ">=%s", tbuf);
                snprintf(hi, sizeof(hi), "<=%s", h + 3);
                r1 = check_term(lo, &v);
                r2 = check_term(hi, &v);
                if (r1 < 0 || r2 < 0)
                    return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
                if (r1 && r2)
                    any = 1;
                continue;
            }
        }
        for (term = strtok_r(tbuf, ", ", &save2); term != NULL; term = strtok_r(NULL, ", ", &save2)) {
            int r;
            if (strspn(term, "=!<>~^") == strlen(term)) {
                /* operator separated from its version by spaces */
                char joined[256];
                char *next = strtok_r(NULL, ", ", &save2);
                if (next == NULL)
                    return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
                snprintf(joined, sizeof(joined), "%s%s", term, next);
                r = check_term(joined, &v);
            } else {
                r = check_term(term, &v);
            }
            if (r < 0)
                return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
            terms++;
            if (!r)
                ok = 0;
        }
        if (terms == 0)
            return wh_tmpl_errorf(ctx, "improper constraint: %.*s", (int)a[0].len, a[0].u.s);
        if (ok)
            any = 1;
    }
    if (bad_version)
        return wh_tmpl_errorf(ctx, "%s", verr);
    return sprig_ret_bool(out, any);
}

/* ---- semver: Masterminds/semver's *Version, its methods as templates call them ---- */

static const wh_tmpl_type version_ptr_type, version_type;
static const wh_tmpl_type uint64_type = {.name = "uint64", .kind = WH_TMPL_UINT};

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '-';
}

/* [0-9A-Za-z-]+(\.[0-9A-Za-z-]+)* from s[*i], the regular expression's identifiers */
static int scan_idents(const char *s, size_t len, size_t *i)
{
    size_t start;
    do {
        start = *i;
        while (*i < len && ident_char(s[*i]))
            (*i)++;
        if (*i == start)
            return -1;
    } while (*i < len && s[*i] == '.' && ++*i);
    return 0;
}

/* strconv.ParseUint of digits: -1 when out of range */
static int parse_uint(const char *s, size_t n, uint64_t *v)
{
    size_t i;
    *v = 0;
    for (i = 0; i < n; i++) {
        unsigned d = s[i] - '0';
        if (*v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
    }
    return 0;
}

/* Masterminds/semver's validatePrerelease: NULL when valid, else its error,
 * for the first dot-separated part that is wrong */
static const char *prerelease_error(const char *p, size_t n)
{
    size_t i = 0;
    while (i <= n) {
        size_t k = i, digits = 1, allowed = 1;
        for (; k < n && p[k] != '.'; k++) {
            digits &= isdigit((unsigned char)p[k]) != 0;
            allowed &= ident_char(p[k]);
        }
        if (digits && k - i > 1 && p[i] == '0')
            return "Version segment starts with 0";
        if (!digits && !allowed)
            return "Invalid Prerelease string";
        i = k + 1;
    }
    return NULL;
}

/* Masterminds/semver's validateMetadata */
static const char *metadata_error(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!ident_char(p[i]) && p[i] != '.')
            return "Invalid Metadata string";
    return NULL;
}

/* semver.NewVersion: v?N(.N)?(.N)?(-pre)?(+meta)?, the missing numbers 0;
 * the whole string must match before a number can be out of range.  -1 with
 * its error text in err (semverCompare reports it only after the constraint's) */
static int new_version(wh_tmpl_ctx *ctx, const char *s, size_t len, version *v, char *err, size_t errlen)
{
    uint64_t *nums[3] = {&v->major, &v->minor, &v->patch};
    size_t at[3], end[3], i = len > 0 && s[0] == 'v', pre = 0, pre_end = 0, meta = 0;
    const char *perr;
    int k, nn = 0;

    memset(v, 0, sizeof(*v));
    for (k = 0; k < 3; k++) {
        if (k > 0 && !(i + 1 < len && s[i] == '.' && isdigit((unsigned char)s[i + 1])))
            break;
        i += k > 0;
        at[k] = i;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
        if (i == at[k])
            return snprintf(err, errlen, "Invalid Semantic Version"), -1;
        end[k] = i;
        nn++;
    }
    if (i < len && s[i] == '-') {
        pre = ++i;
        if (scan_idents(s, len, &i))
            return snprintf(err, errlen, "Invalid Semantic Version"), -1;
        pre_end = i;
    }
    if (i < len && s[i] == '+') {
        meta = ++i;
        if (scan_idents(s, len, &i))
            return snprintf(err, errlen, "Invalid Semantic Version"), -1;
    }
    if (i != len)
        return snprintf(err, errlen, "Invalid Semantic Version"), -1;
    for (k = 0; k < nn; k++)
        if (parse_uint(s + at[k], end[k] - at[k], nums[k]))
            return wh_tmpl_errorf(
                       ctx, "Error parsing version segment: strconv.ParseUint: parsing \"%.*s\": value out of range",
                       (int)(end[k] - at[k]), s + at[k]),
                   -1;
    if (pre && (perr = prerelease_error(s + pre, pre_end - pre)) != NULL)
        return snprintf(err, errlen, "%s", perr), -1;
    v->pre = pre ? sprig_arena_str(ctx, s + pre, pre_end - pre) : "";
    v->meta = meta ? sprig_arena_str(ctx, s + meta, len - meta) : "";
    v->orig = sprig_arena_str(ctx, s, len);
    return 0;
}

/* Version.String() */
static void version_string(wh_buf *b, const version *v)
{
    wh_buf_printf(b, "%llu.%llu.%llu", (unsigned long long)v->major, (unsigned long long)v->minor,
                  (unsigned long long)v->patch);
    if (*v->pre)
        wh_buf_printf(b, "-%s", v->pre);
    if (*v->meta)
        wh_buf_printf(b, "+%s", v->meta);
}

/* A Version value (what IncPatch, SetMetadata, ... return): its methods
 * are the value receiver's, so its original (only the pointer's Original
 * reads it) is never seen */
static wh_tmpl_value version_value(wh_tmpl_ctx *ctx, const version *v)
{
    version *nv = wh_tmpl_alloc(ctx, sizeof(*nv));
    *nv = *v;
    return wh_tmpl_host(&version_type, nv);
}

static wh_code want_args(wh_tmpl_ctx *ctx, const char *name, size_t want, size_t got)
{
    return want == got ? WH_OK : wh_tmpl_errorf(ctx, "wrong number of args for %s: want %zu got %zu", name, want, got);
}

/* The methods of semver.Version and, on the pointer, of *semver.Version. */
static wh_code version_field(wh_tmpl_ctx *ctx, const wh_tmpl_value *recv, const char *name, const wh_tmpl_value *args,
                             size_t nargs, wh_tmpl_value *out)
{
    const version *v = recv->u.host;
    int ptr = recv->type == &version_ptr_type;
    version next = *v;
    wh_code rc;

    if (strcmp(name, "Major") == 0 || strcmp(name, "Minor") == 0 || strcmp(name, "Patch") == 0) {
        if ((rc = want_args(ctx, name, 0, nargs)) != WH_OK)
            return rc;
        *out = wh_tmpl_uint_typed(name[0] == 'P' ? v->patch : name[1] == 'a' ? v->major : v->minor, &uint64_type);
        return WH_OK;
    }
    if (strcmp(name, "Prerelease") == 0 || strcmp(name, "Metadata") == 0 || (ptr && strcmp(name, "Original") == 0)) {
        if ((rc = want_args(ctx, name, 0, nargs)) != WH_OK)
            return rc;
        *out = wh_tmpl_str(name[0] == 'P' ? v->pre : name[0] == 'M' ? v->meta : v->orig);
        return WH_OK;
    }
    if (strcmp(name, "String") == 0) {
        wh_buf *b = wh_tmpl_tmpbuf(ctx);
        if ((rc = want_args(ctx, name, 0, nargs)) != WH_OK)
            return rc;
        version_string(b, v);
        return wh_tmpl_strdup(ctx, b->data, b->len, out);
    }
    if (strcmp(name, "IncPatch") == 0 || strcmp(name, "IncMinor") == 0 || strcmp(name, "IncMajor") == 0) {
        if ((rc = want_args(ctx, name, 0, nargs)) != WH_OK)
            return rc;
        next.pre = next.meta = "";
        if (name[3] == 'P') {
            if (!*v->pre)
                next.patch++;
        } else if (name[4] == 'i') {
            next.patch = 0;
            next.minor++;
        } else {
            next.patch = next.minor = 0;
            next.major++;
        }
        *out = version_value(ctx, &next);
        return WH_OK;
    }
    if (strcmp(name, "SetPrerelease") == 0 || strcmp(name, "SetMetadata") == 0) {
        int is_pre = name[3] == 'P';
        const char *err;
        if ((rc = want_args(ctx, name, 1, nargs)) != WH_OK)
            return rc;
        if (args[0].kind != WH_TMPL_STRING)
            return wh_tmpl_errorf(ctx, "wrong type for value; expected string; got %s", wh_tmpl_type_name(&args[0]));
        if (args[0].len > 0 && (err = is_pre ? prerelease_error(args[0].u.s, args[0].len)
                                             : metadata_error(args[0].u.s, args[0].len)) != NULL)
            return wh_tmpl_errorf(ctx, "%s", err);
        *(is_pre ? &next.pre : &next.meta) = sprig_arena_str(ctx, args[0].u.s, args[0].len);
        *out = version_value(ctx, &next);
        return WH_OK;
    }
    if (ptr && (strcmp(name, "Compare") == 0 || strcmp(name, "LessThan") == 0 || strcmp(name, "GreaterThan") == 0 ||
                strcmp(name, "Equal") == 0)) {
        int c;
        if ((rc = want_args(ctx, name, 1, nargs)) != WH_OK)
            return rc;
        if (args[0].kind == WH_TMPL_NIL || (args[0].type == &version_ptr_type && args[0].u.host == NULL))
            return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
        if (args[0].type != &version_ptr_type)
            return wh_tmpl_errorf(ctx, "wrong type for value; expected *semver.Version; got %s",
                                  wh_tmpl_type_name(&args[0]));
        c = version_cmp(v, args[0].u.host);
        *out = name[0] == 'C' ? wh_tmpl_int(c) : wh_tmpl_bool(name[0] == 'L' ? c < 0 : name[0] == 'G' ? c > 0 : c == 0);
        return WH_OK;
    }
    return WH_E_NOTFOUND;
}

/* fmt prints a Version by its String method; encoding/json by MarshalJSON (the same string) */
static wh_code version_format(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, wh_buf *out)
{
    (void)ctx;
    version_string(out, v->u.host);
    return WH_OK;
}

static json_t *version_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *v)
{
    wh_buf b = WH_BUF_INIT;
    json_t *j;
    (void)ctx;
    version_string(&b, v->u.host);
    j = json_stringn(b.data, b.len);
    wh_buf_free(&b);
    if (!j)
        wh_oom(b.len);
    return j;
}

static const wh_tmpl_type version_ptr_type = {.name = "*semver.Version",
                                              .kind = WH_TMPL_HOST,
                                              .field = version_field,
                                              .format = version_format,
                                              .to_json = version_json,
                                              .pointer = 1};
static const wh_tmpl_type version_type = {.name = "semver.Version",
                                          .kind = WH_TMPL_HOST,
                                          .field = version_field,
                                          .format = version_format,
                                          .to_json = version_json};

FN(fn_semver)
{
    version *v = wh_tmpl_alloc(ctx, sizeof(*v));
    (void)n;
    char err[160];
    if (new_version(ctx, a[0].u.s, a[0].len, v, err, sizeof(err)))
        return wh_tmpl_errorf(ctx, "%s", err);
    *out = wh_tmpl_host(&version_ptr_type, v);
    return WH_OK;
}

const wh_tmpl_func tm_sprig_semver_funcs[] = {
    {"semver", fn_semver, "s", 0},
    {"semverCompare", fn_semvercompare, "ss", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_semver_nfuncs = sizeof(tm_sprig_semver_funcs) / sizeof(tm_sprig_semver_funcs[0]);
