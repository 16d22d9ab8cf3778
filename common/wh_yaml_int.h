/*
 * wh_yaml_int.h - what wh_yaml.c and its fast path share (not a public API).
 */
#ifndef WH_YAML_INT_H
#define WH_YAML_INT_H

#include <jansson.h>
#include <stddef.h>

#include "wh_yaml.h"

/* The JSON value of an untagged plain scalar (go-yaml v2 resolution); NULL
 * when it has none (NaN/Inf) or memory ran out.  `s` must be valid UTF-8
 * without NUL (the fast path only hands over such text): a string value is
 * made without jansson's UTF-8 check. */
json_t *wh_yaml_plain_json(const char *s, size_t len);
/* The JSON key of an untagged plain mapping key (yes -> "true", 0x1 -> "1"). */
json_t *wh_yaml_plain_key(const char *s, size_t len);
/* The same key as text, without allocating: `s` itself when the key is its
 * own text, else the resolved text written into `tmp`.  Sets *out_len. */
#define WH_YAML_KEY_TMP 32
const char *wh_yaml_plain_key_text(const char *s, size_t len, char tmp[WH_YAML_KEY_TMP], size_t *out_len);

/* The fast path (wh_yaml_fast.c): WH_OK with *out, or WH_E_UNSUPPORTED when
 * the input is outside its subset (then nothing is decided). */
wh_code wh_yaml_fast_load(const char *text, size_t len, json_t **out);

#endif
