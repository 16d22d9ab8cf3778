/*
 * wh_go_strconv.c - strconv as webhookd needs it (see wh_go.h): ParseBool,
 * and strconv's and encoding/json's float formatting: the digits first (exact for integral values below 2^53, else the
 * shortest printf precision that round-trips), then Go's 'e' / 'f' / 'g'
 * layout.  The one float formatter of the tree: YAML output (wh_yaml.c), the
 * template engine's print and toJson, the Go JSON writer (wh_go_json.c) and
 * validation messages all print through it.  And Quote: the template engine's
 * %q, printf and error texts (template/) and validation's messages
 * (handlers/validate/problems.c) quote strings as Go does, here.
 */
#include "wh_chars.h"
#include "wh_go.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest decimal digits of f that read back as f (as a float when bits is 32: f is one): digits (no dot) and the
 * decimal exponent `dp` (value = 0.DIGITS * 10^dp). */
static int shortest_digits(double f, int bits, char *digits, int *dp)
{
    char buf[40];
    int prec, nd = 0, e;
    char *p;

    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, f);
        if (bits == 32 ? strtof(buf, NULL) == (float)f : strtod(buf, NULL) == f)
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

/* The shortest digits of finite f >= 0 laid out as fmt ('e', 'f'; 'g' is
 * resolved by the caller).  `min_exp` is the exponent's minimum number of
 * digits: 2 for strconv, 1 for encoding/json, which trims "e-07" to "e-7". */
static void shortest(wh_buf *out, double f, int bits, char fmt, int min_exp)
{
    char digits[40];
    int nd, dp, i;

    if (f == 0) {
        digits[0] = '0';
        digits[1] = 0;
        nd = 1;
        dp = 1;
    } else if (bits == 64 && f < 9007199254740992.0 && f == floor(f)) {
        nd = integral_digits(f, digits, &dp);
    } else {
        nd = shortest_digits(f, bits, digits, &dp);
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
        wh_buf_printf(out, "e%c%0*d", exp < 0 ? '-' : '+', min_exp, exp < 0 ? -exp : exp);
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

void wh_go_float(wh_buf *out, double f, char fmt, int prec)
{
    wh_go_float_bits(out, f, fmt, prec, 64);
}

void wh_go_float_bits(wh_buf *out, double f, char fmt, int prec, int bits)
{
    if (bits == 32)
        f = (float)f; /* strconv rounds to the nearest float first */
    if (isnan(f)) {
        wh_buf_puts(out, "NaN");
        return;
    }
    if (isinf(f)) {
        wh_buf_puts(out, f > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (prec >= 0) { /* a fixed precision: C's printf agrees with strconv for 'e' and 'f' */
        char spec[8] = {'%', '.', '*', fmt, 0}, buf[400];
        snprintf(buf, sizeof(buf), spec, prec > 300 ? 300 : prec, f);
        wh_buf_puts(out, buf);
        return;
    }
    if (signbit(f))
        wh_buf_putc(out, '-');
    shortest(out, fabs(f), bits, fmt, 2);
}

void wh_go_json_float(wh_buf *out, double f)
{
    double a = fabs(f);

    if (signbit(f)) /* -0 too, as Go prints it */
        wh_buf_putc(out, '-');
    shortest(out, a, 64, a != 0 && (a < 1e-6 || a >= 1e21) ? 'e' : 'f', 1);
}

int wh_go_parse_bool(const char *s)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    size_t i;

    if (s == NULL)
        return -1;
    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* ---- Quote ---- */

/* A rune Go's unicode.IsPrint would accept (approximation outside ASCII:
 * C1 controls, surrogates and a few format characters are not printable). */
int wh_go_is_print(unsigned r)
{
    if (r < 0x80)
        return r >= 0x20 && r < 0x7f;
    if (r < 0xa0 || r == 0xad)
        return 0;
    if (r >= 0x2028 && r <= 0x202e)
        return 0;
    if (r >= 0x2060 && r <= 0x206f)
        return 0;
    if (r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) || r >= 0xe0000)
        return 0;
    if (r >= 0xe000 && r <= 0xf8ff)
        return 0;
    return 1;
}

void wh_go_quote(wh_buf *out, const char *s, size_t len, char q, int ascii_only)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;

    wh_buf_putc(out, q);
    while (i < len) {
        unsigned r;
        size_t l, run = i;
        /* printable ASCII other than the quote and backslash goes out as is:
         * append whole runs of it rather than rune by rune (found 8 bytes
         * at a time for '"': what JSON escapes, and DEL) */
        if (q == '"')
            while (run + 8 <= len) {
                uint64_t x = wh_load8((const unsigned char *)s + run),
                         m = wh_json_special8(x) | (((x ^ WH_BYTES8(0x7f)) - WH_BYTES8(1)) & WH_BYTES8(0x80));
                if (m != 0) {
                    run += (size_t)__builtin_ctzll(m) >> 3;
                    break;
                }
                run += 8;
            }
        while (run < len && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f && s[run] != q &&
               s[run] != '\\')
            run++;
        if (run > i) {
            wh_buf_append(out, s + i, run - i);
            i = run;
            continue;
        }
        l = wh_utf8_decode((const unsigned char *)s + i, len - i, &r);
        if (l == 0) {
            unsigned char c = (unsigned char)s[i];
            wh_buf_puts(out, "\\x");
            wh_buf_putc(out, hex[c >> 4]);
            wh_buf_putc(out, hex[c & 15]);
            i++;
            continue;
        }
        i += l;
        if (r == (unsigned char)q || r == '\\') {
            wh_buf_putc(out, '\\');
            wh_buf_putc(out, (char)r);
            continue;
        }
        if (wh_go_is_print(r) && (!ascii_only || r < 0x80)) {
            wh_buf_append(out, s + i - l, l);
            continue;
        }
        switch (r) {
        case '\a':
            wh_buf_puts(out, "\\a");
            break;
        case '\b':
            wh_buf_puts(out, "\\b");
            break;
        case '\f':
            wh_buf_puts(out, "\\f");
            break;
        case '\n':
            wh_buf_puts(out, "\\n");
            break;
        case '\r':
            wh_buf_puts(out, "\\r");
            break;
        case '\t':
            wh_buf_puts(out, "\\t");
            break;
        case '\v':
            wh_buf_puts(out, "\\v");
            break;
        default:
            if (r < ' ' || r == 0x7f) {
                wh_buf_puts(out, "\\x");
                wh_buf_putc(out, hex[r >> 4]);
                wh_buf_putc(out, hex[r & 15]);
            } else if (r < 0x10000) {
                wh_buf_printf(out, "\\u%04x", r);
            } else {
                wh_buf_printf(out, "\\U%08x", r);
            }
        }
    }
    wh_buf_putc(out, q);
}
