/* Scratch memory of the runtime (pf_rt_scratch, pf_rt_scratch_free): 64-byte aligned blocks,
 * and a small cache of large freed blocks that the next call takes again. The kernels of this
 * directory take their image-sized temporaries here; the generated code's buffers come here
 * too (codegen/runtime_alloc.c).
 *
 * Why a cache: a block of megabytes comes from mmap (glibc, above its threshold) or from a heap
 * top that free trims, so each call faulted its pages in again, and page faults do not scale
 * with threads. Demosaic at 820x614 took ~1460 minor faults a call (5.8 MB), 1.5-3 ms of a
 * 1.5 ms program; adaptive refinement (k = 2) at 2048x1536 took 84 ms a call instead of 26 on
 * memory already mapped. Kept blocks make the second call onwards run on mapped memory, as a
 * camera app calling the library frame after frame would want. Small blocks go to malloc. */
#include "reconstruct/runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 64                        /* keeps the block 64-byte aligned */
#define CACHE_MIN ((size_t)256 << 10)    /* smaller blocks are not kept */
#define CACHE_SLOTS 16
#define CACHE_MAX_BYTES ((size_t)512 << 20)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static void *cache[CACHE_SLOTS];   /* blocks (headers included), NULL where empty */
static size_t cached_bytes;

static size_t block_size(void *block)
{
    return *(size_t *)block;
}

/* The smallest kept block of at least n bytes and at most 2n (a larger one stays for the
 * image it was made for), taken out of the cache; NULL when none fits. */
static void *take_cached(size_t n)
{
    void *best = NULL;
    int at = -1;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        size_t s = cache[i] ? block_size(cache[i]) : 0;
        if (cache[i] && s >= n && s / 2 <= n && (!best || s < block_size(best))) {
            best = cache[i];
            at = i;
        }
    }
    if (best) {
        cache[at] = NULL;
        cached_bytes -= block_size(best);
    }
    pthread_mutex_unlock(&cache_lock);
    return best;
}

/* Keeps block in the cache, evicting the smallest kept blocks while it does not fit; frees it
 * when it cannot be kept. */
static void keep(void *block)
{
    size_t s = block_size(block);
    void *evicted[CACHE_SLOTS];
    int n_evicted = 0;
    pthread_mutex_lock(&cache_lock);
    for (;;) {
        int empty = -1, smallest = -1;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (!cache[i])
                empty = empty < 0 ? i : empty;
            else if (smallest < 0 || block_size(cache[i]) < block_size(cache[smallest]))
                smallest = i;
        }
        if (empty >= 0 && cached_bytes + s <= CACHE_MAX_BYTES) {
            cache[empty] = block;
            cached_bytes += s;
            block = NULL;
            break;
        }
        if (smallest < 0 || block_size(cache[smallest]) >= s)
            break;  /* only larger blocks are kept: this one goes */
        evicted[n_evicted++] = cache[smallest];
        cached_bytes -= block_size(cache[smallest]);
        cache[smallest] = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    for (int i = 0; i < n_evicted; i++)
        free(evicted[i]);
    free(block);
}

void *pf_rt_scratch(size_t bytes)
{
    if (bytes == 0 || bytes > ((size_t)1 << 40))
        return NULL;
    size_t n = HEADER + ((bytes + 63) & ~(size_t)63);
    char *block = n >= CACHE_MIN ? take_cached(n) : NULL;
    if (!block) {
        block = aligned_alloc(64, n);
        if (!block)
            return NULL;
        *(size_t *)block = n;
    }
    return block + HEADER;
}

void *pf_rt_scratch_zero(size_t bytes)
{
    void *p = pf_rt_scratch(bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void pf_rt_scratch_free(void *p)
{
    if (!p)
        return;
    char *block = (char *)p - HEADER;
    if (block_size(block) >= CACHE_MIN)
        keep(block);
    else
        free(block);
}

void pf_rt_scratch_release(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(cache[i]);
        cache[i] = NULL;
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

size_t pf_rt_scratch_kept(void)
{
    pthread_mutex_lock(&cache_lock);
    size_t n = cached_bytes;
    pthread_mutex_unlock(&cache_lock);
    return n;
}

#if defined(__GNUC__)
/* A shared object that carries this runtime (a C-backend variant, an exported library) frees
 * its kept blocks when it is unloaded: the cache's array goes with it, and the blocks would be
 * lost (LeakSanitizer found them after the variant-hash test's dlclose of C variants). */
__attribute__((destructor)) static void release_at_unload(void)
{
    pf_rt_scratch_release();
}
#endif
