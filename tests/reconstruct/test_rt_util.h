/* Helpers shared by the reconstruction-runtime tests: a seeded generator (tests replay exactly),
 * planar test images, the training photos, and an opt-in report line for measured accuracies
 * (PF_RT_VERBOSE=1). */
#ifndef PF_TESTS_RT_UTIL_H
#define PF_TESTS_RT_UTIL_H

#include "dataset/image.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct rt_rng {
    uint64_t s;
} rt_rng;

static inline uint32_t rt_next(rt_rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}

/* Uniform in [0, 1). */
static inline double rt_unif(rt_rng *r)
{
    return rt_next(r) / 2147483648.0;
}

static inline int rt_int(rt_rng *r, int n)
{
    return (int)(rt_unif(r) * n);
}

static inline void rt_report(const char *fmt, ...)
{
    if (!getenv("PF_RT_VERBOSE"))
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* A random mask of density p (at least one sample). */
static inline uint8_t *rt_random_mask(rt_rng *r, int w, int h, double p)
{
    size_t n = (size_t)w * (size_t)h;
    uint8_t *m = malloc(n);
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += m[i] = rt_unif(r) < p;
    if (!cnt)
        m[rt_int(r, (int)n)] = 1;
    return m;
}

/* The paper's training photos, loaded as RGB (NULL if the file is missing). */
static const char *const rt_photos[] = {
    "data/images/train/man_made_1_256x192.png", "data/images/train/natural_29_256x192.png",
    "data/images/train/people_0_256x192.png",   "data/images/train/man_made_55_820x614.png",
    "data/images/train/natural_0_820x614.png",  "data/images/train/people_56_820x614.png",
};
#define RT_NPHOTOS 6

static inline pf_image *rt_load_photo(int i)
{
    pf_error err;
    pf_image *img = pf_image_load(pf_test_src(rt_photos[i]), &err);
    if (!img)
        return NULL;
    pf_image *rgb = pf_image_to_rgb(img, &err);
    pf_image_free(img);
    return rgb;
}

/* A smooth image: a few low-frequency sinusoids per channel, values within [0, 1]. */
static inline void rt_smooth_fill(float *data, int w, int h, int ch, size_t stride, size_t plane,
                                  double period)
{
    for (int c = 0; c < ch; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                data[(size_t)c * plane + (size_t)y * stride + (size_t)x] =
                    (float)(0.5 + 0.25 * sin(2 * M_PI * x / period + c) +
                            0.2 * cos(2 * M_PI * y / (1.3 * period) - 0.5 * c));
}

#endif
