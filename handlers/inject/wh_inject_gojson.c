/*
 * wh_inject_gojson.c - JSON text exactly as Go's encoding/json writes it.
 *
 * Injection output embeds JSON inside strings (PROXY_CONFIG, pod ports, the
 * values the templates serialise), and those strings are compared byte for
 * byte with istiod's, so key order, escaping (<, >, & as \u003c ...) and
 * float formatting (1e+21, 0.000001, 1e-7) must follow Go, not jansson.
 */
#include "wh_inject_render_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest decimal digits that read back as f: digits in d (no dot), the
 * decimal exponent in *exp10 such that value = 0.d * 10^exp10. */
static int shortest_digits(double f, char *d, int *exp10)
{
    char tmp[40];
    int p, n = 0;

    for (p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof(tmp), "%.*e", p - 1, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    /* tmp = "d.ddde[+-]xx" */
    for (const char *c = tmp; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            d[n++] = *c;
    while (n > 1 && d[n - 1] == '0')
        n--;
    d[n] = '\0';
    *exp10 = atoi(strchr(tmp, 'e') + 1) + 1;
    return n;
}

/* Go's %e-style with shortest digits: "1.5e+21", exponent at least 2 digits. */
static void format_e(const char *d, int n, int exp10, int min_exp_digits, char *buf, size_t size)
{
    int e = exp10 - 1, off;

    off = snprintf(buf, size, "%c", d[0]);
    if (n > 1)
        off += snprintf(buf + off, size - (size_t)off, ".%s", d + 1);
    snprintf(buf + off, size - (size_t)off, "e%c%0*d", e < 0 ? '-' : '+', min_exp_digits, e < 0 ? -e : e);
}

/* Plain decimal with shortest digits. */
static void format_f(const char *d, int n, int exp10, char *buf, size_t size)
{
    size_t off = 0;

    if (exp10 <= 0) {
        off += (size_t)snprintf(buf + off, size - off, "0.");
        for (int i = 0; i < -exp10 && off + 1 < size; i++)
            buf[off++] = '0';
        snprintf(buf + off, size - off, "%s", d);
    } else if (exp10 >= n) {
        off += (size_t)snprintf(buf + off, size - off, "%s", d);
        for (int i = n; i < exp10 && off + 1 < size; i++)
            buf[off++] = '0';
        buf[off] = '\0';
    } else {
        snprintf(buf, size, "%.*s.%s", exp10, d, d + exp10);
    }
}

void wh_inject_format_float(double f, char *buf, size_t size)
{
    char d[24];
    int n, exp10, neg = signbit(f) != 0 && f != 0;

    if (isnan(f) || isinf(f)) {
        snprintf(buf, size, "%s", isnan(f) ? "NaN" : (f > 0 ? "+Inf" : "-Inf"));
        return;
    }
    if (f == 0) {
        snprintf(buf, size, "0");
        return;
    }
    if (neg) {
        buf[0] = '-';
        buf++;
        size--;
        f = -f;
    }
    n = shortest_digits(f, d, &exp10);
    /* encoding/json: 'f' unless < 1e-6 or >= 1e21; exponent without padding. */
    if (f < 1e-6 || f >= 1e21)
        format_e(d, n, exp10, 1, buf, size);
    else
        format_f(d, n, exp10, buf, size);
}

static wh_code put_string(const char *s, size_t len, wh_buf *out)
{
    static const char hex[] = "0123456789abcdef";
    wh_buf_putc(out, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t run = i;
        /* printable ASCII that needs no escape goes out in runs */
        while (run < len && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x80 && s[run] != '"' &&
               s[run] != '\\' && s[run] != '<' && s[run] != '>' && s[run] != '&')
            run++;
        if (run > i) {
            wh_buf_append(out, s + i, run - i);
            i = run - 1;
            continue;
        }
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            wh_buf_append(out, e, 2);
        } else if (c == '\n') {
            wh_buf_append(out, "\\n", 2);
        } else if (c == '\r') {
            wh_buf_append(out, "\\r", 2);
        } else if (c == '\t') {
            wh_buf_append(out, "\\t", 2);
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            wh_buf_append(out, e, 6);
        } else if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            wh_buf_puts(out, (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
            i += 2;
        } else {
            wh_buf_putc(out, (char)c);
        }
    }
    wh_buf_putc(out, '"');
    return WH_OK;
}

wh_code wh_inject_gojson_string(const char *s, size_t len, wh_buf *out)
{
    return put_string(s, len, out);
}

wh_code wh_inject_gojson(const json_t *v, wh_buf *out)
{
    char num[64];
    wh_code rc = WH_OK;

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        int first = 1;
        wh_buf_putc(out, '{');
        json_object_foreach((json_t *)v, key, val)
        {
            if (!first)
                wh_buf_putc(out, ',');
            first = 0;
            put_string(key, strlen(key), out);
            wh_buf_putc(out, ':');
            if ((rc = wh_inject_gojson(val, out)) != WH_OK)
                return rc;
        }
        wh_buf_putc(out, '}');
        return WH_OK;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *val;
        wh_buf_putc(out, '[');
        json_array_foreach((json_t *)v, i, val)
        {
            if (i > 0)
                wh_buf_putc(out, ',');
            if ((rc = wh_inject_gojson(val, out)) != WH_OK)
                return rc;
        }
        wh_buf_putc(out, ']');
        return WH_OK;
    }
    case JSON_STRING:
        return put_string(json_string_value(v), json_string_length(v), out);
    case JSON_INTEGER: {
        /* digits by hand: printf costs more than the rest of a small object */
        json_int_t n = json_integer_value(v);
        unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
        char *p = num + sizeof(num);
        do
            *--p = (char)('0' + u % 10);
        while ((u /= 10) != 0);
        if (n < 0)
            *--p = '-';
        wh_buf_append(out, p, (size_t)(num + sizeof(num) - p));
        return WH_OK;
    }
    case JSON_REAL:
        wh_inject_format_float(json_real_value(v), num, sizeof(num));
        wh_buf_puts(out, num);
        return WH_OK;
    case JSON_TRUE:
        wh_buf_puts(out, "true");
        return WH_OK;
    case JSON_FALSE:
        wh_buf_puts(out, "false");
        return WH_OK;
    case JSON_NULL:
    default:
        wh_buf_puts(out, "null");
        return WH_OK;
    }
}

const char *wh_inject_jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

const json_t *wh_inject_jpath(const json_t *v, ...)
{
    va_list ap;
    const char *key;

    va_start(ap, v);
    while (v != NULL && (key = va_arg(ap, const char *)) != NULL)
        v = json_object_get(v, key);
    va_end(ap);
    return v;
}
