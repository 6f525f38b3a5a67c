/* PNG decoding and encoding with libpng. Every libpng call that can fail runs inside one guarded
 * function whose setjmp catches libpng's errors; the state the error path must clean up lives in
 * a struct owned by the caller, so no local changed after setjmp is read after the longjmp.
 * Samples are taken as stored, like the prototype's loader: gAMA, cHRM, sRGB and iCCP chunks are
 * not applied. */
#include "dataset/image.h"

#include "base/fileio.h"
#include "dataset/image_internal.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pf_png_reader {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t len, pos;
    pf_image *img;
    unsigned char *rows;    /* one row, or the whole image when interlaced */
    png_bytep *row_ptrs;    /* interlaced only */
    char msg[256];          /* libpng's error message, when it raised one */
} pf_png_reader;

static void png_error_fn(png_structp png, png_const_charp msg)
{
    char *dst = png_get_error_ptr(png);
    snprintf(dst, 256, "%s", msg);
    png_longjmp(png, 1);
}

/* Warnings (bad ancillary chunks, unknown chunks) do not stop a decode and must not print. */
static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void png_read_mem(png_structp png, png_bytep out, png_size_t n)
{
    pf_png_reader *r = png_get_io_ptr(png);
    if (r->len - r->pos < n)
        png_error(png, "file is truncated (read past the end of the data)");
    memcpy(out, r->data + r->pos, n);
    r->pos += n;
}

/* One interleaved 8-bit row into the planar float image, through the 8-bit table. */
static void convert_row8(const unsigned char *s, pf_image *img, int y)
{
    const float *lut = pf_image_lut8();
    int w = img->width, ch = img->channels;
    float *d0 = pf_image_at(img, 0, y, 0);
    if (ch == 1) {
        for (int x = 0; x < w; x++)
            d0[x] = lut[s[x]];
        return;
    }
    float *d1 = pf_image_at(img, 0, y, 1);
    if (ch == 2) {
        for (int x = 0; x < w; x++, s += 2) {
            d0[x] = lut[s[0]];
            d1[x] = lut[s[1]];
        }
        return;
    }
    float *d2 = pf_image_at(img, 0, y, 2);
    if (ch == 3) {
        for (int x = 0; x < w; x++, s += 3) {
            d0[x] = lut[s[0]];
            d1[x] = lut[s[1]];
            d2[x] = lut[s[2]];
        }
        return;
    }
    float *d3 = pf_image_at(img, 0, y, 3);
    for (int x = 0; x < w; x++, s += 4) {
        d0[x] = lut[s[0]];
        d1[x] = lut[s[1]];
        d2[x] = lut[s[2]];
        d3[x] = lut[s[3]];
    }
}

/* 16-bit samples arrive big-endian (PNG's order); v -> v / 65535. */
static void convert_row16(const unsigned char *s, pf_image *img, int y)
{
    int w = img->width, ch = img->channels;
    for (int c = 0; c < ch; c++) {
        float *d = pf_image_at(img, 0, y, c);
        const unsigned char *p = s + 2 * c;
        for (int x = 0; x < w; x++, p += 2 * ch)
            d[x] = (float)((p[0] << 8) | p[1]) / 65535.0f;
    }
}

static void convert_row(const unsigned char *s, pf_image *img, int y, int depth)
{
    if (depth == 16)
        convert_row16(s, img, y);
    else
        convert_row8(s, img, y);
    pf_image_zero_padding(img, y);
}

/* Palette -> RGB, tRNS -> alpha, gray 1/2/4-bit -> 8-bit; 16-bit stays 16-bit. */
static void set_read_transforms(png_structp png, png_infop info)
{
    int ctype = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (ctype == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
}

static void read_rows_progressive(pf_png_reader *r, int depth)
{
    pf_image *img = r->img;
    r->rows = malloc(png_get_rowbytes(r->png, r->info));
    if (!r->rows)
        png_error(r->png, "out of memory");
    for (int y = 0; y < img->height; y++) {
        png_read_row(r->png, r->rows, NULL);
        convert_row(r->rows, img, y, depth);
    }
}

/* Adam7 needs every row in memory until the last pass. */
static void read_rows_interlaced(pf_png_reader *r, int depth)
{
    pf_image *img = r->img;
    size_t rowbytes = png_get_rowbytes(r->png, r->info);
    r->rows = malloc(rowbytes * (size_t)img->height);
    r->row_ptrs = malloc(sizeof(png_bytep) * (size_t)img->height);
    if (!r->rows || !r->row_ptrs)
        png_error(r->png, "out of memory");
    for (int y = 0; y < img->height; y++)
        r->row_ptrs[y] = r->rows + rowbytes * (size_t)y;
    png_read_image(r->png, r->row_ptrs);
    for (int y = 0; y < img->height; y++)
        convert_row(r->row_ptrs[y], img, y, depth);
}

/* Bits per pixel of a valid (colour type, bit depth) pair of the PNG spec, or 0. */
static int png_bits_per_pixel(int type, int depth)
{
    int d = depth;
    switch (type) {
    case 0: return (d == 1 || d == 2 || d == 4 || d == 8 || d == 16) ? d : 0;     /* gray */
    case 3: return (d == 1 || d == 2 || d == 4 || d == 8) ? d : 0;                /* palette */
    case 2: return (d == 8 || d == 16) ? 3 * d : 0;                               /* RGB */
    case 4: return (d == 8 || d == 16) ? 2 * d : 0;                               /* gray+alpha */
    case 6: return (d == 8 || d == 16) ? 4 * d : 0;                               /* RGBA */
    default: return 0;
    }
}

static unsigned long png_be32(const unsigned char *p)
{
    return ((unsigned long)p[0] << 24) | ((unsigned long)p[1] << 16) |
           ((unsigned long)p[2] << 8) | p[3];
}

/* Deflate expands at most 1032:1, so the file's length bounds the pixel data it can hold. */
#define PF_DEFLATE_MAX_RATIO 1100

/* Reads IHDR straight from the bytes, before libpng allocates anything, to refuse zero or
 * oversized dimensions, unsupported depths, and headers that claim more pixels than the file
 * can hold (a truncated file or a decompression bomb) in our own words. A file whose first
 * chunk is not an intact IHDR is left to libpng, which refuses it. */
static int png_check_header(const unsigned char *p, size_t len, pf_error *err)
{
    if (len < 33 || png_be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4) != 0)
        return 0;
    unsigned long w = png_be32(p + 16), h = png_be32(p + 20);
    int depth = p[24], type = p[25];
    if (pf_image_check_dims((long long)w, (long long)h, err) != 0)
        return -1;
    int bits = png_bits_per_pixel(type, depth);
    if (bits == 0)
        return pf_fail(err, "unsupported PNG bit depth %d for colour type %d", depth, type);
    double raw = (double)h * (1.0 + ceil((double)w * bits / 8.0));
    if (raw > (double)PF_DEFLATE_MAX_RATIO * (double)len + 4096.0)
        return pf_fail(err, "header claims %lux%lu pixels, more than a %zu-byte file can hold "
                            "(truncated, or a decompression bomb)", w, h, len);
    return 0;
}

/* Returns 0, or -1 with r->msg set (libpng error) or -2 with err set (our own check). */
static int png_decode_guarded(pf_png_reader *r, pf_error *err)
{
    if (setjmp(png_jmpbuf(r->png)))
        return -1;
    if (png_check_header(r->data, r->len, err) != 0)
        return -2;
    png_read_info(r->png, r->info);
    png_uint_32 w = png_get_image_width(r->png, r->info);
    png_uint_32 h = png_get_image_height(r->png, r->info);
    if (pf_image_check_dims(w, h, err) != 0)
        return -2;
    set_read_transforms(r->png, r->info);
    int passes = png_set_interlace_handling(r->png);
    png_read_update_info(r->png, r->info);
    int depth = png_get_bit_depth(r->png, r->info);
    r->img = pf_image_new_for_decode((int)w, (int)h, png_get_channels(r->png, r->info), err);
    if (!r->img)
        return -2;
    if (passes > 1)
        read_rows_interlaced(r, depth);
    else
        read_rows_progressive(r, depth);
    png_read_end(r->png, NULL);
    return 0;
}

pf_image *pf_image_decode_png(const void *data, size_t len, const char *name, pf_error *err)
{
    pf_png_reader r = { .data = data, .len = len };
    r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r.msg, png_error_fn, png_warning_fn);
    if (r.png)
        r.info = png_create_info_struct(r.png);
    if (!r.png || !r.info) {
        png_destroy_read_struct(&r.png, NULL, NULL);
        pf_fail(err, "%s: cannot start the PNG decoder (out of memory)", name);
        return NULL;
    }
    png_set_read_fn(r.png, &r, png_read_mem);
    int rc = png_decode_guarded(&r, err);
    png_destroy_read_struct(&r.png, &r.info, NULL);
    free(r.rows);
    free(r.row_ptrs);
    if (rc == 0)
        return r.img;
    pf_image_free(r.img);
    if (rc == -1)
        pf_fail(err, "%s: corrupt or unsupported PNG: %s", name, r.msg);
    else
        pf_fail_prefix(err, "%s", name);
    return NULL;
}

/* --- writing --------------------------------------------------------------------------- */

typedef struct pf_png_writer {
    png_structp png;
    png_infop info;
    unsigned char *row;
    char msg[256];
} pf_png_writer;

static void interleave_row(const pf_image *img, int y, int depth, unsigned char *out)
{
    int w = img->width, ch = img->channels;
    for (int c = 0; c < ch; c++) {
        const float *s = pf_image_at(img, 0, y, c);
        if (depth == 8) {
            for (int x = 0; x < w; x++)
                out[(size_t)x * ch + c] = pf_image_to_u8(s[x]);
        } else {
            for (int x = 0; x < w; x++) {
                uint16_t v = pf_image_to_u16(s[x]);
                out[((size_t)x * ch + c) * 2] = (unsigned char)(v >> 8);
                out[((size_t)x * ch + c) * 2 + 1] = (unsigned char)(v & 0xff);
            }
        }
    }
}

static int png_encode_guarded(pf_png_writer *wr, const pf_image *img, int depth, FILE *fp)
{
    static const int types[5] = { 0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA };
    if (setjmp(png_jmpbuf(wr->png)))
        return -1;
    png_init_io(wr->png, fp);
    png_set_IHDR(wr->png, wr->info, (png_uint_32)img->width, (png_uint_32)img->height, depth,
                 types[img->channels], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(wr->png, wr->info);
    wr->row = malloc((size_t)img->width * (size_t)img->channels * (size_t)(depth / 8));
    if (!wr->row)
        png_error(wr->png, "out of memory");
    for (int y = 0; y < img->height; y++) {
        interleave_row(img, y, depth, wr->row);
        png_write_row(wr->png, wr->row);
    }
    png_write_end(wr->png, NULL);
    return 0;
}

int pf_image_save_png(const pf_image *img, const char *path, int bit_depth, pf_error *err)
{
    if (bit_depth != 8 && bit_depth != 16)
        return pf_fail(err, "%s: PNG bit depth must be 8 or 16, not %d", path, bit_depth);
    if (img->channels < 1 || img->channels > 4)
        return pf_fail(err, "%s: cannot save an image with %d channels", path, img->channels);
    pf_png_writer wr = { 0 };
    wr.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, wr.msg, png_error_fn,
                                     png_warning_fn);
    if (wr.png)
        wr.info = png_create_info_struct(wr.png);
    if (!wr.png || !wr.info) {
        png_destroy_write_struct(&wr.png, NULL);
        return pf_fail(err, "%s: cannot start the PNG encoder (out of memory)", path);
    }
    pf_atomic_file f;
    int rc = pf_atomic_open(&f, path, err);
    if (rc == 0 && png_encode_guarded(&wr, img, bit_depth, f.fp) != 0) {
        pf_fail(err, "%s: cannot write PNG: %s", path, wr.msg);
        pf_atomic_abort(&f);
        rc = -1;
    } else if (rc == 0) {
        rc = pf_atomic_commit(&f, err);
    }
    png_destroy_write_struct(&wr.png, &wr.info);
    free(wr.row);
    return rc;
}
