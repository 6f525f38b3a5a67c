/* Test fixtures written with libpng and libjpeg directly (not through dataset/), so the loaders
 * are checked against files they did not produce. */
#ifndef PF_TESTS_DATASET_CODEC_FIXTURES_H
#define PF_TESTS_DATASET_CODEC_FIXTURES_H

#include <stddef.h>

typedef struct pf_t_png_spec {
    int width, height;
    int color_type;                   /* PNG_COLOR_TYPE_* */
    int bit_depth;
    int interlace;                    /* PNG_INTERLACE_NONE or PNG_INTERLACE_ADAM7 */
    const unsigned char *rows;        /* height rows of packed samples as libpng wants them */
    const unsigned char *palette_rgb; /* n_palette RGB triples */
    int n_palette;
    const unsigned char *trns;        /* palette alpha values, or NULL */
    int n_trns;
} pf_t_png_spec;

/* Bytes per packed row of a spec (ceil(width * channels * depth / 8)). */
size_t pf_t_png_rowbytes(const pf_t_png_spec *s);
int pf_t_write_png(const char *path, const pf_t_png_spec *s);

/* An in-memory JPEG of 8-bit interleaved pixels (comps 1 or 3); caller frees. */
unsigned char *pf_t_encode_jpeg(const unsigned char *pixels, int width, int height, int comps,
                                int quality, int progressive, size_t *len);

/* Recomputes the CRC of every chunk of a PNG in place (after a deliberate corruption, so the
 * damage reaches the decoder instead of stopping at the checksum). */
void pf_t_png_fix_crcs(unsigned char *png, size_t len);

/* Offset of the first byte after the first JPEG marker `code` (0xC0 for SOF0, ...), or 0. */
size_t pf_t_jpeg_find_marker(const unsigned char *jpg, size_t len, int code);

#endif
