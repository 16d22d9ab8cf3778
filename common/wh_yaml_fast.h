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

/* The entries of a constant text (a template's run of text that needs no render, template/wh_tmpl.h
 * wh_tmpl_run_at) read once: the mapping entries and sequence items whose lines lie in it and end before a line of
 * it (the rest is read as usual).  NULL when it has none.  `text` must outlive the result; free it with
 * wh_yaml_pieces_free.  Why: the constant text is most of a rendered sidecar, and copying what its lines read as
 * costs a fraction of reading them again (bench/inject/README.md). */
typedef struct wh_yaml_pieces wh_yaml_pieces;
const wh_yaml_pieces *wh_yaml_pieces_new(const char *text, size_t len, int max_depth);
void wh_yaml_pieces_free(const wh_yaml_pieces *pieces);

/* Where a text printed a constant text whose pieces are `pieces`: from byte `off` on. */
typedef struct wh_yaml_at {
    size_t off;
    const wh_yaml_pieces *pieces;
} wh_yaml_at;

/* wh_yaml_fast_load, told where the text holds constant texts (at[0..nat), in order): where the parser meets the
 * first line of one of their pieces as an entry of its kind and indent, it copies the piece's value instead of
 * reading its lines.  The same answer as wh_yaml_fast_load, whatever `at` says: an offset where the text differs
 * from the piece's text is ignored. */
wh_code wh_yaml_fast_load_at(const char *text, size_t len, int max_depth, const wh_yaml_at *at, size_t nat,
                             json_t **out);

#endif
