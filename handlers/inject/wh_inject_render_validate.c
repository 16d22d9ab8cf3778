/*
 * wh_inject_render_validate.c - istiod's check of the injection annotations before
 * templating (tests/inject/bad-input holds its cases), with its error texts: a Go multierror list of
 * "invalid value '<v>' for annotation '<name>': <reason>".
 */
#include "wh_inject_render_int.h"
#include "wh_inject_proxyconfig.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strconv.ParseUint(s, 10, bits) failure text, or NULL when it parses. */
static int parse_uint(const char *s, int bits, wh_buf *why, const char *fn)
{
    unsigned long long v = 0, max = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    const char *p = s;

    if (*p == '\0') {
        wh_buf_printf(why, "strconv.%s: parsing \"%s\": invalid syntax", fn, s);
        return -1;
    }
    for (; *p; p++) {
        if (!isdigit((unsigned char)*p)) {
            wh_buf_printf(why, "strconv.%s: parsing \"%s\": invalid syntax", fn, s);
            return -1;
        }
        if (v > (max - (unsigned)(*p - '0')) / 10) {
            /* keep scanning for syntax errors first, as Go does */
            for (const char *q = p; *q; q++)
                if (!isdigit((unsigned char)*q)) {
                    wh_buf_printf(why, "strconv.%s: parsing \"%s\": invalid syntax", fn, s);
                    return -1;
                }
            wh_buf_printf(why, "strconv.%s: parsing \"%s\": value out of range", fn, s);
            return -1;
        }
        v = v * 10 + (unsigned)(*p - '0');
    }
    return 0;
}

static char *trim_dup(const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    return wh_strndup(s, len);
}

/* istiod's parsePort: "failed parsing port '<p>': <strconv error>". */
static int parse_port(const char *port, wh_buf *why)
{
    char *t = trim_dup(port, strlen(port));
    wh_buf inner = WH_BUF_INIT;
    int rc = 0;

    if (t == NULL)
        return -1;
    if (parse_uint(t, 16, &inner, "ParseUint") != 0) {
        wh_buf_printf(why, "failed parsing port '%s': %s", port, inner.data);
        rc = -1;
    }
    free(t);
    wh_buf_free(&inner);
    return rc;
}

/* istiod's comma-list checks (parsePorts, validateCIDRList, the interface
 * lists): every item of `list` through `parse`; the first that fails gives
 * "<param> invalid: failed parsing <what> '<item>': <its error>", or with no
 * `param` the item's error alone.  An empty list is valid. */
static int each_item(const char *param, const char *what, const char *list, int (*parse)(const char *, wh_buf *),
                     wh_buf *why)
{
    char *copy, *p;
    int rc = 0;

    if (list[0] == '\0')
        return 0;
    copy = wh_strdup(list);
    for (p = copy;;) {
        char *comma = strchr(p, ',');
        wh_buf inner = WH_BUF_INIT;
        if (comma)
            *comma = '\0';
        if (parse(p, &inner) != 0) {
            if (param != NULL)
                wh_buf_printf(why, "%s invalid: failed parsing %s '%s': %s", param, what, p, inner.data);
            else
                wh_buf_puts(why, inner.data);
            rc = -1;
        }
        wh_buf_free(&inner);
        if (rc != 0 || !comma)
            break;
        p = comma + 1;
    }
    free(copy);
    return rc;
}

/* istiod's parsePorts: the whole list is trimmed first, each port again. */
static int parse_ports(const char *param, const char *list, wh_buf *why)
{
    char *t = trim_dup(list, strlen(list));
    int rc = each_item(param, "port", t, parse_port, why);

    free(t);
    return rc;
}

/* Go's netip.ParsePrefix, reduced to its verdict and top-level message. */
static int parse_prefix(const char *s, wh_buf *why)
{
    const char *slash = strrchr(s, '/');
    char addr[128];
    unsigned char buf[16];
    int v6, bits = 0, maxbits;
    const char *b;

    if (slash == NULL) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): no '/'", s);
        return -1;
    }
    if ((size_t)(slash - s) >= sizeof(addr)) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): ParseAddr(\"%.*s\"): unable to parse IP", s, (int)(slash - s),
                      s);
        return -1;
    }
    memcpy(addr, s, (size_t)(slash - s));
    addr[slash - s] = '\0';
    if (strchr(addr, '%') != NULL) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): IPv6 zones cannot be present in a prefix", s);
        return -1;
    }
    v6 = strchr(addr, ':') != NULL;
    if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, buf) != 1) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): ParseAddr(\"%s\"): unable to parse IP", s, addr);
        return -1;
    }
    b = slash + 1;
    if (*b == '\0' || (b[0] == '0' && b[1] != '\0') || strspn(b, "0123456789") != strlen(b) || strlen(b) > 3) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): bad bits after slash: \"%s\"", s, b);
        return -1;
    }
    bits = atoi(b);
    maxbits = v6 ? 128 : 32;
    if (bits > maxbits) {
        wh_buf_printf(why, "netip.ParsePrefix(\"%s\"): prefix length out of range", s);
        return -1;
    }
    return 0;
}

static int cidr_list(const char *param, const char *list, wh_buf *why)
{
    return each_item(param, "cidr", list, parse_prefix, why);
}

static int v_interception(const char *v, wh_buf *why)
{
    if (strcmp(v, "REDIRECT") == 0 || strcmp(v, "TPROXY") == 0 || strcmp(v, "NONE") == 0)
        return 0;
    wh_buf_printf(why, "interceptionMode invalid, use REDIRECT,TPROXY,NONE: %s", v);
    return -1;
}

static int v_status_port(const char *v, wh_buf *why)
{
    wh_buf inner = WH_BUF_INIT;
    int rc = parse_port(v, &inner);

    if (rc != 0)
        wh_buf_printf(why, "excludeInboundPorts invalid: %s", inner.data);
    wh_buf_free(&inner);
    return rc;
}

static int v_uint32(const char *v, wh_buf *why)
{
    return parse_uint(v, 32, why, "ParseUint");
}

static int v_include_ip(const char *v, wh_buf *why)
{
    return strcmp(v, "*") == 0 ? 0 : cidr_list("includeIPRanges", v, why);
}

static int v_exclude_ip(const char *v, wh_buf *why)
{
    return cidr_list("excludeIPRanges", v, why);
}

static int v_include_in(const char *v, wh_buf *why)
{
    return strcmp(v, "*") == 0 ? 0 : parse_ports("includeInboundPorts", v, why);
}

static int v_exclude_in(const char *v, wh_buf *why)
{
    return parse_ports("excludeInboundPorts", v, why);
}

static int v_exclude_out(const char *v, wh_buf *why)
{
    return parse_ports("excludeOutboundPorts", v, why);
}

static int v_bool(const char *v, wh_buf *why)
{
    if (wh_go_parse_bool(v) >= 0)
        return 0;
    wh_buf_printf(why, "strconv.ParseBool: parsing \"%s\": invalid syntax", v);
    return -1;
}

/* A Linux interface name as istiod's ValidateInterfaces checks it. */
static int interface_name(const char *item, wh_buf *why)
{
    char *name = trim_dup(item, strlen(item));
    size_t n = strlen(name);
    int rc = 0;

    if (n == 0 || n > 15 || !isalpha((unsigned char)name[0]) ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n) {
        wh_buf_printf(why, "invalid interface name: \"%s\"", name);
        rc = -1;
    }
    free(name);
    return rc;
}

static int v_interfaces(const char *v, wh_buf *why)
{
    return each_item(NULL, NULL, v, interface_name, why);
}

/* Kubernetes resource.ParseQuantity's grammar: sign, digits[.digits], then
 * a suffix (binary Ki..Ei, decimal n u m k M G T P E, or e/E exponent). */
static int v_quantity(const char *v, wh_buf *why)
{
    static const char *const suffixes[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                           "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
    const char *p = v;
    size_t nd = 0;

    /* validateResourceQuantity refuses unicode.IsControl runes first: C0, DEL and C1 (U+0080-U+009F) */
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (iscntrl(*c) || (c[0] == 0xC2 && c[1] >= 0x80 && c[1] <= 0x9F)) {
            wh_buf_puts(why, "value contains control characters");
            return -1;
        }
    if (*p == '+' || *p == '-')
        p++;
    while (isdigit((unsigned char)*p)) {
        p++;
        nd++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            p++;
            nd++;
        }
    }
    if (nd == 0)
        goto bad;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q))
                q++;
            if (*q == '\0')
                return 0;
        }
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(p, suffixes[i]) == 0)
            return 0;
bad:
    wh_buf_printf(why, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    return -1;
}

static char *v_proxy_config_msg(const char *v, const wh_inject_release *rel)
{
    json_t *pc = wh_inject_default_proxy_config(rel), *doc = NULL;
    wh_err err;
    char *msg = NULL;
    wh_buf b = WH_BUF_INIT;

    wh_err_clear(&err);
    if (wh_yaml_load(v, strlen(v), &doc, &err) != WH_OK || wh_inject_proxy_config_apply(pc, doc, &err) != WH_OK) {
        wh_buf_printf(&b, "failed to convert to apply proxy config: %s", wh_err_msg(&err));
        msg = wh_buf_steal(&b, NULL);
    } else {
        msg = wh_inject_proxy_config_invalid(pc);
    }
    json_decref(doc);
    json_decref(pc);
    return msg;
}

#define ALWAYS WH_REL_NBEHAVIOURS /* not a row of the release table: every release checks it */

/* istiod's AnnotationValidation map; `release` names the row of the release
 * table that says which releases check the annotation. */
static const struct {
    const char *name;
    int (*check)(const char *v, wh_buf *why);
    wh_release_behaviour release;
} checks[] = {
    {"sidecar.istio.io/interceptionMode", v_interception, ALWAYS},
    {"sidecar.istio.io/enableCoreDump", v_bool, WH_REL_VALIDATE_CORE_DUMP_ANNOTATION},
    {"status.sidecar.istio.io/port", v_status_port, ALWAYS},
    {"readiness.status.sidecar.istio.io/initialDelaySeconds", v_uint32, ALWAYS},
    {"readiness.status.sidecar.istio.io/periodSeconds", v_uint32, ALWAYS},
    {"readiness.status.sidecar.istio.io/failureThreshold", v_uint32, ALWAYS},
    {"traffic.sidecar.istio.io/includeOutboundIPRanges", v_include_ip, ALWAYS},
    {"traffic.sidecar.istio.io/excludeOutboundIPRanges", v_exclude_ip, ALWAYS},
    {"traffic.sidecar.istio.io/includeInboundPorts", v_include_in, ALWAYS},
    {"traffic.sidecar.istio.io/excludeInboundPorts", v_exclude_in, ALWAYS},
    {"traffic.sidecar.istio.io/excludeOutboundPorts", v_exclude_out, ALWAYS},
    {"traffic.sidecar.istio.io/excludeInterfaces", v_interfaces, WH_REL_VALIDATE_INTERFACE_ANNOTATIONS},
    {"traffic.sidecar.istio.io/kubevirtInterfaces", v_interfaces, WH_REL_VALIDATE_INTERFACE_ANNOTATIONS},
    {"istio.io/reroute-virtual-interfaces", v_interfaces, WH_REL_VALIDATE_INTERFACE_ANNOTATIONS},
    {"prometheus.istio.io/merge-metrics", v_bool, ALWAYS},
    {"sidecar.istio.io/proxyCPU", v_quantity, WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS},
    {"sidecar.istio.io/proxyMemory", v_quantity, WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS},
    {"sidecar.istio.io/proxyCPULimit", v_quantity, WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS},
    {"sidecar.istio.io/proxyMemoryLimit", v_quantity, WH_REL_VALIDATE_PROXY_RESOURCE_ANNOTATIONS},
    {"proxy.istio.io/config", NULL, ALWAYS},
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *wh_inject_validate_annotations(const json_t *annotations, const wh_inject_release *rel)
{
    const char *names[sizeof(checks) / sizeof(checks[0])];
    size_t n = 0, nerr = 0;
    wh_buf list = WH_BUF_INIT, msg = WH_BUF_INIT;

    if (!json_is_object(annotations))
        return NULL;
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
        if (json_is_string(json_object_get(annotations, checks[i].name)) &&
            (checks[i].release == ALWAYS || wh_inject_release_has(rel, checks[i].release)))
            names[n++] = checks[i].name;
    /* Go ranges over a map in random order; sorting makes ours stable. */
    qsort(names, n, sizeof(names[0]), cmp_str);
    for (size_t k = 0; k < n; k++) {
        const char *v = wh_inject_jstr(annotations, names[k]);
        wh_buf why = WH_BUF_INIT;
        int bad = 0;
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
            if (strcmp(checks[i].name, names[k]) != 0)
                continue;
            if (checks[i].check == v_quantity &&
                memchr(v, '\0', json_string_length(json_object_get(annotations, names[k]))) != NULL) {
                bad = 1; /* a NUL inside the value: a control character too */
                wh_buf_puts(&why, "value contains control characters");
            } else if (checks[i].check != NULL) {
                bad = checks[i].check(v, &why) != 0;
            } else {
                char *m = v_proxy_config_msg(v, rel);
                if ((bad = m != NULL))
                    wh_buf_puts(&why, m);
                free(m);
            }
        }
        if (bad) {
            wh_buf_printf(&list, "\n\t* invalid value '%s' for annotation '%s': %s", v, names[k],
                          why.data ? why.data : "invalid");
            nerr++;
        }
        wh_buf_free(&why);
    }
    if (nerr == 0) {
        wh_buf_free(&list);
        return NULL;
    }
    wh_buf_printf(&msg, "%zu error%s occurred:%s\n\n", nerr, nerr == 1 ? "" : "s", list.data);
    wh_buf_free(&list);
    return wh_buf_steal(&msg, NULL);
}
