/*
 * test_json.c - the fast JSON reader answers well-formed JSON itself (equal
 * to jansson, key order and types included) and leaves everything doubtful
 * to jansson, whose errors then come out unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_json.h"
#include "wh_json_arena.h"

enum expect { FAST, SLOW, ERROR }; /* fast path answers / jansson answers / both refuse */

static const struct {
    const char *text;
    size_t flags;
    enum expect expect;
} cases[] = {
    {"{}", 0, FAST},
    {"[]", 0, FAST},
    {" \t\r\n{ \"a\" : [ 1 , 2.5 , true , false , null ] } \n", 0, FAST},
    {"{\"b\":1,\"a\":2,\"c\":{\"z\":[],\"y\":{}}}", 0, FAST},
    {"{\"k\":1,\"k\":2}", 0, FAST},                       /* the last wins, at the first's place */
    {"{\"k\":1,\"k\":2}", JSON_REJECT_DUPLICATES, ERROR}, /* jansson's "duplicate object key" */
    {"[0,-0,7,-7,123456789012345678,-123456789012345678]", 0, FAST},
    {"[9223372036854775807,-9223372036854775808]", 0, FAST},
    {"[9223372036854775808]", 0, ERROR}, /* too big integer */
    {"[1.0,-0.0,1e2,1E-2,2.5e+3,1e-400,0.1]", 0, FAST},
    {"[1e400]", 0, ERROR}, /* real number overflow */
    {"[01]", 0, ERROR},
    {"[1.]", 0, ERROR},
    {"[.5]", 0, ERROR},
    {"[-]", 0, ERROR},
    {"[\"\\u00e9\\ud83d\\ude00\\n\\t\\\"\\\\\\/\\b\\f\\r\"]", 0, FAST},
    {"[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]", 0, FAST},
    {"{\"k\\\"ey\":{\"\\u006b\":\"v\"}}", 0, FAST},
    {"[\"a\\u0000b\"]", JSON_ALLOW_NUL, FAST},
    {"[\"a\\u0000b\"]", 0, ERROR},
    {"{\"a\\u0000\":1}", JSON_ALLOW_NUL, ERROR}, /* jansson: NUL byte in object key not supported */
    {"[\"\\ud800\"]", 0, ERROR},
    {"[\"\\udc00\"]", 0, ERROR},
    {"[\"\xed\xa0\x80\"]", 0, ERROR},     /* an encoded surrogate */
    {"[\"\xc0\xaf\"]", 0, ERROR},         /* overlong */
    {"[\"\xf4\x90\x80\x80\"]", 0, ERROR}, /* above U+10FFFF */
    {"[\"tab\there\"]", 0, ERROR},
    {"{\"k\\u00e9y\":{\"a\\n\":\"b\\t\"},\"x\":1}", 0, FAST}, /* an escaped key outlives its value's escapes */
    {"[\"\xc3\xa9\\n\",\"abcdefgh\xc3\xa9ijklmnop\\u0041qrstuvwx\",\"\x7f\"]", 0, FAST},
    {"{\"a\":[{\"b\":{\"c\":[1,{\"d\":\"e\"}]}}],\"f\":{},\"g\":[[],[{}]]}", 0, FAST},
    {"{\"a\":1 ,\"b\" :2 , \"c\":[ ] }", 0, FAST},
    {"{\"a\":\"b", 0, ERROR},
    {"{\"a\":", 0, ERROR},
    {"[\"abcdefghijk\\", 0, ERROR},
    {"{\"a\"", 0, ERROR},
    {"[{", 0, ERROR},
    {"[1}", 0, ERROR},
    {"{\"a\":1]", 0, ERROR},
    {"{\"a\":1}{", 0, ERROR},
    {"{1:2}", 0, ERROR},
    {"[\"abcdefgh\x80\"]", 0, ERROR}, /* a lone continuation byte after a plain word */
    {"{\"a\":1,}", 0, ERROR},
    {"[1,]", 0, ERROR},
    {"{\"a\":1} x", 0, ERROR},
    {"{\"a\" 1}", 0, ERROR},
    {"[tru]", 0, ERROR},
    {"", 0, ERROR},
    {"   ", 0, ERROR},
    {"\"s\"", 0, ERROR}, /* a scalar needs JSON_DECODE_ANY */
    {"\"s\"", JSON_DECODE_ANY, FAST},
    {"12", JSON_DECODE_ANY, FAST},
    {"[1]", JSON_DISABLE_EOF_CHECK, SLOW}, /* flags it does not handle go to jansson */
};

static void each_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *t = cases[i].text;
        size_t n = strlen(t), f = cases[i].flags;
        json_error_t e1, e2;
        json_t *fast = wh_json_fast_loadb(t, n, f), *both = wh_json_loadb(t, n, f, &e1),
               *ref = json_loadb(t, n, f, &e2);
        print_message("case %zu: %s\n", i, t);
        switch (cases[i].expect) {
        case FAST: {
            char *a, *b;
            assert_non_null(fast);
            assert_non_null(ref);
            a = json_dumps(fast, JSON_ENCODE_ANY);
            b = json_dumps(ref, JSON_ENCODE_ANY);
            assert_string_equal(a, b);
            free(a);
            free(b);
            break;
        }
        case SLOW:
            assert_null(fast);
            assert_non_null(ref);
            assert_true(json_equal(both, ref));
            break;
        case ERROR:
            assert_null(fast);
            assert_null(ref);
            assert_null(both);
            assert_string_equal(e1.text, e2.text); /* jansson's words, line and column */
            assert_int_equal(e1.line, e2.line);
            assert_int_equal(e1.column, e2.column);
            break;
        }
        json_decref(fast);
        json_decref(both);
        json_decref(ref);
    }
}

/* Deep nesting: answered below jansson's limit, left to jansson near it. */
static void depth(void **state)
{
    enum { OK = 1500, DEEP = 2100 };
    char *t = wh_malloc(2 * DEEP + 1);
    json_t *v;

    (void)state;
    assert_non_null(t);
    memset(t, '[', OK);
    memset(t + OK, ']', OK);
    v = wh_json_fast_loadb(t, 2 * OK, 0);
    assert_non_null(v);
    json_decref(v);
    memset(t, '[', DEEP);
    memset(t + DEEP, ']', DEEP);
    assert_null(wh_json_fast_loadb(t, 2 * DEEP, 0));
    assert_null(wh_json_loadb(t, 2 * DEEP, 0, NULL)); /* jansson: maximum parsing depth reached */
    free(t);
}

/* Compact text of v in a heap buffer (not json_dumps: inside a scope its buffer would be the arena's). */
static char *dump(const json_t *v)
{
    size_t n = json_dumpb(v, NULL, 0, JSON_ENCODE_ANY | JSON_COMPACT);
    char *s = wh_malloc(n + 1);

    assert_int_equal(json_dumpb(v, s, n, JSON_ENCODE_ANY | JSON_COMPACT), n);
    s[n] = '\0';
    return s;
}

/* Containers larger than the reader's first stacks (values, keys, escaped keys), nested, with keys given again and
 * escaped keys, read inside a request arena (containers made in jansson's layout there) and outside it: the same
 * values and key order as jansson's reader; with JSON_REJECT_DUPLICATES jansson reports the repeated key. */
static void large_containers(void **state)
{
    wh_buf doc = WH_BUF_INIT;
    wh_json_arena a;
    json_error_t e;

    (void)state;
    wh_buf_puts(&doc, "{\"list\": [");
    for (int i = 0; i < 700; i++)
        wh_buf_printf(&doc, "%s{\"name\": \"V%d\", \"v\\u0061lue\": %d, \"deep\": [[{\"k%d\": [%d, true, null]}]]%s}",
                      i ? ", " : "", i, i, i % 50, i, i % 3 ? "" : ", \"name\": \"again\"");
    wh_buf_puts(&doc, "], \"wide\": {");
    for (int i = 0; i < 300; i++)
        wh_buf_printf(&doc, "%s\"key\\t%d\": \"%0*d\"", i ? "," : "", i, i % 40, i);
    wh_buf_puts(&doc, "}, \"list\": []}");
    for (int scoped = 0; scoped < 2; scoped++) {
        json_t *fast, *ref;
        char *x, *y;
        if (scoped)
            wh_json_arena_begin(&a);
        fast = wh_json_fast_loadb(doc.data, doc.len, 0);
        ref = json_loadb(doc.data, doc.len, 0, NULL);
        assert_non_null(fast);
        assert_non_null(ref);
        x = dump(fast);
        y = dump(ref);
        assert_string_equal(x, y);
        assert_int_equal(json_array_size(json_object_get(fast, "list")), 0); /* the last value, in the first place */
        assert_string_equal(json_object_iter_key(json_object_iter(fast)), "list");
        free(x);
        free(y);
        json_decref(fast);
        json_decref(ref);
        assert_null(wh_json_fast_loadb(doc.data, doc.len, JSON_REJECT_DUPLICATES));
        assert_null(wh_json_loadb(doc.data, doc.len, JSON_REJECT_DUPLICATES, &e));
        assert_non_null(strstr(e.text, "duplicate object key"));
        if (scoped)
            wh_json_arena_end(&a);
    }
    wh_buf_free(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_case),
        cmocka_unit_test(depth),
        cmocka_unit_test(large_containers),
    };
    wh_json_arena_install(); /* as webhookd does: containers read in a scope are made in jansson's layout */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
