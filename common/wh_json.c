/*
 * wh_json.c - the fast JSON reader behind wh_json_loadb (see wh_json.h).
 *
 * One pass over the bytes (a loop with a stack of open containers, not recursion), strict RFC 8259 grammar.  It is
 * deliberately conservative: whenever the input is not plainly valid, or a value would need jansson's judgement
 * (integers beyond 64 bits, reals that overflow, NUL in keys, nesting near jansson's limit), it gives up and the
 * caller re-reads the whole text with json_loadb.  It must never accept what jansson rejects, nor build anything
 * jansson would build differently.
 */
#include "wh_json.h"
#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_json_arena.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* jansson's limit is 2048; stop a little earlier and let it report. */
#define MAX_DEPTH 2000

typedef struct reader {
    const unsigned char *p, *end;
    size_t flags;
    char *tmp; /* decoded text of strings with escapes */
    size_t tmp_cap;
} reader;

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

/* The first byte at or after p that is not plain printable ASCII other than quote and backslash: 16 bytes a step
 * with SSE2 (every x86-64: a signed compare below ' ' flags control and non-ASCII bytes at once), 8 with the word
 * test of wh_chars.h, then one at a time for the last few bytes of the input. */
static inline __attribute__((always_inline)) const unsigned char *scan_plain(const unsigned char *p,
                                                                             const unsigned char *end)
{
    uint64_t m;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(' ');

    for (; end - p >= 16; p += 16) {
        __m128i w = _mm_loadu_si128((const __m128i *)p);
        unsigned special = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, bslash)), _mm_cmplt_epi8(w, space)));
        if (special != 0)
            return p + __builtin_ctz(special);
    }
#endif
    for (; end - p >= 8; p += 8)
        if ((m = wh_json_special8(wh_load8(p))) != 0)
            return p + (__builtin_ctzll(m) >> 3);
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* The rest of a string whose first special byte is at p (not a quote):
 * non-ASCII text is checked as UTF-8, an escape sends the string to
 * decode_escaped.  Returns the position after the closing quote, NULL to
 * give up; *s and *len point either into the input or into r->tmp. */
static __attribute__((noinline)) const unsigned char *
read_string_slow(reader *r, const unsigned char *start, const unsigned char *p, const char **s, size_t *len)
{
    const unsigned char *end = r->end;

    for (;;) {
        unsigned c;
        if (p >= end)
            return NULL;
        c = *p;
        if (c == '"') {
            *s = (const char *)start;
            *len = (size_t)(p - start);
            return p + 1;
        }
        if (c == '\\') {
            size_t consumed = 0;
            long n;
            r->p = start;
            if ((n = decode_escaped(r, p, &consumed)) < 0)
                return NULL;
            *s = r->tmp;
            *len = (size_t)n;
            return start + consumed;
        }
        if (c < 0x80) /* a control character */
            return NULL;
        {
            size_t n = utf8_seq(p, end);
            if (n == 0)
                return NULL;
            p = scan_plain(p + n, end);
        }
    }
}

/* A string whose opening quote is at p - 1: returns the position after its
 * closing quote (NULL to give up), *s and *len its text. */
static inline const unsigned char *read_string(reader *r, const unsigned char *p, const char **s, size_t *len)
{
    const unsigned char *q = scan_plain(p, r->end);

    if (q < r->end && *q == '"') {
        *s = (const char *)p;
        *len = (size_t)(q - p);
        return q + 1;
    }
    return read_string_slow(r, p, q, s, len);
}

/* Past any whitespace; most positions have none or a single space. */
static inline const unsigned char *skip_ws(const unsigned char *p, const unsigned char *end)
{
    if (p < end && !(*p <= ' '))
        return p;
    if (p < end && *p == ' ' && end - p > 1 && p[1] > ' ')
        return p + 1;
    while (p < end && *p <= ' ' && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* A number at r->p; NULL to give up. */
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

/* An open container: where its members start on the reader's stacks.  A container is made only once it is
 * complete, from those stacks (wh_json_arena_object / _array: one bump in jansson's layout, the table exactly as
 * long as it needs). */
typedef struct frame {
    int is_object;
    size_t vals, keys, owned; /* bases on the value, key and owned-key stacks */
} frame;

/* The reader's stacks: values of the open containers, keys of the open objects' members (pointing into the input,
 * or to an owned copy when they had escapes: reading a value may reuse r->tmp), the owned copies. */
typedef struct stacks {
    json_t **vals;
    wh_json_key *keys;
    char **owned;
    size_t nvals, nkeys, nowned, vals_cap, keys_cap, owned_cap;
    int vals_heap, keys_heap, owned_heap;
} stacks;

/* Room for one more element on a stack that starts in the caller's frame (`heap` says whether it left it). */
static void *stack_grow(void *base, size_t *cap, size_t elem, int *heap)
{
    void *grown = wh_malloc(2 * *cap * elem);

    memcpy(grown, base, *cap * elem);
    if (*heap)
        free(base);
    *heap = 1;
    *cap *= 2;
    return grown;
}

static void free_owned(stacks *st, size_t from)
{
    while (st->nowned > from)
        free(st->owned[--st->nowned]);
}

/* Iterative: one loop and explicit stacks, so a value costs no call of its own.  NULL to give up. */
static json_t *read_document(reader *r)
{
    frame local[32], *stack = local, *top = NULL;
    json_t *local_vals[256];
    wh_json_key local_keys[128];
    char *local_owned[8];
    stacks st = {local_vals, local_keys, local_owned, 0, 0, 0, 256, 128, 8, 0, 0, 0};
    size_t depth = 0, cap = sizeof(local) / sizeof(local[0]);
    const unsigned char *p = r->p, *end = r->end;
    const int reject_duplicates = (r->flags & JSON_REJECT_DUPLICATES) != 0;
    json_t *v = NULL;
    const char *s;
    size_t len;

value: /* p is past any whitespace */
    if (p >= end)
        goto fail;
    switch (*p) {
    case '{':
    case '[':
        if (depth >= MAX_DEPTH)
            goto fail;
        {
            int is_object = *p == '{';
            p = skip_ws(p + 1, end);
            if (p < end && *p == (is_object ? '}' : ']')) {
                p++;
                v = is_object ? wh_json_arena_object(NULL, NULL, 0, 0) : wh_json_arena_array(NULL, 0);
                goto have_value;
            }
            if (depth == cap) {
                frame *grown = wh_malloc(2 * cap * sizeof(*grown));
                memcpy(grown, stack, depth * sizeof(*grown));
                if (stack != local)
                    free(stack);
                stack = grown;
                cap *= 2;
            }
            top = &stack[depth++];
            top->is_object = is_object;
            top->vals = st.nvals;
            top->keys = st.nkeys;
            top->owned = st.nowned;
            if (is_object)
                goto key;
            goto value;
        }
    case '"':
        if ((p = read_string(r, p + 1, &s, &len)) == NULL)
            goto fail;
        if ((v = wh_json_arena_string(s, len)) == NULL) /* checked as UTF-8 above */
            v = json_stringn_nocheck(s, len);
        goto have_value;
    case 't':
        if (end - p < 4 || memcmp(p, "true", 4) != 0)
            goto fail;
        p += 4;
        v = json_true();
        goto have_value;
    case 'f':
        if (end - p < 5 || memcmp(p, "false", 5) != 0)
            goto fail;
        p += 5;
        v = json_false();
        goto have_value;
    case 'n':
        if (end - p < 4 || memcmp(p, "null", 4) != 0)
            goto fail;
        p += 4;
        v = json_null();
        goto have_value;
    default:
        r->p = p;
        if ((v = read_number(r)) == NULL)
            goto fail;
        p = r->p;
        goto have_value;
    }

key: /* p is where an object's key should start */
    if (p >= end || *p != '"' || (p = read_string(r, p + 1, &s, &len)) == NULL)
        goto fail;
    if (s == r->tmp) { /* only an escape can put NUL in a key, which jansson refuses */
        char *copy;
        if (memchr(s, '\0', len) != NULL)
            goto fail;
        copy = wh_malloc(len + 1);
        memcpy(copy, s, len);
        if (st.nowned == st.owned_cap)
            st.owned = stack_grow(st.owned, &st.owned_cap, sizeof(*st.owned), &st.owned_heap);
        st.owned[st.nowned++] = copy;
        s = copy;
    }
    if (st.nkeys == st.keys_cap)
        st.keys = stack_grow(st.keys, &st.keys_cap, sizeof(*st.keys), &st.keys_heap);
    st.keys[st.nkeys].text = s;
    st.keys[st.nkeys++].len = len;
    p = skip_ws(p, end);
    if (p >= end || *p != ':')
        goto fail;
    p = skip_ws(p + 1, end);
    goto value;

have_value: /* v (owned here) is complete: put it on the stack of its container */
    if (depth == 0) {
        r->p = p;
        goto out;
    }
    if (st.nvals == st.vals_cap)
        st.vals = stack_grow(st.vals, &st.vals_cap, sizeof(*st.vals), &st.vals_heap);
    st.vals[st.nvals++] = v;
    v = NULL;
    p = skip_ws(p, end);
    if (p >= end)
        goto fail;
    if (*p == ',') {
        p = skip_ws(p + 1, end);
        if (top->is_object)
            goto key;
        goto value;
    }
    if (*p != (top->is_object ? '}' : ']'))
        goto fail;
    p++;
    /* the container is complete: make it from its members, which it takes over */
    if (top->is_object) {
        v = wh_json_arena_object(st.keys + top->keys, st.vals + top->vals, st.nvals - top->vals, reject_duplicates);
        st.nvals = top->vals;
        st.nkeys = top->keys;
        free_owned(&st, top->owned);
        if (v == NULL)
            goto fail; /* a key given twice, refused: jansson words the error */
    } else {
        v = wh_json_arena_array(st.vals + top->vals, st.nvals - top->vals);
        st.nvals = top->vals;
    }
    depth--;
    top = depth > 0 ? &stack[depth - 1] : NULL;
    goto have_value;

fail:
    json_decref(v);
    v = NULL;
    while (st.nvals > 0)
        json_decref(st.vals[--st.nvals]);
out:
    free_owned(&st, 0);
    if (stack != local)
        free(stack);
    if (st.vals_heap)
        free(st.vals);
    if (st.keys_heap)
        free(st.keys);
    if (st.owned_heap)
        free(st.owned);
    return v;
}

json_t *wh_json_fast_loadb(const char *buf, size_t len, size_t flags)
{
    reader r = {(const unsigned char *)buf, NULL, flags, NULL, 0};
    json_t *v = NULL;

    if (buf == NULL || (flags & ~(size_t)WH_JSON_FAST_FLAGS) != 0)
        return NULL;
    r.end = r.p + len; /* not before the NULL check: arithmetic on NULL is undefined */
    r.p = skip_ws(r.p, r.end);
    if (!(flags & JSON_DECODE_ANY) && (r.p >= r.end || (*r.p != '{' && *r.p != '[')))
        goto out;
    if ((v = read_document(&r)) == NULL)
        goto out;
    if (skip_ws(r.p, r.end) != r.end) { /* trailing bytes: jansson's "end of file expected" */
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
