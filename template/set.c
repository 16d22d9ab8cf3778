/*
 * set.c - template sets: the libraries a new set gets (Go's builtins, Sprig's
 * and Helm's tables), delimiters, parsed definitions, and the render entry
 * point.  It is the engine's top layer: it calls the parser (parse.c), the
 * executor (exec.c) and the function table (funcs.c); the libraries call
 * down into exec.c and ctx.c, never back into it.
 */
#define _GNU_SOURCE /* newlocale */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

/* ---- sets ---- */

/* Sprig's functions (sprig.TxtFuncMap): one table per file of template/sprig*.c. */
static const tm_func_table tm_sprig_tables[] = {
    {tm_sprig_unsupported_funcs, &tm_sprig_unsupported_nfuncs}, /* first: the rest override it */
    {tm_sprig_functions_funcs, &tm_sprig_functions_nfuncs},
    {tm_sprig_strings_funcs, &tm_sprig_strings_nfuncs},
    {tm_sprig_crypto_funcs, &tm_sprig_crypto_nfuncs},
    {tm_sprig_numeric_funcs, &tm_sprig_numeric_nfuncs},
    {tm_sprig_defaults_funcs, &tm_sprig_defaults_nfuncs},
    {tm_sprig_reflect_funcs, &tm_sprig_reflect_nfuncs},
    {tm_sprig_dict_funcs, &tm_sprig_dict_nfuncs},
    {tm_sprig_list_funcs, &tm_sprig_list_nfuncs},
    {tm_sprig_regex_funcs, &tm_sprig_regex_nfuncs},
    {tm_sprig_semver_funcs, &tm_sprig_semver_nfuncs},
    {tm_sprig_url_funcs, &tm_sprig_url_nfuncs},
};
static const size_t tm_sprig_ntables = sizeof(tm_sprig_tables) / sizeof(tm_sprig_tables[0]);

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
    for (size_t i = 0; i < set->nnotes; i++)
        set->release_note(set->notes[i]);
    free(set->notes);
    for (size_t i = 0; i < set->nprogs; i++)
        free(set->progs[i]);
    free(set->progs);
    tm_arena_free(&set->arena);
    if (set->ctype != (locale_t)0)
        freelocale(set->ctype);
    free(set->funcs);
    free(set->consts);
    free(set->memo_keys);
    free(set->memo_uses);
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
        return wh_err_set(err, rc, "%s", msg[0] ? msg : "template: could not parse");
    }
    /* Go's associate: an empty definition does not replace an existing one */
    for (i = 0; i < defs.n; i++) {
        tm_def *old = (tm_def *)tm_find_def(&set->defs, defs.items[i].name);
        tm_fold_const_fields(set, defs.items[i].root);
        if (!(set->flags & WH_TMPL_NO_FOLD)) {
            tm_fold_pipes(set, defs.items[i].root);
            tm_fold_runs(set, defs.items[i].root);
            tm_memo_pipes(set, defs.items[i].root);
            tm_compile_calls(set, defs.items[i].root);
        }
        if (old != NULL) {
            if (!tm_is_empty_tree(defs.items[i].root))
                *old = defs.items[i];
            continue;
        }
        WH_GROW(set->defs.items, set->defs.n, set->defs.cap, 16);
        set->defs.items[set->defs.n++] = defs.items[i];
    }
    free(defs.items);
    if (!(set->flags & WH_TMPL_NO_FOLD))
        tm_memo_share(set);
    return WH_OK;
}

wh_code wh_tmpl_set_const_field(wh_tmpl_set *set, const wh_tmpl_type *type, const char *name, wh_tmpl_value value,
                                wh_err *err)
{
    tm_const_field *c;
    size_t i;

    if (type == NULL || type->kind != WH_TMPL_HOST || type->field == NULL || name == NULL || *name == 0)
        return wh_err_set(err, WH_E_INVALID, "template: a const field needs a host type with fields and a name");
    set->consts = wh_realloc(set->consts, (set->nconsts + 1) * sizeof(*set->consts));
    c = &set->consts[set->nconsts++];
    c->type = type;
    c->name = tm_strndup(&set->arena, name, strlen(name));
    c->val = value;
    for (i = 0; i < set->defs.n; i++) {
        tm_fold_const_fields(set, set->defs.items[i].root);
        if (!(set->flags & WH_TMPL_NO_FOLD)) {
            tm_fold_pipes(set, set->defs.items[i].root);
            tm_fold_runs(set, set->defs.items[i].root);
        }
    }
    return WH_OK;
}

int wh_tmpl_has(const wh_tmpl_set *set, const char *name)
{
    return tm_find_def(&set->defs, name) != NULL;
}

/* ---- rendering ---- */

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
    ctx.runs_out = opts != NULL && opts->runs != NULL ? out : NULL;
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
    /* Output is typically a fraction of the template's text (a sidecar
     * renders ~5.5 KB of its ~25 KB): room for a quarter of it up front
     * spares the doubling's copies. */
    wh_buf_reserve(out, def->tree->len / 4);
    if (out->data == NULL)
        wh_buf_append(out, "", 0);
    if (scratch->fcache == NULL)
        scratch->fcache = wh_calloc(TM_FCACHE_SIZE, sizeof(*scratch->fcache));
    tm_memo_reserve(scratch, set->nmemo);
    ctx.memo = set->nmemo > 0 ? scratch->memo : NULL;
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
        free(local.memo);
        wh_buf_free(&local.tmp);
        wh_buf_free(&local.tmp2);
    }
    return rc;
}
