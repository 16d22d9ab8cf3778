/*
 * names.c - the small checks every kind reuses: DNS-1123 labels (Istio's
 * flavour, upper case allowed), wildcard domains and FQDNs with istiod's
 * exact messages, IPs and CIDRs, label maps, ports, port names, protocols,
 * durations, percentages, host matching, and a syntax check for RE2 regexes.
 */
#include "wh_alloc.h"
#include "wh_validate_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static int label_n(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

int wh_vis_dns1123_label(const char *s)
{
    return label_n(s, strlen(s));
}

int wh_vis_wildcard_label(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return 0;
    if (s[0] != '*')
        return label_n(s, n);
    if (n == 1)
        return 1;
    if (label_n(s + 1, n - 1))
        return 1;
    return s[1] == '-' && label_n(s + 2, n - 2);
}

int wh_vis_ipv4(const char *s)
{
    return wh_vnetip_addr(s, NULL, NULL) == 4;
}
int wh_vis_ip(const char *s)
{
    return wh_vnetip_addr(s, NULL, NULL) != 0;
}

/* strconv.Atoi succeeds: optional sign, digits, fits in int64. */
static int go_atoi_ok(const char *s)
{
    char *end;

    if (*s == '+' || *s == '-')
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    (void)strtoll(s, &end, 10);
    return *end == '\0' && errno == 0;
}

/* ValidateDNS1123Labels over `domain` (the part after a first label). */
static char *dns1123_labels(wh_vctx *c, const char *domain)
{
    const char *tld = strrchr(domain, '.');
    const char *p = domain;

    tld = tld ? tld + 1 : domain;
    if (go_atoi_ok(tld))
        return wh_asprintf("domain name %s invalid (top level domain %s cannot be all-numeric)", wh_vq(c, domain),
                           wh_vq(c, tld));
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (dot == NULL && n == 0)
            return NULL; /* a single trailing dot */
        if (!label_n(p, n)) {
            char *l = wh_strndup(p, n);
            char *m = wh_asprintf("domain name %s invalid (label %s invalid)", wh_vq(c, domain), wh_vq(c, l));
            free(l);
            return m;
        }
        if (dot == NULL)
            return NULL;
        p = dot + 1;
    }
}

char *wh_vmsg_wildcard_domain(wh_vctx *c, const char *host)
{
    char *m;
    const char *dot;
    size_t n;

    if (strlen(host) > 255)
        return wh_asprintf("domain name %s too long (max 255)", wh_vq(c, host));
    if (*host == '\0')
        return wh_asprintf("empty domain name not allowed");
    dot = strchr(host, '.');
    n = dot ? (size_t)(dot - host) : strlen(host);
    if (!wh_vis_wildcard_label(host, n)) {
        char *l = wh_strndup(host, n);
        m = wh_asprintf("domain name %s invalid (label %s invalid)", wh_vq(c, host), wh_vq(c, l));
        free(l);
        return m;
    }
    if (dot != NULL)
        return dns1123_labels(c, dot + 1);
    return NULL;
}

char *wh_vmsg_fqdn(wh_vctx *c, const char *host)
{
    if (strlen(host) > 255)
        return wh_asprintf("domain name %s too long (max 255)", wh_vq(c, host));
    if (*host == '\0')
        return wh_asprintf("empty domain name not allowed");
    return dns1123_labels(c, host);
}

char *wh_vmsg_partial_wildcard(wh_vctx *c, const char *host)
{
    if (strchr(host, '*') != NULL && strlen(host) != 1 && strncmp(host, "*.", 2) != 0)
        return wh_asprintf("partial wildcard %s not allowed", wh_vq(c, host));
    return NULL;
}

char *wh_vmsg_ip_subnet(wh_vctx *c, const char *s)
{
    const char *slash = strchr(s, '/');

    /* exactly one '/' makes a CIDR block; anything else must be a plain address */
    if (slash != NULL && strchr(slash + 1, '/') == NULL)
        return wh_vnetip_prefix(s, NULL) ? NULL : wh_asprintf("%s is not a valid CIDR block", s);
    return wh_vis_ip(s) ? NULL : wh_asprintf("%s is not a valid IP", s);
}

void wh_vcheck_ip(wh_vctx *c, const char *s)
{
    if (!wh_vis_ip(s))
        wh_verr(c, "%s is not a valid IP", s);
}

char *wh_vmsg_unix_address(wh_vctx *c, const char *path)
{
    size_t n = strlen(path);

    if (n == 0)
        return wh_asprintf("unix address must not be empty");
    if (path[0] == '@')
        return NULL;
    if (path[0] != '/' || path[n - 1] == '/')
        return wh_asprintf("%s is not an absolute path to a file", path);
    return NULL;
}

/* ------------------------------------------------------------------ labels */

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static int qualified_name(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* A DNS-1123 subdomain in Istio's regex form (labels joined by dots). */
static int subdomain(const char *s, size_t n)
{
    size_t start = 0, i;

    for (i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            size_t l = i - start;
            size_t j;
            if (l == 0 || !is_alnum(s[start]) || !is_alnum(s[i - 1]))
                return 0;
            for (j = start; j < i; j++)
                if (!is_alnum(s[j]) && s[j] != '-')
                    return 0;
            start = i + 1;
        }
    }
    return 1;
}

void wh_vcheck_labels(wh_vctx *c, const json_t *labels)
{
    const char *k;
    json_t *v;

    if (!json_is_object(labels))
        return;
    json_object_foreach((json_t *)labels, k, v)
    {
        const char *slash = strchr(k, '/');
        const char *name = slash ? slash + 1 : k;
        const char *val = json_string_value(v);

        if ((slash && (strchr(name, '/') != NULL || !subdomain(k, (size_t)(slash - k)))) ||
            !qualified_name(name, strlen(name)))
            wh_verr_listed(c, "invalid tag key: %s", wh_vq(c, k));
        else if (slash && (size_t)(slash - k) > 253)
            wh_verr_listed(c, "invalid tag key: %s (DNS prefix is too long)", wh_vq(c, k));
        else if (strlen(name) > 63)
            wh_verr_listed(c, "invalid tag key: %s (name is too long)", wh_vq(c, k));
        if (val != NULL && *val != '\0' && !qualified_name(val, strlen(val)))
            wh_verr_listed(c, "invalid tag value: %s", wh_vq(c, val));
    }
}

/* ------------------------------------------------------------------ ports, protocols, durations */

void wh_vcheck_port(wh_vctx *c, long long port)
{
    if (port < 1 || port > 65535)
        wh_verr(c, "port number %lld must be in the range 1..65535", port);
}

void wh_vcheck_port_name(wh_vctx *c, const char *name)
{
    if (!wh_vis_dns1123_label(name))
        wh_verr(c, "invalid port name: %s", name);
}

int wh_vproto_parse(const char *s)
{
    static const struct {
        const char *name;
        int p;
    } t[] = {{"tcp", WH_PROTO_TCP},           {"udp", WH_PROTO_UDP},     {"grpc", WH_PROTO_GRPC},
             {"grpc-web", WH_PROTO_GRPC_WEB}, {"http", WH_PROTO_HTTP},   {"http_proxy", WH_PROTO_HTTP_PROXY},
             {"http2", WH_PROTO_HTTP2},       {"https", WH_PROTO_HTTPS}, {"tls", WH_PROTO_TLS},
             {"mongo", WH_PROTO_MONGO},       {"redis", WH_PROTO_REDIS}, {"mysql", WH_PROTO_MYSQL}};
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcasecmp(s, t[i].name) == 0)
            return t[i].p;
    return WH_PROTO_UNSUPPORTED;
}

int wh_vproto_is_http(int p)
{
    return p == WH_PROTO_HTTP || p == WH_PROTO_HTTP2 || p == WH_PROTO_HTTP_PROXY || p == WH_PROTO_GRPC ||
           p == WH_PROTO_GRPC_WEB;
}

int wh_vproto_is_tls(int p)
{
    return p == WH_PROTO_HTTPS || p == WH_PROTO_TLS;
}

int wh_vproto_is_tcp(int p)
{
    return p == WH_PROTO_TCP || p == WH_PROTO_HTTPS || p == WH_PROTO_TLS || p == WH_PROTO_MONGO ||
           p == WH_PROTO_REDIS || p == WH_PROTO_MYSQL;
}

void wh_vcheck_protocol(wh_vctx *c, const char *proto)
{
    if (*proto != '\0' && wh_vproto_parse(proto) == WH_PROTO_UNSUPPORTED)
        wh_verr(c, "unsupported protocol: %s", proto);
}

void wh_vcheck_duration(wh_vctx *c, const json_t *dur)
{
    int64_t ns;

    if (!json_is_string(dur) || wh_vparse_duration(json_string_value(dur), &ns, NULL) != 0)
        return;
    if (ns < 1000000)
        wh_verr(c, "duration must be greater than 1ms");
    else if (ns % 1000000 != 0)
        wh_verr(c, "only durations to ms precision are supported");
}

void wh_vcheck_percent(wh_vctx *c, long long v)
{
    if (v < 0 || v > 100)
        wh_verr(c, "percentage %lld is not in range 0..100", v);
}

/* ------------------------------------------------------------------ hosts */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int wh_vhost_matches(const char *a, const char *b)
{
    int aw = a[0] == '*', bw = b[0] == '*';

    if (aw && bw)
        return strlen(a) < strlen(b) ? has_suffix(b + 1, a + 1) : has_suffix(a + 1, b + 1);
    if (aw)
        return has_suffix(b, a + 1);
    if (bw)
        return has_suffix(a, b + 1);
    return strcmp(a, b) == 0;
}

int wh_vhost_subset_of(const char *a, const char *b)
{
    if (a[0] == '*')
        return b[0] == '*' && has_suffix(a + 1, b + 1);
    if (b[0] == '*')
        return has_suffix(a, b + 1);
    return strcmp(a, b) == 0;
}

/* ------------------------------------------------------------------ RE2 syntax */

/* Go's regexp/syntax reports an error together with the piece of the expression it was reading
 * (the escape, the class, the repetition operators, ...); re_error keeps both. */
typedef struct {
    const char *msg, *from;
    size_t len;
} re_error;

static void re_fail(re_error *e, const char *msg, const char *from, const char *to)
{
    if (e->msg != NULL)
        return;
    e->msg = msg;
    e->from = from;
    e->len = (size_t)(to - from);
}

static int re_hex(char ch)
{
    return isxdigit((unsigned char)ch) != 0;
}

/* p points at the backslash; returns the end of the escape (or of what was read before an error). */
static const char *re_escape(const char *p, re_error *e)
{
    const char *s = p++;

    if (*p == '\0') {
        re_fail(e, "trailing backslash at end of expression", p, p);
        return p;
    }
    if (strchr("aftnrvdDsSwW", *p) != NULL)
        return p + 1;
    if (*p == '0' || (*p >= '1' && *p <= '7' && p[1] >= '0' && p[1] <= '7')) {
        int i;
        p++;
        for (i = 1; i < 3 && *p >= '0' && *p <= '7'; i++)
            p++;
        return p;
    }
    if (*p == 'x') {
        p++;
        if (*p == '\0') {
            re_fail(e, "invalid escape sequence", s, p);
            return p;
        }
        if (*p == '{') {
            int n = 0;
            p++;
            for (;;) {
                char ch = *p;
                if (ch == '\0') {
                    re_fail(e, "invalid escape sequence", s, p);
                    return p;
                }
                p++;
                if (ch == '}')
                    break;
                if (!re_hex(ch)) {
                    re_fail(e, "invalid escape sequence", s, p);
                    return p;
                }
                n++;
            }
            if (n == 0)
                re_fail(e, "invalid escape sequence", s, p);
            return p;
        }
        {
            int ok = re_hex(*p);
            p++;
            if (*p != '\0') {
                ok = ok && re_hex(*p);
                p++;
            } else {
                ok = 0;
            }
            if (!ok)
                re_fail(e, "invalid escape sequence", s, p);
            return p;
        }
    }
    if (*p == 'p' || *p == 'P') {
        p++;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            if (end == NULL) {
                re_fail(e, "invalid character class range", s, p + strlen(p));
                return p + strlen(p);
            }
            return end + 1;
        }
        /* a one-letter name is one of Unicode's general categories */
        if (*p == '\0' || strchr("CLMNPSZ", *p) == NULL) {
            re_fail(e, "invalid character class range", s, *p ? p + 1 : p);
            return *p ? p + 1 : p;
        }
        return p + 1;
    }
    if ((unsigned char)*p < 0x80 && !isalnum((unsigned char)*p) && *p != '_')
        return p + 1;
    re_fail(e, "invalid escape sequence", s, p + 1);
    return p + 1;
}

/* p points at '['; returns the end of the class. */
static const char *re_class(const char *p, re_error *e)
{
    const char *whole = p++;
    int first = 1;

    if (*p == '^')
        p++;
    for (;;) {
        const char *lo_at = p;
        if (*p == '\0') {
            re_fail(e, "missing closing ]", whole, p);
            return p;
        }
        if (*p == ']' && !first)
            return p + 1;
        first = 0;
        if (p[0] == '[' && p[1] == ':') {
            const char *end = strstr(p + 2, ":]");
            if (end != NULL) {
                p = end + 2;
                continue;
            }
        }
        if (*p == '\\') {
            p = re_escape(p, e);
            if (e->msg != NULL)
                return p;
        } else {
            p++;
        }
        if (p[0] == '-' && p[1] != ']' && p[1] != '\0') {
            unsigned char lo = (unsigned char)p[-1], hi = (unsigned char)p[1];
            if (p[1] != '\\' && lo_at[0] != '\\' && hi < lo) {
                re_fail(e, "invalid character class range", lo_at, p + 2);
                return p;
            }
            if (p[1] == '\\') {
                p = re_escape(p + 1, e);
                if (e->msg != NULL)
                    return p;
            } else {
                p += 2;
            }
        }
    }
}

/* 1 and the end when p starts a valid {n}, {n,}, {n,m}; Go treats anything else as a literal '{'. */
static int re_repeat(const char *p, const char **end, int *bad, long *weight)
{
    long lo, hi;
    char *e;

    *bad = 0;
    if (!isdigit((unsigned char)p[1]) || (p[1] == '0' && isdigit((unsigned char)p[2])))
        return 0; /* Go takes no leading zeros */
    lo = strtol(p + 1, &e, 10);
    hi = lo;
    if (*e == ',') {
        e++;
        if (*e == '}')
            hi = -1;
        else if (isdigit((unsigned char)*e) && !(e[0] == '0' && isdigit((unsigned char)e[1])))
            hi = strtol(e, &e, 10);
        else
            return 0;
    }
    if (*e != '}')
        return 0;
    if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
        *bad = 1;
    *weight = hi >= 0 ? hi : lo; /* what Go's repeatIsValid multiplies */
    if (lo < 2 && hi < 2)
        *weight = -*weight - 1; /* no size check for {0}, {1}, {0,1}, {1,}: marked negative */
    *end = e + 1;
    return 1;
}

static int re_word(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* p points at "(?"; a flag group "(?flags)" sets *flags_only.  Returns the end of what was read. */
static const char *re_perl_group(const char *p, re_error *e, int *flags_only)
{
    const char *s = p, *t = p + 2;
    int sign = 1, saw = 0;

    *flags_only = 0;
    if ((strlen(s) > 4 && t[0] == 'P' && t[1] == '<') || (strlen(s) > 3 && t[0] == '<')) {
        const char *name = t[0] == 'P' ? t + 2 : t + 1, *end = strchr(name, '>'), *q;
        if (end == NULL) {
            re_fail(e, "invalid named capture", s, s + strlen(s));
            return s + strlen(s);
        }
        for (q = name; q < end && re_word(*q); q++)
            ;
        if (end == name || q != end)
            re_fail(e, "invalid named capture", s, end + 1);
        return end + 1;
    }
    while (*t) {
        char ch = *t++;
        if (ch == 'i' || ch == 'm' || ch == 's' || ch == 'U') {
            saw = 1;
        } else if (ch == '-') {
            if (sign < 0)
                break;
            sign = -1;
            saw = 0;
        } else if (ch == ':' || ch == ')') {
            if (sign < 0 && !saw)
                break;
            *flags_only = ch == ')';
            return t;
        } else {
            break;
        }
    }
    re_fail(e, "invalid or unsupported Perl syntax", s, t);
    return t;
}

void wh_vcheck_regex(wh_vctx *c, const char *re, const char *where)
{
    const char *p = re, *last_rep = NULL;
    int depth = 0, can_repeat = 0;
    re_error e = {NULL, NULL, 0};
    /* Go refuses nested counted repetitions whose counts multiply past 1000 (repeatIsValid): the largest
     * product inside each open group, and that of the last item (what a repetition applies to) */
    long group_max[1002], last_item[1002];

    if (strlen(re) > 1024) {
        wh_verr(c, "%s: regex is too large, max length allowed is 1024", wh_vq(c, where));
        return;
    }
    group_max[0] = last_item[0] = 1;
    while (*p && e.msg == NULL) {
        const char *rep = NULL, *op = p, *end;
        int bad, flags_only, item = 1;
        long weight = 1;
        switch (*p) {
        case '\\':
            if (p[1] == 'Q') {
                /* literal text up to \E or the end */
                const char *lit = p + 2, *stop = strstr(lit, "\\E");
                p = stop != NULL ? stop + 2 : lit + strlen(lit);
                if ((stop != NULL ? stop : p) != lit)
                    can_repeat = 1;
                else
                    item = 0;
                break;
            }
            if (p[1] == 'C') {
                re_fail(&e, "invalid escape sequence", p, p + 2);
                break;
            }
            if (p[1] != '\0' && strchr("bBAz", p[1]) != NULL) {
                p += 2;
                can_repeat = 1;
                break;
            }
            p = re_escape(p, &e);
            can_repeat = 1;
            break;
        case '[':
            p = re_class(p, &e);
            can_repeat = 1;
            break;
        case '(':
            item = 0;
            if (p[1] == '?') {
                p = re_perl_group(p, &e, &flags_only);
                if (flags_only)
                    break; /* Go only changes its flags: what came before can still repeat */
            } else {
                p++;
            }
            if (++depth > 1000) {
                re_fail(&e, "expression nests too deeply", re, re + strlen(re));
                break;
            }
            group_max[depth] = last_item[depth] = 1;
            can_repeat = 0;
            break;
        case ')':
            if (depth == 0) {
                re_fail(&e, "unexpected )", re, re + strlen(re));
                break;
            }
            weight = group_max[depth];
            depth--;
            p++;
            can_repeat = 1;
            break;
        case '|':
            p++;
            can_repeat = 0;
            item = 0;
            break;
        case '*':
        case '+':
        case '?':
            item = 0;
            p++;
            if (*p == '?')
                p++; /* non-greedy */
            if (last_rep != NULL)
                re_fail(&e, "invalid nested repetition operator", last_rep, p);
            else if (!can_repeat)
                re_fail(&e, "missing argument to repetition operator", op, p);
            rep = op;
            break;
        case '{':
            if (re_repeat(p, &end, &bad, &weight)) {
                long m = weight < 0 ? -weight - 1 : weight;
                if (bad) {
                    re_fail(&e, "invalid repeat count", op, end);
                    break;
                }
                p = end;
                if (*p == '?')
                    p++;
                if (last_rep != NULL)
                    re_fail(&e, "invalid nested repetition operator", last_rep, p);
                else if (!can_repeat)
                    re_fail(&e, "missing argument to repetition operator", op, p);
                else if (weight > 0 && m * last_item[depth] > 1000)
                    re_fail(&e, "invalid repeat count", op, p);
                rep = op;
                item = 0;
                last_item[depth] = m > 0 ? m * last_item[depth] : 1;
                if (last_item[depth] > group_max[depth])
                    group_max[depth] = last_item[depth];
                weight = 1;
                break;
            }
            weight = 1;
            /* FALLTHRU - without a valid count '{' is a literal */
        default:
            p++;
            can_repeat = 1;
        }
        if (item && e.msg == NULL) {
            last_item[depth] = weight;
            if (weight > group_max[depth])
                group_max[depth] = weight;
        }
        last_rep = rep;
    }
    if (e.msg == NULL && depth > 0)
        re_fail(&e, "missing closing )", re, re + strlen(re));
    if (e.msg != NULL)
        wh_verr(c,
                "%s: error parsing regexp: %s: `%.*s`; Istio uses RE2 style regex-based match "
                "(https://github.com/google/re2/wiki/Syntax)",
                wh_vq(c, where), e.msg, (int)e.len, e.from);
}
