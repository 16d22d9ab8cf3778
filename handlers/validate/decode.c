/*
 * decode.c - the typed decode of `spec` (istiod's step "convert to the
 * kind's proto").  istiod decodes with golang/protobuf's jsonpb, retrying
 * with unknown fields allowed, so only type errors fail: strings must be
 * strings, integers may be numbers or numeric strings, enums are known names
 * or numbers, durations are Go duration strings, null means unset.  The result
 * is a canonical copy (JSON names, enum names, no nulls, no empty lists) that
 * the validators read without caring how the user spelled things.
 */
#include "wh_validate_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dec {
    wh_buf path;
    wh_err *err;
} dec;

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

static wh_code fail(dec *d, const json_t *v, const char *want)
{
    if (v != NULL)
        return wh_err_set(d->err, WH_E_PARSE, "field %s: cannot decode %s as %s", d->path.data ? d->path.data : "",
                          json_kind(v), want);
    return wh_err_set(d->err, WH_E_PARSE, "field %s: %s", d->path.data ? d->path.data : "", want);
}

int wh_vparse_duration(const char *s, int64_t *out)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1ULL},       {"us", 1000ULL},      {"\xc2\xb5s", 1000ULL}, {"\xce\xbcs", 1000ULL},
                 {"ms", 1000000ULL}, {"s", 1000000000ULL}, {"m", 60000000000ULL},  {"h", 3600000000000ULL}};
    uint64_t total = 0;
    int neg = 0;

    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return 0;
    }
    if (*s == '\0')
        return -1;
    while (*s) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        int pre = 0, post = 0;
        const char *u;
        size_t ul, i;
        uint64_t unit = 0;

        if (!(*s == '.' || (*s >= '0' && *s <= '9')))
            return -1;
        while (*s >= '0' && *s <= '9') {
            if (v > (UINT64_MAX - 9) / 10 || v * 10 + (uint64_t)(*s - '0') > (1ULL << 63))
                return -1;
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
            pre = 1;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                if (f <= (UINT64_MAX - 9) / 10 && scale < 1e18) {
                    f = f * 10 + (uint64_t)(*s - '0');
                    scale *= 10;
                }
                s++;
                post = 1;
            }
        }
        if (!pre && !post)
            return -1;
        u = s;
        while (*s && *s != '.' && !(*s >= '0' && *s <= '9'))
            s++;
        ul = (size_t)(s - u);
        if (ul == 0)
            return -1;
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (strlen(units[i].name) == ul && memcmp(units[i].name, u, ul) == 0)
                unit = units[i].ns;
        if (unit == 0)
            return -1;
        if (v > (1ULL << 63) / unit)
            return -1;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > (1ULL << 63))
                return -1;
        }
        total += v;
        if (total > (1ULL << 63))
            return -1;
    }
    if (!neg && total > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - total) : (int64_t)total;
    return 0;
}

static int is_base64(const char *s)
{
    size_t n = 0, pad = 0;

    for (; *s; s++, n++) {
        if (*s == '=') {
            pad++;
            continue;
        }
        if (pad)
            return 0;
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '+' ||
              *s == '/' || *s == '-' || *s == '_'))
            return 0;
    }
    return pad <= 2 && (pad == 0 || n % 4 == 0);
}

/* Integer from a JSON number or (proto JSON only) a decimal string. */
/* Integer from a JSON number or (proto JSON only) a decimal string.  uint64 values beyond int64 (only
 * expressible as strings) saturate at INT64_MAX, which every rule treats as "too large" alike. */
static int int_value(const json_t *v, int allow_string, int unsigned64, long long *out)
{
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return 0;
    }
    if (allow_string && json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        const char *digits = *s == '-' ? s + 1 : s;
        if (*digits < '0' || *digits > '9' || (digits[0] == '0' && digits[1] != '\0'))
            return -1; /* not a JSON number: empty, sign, space or leading zero */
        errno = 0;
        if (unsigned64 && *s != '-') {
            unsigned long long u = strtoull(s, &end, 10);
            if (errno != 0 || *end != '\0')
                return -1;
            *out = u > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)u;
            return 0;
        }
        *out = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
            return -1;
        return 0;
    }
    return -1;
}

static wh_code dec_msg(dec *d, const wh_vmsg *m, const json_t *in, json_t **out);

/* Decode one value of field f (not a list/map container). */
static wh_code dec_value(dec *d, const wh_vfield *f, int k8s, const json_t *v, json_t **out)
{
    long long n;

    *out = NULL;
    switch (f->type) {
    case WH_VT_STR:
        if (!json_is_string(v))
            return fail(d, v, "a string");
        *out = json_incref((json_t *)v);
        break;
    case WH_VT_BOOL:
        if (!json_is_boolean(v))
            return fail(d, v, "a boolean");
        *out = json_incref((json_t *)v);
        break;
    case WH_VT_I32:
    case WH_VT_U32:
    case WH_VT_I64:
    case WH_VT_U64:
        if (int_value(v, !k8s, f->type == WH_VT_U64, &n) != 0)
            return fail(d, v, "an integer");
        if ((f->type == WH_VT_I32 && (n < INT32_MIN || n > INT32_MAX)) ||
            (f->type == WH_VT_U32 && (n < 0 || n > (long long)UINT32_MAX)) || (f->type == WH_VT_U64 && n < 0))
            return fail(d, NULL, "integer out of range");
        *out = json_integer(n);
        break;
    case WH_VT_DBL:
        if (json_is_number(v)) {
            *out = json_real(json_number_value(v));
        } else if (!k8s && json_is_string(v)) {
            const char *s = json_string_value(v);
            char *end;
            double x;
            if (strcmp(s, "NaN") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0)
                return fail(d, NULL, "non-finite numbers are not supported here");
            errno = 0;
            x = strtod(s, &end);
            if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(x))
                return fail(d, v, "a number");
            *out = json_real(x);
        } else {
            return fail(d, v, "a number");
        }
        break;
    case WH_VT_BYTES:
        if (!json_is_string(v) || !is_base64(json_string_value(v)))
            return fail(d, v, "base64 bytes");
        *out = json_incref((json_t *)v);
        break;
    case WH_VT_ENUM: {
        const wh_venum_desc *e = f->ref;
        int i;
        if (json_is_string(v)) {
            for (i = 0; i < e->n; i++)
                if (strcmp(e->values[i], json_string_value(v)) == 0)
                    break;
            if (i == e->n)
                return wh_err_set(d->err, WH_E_PARSE, "field %s: unknown value %s for enum %s",
                                  d->path.data ? d->path.data : "", json_string_value(v), e->name);
            *out = json_incref((json_t *)v);
        } else if (json_is_integer(v)) {
            n = (long long)json_integer_value(v);
            if (n < INT32_MIN || n > INT32_MAX)
                return fail(d, NULL, "enum number out of range");
            *out = n >= 0 && n < e->n ? json_string(e->values[n]) : json_integer(n);
        } else {
            return fail(d, v, "an enum name or number");
        }
        break;
    }
    case WH_VT_DUR: {
        int64_t ns;
        if (!json_is_string(v))
            return fail(d, v, "a duration string");
        if (wh_vparse_duration(json_string_value(v), &ns) != 0)
            return wh_err_set(d->err, WH_E_PARSE, "field %s: bad Duration: time: invalid duration \"%s\"",
                              d->path.data ? d->path.data : "", json_string_value(v));
        *out = json_incref((json_t *)v);
        break;
    }
    case WH_VT_MSG:
        if (json_is_null(v)) {
            *out = json_object();
            return WH_OK;
        }
        return dec_msg(d, f->ref, v, out);
    case WH_VT_STRUCT:
        if (!json_is_object(v))
            return fail(d, v, "an object");
        *out = json_incref((json_t *)v);
        break;
    case WH_VT_VALUE:
        *out = json_incref((json_t *)v);
        break;
    case WH_VT_ANYLIST:
        if (!json_is_array(v))
            return fail(d, v, "a list");
        *out = json_incref((json_t *)v);
        break;
    default:
        return wh_err_set(d->err, WH_E_INTERNAL, "bad schema type %d", f->type);
    }
    return WH_OK;
}

/* key equals json name, or (proto JSON) the proto name / snake_case of json name. */
static int key_matches(const wh_vfield *f, int k8s, const char *key)
{
    const char *j = f->json;

    if (k8s)
        return strcasecmp(key, j) == 0;
    if (strcmp(key, j) == 0)
        return 1;
    if (f->proto != NULL)
        return strcmp(key, f->proto) == 0;
    for (; *j; j++) {
        if (*j >= 'A' && *j <= 'Z') {
            if (*key++ != '_')
                return 0;
            if (*key++ != *j - 'A' + 'a')
                return 0;
        } else if (*key++ != *j) {
            return 0;
        }
    }
    return *key == '\0';
}

/* What a null list element or map value decodes to: jsonpb (and encoding/json) leave the zero value. */
static json_t *zero_value(const wh_vfield *f)
{
    switch (f->type) {
    case WH_VT_STR:
    case WH_VT_BYTES:
        return json_string("");
    case WH_VT_BOOL:
        return json_false();
    case WH_VT_DBL:
        return json_real(0);
    case WH_VT_ENUM:
        return json_string(((const wh_venum_desc *)f->ref)->values[0]);
    case WH_VT_DUR:
        return json_string("0s");
    case WH_VT_MSG:
    case WH_VT_STRUCT:
        return json_object();
    case WH_VT_ANYLIST:
        return json_array();
    case WH_VT_VALUE:
        return json_null();
    default:
        return json_integer(0);
    }
}

/* A map key of a map<uint32, ...>: a decimal number as JSON would read it (no sign, no leading zero). */
static int uint32_key(const char *k)
{
    unsigned long long n = 0;
    const char *p = k;

    if (*p == '\0' || (p[0] == '0' && p[1] != '\0'))
        return 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        n = n * 10 + (unsigned long long)(*p - '0');
        if (n > 0xffffffffULL)
            return 0;
    }
    return 1;
}

static wh_code dec_field(dec *d, const wh_vfield *f, int k8s, const json_t *v, json_t **out)
{
    size_t mark = d->path.len;
    wh_code rc = WH_OK;
    json_t *res = NULL, *item = NULL;

    *out = NULL;
    if (f->card == WH_VC_ONE)
        return dec_value(d, f, k8s, v, out);
    if (f->card == WH_VC_LIST) {
        size_t i;
        if (!json_is_array(v))
            return fail(d, v, "a list");
        res = json_array();
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *e = json_array_get(v, i);
            wh_buf_printf(&d->path, "[%zu]", i);
            if (json_is_null(e))
                item = zero_value(f);
            else if ((rc = dec_value(d, f, k8s, e, &item)) != WH_OK)
                goto out;
            json_array_append_new(res, item);
            item = NULL;
            d->path.len = mark;
            d->path.data[mark] = '\0';
        }
    } else {
        const char *k;
        json_t *e;
        if (!json_is_object(v))
            return fail(d, v, "a map");
        res = json_object();
        json_object_foreach((json_t *)v, k, e)
        {
            wh_buf_printf(&d->path, "[%s]", k);
            if (f->card == WH_VC_UMAP && !uint32_key(k)) {
                rc = fail(d, NULL, "map key is not a uint32");
                goto out;
            }
            if (json_is_null(e))
                item = zero_value(f);
            else if ((rc = dec_value(d, f, k8s, e, &item)) != WH_OK)
                goto out;
            json_object_set_new(res, k, item);
            item = NULL;
            d->path.len = mark;
            d->path.data[mark] = '\0';
        }
    }
    *out = res;
    res = NULL;
out:
    json_decref(res);
    return rc;
}

static wh_code dec_msg(dec *d, const wh_vmsg *m, const json_t *in, json_t **out)
{
    json_t *res = NULL, *val = NULL;
    size_t mark = d->path.len, i;
    wh_code rc = WH_OK;
    unsigned char oneof_seen[32] = {0};

    *out = NULL;
    if (!json_is_object(in))
        return fail(d, in, "an object");
    res = json_object();
    /* Walk the descriptor in declaration order, as jsonpb does: a later member of a oneof replaces an
     * earlier one. */
    for (i = 0; i < m->nfields; i++) {
        const wh_vfield *f = &m->fields[i];
        const char *k;
        json_t *v, *found = NULL;

        json_object_foreach((json_t *)in, k, v)
        {
            if (key_matches(f, m->k8s, k)) {
                found = v;
                if (strcmp(k, f->json) == 0)
                    break;
            }
        }
        if (found == NULL || (json_is_null(found) && f->type != WH_VT_VALUE))
            continue;
        wh_buf_printf(&d->path, "%s%s", mark ? "." : "", f->json);
        if ((rc = dec_field(d, f, m->k8s, found, &val)) != WH_OK)
            goto out;
        d->path.len = mark;
        d->path.data[mark] = '\0';
        if ((f->card == WH_VC_LIST && json_array_size(val) == 0) ||
            ((f->card == WH_VC_MAP || f->card == WH_VC_UMAP) && json_object_size(val) == 0)) {
            json_decref(val);
            val = NULL;
            continue;
        }
        if (f->oneof != 0 && f->oneof < sizeof(oneof_seen)) {
            size_t j;
            if (oneof_seen[f->oneof])
                for (j = 0; j < i; j++)
                    if (m->fields[j].oneof == f->oneof)
                        json_object_del(res, m->fields[j].json);
            oneof_seen[f->oneof] = 1;
        }
        json_object_set_new(res, f->json, val);
        val = NULL;
    }
    *out = res;
    res = NULL;
out:
    json_decref(val);
    json_decref(res);
    return rc;
}

static int canonical_msg(const wh_vmsg *m, const json_t *in, int depth);

/* One value of field f already in canonical form (and of the right type). */
static int canonical_value(const wh_vfield *f, const json_t *v, int depth)
{
    long long n;
    int64_t ns;

    switch (f->type) {
    case WH_VT_STR:
        return json_is_string(v);
    case WH_VT_BOOL:
        return json_is_boolean(v);
    case WH_VT_I32:
    case WH_VT_U32:
    case WH_VT_I64:
    case WH_VT_U64:
        if (!json_is_integer(v))
            return 0;
        n = (long long)json_integer_value(v);
        return !((f->type == WH_VT_I32 && (n < INT32_MIN || n > INT32_MAX)) ||
                 (f->type == WH_VT_U32 && (n < 0 || n > (long long)UINT32_MAX)) || (f->type == WH_VT_U64 && n < 0));
    case WH_VT_DBL:
        return json_is_number(v);
    case WH_VT_BYTES:
        return json_is_string(v) && is_base64(json_string_value(v));
    case WH_VT_ENUM: {
        const wh_venum_desc *e = f->ref;
        int i;
        if (!json_is_string(v))
            return 0;
        for (i = 0; i < e->n; i++)
            if (strcmp(e->values[i], json_string_value(v)) == 0)
                return 1;
        return 0;
    }
    case WH_VT_DUR:
        return json_is_string(v) && wh_vparse_duration(json_string_value(v), &ns) == 0;
    case WH_VT_MSG:
        return json_is_object(v) && canonical_msg(f->ref, v, depth + 1);
    case WH_VT_STRUCT:
        return json_is_object(v);
    case WH_VT_VALUE:
        return 1;
    case WH_VT_ANYLIST:
        return json_is_array(v);
    }
    return 0;
}

/* 1 when `in` is exactly what dec_msg would produce: only JSON names of known fields, no nulls, no empty
 * lists or maps, canonical scalars, at most one member per oneof.  Then it can be used as is. */
static int canonical_msg(const wh_vmsg *m, const json_t *in, int depth)
{
    unsigned char oneof_seen[32] = {0};
    const char *k;
    json_t *v;

    if (m->k8s || depth > 64)
        return 0;
    json_object_foreach((json_t *)in, k, v)
    {
        const wh_vfield *f = NULL;
        size_t i;
        for (i = 0; i < m->nfields && f == NULL; i++)
            if (strcmp(m->fields[i].json, k) == 0)
                f = &m->fields[i];
        if (f == NULL || json_is_null(v))
            return 0;
        if (f->oneof != 0) {
            if (f->oneof >= sizeof(oneof_seen) || oneof_seen[f->oneof])
                return 0;
            oneof_seen[f->oneof] = 1;
        }
        if (f->card == WH_VC_ONE) {
            if (!canonical_value(f, v, depth))
                return 0;
        } else if (f->card == WH_VC_LIST) {
            size_t j;
            if (!json_is_array(v) || json_array_size(v) == 0)
                return 0;
            for (j = 0; j < json_array_size(v); j++) {
                const json_t *e = json_array_get(v, j);
                if (json_is_null(e) || !canonical_value(f, e, depth))
                    return 0;
            }
        } else {
            const char *mk;
            json_t *e;
            if (!json_is_object(v) || json_object_size(v) == 0)
                return 0;
            json_object_foreach(v, mk, e)
            {
                if (json_is_null(e) || (f->card == WH_VC_UMAP && !uint32_key(mk)) || !canonical_value(f, e, depth))
                    return 0;
            }
        }
    }
    return 1;
}

wh_code wh_vdecode(const wh_vmsg *m, const json_t *in, json_t **out, wh_err *err)
{
    dec d = {WH_BUF_INIT, err};
    wh_code rc = WH_OK;

    *out = NULL;
    wh_buf_puts(&d.path, "");
    d.path.len = 0;
    if (in == NULL || json_is_null(in))
        *out = json_object();
    else if (json_is_object(in) && canonical_msg(m, in, 0))
        *out = json_incref((json_t *)in); /* the common case: nothing to convert, nothing to copy */
    else
        rc = dec_msg(&d, m, in, out);
    wh_buf_free(&d.path);
    return rc;
}
