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
 * map keys).  The writer appends small pieces by the thousand (the hello
 * pod's patch is ~900 tokens in 5 KB), so it keeps a cursor into the
 * buffer, checks for room once per token and terminates the text once at the
 * end; strings are scanned and copied 8 bytes at a time
 * (tests/common/test_go.c checks that scan against Go's byte-by-byte rules),
 * and jansson's values are read through its layouts where
 * wh_json_arena_install confirmed them (common/wh_json_arena.h), not a call
 * per member and string.
 */
#include "wh_go.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_json_arena.h"

static const char hex[] = "0123456789abcdef";

/* An appending cursor over `out`: the writing functions take the next byte
 * (d) and return it moved past what they wrote; end is the end of the room
 * reserved (one byte short of the capacity: the final NUL's).  out->len is
 * brought up to date by writer_end() only. */
typedef struct writer {
    wh_buf *out;
    char *end;
    int flags;
    const char *indent;
} writer;

static char *writer_grow(writer *w, char *d, size_t n)
{
    wh_buf *out = w->out;

    out->len = (size_t)(d - out->data);
    wh_buf_reserve(out, n);
    w->end = out->data + out->cap - 1;
    return out->data + out->len;
}

/* Room for n more bytes at d; returns d (which may have moved). */
static inline char *room(writer *w, char *d, size_t n)
{
    if ((size_t)(w->end - d) < n)
        d = writer_grow(w, d, n);
    return d;
}

static char *writer_begin(writer *w, wh_buf *out, int flags, const char *indent, size_t hint)
{
    w->out = out;
    w->flags = flags;
    w->indent = indent;
    wh_buf_reserve(out, hint); /* never NULL from here on */
    w->end = out->data + out->cap - 1;
    return out->data + out->len;
}

static void writer_end(writer *w, char *d)
{
    w->out->len = (size_t)(d - w->out->data);
    *d = '\0';
}

static inline char *put(writer *w, char *d, const char *s, size_t n)
{
    d = room(w, d, n);
    memcpy(d, s, n);
    return d + n;
}

/* --- strings ---------------------------------------------------------------- */

/* Bytes a Go JSON string holds as they are (1) and those that need a look
 * (0): controls, '"', '\\', every byte from 0x80 (UTF-8 is checked, U+2028
 * and U+2029 escaped) and, for HTML-safe output, '<', '>' and '&'.  The
 * word-at-a-time scan below (look()) flags the same bytes; these tables
 * finish a string's last few bytes after an escape. */
static const unsigned char plain_text[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1};
static const unsigned char plain_html[256] = {[0x20 ... 0x21] = 1, [0x23 ... 0x25] = 1, [0x27 ... 0x3b] = 1,
                                              [0x3d] = 1,          [0x3f ... 0x5b] = 1, [0x5d ... 0x7f] = 1};

/* The high bit of each byte of x (wh_load8) that needs a look (as the
 * tables above): JSON's own (wh_json_special8, shared with the reader) and,
 * for HTML-safe output, '&', '<' and '>' ('<' and '>' differ in one bit: one
 * test covers both).  Each test's first flag is exact, so their union's is. */
static inline uint64_t look(uint64_t x, int html)
{
    uint64_t m = wh_json_special8(x);

    if (html)
        m |= (((x ^ WH_BYTES8('&')) - WH_BYTES8(1)) | (((x ^ WH_BYTES8('<')) & WH_BYTES8(0xfd)) - WH_BYTES8(1))) &
             WH_BYTES8(0x80);
    return m;
}

/* Writes the escape of the text at *pp (a byte look() flags: a control,
 * '"', '\\', HTML's three, or the start of a UTF-8 sequence, valid or not)
 * at d, moves *pp past what it consumed and returns the cursor after it,
 * with room left for the rest of the text, its closing quote and what
 * follows the quote (see put_string_as). */
static char *escape(writer *w, char *d, const unsigned char **pp, const unsigned char *end)
{
    const unsigned char *p = *pp;
    size_t adv = 1;
    unsigned cp;

    d = room(w, d, (size_t)(end - p) + 6 + 2);
    switch (*p) {
    case '"':
        d[0] = '\\', d[1] = '"', d += 2;
        break;
    case '\\':
        d[0] = '\\', d[1] = '\\', d += 2;
        break;
    case '\n':
        d[0] = '\\', d[1] = 'n', d += 2;
        break;
    case '\r':
        d[0] = '\\', d[1] = 'r', d += 2;
        break;
    case '\t':
        d[0] = '\\', d[1] = 't', d += 2;
        break;
    case '\b': /* Go 1.22 on; older releases wrote \u0008 and \u000c */
        d[0] = '\\', d[1] = 'b', d += 2;
        break;
    case '\f':
        d[0] = '\\', d[1] = 'f', d += 2;
        break;
    default:
        if (*p < 0x80) { /* other controls, and '<', '>', '&' */
            memcpy(d, "\\u00", 4);
            d[4] = hex[*p >> 4], d[5] = hex[*p & 15], d += 6;
        } else if ((adv = wh_utf8_decode(p, (size_t)(end - p), &cp)) == 0) {
            memcpy(d, "\\ufffd", 6), d += 6, adv = 1; /* Go replaces each invalid byte */
        } else if ((cp == 0x2028 || cp == 0x2029) && !(w->flags & WH_GO_JSON_MINIMAL)) {
            memcpy(d, cp == 0x2028 ? "\\u2028" : "\\u2029", 6), d += 6;
        } else {
            d[0] = (char)p[0], d[1] = (char)p[1]; /* a valid sequence of 2 to 4 bytes, as it is */
            if (adv > 2)
                d[2] = (char)p[2];
            if (adv > 3)
                d[3] = (char)p[3];
            d += adv;
        }
    }
    *pp = p + adv;
    return d;
}

/* The text from p a byte at a time (what is left after an escape near the
 * end, or a short string that needs one). */
static char *put_bytes(writer *w, char *d, const unsigned char *p, const unsigned char *end, int html)
{
    const unsigned char *plain = html ? plain_html : plain_text;

    while (p < end) {
        if (plain[*p])
            *d++ = (char)*p++;
        else
            d = escape(w, d, &p, end);
    }
    return d;
}

/* 16 bytes as one vector (GCC's vector extensions: SSE2 on x86-64, NEON
 * on arm64, plain words elsewhere). */
typedef signed char bytes16 __attribute__((vector_size(16)));
typedef uint64_t words16 __attribute__((vector_size(16)));

#if defined(__SSE2__)
/* A bit for each byte of x that needs a look (the tables above, exactly):
 * signed, every byte from 0x80 is below 0x20 as the controls are; '<' and
 * '>' differ in one bit. */
static inline unsigned flags16(bytes16 x, int html)
{
    __m128i v = (__m128i)x;
    __m128i m =
        _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));

    if (html)
        m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('&')),
                                         _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(2)), _mm_set1_epi8('>'))));
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* Whether any byte of x needs a look: with SSE2 one movemask answers. */
static inline int look16(bytes16 x, int html)
{
#if defined(__SSE2__)
    return flags16(x, html) != 0;
#else
    bytes16 m = (x < 0x20) | (x == '"') | (x == '\\');
    words16 q;

    if (html)
        m |= (x == '&') | (x == '<') | (x == '>');
    q = (words16)m;
    return (q[0] | q[1]) != 0;
#endif
}

/* The quoted string at d, after `pre` and before `post` (each a byte, 0
 * for none), whatever it holds.  From 8 bytes on: 16 (SSE2) or 8 bytes at
 * a time are loaded, stored as they are and kept up to the first that
 * needs a look (JSON in annotations has an escape every ~8 bytes);
 * the last few are the text's last 8 again (overlapping bytes already
 * checked) unless an escape came that close to the end. */
static inline __attribute__((always_inline)) char *escape_string_as(writer *w, char *d, const unsigned char *p,
                                                                    size_t len, int html, char pre, char post)
{
    const unsigned char *end = p + len, *clean = p; /* clean: where the text is unchanged from */

    d = room(w, d, len + 4);
    if (pre != 0)
        *d++ = pre;
    *d++ = '"';
    for (;;) {
        uint64_t m;
        size_t k;
#if defined(__SSE2__)
        while (end - p >= 16) {
            bytes16 x;
            unsigned f;
            memcpy(&x, p, 16);
            memcpy(d, &x, 16);
            if ((f = flags16(x, html)) != 0) {
                k = (size_t)__builtin_ctz(f);
                goto escape_at;
            }
            p += 16, d += 16;
        }
#endif
        while (end - p >= 8) {
            m = look(wh_load8(p), html);
            memcpy(d, p, 8);
            if (m != 0)
                goto escape;
            p += 8, d += 8;
        }
        if (p == end)
            break;
        if (len < 8 || end - 8 < clean) { /* (end - 8 only exists from 8 bytes on) */
            d = put_bytes(w, d, p, end, html);
            break;
        }
        k = (size_t)(8 - (end - p)); /* the bytes before p that come again */
        p -= k, d -= k;
        m = look(wh_load8(p), html);
        memcpy(d, p, 8);
        if (m == 0) {
            d += 8;
            break;
        }
    escape:
        k = (size_t)__builtin_ctzll(m) / 8;
#if defined(__SSE2__)
    escape_at:
#endif
        p += k, d += k;
        if (*p == '"' || *p == '\\') { /* the escapes of JSON inside strings (annotations), without a call */
            d = room(w, d, (size_t)(end - p) + 2 + 2);
            d[0] = '\\', d[1] = (char)*p, d += 2, p++;
        } else {
            d = escape(w, d, &p, end);
        }
        clean = p;
    }
    *d++ = '"';
    if (post != 0)
        *d++ = post;
    return d;
}

static __attribute__((noinline)) char *escape_string(writer *w, char *d, const char *s, size_t len, char pre, char post)
{
    if (w->flags & WH_GO_JSON_HTML)
        return escape_string_as(w, d, (const unsigned char *)s, len, 1, pre, post);
    return escape_string_as(w, d, (const unsigned char *)s, len, 0, pre, post);
}

/* The same for the common case, without a call: a string that needs no
 * escape, written where there is room.  The whole text is checked and
 * copied 16 bytes at a time (the last 16 overlapping), or below 16 bytes
 * by two overlapping loads of 8 (or 4, or 2) bytes checked as one vector;
 * NULL when it needs an escape or more room (escape_string() then writes it
 * from the start).  Why: most strings of a patch are names and values of
 * 4 to 15 bytes, ~350 of them: one check each, not one per 8 bytes. */
static inline __attribute__((always_inline)) char *plain_string_as(writer *w, char *d, const unsigned char *p,
                                                                   size_t len, int html, char pre, char post)
{
    int flagged;

    if ((size_t)(w->end - d) < len + 4)
        return NULL;
    if (pre != 0)
        *d++ = pre;
    *d++ = '"';
    if (len >= 16) {
        const unsigned char *last = p + len - 16;
        char *dlast = d + len - 16;
        bytes16 x;
        for (flagged = 0; p < last; p += 16, d += 16) {
            memcpy(&x, p, 16);
            flagged |= look16(x, html);
            memcpy(d, &x, 16);
        }
        memcpy(&x, last, 16);
        flagged |= look16(x, html);
        memcpy(dlast, &x, 16);
        d = dlast + 16;
    } else {
        uint64_t lo = WH_BYTES8(' '), hi; /* what no text holds counts as plain */
        if (len >= 8) {
            memcpy(&lo, p, 8), memcpy(&hi, p + len - 8, 8);
            memcpy(d, &lo, 8), memcpy(d + len - 8, &hi, 8);
        } else {
            if (len >= 4) {
                uint32_t a, b;
                memcpy(&a, p, 4), memcpy(&b, p + len - 4, 4);
                memcpy(d, &a, 4), memcpy(d + len - 4, &b, 4);
                lo = a | (uint64_t)b << 32;
            } else if (len >= 2) {
                uint16_t a, b;
                memcpy(&a, p, 2), memcpy(&b, p + len - 2, 2);
                memcpy(d, &a, 2), memcpy(d + len - 2, &b, 2);
                lo = (lo << 32) | a | (uint64_t)b << 16;
            } else if (len == 1) {
                d[0] = (char)p[0];
                lo = (lo << 8) | p[0];
            }
            hi = lo;
        }
        flagged = look16((bytes16)(words16){lo, hi}, html);
        d += len;
    }
    if (flagged)
        return NULL;
    *d++ = '"';
    if (post != 0)
        *d++ = post;
    return d;
}

static inline __attribute__((always_inline)) char *put_string_as(writer *w, char *d, const char *s, size_t len,
                                                                 int html, char pre, char post)
{
    char *r = plain_string_as(w, d, (const unsigned char *)s, len, html, pre, post);

    return r != NULL ? r : escape_string(w, d, s, len, pre, post);
}

static inline __attribute__((always_inline)) char *put_string(writer *w, char *d, const char *s, size_t len, char pre,
                                                              char post)
{
    return w->flags & WH_GO_JSON_HTML ? put_string_as(w, d, s, len, 1, pre, post)
                                      : put_string_as(w, d, s, len, 0, pre, post);
}

void wh_go_json_string(wh_buf *out, const char *s, size_t len, int flags)
{
    writer w;
    char *d = writer_begin(&w, out, flags, NULL, len + 2);

    writer_end(&w, put_string(&w, d, s, len, 0, 0));
}

/* --- values ------------------------------------------------------------------ */

/* "00" to "99": two digits a step. */
static const char digit_pairs[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* Decimal text of `v` (what "%" JSON_INTEGER_FORMAT prints), without
 * snprintf's format parsing: two digits a step, backwards into num, then
 * one copy of a fixed 24 bytes (at most 20 are text) instead of a call. */
static char *put_integer(writer *w, char *d, json_int_t v)
{
    char num[48], *const last = num + 24, *q = last; /* the text ends at last; 24 bytes readable from any q */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    for (; u >= 100; u /= 100)
        memcpy(q -= 2, digit_pairs + 2 * (u % 100), 2);
    if (u >= 10)
        memcpy(q -= 2, digit_pairs + 2 * u, 2);
    else
        *--q = (char)('0' + u);
    if (v < 0)
        *--q = '-';
    d = room(w, d, 24);
    memcpy(d, q, 24);
    return d + (last - q);
}

static char *put_float(writer *w, char *d, double f)
{
    writer_end(w, d); /* wh_go_json_float appends to the buffer itself */
    wh_go_json_float(w->out, f);
    w->end = w->out->data + w->out->cap - 1;
    return w->out->data + w->out->len;
}

/* What opens element i of an array or object with indent: '[' or '{'
 * before the first, ',' before the others, then the line break and the
 * element's indent. */
static char *indent_item(writer *w, char *d, char sep, int depth)
{
    size_t n = strlen(w->indent);

    d = room(w, d, 2);
    *d++ = sep;
    *d++ = '\n';
    while (depth-- > 0)
        d = put(w, d, w->indent, n);
    return d;
}

/* The closing ']' or '}' of a container that had elements. */
static inline char *close_items(writer *w, char *d, char close, int depth)
{
    if (w->indent != NULL) {
        size_t n = strlen(w->indent);
        d = put(w, d, "\n", 1);
        while (depth-- > 0)
            d = put(w, d, w->indent, n);
    }
    d = room(w, d, 1);
    *d++ = close;
    return d;
}

static char *write_object(writer *w, char *d, const json_t *v, int depth);
static char *write_array(writer *w, char *d, const json_t *v, int depth);

/* Numbers, booleans and null. */
static char *write_scalar(writer *w, char *d, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return put_integer(w, d, json_integer_value(v));
    case JSON_REAL: /* jansson holds no NaN or infinity */
        return put_float(w, d, json_real_value(v));
    case JSON_TRUE:
        return put(w, d, "true", 4);
    case JSON_FALSE:
        return put(w, d, "false", 5);
    default:
        return put(w, d, "null", 4);
    }
}

/* Any value, at each member and element: strings (most of them) written
 * here, containers and scalars by one call. */
static inline __attribute__((always_inline)) char *write_value(writer *w, char *d, const json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_STRING: {
        size_t len;
        const char *s = wh_json_string_text(v, &len);
        return put_string(w, d, s, len, 0, 0);
    }
    case JSON_OBJECT:
        return write_object(w, d, v, depth);
    case JSON_ARRAY:
        return write_array(w, d, v, depth);
    default:
        return write_scalar(w, d, v);
    }
}

/* key < b's key in byte order (a prefix first), as Go's sort of map keys:
 * the first bytes decide most pairs without a call. */
static inline int key_less(const wh_json_member *a, const wh_json_member *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c;

    if (n != 0 && a->key[0] != b->key[0])
        return (unsigned char)a->key[0] < (unsigned char)b->key[0];
    c = memcmp(a->key, b->key, n);
    return c < 0 || (c == 0 && a->len < b->len);
}

static int member_cmp(const void *a, const void *b)
{
    return key_less(b, a) - key_less(a, b);
}

/* m[0..n) in the byte order of their keys (keys are distinct): most
 * objects are small and many already sorted, which insertion sort checks in
 * one pass; big ones go to qsort. */
static void sort_members(wh_json_member *m, size_t n)
{
    if (n > 16) {
        qsort(m, n, sizeof(*m), member_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        wh_json_member x = m[i];
        size_t j = i;
        if (!key_less(&x, &m[j - 1]))
            continue;
        do
            m[j] = m[j - 1];
        while (--j > 0 && key_less(&x, &m[j - 1]));
        m[j] = x;
    }
}

/* One member: sep ('{' or ','), then the compact "k":v, or the member on
 * its own line (indent) as json.MarshalIndent prints it. */
static inline __attribute__((always_inline)) char *write_member(writer *w, char *d, char sep, const char *key,
                                                                size_t len, const json_t *value, int depth)
{
    if (w->indent == NULL) {
        d = put_string(w, d, key, len, sep, ':');
    } else {
        d = indent_item(w, d, sep, depth + 1);
        d = put(w, put_string(w, d, key, len, 0, ':'), " ", 1);
    }
    return write_value(w, d, value, depth + 1);
}

/* The object's members in its own order, or with WH_GO_JSON_SORTED in the
 * byte order of their keys (a snapshot of them, which the sort orders). */
static char *write_object(writer *w, char *d, const json_t *v, int depth)
{
    wh_json_member small[16], *heap, *m;
    size_t n;

    m = wh_json_members(v, small, 16, &heap, &n);
    if (n == 0)
        return put(w, d, "{}", 2);
    if (w->flags & WH_GO_JSON_SORTED && n > 1)
        sort_members(m, n);
    for (size_t i = 0; i < n; i++)
        d = write_member(w, d, i == 0 ? '{' : ',', m[i].key, m[i].len, m[i].value, depth);
    free(heap);
    return close_items(w, d, '}', depth);
}

static char *write_array(writer *w, char *d, const json_t *v, int depth)
{
    size_t i, n;
    json_t *const *items = wh_json_array_items(v, &n);

    if (items == NULL)
        n = json_array_size(v);
    if (n == 0)
        return put(w, d, "[]", 2);
    for (i = 0; i < n; i++) {
        char sep = i == 0 ? '[' : ',';
        if (w->indent == NULL) {
            d = room(w, d, 1);
            *d++ = sep;
        } else {
            d = indent_item(w, d, sep, depth + 1);
        }
        d = write_value(w, d, items != NULL ? items[i] : json_array_get(v, i), depth + 1);
    }
    return close_items(w, d, ']', depth);
}

/* The compact writer's open containers: an object (at: the member written
 * last, end: its list's head) or an array (end NULL; item: the item
 * written last, of those up to `last`). */
typedef struct open_level {
    const struct wh_json_list_layout *at, *end;
    json_t *const *item, *const *last;
} open_level;

#define COMPACT_DEPTH 64

/* The compact text of v, objects in their own order, where install
 * confirmed jansson's string and container layouts (the caller checks),
 * with (html 1) or without WH_GO_JSON_HTML: one loop with a stack of
 * the open containers, reading members off jansson's lists and items off
 * its tables, instead of a call, a frame and a member snapshot per
 * container (a patch has ~100 of them).  A container deeper than
 * COMPACT_DEPTH, or an array whose layout is unknown, is written by the
 * general writer above. */
static inline __attribute__((always_inline)) char *write_compact_as(writer *w, char *d, const json_t *v, int html)
{
    open_level stack[COMPACT_DEPTH], *top = stack; /* top: the first free level */
    const struct wh_json_pair_layout *pair;

    for (;;) {
        switch (json_typeof(v)) {
        case JSON_STRING: {
            const struct wh_json_string_layout *js = (const struct wh_json_string_layout *)v;
            d = put_string_as(w, d, js->value, js->length, html, 0, 0);
            break;
        }
        case JSON_OBJECT: {
            const struct wh_json_object_layout *o = (const struct wh_json_object_layout *)v;
            if (o->ordered_list.next == &o->ordered_list) {
                d = put(w, d, "{}", 2);
                break;
            }
            if (top == stack + COMPACT_DEPTH) {
                d = write_object(w, d, v, COMPACT_DEPTH);
                break;
            }
            top->at = o->ordered_list.next;
            top->end = &o->ordered_list;
            top++;
            pair = wh_json_pair_at(o->ordered_list.next);
            d = put_string_as(w, d, pair->key, pair->key_len, html, '{', ':');
            v = pair->value;
            continue;
        }
        case JSON_ARRAY: {
            size_t n;
            json_t *const *items = wh_json_array_items(v, &n);
            if (items == NULL || top == stack + COMPACT_DEPTH) {
                d = write_array(w, d, v, (int)(top - stack));
                break;
            }
            if (n == 0) {
                d = put(w, d, "[]", 2);
                break;
            }
            top->end = NULL;
            top->item = items;
            top->last = items + n - 1;
            top++;
            d = room(w, d, 1);
            *d++ = '[';
            v = items[0];
            continue;
        }
        default:
            d = write_scalar(w, d, v);
            break;
        }
        /* v is written: on to the next member or item of the innermost open
         * container, closing each that ends */
        for (;; top--) {
            open_level *t;
            if (top == stack)
                return d;
            t = top - 1;
            if (t->end != NULL && t->at->next != t->end) {
                t->at = t->at->next;
                pair = wh_json_pair_at(t->at);
                d = put_string_as(w, d, pair->key, pair->key_len, html, ',', ':');
                v = pair->value;
                break;
            }
            if (t->end == NULL && t->item != t->last) {
                v = *++t->item;
                d = room(w, d, 1);
                *d++ = ',';
                break;
            }
            d = room(w, d, 1);
            *d++ = t->end != NULL ? '}' : ']';
        }
    }
}

/* One copy of the loop each: the per-string test of the flag is gone. */
static char *write_compact(writer *w, char *d, const json_t *v)
{
    return w->flags & WH_GO_JSON_HTML ? write_compact_as(w, d, v, 1) : write_compact_as(w, d, v, 0);
}

void wh_go_json(wh_buf *out, const json_t *v, int flags)
{
    writer w;
    char *d = writer_begin(&w, out, flags, NULL, 64);

    if (wh_json_object_layout_known && wh_json_string_layout_known && !(flags & WH_GO_JSON_SORTED))
        d = write_compact(&w, d, v);
    else
        d = write_value(&w, d, v, 0);
    writer_end(&w, d);
}

void wh_go_json_indent(wh_buf *out, const json_t *v, int flags, const char *indent)
{
    writer w;
    char *d = writer_begin(&w, out, flags, indent, 64);

    writer_end(&w, write_value(&w, d, v, 0));
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
