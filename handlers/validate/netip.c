/*
 * netip.c - Go's net/netip.ParseAddr and ParsePrefix, which every IP check
 * of istiod's validation calls (agent.ValidateIPAddress / ValidateIPSubnet,
 * security.ValidateIPs, netutil.IsValidIPAddress): which strings are
 * addresses (an IPv6 zone is allowed, "fe80::1%eth0"), and for one that is
 * not, Go's own error text with the same "(at ...)" position, e.g.
 * ParseAddr("1:2::3::4"): multiple :: in address (at ":4"), which istiod
 * embeds in its messages ("bad CIDR range (...): netip.ParsePrefix(...): ...").
 * Written from Go 1.26's net/netip; cases: tests/validate/fixtures/85-go-netip.yaml.
 */
#include "wh_chars.h"
#include "wh_validate_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wh_alloc.h"

/* parseAddrError.Error(): ParseAddr("<in>"): <msg>[ (at "<at>")].  Returns 0 (not an address). */
static int wh_vnetip_fail(wh_buf *err, const char *msg, const char *in, const char *at)
{
    if (err == NULL)
        return 0;
    wh_buf_puts(err, "ParseAddr(");
    wh_vquote(err, in);
    wh_buf_puts(err, "): ");
    wh_buf_puts(err, msg);
    if (at != NULL && *at != '\0') {
        wh_buf_puts(err, " (at ");
        wh_vquote(err, at);
        wh_buf_putc(err, ')');
    }
    return 0;
}

/* parseIPv4Fields: the dotted quad in[off, end); errors name the whole `in`. */
static int ipv4_fields(wh_buf *err, const char *in, size_t off, size_t end)
{
    const char *s = in + off;
    size_t n = end - off, i;
    int val = 0, pos = 0, digits = 0;

    for (i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (digits == 1 && val == 0)
                return wh_vnetip_fail(err, "IPv4 field has octet with leading zero", in, NULL);
            val = val * 10 + (s[i] - '0');
            digits++;
            if (val > 255)
                return wh_vnetip_fail(err, "IPv4 field has value >255", in, NULL);
        } else if (s[i] != '.' || i == 0 || i == n - 1 || s[i - 1] == '.') {
            /* at: the unparsed rest of the quad (a zone after it is not part of it) */
            char *at = wh_strndup(s + i, n - i);
            if (s[i] != '.')
                wh_vnetip_fail(err, "unexpected character", in, at);
            else
                wh_vnetip_fail(err, "IPv4 field must have at least one digit", in, at);
            free(at);
            return 0;
        } else {
            if (pos == 3)
                return wh_vnetip_fail(err, "IPv4 address too long", in, NULL);
            pos++;
            val = digits = 0;
        }
    }
    if (pos < 3)
        return wh_vnetip_fail(err, "IPv4 address too short", in, NULL);
    return 4;
}

/* parseIPv6.  `s` walks the address part (up to the zone's '%', `end`); the
 * "(at ...)" text is the unparsed rest of that part. */
static int ipv6(wh_buf *err, const char *in, int *zoned)
{
    const char *pct = strchr(in, '%'), *end = pct ? pct : in + strlen(in), *s = in;
    char *rest = NULL;
    int i = 0, ellipsis = -1, rc = 6;

    if (pct != NULL && pct[1] == '\0')
        return wh_vnetip_fail(err, "zone must be a non-empty string", in, NULL);
    if (zoned != NULL)
        *zoned = pct != NULL;
    rest = wh_strndup(in, (size_t)(end - in)); /* the address part as a string, for "(at ...)" */
#define AT(p) (rest + ((p)-in))
    if (end - s >= 2 && s[0] == ':' && s[1] == ':') {
        ellipsis = 0;
        s += 2;
        if (s == end)
            goto out;
    }
    while (i < 16) {
        const char *p = s;
        unsigned acc = 0;
        for (; p < end && wh_hex_digit((unsigned char)*p) >= 0; p++) {
            acc = (acc << 4) + (unsigned)wh_hex_digit((unsigned char)*p);
            if (p - s > 3) {
                rc = wh_vnetip_fail(err, "each group must have 4 or less digits", in, AT(s));
                goto out;
            }
        }
        if (p == s) {
            rc = wh_vnetip_fail(err, "each colon-separated field must have at least one digit", in, AT(s));
            goto out;
        }
        if (p < end && *p == '.') {
            if (ellipsis < 0 && i != 12) {
                rc = wh_vnetip_fail(err, "embedded IPv4 address must replace the final 2 fields of the address", in,
                                    AT(s));
                goto out;
            }
            if (i + 4 > 16) {
                rc = wh_vnetip_fail(err, "too many hex fields to fit an embedded IPv4 at the end of the address", in,
                                    AT(s));
                goto out;
            }
            if (ipv4_fields(err, in, (size_t)(s - in), (size_t)(end - in)) == 0) {
                rc = 0;
                goto out;
            }
            s = end;
            i += 4;
            break;
        }
        i += 2;
        s = p;
        if (s == end)
            break;
        if (*s != ':') {
            rc = wh_vnetip_fail(err, "unexpected character, want colon", in, AT(s));
            goto out;
        }
        if (s + 1 == end) {
            rc = wh_vnetip_fail(err, "colon must be followed by more characters", in, AT(s));
            goto out;
        }
        s++;
        if (*s == ':') {
            if (ellipsis >= 0) {
                rc = wh_vnetip_fail(err, "multiple :: in address", in, AT(s));
                goto out;
            }
            ellipsis = i;
            s++;
            if (s == end)
                break;
        }
    }
    if (s != end)
        rc = wh_vnetip_fail(err, "trailing garbage after address", in, AT(s));
    else if (i < 16 && ellipsis < 0)
        rc = wh_vnetip_fail(err, "address string too short", in, NULL);
    else if (i == 16 && ellipsis >= 0)
        rc = wh_vnetip_fail(err, "the :: must expand to at least one field of zeros", in, NULL);
#undef AT
out:
    free(rest);
    return rc;
}

int wh_vnetip_addr(const char *s, int *zoned, wh_buf *err)
{
    const char *p;

    if (zoned != NULL)
        *zoned = 0;
    for (p = s; *p; p++) {
        if (*p == '.')
            return ipv4_fields(err, s, 0, strlen(s));
        if (*p == ':')
            return ipv6(err, s, zoned);
        if (*p == '%')
            return wh_vnetip_fail(err, "missing IPv6 address", s, NULL);
    }
    return wh_vnetip_fail(err, "unable to parse IP", s, NULL);
}

/* parsePrefixError's message after "netip.ParsePrefix(<quoted s>): ".  Returns 0 (not a prefix). */
static int wh_vnetip_prefix_fail(wh_buf *err, const char *msg, const char *quoted)
{
    if (err != NULL) {
        wh_buf_puts(err, msg);
        if (quoted != NULL)
            wh_vquote(err, quoted);
    }
    return 0;
}

int wh_vnetip_prefix(const char *s, wh_buf *err)
{
    const char *slash = strrchr(s, '/'), *bits;
    char *addr;
    int family, zoned = 0, ok = 0;
    size_t mark = err != NULL ? err->len : 0;
    unsigned long long n = 0;
    int bad;

    if (err != NULL) {
        wh_buf_puts(err, "netip.ParsePrefix(");
        wh_vquote(err, s);
        wh_buf_puts(err, "): ");
    }
    if (slash == NULL)
        return wh_vnetip_prefix_fail(err, "no '/'", NULL);
    addr = wh_strndup(s, (size_t)(slash - s));
    bits = slash + 1;
    bad = *bits == '\0';
    if ((family = wh_vnetip_addr(addr, &zoned, err)) == 0)
        goto out;
    if (family == 6 && zoned) {
        wh_vnetip_prefix_fail(err, "IPv6 zones cannot be present in a prefix", NULL);
        goto out;
    }
    /* strconv.Atoi (no sign, no leading zero: ParsePrefix refuses them first); beyond int64 it fails */
    for (const char *q = bits; *q && !bad; q++) {
        bad =
            *q < '0' || *q > '9' || (q == bits && *q == '0' && q[1] != '\0') || n > (unsigned long long)INT64_MAX / 10;
        n = n * 10 + (unsigned long long)(*q - '0');
        bad = bad || n > (unsigned long long)INT64_MAX;
    }
    if (bad) {
        wh_vnetip_prefix_fail(err, "bad bits after slash: ", bits);
        goto out;
    }
    if (n > (family == 4 ? 32 : 128)) {
        wh_vnetip_prefix_fail(err, "prefix length out of range", NULL);
        goto out;
    }
    ok = 1;
out:
    if (ok && err != NULL) {
        err->len = mark;
        if (err->data != NULL)
            err->data[mark] = '\0';
    }
    free(addr);
    return ok;
}
