/*
 * wh_inject_diff.h - stage 7 of injection: the RFC 6902 JSON Patch from the
 * request's pod to the injected pod, which is what the AdmissionResponse
 * carries (encoded by wh_inject_admit, stage 8).
 */
#ifndef WH_INJECT_DIFF_H
#define WH_INJECT_DIFF_H

#include <jansson.h>

#include "wh_buf.h"

/* The ops turning `from` into `to` (both borrowed), appended to `out` as the
 * compact JSON text the AdmissionResponse carries (`[]` when the documents
 * are equal): objects are diffed key by key (add/remove/replace), lists of
 * equal length element by element, lists whose length changed are replaced
 * whole.  Each op is written as it is found, its value by the Go JSON writer
 * (common/wh_go.h): no op object is built to be written afterwards.  Nothing
 * here can fail (common/wh_alloc.h). */
void wh_inject_json_diff(const json_t *from, const json_t *to, wh_buf *out);

#endif
