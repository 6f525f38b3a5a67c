/* xoshiro256** (Blackman and Vigna) with a splitmix64 seeder; see rng.h. */
#include "search/rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pf_rng_seed(pf_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

int pf_seed_parse(const char *text, uint64_t *seed)
{
    size_t n = text ? strlen(text) : 0;
    if (n < 1 || n > 20 || strspn(text, "0123456789") != n)
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE)
        return -1;
    *seed = (uint64_t)v;
    return 0;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t pf_rng_next(pf_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double pf_rng_uniform(pf_rng *r)
{
    return (double)(pf_rng_next(r) >> 11) * 0x1.0p-53;
}

double pf_rng_range(pf_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * pf_rng_uniform(r);
}

int pf_rng_below(pf_rng *r, int n)
{
    /* The modulo bias is below 2^-32 for any n an int can hold: irrelevant here. */
    return n <= 1 ? 0 : (int)(pf_rng_next(r) % (uint64_t)n);
}

int pf_rng_chance(pf_rng *r, double p)
{
    return pf_rng_uniform(r) < p;
}

int pf_rng_pick(pf_rng *r, const int *values, int n)
{
    return values[pf_rng_below(r, n)];
}
