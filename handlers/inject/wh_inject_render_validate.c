/*
 * wh_inject_render_validate.c - istiod's check of the injection annotations before
 * templating (tests/inject/bad-input holds its cases), with its error texts: a Go multierror list of
 * "invalid value '<v>' for annotation '<name>': <reason>".
 */
#include "wh_inject_render_int.h"
#include "wh_inject_proxyconfig.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_inject_quantity.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Go string: the checks see an annotation's value whole, NULs included. */
typedef struct {
    const char *s;
    size_t n;
} gostr;

/* strconv.Quote(s) appended to `out`, as Go's parse errors quote their input. */
static void quoted(wh_buf *out, gostr s)
{
    wh_go_quote(out, s.s, s.n, '"', 0);
}

/* strconv.ParseUint(s, 10, bits): 0, or -1 with its error text in `why`
 * (syntax for anything but digits, range as soon as the value overflows). */
static int parse_uint(gostr s, int bits, wh_buf *why)
{
    unsigned long long v = 0, max = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    const char *reason = s.n == 0 ? "invalid syntax" : NULL;

    for (size_t i = 0; reason == NULL && i < s.n; i++) {
        unsigned d = (unsigned)(unsigned char)s.s[i] - '0';
        if (d > 9)
            reason = "invalid syntax";
        else if (v > (max - d) / 10)
            reason = "value out of range";
        else
            v = v * 10 + d;
    }
    if (reason == NULL)
        return 0;
    wh_buf_puts(why, "strconv.ParseUint: parsing ");
    quoted(why, s);
    wh_buf_printf(why, ": %s", reason);
    return -1;
}

static gostr trim(gostr s)
{
    wh_go_trim_space(&s.s, &s.n);
    return s;
}

/* istiod's parsePort: "failed parsing port '<p>': <strconv error>". */
static int parse_port(gostr port, wh_buf *why)
{
    wh_buf inner = WH_BUF_INIT;
    int rc = 0;

    if (parse_uint(trim(port), 16, &inner) != 0) {
        wh_buf_puts(why, "failed parsing port '");
        wh_buf_append(why, port.s, port.n);
        wh_buf_puts(why, "': ");
        wh_buf_append(why, inner.data, inner.len);
        rc = -1;
    }
    wh_buf_free(&inner);
    return rc;
}

/* istiod's comma-list checks (parsePorts, validateCIDRList, the interface
 * lists): every item of `list` through `parse`; the first that fails gives
 * "<param> invalid: failed parsing <what> '<item>': <its error>", or with no
 * `param` the item's error alone.  An empty list is valid. */
static int each_item(const char *param, const char *what, gostr list, int (*parse)(gostr, wh_buf *), wh_buf *why)
{
    const char *p = list.s, *end = list.s + list.n;

    if (list.n == 0)
        return 0;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        gostr item = {p, (size_t)((comma ? comma : end) - p)};
        wh_buf inner = WH_BUF_INIT;
        int rc = parse(item, &inner);
        if (rc != 0 && param != NULL) {
            wh_buf_printf(why, "%s invalid: failed parsing %s '", param, what);
            wh_buf_append(why, item.s, item.n);
            wh_buf_puts(why, "': ");
            wh_buf_append(why, inner.data, inner.len);
        } else if (rc != 0) {
            wh_buf_append(why, inner.data, inner.len);
        }
        wh_buf_free(&inner);
        if (rc != 0)
            return -1;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* istiod's parsePorts: the whole list is trimmed first, each port again. */
static int parse_ports(const char *param, gostr list, wh_buf *why)
{
    return each_item(param, "port", trim(list), parse_port, why);
}

/* Go's netip.ParsePrefix, reduced to its verdict and top-level message. */
static int parse_prefix(gostr s, wh_buf *why)
{
    const char *slash = NULL;
    char addr[128];
    unsigned char buf[16];
    int v6, bits = 0;
    gostr a = {NULL, 0}, b = {NULL, 0};
    wh_buf detail = WH_BUF_INIT;

    for (size_t i = s.n; i > 0 && slash == NULL; i--)
        if (s.s[i - 1] == '/')
            slash = s.s + i - 1;
    if (slash != NULL) {
        a = (gostr){s.s, (size_t)(slash - s.s)};
        b = (gostr){slash + 1, s.n - a.n - 1};
        v6 = memchr(a.s, ':', a.n) != NULL;
        for (size_t i = 0; i < b.n && bits >= 0; i++)
            bits = isdigit((unsigned char)b.s[i]) && i < 3 ? bits * 10 + (b.s[i] - '0') : -1;
    }
    if (slash == NULL) {
        wh_buf_puts(&detail, "no '/'");
    } else if (memchr(a.s, '%', a.n) != NULL) {
        wh_buf_puts(&detail, "IPv6 zones cannot be present in a prefix");
    } else if (a.n >= sizeof(addr) || memchr(a.s, '\0', a.n) != NULL ||
               (memcpy(addr, a.s, a.n), addr[a.n] = '\0', inet_pton(v6 ? AF_INET6 : AF_INET, addr, buf) != 1)) {
        wh_buf_puts(&detail, "ParseAddr(");
        quoted(&detail, a);
        wh_buf_puts(&detail, "): unable to parse IP");
    } else if (b.n == 0 || bits < 0 || (b.s[0] == '0' && b.n > 1)) {
        wh_buf_puts(&detail, "bad bits after slash: ");
        quoted(&detail, b);
    } else if (bits > (v6 ? 128 : 32)) {
        wh_buf_puts(&detail, "prefix length out of range");
    } else {
        return 0;
    }
    wh_buf_puts(why, "netip.ParsePrefix(");
    quoted(why, s);
    wh_buf_printf(why, "): %s", detail.data);
    wh_buf_free(&detail);
    return -1;
}

static int cidr_list(const char *param, gostr list, wh_buf *why)
{
    return each_item(param, "cidr", list, parse_prefix, why);
}

static int is(gostr v, const char *lit)
{
    return v.n == strlen(lit) && memcmp(v.s, lit, v.n) == 0;
}

static int v_interception(gostr v, wh_buf *why)
{
    if (is(v, "REDIRECT") || is(v, "TPROXY") || is(v, "NONE"))
        return 0;
    wh_buf_puts(why, "interceptionMode invalid, use REDIRECT,TPROXY,NONE: ");
    wh_buf_append(why, v.s, v.n);
    return -1;
}

static int v_status_port(gostr v, wh_buf *why)
{
    wh_buf inner = WH_BUF_INIT;
    int rc = parse_port(v, &inner);

    if (rc != 0) {
        wh_buf_puts(why, "excludeInboundPorts invalid: ");
        wh_buf_append(why, inner.data, inner.len);
    }
    wh_buf_free(&inner);
    return rc;
}

static int v_uint32(gostr v, wh_buf *why)
{
    return parse_uint(v, 32, why);
}

static int v_include_ip(gostr v, wh_buf *why)
{
    return is(v, "*") ? 0 : cidr_list("includeIPRanges", v, why);
}

static int v_exclude_ip(gostr v, wh_buf *why)
{
    return cidr_list("excludeIPRanges", v, why);
}

static int v_include_in(gostr v, wh_buf *why)
{
    return is(v, "*") ? 0 : parse_ports("includeInboundPorts", v, why);
}

static int v_exclude_in(gostr v, wh_buf *why)
{
    return parse_ports("excludeInboundPorts", v, why);
}

static int v_exclude_out(gostr v, wh_buf *why)
{
    return parse_ports("excludeOutboundPorts", v, why);
}

static int v_bool(gostr v, wh_buf *why)
{
    if (memchr(v.s, '\0', v.n) == NULL && wh_go_parse_bool(v.s) >= 0)
        return 0;
    wh_buf_puts(why, "strconv.ParseBool: parsing ");
    quoted(why, v);
    wh_buf_puts(why, ": invalid syntax");
    return -1;
}

/* A character of ^[a-zA-Z][a-zA-Z0-9_.\-]*$ (netutil's interfaceNameRegex). */
static int interface_char(unsigned char c, int first)
{
    return isalpha(c) || (!first && (isdigit(c) || c == '_' || c == '.' || c == '-'));
}

/* One name of netutil.ValidateInterfaceNames (1.30 on): trimmed, not empty,
 * at most 15 bytes, of interface_char's characters. */
static int interface_name(gostr item, wh_buf *why)
{
    gostr name = trim(item);
    size_t ok = 0;

    if (name.n == 0) {
        wh_buf_puts(why, "empty interface name");
        return -1;
    }
    while (ok < name.n && interface_char((unsigned char)name.s[ok], ok == 0))
        ok++;
    if (name.n <= 15 && ok == name.n)
        return 0;
    wh_buf_puts(why, "interface name ");
    quoted(why, name);
    wh_buf_puts(why, name.n > 15 ? " too long (max 15 chars)" : " contains invalid characters");
    return -1;
}

static int v_interfaces(gostr v, wh_buf *why)
{
    return each_item(NULL, NULL, v, interface_name, why);
}

/* validateResourceQuantity: no unicode.IsControl rune, then
 * resource.ParseQuantity's verdict and error text. */
static int v_quantity(gostr value, wh_buf *why)
{
    const char *err;

    /* C0 (NUL too), DEL and C1 (U+0080-U+009F); past it the value holds no NUL */
    for (size_t i = 0; i < value.n; i++) {
        const unsigned char *c = (const unsigned char *)value.s + i;
        if (iscntrl(*c) || (c[0] == 0xC2 && i + 1 < value.n && c[1] >= 0x80 && c[1] <= 0x9F)) {
            wh_buf_puts(why, "value contains control characters");
            return -1;
        }
    }
    if ((err = wh_inject_quantity_error(value.s, value.n)) == NULL)
        return 0;
    wh_buf_puts(why, err);
    return -1;
}

static char *v_proxy_config_msg(gostr v, const wh_inject_release *rel)
{
    json_t *pc = wh_inject_default_proxy_config(rel), *doc = NULL;
    wh_err err;
    char *msg = NULL;
    wh_buf b = WH_BUF_INIT;

    wh_err_clear(&err);
    if (wh_yaml_load(v.s, v.n, &doc, &err) != WH_OK || wh_inject_proxy_config_apply(pc, doc, &err) != WH_OK) {
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
    int (*check)(gostr v, wh_buf *why);
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

char *wh_inject_validate_annotations(const json_t *annotations, const wh_inject_release *rel, size_t *len)
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
        const json_t *jv = json_object_get(annotations, names[k]);
        gostr v = {json_string_value(jv), json_string_length(jv)};
        wh_buf why = WH_BUF_INIT;
        int bad = 0;
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
            if (strcmp(checks[i].name, names[k]) != 0)
                continue;
            if (checks[i].check != NULL) {
                bad = checks[i].check(v, &why) != 0;
            } else {
                char *m = v_proxy_config_msg(v, rel);
                if ((bad = m != NULL))
                    wh_buf_puts(&why, m);
                free(m);
            }
        }
        if (bad) {
            /* the value as it is, NULs included: Go's %s */
            wh_buf_puts(&list, "\n\t* invalid value '");
            wh_buf_append(&list, v.s, v.n);
            wh_buf_printf(&list, "' for annotation '%s': ", names[k]);
            wh_buf_append(&list, why.data ? why.data : "invalid", why.data ? why.len : strlen("invalid"));
            nerr++;
        }
        wh_buf_free(&why);
    }
    if (nerr == 0) {
        wh_buf_free(&list);
        return NULL;
    }
    wh_buf_printf(&msg, "%zu error%s occurred:", nerr, nerr == 1 ? "" : "s");
    wh_buf_append(&msg, list.data, list.len);
    wh_buf_puts(&msg, "\n\n");
    wh_buf_free(&list);
    return wh_buf_steal(&msg, len);
}
