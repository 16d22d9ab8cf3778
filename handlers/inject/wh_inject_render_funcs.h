/*
 * wh_inject_render_funcs.h - the functions istiod adds to Sprig for its
 * templates (wh_inject_render_funcs.c, stage 3 of injection): a revision's
 * templates are parsed against them, as its release has them, when it
 * loads, and the render stage runs them.
 */
#ifndef WH_INJECT_RENDER_FUNCS_H
#define WH_INJECT_RENDER_FUNCS_H

#include <stddef.h>

#include "wh_tmpl.h"
#include "wh_inject_release.h"

/* Give a new set (made with WH_TMPL_SPRIG, nothing parsed yet) the
 * functions istiod of `release` parses its templates with: Istio's
 * (createInjectionFuncmap) and Sprig's as that release has them, so a call
 * of one it lacks fails to parse, "function \"x\" not defined", as it
 * does there (the table's WH_REL_FUNC_* rows).  `own`: webhookd's own
 * templates (handlers/inject/embedded), which may also call `overlay`, a
 * function no istiod has. */
wh_code wh_inject_set_funcs(wh_tmpl_set *set, const wh_inject_release *release, int own, wh_err *err);

/* Bind a template set of a revision to that revision's values and mesh
 * config (JSON it owns and never changes; wh_inject_render_data.c):
 * templates' `.Values...`, `.MeshConfig...` and `.InboundTrafficPolicyMode`
 * and the pure pipelines over them are computed once, at load, instead of
 * on every render (`.InboundTrafficPolicyMode` where `release` has it).
 * With `pc`, `.ProxyConfig` too: the set then renders
 * only pods whose proxy config is that object
 * (wh_inject_revision_template_pc). */
wh_code wh_inject_bind_values(wh_tmpl_set *set, const json_t *values, const json_t *mesh, const json_t *pc,
                              const wh_inject_release *release, wh_err *err);
/* `.ProxyImage` and `.ProxyInitImage` (malloc'd) of every pod whose proxy
 * config is `pc` and that has no sidecar.istio.io/proxyImageType
 * annotation: what a revision computes once, at load, for its webhook_pc
 * (wh_inject_render_derive.c). */
void wh_inject_revision_images(const json_t *values, const json_t *pc, const wh_inject_release *release,
                               char **proxy_image, char **proxy_init_image);
/* What `.InboundTrafficPolicyMode` gives for a mesh config. */
const char *wh_inject_inbound_mode(const json_t *mesh);

#endif
