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

/* Columns per column task: the column sweeps vectorise across a row of the block. */
#define RT_COLUMN_BLOCK 64

/* What the transform's tasks share. */
typedef struct nearest_job {
    const uint8_t *mask;
    int w, h;
    int64_t key_stride;
    int64_t *best;
    int32_t *key, *dist;
    /* the copy */
    float *data;
    int channels;
    size_t stride, plane;
    const uint8_t *where;
} nearest_job;

/* Column sweeps of columns [x0, x1): best[p] = the nearest sample in p's column, packed (ties:
 * the upper one, whose key is smaller). Keys are row * key_stride + x. */
static void column_pass(const nearest_job *j, int x0, int x1)
{
    const uint8_t *mask = j->mask;
    int64_t *best = j->best;
    int w = j->w;
    for (int x = x0; x < x1; x++)
        best[x] = mask[x] ? x : RT_FAR;
    for (int y = 1; y < j->h; y++) {
        const uint8_t *m = mask + (size_t)y * (size_t)w;
        int64_t *b = best + (size_t)y * (size_t)w, own = (int64_t)y * j->key_stride;
        const int64_t *up = b - w;
        for (int x = x0; x < x1; x++)
            b[x] = m[x] ? own + x : min64(up[x] + RT_STEP, RT_FAR);
    }
    for (int y = j->h - 2; y >= 0; y--) {
        int64_t *b = best + (size_t)y * (size_t)w;
        const int64_t *down = b + w;
        for (int x = x0; x < x1; x++)
            b[x] = min64(b[x], down[x] + RT_STEP);
    }
}

static int32_t column_task(void *closure, int32_t begin, int32_t end)
{
    const nearest_job *j = closure;
    int x1 = end * RT_COLUMN_BLOCK < j->w ? end * RT_COLUMN_BLOCK : j->w;
    column_pass(j, begin * RT_COLUMN_BLOCK, x1);
    return 0;
}

/* Row sweeps of one row: from the columns' nearest samples to the row's. */
static void row_pass(int64_t *b, int w)
{
    for (int x = 1; x < w; x++)
        b[x] = min64(b[x], b[x - 1] + RT_STEP);
    for (int x = w - 2; x >= 0; x--)
        b[x] = min64(b[x], b[x + 1] + RT_STEP);
}

/* Rows [begin, end): the row sweeps, then the keys (and distances) unpacked. */
static int32_t row_task(void *closure, int32_t begin, int32_t end)
{
    const nearest_job *j = closure;
    for (int32_t y = begin; y < end; y++)
        row_pass(j->best + (size_t)y * (size_t)j->w, j->w);
    for (size_t i = (size_t)begin * (size_t)j->w; i < (size_t)end * (size_t)j->w; i++) {
        j->key[i] = (int32_t)(j->best[i] & 0xffffffff);
        if (j->dist)
            j->dist[i] = (int32_t)(j->best[i] >> 32);
    }
    return 0;
}

static int any_sample(const uint8_t *mask, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mask[i])
            return 1;
    return 0;
}

/* The transform into j->key (w*h, row stride w), keys being row * key_stride + x; j->dist
 * optional. */
static int nearest_keys(nearest_job *j, pf_par_for par)
{
    size_t n = (size_t)j->w * (size_t)j->h;
    if (!any_sample(j->mask, n))
        return PF_RT_ENOSAMPLE;
    j->best = pf_rt_scratch(n * sizeof *j->best);
    if (!j->best)
        return PF_RT_ENOMEM;
    pf_par_run(par, column_task, j, (j->w + RT_COLUMN_BLOCK - 1) / RT_COLUMN_BLOCK);
    pf_par_run(par, row_task, j, j->h);
    pf_rt_scratch_free(j->best);
    j->best = NULL;
    return PF_RT_OK;
}

int pf_rt_nearest_index(const uint8_t *mask, int w, int h, int32_t *index, int32_t *dist)
{
    if (!mask || !index || w <= 0 || h <= 0 || (int64_t)w * h >= INT32_MAX)
        return PF_RT_EINVAL;
    nearest_job j = { .mask = mask, .w = w, .h = h, .key_stride = w, .key = index, .dist = dist };
    return nearest_keys(&j, NULL);
}

/* Copies each selected pixel's nearest sample in every channel, rows [begin, end). Samples
 * are not written (they are their own nearest sample), so a row only reads what no task
 * writes and rows may run on different threads. */
static int32_t copy_task(void *closure, int32_t begin, int32_t end)
{
    const nearest_job *j = closure;
    for (int c = 0; c < j->channels; c++) {
        float *pl = j->data + (size_t)c * j->plane;
        for (int32_t y = begin; y < end; y++) {
            const int32_t *k = j->key + (size_t)y * (size_t)j->w;
            const uint8_t *m = j->mask + (size_t)y * (size_t)j->w;
            const uint8_t *s = j->where ? j->where + (size_t)y * (size_t)j->w : NULL;
            float *o = pl + (size_t)y * j->stride;
            /* a pixel that is not a sample (and, given `where`, is in it) */
            for (int x = 0; x < j->w; x++)
                if (!m[x] && (!s || s[x]))
                    o[x] = pl[k[x]];
        }
    }
    return 0;
}

int pf_rt_recon_nearest_at_par(float *data, int w, int h, int channels, size_t stride,
                               size_t plane, const uint8_t *mask, const uint8_t *where,
                               pf_par_for par)
{
    if (!data || !mask || w <= 0 || h <= 0 || channels < 1 || stride < (size_t)w)
        return PF_RT_EINVAL;
    /* Keys are data offsets within a plane (row*stride + x), so the copy needs no division. */
    if ((uint64_t)(h - 1) * stride + (uint64_t)w >= INT32_MAX)
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    nearest_job j = { .mask = mask, .w = w, .h = h, .key_stride = (int64_t)stride,
                      .key = pf_rt_scratch(n * sizeof(int32_t)), .data = data, .channels = channels,
                      .stride = stride, .plane = plane, .where = where };
    if (!j.key)
        return PF_RT_ENOMEM;
    int rc = nearest_keys(&j, par);
    if (rc == PF_RT_OK)
        pf_par_run(par, copy_task, &j, h);
    pf_rt_scratch_free(j.key);
    return rc;
}

int pf_rt_recon_nearest_at(float *data, int w, int h, int channels, size_t stride, size_t plane,
                           const uint8_t *mask, const uint8_t *where)
{
    return pf_rt_recon_nearest_at_par(data, w, h, channels, stride, plane, mask, where, NULL);
}

int pf_rt_recon_nearest_par(float *data, int w, int h, int channels, size_t stride, size_t plane,
                            const uint8_t *mask, pf_par_for par)
{
    return pf_rt_recon_nearest_at_par(data, w, h, channels, stride, plane, mask, NULL, par);
}

int pf_rt_recon_nearest(float *data, int w, int h, int channels, size_t stride, size_t plane,
                        const uint8_t *mask)
{
    return pf_rt_recon_nearest_par(data, w, h, channels, stride, plane, mask, NULL);
}
