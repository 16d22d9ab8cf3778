/*
 * ctx.c - what a template function sees while it runs (the context API of
 * wh_tmpl.h): recording an error, making a result in the render's arena, the
 * scratch buffer, the caller's pointer; and the scratch memory a render
 * (or the set's one-time folding, exec.c) runs in.  Every function library (builtins.c,
 * sprig*.c, helm.c) and value.c report through it, and exec.c reads what they
 * recorded; it depends on the arena only, so that none of them needs the
 * executor or the set to return a value or an error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

/* ---- errors ---- */

/* The first message of a render wins; later ones are dropped. */
static void record(wh_tmpl_ctx *ctx, const char *fmt, va_list ap)
{
    if (!ctx->failed) {
        vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
        ctx->failed = 1;
        ctx->located = 0;
    }
}

wh_code tm_fail(wh_tmpl_ctx *ctx, wh_code code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    record(ctx, fmt, ap);
    va_end(ap);
    return code;
}

wh_code wh_tmpl_errorf(wh_tmpl_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    record(ctx, fmt, ap);
    va_end(ap);
    return WH_E_RENDER;
}

/* ---- results and scratch ---- */

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

/* ---- a render's reusable memory (wh_tmpl_scratch) ---- */

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
    free(s->memo);
    wh_buf_free(&s->tmp);
    wh_buf_free(&s->tmp2);
    free(s);
}
