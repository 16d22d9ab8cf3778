/*
 * wh_yaml.c - YAML <-> JSON with the semantics of sigs.k8s.io/yaml.
 *
 * Kubernetes manifests, Istio's injector ConfigMap and kubeconfig files are
 * all read by Go through sigs.k8s.io/yaml, which resolves plain scalars with
 * go-yaml v2's YAML 1.1 rules (yes/on are booleans, 0x1f is an int, a
 * timestamp stays a string).  Reading them any other way gives different
 * objects, so the loader reimplements that resolution on top of libyaml's
 * event parser.  The dumper drives libyaml's emitter (go-yaml's emitter is a
 * port of it) with the scalar styles and key order go-yaml v2 chooses, so
 * that toYaml output and kube-inject output match byte for byte.
 */
#include "wh_alloc.h"
#include "wh_chars.h"
#include "wh_go.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"
#include "wh_yaml_resolve.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */

typedef struct anchor {
    char *name;
    json_t *value;
} anchor;

typedef struct loader {
    yaml_parser_t parser;
    anchor *anchors;
    size_t nanchors, cap_anchors;
    size_t nodes;    /* values produced from the text itself */
    size_t expanded; /* values produced by alias expansion */
    wh_err *err;
} loader;

static wh_code parse_error(loader *ld)
{
    yaml_parser_t *p = &ld->parser;
    if (p->error == YAML_MEMORY_ERROR)
        wh_oom(0);                     /* libyaml allocates with its own malloc: the same policy (wh_alloc.h) */
    if (p->error == YAML_READER_ERROR) /* no mark: go-yaml's fail() names no line ("control characters ...") */
        return wh_err_set(ld->err, WH_E_PARSE, "yaml: %s", p->problem != NULL ? p->problem : "invalid YAML");
    if (p->context != NULL)
        return wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: %s %s", p->problem_mark.line + 1, p->context,
                          p->problem != NULL ? p->problem : "");
    return wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: %s", p->problem_mark.line + 1,
                      p->problem != NULL ? p->problem : "invalid YAML");
}

static wh_code next_event(loader *ld, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&ld->parser, ev))
        return parse_error(ld);
    return WH_OK;
}

static size_t json_size(const json_t *v, size_t limit)
{
    size_t n = 1, i;
    const char *k;
    json_t *c;

    if (json_is_array(v)) {
        json_array_foreach(v, i, c)
        {
            n += json_size(c, limit);
            if (n > limit)
                return n;
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, c)
        {
            n += json_size(c, limit);
            if (n > limit)
                return n;
        }
    }
    return n;
}

static void add_anchor(loader *ld, const char *name, json_t *value)
{
    for (size_t i = 0; i < ld->nanchors; i++) {
        if (strcmp(ld->anchors[i].name, name) == 0) { /* redefinition: the later one wins */
            json_decref(ld->anchors[i].value);
            ld->anchors[i].value = json_incref(value);
            return;
        }
    }
    if (ld->nanchors == ld->cap_anchors) {
        size_t cap = ld->cap_anchors ? ld->cap_anchors * 2 : 8;
        anchor *a = wh_realloc(ld->anchors, cap * sizeof(*a));
        ld->anchors = a;
        ld->cap_anchors = cap;
    }
    ld->anchors[ld->nanchors].name = wh_strdup(name);
    ld->anchors[ld->nanchors++].value = json_incref(value);
}

/* The tags go-yaml v2 resolves a scalar against, with what each must resolve to ("!!float" also takes an int). */
static const struct {
    const char *tag, *name;
    scalar_kind kind;
} resolvable_tags[] = {
    {YAML_NULL_TAG, "!!null", SK_NULL},
    {YAML_BOOL_TAG, "!!bool", SK_BOOL},
    {YAML_INT_TAG, "!!int", SK_INT},
    {YAML_FLOAT_TAG, "!!float", SK_FLOAT},
    {YAML_TIMESTAMP_TAG, "!!timestamp", SK_TIMESTAMP},
};

static const char *kind_tag(scalar_kind kind)
{
    for (size_t i = 0; i < sizeof(resolvable_tags) / sizeof(resolvable_tags[0]); i++)
        if (resolvable_tags[i].kind == kind)
            return resolvable_tags[i].name;
    return "!!str";
}

/* The string go-yaml v2 makes of a !!binary scalar, as JSON holds it: the base64 decoded (line breaks skipped), each
 * byte that is not UTF-8 replaced by U+FFFD as encoding/json replaces it. */
static wh_code binary_text(loader *ld, const yaml_event_t *ev, wh_buf *out)
{
    wh_buf raw = WH_BUF_INIT;
    unsigned cp;
    wh_code rc = WH_OK;

    if (wh_go_base64_decode(&raw, (const char *)ev->data.scalar.value, ev->data.scalar.length, 0) >= 0) {
        rc = wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: !!binary value contains invalid base64 data",
                        ev->start_mark.line + 1);
        goto out;
    }
    for (size_t i = 0, n; i < raw.len; i += n)
        if ((n = wh_utf8_decode((const unsigned char *)raw.data + i, raw.len - i, &cp)) != 0) {
            wh_buf_append(out, raw.data + i, n);
        } else {
            wh_buf_puts(out, "\xef\xbf\xbd");
            n = 1;
        }
out:
    wh_buf_free(&raw);
    return rc;
}

/* What go-yaml v2 makes of scalar event `ev` decoding into interface{}: *r, with the text a string (SK_STR,
 * SK_TIMESTAMP) holds in *text and *len (a !!binary scalar's decoded bytes, kept in `bytes`), or an error when a tag
 * names what its text does not resolve to ("cannot decode !!str `abc` as a !!int").  Untagged plain scalars resolve;
 * quoted ones, !!str, "!" and tags go-yaml does not resolve (!foo, !!map on a scalar) stay text. */
static wh_code scalar_meaning(loader *ld, const yaml_event_t *ev, resolved *r, wh_buf *bytes, const char **text,
                              size_t *len)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    size_t i, n = sizeof(resolvable_tags) / sizeof(resolvable_tags[0]);
    wh_code rc;

    memset(r, 0, sizeof(*r));
    r->kind = SK_STR;
    *text = (const char *)ev->data.scalar.value;
    *len = ev->data.scalar.length;
    if (tag != NULL && strcmp(tag, "tag:yaml.org,2002:binary") == 0) {
        rc = binary_text(ld, ev, bytes);
        *text = bytes->len != 0 ? bytes->data : "";
        *len = bytes->len;
        return rc;
    }
    if (tag == NULL) {
        if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strlen(*text) == *len)
            wh_yaml_resolve_plain(*text, r);
        return WH_OK;
    }
    for (i = 0; i < n && strcmp(tag, resolvable_tags[i].tag) != 0; i++)
        ;
    if (i == n)
        return WH_OK;
    if (strlen(*text) == *len) /* (with a NUL it is no number, word or timestamp) */
        wh_yaml_resolve_plain(*text, r);
    if (r->kind == resolvable_tags[i].kind)
        return WH_OK;
    if (resolvable_tags[i].kind == SK_FLOAT && r->kind == SK_INT && !r->is_uint) {
        r->kind = SK_FLOAT;
        r->f = (double)r->i;
        return WH_OK;
    }
    return wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: cannot decode %s `%s` as a %s", ev->start_mark.line + 1,
                      kind_tag(r->kind), *text, resolvable_tags[i].name);
}

/* The JSON value of scalar event `ev`; an error when its tag does not fit it or JSON has no such number (NaN, Inf). */
static wh_code scalar_to_json(loader *ld, const yaml_event_t *ev, json_t **out)
{
    wh_buf bytes = WH_BUF_INIT;
    resolved r;
    const char *text;
    size_t len;
    wh_code rc;

    if ((rc = scalar_meaning(ld, ev, &r, &bytes, &text, &len)) != WH_OK)
        goto out;
    if (r.kind == SK_STR || r.kind == SK_TIMESTAMP)
        *out = json_stringn(text, len);
    else if ((*out = wh_yaml_resolved_json(&r)) == NULL)
        rc = wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: cannot represent %s in JSON", ev->start_mark.line + 1,
                        text);
out:
    wh_buf_free(&bytes);
    return rc;
}

/* The JSON key sigs.k8s.io/yaml makes of a key go-yaml v2 read as r (wh_yaml_key_text), or an error naming the key
 * it makes none of (null, an integer above 2^63-1), at `line`. */
static wh_code key_text(loader *ld, const resolved *r, const char *text, size_t len, size_t line, char **out)
{
    char tmp[WH_YAML_KEY_TMP];
    size_t n;
    const char *k = wh_yaml_key_text(r, text, len, tmp, &n);

    if (k == NULL && r->kind == SK_NULL)
        return wh_err_set(ld->err, WH_E_UNSUPPORTED, "yaml: line %zu: unsupported null mapping key%s%.*s%s", line,
                          len != 0 ? " `" : "", (int)len, text, len != 0 ? "`" : "");
    if (k == NULL)
        return wh_err_set(ld->err, WH_E_UNSUPPORTED,
                          "yaml: line %zu: unsupported mapping key %.*s: integers above 2^63-1 have no JSON form", line,
                          (int)len, text);
    *out = wh_strndup(k, n);
    return WH_OK;
}

/* The JSON key of scalar event `ev` (sigs.k8s.io/yaml stringifies keys: yes -> "true", 0x1f -> "31", 1e3 -> "1000"). */
static wh_code key_string(loader *ld, const yaml_event_t *ev, char **out)
{
    wh_buf bytes = WH_BUF_INIT;
    resolved r;
    const char *text;
    size_t len;
    wh_code rc;

    if ((rc = scalar_meaning(ld, ev, &r, &bytes, &text, &len)) == WH_OK)
        rc = key_text(ld, &r, text, len, ev->start_mark.line + 1, out);
    wh_buf_free(&bytes);
    return rc;
}

/* The JSON key of an alias's value: a scalar's, as key_string makes it of the scalar the anchor named. */
static wh_code alias_key(loader *ld, const json_t *v, size_t line, char **out)
{
    resolved r = {.kind = SK_NULL};

    if (json_is_string(v))
        r.kind = SK_STR;
    else if (json_is_boolean(v))
        r.kind = SK_BOOL, r.b = json_is_true(v);
    else if (json_is_integer(v))
        r.kind = SK_INT, r.i = json_integer_value(v);
    else if (json_is_real(v))
        r.kind = SK_FLOAT, r.f = json_real_value(v);
    else if (!json_is_null(v))
        return wh_err_set(ld->err, WH_E_UNSUPPORTED, "yaml: line %zu: non-scalar mapping keys are not supported", line);
    return key_text(ld, &r, r.kind == SK_STR ? json_string_value(v) : "", r.kind == SK_STR ? json_string_length(v) : 0,
                    line, out);
}

static wh_code load_node(loader *ld, yaml_event_t *ev, int depth, json_t **out);

static wh_code apply_merge(loader *ld, json_t *target, json_t *merged, json_t *explicit_keys)
{
    const char *k;
    json_t *v;

    if (json_is_object(merged)) {
        json_object_foreach(merged, k, v)
        {
            if (json_object_get(explicit_keys, k) != NULL)
                continue;
            json_object_set(target, k, v);
            json_object_set(explicit_keys, k, json_true());
        }
        return WH_OK;
    }
    if (json_is_array(merged)) {
        size_t i;
        json_array_foreach(merged, i, v)
        {
            if (!json_is_object(v))
                return wh_err_set(ld->err, WH_E_PARSE, "yaml: map merge requires map or sequence of maps as the value");
            wh_code rc = apply_merge(ld, target, v, explicit_keys);
            if (rc != WH_OK)
                return rc;
        }
        return WH_OK;
    }
    return wh_err_set(ld->err, WH_E_PARSE, "yaml: map merge requires map or sequence of maps as the value");
}

static wh_code load_mapping(loader *ld, int depth, json_t **out)
{
    json_t *obj = json_object(), *merges = NULL, *seen = NULL, *value = NULL;
    yaml_event_t ev;
    wh_code rc = WH_OK;
    char *key = NULL;
    int have_event = 0;

    for (;;) {
        if ((rc = next_event(ld, &ev)) != WH_OK)
            goto out;
        have_event = 1;
        if (ev.type == YAML_MAPPING_END_EVENT)
            break;
        int is_merge = 0;
        if (ev.type == YAML_SCALAR_EVENT) {
            if (ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev.data.scalar.tag == NULL &&
                strcmp((const char *)ev.data.scalar.value, "<<") == 0)
                is_merge = 1;
            if ((rc = key_string(ld, &ev, &key)) != WH_OK)
                goto out;
            if (ev.data.scalar.anchor != NULL) {
                json_t *kv = NULL; /* an alias of it is the scalar, not the key made of it (1, not "1") */
                if ((rc = scalar_to_json(ld, &ev, &kv)) != WH_OK)
                    goto out;
                add_anchor(ld, (const char *)ev.data.scalar.anchor, kv);
                json_decref(kv);
            }
        } else if (ev.type == YAML_ALIAS_EVENT) {
            json_t *kv = NULL;
            size_t line = ev.start_mark.line + 1;
            if ((rc = load_node(ld, &ev, depth + 1, &kv)) != WH_OK)
                goto out;
            have_event = 0; /* load_node consumed (deleted) it */
            rc = alias_key(ld, kv, line, &key);
            json_decref(kv);
            if (rc != WH_OK)
                goto out;
        } else {
            rc = wh_err_set(ld->err, WH_E_UNSUPPORTED, "yaml: line %zu: non-scalar mapping keys are not supported",
                            ev.start_mark.line + 1);
            goto out;
        }
        if (have_event) {
            yaml_event_delete(&ev);
            have_event = 0;
        }
        if ((rc = next_event(ld, &ev)) != WH_OK)
            goto out;
        rc = load_node(ld, &ev, depth + 1, &value); /* consumes ev */
        if (rc != WH_OK)
            goto out;
        if (is_merge) {
            if (merges == NULL)
                merges = json_array();
            json_array_append_new(merges, value);
        } else {
            json_object_set_new(obj, key, value);
        }
        value = NULL;
        free(key);
        key = NULL;
    }
    if (merges != NULL) {
        /* Explicit keys win over merged ones; earlier merges win over later. */
        const char *k;
        json_t *v;
        size_t i;
        seen = json_object();
        json_object_foreach(obj, k, v) json_object_set(seen, k, json_true());
        json_array_foreach(merges, i, v)
        {
            if ((rc = apply_merge(ld, obj, v, seen)) != WH_OK)
                goto out;
        }
    }
out:
    if (have_event)
        yaml_event_delete(&ev);
    free(key);
    json_decref(value);
    json_decref(merges);
    json_decref(seen);
    if (rc != WH_OK) {
        json_decref(obj);
        return rc;
    }
    *out = obj;
    return WH_OK;
}

static wh_code load_sequence(loader *ld, int depth, json_t **out)
{
    json_t *arr = json_array(), *value = NULL;
    yaml_event_t ev;
    wh_code rc = WH_OK;

    for (;;) {
        if ((rc = next_event(ld, &ev)) != WH_OK)
            goto out;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if ((rc = load_node(ld, &ev, depth + 1, &value)) != WH_OK)
            goto out;
        json_array_append_new(arr, value);
    }
out:
    if (rc != WH_OK) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return WH_OK;
}

/* Build the value that starts with `ev` (which this function deletes). */
static wh_code load_node(loader *ld, yaml_event_t *ev, int depth, json_t **out)
{
    wh_code rc = WH_OK;
    json_t *v = NULL;
    const yaml_char_t *anchor_text;
    char *anchor_name = NULL;
    *out = NULL;
    if (depth > WH_YAML_MAX_DEPTH) {
        rc = wh_err_set(ld->err, WH_E_LIMIT, "yaml: line %zu: nesting deeper than %d levels", ev->start_mark.line + 1,
                        WH_YAML_MAX_DEPTH);
        goto out;
    }
    ld->nodes++;
    anchor_text = ev->type == YAML_SCALAR_EVENT           ? ev->data.scalar.anchor
                  : ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
                  : ev->type == YAML_MAPPING_START_EVENT  ? ev->data.mapping_start.anchor
                                                          : NULL;
    if (anchor_text != NULL)
        anchor_name = wh_strdup((const char *)anchor_text);
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        if ((rc = scalar_to_json(ld, ev, &v)) != WH_OK)
            goto out;
        break;
    case YAML_SEQUENCE_START_EVENT:
        yaml_event_delete(ev);
        ev->type = YAML_NO_EVENT;
        if ((rc = load_sequence(ld, depth, &v)) != WH_OK)
            goto out;
        break;
    case YAML_MAPPING_START_EVENT:
        yaml_event_delete(ev);
        ev->type = YAML_NO_EVENT;
        if ((rc = load_mapping(ld, depth, &v)) != WH_OK)
            goto out;
        break;
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        size_t i;
        for (i = 0; i < ld->nanchors; i++)
            if (strcmp(ld->anchors[i].name, name) == 0)
                break;
        if (i == ld->nanchors) {
            rc = wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: unknown anchor '%s' referenced",
                            ev->start_mark.line + 1, name);
            goto out;
        }
        /* Every alias is a copy: callers mutate what they load.  Bound the
         * expansion so that a "billion laughs" document cannot exhaust memory. */
        size_t limit = 4 * ld->nodes + 100000;
        ld->expanded += json_size(ld->anchors[i].value, limit);
        if (ld->expanded > limit) {
            rc = wh_err_set(ld->err, WH_E_LIMIT, "yaml: document contains excessive aliasing");
            goto out;
        }
        v = json_deep_copy(ld->anchors[i].value);
        break;
    }
    default:
        rc = wh_err_set(ld->err, WH_E_PARSE, "yaml: line %zu: unexpected event", ev->start_mark.line + 1);
        goto out;
    }
    if (anchor_name != NULL)
        add_anchor(ld, anchor_name, v);
    *out = v;
    v = NULL;
out:
    if (ev->type != YAML_NO_EVENT)
        yaml_event_delete(ev);
    free(anchor_name);
    json_decref(v);
    return rc;
}

static void loader_clear_anchors(loader *ld)
{
    for (size_t i = 0; i < ld->nanchors; i++) {
        free(ld->anchors[i].name);
        json_decref(ld->anchors[i].value);
    }
    ld->nanchors = 0;
}

wh_code wh_yaml_load_all(const char *text, size_t len, json_t **docs, wh_err *err)
{
    loader ld;
    yaml_event_t ev;
    json_t *arr = NULL, *doc = NULL;
    wh_code rc = WH_OK;

    memset(&ld, 0, sizeof(ld));
    ld.err = err;
    *docs = NULL;
    if (!yaml_parser_initialize(&ld.parser))
        wh_oom(sizeof(ld.parser));
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);
    arr = json_array();
    for (;;) {
        if ((rc = next_event(&ld, &ev)) != WH_OK)
            goto out;
        yaml_event_type_t type = ev.type;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            break;
        if (type != YAML_DOCUMENT_START_EVENT)
            continue; /* STREAM_START */
        if ((rc = next_event(&ld, &ev)) != WH_OK)
            goto out;
        if ((rc = load_node(&ld, &ev, 0, &doc)) != WH_OK)
            goto out;
        if ((rc = next_event(&ld, &ev)) != WH_OK) /* DOCUMENT_END */
            goto out;
        yaml_event_delete(&ev);
        json_array_append_new(arr, doc);
        doc = NULL;
        loader_clear_anchors(&ld); /* anchors do not cross documents */
    }
    *docs = arr;
    arr = NULL;
out:
    loader_clear_anchors(&ld);
    free(ld.anchors);
    yaml_parser_delete(&ld.parser);
    json_decref(arr);
    json_decref(doc);
    return rc;
}

wh_code wh_yaml_load(const char *text, size_t len, json_t **out, wh_err *err)
{
    wh_code rc = wh_yaml_fast_load(text, len, WH_YAML_MAX_DEPTH, out);

    if (rc != WH_E_UNSUPPORTED)
        return rc;
    return wh_yaml_load_reference(text, len, out, err);
}

wh_code wh_yaml_load_at(const char *text, size_t len, const struct wh_yaml_at *at, size_t nat, json_t **out,
                        wh_err *err)
{
    wh_code rc = wh_yaml_fast_load_at(text, len, WH_YAML_MAX_DEPTH, at, nat, out);

    if (rc != WH_E_UNSUPPORTED)
        return rc;
    return wh_yaml_load_reference(text, len, out, err);
}

wh_code wh_yaml_load_reference(const char *text, size_t len, json_t **out, wh_err *err)
{
    json_t *docs = NULL;
    wh_code rc;

    *out = NULL;
    if ((rc = wh_yaml_load_all(text, len, &docs, err)) != WH_OK)
        return rc;
    if (json_array_size(docs) > 1) {
        json_decref(docs);
        return wh_err_set(err, WH_E_PARSE, "yaml: expected a single document, found %zu", json_array_size(docs));
    }
    *out = json_array_size(docs) == 1 ? json_incref(json_array_get(docs, 0)) : json_null();
    json_decref(docs);
    return WH_OK;
}

/* ------------------------------------------------------------------------ */
/* Dumping (sigs.k8s.io/yaml JSONToYAML: JSON -> go-yaml v2 -> Marshal)      */

/* go-yaml v2's isBase60Float: ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ */
static int is_base60_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return 0;
    if (strchr(s, ':') == NULL)
        return 0;
    while (isdigit((unsigned char)*p) || *p == '_')
        p++;
    int groups = 0;
    while (*p == ':') {
        p++;
        if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1])) {
            if (p[0] > '5')
                return 0;
            p += 2;
        } else if (isdigit((unsigned char)p[0])) {
            p += 1;
        } else {
            return 0;
        }
        groups++;
    }
    if (groups == 0)
        return 0;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p) || *p == '_')
            p++;
    }
    return *p == '\0';
}

/* Would go-yaml v2 write this string as a plain scalar (before the emitter's
 * own analysis)?  Only when reading it back gives the same string. */
static int plain_allowed(const char *s, size_t len)
{
    resolved r;
    if (strlen(s) != len)
        return 0;
    wh_yaml_resolve_plain(s, &r);
    return r.kind == SK_STR && !is_base60_float(s);
}

/* The text go-yaml v2 writes for a JSON number, after sigs.k8s.io/yaml's
 * JSON round trip: encoding/json prints float64 in 'f' form for 1e-6 <= |f| <
 * 1e21 (else 'e'); go-yaml reads that back as an int when it is integral and
 * fits in int64, otherwise as a float it prints with 'g'. */
static void put_number(wh_buf *out, const json_t *v)
{
    char num[32];
    int n;

    if (json_is_integer(v)) {
        n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        wh_buf_append(out, num, (size_t)n);
        return;
    }
    double f = json_real_value(v);
    double a = fabs(f);
    if (f == floor(f) && a < 9.2233720368547758e18 && (a >= 1e-6 || f == 0)) {
        n = snprintf(num, sizeof(num), "%lld", (long long)f);
        wh_buf_append(out, num, (size_t)n);
        return;
    }
    /* A non-integral 'f' form such as "0.5" parses as float and is printed
     * with 'g'; an 'e' form "1e+21" also parses as float.  (JSON has no NaN
     * or infinities.) */
    wh_go_float(out, f, 'g', -1);
}

typedef struct key_ref {
    const char *key;
    size_t len;
    json_t *value;
} key_ref;

/* go-yaml v2 keyList.Less for string keys (runes compared as code points;
 * letters and digits per unicode, here for the ASCII range and multi-byte
 * runes treated as letters). */
static int is_letter_at(const unsigned char *s)
{
    return isalpha(*s) || *s >= 0x80;
}

static int utf8_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0)
        return 2;
    if ((c & 0xF0) == 0xE0)
        return 3;
    if ((c & 0xF8) == 0xF0)
        return 4;
    return 1;
}

static unsigned decode_rune(const unsigned char *s, int n)
{
    unsigned r;
    if (n == 1)
        return s[0];
    r = s[0] & (0x7F >> n);
    for (int i = 1; i < n; i++)
        r = (r << 6) | (s[i] & 0x3F);
    return r;
}

static int go_key_less(const char *as, size_t alen, const char *bs, size_t blen)
{
    const unsigned char *a = (const unsigned char *)as, *b = (const unsigned char *)bs;
    size_t i = 0, j = 0;

    while (i < alen && j < blen) {
        int an_ = utf8_len(a[i]), bn_ = utf8_len(b[j]);
        unsigned ar = decode_rune(a + i, an_), br = decode_rune(b + j, bn_);
        if (ar == br) {
            i += (size_t)an_;
            j += (size_t)bn_;
            continue;
        }
        int al = is_letter_at(a + i), bl = is_letter_at(b + j);
        if (al && bl)
            return ar < br;
        if (al || bl)
            return bl;
        /* Go's int64 arithmetic, which wraps: unsigned here, compared as signed */
        unsigned long long anum = 0, bnum = 0;
        size_t ai, bi;
        if (a[i] == '0' || b[j] == '0') {
            for (size_t k = i; k > 0 && isdigit(a[k - 1]); k--) {
                if (a[k - 1] != '0') {
                    anum = 1;
                    bnum = 1;
                    break;
                }
            }
        }
        for (ai = i; ai < alen && isdigit(a[ai]); ai++)
            anum = anum * 10 + (a[ai] - '0');
        for (bi = j; bi < blen && isdigit(b[bi]); bi++)
            bnum = bnum * 10 + (b[bi] - '0');
        if (anum != bnum)
            return (long long)anum < (long long)bnum;
        if (ai - i != bi - j)
            return ai - i < bi - j;
        return ar < br;
    }
    /* Remaining rune counts decide. */
    size_t ra = 0, rb = 0;
    for (; i < alen; i += (size_t)utf8_len(a[i]))
        ra++;
    for (; j < blen; j += (size_t)utf8_len(b[j]))
        rb++;
    return ra < rb;
}

static int key_cmp(const void *x, const void *y)
{
    const key_ref *a = x, *b = y;
    if (go_key_less(a->key, a->len, b->key, b->len))
        return -1;
    if (go_key_less(b->key, b->len, a->key, a->len))
        return 1;
    return 0;
}

/* The entries of object v in the order sigs.k8s.io/yaml writes them, in a new
 * array the caller frees (NULL when v is empty). */
static void sorted_keys(const json_t *v, key_ref **out, size_t *n_out)
{
    size_t n = json_object_size(v), i = 0;
    key_ref *keys = n ? wh_malloc(n * sizeof(*keys)) : NULL;
    const char *k;
    json_t *c;

    json_object_foreach((json_t *)v, k, c)
    {
        keys[i].key = k;
        keys[i].len = strlen(k);
        keys[i].value = c;
        i++;
    }
    if (n > 1) /* qsort(NULL, 0, ...) is undefined behaviour */
        qsort(keys, n, sizeof(*keys), key_cmp);
    *out = keys;
    *n_out = n;
}

typedef struct dumper {
    yaml_emitter_t em;
    wh_buf *out;
    wh_err *err;
} dumper;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    dumper *d = data;
    wh_buf_append(d->out, buffer, size);
    return 1;
}

static wh_code emit(dumper *d, yaml_event_t *ev)
{
    if (!yaml_emitter_emit(&d->em, ev)) {
        if (d->em.error == YAML_MEMORY_ERROR)
            wh_oom(0); /* libyaml's own malloc failed: the same policy (wh_alloc.h) */
        return wh_err_set(d->err, WH_E_INVALID, "yaml: %s", d->em.problem ? d->em.problem : "emitter error");
    }
    return WH_OK;
}

static wh_code emit_scalar(dumper *d, const char *s, size_t len, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    /* libyaml copies the value (with its own malloc) and checks it is UTF-8 */
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, 1, 1, style))
        return wh_err_set(d->err, WH_E_INVALID, "yaml: cannot emit a string that is not UTF-8");
    return emit(d, &ev);
}

static wh_code emit_string(dumper *d, const char *s, size_t len)
{
    yaml_scalar_style_t style;
    if (memchr(s, '\n', len) != NULL)
        style = YAML_LITERAL_SCALAR_STYLE;
    else if (plain_allowed(s, len))
        style = YAML_PLAIN_SCALAR_STYLE;
    else
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return emit_scalar(d, s, len, style);
}

static wh_code dump_value(dumper *d, const json_t *v, int depth)
{
    yaml_event_t ev;
    wh_code rc = WH_OK;

    if (depth > WH_YAML_MAX_DEPTH)
        return wh_err_set(d->err, WH_E_LIMIT, "yaml: value nested deeper than %d levels", WH_YAML_MAX_DEPTH);
    switch (json_typeof(v)) {
    case JSON_NULL:
        return emit_scalar(d, "null", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return emit_scalar(d, "true", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return emit_scalar(d, "false", 5, YAML_PLAIN_SCALAR_STYLE);
    case JSON_INTEGER:
    case JSON_REAL: {
        wh_buf num = WH_BUF_INIT;
        put_number(&num, v);
        rc = emit_scalar(d, num.data, num.len, YAML_PLAIN_SCALAR_STYLE);
        wh_buf_free(&num);
        return rc;
    }
    case JSON_STRING:
        return emit_string(d, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        size_t i;
        json_t *c;
        /* the events without anchor, tag or value below allocate nothing and cannot fail */
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if ((rc = emit(d, &ev)) != WH_OK)
            return rc;
        json_array_foreach(v, i, c)
        {
            if ((rc = dump_value(d, c, depth + 1)) != WH_OK)
                return rc;
        }
        yaml_sequence_end_event_initialize(&ev);
        return emit(d, &ev);
    }
    case JSON_OBJECT: {
        size_t n, i;
        key_ref *keys;
        sorted_keys(v, &keys, &n);
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if ((rc = emit(d, &ev)) != WH_OK)
            goto obj_out;
        for (i = 0; i < n; i++) {
            if ((rc = emit_string(d, keys[i].key, keys[i].len)) != WH_OK)
                goto obj_out;
            if ((rc = dump_value(d, keys[i].value, depth + 1)) != WH_OK)
                goto obj_out;
        }
        yaml_mapping_end_event_initialize(&ev);
        rc = emit(d, &ev);
    obj_out:
        free(keys);
        return rc;
    }
    }
    return WH_E_INTERNAL;
}

/* ---- fast path: block YAML written directly ----
 * libyaml's emitter costs several thousand instructions per scalar (events,
 * analysis, a state machine).  Values made only of scalars whose output
 * form is certain - numbers, booleans, null, and strings that go-yaml v2
 * writes plain on one line - are written here instead, byte for byte what
 * the emitter writes for them; anything else takes the emitter. */

/* A string libyaml writes as a plain scalar without folding when it starts
 * at `column`, and that reads back as the same string. */
static int ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int fast_plain(const char *s, size_t len, size_t column)
{
    if (len == 0 || column + len > 80 || !(ascii_alnum((unsigned char)s[0]) || s[0] == '_' || s[0] == '/') ||
        s[len - 1] == ' ')
        return 0;
    for (size_t i = 1; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        /* ':' only when not followed by a space (or the end): "a: b" is a
         * mapping.  Single inner spaces cannot fold within 80 columns. */
        if (!(ascii_alnum(c) || c == '_' || c == '.' || c == '/' || c == '-' || c == '=' || c == '+' || c == '@' ||
              (c == ':' && i + 1 < len && s[i + 1] != ' ') || (c == ' ' && s[i - 1] != ' ')))
            return 0;
    }
    return plain_allowed(s, len);
}

/* 1 if every scalar of v (at this depth and nesting) takes the fast path.
 * `column` is where a scalar value would start (worst case for keys). */
static int fast_ok(const json_t *v, size_t indent, int depth)
{
    const char *k;
    json_t *c;
    size_t i;

    if (depth > WH_YAML_MAX_DEPTH)
        return 0;
    switch (json_typeof(v)) {
    case JSON_STRING:
        /* a value starts after "- " or "key: ": checked at its own column */
        return 1;
    case JSON_ARRAY:
        json_array_foreach(v, i, c)
        {
            if (json_is_string(c) ? !fast_plain(json_string_value(c), json_string_length(c), indent + 2)
                                  : !fast_ok(c, indent + 2, depth + 1))
                return 0;
        }
        return 1;
    case JSON_OBJECT:
        json_object_foreach((json_t *)v, k, c)
        {
            size_t kl = strlen(k);
            /* keys longer than 128 are not simple keys ("? key") */
            if (kl > 128 || !fast_plain(k, kl, indent))
                return 0;
            if (json_is_string(c) ? !fast_plain(json_string_value(c), json_string_length(c), indent + kl + 2)
                                  : !fast_ok(c, indent + 2, depth + 1))
                return 0;
        }
        return 1;
    default:
        return 1;
    }
}

static int fast_empty(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) == 0) || (json_is_array(v) && json_array_size(v) == 0);
}

static void fast_scalar(wh_buf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL:
        wh_buf_append(b, "null", 4);
        break;
    case JSON_TRUE:
        wh_buf_append(b, "true", 4);
        break;
    case JSON_FALSE:
        wh_buf_append(b, "false", 5);
        break;
    case JSON_STRING:
        wh_buf_append(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_OBJECT:
        wh_buf_append(b, "{}", 2);
        break;
    case JSON_ARRAY:
        wh_buf_append(b, "[]", 2);
        break;
    default:
        put_number(b, v);
    }
}

static void fast_pad(wh_buf *b, size_t n)
{
    while (n-- > 0)
        wh_buf_putc(b, ' ');
}

static void fast_seq(wh_buf *b, const json_t *v, size_t indent, int inline_first);

/* The entries of a non-empty mapping at `indent`; with inline_first the
 * first one continues the current line (after "- "). */
static void fast_map(wh_buf *b, const json_t *v, size_t indent, int inline_first)
{
    size_t n, i;
    key_ref *keys;
    json_t *c;

    sorted_keys(v, &keys, &n);
    for (i = 0; i < n; i++) {
        c = keys[i].value;
        if (i > 0 || !inline_first)
            fast_pad(b, indent);
        wh_buf_append(b, keys[i].key, keys[i].len);
        wh_buf_putc(b, ':');
        if (json_is_object(c) && !fast_empty(c)) {
            wh_buf_putc(b, '\n');
            fast_map(b, c, indent + 2, 0);
        } else if (json_is_array(c) && !fast_empty(c)) {
            /* a sequence in a mapping is not indented */
            wh_buf_putc(b, '\n');
            fast_seq(b, c, indent, 0);
        } else {
            wh_buf_putc(b, ' ');
            fast_scalar(b, c);
            wh_buf_putc(b, '\n');
        }
    }
    free(keys);
}

static void fast_seq(wh_buf *b, const json_t *v, size_t indent, int inline_first)
{
    size_t i;
    json_t *c;

    json_array_foreach(v, i, c)
    {
        if (i > 0 || !inline_first)
            fast_pad(b, indent);
        wh_buf_append(b, "- ", 2);
        if (json_is_object(c) && !fast_empty(c))
            fast_map(b, c, indent + 2, 1);
        else if (json_is_array(c) && !fast_empty(c))
            fast_seq(b, c, indent + 2, 1);
        else {
            fast_scalar(b, c);
            wh_buf_putc(b, '\n');
        }
    }
}

/* 0 when v is not for the fast path (nothing written). */
static int fast_dump(const json_t *v, wh_buf *out)
{
    if (json_is_string(v) ? !fast_plain(json_string_value(v), json_string_length(v), 0) : !fast_ok(v, 0, 0))
        return 0;
    if (json_is_object(v) && !fast_empty(v))
        fast_map(out, v, 0, 0);
    else if (json_is_array(v) && !fast_empty(v))
        fast_seq(out, v, 0, 0);
    else {
        fast_scalar(out, v);
        wh_buf_putc(out, '\n');
    }
    return 1;
}

wh_code wh_yaml_dump(const json_t *value, wh_buf *out, wh_err *err)
{
    dumper d;
    yaml_event_t ev;
    wh_code rc = WH_OK;
    size_t start = out->len;

    if (fast_dump(value, out))
        return WH_OK;
    rc = WH_OK;
    memset(&d, 0, sizeof(d));
    d.out = out;
    d.err = err;
    if (!yaml_emitter_initialize(&d.em))
        wh_oom(sizeof(d.em));
    yaml_emitter_set_output(&d.em, write_handler, &d);
    yaml_emitter_set_unicode(&d.em, 1);
    yaml_emitter_set_width(&d.em, 80);
    yaml_emitter_set_indent(&d.em, 2);
    /* stream and document events allocate nothing and cannot fail */
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if ((rc = emit(&d, &ev)) != WH_OK)
        goto out;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if ((rc = emit(&d, &ev)) != WH_OK || (rc = dump_value(&d, value, 0)) != WH_OK)
        goto out;
    yaml_document_end_event_initialize(&ev, 1);
    if ((rc = emit(&d, &ev)) != WH_OK)
        goto out;
    yaml_stream_end_event_initialize(&ev);
    if ((rc = emit(&d, &ev)) != WH_OK)
        goto out;
    if (!yaml_emitter_flush(&d.em))
        wh_oom(0); /* the writer never fails: only libyaml's malloc can */
    /* libyaml closes a document that ends in a keep-chomped block scalar
     * ("|+") with "..."; go-yaml v2 (sigs.k8s.io/yaml) does not */
    if (rc == WH_OK && out->len - start >= 5 && memcmp(out->data + out->len - 5, "\n...\n", 5) == 0) {
        out->len -= 4;
        out->data[out->len] = '\0';
    }
out:
    yaml_emitter_delete(&d.em);
    if (rc != WH_OK) {
        out->len = start;
        if (out->data != NULL)
            out->data[start] = '\0';
    }
    return rc;
}
