/* Bump-pointer arena with geometrically growing blocks. */
#include "base/arena.h"

#include "base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pf_arena_block {
    pf_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void pf_arena_init(pf_arena *a)
{
    a->head = NULL;
    a->total = 0;
}

void pf_arena_free(pf_arena *a)
{
    pf_arena_block *b = a->head;
    while (b) {
        pf_arena_block *next = b->next;
        free(b);
        b = next;
    }
    pf_arena_init(a);
}

void *pf_arena_alloc(pf_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    pf_arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t cap = b ? b->size * 2 : 16384;
        if (cap > ((size_t)1 << 24))
            cap = (size_t)1 << 24;
        if (cap < size)
            cap = size;
        b = pf_xmalloc(sizeof *b + cap);
        b->next = a->head;
        b->size = cap;
        b->used = 0;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

void *pf_arena_memdup(pf_arena *a, const void *p, size_t size)
{
    void *q = pf_arena_alloc(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

char *pf_arena_strndup(pf_arena *a, const char *s, size_t n)
{
    char *q = pf_arena_alloc(a, n + 1);
    memcpy(q, s, n);
    q[n] = '\0';
    return q;
}

char *pf_arena_strdup(pf_arena *a, const char *s)
{
    return pf_arena_strndup(a, s, strlen(s));
}

void *pf_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        pf_die("out of memory allocating %zu bytes", size);
    return p;
}

void *pf_xcalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        pf_die("allocation size overflow (%zu x %zu)", n, size);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        pf_die("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *pf_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        pf_die("out of memory reallocating to %zu bytes", size);
    return q;
}

char *pf_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(pf_xmalloc(n), s, n);
}
