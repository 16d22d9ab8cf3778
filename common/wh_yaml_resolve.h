/*
 * wh_yaml_resolve.h - go-yaml v2's resolution of plain scalars (YAML 1.1:
 * yes/on are booleans, 0x1f is an int, a timestamp stays a string), shared by
 * the reference loader and dumper (wh_yaml.c) and the fast path
 * (wh_yaml_fast.c).  Not a public API: everyone else reads YAML through
 * wh_yaml.h.
 */
#ifndef WH_YAML_RESOLVE_H
#define WH_YAML_RESOLVE_H

#include <jansson.h>
#include <stddef.h>

typedef enum scalar_kind { SK_STR, SK_NULL, SK_BOOL, SK_INT, SK_FLOAT, SK_TIMESTAMP } scalar_kind;

typedef struct resolved {
    scalar_kind kind;
    int b;
    long long i;
    double f;
    int is_uint; /* an integer that only fits in uint64 */
    unsigned long long u;
} resolved;

/* Resolve the NUL-terminated plain scalar `in` into *r. */
void wh_yaml_resolve_plain(const char *in, resolved *r);
/* A plain scalar that resolved to a string (timestamps stay strings in JSON). */
int wh_yaml_resolved_is_string(const resolved *r);
/* The JSON value of a plain scalar that is not a string; NULL for NaN and
 * Inf, which JSON has not (sigs.k8s.io/yaml fails on them too). */
json_t *wh_yaml_resolved_json(const resolved *r);

/* What a byte of a plain scalar can mean: a scalar resolves to something
 * other than a string only when it starts with one of the YAML 1.1 words'
 * first letters (WH_RS_WORD) or a sign, digit or dot (WH_RS_NUMBER), and
 * then only when every byte is one that an int, float, timestamp or one of
 * the words starting with +, - or . can hold (WH_RS_NUMERIC: 0-9 a-f A-F
 * x X o O b B _ . + - : space T t Z i I n N). */
enum { WH_RS_WORD = 1, WH_RS_NUMBER = 2, WH_RS_NUMERIC = 4 };
extern const unsigned char wh_yaml_resolve_class[256];
/* Which words a byte can begin (low byte: a bit per word family, y/n/t/f/o,
 * and WH_WP_ONE for the one-letter words y Y n N ~) or continue as their
 * second byte (high byte: the families' bits), so that "name" or "type"
 * need no comparison: no word starts "na" or "ty". */
enum { WH_WP_Y = 1, WH_WP_N = 2, WH_WP_T = 4, WH_WP_F = 8, WH_WP_O = 16, WH_WP_ONE = 32 };
extern const unsigned short wh_yaml_word_pair[256];

/* 0 when the non-empty plain scalar [s, s + len) certainly resolves to a
 * string, decided by a table lookup or two for most scalars ("istio-proxy",
 * "100m", "1024Mi"); 1 when it may not (then resolve it). */
static inline int wh_yaml_plain_may_resolve(const char *s, size_t len)
{
    unsigned char c = wh_yaml_resolve_class[(unsigned char)s[0]];

    if (c & WH_RS_WORD) { /* the words are 1 to 5 bytes long */
        if (len == 1)
            return (wh_yaml_word_pair[(unsigned char)s[0]] & WH_WP_ONE) != 0;
        return len <= 5 &&
               (wh_yaml_word_pair[(unsigned char)s[0]] & (wh_yaml_word_pair[(unsigned char)s[1]] >> 8)) != 0;
    }
    if (!(c & WH_RS_NUMBER))
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!(wh_yaml_resolve_class[(unsigned char)s[i]] & WH_RS_NUMERIC))
            return 0;
    return 1;
}

/* The JSON value of an untagged plain scalar; NULL when it has none
 * (NaN/Inf).  `s` must be valid UTF-8 without NUL (the fast path only hands
 * over such text): a string value is made without jansson's UTF-8 check. */
json_t *wh_yaml_plain_json(const char *s, size_t len);
/* The JSON key sigs.k8s.io/yaml makes of a mapping key go-yaml v2 read as r
 * ([s, s + len) its text): a string is itself, a boolean "true"/"false", an
 * integer its decimal digits, a float strconv.FormatFloat(f, 'g', -1, 32)
 * (1.0 -> "1", 1e20 -> "1e+20", 0.1 -> "0.1", 3.14159265358979 ->
 * "3.1415927") with infinities and NaN as ".inf", "-.inf", ".nan".  `s`
 * itself, or the text written into `tmp`; sets *out_len.  NULL when it makes
 * none ("Unsupported map key"): null, and an integer above 2^63-1 (a Go
 * uint64). */
#define WH_YAML_KEY_TMP 32
const char *wh_yaml_key_text(const resolved *r, const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len);
/* The same for an untagged plain mapping key, without allocating for the
 * common key that is its own text (the empty key is null). */
const char *wh_yaml_plain_key_text(const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len);

#endif
