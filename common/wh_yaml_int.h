/*
 * wh_yaml_int.h - what wh_yaml.c and its fast path share (not a public API).
 */
#ifndef WH_YAML_INT_H
#define WH_YAML_INT_H

#include <jansson.h>
#include <stddef.h>

#include "wh_yaml.h"

/* The JSON value of an untagged plain scalar (go-yaml v2 resolution); NULL
 * when it has none (NaN/Inf) or memory ran out. */
json_t *wh_yaml_plain_json(const char *s, size_t len);
/* The JSON key of an untagged plain mapping key (yes -> "true", 0x1 -> "1"). */
json_t *wh_yaml_plain_key(const char *s, size_t len);

/* The fast path (wh_yaml_fast.c): WH_OK with *out, or WH_E_UNSUPPORTED when
 * the input is outside its subset (then nothing is decided), WH_E_NOMEM. */
wh_code wh_yaml_fast_load(const char *text, size_t len, json_t **out);

#endif
