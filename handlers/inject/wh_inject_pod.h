/*
 * wh_inject_pod.h - small accessors on pod JSON and the cheap JSON copy,
 * shared by every stage of injection (not a stage itself; it includes no
 * stage's header).
 */
#ifndef WH_INJECT_POD_H
#define WH_INJECT_POD_H

#include <jansson.h>

#include "wh_buf.h"
#include "wh_result.h"

#define WH_PROXY "istio-proxy"
#define WH_INIT "istio-init"
#define WH_VALIDATION "istio-validation"
#define WH_CORE_DUMP "enable-core-dump"
#define WH_A_STATUS "sidecar.istio.io/status"
#define WH_A_OVERRIDES "proxy.istio.io/overrides"

/* A deep copy of `value` whose containers are new and whose scalars are
 * shared with `value` (new reference; value is not NULL).  Nothing on
 * the injection path changes a scalar in place, so sharing them is safe, and
 * it is several times cheaper than json_deep_copy, which allocates every
 * string again and formats each container's address for a loop check
 * (values decoded from text have no loops). */
json_t *wh_inject_json_copy(const json_t *value);

/* `parent[key]` when it is an object; created when `create` (NULL when parent
 * is not an object, or without `create` when there is none). */
json_t *wh_inject_obj_child(json_t *parent, const char *key, int create);
/* pod.spec[key] when it is an array, else NULL. */
json_t *wh_inject_spec_list(const json_t *pod, const char *key);
/* o[key] when it is a string, else NULL. */
const char *wh_inject_jstr(const json_t *o, const char *key);
/* v[k1][k2]... (a NULL-terminated list of keys), or NULL where one is missing. */
const json_t *wh_inject_jpath(const json_t *v, ...) __attribute__((sentinel));
/* o.name when o is an object and it is a string, else NULL: looked for at
 * o's first member before its hash (templates, kubectl and the Go round
 * trip print a container's, port's or volume's name first).  The text, or
 * the string value (borrowed). */
const char *wh_inject_name(const json_t *o);
const json_t *wh_inject_name_json(const json_t *o);
/* First item of `list` named `name` (NULL if none); *idx its index. */
json_t *wh_inject_find_named(const json_t *list, const char *name, size_t *idx);
/* istiod's FindSidecar: istio-proxy in containers, else in initContainers. */
json_t *wh_inject_find_sidecar(const json_t *pod);
/* A pod annotation's value, or NULL. */
const char *wh_inject_annotation(const json_t *pod, const char *key);
/* obj[key] = value.  obj is an object and value UTF-8 text (it comes from
 * decoded JSON or is ours): nothing here can fail (common/wh_alloc.h). */
void wh_inject_set_string(json_t *obj, const char *key, const char *value);
/* The same for JSON text that wh_go_json wrote from jansson
 * values: valid UTF-8 already, so jansson's check (a pass over the whole
 * annotation) is skipped, and for the key too: `key` is one of ours. */
void wh_inject_set_json_text(json_t *obj, const char *key, const wh_buf *text);
/* Append {name, value} (UTF-8 text) to container.env. */
void wh_inject_append_env(json_t *container, const char *name, const char *value);

#endif
