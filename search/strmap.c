/* Open-addressing string map with linear probing; grows at 50% load. */
#include "search/strmap.h"

#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

void pf_strmap_init(pf_strmap *m)
{
    memset(m, 0, sizeof *m);
}

void pf_strmap_free(pf_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

static size_t slot(const pf_strmap *m, const char *key)
{
    size_t i = (size_t)hash(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void grow(pf_strmap *m)
{
    pf_strmap old = *m;
    m->cap = old.cap ? 2 * old.cap : 64;
    m->keys = pf_xcalloc(m->cap, sizeof *m->keys);
    m->values = pf_xcalloc(m->cap, sizeof *m->values);
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            size_t j = slot(m, old.keys[i]);
            m->keys[j] = old.keys[i];
            m->values[j] = old.values[i];
        }
    free(old.keys);
    free(old.values);
}

bool pf_strmap_get(const pf_strmap *m, const char *key, int *value)
{
    if (m->cap == 0)
        return false;
    size_t i = slot(m, key);
    if (!m->keys[i])
        return false;
    if (value)
        *value = m->values[i];
    return true;
}

static bool insert(pf_strmap *m, const char *key, int value, bool overwrite)
{
    if (2 * (m->count + 1) > m->cap)
        grow(m);
    size_t i = slot(m, key);
    if (m->keys[i]) {
        if (overwrite)
            m->values[i] = value;
        return false;
    }
    m->keys[i] = pf_xstrdup(key);
    m->values[i] = value;
    m->count++;
    return true;
}

void pf_strmap_put(pf_strmap *m, const char *key, int value)
{
    insert(m, key, value, true);
}

bool pf_strmap_add(pf_strmap *m, const char *key, int value)
{
    return insert(m, key, value, false);
}
