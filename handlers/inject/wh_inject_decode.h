/*
 * wh_inject_decode.h - stage 1 of injection: the request as istiod reads it.
 *
 * The URL path after /inject (our "rev/<name>" selector and istiod's
 * key/value segments) and the pod itself: decoded into Go's corev1.Pod
 * (a value of the wrong JSON type fails as istiod's decoder does),
 * managedFields dropped, the request's namespace filled in.
 */
#ifndef WH_INJECT_DECODE_H
#define WH_INJECT_DECODE_H

#include <jansson.h>
#include <stddef.h>

#include "wh_inject_schema.h"
#include "wh_result.h"

/* Parse the path after "/inject" (e.g. "", "/", "/rev/canary/cluster/c1",
 * "/:ENV:cluster=c2:ENV:net=n1").  A leading "rev/<name>" pair selects our
 * revision (*rev_name, malloc'd, NULL if absent); the rest are istiod's
 * key/value segments -> *envs (new object: env name -> value).  Odd input
 * is ignored like istiod does; the one error is a key or value that is not
 * UTF-8 (WH_E_INVALID: jansson holds UTF-8 only, where istiod's JSON
 * encoder would print U+FFFD in its place). */
wh_code wh_inject_path_parse(const char *suffix, size_t len, char **rev_name, json_t **envs, wh_err *err);

/* The pod as istiod sees it before anything else (2.3): `pod` checked
 * against corev1.Pod ("could not decode pod: json: cannot unmarshal ..."),
 * then a copy (*out, new reference; it shares every value `pod` holds
 * except the top level and metadata) without metadata.managedFields and
 * with metadata.namespace set to `namespace_` when empty (NULL: left).
 * *leaves (leaves NULL: not wanted): the stable leaves the check found among
 * the pod's list items, for the merge target (wh_inject_apply_overlays);
 * the caller frees them with wh_inject_go_leaves_free. */
wh_code wh_inject_decode_pod(const json_t *pod, const char *namespace_, json_t **out, wh_inject_go_leaves **leaves,
                             wh_err *err);

#endif
