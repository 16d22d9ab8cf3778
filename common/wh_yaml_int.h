/*
 * wh_yaml_int.h - what wh_yaml.c and its fast path share (not a public API).
 */
#ifndef WH_YAML_INT_H
#define WH_YAML_INT_H

#include <jansson.h>
#include <stddef.h>

#include "wh_yaml.h"
#include "wh_yaml_resolve.h"

/* The fast path (wh_yaml_fast.c): WH_OK with *out, or WH_E_UNSUPPORTED when
 * the input is outside its subset (then nothing is decided). */
wh_code wh_yaml_fast_load(const char *text, size_t len, json_t **out);

#endif
