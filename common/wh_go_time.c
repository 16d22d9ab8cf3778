/*
 * wh_go_time.c - Go's time.Duration.String, which istiod's templates print
 * for ProxyConfig's durations (formatDuration, .AsDuration; see
 * handlers/inject/wh_inject_render_data.c): "0s", "1.5µs", "1m0s", "2h3m4.5s".
 */
#include "wh_go.h"

/* `v` divided by 10^prec as Go's fmtFrac writes it: ".ddd" without its
 * trailing zeros, nothing when the fraction is zero. */
static void put_frac(wh_buf *out, unsigned long long v, int prec)
{
    char digits[10];
    int n = prec;

    while (n > 0 && v % 10 == 0) {
        v /= 10;
        n--;
    }
    if (n == 0)
        return;
    for (int i = n - 1; i >= 0; i--, v /= 10)
        digits[i] = (char)('0' + v % 10);
    wh_buf_putc(out, '.');
    wh_buf_append(out, digits, (size_t)n);
}

void wh_go_duration(wh_buf *out, int64_t ns)
{
    /* the magnitude as unsigned, so that the minimum int64 has one too */
    unsigned long long u = ns < 0 ? 0ULL - (unsigned long long)ns : (unsigned long long)ns;

    if (ns < 0)
        wh_buf_putc(out, '-');
    if (u == 0) {
        wh_buf_puts(out, "0s");
    } else if (u < 1000ULL) {
        wh_buf_printf(out, "%lluns", u);
    } else if (u < 1000000ULL) {
        wh_buf_printf(out, "%llu", u / 1000ULL);
        put_frac(out, u % 1000ULL, 3);
        wh_buf_puts(out, "µs");
    } else if (u < 1000000000ULL) {
        wh_buf_printf(out, "%llu", u / 1000000ULL);
        put_frac(out, u % 1000000ULL, 6);
        wh_buf_puts(out, "ms");
    } else {
        unsigned long long s = u / 1000000000ULL, m = s / 60, h = m / 60;
        if (h > 0)
            wh_buf_printf(out, "%lluh", h);
        if (m > 0)
            wh_buf_printf(out, "%llum", m % 60);
        wh_buf_printf(out, "%llu", s % 60);
        put_frac(out, u % 1000000000ULL, 9);
        wh_buf_putc(out, 's');
    }
}
