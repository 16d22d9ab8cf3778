/*
 * wh_alloc.c - allocation that aborts on failure (see wh_alloc.h), and the
 * hook that makes jansson allocate through it.
 */
#include "wh_alloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wh_oom(size_t size)
{
    char msg[96];
    int n = snprintf(msg, sizeof(msg), "webhookd: out of memory (allocating %zu bytes), aborting\n", size);

    /* write(2), not stdio: stdio may itself need memory. */
    if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
        n = 0;
    abort();
}

void *wh_malloc(size_t size)
{
    void *p = malloc(size != 0 ? size : 1);

    if (p == NULL)
        wh_oom(size);
    return p;
}

void *wh_calloc(size_t n, size_t size)
{
    void *p = calloc(n != 0 ? n : 1, size != 0 ? size : 1);

    if (p == NULL)
        wh_oom(n * size);
    return p;
}

void *wh_realloc(void *p, size_t size)
{
    void *q = realloc(p, size != 0 ? size : 1);

    if (q == NULL)
        wh_oom(size);
    return q;
}

char *wh_strdup(const char *s)
{
    return wh_memdup(s, strlen(s) + 1);
}

char *wh_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = wh_malloc(len + 1);

    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void *wh_memdup(const void *p, size_t n)
{
    void *q = wh_malloc(n);

    if (n != 0)
        memcpy(q, p, n);
    return q;
}

char *wh_vasprintf(const char *fmt, va_list ap)
{
    va_list copy;
    int n;
    char *p;

    va_copy(copy, ap);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) /* only a result over INT_MAX bytes with our formats */
        wh_oom((size_t)-1);
    p = wh_malloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *wh_asprintf(const char *fmt, ...)
{
    va_list ap;
    char *p;

    va_start(ap, fmt);
    p = wh_vasprintf(fmt, ap);
    va_end(ap);
    return p;
}

/* jansson's allocator is process-wide; set it before main() runs so that every
 * binary linking wh_common (webhookd, webhookctl, tests, fuzzers, benchmarks)
 * gets the same policy without each main() remembering to. */
__attribute__((constructor)) static void wh_alloc_jansson(void)
{
    json_set_alloc_funcs(wh_malloc, free);
}

void *wh_grow(void *items, size_t *cap, size_t size, size_t first)
{
    size_t n = *cap != 0 ? *cap * 2 : first;

    items = wh_realloc(items, n * size);
    *cap = n;
    return items;
}
