/* Nearest-sample reconstruction by Manhattan distance: the city-block distance transform of
 * Rosenfeld & Pfaltz (1968), propagating the nearest sample's position instead of only its
 * distance. It is split by axis (columns, then rows) because the city-block distance is the sum of
 * the two axes' distances: min over samples of |dx| + |dy| = min over columns x' of
 * (|x - x'| + the distance to the nearest sample in column x'). Each axis is a forward and a
 * backward sweep that keeps the lexicographic minimum of (distance, sample key); adding 1 to a
 * distance preserves that order, so each sweep is exact, and the tie rule (smallest key = first
 * sample in row-major order) holds whatever the scan order, which a joint 2-D sweep would not
 * guarantee.
 *
 * The pair is packed into one int64, distance << 32 | key, so that the lexicographic minimum is
 * a plain minimum: the column sweeps vectorise across a row and the row sweeps are a chain of
 * branch-free minima. */
#include "reconstruct/runtime.h"

#include <limits.h>
#include <stdlib.h>

/* One step of distance in the packed pair, and "no sample yet" (far enough that adding w + h
 * steps cannot overflow). */
#define RT_STEP ((int64_t)1 << 32)
#define RT_FAR ((int64_t)1 << 62)

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Column sweeps: best[p] = the nearest sample in p's column, packed (ties: the upper one, whose
 * key is smaller). Keys are row * key_stride + x. */
static void column_pass(const uint8_t *mask, int w, int h, int64_t key_stride, int64_t *best)
{
    for (int x = 0; x < w; x++)
        best[x] = mask[x] ? x : RT_FAR;
    for (int y = 1; y < h; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)w;
        int64_t *b = best + (size_t)y * (size_t)w, own = (int64_t)y * key_stride;
        const int64_t *up = b - w;
        for (int x = 0; x < w; x++)
            b[x] = m[x] ? own + x : min64(up[x] + RT_STEP, RT_FAR);
    }
    for (int y = h - 2; y >= 0; y--) {
        int64_t *b = best + (size_t)y * (size_t)w;
        const int64_t *down = b + w;
        for (int x = 0; x < w; x++)
            b[x] = min64(b[x], down[x] + RT_STEP);
    }
}

/* Row sweeps of one row: from the columns' nearest samples to the row's. */
static void row_pass(int64_t *b, int w)
{
    for (int x = 1; x < w; x++)
        b[x] = min64(b[x], b[x - 1] + RT_STEP);
    for (int x = w - 2; x >= 0; x--)
        b[x] = min64(b[x], b[x + 1] + RT_STEP);
}

static int any_sample(const uint8_t *mask, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mask[i])
            return 1;
    return 0;
}

/* The transform into key (w*h, row stride w), keys being row * key_stride + x; dist optional. */
static int nearest_keys(const uint8_t *mask, int w, int h, int64_t key_stride, int32_t *key,
                        int32_t *dist)
{
    size_t n = (size_t)w * (size_t)h;
    if (!any_sample(mask, n))
        return PF_RT_ENOSAMPLE;
    int64_t *best = malloc(n * sizeof *best);
    if (!best)
        return PF_RT_ENOMEM;
    column_pass(mask, w, h, key_stride, best);
    for (int y = 0; y < h; y++)
        row_pass(best + (size_t)y * (size_t)w, w);
    for (size_t i = 0; i < n; i++) {
        key[i] = (int32_t)(best[i] & 0xffffffff);
        if (dist)
            dist[i] = (int32_t)(best[i] >> 32);
    }
    free(best);
    return PF_RT_OK;
}

int pf_rt_nearest_index(const uint8_t *mask, int w, int h, int32_t *index, int32_t *dist)
{
    if (!mask || !index || w <= 0 || h <= 0 || (int64_t)w * h >= INT32_MAX)
        return PF_RT_EINVAL;
    return nearest_keys(mask, w, h, w, index, dist);
}

/* Copies each selected pixel's nearest sample in every channel. Every pixel is written (an
 * unselected one with itself), which keeps the loop free of branches on the mask. */
static void copy_nearest(float *data, int w, int h, int channels, size_t stride, size_t plane,
                         const int32_t *key, const uint8_t *where)
{
    for (int c = 0; c < channels; c++) {
        float *pl = data + (size_t)c * plane;
        for (int y = 0; y < h; y++) {
            const int32_t *k = key + (size_t)y * (size_t)w;
            const uint8_t *s = where ? where + (size_t)y * (size_t)w : NULL;
            float *o = pl + (size_t)y * stride;
            int32_t own = (int32_t)((size_t)y * stride);
            for (int x = 0; x < w; x++)
                o[x] = pl[s && !s[x] ? own + x : k[x]];
        }
    }
}

int pf_rt_recon_nearest_at(float *data, int w, int h, int channels, size_t stride, size_t plane,
                           const uint8_t *mask, const uint8_t *where)
{
    if (!data || !mask || w <= 0 || h <= 0 || channels < 1 || stride < (size_t)w)
        return PF_RT_EINVAL;
    /* Keys are data offsets within a plane (row*stride + x), so the copy needs no division. */
    if ((uint64_t)(h - 1) * stride + (uint64_t)w >= INT32_MAX)
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    int32_t *key = malloc(n * sizeof *key);
    if (!key)
        return PF_RT_ENOMEM;
    int rc = nearest_keys(mask, w, h, (int64_t)stride, key, NULL);
    /* Without `where`, every pixel copies its nearest sample: a sample is its own. */
    if (rc == PF_RT_OK)
        copy_nearest(data, w, h, channels, stride, plane, key, where);
    free(key);
    return rc;
}

int pf_rt_recon_nearest(float *data, int w, int h, int channels, size_t stride, size_t plane,
                        const uint8_t *mask)
{
    return pf_rt_recon_nearest_at(data, w, h, channels, stride, plane, mask, NULL);
}
