/*
 * wh_inject_render_funcs.h - the functions istiod adds to Sprig for its
 * templates (wh_inject_render_funcs.c, stage 3 of injection): a revision's
 * templates are parsed against this table when it loads, and the render
 * stage runs them.
 */
#ifndef WH_INJECT_RENDER_FUNCS_H
#define WH_INJECT_RENDER_FUNCS_H

#include <stddef.h>

#include "wh_tmpl.h"

extern const wh_tmpl_func wh_inject_funcs[];
extern const size_t wh_inject_nfuncs;

/* Bind a template set of a revision to that revision's values (JSON it
 * owns and never changes; wh_inject_render_data.c): templates' `.Values...`
 * chains are resolved once, at load, instead of on every render. */
wh_code wh_inject_bind_values(wh_tmpl_set *set, const json_t *values, wh_err *err);

#endif
