/*
 * decode.c - the typed decode of `spec` (istiod's step "convert to the
 * kind's proto").  istiod decodes with golang/protobuf's jsonpb
 * (pkg/util/protomarshal ApplyJSON), retrying with unknown fields allowed, so
 * only type errors fail: strings must be strings, integers may be numbers or
 * numeric strings, enums are known names or numbers, durations are Go
 * duration strings, null means unset.  A failure is worded as jsonpb words it:
 * the encoding/json or time error of the first bad value in the proto's field
 * order, with no field path ("json: cannot unmarshal string into Go value of
 * type int32", "bad Duration: time: unknown unit \"x\" in duration \"1x\"",
 * "unknown value \"\\\"FOO\\\"\" for enum ..."; tests/validate/fixtures/86-jsonpb-decode.yaml).
 * The Gateway API kinds are Kubernetes Go types istiod decodes with
 * encoding/json into structs; their errors keep webhookd's own wording.  The
 * result is a canonical copy (JSON names, enum names, no nulls, no empty
 * lists) that the validators read without caring how the user spelled things.
 */
#include "wh_chars.h"
#include "wh_go.h"
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

/* ---- jsonpb's errors (proto kinds) ---- */

static wh_code dec_msg(dec *d, const wh_vmsg *m, const json_t *in, json_t **out);

/* encoding/json's UnmarshalTypeError for a value of v's JSON type decoded into Go type `go_type`. */
static wh_code go_type_fail(dec *d, const json_t *v, const char *go_type)
{
    wh_buf b = WH_BUF_INIT;
    wh_code rc;

    wh_go_unmarshal_error(&b, wh_go_json_kind(v), NULL, NULL, go_type);
    rc = wh_err_set(d->err, WH_E_PARSE, "%s", b.data);
    wh_buf_free(&b);
    return rc;
}

/* The same for a number Go could not hold ("number 2.5", "number 3000000000"). */
static wh_code go_number_fail(dec *d, const json_t *v, const char *go_type)
{
    char num[64];

    if (json_is_integer(v))
        snprintf(num, sizeof(num), "number %" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        wh_go_unmarshal_number(json_number_value(v), num, sizeof(num));
    return wh_err_set(d->err, WH_E_PARSE, "json: cannot unmarshal %s into Go value of type %s", num, go_type);
}

/* A string as the JSON text istiod's decoder sees (json.Marshal of the spec escapes <, >, &). */
static void raw_json_string(wh_buf *out, const json_t *s)
{
    wh_go_json_string(out, json_string_value(s), json_string_length(s), WH_GO_JSON_HTML);
}

static const char *go_int_type(int t)
{
    switch (t) {
    case WH_VT_I32:
        return "int32";
    case WH_VT_U32:
        return "uint32";
    case WH_VT_I64:
        return "int64";
    case WH_VT_U64:
        return "uint64";
    default:
        return "float64";
    }
}

/* jsonpb's integer and float fields: a JSON number, or any string, whose inside (quotes stripped, escapes
 * left as written) goes to json.Unmarshal; a double also takes "NaN", "Infinity" and "-Infinity", kept in
 * the canonical copy as Go's %v of them (wh_vnum reads them back). */
static wh_code pb_number(dec *d, int type, const json_t *v, json_t **out)
{
    const char *go_type = go_int_type(type);
    long long n;

    if (json_is_string(v)) {
        wh_buf raw = WH_BUF_INIT, msg = WH_BUF_INIT;
        wh_code rc = WH_OK;
        const char *s = json_string_value(v);
        if (type == WH_VT_DBL && (strcmp(s, "NaN") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0)) {
            *out = json_string(s[0] == 'N' ? "NaN" : s[0] == 'I' ? "+Inf" : "-Inf");
            return WH_OK;
        }
        raw_json_string(&raw, v);
        if (wh_vgo_unmarshal_number(raw.data + 1, raw.len - 2, go_type, out, &msg) != 0)
            rc = wh_err_set(d->err, WH_E_PARSE, "%s", msg.data);
        wh_buf_free(&raw);
        wh_buf_free(&msg);
        return rc;
    }
    if (!json_is_number(v))
        return go_type_fail(d, v, go_type);
    if (type == WH_VT_DBL) {
        *out = json_real(json_number_value(v));
        return WH_OK;
    }
    if (!json_is_integer(v))
        return go_number_fail(d, v, go_type);
    n = (long long)json_integer_value(v);
    if ((type == WH_VT_I32 && (n < INT32_MIN || n > INT32_MAX)) ||
        (type == WH_VT_U32 && (n < 0 || n > (long long)UINT32_MAX)) || (type == WH_VT_U64 && n < 0))
        return go_number_fail(d, v, go_type);
    *out = json_integer(n);
    return WH_OK;
}

/* A bytes field: encoding/json's []byte, base64.StdEncoding (padded), or an array of byte values. */
static wh_code pb_bytes(dec *d, const json_t *v, json_t **out)
{
    wh_buf bytes = WH_BUF_INIT, text = WH_BUF_INIT;
    wh_code rc = WH_OK;

    if (json_is_string(v)) {
        long at = wh_go_base64_decode(&bytes, json_string_value(v), json_string_length(v), 0);
        if (at >= 0)
            rc = wh_err_set(d->err, WH_E_PARSE, "illegal base64 data at input byte %ld", at);
        else
            *out = json_incref((json_t *)v);
        goto out;
    }
    if (!json_is_array(v)) {
        rc = go_type_fail(d, v, "[]uint8");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (json_is_null(e)) {
            wh_buf_putc(&bytes, 0);
            continue;
        }
        if (!json_is_number(e)) {
            rc = go_type_fail(d, e, "uint8");
            goto out;
        }
        if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 255) {
            rc = go_number_fail(d, e, "uint8");
            goto out;
        }
        wh_buf_putc(&bytes, (char)json_integer_value(e));
    }
    wh_go_base64(&text, bytes.data, bytes.len);
    *out = json_stringn(text.data ? text.data : "", text.len);
out:
    wh_buf_free(&bytes);
    wh_buf_free(&text);
    return rc;
}

/* An enum: a name (compared as written between the quotes), or a number that fits an int32. */
static wh_code pb_enum(dec *d, const wh_venum_desc *e, const json_t *v, json_t **out)
{
    if (json_is_string(v)) {
        wh_buf raw = WH_BUF_INIT, q = WH_BUF_INIT;
        wh_code rc = WH_OK;
        int i;
        raw_json_string(&raw, v);
        for (i = 0; i < e->n; i++)
            if (strlen(e->values[i]) == raw.len - 2 && memcmp(e->values[i], raw.data + 1, raw.len - 2) == 0)
                break;
        if (i < e->n) {
            *out = json_string(e->values[i]);
        } else {
            wh_vquote(&q, raw.data); /* %q of the raw JSON, quotes included */
            rc = wh_err_set(d->err, WH_E_PARSE, "unknown value %s for enum %s", q.data, e->name);
        }
        wh_buf_free(&raw);
        wh_buf_free(&q);
        return rc;
    }
    if (!json_is_number(v))
        return go_type_fail(d, v, "protoreflect.EnumNumber");
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX)
        return go_number_fail(d, v, "protoreflect.EnumNumber");
    *out = json_integer_value(v) >= 0 && json_integer_value(v) < e->n ? json_string(e->values[json_integer_value(v)])
                                                                      : json_incref((json_t *)v);
    return WH_OK;
}

/* google.protobuf.Duration: a JSON string holding a Go duration. */
static wh_code pb_duration(dec *d, const json_t *v, json_t **out)
{
    wh_buf msg = WH_BUF_INIT;
    wh_code rc = WH_OK;
    int64_t ns;

    if (!json_is_string(v))
        return go_type_fail(d, v, "string");
    if (wh_vparse_duration(json_string_value(v), &ns, &msg) != 0)
        rc = wh_err_set(d->err, WH_E_PARSE, "bad Duration: %s", msg.data);
    else
        *out = json_incref((json_t *)v);
    wh_buf_free(&msg);
    return rc;
}

/* One value of field f the way jsonpb decodes it (not a list or map container; v is not null, except for a
 * google.protobuf.Value). */
static wh_code pb_value(dec *d, const wh_vfield *f, const json_t *v, json_t **out)
{
    wh_buf msg = WH_BUF_INIT;
    wh_code rc;

    *out = NULL;
    switch (f->type) {
    case WH_VT_STR:
        if (!json_is_string(v))
            return go_type_fail(d, v, "string");
        *out = json_incref((json_t *)v);
        return WH_OK;
    case WH_VT_BOOL:
        if (!json_is_boolean(v))
            return go_type_fail(d, v, "bool");
        *out = json_incref((json_t *)v);
        return WH_OK;
    case WH_VT_I32:
    case WH_VT_U32:
    case WH_VT_I64:
    case WH_VT_U64:
    case WH_VT_DBL:
        return pb_number(d, f->type, v, out);
    case WH_VT_BYTES:
        return pb_bytes(d, v, out);
    case WH_VT_ENUM:
        return pb_enum(d, f->ref, v, out);
    case WH_VT_DUR:
        return pb_duration(d, v, out);
    case WH_VT_MSG:
        if (json_is_null(v)) {
            *out = json_object();
            return WH_OK;
        }
        if (!json_is_object(v))
            return go_type_fail(d, v, "map[string]json.RawMessage");
        return dec_msg(d, f->ref, v, out);
    case WH_VT_STRUCT: /* a message not modelled field by field */
        if (json_is_null(v)) {
            *out = json_object();
            return WH_OK;
        }
        if (!json_is_object(v))
            return go_type_fail(d, v, "map[string]json.RawMessage");
        *out = json_incref((json_t *)v);
        return WH_OK;
    case WH_VT_PBSTRUCT:
        if (json_is_null(v)) {
            *out = json_object();
            return WH_OK;
        }
        if (json_is_object(v)) {
            *out = json_incref((json_t *)v);
            return WH_OK;
        }
        wh_go_unmarshal_error(&msg, wh_go_json_kind(v), NULL, NULL, "map[string]json.RawMessage");
        rc = wh_err_set(d->err, WH_E_PARSE, "bad StructValue: %s", msg.data);
        wh_buf_free(&msg);
        return rc;
    case WH_VT_VALUE:
        *out = json_incref((json_t *)v);
        return WH_OK;
    case WH_VT_ANYLIST: /* a repeated message not modelled field by field */
        if (json_is_null(v)) {
            *out = json_array();
            return WH_OK;
        }
        if (!json_is_array(v))
            return go_type_fail(d, v, "[]json.RawMessage");
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *e = json_array_get(v, i);
            if (!json_is_null(e) && !json_is_object(e))
                return go_type_fail(d, e, "map[string]json.RawMessage");
        }
        *out = json_incref((json_t *)v);
        return WH_OK;
    }
    return wh_err_set(d->err, WH_E_INTERNAL, "bad schema type %d", f->type);
}

/* time's own quote(): printable ASCII as is (with \" and \\), every byte of anything else as \xHH. */
static void time_quote(wh_buf *out, const char *s, size_t n)
{
    size_t i = 0;

    wh_buf_putc(out, '"');
    while (i < n) {
        const unsigned char *p = (const unsigned char *)s + i;
        unsigned cp;
        size_t w = wh_utf8_decode(p, n - i, &cp);
        if (w == 0 || cp >= 0x80 || cp < ' ') {
            /* an invalid byte is one RuneError of width 1 */
            if (w == 0)
                w = 1;
            for (size_t j = 0; j < w; j++)
                wh_buf_printf(out, "\\x%02x", p[j]);
        } else {
            if (*p == '"' || *p == '\\')
                wh_buf_putc(out, '\\');
            wh_buf_putc(out, (char)*p);
        }
        i += w;
    }
    wh_buf_putc(out, '"');
}

static int duration_fail(wh_buf *err, const char *orig, const char *unit, size_t unit_len)
{
    if (err == NULL)
        return -1;
    if (unit == NULL) {
        wh_buf_puts(err, "time: invalid duration ");
    } else if (unit_len == 0) {
        wh_buf_puts(err, "time: missing unit in duration ");
    } else {
        wh_buf_puts(err, "time: unknown unit ");
        time_quote(err, unit, unit_len);
        wh_buf_puts(err, " in duration ");
    }
    time_quote(err, orig, strlen(orig));
    return -1;
}

int wh_vparse_duration(const char *s, int64_t *out, wh_buf *err)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1ULL},       {"us", 1000ULL},      {"\xc2\xb5s", 1000ULL}, {"\xce\xbcs", 1000ULL},
                 {"ms", 1000000ULL}, {"s", 1000000000ULL}, {"m", 60000000000ULL},  {"h", 3600000000000ULL}};
    const char *orig = s;
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
        return duration_fail(err, orig, NULL, 0);
    while (*s) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        int pre = 0, post = 0;
        const char *u;
        size_t ul, i;
        uint64_t unit = 0;

        if (!(*s == '.' || (*s >= '0' && *s <= '9')))
            return duration_fail(err, orig, NULL, 0);
        while (*s >= '0' && *s <= '9') {
            /* leadingInt: overflow past 1<<63 */
            if (v > (1ULL << 63) / 10 || v * 10 + (uint64_t)(*s - '0') > (1ULL << 63))
                return duration_fail(err, orig, NULL, 0);
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
            pre = 1;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                /* leadingFraction stops adding precision where it would overflow */
                if (f <= (UINT64_MAX - 9) / 10 && scale < 1e18) {
                    f = f * 10 + (uint64_t)(*s - '0');
                    scale *= 10;
                }
                s++;
                post = 1;
            }
        }
        if (!pre && !post)
            return duration_fail(err, orig, NULL, 0);
        u = s;
        while (*s && *s != '.' && !(*s >= '0' && *s <= '9'))
            s++;
        ul = (size_t)(s - u);
        if (ul == 0)
            return duration_fail(err, orig, u, 0);
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (strlen(units[i].name) == ul && memcmp(units[i].name, u, ul) == 0)
                unit = units[i].ns;
        if (unit == 0)
            return duration_fail(err, orig, u, ul);
        if (v > (1ULL << 63) / unit)
            return duration_fail(err, orig, NULL, 0);
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > (1ULL << 63))
                return duration_fail(err, orig, NULL, 0);
        }
        total += v;
        if (total > (1ULL << 63))
            return duration_fail(err, orig, NULL, 0);
    }
    if (!neg && total > (uint64_t)INT64_MAX)
        return duration_fail(err, orig, NULL, 0);
    *out = neg ? (int64_t)(0 - total) : (int64_t)total;
    return 0;
}

/* base64.StdEncoding, as encoding/json decodes a []byte (padding required, no URL alphabet). */
static int is_base64(const char *s)
{
    wh_buf scratch = WH_BUF_INIT;
    long at = wh_go_base64_decode(&scratch, s, strlen(s), 0);

    wh_buf_free(&scratch);
    return at < 0;
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

/* Decode one value of field f (not a list/map container). */
static wh_code dec_value(dec *d, const wh_vfield *f, int k8s, const json_t *v, json_t **out)
{
    long long n;

    if (!k8s)
        return pb_value(d, f, v, out);
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
        if (!json_is_number(v))
            return fail(d, v, "a number");
        *out = json_real(json_number_value(v));
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
        if (wh_vparse_duration(json_string_value(v), &ns, NULL) != 0)
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
    case WH_VT_PBSTRUCT:
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
    case WH_VT_PBSTRUCT:
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
            return k8s ? fail(d, v, "a list") : go_type_fail(d, v, "[]json.RawMessage");
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
        char key[32];
        if (!json_is_object(v))
            return k8s ? fail(d, v, "a map") : go_type_fail(d, v, "map[string]json.RawMessage");
        res = json_object();
        json_object_foreach((json_t *)v, k, e)
        {
            const char *canonical = k;
            wh_buf_printf(&d->path, "[%s]", k);
            if (f->card == WH_VC_UMAP) {
                /* jsonpb reads a uint32 key as it reads a quoted uint32 value: json.Unmarshal of its text */
                wh_buf msg = WH_BUF_INIT;
                json_t *num = NULL;
                const char *kt = k;
                size_t kn = strlen(k);
                if (kn >= 2 && k[0] == '"' && k[kn - 1] == '"')
                    kt++, kn -= 2;
                if (wh_vgo_unmarshal_number(kt, kn, "uint32", &num, &msg) != 0) {
                    rc = wh_err_set(d->err, WH_E_PARSE, "%s", msg.data);
                    wh_buf_free(&msg);
                    goto out;
                }
                snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, json_integer_value(num));
                json_decref(num);
                canonical = key;
            }
            if (json_is_null(e))
                item = zero_value(f);
            else if ((rc = dec_value(d, f, k8s, e, &item)) != WH_OK)
                goto out;
            json_object_set_new(res, canonical, item);
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
        return m->k8s ? fail(d, in, "an object") : go_type_fail(d, in, "map[string]json.RawMessage");
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
        return json_is_string(v) && wh_vparse_duration(json_string_value(v), &ns, NULL) == 0;
    case WH_VT_MSG:
        return json_is_object(v) && canonical_msg(f->ref, v, depth + 1);
    case WH_VT_STRUCT:
    case WH_VT_PBSTRUCT:
        return json_is_object(v);
    case WH_VT_VALUE:
        return 1;
    case WH_VT_ANYLIST:
        if (!json_is_array(v))
            return 0;
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!json_is_object(json_array_get(v, i)))
                return 0;
        return 1;
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
