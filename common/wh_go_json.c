/*
 * wh_go_json.c - encoding/json as Go writes and reports it (see wh_go.h):
 * the string escaper, the compact writer over jansson values, omitempty's
 * "empty" and the UnmarshalTypeError text.
 *
 * Injection output embeds JSON inside strings (PROXY_CONFIG, the
 * sidecar.istio.io/status and proxy.istio.io/overrides annotations, the
 * values templates serialise) that are compared byte for byte with istiod's;
 * the JSON Patch and the AdmissionReview are written here too (with only
 * the escapes JSON needs), and the template engine's toJson (with Go's sorted
 * map keys).  The writer appends small pieces by
 * the thousand, so it reserves room once per string and copies runs of
 * plain bytes in one go.
 */
#include "wh_go.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "wh_chars.h"

static const char hex[] = "0123456789abcdef";

/* Bytes a Go JSON string holds as they are (1) and those that need a look
 * (0): controls, '"', '\\', every byte from 0x80 (UTF-8 is checked, U+2028
 * and U+2029 escaped) and, for HTML-safe output, '<', '>' and '&'. */
static const unsigned char plain_text[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1};
static const unsigned char plain_html[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x25] = 1, [0x27 ... 0x3b] = 1,
                                              [0x3d] = 1,          [0x3f ... 0x5b] = 1, [0x5d ... 0x7f] = 1};

static inline void put_bytes(wh_buf *out, const void *p, size_t n)
{
    if (out->cap - out->len <= n)
        wh_buf_reserve(out, n);
    memcpy(out->data + out->len, p, n);
    out->len += n;
    out->data[out->len] = '\0';
}

void wh_go_json_string(wh_buf *out, const char *s, size_t len, int flags)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *plain = (flags & WH_GO_JSON_HTML) ? plain_html : plain_text;
    size_t i, n;

    if (out->cap - out->len <= len + 2)
        wh_buf_reserve(out, len + 2);
    for (n = 0; n < len && plain[p[n]]; n++)
        ;
    if (n == len) { /* most strings (keys, names) need no escape: one copy, room reserved above */
        char *d = out->data + out->len;
        d[0] = '"';
        memcpy(d + 1, s, len);
        d[len + 1] = '"';
        d[len + 2] = '\0';
        out->len += len + 2;
        return;
    }
    out->data[out->len++] = '"';
    for (i = 0; i < len;) {
        char esc[8];
        const char *e = esc;
        size_t elen = 2, adv = 1;
        unsigned cp;
        if (i != 0)                                  /* the first run was found above */
            for (n = i; n < len && plain[p[n]]; n++) /* copy plain bytes in one go */
                ;
        if (n != i)
            put_bytes(out, p + i, n - i);
        if ((i = n) >= len)
            break;
        switch (p[i]) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        case '\b': /* Go 1.22 on; older releases wrote \u0008 and \u000c */
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        default:
            if (p[i] < 0x80) { /* other controls, and '<', '>', '&' */
                esc[0] = '\\', esc[1] = 'u', esc[2] = '0', esc[3] = '0';
                esc[4] = hex[p[i] >> 4], esc[5] = hex[p[i] & 15];
                elen = 6;
            } else if ((adv = wh_utf8_decode(p + i, len - i, &cp)) == 0) {
                e = "\\ufffd", elen = 6, adv = 1; /* Go replaces each invalid byte */
            } else if ((cp == 0x2028 || cp == 0x2029) && !(flags & WH_GO_JSON_MINIMAL)) {
                e = cp == 0x2028 ? "\\u2028" : "\\u2029", elen = 6;
            } else {
                e = (const char *)p + i, elen = adv;
            }
        }
        put_bytes(out, e, elen);
        i += adv;
    }
    put_bytes(out, "\"", 1);
}

/* Decimal text of `v` (what "%" JSON_INTEGER_FORMAT prints), without
 * snprintf's format parsing. */
static void put_integer(wh_buf *out, json_int_t v)
{
    char num[24], *q = num + sizeof(num);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    do
        *--q = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--q = '-';
    put_bytes(out, q, (size_t)(num + sizeof(num) - q));
}

static void newline(wh_buf *out, const char *indent, int depth)
{
    put_bytes(out, "\n", 1);
    while (depth-- > 0)
        wh_buf_puts(out, indent);
}

static void write_value(wh_buf *out, const json_t *v, int flags, const char *indent, int depth);

/* One member of an object, `i` its place: compact "k":v, or each on its own
 * line (indent) as json.MarshalIndent prints them. */
static void write_member(wh_buf *out, size_t i, const char *key, size_t key_len, const json_t *v, int flags,
                         const char *indent, int depth)
{
    put_bytes(out, i == 0 ? "{" : ",", 1);
    if (indent != NULL)
        newline(out, indent, depth + 1);
    wh_go_json_string(out, key, key_len, flags);
    put_bytes(out, ": ", indent != NULL ? 2 : 1);
    write_value(out, v, flags, indent, depth + 1);
}

typedef struct member {
    const char *key;
    size_t len;
    const json_t *val;
} member;

static int member_cmp(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* The object's members in its own order, or with WH_GO_JSON_SORTED in the
 * byte order of their keys. */
static void write_object(wh_buf *out, const json_t *v, int flags, const char *indent, int depth)
{
    size_t n = json_object_size(v), i = 0;
    void *it;

    if (n == 0) {
        put_bytes(out, "{}", 2);
        return;
    }
    if (flags & WH_GO_JSON_SORTED && n > 1) {
        member small[16], *m = n <= 16 ? small : wh_malloc(n * sizeof(*m));
        for (it = json_object_iter((json_t *)v); it != NULL; it = json_object_iter_next((json_t *)v, it), i++)
            m[i] = (member){json_object_iter_key(it), json_object_iter_key_len(it), json_object_iter_value(it)};
        qsort(m, n, sizeof(*m), member_cmp);
        for (i = 0; i < n; i++)
            write_member(out, i, m[i].key, m[i].len, m[i].val, flags, indent, depth);
        if (m != small)
            free(m);
    } else {
        for (it = json_object_iter((json_t *)v); it != NULL; it = json_object_iter_next((json_t *)v, it), i++)
            write_member(out, i, json_object_iter_key(it), json_object_iter_key_len(it), json_object_iter_value(it),
                         flags, indent, depth);
    }
    if (indent != NULL)
        newline(out, indent, depth);
    put_bytes(out, "}", 1);
}

static void write_value(wh_buf *out, const json_t *v, int flags, const char *indent, int depth)
{
    size_t i, n;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        write_object(out, v, flags, indent, depth);
        return;
    case JSON_ARRAY:
        if ((n = json_array_size(v)) == 0) {
            put_bytes(out, "[]", 2);
            return;
        }
        for (i = 0; i < n; i++) {
            put_bytes(out, i == 0 ? "[" : ",", 1);
            if (indent != NULL)
                newline(out, indent, depth + 1);
            write_value(out, json_array_get(v, i), flags, indent, depth + 1);
        }
        if (indent != NULL)
            newline(out, indent, depth);
        put_bytes(out, "]", 1);
        return;
    case JSON_STRING:
        wh_go_json_string(out, json_string_value(v), json_string_length(v), flags);
        return;
    case JSON_INTEGER:
        put_integer(out, json_integer_value(v));
        return;
    case JSON_REAL: /* jansson holds no NaN or infinity */
        wh_go_json_float(out, json_real_value(v));
        return;
    case JSON_TRUE:
        put_bytes(out, "true", 4);
        return;
    case JSON_FALSE:
        put_bytes(out, "false", 5);
        return;
    default:
        put_bytes(out, "null", 4);
        return;
    }
}

void wh_go_json(wh_buf *out, const json_t *v, int flags)
{
    write_value(out, v, flags, NULL, 0);
}

void wh_go_json_indent(wh_buf *out, const json_t *v, int flags, const char *indent)
{
    write_value(out, v, flags, indent, 0);
}

int wh_go_is_empty(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_REAL:
        return json_real_value(v) == 0;
    case JSON_FALSE:
    case JSON_NULL:
        return 1;
    case JSON_ARRAY:
        return json_array_size(v) == 0;
    case JSON_OBJECT:
        return json_object_size(v) == 0;
    default:
        return 0;
    }
}

const char *wh_go_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_NULL:
        break;
    }
    return "null";
}

void wh_go_unmarshal_error(wh_buf *out, const char *value, const char *go_struct, const char *field,
                           const char *go_type)
{
    if (go_struct != NULL)
        wh_buf_printf(out, "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value, go_struct, field,
                      go_type);
    else
        wh_buf_printf(out, "json: cannot unmarshal %s into Go value of type %s", value, go_type);
}

const char *wh_go_unmarshal_number(double d, char *buf, size_t size)
{
    wh_buf lit = WH_BUF_INIT;
    double a = fabs(d);

    /* Go quotes the literal as the manifest wrote it; a manifest writes the
     * shortest digits, plainly unless the number is huge or tiny (2.5,
     * 1234567.5, 1e+30). */
    wh_go_float(&lit, d, a >= 1e-4 && a < 1e21 ? 'f' : 'g', -1);
    snprintf(buf, size, "number %s", lit.data);
    wh_buf_free(&lit);
    return buf;
}
