/*
 * mesh_networks.c - istiod's reading of the `meshNetworks` document of its
 * mesh ConfigMap (pkg/config/mesh ParseMeshNetworks): YAML to JSON, jsonpb
 * into istio.mesh.v1alpha1.MeshNetworks (decode.c, schema.c), then
 * agent.ValidateMeshNetworks with its messages.  The injector's cluster
 * source (handlers/inject/wh_inject_cluster.c) and `webhookctl check` report a
 * revision's document with it; cases: tests/validate/test_mesh_networks.py.
 */
#include "wh_alloc.h"
#include "wh_validate.h"
#include "wh_validate_int.h"
#include "wh_yaml.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* go-yaml v2's words (sigs.k8s.io/yaml's YAMLToJSON) for the first document of `text` when it does not
 * parse: 1 with them in `out`, else 0.  go-yaml v2 is a port of libyaml, so libyaml reports the same
 * problem at the same marks; go-yaml's parser.fail() prints the problem's line, raised by one for a
 * scanner error, unless it is 0, then the context's line unless 0 (both 0-based), and an alias of an
 * anchor not seen before is its own error, without a line. */
static int go_yaml_problem(const char *text, size_t len, wh_buf *out)
{
    yaml_parser_t p;
    yaml_event_t ev;
    wh_buf anchors = WH_BUF_INIT; /* "\n<name>\n" of each anchor so far */
    int found = 0, done = 0;

    if (!yaml_parser_initialize(&p))
        return 0;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    wh_buf_putc(&anchors, '\n');
    while (!done && !found) {
        const yaml_char_t *anchor = NULL;
        if (!yaml_parser_parse(&p, &ev)) {
            size_t line =
                p.problem_mark.line != 0 ? p.problem_mark.line + (p.error == YAML_SCANNER_ERROR) : p.context_mark.line;
            wh_buf_puts(out, "yaml: ");
            if (line != 0)
                wh_buf_printf(out, "line %zu: ", line);
            wh_buf_puts(out, p.problem != NULL && *p.problem ? p.problem : "unknown problem parsing YAML content");
            found = 1;
            break;
        }
        if (ev.type == YAML_ALIAS_EVENT) {
            wh_buf key = WH_BUF_INIT;
            wh_buf_printf(&key, "\n%s\n", (const char *)ev.data.alias.anchor);
            if (strstr(anchors.data, key.data) == NULL) {
                wh_buf_printf(out, "yaml: unknown anchor '%s' referenced", (const char *)ev.data.alias.anchor);
                found = 1;
            }
            wh_buf_free(&key);
        }
        anchor = ev.type == YAML_SCALAR_EVENT           ? ev.data.scalar.anchor
                 : ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                 : ev.type == YAML_MAPPING_START_EVENT  ? ev.data.mapping_start.anchor
                                                        : NULL;
        if (anchor != NULL)
            wh_buf_printf(&anchors, "%s\n", (const char *)anchor);
        done = ev.type == YAML_DOCUMENT_END_EVENT || ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    wh_buf_free(&anchors);
    yaml_parser_delete(&p);
    return found;
}

/* validateNetwork: every problem of one network, each prefixed "invalid network <name>:". */
static void check_network(wh_vctx *c, const char *name, const json_t *net)
{
    size_t mark = c->errs.n, i;
    const json_t *list = wh_varr(net, "endpoints");
    char *e;

    for (i = 0; i < json_array_size(list); i++) {
        const json_t *ep = json_array_get(list, i), *v;
        if ((v = wh_vget(ep, "fromCidr")) != NULL) {
            if ((e = wh_vmsg_ip_subnet(c, json_string_value(v))) != NULL)
                wh_verr_listed(c, "invalid network %s: %s", name, e);
            free(e);
        } else if ((v = wh_vget(ep, "fromRegistry")) != NULL && !wh_vis_dns1123_label(json_string_value(v))) {
            wh_verr_listed(c, "invalid network %s: invalid registry name: %s", name, json_string_value(v));
        }
    }
    list = wh_varr(net, "gateways");
    for (i = 0; i < json_array_size(list); i++) {
        const json_t *gw = json_array_get(list, i), *v;
        long long port = wh_vint(gw, "port");
        if ((v = wh_vget(gw, "registryServiceName")) != NULL) {
            if ((e = wh_vmsg_fqdn(c, json_string_value(v))) != NULL)
                wh_verr_listed(c, "invalid network %s: %s", name, e);
            free(e);
        } else if ((v = wh_vget(gw, "address")) != NULL && !wh_vis_ip(json_string_value(v))) {
            /* RESOLVE_HOSTNAME_GATEWAYS (on by default) lets a DNS name through; for anything else istiod
             * assigns a new list holding this error alone, dropping the network's earlier ones */
            if ((e = wh_vmsg_fqdn(c, json_string_value(v))) != NULL) {
                wh_verr_drop(c, mark);
                wh_verr_listed(c, "invalid network %s: %s is not a valid IP address or DNS name", name,
                               json_string_value(v));
            }
            free(e);
        }
        if (port < 1 || port > 65535)
            wh_verr_listed(c, "invalid network %s: port number %lld must be in the range 1..65535", name, port);
    }
}

wh_code wh_validate_mesh_networks(const char *yaml, size_t len, wh_err *err)
{
    json_t *doc = NULL, *decoded = NULL;
    const json_t *nets, *net;
    const char **names = NULL, *name;
    wh_err inner = {0};
    wh_buf text = WH_BUF_INIT;
    wh_vctx c;
    size_t n = 0, i;
    wh_code rc = WH_OK;

    wh_vctx_init(&c, "", "");
    if (wh_yaml_load(yaml, len, &doc, &inner) != WH_OK) {
        if (go_yaml_problem(yaml, len, &text))
            wh_err_set(&inner, WH_E_PARSE, "%s", text.data);
        rc = wh_err_set(err, WH_E_INVALID, "failed to convert to proto. error converting YAML to JSON: %s",
                        wh_err_msg(&inner));
        goto out;
    }
    if (wh_vdecode(wh_vschema_mesh_networks, doc, &decoded, &inner) != WH_OK) {
        rc = wh_err_set(err, WH_E_INVALID, "failed to convert to proto. %s", wh_err_msg(&inner));
        goto out;
    }
    /* Go walks the map in random order; name order is one of the orders istiod can print */
    nets = wh_vobj(decoded, "networks");
    names = wh_calloc(json_object_size(nets) + 1, sizeof(*names));
    json_object_foreach((json_t *)nets, name, net) names[n++] = name;
    qsort(names, n, sizeof(*names), by_name);
    for (i = 0; i < n; i++)
        check_network(&c, names[i], json_object_get(nets, names[i]));
    if (c.errs.n > 0) {
        wh_vctx_error_text(&c, &text);
        rc = wh_err_set(err, WH_E_INVALID, "%s", text.data);
    }
out:
    free(names);
    wh_buf_free(&text);
    wh_vctx_free(&c);
    json_decref(decoded);
    json_decref(doc);
    return rc;
}
