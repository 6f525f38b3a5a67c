/* The search's random numbers: xoshiro256** seeded by splitmix64, so a run is replayed from its
 * seed and a checkpoint can store the whole generator state (four words). Not for crypto. */
#ifndef PF_SEARCH_RNG_H
#define PF_SEARCH_RNG_H

#include <stdint.h>

typedef struct pf_rng {
    uint64_t s[4];
} pf_rng;

void pf_rng_seed(pf_rng *r, uint64_t seed);
/* A seed as written: 1 to 20 decimal digits and nothing else, at most 2^64 - 1 (no sign, no
 * wrapping: "-1" and 99999999999999999999 are refused). Returns 0 or -1. */
int pf_seed_parse(const char *text, uint64_t *seed);
uint64_t pf_rng_next(pf_rng *r);
/* Uniform in [0, 1). */
double pf_rng_uniform(pf_rng *r);
/* Uniform in [lo, hi). */
double pf_rng_range(pf_rng *r, double lo, double hi);
/* Uniform integer in [0, n); n >= 1. */
int pf_rng_below(pf_rng *r, int n);
/* True with probability p. */
int pf_rng_chance(pf_rng *r, double p);
/* One of values[0 .. n-1], uniformly. */
int pf_rng_pick(pf_rng *r, const int *values, int n);

#endif
