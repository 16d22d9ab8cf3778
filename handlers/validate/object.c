/*
 * object.c - wh_validate_object: istiod's verdict for one object, in its
 * order: generic-wrapper decode, kind lookup by group+kind (version ignored),
 * typed decode of spec, metadata annotation checks, the kind's validator, and
 * finally the unknown-top-level-field check.  The webhook and `webhookctl
 * validate` both come through here.
 */
#include "wh_alloc.h"
#include "wh_validate.h"
#include "wh_go.h"
#include "wh_validate_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *wh_validate_reason_name(wh_validate_reason reason)
{
    switch (reason) {
    case WH_VALIDATE_OK:
        return "";
    case WH_VALIDATE_UNSUPPORTED_OPERATION:
        return "unsupported_operation";
    case WH_VALIDATE_DECODE_ERROR:
        return "yaml_decode_error";
    case WH_VALIDATE_UNKNOWN_TYPE:
        return "unknown_type";
    case WH_VALIDATE_CONVERSION_ERROR:
        return "crd_conversion_error";
    case WH_VALIDATE_INVALID:
        return "invalid_resource";
    }
    return "";
}

void wh_validate_verdict_clear(wh_validate_verdict *v)
{
    free(v->message);
    json_decref(v->warnings);
    memset(v, 0, sizeof(*v));
}

static wh_code deny(wh_validate_verdict *out, wh_validate_reason reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static wh_code deny(wh_validate_verdict *out, wh_validate_reason reason, const char *fmt, ...)
{
    va_list ap;

    out->allowed = 0;
    out->reason = reason;
    va_start(ap, fmt);
    out->message = wh_vasprintf(fmt, ap);
    va_end(ap);
    return WH_OK;
}

/* The checks Go's encoding/json applies when it decodes the object into the generic wrapper
 * (TypeMeta, ObjectMeta; spec and status are json.RawMessage since Istio 1.23, so any JSON value passes
 * here and a spec that is not an object fails the typed decode).  Returns a message, or NULL when it decodes. */
static char *wrapper_error(const json_t *obj)
{
    static const char *const meta_strings[] = {"name",     "generateName", "namespace",
                                               "selfLink", "uid",          "resourceVersion"};
    static const char *const meta_maps[] = {"labels", "annotations"};
    const json_t *meta, *v;
    char field[64]; /* "metadata.<name>" */
    size_t i;
    const char *k;
    json_t *e;

/* encoding/json's UnmarshalTypeError for `v` (a new string). */
#define WRAP_FAIL(v, go_struct, go_field, go_type)                                                                     \
    do {                                                                                                               \
        wh_buf text = WH_BUF_INIT;                                                                                     \
        wh_go_unmarshal_error(&text, wh_go_json_kind(v), go_struct, go_field, go_type);                                \
        return wh_buf_steal(&text, NULL);                                                                              \
    } while (0)

    if (!json_is_object(obj))
        WRAP_FAIL(obj, NULL, NULL, "crd.IstioKind");
    for (i = 0; i < 2; i++) {
        const char *f = i ? "kind" : "apiVersion";
        v = json_object_get(obj, f);
        if (v != NULL && !json_is_null(v) && !json_is_string(v))
            WRAP_FAIL(v, "IstioKind", f, "string");
    }
    meta = json_object_get(obj, "metadata");
    if (meta == NULL || json_is_null(meta))
        return NULL;
    if (!json_is_object(meta))
        WRAP_FAIL(meta, "IstioKind", "metadata", "v1.ObjectMeta");
    for (i = 0; i < sizeof(meta_strings) / sizeof(meta_strings[0]); i++) {
        v = json_object_get(meta, meta_strings[i]);
        if (v != NULL && !json_is_null(v) && !json_is_string(v))
            WRAP_FAIL(v, "ObjectMeta", (snprintf(field, sizeof(field), "metadata.%s", meta_strings[i]), field),
                      "string");
    }
    for (i = 0; i < sizeof(meta_maps) / sizeof(meta_maps[0]); i++) {
        v = json_object_get(meta, meta_maps[i]);
        if (v == NULL || json_is_null(v))
            continue;
        if (!json_is_object(v))
            WRAP_FAIL(v, "ObjectMeta", (snprintf(field, sizeof(field), "metadata.%s", meta_maps[i]), field),
                      "map[string]string");
        json_object_foreach((json_t *)v, k, e)
        {
            if (!json_is_string(e) && !json_is_null(e))
                WRAP_FAIL(e, "ObjectMeta", (snprintf(field, sizeof(field), "metadata.%s", meta_maps[i]), field),
                          "string");
        }
    }
    v = json_object_get(meta, "generation");
    if (v != NULL && !json_is_null(v) && !json_is_integer(v))
        WRAP_FAIL(v, "ObjectMeta", "metadata.generation", "int64");
    v = json_object_get(meta, "finalizers");
    if (v != NULL && !json_is_null(v) && !json_is_array(v))
        WRAP_FAIL(v, "ObjectMeta", "metadata.finalizers", "[]string");
#undef WRAP_FAIL
    return NULL;
}

/* The annotation rules istiod wraps around every kind's validator; they return alone. */
static int check_metadata(wh_vctx *c, const wh_vkind *kind, const json_t *spec)
{
    const json_t *ann = c->annotations;
    const char *dry = json_string_value(json_object_get(ann, "istio.io/dry-run"));

    if (json_object_get(ann, "istio.io/dry-run") != NULL) {
        if (strcmp(kind->kind, "AuthorizationPolicy") != 0 || strcmp(kind->group, "security.istio.io") != 0) {
            wh_verr(c, "%s/%s has unsupported annotation istio.io/dry-run, please remove the annotation", c->ns,
                    c->name);
            return 0;
        }
        if (wh_go_parse_bool(dry ? dry : "") < 0) {
            wh_verr(c,
                    "%s/%s has annotation istio.io/dry-run with invalid value (%s): strconv.ParseBool: parsing %s: "
                    "invalid syntax",
                    c->ns, c->name, dry ? dry : "", wh_vq(c, dry ? dry : ""));
            return 0;
        }
        {
            const char *action = wh_venum(spec, "action", "ALLOW");
            if (strcmp(action, "ALLOW") != 0 && strcmp(action, "DENY") != 0) {
                wh_verr(c,
                        "the annotation istio.io/dry-run currently only supports action ALLOW/DENY, found action %s "
                        "in %s/%s",
                        action, c->ns, c->name);
                return 0;
            }
        }
    }
    if (json_object_get(ann, "internal.istio.io/webhook-always-reject") != NULL) {
        wh_verr(c, "\"internal.istio.io/webhook-always-reject\" annotation found, rejecting");
        return 0;
    }
    if (json_object_get(ann, "internal.istio.io/parents") != NULL) {
        wh_verr(c, "\"internal.istio.io/parents\" annotation found, this may not be set by users");
        return 0;
    }
    if (json_object_get(ann, "internal.istio.io/parent-namespace") != NULL) {
        wh_verr(c, "\"internal.istio.io/parent-namespace\" annotation found, this may not be set by users");
        return 0;
    }
    return 1;
}

/* Copy for the verdict's fixed fields, cut at a UTF-8 character boundary. */
static void copy_field(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;

    if (n >= len) {
        n = len - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
            n--;
    }
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

wh_code wh_validate_setting_parse(wh_validate_settings *s, const char *flag, const char *value, wh_err *err)
{
    int v = value != NULL ? wh_go_parse_bool(value) : 0;

    if (v < 0)
        return wh_err_set(err, WH_E_INVALID, "--%s: strconv.ParseBool: parsing \"%s\": invalid syntax", flag, value);
#define SET_SETTING(field, name, usage)                                                                                \
    if (strcmp(flag, name) == 0) {                                                                                     \
        if (value != NULL)                                                                                             \
            s->field = v;                                                                                              \
        return WH_OK;                                                                                                  \
    }
    WH_VALIDATE_SETTINGS(SET_SETTING)
#undef SET_SETTING
    return wh_err_set(err, WH_E_INVALID, "--%s: not a validation setting", flag);
}

wh_code wh_validate_object(const json_t *obj, const wh_validate_input *in, wh_validate_verdict *out, wh_err *err)
{
    static const wh_validate_input defaults = {NULL, NULL, NULL, {0}};
    const json_t *meta, *spec_in;
    const char *api_version, *kind_name, *slash, *ns, *name, *k, *gv_group, *gv_version;
    size_t glen;
    const wh_vkind *kind;
    json_t *spec = NULL, *v;
    wh_err derr;
    wh_vctx c;
    wh_buf text = WH_BUF_INIT;
    char *wmsg = NULL;
    wh_code rc = WH_OK;
    size_t i;

    if (in == NULL)
        in = &defaults;
    memset(out, 0, sizeof(*out));
    wh_vctx_init(&c, NULL, NULL);
    if (obj == NULL) {
        rc = deny(out, WH_VALIDATE_DECODE_ERROR, "cannot decode configuration: unexpected end of JSON input");
        goto out;
    }
    if ((wmsg = wrapper_error(obj)) != NULL) {
        rc = deny(out, WH_VALIDATE_DECODE_ERROR, "cannot decode configuration: %s", wmsg);
        goto out;
    }
    meta = json_object_get(obj, "metadata");
    api_version = json_string_value(json_object_get(obj, "apiVersion"));
    kind_name = json_string_value(json_object_get(obj, "kind"));
    api_version = api_version ? api_version : "";
    kind_name = kind_name ? kind_name : "";
    name = json_string_value(json_object_get(meta, "name"));
    name = name ? name : "";
    ns = json_string_value(json_object_get(meta, "namespace"));
    if (ns == NULL || *ns == '\0')
        ns = in->default_namespace ? in->default_namespace : "";
    copy_field(out->kind, sizeof(out->kind), kind_name);
    copy_field(out->name, sizeof(out->name), json_string_value(json_object_get(meta, "name")));
    copy_field(out->namespace_, sizeof(out->namespace_), ns);
    /* schema.ParseGroupVersion: "v" is a core version, "g/v" a group version, anything else unparsable. */
    slash = strchr(api_version, '/');
    if (slash == NULL) {
        gv_group = "";
        glen = 0;
        gv_version = api_version;
    } else if (strchr(slash + 1, '/') == NULL) {
        gv_group = api_version;
        glen = (size_t)(slash - api_version);
        gv_version = slash + 1;
    } else {
        gv_group = gv_version = "";
        glen = 0;
    }
    if (glen < sizeof(out->group)) {
        memcpy(out->group, gv_group, glen);
        out->group[glen] = '\0';
    }
    copy_field(out->version, sizeof(out->version), gv_version);
    kind = glen < sizeof(out->group) ? wh_vkind_find(out->group, kind_name, in->settings.alpha_gateway_api) : NULL;
    if (kind == NULL) {
        rc = deny(out, WH_VALIDATE_UNKNOWN_TYPE, "unrecognized type %.*s/%s, Kind=%s", (int)glen, gv_group, gv_version,
                  kind_name);
        goto out;
    }
    copy_field(out->resource, sizeof(out->resource), kind->resource);

    spec_in = json_object_get(obj, "spec");
    wh_err_clear(&derr);
    if (wh_vdecode(kind->schema, spec_in, &spec, &derr) != WH_OK) {
        rc = deny(out, WH_VALIDATE_CONVERSION_ERROR, "error decoding configuration: %s", wh_err_msg(&derr));
        goto out;
    }

    wh_vctx_init(&c, ns, name);
    c.labels = json_object_get(meta, "labels");
    c.annotations = json_object_get(meta, "annotations");
    if (check_metadata(&c, kind, spec) && kind->validate != NULL)
        kind->validate(&c, spec);
    if (c.errs.n > 0) {
        wh_vctx_error_text(&c, &text);
        rc = deny(out, WH_VALIDATE_INVALID, "configuration is invalid: %s", text.data);
        goto out;
    }
    json_object_foreach((json_t *)obj, k, v)
    {
        if (strcmp(k, "apiVersion") != 0 && strcmp(k, "kind") != 0 && strcmp(k, "metadata") != 0 &&
            strcmp(k, "spec") != 0 && strcmp(k, "status") != 0) {
            const char *rk = in->request_kind ? in->request_kind : kind_name;
            const char *rns = in->request_namespace ? in->request_namespace : ns;
            rc = deny(out, WH_VALIDATE_INVALID, "unknown field %s on %s resource %s/%s", wh_vq(&c, k), rk, rns, name);
            goto out;
        }
    }
    out->allowed = 1;
    if (c.warns.n > 0) {
        out->warnings = json_array();
        for (i = 0; i < c.warns.n; i++)
            if (json_array_append_new(out->warnings, json_string(c.warns.v[i])) != 0) {
                rc = wh_err_set(err, WH_E_INTERNAL, "a validation warning is not UTF-8: %s", c.warns.v[i]);
                goto out;
            }
    }
out:
    free(wmsg);
    json_decref(spec);
    wh_buf_free(&text);
    wh_vctx_free(&c);
    return rc;
}
