/*
 * wh_inject_quantity.h - Kubernetes resource quantities (resource.Quantity)
 * as Go parses and prints them: the canonical form the Go round trip writes
 * into pods and the whole cores istiod sizes proxy concurrency with.
 * Shared by the render stage, the annotation check (wh_inject_render_validate.c)
 * and the Go round trip (wh_inject_schema_go.c).
 */
#ifndef WH_INJECT_QUANTITY_H
#define WH_INJECT_QUANTITY_H

#include <stddef.h>

#include "wh_result.h"

/* resource.ParseQuantity's verdict on text[0..len): NULL when Go takes it,
 * else Go's error text ("quantities must match the regular expression ...",
 * "unable to parse quantity's suffix", ...). */
const char *wh_inject_quantity_error(const char *text, size_t len);
/* Canonical form of a Kubernetes quantity (`2000m` -> `2`, `1024Mi` -> `1Gi`).
 * Writes a NUL-terminated string into out (at least 64 bytes).  Fails with
 * WH_E_INVALID when `text` is not a quantity. */
wh_code wh_inject_quantity_canonical(const char *text, char *out, size_t out_len, wh_err *err);
/* A CPU quantity in whole cores, rounded up the way istiod sizes proxy
 * concurrency (milli value rounded up, then ceil(milli / 1000)): `500m` -> 1,
 * `6500m` -> 7.  WH_E_INVALID when `text` is not a quantity or is too large. */
wh_code wh_inject_quantity_cores(const char *text, long long *out);

#endif
