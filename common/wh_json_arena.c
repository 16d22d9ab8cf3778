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
 */
#include "wh_alloc.h"
#include "wh_json_arena.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define WH_ARENA_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WH_ARENA_ENABLED 0
#endif
#endif
#ifndef WH_ARENA_ENABLED
#define WH_ARENA_ENABLED 1
#endif

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
#endif

/* Whether the process runs under valgrind, asked once at install: the
 * per-block client requests (a dozen instructions each, two per jansson
 * value) are then skipped natively. */
static int on_valgrind;

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

/* A call of wh_json_arena_defer, run when the scope ends. */
struct wh_json_arena_deferred {
    struct wh_json_arena_deferred *next;
    void (*fn)(void *);
    void *arg;
};

/* jansson's string value as jansson lays it out (its private json_string_t, the same from 2.7 to 2.14): the reader's
 * strings are made here in one bump instead of through json_stringn_nocheck's two allocations and copy.  Used only
 * when string_layout_known: jansson older than 2.15 at run time, and a string made by jansson reads back through this
 * layout as jansson's own accessors read it (wh_json_arena_install checks). */
struct jansson_string {
    json_t json;
    char *value;
    size_t length;
};

static int string_layout_known;

static int probe_string_layout(void)
{
    json_t *s;
    const struct jansson_string *js;
    int known;

    if (jansson_version_cmp(2, 7, 0) < 0 || jansson_version_cmp(2, 15, 0) >= 0)
        return 0;
    s = json_stringn_nocheck("probe", 5);
    js = (const struct jansson_string *)s;
    known = s != NULL && s->type == JSON_STRING && s->refcount == 1 && js->value == json_string_value(s) &&
            js->length == json_string_length(s) && js->length == 5;
    json_decref(s);
    return known;
}

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
    size_t n = (size + (ALIGN - 1)) & ~(size_t)(ALIGN - 1);
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
    size_t n = (size + (ALIGN - 1)) & ~(size_t)(ALIGN - 1);
    char *p;

    if (a == NULL || size > BIG_BLOCK || n - 1 >= (size_t)(a->end - a->ptr))
        return arena_malloc_slow(a, size);
    p = a->ptr;
    a->ptr = p + n;
    a->last = p;
    if (on_valgrind)
        return valgrind_block(a, p, size);
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
    if (ptr == a->last) {
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
    on_valgrind = RUNNING_ON_VALGRIND != 0;
    string_layout_known = probe_string_layout();
    if (WH_ARENA_ENABLED)
        json_set_alloc_funcs(arena_malloc, arena_free);
}

void wh_json_arena_begin(wh_json_arena *a)
{
    a->chunks = NULL;
    a->ptr = a->end = a->last = NULL;
    a->reserved = 0;
    a->hint = NULL;
    a->big = NULL;
    a->nbig = a->big_cap = 0;
    a->over_budget = 0;
    a->deferred = NULL;
    {
        json_malloc_t m;
        json_free_t f;
        json_get_alloc_funcs(&m, &f);
        a->strings = WH_ARENA_ENABLED && string_layout_known && m == arena_malloc && f == arena_free;
    }
    VALGRIND_CREATE_MEMPOOL(a, 0, 0);
    current = a;
}

void wh_json_arena_end(wh_json_arena *a)
{
    struct wh_json_arena_chunk *c, *next;

    if (current == a)
        current = NULL;
    VALGRIND_DESTROY_MEMPOOL(a);
    for (c = a->chunks; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    for (size_t i = 0; i < a->nbig; i++)
        free(a->big[i]);
    free(a->big);
    a->chunks = NULL;
    a->ptr = a->end = a->last = NULL;
    a->reserved = 0;
    a->hint = NULL;
    a->big = NULL;
    a->nbig = a->big_cap = 0;
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

void wh_json_freeze(json_t *root, wh_json_frozen **record)
{
    wh_json_frozen *r;
    const char *key;
    json_t *item;
    size_t i;

    if (root == NULL || root->refcount == (size_t)-1)
        return;
    if ((r = *record) == NULL)
        r = *record = wh_calloc(1, sizeof(*r));
    if (r->n == r->cap) {
        r->cap = r->cap != 0 ? r->cap * 2 : 64;
        r->e = wh_realloc(r->e, r->cap * sizeof(*r->e));
    }
    r->e[r->n].value = root;
    r->e[r->n].refcount = root->refcount;
    r->n++;
    root->refcount = (size_t)-1;
    if (json_is_object(root)) {
        json_object_foreach(root, key, item) wh_json_freeze(item, record);
    } else if (json_is_array(root)) {
        json_array_foreach(root, i, item) wh_json_freeze(item, record);
    }
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

json_t *wh_json_arena_string(const char *text, size_t len)
{
    wh_json_arena *a = current;
    const size_t head = (sizeof(struct jansson_string) + (ALIGN - 1)) & ~(size_t)(ALIGN - 1);
    size_t n = head + ((len + 1 + (ALIGN - 1)) & ~(size_t)(ALIGN - 1));
    struct jansson_string *js;
    char *value;

    if (a == NULL || !a->strings || len > BIG_BLOCK || n > (size_t)(a->end - a->ptr))
        return NULL; /* jansson makes it (and grows the chunk when it is full) */
    js = (struct jansson_string *)a->ptr;
    value = a->ptr + head;
    a->ptr += n;
    a->last = (char *)js; /* jansson frees the text, then js: freeing js gives both back */
    if (on_valgrind) {
        VALGRIND_MEMPOOL_ALLOC(a, js, sizeof(*js));
        VALGRIND_MEMPOOL_ALLOC(a, value, len + 1);
    }
    memcpy(value, text, len);
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
