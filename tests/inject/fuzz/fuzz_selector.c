/*
 * fuzz_selector.c - differential target for the two readers of a
 * metav1.LabelSelector: istiod's (handlers/inject/wh_inject_decide.c:
 * wh_inject_selector_matches, which validates keys and values and skips an
 * empty selector) and the API server's webhook selector as webhookctl
 * evaluates it (kube/kube_selector.c: wh_kube_selector_matches).
 *
 * Input: a JSON array [selector, labels] (anything else is read as the
 * selector, with no labels).  Whenever istiod's reader calls the selector
 * valid and non-empty, both must give the same answer; each answer is one
 * of -1, 0, 1.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wh_inject_decide.h"
#include "wh_kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    const json_t *selector = doc, *labels = NULL;
    int istiod, apiserver, empty;

    if (doc == NULL)
        return 0;
    if (json_is_array(doc)) {
        selector = json_array_get(doc, 0);
        labels = json_array_get(doc, 1);
    }
    empty = json_object_size(json_object_get(selector, "matchLabels")) == 0 &&
            json_array_size(json_object_get(selector, "matchExpressions")) == 0;
    istiod = wh_inject_selector_matches(selector, labels);
    apiserver = wh_kube_selector_matches(selector, labels);
    if (istiod < -1 || istiod > 1 || apiserver < -1 || apiserver > 1)
        abort();
    /* a selector without requirements: istiod answers 0 (it skips it), the API server 1 */
    if (istiod != -1 && istiod != (empty && apiserver == 1 ? 0 : apiserver)) {
        char *s = json_dumps(doc, JSON_ENCODE_ANY);
        fprintf(stderr, "fuzz_selector: istiod %d, api server %d for %s\n", istiod, apiserver, s);
        free(s);
        abort();
    }
    json_decref(doc);
    return 0;
}
