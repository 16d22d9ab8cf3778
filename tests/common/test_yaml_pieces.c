/*
 * test_yaml_pieces.c - the YAML of a template's constant text, read once
 * (common/wh_yaml_fast.c's pieces), is copied into a document only where
 * the document reads it so: the constant text there, byte for byte, and an
 * entry that its own lines end.  Each case loads a document made of dynamic
 * text around a constant text, with and without its pieces, and checks the
 * answer against the full loader and, where it matters, whether a piece
 * was used (its scalars are the revision's immortal ones).
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

#include "wh_buf.h"
#include "wh_json_arena.h"
#include "wh_yaml.h"
#include "wh_yaml_fast.h"

/* The constant text of a case, its pieces, and the document: before + text + after. */
typedef struct doc {
    const wh_yaml_pieces *ps;
    wh_buf text;
    wh_yaml_at at;
    wh_json_arena arena;
} doc;

static void doc_make(doc *d, const char *constant, const char *before, const char *after)
{
    memset(d, 0, sizeof(*d));
    d->ps = wh_yaml_pieces_new(constant, strlen(constant), WH_YAML_MAX_DEPTH);
    wh_buf_append(&d->text, before, strlen(before));
    d->at = (wh_yaml_at){d->text.len, d->ps};
    wh_buf_append(&d->text, constant, strlen(constant));
    wh_buf_append(&d->text, after, strlen(after));
    wh_json_arena_begin(&d->arena);
}

static void doc_free(doc *d)
{
    wh_json_arena_end(&d->arena);
    wh_yaml_pieces_free(d->ps);
    wh_buf_free(&d->text);
}

/* Load the document with its pieces at max_depth: the same verdict as without, the full loader's value. */
static json_t *load(doc *d, int max_depth, wh_code want)
{
    json_t *with = NULL, *without = NULL, *full = NULL;
    wh_err err;

    assert_int_equal(wh_yaml_fast_load_at(d->text.data, d->text.len, max_depth, &d->at, 1, &with), want);
    assert_int_equal(wh_yaml_fast_load(d->text.data, d->text.len, max_depth, &without), want);
    if (want != WH_OK)
        return NULL;
    assert_int_equal(wh_yaml_load_reference(d->text.data, d->text.len, &full, &err), WH_OK);
    assert_true(json_equal(with, full));
    assert_true(json_equal(with, without));
    json_decref(without);
    json_decref(full);
    return with;
}

static int immortal(const json_t *v)
{
    return v != NULL && v->refcount == (size_t)-1;
}

static json_t *at_path(json_t *v, const char *a, const char *b)
{
    v = json_object_get(v, a);
    return b != NULL ? json_object_get(v, b) : v;
}

static void entries_of_the_constant_text_are_copied(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "  a: 1\n  b:\n    c: x\n  d: [y]\n", "spec:\n", "  e: 3\n");
    assert_non_null(d.ps);
    json_t *v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_true(immortal(at_path(json_object_get(v, "spec"), "b", "c"))); /* from the piece of "b" */
    assert_true(immortal(at_path(v, "spec", "a")));
    assert_false(immortal(at_path(v, "spec", "e"))); /* read from the text */
    assert_int_equal(json_integer_value(at_path(v, "spec", "e")), 3);
    json_decref(v);
    doc_free(&d);
}

/* "b: 1" ends the constant text: a deeper line of dynamic text may continue its mapping. */
static void an_entry_the_text_does_not_end_is_read(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "a:\n  b: 1\n", "", "  c: 2\n");
    json_t *v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_int_equal(json_object_size(json_object_get(v, "a")), 2);
    assert_false(immortal(at_path(v, "a", "b")));
    json_decref(v);
    doc_free(&d);
}

/* Dynamic text at the constant text's last indent: a sequence item and an empty key go on there. */
static void dynamic_text_at_the_same_indent_continues(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "- name: x\n", "list:\n", "  value: v\n- name: z\n");
    json_t *v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(v, "list"), 0), "value")),
                        "v");
    json_decref(v);
    doc_free(&d);
    doc_make(&d, "k: 1\nkey:\n", "", "- a\n- b\n");
    v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_int_equal(json_array_size(json_object_get(v, "key")), 2);
    assert_true(immortal(json_object_get(v, "k"))); /* ended by "key:" */
    json_decref(v);
    doc_free(&d);
}

/* Told the constant text is where the document holds another text, the loader reads that text: a piece is used
 * only where its own lines, and the start of the line that ends it, are there byte for byte. */
static void a_text_that_differs_is_read(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "a: 1\nb: 2\nc: 3\n", "", "");
    d.text.data[3] = '7'; /* a: 7 */
    json_t *v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 7);
    assert_false(immortal(json_object_get(v, "a")));
    assert_true(immortal(json_object_get(v, "b"))); /* its own lines, and "c" after them, are there */
    json_decref(v);
    doc_free(&d);
    /* the piece's lines are there, but not the line that ended its entry: here a deeper one continues it */
    doc_make(&d, "k:\n  x: 1\nz: 2\n", "", "");
    wh_buf_reset(&d.text);
    wh_buf_append(&d.text, "k:\n  x: 1\n  y: 2\n", 17);
    v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_int_equal(json_object_size(json_object_get(v, "k")), 2);
    json_decref(v);
    doc_free(&d);
    doc_make(&d, "a: 1\nb: 2\nc: 3\n", "x: 0\n", "");
    d.at.off = 0; /* not where it is */
    v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_int_equal(json_object_size(v), 4);
    assert_false(immortal(json_object_get(v, "a")));
    json_decref(v);
    doc_free(&d);
}

/* Inside a block scalar, or after the start of a line, the constant text's lines are not entries. */
static void the_context_decides(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "  a:\n    b: 1\n  c: 2\n", "s: |\n", "t: 1\n");
    assert_non_null(d.ps); /* "a" and "b: 1" */
    json_t *v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_string_equal(json_string_value(json_object_get(v, "s")), "a:\n  b: 1\nc: 2\n");
    json_decref(v);
    doc_free(&d);
    doc_make(&d, "y: 1\nz: 2\nw: 3\n", "x", "");
    v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_non_null(json_object_get(v, "xy"));
    assert_true(immortal(json_object_get(v, "z")));
    json_decref(v);
    doc_free(&d);
    doc_make(&d, "  \"a\": \"x\"\n  \"b\": \"y\"\n", "f: {\n", "}\n"); /* block entries alone, not here */
    assert_non_null(d.ps);
    v = load(&d, WH_YAML_MAX_DEPTH, WH_E_UNSUPPORTED); /* (no commas: the full loader says why) */
    doc_free(&d);
    doc_make(&d, "  \"a\": \"x\"\n", "f: {\n", "}\n");
    v = load(&d, WH_YAML_MAX_DEPTH, WH_OK);
    assert_string_equal(json_string_value(at_path(v, "f", "a")), "x");
    assert_false(immortal(at_path(v, "f", "a")));
    json_decref(v);
    doc_free(&d);
}

/* A piece whose levels pass max_depth is not used: the loader refuses as it would. */
static void depth_is_counted(void **state)
{
    doc d;
    (void)state;
    doc_make(&d, "a:\n  b:\n    c:\n      d: 1\ne: 2\n", "", "");
    load(&d, 3, WH_E_UNSUPPORTED);
    json_t *v = load(&d, 4, WH_OK);
    json_decref(v);
    doc_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entries_of_the_constant_text_are_copied),
        cmocka_unit_test(an_entry_the_text_does_not_end_is_read),
        cmocka_unit_test(dynamic_text_at_the_same_indent_continues),
        cmocka_unit_test(a_text_that_differs_is_read),
        cmocka_unit_test(the_context_decides),
        cmocka_unit_test(depth_is_counted),
    };
    wh_json_arena_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
