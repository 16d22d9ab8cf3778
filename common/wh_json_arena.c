/*
 * wh_json_arena.c - the per-request bump arena behind jansson (see the header
 * for why and for the rules).
 *
 * jansson's free hook is given only a pointer, so a pointer is recognised as
 * ours by address: it lies inside one of the open scope's chunks (few: they
 * double in size).  Anything else, and everything outside a scope, is plain
 * malloc/free.  A free of the newest block gives its space back, which
 * catches the common "build a temporary, drop it" pattern.  The JSON reader's
 * strings (common/wh_json.c) are made here directly, in jansson's own string
 * layout, which install checks against the jansson it runs with.
 * The lifetime half: trees dropped whole at the end of a request, immortal
 * values that longer-lived owners (a revision: handlers/inject/
 * wh_inject_revision_load.c) share into them, and calls deferred to the
 * scope's end that keep those owners alive until then.
 * Under valgrind and ASan the arena tells the tool which bytes are blocks
 * (tests/common/test_json_arena.c: asan_sees_the_arena_blocks), so the
 * sanitizer builds and fuzzers (tests/fuzz/README.md) run these paths too.
 */
#include "wh_alloc.h"
#include "wh_json_arena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define WH_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WH_ARENA_ASAN 1
#endif
#endif
#ifndef WH_ARENA_ASAN
#define WH_ARENA_ASAN 0
#endif
#define WH_ARENA_ENABLED 1

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define WH_ARENA_VALGRIND 1
#endif
#endif
#ifndef WH_ARENA_VALGRIND
#define VALGRIND_CREATE_MEMPOOL(pool, rz, zeroed) ((void)0)
#define VALGRIND_DESTROY_MEMPOOL(pool) ((void)0)
#define VALGRIND_MEMPOOL_ALLOC(pool, addr, size) ((void)0)
#define VALGRIND_MEMPOOL_FREE(pool, addr) ((void)0)
#define VALGRIND_MAKE_MEM_NOACCESS(addr, size) ((void)0)
#define RUNNING_ON_VALGRIND 0
#define VALGRIND_GET_VBITS(addr, bits, n) 0
#endif

/* Whether the process runs under valgrind's memcheck, asked once at install:
 * the per-block client requests (a dozen instructions each, two per jansson
 * value) are then skipped natively, and under callgrind or cachegrind too,
 * which ignore them: instruction counts there are the native path's. */
static int on_valgrind;

/* memcheck answers its own requests (1: the bits were read); other tools and
 * a native run answer 0. */
static int memcheck_running(void)
{
    char probe = 0, bits;

    return RUNNING_ON_VALGRIND != 0 && VALGRIND_GET_VBITS(&probe, &bits, 1) == 1;
}

#define ALIGN 16
#define FIRST_CHUNK ((size_t)64 << 10)
#define MAX_CHUNK ((size_t)1 << 20)
#define BIG_BLOCK ((size_t)8 << 10) /* larger blocks go to malloc */

struct wh_json_arena_chunk {
    struct wh_json_arena_chunk *next;
    size_t size; /* bytes of data after the header */
    _Alignas(ALIGN) char data[];
};

static _Thread_local wh_json_arena *current;
static int kept_key_failed; /* pthread_key_create failed: no chunk is kept */

#if WH_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

/* Under AddressSanitizer the arena runs as in production, and ASan is told what it hands out, as valgrind is above:
 * a chunk is poisoned when made; a block is unpoisoned when carved (REDZONE poisoned bytes follow each, so a write
 * past its end is caught), and poisoned again when freed (a later read is a use after free).  A freed block's space is
 * never given back before the scope ends, as ASan's quarantine would not.  Freeing an address inside a chunk that is
 * not a live block (a double free, a pointer into a block) aborts with both stacks.  The live blocks and their sizes
 * are kept per thread in an open-addressing table (the free hook is given only a pointer). */
#define REDZONE 16

struct asan_blocks {
    uintptr_t *at; /* 0: an empty slot */
    size_t *size;
    size_t cap, count; /* cap: 0 or a power of two */
};
static _Thread_local struct asan_blocks asan_live;

static size_t asan_slot(const struct asan_blocks *t, uintptr_t p)
{
    size_t i = (size_t)((p >> 3) * 0x9e3779b97f4a7c15u) & (t->cap - 1);

    while (t->at[i] != 0 && t->at[i] != p)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static void asan_grow_table(struct asan_blocks *t)
{
    struct asan_blocks bigger = {.cap = t->cap ? t->cap * 2 : 1024};

    bigger.at = wh_calloc(bigger.cap, sizeof(*bigger.at));
    bigger.size = wh_malloc(bigger.cap * sizeof(*bigger.size));
    for (size_t i = 0; i < t->cap; i++)
        if (t->at[i] != 0) {
            size_t j = asan_slot(&bigger, t->at[i]);
            bigger.at[j] = t->at[i];
            bigger.size[j] = t->size[i];
        }
    bigger.count = t->count;
    free(t->at);
    free(t->size);
    *t = bigger;
}

/* `size` bytes at p, carved in the scope, may now be used. */
static void asan_made(const void *p, size_t size)
{
    struct asan_blocks *t = &asan_live;
    size_t i;

    if (2 * (t->count + 1) > t->cap)
        asan_grow_table(t);
    i = asan_slot(t, (uintptr_t)p);
    if (t->at[i] == 0)
        t->count++;
    t->at[i] = (uintptr_t)p;
    t->size[i] = size;
    ASAN_UNPOISON_MEMORY_REGION(p, size);
}

/* The block at p, inside a chunk of the scope, is freed: poisoned and forgotten (backward-shift deletion keeps every
 * other block reachable from its home slot). */
static void asan_freed(const void *p)
{
    struct asan_blocks *t = &asan_live;
    size_t i, j, home;

    if (t->cap == 0 || t->at[i = asan_slot(t, (uintptr_t)p)] == 0) {
        fprintf(stderr, "wh_json_arena: free of %p, which is no live block of the scope (double free?)\n", p);
        __asan_describe_address((void *)p);
        __sanitizer_print_stack_trace();
        abort();
    }
    ASAN_POISON_MEMORY_REGION(p, (t->size[i] + 7) & ~(size_t)7); /* (a part's last granule is its own) */
    t->at[i] = 0;
    t->count--;
    for (j = (i + 1) & (t->cap - 1); t->at[j] != 0; j = (j + 1) & (t->cap - 1)) {
        home = (size_t)((t->at[j] >> 3) * 0x9e3779b97f4a7c15u) & (t->cap - 1);
        if (((j - home) & (t->cap - 1)) >= ((j - i) & (t->cap - 1))) {
            t->at[i] = t->at[j];
            t->size[i] = t->size[j];
            t->at[j] = 0;
            i = j;
        }
    }
}

#define ASAN_MADE(p, size) asan_made((p), (size))
#define ASAN_FREED(p) asan_freed(p)
#else
#define REDZONE 0
#define ASAN_MADE(p, size) ((void)0)
#define ASAN_FREED(p) ((void)0)
#define ASAN_POISON_MEMORY_REGION(p, size) ((void)0)
#define ASAN_UNPOISON_MEMORY_REGION(p, size) ((void)0)
#endif

/* A call of wh_json_arena_defer, run when the scope ends. */
struct wh_json_arena_deferred {
    struct wh_json_arena_deferred *next;
    void (*fn)(void *);
    void *arg;
};

/* jansson's string value as jansson lays it out (wh_json_arena.h's struct wh_json_string_layout): the reader's
 * strings are made here in one bump instead of through json_stringn_nocheck's two allocations and copy.  Used only
 * when LAYOUT_STRING is known: jansson older than 2.15 at run time, and a string made by jansson reads back through
 * this layout as jansson's own accessors read it (wh_json_arena_install checks). */
#define jansson_string wh_json_string_layout
int wh_json_string_layout_known;

/* The layouts confirmed at install (a bit each); a scope may use them when jansson allocates through it. */
enum { LAYOUT_STRING = 1, LAYOUT_ARRAY = 2, LAYOUT_OBJECT = 4 };
static unsigned layouts_known;

static void seed_keys(void);
static unsigned probe_layouts(void);

/* A new chunk big enough for `need` bytes; 0 when it would go over the
 * scope's budget (the caller then falls back to malloc). */
static int grow(wh_json_arena *a, size_t need)
{
    size_t size = a->chunks == NULL ? FIRST_CHUNK : a->chunks->size * 2;
    struct wh_json_arena_chunk *c;

    if (size > MAX_CHUNK)
        size = MAX_CHUNK;
    if (size < need)
        size = need;
    if (a->reserved + size > WH_JSON_ARENA_MAX)
        return 0;
    c = wh_malloc(sizeof(*c) + size);
    VALGRIND_MAKE_MEM_NOACCESS(c->data, size);
    ASAN_POISON_MEMORY_REGION(c->data, size);
    c->size = size;
    c->next = a->chunks;
    a->chunks = c;
    a->reserved += size;
    a->ptr = c->data;
    a->end = c->data + size;
    a->last = NULL;
    return 1;
}

/* A block above BIG_BLOCK: malloc'd, and remembered until freed so that the
 * scope's end frees it if nothing did (wh_json_arena_drop). */
static void *big_block(wh_json_arena *a, size_t size)
{
    void *p = wh_malloc(size);

    if (a->nbig == a->big_cap) {
        a->big_cap = a->big_cap ? a->big_cap * 2 : 16;
        a->big = wh_realloc(a->big, a->big_cap * sizeof(*a->big));
    }
    a->big[a->nbig++] = p;
    return p;
}

/* The cases the bump below does not take: no scope, size 0, a large block,
 * a full chunk (a new one, or malloc once over budget). */
static __attribute__((noinline)) void *arena_malloc_slow(wh_json_arena *a, size_t size)
{
    size_t n = ((size + (ALIGN - 1)) & ~(size_t)(ALIGN - 1)) + REDZONE;
    char *p;

    if (a == NULL || n == 0)
        return wh_malloc(size);
    if (size > BIG_BLOCK)
        return big_block(a, size);
    if (!grow(a, n)) {
        a->over_budget = 1;
        return wh_malloc(size);
    }
    p = a->ptr;
    a->ptr += n;
    a->last = p;
    if (on_valgrind)
        VALGRIND_MEMPOOL_ALLOC(a, p, size);
    ASAN_MADE(p, size);
    return p;
}

/* Out of line: the client request's register use would otherwise give the
 * fast path below a stack frame. */
static __attribute__((noinline)) void *valgrind_block(wh_json_arena *a, void *p, size_t size)
{
    VALGRIND_MEMPOOL_ALLOC(a, p, size);
    return p;
}

/* Nearly every call: a bump in the newest chunk, no stack frame.  (n - 1
 * wraps for size 0, which goes the slow way.) */
static void *arena_malloc(size_t size)
{
    wh_json_arena *a = current;
    size_t n = ((size + (ALIGN - 1)) & ~(size_t)(ALIGN - 1)) + REDZONE;
    char *p;

    if (a == NULL || size > BIG_BLOCK || n - 1 >= (size_t)(a->end - a->ptr))
        return arena_malloc_slow(a, size);
    p = a->ptr;
    a->ptr = p + n;
    a->last = p;
    if (on_valgrind)
        return valgrind_block(a, p, size);
    ASAN_MADE(p, size);
    return p;
}

static int in_chunk(const struct wh_json_arena_chunk *c, const char *p)
{
    return (uintptr_t)p >= (uintptr_t)c->data && (uintptr_t)p < (uintptr_t)c->data + c->size;
}

/* Whether p is a block of the scope.  Frees come in runs from one chunk (a
 * tree dropped at the end of a request was built in order), so the chunk of
 * the previous answer is asked first: a big review's frees walked ~3 chunks
 * each. */
static int owned(wh_json_arena *a, const char *p)
{
    if (a->hint != NULL && in_chunk(a->hint, p))
        return 1;
    for (struct wh_json_arena_chunk *c = a->chunks; c != NULL; c = c->next)
        if (in_chunk(c, p)) {
            a->hint = c;
            return 1;
        }
    return 0;
}

static void arena_free(void *ptr)
{
    wh_json_arena *a = current;

    if (ptr == NULL)
        return;
    if (a == NULL || !owned(a, ptr)) {
        /* a large block of the scope (searched from the end: blocks are
         * usually freed soon after they are made), or one made outside it */
        for (size_t i = a != NULL ? a->nbig : 0; i-- > 0;)
            if (a->big[i] == ptr) {
                a->big[i] = a->big[--a->nbig];
                break;
            }
        free(ptr);
        return;
    }
    if (on_valgrind)
        VALGRIND_MEMPOOL_FREE(a, ptr);
    ASAN_FREED(ptr);
    if (ptr == a->last && !WH_ARENA_ASAN) {
        a->ptr = a->last;
        a->last = NULL;
    }
}

/* WH_JSON_ARENA_CHECK=1: wh_json_arena_drop checks what it drops. */
static int checking;

void wh_json_arena_install(void)
{
    const char *check = getenv("WH_JSON_ARENA_CHECK");

    checking = check != NULL && strcmp(check, "1") == 0;
    on_valgrind = memcheck_running();
    seed_keys();
    if (WH_ARENA_ENABLED) {
        json_set_alloc_funcs(arena_malloc, arena_free);
        layouts_known = probe_layouts();
        wh_json_string_layout_known = (layouts_known & LAYOUT_STRING) != 0;
        wh_json_object_layout_known = (layouts_known & LAYOUT_OBJECT) != 0;
    }
}

/* The largest chunk (up to KEPT_CHUNK_MAX) a thread's last scope held, kept for its next scope: a review then
 * starts with its room at hand instead of a malloc and free of 64 KB or more each (and a first string made by
 * jansson's calls while there is no chunk).  Freed when the thread ends (kept_key's destructor). */
#define KEPT_CHUNK_MAX ((size_t)256 << 10)
static _Thread_local struct wh_json_arena_chunk *kept;
static _Thread_local int kept_registered;
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

struct copies;
static _Thread_local struct copies *copies; /* see wh_json_mold_copies_begin */

/* kept_key's destructor: what a thread held for its next review (the kept chunk, the copies table) goes with it. */
static void free_kept(void *unused)
{
    (void)unused;
    free(kept);
    kept = NULL;
    free(copies);
    copies = NULL;
}

static void make_kept_key(void)
{
    if (pthread_key_create(&kept_key, free_kept) != 0)
        kept_key_failed = 1;
}

/* c becomes the scope's only chunk, all of it free. */
static void use_chunk(wh_json_arena *a, struct wh_json_arena_chunk *c)
{
    VALGRIND_MAKE_MEM_NOACCESS(c->data, c->size);
    ASAN_POISON_MEMORY_REGION(c->data, c->size);
    c->next = NULL;
    a->chunks = c;
    a->reserved = c->size;
    a->ptr = c->data;
    a->end = c->data + c->size;
    a->last = NULL;
}

/* 1 when this thread's end will run free_kept (registered on first use), else 0. */
static int thread_end_frees(void)
{
    if (!kept_registered) {
        pthread_once(&kept_once, make_kept_key);
        if (kept_key_failed || pthread_setspecific(kept_key, &kept) != 0)
            return 0;
        kept_registered = 1;
    }
    return 1;
}

/* Keep c for this thread's next scope (see kept), when the thread's end can free it. */
static int keep_chunk(struct wh_json_arena_chunk *c)
{
    if (!thread_end_frees())
        return 0;
    free(kept);
    kept = c;
    return 1;
}

/* No chunk and no large block: how a scope starts and how its end leaves it. */
static void arena_clear(wh_json_arena *a)
{
    a->chunks = NULL;
    a->ptr = a->end = a->last = NULL;
    a->reserved = 0;
    a->hint = NULL;
    a->big = NULL;
    a->nbig = a->big_cap = 0;
}

void wh_json_arena_begin(wh_json_arena *a)
{
    arena_clear(a);
    if (kept != NULL) {
        use_chunk(a, kept);
        kept = NULL;
    }
    a->over_budget = 0;
    a->deferred = NULL;
    {
        json_malloc_t m;
        json_free_t f;
        json_get_alloc_funcs(&m, &f);
        a->layouts = WH_ARENA_ENABLED && m == arena_malloc && f == arena_free ? layouts_known : 0;
    }
    VALGRIND_CREATE_MEMPOOL(a, 0, 0);
    current = a;
}

#if WH_ARENA_ASAN
/* The scope's blocks leave the table (a probe's scope may end inside another: the other's stay). */
static void asan_forget_scope(wh_json_arena *a)
{
    struct asan_blocks old = asan_live;

    memset(&asan_live, 0, sizeof(asan_live));
    for (size_t i = 0; i < old.cap; i++)
        if (old.at[i] != 0 && !owned(a, (const char *)old.at[i]))
            asan_made((const void *)old.at[i], old.size[i]);
    free(old.at);
    free(old.size);
}
#endif

void wh_json_arena_end(wh_json_arena *a)
{
    struct wh_json_arena_chunk *c, *next, *best = NULL;

    if (current == a)
        wh_json_mold_copies_end(); /* the pins off while their blocks are there */
    if (current == a)
        current = NULL;
    VALGRIND_DESTROY_MEMPOOL(a);
#if WH_ARENA_ASAN
    asan_forget_scope(a);
#endif
    for (c = a->chunks; c != NULL; c = c->next)
        if (c->size <= KEPT_CHUNK_MAX && (best == NULL || c->size > best->size))
            best = c;
    for (c = a->chunks; c != NULL; c = next) {
        next = c->next;
        ASAN_UNPOISON_MEMORY_REGION(c->data, c->size);
        if (c != best || !keep_chunk(c))
            free(c);
    }
    for (size_t i = 0; i < a->nbig; i++)
        free(a->big[i]);
    free(a->big);
    arena_clear(a);
    while (a->deferred != NULL) {
        struct wh_json_arena_deferred *d = a->deferred;
        a->deferred = d->next;
        d->fn(d->arg);
        free(d);
    }
}

/* --- dropping whole trees ------------------------------------------------ */

/* A block of the scope: in a chunk or a large block made in it. */
static int scope_block(wh_json_arena *a, const void *p)
{
    if (owned(a, p))
        return 1;
    for (size_t i = 0; i < a->nbig; i++)
        if (a->big[i] == p)
            return 1;
    return 0;
}

struct bounded {
    char text[160];
    size_t len;
};

static int bounded_put(const char *buffer, size_t size, void *data)
{
    struct bounded *b = data;
    size_t n = size < sizeof(b->text) - 1 - b->len ? size : sizeof(b->text) - 1 - b->len;

    memcpy(b->text + b->len, buffer, n);
    b->len += n;
    b->text[b->len] = '\0';
    return 0;
}

/* Skipping the walk is sound only when jansson allocated through this
 * arena: a process (or test) that never installed it, or installed other
 * allocators since (common/wh_alloc.c does), gets an ordinary decref. */
static int dropping_skips_the_walk(void)
{
    json_malloc_t m;
    json_free_t f;

    json_get_alloc_funcs(&m, &f);
    return WH_ARENA_ENABLED && m == arena_malloc && current != NULL && !current->over_budget;
}

/* Every node of `v` is immortal or a block of the scope; else 0, with
 * `path` naming where the walk found the first other node (keys and
 * indexes) and *bad that node. */
static int check_tree(wh_json_arena *a, const json_t *v, char *path, size_t len, size_t cap, const json_t **bad)
{
    const char *key;
    json_t *item;
    size_t i;
    int ok = 1;

    if (v->refcount == (size_t)-1)
        return 1; /* immortal, and everything under it (wh_json_freeze) */
    if (!scope_block(a, v)) {
        *bad = v;
        return 0;
    }
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            int n = snprintf(path + len, cap - len, "/%s", key);
            if (!(ok = check_tree(a, item, path, n > 0 && (size_t)n < cap - len ? len + (size_t)n : len, cap, bad)))
                break;
            path[len] = '\0';
        }
    } else if (json_is_array(v)) {
        json_array_foreach((json_t *)v, i, item)
        {
            int n = snprintf(path + len, cap - len, "/%zu", i);
            if (!(ok = check_tree(a, item, path, n > 0 && (size_t)n < cap - len ? len + (size_t)n : len, cap, bad)))
                break;
            path[len] = '\0';
        }
    }
    return ok;
}

int wh_json_arena_check(const json_t *value, char *why, size_t size)
{
    char path[256] = "";
    const json_t *bad = NULL;
    struct bounded b = {.len = 0};

    if (!dropping_skips_the_walk() || value == NULL || check_tree(current, value, path, 0, sizeof(path), &bad))
        return 1;
    b.text[0] = '\0';
    json_dump_callback(bad, bounded_put, &b, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(why, size, "%s (refcount %zu) is neither made in the request's scope nor immortal: %s",
             path[0] != '\0' ? path : "/", (size_t)bad->refcount, b.text);
    return 0;
}

void wh_json_arena_drop(json_t *value)
{
    char why[512];

    if (!dropping_skips_the_walk()) {
        json_decref(value);
        return;
    }
    if (checking && !wh_json_arena_check(value, why, sizeof(why))) {
        fprintf(stderr, "wh_json_arena_drop: %s\n", why);
        abort();
    }
}

int wh_json_arena_defer(void (*fn)(void *), void *arg)
{
    struct wh_json_arena_deferred *d;

    if (current == NULL)
        return 0;
    d = wh_malloc(sizeof(*d));
    d->fn = fn;
    d->arg = arg;
    d->next = current->deferred;
    current->deferred = d;
    return 1;
}

/* --- immortal values ------------------------------------------------------ */

struct wh_json_frozen {
    size_t n, cap;
    struct {
        json_t *value;
        size_t refcount;
    } * e;
};

/* Freeze `v`, `depth` levels below the root, and what it holds: the recursion
 * goes no deeper than `max_depth`. */
static wh_code freeze_node(json_t *v, int depth, int max_depth, wh_json_frozen **record, wh_err *err)
{
    wh_json_frozen *r;
    const char *key;
    json_t *item;
    size_t i;
    wh_code rc = WH_OK;

    if (v == NULL || v->refcount == (size_t)-1)
        return WH_OK;
    if (depth > max_depth)
        return wh_err_set(err, WH_E_LIMIT, "nesting deeper than %d levels", max_depth);
    if ((r = *record) == NULL)
        r = *record = wh_calloc(1, sizeof(*r));
    if (r->n == r->cap) {
        r->cap = r->cap != 0 ? r->cap * 2 : 64;
        r->e = wh_realloc(r->e, r->cap * sizeof(*r->e));
    }
    r->e[r->n].value = v;
    r->e[r->n].refcount = v->refcount;
    r->n++;
    v->refcount = (size_t)-1;
    if (json_is_object(v)) {
        json_object_foreach(v, key,
                            item) if ((rc = freeze_node(item, depth + 1, max_depth, record, err)) != WH_OK) break;
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item) if ((rc = freeze_node(item, depth + 1, max_depth, record, err)) != WH_OK) break;
    }
    return rc;
}

wh_code wh_json_freeze(json_t *root, int max_depth, wh_json_frozen **record, wh_err *err)
{
    return freeze_node(root, 0, max_depth, record, err);
}

void wh_json_thaw(wh_json_frozen *record)
{
    if (record == NULL)
        return;
    for (size_t i = 0; i < record->n; i++)
        record->e[i].value->refcount = record->e[i].refcount;
    free(record->e);
    free(record);
}

/* memcpy for the short texts of keys and values, without a call: overlapping words up to 16 bytes. */
static inline void copy_text(char *dst, const char *src, size_t len)
{
    if (len >= 8 && len <= 16) {
        uint64_t x, y;
        memcpy(&x, src, 8);
        memcpy(&y, src + len - 8, 8);
        memcpy(dst, &x, 8);
        memcpy(dst + len - 8, &y, 8);
    } else if (len >= 4 && len < 8) {
        uint32_t x, y;
        memcpy(&x, src, 4);
        memcpy(&y, src + len - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + len - 4, &y, 4);
    } else if (len > 16) {
        memcpy(dst, src, len);
    } else {
        for (size_t i = 0; i < len; i++)
            dst[i] = src[i];
    }
}

json_t *wh_json_arena_string(const char *text, size_t len)
{
    wh_json_arena *a = current;
    const size_t head = (sizeof(struct jansson_string) + (ALIGN - 1)) & ~(size_t)(ALIGN - 1);
    size_t n = head + ((len + 1 + (ALIGN - 1)) & ~(size_t)(ALIGN - 1));
    struct jansson_string *js;
    char *value;

    if (a == NULL || !(a->layouts & LAYOUT_STRING) || len > BIG_BLOCK || n + REDZONE > (size_t)(a->end - a->ptr))
        return NULL; /* jansson makes it (and grows the chunk when it is full) */
    js = (struct jansson_string *)a->ptr;
    value = a->ptr + head;
    a->ptr += n + REDZONE;
    a->last = (char *)js; /* jansson frees the text, then js: freeing js gives both back */
    if (on_valgrind) {
        VALGRIND_MEMPOOL_ALLOC(a, js, sizeof(*js));
        VALGRIND_MEMPOOL_ALLOC(a, value, len + 1);
    }
    ASAN_MADE(js, sizeof(*js));
    ASAN_MADE(value, len + 1);
    copy_text(value, text, len);
    value[len] = '\0';
    js->json.type = JSON_STRING;
    js->json.refcount = 1;
    js->value = value;
    js->length = len;
    return &js->json;
}

wh_json_arena *wh_json_arena_pause(void)
{
    wh_json_arena *a = current;

    current = NULL;
    return a;
}

void wh_json_arena_resume(wh_json_arena *a)
{
    current = a;
}

/* --- values made directly in jansson's layouts ----------------------------------------------------------------- */

/* jansson 2.14's array and object as it lays them out (json_array_t; json_object_t with its hashtable_t, buckets and
 * pairs).  An object's pairs sit in two circular lists through the table's two heads: `list`, where the pairs of a
 * bucket form the run bucket->first .. bucket->last (an empty bucket points both ends at the head), and
 * `ordered_list`, in insertion order, which iteration follows.  A key is filed under lookup3's hashlittle of its
 * bytes with the process-wide seed (hashtable_seed), in bucket hash & (2^order - 1). */
struct jansson_array {
    json_t json;
    size_t size, entries;
    json_t **table;
};

#define jansson_list wh_json_list_layout /* (wh_json_arena.h: readers inline their members) */
#define jansson_pair wh_json_pair_layout
#define jansson_bucket wh_json_bucket_layout
#define jansson_object wh_json_object_layout
int wh_json_object_layout_known;

#define ROUND(n, to) (((n) + ((to)-1)) & ~(size_t)((to)-1))
#define FIRST_ORDER 1 /* the smallest table made: 2 buckets (jansson starts at 8, and grows any) */

/* The seed this process hashes keys with (jansson's hashtable_seed once install set it), 0 when unknown. */
static uint32_t key_seed;

/* jansson takes its seed from the first json_object_seed() or json_object(): give it one first (random, so the
 * hash-flooding protection stays), to be able to hash as it does.  Whether it took is checked by the object probe. */
static void seed_keys(void)
{
    uint32_t seed = 0;

    if (key_seed != 0)
        return;
    while (seed == 0)
        if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
            return; /* jansson seeds itself; objects are then made by its calls */
    json_object_seed(seed);
    key_seed = seed;
}

static inline uint32_t rot32(uint32_t x, unsigned k)
{
    return x << k | x >> (32 - k);
}

/* Four bytes as the little-endian number lookup3's hashlittle reads. */
static inline uint32_t le32(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* The last 1..4 bytes of a key as a zero-padded little-endian word. */
static inline uint32_t tail32(const unsigned char *p, size_t n)
{
    switch (n) {
    case 4:
        return le32(p);
    case 3:
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    case 2:
        return (uint32_t)p[0] | (uint32_t)p[1] << 8;
    default:
        return p[0];
    }
}

/* Bob Jenkins' lookup3 hashlittle (public domain) of `len` bytes with `seed`: 12 bytes at a time mixed into three
 * words, the last 1..12 bytes zero-padded and finished; no bytes at all give the initial word.  Bit-exact with
 * jansson's hash of a key (tests/common/test_json_arena.c compares on keys of every length 0..64). */
static inline uint32_t key_hash(const char *key, size_t len, uint32_t seed)
{
    const unsigned char *k = (const unsigned char *)key;
    uint32_t a, b, c;

    a = b = c = 0xdeadbeefu + (uint32_t)len + seed;
    if (len == 0)
        return c;
    for (; len > 12; len -= 12, k += 12) {
        a += le32(k);
        b += le32(k + 4);
        c += le32(k + 8);
        a -= c, a ^= rot32(c, 4), c += b;
        b -= a, b ^= rot32(a, 6), a += c;
        c -= b, c ^= rot32(b, 8), b += a;
        a -= c, a ^= rot32(c, 16), c += b;
        b -= a, b ^= rot32(a, 19), a += c;
        c -= b, c ^= rot32(b, 4), b += a;
    }
    if (len > 8) {
        a += le32(k);
        b += le32(k + 4);
        c += tail32(k + 8, len - 8);
    } else if (len > 4) {
        a += le32(k);
        b += tail32(k + 4, len - 4);
    } else {
        a += tail32(k, len);
    }
    c ^= b, c -= rot32(b, 14);
    a ^= c, a -= rot32(c, 11);
    b ^= a, b -= rot32(a, 25);
    c ^= b, c -= rot32(b, 16);
    a ^= c, a -= rot32(c, 4);
    b ^= a, b -= rot32(a, 14);
    c ^= b, c -= rot32(b, 24);
    return c;
}

/* Keys repeat (every container has a "name", every env entry a "value"): the hashes of recent keys of up to 16 bytes
 * by their bytes, per thread (the seed never changes once set).  An entry holds the key's length + 1 (0: empty) and
 * its bytes as two words that, with the length, are the key. */
struct key_memo {
    uint64_t lo, hi;
    size_t len1;
    uint32_t hash;
};

#define MEMO_BITS 8
static _Thread_local struct key_memo memo[1 << MEMO_BITS];

static inline uint64_t load64(const char *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t load32(const char *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

/* A key of up to 16 bytes as two words that, with its length, are the key. */
static inline void key_words(const char *key, size_t len, uint64_t *lo, uint64_t *hi)
{
    const unsigned char *k = (const unsigned char *)key;

    *hi = 0;
    if (len >= 8) { /* two words that overlap cover every byte */
        *lo = load64(key);
        *hi = load64(key + len - 8);
    } else if (len >= 4) {
        *lo = load32(key) | (uint64_t)load32(key + len - 4) << 32;
    } else if (len > 0) { /* bytes 0, len / 2 and len - 1: every byte of 1 to 3 */
        *lo = k[0] | (uint64_t)k[len / 2] << 8 | (uint64_t)k[len - 1] << 16;
    } else {
        *lo = 0;
    }
}

/* Keys of 17 to 32 bytes ("allowPrivilegeEscalation", "terminationGracePeriodSeconds") as four words that, with the
 * length, are the key (the first and last 16 bytes overlap), and their memo. */
struct long_key_memo {
    uint64_t w[4];
    size_t len1;
    uint32_t hash;
};

#define LONG_MEMO_BITS 7
static _Thread_local struct long_key_memo long_memo[1 << LONG_MEMO_BITS];

static __attribute__((noinline)) uint32_t long_key_hash_memo(const char *key, size_t len)
{
    const uint64_t w0 = load64(key), w1 = load64(key + 8), w2 = load64(key + len - 16), w3 = load64(key + len - 8);
    struct long_key_memo *m = &long_memo[(((w0 ^ w3) + len) * 0x9e3779b97f4a7c15u ^ (w1 + w2)) * 0x9e3779b97f4a7c15u >>
                                         (64 - LONG_MEMO_BITS)];

    if (m->len1 != len + 1 || ((m->w[0] ^ w0) | (m->w[1] ^ w1) | (m->w[2] ^ w2) | (m->w[3] ^ w3)) != 0) {
        m->w[0] = w0, m->w[1] = w1, m->w[2] = w2, m->w[3] = w3;
        m->len1 = len + 1;
        m->hash = key_hash(key, len, key_seed);
    }
    return m->hash;
}

/* key_hash with the process's seed, from the memo when the key was seen lately. */
static inline uint32_t key_hash_memo(const char *key, size_t len)
{
    uint64_t lo, hi;
    struct key_memo *m;

    if (len > 16)
        return len <= 32 ? long_key_hash_memo(key, len) : key_hash(key, len, key_seed);
    key_words(key, len, &lo, &hi);
    m = &memo[((lo ^ (hi + len) * 0x9e3779b97f4a7c15u) * 0x9e3779b97f4a7c15u) >> (64 - MEMO_BITS)];
    if (m->len1 != len + 1 || m->lo != lo || m->hi != hi) {
        m->lo = lo;
        m->hi = hi;
        m->len1 = len + 1;
        m->hash = key_hash(key, len, key_seed);
    }
    return m->hash;
}

/* `n` bytes (a multiple of ALIGN) in the scope as one block for a constructor, a new chunk when the newest is full;
 * NULL over the budget (the constructor then asks jansson, which goes to malloc). */
static char *bump(wh_json_arena *a, size_t n)
{
    char *p;

    if (n + REDZONE > (size_t)(a->end - a->ptr) && !grow(a, n + REDZONE))
        return NULL;
    p = a->ptr;
    a->ptr = p + n + REDZONE;
    a->last = p; /* jansson frees a value's parts before the value: freeing it gives the whole block back */
    ASAN_UNPOISON_MEMORY_REGION(p, n); /* (ASan: the constructors write it whole; each part is told as made) */
    return p;
}

/* A part of a constructor's block that jansson frees on its own (table, buckets, pairs): valgrind must know it. */
static inline void part(wh_json_arena *a, const void *p, size_t n)
{
    if (on_valgrind)
        VALGRIND_MEMPOOL_ALLOC(a, p, n);
    ASAN_MADE(p, n);
}

static json_t *array_by_jansson(json_t *const *items, size_t n)
{
    json_t *array = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(array, items[i]); /* cannot fail: an array, a value, allocation aborts */
    return array;
}

json_t *wh_json_arena_array(json_t *const *items, size_t n)
{
    wh_json_arena *a = current;
    const size_t head = ROUND(sizeof(struct jansson_array), ALIGN);
    const size_t slots = n > 0 ? n : 1; /* the table is freed on its own: it must not be empty */
    struct jansson_array *array;
    char *p;

    if (a == NULL || !(a->layouts & LAYOUT_ARRAY) || n > MAX_CHUNK ||
        (p = bump(a, head + ROUND(slots * sizeof(json_t *), ALIGN))) == NULL)
        return array_by_jansson(items, n);
    array = (struct jansson_array *)p;
    part(a, array, sizeof(*array));
    part(a, p + head, slots * sizeof(json_t *));
    array->json.type = JSON_ARRAY;
    array->json.refcount = 1;
    array->size = slots;
    array->entries = n;
    array->table = (json_t **)(p + head);
    if (n > 0)
        memcpy(array->table, items, n * sizeof(*items));
    return &array->json;
}

static json_t *object_by_jansson(const wh_json_key *keys, json_t *const *values, size_t n, int reject_duplicates)
{
    json_t *object = json_object();

    for (size_t i = 0; i < n; i++) {
        if (reject_duplicates && json_object_getn(object, keys[i].text, keys[i].len) != NULL) {
            while (i < n)
                json_decref(values[i++]);
            json_decref(object);
            return NULL;
        }
        json_object_setn_new_nocheck(object, keys[i].text, keys[i].len, values[i]); /* cannot fail, as above */
    }
    return object;
}

static inline size_t pair_bytes(size_t key_len)
{
    return ROUND(offsetof(struct jansson_pair, key) + key_len + 1, sizeof(void *));
}

/* `node` put before `at` in a circular list (at the end when `at` is its head). */
static inline void list_insert(struct jansson_list *at, struct jansson_list *node)
{
    node->next = at;
    node->prev = at->prev;
    at->prev->next = node;
    at->prev = node;
}

/* The pair of `key` in bucket b, NULL when none: jansson's own search (same hash, length, bytes).  (A bucket is
 * empty when its first pair is the head: a pair's list node never is.) */
static inline struct jansson_pair *bucket_find(struct jansson_object *o, const struct jansson_bucket *b,
                                               const char *key, size_t len, size_t hash)
{
    if (b->first == &o->list)
        return NULL;
    for (struct jansson_list *l = b->first;; l = l->next) {
        struct jansson_pair *pair = (struct jansson_pair *)l; /* list is a pair's first member */
        if (pair->hash == hash && pair->key_len == len && memcmp(pair->key, key, len) == 0)
            return pair;
        if (l == b->last)
            return NULL;
    }
}

/* A key met again in the object being made (its bucket holds pairs already): the earlier pair takes the value, or with
 * reject_duplicates everything is given back (returns 1).  Out of line: most keys land in an empty bucket. */
static __attribute__((noinline)) int repeated_key(struct jansson_object *o, struct jansson_pair *pair,
                                                  json_t *const *values, size_t i, size_t n, int reject_duplicates)
{
    if (!reject_duplicates) {
        json_decref(pair->value); /* the last value, in the first place */
        pair->value = values[i];
        return 0;
    }
    while (i < n)
        json_decref(values[i++]);
    json_decref(&o->json); /* a complete object (the caller closed its lists): jansson takes it apart */
    return 1;
}

/* Long lists hold objects of one shape: the same few keys in the same order (every env entry {name, value}, every
 * port, every volume mount).  The block the construction below made for the last object of a shape is kept per
 * thread as a template, its pointers as offsets from its start; another object of that shape is the template copied
 * to its own block with the block's address added to each pointer slot, and its values set: the same bytes the
 * construction makes, without hashing keys, searching buckets or linking lists.  Shapes of 1 to SHAPE_KEYS distinct
 * keys of up to 16 bytes each; SHAPE_SLOTS of them at a time (a rendered sidecar has some 40 shapes: 128 slots keep
 * most of them from one request to the next, in 150 KB per thread), filed by their keys.  A shape becomes a template
 * when it is asked for twice in a row in its slot: one-off objects pay no copy.  Under memcheck objects are built part
 * by part (it is told of each). */
#define SHAPE_KEYS 4
#define SHAPE_BYTES 512 /* the largest block: an object of 4 keys of 16 bytes takes 464 */
#define SHAPE_BITS 7
#define SHAPE_SLOTS (1 << SHAPE_BITS)

struct shape {
    size_t n, bytes;                              /* its keys; its block's size (0: an empty slot) */
    uint64_t sign, missed;                        /* its shape_sign; that of the last other shape asked for here */
    size_t len[SHAPE_KEYS];                       /* the keys, as key_words gives them */
    uint64_t lo[SHAPE_KEYS], hi[SHAPE_KEYS];      /* .. */
    size_t value_at[SHAPE_KEYS];                  /* where pair i's value is in the block */
    _Alignas(16) uint64_t words[SHAPE_BYTES / 8]; /* the block, pointers as offsets from its start */
    _Alignas(16) uint64_t moves[SHAPE_BYTES / 8]; /* all ones in each pointer slot */
};

static _Thread_local struct shape shapes[SHAPE_SLOTS];

/* Where the shape of keys[0..n) (1 <= n <= SHAPE_KEYS) is filed: a number from its count and the lengths of its first,
 * middle and last keys, whose top bits are its slot.  Cheap, for every object made; never 0.  (Shapes with the same
 * number are told apart by shape_is.) */
static inline uint64_t shape_sign(const wh_json_key *keys, size_t n)
{
    return ((n | keys[0].len << 3 | keys[n / 2].len << 13 | keys[n - 1].len << 23) + 1) * 0x9e3779b97f4a7c15u;
}

/* Whether s is the shape of keys[0..n). */
static inline int shape_is(const struct shape *s, const wh_json_key *keys, size_t n)
{
    uint64_t lo, hi;

    if (s->n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s->len[i] != keys[i].len) /* (a shape's keys are 16 bytes at most) */
            return 0;
        key_words(keys[i].text, keys[i].len, &lo, &hi);
        if (((s->lo[i] ^ lo) | (s->hi[i] ^ hi)) != 0)
            return 0;
    }
    return 1;
}

static json_t *object_build(wh_json_arena *a, const wh_json_key *keys, json_t *const *values, size_t n,
                            int reject_duplicates, struct shape *shape, uint64_t sign);

#if WH_ARENA_ASAN
/* The parts of an object copied from a template, told to ASan as object_build tells them (jansson frees each). */
static void asan_object_parts(const struct jansson_object *o)
{
    ASAN_MADE(o, sizeof(*o));
    ASAN_MADE(o->buckets, ((size_t)1 << o->order) * sizeof(struct jansson_bucket));
    for (const struct jansson_list *l = o->ordered_list.next; l != &o->ordered_list; l = l->next) {
        const struct jansson_pair *pair = wh_json_pair_at(l);
        ASAN_MADE(pair, offsetof(struct jansson_pair, key) + pair->key_len + 1);
    }
}
#endif

/* The object of keys[0..n) and `values` in a block of its own, from the template of shape s when that is theirs.  Out
 * of line, as object_build: the caller's tests then need no stack frame. */
static __attribute__((noinline)) json_t *shape_object(wh_json_arena *a, const struct shape *s, const wh_json_key *keys,
                                                      json_t *const *values, size_t n, int reject_duplicates)
{
    char *p;
    size_t i = 0;

    if (!shape_is(s, keys, n)) /* another shape of the same number */
        return object_build(a, keys, values, n, reject_duplicates, NULL, 0);
    if ((p = bump(a, s->bytes)) == NULL) /* over the budget */
        return object_by_jansson(keys, values, n, reject_duplicates);
#if defined(__SSE2__)
    {
        const __m128i base = _mm_set1_epi64x((long long)(uintptr_t)p), *w = (const __m128i *)s->words,
                      *m = (const __m128i *)s->moves;
        __m128i *out = (__m128i *)p;
#define MOVE(k) _mm_store_si128(out + (k), _mm_add_epi64(w[k], _mm_and_si128(m[k], base)))
        for (n = s->bytes / 16; i + 4 <= n; i += 4)
            MOVE(i), MOVE(i + 1), MOVE(i + 2), MOVE(i + 3);
        switch (n - i) {
        case 3:
            MOVE(i + 2);
            /* fallthrough */
        case 2:
            MOVE(i + 1);
            /* fallthrough */
        case 1:
            MOVE(i);
            break;
        default:
            break;
        }
#undef MOVE
    }
#else
    for (n = s->bytes / 8; i < n; i++) {
        uint64_t w = s->words[i] + (s->moves[i] & (uint64_t)(uintptr_t)p);
        memcpy(p + 8 * i, &w, 8);
    }
#endif
    for (i = 0, n = s->n; i < n; i++)
        memcpy(p + s->value_at[i], &values[i], sizeof(values[i]));
#if WH_ARENA_ASAN
    asan_object_parts((const struct jansson_object *)p);
#endif
    return (json_t *)p;
}

/* A pointer slot of the template: the offset of what it points at (inside the block). */
static inline void shape_pointer(struct shape *s, const char *block, const void *slot)
{
    size_t at = (size_t)((const char *)slot - block) / 8;
    const char *target;

    memcpy(&target, slot, sizeof(target));
    s->words[at] = (uint64_t)(target - block);
    s->moves[at] = ~(uint64_t)0;
}

/* Keep object o, just made from n distinct keys in one block of `bytes`, as the template of its shape in s. */
static void shape_record(struct shape *s, uint64_t sign, const struct jansson_object *o, const wh_json_key *keys,
                         size_t n, size_t bytes)
{
    const char *block = (const char *)o;
    const struct jansson_list *l;
    size_t i;

    for (i = 0; i < n; i++)
        if (keys[i].len > 16)
            return;
    s->n = 0; /* incomplete until the end */
    memcpy(s->words, block, bytes);
    memset(s->moves, 0, bytes);
    shape_pointer(s, block, &o->buckets);
    shape_pointer(s, block, &o->list.prev);
    shape_pointer(s, block, &o->list.next);
    shape_pointer(s, block, &o->ordered_list.prev);
    shape_pointer(s, block, &o->ordered_list.next);
    for (i = 0; i < ((size_t)1 << o->order); i++) {
        shape_pointer(s, block, &o->buckets[i].first);
        shape_pointer(s, block, &o->buckets[i].last);
    }
    for (i = 0, l = o->ordered_list.next; i < n; i++, l = l->next) {
        const struct jansson_pair *pair =
            (const struct jansson_pair *)((const char *)l - offsetof(struct jansson_pair, ordered_list));
        shape_pointer(s, block, &pair->list.prev);
        shape_pointer(s, block, &pair->list.next);
        shape_pointer(s, block, &pair->ordered_list.prev);
        shape_pointer(s, block, &pair->ordered_list.next);
        s->value_at[i] = (size_t)((const char *)&pair->value - block);
        s->words[s->value_at[i] / 8] = 0;
        s->len[i] = keys[i].len;
        key_words(keys[i].text, keys[i].len, &s->lo[i], &s->hi[i]);
    }
    s->bytes = bytes;
    s->sign = sign;
    s->n = n;
}

/* wh_json_arena_object's construction, out of line: most objects are of a shape met lately.  `shape`, when not NULL,
 * is the slot for the shape of keys[0..n) (numbered `sign`), where the object made is kept as its template. */
static __attribute__((noinline)) json_t *object_build(wh_json_arena *a, const wh_json_key *keys, json_t *const *values,
                                                      size_t n, int reject_duplicates, struct shape *shape,
                                                      uint64_t sign)
{
    const size_t head = ROUND(sizeof(struct jansson_object), ALIGN);
    size_t order = FIRST_ORDER, nbuckets, bytes, size = 0, i;
    struct jansson_object *o;
    struct jansson_bucket *buckets;
    struct jansson_list *all, *ordered, *all_last, *ordered_last;
    char *p, *next;

    if (a == NULL || !(a->layouts & LAYOUT_OBJECT) || n > MAX_CHUNK)
        return object_by_jansson(keys, values, n, reject_duplicates);
    while (((size_t)1 << order) < n) /* no more pairs than buckets, as jansson keeps it */
        order++;
    nbuckets = (size_t)1 << order;
    bytes = head + nbuckets * sizeof(struct jansson_bucket);
    for (i = 0; i < n; i++)
        bytes += pair_bytes(keys[i].len);
    if ((p = bump(a, ROUND(bytes, ALIGN))) == NULL)
        return object_by_jansson(keys, values, n, reject_duplicates);
    o = (struct jansson_object *)p;
    buckets = (struct jansson_bucket *)(p + head);
    part(a, o, sizeof(*o));
    part(a, buckets, nbuckets * sizeof(struct jansson_bucket));
    o->json.type = JSON_OBJECT;
    o->json.refcount = 1;
    o->order = order;
    o->buckets = buckets;
    all = all_last = &o->list;
    ordered = ordered_last = &o->ordered_list;
#if defined(__SSE2__)
    { /* every bucket empty: both ends at the head, 2 or more of them (16-byte aligned) */
        const __m128i empty = _mm_set1_epi64x((long long)(uintptr_t)all);
        for (i = 0; i < nbuckets; i += 2) {
            _mm_store_si128((__m128i *)&buckets[i], empty);
            _mm_store_si128((__m128i *)&buckets[i + 1], empty);
        }
    }
#else
    for (i = 0; i < nbuckets; i++)
        buckets[i].first = buckets[i].last = all;
#endif
    /* Both lists are built forwards with their tails in hand and closed at the end: the same links as jansson's
     * inserts leave (a pair into an empty bucket goes to the end of `list`, into a bucket with pairs before its
     * first one; every pair to the end of `ordered_list`). */
    next = (char *)(buckets + nbuckets);
    for (i = 0; i < n; i++) {
        const char *key = keys[i].text;
        const size_t len = keys[i].len, hash = key_hash_memo(key, len);
        struct jansson_bucket *b = &buckets[hash & (nbuckets - 1)];
        struct jansson_pair *pair;
        if (b->first != all) {
            if ((pair = bucket_find(o, b, key, len, hash)) != NULL) {
                all_last->next = all, all->prev = all_last;
                ordered_last->next = ordered, ordered->prev = ordered_last;
                o->size = size;
                if (repeated_key(o, pair, values, i, n, reject_duplicates))
                    return NULL;
                continue;
            }
            pair = (struct jansson_pair *)next;
            part(a, pair, offsetof(struct jansson_pair, key) + len + 1);
            list_insert(b->first, &pair->list);
            b->first = &pair->list;
        } else {
            pair = (struct jansson_pair *)next;
            part(a, pair, offsetof(struct jansson_pair, key) + len + 1);
            pair->list.prev = all_last;
            all_last->next = &pair->list;
            all_last = &pair->list;
            b->first = b->last = &pair->list;
        }
        next += pair_bytes(len);
        pair->hash = hash;
        pair->value = values[i];
        pair->key_len = len;
        copy_text(pair->key, key, len);
        pair->key[len] = '\0';
        pair->ordered_list.prev = ordered_last;
        ordered_last->next = &pair->ordered_list;
        ordered_last = &pair->ordered_list;
        size++;
    }
    all_last->next = all, all->prev = all_last;
    ordered_last->next = ordered, ordered->prev = ordered_last;
    o->size = size;
    if (shape != NULL && size == n && ROUND(bytes, ALIGN) <= SHAPE_BYTES)
        shape_record(shape, sign, o, keys, n, ROUND(bytes, ALIGN));
    return &o->json;
}

json_t *wh_json_arena_object(const wh_json_key *keys, json_t *const *values, size_t n, int reject_duplicates)
{
    wh_json_arena *a = current;
    struct shape *shape;
    uint64_t sign;

    if (a == NULL || n - 1 > SHAPE_KEYS - 1 || !(a->layouts & LAYOUT_OBJECT) || on_valgrind)
        return object_build(a, keys, values, n, reject_duplicates, NULL, 0); /* (memcheck: it tells of each part) */
    sign = shape_sign(keys, n);
    shape = &shapes[sign >> (64 - SHAPE_BITS)];
    if (shape->sign == sign)
        return shape_object(a, shape, keys, values, n, reject_duplicates);
    if (shape->missed != sign) { /* a shape met once: no template yet */
        shape->missed = sign;
        return object_build(a, keys, values, n, reject_duplicates, NULL, 0);
    }
    return object_build(a, keys, values, n, reject_duplicates, shape, sign);
}

/* --- the install-time checks that the layouts above are the running jansson's ---------------------------------- */

static int probe_string_layout(void)
{
    json_t *s = json_stringn_nocheck("probe", 5);
    const struct jansson_string *js = (const struct jansson_string *)s;
    int known = s != NULL && s->type == JSON_STRING && s->refcount == 1 && js->value == json_string_value(s) &&
                js->length == json_string_length(s) && js->length == 5;

    json_decref(s);
    return known;
}

/* An array jansson made reads back through the layout, and one made in it reads, grows and shrinks through
 * jansson's calls as jansson's own does. */
static int probe_array_layout(void)
{
    json_t *mine, *theirs = json_array(), *items[2];
    const struct jansson_array *ja = (const struct jansson_array *)theirs;
    int known = 1;

    for (int i = 0; i < 3; i++)
        json_array_append_new(theirs, json_integer(i));
    known = ja->entries == 3 && ja->size >= 3;
    for (size_t i = 0; known && i < 3; i++)
        known = ja->table[i] == json_array_get(theirs, i);
    items[0] = json_integer(0);
    items[1] = json_integer(1);
    mine = wh_json_arena_array(items, 2);
    known = known && json_array_size(mine) == 2 && json_array_get(mine, 1) == items[1] &&
            json_array_append_new(mine, json_integer(9)) == 0 && json_array_insert_new(mine, 2, json_integer(2)) == 0 &&
            json_array_remove(mine, 3) == 0 && json_equal(mine, theirs);
    json_decref(mine);
    json_decref(theirs);
    return known;
}

/* An object jansson made reads back through the layout (pairs, hashes, buckets, order), and one made in the layout
 * is read, changed and grown (through a rehash) by jansson's calls as jansson's own object is. */
static int probe_object_layout(void)
{
    enum { KEYS = 13 };
    char text[96];
    json_t *theirs = json_object(), *mine, *values[KEYS + 1];
    wh_json_key keys[KEYS + 1];
    const struct jansson_object *jo = (const struct jansson_object *)theirs;
    const struct jansson_list *l;
    size_t i, seen = 0;
    int known = 1;
    void *it;

    for (i = 0; i < sizeof(text); i++)
        text[i] = (char)('a' + i * 7 % 26);
    for (i = 0; i < KEYS; i++) { /* lengths 0, 5, .., 60: last blocks of 1 to 12 bytes */
        keys[i].text = text + i;
        keys[i].len = 5 * i;
        values[i] = json_integer((json_int_t)i);
        json_object_setn_new_nocheck(theirs, keys[i].text, keys[i].len, json_integer((json_int_t)i));
    }
    keys[KEYS] = keys[1]; /* given again: replaces the value in the first place */
    values[KEYS] = json_integer(1);
    known = jo->size == KEYS && ((size_t)1 << jo->order) >= KEYS;
    for (l = jo->ordered_list.next; known && l != &jo->ordered_list; l = l->next, seen++) {
        const struct jansson_pair *pair =
            (const struct jansson_pair *)((const char *)l - offsetof(struct jansson_pair, ordered_list));
        known = seen < KEYS && pair->key_len == keys[seen].len &&
                memcmp(pair->key, keys[seen].text, pair->key_len) == 0 &&
                pair->hash == key_hash(pair->key, pair->key_len, key_seed) &&
                pair->value == json_object_getn(theirs, pair->key, pair->key_len) &&
                bucket_find((struct jansson_object *)jo, &jo->buckets[pair->hash & (((size_t)1 << jo->order) - 1)],
                            pair->key, pair->key_len, pair->hash) == pair;
    }
    known = known && seen == KEYS;
    mine = wh_json_arena_object(keys, values, KEYS + 1, 0);
    known = known && json_equal(mine, theirs) && json_object_size(mine) == KEYS;
    for (i = 0, it = json_object_iter(mine); known && i < KEYS; i++, it = json_object_iter_next(mine, it))
        known = it != NULL && json_object_iter_key_len(it) == keys[i].len &&
                memcmp(json_object_iter_key(it), keys[i].text, keys[i].len) == 0 &&
                json_integer_value(json_object_iter_value(it)) == (json_int_t)i;
    known = known && it == NULL;
    for (i = 0; known && i < KEYS; i++) /* change every other value, delete a third, add as many: a rehash */
        known = json_object_setn_new_nocheck(mine, keys[i].text, keys[i].len, json_integer(-1)) == 0 &&
                json_object_setn_new_nocheck(theirs, keys[i].text, keys[i].len, json_integer(-1)) == 0 &&
                (i % 3 != 0 || (json_object_deln(mine, keys[i].text, keys[i].len) == 0 &&
                                json_object_deln(theirs, keys[i].text, keys[i].len) == 0)) &&
                json_object_setn_new_nocheck(mine, keys[i].text + 1, keys[i].len + 3, json_integer(2)) == 0 &&
                json_object_setn_new_nocheck(theirs, keys[i].text + 1, keys[i].len + 3, json_integer(2)) == 0;
    known = known && json_object_size(mine) > KEYS && json_equal(mine, theirs);
    for (it = json_object_iter(mine), l = jo->ordered_list.next; known && it != NULL;
         it = json_object_iter_next(mine, it), l = l->next) /* the same order as jansson's own */
        known =
            l != &jo->ordered_list &&
            strcmp(
                json_object_iter_key(it),
                ((const struct jansson_pair *)((const char *)l - offsetof(struct jansson_pair, ordered_list)))->key) ==
                0;
    json_decref(mine);
    json_decref(theirs);
    return known;
}

/* Which layouts this jansson has, tried in a scope of their own (and the objects' only when the key seed is
 * ours).  Only jansson 2.7 .. 2.14 are known (objects: 2.14, the first with key lengths in its pairs). */
static unsigned probe_layouts(void)
{
    wh_json_arena probe, *outer = current;
    unsigned known = 0;

    if (jansson_version_cmp(2, 7, 0) < 0 || jansson_version_cmp(2, 15, 0) >= 0)
        return 0;
    wh_json_arena_begin(&probe);
    probe.layouts = LAYOUT_STRING | LAYOUT_ARRAY | LAYOUT_OBJECT; /* to try them */
    if (probe_string_layout())
        known |= LAYOUT_STRING;
    if (probe_array_layout())
        known |= LAYOUT_ARRAY;
    if (jansson_version_cmp(2, 14, 0) >= 0 && key_seed != 0 && probe_object_layout())
        known |= LAYOUT_OBJECT;
    wh_json_arena_end(&probe);
    current = outer;
    return known;
}

/* --- reading jansson's containers through the layouts -------------------------------------------------------- */

json_t *const *wh_json_array_items(const json_t *array, size_t *n)
{
    const struct jansson_array *ja = (const struct jansson_array *)array;

    *n = 0;
    if (!(layouts_known & LAYOUT_ARRAY) || !json_is_array(array))
        return NULL;
    *n = ja->entries;
    return ja->table;
}

/* wh_json_members past its fast path: *n is what wh_json_object_members
 * said (more than cap, or (size_t)-1 when the layout is unknown). */
wh_json_member *wh_json_members_slow(const json_t *object, wh_json_member *buf, size_t cap, wh_json_member **heap,
                                     size_t *n)
{
    wh_json_member *out = buf;
    size_t have = *n != (size_t)-1 ? *n : json_object_size(object);

    if (have > cap) {
        if (heap == NULL)
            return NULL;
        out = *heap = wh_malloc(have * sizeof(*out));
        if (*n != (size_t)-1) { /* the layout, only more than cap */
            *n = wh_json_object_members(object, out, have);
            return out;
        }
    }
    *n = 0;
    for (void *it = json_object_iter((json_t *)object); it != NULL; it = json_object_iter_next((json_t *)object, it))
        out[(*n)++] =
            (wh_json_member){json_object_iter_key(it), json_object_iter_key_len(it), json_object_iter_value(it)};
    return out;
}

size_t wh_json_object_members(const json_t *object, wh_json_member *out, size_t cap)
{
    const struct jansson_object *jo = (const struct jansson_object *)object;
    const struct jansson_list *l;
    size_t n = 0;

    if (!(layouts_known & LAYOUT_OBJECT) || !json_is_object(object))
        return (size_t)-1;
    if (jo->size > cap)
        return jo->size;
    for (l = jo->ordered_list.next; l != &jo->ordered_list; l = l->next, n++) {
        const struct jansson_pair *pair =
            (const struct jansson_pair *)((const char *)l - offsetof(struct jansson_pair, ordered_list));
        out[n] = (wh_json_member){pair->key, pair->key_len, pair->value};
    }
    return n;
}

json_t *wh_json_getn(const json_t *object, const char *key, size_t len)
{
    const struct jansson_object *jo = (const struct jansson_object *)object;
    size_t hash;

    if (!(layouts_known & LAYOUT_OBJECT) || !json_is_object(object))
        return json_object_getn(object, key, len);
    if (jo->size == 0)
        return NULL;
    hash = key_hash_memo(key, len);
    struct jansson_pair *pair =
        bucket_find((struct jansson_object *)jo, &jo->buckets[hash & (((size_t)1 << jo->order) - 1)], key, len, hash);
    return pair != NULL ? pair->value : NULL;
}

json_t *wh_json_arena_clone(const json_t *v)
{
    enum { STACK = 16 };
    json_t *made[STACK], **vals = made, *out = NULL;
    size_t n, i;

    if (v->refcount == (size_t)-1 && !json_is_object(v) && !json_is_array(v))
        return (json_t *)v; /* an immortal scalar (true, false, null among them): shared as it is */
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        wh_json_member buf[STACK], *heap, *m = wh_json_members(v, buf, STACK, &heap, &n);
        wh_json_key keys[STACK], *k = n > STACK ? wh_malloc(n * sizeof(*k)) : keys;
        if (n > STACK)
            vals = wh_malloc(n * sizeof(*vals));
        for (i = 0; i < n; i++) {
            k[i] = (wh_json_key){m[i].key, m[i].len};
            vals[i] = wh_json_arena_clone(m[i].value);
        }
        out = wh_json_arena_object(n > 0 ? k : NULL, n > 0 ? vals : NULL, n, 0); /* distinct keys: never NULL */
        if (k != keys)
            free(k);
        free(heap);
        break;
    }
    case JSON_ARRAY: {
        json_t *const *items = wh_json_array_items(v, &n);
        if (items == NULL)
            n = json_array_size(v);
        if (n > STACK)
            vals = wh_malloc(n * sizeof(*vals));
        for (i = 0; i < n; i++)
            vals[i] = wh_json_arena_clone(items != NULL ? items[i] : json_array_get(v, i));
        out = wh_json_arena_array(n > 0 ? vals : NULL, n);
        break;
    }
    case JSON_STRING: {
        const char *s = wh_json_string_text(v, &n);
        if ((out = wh_json_arena_string(s, n)) == NULL)
            out = json_stringn_nocheck(s, n);
        break;
    }
    case JSON_INTEGER:
        out = json_integer(json_integer_value(v));
        break;
    case JSON_REAL:
        out = json_real(json_real_value(v));
        break;
    default: /* true, false, null: jansson's own, immortal (above) */
        out = (json_t *)v;
        break;
    }
    if (vals != made)
        free(vals);
    return out;
}

/* A tree's objects and arrays as one image in jansson's layouts (wh_json_mold_new), copied into a request with one
 * bump and its pointers moved, as shape_object copies one object: the image's words, pointers into it as offsets from
 * its start, and all ones in `moves` at those; pointers to its (immortal) scalars as they are. */
#define MOLD_NOTES 4
struct wh_json_mold {
    const json_t *tree;          /* the tree: its copy the slow way (no scope, a sanitizer, valgrind, over budget) */
    size_t bytes, root;          /* the image's size (a multiple of 16); where the root is in it */
    uint64_t *words, *moves;     /* NULL: no image (the layouts unknown, a node made otherwise) */
    uintptr_t notes[MOLD_NOTES]; /* wh_json_mold_note's: key | bit, 0 when free; read and claimed atomically */
};

/* A container of the tree being molded: where the construction made it, its extent, where it goes in the image. */
struct mold_box {
    const char *at;
    size_t len, off;
};

struct mold_build {
    struct mold_box *box;
    size_t n, cap, bytes;
    int ok;
};

/* The extent of a container made by the constructors above (one block each). */
static size_t box_len(const json_t *v)
{
    if (json_is_object(v)) {
        const struct jansson_object *o = (const struct jansson_object *)v;
        size_t bytes =
            ROUND(sizeof(struct jansson_object), ALIGN) + ((size_t)1 << o->order) * sizeof(struct jansson_bucket);
        for (const struct jansson_list *l = o->ordered_list.next; l != &o->ordered_list; l = l->next)
            bytes += pair_bytes(wh_json_pair_at(l)->key_len);
        return ROUND(bytes, ALIGN);
    }
    const struct jansson_array *arr = (const struct jansson_array *)v;
    return ROUND(sizeof(struct jansson_array), ALIGN) + ROUND(arr->size * sizeof(json_t *), ALIGN);
}

static void mold_collect(struct mold_build *b, const json_t *v)
{
    size_t n;
    if (!json_is_object(v) && !json_is_array(v))
        return;
    WH_GROW(b->box, b->n, b->cap, 16);
    b->box[b->n++] = (struct mold_box){(const char *)v, box_len(v), b->bytes};
    b->bytes += b->box[b->n - 1].len;
    if (json_is_object(v)) {
        const struct jansson_object *o = (const struct jansson_object *)v;
        for (const struct jansson_list *l = o->ordered_list.next; l != &o->ordered_list; l = l->next)
            mold_collect(b, wh_json_pair_at(l)->value);
    } else {
        json_t *const *items = wh_json_array_items(v, &n);
        for (size_t i = 0; i < n; i++)
            mold_collect(b, items[i]);
    }
}

/* Record the pointer at `slot` (inside box `self`) in the image: into a box, as an offset to move; else as it is. */
static void mold_pointer(struct mold_build *b, struct wh_json_mold *m, const struct mold_box *self, const void *slot)
{
    const char *target;
    size_t at = self->off + (size_t)((const char *)slot - self->at);

    memcpy(&target, slot, sizeof(target));
    for (size_t i = 0; i < b->n; i++)
        if (target >= b->box[i].at && target < b->box[i].at + b->box[i].len) {
            m->words[at / 8] = (uint64_t)(b->box[i].off + (size_t)(target - b->box[i].at));
            m->moves[at / 8] = ~(uint64_t)0;
            return;
        }
    if ((uintptr_t)target - (uintptr_t)self->at < self->len) /* (cannot be: a box holds itself) */
        b->ok = 0;
}

/* The image of box i: its words, and its pointers recorded; 0 when one of its parts lies outside its extent. */
static void mold_box_image(struct mold_build *b, struct wh_json_mold *m, const struct mold_box *x)
{
    const json_t *v = (const json_t *)x->at;

    memcpy((char *)m->words + x->off, x->at, x->len);
    if (json_is_object(v)) {
        const struct jansson_object *o = (const struct jansson_object *)v;
        size_t nb = (size_t)1 << o->order, n = 0;
        if ((const char *)o->buckets < x->at || (const char *)(o->buckets + nb) > x->at + x->len)
            b->ok = 0;
        mold_pointer(b, m, x, &o->buckets);
        mold_pointer(b, m, x, &o->list.prev);
        mold_pointer(b, m, x, &o->list.next);
        mold_pointer(b, m, x, &o->ordered_list.prev);
        mold_pointer(b, m, x, &o->ordered_list.next);
        for (size_t i = 0; b->ok && i < nb; i++) {
            mold_pointer(b, m, x, &o->buckets[i].first);
            mold_pointer(b, m, x, &o->buckets[i].last);
        }
        for (const struct jansson_list *l = o->ordered_list.next; b->ok && l != &o->ordered_list; l = l->next) {
            const struct jansson_pair *pair = wh_json_pair_at(l);
            if ((const char *)pair < x->at || (const char *)pair->key + pair->key_len + 1 > x->at + x->len) {
                b->ok = 0;
                break;
            }
            mold_pointer(b, m, x, &pair->list.prev);
            mold_pointer(b, m, x, &pair->list.next);
            mold_pointer(b, m, x, &pair->ordered_list.prev);
            mold_pointer(b, m, x, &pair->ordered_list.next);
            mold_pointer(b, m, x, &pair->value);
            n++;
        }
        if (n != o->size)
            b->ok = 0;
    } else {
        const struct jansson_array *arr = (const struct jansson_array *)v;
        if ((const char *)arr->table != x->at + ROUND(sizeof(*arr), ALIGN) || arr->entries > arr->size)
            b->ok = 0;
        mold_pointer(b, m, x, &arr->table);
        for (size_t i = 0; b->ok && i < arr->entries; i++)
            mold_pointer(b, m, x, &arr->table[i]);
    }
}

wh_json_mold *wh_json_mold_new(const json_t *tree)
{
    wh_json_mold *m = wh_calloc(1, sizeof(*m));
    wh_json_arena *outer, scope;
    struct mold_build b = {NULL, 0, 0, 0, 1};
    json_t *copy;

    m->tree = tree;
    if (!json_is_object(tree) && !json_is_array(tree))
        return m; /* a scalar: shared (immortal) or copied, no image */
    if ((layouts_known & (LAYOUT_OBJECT | LAYOUT_ARRAY)) != (LAYOUT_OBJECT | LAYOUT_ARRAY) || WH_ARENA_ASAN ||
        on_valgrind)
        return m;
    /* the constructors lay the copy out in a scope of its own: the image is its containers, end to end */
    outer = wh_json_arena_pause();
    wh_json_arena_begin(&scope);
    if ((scope.layouts & (LAYOUT_OBJECT | LAYOUT_ARRAY)) != (LAYOUT_OBJECT | LAYOUT_ARRAY))
        b.ok = 0; /* jansson's allocator is not the arena's: its own calls would make the copy */
    copy = wh_json_arena_clone(tree);
    mold_collect(&b, copy);
    m->bytes = b.bytes;
    m->words = aligned_alloc(16, b.bytes);
    m->moves = aligned_alloc(16, b.bytes);
    if (m->words == NULL || m->moves == NULL)
        wh_oom(b.bytes);
    memset(m->moves, 0, b.bytes);
    for (size_t i = 0; b.ok && i < b.n; i++)
        mold_box_image(&b, m, &b.box[i]);
    m->root = 0;
    json_decref(copy);
    wh_json_arena_end(&scope);
    wh_json_arena_resume(outer);
    free(b.box);
    if (!b.ok) {
        free(m->words);
        free(m->moves);
        m->words = m->moves = NULL;
    }
    return m;
}

/* ---- the copies of molds, remembered (wh_json_mold_copies_begin) ----
 * Per thread: an open-addressed table from a copy's address to its mold,
 * and the copies in the order made (to unpin and clear them).  A copy is
 * pinned while remembered: WH_JSON_MOLD_PIN added to its count, so no
 * release frees it and no other value can come to have its address. */
#define COPIES_SLOTS 1024 /* a power of two; at most half of it is used */
struct copies {
    int on;
    size_t n;
    json_t *made[COPIES_SLOTS / 2];
    struct {
        const json_t *node;
        const wh_json_mold *mold;
    } slot[COPIES_SLOTS];
};

static size_t copies_slot(const json_t *v)
{
    return (size_t)(((uint64_t)(uintptr_t)v * 0x9e3779b97f4a7c15ull) >> 40) & (COPIES_SLOTS - 1);
}

static void copies_add(struct copies *c, json_t *v, const wh_json_mold *m)
{
    size_t at;

    if (c->n == COPIES_SLOTS / 2)
        return; /* not remembered: asked, it was made otherwise */
    __atomic_add_fetch(&v->refcount, WH_JSON_MOLD_PIN, __ATOMIC_RELAXED);
    c->made[c->n++] = v;
    for (at = copies_slot(v); c->slot[at].node != NULL; at = (at + 1) & (COPIES_SLOTS - 1))
        ;
    c->slot[at].node = v;
    c->slot[at].mold = m;
}

void wh_json_mold_copies_begin(void)
{
    if (current == NULL)
        return;
    if (copies == NULL) { /* once per thread, kept for its life and freed at its end (free_kept) */
        if (!thread_end_frees())
            return; /* nothing remembered: shape walks every copy */
        copies = calloc(1, sizeof(*copies));
        if (copies == NULL)
            wh_oom(sizeof(*copies));
    }
    wh_json_mold_copies_end(); /* (a begin without an end) */
    copies->on = 1;
}

const wh_json_mold *wh_json_mold_copy_of(const json_t *v)
{
    const struct copies *c = copies;
    size_t at;

    if (c == NULL || c->n == 0)
        return NULL;
    for (at = copies_slot(v); c->slot[at].node != NULL; at = (at + 1) & (COPIES_SLOTS - 1))
        if (c->slot[at].node == v)
            return c->slot[at].mold;
    return NULL;
}

void wh_json_mold_copies_end(void)
{
    struct copies *c = copies;
    size_t i, at;

    if (c == NULL)
        return;
    for (i = 0; i < c->n; i++) {
        json_t *v = c->made[i];
        for (at = copies_slot(v); c->slot[at].node != NULL; at = (at + 1) & (COPIES_SLOTS - 1))
            c->slot[at].node = NULL; /* its probe run: cleared whole */
        /* unpinned with a release of its own: a copy nothing else holds goes the usual way */
        __atomic_sub_fetch(&v->refcount, WH_JSON_MOLD_PIN - 1, __ATOMIC_RELAXED);
        json_decref(v);
    }
    c->n = 0;
    c->on = 0;
}

int wh_json_mold_note(const wh_json_mold *m, const void *key, unsigned *bit)
{
    for (size_t i = 0; i < MOLD_NOTES; i++) {
        uintptr_t n = __atomic_load_n(&m->notes[i], __ATOMIC_ACQUIRE);
        if (n == 0)
            return 0;
        if ((n & ~(uintptr_t)1) == (uintptr_t)key) {
            *bit = (unsigned)(n & 1);
            return 1;
        }
    }
    return 0;
}

void wh_json_mold_set_note(const wh_json_mold *m, const void *key, unsigned bit)
{
    uintptr_t want = (uintptr_t)key | (bit & 1), *notes = (uintptr_t *)m->notes;

    if ((uintptr_t)key & 1)
        return; /* not a key: its bit would be the note's */
    for (size_t i = 0; i < MOLD_NOTES; i++) {
        uintptr_t expect = 0;
        if (__atomic_compare_exchange_n(&notes[i], &expect, want, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE) ||
            (expect & ~(uintptr_t)1) == (uintptr_t)key)
            return; /* claimed, or noted already (by a function of the tree and the key: the same bit) */
    }
}

static json_t *mold_made(const wh_json_mold *m, json_t *v)
{
    if (copies != NULL && copies->on && (json_is_object(v) || json_is_array(v)))
        copies_add(copies, v, m);
    return v;
}

json_t *wh_json_mold_make(const wh_json_mold *m)
{
    wh_json_arena *a = current;
    char *p;
    size_t i = 0, n;

    if (m->words == NULL || a == NULL ||
        (a->layouts & (LAYOUT_OBJECT | LAYOUT_ARRAY)) != (LAYOUT_OBJECT | LAYOUT_ARRAY) ||
        (p = bump(a, m->bytes)) == NULL)
        return mold_made(m, wh_json_arena_clone(m->tree));
    a->last = NULL; /* its parts are freed one by one (and may outlive the root): never the image whole */
#if defined(__SSE2__)
    {
        const __m128i base = _mm_set1_epi64x((long long)(uintptr_t)p), *w = (const __m128i *)(const void *)m->words,
                      *mv = (const __m128i *)(const void *)m->moves;
        __m128i *out = (__m128i *)(void *)p;
        for (n = m->bytes / 16; i < n; i++)
            _mm_store_si128(out + i, _mm_add_epi64(w[i], _mm_and_si128(mv[i], base)));
    }
#else
    for (n = m->bytes / 8; i < n; i++) {
        uint64_t w = m->words[i] + (m->moves[i] & (uint64_t)(uintptr_t)p);
        memcpy(p + 8 * i, &w, 8);
    }
#endif
    return mold_made(m, (json_t *)(p + m->root));
}

void wh_json_mold_free(wh_json_mold *m)
{
    if (m == NULL)
        return;
    free(m->words);
    free(m->moves);
    free(m);
}
