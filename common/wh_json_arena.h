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
 * Under AddressSanitizer the arena runs as in production and tells ASan
 * which bytes are in use (redzones between blocks, freed blocks poisoned
 * and not reused, a double free aborts), so the sanitizer builds and the
 * fuzzers test the layouts below; under valgrind each carved block is
 * reported as a heap block, so memcheck catches use after free and escapes
 * from the scope.
 */
#ifndef WH_JSON_ARENA_H
#define WH_JSON_ARENA_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "wh_result.h"

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
    int over_budget;                         /* some allocation went to malloc untracked: wh_json_arena_drop walks */
    unsigned layouts;                        /* which of jansson's layouts the constructors below may make here */
    struct wh_json_arena_deferred *deferred; /* wh_json_arena_defer's calls, newest first */
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
 * it is a tree built inside this thread's open scope that holds nothing
 * made outside it except immortal values (wh_json_freeze) and that nothing
 * outside the scope refers to (a parsed request, a merged pod, a patch):
 * its blocks are reclaimed when the scope ends.  Without an open scope,
 * or once the scope went over its budget, this is
 * json_decref.  Why: freeing a review's trees value by value cost ~10 % of
 * it (bench/inject/README.md).  With WH_JSON_ARENA_CHECK=1 in the
 * environment (read at install; tests set it), every dropped tree is walked
 * and a node that breaks the rule aborts the process, naming it. */
void wh_json_arena_drop(json_t *value);

/* What WH_JSON_ARENA_CHECK checks: 1 when `value` may be dropped (every
 * node made in this thread's open scope or immortal; also without a scope
 * or whenever dropping walks anyway), else 0 with a sentence in `why` naming the first
 * other node by its path. */
int wh_json_arena_check(const json_t *value, char *why, size_t size);

/* json_stringn_nocheck(text, len) made in this thread's open scope in one
 * bump (jansson makes it with two allocations and a copy through a
 * function pointer each), or NULL when it cannot be: no scope, the arena
 * off, jansson's string layout not the one known, a long text or a full
 * chunk -- then the caller calls json_stringn_nocheck.  `text` must be valid
 * UTF-8; the value is freed by jansson as usual.  For the JSON reader. */
json_t *wh_json_arena_string(const char *text, size_t len);

/* jansson's private string value (json_string_t, the same from 2.7 to 2.14), and whether install confirmed that
 * the running jansson lays strings out so. */
struct wh_json_string_layout {
    json_t json;
    char *value;
    size_t length;
};
extern int wh_json_string_layout_known;

/* The text of string `s` (NUL-terminated; *len bytes, which may hold NULs), read through that layout when it is
 * known, else through jansson's calls.  Why: the JSON writer reads every string of the trees it writes (~350 per
 * review's patch), and two calls into jansson per string cost more than writing most of them
 * (common/wh_go_json.c). */
static inline const char *wh_json_string_text(const json_t *s, size_t *len)
{
    if (wh_json_string_layout_known) {
        const struct wh_json_string_layout *js = (const struct wh_json_string_layout *)s;
        *len = js->length;
        return js->value;
    }
    *len = json_string_length(s);
    return json_string_value(s);
}

/* jansson 2.14's object as it lays it out (json_object_t, its hashtable_t and their pairs; built and probed in
 * common/wh_json_arena.c), and whether install confirmed the running jansson lays objects out so.
 * The members, in jansson's iteration order, are the pairs on the circular list through ordered_list. */
struct wh_json_list_layout {
    struct wh_json_list_layout *prev, *next;
};
struct wh_json_pair_layout {
    struct wh_json_list_layout list, ordered_list;
    size_t hash;
    json_t *value;
    size_t key_len;
    char key[]; /* key_len bytes and a NUL */
};
struct wh_json_bucket_layout {
    struct wh_json_list_layout *first, *last;
};
struct wh_json_object_layout {
    json_t json;
    size_t size;
    struct wh_json_bucket_layout *buckets;
    size_t order;
    struct wh_json_list_layout list, ordered_list;
};
extern int wh_json_object_layout_known;

/* The pair whose ordered_list node is `l` (an object's member when l is not the object's own ordered_list). */
static inline const struct wh_json_pair_layout *wh_json_pair_at(const struct wh_json_list_layout *l)
{
    return (const struct wh_json_pair_layout *)((const char *)l - offsetof(struct wh_json_pair_layout, ordered_list));
}

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

/* A copy of `v` whose objects and arrays are new, made as the two calls
 * above make them (in one bump each inside this thread's open scope), and
 * whose other values are shared when immortal (wh_json_freeze), else copied.
 * Never NULL.  Why: a tree built once (the YAML of a template's constant
 * text, common/wh_yaml_fast.c's pieces) is copied into each request for far
 * less than parsing it again, and the request may change its copy. */
json_t *wh_json_arena_clone(const json_t *v);

/* A tree made ready, once, to be copied into requests: wh_json_mold_make
 * gives what wh_json_arena_clone(tree) gives, in this thread's open scope
 * with one bump and a copy of words (its objects and arrays laid out at
 * wh_json_mold_new, pointers moved as shape templates move them), else by
 * wh_json_arena_clone.  `tree` must outlive the mold and stay unchanged; its
 * scalars should be immortal (wh_json_freeze): they are shared.  Under a
 * sanitizer or valgrind there is no image (the blocks are told part by part
 * by the constructors).  Why: a template's constant text reads as the same
 * YAML every request (common/wh_yaml_fast.c's pieces). */
typedef struct wh_json_mold wh_json_mold;
wh_json_mold *wh_json_mold_new(const json_t *tree);
json_t *wh_json_mold_make(const wh_json_mold *mold);
void wh_json_mold_free(wh_json_mold *mold);

/* Which mold made a value: between wh_json_mold_copies_begin and _end in
 * this thread's open scope, every object or array wh_json_mold_make returns
 * is remembered with its mold, and wh_json_mold_copy_of(v) gives the mold
 * that made v, else NULL.  A copy is pinned while remembered (its count
 * raised by WH_JSON_MOLD_PIN: no release frees it, so no other value can
 * come to have its address); _end (or the scope's end) takes the pins off
 * and forgets them.  Up to 512 copies are remembered per begin.  Why: a
 * walk over a tree holding copies can reuse what it learnt of the mold's
 * tree the first time (handlers/inject/wh_inject_shape.c), provided the
 * copy is still what the mold made (the walk's caller knows: nothing edits
 * the copies between the begin and the walk). */
#define WH_JSON_MOLD_PIN ((size_t)1 << 40)
void wh_json_mold_copies_begin(void);
const wh_json_mold *wh_json_mold_copy_of(const json_t *v);
void wh_json_mold_copies_end(void);

/* A bit a user of molds keeps per mold and key (an address of its own, at
 * least 2-aligned), e.g. a type check's verdict on the mold's tree as a
 * value of a type: read with wh_json_mold_note (0: none noted yet), noted
 * with wh_json_mold_set_note, by any thread, without a lock; a few keys per
 * mold (more are not noted).  The bit must be a function of the tree and
 * the key: two threads noting it at once note the same. */
int wh_json_mold_note(const wh_json_mold *mold, const void *key, unsigned *bit);
void wh_json_mold_set_note(const wh_json_mold *mold, const void *key, unsigned bit);

/* Reading a container without a call per member, when install confirmed
 * jansson's layout: the
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

/* A snapshot of the members of `object` in jansson's order (a walk may then
 * delete or replace the member it is at): in buf when at most `cap`, else in
 * a block put in *heap for the caller to free (*heap is NULL otherwise), or,
 * with heap NULL, none: NULL.  *n receives how many (0 for a non-object).
 * Read through the layout when install confirmed it, else through jansson's
 * iteration (wh_json_members_slow).  For the walks that read every member:
 * the Go type check, the merge, the Go JSON writer. */
wh_json_member *wh_json_members_slow(const json_t *object, wh_json_member *buf, size_t cap, wh_json_member **heap,
                                     size_t *n);
static inline __attribute__((always_inline)) wh_json_member *
wh_json_members(const json_t *object, wh_json_member *buf, size_t cap, wh_json_member **heap, size_t *n)
{
    if (heap != NULL)
        *heap = NULL;
    if ((*n = wh_json_object_members(object, buf, cap)) <= cap)
        return buf;
    return wh_json_members_slow(object, buf, cap, heap, n);
}

/* json_object_getn(object, key, len): the member `key` (len bytes) of
 * `object`, NULL when it has none or is not an object; found through jansson's
 * layout when install confirmed it (the key's hash from a per-thread memo of
 * recent keys, then its bucket), else by jansson's call.  Why: jansson's
 * lookup costs ~70 instructions and a review makes hundreds of them
 * (handlers/inject's accessors, the merge's merge keys). */
json_t *wh_json_getn(const json_t *object, const char *key, size_t len);

/* The same for a NUL-terminated key. */
static inline json_t *wh_json_get(const json_t *object, const char *key)
{
    return wh_json_getn(object, key, strlen(key));
}

/* Step out of this thread's scope (returns it, NULL when none) to build
 * something that outlives the request, e.g. a lazily made shared value;
 * nothing of the scope may be freed meanwhile.  Then resume it. */
wh_json_arena *wh_json_arena_pause(void);
void wh_json_arena_resume(wh_json_arena *a);

/* Keep something a request borrows from until its scope ends: fn(arg) runs
 * when this thread's open scope ends, after its values are gone (in the
 * reverse order of the calls).  Returns 0 when no scope is open (the caller
 * then still owns what it meant to hand over).  Why: a request's trees share
 * immortal values of, e.g., a revision (below) by pointer, without a
 * reference, and are encoded after the handler returns; the revision must
 * outlive them (handlers/inject/wh_inject_pipeline.c). */
int wh_json_arena_defer(void (*fn)(void *), void *arg);

/* Immortal values.  jansson's json_incref and json_decref leave a value
 * whose refcount is (size_t)-1 alone (its true/false/null are such), so a
 * tree made immortal is shared into requests' trees with no reference
 * counting at all: no atomic traffic between threads, and a request tree
 * dropped whole (wh_json_arena_drop) leaves no count behind.
 * wh_json_freeze makes every node of `root` reachable from it immortal,
 * recording each node's count in *record (a new record when NULL); nodes
 * already immortal are left as they are (and not recorded: they belong to
 * whoever froze them).  Freeze a tree once it is complete and before it is
 * shared with other threads; never change it afterwards.  The walk recurses
 * at most `max_depth` levels below `root` (trees may come from the cluster):
 * deeper, it stops with WH_E_LIMIT ("nesting deeper than N levels", as the
 * YAML loader words it), and what it froze so far stays in *record: thaw it
 * as usual.
 * wh_json_thaw restores the counts recorded (then the owner releases its
 * references as usual) and frees the record; NULL is fine.  The owner calls
 * it only once nothing else uses the trees (e.g. wh_inject_revision's last
 * reference gone).  A count recorded is given back as it was, so a
 * reference taken before the freeze must be released before it or after
 * the thaw (a decref in between is lost: a leak), and one taken while frozen
 * (not counted) before the thaw. */
typedef struct wh_json_frozen wh_json_frozen;
wh_code wh_json_freeze(json_t *root, int max_depth, wh_json_frozen **record, wh_err *err);
void wh_json_thaw(wh_json_frozen *record);

#endif
