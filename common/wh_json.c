/*
 * wh_json.c - the fast JSON reader behind wh_json_loadb (see wh_json.h).
 *
 * Recursive descent over the bytes, strict RFC 8259 grammar.  It is
 * deliberately conservative: whenever the input is not plainly valid, or a
 * value would need jansson's judgement (integers beyond 64 bits, reals that
 * overflow, NUL in keys, nesting near jansson's limit), it gives up and the
 * caller re-reads the whole text with json_loadb.  It must never accept
 * what jansson rejects, nor build anything jansson would build differently.
 */
#include "wh_json.h"
#include "wh_alloc.h"
#include "wh_chars.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* jansson's limit is 2048; stop a little earlier and let it report. */
#define MAX_DEPTH 2000

typedef struct reader {
    const unsigned char *p, *end;
    size_t flags;
    int depth;
    char *tmp; /* decoded text of strings with escapes */
    size_t tmp_cap;
} reader;

static json_t *read_value(reader *r);

static void skip_ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

/* Length of the valid UTF-8 sequence (2-4 bytes) at p, 0 when invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n = end - p;

    if (c >= 0xc2 && c <= 0xdf)
        return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))
            return 0; /* overlong, or a surrogate */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
            return 0; /* overlong, or above U+10FFFF */
        return 4;
    }
    return 0;
}

static int hex4(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++) {
        int d = wh_hex_digit(p[i]);
        if (d < 0)
            return 0;
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return 1;
}

static int tmp_reserve(reader *r, size_t need)
{
    char *grown;
    size_t cap = r->tmp_cap ? r->tmp_cap : 256;

    if (need <= r->tmp_cap)
        return 1;
    while (cap < need)
        cap *= 2;
    grown = wh_realloc(r->tmp, cap);
    r->tmp = grown;
    r->tmp_cap = cap;
    return 1;
}

/* Decode the string whose opening quote is at r->p - 1, from `start` (where
 * the first escape is) into r->tmp; returns its length, or -1 to give up. */
static long decode_escaped(reader *r, const unsigned char *start, size_t *consumed_to)
{
    const unsigned char *p = start, *end = r->end;
    size_t len;

    /* the bytes before the first escape were already checked */
    if (!tmp_reserve(r, (size_t)(end - r->p) + 1))
        return -1;
    memcpy(r->tmp, r->p, (size_t)(start - r->p));
    len = (size_t)(start - r->p);
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *consumed_to = (size_t)(p + 1 - r->p);
            return (long)len;
        }
        if (c < 0x20)
            return -1;
        if (c >= 0x80) {
            size_t n = utf8_seq(p, end);
            if (n == 0)
                return -1;
            memcpy(r->tmp + len, p, n);
            len += n, p += n;
            continue;
        }
        if (c != '\\') {
            r->tmp[len++] = (char)c, p++;
            continue;
        }
        if (++p >= end)
            return -1;
        switch (*p++) {
        case '"':
            r->tmp[len++] = '"';
            break;
        case '\\':
            r->tmp[len++] = '\\';
            break;
        case '/':
            r->tmp[len++] = '/';
            break;
        case 'b':
            r->tmp[len++] = '\b';
            break;
        case 'f':
            r->tmp[len++] = '\f';
            break;
        case 'n':
            r->tmp[len++] = '\n';
            break;
        case 'r':
            r->tmp[len++] = '\r';
            break;
        case 't':
            r->tmp[len++] = '\t';
            break;
        case 'u': {
            unsigned cp, lo;
            if (end - p < 4 || !hex4(p, &cp))
                return -1;
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return -1; /* a lone low surrogate */
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
                    return -1;
                p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0 && !(r->flags & JSON_ALLOW_NUL))
                return -1;
            /* an escape never takes more room than its UTF-8 form: \uXXXX is 6 bytes for at most 3,
             * a surrogate pair 12 for 4, so tmp (sized for the rest of the input) always fits */
            len += wh_utf8_encode(cp, r->tmp + len);
            break;
        }
        default:
            return -1;
        }
    }
    return -1; /* unterminated */
}

/* The offset (0-7) of the first byte among the 8 at p that needs a look --
 * a quote, backslash, control character or non-ASCII byte -- or 8 when none
 * does.  (The tricks below can flag a byte wrongly only above a real one.) */
static unsigned first_special8(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t w, quote, bslash, m;

    memcpy(&w, p, 8);
    quote = w ^ (ones * '"');
    bslash = w ^ (ones * '\\');
    m = (((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | (w - ones * 0x20) | w) & highs;
    return m == 0 ? 8 : (unsigned)__builtin_ctzll(m) >> 3;
}

/* A string at r->p (just after its opening quote): *s and *len point either
 * into the input or into r->tmp.  0 to give up. */
static int read_string(reader *r, const char **s, size_t *len)
{
    const unsigned char *p = r->p, *end = r->end;

    while (p < end) {
        unsigned c, k;
        while (end - p >= 8 && (k = first_special8(p)) == 8)
            p += 8;
        if (end - p >= 8)
            p += k;
        else if (p >= end)
            break;
        c = *p;
        if (c == '"') {
            *s = (const char *)r->p;
            *len = (size_t)(p - r->p);
            r->p = p + 1;
            return 1;
        }
        if (c == '\\') {
            size_t consumed = 0;
            long n = decode_escaped(r, p, &consumed);
            if (n < 0)
                return 0;
            *s = r->tmp;
            *len = (size_t)n;
            r->p += consumed;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c < 0x80) {
            p++;
        } else {
            size_t n = utf8_seq(p, end);
            if (n == 0)
                return 0;
            p += n;
        }
    }
    return 0;
}

static json_t *read_number(reader *r)
{
    const unsigned char *start = r->p, *p = r->p, *end = r->end;
    int is_real = 0, neg = 0;
    size_t digits;

    if (p < end && *p == '-')
        neg = 1, p++;
    if (p >= end || *p < '0' || *p > '9')
        return NULL;
    if (*p == '0') {
        p++;
        if (p < end && *p >= '0' && *p <= '9')
            return NULL; /* leading zero */
    } else {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    digits = (size_t)(p - start) - (size_t)neg;
    if (p < end && *p == '.') {
        is_real = 1, p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_real = 1, p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    r->p = p;
    if (!is_real && digits <= 18) { /* fits in 63 bits: no overflow possible */
        json_int_t v = 0;
        for (const unsigned char *q = start + neg; q < p; q++)
            v = v * 10 + (*q - '0');
        return json_integer(neg ? -v : v);
    }
    {
        char text[64], *stop;
        size_t n = (size_t)(p - start);
        if (n >= sizeof(text))
            return NULL; /* long numbers: jansson decides */
        memcpy(text, start, n);
        text[n] = '\0';
        errno = 0;
        if (!is_real) {
            long long v = strtoll(text, &stop, 10);
            if (errno == ERANGE || *stop != '\0')
                return NULL; /* jansson reports too big integers */
            return json_integer((json_int_t)v);
        } else {
            double d = strtod(text, &stop);
            if (*stop != '\0' || ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE))
                return NULL; /* jansson reports the overflow */
            return json_real(d);
        }
    }
}

static json_t *read_object(reader *r)
{
    json_t *obj = json_object(), *v;
    const char *key;
    char *owned = NULL;
    size_t klen;

    r->p++; /* { */
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return obj;
    }
    for (;;) {
        if (r->p >= r->end || *r->p != '"')
            goto fail;
        r->p++;
        if (!read_string(r, &key, &klen) || memchr(key, '\0', klen) != NULL)
            goto fail;
        if (key == r->tmp) { /* reading the value may reuse tmp */
            owned = wh_malloc(klen + 1);
            memcpy(owned, key, klen);
            key = owned;
        }
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':')
            goto fail;
        r->p++;
        if ((v = read_value(r)) == NULL)
            goto fail;
        if ((r->flags & JSON_REJECT_DUPLICATES) && json_object_getn(obj, key, klen) != NULL) {
            json_decref(v);
            goto fail; /* jansson words the error */
        }
        if (json_object_setn_new_nocheck(obj, key, klen, v) != 0)
            goto fail;
        free(owned);
        owned = NULL;
        skip_ws(r);
        if (r->p >= r->end)
            goto fail;
        if (*r->p == '}') {
            r->p++;
            return obj;
        }
        if (*r->p != ',')
            goto fail;
        r->p++;
        skip_ws(r);
    }
fail:
    free(owned);
    json_decref(obj);
    return NULL;
}

static json_t *read_array(reader *r)
{
    json_t *arr = json_array(), *v;

    r->p++; /* [ */
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return arr;
    }
    for (;;) {
        if ((v = read_value(r)) == NULL || json_array_append_new(arr, v) != 0)
            goto fail;
        skip_ws(r);
        if (r->p >= r->end)
            goto fail;
        if (*r->p == ']') {
            r->p++;
            return arr;
        }
        if (*r->p != ',')
            goto fail;
        r->p++;
    }
fail:
    json_decref(arr);
    return NULL;
}

static json_t *read_literal(reader *r, const char *word, size_t n, json_t *value)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return NULL;
    r->p += n;
    return value;
}

static json_t *read_value(reader *r)
{
    json_t *v;
    const char *s;
    size_t len;

    skip_ws(r);
    if (r->p >= r->end)
        return NULL;
    switch (*r->p) {
    case '{':
    case '[':
        if (++r->depth > MAX_DEPTH)
            return NULL;
        v = *r->p == '{' ? read_object(r) : read_array(r);
        r->depth--;
        return v;
    case '"':
        r->p++;
        if (!read_string(r, &s, &len))
            return NULL;
        return json_stringn_nocheck(s, len); /* checked as UTF-8 above */
    case 't':
        return read_literal(r, "true", 4, json_true());
    case 'f':
        return read_literal(r, "false", 5, json_false());
    case 'n':
        return read_literal(r, "null", 4, json_null());
    default:
        return read_number(r);
    }
}

json_t *wh_json_fast_loadb(const char *buf, size_t len, size_t flags)
{
    reader r = {(const unsigned char *)buf, NULL, flags, 0, NULL, 0};
    json_t *v = NULL;

    if (buf == NULL || (flags & ~(size_t)WH_JSON_FAST_FLAGS) != 0)
        return NULL;
    r.end = r.p + len; /* not before the NULL check: arithmetic on NULL is undefined */
    skip_ws(&r);
    if (!(flags & JSON_DECODE_ANY) && (r.p >= r.end || (*r.p != '{' && *r.p != '[')))
        goto out;
    if ((v = read_value(&r)) == NULL)
        goto out;
    skip_ws(&r);
    if (r.p != r.end) { /* trailing bytes: jansson's "end of file expected" */
        json_decref(v);
        v = NULL;
    }
out:
    free(r.tmp);
    return v;
}

json_t *wh_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
    json_t *v = wh_json_fast_loadb(buf, len, flags);

    if (v != NULL) {
        if (error != NULL) {
            memset(error, 0, sizeof(*error));
            error->line = error->column = -1;
        }
        return v;
    }
    return json_loadb(buf, len, flags, error);
}
