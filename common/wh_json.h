/*
 * wh_json.h - a fast JSON reader that builds jansson values.
 *
 * Why: jansson's own reader costs ~27 ns per byte here (a function call per
 * character, a copy of every token); decoding the AdmissionReview was three
 * quarters of a /validate review's CPU.  wh_json_loadb reads the common case
 * -- well-formed JSON -- in one tight pass straight into jansson values, and
 * hands anything else to json_loadb, so that errors (and their line, column
 * and text) are jansson's, and every accepted document gives exactly the
 * values json_loadb would give (same types, key order, duplicate handling).
 * tests/common checks that on every JSON file of the repository and the
 * corpora, and a differential fuzzer checks it on arbitrary bytes.
 */
#ifndef WH_JSON_H
#define WH_JSON_H

#include <jansson.h>
#include <stddef.h>

/* Flags read by the fast path; any other flag sends the call to jansson. */
#define WH_JSON_FAST_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* Same contract as json_loadb(buf, len, flags, error). */
json_t *wh_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);

/* The fast path alone: NULL whenever it does not answer (malformed input,
 * or a case it leaves to jansson).  For tests. */
json_t *wh_json_fast_loadb(const char *buf, size_t len, size_t flags);

#endif
