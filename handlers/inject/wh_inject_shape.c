/*
 * wh_inject_shape.c - stage 4 of injection (see wh_inject_shape.h): one walk
 * per rendered overlay that both drops what corev1.Pod has no field for and
 * type-checks the rest.
 */
#include "wh_inject_shape.h"

#include <stdlib.h>

#include "wh_alloc.h"
#include "wh_json_arena.h"
#include "wh_inject_schema.h"

wh_code wh_inject_shape(json_t **doc, const char *name, wh_inject_shaped *out, wh_err *err)
{
    out->type_rc = WH_OK;
    wh_err_clear(&out->type_err);
    if (*doc == NULL || json_is_null(*doc)) {
        json_decref(*doc);
        *doc = json_object();
    }
    if (!json_is_object(*doc))
        return wh_err_set(err, WH_E_RENDER, "template \"%s\" did not render a YAML mapping", name);
    /* the YAML of constant template text is made of copies of molds
     * (common/wh_yaml_fast.c's pieces): each one's walk, once clean, is
     * skipped (wh_json_mold_copies_begin: the pipeline asks them noted) */
    out->type_rc = wh_inject_go_decode_molded(*doc, &wh_inject_type_pod, &out->type_err);
    return WH_OK;
}

wh_code wh_inject_shape_overlays(json_t *overlays, const char *const *names, wh_inject_shaped **out, wh_err *err)
{
    size_t i, n = json_array_size(overlays);
    /* not zeroed: wh_inject_shape sets what it reads (a wh_err is 1 KiB) */
    wh_inject_shaped *shaped = wh_malloc((n + 1) * sizeof(*shaped));
    wh_code rc = WH_OK;

    *out = NULL;
    for (i = 0; i < n && rc == WH_OK; i++) {
        json_t *doc = json_incref(json_array_get(overlays, i));
        rc = wh_inject_shape(&doc, names != NULL ? names[i] : "?", &shaped[i], err);
        if (rc == WH_OK && doc != json_array_get(overlays, i))
            json_array_set(overlays, i, doc);
        json_decref(doc);
    }
    if (rc != WH_OK) {
        free(shaped);
        return rc;
    }
    *out = shaped;
    return WH_OK;
}
