/*
 * wh_inject_render_funcs.c - the helper functions istiod adds to Sprig for its
 * injection templates (annotation, valueOrDefault, isset, protoToJSON,
 * toYaml, otelResourceAttributes, ...), with Go's argument types and Istio's
 * exact output, for the templates of every Istio release from 1.20 on.
 */
#include "wh_inject_render_funcs.h"
#include "wh_inject_render_int.h"
#include "wh_inject_proxyconfig.h"

#include "wh_go.h"
#include "wh_inject_pod.h"
#include "wh_yaml.h"
#include "wh_alloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The render's user pointer is the wh_inject_data. */
static wh_inject_data *data_of(wh_tmpl_ctx *ctx)
{
    return wh_tmpl_user(ctx);
}

static wh_code ret_buf(wh_tmpl_ctx *ctx, wh_buf *b, wh_tmpl_value *out)
{
    return wh_tmpl_strdup(ctx, b->data ? b->data : "", b->len, out);
}

static char *vdup(const wh_tmpl_value *v)
{
    return wh_strndup(v->u.s, v->len);
}

/* A JSON value turned into engine values living in the render's arena
 * (maps and lists of interface{}, float64 numbers), as encoding/json
 * decodes into interface{}. */
static wh_code from_json(wh_tmpl_ctx *ctx, const json_t *j, wh_tmpl_value *out)
{
    wh_code rc;

    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *e;
        *out = wh_tmpl_map_new(ctx, NULL);
        json_object_foreach((json_t *)j, k, e)
        {
            wh_tmpl_value ev;
            if ((rc = from_json(ctx, e, &ev)) != WH_OK || (rc = wh_tmpl_map_set(ctx, out, k, strlen(k), ev)) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *e;
        *out = wh_tmpl_list_new(ctx, json_array_size(j), NULL);
        json_array_foreach((json_t *)j, i, e)
        {
            wh_tmpl_value ev;
            if ((rc = from_json(ctx, e, &ev)) != WH_OK || (rc = wh_tmpl_list_push(ctx, out, ev)) != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    case JSON_STRING:
        return wh_tmpl_strdup(ctx, json_string_value(j), json_string_length(j), out);
    case JSON_INTEGER:
        *out = wh_tmpl_float((double)json_integer_value(j));
        return WH_OK;
    case JSON_REAL:
        *out = wh_tmpl_float(json_real_value(j));
        return WH_OK;
    case JSON_TRUE:
    case JSON_FALSE:
        *out = wh_tmpl_bool(json_is_true(j));
        return WH_OK;
    default:
        *out = wh_tmpl_nil();
        return WH_OK;
    }
}

/* A map[string]string argument as a JSON object (new reference; {} for nil). */
static json_t *map_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *m)
{
    json_t *j = NULL;

    if (m->kind != WH_TMPL_MAP || wh_tmpl_to_json(ctx, m, &j) != WH_OK || !json_is_object(j)) {
        json_decref(j);
        return json_object();
    }
    return j;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Go marshals maps with sorted keys: a sorted copy of a flat object. */
static json_t *sorted(const json_t *obj)
{
    size_t n = json_object_size(obj), i = 0;
    const char **keys = wh_calloc(n + 1, sizeof(*keys)), *k;
    json_t *v, *out = json_object();

    json_object_foreach((json_t *)obj, k, v) keys[i++] = k;
    qsort(keys, n, sizeof(*keys), cmp_keys);
    for (i = 0; i < n; i++)
        json_object_set(out, keys[i], json_object_get(obj, keys[i]));
    free(keys);
    return out;
}

static wh_code ret_gojson(wh_tmpl_ctx *ctx, const json_t *j, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_go_json(b, j, WH_GO_JSON_HTML);
    return ret_buf(ctx, b, out);
}

/* ---- the functions ---- */

static wh_code fn_format_duration(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = wh_inject_duration_text(&a[0], b);
    return rc != WH_OK ? rc : ret_buf(ctx, b, out);
}

static wh_code fn_isset(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_tmpl_value dummy;
    *out = wh_tmpl_bool(wh_tmpl_map_get(&a[0], a[1].u.s, a[1].len, &dummy) == WH_OK);
    return WH_OK;
}

static wh_code fn_exclude_inbound_port(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf port = WH_BUF_INIT, *b;
    const char *p, *list = a[1].u.s, *end = a[1].u.s + a[1].len;
    size_t plen;
    wh_code rc;
    int first = 1;

    if ((rc = wh_tmpl_sprint(ctx, &a[0], &port)) != WH_OK)
        goto out;
    p = port.data ? port.data : "";
    plen = port.len;
    while (plen > 0 && isspace((unsigned char)*p))
        p++, plen--;
    while (plen > 0 && isspace((unsigned char)p[plen - 1]))
        plen--;
    if (plen == 0 || (plen == 1 && p[0] == '0')) {
        *out = a[1];
        goto out;
    }
    /* Already listed (compared untrimmed) -> unchanged. */
    for (const char *s = list;;) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        size_t l = c ? (size_t)(c - s) : (size_t)(end - s);
        if (l == plen && memcmp(s, p, plen) == 0) {
            *out = a[1];
            goto out;
        }
        if (!c)
            break;
        s = c + 1;
    }
    b = wh_tmpl_tmpbuf(ctx);
    for (const char *s = list;;) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        const char *e = c ? c : end;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        if (e > s) {
            if (!first)
                wh_buf_putc(b, ',');
            wh_buf_append(b, s, (size_t)(e - s));
            first = 0;
        }
        if (!c)
            break;
        s = c + 1;
    }
    if (!first)
        wh_buf_putc(b, ',');
    wh_buf_append(b, p, plen);
    rc = ret_buf(ctx, b, out);
out:
    wh_buf_free(&port);
    return rc;
}

/* Comma-joined TCP container ports of a []Container, optionally skipping
 * istio-proxy. */
static wh_code container_ports(wh_tmpl_ctx *ctx, const wh_tmpl_value *list, int skip_proxy, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    long n = wh_tmpl_len(list);
    int first = 1;

    for (long i = 0; i < n; i++) {
        wh_tmpl_value c = wh_tmpl_list_at(list, (size_t)i);
        const json_t *cj = wh_inject_host_json(&c, "v1.Container"), *p;
        const char *name = wh_inject_jstr(cj, "name");
        size_t k;
        if (cj == NULL || (skip_proxy && name && strcmp(name, "istio-proxy") == 0))
            continue;
        json_array_foreach(json_object_get(cj, "ports"), k, p)
        {
            const char *proto = wh_inject_jstr(p, "protocol");
            if (proto && (strcmp(proto, "UDP") == 0 || strcmp(proto, "SCTP") == 0))
                continue;
            wh_buf_printf(b, "%s%lld", first ? "" : ",",
                          (long long)json_integer_value(json_object_get(p, "containerPort")));
            first = 0;
        }
    }
    return ret_buf(ctx, b, out);
}

static wh_code fn_include_inbound_ports(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    return container_ports(ctx, &a[0], 0, out);
}

static wh_code fn_application_ports(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    return container_ports(ctx, &a[0], 1, out);
}

static wh_code fn_identity(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    *out = a[0];
    return WH_OK;
}

/* The annotations of an ObjectMeta; the pod's (every `annotation` call of
 * a template asks for them) are looked up once per render. */
static const json_t *meta_annotations(wh_inject_data *d, const json_t *meta)
{
    if (meta == NULL || meta != d->object_meta)
        return json_object_get(meta, "annotations");
    if (!d->annotations_known) {
        d->annotations = json_object_get(meta, "annotations");
        d->annotations_known = 1;
    }
    return d->annotations;
}

static wh_code fn_annotation(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const json_t *meta = wh_inject_host_json(&a[0], "v1.ObjectMeta"), *v;
    wh_buf *b;
    wh_code rc;

    if (meta == NULL && a[0].kind != WH_TMPL_NIL)
        return wh_tmpl_errorf(ctx, "wrong type for value; expected v1.ObjectMeta; got %s", wh_tmpl_type_name(&a[0]));
    v = json_object_getn(meta_annotations(data_of(ctx), meta), a[1].len ? a[1].u.s : "", a[1].len);
    if (json_is_string(v)) {
        *out = wh_tmpl_strn(json_string_value(v), json_string_length(v));
        return WH_OK;
    }
    if (a[2].kind == WH_TMPL_STRING && (a[2].type == NULL || a[2].type->format == NULL)) {
        /* fmt.Sprint of a plain string is the string itself */
        *out = wh_tmpl_strn(a[2].u.s, a[2].len);
        return WH_OK;
    }
    b = wh_tmpl_tmpbuf(ctx);
    if ((rc = wh_tmpl_sprint(ctx, &a[2], b)) != WH_OK)
        return rc;
    return ret_buf(ctx, b, out);
}

static wh_code fn_value_or_default(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const wh_tmpl_value *v = &a[0];
    int unset = v->kind == WH_TMPL_NIL || v->kind == WH_TMPL_INVALID ||
                (v->kind == WH_TMPL_STRING && v->len == 0 && v->type == NULL);
    *out = unset ? a[1] : a[0];
    return WH_OK;
}

static wh_code fn_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *m, *s;
    wh_code rc;

    if (a[0].kind != WH_TMPL_MAP || (a[0].rep == WH_TMPL_REP_JSON && a[0].u.json == NULL) ||
        (a[0].rep == WH_TMPL_REP_ENGINE && a[0].u.map == NULL)) {
        *out = wh_tmpl_str("{}");
        return WH_OK;
    }
    m = map_json(ctx, &a[0]);
    s = sorted(m);
    rc = ret_gojson(ctx, s, out);
    json_decref(m);
    json_decref(s);
    return rc;
}

static wh_code fn_from_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *j = json_loadb(a[0].u.s, a[0].len, JSON_DECODE_ANY, NULL);
    wh_code rc;

    if (j == NULL) {
        *out = wh_tmpl_str("{}");
        return WH_OK;
    }
    rc = from_json(ctx, j, out);
    json_decref(j);
    return rc;
}

/* Go's json.Marshal with map keys sorted, recursively. */
static json_t *sort_deep(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *s = sorted(v), *e;
        const char *k;
        json_object_foreach(s, k, e) json_object_set_new(s, k, sort_deep(e));
        return s;
    }
    if (json_is_array(v)) {
        json_t *a = json_array(), *e;
        size_t i;
        json_array_foreach((json_t *)v, i, e) json_array_append_new(a, sort_deep(e));
        return a;
    }
    return json_incref((json_t *)v);
}

static wh_code fn_struct_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *j = NULL, *s;
    wh_code rc;

    if (a[0].kind == WH_TMPL_NIL || a[0].kind == WH_TMPL_INVALID) {
        *out = wh_tmpl_str("{}");
        return WH_OK;
    }
    if (a[0].kind == WH_TMPL_HOST) {
        wh_buf *b = wh_tmpl_tmpbuf(ctx);
        if ((rc = wh_inject_struct_gojson(&a[0], b)) != WH_E_NOTFOUND)
            return rc != WH_OK ? rc : ret_buf(ctx, b, out);
    }
    if (wh_tmpl_to_json(ctx, &a[0], &j) != WH_OK || j == NULL) {
        *out = wh_tmpl_str("{}");
        return WH_OK;
    }
    /* Host structs come back in Go field order; plain maps sort. */
    s = a[0].kind == WH_TMPL_HOST ? json_incref(j) : sort_deep(j);
    rc = ret_gojson(ctx, s, out);
    json_decref(s);
    json_decref(j);
    return rc;
}

static wh_code fn_proto_to_json(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const wh_inject_data *d = data_of(ctx);
    wh_buf *b;

    if (!wh_inject_is_proxy_config(&a[0])) {
        /* Other messages: their JSON as is. */
        return fn_struct_to_json(ctx, a, n, out);
    }
    if (a[0].u.host == NULL) {
        *out = wh_tmpl_str("{}");
        return WH_OK;
    }
    if (a[0].u.host == d->default_pc && d->default_pc_json != NULL) { /* the revision's: printed when it loaded */
        *out = wh_tmpl_str(d->default_pc_json);
        return WH_OK;
    }
    b = wh_tmpl_tmpbuf(ctx);
    wh_inject_proxy_config_json(a[0].u.host, d->release, b);
    return ret_buf(ctx, b, out);
}

static wh_code fn_to_yaml(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *j = NULL;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc;

    if (a[0].kind == WH_TMPL_INVALID || a[0].kind == WH_TMPL_NIL) {
        *out = wh_tmpl_str("null\n");
        return WH_OK;
    }
    if (wh_tmpl_to_json(ctx, &a[0], &j) != WH_OK || wh_yaml_dump(j, b, NULL) != WH_OK) {
        json_decref(j);
        *out = wh_tmpl_str("");
        return WH_OK;
    }
    json_decref(j);
    rc = ret_buf(ctx, b, out);
    return rc;
}

/* Istio's indent: every line but the first gets `n` spaces. */
static wh_code fn_indent(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t spaces = a[0].u.i > 0 ? (size_t)a[0].u.i : 0, lines = 0;
    const char *s = a[1].len ? a[1].u.s : "", *end = s + a[1].len, *nl, *p;

    for (p = s; (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1)
        lines++;
    if (lines != 0 && spaces > (SIZE_MAX - a[1].len) / lines)
        return wh_tmpl_errorf(ctx, "indent: %lld spaces are too many", (long long)a[0].u.i);
    wh_buf_reserve(b, a[1].len + lines * spaces);
    /* line by line: the text up to and including each newline, then the pad */
    while ((nl = memchr(s, '\n', (size_t)(end - s))) != NULL) {
        memcpy(b->data + b->len, s, (size_t)(nl + 1 - s));
        b->len += (size_t)(nl + 1 - s);
        memset(b->data + b->len, ' ', spaces);
        b->len += spaces;
        s = nl + 1;
    }
    memcpy(b->data + b->len, s, (size_t)(end - s));
    b->len += (size_t)(end - s);
    b->data[b->len] = '\0';
    return ret_buf(ctx, b, out);
}

static wh_code fn_directory(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const char *s = a[0].u.s;
    size_t i = a[0].len;

    while (i > 0 && s[i - 1] != '/')
        i--;
    *out = wh_tmpl_strn(s, i);
    return WH_OK;
}

static wh_code fn_contains(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const char *needle = a[0].u.s, *hay = a[1].u.s;
    size_t nl = a[0].len, hl = a[1].len;
    int found = nl == 0;

    for (size_t i = 0; !found && i + nl <= hl; i++)
        found = memcmp(hay + i, needle, nl) == 0;
    *out = wh_tmpl_bool(found);
    return WH_OK;
}

static wh_code fn_to_lower(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    for (uint32_t i = 0; i < a[0].len; i++)
        wh_buf_putc(b, (char)tolower((unsigned char)a[0].u.s[i]));
    return ret_buf(ctx, b, out);
}

/* istiod's appendMultusNetwork(existing, "ns/name").  Releases without
 * WH_REL_MULTUS_JSON_NAMESPACE match and append the JSON form's "name"
 * as the whole "ns/name" text. */
static wh_code fn_append_multus(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    char *existing = vdup(&a[0]), *net = vdup(&a[1]), *close, *slash = NULL;
    const char *ns = "", *name;
    int split = wh_inject_release_has(data_of(ctx)->release, WH_REL_MULTUS_JSON_NAMESPACE);
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    wh_code rc = WH_OK;

    if (existing[0] == '\0') {
        *out = a[1];
        goto out;
    }
    /* k8s.io/utils SplitQualifiedName: "ns/name" or just "name". */
    name = net;
    if (split && (slash = strchr(net, '/')) != NULL) {
        *slash = '\0';
        ns = net;
        name = slash + 1;
    }
    if ((close = strrchr(existing, ']')) != NULL) {
        json_t *list = json_loads(existing, 0, NULL), *item;
        size_t i;
        int have = 0;
        if (!json_is_array(list)) {
            json_decref(list);
            *out = a[0];
            goto out;
        }
        json_array_foreach(list, i, item)
        {
            const char *in = wh_inject_jstr(item, "name"), *ins = wh_inject_jstr(item, "namespace");
            if (!json_is_object(item)) {
                have = -1;
                break;
            }
            if (in && strcmp(in, name) == 0 && (!split || strcmp(ins ? ins : "", ns) == 0))
                have = 1;
        }
        json_decref(list);
        if (have != 0) {
            *out = a[0];
            goto out;
        }
        wh_buf_append(b, existing, (size_t)(close - existing));
        if (ns[0])
            wh_buf_printf(b, ", {\"name\": \"%s\", \"namespace\": \"%s\"}", name, ns);
        else
            wh_buf_printf(b, ", {\"name\": \"%s\"}", name);
        wh_buf_puts(b, close);
        rc = ret_buf(ctx, b, out);
        goto out;
    }
    if (slash)
        *slash = '/';
    for (char *s = existing;;) {
        char *c = strchr(s, ','), *e;
        if (c)
            *c = '\0';
        while (isspace((unsigned char)*s))
            s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (strcmp(s, net) == 0) {
            *out = a[0];
            goto out;
        }
        if (!c)
            break;
        s = c + 1;
    }
    wh_buf_append(b, a[0].u.s, a[0].len);
    wh_buf_puts(b, ", ");
    wh_buf_append(b, a[1].u.s, a[1].len);
    rc = ret_buf(ctx, b, out);
out:
    free(existing);
    free(net);
    return rc;
}

static wh_code fn_env(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    char *key = vdup(&a[0]);
    const char *v;

    v = wh_inject_settings_getenv(data_of(ctx)->settings, key);
    free(key);
    if (v != NULL && v[0] != '\0')
        *out = wh_tmpl_str(v);
    else
        *out = a[1];
    return WH_OK;
}

/* A map[string]string built into the arena from a JSON object. */
static wh_code ret_string_map(wh_tmpl_ctx *ctx, const json_t *obj, wh_tmpl_value *out)
{
    const char *k;
    json_t *v;
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, &wh_tmpl_type_map_string_string);
    json_object_foreach((json_t *)obj, k, v)
    {
        wh_tmpl_value s;
        if ((rc = wh_tmpl_strdup(ctx, json_string_value(v), json_string_length(v), &s)) != WH_OK ||
            (rc = wh_tmpl_map_set(ctx, out, k, strlen(k), s)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

static wh_code fn_omit(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *m = map_json(ctx, &a[0]);
    wh_code rc;

    for (size_t i = 1; i < n; i++) {
        char *k = vdup(&a[i]);
        if (k != NULL)
            json_object_del(m, k);
        free(k);
    }
    rc = ret_string_map(ctx, m, out);
    json_decref(m);
    return rc;
}

static wh_code fn_strdict(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_code rc;

    *out = wh_tmpl_map_new(ctx, &wh_tmpl_type_map_string_string);
    for (size_t i = 0; i < n; i += 2) {
        wh_tmpl_value v = i + 1 < n ? a[i + 1] : wh_tmpl_str("");
        if ((rc = wh_tmpl_map_set(ctx, out, a[i].u.s, a[i].len, v)) != WH_OK)
            return rc;
    }
    return WH_OK;
}

static json_t *merged_maps(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n)
{
    json_t *m = json_object();

    for (size_t i = 0; i < n; i++) {
        json_t *x = map_json(ctx, &a[i]);
        json_object_update(m, x);
        json_decref(x);
    }
    return m;
}

static wh_code fn_merge_maps(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *m;
    wh_code rc;

    if (n == 0) {
        *out = wh_tmpl_json_typed(NULL, &wh_tmpl_type_map_string_string);
        return WH_OK;
    }
    m = merged_maps(ctx, a, n);
    rc = ret_string_map(ctx, m, out);
    json_decref(m);
    return rc;
}

static wh_code fn_to_json_map(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *m, *s;
    wh_code rc;

    if (n == 0) {
        *out = wh_tmpl_str("null");
        return WH_OK;
    }
    m = merged_maps(ctx, a, n);
    s = sorted(m);
    rc = ret_gojson(ctx, s, out);
    json_decref(m);
    json_decref(s);
    return rc;
}

static int has_nil(const json_t *v);

/* Drop nulls recursively as istiod's omitNil does: a collection holding no null
 * anywhere is kept as it is (an empty one too); one that held some and is left
 * empty becomes null itself. */
static json_t *prune_nil(json_t *v)
{
    if (!has_nil(v))
        return json_incref(v);
    if (json_is_object(v)) {
        json_t *out = json_object(), *e;
        const char *k;
        json_object_foreach(v, k, e)
        {
            json_t *p = prune_nil(e);
            if (p != NULL)
                json_object_set_new(out, k, p);
        }
        if (json_object_size(out) == 0) {
            json_decref(out);
            return NULL;
        }
        return out;
    }
    if (json_is_array(v)) {
        json_t *out = json_array(), *e;
        size_t i;
        json_array_foreach(v, i, e)
        {
            json_t *p = prune_nil(e);
            if (p != NULL)
                json_array_append_new(out, p);
        }
        if (json_array_size(out) == 0) {
            json_decref(out);
            return NULL;
        }
        return out;
    }
    return json_is_null(v) ? NULL : json_incref(v);
}

static int has_nil(const json_t *v)
{
    const char *k;
    json_t *e;
    size_t i;

    if (json_is_null(v))
        return 1;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, e) if (has_nil(e)) return 1;
    if (json_is_array(v))
        json_array_foreach((json_t *)v, i, e) if (has_nil(e)) return 1;
    return 0;
}

static wh_code fn_omit_nil(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    json_t *j = NULL, *p;
    wh_code rc;

    if (a[0].kind == WH_TMPL_NIL || a[0].kind == WH_TMPL_INVALID) {
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    if ((rc = wh_tmpl_to_json(ctx, &a[0], &j)) != WH_OK)
        return rc;
    if (!has_nil(j)) {
        json_decref(j);
        *out = a[0];
        return WH_OK;
    }
    p = prune_nil(j);
    json_decref(j);
    if (p == NULL) {
        *out = wh_tmpl_nil();
        return WH_OK;
    }
    rc = from_json(ctx, p, out);
    json_decref(p);
    return rc;
}

/* tag and digest of [registry[:port]/]name[:tag][@digest]. */
static void image_tag_digest(const char *image, char *tag, size_t ts, char *digest, size_t ds)
{
    const char *at = strchr(image, '@'), *end = at ? at : image + strlen(image), *slash = NULL, *colon = NULL;

    tag[0] = digest[0] = '\0';
    if (at)
        snprintf(digest, ds, "%s", at + 1);
    for (const char *p = image; p < end; p++) {
        if (*p == '/')
            slash = p;
        if (*p == ':')
            colon = p;
    }
    if (colon && (!slash || colon > slash))
        snprintf(tag, ts, "%.*s", (int)(end - colon - 1), colon + 1);
}

static wh_code fn_otel(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    const json_t *mesh = wh_inject_host_json(&a[0], NULL), *p;
    json_t *providers = json_object_get(mesh, "extensionProviders"); /* once: json_array_foreach reads it per item */
    json_t *ann = NULL, *labels = NULL;
    wh_buf *b = wh_tmpl_tmpbuf(ctx);
    size_t i;
    int enabled = 0, first = 1;
    const char *v;
    char *ns = NULL;
    long nc = wh_tmpl_len(&a[4]);
    wh_code rc;

    json_array_foreach(providers, i, p)
    {
        const char *e = wh_inject_jstr(json_object_get(p, "opentelemetry"), "serviceAttributeEnrichment");
        if (e && strcmp(e, "OTEL_SEMANTIC_CONVENTIONS") == 0)
            enabled = 1;
    }
    if (!enabled) { /* the usual case: no need to look at the pod */
        *out = wh_tmpl_str("");
        return WH_OK;
    }
    ann = map_json(ctx, &a[1]);
    labels = map_json(ctx, &a[2]);
    ns = vdup(&a[3]);
#define ADD(k, ...)                                                                                                    \
    do {                                                                                                               \
        wh_buf_printf(b, "%s%s=", first ? "" : ",", k);                                                                \
        wh_buf_printf(b, __VA_ARGS__);                                                                                 \
        first = 0;                                                                                                     \
    } while (0)
    if ((v = wh_inject_jstr(ann, "resource.opentelemetry.io/service.namespace")) && v[0])
        ADD("service.namespace", "%s", v);
    else if (ns[0])
        ADD("service.namespace", "%s", ns);
    if ((v = wh_inject_jstr(ann, "resource.opentelemetry.io/service.version")) && v[0]) {
        ADD("service.version", "%s", v);
    } else if ((v = wh_inject_jstr(labels, "app.kubernetes.io/version")) && v[0]) {
        ADD("service.version", "%s", v);
    } else if (nc == 1) {
        wh_tmpl_value c = wh_tmpl_list_at(&a[4], 0);
        const char *image = wh_inject_jstr(wh_inject_host_json(&c, NULL), "image");
        char tag[256], digest[256];
        image_tag_digest(image ? image : "", tag, sizeof(tag), digest, sizeof(digest));
        if (tag[0] && digest[0])
            ADD("service.version", "%s@%s", tag, digest);
        else if (tag[0] || digest[0])
            ADD("service.version", "%s%s", tag, digest);
    }
    if ((v = wh_inject_jstr(ann, "resource.opentelemetry.io/service.instance.id")) && v[0]) {
        ADD("service.instance.id", "%s", v);
    } else if (nc > 0) {
        wh_tmpl_value c = wh_tmpl_list_at(&a[4], 0);
        const char *name = wh_inject_jstr(wh_inject_host_json(&c, NULL), "name");
        ADD("service.instance.id", "%s.$(POD_NAME).%s", ns, name ? name : "");
    }
#undef ADD
    rc = ret_buf(ctx, b, out);
    free(ns);
    json_decref(ann);
    json_decref(labels);
    return rc;
}

/* Reals that hold whole numbers become integers, as they would after
 * encoding/json printed them and YAML read them back. */
static void integral_numbers(json_t *v)
{
    const char *k;
    json_t *e;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach(v, k, e)
        {
            if (json_is_real(e) && json_real_value(e) == (double)(json_int_t)json_real_value(e) &&
                json_real_value(e) > -9e15 && json_real_value(e) < 9e15)
                json_object_set_new(v, k, json_integer((json_int_t)json_real_value(e)));
            else
                integral_numbers(e);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, e)
        {
            if (json_is_real(e) && json_real_value(e) == (double)(json_int_t)json_real_value(e) &&
                json_real_value(e) > -9e15 && json_real_value(e) < 9e15)
                json_array_set_new(v, i, json_integer((json_int_t)json_real_value(e)));
            else
                integral_numbers(e);
        }
    }
}

/* webhookd's own: `overlay X` hands the overlay over as data (no text to
 * print and parse back).  Prints nothing; a second call replaces the first. */
static wh_code fn_overlay(wh_tmpl_ctx *ctx, const wh_tmpl_value *a, size_t n, wh_tmpl_value *out)
{
    wh_inject_data *d = data_of(ctx);
    json_t *j = NULL;
    wh_code rc;

    if ((rc = wh_tmpl_to_json(ctx, &a[0], &j)) != WH_OK)
        return rc;
    if (!json_is_object(j)) {
        json_decref(j);
        return wh_tmpl_errorf(ctx, "overlay: want a map, got %s", wh_tmpl_type_name(&a[0]));
    }
    integral_numbers(j);
    json_decref(d->captured);
    d->captured = j;
    *out = wh_tmpl_str("");
    return WH_OK;
}

static const wh_tmpl_func inject_funcs[] = {
    {"overlay", fn_overlay, "v", 0},
    {"formatDuration", fn_format_duration, "v", WH_TMPL_FN_PURE},
    {"isset", fn_isset, "Ms", WH_TMPL_FN_PURE},
    {"excludeInboundPort", fn_exclude_inbound_port, "vs", WH_TMPL_FN_PURE},
    {"includeInboundPorts", fn_include_inbound_ports, "v", WH_TMPL_FN_PURE},
    {"kubevirtInterfaces", fn_identity, "s", WH_TMPL_FN_PURE},
    {"excludeInterfaces", fn_identity, "s", WH_TMPL_FN_PURE},
    {"applicationPorts", fn_application_ports, "v", WH_TMPL_FN_STABLE},
    {"annotation", fn_annotation, "vsv", WH_TMPL_FN_STABLE},
    {"valueOrDefault", fn_value_or_default, "vv", WH_TMPL_FN_PURE},
    {"toJSON", fn_to_json, "M", WH_TMPL_FN_PURE},
    {"fromJSON", fn_from_json, "s", WH_TMPL_FN_PURE},
    {"structToJSON", fn_struct_to_json, "v", WH_TMPL_FN_STABLE},
    {"protoToJSON", fn_proto_to_json, "v", WH_TMPL_FN_STABLE},
    {"toYaml", fn_to_yaml, "v", WH_TMPL_FN_PURE},
    {"indent", fn_indent, "is", WH_TMPL_FN_PURE},
    {"directory", fn_directory, "s", WH_TMPL_FN_PURE},
    {"contains", fn_contains, "ss", WH_TMPL_FN_PURE},
    {"toLower", fn_to_lower, "s", WH_TMPL_FN_PURE},
    {"appendMultusNetwork", fn_append_multus, "ss", WH_TMPL_FN_STABLE},
    {"env", fn_env, "ss", WH_TMPL_FN_STABLE},
    {"omit", fn_omit, "Ms*", WH_TMPL_FN_PURE},
    {"strdict", fn_strdict, "s*", WH_TMPL_FN_PURE},
    {"toJsonMap", fn_to_json_map, "M*", WH_TMPL_FN_PURE},
    {"mergeMaps", fn_merge_maps, "M*", WH_TMPL_FN_PURE},
    {"omitNil", fn_omit_nil, "v", WH_TMPL_FN_PURE},
    {"otelResourceAttributes", fn_otel, "vMMsv", WH_TMPL_FN_STABLE},
};

wh_code wh_inject_set_funcs(wh_tmpl_set *set, const wh_inject_release *release, int own, wh_err *err)
{
    /* what each release's istiod lacks of the table above and of Sprig v3.3.0 */
    static const struct {
        const char *name;
        wh_release_behaviour since;
    } later[] = {{"mergeMaps", WH_REL_FUNC_MERGE_MAPS},
                 {"sha512sum", WH_REL_FUNC_SPRIG_3_3},
                 {"omitNil", WH_REL_FUNC_OMIT_NIL},
                 {"otelResourceAttributes", WH_REL_FUNC_OTEL_RES_ATTRS}};
    const char *drop[1 + sizeof(later) / sizeof(later[0])];
    size_t n = 0;
    wh_code rc;

    if ((rc = wh_tmpl_set_funcs(set, inject_funcs, sizeof(inject_funcs) / sizeof(inject_funcs[0]), err)) != WH_OK)
        return rc;
    if (!own)
        drop[n++] = "overlay";
    for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
        if (!wh_inject_release_has(release, later[i].since))
            drop[n++] = later[i].name;
    return wh_tmpl_set_drop_funcs(set, drop, n, err);
}
