/*
 * sprig_unsupported.c - the names of Sprig's TxtFuncMap (v3.2.3 and v3.3.0,
 * the two istiod vendors) that this engine does not compute yet.  istiod
 * registers all of them (minus env/expandenv), so a template that names one
 * must still load here as it does there; calling one fails with a message
 * saying so instead of rendering something else.  Each entry keeps Sprig's Go
 * parameter types, so a wrong argument count or type fails as in Go.  Moving
 * a function into its group's file (sprig_strings.c, ...) removes it here;
 * set.c registers this table before the others, which override it.
 */
#include "sprig_int.h"

FN(fn_unsupported)
{
    (void)a;
    (void)n;
    (void)out;
    return wh_tmpl_errorf(ctx, "this Sprig function is not supported by webhookd's template engine");
}

const wh_tmpl_func tm_sprig_unsupported_funcs[] = {
    /* strings (xstrings) */
    {"camelcase", fn_unsupported, "s", 0},
    {"kebabcase", fn_unsupported, "s", 0},
    {"shuffle", fn_unsupported, "s", 0},
    {"snakecase", fn_unsupported, "s", 0},
    /* dates */
    {"ago", fn_unsupported, "v", 0},
    {"date", fn_unsupported, "sv", 0},
    {"dateInZone", fn_unsupported, "svs", 0},
    {"date_in_zone", fn_unsupported, "svs", 0},
    {"dateModify", fn_unsupported, "sv", 0},
    {"date_modify", fn_unsupported, "sv", 0},
    {"mustDateModify", fn_unsupported, "sv", 0},
    {"must_date_modify", fn_unsupported, "sv", 0},
    {"duration", fn_unsupported, "v", 0},
    {"durationRound", fn_unsupported, "v", 0},
    {"htmlDate", fn_unsupported, "v", 0},
    {"htmlDateInZone", fn_unsupported, "vs", 0},
    {"now", fn_unsupported, "", 0},
    {"toDate", fn_unsupported, "ss", 0},
    {"mustToDate", fn_unsupported, "ss", 0},
    {"unixEpoch", fn_unsupported, "v", 0},
    /* passwords */
    {"bcrypt", fn_unsupported, "s", 0},
    {"htpasswd", fn_unsupported, "ss", 0},
    {"derivePassword", fn_unsupported, "vssss", 0},
    /* certificates and keys */
    {"buildCustomCert", fn_unsupported, "ss", 0},
    {"genCA", fn_unsupported, "si", 0},
    {"genCAWithKey", fn_unsupported, "sis", 0},
    {"genPrivateKey", fn_unsupported, "s", 0},
    {"genSelfSignedCert", fn_unsupported, "slli", 0},
    {"genSelfSignedCertWithKey", fn_unsupported, "sllis", 0},
    {"genSignedCert", fn_unsupported, "slliv", 0},
    {"genSignedCertWithKey", fn_unsupported, "sllivs", 0},
    /* network */
    {"getHostByName", fn_unsupported, "s", 0},
};
const size_t tm_sprig_unsupported_nfuncs = sizeof(tm_sprig_unsupported_funcs) / sizeof(tm_sprig_unsupported_funcs[0]);
