/* Error diffusion of a sample density to a 0/1 sample mask: Ostromoukhov's variable-coefficient
 * method (the paper's choice, for its blue-noise sample distribution) and Floyd-Steinberg. Both
 * scan serpentine (even rows left to right, odd rows right to left), threshold at 1/2 and diffuse
 * the quantisation error to the unvisited neighbours, as published.
 *
 * Error diffusion alone undercounts: error pushed off the sides and error still in flight when
 * the scan ends are lost, both biased positive at low densities (pixels sit between firings with
 * accumulated error): 3-6% of the budget for 256x192 at frac 0.025. Three measures, cheapest
 * first: sideways error is folded into the pixel below the row's end; the scan starts from the
 * error state left by a warm-up pass over the last rows, so the error in flight at the start
 * matches what is lost at the end (and the first rows are not left empty while error builds up);
 * and the count is then made exactly round(sum of densities). For that last step the scan
 * records each pixel's corrected level (density + incoming error) as a histogram bin: missing
 * samples go to the unsampled pixels whose level came closest to the threshold, preferring ones
 * with no sample among their 8 neighbours (the blue-noise property), surplus ones leave the
 * samples that fired with the least margin; within a bin, lower pixel index first. After the
 * first two measures the correction is a fraction of a percent of the samples.
 *
 * The error rows are float: the scan is sequential, so the result is deterministic. */
#include "reconstruct/runtime.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The coefficient table of V. Ostromoukhov, "A Simple and Efficient Error-Diffusion Algorithm",
 * SIGGRAPH 2001, as published with the paper (varcoeffED.c, var_coefs_tab, version 1, August
 * 2001, University of Montreal). Row i is for input level i (0..255); each row is {right,
 * down-left, down, sum}, the error fractions being right/sum, down-left/sum and down/sum, where
 * "right" and "down-left" follow the scan direction. The published table is symmetric (row i =
 * row 255 - i), so only rows 0..127 are stored. Data copied from the publication; the code below
 * is our own. OSTRO_ROWS(X) lists the rows as X(right, down-left, down, sum). */
#define OSTRO_ROWS(X) \
    X(13, 0, 5, 18) X(13, 0, 5, 18) X(21, 0, 10, 31) X(7, 0, 4, 11) X(8, 0, 5, 13) \
    X(47, 3, 28, 78) X(23, 3, 13, 39) X(15, 3, 8, 26) X(22, 6, 11, 39) X(43, 15, 20, 78) \
    X(7, 3, 3, 13) X(501, 224, 211, 936) X(249, 116, 103, 468) X(165, 80, 67, 312) \
    X(123, 62, 49, 234) X(489, 256, 191, 936) X(81, 44, 31, 156) X(483, 272, 181, 936) \
    X(60, 35, 22, 117) X(53, 32, 19, 104) X(237, 148, 83, 468) X(471, 304, 161, 936) \
    X(3, 2, 1, 6) X(459, 304, 161, 924) X(38, 25, 14, 77) X(453, 296, 175, 924) \
    X(225, 146, 91, 462) X(149, 96, 63, 308) X(111, 71, 49, 231) X(63, 40, 29, 132) \
    X(73, 46, 35, 154) X(435, 272, 217, 924) X(108, 67, 56, 231) X(13, 8, 7, 28) \
    X(213, 130, 119, 462) X(423, 256, 245, 924) X(5, 3, 3, 11) X(281, 173, 162, 616) \
    X(141, 89, 78, 308) X(283, 183, 150, 616) X(71, 47, 36, 154) X(285, 193, 138, 616) \
    X(13, 9, 6, 28) X(41, 29, 18, 88) X(36, 26, 15, 77) X(289, 213, 114, 616) \
    X(145, 109, 54, 308) X(291, 223, 102, 616) X(73, 57, 24, 154) X(293, 233, 90, 616) \
    X(21, 17, 6, 44) X(295, 243, 78, 616) X(37, 31, 9, 77) X(27, 23, 6, 56) X(149, 129, 30, 308) \
    X(299, 263, 54, 616) X(75, 67, 12, 154) X(43, 39, 6, 88) X(151, 139, 18, 308) \
    X(303, 283, 30, 616) X(38, 36, 3, 77) X(305, 293, 18, 616) X(153, 149, 6, 308) \
    X(307, 303, 6, 616) X(1, 1, 0, 2) X(101, 105, 2, 208) X(49, 53, 2, 104) X(95, 107, 6, 208) \
    X(23, 27, 2, 52) X(89, 109, 10, 208) X(43, 55, 6, 104) X(83, 111, 14, 208) X(5, 7, 1, 13) \
    X(172, 181, 37, 390) X(97, 76, 22, 195) X(72, 41, 17, 130) X(119, 47, 29, 195) X(4, 1, 1, 6) \
    X(4, 1, 1, 6) X(4, 1, 1, 6) X(4, 1, 1, 6) X(4, 1, 1, 6) X(4, 1, 1, 6) X(4, 1, 1, 6) \
    X(4, 1, 1, 6) X(4, 1, 1, 6) X(65, 18, 17, 100) X(95, 29, 26, 150) X(185, 62, 53, 300) \
    X(30, 11, 9, 50) X(35, 14, 11, 60) X(85, 37, 28, 150) X(55, 26, 19, 100) X(80, 41, 29, 150) \
    X(155, 86, 59, 300) X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) \
    X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) \
    X(5, 3, 2, 10) X(5, 3, 2, 10) X(5, 3, 2, 10) X(305, 176, 119, 600) X(155, 86, 59, 300) \
    X(105, 56, 39, 200) X(80, 41, 29, 150) X(65, 32, 23, 120) X(55, 26, 19, 100) \
    X(335, 152, 113, 600) X(85, 37, 28, 150) X(115, 48, 37, 200) X(35, 14, 11, 60) \
    X(355, 136, 109, 600) X(30, 11, 9, 50) X(365, 128, 107, 600) X(185, 62, 53, 300) \
    X(25, 8, 7, 40) X(95, 29, 26, 150) X(385, 112, 103, 600) X(65, 18, 17, 100) \
    X(395, 104, 101, 600) X(4, 1, 1, 6)

#define OSTRO_INTS(r, dl, d, sum) { r, dl, d, sum },
#define OSTRO_FRACS(r, dl, d, sum) { (float)(r) / (float)(sum), (float)(dl) / (float)(sum) },
static const short ostro_coefs[128][4] = { OSTRO_ROWS(OSTRO_INTS) };
/* The same rows as fractions {right, down-left} (down takes the rest), evaluated at compile
 * time, so the scan multiplies instead of dividing. */
static const float ostro_frac[128][2] = { OSTRO_ROWS(OSTRO_FRACS) };

const short *pf_rt_ostromoukhov_row(int level)
{
    if (level < 0 || level > 255)
        return NULL;
    return ostro_coefs[level < 128 ? level : 255 - level];
}

/* A density in [0, 1]; NaN is 0. */
static float clamp01(float v)
{
    return v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
}

/* Rows scanned before the real scan to seed its error (see dither_scan_all). */
#define DITHER_WARMUP 16

/* The count correction (see the top of the file) ranks pixels by their corrected level, in
 * DITHER_BINS bins over [DITHER_LEVEL_LO, DITHER_LEVEL_HI] (levels outside are clamped: that
 * far from the threshold the order no longer matters). The scan histograms the levels of the
 * two kinds of candidates as it goes, where the work hides in the slack of its serial chain:
 * bins [0, DITHER_BINS) for unsampled pixels of positive density, [DITHER_BINS, 2 DITHER_BINS)
 * for samples, and one last slot for the rest. */
#define DITHER_BINS 4096
#define DITHER_LEVEL_LO (-2.0f)
#define DITHER_LEVEL_HI 2.0f

static inline int level_bin(float lv)
{
    float k = lv > DITHER_LEVEL_LO ? (lv < DITHER_LEVEL_HI ? lv : DITHER_LEVEL_HI)
                                   : DITHER_LEVEL_LO;
    int b = (int)((k - DITHER_LEVEL_LO) * (DITHER_BINS / (DITHER_LEVEL_HI - DITHER_LEVEL_LO)));
    return b < DITHER_BINS ? b : DITHER_BINS - 1;
}

/* One scan's state: error rows cur/next indexed x + 1 (a guard cell each side catches the error
 * sent below-behind or below-ahead of a row end, which scan_rows folds back in), every pixel's
 * histogram slot (its "code"), the running counts. */
typedef struct dither_scan {
    pf_rt_dither_method method;
    float *cur, *next;
    uint16_t *code;
    size_t count;
    double mass;  /* sum of the clamped densities */
    size_t *hist; /* 2 * DITHER_BINS + 1 counts */
} dither_scan;

/* One row's scan: pointers at the row's first pixel in scan order, stepping by `step` (+1 or
 * -1). The error for the next pixel stays in a register (`carry`), which keeps a store and
 * reload out of the loop's serial dependency chain. Returns the carry left after the last
 * pixel. Zero density never gets a sample, but its error is computed as if the threshold
 * decided (Ostromoukhov's make_output), so mass is not pushed into empty regions. */
typedef struct row_scan {
    const float *d;
    float *cur, *next;
    uint16_t *code;
    uint8_t *out;
    ptrdiff_t step;
    int n;
    size_t count, *hist;
    double mass;
} row_scan;

/* The per-pixel bookkeeping shared by both methods. */
static inline void row_record(row_scan *r, ptrdiff_t x, float v, float lv, int on)
{
    int sample = on && v > 0.0f, b = level_bin(lv);
    int code = sample ? DITHER_BINS + b : v > 0.0f ? b : 2 * DITHER_BINS;
    r->out[x] = (uint8_t)sample;
    r->code[x] = (uint16_t)code;
    r->count += (size_t)sample;
    r->mass += v;
    r->hist[code]++;
}

static float row_ostromoukhov(row_scan *r)
{
    float carry = 0.0f;
    ptrdiff_t s = r->step;
    for (int i = 0; i < r->n; i++) {
        ptrdiff_t x = i * s;
        float v = clamp01(r->d[x]);
        int lvl = (int)(v * 255.0f + 0.5f);
        const float *k = ostro_frac[lvl < 128 ? lvl : 255 - lvl];
        float lv = v + r->cur[x] + carry;
        int on = lv > 0.5f;
        row_record(r, x, v, lv, on);
        float diff = lv - (float)on, right = diff * k[0], back = diff * k[1];
        carry = right;
        r->next[x - s] += back;
        r->next[x] += diff - (right + back);
    }
    return carry;
}

static float row_floyd_steinberg(row_scan *r)
{
    float carry = 0.0f;
    ptrdiff_t s = r->step;
    for (int i = 0; i < r->n; i++) {
        ptrdiff_t x = i * s;
        float v = clamp01(r->d[x]);
        float lv = v + r->cur[x] + carry;
        int on = lv > 0.5f;
        row_record(r, x, v, lv, on);
        float diff = lv - (float)on;
        carry = diff * (7.0f / 16.0f);
        r->next[x - s] += diff * (3.0f / 16.0f);
        r->next[x] += diff * (5.0f / 16.0f);
        r->next[x + s] += diff * (1.0f / 16.0f);
    }
    return carry;
}

/* One row in serpentine order; what is left of the carry after the row's last pixel goes to the
 * pixel below that one. */
static void dither_row(dither_scan *sc, const float *d, int w, int y, uint8_t *out, uint16_t *code)
{
    int back = y & 1;
    ptrdiff_t first = back ? w - 1 : 0;
    row_scan r = { d + first, sc->cur + 1 + first, sc->next + 1 + first, code + first,
                   out + first, back ? -1 : 1, w, 0, sc->hist, 0.0 };
    float carry = sc->method == PF_RT_DITHER_OSTROMOUKHOV ? row_ostromoukhov(&r)
                                                          : row_floyd_steinberg(&r);
    r.next[(ptrdiff_t)(w - 1) * r.step] += carry;
    sc->count += r.count;
    sc->mass += r.mass;
}

/* The count correction's candidates: unsampled pixels of positive density when adding (best:
 * highest level), samples when removing (best: lowest level). DITHER_ADJUST_SPARE times the
 * shortfall are collected, room to skip candidates that would touch a sample. */
#define DITHER_ADJUST_SPARE 4

typedef struct dither_adjust {
    const uint16_t *code;
    uint8_t *mask;
    int w, h, add;
    const size_t *hist; /* the scan's, for this kind of candidate */
} dither_adjust;

typedef struct adjust_item {
    uint32_t rank; /* bin counted from the best end */
    uint32_t i;
} adjust_item;

/* A pixel's rank among the candidates (bins counted from the best end), or a rank past every
 * bin if it is not a candidate. */
static inline uint32_t adjust_rank(const dither_adjust *a, size_t i)
{
    int c = a->code[i];
    if (a->add)
        return c < DITHER_BINS ? (uint32_t)(DITHER_BINS - 1 - c) : UINT32_MAX;
    return c >= DITHER_BINS && c < 2 * DITHER_BINS ? (uint32_t)(c - DITHER_BINS) : UINT32_MAX;
}

static int item_cmp(const void *x, const void *y)
{
    const adjust_item *p = x, *q = y;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

/* The best candidates, at least DITHER_ADJUST_SPARE * want of them when there are that many,
 * sorted best first (by bin, then pixel order) into a new array of *m; NULL if none or out of
 * memory. The scan's histogram says how many bins to take, so one pass collects them. */
static adjust_item *adjust_best(const dither_adjust *a, size_t want, size_t *m)
{
    size_t n = (size_t)a->w * (size_t)a->h, need = DITHER_ADJUST_SPARE * want, take = 0;
    uint32_t cut = 0; /* ranks below cut are collected */
    while (cut < DITHER_BINS && take < need) {
        take += a->hist[a->add ? DITHER_BINS - 1 - cut : cut];
        cut++;
    }
    adjust_item *items = take ? pf_rt_scratch(take * sizeof *items) : NULL;
    *m = 0;
    if (!items)
        return NULL;
    for (size_t i = 0; i < n && *m < take; i++) {
        uint32_t r = adjust_rank(a, i);
        if (r < cut)
            items[(*m)++] = (adjust_item){ r, (uint32_t)i };
    }
    qsort(items, *m, sizeof *items, item_cmp);
    return items;
}

/* Whether pixel i has a sample among its 8 neighbours. */
static int has_neighbour(const dither_adjust *a, size_t i)
{
    int x = (int)(i % (size_t)a->w), y = (int)(i / (size_t)a->w);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int nx = x + dx, ny = y + dy;
            if ((dx || dy) && nx >= 0 && ny >= 0 && nx < a->w && ny < a->h &&
                a->mask[(size_t)ny * (size_t)a->w + (size_t)nx])
                return 1;
        }
    return 0;
}

/* Flips up to `want` candidates, best first. Added samples first avoid touching another sample
 * (the blue-noise property); only if that leaves the count short are touching ones allowed.
 * Returns how many were flipped. */
static size_t adjust_count(dither_adjust *a, size_t want)
{
    size_t m, done = 0;
    adjust_item *items = adjust_best(a, want, &m);
    for (int spaced = a->add; spaced >= 0 && done < want; spaced--)
        for (size_t j = 0; j < m && done < want; j++) {
            size_t i = items[j].i;
            if (a->mask[i] == a->add || (spaced && has_neighbour(a, i)))
                continue;
            a->mask[i] = (uint8_t)a->add;
            done++;
        }
    pf_rt_scratch_free(items);
    return done;
}

/* The "every stage has a sample" rule: mark the first pixel of highest density. */
static size_t ensure_one(const float *density, size_t n, uint8_t *mask)
{
    size_t best = 0;
    float bv = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = clamp01(density[i]);
        if (v > bv) {
            bv = v;
            best = i;
        }
    }
    if (bv <= 0.0f)
        return 0;
    mask[best] = 1;
    return 1;
}

/* Scans rows [y0, y1) into mask and code (row stride w). Error that would leave the image
 * sideways is folded into the pixel below the row's end instead, so that only the error still
 * in flight below the last row is lost. */
static void scan_rows(dither_scan *sc, const float *density, int w, int y0, int y1,
                      uint8_t *mask, uint16_t *code)
{
    for (int y = y0; y < y1; y++) {
        size_t o = (size_t)y * (size_t)w;
        dither_row(sc, density + o, w, y, mask + o, code + o);
        sc->next[1] += sc->next[0];
        sc->next[w] += sc->next[w + 1];
        float *t = sc->cur;
        sc->cur = sc->next;
        sc->next = t;
        memset(sc->next, 0, ((size_t)w + 2) * sizeof *sc->next);
    }
}

/* The scan proper, after a warm-up over the last DITHER_WARMUP rows whose outgoing error seeds
 * row 0 (as if the image wrapped vertically): the error in flight at the start then matches the
 * error lost at the end, and the first rows are not left empty while error builds up. */
static void dither_scan_all(dither_scan *sc, const float *density, int w, int h, uint8_t *mask)
{
    int y0 = h > DITHER_WARMUP ? h - DITHER_WARMUP : 0;
    scan_rows(sc, density, w, y0, h, mask, sc->code);
    sc->count = 0;
    sc->mass = 0.0;
    memset(sc->hist, 0, (2 * DITHER_BINS + 1) * sizeof *sc->hist);
    scan_rows(sc, density, w, 0, h, mask, sc->code);
}

int pf_rt_dither(const float *density, int w, int h, pf_rt_dither_method method, uint8_t *mask,
                 size_t *count)
{
    if (!density || !mask || w <= 0 || h <= 0 ||
        (method != PF_RT_DITHER_OSTROMOUKHOV && method != PF_RT_DITHER_FLOYD_STEINBERG))
        return PF_RT_EINVAL;
    size_t n = (size_t)w * (size_t)h;
    float *rows = calloc(2 * ((size_t)w + 2), sizeof *rows);
    uint16_t *code = pf_rt_scratch(n * sizeof *code);
    if (!rows || !code) {
        free(rows);
        pf_rt_scratch_free(code);
        return PF_RT_ENOMEM;
    }
    size_t hist[2 * DITHER_BINS + 1];
    dither_scan sc = { method, rows, rows + (size_t)w + 2, code, 0, 0.0, hist };
    dither_scan_all(&sc, density, w, h, mask);
    size_t target = (size_t)floor(sc.mass + 0.5);
    int add = target > sc.count;
    dither_adjust adj = { code, mask, w, h, add, hist + (add ? 0 : DITHER_BINS) };
    if (target > sc.count)
        sc.count += adjust_count(&adj, target - sc.count);
    else if (target < sc.count)
        sc.count -= adjust_count(&adj, sc.count - target);
    free(rows);
    pf_rt_scratch_free(code);
    if (sc.count == 0)
        sc.count = ensure_one(density, n, mask);
    if (count)
        *count = sc.count;
    return PF_RT_OK;
}
