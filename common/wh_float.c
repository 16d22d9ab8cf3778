/*
 * wh_float.c - Go's shortest float formatting (see wh_float.h): the digits
 * first (exact for integral values below 2^53, else the shortest printf
 * precision that round-trips), then Go's 'e' / 'f' / 'g' layout.
 */
#include "wh_float.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Shortest decimal digits of f that read back as f: digits (no dot) and the
 * decimal exponent `dp` (value = 0.DIGITS * 10^dp). */
static int shortest_digits(double f, char *digits, int *dp)
{
    char buf[40];
    int prec, nd = 0, e;
    char *p;

    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    p = buf;
    if (*p == '-')
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    e = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    *dp = e + 1;
    return nd;
}

/* Decimal digits of an integer-valued |f| < 2^53 (exact, no trailing-zero trim). */
static int integral_digits(double f, char *digits, int *dp)
{
    char tmp[24];
    uint64_t u = (uint64_t)f;
    int n = 0, i;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    for (i = 0; i < n; i++)
        digits[i] = tmp[n - 1 - i];
    *dp = n;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = 0;
    return n;
}

void wh_float_format(wh_buf *out, double f, char fmt)
{
    char digits[40];
    int nd, dp, i;

    if (signbit(f))
        wh_buf_putc(out, '-');
    f = fabs(f);
    if (f == 0) {
        digits[0] = '0';
        digits[1] = 0;
        nd = 1;
        dp = 1;
    } else if (f < 9007199254740992.0 && f == floor(f)) {
        nd = integral_digits(f, digits, &dp);
    } else {
        nd = shortest_digits(f, digits, &dp);
    }
    /* the longest layout below: digits, |dp| zeros, "0.", "e-308" */
    wh_buf_reserve(out, (size_t)nd + (size_t)abs(dp) + 8);
    if (fmt == 'g') {
        /* strconv's shortest %g: exponent form below 1e-4 or from 1e+06 on */
        int exp = dp - 1;
        fmt = (exp < -4 || exp >= 6) ? 'e' : 'f';
    }
    if (fmt == 'e') {
        int exp = dp - 1;
        wh_buf_putc(out, digits[0]);
        if (nd > 1) {
            wh_buf_putc(out, '.');
            wh_buf_append(out, digits + 1, (size_t)nd - 1);
        }
        wh_buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    /* 'f' with the shortest digits */
    if (dp <= 0) {
        wh_buf_puts(out, "0.");
        for (i = 0; i < -dp; i++)
            wh_buf_putc(out, '0');
        wh_buf_append(out, digits, (size_t)nd);
    } else if (dp >= nd) {
        wh_buf_append(out, digits, (size_t)nd);
        for (i = nd; i < dp; i++)
            wh_buf_putc(out, '0');
    } else {
        wh_buf_append(out, digits, (size_t)dp);
        wh_buf_putc(out, '.');
        wh_buf_append(out, digits + dp, (size_t)(nd - dp));
    }
}
