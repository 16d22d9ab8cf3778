/*
 * wh_inject_shape.h - stage 4 of injection: each rendered overlay made what
 * istiod's decoding of it into a corev1.Pod would leave, in one walk per
 * overlay against the Pod type table (wh_inject_schema.h).  Parts that
 * are copies of a revision's constant YAML (wh_json_mold_copy_of) are
 * checked once per revision, not per review: see
 * wh_inject_go_decode_molded.
 *
 * A template's output must be a mapping (nothing at all counts as {}); keys
 * the Go types lack are dropped where the type is closed; a value the Go
 * type cannot hold (2.5 for an int32, a number for a string) is an error
 * that istiod reports after merging that overlay, so it is handed to the
 * merge stage (wh_inject_apply_overlays) rather than returned.
 */
#ifndef WH_INJECT_SHAPE_H
#define WH_INJECT_SHAPE_H

#include <jansson.h>

#include "wh_result.h"

/* What shaping one overlay found for the merge stage to report. */
typedef struct wh_inject_shaped {
    wh_code type_rc; /* WH_OK, or WH_E_INVALID with Go's message in type_err */
    wh_err type_err;
} wh_inject_shaped;

/* Shape the overlay `*doc` rendered by template `name` in place (a null
 * document becomes a new empty object).  Fails (WH_E_RENDER, `template
 * "<name>" did not render a YAML mapping`) only when the document is not a
 * mapping; the type check's outcome goes to *out. */
wh_code wh_inject_shape(json_t **doc, const char *name, wh_inject_shaped *out, wh_err *err);
/* The same for every overlay of the array `overlays` (template names in
 * `names`), replaced in the array where shaping made a new one.  *out is a
 * new array of one result per overlay (free() it; NULL after a failure). */
wh_code wh_inject_shape_overlays(json_t *overlays, const char *const *names, wh_inject_shaped **out, wh_err *err);

#endif
