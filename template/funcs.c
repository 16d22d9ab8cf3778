/*
 * funcs.c - a set's function table: adding functions (wh_tmpl_set_funcs, and
 * the engine's own libraries with their raw 'r' parameters) and finding one by
 * name.  The parser looks names up while it parses (Go's parse.Parse takes the
 * func maps for the same reason) and the set fills the table; it sits below
 * both.
 */
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

static int func_cmp(const void *a, const void *b)
{
    return strcmp(((const tm_func *)a)->name, ((const tm_func *)b)->name);
}

const tm_func *tm_find_func(const wh_tmpl_set *set, const char *name, size_t len)
{
    size_t lo = 0, hi = set->nfuncs;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = set->funcs[mid].name;
        int c = strncmp(m, name, len);
        if (c == 0 && m[len] != '\0')
            c = 1;
        if (c == 0)
            return &set->funcs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int parse_params(const char *params, tm_func *f)
{
    size_t n;

    if (params == NULL)
        params = "v*";
    n = strlen(params);
    f->variadic = 0;
    if (n > 0 && params[n - 1] == '*') {
        f->variadic = 1;
        n--;
        if (n == 0)
            return -1;
    }
    if (n >= sizeof(f->params))
        return -1;
    memcpy(f->params, params, n);
    f->params[n] = 0;
    f->nparams = (uint8_t)n;
    return strspn(f->params, "vsiIfbmMlLr") == n ? 0 : -1;
}

/* Add funcs to the set; only internal ones (builtins, Sprig, Helm) may take raw
 * arguments (the 'r' parameter letter). */
wh_code tm_add_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, int internal, wh_err *err)
{
    size_t i, added = 0;

    if (set->capfuncs - set->nfuncs < n) {
        size_t cap = set->nfuncs + n + 16;
        tm_func *v = wh_realloc(set->funcs, cap * sizeof(*v));
        set->funcs = v;
        set->capfuncs = cap;
    }
    for (i = 0; i < n; i++) {
        tm_func f;
        const tm_func *old;
        memset(&f, 0, sizeof(f));
        if (funcs[i].name == NULL || funcs[i].fn == NULL || parse_params(funcs[i].params, &f) != 0 ||
            (!internal && strchr(funcs[i].params ? funcs[i].params : "", 'r') != NULL)) {
            /* keep the sorted part valid */
            qsort(set->funcs, set->nfuncs, sizeof(*set->funcs), func_cmp);
            return wh_err_set(err, WH_E_INVALID, "template function %s: bad definition (params \"%s\")",
                              funcs[i].name ? funcs[i].name : "(null)", funcs[i].params ? funcs[i].params : "");
        }
        f.name = funcs[i].name;
        f.fn = funcs[i].fn;
        f.pure = (funcs[i].flags & WH_TMPL_FN_PURE) != 0;
        f.stable = (funcs[i].flags & (WH_TMPL_FN_PURE | WH_TMPL_FN_STABLE)) != 0;
        if (internal && strcmp(f.name, "and") == 0)
            f.special = FN_AND;
        else if (internal && strcmp(f.name, "or") == 0)
            f.special = FN_OR;
        /* an existing name (sorted part or added by this call) is replaced */
        set->nfuncs -= added;
        old = tm_find_func(set, f.name, strlen(f.name));
        set->nfuncs += added;
        if (old == NULL) {
            size_t k;
            for (k = set->nfuncs - added; k < set->nfuncs; k++)
                if (strcmp(set->funcs[k].name, f.name) == 0)
                    old = &set->funcs[k];
        }
        if (old != NULL) {
            *(tm_func *)old = f;
            continue;
        }
        set->funcs[set->nfuncs++] = f;
        added++;
    }
    qsort(set->funcs, set->nfuncs, sizeof(*set->funcs), func_cmp);
    return WH_OK;
}

wh_code wh_tmpl_set_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, wh_err *err)
{
    if (set->defs.n != 0)
        return wh_err_set(err, WH_E_INVALID, "template functions must be added before parsing");
    return tm_add_funcs(set, funcs, n, 0, err);
}

wh_code wh_tmpl_set_drop_funcs(wh_tmpl_set *set, const char *const *names, size_t n, wh_err *err)
{
    if (set->defs.n != 0)
        return wh_err_set(err, WH_E_INVALID, "template functions must be dropped before parsing");
    for (size_t i = 0; i < n; i++) {
        const tm_func *f = tm_find_func(set, names[i], strlen(names[i]));
        if (f == NULL)
            continue;
        /* the rest stays sorted */
        memmove((tm_func *)f, f + 1, (size_t)(set->funcs + set->nfuncs - (f + 1)) * sizeof(*f));
        set->nfuncs--;
    }
    return WH_OK;
}
