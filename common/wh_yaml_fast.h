/*
 * wh_yaml_fast.h - the fast path for the YAML that templates print
 * (wh_yaml_fast.c).  wh_yaml_load() tries it first and falls back to the
 * reference loader; the differential tests (tests/common/yaml_fast_diff.c,
 * tests/common/fuzz_yaml.c) call it directly.  It depends on the scalar
 * resolution only (wh_yaml_resolve.h), never on the loader above it.
 */
#ifndef WH_YAML_FAST_H
#define WH_YAML_FAST_H

#include <jansson.h>
#include <stddef.h>

#include "wh_result.h"

/* WH_OK with *out (new reference), or WH_E_UNSUPPORTED when the input is
 * outside the fast path's subset or nests deeper than `max_depth` (then
 * nothing is decided: the caller's loader decides and words any error). */
wh_code wh_yaml_fast_load(const char *text, size_t len, int max_depth, json_t **out);

#endif
