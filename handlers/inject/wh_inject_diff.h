/*
 * wh_inject_diff.h - stage 7 of injection: the RFC 6902 JSON Patch from the
 * request's pod to the injected pod, which is what the AdmissionResponse
 * carries (encoded by wh_inject_admit, stage 8).
 */
#ifndef WH_INJECT_DIFF_H
#define WH_INJECT_DIFF_H

#include <jansson.h>

#include "wh_result.h"

/* Ops turning `from` into `to` (both borrowed): objects are diffed key by key
 * (add/remove/replace), lists of equal length element by element, lists
 * whose length changed are replaced whole.  Returns a new array (empty when
 * the documents are equal); nothing here can fail (common/wh_alloc.h).  Op
 * values share structure with `to`: do not modify `to` while the ops live. */
json_t *wh_inject_json_diff(const json_t *from, const json_t *to);

#endif
