/*
 * wh_json_arena.h - jansson allocations of one request come from a bump arena.
 *
 * Why: a review builds and drops thousands of small jansson values (the
 * decoded request, rendered overlays, the merged pod, the patch); with
 * malloc/free they cost a third of an injection's CPU.  Inside an arena
 * scope, jansson's allocations on that thread are carved from large chunks,
 * free() of them costs nothing, and the chunks go back in one step when the
 * scope ends.
 *
 * Rules:
 *   - wh_json_arena_install() once, at start-up, before threads start (it
 *     sets jansson's allocator hooks; outside a scope they are malloc/free).
 *   - A scope is per thread and must not nest.  Nothing allocated by jansson
 *     inside a scope may outlive it: results that leave the request are
 *     plain buffers (wh_buf), never json_t.  jansson's own char * results
 *     (json_dumps) must not be used inside a scope: use json_dumpb or
 *     json_dump_callback instead.
 *   - Memory is bounded: single allocations above a size limit, and all
 *     allocations once a scope has reserved WH_JSON_ARENA_MAX bytes, go to
 *     malloc as before (the large ones made in the scope are also freed when
 *     it ends, should nothing free them before).
 * Under AddressSanitizer the arena stands aside (ASan then sees every
 * value); under valgrind each carved block is reported as a heap block, so
 * memcheck still catches use after free and escapes from the scope.
 */
#ifndef WH_JSON_ARENA_H
#define WH_JSON_ARENA_H

#include <jansson.h>
#include <stddef.h>

#define WH_JSON_ARENA_MAX ((size_t)64 << 20)

struct wh_json_arena_chunk;

typedef struct wh_json_arena {
    struct wh_json_arena_chunk *chunks; /* newest first */
    char *ptr, *end;                    /* free space in the newest chunk */
    char *last;                         /* the newest block, freed by moving ptr back */
    size_t reserved;                    /* bytes of chunks held */
    struct wh_json_arena_chunk *hint;   /* the chunk the last free found its block in */
    void **big;                         /* live blocks above the size limit, malloc'd in the scope */
    size_t nbig, big_cap;
    int over_budget;  /* some allocation went to malloc untracked: wh_json_arena_drop walks */
    unsigned layouts; /* which of jansson's layouts the constructors below may make here */
} wh_json_arena;

/* Route jansson's allocations through the arena hooks (idempotent).  Also
 * seeds jansson's key hash (from getrandom, as jansson would) so that objects
 * can be made in its layout, and checks each layout against the jansson it
 * runs with: the constructors below fall back to jansson's calls for a
 * layout it did not confirm. */
void wh_json_arena_install(void);

/* Open a scope on this thread: from now on jansson allocates from `a`. */
void wh_json_arena_begin(wh_json_arena *a);

/* Close the scope and release every chunk. */
void wh_json_arena_end(wh_json_arena *a);

/* Give up `value` (a reference the caller owns) without walking it, when
 * it is a document built inside this thread's open scope that holds nothing
 * made outside it and that nothing outside the scope refers to (a parsed
 * request): its blocks are reclaimed when the scope ends.  Without an open
 * scope, with the arena off (ASan) or once the scope went over its budget,
 * this is json_decref.  Why: freeing a decoded 1,500-entry pod value by value
 * costs more than a tenth of its review (bench/inject/README.md). */
void wh_json_arena_drop(json_t *value);

/* json_stringn_nocheck(text, len) made in this thread's open scope in one
 * bump (jansson makes it with two allocations and a copy through a
 * function pointer each), or NULL when it cannot be: no scope, the arena
 * off, jansson's string layout not the one known, a long text or a full
 * chunk -- then the caller calls json_stringn_nocheck.  `text` must be valid
 * UTF-8; the value is freed by jansson as usual.  For the JSON reader. */
json_t *wh_json_arena_string(const char *text, size_t len);

/* A key of an object to build: `len` bytes of valid UTF-8 without NUL. */
typedef struct wh_json_key {
    const char *text;
    size_t len;
} wh_json_key;

/* An array holding items[0..n) in order (their references are stolen): made in
 * one bump of this thread's open scope in jansson's own array layout, its
 * table exactly n long, else by jansson's calls.  Never NULL.  Why: jansson's
 * json_array + json_array_append_new cost two allocations and a growth
 * reallocation per doubling; the readers know the items before the array. */
json_t *wh_json_arena_array(json_t *const *items, size_t n);

/* An object of keys[i] -> values[i] in that order (the values' references
 * are stolen), with json_object_setn_new_nocheck's meaning: a key given again
 * replaces the earlier value in the earlier place.  With reject_duplicates a
 * key given again makes it NULL (every value released) instead.  Made in one
 * bump of this thread's open scope in jansson's own object layout (table,
 * buckets and pairs, keys hashed as jansson hashes them), else by jansson's
 * calls.  Why: an object and its inserts cost jansson ~110 + ~230
 * instructions per member (hash, lookup, a malloc per pair, rehashes). */
json_t *wh_json_arena_object(const wh_json_key *keys, json_t *const *values, size_t n, int reject_duplicates);

/* Reading a container without a call per member, when install confirmed
 * jansson's layout (never under ASan, where the arena stands aside): the
 * items of `array` as jansson holds them (*n of them, borrowed until the
 * array changes), or NULL (*n 0) when the layout is unknown or `array` is
 * not an array -- then read it with json_array_get.  Why: the Go type check
 * of a 1,500-entry env list called jansson ~11 times per entry
 * (handlers/inject/wh_inject_schema_go.c). */
json_t *const *wh_json_array_items(const json_t *array, size_t *n);

/* A member of an object: its key (len bytes, NUL-terminated) and value,
 * borrowed until that member is deleted or replaced. */
typedef struct wh_json_member {
    const char *key;
    size_t len;
    json_t *value;
} wh_json_member;

/* The members of `object` in jansson's iteration order into out[0..n), when
 * the layout is known and they fit (n <= cap); returns n.  More than cap:
 * returns how many there are, writing nothing; the layout unknown or not an
 * object: (size_t)-1.  Then iterate with json_object_iter. */
size_t wh_json_object_members(const json_t *object, wh_json_member *out, size_t cap);

/* Step out of this thread's scope (returns it, NULL when none) to build
 * something that outlives the request, e.g. a lazily made shared value;
 * nothing of the scope may be freed meanwhile.  Then resume it. */
wh_json_arena *wh_json_arena_pause(void);
void wh_json_arena_resume(wh_json_arena *a);

#endif
