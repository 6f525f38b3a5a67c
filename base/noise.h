/* The language's noise() builtin: a deterministic hash of 1..4 ints to a float in [0, 1).
 * One inline definition shared by the interpreter, constant folding and the runtime of
 * generated code (including exported C libraries), so every backend agrees bit for bit.
 * Each argument a_i is mixed in with a murmur3-style finalizer: h = fmix((h ^ (a_i * 0x9E3779B1))
 * + i), starting from h = 0x6A09E667 ^ n; the float is the top 24 bits times 2^-24. */
#ifndef PF_BASE_NOISE_H
#define PF_BASE_NOISE_H

#include <stdint.h>

static inline uint32_t pf_noise_fmix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

static inline float pf_noise_hash(int n, const int32_t *args)
{
    uint32_t h = 0x6A09E667u ^ (uint32_t)n;
    for (int i = 0; i < n; i++)
        h = pf_noise_fmix((h ^ ((uint32_t)args[i] * 0x9E3779B1u)) + (uint32_t)i);
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* Loop perforation's random skip (docs/perforation.md §5): a value in [0, 1) for loop `id`,
 * iteration index j (0-based) and up to two coordinates of the enclosing stage; the iteration
 * runs iff it is below the gene's p. */
static inline float pf_perf_hash(int32_t id, int32_t j, int32_t a, int32_t b)
{
    int32_t args[4] = { id + 0x5bd1e995, j, a, b };
    return pf_noise_hash(4, args);
}

#endif
