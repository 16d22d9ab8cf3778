/*
 * x509.c - Go's x509.ParseCertificate as a verdict and its error text, for
 * the certificates of a JWKS key's "x5c" (istiod's jwk.Parse decodes each
 * one; security.c).  It walks the DER the way Go's parser reads it
 * (crypto/x509/parser.go on cryptobyte: strict DER lengths, minimal
 * integers) and names the first thing Go would refuse, in Go's words:
 * the certificate's envelope, version, serial, signature algorithms,
 * names, validity times, the public key of the algorithms Go decodes
 * (RSA, ECDSA's curve, Ed25519, X25519, DSA), the extensions' framing, the
 * signature and trailing data.  Not judged (accepted as Go may accept
 * them): whether an EC point lies on its curve, ML-DSA / ML-KEM key sizes
 * and the contents of known extensions (tests/validate/messages.tsv).
 */
#include "wh_chars.h"
#include "wh_validate_int.h"

#include <string.h>

typedef struct der {
    const unsigned char *p;
    size_t n;
} der;

enum {
    T_BOOLEAN = 0x01,
    T_INTEGER = 0x02,
    T_BIT_STRING = 0x03,
    T_OCTET_STRING = 0x04,
    T_NULL = 0x05,
    T_OID = 0x06,
    T_UTF8 = 0x0c,
    T_NUMERIC = 0x12,
    T_PRINTABLE = 0x13,
    T_T61 = 0x14,
    T_IA5 = 0x16,
    T_UTCTIME = 0x17,
    T_GENTIME = 0x18,
    T_BMP = 0x1e,
    T_SEQUENCE = 0x30,
    T_SET = 0x31,
    T_VERSION = 0xa0,    /* [0] EXPLICIT */
    T_ISSUER_UID = 0x81, /* [1] IMPLICIT */
    T_SUBJECT_UID = 0x82,
    T_EXTENSIONS = 0xa3, /* [3] EXPLICIT */
};

/* cryptobyte's readASN1: one element (a one-byte tag, a DER length: definite, minimal, at most four bytes),
 * its tag in *tag, the whole element in *elem and its contents in *body. */
static int read_any(der *s, unsigned *tag, der *elem, der *body)
{
    size_t hdr = 2, len;

    if (s->n < 2 || (s->p[0] & 0x1f) == 0x1f) /* high tag numbers are not read */
        return 0;
    len = s->p[hdr - 1];
    if (len & 0x80) {
        size_t ll = len & 0x7f, i;
        if (ll == 0 || ll > 4 || s->n < hdr + ll)
            return 0;
        len = 0;
        for (i = 0; i < ll; i++)
            len = len << 8 | s->p[hdr + i];
        if (len < 128 || (len >> ((ll - 1) * 8)) == 0)
            return 0;
        hdr += ll;
    }
    if (len > s->n - hdr)
        return 0;
    *tag = s->p[0];
    elem->p = s->p;
    elem->n = hdr + len;
    body->p = s->p + hdr;
    body->n = len;
    s->p += hdr + len;
    s->n -= hdr + len;
    return 1;
}

/* ReadASN1 / ReadASN1Element: the next element, which must carry `want`. */
static int read(der *s, unsigned want, der *elem, der *body)
{
    der save = *s, e, b;
    unsigned t;

    if (!read_any(s, &t, &e, &b) || t != want) {
        *s = save;
        return 0;
    }
    if (elem)
        *elem = e;
    if (body)
        *body = b;
    return 1;
}

static int peek(const der *s, unsigned tag)
{
    return s->n > 0 && s->p[0] == tag;
}

/* checkASN1Integer: non-empty and minimal. */
static int integer_ok(const der *b)
{
    if (b->n == 0)
        return 0;
    return b->n == 1 || !((b->p[0] == 0 && !(b->p[1] & 0x80)) || (b->p[0] == 0xff && (b->p[1] & 0x80)));
}

/* ReadASN1Integer into a big.Int: *sign = -1, 0 or 1. */
static int read_big(der *s, int *sign)
{
    der b;
    size_t i;

    if (!read(s, T_INTEGER, NULL, &b) || !integer_ok(&b))
        return 0;
    *sign = (b.p[0] & 0x80) ? -1 : 0;
    for (i = 0; i < b.n && *sign == 0; i++)
        if (b.p[i])
            *sign = 1;
    return 1;
}

/* ReadASN1Integer into an int64. */
static int read_int64(der *s, long long *out)
{
    der b;
    unsigned long long v;
    size_t i;

    if (!read(s, T_INTEGER, NULL, &b) || !integer_ok(&b) || b.n > 8)
        return 0;
    v = (b.p[0] & 0x80) ? ~0ULL : 0;
    for (i = 0; i < b.n; i++)
        v = v << 8 | b.p[i];
    *out = (long long)v;
    return 1;
}

/* ReadASN1ObjectIdentifier: base-128 components, each minimal and below 2^31; the text form in oid. */
static int read_oid(der *s, wh_buf *oid)
{
    der b;
    size_t i = 0;
    int first = 1;

    if (!read(s, T_OID, NULL, &b) || b.n == 0)
        return 0;
    while (i < b.n) {
        unsigned long v = 0;
        size_t start = i;
        for (;; i++) {
            if (i >= b.n || (i == start && b.p[i] == 0x80) || v >= 1UL << (31 - 7))
                return 0;
            v = v << 7 | (b.p[i] & 0x7f);
            if (!(b.p[i] & 0x80))
                break;
        }
        i++;
        if (oid == NULL)
            continue;
        if (first)
            wh_buf_printf(oid, "%lu.%lu", v < 80 ? v / 40 : 2, v < 80 ? v % 40 : v - 80);
        else
            wh_buf_printf(oid, ".%lu", v);
        first = 0;
    }
    return 1;
}

/* ReadASN1BitString: padding bits at most 7, zero, and none in an empty string; the right-aligned bytes
 * (asn1.BitString.RightAlign) in *out when out is not NULL. */
static int read_bits(der *s, wh_buf *out)
{
    der b;
    unsigned pad;
    size_t i;

    if (!read(s, T_BIT_STRING, NULL, &b) || b.n == 0)
        return 0;
    pad = b.p[0];
    if (pad > 7 || (b.n == 1 && pad > 0) || (b.p[b.n - 1] & ((1u << pad) - 1)))
        return 0;
    if (out == NULL)
        return 1;
    for (i = 1; i < b.n; i++) {
        unsigned v = pad == 0 ? b.p[i] : (unsigned)((i > 1 ? b.p[i - 1] : 0) << (8 - pad) | b.p[i] >> pad);
        wh_buf_putc(out, (char)(v & 0xff));
    }
    return 1;
}

static int digits(const unsigned char *p, size_t n, int *v)
{
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        *v = *v * 10 + (p[i] - '0');
    }
    return 1;
}

static int days_in(int year, int month)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : d[month - 1];
}

/* time.Parse of the layout's digits then "Z0700", and the round trip cryptobyte demands (which a fraction of
 * a second, a zero "+0000" offset or a field out of range fails): ydigits 2 (UTCTime's YY) or 4; secs: whether
 * seconds follow the minutes. */
static int time_ok(const unsigned char *p, size_t n, int ydigits, int secs)
{
    int year, mon, day, hh, mm, ss = 0, zh, zm;
    size_t at = (size_t)ydigits + 8 + (secs ? 2 : 0);

    if (n < at + 1 || !digits(p, (size_t)ydigits, &year) || !digits(p + ydigits, 2, &mon) ||
        !digits(p + ydigits + 2, 2, &day) || !digits(p + ydigits + 4, 2, &hh) || !digits(p + ydigits + 6, 2, &mm) ||
        (secs && !digits(p + ydigits + 8, 2, &ss)))
        return 0;
    if (ydigits == 2)
        year += year >= 69 ? 1900 : 2000;
    if (mon < 1 || mon > 12 || day < 1 || day > days_in(year, mon) || hh > 23 || mm > 59 || ss > 59)
        return 0;
    if (p[at] == 'Z')
        return at + 1 == n;
    if (n != at + 5 || (p[at] != '+' && p[at] != '-') || !digits(p + at + 1, 2, &zh) || !digits(p + at + 3, 2, &zm))
        return 0;
    return zh <= 24 && zm <= 59 && (zh | zm) != 0;
}

/* readASN1Time. */
static const char *read_time(der *s)
{
    der b;

    if (peek(s, T_UTCTIME)) {
        if (!read(s, T_UTCTIME, NULL, &b) || !(time_ok(b.p, b.n, 2, 1) || time_ok(b.p, b.n, 2, 0)))
            return "x509: malformed UTCTime";
        return NULL;
    }
    if (peek(s, T_GENTIME)) {
        if (!read(s, T_GENTIME, NULL, &b) || !time_ok(b.p, b.n, 4, 1))
            return "x509: malformed GeneralizedTime";
        return NULL;
    }
    return "x509: unsupported time format";
}

/* parseASN1String's checks of the string types a name may hold. */
static const char *string_problem(unsigned tag, const der *v)
{
    size_t i;

    switch (tag) {
    case T_PRINTABLE:
        for (i = 0; i < v->n; i++) {
            unsigned char b = v->p[i];
            if (!((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                  (b >= '\'' && b <= ')') || (b >= '+' && b <= '/') || b == ' ' || b == ':' || b == '=' || b == '?' ||
                  b == '*' || b == '&'))
                return "invalid PrintableString";
        }
        return NULL;
    case T_UTF8:
        for (i = 0; i < v->n;) {
            unsigned cp;
            size_t w = wh_utf8_decode(v->p + i, v->n - i, &cp);
            if (w == 0)
                return "invalid UTF-8 string";
            i += w;
        }
        return NULL;
    case T_BMP: {
        size_t n = v->n;
        if (n % 2)
            return "invalid BMPString";
        if (n >= 2 && v->p[n - 1] == 0 && v->p[n - 2] == 0)
            n -= 2;
        for (i = 0; i < n; i += 2) {
            unsigned point = (unsigned)v->p[i] << 8 | v->p[i + 1];
            if (point == 0xfffe || point == 0xffff || (point >= 0xfdd0 && point <= 0xfdef) ||
                (point >= 0xd800 && point <= 0xdfff))
                return "invalid BMPString";
        }
        return NULL;
    }
    case T_IA5:
        /* isIA5String ranges over the runes of Go's string: a byte above 0x7f is never ASCII */
        for (i = 0; i < v->n; i++)
            if (v->p[i] > 0x7f)
                return "invalid IA5String";
        return NULL;
    case T_NUMERIC:
        for (i = 0; i < v->n; i++)
            if (!((v->p[i] >= '0' && v->p[i] <= '9') || v->p[i] == ' '))
                return "invalid NumericString";
        return NULL;
    }
    return NULL; /* T61String: read as Latin-1, anything goes */
}

/* readASN1Any's judgement of an attribute value. */
static const char *any_problem(der *s)
{
    der elem, body, copy;
    unsigned tag;
    long long i64;

    if (!read_any(s, &tag, &elem, &body))
        return "invalid ASN.1 element";
    copy = elem;
    switch (tag) {
    case T_T61:
    case T_PRINTABLE:
    case T_UTF8:
    case T_BMP:
    case T_IA5:
    case T_NUMERIC:
        return string_problem(tag, &body);
    case T_INTEGER:
        return read_int64(&copy, &i64) ? NULL : "invalid ASN.1 integer";
    case T_BIT_STRING:
        return read_bits(&copy, NULL) ? NULL : "invalid ASN.1 BIT STRING";
    case T_OID:
        return read_oid(&copy, NULL) ? NULL : "invalid ASN.1 OBJECT IDENTIFIER";
    case T_UTCTIME:
    case T_GENTIME:
        return read_time(&copy);
    case T_BOOLEAN:
        return body.n == 1 && (body.p[0] == 0 || body.p[0] == 0xff) ? NULL : "invalid ASN.1 BOOLEAN";
    }
    return NULL;
}

/* parseName: a SEQUENCE of SETs of SEQUENCE { OID, value }. */
static const char *name_problem(wh_vctx *c, der raw)
{
    der rdns, set, atav;

    if (!read(&raw, T_SEQUENCE, NULL, &rdns))
        return "x509: invalid RDNSequence";
    while (rdns.n > 0) {
        if (!read(&rdns, T_SET, NULL, &set))
            return "x509: invalid RDNSequence";
        while (set.n > 0) {
            const char *why;
            if (!read(&set, T_SEQUENCE, NULL, &atav))
                return "x509: invalid RDNSequence: invalid attribute";
            if (!read_oid(&atav, NULL))
                return "x509: invalid RDNSequence: invalid attribute type";
            if ((why = any_problem(&atav)) != NULL)
                return wh_vfmt(c, "x509: invalid RDNSequence: invalid attribute value: %s", why);
        }
    }
    return NULL;
}

/* parseAI: the algorithm's OID (text in oid) and its optional parameters element (in *params, n = 0 when
 * absent). */
static const char *ai_problem(der ai, wh_buf *oid, der *params)
{
    der body;
    unsigned tag;

    params->n = 0;
    if (!read_oid(&ai, oid))
        return "x509: malformed OID";
    if (ai.n > 0 && !read_any(&ai, &tag, params, &body))
        return "x509: malformed parameters";
    return NULL;
}

/* parsePublicKey for the algorithms Go decodes. */
static const char *public_key_problem(const char *alg, der params, const wh_buf *key)
{
    der k = {(const unsigned char *)key->data, key->len}, seq, curve;
    int sign;
    long long e;

    if (strcmp(alg, "1.2.840.113549.1.1.1") == 0) { /* RSA */
        if (params.n != 2 || params.p[0] != T_NULL || params.p[1] != 0)
            return "x509: RSA key missing NULL parameters";
        if (!read(&k, T_SEQUENCE, NULL, &seq))
            return "x509: invalid RSA public key";
        if (!read_big(&seq, &sign))
            return "x509: invalid RSA modulus";
        if (!read_int64(&seq, &e))
            return "x509: invalid RSA public exponent";
        if (sign <= 0)
            return "x509: RSA modulus is not a positive number";
        if (e <= 0)
            return "x509: RSA public exponent is not a positive number";
        return NULL;
    }
    if (strcmp(alg, "1.2.840.10045.2.1") == 0) { /* ECDSA: the named curve must be one Go has */
        wh_buf name = WH_BUF_INIT;
        const char *why = NULL;
        curve = params;
        if (!read_oid(&curve, &name))
            why = "x509: invalid ECDSA parameters";
        else if (strcmp(name.data, "1.3.132.0.33") != 0 && strcmp(name.data, "1.2.840.10045.3.1.7") != 0 &&
                 strcmp(name.data, "1.3.132.0.34") != 0 && strcmp(name.data, "1.3.132.0.35") != 0)
            why = "x509: unsupported elliptic curve";
        wh_buf_free(&name);
        return why;
    }
    if (strcmp(alg, "1.3.101.112") == 0) { /* Ed25519 */
        if (params.n != 0)
            return "x509: Ed25519 key encoded with illegal parameters";
        return key->len == 32 ? NULL : "x509: wrong Ed25519 public key size";
    }
    if (strcmp(alg, "1.3.101.110") == 0) { /* X25519 */
        if (params.n != 0)
            return "x509: X25519 key encoded with illegal parameters";
        return key->len == 32 ? NULL : "crypto/ecdh: invalid public key";
    }
    if (strcmp(alg, "1.2.840.10040.4.1") == 0) { /* DSA */
        int y, p, q, g;
        if (!read_big(&k, &y))
            return "x509: invalid DSA public key";
        if (!read(&params, T_SEQUENCE, NULL, &seq) || !read_big(&seq, &p) || !read_big(&seq, &q) || !read_big(&seq, &g))
            return "x509: invalid DSA parameters";
        if (y <= 0 || p <= 0 || q <= 0 || g <= 0)
            return "x509: zero or negative DSA parameter";
    }
    return NULL;
}

/* parseExtension and the duplicate check, for every extension of a v3 certificate. */
static const char *extensions_problem(wh_vctx *c, der *tbs)
{
    der exts, ext, val, seq;
    wh_vset seen;
    const char *why = NULL;

    if (!peek(tbs, T_EXTENSIONS))
        return NULL;
    if (!read(tbs, T_EXTENSIONS, NULL, &exts) || !read(&exts, T_SEQUENCE, NULL, &seq))
        return "x509: malformed extensions";
    wh_vset_init(&seen, 8);
    while (seq.n > 0 && why == NULL) {
        wh_buf oid = WH_BUF_INIT;
        if (!read(&seq, T_SEQUENCE, NULL, &ext)) {
            why = "x509: malformed extension";
        } else if (!read_oid(&ext, &oid)) {
            why = "x509: malformed extension OID field";
        } else if (peek(&ext, T_BOOLEAN) &&
                   !(read(&ext, T_BOOLEAN, NULL, &val) && val.n == 1 && (val.p[0] == 0 || val.p[0] == 0xff))) {
            why = "x509: malformed extension critical field";
        } else if (!read(&ext, T_OCTET_STRING, NULL, &val)) {
            why = "x509: malformed extension value field";
        } else {
            const char *key = wh_vown(c, wh_buf_steal(&oid, NULL));
            if (wh_vset_put(&seen, key, 0, NULL))
                why = wh_vfmt(c, "x509: certificate contains duplicate extension with OID %s", wh_vq(c, key));
        }
        wh_buf_free(&oid);
    }
    wh_vset_free(&seen);
    return why;
}

const char *wh_vx509_problem(wh_vctx *c, const unsigned char *data, size_t n)
{
    der input = {data, n}, cert, outer, tbs, tbs_body, sig_ai, outer_ai, name, validity, spki, pk_ai, params;
    wh_buf oid = WH_BUF_INIT, key = WH_BUF_INIT;
    long long version = 0;
    int sign;
    const char *why = NULL;

    if (!read(&input, T_SEQUENCE, &cert, &outer)) {
        why = "x509: malformed certificate";
        goto out;
    }
    if (!read(&outer, T_SEQUENCE, &tbs, &tbs_body)) {
        why = "x509: malformed tbs certificate";
        goto out;
    }
    if (peek(&tbs_body, T_VERSION)) {
        der v;
        if (!read(&tbs_body, T_VERSION, NULL, &v) || !read_int64(&v, &version) || v.n != 0) {
            why = "x509: malformed version";
            goto out;
        }
    }
    if (version < 0 || version > 3) {
        why = "x509: malformed version";
        goto out;
    }
    if (version + 1 > 3) {
        why = "x509: invalid version";
        goto out;
    }
    if (!read_big(&tbs_body, &sign)) {
        why = "x509: malformed serial number";
        goto out;
    }
    if (sign < 0) {
        why = "x509: negative serial number";
        goto out;
    }
    if (!read(&tbs_body, T_SEQUENCE, NULL, &sig_ai)) {
        why = "x509: malformed signature algorithm identifier";
        goto out;
    }
    if (!read(&outer, T_SEQUENCE, NULL, &outer_ai)) {
        why = "x509: malformed algorithm identifier";
        goto out;
    }
    if (outer_ai.n != sig_ai.n || memcmp(outer_ai.p, sig_ai.p, outer_ai.n) != 0) {
        why = "x509: inner and outer signature algorithm identifiers don't match";
        goto out;
    }
    if ((why = ai_problem(sig_ai, NULL, &params)) != NULL)
        goto out;
    if (!read(&tbs_body, T_SEQUENCE, &name, NULL)) {
        why = "x509: malformed issuer";
        goto out;
    }
    if ((why = name_problem(c, name)) != NULL)
        goto out;
    if (!read(&tbs_body, T_SEQUENCE, NULL, &validity)) {
        why = "x509: malformed validity";
        goto out;
    }
    if ((why = read_time(&validity)) != NULL || (why = read_time(&validity)) != NULL)
        goto out;
    if (!read(&tbs_body, T_SEQUENCE, &name, NULL)) {
        why = "x509: malformed issuer"; /* sic: Go says issuer for the subject too */
        goto out;
    }
    if ((why = name_problem(c, name)) != NULL)
        goto out;
    if (!read(&tbs_body, T_SEQUENCE, NULL, &spki)) {
        why = "x509: malformed spki";
        goto out;
    }
    if (!read(&spki, T_SEQUENCE, NULL, &pk_ai)) {
        why = "x509: malformed public key algorithm identifier";
        goto out;
    }
    wh_buf_puts(&oid, "");
    if ((why = ai_problem(pk_ai, &oid, &params)) != NULL)
        goto out;
    if (!read_bits(&spki, &key)) {
        why = "x509: malformed subjectPublicKey";
        goto out;
    }
    if ((why = public_key_problem(oid.data, params, &key)) != NULL)
        goto out;
    if (version >= 1) {
        der skip, b;
        unsigned t;
        if (peek(&tbs_body, T_ISSUER_UID) && !read_any(&tbs_body, &t, &skip, &b)) {
            why = "x509: malformed issuerUniqueID";
            goto out;
        }
        if (peek(&tbs_body, T_SUBJECT_UID) && !read_any(&tbs_body, &t, &skip, &b)) {
            why = "x509: malformed subjectUniqueID";
            goto out;
        }
        if (version == 2 && (why = extensions_problem(c, &tbs_body)) != NULL)
            goto out;
    }
    if (!read_bits(&outer, NULL)) {
        why = "x509: malformed signature";
        goto out;
    }
    if (cert.n != n)
        why = "x509: trailing data";
out:
    wh_buf_free(&oid);
    wh_buf_free(&key);
    return why;
}
