/* Small helpers shared by the dataset/ test files: a deterministic random generator, synthetic
 * images, and whole-file byte buffers for corruption tests. */
#ifndef PF_TESTS_DATASET_UTIL_H
#define PF_TESTS_DATASET_UTIL_H

#include "dataset/image.h"

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* xorshift64*: the same sequence on every machine, so failures replay. */
static inline uint64_t pf_t_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* Uniform in [0, 1). */
static inline double pf_t_uniform(uint64_t *s)
{
    return (double)(pf_t_rand(s) >> 11) / 9007199254740992.0;
}

/* An image of uniform noise in [0,1]. */
static inline pf_image *pf_t_noise_image(int w, int h, int c, uint64_t seed)
{
    pf_image *img = pf_image_new(w, h, c, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int k = 0; k < c; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(img, x, y, k) = (float)pf_t_uniform(&seed);
    return img;
}

/* A smooth colour image (gradients and a soft blob): compresses well, survives JPEG closely. */
static inline pf_image *pf_t_smooth_image(int w, int h, int c)
{
    pf_image *img = pf_image_new(w, h, c, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int k = 0; k < c; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double u = (double)x / w, v = (double)y / h;
                double blob = (u - 0.5) * (u - 0.5) + (v - 0.4) * (v - 0.4);
                double val = 0.2 + 0.3 * u * (k + 1) / c + 0.2 * v + 0.3 / (1.0 + 20.0 * blob);
                *pf_image_at(img, x, y, k) = (float)(val > 1.0 ? 1.0 : val);
            }
    return img;
}

/* Largest absolute difference over every sample of two same-shaped images. */
static inline double pf_t_max_abs_diff(const pf_image *a, const pf_image *b)
{
    double m = 0.0;
    for (int k = 0; k < a->channels; k++)
        for (int y = 0; y < a->height; y++)
            for (int x = 0; x < a->width; x++) {
                double d = (double)*pf_image_at(a, x, y, k) - *pf_image_at(b, x, y, k);
                m = d < 0 ? (-d > m ? -d : m) : (d > m ? d : m);
            }
    return m;
}

/* Whole file into a malloc'd buffer (NULL if missing). */
static inline unsigned char *pf_t_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    *len = got;
    return buf;
}

static inline int pf_t_write(const char *path, const void *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t put = fwrite(data, 1, len, fp);
    return (fclose(fp) == 0 && put == len) ? 0 : -1;
}

#endif
