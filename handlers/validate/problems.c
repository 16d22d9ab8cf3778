/*
 * problems.c - the collector every validator writes into, plus the accessors
 * over a decoded spec.  istiod accumulates every problem in a hashicorp
 * multierror and keeps warnings apart; the joined text has to read the same,
 * so the formatting rules (plain single error, "N errors occurred:" list,
 * Go's %q and %v) live here once.
 */
#include "wh_alloc.h"
#include "wh_go.h"
#include "wh_validate_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wh_vctx_init(wh_vctx *c, const char *ns, const char *name)
{
    memset(c, 0, sizeof(*c));
    c->ns = ns ? ns : "";
    c->name = name ? name : "";
}

static void strs_free(wh_vstrs *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

void wh_vctx_free(wh_vctx *c)
{
    strs_free(&c->errs);
    strs_free(&c->warns);
    strs_free(&c->arena);
}

/* Takes ownership of `str`. */
static void strs_push(wh_vstrs *s, char *str)
{
    WH_GROW(s->v, s->n, s->cap, 8);
    s->v[s->n++] = str;
}

void wh_verr(wh_vctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strs_push(&c->errs, wh_vasprintf(fmt, ap));
    va_end(ap);
    c->first_err_listed = 0;
}

void wh_verr_listed(wh_vctx *c, const char *fmt, ...)
{
    va_list ap;
    size_t before = c->errs.n;

    va_start(ap, fmt);
    strs_push(&c->errs, wh_vasprintf(fmt, ap));
    va_end(ap);
    c->first_err_listed = before == 0;
}

void wh_vwarn(wh_vctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strs_push(&c->warns, wh_vasprintf(fmt, ap));
    va_end(ap);
}

void wh_vadd_err(wh_vctx *c, char *owned_msg)
{
    if (owned_msg != NULL) {
        strs_push(&c->errs, owned_msg);
        c->first_err_listed = 0;
    }
}

void wh_vadd_warn(wh_vctx *c, char *owned_msg)
{
    if (owned_msg != NULL)
        strs_push(&c->warns, owned_msg);
}

void wh_vwarn_drop(wh_vctx *c, size_t mark)
{
    while (c->warns.n > mark)
        free(c->warns.v[--c->warns.n]);
}

void wh_verr_drop(wh_vctx *c, size_t mark)
{
    while (c->errs.n > mark)
        free(c->errs.v[--c->errs.n]);
}

void wh_vquote(wh_buf *out, const char *s)
{
    wh_go_quote(out, s ? s : "", s ? strlen(s) : 0, '"', 0);
}

const char *wh_vq(wh_vctx *c, const char *s)
{
    wh_buf b = WH_BUF_INIT;
    char *str;

    wh_vquote(&b, s);
    str = wh_buf_steal(&b, NULL);
    strs_push(&c->arena, str);
    return str;
}

const char *wh_vown(wh_vctx *c, char *owned)
{
    strs_push(&c->arena, owned);
    return owned;
}

const char *wh_vfmt(wh_vctx *c, const char *fmt, ...)
{
    va_list ap;
    char *str;

    va_start(ap, fmt);
    str = wh_vasprintf(fmt, ap);
    va_end(ap);
    strs_push(&c->arena, str);
    return str;
}

static size_t hash_str(const char *s)
{
    size_t h = (size_t)1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
    return h;
}

void wh_vset_init(wh_vset *s, size_t expected)
{
    memset(s, 0, sizeof(*s));
    s->cap = 16;
    while (s->cap < 2 * expected + 2)
        s->cap <<= 1;
    s->keys = wh_calloc(s->cap, sizeof(*s->keys));
    s->vals = wh_calloc(s->cap, sizeof(*s->vals));
}

static size_t vset_slot(const wh_vset *s, const char *key)
{
    size_t i = hash_str(key) & (s->cap - 1);

    while (s->keys[i] != NULL && strcmp(s->keys[i], key) != 0)
        i = (i + 1) & (s->cap - 1);
    return i;
}

int wh_vset_put(wh_vset *s, const char *key, size_t val, size_t *old)
{
    size_t i;

    if (2 * (s->n + 1) > s->cap) {
        wh_vset bigger;
        size_t j;
        wh_vset_init(&bigger, s->n + 1);
        for (j = 0; j < s->cap; j++)
            if (s->keys[j] != NULL) {
                size_t k = vset_slot(&bigger, s->keys[j]);
                bigger.keys[k] = s->keys[j];
                bigger.vals[k] = s->vals[j];
                bigger.n++;
            }
        wh_vset_free(s);
        *s = bigger;
    }
    i = vset_slot(s, key);
    if (s->keys[i] != NULL) {
        if (old != NULL)
            *old = s->vals[i];
        s->vals[i] = val;
        return 1;
    }
    s->keys[i] = key;
    s->vals[i] = val;
    s->n++;
    return 0;
}

int wh_vset_has(const wh_vset *s, const char *key)
{
    return s->keys != NULL && s->keys[vset_slot(s, key)] != NULL;
}

void wh_vset_free(wh_vset *s)
{
    free(s->keys);
    free(s->vals);
    memset(s, 0, sizeof(*s));
}

void wh_vctx_error_text(const wh_vctx *c, wh_buf *out)
{
    size_t i;

    if (c->errs.n == 1 && !c->first_err_listed) {
        wh_buf_puts(out, c->errs.v[0]);
        return;
    }
    if (c->errs.n == 1) {
        wh_buf_printf(out, "1 error occurred:\n\t* %s\n\n", c->errs.v[0]);
        return;
    }
    wh_buf_printf(out, "%zu errors occurred:", c->errs.n);
    for (i = 0; i < c->errs.n; i++)
        wh_buf_printf(out, "\n\t* %s", c->errs.v[i]);
    wh_buf_puts(out, "\n\n");
}

/* ------------------------------------------------------------------ accessors */

const json_t *wh_vget(const json_t *o, const char *key)
{
    if (o == NULL || !json_is_object(o))
        return NULL;
    return json_object_get(o, key);
}

const char *wh_vstr(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

const json_t *wh_vobj(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    return json_is_object(v) ? v : NULL;
}

const json_t *wh_varr(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    return json_is_array(v) && json_array_size(v) > 0 ? v : NULL;
}

size_t wh_vlen(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    if (json_is_array(v))
        return json_array_size(v);
    if (json_is_object(v))
        return json_object_size(v);
    return 0;
}

long long wh_vint(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

double wh_vnum(const json_t *o, const char *key)
{
    const json_t *v = wh_vget(o, key);
    const char *s = json_string_value(v); /* a non-finite double, as decode.c keeps it */

    if (s != NULL)
        return strcmp(s, "NaN") == 0 ? NAN : strcmp(s, "+Inf") == 0 ? INFINITY : -INFINITY;
    return json_is_number(v) ? json_number_value(v) : 0;
}

int wh_vbool(const json_t *o, const char *key)
{
    return json_is_true(wh_vget(o, key));
}

const char *wh_venum(const json_t *o, const char *key, const char *zero_name)
{
    const json_t *v = wh_vget(o, key);
    if (v == NULL)
        return zero_name;
    return json_is_string(v) ? json_string_value(v) : "";
}
