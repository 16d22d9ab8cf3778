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

/* The JSON value of an untagged plain scalar; NULL when it has none
 * (NaN/Inf).  `s` must be valid UTF-8 without NUL (the fast path only hands
 * over such text): a string value is made without jansson's UTF-8 check. */
json_t *wh_yaml_plain_json(const char *s, size_t len);
/* The JSON key of an untagged plain mapping key (yes -> "true", 0x1 -> "1"). */
json_t *wh_yaml_plain_key(const char *s, size_t len);
/* The same key as text, without allocating: `s` itself when the key is its
 * own text, else the resolved text written into `tmp`.  Sets *out_len. */
#define WH_YAML_KEY_TMP 32
const char *wh_yaml_plain_key_text(const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len);

#endif
