/* The image type: allocation with the size guards, loading by content, saving by extension, and
 * the prototype's channel and 8-bit conventions. The codecs live in png_io.c and jpeg_io.c. */
#include "dataset/image.h"

#include "base/fileio.h"
#include "dataset/image_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A compressed file larger than this is refused before it is read: the largest image the pixel
 * limit admits (2^28 RGBA 16-bit pixels) stored raw is 2 GiB, and real files compress. */
#define PF_IMAGE_MAX_FILE_BYTES ((size_t)1 << 31)

/* k / 255.0f for every 8-bit k, folded by the compiler (exact IEEE division, as v/255 says). */
#define PF_L1(k) ((float)(k) / 255.0f)
#define PF_L4(k) PF_L1(k), PF_L1((k) + 1), PF_L1((k) + 2), PF_L1((k) + 3)
#define PF_L16(k) PF_L4(k), PF_L4((k) + 4), PF_L4((k) + 8), PF_L4((k) + 12)
#define PF_L64(k) PF_L16(k), PF_L16((k) + 16), PF_L16((k) + 32), PF_L16((k) + 48)
static const float lut8[256] = { PF_L64(0), PF_L64(64), PF_L64(128), PF_L64(192) };

const float *pf_image_lut8(void)
{
    return lut8;
}

int pf_image_check_dims(long long width, long long height, pf_error *err)
{
    if (width <= 0 || height <= 0)
        return pf_fail(err, "image has zero or negative dimensions %lldx%lld", width, height);
    if (width > PF_IMAGE_MAX_SIDE || height > PF_IMAGE_MAX_SIDE)
        return pf_fail(err, "image is %lldx%lld, larger than the limit of %d pixels per side",
                       width, height, PF_IMAGE_MAX_SIDE);
    if ((unsigned long long)width * (unsigned long long)height > PF_IMAGE_MAX_PIXELS)
        return pf_fail(err, "image is %lldx%lld, more than the limit of %zu pixels", width,
                       height, PF_IMAGE_MAX_PIXELS);
    return 0;
}

/* Allocates the header and the sample block; the samples are left uninitialised. */
static pf_image *image_alloc(int width, int height, int channels, pf_error *err)
{
    if (channels < 1 || channels > 4) {
        pf_fail(err, "images have 1 to 4 channels, not %d", channels);
        return NULL;
    }
    if (pf_image_check_dims(width, height, err) != 0)
        return NULL;
    size_t stride = ((size_t)width + PF_IMAGE_ALIGN_FLOATS - 1) / PF_IMAGE_ALIGN_FLOATS *
                    PF_IMAGE_ALIGN_FLOATS;
    size_t plane = stride * (size_t)height;
    size_t bytes = plane * (size_t)channels * sizeof(float);
    /* The block starts on a page, and its size is a whole number of pages as aligned_alloc
     * wants: where rows and planes fall within pages (and so in the L1 cache's sets, which the
     * page offset indexes) is then the same for every image however malloc serves it. With 64
     * bytes, a process's first large images came from mmap (page offset 64) and later ones
     * from the heap (any offset): a search timed its training images on one layout and its
     * test images on others (issue 25). */
    size_t block = (bytes + PF_IMAGE_PAGE - 1) / PF_IMAGE_PAGE * PF_IMAGE_PAGE;
    pf_image *img = malloc(sizeof *img);
    float *data = aligned_alloc(PF_IMAGE_PAGE, block);
    if (!img || !data) {
        free(img);
        free(data);
        pf_fail(err, "out of memory for a %dx%dx%d image", width, height, channels);
        return NULL;
    }
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->stride = stride;
    img->plane = plane;
    img->data = data;
    return img;
}

pf_image *pf_image_new(int width, int height, int channels, pf_error *err)
{
    pf_image *img = image_alloc(width, height, channels, err);
    if (img)
        memset(img->data, 0, img->plane * (size_t)img->channels * sizeof(float));
    return img;
}

pf_image *pf_image_new_for_decode(int width, int height, int channels, pf_error *err)
{
    return image_alloc(width, height, channels, err);
}

void pf_image_zero_padding(pf_image *img, int y)
{
    size_t pad = img->stride - (size_t)img->width;
    if (pad == 0)
        return;
    for (int c = 0; c < img->channels; c++)
        memset(pf_image_at(img, img->width, y, c), 0, pad * sizeof(float));
}

void pf_image_free(pf_image *img)
{
    if (!img)
        return;
    free(img->data);
    free(img);
}

pf_image *pf_image_clone(const pf_image *img)
{
    pf_image *copy = image_alloc(img->width, img->height, img->channels, NULL);
    if (copy)
        memcpy(copy->data, img->data, img->plane * (size_t)img->channels * sizeof(float));
    return copy;
}

static int has_png_magic(const unsigned char *p, size_t n)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    return n >= 8 && memcmp(p, sig, 8) == 0;
}

static int has_jpeg_magic(const unsigned char *p, size_t n)
{
    return n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff;
}

pf_image *pf_image_load(const char *path, pf_error *err)
{
    char *buf;
    size_t len;
    if (pf_read_file(path, PF_IMAGE_MAX_FILE_BYTES, &buf, &len, err) != 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)buf;
    pf_image *img = NULL;
    if (has_png_magic(p, len))
        img = pf_image_decode_png(buf, len, path, err);
    else if (has_jpeg_magic(p, len))
        img = pf_image_decode_jpeg(buf, len, path, err);
    else if (len == 0)
        pf_fail(err, "%s: empty file, not an image", path);
    else
        pf_fail(err, "%s: not a PNG or JPEG file (unrecognised signature)", path);
    free(buf);
    return img;
}

/* The extension after the last '.' of the last path component, or "". */
static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    return dot ? dot + 1 : "";
}

/* JPEG by extension uses quality 95: saved images are looked at and compared, so fidelity matters
 * more than size. */
int pf_image_save(const pf_image *img, const char *path, pf_error *err)
{
    const char *ext = extension(path);
    if (strcasecmp(ext, "png") == 0)
        return pf_image_save_png(img, path, 8, err);
    if (strcasecmp(ext, "jpg") == 0 || strcasecmp(ext, "jpeg") == 0)
        return pf_image_save_jpeg(img, path, 95, err);
    return pf_fail(err, "%s: cannot tell the format from the extension (use .png, .jpg or .jpeg)",
                   path);
}

/* Gray (and gray+alpha) replicate to R=G=B; RGB is copied; alpha is dropped. */
pf_image *pf_image_to_rgb(const pf_image *img, pf_error *err)
{
    pf_image *out = pf_image_new_for_decode(img->width, img->height, 3, err);
    if (!out)
        return NULL;
    size_t plane_bytes = img->plane * sizeof(float);
    for (int c = 0; c < 3; c++) {
        int src = img->channels >= 3 ? c : 0;
        memcpy(out->data + (size_t)c * out->plane, img->data + (size_t)src * img->plane,
               plane_bytes);
    }
    for (int y = 0; y < out->height; y++)
        pf_image_zero_padding(out, y);
    return out;
}

void pf_image_quantize8_trunc(pf_image *img)
{
    for (int c = 0; c < img->channels; c++) {
        for (int y = 0; y < img->height; y++) {
            float *row = pf_image_at(img, 0, y, c);
            for (int x = 0; x < img->width; x++)
                row[x] = lut8[pf_image_q8_trunc(row[x])];
        }
    }
}
