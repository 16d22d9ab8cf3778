/*
 * gateway.c - networking.istio.io Gateway: object name, servers, hosts
 * ("ns/host"), ports, bind addresses and server TLS settings.  The server TLS
 * check and the "namespace/dnsName" host check are shared with Sidecar.
 */
#include "wh_alloc.h"
#include "wh_validate_int.h"

#include <stdlib.h>
#include <string.h>

/* The suites istiod knows by name (BoringSSL's list without PSK). */
static const char *const ciphers[] = {"ECDHE-ECDSA-AES128-GCM-SHA256",
                                      "ECDHE-RSA-AES128-GCM-SHA256",
                                      "ECDHE-ECDSA-AES256-GCM-SHA384",
                                      "ECDHE-RSA-AES256-GCM-SHA384",
                                      "ECDHE-ECDSA-CHACHA20-POLY1305",
                                      "ECDHE-RSA-CHACHA20-POLY1305",
                                      "ECDHE-ECDSA-AES128-SHA",
                                      "ECDHE-RSA-AES128-SHA",
                                      "ECDHE-ECDSA-AES256-SHA",
                                      "ECDHE-RSA-AES256-SHA",
                                      "AES128-GCM-SHA256",
                                      "AES256-GCM-SHA384",
                                      "AES128-SHA",
                                      "AES256-SHA",
                                      "DES-CBC3-SHA"};

/* Go's unicode.IsLetter || unicode.IsNumber on rune(byte): ASCII alphanumerics
 * plus the Latin-1 letters and numbers. */
static int go_letter_or_number(unsigned char b)
{
    if (b < 0x80)
        return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
    return b == 0xaa || b == 0xb2 || b == 0xb3 || b == 0xb5 || b == 0xb9 || b == 0xba || (b >= 0xbc && b <= 0xbe) ||
           (b >= 0xc0 && b != 0xd7 && b != 0xf7);
}

/* An expression that starts with an operator ("-X", "+X", "!X", "[A|B]"), "" and
 * ALL pass unchecked; anything else must be a known suite name. */
static int cipher_known(const char *s)
{
    size_t i;

    if (*s == '\0' || strcmp(s, "ALL") == 0 || !go_letter_or_number((unsigned char)*s))
        return 1;
    for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
        if (strcmp(s, ciphers[i]) == 0)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append "[a b c]" (sorted, unique) of the selected cipher names. */
static void sorted_list(wh_vctx *c, const char **v, size_t n, wh_buf *out)
{
    size_t i;

    qsort(v, n, sizeof(*v), cmp_str);
    wh_buf_putc(out, '[');
    for (i = 0; i < n; i++) {
        if (i > 0 && strcmp(v[i], v[i - 1]) == 0)
            continue;
        wh_buf_printf(out, "%s%s", out->len > 1 ? " " : "", v[i]);
    }
    wh_buf_putc(out, ']');
}

static void check_ciphers(wh_vctx *c, const json_t *suites)
{
    size_t n = json_array_size(suites), i, j, ni = 0, nd = 0;
    const char **invalid, **dup;

    if (n == 0)
        return;
    invalid = wh_calloc(n, sizeof(*invalid));
    dup = wh_calloc(n, sizeof(*dup));
    for (i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(suites, i));
        if (!cipher_known(s)) {
            invalid[ni++] = s;
            continue;
        }
        for (j = 0; j < i; j++)
            if (strcmp(s, json_string_value(json_array_get(suites, j))) == 0)
                break;
        if (j < i)
            dup[nd++] = s;
    }
    if (ni > 0) {
        wh_buf b = WH_BUF_INIT;
        sorted_list(c, invalid, ni, &b);
        wh_vwarn(c, "ignoring invalid cipher suites: %s", b.data ? b.data : "[]");
        wh_buf_free(&b);
    }
    if (nd > 0) {
        wh_buf b = WH_BUF_INIT;
        sorted_list(c, dup, nd, &b);
        wh_vwarn(c, "ignoring duplicate cipher suites: %s", b.data ? b.data : "[]");
        wh_buf_free(&b);
    }
    free(invalid);
    free(dup);
}

void wh_vcheck_server_tls(wh_vctx *c, const json_t *tls)
{
    const char *mode, *minv, *prefix;
    const json_t *certs;
    int cred, creds, pair, sources;
    static const char *const versions[] = {"TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3"};
    int minn = 0, i;
    size_t k;

    if (tls == NULL)
        return;
    mode = wh_venum(tls, "mode", "PASSTHROUGH");
    minv = wh_venum(tls, "minProtocolVersion", "TLS_AUTO");
    for (i = 0; i < 5; i++)
        if (strcmp(minv, versions[i]) == 0)
            minn = i;
    if ((minn == 1 || minn == 2) && wh_varr(tls, "cipherSuites") == NULL)
        wh_vwarn(c, "TLS version below TLSV1_2 require setting compatible ciphers as by default they no longer "
                    "include compatible ciphers.");
    check_ciphers(c, wh_varr(tls, "cipherSuites"));
    cred = *wh_vstr(tls, "credentialName") != '\0';
    creds = wh_varr(tls, "credentialNames") != NULL;
    certs = wh_varr(tls, "tlsCertificates");
    if (strcmp(mode, "ISTIO_MUTUAL") == 0) {
        if (*wh_vstr(tls, "serverCertificate"))
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated server certificate");
        if (*wh_vstr(tls, "privateKey"))
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated private key");
        if (*wh_vstr(tls, "caCertificates"))
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated CA bundle");
        if (certs != NULL)
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated tlsCertificates");
        if (cred)
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated credentialName");
        if (creds)
            wh_verr(c, "ISTIO_MUTUAL TLS cannot have associated credentialNames");
        return;
    }
    if ((strcmp(mode, "PASSTHROUGH") == 0 || strcmp(mode, "AUTO_PASSTHROUGH") == 0) &&
        (*wh_vstr(tls, "caCrl") || *wh_vstr(tls, "serverCertificate") || *wh_vstr(tls, "privateKey") ||
         *wh_vstr(tls, "caCertificates") || certs != NULL || cred || creds))
        wh_vwarn(c, "%s mode does not use certificates, they will be ignored", mode);
    /* a certificate/key pair counts as a source only when both halves are set */
    pair = *wh_vstr(tls, "serverCertificate") && *wh_vstr(tls, "privateKey");
    sources = pair + cred + creds + (certs != NULL);
    if (sources > 1)
        wh_verr(c, "only one of credential_name, credential_names, server_certificate/private_key, "
                   "tls_certificates should be specified");
    if (strcmp(mode, "SIMPLE") != 0 && strcmp(mode, "MUTUAL") != 0 && strcmp(mode, "OPTIONAL_MUTUAL") != 0) {
        prefix = NULL;
    } else if (cred || creds) {
        return; /* the credential supplies the certificates (and any CRL) */
    } else {
        prefix = strcmp(mode, "SIMPLE") == 0 ? "SIMPLE TLS" : "MUTUAL TLS";
    }
    if (prefix != NULL) {
        if (strcmp(mode, "SIMPLE") != 0 && *wh_vstr(tls, "caCertificates") == '\0')
            wh_verr(c, "%s requires a client CA bundle", prefix);
        if (json_array_size(certs) > 2)
            wh_vwarn(c, "%s can support up to 2 server certificates", prefix);
        if (certs == NULL) {
            if (*wh_vstr(tls, "serverCertificate") == '\0')
                wh_verr(c, "%s requires a server certificate", prefix);
            if (*wh_vstr(tls, "privateKey") == '\0')
                wh_verr(c, "%s requires a private key", prefix);
        }
        for (k = 0; k < json_array_size(certs); k++) {
            const json_t *cert = json_array_get(certs, k);
            if (*wh_vstr(cert, "serverCertificate") == '\0')
                wh_verr(c, "%s requires a server certificate", prefix);
            if (*wh_vstr(cert, "privateKey") == '\0')
                wh_verr(c, "%s requires a private key", prefix);
        }
    }
    if (*wh_vstr(tls, "caCrl")) {
        if (cred)
            wh_verr(c, "CRL is not supported with credentialName. CRL has to be specified in the credential");
        if (strcmp(mode, "SIMPLE") == 0)
            wh_verr(c, "CRL is not supported with SIMPLE TLS");
    }
}

/* The host part of "ns/host" in Gateway servers and Sidecar egress listeners. */
static void check_host_part(wh_vctx *c, const char *h, int gateway)
{
    char *e;

    if (strcmp(h, "*") != 0 && strchr(h, '.') == NULL)
        wh_verr(c, "short names (non FQDN) are not allowed");
    e = wh_vmsg_wildcard_domain(c, h);
    /* istiod appends the domain error once for a sidecar, and (again) whenever the host is no IP address */
    if (e != NULL && !gateway)
        wh_verr(c, "%s", e);
    if (e != NULL && wh_vis_ip(h)) {
        free(e);
        e = NULL;
    }
    wh_vadd_err(c, e);
    wh_vadd_err(c, wh_vmsg_partial_wildcard(c, h));
}

void wh_vcheck_ns_host(wh_vctx *c, const char *h, int gateway)
{
    const char *slash = strchr(h, '/');
    char *ns;

    if (slash == NULL) {
        if (gateway)
            check_host_part(c, h, 1);
        else
            wh_verr(c, "host must be of form namespace/dnsName");
        return;
    }
    ns = wh_strndup(h, (size_t)(slash - h));
    if (*ns == '\0' || slash[1] == '\0')
        wh_verr(c, "config namespace and dnsName in host entry cannot be empty");
    if (!gateway) {
        if (strcmp(ns, "*") != 0 && strcmp(ns, ".") != 0 && strcmp(ns, "~") != 0 &&
            !(ns[0] == '~' ? wh_vis_dns1123_label(ns + 1) : wh_vis_dns1123_label(ns)))
            wh_verr(c, "invalid namespace value %s in sidecar", wh_vq(c, ns));
    } else if (strcmp(ns, "*") != 0 && strcmp(ns, ".") != 0 && !wh_vis_dns1123_label(ns)) {
        wh_verr(c, "invalid namespace value %s in gateway", wh_vq(c, ns));
    }
    free(ns);
    check_host_part(c, slash + 1, gateway);
}

/* The Port as Go prints a proto message (text format, zero fields left out). */
static void port_text(const json_t *port, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    if (wh_vint(port, "number") != 0)
        n += (size_t)snprintf(buf + n, len - n, "number:%lld", wh_vint(port, "number"));
    if (*wh_vstr(port, "protocol") && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%sprotocol:\"%s\"", n ? " " : "", wh_vstr(port, "protocol"));
    if (*wh_vstr(port, "name") && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%sname:\"%s\"", n ? " " : "", wh_vstr(port, "name"));
    if (wh_vint(port, "targetPort") != 0 && n < len)
        snprintf(buf + n, len - n, "%starget_port:%lld", n ? " " : "", wh_vint(port, "targetPort"));
}

/* Returns 1 when the port itself was acceptable (istiod's portErr == nil). */
static int check_server_port(wh_vctx *c, const json_t *port, const char *bind)
{
    size_t mark = wh_verr_mark(c);
    char text[300];

    if (port == NULL) {
        wh_verr(c, "port is required");
        return 0;
    }
    if (wh_vproto_parse(wh_vstr(port, "protocol")) == WH_PROTO_UNSUPPORTED)
        wh_verr(c, "invalid protocol %s, supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP",
                wh_vq(c, wh_vstr(port, "protocol")));
    if (wh_vint(port, "number") > 0 || strncmp(bind, "unix://", 7) != 0)
        wh_vcheck_port(c, wh_vint(port, "number"));
    if (wh_vint(port, "targetPort") > 0)
        wh_verr(c, "targetPort has no impact on Gateways");
    if (*wh_vstr(port, "name") == '\0') {
        port_text(port, text, sizeof(text));
        wh_verr(c, "port name must be set: %s", text);
    }
    return wh_verr_mark(c) == mark;
}

static void check_server(wh_vctx *c, const json_t *s)
{
    const json_t *hosts = wh_varr(s, "hosts"), *port = wh_vobj(s, "port"), *tls = wh_vobj(s, "tls");
    const char *bind = wh_vstr(s, "bind");
    size_t i;
    int port_ok;

    if (hosts == NULL)
        wh_verr(c, "server config must contain at least one host");
    for (i = 0; i < json_array_size(hosts); i++)
        wh_vcheck_ns_host(c, json_string_value(json_array_get(hosts, i)), 1);
    port_ok = check_server_port(c, port, bind);
    if (strncmp(bind, "unix://", 7) == 0) {
        wh_vadd_err(c, wh_vmsg_unix_address(c, bind + 7));
        if (port != NULL && wh_vint(port, "number") != 0) {
            char text[300];
            port_text(port, text, sizeof(text));
            wh_verr(c, "port number must be 0 for unix domain socket: %s", text);
        }
    } else if (*bind) {
        wh_vcheck_ip(c, bind);
    }
    wh_vcheck_server_tls(c, tls);
    if (port_ok) {
        int p = wh_vproto_parse(wh_vstr(port, "protocol"));
        if (wh_vproto_is_tls(p) && tls == NULL) {
            wh_verr(c, "server must have TLS settings for HTTPS/TLS protocols");
        } else if (!wh_vproto_is_tls(p) && tls != NULL) {
            if (wh_vproto_is_http(p)) {
                const char *mode = wh_venum(tls, "mode", "PASSTHROUGH");
                if ((strcmp(mode, "PASSTHROUGH") != 0 && strcmp(mode, "AUTO_PASSTHROUGH") != 0) ||
                    *wh_vstr(tls, "caCertificates") || *wh_vstr(tls, "privateKey") ||
                    *wh_vstr(tls, "serverCertificate"))
                    wh_verr(c, "server cannot have TLS settings for plain text HTTP ports");
            } else {
                wh_verr(c, "server cannot have TLS settings for non HTTPS/TLS ports");
            }
        }
    }
}

void wh_validate_gateway(wh_vctx *c, const json_t *spec)
{
    const json_t *servers = wh_varr(spec, "servers");
    wh_vset names;
    size_t i;

    if (!wh_vis_dns1123_label(c->name))
        wh_verr(c, "invalid gateway name: %s", wh_vq(c, c->name));
    if (servers == NULL)
        wh_verr(c, "gateway must have at least one server");
    for (i = 0; i < json_array_size(servers); i++)
        check_server(c, json_array_get(servers, i));
    wh_vset_init(&names, json_array_size(servers));
    for (i = 0; i < json_array_size(servers); i++) {
        const json_t *s = json_array_get(servers, i), *port = wh_vobj(s, "port");
        if (port == NULL)
            continue;
        if (wh_vset_put(&names, wh_vstr(port, "name"), i, NULL) == 1)
            wh_verr(c, "port names in servers must be unique: duplicate name %s", wh_vstr(port, "name"));
        if (!wh_vproto_is_http(wh_vproto_parse(wh_vstr(port, "protocol"))) &&
            wh_vbool(wh_vobj(s, "tls"), "httpsRedirect"))
            wh_vwarn(c, "tls.httpsRedirect should only be used with http servers");
    }
    wh_vset_free(&names);
}
