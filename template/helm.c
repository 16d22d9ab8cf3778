/* helm.c - placeholder */
#include "tmpl_int.h"
static wh_code fn_required(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out) { return WH_OK; }
const wh_tmpl_func tm_helm_funcs[] = {{"required", fn_required, "sv", NULL}};
const size_t tm_helm_nfuncs = 1;
