/* The one image type of perfora: float32 samples, planar, x innermost.
 *
 * Layout: sample (x, y, c) lives at data[c * plane + y * stride + x], where
 *   stride = width rounded up to a multiple of PF_IMAGE_ALIGN_FLOATS (rows start 64-byte aligned;
 *            data starts on a page, PF_IMAGE_PAGE)
 *   plane  = stride * height.
 * Values are nominally in [0, 1] (8-bit 255 -> 1.0, 16-bit 65535 -> 1.0) but may be anything.
 * Channels are 1 (gray), 2 (gray+alpha), 3 (RGB) or 4 (RGBA). */
#ifndef PF_DATASET_IMAGE_H
#define PF_DATASET_IMAGE_H

#include "base/buffer.h"
#include "base/error.h"

#include <stddef.h>

#define PF_IMAGE_ALIGN_FLOATS 16
/* Sample blocks start on a page boundary (every image has the same layout within pages). */
#define PF_IMAGE_PAGE 4096
/* Decompression-bomb guard: loaders refuse images with more pixels than this
 * (about 16k x 16k) or with a side longer than PF_IMAGE_MAX_SIDE. */
#define PF_IMAGE_MAX_PIXELS ((size_t)1 << 28)
#define PF_IMAGE_MAX_SIDE 65535

typedef struct pf_image {
    int width, height, channels;
    size_t stride;  /* floats from one row to the next */
    size_t plane;   /* floats from one channel plane to the next */
    float *data;    /* 64-byte aligned, zero-initialised by pf_image_new */
} pf_image;

/* Allocates a zeroed image; fails (no crash) for non-positive or oversized dimensions. */
pf_image *pf_image_new(int width, int height, int channels, pf_error *err);
void pf_image_free(pf_image *img);
pf_image *pf_image_clone(const pf_image *img);

static inline float *pf_image_at(const pf_image *img, int x, int y, int c)
{
    return img->data + (size_t)c * img->plane + (size_t)y * img->stride + (size_t)x;
}

/* The image as an N-D buffer view {W, H, C} (dims 2 when C == 1 and as_2d is set). */
static inline pf_buffer pf_image_buffer(const pf_image *img, int as_2d)
{
    pf_buffer b = { img->data, (as_2d && img->channels == 1) ? 2 : 3,
                    { img->width, img->height, img->channels, 1 },
                    { 1, (int64_t)img->stride, (int64_t)img->plane, 0 } };
    return b;
}

/* Load by content (PNG or JPEG magic), whatever the extension. Errors name the file. */
pf_image *pf_image_load(const char *path, pf_error *err);
/* Save by extension: .png (8-bit, or 16-bit with pf_image_save_png's depth) or .jpg/.jpeg.
 * Values are clamped to [0,1]; 8-bit quantisation is floor(v * 255 + 0.5).
 * Writes atomically: on failure no file (and no partial file) is left at path. */
int pf_image_save(const pf_image *img, const char *path, pf_error *err);
int pf_image_save_png(const pf_image *img, const char *path, int bit_depth, pf_error *err);
int pf_image_save_jpeg(const pf_image *img, const char *path, int quality, pf_error *err);

/* In-memory decoders used by pf_image_load and by fuzz/corruption tests. */
pf_image *pf_image_decode_png(const void *data, size_t len, const char *name, pf_error *err);
pf_image *pf_image_decode_jpeg(const void *data, size_t len, const char *name, pf_error *err);

/* The paper's convention for pipelines: RGB, alpha dropped, gray replicated to R=G=B.
 * Returns a new image. */
pf_image *pf_image_to_rgb(const pf_image *img, pf_error *err);

/* The prototype's 8-bit round trip: v -> trunc(clamp(v,0,1) * 255) / 255 (the paper's error is
 * computed from 8-bit PNGs written this way). In place. */
void pf_image_quantize8_trunc(pf_image *img);

#endif
