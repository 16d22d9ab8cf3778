/*
 * wh_inject_embedded.c - the revision compiled into webhookd, so that it
 * injects a working istio-proxy sidecar without any configuration: our own
 * templates (sidecar, and gateway / grpc-agent / grpc-simple on request),
 * values and mesh config (embedded/), served as the "default" revision
 * unless --revisions-dir provides one.
 */
#include "wh_inject_revision.h"
#include "wh_inject_revision_load.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"

extern const char wh_inject_embedded_sidecar[], wh_inject_embedded_gateway[], wh_inject_embedded_grpc_agent[],
    wh_inject_embedded_grpc_simple[], wh_inject_embedded_values[], wh_inject_embedded_mesh[];
extern const size_t wh_inject_embedded_sidecar_len, wh_inject_embedded_gateway_len, wh_inject_embedded_grpc_agent_len,
    wh_inject_embedded_grpc_simple_len, wh_inject_embedded_values_len, wh_inject_embedded_mesh_len;

wh_code wh_inject_revision_embedded(const char *name, wh_inject_revision **out, wh_err *err)
{
    json_t *config = json_pack(
        "{s:s, s:[s], s:{s:s%, s:s%, s:s%, s:s%}}", "policy", "enabled", "defaultTemplates", "sidecar", "templates",
        "sidecar", wh_inject_embedded_sidecar, wh_inject_embedded_sidecar_len, "gateway", wh_inject_embedded_gateway,
        wh_inject_embedded_gateway_len, "grpc-agent", wh_inject_embedded_grpc_agent, wh_inject_embedded_grpc_agent_len,
        "grpc-simple", wh_inject_embedded_grpc_simple, wh_inject_embedded_grpc_simple_len);
    wh_buf text = WH_BUF_INIT;
    wh_code rc;

    *out = NULL;
    if (config == NULL) /* json_pack checks the templates' text: embedded/ holds UTF-8 files only */
        return wh_err_set(err, WH_E_INVALID, "embedded revision: a template is not UTF-8 text");
    if ((rc = wh_yaml_dump(config, &text, err)) == WH_OK)
        rc = wh_inject_revision_load_own(name != NULL ? name : "default", text.data, text.len,
                                         wh_inject_embedded_values, wh_inject_embedded_values_len,
                                         wh_inject_embedded_mesh, wh_inject_embedded_mesh_len, out, err);
    if (rc != WH_OK)
        wh_err_prefix(err, "embedded revision");
    json_decref(config);
    wh_buf_free(&text);
    return rc;
}
