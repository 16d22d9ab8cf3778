/*
 * wh_inject_quantity.c - Kubernetes resource quantities in canonical form.
 *
 * The goldens (and the JSON inside the overrides annotation) hold quantities
 * as Go's resource.Quantity prints them after a round trip: the input's
 * format family is kept (binary, decimal SI, decimal exponent) and the
 * largest suffix that leaves an integer mantissa is chosen.
 */
#include "wh_inject_merge.h"

#include <ctype.h>
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

wh_code wh_inject_quantity_canonical(const char *text, char *out, size_t out_len, wh_err *err)
{
    const char *p = text, *suffix;
    int negative = 0, e10 = 0, bin = 0, ndigits = 0, x, i;
    enum qfmt fmt = Q_DECIMAL_SI;
    u128 m = 0;
    char digits[48];

    if (*p == '+' || *p == '-')
        negative = (*p++ == '-');
    for (; isdigit((unsigned char)*p); p++, ndigits++) {
        if (m > U128_MAX_DIV10)
            goto invalid;
        m = m * 10 + (u128)(*p - '0');
    }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, ndigits++) {
            if (m > U128_MAX_DIV10)
                goto invalid;
            m = m * 10 + (u128)(*p - '0');
            e10--;
        }
    }
    if (ndigits == 0)
        goto invalid;
    suffix = p;
    if (*suffix == '\0') {
        fmt = Q_DECIMAL_SI;
    } else if (suffix[1] == 'i' && suffix[2] == '\0' && strchr("KMGTPE", suffix[0]) != NULL) {
        fmt = Q_BINARY_SI;
        bin = (int)(strchr("KMGTPE", suffix[0]) - "KMGTPE") + 1;
    } else if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix[1] != '\0') {
        const char *q = suffix + 1;
        int sign = 1, ev = 0;
        if (*q == '+' || *q == '-')
            sign = (*q++ == '-') ? -1 : 1;
        if (*q == '\0')
            goto invalid;
        for (; *q != '\0'; q++) {
            if (!isdigit((unsigned char)*q) || ev > 10000)
                goto invalid;
            ev = ev * 10 + (*q - '0');
        }
        fmt = Q_DECIMAL_EXP;
        e10 += sign * ev;
    } else if (suffix[1] == '\0' && strchr("numkMGTPE", suffix[0]) != NULL) {
        static const int exps[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
        fmt = Q_DECIMAL_SI;
        e10 += exps[strchr("numkMGTPE", suffix[0]) - "numkMGTPE"];
    } else {
        goto invalid;
    }
    for (i = 0; i < bin; i++)
        if (mul_small(&m, 1024) != 0)
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
    return wh_err_set(err, WH_E_INVALID,
                      "quantities must match the regular expression "
                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': \"%s\"",
                      text);
}
