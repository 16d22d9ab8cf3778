/*
 * test_json_arena.c - the request JSON arena: values inside a scope are
 * carved from it, the newest block is given back on free, large blocks and
 * everything over the budget fall back to malloc, values made before a scope
 * (or on another thread, or while paused) are untouched by it, and a
 * dropped document is reclaimed at the end of its scope without a walk.  Leaks and
 * bad frees show up under valgrind and ASan, which run this test too.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "wh_alloc.h"
#include "wh_buf.h"
#include "wh_json_arena.h"

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_OFF 1
#endif
#endif

/* Inside the newest chunk (the arena keeps its free space at its end). */
static int in_newest_chunk(const wh_json_arena *a, const void *p, size_t chunk)
{
    return (uintptr_t)p < (uintptr_t)a->end && (uintptr_t)p >= (uintptr_t)a->end - chunk;
}

static void skip_without_arena(void)
{
#ifdef ARENA_OFF
    skip(); /* under ASan the arena stands aside on purpose */
#endif
}

static void values_come_from_the_arena(void **state)
{
    wh_json_arena a;
    json_t *s, *i;

    (void)state;
    skip_without_arena();
    wh_json_arena_begin(&a);
    s = json_string("hello");
    i = json_integer(42);
    assert_non_null(s);
    assert_non_null(i);
    assert_true(a.reserved > 0);
    assert_true(in_newest_chunk(&a, s, a.reserved));
    assert_true(in_newest_chunk(&a, i, a.reserved));
    assert_true((char *)i < a.ptr);
    json_decref(s);
    json_decref(i);
    wh_json_arena_end(&a);
    assert_null(a.chunks);
    assert_int_equal(a.reserved, 0);
}

static void newest_block_is_given_back(void **state)
{
    wh_json_arena a;
    json_t *keep, *tmp, *again;

    (void)state;
    skip_without_arena();
    wh_json_arena_begin(&a);
    keep = json_true();    /* a singleton: no allocation */
    tmp = json_integer(1); /* one block, the newest */
    assert_true((char *)tmp < a.ptr);
    json_decref(tmp);
    assert_ptr_equal(a.ptr, (char *)tmp);
    again = json_integer(2);
    assert_ptr_equal(again, tmp); /* the space was reused */
    json_decref(again);
    json_decref(keep);
    wh_json_arena_end(&a);
}

static void large_blocks_use_malloc(void **state)
{
    wh_json_arena a;
    char *big;
    json_t *s;

    (void)state;
    skip_without_arena(); /* before any allocation: skip() does not return */
    big = wh_malloc(100000);
    assert_non_null(big);
    memset(big, 'x', 99999);
    big[99999] = '\0';
    wh_json_arena_begin(&a);
    s = json_string(big); /* the json_t is carved, its 100 kB text is not */
    assert_non_null(s);
    assert_true(in_newest_chunk(&a, s, a.reserved));
    assert_false(in_newest_chunk(&a, json_string_value(s), a.reserved));
    assert_int_equal(json_string_length(s), 99999);
    json_decref(s); /* frees the text with free(): valgrind/ASan would flag a leak or a bad free */
    wh_json_arena_end(&a);
    free(big);
}

static void values_from_before_the_scope_are_freed_normally(void **state)
{
    json_t *old = json_pack("{s:[i,i],s:s}", "a", 1, 2, "b", "text");
    wh_json_arena a;

    (void)state;
    assert_non_null(old);
    wh_json_arena_begin(&a);
    json_object_set_new(old, "c", json_null());
    json_decref(old); /* malloc'd parts go to free(), carved parts are dropped */
    wh_json_arena_end(&a);
}

static void paused_scope_makes_lasting_values(void **state)
{
    wh_json_arena a, *paused;
    json_t *lasting, *scoped;

    (void)state;
    wh_json_arena_begin(&a);
    scoped = json_string("request");
    paused = wh_json_arena_pause();
    assert_ptr_equal(paused, &a);
    lasting = json_pack("{s:s}", "k", "outlives the request");
    wh_json_arena_resume(paused);
    json_decref(scoped);
    wh_json_arena_end(&a);
    assert_string_equal(json_string_value(json_object_get(lasting, "k")), "outlives the request");
    json_decref(lasting);
}

static void budget_falls_back_to_malloc(void **state)
{
    enum { N = 20000, LEN = 4000 }; /* 80 MB of text: over WH_JSON_ARENA_MAX */
    wh_json_arena a;
    json_t *list;
    char *text;

    (void)state;
    skip_without_arena(); /* before any allocation: skip() does not return */
    text = wh_malloc(LEN + 1);
    assert_non_null(text);
    memset(text, 'y', LEN);
    text[LEN] = '\0';
    wh_json_arena_begin(&a);
    list = json_array();
    for (int i = 0; i < N; i++)
        assert_int_equal(json_array_append_new(list, json_string(text)), 0);
    assert_true(a.reserved <= WH_JSON_ARENA_MAX);
    assert_true(a.reserved > WH_JSON_ARENA_MAX / 2);
    assert_string_equal(json_string_value(json_array_get(list, N - 1)), text);
    json_decref(list);
    wh_json_arena_end(&a);
    free(text);
}

static void large_blocks_freed_in_the_scope_are_forgotten(void **state)
{
    char text[20000];
    wh_json_arena a;
    json_t *s;

    (void)state;
    skip_without_arena();
    memset(text, 'z', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    wh_json_arena_begin(&a);
    s = json_string(text); /* its text is a large block */
    assert_int_equal(a.nbig, 1);
    json_decref(s);
    assert_int_equal(a.nbig, 0); /* freed once, not again at the end */
    wh_json_arena_end(&a);
}

static void dropped_documents_are_reclaimed_at_the_end(void **state)
{
    wh_json_arena a;
    wh_buf doc = WH_BUF_INIT;
    json_t *v, *shared = json_string("made before the scope");

    (void)state;
    /* a parsed document with large blocks: a 16 kB string and a
     * 3,000-entry list (its item table is over the size limit too) */
    wh_buf_puts(&doc, "{\"text\":\"");
    for (int i = 0; i < 16384; i++)
        wh_buf_putc(&doc, 'q');
    wh_buf_puts(&doc, "\",\"env\":[");
    for (int i = 0; i < 3000; i++)
        wh_buf_printf(&doc, "%s{\"name\":\"V%d\",\"value\":\"v\"}", i ? "," : "", i);
    wh_buf_puts(&doc, "]}");
    wh_json_arena_begin(&a);
    v = json_loadb(doc.data, doc.len, 0, NULL);
    assert_non_null(v);
    assert_int_equal(json_array_size(json_object_get(v, "env")), 3000);
#ifndef ARENA_OFF
    assert_true(a.nbig >= 2);
#endif
    wh_json_arena_drop(v); /* no walk: valgrind and ASan see a leak if the end misses a block */
    wh_json_arena_end(&a);
    assert_null(a.big);
    assert_int_equal(a.nbig, 0);
    wh_json_arena_drop(shared); /* outside a scope: a plain json_decref */
    wh_buf_free(&doc);
}

/* The reader's strings made in one bump read, compare, change, copy and free
 * like jansson's own; without a scope, with no room or with a long text the
 * caller is told to ask jansson. */
static void strings_made_in_the_arena_are_jansson_strings(void **state)
{
    wh_json_arena a;
    json_t *v, *ref, *copy;
    char *long_text = wh_malloc(16384);

    (void)state;
    assert_null(wh_json_arena_string("x", 1)); /* no scope */
    wh_json_arena_begin(&a);
    assert_null(wh_json_arena_string("x", 1)); /* no chunk yet: jansson's first allocation makes one */
    json_decref(json_integer(1));
    v = wh_json_arena_string("caf\xc3\xa9\0z", 7);
#ifdef ARENA_OFF
    assert_null(v);
#else
    assert_non_null(v);
    assert_true(json_is_string(v));
    assert_int_equal(json_string_length(v), 7);
    assert_memory_equal(json_string_value(v), "caf\xc3\xa9\0z", 8); /* NUL-terminated too */
    ref = json_stringn("caf\xc3\xa9\0z", 7);
    assert_true(json_equal(v, ref));
    copy = json_deep_copy(v);
    assert_true(json_equal(copy, ref));
    assert_int_equal(json_string_set(v, "changed"), 0); /* jansson frees the old text */
    assert_string_equal(json_string_value(v), "changed");
    assert_true(json_equal(copy, ref));
    json_decref(copy);
    json_decref(ref);
    json_decref(v);
    /* freed right after it was made, a string gives its room back */
    v = wh_json_arena_string("tmp", 3);
    assert_non_null(v);
    json_decref(v);
    assert_ptr_equal(a.ptr, (char *)v);
    memset(long_text, 'q', 16384);
    assert_null(wh_json_arena_string(long_text, 16384)); /* above the block limit: jansson's */
    a.ptr = a.end;                                       /* a full chunk: jansson's (it grows the arena) */
    assert_null(wh_json_arena_string("x", 1));
#endif
    wh_json_arena_end(&a);
    free(long_text);
}

static void *other_thread(void *arg)
{
    json_t **out = arg;
    *out = json_pack("{s:i}", "thread", 1); /* no scope on this thread: malloc */
    return NULL;
}

static void scopes_are_per_thread(void **state)
{
    wh_json_arena a;
    json_t *made = NULL;
    pthread_t t;

    (void)state;
    wh_json_arena_begin(&a);
    assert_int_equal(pthread_create(&t, NULL, other_thread, &made), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    wh_json_arena_end(&a);
    assert_int_equal(json_integer_value(json_object_get(made, "thread")), 1);
    json_decref(made);
}

/* A frozen tree ignores json_incref/json_decref; thawing gives every node
 * back the count it had, shared nodes and outside references included. */
static void frozen_trees_count_no_references(void **state)
{
    json_t *shared = json_string("shared"), *outside = json_integer(7);
    json_t *a = json_pack("{sOsO}", "s", shared, "o", outside), *b = json_pack("[O]", shared);
    wh_json_frozen *record = NULL;

    (void)state;
    json_decref(shared); /* held by a and b: 2 */
    wh_json_freeze(a, &record);
    wh_json_freeze(b, &record);
    wh_json_freeze(b, &record); /* already immortal: nothing recorded twice */
    assert_true(a->refcount == (size_t)-1 && shared->refcount == (size_t)-1 && outside->refcount == (size_t)-1);
    json_incref(shared);
    json_decref(shared);
    json_decref(shared);  /* a request's stray decref: no effect */
    json_decref(outside); /* as a tree dropped whole (no decref) would leave it */
    wh_json_thaw(record);
    assert_int_equal(a->refcount, 1);
    assert_int_equal(b->refcount, 1);
    assert_int_equal(shared->refcount, 2);
    assert_int_equal(outside->refcount, 2); /* a and this test */
    json_decref(a);
    json_decref(b);
    assert_int_equal(json_integer_value(outside), 7); /* still ours: no leak, no double free */
    json_decref(outside);
    wh_json_thaw(NULL);
}

static int calls[4], ncalls;

static void note_call(void *arg)
{
    calls[ncalls++] = (int)(intptr_t)arg;
}

/* Deferred calls run once the scope ended, newest first; none without a scope. */
static void deferred_calls_run_when_the_scope_ends(void **state)
{
    wh_json_arena a;

    (void)state;
    ncalls = 0;
    assert_int_equal(wh_json_arena_defer(note_call, (void *)1), 0);
    wh_json_arena_begin(&a);
    assert_int_equal(wh_json_arena_defer(note_call, (void *)1), 1);
    assert_int_equal(wh_json_arena_defer(note_call, (void *)2), 1);
    assert_int_equal(ncalls, 0);
    wh_json_arena_end(&a);
    assert_int_equal(ncalls, 2);
    assert_int_equal(calls[0], 2);
    assert_int_equal(calls[1], 1);
}

/* What WH_JSON_ARENA_CHECK=1 makes wh_json_arena_drop refuse (by abort): a
 * tree that holds a mortal value made outside the scope (dropped whole, it
 * would leave that value's count behind); immortal values are fine. */
static void check_refuses_foreign_values(void **state)
{
    json_t *lasting, *immortal, *tree;
    wh_json_frozen *record = NULL;
    wh_json_arena a;
    char why[256];

    (void)state;
    skip_without_arena();
    lasting = json_string("made before the scope");
    immortal = json_pack("{s[i]}", "k", 1);
    wh_json_freeze(immortal, &record);
    wh_json_arena_begin(&a);
    tree = json_pack("{s{sO}sO}", "deep", "x", json_null(), "shared", immortal);
    assert_int_equal(wh_json_arena_check(tree, why, sizeof(why)), 1);
    json_object_set(json_object_get(tree, "deep"), "x", lasting);
    assert_int_equal(wh_json_arena_check(tree, why, sizeof(why)), 0);
    assert_string_equal(why, "/deep/x (refcount 2) is neither made in the request's scope nor immortal: "
                             "\"made before the scope\"");
    json_decref(tree); /* a walk: gives `lasting` its count back */
    wh_json_arena_end(&a);
    assert_int_equal(lasting->refcount, 1);
    wh_json_thaw(record);
    json_decref(immortal);
    json_decref(lasting);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_come_from_the_arena),
        cmocka_unit_test(newest_block_is_given_back),
        cmocka_unit_test(large_blocks_use_malloc),
        cmocka_unit_test(values_from_before_the_scope_are_freed_normally),
        cmocka_unit_test(paused_scope_makes_lasting_values),
        cmocka_unit_test(budget_falls_back_to_malloc),
        cmocka_unit_test(scopes_are_per_thread),
        cmocka_unit_test(large_blocks_freed_in_the_scope_are_forgotten),
        cmocka_unit_test(dropped_documents_are_reclaimed_at_the_end),
        cmocka_unit_test(strings_made_in_the_arena_are_jansson_strings),
        cmocka_unit_test(frozen_trees_count_no_references),
        cmocka_unit_test(deferred_calls_run_when_the_scope_ends),
        cmocka_unit_test(check_refuses_foreign_values),
    };
    wh_json_arena_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
