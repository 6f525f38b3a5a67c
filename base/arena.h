/* Arena allocation: AST and IR nodes belong to an arena owned by one compilation and are freed
 * together (no node is freed alone). All memory comes zeroed. */
#ifndef PF_BASE_ARENA_H
#define PF_BASE_ARENA_H

#include <stddef.h>

typedef struct pf_arena_block pf_arena_block;

typedef struct pf_arena {
    pf_arena_block *head;  /* newest block first */
    size_t total;          /* bytes handed out, for limits and tests */
} pf_arena;

void pf_arena_init(pf_arena *a);
void pf_arena_free(pf_arena *a);                 /* frees every block; the arena is reusable */
void *pf_arena_alloc(pf_arena *a, size_t size);  /* zeroed, 16-byte aligned; aborts on OOM */
char *pf_arena_strdup(pf_arena *a, const char *s);
char *pf_arena_strndup(pf_arena *a, const char *s, size_t n);
void *pf_arena_memdup(pf_arena *a, const void *p, size_t size);

#define PF_NEW(arena, type) ((type *)pf_arena_alloc((arena), sizeof(type)))
#define PF_NEW_ARRAY(arena, type, n) ((type *)pf_arena_alloc((arena), sizeof(type) * (size_t)(n)))

/* malloc/calloc/realloc that abort with a message instead of returning NULL: memory exhaustion
 * is not a recoverable user error here, and checked sizes keep requests bounded. */
void *pf_xmalloc(size_t size);
void *pf_xcalloc(size_t n, size_t size);
void *pf_xrealloc(void *p, size_t size);
char *pf_xstrdup(const char *s);

#endif
