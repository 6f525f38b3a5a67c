/* A string -> int hash map (open addressing, FNV-1a), owning copies of its keys: the search's
 * `seen` set of genome texts and the evaluation cache's index (canonical text -> record). */
#ifndef PF_SEARCH_STRMAP_H
#define PF_SEARCH_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pf_strmap {
    char **keys;   /* [cap]; NULL = empty slot */
    int *values;
    size_t cap, count;
} pf_strmap;

void pf_strmap_init(pf_strmap *m);
void pf_strmap_free(pf_strmap *m);
/* Sets key -> value (inserting or overwriting). */
void pf_strmap_put(pf_strmap *m, const char *key, int value);
/* True and *value when present (value may be NULL). */
bool pf_strmap_get(const pf_strmap *m, const char *key, int *value);
/* Inserts key with value if absent; returns true when it was absent. */
bool pf_strmap_add(pf_strmap *m, const char *key, int value);

#endif
