/*
 * sprig_semver.c - Sprig's semver.go: semverCompare with Masterminds/semver v3
 * constraints (what Istio's templates ask of Kubernetes versions).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprig_int.h"

typedef struct semver {
    uint64_t major, minor, patch;
    char pre[128];
} semver;

static int parse_semver(const char *s, size_t len, semver *v)
{
    char buf[256], *p, *end;
    int parts = 0;
    uint64_t nums[3] = {0, 0, 0};

    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    p = buf;
    if (*p == 'v')
        p++;
    memset(v, 0, sizeof(*v));
    while (parts < 3) {
        if (!isdigit((unsigned char)*p))
            return -1;
        errno = 0;
        nums[parts++] = strtoull(p, &end, 10);
        if (errno != 0)
            return -1;
        if (end - p > 1 && *p == '0')
            return -1;
        p = end;
        if (*p != '.')
            break;
        p++;
    }
    v->major = nums[0];
    v->minor = nums[1];
    v->patch = nums[2];
    if (*p == '-') {
        char *q = p + 1;
        size_t k = strcspn(q, "+");
        if (k == 0 || k >= sizeof(v->pre))
            return -1;
        memcpy(v->pre, q, k);
        v->pre[k] = 0;
        p = q + k;
    }
    if (*p == '+')
        p += strlen(p);
    return *p == 0 ? 0 : -1;
}

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

static int semver_cmp(const semver *a, const semver *b)
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
static int check_term(const char *t, const semver *v)
{
    char op[3] = "";
    size_t ol = 0;
    semver c;
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
            if (pl >= sizeof(c.pre))
                return -1;
            memcpy(c.pre, p + 1, pl);
            c.pre[pl] = 0;
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
    cmp = semver_cmp(v, &c);
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

FN(fn_semvercompare)
{
    semver v;
    char cbuf[512], *alt, *save1 = NULL;
    int any = 0;

    int bad_version = parse_semver(a[1].u.s, a[1].len, &v) != 0;

    /* the constraint is checked first (on a stand-in version if need be) */
    if (bad_version)
        memset(&v, 0, sizeof(v));
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
        return wh_tmpl_errorf(ctx, "Invalid Semantic Version");
    return sprig_ret_bool(out, any);
}

const wh_tmpl_func tm_sprig_semver_funcs[] = {
    {"semverCompare", fn_semvercompare, "ss", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_semver_nfuncs = sizeof(tm_sprig_semver_funcs) / sizeof(tm_sprig_semver_funcs[0]);
