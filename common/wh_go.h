/*
 * wh_go.h - Go compatibility, written once: what webhookd prints or reads
 * must match istiod's and kube-apiserver's Go byte for byte, so the Go
 * standard library's formats live here and nowhere else.
 *
 *   strconv        ParseBool, float formatting      (wh_go_strconv.c)
 *   strings        TrimSpace                        (wh_go_strings.c)
 *   time           Duration.String                  (wh_go_time.c)
 *   encoding/json  string escaping, floats, the     (wh_go_json.c)
 *                  compact writer, "cannot
 *                  unmarshal"; omitempty's "empty"  (inline below)
 *   encoding/base64 StdEncoding                     (wh_go_base64.c)
 *
 * Every JSON text Go would print comes from wh_go_json() (or its indented
 * form), the template engine's toJson included.  tests/common/test_go.c pins each format against Go's output.
 */
#ifndef WH_GO_H
#define WH_GO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "wh_buf.h"

/* ---- strconv ---- */

/* strconv.ParseBool: 1 for 1 t T TRUE true True, 0 for 0 f F FALSE false
 * False, -1 for anything else (NULL too).  Its error text is
 * `strconv.ParseBool: parsing "<s>": invalid syntax`. */
int wh_go_parse_bool(const char *s);

/* strconv.AppendFloat(out, f, fmt, prec, 64) for fmt 'e', 'f' and 'g'; prec
 * -1 is the shortest form that reads back as f ('g' then takes the exponent
 * form below 1e-4 and from 1e+06 on, which is also fmt's %v).  NaN and the
 * infinities are spelled "NaN", "+Inf", "-Inf" as strconv does. */
void wh_go_float(wh_buf *out, double f, char fmt, int prec);
/* The same with strconv's bitSize: 32 rounds f to a float and prints the shortest digits that read back as that float
 * (sigs.k8s.io/yaml writes a float map key so). */
void wh_go_float_bits(wh_buf *out, double f, char fmt, int prec, int bits);

/* unicode.IsPrint as strconv's quoting asks it. */
int wh_go_is_print(unsigned r);

/* strconv.Quote (q '"'), QuoteToASCII (ascii_only), and the quoting of
 * QuoteRune (q '\''): s with Go's escapes between two q, appended to out;
 * invalid UTF-8 bytes are written \xHH. */
void wh_go_quote(wh_buf *out, const char *s, size_t len, char q, int ascii_only);

/* ---- strings ---- */

/* strings.TrimSpace: narrows [*s, *s + *len) past the leading and trailing
 * runes unicode.IsSpace calls space (ASCII, U+0085, U+00A0, U+2000...). */
void wh_go_trim_space(const char **s, size_t *len);
/* The byte length of the unicode.IsSpace rune at s (len bytes), 0 when s does
 * not start with one. */
size_t wh_go_space_len(const char *s, size_t len);

/* ---- time ---- */

/* time.Duration(ns).String(), appended to out: "0s", "1ns", "1.5µs", "1m0s",
 * "2h3m4.5s", "-1s". */
void wh_go_duration(wh_buf *out, int64_t ns);

/* ---- encoding/json ---- */

/* How json.Marshal prints a float64: the shortest digits, plain below 1e21
 * and from 1e-6 on, else the exponent form ("1e+21", "1e-7").  f must be
 * finite (Go fails with "json: unsupported value"; callers say so). */
void wh_go_json_float(wh_buf *out, double f);

enum {
    WH_GO_JSON_HTML = 1, /* escape <, > and & as \u003c ... (json.Marshal's default; SetEscapeHTML(false) clears it) */
    WH_GO_JSON_MINIMAL = 2, /* only the escapes JSON itself needs: U+2028 and U+2029 stay as they are.  For
                             * texts only machines read (the JSON Patch, the AdmissionReview), where they cost
                             * 3 bytes instead of 6 and change nothing a JSON reader sees. */
    WH_GO_JSON_SORTED = 4,  /* every object's members in the byte order of their keys, as json.Marshal prints a
                             * map (the template engine's toJson, whose maps are Go maps) */
};

/* `s` (`len` bytes) as a quoted JSON string, as encoding/json writes it:
 * `"`, `\` and \b \f \n \r \t with a backslash (Go 1.22 on), other controls as \u00XX (lower
 * case), U+2028 / U+2029 as \u2028 / \u2029 (unless WH_GO_JSON_MINIMAL), each
 * byte of invalid UTF-8 as \ufffd, and with WH_GO_JSON_HTML also <, >, &. */
void wh_go_json_string(wh_buf *out, const char *s, size_t len, int flags);

/* Compact JSON text of `v` in the value's own key order (callers order keys
 * as Go would first: struct field order; or WH_GO_JSON_SORTED), strings as
 * wh_go_json_string writes them, numbers as Go prints int64 and float64. */
void wh_go_json(wh_buf *out, const json_t *v, int flags);

/* The same as json.MarshalIndent(v, "", indent) prints it: one member per
 * line, `"key": value`, empty objects and arrays as {} and []. */
void wh_go_json_indent(wh_buf *out, const json_t *v, int flags, const char *indent);

/* Whether `omitempty` drops `v`: Go's isEmptyValue seen through JSON --
 * null (nil pointer, slice, map, interface), false, 0, "", [] and {}.  A
 * JSON object here stands for a map: a struct is never empty, so callers
 * that know a field is a struct (a schema's WH_K_OBJ) only drop null. */
static inline int wh_go_is_empty(const json_t *v)
{
    /* inline: the Go type check asks it of every omitempty scalar of every
     * pod (wh_inject_schema_go.c), most often of a string */
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_REAL:
        return json_real_value(v) == 0;
    case JSON_FALSE:
    case JSON_NULL:
        return 1;
    case JSON_ARRAY:
        return json_array_size(v) == 0;
    case JSON_OBJECT:
        return json_object_size(v) == 0;
    default:
        return 0;
    }
}

/* Go's name for the JSON type of v in decode errors: object, array, string,
 * number, bool, null. */
const char *wh_go_json_kind(const json_t *v);

/* encoding/json's UnmarshalTypeError text into `out`:
 *   json: cannot unmarshal VALUE into Go struct field STRUCT.FIELD of type TYPE
 * or, with `go_struct` NULL, "... into Go value of type TYPE".  VALUE is
 * wh_go_json_kind() of the value, or "number 2.5" for a number an integer
 * field cannot hold (wh_go_unmarshal_number). */
void wh_go_unmarshal_error(wh_buf *out, const char *value, const char *go_struct, const char *field,
                           const char *go_type);
/* "number <literal>" as Go quotes a number it could not decode: the
 * literal as a manifest writes it (shortest digits, 'f' layout from 1e-4
 * to 1e21, else 'g').  Writes into buf. */
const char *wh_go_unmarshal_number(double d, char *buf, size_t size);

/* ---- encoding/base64 ---- */

/* base64.StdEncoding.EncodeToString(data): padded, standard alphabet. */
void wh_go_base64(wh_buf *out, const void *data, size_t len);

enum {
    WH_GO_BASE64_LENIENT = 1, /* also accept a final quantum without padding, and spaces and tabs */
    WH_GO_BASE64_URL = 2,     /* the URL alphabet ('-' and '_' for '+' and '/') */
    WH_GO_BASE64_RAW = 4,     /* no padding: a short final quantum ends the text, '=' is illegal */
};

/* base64.StdEncoding.DecodeString(in): padding required, \r and \n
 * ignored.  Appends the bytes to `out` and returns -1, or returns the
 * offset Go's CorruptInputError names ("illegal base64 data at input byte
 * N") and leaves what it decoded so far in `out`.  WH_GO_BASE64_URL and
 * WH_GO_BASE64_RAW make it URLEncoding, RawStdEncoding or RawURLEncoding.
 * WH_GO_BASE64_LENIENT is for hand-edited files (kubeconfig *-data fields),
 * not for Go's wire. */
long wh_go_base64_decode(wh_buf *out, const char *in, size_t len, int flags);

#endif
