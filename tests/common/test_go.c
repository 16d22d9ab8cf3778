/*
 * test_go.c - unit tests of common/wh_go.h, the one Go-compatibility module:
 * each expected text is what Go's strconv, encoding/json or encoding/base64
 * prints for the input (Go 1.22 and later, which istiod is built with).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "go_json_oracle.h"
#include "wh_go.h"
#include "wh_json_arena.h"

/* --- strconv ---------------------------------------------------------------- */

static void parse_bool(void **state)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    static const char *const bad[] = {"", "yes", "tRUE", "on", " true", "2"};

    (void)state;
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(wh_go_parse_bool(yes[i]), 1);
        assert_int_equal(wh_go_parse_bool(no[i]), 0);
        assert_int_equal(wh_go_parse_bool(bad[i]), -1);
    }
    assert_int_equal(wh_go_parse_bool(NULL), -1);
}

/* --- strings ---------------------------------------------------------------- */

static void trim_space(void **state)
{
    /* input, then what strings.TrimSpace leaves of it */
    static const char *const cases[][2] = {
        {" \t\n\v\f\rx y\r\n", "x y"},
        {"\xc2\xa0x\xc2\x85", "x"},
        {"\xe2\x80\x80\xe2\x80\x8a\xe1\x9a\x80x\xe3\x80\x80\xe2\x81\x9f\xe2\x80\xaf\xe2\x80\xa8\xe2\x80\xa9", "x"},
        {"\xe2\x80\x8bx\xe2\x80\x8b", "\xe2\x80\x8bx\xe2\x80\x8b"}, /* U+200B is not a space */
        {"\xc2x\xa0", "\xc2x\xa0"},                                 /* halves of U+00A0 are not */
        {"   ", ""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *s = cases[i][0];
        size_t n = strlen(s);
        wh_go_trim_space(&s, &n);
        assert_int_equal(n, strlen(cases[i][1]));
        assert_memory_equal(s, cases[i][1], n);
    }
    /* the length of the space rune a string starts with; Sprig's nospace drops each */
    assert_int_equal(wh_go_space_len("\vx", 2), 1);
    assert_int_equal(wh_go_space_len("\xc2\x85x", 3), 2);
    assert_int_equal(wh_go_space_len("\xe3\x80\x80", 3), 3);
    assert_int_equal(wh_go_space_len("\xe3\x80\x80", 2), 0); /* cut short */
    assert_int_equal(wh_go_space_len("\xe2\x80\x8b", 3), 0); /* U+200B */
    assert_int_equal(wh_go_space_len("x ", 2), 0);
}

/* time.Duration.String, each row as Go prints it. */
static void duration(void **state)
{
    static const struct {
        int64_t ns;
        const char *want;
    } cases[] = {
        {0, "0s"},
        {1, "1ns"},
        {999, "999ns"},
        {1000, "1µs"},
        {1500, "1.5µs"},
        {1500000, "1.5ms"},
        {1000000000, "1s"},
        {60000000000LL, "1m0s"},
        {3600000000000LL, "1h0m0s"},
        {7384500000000LL, "2h3m4.5s"},
        {-1500, "-1.5µs"},
        {-90000000000LL, "-1m30s"},
        {1000000001, "1.000000001s"},
        {INT64_MAX, "2562047h47m16.854775807s"},
        {INT64_MIN, "-2562047h47m16.854775808s"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_buf b = WH_BUF_INIT;
        wh_go_duration(&b, cases[i].ns);
        assert_string_equal(b.data, cases[i].want);
        wh_buf_free(&b);
    }
}

/* What `write` (a call that appends to the wh_buf b) writes must be `want`. */
#define EXPECT_TEXT(want, write)                                                                                       \
    do {                                                                                                               \
        wh_buf b = WH_BUF_INIT;                                                                                        \
        write;                                                                                                         \
        assert_string_equal(b.data, want);                                                                             \
        wh_buf_free(&b);                                                                                               \
    } while (0)
#define check_float(f, fmt, prec, want) EXPECT_TEXT(want, wh_go_float(&b, f, fmt, prec))

/* strconv.Quote / QuoteToASCII / QuoteRune's quoting, as Go prints them. */
static void quote(void **state)
{
    static const struct {
        const char *in;
        char q;
        int ascii;
        const char *want;
    } cases[] = {
        {"", '"', 0, "\"\""},
        {"a\"b\\c", '"', 0, "\"a\\\"b\\\\c\""},
        {"\a\b\f\n\r\t\v", '"', 0, "\"\\a\\b\\f\\n\\r\\t\\v\""},
        {"\x01\x1f\x7f", '"', 0, "\"\\x01\\x1f\\x7f\""},
        {"caf\xc3\xa9", '"', 0, "\"caf\xc3\xa9\""},
        {"caf\xc3\xa9", '"', 1, "\"caf\\u00e9\""},
        {"\xe2\x80\xa8", '"', 0, "\"\\u2028\""},              /* U+2028: not printable */
        {"\xc2\xad", '"', 0, "\"\\u00ad\""},                  /* soft hyphen */
        {"\xf0\x9f\x98\x80", '"', 0, "\"\xf0\x9f\x98\x80\""}, /* U+1F600 as is */
        {"\xf0\x9f\x98\x80", '"', 1, "\"\\U0001f600\""},
        {"a\x80"
         "b\xff",
         '"', 0, "\"a\\x80b\\xff\""}, /* invalid UTF-8 */
        {"'\"", '\'', 0, "'\\'\"'"},
        {"0123456789abcdef\"0123456789", '"', 0, "\"0123456789abcdef\\\"0123456789\""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        EXPECT_TEXT(cases[i].want, wh_go_quote(&b, cases[i].in, strlen(cases[i].in), cases[i].q, cases[i].ascii));
}

/* strconv.FormatFloat(f, fmt, prec, 64) */
static void format_float(void **state)
{
    (void)state;
    check_float(0, 'g', -1, "0");
    check_float(-0.0, 'g', -1, "-0");
    check_float(1.5, 'g', -1, "1.5");
    check_float(0.1, 'g', -1, "0.1");
    check_float(100000, 'g', -1, "100000");
    check_float(1e6, 'g', -1, "1e+06"); /* fmt's %v too */
    check_float(1234567.5, 'g', -1, "1.2345675e+06");
    check_float(0.0001, 'g', -1, "0.0001");
    check_float(0.00001, 'g', -1, "1e-05");
    check_float(1e21, 'g', -1, "1e+21");
    check_float(1e100, 'e', -1, "1e+100");
    check_float(123456789, 'f', -1, "123456789");
    check_float(1e21, 'f', -1, "1000000000000000000000");
    check_float(2.5, 'f', 2, "2.50");
    check_float(NAN, 'g', -1, "NaN");
    check_float(INFINITY, 'g', -1, "+Inf");
    check_float(-INFINITY, 'f', -1, "-Inf");
}

#define check_float32(f, fmt, prec, want) EXPECT_TEXT(want, wh_go_float_bits(&b, f, fmt, prec, 32))

/* strconv.FormatFloat(f, fmt, prec, 32): f rounded to a float, its shortest digits (sigs.k8s.io/yaml's float keys) */
static void format_float32(void **state)
{
    (void)state;
    check_float32(0.1, 'g', -1, "0.1");
    check_float32(3.14159265358979, 'g', -1, "3.1415927");
    check_float32(123456789, 'g', -1, "1.2345679e+08"); /* not integral digits: the float is 123456792 */
    check_float32(16777216, 'f', -1, "16777216");
    check_float32(100, 'g', -1, "100");
    check_float32(1e20, 'g', -1, "1e+20");
    check_float32(2.5e-5, 'g', -1, "2.5e-05");
    check_float32(-0.0, 'g', -1, "-0");
    check_float32(1.17549435e-38, 'g', -1, "1.1754944e-38");
    check_float32(3.5e38, 'g', -1, "+Inf"); /* above the largest float */
    check_float32(1e-46, 'g', -1, "0");
    check_float32(NAN, 'g', -1, "NaN");
}

/* --- encoding/json ---------------------------------------------------------- */

#define check_json_float(f, want) EXPECT_TEXT(want, wh_go_json_float(&b, f))

/* json.Marshal(float64) */
static void json_float(void **state)
{
    (void)state;
    check_json_float(0, "0");
    check_json_float(-0.0, "-0");
    check_json_float(1, "1");
    check_json_float(0.5, "0.5");
    check_json_float(1e6, "1000000");
    check_json_float(1e20, "100000000000000000000");
    check_json_float(1e21, "1e+21");
    check_json_float(1.5e300, "1.5e+300");
    check_json_float(0.000001, "0.000001");
    check_json_float(1e-7, "1e-7");
    check_json_float(-2.5e-10, "-2.5e-10");
    check_json_float(0.1 + 0.2, "0.30000000000000004");
}

#define check_string(s, len, flags, want) EXPECT_TEXT(want, wh_go_json_string(&b, s, len, flags))

/* json.Marshal(string), with and without SetEscapeHTML(false) */
static void json_strings(void **state)
{
    static const struct {
        const char *s;
        size_t len;
        int flags;
        const char *want;
    } cases[] = {
        {"", 0, WH_GO_JSON_HTML, "\"\""},
        {"plain text", 10, WH_GO_JSON_HTML, "\"plain text\""},
        {"a<b>&c", 6, WH_GO_JSON_HTML, "\"a\\u003cb\\u003e\\u0026c\""},
        {"a<b>&c", 6, 0, "\"a<b>&c\""},
        {"q\"b\\", 4, 0, "\"q\\\"b\\\\\""},
        {"\n\r\t\b\f", 5, 0, "\"\\n\\r\\t\\b\\f\""},
        {"\x01\x1f", 2, 0, "\"\\u0001\\u001f\""},
        {"nul\0x", 5, 0, "\"nul\\u0000x\""},
        {"\x7f", 1, 0, "\"\x7f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, WH_GO_JSON_HTML,
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        /* U+2028 and U+2029 are escaped either way; another 0xe2 character is not */
        {"\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa6", 9, 0, "\"\\u2028\\u2029\xe2\x80\xa6\""},
        {"\xe2\x80\xa8\xe2\x80\xa9<", 7, WH_GO_JSON_MINIMAL, "\"\xe2\x80\xa8\xe2\x80\xa9<\""},
        {"\xe2\x80\xa8\x80", 4, WH_GO_JSON_MINIMAL, "\"\xe2\x80\xa8\\ufffd\""},
        /* invalid UTF-8: one \ufffd per bad byte (a lone continuation, a cut
         * sequence, an overlong form, a surrogate) */
        {"a\x80z", 3, 0, "\"a\\ufffdz\""},
        {"\xe2\x82", 2, 0, "\"\\ufffd\\ufffd\""},
        {"\xc0\xaf", 2, 0, "\"\\ufffd\\ufffd\""},
        {"\xed\xa0\x80", 3, 0, "\"\\ufffd\\ufffd\\ufffd\""},
        {"\xff", 1, WH_GO_JSON_HTML, "\"\\ufffd\""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_string(cases[i].s, cases[i].len, cases[i].flags, cases[i].want);
}

/* --- the word-at-a-time escaper against the byte-at-a-time oracle ----------- */

static const int escape_flags[] = {0, WH_GO_JSON_HTML, WH_GO_JSON_MINIMAL, WH_GO_JSON_HTML | WH_GO_JSON_MINIMAL};

/* wh_go_json_string(s) under each flag set must append what the oracle
 * writes, with the text at each of `aligns` alignments in a heap block
 * that ends where it ends (ASan sees any read past it) and appended after
 * as many bytes of earlier output. */
static void expect_escape(const unsigned char *s, size_t len, size_t aligns)
{
    static wh_buf got = WH_BUF_INIT, want = WH_BUF_INIT;

    for (size_t f = 0; f < sizeof(escape_flags) / sizeof(escape_flags[0]); f++) {
        wh_buf_reset(&want);
        oracle_json_string(&want, s, len, escape_flags[f]);
        for (size_t a = 0; a < aligns; a++) {
            unsigned char *block = malloc(a + len + 1);
            assert_non_null(block);
            memcpy(block + a, s, len);
            wh_buf_reset(&got);
            wh_buf_append(&got, "........", a);
            wh_go_json_string(&got, (const char *)block + a, len, escape_flags[f]);
            free(block);
            if (got.len != a + want.len || memcmp(got.data + a, want.data, want.len) != 0 || got.data[got.len] != 0)
                fail_msg("flags %d, align %zu, %zu bytes: got %s, want %s", escape_flags[f], a, len, got.data + a,
                         want.data);
        }
    }
}

/* Every byte value at every place of texts from 1 to 17 bytes (the short
 * path, one word, a word and a tail), at every alignment. */
static void json_string_every_byte(void **state)
{
    unsigned char s[17];

    (void)state;
    for (size_t len = 1; len <= sizeof(s); len++)
        for (size_t at = 0; at < len; at++)
            for (unsigned b = 0; b < 256; b++) {
                memset(s, 'a', len);
                s[at] = (unsigned char)b;
                expect_escape(s, len, 8);
            }
}

/* Two bytes that need a look (or sit next to one) at every pair of places:
 * an escape followed by another in the same word, in the overlapping
 * tail, at the ends. */
static void json_string_byte_pairs(void **state)
{
    static const unsigned char pick[] = {0x00, 0x08, 0x1f, ' ',  '!',  '"',  '#',  '&',
                                         '<',  '>',  '\\', 0x7f, 0x80, 0xc3, 0xe2, 0xff};
    static const size_t lens[] = {2, 3, 4, 7, 8, 9, 15, 16, 17, 24};
    unsigned char s[24];

    (void)state;
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
        for (size_t i = 0; i < lens[l]; i++)
            for (size_t j = i + 1; j < lens[l]; j++)
                for (size_t x = 0; x < sizeof(pick); x++)
                    for (size_t y = 0; y < sizeof(pick); y++) {
                        memset(s, 'q', lens[l]);
                        s[i] = pick[x], s[j] = pick[y];
                        expect_escape(s, lens[l], 2);
                    }
}

/* UTF-8 sequences, valid and not, at every place of texts up to 24 bytes,
 * whole and cut short by the text's end. */
static void json_string_utf8(void **state)
{
    static const char *const seqs[] = {
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xe2\x80\xa8",
        "\xe2\x80\xa9",
        "\xe2\x80\xa6",
        "\xef\xbf\xbd",
        "\xc2\x80",
        "\xdf\xbf",
        "\xe0\xa0\x80",
        "\xed\x9f\xbf",
        "\xee\x80\x80",
        "\xf4\x8f\xbf\xbf",
        "\xf0\x90\x80\x80",
        "\xc0\xaf",
        "\xc1\xbf",
        "\xe0\x80\xaf",
        "\xe0\x9f\xbf",
        "\xed\xa0\x80",
        "\xed\xbf\xbf",
        "\xf0\x80\x80\xaf",
        "\xf0\x8f\xbf\xbf",
        "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80",
        "\xf8\x88\x80\x80\x80",
        "\xfe",
        "\x80",
        "\xbf\xbf",
        "\xc3",
        "\xe2\x82",
        "\xf0\x9f\x98",
        "\xc3\x28",
        "\xe2\x28\xa1",
        "\xf0\x28\x8c\xbc",
    };
    unsigned char s[24];

    (void)state;
    for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
        size_t n = strlen(seqs[q]);
        for (size_t len = 1; len <= sizeof(s); len++)
            for (size_t at = 0; at < len; at++) {
                size_t keep = at + n <= len ? n : len - at; /* cut by the end */
                memset(s, 'u', len);
                memcpy(s + at, seqs[q], keep);
                expect_escape(s, len, 8);
            }
    }
}

/* Random texts of 0 to 100 bytes drawn mostly from plain ASCII, with the
 * bytes that need a look and UTF-8 lead and continuation bytes mixed in;
 * and the same texts as keys and values of the compact and indented
 * writers, composed from the oracle's strings. */
static void json_string_random(void **state)
{
    static const unsigned char special[] = {0x00, 0x0a, 0x1f, '"',  '\\', '<',  '>',  '&', 0x80,
                                            0xa8, 0xbf, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff};
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    unsigned char s[100];
    wh_buf got = WH_BUF_INIT, want = WH_BUF_INIT;

    (void)state;
    for (int round = 0; round < 20000; round++) {
        size_t len;
        json_t *obj = json_object(), *arr = json_array();
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        len = seed % (sizeof(s) + 1);
        for (size_t i = 0; i < len; i++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            s[i] = seed % 8 != 0 ? (unsigned char)(' ' + (seed >> 8) % 95) : special[(seed >> 8) % sizeof(special)];
        }
        expect_escape(s, len, 1 + round % 8);

        json_object_setn_new_nocheck(obj, (const char *)s, len, json_stringn_nocheck((const char *)s, len));
        json_array_append_new(arr, json_stringn_nocheck((const char *)s, len));
        json_object_set_new_nocheck(obj, "\x01", arr); /* a key no random text is */
        for (size_t f = 0; f < sizeof(escape_flags) / sizeof(escape_flags[0]); f++) {
            int flags = escape_flags[f];
            wh_buf_reset(&want);
            wh_buf_putc(&want, '{');
            oracle_json_string(&want, s, len, flags);
            wh_buf_putc(&want, ':');
            oracle_json_string(&want, s, len, flags);
            wh_buf_puts(&want, ",\"\\u0001\":[");
            oracle_json_string(&want, s, len, flags);
            wh_buf_puts(&want, "]}");
            wh_buf_reset(&got);
            wh_go_json(&got, obj, flags);
            assert_string_equal(got.data, want.data);

            wh_buf_reset(&want);
            wh_buf_puts(&want, "{\n  ");
            oracle_json_string(&want, s, len, flags);
            wh_buf_puts(&want, ": ");
            oracle_json_string(&want, s, len, flags);
            wh_buf_puts(&want, ",\n  \"\\u0001\": [\n    ");
            oracle_json_string(&want, s, len, flags);
            wh_buf_puts(&want, "\n  ]\n}");
            wh_buf_reset(&got);
            wh_go_json_indent(&got, obj, flags, "  ");
            assert_string_equal(got.data, want.data);
        }
        json_decref(obj);
    }
    wh_buf_free(&got);
    wh_buf_free(&want);
}

static void json_values(void **state)
{
    static const struct {
        const char *in, *html, *plain;
    } cases[] = {
        {"{}", "{}", "{}"},
        {"[]", "[]", "[]"},
        {"null", "null", "null"},
        {"{\"b\":1,\"a\":[true,false,null],\"c\":{\"d\":\"<x>\"}}",
         "{\"b\":1,\"a\":[true,false,null],\"c\":{\"d\":\"\\u003cx\\u003e\"}}",
         "{\"b\":1,\"a\":[true,false,null],\"c\":{\"d\":\"<x>\"}}"},
        {"[-9223372036854775808,9223372036854775807,0,-1]", "[-9223372036854775808,9223372036854775807,0,-1]",
         "[-9223372036854775808,9223372036854775807,0,-1]"},
        {"[1.0,0.1,1e21,1e-7,2.50]", "[1,0.1,1e+21,1e-7,2.5]", "[1,0.1,1e+21,1e-7,2.5]"},
        {"{\"k&\":\"\\u2028\"}", "{\"k\\u0026\":\"\\u2028\"}", "{\"k&\":\"\\u2028\"}"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = json_loads(cases[i].in, JSON_DECODE_ANY, NULL);
        wh_buf html = WH_BUF_INIT, plain = WH_BUF_INIT;

        assert_non_null(v);
        wh_go_json(&html, v, WH_GO_JSON_HTML);
        wh_go_json(&plain, v, 0);
        assert_string_equal(html.data, cases[i].html);
        assert_string_equal(plain.data, cases[i].plain);
        wh_buf_free(&html);
        wh_buf_free(&plain);
        json_decref(v);
    }
}

/* json.MarshalIndent(v, "", "  ") (keys in the value's order: Go's map
 * would sort them, and these are sorted) */
static void json_indent(void **state)
{
    json_t *v = json_loads("{\"a\":1,\"b\":[],\"c\":{},\"d\":[1,{\"e\":\"<x>\"}],\"f\":{\"g\":null}}", 0, NULL);
    wh_buf b = WH_BUF_INIT;

    (void)state;
    assert_non_null(v);
    wh_go_json_indent(&b, v, WH_GO_JSON_HTML, "  ");
    assert_string_equal(b.data, "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": {},\n  \"d\": [\n    1,\n    {\n      \"e\": "
                                "\"\\u003cx\\u003e\"\n    }\n  ],\n  \"f\": {\n    \"g\": null\n  }\n}");
    wh_buf_reset(&b);
    wh_go_json_indent(&b, json_object_get(v, "a"), 0, "  ");
    assert_string_equal(b.data, "1");
    wh_buf_free(&b);
    json_decref(v);
}

/* json.Marshal of a Go map: keys in byte order at every level (WH_GO_JSON_SORTED),
 * past the writer's 16 members on the stack too, compact and indented. */
static void json_sorted(void **state)
{
    json_t *v = json_loads("{\"b\":1,\"a\":{\"d\":[{\"z\":0,\"y\":1}],\"c\":2},\"ab\":0,\"\":null,\"B\":3}", 0, NULL);
    json_t *big = json_object();
    wh_buf want = WH_BUF_INIT;

    (void)state;
    assert_non_null(v);
    EXPECT_TEXT("{\"\":null,\"B\":3,\"a\":{\"c\":2,\"d\":[{\"y\":1,\"z\":0}]},\"ab\":0,\"b\":1}",
                wh_go_json(&b, v, WH_GO_JSON_SORTED));
    EXPECT_TEXT("{\n \"\": null,\n \"B\": 3,\n \"a\": {\n  \"c\": 2,\n  \"d\": [\n   {\n    \"y\": 1,\n    \"z\": 0\n"
                "   }\n  ]\n },\n \"ab\": 0,\n \"b\": 1\n}",
                wh_go_json_indent(&b, v, WH_GO_JSON_SORTED, " "));
    /* without the flag: the value's own order */
    EXPECT_TEXT("{\"b\":1,\"a\":{\"d\":[{\"z\":0,\"y\":1}],\"c\":2},\"ab\":0,\"\":null,\"B\":3}", wh_go_json(&b, v, 0));
    for (int i = 39; i >= 0; i--) {
        char key[8];
        snprintf(key, sizeof(key), "k%02d", i);
        json_object_set_new(big, key, json_integer(i));
    }
    for (int i = 0; i < 40; i++)
        wh_buf_printf(&want, "%s\"k%02d\":%d", i ? "," : "{", i, i);
    wh_buf_putc(&want, '}');
    EXPECT_TEXT(want.data, wh_go_json(&b, big, WH_GO_JSON_SORTED));
    wh_buf_free(&want);
    json_decref(big);
    json_decref(v);
}

/* Containers nested deeper than the compact writer keeps open on its own
 * stack (64), each followed by siblings of every kind: every level closes
 * where it should, in both writers (main() runs the tests through jansson's
 * calls and through its layouts). */
static void json_nesting(void **state)
{
    json_t *v = json_string("leaf");
    wh_buf want = WH_BUF_INIT, outer = WH_BUF_INIT;

    (void)state;
    wh_buf_puts(&want, "\"leaf\"");
    for (int i = 150; i > 0; i--) {
        json_t *arr = json_array(), *obj = json_object();
        wh_buf tmp;
        json_array_append_new(arr, json_integer(i));
        json_array_append_new(arr, v);
        json_array_append_new(arr, json_object());
        json_object_set_new(obj, i % 2 ? "a" : "\"q\"", arr);
        json_object_set_new(obj, "b", json_array());
        json_object_set_new(obj, "c", i % 3 ? json_true() : json_string("s"));
        wh_buf_reset(&outer);
        wh_buf_printf(&outer, "{\"%s\":[%d,%s,{}],\"b\":[],\"c\":%s}", i % 2 ? "a" : "\\\"q\\\"", i, want.data,
                      i % 3 ? "true" : "\"s\"");
        tmp = want, want = outer, outer = tmp;
        v = obj;
    }
    EXPECT_TEXT(want.data, wh_go_json(&b, v, 0));
    json_decref(v);
    v = json_loads("[[[]],{},[{}],{\"x\":{}},5]", 0, NULL);
    assert_non_null(v);
    EXPECT_TEXT("[[[]],{},[{}],{\"x\":{}},5]", wh_go_json(&b, v, 0));
    wh_buf_free(&want);
    wh_buf_free(&outer);
    json_decref(v);
}

static int key_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b); /* bytes as unsigned char */
}

/* Random objects of 0 to 24 members whose keys (0 to 3 bytes of "aAb~\x7f")
 * share prefixes, inserted in random order: WH_GO_JSON_SORTED must print
 * them as strcmp orders the keys, nested too. */
static void json_sorted_random(void **state)
{
    static const char alphabet[] = "aAb~\x7f";
    uint64_t seed = 0x243f6a8885a308d3ULL;
    wh_buf got = WH_BUF_INIT, want = WH_BUF_INIT;

    (void)state;
    for (int round = 0; round < 3000; round++) {
        json_t *obj = json_object(), *inner = json_object();
        const char *keys[32];
        size_t n = 0, members;
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        members = seed % 25;
        for (size_t i = 0; i < members; i++) {
            char key[4];
            size_t len;
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            len = seed % 4;
            for (size_t k = 0; k < len; k++)
                key[k] = alphabet[(seed >> (8 + 4 * k)) % (sizeof(alphabet) - 1)];
            key[len] = '\0';
            json_object_set_new_nocheck(obj, key, json_integer((json_int_t)i));
        }
        json_object_set_new_nocheck(inner, "z", json_true());
        json_object_set_new_nocheck(inner, "y", json_false());
        json_object_set_new_nocheck(obj, "~~", inner); /* a key no random one is */
        for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it))
            keys[n++] = json_object_iter_key(it);
        qsort(keys, n, sizeof(keys[0]), key_order);
        wh_buf_reset(&want);
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_object_get(obj, keys[i]);
            wh_buf_putc(&want, i == 0 ? '{' : ',');
            oracle_json_string(&want, (const unsigned char *)keys[i], strlen(keys[i]), 0);
            if (json_is_integer(v))
                wh_buf_printf(&want, ":%lld", (long long)json_integer_value(v));
            else
                wh_buf_puts(&want, ":{\"y\":false,\"z\":true}");
        }
        wh_buf_putc(&want, '}');
        wh_buf_reset(&got);
        wh_go_json(&got, obj, WH_GO_JSON_SORTED);
        assert_string_equal(got.data, want.data);
        json_decref(obj);
    }
    wh_buf_free(&got);
    wh_buf_free(&want);
}

/* omitempty's isEmptyValue, seen through JSON */
static void is_empty(void **state)
{
    static const char *const empty[] = {"null", "false", "0", "0.0", "\"\"", "[]", "{}"};
    static const char *const full[] = {"true", "1", "-0.5", "\" \"", "[null]", "{\"a\":null}", "\"0\""};

    (void)state;
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        json_t *e = json_loads(empty[i], JSON_DECODE_ANY, NULL), *f = json_loads(full[i], JSON_DECODE_ANY, NULL);
        assert_non_null(e);
        assert_non_null(f);
        assert_true(wh_go_is_empty(e));
        assert_false(wh_go_is_empty(f));
        json_decref(e);
        json_decref(f);
    }
}

/* The words Go's encoding/json prints in "cannot unmarshal X into ...". */
static void go_type_names(void **state)
{
    static const struct {
        const char *json, *name;
    } names[] = {{"{}", "object"},  {"[1]", "array"}, {"\"s\"", "string"}, {"1", "number"},
                 {"1.5", "number"}, {"true", "bool"}, {"false", "bool"},   {"null", "null"}};

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        json_t *v = json_loads(names[i].json, JSON_DECODE_ANY, NULL);

        assert_non_null(v);
        assert_string_equal(wh_go_json_kind(v), names[i].name);
        json_decref(v);
    }
}

static void unmarshal_error(void **state)
{
    wh_buf b = WH_BUF_INIT;
    char num[64];

    (void)state;
    wh_go_unmarshal_error(&b, "string", "PodSpec", "spec.containers", "[]v1.Container");
    assert_string_equal(
        b.data, "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container");
    wh_buf_reset(&b);
    wh_go_unmarshal_error(&b, "array", NULL, NULL, "map[string]interface {}");
    assert_string_equal(b.data, "json: cannot unmarshal array into Go value of type map[string]interface {}");
    wh_buf_free(&b);
    assert_string_equal(wh_go_unmarshal_number(2.5, num, sizeof(num)), "number 2.5");
    assert_string_equal(wh_go_unmarshal_number(1234567.5, num, sizeof(num)), "number 1234567.5");
    assert_string_equal(wh_go_unmarshal_number(0.1, num, sizeof(num)), "number 0.1");
}

/* --- encoding/base64 -------------------------------------------------------- */

static void base64_vectors(void **state)
{
    /* RFC 4648 §10 */
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        wh_buf b = WH_BUF_INIT, back = WH_BUF_INIT;
        wh_go_base64(&b, in[i], strlen(in[i]));
        assert_string_equal(b.data, out[i]);
        assert_int_equal(b.len, strlen(out[i]));
        assert_int_equal(wh_go_base64_decode(&back, b.data, b.len, 0), -1);
        assert_int_equal(back.len, strlen(in[i]));
        assert_memory_equal(back.data, in[i], back.len);
        wh_buf_free(&b);
        wh_buf_free(&back);
    }
}

static void base64_binary_roundtrip(void **state)
{
    unsigned char data[256];
    wh_buf b = WH_BUF_INIT, back = WH_BUF_INIT;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(255 - i);
    wh_go_base64(&b, data, sizeof(data));
    assert_int_equal(wh_go_base64_decode(&back, b.data, b.len, 0), -1);
    assert_int_equal(back.len, sizeof(data));
    assert_memory_equal(back.data, data, sizeof(data));
    wh_buf_free(&b);
    wh_buf_free(&back);
}

/* wh_go_base64(data) must be RFC 4648's definition written bit by bit. */
static void expect_base64(const unsigned char *data, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    wh_buf b = WH_BUF_INIT;
    char want[404];
    size_t bits = len * 8, k, o = 0;

    assert_true(len <= 300);
    for (k = 0; k < bits; k += 6) {
        unsigned v = 0, j;
        for (j = 0; j < 6; j++)
            v = v << 1 | (k + j < bits ? (data[(k + j) / 8] >> (7 - (k + j) % 8)) & 1u : 0u);
        want[o++] = abc[v];
    }
    while (o % 4 != 0)
        want[o++] = '=';
    want[o] = '\0';
    wh_go_base64(&b, data, len);
    assert_string_equal(b.data != NULL ? b.data : "", want);
    assert_int_equal(b.len, o);
    wh_buf_free(&b);
}

/* Every length from 0 to 300 (the encoder's 24- and 12-byte SIMD steps,
 * 3-byte and tail paths), and every byte value in every place of the first
 * 100 bytes (all 64 characters in each place of the 12-byte steps that
 * start and end the text and of the 24-byte steps between). */
static void base64_every_length(void **state)
{
    unsigned char data[300];
    size_t len, i;

    (void)state;
    for (i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i * 151u + 7u);
    for (len = 0; len <= sizeof(data); len++)
        expect_base64(data, len);
    for (i = 0; i < 100; i++)
        for (unsigned v = 0; v < 256; v++) {
            memset(data, 0, 100);
            data[i] = (unsigned char)v;
            expect_base64(data, 100);
        }
}

/* base64.StdEncoding.DecodeString's CorruptInputError offsets */
static void base64_decode_errors(void **state)
{
    static const struct {
        const char *in;
        long bad;
    } cases[] = {
        {"Zm9v", -1}, {"Zm9v\r\nYmFy", -1}, {"Zg==", -1},    {"Zm9v*", 4},  {"Zg", 0},      {"Zg=", 3},
        {"Zg=x", 2},  {"Z===", 1},          {"Zg==Zg==", 4}, {"Zm9vYg", 4}, {"Zg==\n", -1}, {"Zm 9v", 2},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_buf b = WH_BUF_INIT;
        assert_int_equal(wh_go_base64_decode(&b, cases[i].in, strlen(cases[i].in), 0), cases[i].bad);
        wh_buf_free(&b);
    }
    {
        wh_buf b = WH_BUF_INIT; /* kubeconfig's leniency: no padding, spaces */
        assert_int_equal(wh_go_base64_decode(&b, "Zm9v YmFy\nYg", 12, WH_GO_BASE64_LENIENT), -1);
        assert_string_equal(b.data, "foobarb");
        wh_buf_free(&b);
    }
}

/* URLEncoding, RawStdEncoding and RawURLEncoding (jwx picks one from the text) */
static void base64_decode_encodings(void **state)
{
    static const struct {
        const char *in;
        int flags;
        long bad;
        const char *out;
    } cases[] = {
        {"-_8=", WH_GO_BASE64_URL, -1, "\xfb\xff"},
        {"-_8", WH_GO_BASE64_URL | WH_GO_BASE64_RAW, -1, "\xfb\xff"},
        {"+/8", WH_GO_BASE64_RAW, -1, "\xfb\xff"},
        {"+/8=", WH_GO_BASE64_URL, 0, NULL},
        {"-_8=", 0, 0, NULL},
        {"Zg", WH_GO_BASE64_URL | WH_GO_BASE64_RAW, -1, "f"},
        {"Zg==", WH_GO_BASE64_RAW, 2, NULL},
        {"Zm9vZ", WH_GO_BASE64_RAW, 4, NULL},
        {"Zm9v\nYg", WH_GO_BASE64_URL | WH_GO_BASE64_RAW, -1, "foob"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wh_buf b = WH_BUF_INIT;
        assert_int_equal(wh_go_base64_decode(&b, cases[i].in, strlen(cases[i].in), cases[i].flags), cases[i].bad);
        if (cases[i].out != NULL)
            assert_string_equal(b.data, cases[i].out);
        wh_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_bool),
        cmocka_unit_test(trim_space),
        cmocka_unit_test(quote),
        cmocka_unit_test(format_float),
        cmocka_unit_test(format_float32),
        cmocka_unit_test(json_float),
        cmocka_unit_test(json_strings),
        cmocka_unit_test(json_values),
        cmocka_unit_test(is_empty),
        cmocka_unit_test(go_type_names),
        cmocka_unit_test(unmarshal_error),
        cmocka_unit_test(base64_vectors),
        cmocka_unit_test(base64_decode_encodings),
        cmocka_unit_test(base64_binary_roundtrip),
        cmocka_unit_test(base64_every_length),
        cmocka_unit_test(base64_decode_errors),
        cmocka_unit_test(json_indent),
        cmocka_unit_test(json_sorted),
        cmocka_unit_test(json_nesting),
        cmocka_unit_test(json_sorted_random),
        cmocka_unit_test(json_string_every_byte),
        cmocka_unit_test(json_string_byte_pairs),
        cmocka_unit_test(json_string_utf8),
        cmocka_unit_test(json_string_random),
        cmocka_unit_test(duration),
    };
    int failed = cmocka_run_group_tests_name("jansson's calls", tests, NULL, NULL);

    /* Again as webhookd runs: the writer reads strings, arrays and objects
     * through jansson's layouts where install confirms them. */
    wh_json_arena_install();
    return failed + cmocka_run_group_tests_name("jansson's layouts", tests, NULL, NULL);
}
