/*
 * exec.c - executing parse trees with Go's text/template semantics: pipelines,
 * fields and methods, variables, if/with/range/template, argument conversion
 * for function calls, and Go's error messages with their locations; and,
 * once per set, the field chains its const fields resolve
 * (wh_tmpl_set_const_field), the pipelines of pure functions over constants
 * (tm_fold_pipes) and the pipelines a render may compute once for each `.`
 * and `$` (tm_memo_pipes, WH_TMPL_FN_STABLE).
 */
#define _GNU_SOURCE /* pthread_getattr_np */
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

#define TM_BREAK ((wh_code)1000)
#define TM_CONTINUE ((wh_code)1001)

static wh_code tm_errorf(wh_tmpl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- errors ---- */

/* Go's ErrorContext: "NAME:LINE:COL" and the node's text. */
static void locate(const tm_node *n, const char *def_name, char *out, size_t outlen, wh_tmpl_pos *pos)
{
    const tm_tree *t = n->tree;
    int line = 1, col;
    size_t i, last_nl = (size_t)-1;

    for (i = 0; i < (size_t)n->pos && i < t->len; i++) {
        if (t->text[i] == '\n') {
            line++;
            last_nl = i;
        }
    }
    col = last_nl == (size_t)-1 ? n->pos : (int)((size_t)n->pos - (last_nl + 1));
    snprintf(out, outlen, "%s:%d:%d", t->parse_name, line, col);
    if (pos != NULL) {
        snprintf(pos->name, sizeof(pos->name), "%s", def_name);
        pos->line = line;
        pos->col = col;
    }
}

static wh_code verrorf(wh_tmpl_ctx *ctx, const char *fmt, va_list ap)
{
    char msg[WH_ERR_MSG_MAX], loc[300];
    wh_buf context = WH_BUF_INIT;
    const char *name = ctx->def != NULL ? ctx->def->name : "";

    if (ctx->failed && ctx->located)
        return WH_E_RENDER;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    {
        wh_buf m = WH_BUF_INIT;
        if (ctx->node == NULL) {
            wh_buf_printf(&m, "template: %s: %s", name, msg);
            if (ctx->opts != NULL && ctx->opts->pos != NULL) {
                snprintf(ctx->opts->pos->name, sizeof(ctx->opts->pos->name), "%s", name);
                ctx->opts->pos->line = ctx->opts->pos->col = 0;
            }
        } else {
            locate(ctx->node, name, loc, sizeof(loc), ctx->opts != NULL ? ctx->opts->pos : NULL);
            tm_node_string(ctx->node, &context);
            wh_buf_printf(&m, "template: %s: executing \"%s\" at <%s>: %s", loc, name, context.data ? context.data : "",
                          msg);
            wh_buf_free(&context);
        }
        if (m.len >= sizeof(ctx->errmsg))
            m.len = sizeof(ctx->errmsg) - 1;
        memcpy(ctx->errmsg, m.data, m.len); /* both branches printed something */
        ctx->errmsg[m.len] = 0;
        wh_buf_free(&m);
    }
    ctx->failed = 1;
    ctx->located = 1;
    return WH_E_RENDER;
}

/* Record a located error at ctx->node: Go's s.errorf. */
static wh_code tm_errorf(wh_tmpl_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    wh_code rc;

    va_start(ap, fmt);
    rc = verrorf(ctx, fmt, ap);
    va_end(ap);
    return rc;
}

/* A lower-level failure (tm_fail) gets its location now. */
static wh_code located(wh_tmpl_ctx *ctx, wh_code rc)
{
    if (rc == TM_BREAK || rc == TM_CONTINUE || rc == WH_OK)
        return rc;
    if (ctx->failed && !ctx->located) {
        char msg[WH_ERR_MSG_MAX];
        memcpy(msg, ctx->errmsg, sizeof(msg));
        ctx->failed = 0;
        tm_errorf(ctx, "%s", msg);
        return rc == WH_E_RENDER || rc == WH_E_LIMIT ? rc : WH_E_RENDER;
    }
    if (!ctx->failed)
        tm_errorf(ctx, "%s", wh_strerror(rc));
    return rc;
}

/* ---- variables ---- */

static wh_code push_var(wh_tmpl_ctx *ctx, const char *name, wh_tmpl_value v)
{
    if (ctx->nvars == ctx->capvars) {
        size_t cap = ctx->capvars ? ctx->capvars * 2 : 32;
        tm_var *nv = wh_realloc(ctx->vars, cap * sizeof(*nv));
        ctx->vars = nv;
        ctx->capvars = cap;
        if (ctx->scratch != NULL) {
            ctx->scratch->vars = nv;
            ctx->scratch->capvars = cap;
        }
    }
    ctx->vars[ctx->nvars].name = name;
    ctx->vars[ctx->nvars].val = v;
    ctx->nvars++;
    return WH_OK;
}

static tm_var *find_var(wh_tmpl_ctx *ctx, const char *name, size_t base)
{
    size_t i;

    for (i = ctx->nvars; i > base; i--)
        if (ctx->vars[i - 1].name == name) /* interned by the parser */
            return &ctx->vars[i - 1];
    return NULL;
}

/* ---- evaluation ---- */

typedef struct frame {
    size_t var_base;   /* first variable of the current template invocation */
    wh_tmpl_value dot; /* `.` */
} frame;

static wh_code walk(wh_tmpl_ctx *ctx, frame *fr, const tm_node *n);
static wh_code eval_pipeline(wh_tmpl_ctx *ctx, frame *fr, const tm_node *pipe, wh_tmpl_value *out);
static wh_code eval_arg(wh_tmpl_ctx *ctx, frame *fr, char ptype, const tm_node *n, wh_tmpl_value *out);
static wh_code eval_call(wh_tmpl_ctx *ctx, frame *fr, const tm_func *fn, const tm_node *node, tm_node *const *args,
                         size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out);
static wh_code eval_function(wh_tmpl_ctx *ctx, frame *fr, const tm_node *ident, const tm_node *cmd,
                             tm_node *const *args, size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out);

static void node_str(const tm_node *n, char *buf, size_t len)
{
    wh_buf b = WH_BUF_INIT;
    tm_node_string(n, &b);
    snprintf(buf, len, "%s", b.data ? b.data : "");
    wh_buf_free(&b);
}

static wh_code not_a_function(wh_tmpl_ctx *ctx, tm_node *const *args, size_t nargs, const wh_tmpl_value *final)
{
    if (nargs > 1 || final != NULL) {
        char s[256];
        node_str(args[0], s, sizeof(s));
        return tm_errorf(ctx, "can't give argument to non-function %s", s);
    }
    return WH_OK;
}

/* Go's idealConstant without the render: 0 when the number overflows int. */
static int ideal_value(const tm_node *n, wh_tmpl_value *out)
{
    const char *t = n->u.num.text;
    int is_hex_int = strlen(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && !strpbrk(t, "pP");
    int is_rune = t[0] == '\'';

    if (n->u.num.is_float && !is_hex_int && !is_rune && strpbrk(t, ".eEpP") != NULL) {
        *out = wh_tmpl_float(n->u.num.f);
        return 1;
    }
    if (n->u.num.is_int) {
        *out = wh_tmpl_int(n->u.num.i);
        return 1;
    }
    if (n->u.num.is_uint)
        return 0;
    *out = wh_tmpl_invalid();
    return 1;
}

static wh_code ideal_constant(wh_tmpl_ctx *ctx, const tm_node *n, wh_tmpl_value *out)
{
    ctx->node = n;
    if (!ideal_value(n, out))
        return tm_errorf(ctx, "%s overflows int", n->u.num.text);
    return WH_OK;
}

static wh_code eval_field_uncached(wh_tmpl_ctx *ctx, frame *fr, const char *name, const tm_node *node,
                                   tm_node *const *args, size_t nargs, const wh_tmpl_value *final,
                                   const wh_tmpl_value *recv, wh_tmpl_value *out);

/* A key of a map receiver (Go's evalField on a map): a missing key gives no
 * value, the element type's zero (missingkey=zero) or WH_E_NOTFOUND
 * (missingkey=error). */
static wh_code map_key(unsigned flags, const wh_tmpl_value *map, const char *name, wh_tmpl_value *out)
{
    if (wh_tmpl_map_get(map, name, strlen(name), out) == WH_OK)
        return WH_OK;
    if (flags & WH_TMPL_MISSINGKEY_ERROR)
        return WH_E_NOTFOUND;
    *out = (flags & WH_TMPL_MISSINGKEY_ZERO) ? tm_zero(tm_elem_type(map)) : wh_tmpl_invalid();
    return WH_OK;
}

/* Collections a template can change during a render (set, unset, merge
 * on a dict): what a memoised pipeline must not have read (tm_memo). */
static inline int engine_value(const wh_tmpl_value *v)
{
    return (v->kind == WH_TMPL_LIST || v->kind == WH_TMPL_MAP) && v->rep == WH_TMPL_REP_ENGINE;
}

/* Receivers whose fields cannot change during a render: JSON maps and host
 * values (field callbacks are pure within a render). */
static inline int immutable_recv(const wh_tmpl_value *v)
{
    return (v->kind == WH_TMPL_MAP && v->rep == WH_TMPL_REP_JSON && v->u.json != NULL) ||
           (v->kind == WH_TMPL_HOST && v->type != NULL && v->type->field != NULL);
}

/* The field cache slot of (recv, name); recv must be immutable_recv-> */
static inline tm_fcache_entry *fcache_slot(const wh_tmpl_scratch *sc, const wh_tmpl_value *recv, const char *name)
{
    uintptr_t h = ((uintptr_t)recv->u.host >> 4) ^ ((uintptr_t)name >> 3) * 31 ^ ((uintptr_t)recv->type >> 5);
    return &sc->fcache[(h ^ (h >> 9)) & (TM_FCACHE_SIZE - 1)];
}

static inline int fcache_hit(const wh_tmpl_scratch *sc, const tm_fcache_entry *e, const wh_tmpl_value *recv,
                             const char *name)
{
    return e->gen == sc->gen && e->recv == recv->u.host && e->type == recv->type && e->name == name;
}

/* Whether two values are the same one: kind, type and the bits that hold
 * it (a string's bytes are not compared: its pointer says which). */
static inline int same_value(const wh_tmpl_value *a, const wh_tmpl_value *b)
{
    return a->kind == b->kind && a->rep == b->rep && a->flags_ == b->flags_ && a->len == b->len && a->type == b->type &&
           (a->kind == WH_TMPL_BOOL ? a->u.b == b->u.b : a->u.u == b->u.u);
}

/* Go's evalField: one field/method/key step on `recv` (`out` is not `recv`). */
static inline wh_code eval_field(wh_tmpl_ctx *ctx, frame *fr, const char *name, const tm_node *node,
                                 tm_node *const *args, size_t nargs, const wh_tmpl_value *final,
                                 const wh_tmpl_value *recv, wh_tmpl_value *out)
{
    wh_code rc;

    if (nargs <= 1 && final == NULL && immutable_recv(recv)) {
        wh_tmpl_scratch *sc = ctx->scratch;
        tm_fcache_entry *e = fcache_slot(sc, recv, name);
        if (fcache_hit(sc, e, recv, name)) {
            *out = e->val;
            return WH_OK;
        }
        if ((rc = eval_field_uncached(ctx, fr, name, node, args, nargs, final, recv, out)) == WH_OK) {
            e->gen = sc->gen;
            e->recv = recv->u.host;
            e->type = recv->type;
            e->name = name;
            e->val = *out;
        }
        return rc;
    }
    if (engine_value(recv))
        ctx->memo_taint = 1;
    if (recv->kind == WH_TMPL_INVALID) {
        if (ctx->set->flags & WH_TMPL_MISSINGKEY_ERROR)
            return tm_errorf(ctx, "nil data; no entry for key \"%s\"", name);
        *out = wh_tmpl_invalid();
        return WH_OK;
    }
    if (recv->kind == WH_TMPL_NIL)
        return tm_errorf(ctx, "nil pointer evaluating interface {}.%s", name);
    return eval_field_uncached(ctx, fr, name, node, args, nargs, final, recv, out);
}

static wh_code eval_field_uncached(wh_tmpl_ctx *ctx, frame *fr, const char *name, const tm_node *node,
                                   tm_node *const *args, size_t nargs, const wh_tmpl_value *final,
                                   const wh_tmpl_value *recv, wh_tmpl_value *out)
{
    int has_args = nargs > 1 || final != NULL;
    wh_code rc;

    if (recv->type != NULL && recv->type->field != NULL) {
        /* methods (and a host's fields): evaluate the call's arguments first */
        wh_tmpl_value argv[16];
        size_t n = 0, i;
        if (nargs > 1) {
            for (i = 1; i < nargs; i++) {
                if (n == 15)
                    return tm_errorf(ctx, "too many arguments for %s", name);
                if ((rc = eval_arg(ctx, fr, 'v', args[i], &argv[n++])) != WH_OK)
                    return rc;
            }
        }
        if (final != NULL)
            argv[n++] = *final;
        ctx->node = node;
        rc = recv->type->field(ctx, recv, name, argv, n, out);
        if (rc == WH_OK)
            return WH_OK;
        if (rc != WH_E_NOTFOUND) {
            if (ctx->failed) {
                char msg[WH_ERR_MSG_MAX];
                memcpy(msg, ctx->errmsg, sizeof(msg));
                ctx->failed = 0;
                return tm_errorf(ctx, "error calling %s: %s", name, msg);
            }
            return located(ctx, rc);
        }
        ctx->failed = 0;
    }
    switch (recv->kind) {
    case WH_TMPL_MAP:
        if (has_args)
            return tm_errorf(ctx, "%s is not a method but has arguments", name);
        if (map_key(ctx->set->flags, recv, name, out) != WH_OK)
            return tm_errorf(ctx, "map has no entry for key \"%s\"", name);
        return WH_OK;
    case WH_TMPL_HOST:
        if (recv->u.host == NULL)
            return tm_errorf(ctx, "nil pointer evaluating %s.%s", tm_type_name(recv), name);
        break;
    default:
        break;
    }
    return tm_errorf(ctx, "can't evaluate field %s in type %s", name,
                     (recv->flags_ & TM_F_IFACE) ? "interface {}" : tm_type_name(recv));
}

/* Whether v is a non-nil host value of type t: the receiver on which const
 * fields of type t hold. */
static inline int const_recv(const wh_tmpl_value *v, const wh_tmpl_type *t)
{
    return v->type == t && v->kind == WH_TMPL_HOST && v->u.host != NULL;
}

/* `konst`: the chain's value when `base` is a receiver of its const field's
 * type (wh_tmpl_set_const_field), or NULL. */
static wh_code eval_field_chain(wh_tmpl_ctx *ctx, frame *fr, const wh_tmpl_value *base, const tm_node *node,
                                const char *const *idents, size_t n, const tm_konst *konst, tm_node *const *args,
                                size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out)
{
    wh_tmpl_value recv = *base, next;
    size_t i;
    wh_code rc;

    if (konst != NULL && const_recv(base, konst->type) && nargs <= 1 && final == NULL) {
        *out = konst->val;
        return WH_OK;
    }
    for (i = 0; i + 1 < n; i++) {
        if ((rc = eval_field(ctx, fr, idents[i], node, NULL, 0, NULL, &recv, &next)) != WH_OK)
            return rc;
        recv = next;
    }
    return eval_field(ctx, fr, idents[n - 1], node, args, nargs, final, &recv, out);
}

/* Bounds of the folding of one tree: what a set keeps of folded strings and
 * the CPU it spends (a pure call over constants can still be costly, e.g.
 * `repeat`); beyond them pipelines are left to the render. */
#define TM_FOLD_MAX_STRING ((size_t)64 << 10)
#define TM_FOLD_MAX_KEPT ((size_t)4 << 20)
#define TM_FOLD_CPU_NS (200u * 1000000u)

/* What the steps `idents` give on `v` where that needs no render: keys of
 * JSON maps (whose types have no methods), fields of non-nil host values
 * whose types say they are pure (wh_tmpl_type.pure_fields; looked up in
 * `ctx`, a string kept in the set's arena) and no value below a missing key,
 * as eval_field takes them.  0 when a step needs the render (another host
 * value, an error, a collection made by the lookup). */
static int fold_steps(wh_tmpl_ctx *ctx, wh_tmpl_value v, const char *const *idents, size_t n, wh_tmpl_value *out)
{
    unsigned flags = ctx->set->flags;
    size_t i;

    for (i = 0; i < n; i++) {
        wh_tmpl_value next;
        if (v.kind == WH_TMPL_MAP && v.rep == WH_TMPL_REP_JSON && (v.type == NULL || v.type->field == NULL)) {
            if (map_key(flags, &v, idents[i], &next) != WH_OK)
                return 0;
        } else if (v.kind == WH_TMPL_INVALID && !(flags & WH_TMPL_MISSINGKEY_ERROR)) {
            next = wh_tmpl_invalid();
        } else if (v.kind == WH_TMPL_HOST && v.u.host != NULL && v.type->field != NULL && v.type->pure_fields) {
            ctx->failed = 0;
            next = wh_tmpl_invalid();
            if (v.type->field(ctx, &v, idents[i], NULL, 0, &next) != WH_OK || engine_value(&next))
                return 0;
            if (next.kind == WH_TMPL_STRING)
                next.u.s = tm_strndup((tm_arena *)&ctx->set->arena, next.len ? next.u.s : "", next.len);
        } else {
            return 0;
        }
        v = next;
    }
    *out = v;
    return 1;
}

/* The konst of a chain whose first step is `idents[0]`, or NULL. */
static const tm_konst *fold_chain(wh_tmpl_set *set, wh_tmpl_ctx *ctx, const char *const *idents, size_t n)
{
    size_t i;

    for (i = 0; i < set->nconsts; i++) {
        const tm_const_field *c = &set->consts[i];
        wh_tmpl_value v;
        tm_konst *k;
        if (strcmp(c->name, idents[0]) != 0)
            continue;
        tm_arena_reset(ctx->arena); /* what a pure lookup made is dropped (fold_steps keeps none of it) */
        if (!fold_steps(ctx, c->val, idents + 1, n - 1, &v))
            return NULL;
        k = tm_alloc(&set->arena, sizeof(*k));
        k->type = c->type;
        k->val = v;
        return k;
    }
    return NULL;
}

/* A field, variable or chain node that starts with a constant field gets its konst. */
static void fold_const_field(tm_node *n, void *arg)
{
    wh_tmpl_ctx *ctx = arg;
    wh_tmpl_set *set = (wh_tmpl_set *)ctx->set;

    switch (n->kind) {
    case N_FIELD:
        n->u.field.konst = fold_chain(set, ctx, n->u.field.idents, n->u.field.n);
        break;
    case N_VARIABLE:
        if (n->u.field.n > 1)
            n->u.field.konst = fold_chain(set, ctx, n->u.field.idents + 1, n->u.field.n - 1);
        break;
    case N_CHAIN:
        n->u.chain.konst = fold_chain(set, ctx, n->u.chain.fields, n->u.chain.n);
        break;
    default:
        break;
    }
}

void tm_fold_const_fields(wh_tmpl_set *set, tm_node *root)
{
    wh_tmpl_ctx ctx; /* what pure host lookups (fold_steps) run in */
    wh_tmpl_scratch *sc = wh_tmpl_scratch_new();
    wh_buf out = WH_BUF_INIT;

    memset(&ctx, 0, sizeof(ctx));
    ctx.set = set;
    ctx.scratch = sc;
    ctx.arena = &sc->arena;
    ctx.out = &out;
    ctx.max_output = TM_FOLD_MAX_STRING;
    ctx.max_memory = TM_FOLD_MAX_KEPT;
    tm_node_walk(root, fold_const_field, &ctx);
    wh_tmpl_scratch_free(sc);
    wh_buf_free(&out);
}

/* A field chain on `.` through its slot (tm_node.u.field.slot): chains
 * written alike share one slot of the render's memo, which keeps the
 * chain's value for the `.` it was computed on when every receiver along
 * it is immutable (immutable_recv: what the field cache holds step by
 * step), so `.ObjectMeta.Annotations` is looked up once per render and `.`
 * instead of once per step and use. */
static wh_code eval_slot_chain(wh_tmpl_ctx *ctx, frame *fr, const tm_node *field, tm_node *const *args, size_t nargs,
                               wh_tmpl_value *out)
{
    const char *const *idents = field->u.field.idents;
    tm_memo_entry *e = &ctx->memo[field->u.field.slot - 1];
    wh_tmpl_value recv = fr->dot, next;
    size_t i, n = field->u.field.n;
    int keep = 1;
    wh_code rc;

    if (e->gen == ctx->scratch->gen && same_value(&e->dot, &fr->dot)) {
        *out = e->val;
        return WH_OK;
    }
    for (i = 0; i + 1 < n; i++) {
        if ((rc = eval_field(ctx, fr, idents[i], field, NULL, 0, NULL, &recv, &next)) != WH_OK)
            return rc;
        recv = next;
        keep &= immutable_recv(&recv);
    }
    if ((rc = eval_field(ctx, fr, idents[n - 1], field, args, nargs, NULL, &recv, out)) == WH_OK && keep) {
        e->gen = ctx->scratch->gen;
        e->dot = fr->dot;
        e->val = *out;
    }
    return rc;
}

static inline wh_code eval_field_node(wh_tmpl_ctx *ctx, frame *fr, const tm_node *field, tm_node *const *args,
                                      size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out)
{
    const tm_konst *konst = field->u.field.konst;

    ctx->node = field;
    if (field->u.field.slot != 0 && ctx->memo != NULL && nargs <= 1 && final == NULL && immutable_recv(&fr->dot) &&
        (konst == NULL || !const_recv(&fr->dot, konst->type)))
        return eval_slot_chain(ctx, fr, field, args, nargs, out);
    return eval_field_chain(ctx, fr, &fr->dot, field, field->u.field.idents, field->u.field.n, konst, args, nargs,
                            final, out);
}

static wh_code eval_variable_node(wh_tmpl_ctx *ctx, frame *fr, const tm_node *var, tm_node *const *args, size_t nargs,
                                  const wh_tmpl_value *final, wh_tmpl_value *out)
{
    tm_var *v;

    ctx->node = var;
    v = find_var(ctx, var->u.field.idents[0], fr->var_base);
    if (v == NULL)
        return tm_errorf(ctx, "undefined variable: %s", var->u.field.idents[0]);
    if (var->u.field.n == 1) {
        wh_code rc = args != NULL ? not_a_function(ctx, args, nargs, final) : WH_OK;
        if (rc != WH_OK)
            return rc;
        *out = v->val;
        return WH_OK;
    }
    return eval_field_chain(ctx, fr, &v->val, var, var->u.field.idents + 1, var->u.field.n - 1, var->u.field.konst,
                            args, nargs, final, out);
}

static wh_code eval_chain_node(wh_tmpl_ctx *ctx, frame *fr, const tm_node *chain, tm_node *const *args, size_t nargs,
                               const wh_tmpl_value *final, wh_tmpl_value *out)
{
    wh_tmpl_value base;
    wh_code rc;

    ctx->node = chain;
    if (chain->u.chain.base->kind == N_NIL) {
        char s[256];
        node_str(chain, s, sizeof(s));
        return tm_errorf(ctx, "indirection through explicit nil in %s", s);
    }
    if ((rc = eval_arg(ctx, fr, 0, chain->u.chain.base, &base)) != WH_OK)
        return rc;
    return eval_field_chain(ctx, fr, &base, chain, chain->u.chain.fields, chain->u.chain.n, chain->u.chain.konst, args,
                            nargs, final, out);
}

/* The parameter letters of wh_tmpl_func.params with a Go type: the type an
 * argument must have (type and kind, for tm_same_type) and Go's name for it.
 * Letters not listed ('v') are interface{}. */
static const struct param_type {
    const wh_tmpl_type *type;
    wh_tmpl_kind kind;
    const char *name;
} param_types[128] = {
    ['s'] = {&wh_tmpl_type_string, WH_TMPL_STRING, "string"},
    ['i'] = {&wh_tmpl_type_int, WH_TMPL_INT, "int"},
    ['I'] = {&wh_tmpl_type_int64, WH_TMPL_INT, "int64"},
    ['f'] = {&wh_tmpl_type_float64, WH_TMPL_FLOAT, "float64"},
    ['b'] = {&wh_tmpl_type_bool, WH_TMPL_BOOL, "bool"},
    ['m'] = {&wh_tmpl_type_map_string_interface, WH_TMPL_MAP, "map[string]interface {}"},
    ['M'] = {&wh_tmpl_type_map_string_string, WH_TMPL_MAP, "map[string]string"},
    ['l'] = {&wh_tmpl_type_interface_slice, WH_TMPL_LIST, "[]interface {}"},
    ['L'] = {&wh_tmpl_type_string_slice, WH_TMPL_LIST, "[]string"},
    ['r'] = {NULL, WH_TMPL_INVALID, "reflect.Value"},
};

static const struct param_type *param_info(char t)
{
    return (unsigned char)t < 128 ? &param_types[(unsigned char)t] : &param_types[0];
}

static const char *param_type_name(char t)
{
    const char *name = param_info(t)->name;
    return name != NULL ? name : "interface {}";
}

static int param_can_be_nil(char t)
{
    return t == 'v' || t == 'r' || t == 'm' || t == 'M' || t == 'l' || t == 'L' || t == 0;
}

static wh_tmpl_value param_zero(char t)
{
    switch (t) {
    case 'm':
        return wh_tmpl_json_typed(NULL, NULL);
    case 'M':
        return wh_tmpl_json_typed(NULL, &wh_tmpl_type_map_string_string);
    case 'l':
        return wh_tmpl_json_typed(NULL, &wh_tmpl_type_interface_slice);
    case 'L':
        return wh_tmpl_json_typed(NULL, &wh_tmpl_type_string_slice);
    case 'r':
    case 0:
        return wh_tmpl_invalid();
    default:
        return wh_tmpl_nil();
    }
}

/* Go's validateType: a computed value against a parameter type. */
static wh_code validate_type_slow(wh_tmpl_ctx *ctx, wh_tmpl_value v, char t, wh_tmpl_value *out)
{
    const struct param_type *pt;
    int ok;

    if (v.kind == WH_TMPL_INVALID) {
        if (param_can_be_nil(t)) {
            *out = param_zero(t);
            return WH_OK;
        }
        return tm_errorf(ctx, "invalid value; expected %s", param_type_name(t));
    }
    if (t == 0 || t == 'v' || t == 'r') {
        *out = v;
        return WH_OK;
    }
    pt = param_info(t);
    ok = pt->type != NULL && tm_same_type(&v, pt->type, pt->kind);
    if (!ok)
        return tm_errorf(ctx, "wrong type for value; expected %s; got %s", param_type_name(t),
                         v.kind == WH_TMPL_NIL ? "interface {}" : tm_type_name(&v));
    *out = v;
    return WH_OK;
}

/* validate_type_slow with its common case inline: a value for an
 * interface{} parameter passes as it is. */
static inline __attribute__((always_inline)) wh_code validate_type(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, char t,
                                                                   wh_tmpl_value *out)
{
    if (v->kind != WH_TMPL_INVALID && (t == 'v' || t == 0 || t == 'r')) {
        *out = *v;
        return WH_OK;
    }
    return validate_type_slow(ctx, *v, t, out);
}

/* Go's evalEmptyInterface for constants and everything else. */
static wh_code eval_empty_interface(wh_tmpl_ctx *ctx, frame *fr, const tm_node *n, wh_tmpl_value *out)
{
    ctx->node = n;
    switch (n->kind) {
    case N_BOOL:
        *out = wh_tmpl_bool(n->u.boolean);
        return WH_OK;
    case N_NUMBER:
        return ideal_constant(ctx, n, out);
    case N_STRING:
        *out = wh_tmpl_strn(n->u.str.s, n->u.str.len);
        return WH_OK;
    default:
        return eval_arg(ctx, fr, 'v', n, out);
    }
}

static wh_code eval_arg(wh_tmpl_ctx *ctx, frame *fr, char t, const tm_node *n, wh_tmpl_value *out)
{
    wh_tmpl_value v;
    wh_code rc;
    char s[256];

    ctx->node = n;
    switch (n->kind) {
    case N_DOT:
        return validate_type(ctx, &fr->dot, t, out);
    case N_NIL:
        if (param_can_be_nil(t) && t != 0) {
            *out = param_zero(t);
            if (t == 'v')
                *out = wh_tmpl_nil();
            return WH_OK;
        }
        if (t == 0)
            return tm_errorf(ctx, "cannot assign nil to <nil>");
        return tm_errorf(ctx, "cannot assign nil to %s", param_type_name(t));
    case N_FIELD: {
        tm_node *self[1];
        self[0] = (tm_node *)n;
        if ((rc = eval_field_node(ctx, fr, n, self, 1, NULL, &v)) != WH_OK)
            return rc;
        return validate_type(ctx, &v, t, out);
    }
    case N_VARIABLE:
        if ((rc = eval_variable_node(ctx, fr, n, NULL, 0, NULL, &v)) != WH_OK)
            return rc;
        return validate_type(ctx, &v, t, out);
    case N_PIPE:
        if ((rc = eval_pipeline(ctx, fr, n, &v)) != WH_OK)
            return rc;
        return validate_type(ctx, &v, t, out);
    case N_IDENT:
        if ((rc = eval_function(ctx, fr, n, n, NULL, 0, NULL, &v)) != WH_OK)
            return rc;
        return validate_type(ctx, &v, t, out);
    case N_CHAIN:
        if ((rc = eval_chain_node(ctx, fr, n, NULL, 0, NULL, &v)) != WH_OK)
            return rc;
        return validate_type(ctx, &v, t, out);
    default:
        break;
    }
    switch (t) {
    case 'b':
        if (n->kind == N_BOOL) {
            *out = wh_tmpl_bool(n->u.boolean);
            return WH_OK;
        }
        return node_str(n, s, sizeof(s)), tm_errorf(ctx, "expected bool; found %s", s);
    case 'f':
        if (n->kind == N_NUMBER && n->u.num.is_float) {
            *out = wh_tmpl_float(n->u.num.f);
            return WH_OK;
        }
        return node_str(n, s, sizeof(s)), tm_errorf(ctx, "expected float; found %s", s);
    case 'i':
    case 'I':
        if (n->kind == N_NUMBER && n->u.num.is_int) {
            *out = wh_tmpl_int_typed(n->u.num.i, t == 'I' ? &wh_tmpl_type_int64 : NULL);
            return WH_OK;
        }
        return node_str(n, s, sizeof(s)), tm_errorf(ctx, "expected integer; found %s", s);
    case 's':
        if (n->kind == N_STRING) {
            *out = wh_tmpl_strn(n->u.str.s, n->u.str.len);
            return WH_OK;
        }
        return node_str(n, s, sizeof(s)), tm_errorf(ctx, "expected string; found %s", s);
    case 'v':
    case 'r':
    case 0:
        return eval_empty_interface(ctx, fr, n, out);
    default:
        node_str(n, s, sizeof(s));
        return tm_errorf(ctx, "can't handle %s for arg of type %s", s, param_type_name(t));
    }
}

/* A function's failure, located at `node`: Go's "error calling NAME: ...". */
static __attribute__((noinline)) wh_code call_failed(wh_tmpl_ctx *ctx, const tm_node *node, const char *name,
                                                     wh_code rc)
{
    ctx->node = node;
    if (ctx->failed) { /* a nested template's complete message (include) is wrapped too */
        char msg[WH_ERR_MSG_MAX];
        memcpy(msg, ctx->errmsg, sizeof(msg));
        ctx->failed = 0;
        tm_errorf(ctx, "error calling %s: %s", name, msg);
        return rc == WH_E_LIMIT ? rc : WH_E_RENDER;
    }
    tm_errorf(ctx, "error calling %s: %s", name, wh_strerror(rc));
    return rc;
}

static inline wh_code call_fn(wh_tmpl_ctx *ctx, const tm_func *fn, const tm_node *node, const char *name,
                              const wh_tmpl_value *argv, size_t n, wh_tmpl_value *out)
{
    wh_code rc;

    *out = wh_tmpl_invalid();
    if ((rc = fn->fn(ctx, argv, n, out)) == WH_OK)
        return WH_OK;
    return call_failed(ctx, node, name, rc);
}

static wh_code eval_call(wh_tmpl_ctx *ctx, frame *fr, const tm_func *fn, const tm_node *node, tm_node *const *args,
                         size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out)
{
    wh_tmpl_value stackv[16], *argv = stackv;
    size_t numin, numfixed, i, np = fn->nparams;

    stackv[0] = wh_tmpl_invalid(); /* a call with no arguments still passes a defined array */
    wh_code rc;
    const char *name = fn->name;

    if (args != NULL) {
        args++;
        nargs--;
    } else {
        nargs = 0;
    }
    numin = nargs + (final != NULL);
    numfixed = nargs;
    if (fn->variadic) {
        numfixed = np - 1;
        if (numin < numfixed)
            return tm_errorf(ctx, "wrong number of args for %s: want at least %zu got %zu", name, np - 1, nargs);
    } else if (numin != np) {
        return tm_errorf(ctx, "wrong number of args for %s: want %zu got %zu", name, np, numin);
    }
    if (fn->special == FN_AND || fn->special == FN_OR) {
        wh_tmpl_value v = wh_tmpl_invalid();
        for (i = 0; i < nargs; i++) {
            if ((rc = eval_arg(ctx, fr, 'r', args[i], &v)) != WH_OK)
                return rc;
            if (engine_value(&v))
                ctx->memo_taint = 1;
            if (tm_truth(&v) == (fn->special == FN_OR)) {
                *out = v;
                return WH_OK;
            }
        }
        if (final != NULL)
            v = *final;
        *out = v;
        return WH_OK;
    }
    if (numin > 16)
        argv = tm_alloc(ctx->arena, numin * sizeof(*argv));
    for (i = 0; i < numfixed && i < nargs; i++)
        if ((rc = eval_arg(ctx, fr, fn->params[i], args[i], &argv[i])) != WH_OK)
            return rc;
    if (fn->variadic) {
        char t = fn->params[np - 1];
        for (; i < nargs; i++)
            if ((rc = eval_arg(ctx, fr, t, args[i], &argv[i])) != WH_OK)
                return rc;
    }
    if (final != NULL) {
        char t = fn->params[np - 1];
        if (fn->variadic && numin - 1 < numfixed)
            t = fn->params[numin - 1];
        if ((rc = validate_type(ctx, final, t, &argv[i])) != WH_OK)
            return rc;
    }
    for (i = 0; ctx->memo_depth > 0 && i < numin; i++)
        if (engine_value(&argv[i]))
            ctx->memo_taint = 1;
    return call_fn(ctx, fn, node, name, argv, numin, out);
}

static wh_code eval_function(wh_tmpl_ctx *ctx, frame *fr, const tm_node *ident, const tm_node *cmd,
                             tm_node *const *args, size_t nargs, const wh_tmpl_value *final, wh_tmpl_value *out)
{
    ctx->node = ident;
    return eval_call(ctx, fr, ident->u.ident.fn, cmd, args, nargs, final, out);
}

/* The value of a compiled operand a of kind TM_A_DOT, TM_A_FIELD (a
 * revision constant or a render slot's when its receiver allows, else
 * evaluated), TM_A_VAR or TM_A_PIPE, before its type is checked: shared by
 * run_call and run_flat. */
static inline __attribute__((always_inline)) wh_code carg_value(wh_tmpl_ctx *ctx, frame *fr, const tm_carg *a,
                                                                wh_tmpl_value *v)
{
    const tm_node *n = a->n;

    switch (a->op) {
    case TM_A_DOT:
        *v = fr->dot;
        return WH_OK;
    case TM_A_FIELD: {
        const tm_konst *konst = n->u.field.konst;
        if (konst != NULL && const_recv(&fr->dot, konst->type)) {
            *v = konst->val;
            return WH_OK;
        }
        if (n->u.field.slot != 0 && ctx->memo != NULL && immutable_recv(&fr->dot)) {
            const tm_memo_entry *e = &ctx->memo[n->u.field.slot - 1];
            if (e->gen == ctx->scratch->gen && same_value(&e->dot, &fr->dot)) {
                *v = e->val;
                return WH_OK;
            }
        }
        tm_node *self[1] = {(tm_node *)n};
        return eval_field_node(ctx, fr, n, self, 1, NULL, v);
    }
    case TM_A_VAR:
        return eval_variable_node(ctx, fr, n, NULL, 0, NULL, v);
    default: /* TM_A_PIPE */
        return eval_pipeline(ctx, fr, n, v);
    }
}

/* A compiled call (tm_ccall): what eval_function does for it, the render's
 * position moving over the same nodes, without the checks and dispatch the
 * compilation did. */
static wh_code run_call(wh_tmpl_ctx *ctx, frame *fr, const tm_node *cmd, const tm_ccall *c, const wh_tmpl_value *final,
                        wh_tmpl_value *out)
{
    wh_tmpl_value argv[16], v;
    size_t i;
    wh_code rc;

    if (c->fn->special != FN_PLAIN) /* and/or: evaluated lazily (compiled for flat pipelines only) */
        return eval_function(ctx, fr, c->ident, cmd, cmd->u.cmd.args, cmd->u.cmd.nargs, c->final ? final : NULL, out);
    argv[0] = wh_tmpl_invalid(); /* a call with no arguments still passes a defined array */
    ctx->node = c->ident;
    for (i = 0; i < c->nargs; i++) {
        const tm_carg *a = &c->args[i];
        const tm_node *n = a->n;
        ctx->node = n;
        switch (a->op) {
        case TM_A_CONST:
            argv[i] = a->k;
            continue;
        case TM_A_DOT:
        case TM_A_FIELD:
        case TM_A_VAR:
        case TM_A_PIPE:
            if ((rc = carg_value(ctx, fr, a, &v)) != WH_OK)
                return rc;
            break;
        default:
            if ((rc = eval_arg(ctx, fr, a->t, n, &argv[i])) != WH_OK)
                return rc;
            continue;
        }
        if ((rc = validate_type(ctx, &v, a->t, &argv[i])) != WH_OK)
            return rc;
    }
    if (c->final && (rc = validate_type(ctx, final, c->tfinal, &argv[i++])) != WH_OK)
        return rc;
    if (ctx->memo_depth > 0)
        for (size_t j = 0; j < i; j++)
            if (engine_value(&argv[j]))
                ctx->memo_taint = 1;
    return call_fn(ctx, c->fn, cmd, c->fn->name, argv, i, out);
}

static wh_code eval_command(wh_tmpl_ctx *ctx, frame *fr, const tm_node *cmd, const wh_tmpl_value *final,
                            wh_tmpl_value *out)
{
    tm_node *const *args = cmd->u.cmd.args;
    size_t nargs = cmd->u.cmd.nargs;
    const tm_node *first = args[0];
    wh_code rc;

    switch (first->kind) {
    case N_FIELD:
        return eval_field_node(ctx, fr, first, args, nargs, final, out);
    case N_CHAIN:
        return eval_chain_node(ctx, fr, first, args, nargs, final, out);
    case N_IDENT:
        return eval_function(ctx, fr, first, cmd, args, nargs, final, out);
    case N_PIPE:
        if ((rc = not_a_function(ctx, args, nargs, final)) != WH_OK)
            return rc;
        return eval_pipeline(ctx, fr, first, out);
    case N_VARIABLE:
        return eval_variable_node(ctx, fr, first, args, nargs, final, out);
    default:
        break;
    }
    ctx->node = first;
    if ((rc = not_a_function(ctx, args, nargs, final)) != WH_OK)
        return rc;
    switch (first->kind) {
    case N_BOOL:
        *out = wh_tmpl_bool(first->u.boolean);
        return WH_OK;
    case N_DOT:
        *out = fr->dot;
        return WH_OK;
    case N_NIL:
        return tm_errorf(ctx, "nil is not a command");
    case N_NUMBER:
        return ideal_constant(ctx, first, out);
    case N_STRING:
        *out = wh_tmpl_strn(first->u.str.s, first->u.str.len);
        return WH_OK;
    default: {
        char s[256];
        node_str(first, s, sizeof(s));
        return tm_errorf(ctx, "can't evaluate command \"%s\"", s);
    }
    }
}

/* eval_commands for a flat pipeline (tm_node.u.pipe.flat): every command a
 * compiled call (run_call) over compiled operands, in one loop that reads
 * const and slotted field chains (eval_field_node) and reaches the C
 * functions without the calls between; the render's position moves over
 * the same nodes. */
static inline __attribute__((always_inline)) wh_code run_flat(wh_tmpl_ctx *ctx, frame *fr, const tm_node *pipe,
                                                              wh_tmpl_value *out)
{
    tm_node *const *cmds = pipe->u.pipe.cmds;
    size_t ncmds = pipe->u.pipe.ncmds, i;
    wh_tmpl_value value = wh_tmpl_invalid(), argv[16], v, next;
    wh_code rc;

    ctx->node = pipe;
    for (i = 0; i < ncmds; i++) {
        const tm_ccall *c = cmds[i]->u.cmd.call;
        const tm_carg *a = c->args, *end = a + c->nargs;
        wh_tmpl_value *arg = argv;
        uint8_t special = c->fn->special;
        argv[0] = wh_tmpl_invalid(); /* a call with no arguments still passes a defined array */
        ctx->node = c->ident;
        for (; a < end; a++, arg++) {
            const tm_node *n = a->n;
            ctx->node = n;
            switch (a->op) {
            case TM_A_CONST:
                *arg = a->k;
                if (special != FN_PLAIN)
                    goto and_or;
                continue;
            default:
                if ((rc = carg_value(ctx, fr, a, &v)) != WH_OK)
                    return rc;
                break;
            }
            if ((rc = validate_type(ctx, &v, a->t, arg)) != WH_OK)
                return rc;
            if (special == FN_PLAIN)
                continue;
        and_or: /* and/or: the first operand that decides, evaluated in turn */
            if (engine_value(arg))
                ctx->memo_taint = 1;
            if (tm_truth(arg) == (special == FN_OR)) {
                next = *arg;
                goto have_next;
            }
        }
        if (special != FN_PLAIN) { /* none decided: the last operand, or the previous command's value */
            next = c->final ? value : arg > argv ? arg[-1] : wh_tmpl_invalid();
            goto have_next;
        }
        if (c->final && (rc = validate_type(ctx, &value, c->tfinal, arg++)) != WH_OK)
            return rc;
        if (ctx->memo_depth > 0)
            for (const wh_tmpl_value *x = argv; x < arg; x++)
                if (engine_value(x))
                    ctx->memo_taint = 1;
        next = wh_tmpl_invalid();
        if ((rc = c->fn->fn(ctx, argv, (size_t)(arg - argv), &next)) != WH_OK)
            return call_failed(ctx, cmds[i], c->fn->name, rc);
    have_next:
        /* a nil interface{} becomes no value, others leave their interface ("lovely!") */
        if (next.kind == WH_TMPL_NIL)
            next = wh_tmpl_invalid();
        next.flags_ &= (uint16_t)~TM_F_IFACE;
        value = next;
    }
    *out = value;
    return WH_OK;
}

/* The value of a pipeline's commands (its declarations aside). */
static wh_code eval_commands(wh_tmpl_ctx *ctx, frame *fr, const tm_node *pipe, wh_tmpl_value *out)
{
    wh_tmpl_value value = wh_tmpl_invalid();
    size_t i;
    wh_code rc;

    if (pipe->u.pipe.flat)
        return run_flat(ctx, fr, pipe, out);
    ctx->node = pipe;
    for (i = 0; i < pipe->u.pipe.ncmds; i++) {
        const tm_node *cmd = pipe->u.pipe.cmds[i];
        wh_tmpl_value next;
        if (cmd->u.cmd.call != NULL)
            rc = run_call(ctx, fr, cmd, cmd->u.cmd.call, &value, &next);
        else
            rc = eval_command(ctx, fr, cmd, i > 0 ? &value : NULL, &next);
        if (rc != WH_OK)
            return rc;
        /* a nil interface{} becomes no value, others leave their interface ("lovely!") */
        if (next.kind == WH_TMPL_NIL)
            next = wh_tmpl_invalid();
        next.flags_ &= (uint16_t)~TM_F_IFACE;
        value = next;
    }
    *out = value;
    return WH_OK;
}

/* Whether `.` and `$` are the receivers something computed once needs
 * (tm_kpipe, tm_run): non-nil host values of those types (NULL: any). */
static inline int receivers_hold(wh_tmpl_ctx *ctx, const frame *fr, const wh_tmpl_type *dot, const wh_tmpl_type *dollar)
{
    const tm_var *v;

    if (dot != NULL && !const_recv(&fr->dot, dot))
        return 0;
    return dollar == NULL || ((v = find_var(ctx, tm_dollar, fr->var_base)) != NULL && const_recv(&v->val, dollar));
}

/* Whether a pipeline computed once (tm_fold_pipes) has that value here:
 * its const fields' receivers are what they were then. */
static inline int kpipe_holds(wh_tmpl_ctx *ctx, const frame *fr, const tm_kpipe *k)
{
    return receivers_hold(ctx, fr, k->dot, k->dollar);
}

/* A memoised pipeline's commands (tm_memo): the value this render already
 * computed for the same `.` and `$`, or computed now and kept when it read
 * nothing a template can change and is nothing a template can change. */
static wh_code eval_memo(wh_tmpl_ctx *ctx, frame *fr, const tm_node *pipe, const tm_memo *m, wh_tmpl_value *out)
{
    wh_tmpl_value dot = wh_tmpl_invalid(), dollar = wh_tmpl_invalid();
    tm_memo_entry *e = &ctx->memo[m->id];
    int outer_taint = ctx->memo_taint;
    const tm_var *v;
    uint32_t end;
    wh_code rc;

    if (m->var != NULL) {
        if ((v = find_var(ctx, m->var, fr->var_base)) == NULL)
            return eval_commands(ctx, fr, pipe, out); /* its message */
        dot = v->val;
    } else if (m->dot) {
        dot = fr->dot;
    }
    if (m->dollar && (v = find_var(ctx, tm_dollar, fr->var_base)) != NULL)
        dollar = v->val;
    if (engine_value(&dot) || engine_value(&dollar)) {
        ctx->memo_taint = 1;
        return eval_commands(ctx, fr, pipe, out);
    }
    if (e->gen == ctx->scratch->gen && same_value(&e->dot, &dot) && same_value(&e->dollar, &dollar)) {
        *out = e->val;
        ctx->node = m->nodes[e->end]; /* where computing it would have left the render */
        return WH_OK;
    }
    ctx->memo_taint = 0;
    ctx->memo_depth++;
    rc = eval_commands(ctx, fr, pipe, out);
    ctx->memo_depth--;
    if (rc == WH_OK && !ctx->memo_taint && !engine_value(out)) {
        for (end = 0; end < m->nnodes && m->nodes[end] != ctx->node; end++)
            ;
        if (end < m->nnodes) {
            e->gen = ctx->scratch->gen;
            e->dot = dot;
            e->dollar = dollar;
            e->val = *out;
            e->end = end;
        }
    }
    ctx->memo_taint |= outer_taint;
    return rc;
}

static wh_code eval_pipeline(wh_tmpl_ctx *ctx, frame *fr, const tm_node *pipe, wh_tmpl_value *out)
{
    wh_tmpl_value value;
    const tm_kpipe *k;
    size_t i;
    wh_code rc;

    if (pipe == NULL) {
        *out = wh_tmpl_invalid();
        return WH_OK;
    }
    if ((k = pipe->u.pipe.konst) != NULL && kpipe_holds(ctx, fr, k)) {
        value = k->val;
        ctx->node = k->node;
    } else if (pipe->u.pipe.memo != NULL && pipe->u.pipe.memo->shared && ctx->memo != NULL) {
        if ((rc = eval_memo(ctx, fr, pipe, pipe->u.pipe.memo, &value)) != WH_OK)
            return rc;
    } else if ((rc = pipe->u.pipe.flat ? run_flat(ctx, fr, pipe, &value) : eval_commands(ctx, fr, pipe, &value)) !=
               WH_OK) {
        return rc;
    }
    for (i = 0; i < pipe->u.pipe.ndecl; i++) {
        const char *name = pipe->u.pipe.decl[i]->u.field.idents[0];
        if (pipe->u.pipe.is_assign) {
            tm_var *v = find_var(ctx, name, fr->var_base);
            if (v == NULL)
                return tm_errorf(ctx, "undefined variable: %s", name);
            v->val = value;
        } else if ((rc = push_var(ctx, name, value)) != WH_OK) {
            return located(ctx, rc);
        }
    }
    *out = value;
    return WH_OK;
}

/* Output of text and actions: most appends fit the buffer, so copy without
 * the calls through wh_buf_append (same result: NUL-terminated). */
/* An annotated run about to be written straight into the render's output: where, for opts->runs. */
static __attribute__((noinline)) void note_run(wh_tmpl_ctx *ctx, const tm_run *run)
{
    wh_tmpl_runs *r = ctx->opts->runs;

    WH_GROW(r->at, r->n, r->cap, 32);
    r->at[r->n++] = (wh_tmpl_run_at){ctx->out->len, run->note};
}

static inline wh_code out_append(wh_buf *b, const char *s, size_t n)
{
    if (b->data != NULL && b->cap - b->len > n) {
        if (n != 0) { /* s may be NULL then */
            memcpy(b->data + b->len, s, n);
            b->len += n;
            b->data[b->len] = '\0';
        }
        return WH_OK;
    }
    wh_buf_append(b, s, n);
    return WH_OK;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether the render has used up its CPU budget.  The thread CPU clock is a
 * system call (no vDSO), so a render is not charged one at its start: the
 * budget counts from the first reading, at step 1024 (a render of fewer
 * steps never reads it), and an overrun is seen within 2048 steps. */
static int over_cpu_budget(wh_tmpl_ctx *ctx)
{
    uint64_t now = thread_cpu_ns();

    if (ctx->cpu_deadline_ns == 0) {
        ctx->cpu_deadline_ns = now + (uint64_t)ctx->max_cpu_ms * 1000000u;
        return 0;
    }
    return now > ctx->cpu_deadline_ns;
}

/* Budgets: a template (a revision's config is input too) must neither run
 * forever nor take the process's memory; exceeding one is this render's
 * error.  The CPU clock is read each time the steps pass a multiple of 1024
 * (a run of static items, tm_run, counts several at once).  A step counted
 * by check_limits below when it is not within all of them, or reaches
 * step_check. */
static wh_code limits_hit(wh_tmpl_ctx *ctx)
{
    if (ctx->steps > ctx->max_steps)
        return tm_errorf(ctx, "template execution exceeded %llu steps", (unsigned long long)ctx->max_steps);
    if (ctx->arena->used > ctx->max_memory) {
        tm_errorf(ctx, "template execution exceeded its memory budget (%zu MiB)", ctx->max_memory >> 20);
        return WH_E_LIMIT;
    }
    if (ctx->steps >= ctx->step_check) {
        uint64_t due = ctx->step_check;
        ctx->step_check = (ctx->steps | 1023) + 1;
        if (ctx->step_check > ctx->max_steps)
            ctx->step_check = ctx->max_steps + (ctx->max_steps < UINT64_MAX);
        if (due != 0 && over_cpu_budget(ctx)) {
            tm_errorf(ctx, "template execution exceeded its CPU time budget (%u ms)", ctx->max_cpu_ms);
            return WH_E_LIMIT;
        }
    }
    if (ctx->out->len > ctx->max_output) {
        tm_errorf(ctx, "template output exceeded %zu bytes", ctx->max_output);
        return WH_E_LIMIT;
    }
    return WH_OK;
}

/* One step of the render against its budgets: every node walked. */
static inline __attribute__((always_inline)) wh_code check_limits(wh_tmpl_ctx *ctx)
{
    if (++ctx->steps < ctx->step_check && ctx->arena->used <= ctx->max_memory && ctx->out->len <= ctx->max_output)
        return WH_OK;
    return limits_hit(ctx);
}

/* What walking a run's items writes, written at once (its steps counted, its
 * place noted for the YAML loader): shared by run_prog and the list walk. */
static inline __attribute__((always_inline)) wh_code write_run(wh_tmpl_ctx *ctx, const tm_run *run)
{
    wh_code rc;

    ctx->steps += run->steps - 1;
    if ((rc = check_limits(ctx)) != WH_OK)
        return rc;
    if (run->note != NULL && ctx->out == ctx->runs_out)
        note_run(ctx, run);
    out_append(ctx->out, run->text, run->len);
    return WH_OK;
}

static wh_code walk_if_with(wh_tmpl_ctx *ctx, frame *fr, const tm_node *n)
{
    size_t mark = ctx->nvars;
    wh_tmpl_value val;
    wh_code rc;

    if ((rc = eval_pipeline(ctx, fr, n->u.branch.pipe, &val)) != WH_OK)
        return rc;
    if (tm_truth(&val))
        if (n->kind == N_WITH) {
            frame inner = {fr->var_base, val};
            rc = walk(ctx, &inner, n->u.branch.list);
        } else {
            rc = walk(ctx, fr, n->u.branch.list);
        }
    else if (n->u.branch.else_list != NULL)
        rc = walk(ctx, fr, n->u.branch.else_list);
    ctx->nvars = mark;
    return rc;
}

static wh_code one_iteration(wh_tmpl_ctx *ctx, frame *fr, const tm_node *r, size_t mark, wh_tmpl_value index,
                             wh_tmpl_value elem)
{
    size_t nd = r->u.branch.pipe->u.pipe.ndecl;
    frame inner;
    wh_code rc;

    if (nd > 0)
        ctx->vars[mark - 1].val = elem;
    if (nd > 1)
        ctx->vars[mark - 2].val = index;
    inner.var_base = fr->var_base;
    inner.dot = elem;
    rc = walk(ctx, &inner, r->u.branch.list);
    ctx->nvars = mark;
    if (rc == TM_CONTINUE)
        rc = WH_OK;
    return rc;
}

static wh_code walk_range(wh_tmpl_ctx *ctx, frame *fr, const tm_node *r)
{
    size_t outer = ctx->nvars, mark;
    wh_tmpl_value val;
    wh_code rc = WH_OK;
    long n, i;

    ctx->node = r;
    if ((rc = eval_pipeline(ctx, fr, r->u.branch.pipe, &val)) != WH_OK)
        return rc;
    mark = ctx->nvars;
    switch (val.kind) {
    case WH_TMPL_LIST:
        n = wh_tmpl_len(&val);
        if (n == 0)
            break;
        for (i = 0; i < n && rc == WH_OK; i++)
            rc = one_iteration(ctx, fr, r, mark, wh_tmpl_int(i), wh_tmpl_list_at(&val, (size_t)i));
        goto done;
    case WH_TMPL_MAP: {
        wh_tmpl_kv *ents;
        size_t cnt, k;
        if (wh_tmpl_len(&val) == 0)
            break;
        if ((rc = wh_tmpl_map_entries(ctx, &val, &ents, &cnt)) != WH_OK) {
            rc = located(ctx, rc);
            goto done;
        }
        for (k = 0; k < cnt && rc == WH_OK; k++)
            rc = one_iteration(ctx, fr, r, mark, wh_tmpl_strn(ents[k].key, ents[k].key_len), ents[k].val);
        goto done;
    }
    case WH_TMPL_INVALID:
        break;
    default: {
        wh_buf b = WH_BUF_INIT;
        if (val.kind == WH_TMPL_HOST && val.u.host == NULL)
            wh_buf_puts(&b, "<nil>");
        else
            tm_print_value(ctx, &val, &b, 1);
        rc = tm_errorf(ctx, "range can't iterate over %s", b.data ? b.data : "");
        wh_buf_free(&b);
        goto done;
    }
    }
    if (r->u.branch.else_list != NULL)
        rc = walk(ctx, fr, r->u.branch.else_list);
done:
    if (rc == TM_BREAK)
        rc = WH_OK;
    ctx->nvars = outer;
    return rc;
}

static const tm_def *lookup_def(wh_tmpl_ctx *ctx, const char *name)
{
    const tm_def *d = NULL;

    if (ctx->local_defs != NULL)
        d = tm_find_def(ctx->local_defs, name);
    if (d == NULL)
        d = tm_find_def(&ctx->set->defs, name);
    return d;
}

static wh_code walk_template(wh_tmpl_ctx *ctx, frame *fr, const tm_node *t)
{
    const tm_def *def, *saved_def;
    wh_tmpl_value newdot;
    wh_code rc;

    ctx->node = t;
    def = lookup_def(ctx, t->u.tmpl.name);
    if (def == NULL)
        return tm_errorf(ctx, "template \"%s\" not defined", t->u.tmpl.name);
    if (ctx->depth >= ctx->max_depth)
        return tm_errorf(ctx, "exceeded maximum template depth (%u)", ctx->max_depth);
    if ((const char *)__builtin_frame_address(0) < ctx->stack_low) /* stacks grow down on every target we build for */
        return tm_errorf(ctx, "exceeded maximum template depth (%u)", ctx->depth);
    if ((rc = eval_pipeline(ctx, fr, t->u.tmpl.pipe, &newdot)) != WH_OK)
        return rc;
    saved_def = ctx->def;
    ctx->def = def;
    ctx->depth++;
    rc = tm_exec_def(ctx, def, newdot);
    ctx->depth--;
    ctx->def = saved_def;
    return rc;
}

/* An action's output (its step taken): its pipeline's value printed as
 * fmt's %v prints it, nothing when it declares variables. */
static inline __attribute__((always_inline)) wh_code walk_action(wh_tmpl_ctx *ctx, frame *fr, const tm_node *n)
{
    const tm_node *pipe = n->u.branch.pipe;
    const tm_kpipe *k = pipe->u.pipe.konst;
    wh_tmpl_value val;
    wh_code rc;

    if (k != NULL && k->printed != NULL && pipe->u.pipe.ndecl == 0 && kpipe_holds(ctx, fr, k))
        return out_append(ctx->out, k->printed, k->printed_len); /* what printing its value gives */
    if ((rc = eval_pipeline(ctx, fr, pipe, &val)) != WH_OK)
        return rc;
    if (pipe->u.pipe.ndecl == 0) {
        ctx->node = n;
        if (val.kind == WH_TMPL_STRING && (val.type == NULL || val.type->format == NULL))
            rc = out_append(ctx->out, val.u.s, val.len);
        else
            rc = tm_print_value(ctx, &val, ctx->out, 1);
        if (rc != WH_OK)
            return located(ctx, rc);
    }
    return WH_OK;
}

/* ---- flat programs: a list's items compiled once (tm_compile_calls) ----
 *
 * walk() visits a list item by item, dispatching on each node's kind and
 * recursing into the branches of every if.  A program lays the same visit
 * out flat when the set is made: text, runs (tm_run), actions and ifs, the
 * ifs' branches inline behind a jump, so a render steps through one array.
 * Each op takes the steps walk() takes and leaves the render's position
 * (ctx->node) where walk() leaves it, so budgets and messages are the
 * same; with, range, template and the rest are walked as before (their
 * bodies have programs of their own). */
enum { OP_END = 0, OP_TEXT, OP_RUN, OP_ACTION, OP_IF, OP_ENDIF, OP_ENDIF_JUMP, OP_NODE };

struct tm_op {
    uint8_t op;
    uint32_t jump;    /* OP_RUN: the op after its items; OP_IF: its else branch (or past it);
                       * OP_ENDIF_JUMP: past the else branch */
    const tm_node *n; /* the node walked (OP_RUN: the run's last item, where walk() leaves it) */
    const void *p;    /* OP_TEXT: the text; OP_RUN: the run */
};

/* Ifs nested inline in one program; deeper ones are walked (and have programs of their own). */
#define TM_PROG_MAX_IFS 32

static wh_code run_prog(wh_tmpl_ctx *ctx, frame *fr, const struct tm_op *prog)
{
    const struct tm_op *op = prog;
    size_t marks[TM_PROG_MAX_IFS]; /* ctx->nvars at each open if: what leaving its branch restores */
    unsigned sp = 0;
    wh_tmpl_value val;
    wh_code rc;

    for (;;) {
        switch (op->op) {
        case OP_TEXT:
            ctx->node = op->n;
            if ((rc = check_limits(ctx)) != WH_OK)
                return rc;
            out_append(ctx->out, op->p, op->n->u.text.len);
            op++;
            continue;
        case OP_RUN: {
            const tm_run *run = op->p;
            if (!receivers_hold(ctx, fr, run->dot, run->dollar)) {
                op++; /* its items, one by one */
                continue;
            }
            ctx->node = op->n;
            if ((rc = write_run(ctx, run)) != WH_OK)
                return rc;
            op = prog + op->jump;
            continue;
        }
        case OP_ACTION:
            ctx->node = op->n;
            if ((rc = check_limits(ctx)) != WH_OK || (rc = walk_action(ctx, fr, op->n)) != WH_OK)
                return rc;
            op++;
            continue;
        case OP_IF: {
            const tm_node *n = op->n, *branch;
            ctx->node = n;
            if ((rc = check_limits(ctx)) != WH_OK)
                return rc;
            marks[sp] = ctx->nvars;
            if ((rc = eval_pipeline(ctx, fr, n->u.branch.pipe, &val)) != WH_OK)
                return rc;
            if (tm_truth(&val)) {
                branch = n->u.branch.list;
                op++;
            } else {
                branch = n->u.branch.else_list;
                op = prog + op->jump;
            }
            if (branch == NULL) {
                ctx->nvars = marks[sp];
                continue;
            }
            sp++;
            ctx->node = branch; /* walk(branch): the list's own step */
            if ((rc = check_limits(ctx)) != WH_OK)
                return rc;
            continue;
        }
        case OP_ENDIF:
            ctx->nvars = marks[--sp];
            op++;
            continue;
        case OP_ENDIF_JUMP:
            ctx->nvars = marks[--sp];
            op = prog + op->jump;
            continue;
        case OP_NODE:
            if ((rc = walk(ctx, fr, op->n)) != WH_OK)
                return rc;
            op++;
            continue;
        default:
            return WH_OK;
        }
    }
}

static wh_code walk(wh_tmpl_ctx *ctx, frame *fr, const tm_node *n)
{
    wh_code rc;
    size_t i;

    ctx->node = n;
    if ((rc = check_limits(ctx)) != WH_OK)
        return rc;
    switch (n->kind) {
    case N_ACTION:
        return walk_action(ctx, fr, n);
    case N_BREAK:
        return TM_BREAK;
    case N_CONTINUE:
        return TM_CONTINUE;
    case N_COMMENT:
        return WH_OK;
    case N_IF:
    case N_WITH:
        return walk_if_with(ctx, fr, n);
    case N_LIST:
        if (n->u.list.prog != NULL)
            return run_prog(ctx, fr, n->u.list.prog);
        for (i = 0; i < n->u.list.n; i++) {
            const tm_node *item = n->u.list.items[i];
            const tm_run *run = n->u.list.runs != NULL ? &n->u.list.runs[i] : NULL;
            if (run != NULL && run->end != 0 && receivers_hold(ctx, fr, run->dot, run->dollar)) {
                i = run->end - 1;
                ctx->node = n->u.list.items[i];
                if ((rc = write_run(ctx, run)) != WH_OK)
                    return rc;
            } else if (item->kind == N_TEXT) { /* half the nodes: walked here, without a call */
                ctx->node = item;
                if ((rc = check_limits(ctx)) != WH_OK)
                    return rc;
                out_append(ctx->out, item->u.text.s, item->u.text.len);
            } else if ((rc = walk(ctx, fr, item)) != WH_OK) {
                return rc;
            }
        }
        return WH_OK;
    case N_RANGE:
        return walk_range(ctx, fr, n);
    case N_TEMPLATE:
        return walk_template(ctx, fr, n);
    case N_TEXT:
        if ((rc = out_append(ctx->out, n->u.text.s, n->u.text.len)) != WH_OK)
            return located(ctx, rc);
        return WH_OK;
    default:
        return tm_errorf(ctx, "unknown node");
    }
}

wh_code tm_exec_def(wh_tmpl_ctx *ctx, const tm_def *def, wh_tmpl_value dot)
{
    frame fr;
    size_t mark = ctx->nvars;
    const tm_def *saved = ctx->def;
    wh_code rc;

    ctx->def = def;
    if (dot.kind == WH_TMPL_NIL) /* reflect.ValueOf(nil): no value */
        dot = wh_tmpl_invalid();
    fr.var_base = ctx->nvars;
    fr.dot = dot;
    if ((rc = push_var(ctx, tm_dollar, dot)) != WH_OK)
        return located(ctx, rc);
    rc = walk(ctx, &fr, def->root);
    ctx->nvars = mark;
    ctx->def = saved;
    return rc;
}

/* ---- executing a template from inside a render (Go's ExecuteTemplate; Helm's include and tpl) ---- */

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
        return wh_tmpl_errorf(ctx, "%s", msg[0] ? msg : "template: could not parse");
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

/* ---- comparisons (used by eq/ne/lt/...) ---- */

typedef enum { K_INVALID, K_BOOL, K_INT, K_FLOAT, K_STRING, K_UINT } bkind;

static bkind basic_kind(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_BOOL:
        return K_BOOL;
    case WH_TMPL_INT:
        return K_INT;
    case WH_TMPL_UINT:
        return K_UINT;
    case WH_TMPL_FLOAT:
        return K_FLOAT;
    case WH_TMPL_STRING:
        return K_STRING;
    default:
        return K_INVALID;
    }
}

static int is_zero_value(const wh_tmpl_value *v)
{
    return v->kind == WH_TMPL_INVALID || v->kind == WH_TMPL_NIL;
}

static int value_is_nil(const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_INVALID:
    case WH_TMPL_NIL:
        return 1;
    case WH_TMPL_LIST:
    case WH_TMPL_MAP:
        return v->rep == WH_TMPL_REP_JSON ? v->u.json == NULL : v->u.list == NULL;
    case WH_TMPL_HOST:
        return v->type != NULL && v->type->pointer && v->u.host == NULL;
    default:
        return 0;
    }
}

/* Go's eq for one pair; *rc set on a comparison error. */
int tm_eq(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, const wh_tmpl_value *b, wh_code *rc)
{
    bkind k1 = basic_kind(a), k2 = basic_kind(b);

    *rc = WH_OK;
    if (k1 != k2) {
        if (k1 == K_INT && k2 == K_UINT)
            return a->u.i >= 0 && (uint64_t)a->u.i == b->u.u;
        if (k1 == K_UINT && k2 == K_INT)
            return b->u.i >= 0 && a->u.u == (uint64_t)b->u.i;
        if (!is_zero_value(a) && !is_zero_value(b))
            *rc = tm_fail(ctx, WH_E_RENDER, "incompatible types for comparison");
        return 0;
    }
    switch (k1) {
    case K_BOOL:
        return a->u.b == b->u.b;
    case K_FLOAT:
        return a->u.f == b->u.f;
    case K_INT:
        return a->u.i == b->u.i;
    case K_UINT:
        return a->u.u == b->u.u;
    case K_STRING:
        return a->len == b->len && (a->len == 0 || memcmp(a->u.s, b->u.s, a->len) == 0);
    default:
        break;
    }
    /* non-basic kinds */
    if (!is_zero_value(a) && !is_zero_value(b) && a->kind != b->kind) {
        wh_buf x = WH_BUF_INIT, y = WH_BUF_INIT;
        tm_print_value(ctx, a, &x, 1);
        tm_print_value(ctx, b, &y, 1);
        *rc = tm_fail(ctx, WH_E_RENDER, "non-comparable types %s: %s, %s: %s", x.data ? x.data : "", tm_type_name(a),
                      tm_type_name(b), y.data ? y.data : "");
        wh_buf_free(&x);
        wh_buf_free(&y);
        return 0;
    }
    if (value_is_nil(a) || value_is_nil(b))
        return value_is_nil(a) == value_is_nil(b);
    if (b->kind == WH_TMPL_LIST || b->kind == WH_TMPL_MAP) {
        wh_buf y = WH_BUF_INIT;
        tm_print_value(ctx, b, &y, 1);
        *rc = tm_fail(ctx, WH_E_RENDER, "non-comparable type %s: %s", y.data ? y.data : "", tm_type_name(b));
        wh_buf_free(&y);
        return 0;
    }
    return a->type == b->type && a->u.host == b->u.host;
}

void tm_exec_budgets(wh_tmpl_ctx *ctx)
{
    static __thread const char *stack_low;
    static __thread int stack_known;

    if (!stack_known) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        stack_known = 1;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size > TM_STACK_RESERVE)
                stack_low = (const char *)addr + TM_STACK_RESERVE;
            pthread_attr_destroy(&attr);
        }
    }
    ctx->stack_low = stack_low;
    ctx->cpu_deadline_ns = 0; /* set at the first check (over_cpu_budget) */
}

/* ---- pipelines computed once (tm_fold_pipes) ---- */

/* The receivers the constant operands of a pipeline need (tm_kpipe). */
typedef struct guard {
    const wh_tmpl_type *dot, *dollar;
} guard;

static int guard_need(const wh_tmpl_type **slot, const wh_tmpl_type *t)
{
    if (*slot != NULL && *slot != t)
        return 0;
    *slot = t;
    return 1;
}

/* A const field's chain is a constant operand when its value is data (a
 * host value would run its field callbacks, which may read the render). */
static int const_chain(const tm_konst *k, const wh_tmpl_type **slot)
{
    return k != NULL && k->val.kind != WH_TMPL_HOST && guard_need(slot, k->type);
}

/* Whether operand `n` has the same value on every render where g's
 * receivers hold (adding those it needs to g). */
static int const_operand(const tm_node *n, guard *g)
{
    const tm_kpipe *k;

    switch (n->kind) {
    case N_BOOL:
    case N_NUMBER:
    case N_STRING:
    case N_NIL:
        return 1;
    case N_FIELD:
        return const_chain(n->u.field.konst, &g->dot);
    case N_VARIABLE:
        return n->u.field.n > 1 && n->u.field.idents[0] == tm_dollar && const_chain(n->u.field.konst, &g->dollar);
    case N_PIPE:
        k = n->u.pipe.konst;
        return n->u.pipe.ndecl == 0 && k != NULL && (k->dot == NULL || guard_need(&g->dot, k->dot)) &&
               (k->dollar == NULL || guard_need(&g->dollar, k->dollar));
    case N_CHAIN:
        return const_operand(n->u.chain.base, g);
    case N_IDENT:
        return n->u.ident.fn != NULL && n->u.ident.fn->pure;
    default:
        return 0;
    }
}

/* A command of constant operands: a pure function's call, or an operand
 * alone at the head of the pipeline (a field given arguments, or one
 * receiving the previous command's value, is a method call). */
static int const_command(const tm_node *cmd, int head, guard *g)
{
    tm_node *const *args = cmd->u.cmd.args;
    size_t i;

    if (args[0]->kind != N_IDENT)
        return head && cmd->u.cmd.nargs == 1 && const_operand(args[0], g);
    if (!const_operand(args[0], g))
        return 0;
    for (i = 1; i < cmd->u.cmd.nargs; i++)
        if (!const_operand(args[i], g))
            return 0;
    return 1;
}

typedef struct folder {
    wh_tmpl_set *set;
    wh_tmpl_ctx ctx;
    wh_buf out; /* pure functions write none; the context needs one */
    size_t kept;
    uint64_t deadline;
    unsigned attempts;
} folder;

/* The receivers constant fields are read on while folding: never
 * dereferenced (the chains' values are their konst). */
static const char fold_recv;

/* Whether the commands' value `v` can outlive the folding: scalars, strings
 * (copied into the set's arena by the caller), and JSON collections that are
 * the const fields' own data (nothing new was made). */
static int fold_keeps(folder *f, const wh_tmpl_value *v)
{
    switch (v->kind) {
    case WH_TMPL_STRING:
        return v->len <= TM_FOLD_MAX_STRING && f->kept + v->len <= TM_FOLD_MAX_KEPT;
    case WH_TMPL_LIST:
    case WH_TMPL_MAP:
        return v->rep == WH_TMPL_REP_JSON && f->ctx.owned == NULL;
    case WH_TMPL_HOST:
        return 0;
    default:
        return 1;
    }
}

static void fold_pipe(folder *f, tm_node *pipe)
{
    wh_tmpl_ctx *ctx = &f->ctx;
    guard g = {NULL, NULL};
    wh_tmpl_value v;
    frame fr;
    size_t i;
    tm_kpipe *k;

    pipe->u.pipe.konst = NULL;
    if (pipe->u.pipe.ncmds == 0 || f->deadline == 0)
        return;
    for (i = 0; i < pipe->u.pipe.ncmds; i++)
        if (!const_command(pipe->u.pipe.cmds[i], i == 0, &g))
            return;
    if ((++f->attempts & 63) == 0 && thread_cpu_ns() > f->deadline) {
        f->deadline = 0; /* out of time: the rest is the render's */
        return;
    }
    ctx->failed = ctx->located = 0;
    ctx->nvars = 0;
    ctx->scratch->gen++;
    fr.var_base = 0;
    fr.dot = g.dot != NULL ? wh_tmpl_host(g.dot, &fold_recv) : wh_tmpl_invalid();
    push_var(ctx, tm_dollar, g.dollar != NULL ? wh_tmpl_host(g.dollar, &fold_recv) : wh_tmpl_invalid());
    if (eval_commands(ctx, &fr, pipe, &v) == WH_OK && fold_keeps(f, &v)) {
        k = tm_alloc(&f->set->arena, sizeof(*k));
        k->dot = g.dot;
        k->dollar = g.dollar;
        k->node = ctx->node;
        if (v.kind == WH_TMPL_STRING) {
            v.u.s = tm_strndup(&f->set->arena, v.len ? v.u.s : "", v.len);
            f->kept += v.len;
        }
        k->val = v;
        k->printed = NULL;
        if (v.kind != WH_TMPL_STRING && v.kind != WH_TMPL_LIST && v.kind != WH_TMPL_MAP &&
            (v.type == NULL || v.type->format == NULL)) { /* a scalar an action prints: print it now */
            wh_buf p = WH_BUF_INIT;
            if (tm_print_value(ctx, &v, &p, 1) == WH_OK) {
                k->printed = tm_strndup(&f->set->arena, p.len ? p.data : "", p.len);
                k->printed_len = p.len;
            }
            wh_buf_free(&p);
        }
        pipe->u.pipe.konst = k;
    }
    json_decref(ctx->owned);
    ctx->owned = NULL;
    tm_arena_reset(ctx->arena);
}

/* Inner pipelines are visited first: the outer one folds over them. */
static void fold_node(tm_node *n, void *arg)
{
    if (n->kind == N_PIPE)
        fold_pipe(arg, n);
}

void tm_fold_pipes(wh_tmpl_set *set, tm_node *root)
{
    folder f;
    wh_tmpl_scratch *sc = wh_tmpl_scratch_new();

    memset(&f, 0, sizeof(f));
    f.set = set;
    f.deadline = thread_cpu_ns() + TM_FOLD_CPU_NS;
    sc->fcache = wh_calloc(TM_FCACHE_SIZE, sizeof(*sc->fcache));
    sc->busy = 1;
    f.ctx.set = set;
    f.ctx.scratch = sc;
    f.ctx.arena = &sc->arena;
    f.ctx.out = &f.out;
    f.ctx.max_depth = 1;
    f.ctx.max_steps = 1;
    f.ctx.max_output = TM_FOLD_MAX_STRING;
    f.ctx.max_memory = TM_FOLD_MAX_KEPT;
    f.ctx.max_cpu_ms = TM_FOLD_CPU_NS / 1000000u;
    tm_node_walk(root, fold_node, &f);
    sc->vars = f.ctx.vars;
    wh_buf_free(&f.out);
    wh_tmpl_scratch_free(sc);
}

/* ---- runs of items whose walk needs no render (tm_fold_runs) ---- */

/* Whether walking `n` needs no render when g's receivers hold (adding those
 * it needs to g): then its output is appended to `out` and the steps its
 * walk takes are added to `steps`. */
static int static_node(const tm_node *n, guard *g, wh_buf *out, uint64_t *steps)
{
    const tm_node *pipe;
    const tm_kpipe *k;
    const wh_tmpl_value *v;
    size_t i;

    *steps += 1;
    switch (n->kind) {
    case N_TEXT:
        wh_buf_append(out, n->u.text.s, n->u.text.len);
        return 1;
    case N_COMMENT:
        return 1;
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            if (!static_node(n->u.list.items[i], g, out, steps))
                return 0;
        return 1;
    case N_ACTION:
    case N_IF:
        pipe = n->u.branch.pipe;
        k = pipe->u.pipe.konst;
        if (k == NULL || pipe->u.pipe.ndecl != 0 || (k->dot != NULL && !guard_need(&g->dot, k->dot)) ||
            (k->dollar != NULL && !guard_need(&g->dollar, k->dollar)))
            return 0;
        if (n->kind == N_IF) {
            const tm_node *branch = tm_truth(&k->val) ? n->u.branch.list : n->u.branch.else_list;
            return branch == NULL || static_node(branch, g, out, steps);
        }
        v = &k->val; /* printed as walk prints it */
        if (k->printed != NULL)
            wh_buf_append(out, k->printed, k->printed_len);
        else if (v->kind == WH_TMPL_STRING && (v->type == NULL || v->type->format == NULL))
            wh_buf_append(out, v->u.s, v->len);
        else
            return 0;
        return 1;
    default:
        return 0;
    }
}

static void fold_list_runs(tm_node *n, void *arg)
{
    wh_tmpl_set *set = arg;
    wh_buf text = WH_BUF_INIT;
    tm_run *runs = NULL;
    size_t i = 0, start;

    if (n->kind != N_LIST)
        return;
    n->u.list.runs = NULL;
    while (i < n->u.list.n) {
        guard g = {NULL, NULL};
        uint64_t steps = 0;
        start = i;
        wh_buf_reset(&text);
        for (; i < n->u.list.n; i++) {
            guard g2 = g;
            size_t len = text.len;
            uint64_t st = steps;
            if (!static_node(n->u.list.items[i], &g2, &text, &st) || st > UINT32_MAX) {
                text.len = len; /* what the dynamic item wrote before it was found so */
                break;
            }
            g = g2;
            steps = st;
        }
        if (i == start) { /* a dynamic item */
            i++;
            continue;
        }
        /* one text alone is walked as cheaply; anything else is worth a run */
        if (i - start >= 2 || n->u.list.items[start]->kind != N_TEXT) {
            if (runs == NULL) {
                runs = tm_alloc(&set->arena, n->u.list.n * sizeof(*runs));
                memset(runs, 0, n->u.list.n * sizeof(*runs)); /* no run starts anywhere else */
            }
            runs[start].end = (uint32_t)i;
            runs[start].steps = (uint32_t)steps;
            runs[start].dot = g.dot;
            runs[start].dollar = g.dollar;
            runs[start].text = tm_strndup(&set->arena, text.len ? text.data : "", text.len);
            runs[start].len = text.len;
        }
    }
    n->u.list.runs = runs;
    wh_buf_free(&text);
}

static void compile_list(wh_tmpl_set *set, tm_node *list);

void tm_fold_runs(wh_tmpl_set *set, tm_node *root)
{
    tm_node_walk(root, fold_list_runs, set);
    if (root->kind == N_LIST)
        compile_list(set, root);
}

struct annotate {
    wh_tmpl_set *set;
    const void *(*note)(const char *text, size_t len, void *arg);
    void *arg;
};

static void annotate_list_runs(tm_node *n, void *arg)
{
    struct annotate *a = arg;
    tm_run *runs = (tm_run *)n->u.list.runs; /* the set's own, in its arena */

    if (n->kind != N_LIST || runs == NULL)
        return;
    for (size_t i = 0; i < n->u.list.n; i++) {
        if (runs[i].end == 0 || (runs[i].note = a->note(runs[i].text, runs[i].len, a->arg)) == NULL)
            continue;
        WH_GROW(a->set->notes, a->set->nnotes, a->set->capnotes, 16);
        a->set->notes[a->set->nnotes++] = runs[i].note;
    }
}

void wh_tmpl_set_annotate_runs(wh_tmpl_set *set, const void *(*note)(const char *text, size_t len, void *arg),
                               void *arg, void (*release)(const void *note))
{
    struct annotate a = {set, note, arg};

    set->release_note = release;
    for (size_t i = 0; i < set->defs.n; i++)
        tm_node_walk(set->defs.items[i].root, annotate_list_runs, &a);
}

/* ---- pipelines computed once per render (tm_memo_pipes) ---- */

/* A memoised pipeline's text, interned in the set: its id. */
struct tm_memo_key {
    const char *text; /* NULL: a free slot */
    size_t len;
    uint64_t hash;
    uint32_t id;
};

/* A pipeline looked at for memoising: its text (operands as written,
 * functions by their table entry), its nodes in that text's order. */
typedef struct memo_scan {
    wh_buf key;
    const tm_node **nodes;
    size_t n, cap;
    int dot, dollar, calls;
    const char *var; /* the one variable other than `$` read (it takes `.`'s place in the memo's key) */
} memo_scan;

static int memo_commands(memo_scan *m, const tm_node *pipe);

static void memo_node(memo_scan *m, const tm_node *n)
{
    WH_GROW(m->nodes, m->n, m->cap, 16);
    m->nodes[m->n++] = n;
}

static void memo_idents(memo_scan *m, const char *const *idents, size_t n)
{
    for (size_t i = 0; i < n; i++)
        wh_buf_printf(&m->key, ".%s", idents[i]);
    wh_buf_putc(&m->key, ';');
}

/* Whether operand `n` has one value for given `.` and `$` within a render. */
static int memo_operand(memo_scan *m, const tm_node *n)
{
    if (n->kind == N_PIPE)
        return n->u.pipe.ndecl == 0 && memo_commands(m, n);
    memo_node(m, n);
    switch (n->kind) {
    case N_BOOL:
        wh_buf_puts(&m->key, n->u.boolean ? "T" : "F");
        return 1;
    case N_NUMBER:
        wh_buf_printf(&m->key, "N%zu:%s", strlen(n->u.num.text), n->u.num.text);
        return 1;
    case N_STRING:
        wh_buf_printf(&m->key, "S%zu:", n->u.str.len);
        wh_buf_append(&m->key, n->u.str.s, n->u.str.len);
        return 1;
    case N_NIL:
        wh_buf_putc(&m->key, 'Z');
        return 1;
    case N_DOT:
        m->dot = 1;
        wh_buf_putc(&m->key, '@');
        return 1;
    case N_FIELD:
        m->dot = 1;
        wh_buf_putc(&m->key, 'F');
        memo_idents(m, n->u.field.idents, n->u.field.n);
        return 1;
    case N_VARIABLE:
        if (n->u.field.idents[0] != tm_dollar) {
            /* another variable: a template can set it, so its value is part
             * of the memo's key (in `.`'s place: the commands must not read
             * `.` too), as `.` is (`structToJSON $p` twice in a range) */
            if (m->var != NULL && m->var != n->u.field.idents[0])
                return 0;
            m->var = n->u.field.idents[0];
            wh_buf_printf(&m->key, "V%s", m->var);
            memo_idents(m, n->u.field.idents + 1, n->u.field.n - 1);
            return 1;
        }
        m->dollar = 1;
        wh_buf_putc(&m->key, '$');
        memo_idents(m, n->u.field.idents + 1, n->u.field.n - 1);
        return 1;
    case N_CHAIN:
        wh_buf_putc(&m->key, 'C');
        if (!memo_operand(m, n->u.chain.base))
            return 0;
        memo_idents(m, n->u.chain.fields, n->u.chain.n);
        return 1;
    case N_IDENT:
        if (n->u.ident.fn == NULL || !n->u.ident.fn->stable)
            return 0;
        m->calls++;
        wh_buf_printf(&m->key, "I%p;", (const void *)n->u.ident.fn);
        return 1;
    default:
        return 0;
    }
}

/* Whether the commands of `pipe` are stable calls over such operands (a
 * field alone at the head; one given arguments or the previous command's
 * value is a method call). */
static int memo_commands(memo_scan *m, const tm_node *pipe)
{
    memo_node(m, pipe);
    wh_buf_putc(&m->key, '(');
    for (size_t i = 0; i < pipe->u.pipe.ncmds; i++) {
        const tm_node *cmd = pipe->u.pipe.cmds[i];
        memo_node(m, cmd);
        if (cmd->u.cmd.args[0]->kind != N_IDENT && (i > 0 || cmd->u.cmd.nargs != 1))
            return 0;
        wh_buf_putc(&m->key, '[');
        for (size_t j = 0; j < cmd->u.cmd.nargs; j++)
            if (!memo_operand(m, cmd->u.cmd.args[j]))
                return 0;
        wh_buf_putc(&m->key, ']');
    }
    wh_buf_putc(&m->key, ')');
    return pipe->u.pipe.ncmds > 0;
}

static uint64_t memo_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* The id of the text `key` in the set, a new one for a new text. */
static uint32_t memo_intern(wh_tmpl_set *set, const wh_buf *key)
{
    uint64_t h = memo_hash(key->data, key->len);
    struct tm_memo_key *slot;
    size_t i, mask;

    if (set->nmemo * 2 >= set->capmemo_keys) { /* keep it at most half full */
        size_t cap = set->capmemo_keys ? set->capmemo_keys * 2 : 64;
        struct tm_memo_key *t = wh_calloc(cap, sizeof(*t));
        for (i = 0; i < set->capmemo_keys; i++) {
            const struct tm_memo_key *k = &set->memo_keys[i];
            size_t j;
            if (k->text == NULL)
                continue;
            for (j = k->hash & (cap - 1); t[j].text != NULL; j = (j + 1) & (cap - 1))
                ;
            t[j] = *k;
        }
        free(set->memo_keys);
        set->memo_keys = t;
        set->capmemo_keys = cap;
    }
    mask = set->capmemo_keys - 1;
    for (i = h & mask;; i = (i + 1) & mask) {
        slot = &set->memo_keys[i];
        if (slot->text == NULL)
            break;
        if (slot->hash == h && slot->len == key->len && memcmp(slot->text, key->data, key->len) == 0)
            return slot->id;
    }
    slot->text = tm_strndup(&set->arena, key->data, key->len);
    slot->len = key->len;
    slot->hash = h;
    slot->id = (uint32_t)set->nmemo;
    set->memo_uses = wh_realloc(set->memo_uses, (set->nmemo + 1) * sizeof(*set->memo_uses));
    set->memo_uses[set->nmemo++] = 0;
    return slot->id;
}

static void memo_pipe(tm_node *n, void *arg)
{
    wh_tmpl_set *set = arg;
    memo_scan m;
    tm_memo *memo;

    if (n->kind != N_PIPE)
        return;
    memset(&m, 0, sizeof(m));
    n->u.pipe.memo = NULL;
    if (memo_commands(&m, n) && m.calls > 0 && !(m.var != NULL && m.dot)) {
        memo = tm_alloc(&set->arena, sizeof(*memo));
        memo->id = memo_intern(set, &m.key);
        set->memo_uses[memo->id]++;
        memo->dot = (uint8_t)m.dot;
        memo->dollar = (uint8_t)m.dollar;
        memo->var = m.var;
        memo->shared = 0; /* tm_memo_share decides */
        memo->nnodes = (uint32_t)m.n;
        memo->nodes = tm_alloc(&set->arena, m.n * sizeof(*memo->nodes));
        memcpy(memo->nodes, m.nodes, m.n * sizeof(*memo->nodes));
        n->u.pipe.memo = memo;
    }
    free(m.nodes);
    wh_buf_free(&m.key);
}

void tm_memo_pipes(wh_tmpl_set *set, tm_node *root)
{
    tm_node_walk(root, memo_pipe, set);
}

static void memo_share(tm_node *n, void *arg)
{
    const wh_tmpl_set *set = arg;

    if (n->kind == N_PIPE && n->u.pipe.memo != NULL)
        ((tm_memo *)n->u.pipe.memo)->shared = set->memo_uses[n->u.pipe.memo->id] > 1;
}

void tm_memo_share(wh_tmpl_set *set)
{
    for (size_t i = 0; i < set->defs.n; i++)
        tm_node_walk(set->defs.items[i].root, memo_share, set);
}

void tm_memo_reserve(wh_tmpl_scratch *sc, size_t n)
{
    if (sc->capmemo >= n)
        return;
    sc->memo = wh_realloc(sc->memo, n * sizeof(*sc->memo));
    memset(sc->memo + sc->capmemo, 0, (n - sc->capmemo) * sizeof(*sc->memo));
    sc->capmemo = n;
}

/* ---- compiled calls (tm_ccall) ---- */

/* What eval_arg gives literal `n` for parameter `t`, when that cannot fail. */
static int literal_arg(const tm_node *n, char t, wh_tmpl_value *out)
{
    switch (t) {
    case 'b':
        if (n->kind != N_BOOL)
            return 0;
        *out = wh_tmpl_bool(n->u.boolean);
        return 1;
    case 'f':
        if (n->kind != N_NUMBER || !n->u.num.is_float)
            return 0;
        *out = wh_tmpl_float(n->u.num.f);
        return 1;
    case 'i':
    case 'I':
        if (n->kind != N_NUMBER || !n->u.num.is_int)
            return 0;
        *out = wh_tmpl_int_typed(n->u.num.i, t == 'I' ? &wh_tmpl_type_int64 : NULL);
        return 1;
    case 's':
        if (n->kind != N_STRING)
            return 0;
        *out = wh_tmpl_strn(n->u.str.s, n->u.str.len);
        return 1;
    case 'v':
    case 'r':
    case 0:
        switch (n->kind) {
        case N_BOOL:
            *out = wh_tmpl_bool(n->u.boolean);
            return 1;
        case N_NUMBER:
            return ideal_value(n, out);
        case N_STRING:
            *out = wh_tmpl_strn(n->u.str.s, n->u.str.len);
            return 1;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

/* The letter of the parameter that takes argument `i` of fn. */
static char param_at(const tm_func *fn, size_t i)
{
    return fn->variadic && i >= (size_t)fn->nparams - 1 ? fn->params[fn->nparams - 1] : fn->params[i];
}

static void compile_call(wh_tmpl_set *set, tm_node *cmd, int final)
{
    tm_node *const *args = cmd->u.cmd.args;
    const tm_func *fn = args[0]->kind == N_IDENT ? args[0]->u.ident.fn : NULL;
    size_t nargs = cmd->u.cmd.nargs - 1, numin = nargs + (final != 0), i;
    tm_ccall *c;

    cmd->u.cmd.call = NULL;
    if (fn == NULL || numin > 16)
        return;
    if (fn->variadic ? numin + 1 < fn->nparams : numin != fn->nparams)
        return; /* the render reports the count */
    c = tm_alloc(&set->arena, sizeof(*c) + nargs * sizeof(c->args[0]));
    c->fn = fn;
    c->ident = args[0];
    c->final = (uint8_t)(final != 0);
    c->tfinal = final ? param_at(fn, numin - 1) : 0;
    c->nargs = (uint8_t)nargs;
    for (i = 0; i < nargs; i++) {
        tm_carg *a = &c->args[i];
        const tm_node *n = args[i + 1];
        a->n = n;
        a->t = param_at(fn, i);
        a->op = TM_A_NODE;
        switch (n->kind) {
        case N_BOOL:
        case N_NUMBER:
        case N_STRING:
            if (literal_arg(n, a->t, &a->k))
                a->op = TM_A_CONST;
            break;
        case N_DOT:
            a->op = TM_A_DOT;
            break;
        case N_FIELD:
            a->op = TM_A_FIELD;
            break;
        case N_VARIABLE:
            a->op = TM_A_VAR;
            break;
        case N_PIPE:
            a->op = TM_A_PIPE;
            break;
        default:
            break;
        }
    }
    for (i = 0; fn->special != FN_PLAIN && i < nargs; i++)
        if (c->args[i].op == TM_A_NODE)
            return; /* and/or: run_flat's, whose operands are all compiled */
    cmd->u.cmd.call = c;
}

/* A chain on `.` gets the slot of chains written so (eval_slot_chain). */
static void slot_field(wh_tmpl_set *set, tm_node *n)
{
    wh_buf key = WH_BUF_INIT;

    wh_buf_puts(&key, "field:");
    for (size_t i = 0; i < n->u.field.n; i++)
        wh_buf_printf(&key, ".%s", n->u.field.idents[i]);
    n->u.field.slot = memo_intern(set, &key) + 1;
    wh_buf_free(&key);
}

static void compile_node(tm_node *n, void *arg)
{
    if (n->kind == N_FIELD && n->u.field.n > 0)
        slot_field(arg, n);
    if (n->kind != N_PIPE)
        return;
    n->u.pipe.flat = n->u.pipe.ncmds > 0;
    for (size_t i = 0; i < n->u.pipe.ncmds; i++) {
        const tm_ccall *c;
        compile_call(arg, n->u.pipe.cmds[i], i > 0);
        if ((c = n->u.pipe.cmds[i]->u.cmd.call) == NULL)
            n->u.pipe.flat = 0;
        for (size_t j = 0; c != NULL && j < c->nargs; j++)
            if (c->args[j].op == TM_A_NODE)
                n->u.pipe.flat = 0;
    }
}

/* ---- compiling lists into flat programs (struct tm_op) ---- */

typedef struct prog_builder {
    struct tm_op *ops;
    size_t n, cap;
    unsigned ifs; /* ifs open inline */
} prog_builder;

static size_t emit(prog_builder *b, uint8_t op, const tm_node *n, const void *p)
{
    WH_GROW(b->ops, b->n, b->cap, 64);
    b->ops[b->n] = (struct tm_op){op, 0, n, p};
    return b->n++;
}

/* Emit the ops of a list's items: each item's ops start at at[i]; a run's
 * op jumps to where the item after it starts. */
static void compile_items(wh_tmpl_set *set, prog_builder *b, tm_node *list)
{
    size_t nitems = list->u.list.n, *at = wh_calloc(nitems + 1, sizeof(*at)), i;
    const tm_run *runs = list->u.list.runs;

    for (i = 0; i < nitems; i++) {
        tm_node *item = list->u.list.items[i];
        at[i] = b->n;
        if (runs != NULL && runs[i].end != 0)
            emit(b, OP_RUN, list->u.list.items[runs[i].end - 1], &runs[i]);
        switch (item->kind) {
        case N_TEXT:
            emit(b, OP_TEXT, item, item->u.text.s);
            break;
        case N_ACTION:
            emit(b, OP_ACTION, item, NULL);
            break;
        case N_IF:
            if (b->ifs < TM_PROG_MAX_IFS) {
                size_t at_if = emit(b, OP_IF, item, NULL), at_jump;
                b->ifs++;
                compile_items(set, b, item->u.branch.list);
                if (item->u.branch.else_list != NULL) {
                    at_jump = emit(b, OP_ENDIF_JUMP, item, NULL);
                    b->ops[at_if].jump = (uint32_t)b->n;
                    compile_items(set, b, item->u.branch.else_list);
                    emit(b, OP_ENDIF, item, NULL);
                    b->ops[at_jump].jump = (uint32_t)b->n;
                } else {
                    emit(b, OP_ENDIF, item, NULL);
                    b->ops[at_if].jump = (uint32_t)b->n;
                }
                b->ifs--;
                break;
            }
            __attribute__((fallthrough)); /* walked, its branches with programs of their own */
        default:
            emit(b, OP_NODE, item, NULL);
            if (item->kind == N_IF || item->kind == N_WITH || item->kind == N_RANGE) {
                compile_list(set, item->u.branch.list);
                if (item->u.branch.else_list != NULL)
                    compile_list(set, item->u.branch.else_list);
            }
            break;
        }
    }
    at[nitems] = b->n;
    for (i = 0; i < nitems; i++)
        if (runs != NULL && runs[i].end != 0)
            b->ops[at[i]].jump = (uint32_t)at[runs[i].end];
    free(at);
}

/* A list's program, replacing the one an earlier fold made (its OP_END's
 * jump is its slot in set->progs). */
static void compile_list(wh_tmpl_set *set, tm_node *list)
{
    prog_builder b = {NULL, 0, 0, 0};
    const struct tm_op *old = list->u.list.prog;
    size_t slot, end;

    compile_items(set, &b, list);
    end = emit(&b, OP_END, list, NULL);
    b.ops = wh_realloc(b.ops, b.n * sizeof(*b.ops));
    if (old != NULL) {
        while (old->op != OP_END)
            old++;
        slot = old->jump;
        free(set->progs[slot]);
    } else {
        WH_GROW(set->progs, set->nprogs, set->capprogs, 16);
        slot = set->nprogs++;
    }
    b.ops[end].jump = (uint32_t)slot;
    set->progs[slot] = b.ops;
    list->u.list.prog = b.ops;
}

void tm_compile_calls(wh_tmpl_set *set, tm_node *root)
{
    tm_node_walk(root, compile_node, set);
}
