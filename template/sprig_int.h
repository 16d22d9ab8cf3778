/*
 * sprig_int.h - what the files of Sprig's functions (template/sprig*.c) share:
 * the function signature, spf13/cast's conversions, Go's emptiness and kinds.
 * Each file's table is declared in tmpl_int.h, beside the other libraries'
 * tables: set.c registers them, the files never see each other's tables.
 */
#ifndef WH_SPRIG_INT_H
#define WH_SPRIG_INT_H

#include <stdint.h>

#include "tmpl_int.h"

/* A template function of the registry (wh_tmpl_fn) defined in one line. */
#define FN(name) static wh_code name(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)

/* Results: a bool, an int (Go int) or an int64. */
wh_code sprig_ret_bool(wh_tmpl_value *out, int b);
wh_code sprig_ret_int(wh_tmpl_value *out, int64_t i);
wh_code sprig_ret_int64(wh_tmpl_value *out, int64_t i);
/* Sprig's pairs of functions (regexFind / mustRegexFind, toJson / mustToJson,
 * ...): the must form fails with `rc`, the other forgets the error and
 * returns `zero`, the zero value of its result.  WH_OK passes through. */
wh_code sprig_or_zero(wh_tmpl_ctx *ctx, wh_code rc, int must, wh_tmpl_value zero, wh_tmpl_value *out);
/* Go's nil (an invalid value, nil interface, nil map/slice/pointer). */
int sprig_is_nil(const wh_tmpl_value *v);
/* Sprig's empty(): the zero value of its type. */
int sprig_empty(const wh_tmpl_value *v);
/* reflect.Kind's name of v ("string", "int", "map", ...). */
const char *sprig_kind_name(const wh_tmpl_value *v);
/* A string argument as Sprig's strval sees it (fmt.Sprint of other types). */
wh_code sprig_strval(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, const char **s, size_t *len);
/* spf13/cast's ToInt64 and ToFloat64 (0 when it cannot convert). */
int64_t sprig_to_int64(const wh_tmpl_value *v);
double sprig_to_float64(const wh_tmpl_value *v);
/* A NUL-terminated copy of len bytes at s in the render's arena. */
const char *sprig_arena_str(wh_tmpl_ctx *ctx, const char *s, size_t len);
/* reflect.DeepEqual. */
int sprig_deep_equal(wh_tmpl_ctx *ctx, const wh_tmpl_value *x, const wh_tmpl_value *y);

#endif
