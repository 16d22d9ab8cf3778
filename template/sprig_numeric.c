/*
 * sprig_numeric.c - Sprig's numeric.go: arithmetic, int/float conversions with
 * spf13/cast's rules, min/max, floor/ceil/round, until/untilStep, seq,
 * toDecimal, and the float functions (add1f ... divf) with
 * shopspring/decimal's arithmetic.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>

#include "sprig_int.h"
#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_go.h"

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

/* strconv.ParseInt(fmt.Sprint(v), 8, 64), 0 when it fails */
FN(fn_todecimal)
{
    const char *s;
    size_t len, i = 0;
    uint64_t v = 0, limit;
    int neg;
    wh_code rc;
    (void)n;

    if ((rc = sprig_strval(ctx, &a[0], &s, &len)) != WH_OK)
        return rc;
    neg = len > 0 && s[0] == '-';
    i = len > 0 && (s[0] == '-' || s[0] == '+');
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (i == len)
        return sprig_ret_int64(out, 0);
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '7' || v > (limit - (uint64_t)(s[i] - '0')) / 8)
            return sprig_ret_int64(out, 0);
        v = v * 8 + (uint64_t)(s[i] - '0');
    }
    return sprig_ret_int64(out, neg ? (int64_t)(0 - v) : (int64_t)v);
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

/* ---- add1f, addf, subf, mulf, divf: shopspring/decimal between floats ----
 * Sprig turns every argument into a decimal (the shortest digits that read
 * back as its float64), adds, subtracts and multiplies them exactly, divides
 * to 16 places rounding half away from zero (decimal.DivisionPrecision), and
 * reads the exact result back as the nearest float64: so 0.1 + 0.2 is 0.3
 * here where float arithmetic would give 0.30000000000000004. */

/* value = v * 10^exp */
typedef struct {
    BIGNUM *v;
    long exp;
} decimal;

#define DECIMAL_DIV_PLACES 16

static BIGNUM *bn_new(void)
{
    BIGNUM *b = BN_new();
    if (!b)
        wh_oom(sizeof(BIGNUM *));
    return b;
}

static void bn_ok(int ok)
{
    if (!ok)
        wh_oom(0);
}

/* b *= 10^e, e >= 0 */
static void bn_scale10(BIGNUM *b, long e, BN_CTX *bc)
{
    BIGNUM *p, *ten;
    if (e <= 0)
        return;
    p = bn_new();
    ten = bn_new();
    bn_ok(BN_set_word(ten, 10) && BN_set_word(p, (BN_ULONG)e) && BN_exp(p, ten, p, bc) && BN_mul(b, b, p, bc));
    BN_free(p);
    BN_free(ten);
}

/* decimal.NewFromFloat(cast.ToFloat64(v)), which panics on NaN and the infinities */
static wh_code decimal_from(wh_tmpl_ctx *ctx, const wh_tmpl_value *v, decimal *d)
{
    double f = sprig_to_float64(v);
    wh_buf b = WH_BUF_INIT;
    char *e;
    size_t i, j = 0;
    if (!isfinite(f)) {
        wh_go_float(&b, f, 'g', -1);
        wh_code rc = wh_tmpl_errorf(ctx, "Cannot create a Decimal from %s", b.data);
        wh_buf_free(&b);
        return rc;
    }
    d->v = bn_new();
    d->exp = 0;
    if (f == 0)
        return WH_OK;
    /* "-d.ddde+XX": the digits without the point, the exponent of the last one */
    wh_go_float(&b, f, 'e', -1);
    wh_buf_putc(&b, 0);
    e = strchr(b.data, 'e');
    d->exp = strtol(e + 1, NULL, 10);
    for (i = 0; b.data + i < e; i++)
        if (b.data[i] == '.')
            d->exp -= e - (b.data + i) - 1;
        else
            b.data[j++] = b.data[i];
    b.data[j] = 0;
    bn_ok(BN_dec2bn(&d->v, b.data));
    wh_buf_free(&b);
    return WH_OK;
}

/* Both values at the smaller exponent. */
static void decimal_align(decimal *x, decimal *y, BN_CTX *bc)
{
    if (x->exp > y->exp) {
        bn_scale10(x->v, x->exp - y->exp, bc);
        x->exp = y->exp;
    } else {
        bn_scale10(y->v, y->exp - x->exp, bc);
        y->exp = x->exp;
    }
}

/* decimal.Div: the quotient truncated at 10^-16, then one more unit away
 * from zero when the remainder is at least half the divisor */
static wh_code decimal_div(wh_tmpl_ctx *ctx, decimal *x, decimal *y, BN_CTX *bc)
{
    long e = x->exp - y->exp + DECIMAL_DIV_PLACES;
    int neg = BN_is_negative(x->v) != BN_is_negative(y->v);
    BIGNUM *q = bn_new(), *r = bn_new();
    if (BN_is_zero(y->v)) {
        BN_free(q);
        BN_free(r);
        return wh_tmpl_errorf(ctx, "decimal division by 0");
    }
    if (e < 0)
        bn_scale10(y->v, -e, bc);
    else
        bn_scale10(x->v, e, bc);
    bn_ok(BN_div(q, r, x->v, y->v, bc));
    BN_set_negative(r, 0);
    BN_set_negative(y->v, 0);
    bn_ok(BN_lshift1(r, r));
    if (BN_cmp(r, y->v) >= 0) {
        if (neg)
            bn_ok(BN_sub(q, q, BN_value_one()));
        else
            bn_ok(BN_add(q, q, BN_value_one()));
    }
    BN_free(x->v);
    BN_free(r);
    x->v = q;
    x->exp = -DECIMAL_DIV_PLACES;
    return WH_OK;
}

/* decimal.Float64: the float64 nearest the exact value (strtod rounds so) */
static double decimal_float(const decimal *d)
{
    char *digits = BN_bn2dec(d->v);
    wh_buf b = WH_BUF_INIT;
    double f;
    if (!digits)
        wh_oom(0);
    wh_buf_printf(&b, "%se%ld", digits, d->exp);
    OPENSSL_free(digits);
    f = strtod(b.data, NULL);
    wh_buf_free(&b);
    return f;
}

/* Sprig's execDecimalOp: first `op` each of rest, from left to right */
static wh_code decimal_fold(wh_tmpl_ctx *ctx, char op, const wh_tmpl_value *first, const wh_tmpl_value *rest, size_t n,
                            wh_tmpl_value *out)
{
    decimal acc = {NULL, 0}, x = {NULL, 0};
    BN_CTX *bc = BN_CTX_new();
    wh_code rc;
    size_t i;
    if (!bc)
        wh_oom(0);
    if ((rc = decimal_from(ctx, first, &acc)) != WH_OK)
        goto out;
    for (i = 0; i < n; i++) {
        if ((rc = decimal_from(ctx, &rest[i], &x)) != WH_OK)
            goto out;
        switch (op) {
        case '+':
        case '-':
            decimal_align(&acc, &x, bc);
            bn_ok(op == '+' ? BN_add(acc.v, acc.v, x.v) : BN_sub(acc.v, acc.v, x.v));
            break;
        case '*':
            bn_ok(BN_mul(acc.v, acc.v, x.v, bc));
            acc.exp += x.exp;
            break;
        default:
            if ((rc = decimal_div(ctx, &acc, &x, bc)) != WH_OK)
                goto out;
        }
        BN_free(x.v);
        x.v = NULL;
    }
    *out = wh_tmpl_float(decimal_float(&acc));
out:
    BN_free(acc.v);
    BN_free(x.v);
    BN_CTX_free(bc);
    return rc;
}

FN(fn_add1f)
{
    wh_tmpl_value one = wh_tmpl_int(1);
    (void)n;
    return decimal_fold(ctx, '+', &a[0], &one, 1, out);
}

FN(fn_addf)
{
    wh_tmpl_value zero = wh_tmpl_float(0);
    return decimal_fold(ctx, '+', &zero, a, n, out);
}

FN(fn_subf)
{
    return decimal_fold(ctx, '-', &a[0], a + 1, n - 1, out);
}

FN(fn_mulf)
{
    return decimal_fold(ctx, '*', &a[0], a + 1, n - 1, out);
}

FN(fn_divf)
{
    return decimal_fold(ctx, '/', &a[0], a + 1, n - 1, out);
}

const wh_tmpl_func tm_sprig_numeric_funcs[] = {
    {"add", fn_add, "v*", WH_TMPL_FN_PURE},
    {"add1", fn_add1, "v", WH_TMPL_FN_PURE},
    {"add1f", fn_add1f, "v", WH_TMPL_FN_PURE},
    {"addf", fn_addf, "v*", WH_TMPL_FN_PURE},
    {"atoi", fn_atoi, "s", WH_TMPL_FN_PURE},
    {"biggest", fn_max, "vv*", WH_TMPL_FN_PURE},
    {"ceil", fn_ceil, "v", WH_TMPL_FN_PURE},
    {"div", fn_div, "vv", WH_TMPL_FN_PURE},
    {"divf", fn_divf, "vv*", WH_TMPL_FN_PURE},
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
    {"mulf", fn_mulf, "vv*", WH_TMPL_FN_PURE},
    {"round", fn_round, "vif*", WH_TMPL_FN_PURE},
    {"seq", fn_seq, "i*", WH_TMPL_FN_PURE},
    {"sub", fn_sub, "vv", WH_TMPL_FN_PURE},
    {"subf", fn_subf, "vv*", WH_TMPL_FN_PURE},
    {"toDecimal", fn_todecimal, "v", WH_TMPL_FN_PURE},
    {"until", fn_until, "i", WH_TMPL_FN_PURE},
    {"untilStep", fn_untilstep, "iii", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_numeric_nfuncs = sizeof(tm_sprig_numeric_funcs) / sizeof(tm_sprig_numeric_funcs[0]);
