/*
 * schema_go_reference.h - the reference type check of
 * schema_go_reference.c (the same as wh_inject_go_decode & co., without the
 * verdict table, the round trip's shortcuts and its quantity memo), for
 * test_schema_walk.c.
 */
#ifndef SCHEMA_GO_REFERENCE_H
#define SCHEMA_GO_REFERENCE_H

#include "wh_inject_schema.h"

wh_code ref_go_decode(json_t *value, const wh_inject_type *type, int drop, wh_inject_go_leaves **leaves, wh_err *err);
const json_t *const *ref_go_stable_items(wh_inject_go_leaves *leaves, const json_t *list, size_t *n);
void ref_go_leaves_free(wh_inject_go_leaves *leaves);
wh_code ref_go_roundtrip(json_t *value, const wh_inject_type *type, wh_err *err);
/* wh_inject_schema_go.c's test for a quantity text already canonical. */
int ref_quantity_is_canonical(const char *text);

#endif
