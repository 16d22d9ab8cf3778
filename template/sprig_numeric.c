/*
 * sprig_numeric.c - Sprig's numeric.go: arithmetic, int/float conversions with
 * spf13/cast's rules, min/max, floor/ceil/round, until/untilStep, seq.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sprig_int.h"

FN(fn_atoi)
{
    int64_t i = 0;
    /* strconv.Atoi: decimal only, optional sign */
    char buf[64], *end;
    if (a[0].len > 0 && a[0].len < sizeof(buf)) {
        memcpy(buf, a[0].u.s, a[0].len);
        buf[a[0].len] = 0;
        errno = 0;
        if (!isspace((unsigned char)buf[0]) && (isdigit((unsigned char)buf[0]) || buf[0] == '-' || buf[0] == '+')) {
            long long v = strtoll(buf, &end, 10);
            if (*end == 0 && errno == 0)
                i = v;
        }
    }
    return sprig_ret_int(out, i);
}

FN(fn_int)
{
    return sprig_ret_int(out, sprig_to_int64(&a[0]));
}

FN(fn_int64)
{
    return sprig_ret_int64(out, sprig_to_int64(&a[0]));
}

FN(fn_float64)
{
    *out = wh_tmpl_float(sprig_to_float64(&a[0]));
    return WH_OK;
}

FN(fn_add1)
{
    return sprig_ret_int64(out, (int64_t)((uint64_t)sprig_to_int64(&a[0]) + 1));
}

FN(fn_add)
{
    uint64_t s = 0;
    size_t i;
    for (i = 0; i < n; i++)
        s += (uint64_t)sprig_to_int64(&a[i]);
    return sprig_ret_int64(out, (int64_t)s);
}

FN(fn_sub)
{
    return sprig_ret_int64(out, (int64_t)((uint64_t)sprig_to_int64(&a[0]) - (uint64_t)sprig_to_int64(&a[1])));
}

FN(fn_mul)
{
    uint64_t p = (uint64_t)sprig_to_int64(&a[0]);
    size_t i;
    for (i = 1; i < n; i++)
        p *= (uint64_t)sprig_to_int64(&a[i]);
    return sprig_ret_int64(out, (int64_t)p);
}

FN(fn_div)
{
    int64_t x = sprig_to_int64(&a[0]), y = sprig_to_int64(&a[1]);
    if (y == 0)
        return wh_tmpl_errorf(ctx, "runtime error: integer divide by zero");
    if (x == INT64_MIN && y == -1)
        return sprig_ret_int64(out, x);
    return sprig_ret_int64(out, x / y);
}

FN(fn_mod)
{
    int64_t x = sprig_to_int64(&a[0]), y = sprig_to_int64(&a[1]);
    if (y == 0)
        return wh_tmpl_errorf(ctx, "runtime error: integer divide by zero");
    if (y == -1)
        return sprig_ret_int64(out, 0);
    return sprig_ret_int64(out, x % y);
}

/* max, min (int64 comparisons; pick NULL) and maxf, minf (pick: math.Max,
 * math.Min) over every argument, first to last, as spf13/cast reads them. */
static wh_code extreme(const wh_tmpl_value *a, size_t n, int sign, double (*pick)(double, double), wh_tmpl_value *out)
{
    int64_t m = sprig_to_int64(&a[0]);
    double f = sprig_to_float64(&a[0]);

    for (size_t i = 1; i < n; i++) {
        int64_t x = sprig_to_int64(&a[i]);
        if (sign > 0 ? x > m : x < m)
            m = x;
        if (pick != NULL)
            f = pick(f, sprig_to_float64(&a[i]));
    }
    if (pick == NULL)
        return sprig_ret_int64(out, m);
    *out = wh_tmpl_float(f);
    return WH_OK;
}

FN(fn_max)
{
    return extreme(a, n, 1, NULL, out);
}

FN(fn_min)
{
    return extreme(a, n, -1, NULL, out);
}

FN(fn_maxf)
{
    return extreme(a, n, 1, fmax, out);
}

FN(fn_minf)
{
    return extreme(a, n, -1, fmin, out);
}

FN(fn_ceil)
{
    *out = wh_tmpl_float(ceil(sprig_to_float64(&a[0])));
    return WH_OK;
}

FN(fn_floor)
{
    *out = wh_tmpl_float(floor(sprig_to_float64(&a[0])));
    return WH_OK;
}

/* sprig's round(a, precision, roundOn=.5) */
FN(fn_round)
{
    double val = sprig_to_float64(&a[0]), round_on = n > 2 ? sprig_to_float64(&a[2]) : 0.5, pow10, digit, r;
    int64_t places = sprig_to_int64(&a[1]);

    pow10 = pow(10, (double)places);
    digit = pow10 * val;
    r = digit - floor(digit);
    (void)r;
    {
        double intpart;
        double frac = modf(digit, &intpart);
        if (frac >= round_on)
            r = ceil(digit);
        else
            r = floor(digit);
    }
    *out = wh_tmpl_float(r / pow10);
    return WH_OK;
}

static wh_code until_step(wh_tmpl_ctx *ctx, int64_t start, int64_t stop, int64_t step, wh_tmpl_value *out)
{
    const wh_tmpl_type *t = NULL;
    static const wh_tmpl_type int_slice = {.name = "[]int", .kind = WH_TMPL_LIST, .elem = &wh_tmpl_type_int};
    int64_t i, count = 0;
    wh_code rc;

    t = &int_slice;
    *out = wh_tmpl_list_new(ctx, 8, t);
    if (stop < start) {
        if (step >= 0)
            return WH_OK;
        for (i = start; i > stop; i += step) {
            if (++count > 1000000)
                return wh_tmpl_errorf(ctx, "until: too many elements");
            if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_int(i))) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    if (step <= 0)
        return WH_OK;
    for (i = start; i < stop; i += step) {
        if (++count > 1000000)
            return wh_tmpl_errorf(ctx, "until: too many elements");
        if ((rc = wh_tmpl_list_push(ctx, out, wh_tmpl_int(i))) != WH_OK)
            return rc;
    }
    return WH_OK;
}

FN(fn_until)
{
    return until_step(ctx, 0, a[0].u.i, a[0].u.i < 0 ? -1 : 1, out);
}

FN(fn_untilstep)
{
    return until_step(ctx, a[0].u.i, a[1].u.i, a[2].u.i, out);
}

/* Go's int arithmetic wraps */
static int64_t wrap_add(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x + (uint64_t)y);
}

/* Sprig's seq, like GNU seq: [START [STEP]] END inclusive, counting down when
 * END < START (a positive STEP then gives nothing); the numbers joined by
 * spaces, any other argument count gives "" */
FN(fn_seq)
{
    int64_t start = 1, step = 1, end, stop, i, count = 0;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);

    if (n == 0 || n > 3) {
        *out = wh_tmpl_strn("", 0);
        return WH_OK;
    }
    end = a[n - 1].u.i;
    if (n > 1)
        start = a[0].u.i;
    if (end < start)
        step = -1;
    stop = wrap_add(end, step);
    if (n == 3) {
        if (end < start && a[1].u.i > 0) {
            *out = wh_tmpl_strn("", 0);
            return WH_OK;
        }
        step = a[1].u.i;
    }
    /* untilStep(start, stop, step) */
    for (i = start; stop < start ? step < 0 && i > stop : step > 0 && i < stop; i = wrap_add(i, step)) {
        if (++count > 1000000)
            return wh_tmpl_errorf(ctx, "seq: too many elements");
        wh_buf_printf(b, count > 1 ? " %lld" : "%lld", (long long)i);
    }
    return tm_ret_buf(ctx, out, b);
}

const wh_tmpl_func tm_sprig_numeric_funcs[] = {
    {"add", fn_add, "v*", WH_TMPL_FN_PURE},
    {"add1", fn_add1, "v", WH_TMPL_FN_PURE},
    {"atoi", fn_atoi, "s", WH_TMPL_FN_PURE},
    {"biggest", fn_max, "vv*", WH_TMPL_FN_PURE},
    {"ceil", fn_ceil, "v", WH_TMPL_FN_PURE},
    {"div", fn_div, "vv", WH_TMPL_FN_PURE},
    {"float64", fn_float64, "v", WH_TMPL_FN_PURE},
    {"floor", fn_floor, "v", WH_TMPL_FN_PURE},
    {"int", fn_int, "v", WH_TMPL_FN_PURE},
    {"int64", fn_int64, "v", WH_TMPL_FN_PURE},
    {"max", fn_max, "vv*", WH_TMPL_FN_PURE},
    {"maxf", fn_maxf, "vv*", WH_TMPL_FN_PURE},
    {"min", fn_min, "vv*", WH_TMPL_FN_PURE},
    {"minf", fn_minf, "vv*", WH_TMPL_FN_PURE},
    {"mod", fn_mod, "vv", WH_TMPL_FN_PURE},
    {"mul", fn_mul, "vv*", WH_TMPL_FN_PURE},
    {"round", fn_round, "vif*", WH_TMPL_FN_PURE},
    {"seq", fn_seq, "i*", WH_TMPL_FN_PURE},
    {"sub", fn_sub, "vv", WH_TMPL_FN_PURE},
    {"until", fn_until, "i", WH_TMPL_FN_PURE},
    {"untilStep", fn_untilstep, "iii", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_numeric_nfuncs = sizeof(tm_sprig_numeric_funcs) / sizeof(tm_sprig_numeric_funcs[0]);
