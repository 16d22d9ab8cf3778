/*
 * test_json_arena.c - the request JSON arena: values inside a scope are
 * carved from it, the newest block is given back on free, large blocks and
 * everything over the budget fall back to malloc, values made before a scope
 * (or on another thread, or while paused) are untouched by it, and a
 * dropped document is reclaimed at the end of its scope without a walk; the
 * copies molds make are known as theirs while asked (and kept from being
 * freed).  Leaks and
 * bad frees show up under valgrind and ASan, which run this test too.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
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
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Inside the newest chunk (the arena keeps its free space at its end). */
static int in_newest_chunk(const wh_json_arena *a, const void *p, size_t chunk)
{
    return (uintptr_t)p < (uintptr_t)a->end && (uintptr_t)p >= (uintptr_t)a->end - chunk;
}

static void values_come_from_the_arena(void **state)
{
    wh_json_arena a;
    json_t *s, *i;

    (void)state;
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

/* Between wh_json_mold_copies_begin and _end, each copy a mold makes is
 * known as the mold's and pinned: released, it is not freed, so nothing made
 * meanwhile takes its address; _end forgets and unpins them (a copy
 * released meanwhile goes then).  Notes are kept per mold and key. */
static void copies_of_molds_are_remembered_and_pinned(void **state)
{
    json_t *tree = json_loads("{\"a\":[1,{\"b\":2}],\"c\":\"d\"}", 0, NULL), *c1, *c2, *plain, *made[64];
    wh_json_frozen *frozen = NULL;
    wh_json_mold *m;
    wh_json_arena a;
    wh_err err;
    unsigned bit = 7;
    static const int key1 = 1, key2 = 2; /* 2-aligned addresses */
    size_t i;

    (void)state;
    assert_int_equal(wh_json_freeze(tree, 16, &frozen, &err), WH_OK);
    m = wh_json_mold_new(tree);
    wh_json_arena_begin(&a);
    plain = wh_json_mold_make(m); /* before the begin: not remembered */
    wh_json_mold_copies_begin();
    c1 = wh_json_mold_make(m);
    c2 = wh_json_mold_make(m);
    assert_true(json_equal(c1, tree) && json_equal(c2, tree));
    assert_ptr_equal(wh_json_mold_copy_of(c1), m);
    assert_ptr_equal(wh_json_mold_copy_of(c2), m);
    assert_null(wh_json_mold_copy_of(plain));
    assert_null(wh_json_mold_copy_of(json_object_get(c1, "a"))); /* the copy's root only */
    /* released while remembered: not freed, its address not given again */
    json_decref(c1);
    assert_int_equal(c1->refcount, WH_JSON_MOLD_PIN);
    for (i = 0; i < 64; i++) {
        made[i] = i % 2 ? json_object() : json_pack("{s:[i,{s:i}],s:s}", "a", 1, "b", 2, "c", "d");
        assert_ptr_not_equal(made[i], c1);
    }
    assert_ptr_equal(wh_json_mold_copy_of(c1), m);
    wh_json_mold_copies_end(); /* c1 goes now */
    assert_null(wh_json_mold_copy_of(c2));
    assert_int_equal(c2->refcount, 1);
    for (i = 0; i < 64; i++)
        json_decref(made[i]);
    json_decref(c2);
    json_decref(plain);
    /* a scope's end forgets what a begin left remembered */
    wh_json_mold_copies_begin();
    c1 = wh_json_mold_make(m);
    json_decref(c1);
    wh_json_arena_end(&a);
    wh_json_arena_begin(&a);
    c2 = wh_json_mold_make(m);
    assert_null(wh_json_mold_copy_of(c2));
    json_decref(c2);
    wh_json_arena_end(&a);

    assert_false(wh_json_mold_note(m, &key1, &bit));
    wh_json_mold_set_note(m, &key1, 1);
    wh_json_mold_set_note(m, &key2, 0);
    wh_json_mold_set_note(m, &key1, 0); /* noted already: kept */
    assert_true(wh_json_mold_note(m, &key1, &bit));
    assert_int_equal(bit, 1);
    assert_true(wh_json_mold_note(m, &key2, &bit));
    assert_int_equal(bit, 0);
    wh_json_mold_free(m);
    wh_json_thaw(frozen);
    json_decref(tree);
}

static void newest_block_is_given_back(void **state)
{
    wh_json_arena a;
    json_t *keep, *tmp, *again;

    (void)state;
#ifdef UNDER_ASAN
    skip(); /* under ASan a freed block's room is kept until the scope ends, as ASan's quarantine keeps it */
#endif
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
    assert_true(a.nbig >= 2);
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
    json_decref(json_integer(1)); /* (a chunk, should the thread have kept none) */
    v = wh_json_arena_string("caf\xc3\xa9\0z", 7);
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
#ifndef UNDER_ASAN
    assert_ptr_equal(a.ptr, (char *)v);
#endif
    memset(long_text, 'q', 16384);
    assert_null(wh_json_arena_string(long_text, 16384)); /* above the block limit: jansson's */
    a.ptr = a.end;                                       /* a full chunk: jansson's (it grows the arena) */
    assert_null(wh_json_arena_string("x", 1));
    wh_json_arena_end(&a);
    free(long_text);
}

/* Arrays made in one bump read, grow, shrink, copy and free like jansson's own; empty ones too. */
static void arrays_made_in_the_arena_are_jansson_arrays(void **state)
{
    wh_json_arena a;
    json_t *items[5], *v, *ref, *copy, *empty;

    (void)state;
    wh_json_arena_begin(&a);
    ref = json_array();
    for (int i = 0; i < 5; i++) {
        items[i] = i % 2 ? json_integer(i) : json_sprintf("item %d", i);
        json_array_append(ref, items[i]);
    }
    v = wh_json_arena_array(items, 5);
    assert_ptr_equal(a.last, (char *)v); /* one bump */
    assert_true(json_is_array(v));
    assert_int_equal(json_array_size(v), 5);
    for (size_t i = 0; i < 5; i++)
        assert_ptr_equal(json_array_get(v, i), items[i]);
    assert_true(json_equal(v, ref));
    copy = json_deep_copy(v);
    assert_int_equal(json_array_append_new(v, json_string("grown")), 0); /* past its exact table */
    assert_int_equal(json_array_insert_new(v, 0, json_null()), 0);
    assert_int_equal(json_array_remove(v, 3), 0);
    assert_int_equal(json_array_size(v), 6);
    assert_true(json_is_null(json_array_get(v, 0)));
    assert_string_equal(json_string_value(json_array_get(v, 5)), "grown");
    assert_int_equal(json_array_extend(ref, copy), 0);
    assert_int_equal(json_array_size(ref), 10);
    assert_true(json_equal(json_array_get(ref, 5), items[0]));
    empty = wh_json_arena_array(NULL, 0);
    assert_int_equal(json_array_size(empty), 0);
    assert_int_equal(json_array_append_new(empty, json_true()), 0);
    assert_int_equal(json_array_append_new(empty, json_false()), 0);
    assert_int_equal(json_array_size(empty), 2);
    assert_true(json_is_false(json_array_get(empty, 1)));
    json_decref(empty);
    json_decref(copy);
    json_decref(ref);
    json_decref(v);
    wh_json_arena_end(&a);
}

/* The keys' iteration order of an object, joined with '|'. */
static void keys_in_order(const json_t *o, wh_buf *out)
{
    wh_buf_reset(out);
    for (void *it = json_object_iter((json_t *)o); it != NULL; it = json_object_iter_next((json_t *)o, it)) {
        wh_buf_append(out, json_object_iter_key(it), json_object_iter_key_len(it));
        wh_buf_putc(out, '|');
    }
}

enum { PER_LENGTH = 12, LONGEST = 64, NKEYS = PER_LENGTH * LONGEST + 1 };

/* The empty key and PER_LENGTH keys of every length 1..LONGEST (printable ASCII and two-byte UTF-8, all distinct). */
static void make_keys(char *text, wh_json_key *keys)
{
    uint32_t x = 2463534242u;
    size_t n = 0;

    for (size_t len = 0; len <= LONGEST; len++)
        for (size_t k = 0; k < (len > 0 ? PER_LENGTH : 1); k++, n++) {
            char *t = text + n * (LONGEST + 1);
            if (len > 0)
                t[0] = (char)('A' + k); /* distinct within a length */
            for (size_t i = 1; i < len; i++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                if (i + 1 < len && x % 5 == 0) { /* é */
                    t[i++] = (char)0xc3;
                    t[i] = (char)0xa9;
                } else {
                    t[i] = (char)(' ' + x % 95);
                }
            }
            keys[n].text = t;
            keys[n].len = len;
        }
}

/* Objects made in one bump are jansson's: its lookups find every key (its hash of keys of every length 0..64 is the
 * one they were filed under, bit for bit: a bucket holds pairs of one hash), iteration keeps their order, and set,
 * delete (through rehashes) and copies behave as on the object jansson builds from the same calls. */
static void objects_made_in_the_arena_are_jansson_objects(void **state)
{
    wh_json_arena a;
    char *text = wh_malloc((size_t)NKEYS * (LONGEST + 1));
    wh_json_key *keys = wh_malloc(NKEYS * sizeof(*keys));
    json_t **values = wh_malloc(NKEYS * sizeof(*values)), *v, *ref, *copy;
    wh_buf order_v = WH_BUF_INIT, order_ref = WH_BUF_INIT;

    (void)state;
    make_keys(text, keys);
    wh_json_arena_begin(&a);
    ref = json_object();
    for (size_t i = 0; i < NKEYS; i++) {
        values[i] = json_integer((json_int_t)i);
        json_object_setn_nocheck(ref, keys[i].text, keys[i].len, values[i]);
    }
    v = wh_json_arena_object(keys, values, NKEYS, 0);
    assert_ptr_equal(a.last, (char *)v); /* one bump */
    assert_int_equal(json_object_size(v), NKEYS);
    for (size_t i = 0; i < NKEYS; i++)
        assert_ptr_equal(json_object_getn(v, keys[i].text, keys[i].len), values[i]);
    assert_null(json_object_getn(v, "absent", 6));
    assert_true(json_equal(v, ref));
    { /* the same keys again: their hashes now come from the memo of recent keys */
        json_t **again = wh_malloc(NKEYS * sizeof(*again)), *twin;
        for (size_t i = 0; i < NKEYS; i++)
            again[i] = json_incref(values[i]);
        twin = wh_json_arena_object(keys, again, NKEYS, 0);
        for (size_t i = 0; i < NKEYS; i++)
            assert_ptr_equal(json_object_getn(twin, keys[i].text, keys[i].len), values[i]);
        assert_true(json_equal(twin, ref));
        json_decref(twin);
        free(again);
    }
    keys_in_order(v, &order_v);
    keys_in_order(ref, &order_ref);
    assert_int_equal(order_v.len, order_ref.len);
    assert_memory_equal(order_v.data, order_ref.data, order_v.len);
    copy = json_copy(v);
    for (size_t i = 0; i + 1 < NKEYS; i += 3) { /* every third key deleted, every other one set again, new ones added */
        json_t *x = json_integer(-(json_int_t)i);
        assert_int_equal(json_object_deln(v, keys[i].text, keys[i].len), 0);
        assert_int_equal(json_object_deln(ref, keys[i].text, keys[i].len), 0);
        assert_int_equal(json_object_setn_nocheck(v, keys[i + 1].text, keys[i + 1].len, x), 0);
        assert_int_equal(json_object_setn_nocheck(ref, keys[i + 1].text, keys[i + 1].len, x), 0);
        json_decref(x);
    }
    for (size_t i = 0; i < NKEYS; i++) { /* twice as many keys: jansson's table grows from the made one */
        char k[80];
        int n = snprintf(k, sizeof(k), "new-%zu", i);
        assert_int_equal(json_object_setn_new_nocheck(v, k, (size_t)n, json_integer(1)), 0);
        assert_int_equal(json_object_setn_new_nocheck(ref, k, (size_t)n, json_integer(1)), 0);
    }
    assert_true(json_equal(v, ref));
    keys_in_order(v, &order_v);
    keys_in_order(ref, &order_ref);
    assert_int_equal(order_v.len, order_ref.len);
    assert_memory_equal(order_v.data, order_ref.data, order_v.len);
    assert_int_equal(json_object_size(copy), NKEYS); /* the shallow copy kept the values it shares */
    assert_ptr_equal(json_object_getn(copy, keys[0].text, keys[0].len), values[0]);
    json_object_clear(v);
    assert_int_equal(json_object_size(v), 0);
    assert_int_equal(json_object_set_new(v, "again", json_true()), 0);
    assert_true(json_is_true(json_object_get(v, "again")));
    json_decref(copy);
    json_decref(ref);
    json_decref(v);
    wh_json_arena_end(&a);
    wh_buf_free(&order_v);
    wh_buf_free(&order_ref);
    free(values);
    free(keys);
    free(text);
}

/* Containers read through the layouts (wh_json_array_items, wh_json_object_members) give what jansson's calls give,
 * for values jansson made and changed (deletes, a rehash, array growth and removals) and values made in one bump;
 * anything else, and the layouts unknown (ASan), say so. */
static void containers_read_through_the_layouts(void **state)
{
    wh_json_arena a;
    json_t *theirs = json_object(), *list = json_array(), *items[3], *made_list, *made, *values[2];
    wh_json_member m[64];
    static const wh_json_key keys[] = {{"name", 4}, {"value", 5}};
    size_t i, n;

    (void)state;
    wh_json_arena_begin(&a);
    for (i = 0; i < 40; i++) {
        char k[16];
        int len = snprintf(k, sizeof(k), "k%zu", i);
        json_object_setn_new_nocheck(theirs, k, (size_t)len, json_integer((json_int_t)i));
        json_array_append_new(list, json_integer((json_int_t)i));
    }
    for (i = 0; i < 40; i += 3) {
        char k[16];
        int len = snprintf(k, sizeof(k), "k%zu", i);
        json_object_deln(theirs, k, (size_t)len);
        json_array_remove(list, i / 3);
    }
    for (i = 0; i < 3; i++)
        items[i] = json_integer((json_int_t)i);
    made_list = wh_json_arena_array(items, 3);
    values[0] = json_string("a");
    values[1] = json_string("b");
    made = wh_json_arena_object(keys, values, 2, 0);
    {
        const json_t *objects[] = {theirs, made}, *arrays[] = {list, made_list};
        json_t *const *table;
        void *it;
        for (size_t k = 0; k < 2; k++) {
            n = wh_json_object_members(objects[k], m, 64);
            assert_int_equal(n, json_object_size(objects[k]));
            for (i = 0, it = json_object_iter((json_t *)objects[k]); it != NULL;
                 i++, it = json_object_iter_next((json_t *)objects[k], it)) {
                assert_ptr_equal(m[i].key, json_object_iter_key(it));
                assert_int_equal(m[i].len, json_object_iter_key_len(it));
                assert_ptr_equal(m[i].value, json_object_iter_value(it));
            }
            assert_int_equal(i, n);
            table = wh_json_array_items(arrays[k], &n);
            assert_non_null(table);
            assert_int_equal(n, json_array_size(arrays[k]));
            for (i = 0; i < n; i++)
                assert_ptr_equal(table[i], json_array_get(arrays[k], i));
        }
        m[0].key = NULL;
        assert_int_equal(wh_json_object_members(theirs, m, 3), json_object_size(theirs)); /* too many: none written */
        assert_null(m[0].key);
    }
    assert_int_equal(wh_json_object_members(list, m, 64), (size_t)-1);
    assert_null(wh_json_array_items(theirs, &n));
    assert_int_equal(n, 0);
    json_decref(made);
    json_decref(made_list);
    json_decref(list);
    json_decref(theirs);
    wh_json_arena_end(&a);
}

/* wh_json_getn finds what json_object_getn finds, in objects jansson made and changed (deletes, rehashes) and objects
 * made in one bump, for keys of every length (those the hash memo holds, 0..16 bytes, and longer), present or not;
 * anything but an object has no members. */
static void members_looked_up_as_jansson_does(void **state)
{
    wh_json_arena a;
    json_t *theirs = json_object(), *made, *values[3], *list = json_array();
    char text[80];
    static const wh_json_key keys[] = {{"name", 4}, {"", 0}, {"a-key-longer-than-sixteen-bytes", 31}};
    size_t i, len;

    (void)state;
    wh_json_arena_begin(&a);
    for (i = 0; i < sizeof(text); i++)
        text[i] = (char)('a' + i * 7 % 26);
    for (len = 0; len < 48; len++) /* keys text[0..len): lengths 0..47 */
        json_object_setn_new_nocheck(theirs, text, len, json_integer((json_int_t)len));
    for (len = 0; len < 48; len += 5)
        json_object_deln(theirs, text, len);
    for (i = 0; i < 3; i++)
        values[i] = json_integer((json_int_t)i);
    made = wh_json_arena_object(keys, values, 3, 0);
    for (int round = 0; round < 2; round++) /* the second round: from the memo */
        for (len = 0; len < 60; len++) {
            assert_ptr_equal(wh_json_getn(theirs, text, len), json_object_getn(theirs, text, len));
            assert_ptr_equal(wh_json_getn(theirs, text + 1, len), json_object_getn(theirs, text + 1, len));
        }
    for (i = 0; i < 3; i++) {
        assert_non_null(wh_json_getn(made, keys[i].text, keys[i].len));
        assert_ptr_equal(wh_json_getn(made, keys[i].text, keys[i].len), values[i]);
    }
    assert_ptr_equal(wh_json_get(made, "name"), values[0]);
    assert_null(wh_json_get(made, "nam"));
    assert_null(wh_json_get(made, "names"));
    assert_null(wh_json_getn(made, "name", 3));
    assert_null(wh_json_get(list, "name"));
    assert_null(wh_json_get(NULL, "name"));
    json_decref(list);
    json_decref(made);
    json_decref(theirs);
    wh_json_arena_end(&a);
}

/* A key given again: json_object_setn_new_nocheck's meaning (the last value, in the first place), or NULL with every
 * value released when duplicates are refused; the same without a scope (jansson's calls). */
static void objects_take_repeated_keys_as_jansson_does(void **state)
{
    static const wh_json_key keys[] = {{"a", 1}, {"b", 1}, {"a", 1}, {"", 0}, {"b", 1}};
    json_t *shared = json_string("shared"), *values[5], *v;
    wh_buf order = WH_BUF_INIT;
    wh_json_arena a;

    (void)state;
    for (int scoped = 0; scoped < 2; scoped++) {
        if (scoped)
            wh_json_arena_begin(&a);
        for (int i = 0; i < 5; i++)
            values[i] = i == 2 ? json_incref(shared) : json_integer(i);
        v = wh_json_arena_object(keys, values, 5, 0);
        assert_int_equal(json_object_size(v), 3);
        assert_ptr_equal(json_object_get(v, "a"), shared);
        assert_int_equal(json_integer_value(json_object_get(v, "b")), 4);
        assert_int_equal(json_integer_value(json_object_get(v, "")), 3);
        keys_in_order(v, &order);
        assert_int_equal(order.len, 5);
        assert_memory_equal(order.data, "a|b||", 5);
        for (int i = 0; i < 40; i++) { /* a small table grows as jansson's */
            char k[16];
            snprintf(k, sizeof(k), "k%d", i);
            assert_int_equal(json_object_set_new(v, k, json_integer(i)), 0);
        }
        for (int i = 0; i < 40; i += 7) {
            char k[16];
            snprintf(k, sizeof(k), "k%d", i);
            assert_int_equal(json_integer_value(json_object_get(v, k)), i);
            assert_int_equal(json_object_del(v, k), 0);
            assert_null(json_object_get(v, k));
        }
        assert_int_equal(json_object_size(v), 3 + 40 - 6);
        assert_ptr_equal(json_object_get(v, "a"), shared);
        json_decref(v);
        assert_int_equal(shared->refcount, 1);
        for (int i = 0; i < 5; i++)
            values[i] = json_incref(shared);
        assert_null(wh_json_arena_object(keys, values, 5, 1));
        assert_int_equal(shared->refcount, 1); /* all five given back */
        values[0] = json_incref(shared);
        values[1] = json_null();
        v = wh_json_arena_object(keys, values, 2, 1);
        assert_int_equal(json_object_size(v), 2);
        json_decref(v);
        v = wh_json_arena_object(NULL, NULL, 0, 1);
        assert_int_equal(json_object_size(v), 0);
        assert_int_equal(json_object_set_new(v, "k", json_true()), 0);
        json_decref(v);
        if (scoped)
            wh_json_arena_end(&a);
    }
    assert_int_equal(shared->refcount, 1);
    json_decref(shared);
    wh_buf_free(&order);
}

/* The object `keys` (n of them) and their values (ints from `first`) make, checked against the one jansson builds
 * from the same calls: equal, the same iteration order, every key found, and after the same sets, deletes and growth
 * (a rehash) still the same. */
static void object_is_janssons(const wh_json_key *keys, size_t n, json_int_t first, wh_buf *order_v, wh_buf *order_ref)
{
    json_t *values[8], *ref = json_object(), *v;

    for (size_t i = 0; i < n; i++) {
        values[i] = json_integer(first + (json_int_t)i);
        json_object_setn_nocheck(ref, keys[i].text, keys[i].len, values[i]);
    }
    v = wh_json_arena_object(keys, values, n, 0);
    assert_true(json_equal(v, ref));
    assert_int_equal(json_object_size(v), json_object_size(ref));
    for (size_t i = 0; i < n; i++)
        assert_true(json_object_getn(v, keys[i].text, keys[i].len) == json_object_getn(ref, keys[i].text, keys[i].len));
    keys_in_order(v, order_v);
    keys_in_order(ref, order_ref);
    assert_int_equal(order_v->len, order_ref->len);
    assert_memory_equal(order_v->data, order_ref->data, order_v->len);
    assert_int_equal(json_object_deln(v, keys[0].text, keys[0].len), json_object_deln(ref, keys[0].text, keys[0].len));
    for (int i = 0; i < 20; i++) {
        char k[16];
        int len = snprintf(k, sizeof(k), "n%d", i);
        assert_int_equal(json_object_setn_new_nocheck(v, k, (size_t)len, json_integer(i)), 0);
        assert_int_equal(json_object_setn_new_nocheck(ref, k, (size_t)len, json_integer(i)), 0);
    }
    assert_int_equal(json_object_setn_new_nocheck(v, keys[n - 1].text, keys[n - 1].len, json_true()), 0);
    assert_int_equal(json_object_setn_new_nocheck(ref, keys[n - 1].text, keys[n - 1].len, json_true()), 0);
    assert_true(json_equal(v, ref));
    keys_in_order(v, order_v);
    keys_in_order(ref, order_ref);
    assert_int_equal(order_v->len, order_ref->len);
    assert_memory_equal(order_v->data, order_ref->data, order_v->len);
    json_decref(v);
    json_decref(ref);
}

/* Small objects of a shape met lately are copied from the last one made (common/wh_json_arena.c, struct shape): for
 * every count of keys up to 5, keys of every length 0..33 (bucket collisions among them, shapes that share a slot,
 * keys given twice), each shape made again from other copies of its keys is still jansson's object. */
static void objects_of_a_shape_met_again_are_jansson_objects(void **state)
{
    char text[4][8][40];
    wh_json_key keys[8], again[8];
    wh_buf order_v = WH_BUF_INIT, order_ref = WH_BUF_INIT;
    wh_json_arena a;
    uint32_t x = 2463534242u;

    (void)state;
    wh_json_arena_begin(&a);
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)round % 5;
        for (size_t i = 0; i < n; i++) {
            size_t len;
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            len = x % 34; /* short keys (memo by two words), 17..32 (by four) and longer (hashed each time) */
            for (size_t b = 0; b < len; b++)
                text[0][i][b] = (char)('a' + (x >> (b % 24)) % 3); /* few letters: keys repeat, shapes collide */
            keys[i] = (wh_json_key){text[0][i], len};
        }
        if (round % 7 == 0 && n > 1) /* a key given twice: never a shape */
            keys[n - 1] = keys[0];
        for (int copy = 1; copy < 4; copy++) { /* the same shape from other bytes, three times */
            for (size_t i = 0; i < n; i++) {
                memcpy(text[copy][i], keys[i].text, keys[i].len);
                again[i] = (wh_json_key){text[copy][i], keys[i].len};
            }
            object_is_janssons(again, n, round * 10 + copy, &order_v, &order_ref);
        }
        object_is_janssons(keys, n, round, &order_v, &order_ref);
    }
    wh_json_arena_end(&a);
    wh_buf_free(&order_v);
    wh_buf_free(&order_ref);
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

/* On a thread of its own: its first scope starts without a chunk (a string
 * is left to jansson, whose allocation makes one); its next scopes start
 * with the largest chunk the last one held, up to 256 KB, so that a review
 * costs no malloc and free of its room.  The thread's end frees the chunk
 * it kept (leak checkers: the sanitizer and valgrind runs). */
static void *kept_chunk_thread(void *unused)
{
    wh_json_arena a;
    json_t *big;
    size_t first;

    (void)unused;
    wh_json_arena_begin(&a);
    assert_null(wh_json_arena_string("x", 1));
    json_decref(json_integer(1));
    first = a.reserved;
    assert_true(first > 0);
    wh_json_arena_end(&a);
    wh_json_arena_begin(&a);
    assert_int_equal(a.reserved, first);
    assert_non_null(a.ptr);
    assert_non_null(wh_json_arena_string("x", 1)); /* no allocation before it */
    big = json_array();
    for (int i = 0; i < 20000; i++) /* more than the first chunk: a second one, twice as large */
        json_array_append_new(big, json_string("grows the arena past its first chunk"));
    assert_true(a.reserved > first);
    wh_json_arena_drop(big);
    wh_json_arena_end(&a);
    wh_json_arena_begin(&a);
    assert_true(a.reserved > first && a.reserved <= ((size_t)256 << 10)); /* the largest kept, within the bound */
    wh_json_arena_end(&a);
    return NULL;
}

static void a_thread_keeps_a_chunk_for_its_next_scope(void **state)
{
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, kept_chunk_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
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
    assert_int_equal(wh_json_freeze(a, 8, &record, NULL), WH_OK);
    assert_int_equal(wh_json_freeze(b, 8, &record, NULL), WH_OK);
    assert_int_equal(wh_json_freeze(b, 8, &record, NULL), WH_OK); /* already immortal: nothing recorded twice */
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

/* A tree nested deeper than the bound stops the freeze with a clear error
 * (no stack overflow on a hostile tree); what it froze is thawed as usual,
 * and a tree exactly at the bound freezes whole. */
static void freeze_is_bounded(void **state)
{
    json_t *root = json_object(), *deep = json_array(), *v = deep;
    json_t *ok = json_array(), *w = ok;
    wh_json_frozen *record = NULL;
    wh_err err = {0};

    (void)state;
    json_object_set_new(root, "flat", json_integer(1));
    json_object_set_new(root, "deep", deep); /* deep: level 1 */
    for (int i = 2; i <= 3000; i++) {
        json_t *next = json_array();
        json_array_append_new(v, next);
        v = next;
    }
    assert_int_equal(wh_json_freeze(root, 512, &record, &err), WH_E_LIMIT);
    assert_string_equal(err.msg, "nesting deeper than 512 levels");
    assert_true(root->refcount == (size_t)-1);
    wh_json_thaw(record);
    assert_int_equal(root->refcount, 1);
    assert_int_equal(deep->refcount, 1);
    json_decref(root); /* frees the whole chain: a leak check covers the thaw */

    for (int i = 1; i <= 512; i++) { /* leaves at level 512 */
        json_t *next = json_array();
        json_array_append_new(w, next);
        w = next;
    }
    record = NULL;
    assert_int_equal(wh_json_freeze(ok, 512, &record, &err), WH_OK);
    assert_true(w->refcount == (size_t)-1);
    wh_json_thaw(record);
    assert_int_equal(w->refcount, 1);
    json_decref(ok);
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
    lasting = json_string("made before the scope");
    immortal = json_pack("{s[i]}", "k", 1);
    assert_int_equal(wh_json_freeze(immortal, 8, &record, NULL), WH_OK);
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

/* Under ASan the arena tells it what is in use: a block's bytes are, the bytes after it (its redzone) and the free
 * room of the chunk are not, nor is a block once freed -- blocks jansson asks for, strings and objects made in
 * jansson's layouts (an object's pairs one by one, also when copied from a shape's template). */
static void asan_sees_the_arena_blocks(void **state)
{
#ifdef UNDER_ASAN
    static const wh_json_key keys[] = {{"name", 4}, {"value", 5}};
    json_malloc_t m;
    json_free_t f;
    wh_json_arena a;
    json_t *s, *o, *values[2];
    wh_json_member members[2];
    char *p;

    (void)state;
    json_get_alloc_funcs(&m, &f);
    wh_json_arena_begin(&a);
    p = m(10);
    assert_true(in_newest_chunk(&a, p, a.reserved));
    assert_false(__asan_region_is_poisoned(p, 10));
    assert_true(__asan_address_is_poisoned(p + 10));
    assert_true(__asan_address_is_poisoned(p + 16)); /* between it and the next block */
    assert_true(__asan_address_is_poisoned(a.ptr));  /* the chunk's room */
    assert_true((char *)m(1) >= p + 32);
    f(p);
    assert_true(__asan_address_is_poisoned(p));
    s = wh_json_arena_string("text", 4);
    assert_non_null(s);
    assert_false(__asan_region_is_poisoned((void *)json_string_value(s), 5));
    assert_true(__asan_address_is_poisoned(json_string_value(s) + 5));
    json_decref(s);
    assert_true(__asan_address_is_poisoned(s));
    for (int i = 0; i < 4; i++) { /* the third and fourth come from the shape's template */
        values[0] = json_string("n");
        values[1] = json_string("v");
        o = wh_json_arena_object(keys, values, 2, 0);
        assert_int_equal(wh_json_object_members(o, members, 2), 2);
        assert_false(__asan_region_is_poisoned((void *)members[1].key, 6));
        assert_int_equal(json_object_del(o, "value"), 0);
        assert_true(__asan_address_is_poisoned(members[1].key)); /* its pair was freed */
        assert_false(__asan_region_is_poisoned((void *)members[0].key, 5));
        json_decref(o);
        assert_true(__asan_address_is_poisoned(members[0].key));
    }
    wh_json_arena_end(&a);
#else
    (void)state;
    skip(); /* the bookkeeping exists only under ASan */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_come_from_the_arena),
        cmocka_unit_test(newest_block_is_given_back),
        cmocka_unit_test(copies_of_molds_are_remembered_and_pinned),
        cmocka_unit_test(large_blocks_use_malloc),
        cmocka_unit_test(values_from_before_the_scope_are_freed_normally),
        cmocka_unit_test(paused_scope_makes_lasting_values),
        cmocka_unit_test(budget_falls_back_to_malloc),
        cmocka_unit_test(scopes_are_per_thread),
        cmocka_unit_test(a_thread_keeps_a_chunk_for_its_next_scope),
        cmocka_unit_test(large_blocks_freed_in_the_scope_are_forgotten),
        cmocka_unit_test(dropped_documents_are_reclaimed_at_the_end),
        cmocka_unit_test(strings_made_in_the_arena_are_jansson_strings),
        cmocka_unit_test(arrays_made_in_the_arena_are_jansson_arrays),
        cmocka_unit_test(objects_made_in_the_arena_are_jansson_objects),
        cmocka_unit_test(objects_take_repeated_keys_as_jansson_does),
        cmocka_unit_test(objects_of_a_shape_met_again_are_jansson_objects),
        cmocka_unit_test(containers_read_through_the_layouts),
        cmocka_unit_test(members_looked_up_as_jansson_does),
        cmocka_unit_test(frozen_trees_count_no_references),
        cmocka_unit_test(freeze_is_bounded),
        cmocka_unit_test(deferred_calls_run_when_the_scope_ends),
        cmocka_unit_test(check_refuses_foreign_values),
        cmocka_unit_test(asan_sees_the_arena_blocks),
    };
    wh_json_arena_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
