/*
 * wh_yaml.h - YAML <-> JSON (jansson), with the semantics Kubernetes tooling uses.
 *
 * Loading follows sigs.k8s.io/yaml (go-yaml v2 resolution rules, YAML 1.1
 * booleans such as yes/no/on/off, ints vs floats, anchors, aliases and `<<`
 * merge keys, non-string keys turned into strings).  Dumping emits what
 * sigs.k8s.io/yaml.Marshal / JSONToYAML emits: keys sorted, two-space indent,
 * sequences inside mappings not indented, strings quoted only where a plain
 * scalar would be read back as something else.
 */
#ifndef WH_YAML_H
#define WH_YAML_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_result.h"

/* Limits that keep hostile input from exhausting the process. */
#define WH_YAML_MAX_DEPTH 512

/* Parse a single-document stream into *out (new reference).  An empty stream
 * yields JSON null.  A stream with more than one document is an error. */
wh_code wh_yaml_load(const char *text, size_t len, json_t **out, wh_err *err);

/* wh_yaml_load of a text that holds constant texts whose entries were read
 * once (common/wh_yaml_fast.h wh_yaml_at: where, and their pieces): the same
 * answer, copying those entries instead of reading them again. */
struct wh_yaml_at;
wh_code wh_yaml_load_at(const char *text, size_t len, const struct wh_yaml_at *at, size_t nat, json_t **out,
                        wh_err *err);

/* The same, always through the full libyaml-based loader: wh_yaml_load()
 * first tries a fast path for the block-style subset that templates print and
 * falls back to this one for anything else.  For differential tests. */
wh_code wh_yaml_load_reference(const char *text, size_t len, json_t **out, wh_err *err);

/* Parse every document of a multi-document stream into a JSON array (new
 * reference).  Documents that are empty or null are kept as JSON null so that
 * callers can report positions; callers decide whether to skip them. */
wh_code wh_yaml_load_all(const char *text, size_t len, json_t **docs, wh_err *err);

/* Append the YAML form of `value` to `out`, exactly as sigs.k8s.io/yaml would
 * print it (ends with a newline; `{}` / `[]` / `null` for empty values at top). */
wh_code wh_yaml_dump(const json_t *value, wh_buf *out, wh_err *err);

#endif
