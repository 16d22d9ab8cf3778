/*
 * extensions.c - extensions.istio.io's WasmPlugin (URL schemes, phases,
 * VM config, matches) and TrafficExtension, with istiod's rules and messages
 * (tests/validate/fixtures).
 */
#include "wh_validate_int.h"

#include <ctype.h>
#include <string.h>

/* The scheme istiod's strictParseURL finds: the URL's own when it parses as a request URI, else "http". */
static const char *wasm_url_scheme(wh_vctx *c, const char *url)
{
    size_t n = strcspn(url, ":/?#"), i;
    int valid = n > 0 && url[n] == ':' && isalpha((unsigned char)url[0]);
    char *s;

    for (i = 1; valid && i < n; i++)
        valid = isalnum((unsigned char)url[i]) || url[i] == '+' || url[i] == '-' || url[i] == '.';
    if (!valid)
        return url[0] == '/' ? "" : "http";
    s = (char *)wh_vfmt(c, "%.*s", (int)n, url);
    for (i = 0; i < n; i++)
        s[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
    return s;
}

/* The module both kinds fetch (a WasmPlugin's own fields, a TrafficExtension's
 * `wasm`): URL, digest, pull secret, plugin name and VM environment, in
 * istiod's order.  Both allow 256 bytes of plugin name; WasmPlugin's message
 * says 255 (`said_name_limit`). */
static void check_wasm_module(wh_vctx *c, const json_t *wasm, int said_name_limit)
{
    const char *url = wh_vstr(wasm, "url"), *sha = wh_vstr(wasm, "sha256");
    const json_t *env = wh_varr(wh_vobj(wasm, "vmConfig"), "env");
    wh_vset env_names;
    size_t i;

    if (*url == '\0') {
        wh_verr(c, "url field needs to be set");
    } else {
        const char *scheme = wasm_url_scheme(c, url);
        if (*scheme && strcmp(scheme, "file") != 0 && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0 &&
            strcmp(scheme, "oci") != 0)
            wh_verr(c, "url contains unsupported scheme: %s", scheme);
    }
    if (*sha) {
        if (strlen(sha) != 64)
            wh_verr(c, "sha256 field must be 64 characters long");
        else if (strspn(sha, "0123456789abcdef") != 64)
            wh_verr(c, "sha256 field must match [a-f0-9]{64} pattern");
    }
    if (json_string_length(wh_vget(wasm, "imagePullSecret")) > 253)
        wh_verr(c, "imagePullSecret field must be less than 253 characters long");
    if (json_string_length(wh_vget(wasm, "pluginName")) > 256)
        wh_verr(c, "pluginName field must be less than %d characters long", said_name_limit);
    /* the VM environment stops at its first problem */
    wh_vset_init(&env_names, json_array_size(env));
    for (i = 0; i < json_array_size(env); i++) {
        const json_t *e = json_array_get(env, i);
        const char *name = wh_vstr(e, "name");
        if (*name == '\0') {
            wh_verr(c, "spec.vmConfig.env invalid");
            break;
        }
        if (json_string_length(wh_vget(e, "name")) > 256) {
            wh_verr(c, "env.name field must be less than 255 characters long");
            break;
        }
        if (wh_vset_put(&env_names, name, i, NULL) == 1) {
            wh_verr(c, "duplicate env");
            break;
        }
        if (strcmp(wh_venum(e, "valueFrom", "INLINE"), "INLINE") != 0 && *wh_vstr(e, "value")) {
            wh_verr(c, "value may only be set when valueFrom is INLINE");
            break;
        }
    }
    wh_vset_free(&env_names);
}

/* Traffic selectors (both kinds): every port must be a real one; the first bad one ends the check. */
static void check_traffic_match(wh_vctx *c, const json_t *match)
{
    size_t i, j;

    for (i = 0; i < json_array_size(match); i++) {
        const json_t *ports = wh_varr(json_array_get(match, i), "ports");
        for (j = 0; j < json_array_size(ports); j++) {
            long long n = wh_vint(json_array_get(ports, j), "number");
            if (n <= 0 || n > 65535) {
                wh_verr(c, "spec.Match[%zu].Ports[%zu] is out of range: %lld", i, j, n);
                return;
            }
        }
    }
}

void wh_validate_wasm_plugin(wh_vctx *c, const json_t *spec)
{
    wh_vcheck_policy_target(c, spec, "selector");
    check_wasm_module(c, spec, 255);
    check_traffic_match(c, wh_varr(spec, "match"));
}

/* istiod's ValidateTrafficExtension: one filter (a Wasm module or inline Lua),
 * where it applies, then the filter's own checks and the traffic selectors. */
void wh_validate_traffic_extension(wh_vctx *c, const json_t *spec)
{
    const json_t *wasm = wh_vobj(spec, "wasm"), *lua = wh_vobj(spec, "lua");

    if ((wasm != NULL) == (lua != NULL))
        wh_verr(c, "exactly one of wasm or lua must be set");
    wh_vcheck_policy_target(c, spec, "selector");
    if (lua != NULL) {
        size_t n = json_string_length(wh_vget(lua, "inlineCode"));
        if (n == 0)
            wh_verr(c, "lua.inlineCode cannot be empty");
        else if (n > 65536)
            wh_verr(c, "lua.inlineCode exceeds maximum size of 64KB");
    }
    if (wasm != NULL)
        check_wasm_module(c, wasm, 256);
    check_traffic_match(c, wh_varr(spec, "match"));
}
