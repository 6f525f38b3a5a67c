/* libpng / libjpeg writers and byte-level helpers for the dataset/ tests (see the header). */
#include "tests/dataset/codec_fixtures.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <jpeglib.h>

size_t pf_t_png_rowbytes(const pf_t_png_spec *s)
{
    int ch = s->color_type == PNG_COLOR_TYPE_RGB         ? 3
             : s->color_type == PNG_COLOR_TYPE_RGB_ALPHA  ? 4
             : s->color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                          : 1;
    return ((size_t)s->width * (size_t)ch * (size_t)s->bit_depth + 7) / 8;
}

int pf_t_write_png(const char *path, const pf_t_png_spec *s)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep *rows = malloc(sizeof(png_bytep) * (size_t)s->height);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        fclose(fp);
        return -1;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)s->width, (png_uint_32)s->height, s->bit_depth,
                 s->color_type, s->interlace, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (s->n_palette) {
        png_color pal[256];
        for (int i = 0; i < s->n_palette; i++) {
            pal[i].red = s->palette_rgb[3 * i];
            pal[i].green = s->palette_rgb[3 * i + 1];
            pal[i].blue = s->palette_rgb[3 * i + 2];
        }
        png_set_PLTE(png, info, pal, s->n_palette);
    }
    if (s->trns)
        png_set_tRNS(png, info, s->trns, s->n_trns, NULL);
    png_write_info(png, info);
    size_t rb = pf_t_png_rowbytes(s);
    for (int y = 0; y < s->height; y++)
        rows[y] = (png_bytep)(s->rows + rb * (size_t)y);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    return fclose(fp) == 0 ? 0 : -1;
}

unsigned char *pf_t_encode_jpeg(const unsigned char *pixels, int width, int height, int comps,
                                int quality, int progressive, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    unsigned char *out = NULL;
    unsigned long n = 0;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = (JDIMENSION)width;
    c.image_height = (JDIMENSION)height;
    c.input_components = comps;
    c.in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)c.next_scanline * width * comps);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *len = n;
    return out;
}

static unsigned long be32(const unsigned char *p)
{
    return ((unsigned long)p[0] << 24) | ((unsigned long)p[1] << 16) |
           ((unsigned long)p[2] << 8) | p[3];
}

void pf_t_png_fix_crcs(unsigned char *png, size_t len)
{
    size_t pos = 8;
    while (pos + 12 <= len) {
        unsigned long n = be32(png + pos);
        if (n > len - pos - 12)
            return; /* a corrupted length: leave the rest as it is */
        unsigned long crc = crc32(0L, png + pos + 4, (uInt)(n + 4));
        unsigned char *c = png + pos + 8 + n;
        c[0] = (unsigned char)(crc >> 24);
        c[1] = (unsigned char)(crc >> 16);
        c[2] = (unsigned char)(crc >> 8);
        c[3] = (unsigned char)crc;
        pos += 12 + n;
    }
}

size_t pf_t_jpeg_find_marker(const unsigned char *jpg, size_t len, int code)
{
    for (size_t i = 2; i + 1 < len; i++)
        if (jpg[i] == 0xff && jpg[i + 1] == code)
            return i + 2;
    return 0;
}
