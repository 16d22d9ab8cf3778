/*
 * set.c - template sets (functions, delimiters, parsed definitions) and the
 * render entry point with its per-render context API.
 */
#define _GNU_SOURCE /* newlocale */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

/* ---- functions ---- */

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
static wh_code tm_add_funcs(wh_tmpl_set *set, const wh_tmpl_func *funcs, size_t n, int internal, wh_err *err)
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

/* ---- sets ---- */

wh_tmpl_set *wh_tmpl_set_new(unsigned flags)
{
    wh_tmpl_set *set = wh_calloc(1, sizeof(*set));
    size_t i;

    set->flags = flags;
    tm_arena_init(&set->arena);
    set->ctype = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (tm_add_funcs(set, tm_builtin_funcs, tm_builtin_nfuncs, 1, NULL) != WH_OK)
        goto fail;
    for (i = 0; (flags & WH_TMPL_SPRIG) && i < tm_sprig_ntables; i++)
        if (tm_add_funcs(set, tm_sprig_tables[i].funcs, *tm_sprig_tables[i].n, 1, NULL) != WH_OK)
            goto fail;
    if ((flags & WH_TMPL_HELM) && tm_add_funcs(set, tm_helm_funcs, tm_helm_nfuncs, 1, NULL) != WH_OK)
        goto fail;
    return set;
fail:
    wh_tmpl_set_free(set);
    return NULL;
}

void wh_tmpl_set_free(wh_tmpl_set *set)
{
    if (set == NULL)
        return;
    tm_arena_free(&set->arena);
    if (set->ctype != (locale_t)0)
        freelocale(set->ctype);
    free(set->funcs);
    free(set->defs.items);
    free(set->ldelim);
    free(set->rdelim);
    free(set);
}

wh_code wh_tmpl_set_delims(wh_tmpl_set *set, const char *left, const char *right, wh_err *err)
{
    char *l = NULL, *r = NULL;

    if (left != NULL && *left)
        l = wh_strdup(left);
    if (right != NULL && *right)
        r = wh_strdup(right);
    free(set->ldelim);
    free(set->rdelim);
    set->ldelim = l;
    set->rdelim = r;
    return WH_OK;
}

wh_code wh_tmpl_parse(wh_tmpl_set *set, const char *name, const char *text, size_t len, wh_err *err)
{
    tm_defs defs = {0};
    char msg[WH_ERR_MSG_MAX];
    wh_code rc;
    size_t i;

    msg[0] = 0;
    if (name == NULL || text == NULL)
        return wh_err_set(err, WH_E_INVALID, "template: missing name or text");
    rc = tm_parse(set, &set->arena, &defs, name, text, len, msg, sizeof(msg));
    if (rc != WH_OK) {
        free(defs.items);
        return wh_err_set(err, rc, "%s", msg[0] ? msg : "template: out of memory");
    }
    /* Go's associate: an empty definition does not replace an existing one */
    for (i = 0; i < defs.n; i++) {
        tm_def *old = (tm_def *)tm_find_def(&set->defs, defs.items[i].name);
        if (old != NULL) {
            if (!tm_is_empty_tree(defs.items[i].root))
                *old = defs.items[i];
            continue;
        }
        WH_GROW(set->defs.items, set->defs.n, set->defs.cap, 16);
        set->defs.items[set->defs.n++] = defs.items[i];
    }
    free(defs.items);
    return WH_OK;
}

int wh_tmpl_has(const wh_tmpl_set *set, const char *name)
{
    return tm_find_def(&set->defs, name) != NULL;
}

/* ---- rendering ---- */

wh_tmpl_scratch *wh_tmpl_scratch_new(void)
{
    wh_tmpl_scratch *s = wh_calloc(1, sizeof(*s));

    if (s != NULL)
        tm_arena_init(&s->arena);
    return s;
}

void wh_tmpl_scratch_free(wh_tmpl_scratch *s)
{
    if (s == NULL)
        return;
    tm_arena_free(&s->arena);
    free(s->vars);
    free(s->fcache);
    wh_buf_free(&s->tmp);
    wh_buf_free(&s->tmp2);
    free(s);
}

/* A render without the caller's scratch reuses one kept per thread: a
 * fresh context would allocate (and zero) the field cache and the arena's
 * first blocks on every render.  The thread's scratch is freed when the
 * thread exits; a render nested in another on the same thread (a function
 * rendering some other set) gets a private one. */
static pthread_key_t thread_scratch_key;
static pthread_once_t thread_scratch_once = PTHREAD_ONCE_INIT;
static int thread_scratch_ok;

static void thread_scratch_free(void *p)
{
    wh_tmpl_scratch_free(p);
}

static void thread_scratch_init(void)
{
    thread_scratch_ok = pthread_key_create(&thread_scratch_key, thread_scratch_free) == 0;
}

/* The thread's idle scratch (created on first use), or NULL. */
static wh_tmpl_scratch *thread_scratch(void)
{
    wh_tmpl_scratch *s;

    pthread_once(&thread_scratch_once, thread_scratch_init);
    if (!thread_scratch_ok)
        return NULL;
    if ((s = pthread_getspecific(thread_scratch_key)) == NULL) {
        if ((s = wh_tmpl_scratch_new()) == NULL)
            return NULL;
        if (pthread_setspecific(thread_scratch_key, s) != 0) {
            wh_tmpl_scratch_free(s);
            return NULL;
        }
    }
    return s->busy ? NULL : s;
}

/* Arena memory a thread's scratch keeps between renders; a render that grew
 * it beyond this gives the blocks back. */
#define TM_THREAD_KEEP ((size_t)1 << 20)

static size_t arena_spare_bytes(const tm_arena *a)
{
    size_t n = 0;
    for (const tm_block *b = a->spare; b != NULL; b = b->next)
        n += b->size;
    return n;
}

wh_code wh_tmpl_render(const wh_tmpl_set *set, const char *name, wh_tmpl_value data, const wh_tmpl_opts *opts,
                       wh_buf *out, wh_err *err)
{
    wh_tmpl_ctx ctx;
    wh_tmpl_scratch local, *scratch;
    const tm_def *def;
    wh_code rc;
    int per_thread = 0;

    def = tm_find_def(&set->defs, name);
    if (def == NULL)
        return wh_err_set(err, WH_E_NOTFOUND, "template: no template \"%s\" associated with template set", name);
    scratch = opts != NULL && opts->scratch != NULL ? opts->scratch : NULL;
    if (scratch == NULL && (scratch = thread_scratch()) != NULL)
        per_thread = 1;
    if (scratch == NULL) {
        memset(&local, 0, sizeof(local));
        tm_arena_init(&local.arena);
        scratch = &local;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.set = set;
    ctx.scratch = scratch;
    ctx.arena = &scratch->arena;
    ctx.out = out;
    ctx.vars = scratch->vars;
    ctx.capvars = scratch->capvars;
    ctx.opts = opts;
    ctx.user = opts != NULL ? opts->user : NULL;
    ctx.max_depth = opts != NULL && opts->max_depth ? opts->max_depth : 10000;
    ctx.max_steps = opts != NULL && opts->max_steps ? opts->max_steps : 100000000ULL;
    ctx.max_output = out->len + (opts != NULL && opts->max_output ? opts->max_output : (size_t)64 << 20);
    ctx.max_memory = opts != NULL && opts->max_memory ? opts->max_memory : (size_t)256 << 20;
    ctx.max_cpu_ms = opts != NULL && opts->max_cpu_ms ? opts->max_cpu_ms : 2000;
    tm_exec_budgets(&ctx);
    if (out->data == NULL)
        wh_buf_append(out, "", 0);
    scratch->gen++;
    scratch->busy = 1;
    rc = tm_exec_def(&ctx, def, data);
    scratch->busy = 0;
    if (rc != WH_OK) {
        if (rc != WH_E_LIMIT)
            rc = WH_E_RENDER;
        wh_err_set(err, rc, "%s", ctx.failed ? ctx.errmsg : "template: render failed");
    }
    json_decref(ctx.owned);
    scratch->vars = ctx.vars;
    scratch->capvars = ctx.capvars;
    tm_arena_reset(&scratch->arena);
    if (per_thread && arena_spare_bytes(&scratch->arena) > TM_THREAD_KEEP)
        tm_arena_free(&scratch->arena);
    if (scratch == &local) {
        tm_arena_free(&local.arena);
        free(local.vars);
        free(local.fcache);
        wh_buf_free(&local.tmp);
        wh_buf_free(&local.tmp2);
    }
    return rc;
}

/* ---- the context API ---- */

void *wh_tmpl_user(wh_tmpl_ctx *ctx)
{
    return ctx->user;
}

void *wh_tmpl_alloc(wh_tmpl_ctx *ctx, size_t size)
{
    return tm_alloc(ctx->arena, size);
}

wh_code wh_tmpl_strdup(wh_tmpl_ctx *ctx, const char *s, size_t len, wh_tmpl_value *out)
{
    char *p = tm_strndup(ctx->arena, s, len);

    *out = wh_tmpl_strn(p, len);
    return WH_OK;
}

wh_code tm_ret_buf(wh_tmpl_ctx *ctx, wh_tmpl_value *out, const wh_buf *b)
{
    return wh_tmpl_strdup(ctx, b->data ? b->data : "", b->len, out);
}

wh_code wh_tmpl_printf(wh_tmpl_ctx *ctx, wh_tmpl_value *out, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    int n;
    char *p;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return WH_E_INVALID;
    if ((size_t)n < sizeof(small))
        return wh_tmpl_strdup(ctx, small, (size_t)n, out);
    p = tm_alloc(ctx->arena, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *out = wh_tmpl_strn(p, (size_t)n);
    return WH_OK;
}

wh_buf *wh_tmpl_tmpbuf(wh_tmpl_ctx *ctx)
{
    wh_buf_reset(&ctx->scratch->tmp);
    return &ctx->scratch->tmp;
}

/* Run a definition into a string, keeping the caller's output and position. */
static wh_code exec_to_string(wh_tmpl_ctx *ctx, const tm_def *def, wh_tmpl_value data, wh_tmpl_value *out)
{
    wh_buf buf = WH_BUF_INIT, *saved_out = ctx->out;
    const tm_node *saved_node = ctx->node;
    size_t saved_max = ctx->max_output;
    wh_code rc;

    if (ctx->depth >= ctx->max_depth)
        return wh_tmpl_errorf(ctx, "exceeded maximum template depth (%u)", ctx->max_depth);
    ctx->out = &buf;
    ctx->max_output = saved_max > saved_out->len ? saved_max - saved_out->len : 0;
    ctx->depth++;
    rc = tm_exec_def(ctx, def, data);
    ctx->depth--;
    ctx->out = saved_out;
    ctx->max_output = saved_max;
    ctx->node = saved_node;
    if (rc == WH_OK)
        rc = tm_ret_buf(ctx, out, &buf);
    wh_buf_free(&buf);
    return rc;
}

wh_code wh_tmpl_exec_named(wh_tmpl_ctx *ctx, const char *name, wh_tmpl_value data, wh_tmpl_value *out)
{
    const tm_def *def = NULL;

    if (ctx->local_defs != NULL)
        def = tm_find_def(ctx->local_defs, name);
    if (def == NULL)
        def = tm_find_def(&ctx->set->defs, name);
    if (def == NULL) {
        wh_tmpl_errorf(ctx, "template: no template \"%s\" associated with template \"%s\"", name,
                       ctx->def != NULL ? ctx->def->name : "");
        return WH_E_NOTFOUND;
    }
    return exec_to_string(ctx, def, data, out);
}

wh_code wh_tmpl_exec_text(wh_tmpl_ctx *ctx, const char *text, size_t len, wh_tmpl_value data, wh_tmpl_value *out)
{
    tm_defs defs = {0};
    const tm_defs *saved_local = ctx->local_defs;
    char msg[WH_ERR_MSG_MAX];
    const char *name = ctx->def != NULL ? ctx->def->name : "tpl";
    const tm_def *def;
    wh_code rc;

    msg[0] = 0;
    /* parsed into the render's arena: gone when the render ends */
    rc = tm_parse(ctx->set, ctx->arena, &defs, name, text, len, msg, sizeof(msg));
    if (rc != WH_OK) {
        free(defs.items);
        return wh_tmpl_errorf(ctx, "%s", msg[0] ? msg : "out of memory");
    }
    def = tm_find_def(&defs, name);
    if (def == NULL) {
        free(defs.items);
        return wh_tmpl_errorf(ctx, "template: no template \"%s\"", name);
    }
    ctx->local_defs = &defs;
    rc = exec_to_string(ctx, def, data, out);
    ctx->local_defs = saved_local;
    free(defs.items);
    return rc;
}
