/*
 * arena.c - bump allocation for parse trees and renders: one free for all,
 * and blocks kept between renders so a steady render allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "wh_alloc.h"
#include "tmpl_int.h"

#define TM_BLOCK_MIN (16 * 1024)

void tm_arena_init(tm_arena *a)
{
    memset(a, 0, sizeof(*a));
}

static void new_block(tm_arena *a, size_t need)
{
    tm_block *b, **pp;

    /* Reuse a spare block that is big enough. */
    for (pp = &a->spare; (b = *pp) != NULL; pp = &b->next) {
        if (b->size >= need) {
            *pp = b->next;
            break;
        }
    }
    if (b == NULL) {
        size_t size = need > TM_BLOCK_MIN ? need : TM_BLOCK_MIN;
        b = wh_malloc(sizeof(tm_block) + size);
        b->size = size;
    }
    b->next = a->head;
    a->head = b;
    a->used += b->size;
    a->cur = (char *)(b + 1);
    a->end = a->cur + b->size;
}

void *tm_alloc(tm_arena *a, size_t size)
{
    char *p;

    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    if ((size_t)(a->end - a->cur) < size) {
        if (size > ((size_t)1 << 40))
            wh_oom(size); /* what malloc would refuse anyway: size arithmetic gone wrong */
        new_block(a, size);
    }
    p = a->cur;
    a->cur += size;
    return p;
}

char *tm_strndup(tm_arena *a, const char *s, size_t len)
{
    char *p = tm_alloc(a, len + 1);

    if (len != 0)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void tm_arena_reset(tm_arena *a)
{
    tm_block *b, *next;

    for (b = a->head; b != NULL; b = next) {
        next = b->next;
        b->next = a->spare;
        a->spare = b;
    }
    a->head = NULL;
    a->cur = a->end = NULL;
    a->used = 0;
}

void tm_arena_free(tm_arena *a)
{
    tm_block *b, *next;

    tm_arena_reset(a);
    for (b = a->spare; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    a->spare = NULL;
}
