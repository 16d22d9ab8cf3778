/*
 * wh_alloc.h - the one out-of-memory policy: an allocation that fails aborts
 * the process with a message, so no caller ever sees NULL.
 *
 * Why: webhookd runs under h2o, which aborts on allocation failure itself,
 * and under a container memory limit the kernel's OOM killer acts before
 * malloc returns NULL; checking every allocation bought ~250 error branches
 * that no test could reach and that were not even applied consistently.
 * CONTRIBUTING.md ("Out of memory") says more.  jansson is pointed at the
 * same allocator (wh_alloc.c), so json_object(), json_string() of valid
 * UTF-8, json_copy() etc. never return NULL for lack of memory either.
 */
#ifndef WH_ALLOC_H
#define WH_ALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* Print "out of memory (N bytes)" to stderr and abort(). */
__attribute__((noreturn, cold)) void wh_oom(size_t size);

__attribute__((malloc, returns_nonnull)) void *wh_malloc(size_t size);
__attribute__((malloc, returns_nonnull)) void *wh_calloc(size_t n, size_t size);
__attribute__((returns_nonnull)) void *wh_realloc(void *p, size_t size);
__attribute__((malloc, returns_nonnull)) char *wh_strdup(const char *s);
__attribute__((malloc, returns_nonnull)) char *wh_strndup(const char *s, size_t n);
/* A copy of the n bytes at p. */
__attribute__((malloc, returns_nonnull)) void *wh_memdup(const void *p, size_t n);
/* A new formatted string (asprintf that cannot fail). */
__attribute__((malloc, returns_nonnull, format(printf, 1, 2))) char *wh_asprintf(const char *fmt, ...);
__attribute__((malloc, returns_nonnull, format(printf, 1, 0))) char *wh_vasprintf(const char *fmt, va_list ap);

/* Room for item `n` of an array that doubles when full (`first` items the
 * first time): the one growth policy of the code's arrays.  `items`, `n` and
 * `cap` (a size_t) are lvalues; items and cap are updated when it grows. */
#define WH_GROW(items, n, cap, first)                                                                                  \
    do {                                                                                                               \
        if ((n) == (cap))                                                                                              \
            (items) = wh_grow((items), &(cap), sizeof(*(items)), (first));                                             \
    } while (0)
__attribute__((returns_nonnull)) void *wh_grow(void *items, size_t *cap, size_t size, size_t first);

#endif
