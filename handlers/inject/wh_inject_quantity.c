/*
 * wh_inject_quantity.c - Kubernetes resource quantities in canonical form.
 *
 * The goldens (and the JSON inside the overrides annotation) hold quantities
 * as Go's resource.Quantity prints them after a round trip: the input's
 * format family is kept (binary, decimal SI, decimal exponent) and the
 * largest suffix that leaves an integer mantissa is chosen.
 */
#include "wh_inject_quantity.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

enum qfmt { Q_DECIMAL_SI, Q_BINARY_SI, Q_DECIMAL_EXP };

#define U128_MAX_DIV10 ((~(u128)0) / 10)

static int mul_small(u128 *v, unsigned m)
{
    if (*v > (~(u128)0) / m)
        return -1;
    *v *= m;
    return 0;
}

static void u128_str(u128 v, char *out)
{
    char tmp[48];
    int n = 0, i;

    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

static const char *decimal_suffix(int exp)
{
    switch (exp) {
    case -9:
        return "n";
    case -6:
        return "u";
    case -3:
        return "m";
    case 0:
        return "";
    case 3:
        return "k";
    case 6:
        return "M";
    case 9:
        return "G";
    case 12:
        return "T";
    case 15:
        return "P";
    case 18:
        return "E";
    }
    return NULL;
}

static int floor3(int e)
{
    return e >= 0 ? (e / 3) * 3 : -(((-e) + 2) / 3) * 3;
}

/* out = sign digits suffix, truncated to out_len like snprintf (every pod
 * has a few quantities: snprintf's format parsing was most of their cost). */
static void put_quantity(char *out, size_t out_len, int negative, const char *digits, const char *suffix)
{
    const char *parts[3] = {negative ? "-" : "", digits, suffix};
    size_t n = 0, i, len;

    if (out_len == 0)
        return;
    for (i = 0; i < 3; i++) {
        len = strlen(parts[i]);
        if (len > out_len - 1 - n)
            len = out_len - 1 - n;
        memcpy(out + n, parts[i], len);
        n += len;
    }
    out[n] = '\0';
}

static const char QUANTITY_FORMAT[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/* The exponent of an e/E suffix ("e3", "E-2"): strconv.ParseInt(..., 10, 64),
 * then Go's int32() conversion; -1 when ParseInt fails. */
static int suffix_exponent(const char *p, const char *end, int32_t *out)
{
    int negative = 0;
    unsigned long long u = 0;

    if (p < end && (*p == '+' || *p == '-'))
        negative = (*p++ == '-');
    if (p == end)
        return -1;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p) || u > (1ULL << 63) / 10)
            return -1;
        u = u * 10 + (unsigned long long)(*p - '0');
    }
    if (u > (negative ? 1ULL << 63 : (1ULL << 63) - 1))
        return -1;
    *out = (int32_t)(uint32_t)(negative ? 0 - u : u);
    return 0;
}

/* resource.ParseQuantity over text[0..len): sign, mantissa (binary suffixes
 * already multiplied in), power of ten and format family.  Returns 0; 1 for a
 * quantity Go takes whose value is beyond 128 bits here (or its exponent past
 * 10^±10000); -1 when Go refuses it, with Go's error text in *why.  Like Go's,
 * the number needs no digit ("+", ".", "-.Ki" are zero) unless its scale is
 * below nano, where Go's inf.Dec reparse refuses it; the suffix is a run of
 * [eEinumkKMGTP], a sign and digits, read whole and then looked up. */
static int parse_quantity(const char *text, size_t len, int *negative_out, u128 *m_out, int *e10_out,
                          enum qfmt *fmt_out, const char **why)
{
    const char *p = text, *end = text + len, *suffix, *q;
    int negative = 0, e10 = 0, bin = 0, ndigits = 0, big = 0, i;
    enum qfmt fmt = Q_DECIMAL_SI;
    int32_t scale = 0;
    size_t sn;
    u128 m = 0;

    *why = QUANTITY_FORMAT;
    if (len == 0)
        return -1;
    if (*p == '+' || *p == '-')
        negative = (*p++ == '-');
    for (int frac = 0; p < end && (isdigit((unsigned char)*p) || (*p == '.' && !frac)); p++) {
        if (*p == '.') {
            frac = 1;
            continue;
        }
        ndigits++;
        if (m > U128_MAX_DIV10)
            big = 1;
        else
            m = m * 10 + (u128)(*p - '0');
        e10 -= frac;
    }
    suffix = p;
    for (q = p; q < end && *q != '\0' && strchr("eEinumkKMGTP", *q) != NULL; q++)
        ;
    if (q < end && (*q == '+' || *q == '-'))
        q++;
    while (q < end && isdigit((unsigned char)*q))
        q++;
    if (q != end)
        return -1;
    sn = (size_t)(end - suffix);
    if (sn == 0) {
        fmt = Q_DECIMAL_SI;
    } else if (sn == 2 && suffix[1] == 'i' && strchr("KMGTPE", suffix[0]) != NULL) {
        fmt = Q_BINARY_SI;
        bin = (int)(strchr("KMGTPE", suffix[0]) - "KMGTPE") + 1;
    } else if (sn == 1 && strchr("numkMGTPE", suffix[0]) != NULL) {
        static const int exps[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
        fmt = Q_DECIMAL_SI;
        scale = exps[strchr("numkMGTPE", suffix[0]) - "numkMGTPE"];
    } else if (sn > 1 && (suffix[0] == 'e' || suffix[0] == 'E') && suffix_exponent(suffix + 1, end, &scale) == 0) {
        fmt = Q_DECIMAL_EXP;
    } else {
        *why = "unable to parse quantity's suffix";
        return -1;
    }
    if (ndigits == 0 && scale < -9) {
        *why = "unable to parse numeric part of quantity";
        return -1;
    }
    *why = NULL;
    if (big || scale > 10000 || scale < -10000)
        return 1;
    e10 += scale;
    for (i = 0; i < bin; i++)
        if (mul_small(&m, 1024) != 0)
            return 1;
    *negative_out = negative;
    *m_out = m;
    *e10_out = e10;
    *fmt_out = fmt;
    return 0;
}

const char *wh_inject_quantity_error(const char *text, size_t len)
{
    int negative, e10;
    enum qfmt fmt;
    const char *why;
    u128 m;

    return parse_quantity(text, len, &negative, &m, &e10, &fmt, &why) < 0 ? why : NULL;
}

wh_code wh_inject_quantity_canonical(const char *text, char *out, size_t out_len, wh_err *err)
{
    int negative, e10, x, i;
    enum qfmt fmt;
    u128 m;
    char digits[48];
    const char *why;

    if (parse_quantity(text, strlen(text), &negative, &m, &e10, &fmt, &why) != 0)
        goto invalid;
    if (m == 0) {
        snprintf(out, out_len, "0");
        return WH_OK;
    }
    while (m % 10 == 0) {
        m /= 10;
        e10++;
    }
    if (e10 < -9) { /* Go rounds anything finer than 1n up to the next nano */
        u128 div = 1;
        for (i = e10; i < -9; i++)
            if (mul_small(&div, 10) != 0)
                goto invalid;
        m = (m + div - 1) / div;
        e10 = -9;
        while (m % 10 == 0) {
            m /= 10;
            e10++;
        }
    }
    if (fmt == Q_BINARY_SI) {
        u128 v = m;
        int k = 0;
        static const char *const bsuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        for (i = 0; i < e10; i++)
            if (mul_small(&v, 10) != 0)
                goto invalid;
        if (e10 >= 0 && v >= 1024) {
            while (k < 6 && v % 1024 == 0) {
                v /= 1024;
                k++;
            }
            u128_str(v, digits);
            put_quantity(out, out_len, negative, digits, bsuffix[k]);
            return WH_OK;
        }
        fmt = Q_DECIMAL_SI;
    }
    x = floor3(e10);
    if (fmt == Q_DECIMAL_SI && x > 18)
        x = 18;
    for (i = x; i < e10; i++)
        if (mul_small(&m, 10) != 0)
            goto invalid;
    u128_str(m, digits);
    if (fmt == Q_DECIMAL_SI)
        put_quantity(out, out_len, negative, digits, decimal_suffix(x));
    else if (x == 0)
        put_quantity(out, out_len, negative, digits, "");
    else
        snprintf(out, out_len, "%s%se%d", negative ? "-" : "", digits, x);
    return WH_OK;
invalid:
    return wh_err_set(err, WH_E_INVALID, "%s: \"%s\"", QUANTITY_FORMAT, text);
}

/* ceil(n / d) for d > 0. */
static u128 ceil_div(u128 n, u128 d)
{
    return n / d + (n % d != 0);
}

wh_code wh_inject_quantity_cores(const char *text, long long *out)
{
    int negative, e10, i;
    enum qfmt fmt;
    u128 m, milli, scale = 1;
    const char *why;

    if (text == NULL || parse_quantity(text, strlen(text), &negative, &m, &e10, &fmt, &why) != 0)
        return WH_E_INVALID;
    /* the milli value, rounded up as resource.Quantity.MilliValue does */
    e10 += 3;
    if (e10 >= 0) {
        for (i = 0; i < e10; i++)
            if (mul_small(&m, 10) != 0)
                return WH_E_INVALID;
        milli = m;
    } else {
        for (i = 0; i < -e10 && scale <= m; i++)
            mul_small(&scale, 10);
        milli = i < -e10 ? (m != 0) : ceil_div(m, scale);
    }
    if (milli > (u128)1000 * 0x7fffffff)
        return WH_E_INVALID;
    /* then whole cores: ceil(milli / 1000) */
    *out = negative ? -(long long)(milli / 1000) : (long long)ceil_div(milli, 1000);
    return WH_OK;
}
