/*
 * wh_inject_revision_load.h - making a revision (wh_inject_revision.h): from
 * the bytes of its files (wh_inject_revision_load.c) or the one compiled
 * into webhookd (wh_inject_embedded.c).  Both parse the revision's templates
 * against the render stage's functions, so they sit above the pipeline's
 * stages: the registry, the cluster source and webhookctl call them; no
 * stage does.
 */
#ifndef WH_INJECT_REVISION_LOAD_H
#define WH_INJECT_REVISION_LOAD_H

#include <stddef.h>

#include "wh_inject_release.h"
#include "wh_inject_revision.h"
#include "wh_result.h"

/* Load a revision from the bytes of its three files (config YAML, values
 * JSON, mesh YAML; mesh may be NULL/empty = defaults).  Parses every
 * template.  *out is a new reference. */
wh_code wh_inject_revision_load(const char *name, const char *config, size_t config_len, const char *values,
                                size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                wh_err *err);
/* The same, saying which Istio release the revision is (hints in the order of
 * wh_inject_release_detect; hints->values is ignored, the revision's own
 * values are used).  wh_inject_revision_load finds the release from
 * values.global.tag alone. */
wh_code wh_inject_revision_load_release(const char *name, const char *config, size_t config_len, const char *values,
                                        size_t values_len, const char *mesh, size_t mesh_len,
                                        const wh_release_hints *hints, wh_inject_revision **out, wh_err *err);
/* wh_inject_revision_load for webhookd's own templates (wh_inject_embedded.c,
 * handlers/inject/embedded), which may call its `overlay` function; no
 * istiod has it, so a ConfigMap's template that calls it fails to load. */
wh_code wh_inject_revision_load_own(const char *name, const char *config, size_t config_len, const char *values,
                                    size_t values_len, const char *mesh, size_t mesh_len, wh_inject_revision **out,
                                    wh_err *err);
/* The revision compiled into the binary (our own template, values, mesh).
 * New reference, named `name` (NULL: "default"). */
wh_code wh_inject_revision_embedded(const char *name, wh_inject_revision **out, wh_err *err);

#endif
