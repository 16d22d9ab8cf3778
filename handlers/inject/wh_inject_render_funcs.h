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

#endif
