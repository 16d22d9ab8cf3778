/*
 * sprig_url.c - Sprig's url.go: urlParse (a URL's parts as a dict) and
 * urlJoin (a dict back to a URL).  Both are Go's net/url underneath: Parse's
 * splitting, unescaping and errors, and URL.String()'s escaping, as Go 1.19
 * does them (tests/template/cases/sprig.yaml compares with it).
 */
#define _GNU_SOURCE /* memrchr */
#include <string.h>

#include "sprig_int.h"
#include "wh_buf.h"
#include "wh_go.h"

/* bytes of the input or of the arena */
typedef struct {
    const char *p;
    size_t n;
} span;

/* net/url.URL, minus RawPath and RawFragment: urlParse reads the decoded
 * Path and Fragment, and urlJoin builds a URL without them. */
typedef struct {
    span scheme, opaque, username, password, host, path, query, fragment;
    int has_user, password_set, omit_host, force_query;
} gourl;

/* net/url's escaping modes */
enum { ENC_PATH, ENC_USER, ENC_HOST, ENC_ZONE, ENC_FRAGMENT };

static const span no_span = {"", 0};

static int should_escape(unsigned char c, int mode)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 0;
    if ((mode == ENC_HOST || mode == ENC_ZONE) && c && strchr("!$&'()*+,;=:[]<>\"", c))
        return 0;
    if (c && strchr("-_.~", c))
        return 0;
    if (c && strchr("$&+,/:;=?@", c)) {
        switch (mode) {
        case ENC_PATH:
            return c == '?';
        case ENC_USER:
            return c == '@' || c == '/' || c == '?' || c == ':';
        case ENC_FRAGMENT:
            return 0;
        }
    }
    if (mode == ENC_FRAGMENT && c && strchr("!()*", c))
        return 0;
    return 1;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned char unhex(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* `prefix` + strconv.Quote(s) + `suffix` as the error text */
static void quoted_error(wh_buf *err, const char *prefix, const char *s, size_t n, const char *suffix)
{
    wh_buf_puts(err, prefix);
    wh_go_quote(err, s, n, '"', 0);
    wh_buf_puts(err, suffix);
}

/* url.unescape: -1 with the error text in err */
static int unescape(wh_tmpl_ctx *ctx, span s, int mode, span *out, wh_buf *err)
{
    size_t i, j, pct = 0;
    char *t;
    for (i = 0; i < s.n;) {
        if (s.p[i] == '%') {
            pct++;
            if (i + 2 >= s.n || !is_hex(s.p[i + 1]) || !is_hex(s.p[i + 2])) {
                quoted_error(err, "invalid URL escape ", s.p + i, s.n - i > 3 ? 3 : s.n - i, "");
                return -1;
            }
            unsigned char v = unhex(s.p[i + 1]) << 4 | unhex(s.p[i + 2]);
            int is25 = s.p[i + 1] == '2' && s.p[i + 2] == '5';
            if ((mode == ENC_HOST && unhex(s.p[i + 1]) < 8 && !is25) ||
                (mode == ENC_ZONE && !is25 && v != ' ' && should_escape(v, ENC_HOST))) {
                quoted_error(err, "invalid URL escape ", s.p + i, 3, "");
                return -1;
            }
            i += 3;
        } else {
            if ((mode == ENC_HOST || mode == ENC_ZONE) && (unsigned char)s.p[i] < 0x80 && should_escape(s.p[i], mode)) {
                quoted_error(err, "invalid character ", s.p + i, 1, " in host name");
                return -1;
            }
            i++;
        }
    }
    if (pct == 0) {
        *out = s;
        return 0;
    }
    t = wh_tmpl_alloc(ctx, s.n + 1);
    for (i = j = 0; i < s.n; i++) {
        if (s.p[i] == '%') {
            t[j++] = unhex(s.p[i + 1]) << 4 | unhex(s.p[i + 2]);
            i += 2;
        } else {
            t[j++] = s.p[i];
        }
    }
    out->p = t;
    out->n = j;
    return 0;
}

/* url.escape for the modes other than query components */
static void escape(wh_buf *b, span s, int mode)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i;
    for (i = 0; i < s.n; i++) {
        unsigned char c = s.p[i];
        if (should_escape(c, mode)) {
            wh_buf_putc(b, '%');
            wh_buf_putc(b, hex[c >> 4]);
            wh_buf_putc(b, hex[c & 15]);
        } else {
            wh_buf_putc(b, c);
        }
    }
}

static const char *span_find(span s, char c)
{
    return s.n ? memchr(s.p, c, s.n) : NULL;
}

static const char *span_find_last(span s, char c)
{
    return s.n ? memrchr(s.p, c, s.n) : NULL;
}

static int span_starts(span s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

static span span_sub(span s, size_t from, size_t to)
{
    span r = {s.p + from, to - from};
    return r;
}

/* url.validOptionalPort */
static int valid_optional_port(span port)
{
    size_t i;
    if (port.n == 0)
        return 1;
    if (port.p[0] != ':')
        return 0;
    for (i = 1; i < port.n; i++)
        if (port.p[i] < '0' || port.p[i] > '9')
            return 0;
    return 1;
}

static int bad_port(span port, wh_buf *err)
{
    quoted_error(err, "invalid port ", port.p, port.n, " after host");
    return -1;
}

/* url.parseHost: an IPv6 literal's zone (after %25) unescapes with its own rules */
static int parse_host(wh_tmpl_ctx *ctx, span host, span *out, wh_buf *err)
{
    const char *c;
    if (span_starts(host, "[")) {
        const char *close = span_find_last(host, ']');
        size_t i, z;
        if (!close) {
            wh_buf_puts(err, "missing ']' in host");
            return -1;
        }
        i = close - host.p;
        if (!valid_optional_port(span_sub(host, i + 1, host.n)))
            return bad_port(span_sub(host, i + 1, host.n), err);
        for (z = 0; z + 3 <= i; z++)
            if (memcmp(host.p + z, "%25", 3) == 0)
                break;
        if (z + 3 <= i) {
            span h1, h2, h3;
            char *t;
            if (unescape(ctx, span_sub(host, 0, z), ENC_HOST, &h1, err) ||
                unescape(ctx, span_sub(host, z, i), ENC_ZONE, &h2, err) ||
                unescape(ctx, span_sub(host, i, host.n), ENC_HOST, &h3, err))
                return -1;
            t = wh_tmpl_alloc(ctx, h1.n + h2.n + h3.n + 1);
            memcpy(t, h1.p, h1.n);
            memcpy(t + h1.n, h2.p, h2.n);
            memcpy(t + h1.n + h2.n, h3.p, h3.n);
            out->p = t;
            out->n = h1.n + h2.n + h3.n;
            return 0;
        }
    } else if ((c = span_find_last(host, ':')) != NULL) {
        span port = span_sub(host, c - host.p, host.n);
        if (!valid_optional_port(port))
            return bad_port(port, err);
    }
    return unescape(ctx, host, ENC_HOST, out, err);
}

/* url.validUserinfo (a byte from 0x80 is never valid) */
static int valid_userinfo(span s)
{
    size_t i;
    for (i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (c && strchr("-._:~!$&'()*+,;=%@", c))))
            return 0;
    }
    return 1;
}

/* url.parseAuthority */
static int parse_authority(wh_tmpl_ctx *ctx, span auth, gourl *u, wh_buf *err)
{
    const char *at = span_find_last(auth, '@'), *colon;
    span info;
    if (parse_host(ctx, at ? span_sub(auth, at - auth.p + 1, auth.n) : auth, &u->host, err))
        return -1;
    if (!at)
        return 0;
    info = span_sub(auth, 0, at - auth.p);
    if (!valid_userinfo(info)) {
        wh_buf_puts(err, "net/url: invalid userinfo");
        return -1;
    }
    u->has_user = 1;
    colon = span_find(info, ':');
    if (!colon)
        return unescape(ctx, info, ENC_USER, &u->username, err);
    u->password_set = 1;
    return unescape(ctx, span_sub(info, 0, colon - info.p), ENC_USER, &u->username, err) ||
           unescape(ctx, span_sub(info, colon - info.p + 1, info.n), ENC_USER, &u->password, err);
}

/* url.parse (not via a request) */
static int parse_nofrag(wh_tmpl_ctx *ctx, span raw, gourl *u, wh_buf *err)
{
    span rest = raw;
    const char *q, *slash;
    size_t i, nq = 0;
    char *lower;

    for (i = 0; i < raw.n; i++)
        if ((unsigned char)raw.p[i] < ' ' || raw.p[i] == 0x7f) {
            wh_buf_puts(err, "net/url: invalid control character in URL");
            return -1;
        }
    if (raw.n == 1 && raw.p[0] == '*') {
        u->path = raw;
        return 0;
    }
    /* getScheme */
    for (i = 0; i < raw.n; i++) {
        char c = raw.p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0)
                break;
            continue;
        }
        if (c == ':') {
            if (i == 0) {
                wh_buf_puts(err, "missing protocol scheme");
                return -1;
            }
            lower = wh_tmpl_alloc(ctx, i + 1);
            for (size_t k = 0; k < i; k++)
                lower[k] = raw.p[k] >= 'A' && raw.p[k] <= 'Z' ? raw.p[k] | 0x20 : raw.p[k];
            u->scheme.p = lower;
            u->scheme.n = i;
            rest = span_sub(raw, i + 1, raw.n);
        }
        break;
    }
    for (i = 0; i < rest.n; i++)
        nq += rest.p[i] == '?';
    if (rest.n && rest.p[rest.n - 1] == '?' && nq == 1) {
        u->force_query = 1;
        rest.n--;
    } else if ((q = span_find(rest, '?')) != NULL) {
        u->query = span_sub(rest, q - rest.p + 1, rest.n);
        rest.n = q - rest.p;
    }
    if (!span_starts(rest, "/")) {
        span seg = rest;
        if (u->scheme.n) {
            u->opaque = rest;
            return 0;
        }
        if ((slash = span_find(rest, '/')) != NULL)
            seg.n = slash - rest.p;
        if (span_find(seg, ':')) {
            wh_buf_puts(err, "first path segment in URL cannot contain colon");
            return -1;
        }
    }
    if ((u->scheme.n || !span_starts(rest, "///")) && span_starts(rest, "//")) {
        span auth = span_sub(rest, 2, rest.n);
        rest = span_sub(rest, rest.n, rest.n);
        if ((slash = span_find(auth, '/')) != NULL) {
            rest = span_sub(auth, slash - auth.p, auth.n);
            auth.n = slash - auth.p;
        }
        if (parse_authority(ctx, auth, u, err))
            return -1;
    } else if (u->scheme.n && span_starts(rest, "/")) {
        u->omit_host = 1;
    }
    return unescape(ctx, rest, ENC_PATH, &u->path, err);
}

/* url.Parse: -1 with Go's *url.Error text in err */
static int url_parse(wh_tmpl_ctx *ctx, span raw, gourl *u, wh_buf *err)
{
    const char *hash = span_find(raw, '#');
    span before = hash ? span_sub(raw, 0, hash - raw.p) : raw;
    wh_buf why = WH_BUF_INIT;
    int r;

    memset(u, 0, sizeof(*u));
    u->scheme = u->opaque = u->username = u->password = u->host = u->path = u->query = u->fragment = no_span;
    r = parse_nofrag(ctx, before, u, &why);
    if (!r && hash) {
        /* a bad fragment's error quotes the whole URL, the others the part before it */
        before = raw;
        r = unescape(ctx, span_sub(raw, hash - raw.p + 1, raw.n), ENC_FRAGMENT, &u->fragment, &why);
    }
    if (r) {
        wh_buf_puts(err, "parse ");
        wh_go_quote(err, before.p, before.n, '"', 0);
        wh_buf_puts(err, ": ");
        wh_buf_append(err, why.data, why.len);
    }
    wh_buf_free(&why);
    return r;
}

/* Userinfo.String() */
static void userinfo_string(wh_buf *b, const gourl *u)
{
    escape(b, u->username, ENC_USER);
    if (u->password_set) {
        wh_buf_putc(b, ':');
        escape(b, u->password, ENC_USER);
    }
}

/* URL.String() */
static void url_string(wh_buf *b, const gourl *u)
{
    size_t start = b->len;
    if (u->scheme.n) {
        wh_buf_append(b, u->scheme.p, u->scheme.n);
        wh_buf_putc(b, ':');
    }
    if (u->opaque.n) {
        wh_buf_append(b, u->opaque.p, u->opaque.n);
    } else {
        size_t path_at;
        if ((u->scheme.n || u->host.n || u->has_user) && !(u->omit_host && !u->host.n && !u->has_user)) {
            if (u->host.n || u->path.n || u->has_user)
                wh_buf_puts(b, "//");
            if (u->has_user) {
                userinfo_string(b, u);
                wh_buf_putc(b, '@');
            }
            escape(b, u->host, ENC_HOST);
        }
        if (u->path.n && u->path.p[0] != '/' && u->host.n)
            wh_buf_putc(b, '/');
        path_at = b->len;
        /* EscapedPath: RawPath is never set here */
        if (u->path.n == 1 && u->path.p[0] == '*')
            wh_buf_putc(b, '*');
        else
            escape(b, u->path, ENC_PATH);
        if (path_at == start) {
            /* a relative path whose first segment has a colon would read as a scheme */
            span path = {b->data + path_at, b->len - path_at};
            const char *slash = span_find(path, '/');
            if (slash)
                path.n = slash - path.p;
            if (span_find(path, ':')) {
                wh_buf_reserve(b, 2);
                memmove(b->data + path_at + 2, b->data + path_at, b->len - path_at);
                memcpy(b->data + path_at, "./", 2);
                b->len += 2;
            }
        }
    }
    if (u->force_query || u->query.n) {
        wh_buf_putc(b, '?');
        wh_buf_append(b, u->query.p, u->query.n);
    }
    if (u->fragment.n) {
        wh_buf_putc(b, '#');
        escape(b, u->fragment, ENC_FRAGMENT);
    }
}

/* URL.Hostname(): Host without a numeric port, without an IPv6 literal's brackets */
static span hostname(span host)
{
    const char *colon = span_find_last(host, ':');
    if (colon && valid_optional_port(span_sub(host, colon - host.p, host.n)))
        host.n = colon - host.p;
    if (host.n >= 2 && host.p[0] == '[' && host.p[host.n - 1] == ']')
        host = span_sub(host, 1, host.n - 1);
    return host;
}

static wh_code put(wh_tmpl_ctx *ctx, wh_tmpl_value *map, const char *key, span v)
{
    return wh_tmpl_map_set(ctx, map, key, strlen(key), wh_tmpl_strn(v.p, v.n));
}

FN(fn_urlparse)
{
    span raw = {a[0].u.s, a[0].len};
    wh_buf *err = wh_tmpl_tmpbuf(ctx);
    gourl u;
    span user = no_span;
    wh_code rc;
    (void)n;

    if (url_parse(ctx, raw, &u, err))
        return wh_tmpl_errorf(ctx, "unable to parse url: %.*s", (int)err->len, err->data);
    if (u.has_user) {
        wh_buf_reset(err);
        userinfo_string(err, &u);
        user.p = sprig_arena_str(ctx, err->data, err->len);
        user.n = err->len;
    }
    *out = wh_tmpl_map_new(ctx, NULL);
    if ((rc = put(ctx, out, "scheme", u.scheme)) || (rc = put(ctx, out, "host", u.host)) ||
        (rc = put(ctx, out, "hostname", hostname(u.host))) || (rc = put(ctx, out, "path", u.path)) ||
        (rc = put(ctx, out, "query", u.query)) || (rc = put(ctx, out, "opaque", u.opaque)) ||
        (rc = put(ctx, out, "fragment", u.fragment)) || (rc = put(ctx, out, "userinfo", user)))
        return rc;
    return WH_OK;
}

/* Sprig's dictGetOrEmpty: a missing key is "", a value other than a string fails */
static wh_code dict_string(wh_tmpl_ctx *ctx, const wh_tmpl_value *d, const char *key, span *out)
{
    wh_tmpl_value v;
    *out = no_span;
    if (wh_tmpl_map_get(d, key, strlen(key), &v) != WH_OK)
        return WH_OK;
    if (v.kind == WH_TMPL_NIL || v.kind == WH_TMPL_INVALID) /* reflect.TypeOf(nil).Kind() */
        return wh_tmpl_errorf(ctx, "runtime error: invalid memory address or nil pointer dereference");
    if (v.kind != WH_TMPL_STRING)
        return wh_tmpl_errorf(ctx, "unable to parse %s key, must be of type string, but %s found", key,
                              sprig_kind_name(&v));
    out->p = v.u.s;
    out->n = v.len;
    return WH_OK;
}

FN(fn_urljoin)
{
    gourl u, tmp;
    span userinfo;
    wh_buf *b;
    wh_code rc;
    (void)n;

    memset(&u, 0, sizeof(u));
    u.username = u.password = no_span;
    if ((rc = dict_string(ctx, &a[0], "scheme", &u.scheme)) || (rc = dict_string(ctx, &a[0], "host", &u.host)) ||
        (rc = dict_string(ctx, &a[0], "path", &u.path)) || (rc = dict_string(ctx, &a[0], "query", &u.query)) ||
        (rc = dict_string(ctx, &a[0], "opaque", &u.opaque)) ||
        (rc = dict_string(ctx, &a[0], "fragment", &u.fragment)) ||
        (rc = dict_string(ctx, &a[0], "userinfo", &userinfo)))
        return rc;
    b = wh_tmpl_tmpbuf(ctx);
    if (userinfo.n) {
        /* Sprig reads it back through url.Parse("proto://<userinfo>@host") */
        wh_buf_printf(b, "proto://%.*s@host", (int)userinfo.n, userinfo.p);
        span raw = {sprig_arena_str(ctx, b->data, b->len), b->len};
        wh_buf_reset(b);
        if (url_parse(ctx, raw, &tmp, b))
            return wh_tmpl_errorf(ctx, "unable to parse userinfo in dict: %.*s", (int)b->len, b->data);
        u.has_user = tmp.has_user;
        u.password_set = tmp.password_set;
        u.username = tmp.username;
        u.password = tmp.password;
        wh_buf_reset(b);
    }
    url_string(b, &u);
    return wh_tmpl_strdup(ctx, b->data, b->len, out);
}

const wh_tmpl_func tm_sprig_url_funcs[] = {
    {"urlJoin", fn_urljoin, "m", WH_TMPL_FN_PURE},
    {"urlParse", fn_urlparse, "s", WH_TMPL_FN_PURE},
};
const size_t tm_sprig_url_nfuncs = sizeof(tm_sprig_url_funcs) / sizeof(tm_sprig_url_funcs[0]);
