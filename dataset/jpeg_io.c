/* JPEG decoding and encoding through libjpeg-turbo's libjpeg API. libjpeg's default error manager
 * exits the process and prints warnings; ours longjmps back with the message and stays silent on
 * warnings, except the two that mean the image data ran out ("Premature end of JPEG file" and
 * "premature end of data segment"): libjpeg would otherwise hand back a truncated file padded
 * with grey as if it were whole. */
#include "dataset/image.h"

#include "base/fileio.h"
#include "dataset/image_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* Colour rows arrive as RGBX where SSE2 is available (every x86-64): four bytes per pixel make
 * the channel split a shift and a mask, four pixels at a time. The division by 255 is IEEE
 * division, so the result is bit-identical to the table (k / 255.0f); it halves the cost of
 * the conversion, which is most of what this layer adds to libjpeg's own decode. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define PF_JPEG_COLOUR_SPACE JCS_EXT_RGBX
#define PF_JPEG_COLOUR_BYTES 4
#else
#define PF_JPEG_COLOUR_SPACE JCS_RGB
#define PF_JPEG_COLOUR_BYTES 3
#endif

/* A progressive file can hold any number of scans, each a pass over the whole image; a crafted
 * one with millions of tiny scans would take minutes. Real encoders use about 10. */
#define PF_JPEG_MAX_SCANS 1000
/* Rows asked of jpeg_read_scanlines per call (libjpeg returns at most rec_outbuf_height). */
#define PF_JPEG_ROWS 16

typedef struct pf_jpeg_errmgr {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} pf_jpeg_errmgr;

static void jpeg_error_exit_fn(j_common_ptr cinfo)
{
    pf_jpeg_errmgr *e = (pf_jpeg_errmgr *)cinfo->err;
    e->base.format_message(cinfo, e->msg);
    longjmp(e->jump, 1);
}

static void jpeg_emit_message_fn(j_common_ptr cinfo, int level)
{
    pf_jpeg_errmgr *e = (pf_jpeg_errmgr *)cinfo->err;
    if (level >= 0)
        return; /* trace messages */
    if (e->base.msg_code == JWRN_JPEG_EOF || e->base.msg_code == JWRN_HIT_MARKER)
        jpeg_error_exit_fn(cinfo);
    e->base.num_warnings++;
}

static void jpeg_progress_fn(j_common_ptr cinfo)
{
    if (cinfo->is_decompressor &&
        ((j_decompress_ptr)cinfo)->input_scan_number > PF_JPEG_MAX_SCANS) {
        pf_jpeg_errmgr *e = (pf_jpeg_errmgr *)cinfo->err;
        snprintf(e->msg, sizeof e->msg, "more than %d progressive scans", PF_JPEG_MAX_SCANS);
        longjmp(e->jump, 1);
    }
}

static void jpeg_init_errmgr(pf_jpeg_errmgr *e)
{
    jpeg_std_error(&e->base);
    e->base.error_exit = jpeg_error_exit_fn;
    e->base.emit_message = jpeg_emit_message_fn;
    e->msg[0] = '\0';
}

typedef struct pf_jpeg_reader {
    struct jpeg_decompress_struct cinfo;
    pf_jpeg_errmgr err;
    struct jpeg_progress_mgr progress;
    pf_image *img;
    unsigned char *rows;
} pf_jpeg_reader;

static void convert_gray(const unsigned char *s, float *d, int w)
{
    const float *lut = pf_image_lut8();
    for (int x = 0; x < w; x++)
        d[x] = lut[s[x]];
}

static void convert_colour(const unsigned char *s, float *d0, float *d1, float *d2, int w)
{
    const float *lut = pf_image_lut8();
    int x = 0;
#if defined(__SSE2__)
    const __m128 k255 = _mm_set1_ps(255.0f);
    const __m128i low = _mm_set1_epi32(0xff);
    for (; x + 4 <= w; x += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + 4 * x));
        __m128 r = _mm_cvtepi32_ps(_mm_and_si128(v, low));
        __m128 g = _mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(v, 8), low));
        __m128 b = _mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(v, 16), low));
        _mm_storeu_ps(d0 + x, _mm_div_ps(r, k255));
        _mm_storeu_ps(d1 + x, _mm_div_ps(g, k255));
        _mm_storeu_ps(d2 + x, _mm_div_ps(b, k255));
    }
#endif
    for (; x < w; x++) {
        const unsigned char *p = s + PF_JPEG_COLOUR_BYTES * x;
        d0[x] = lut[p[0]];
        d1[x] = lut[p[1]];
        d2[x] = lut[p[2]];
    }
}

static size_t jpeg_row_bytes(const pf_image *img)
{
    return (size_t)img->width * (img->channels == 1 ? 1 : PF_JPEG_COLOUR_BYTES);
}

static void jpeg_convert_rows(pf_jpeg_reader *r, int y0, int n)
{
    pf_image *img = r->img;
    size_t rowbytes = jpeg_row_bytes(img);
    for (int k = 0; k < n; k++) {
        const unsigned char *s = r->rows + rowbytes * (size_t)k;
        int y = y0 + k;
        if (img->channels == 1)
            convert_gray(s, pf_image_at(img, 0, y, 0), img->width);
        else
            convert_colour(s, pf_image_at(img, 0, y, 0), pf_image_at(img, 0, y, 1),
                           pf_image_at(img, 0, y, 2), img->width);
        pf_image_zero_padding(img, y);
    }
}

static void jpeg_read_all_rows(pf_jpeg_reader *r)
{
    j_decompress_ptr cinfo = &r->cinfo;
    size_t rowbytes = jpeg_row_bytes(r->img);
    JSAMPROW ptrs[PF_JPEG_ROWS];
    r->rows = malloc(rowbytes * PF_JPEG_ROWS);
    if (!r->rows)
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    for (int k = 0; k < PF_JPEG_ROWS; k++)
        ptrs[k] = r->rows + rowbytes * (size_t)k;
    while (cinfo->output_scanline < cinfo->output_height) {
        int y0 = (int)cinfo->output_scanline;
        int got = (int)jpeg_read_scanlines(cinfo, ptrs, PF_JPEG_ROWS);
        if (got == 0)
            ERREXIT(cinfo, JERR_INPUT_EMPTY); /* cannot happen with a memory source */
        jpeg_convert_rows(r, y0, got);
    }
}

/* Returns 0, or -1 with r->err.msg set (libjpeg error) or -2 with err set (our own check). */
static int jpeg_decode_guarded(pf_jpeg_reader *r, const void *data, size_t len, pf_error *err)
{
    j_decompress_ptr cinfo = &r->cinfo;
    if (setjmp(r->err.jump))
        return -1;
    jpeg_create_decompress(cinfo);
    cinfo->progress = &r->progress;
    jpeg_mem_src(cinfo, (const unsigned char *)data, (unsigned long)len);
    jpeg_read_header(cinfo, TRUE);
    if (pf_image_check_dims(cinfo->image_width, cinfo->image_height, err) != 0)
        return -2;
    int gray = cinfo->jpeg_color_space == JCS_GRAYSCALE;
    if (!gray && cinfo->num_components != 3) {
        pf_fail(err, "%d-component (CMYK or other) JPEG is not supported",
                cinfo->num_components);
        return -2;
    }
    cinfo->out_color_space = gray ? JCS_GRAYSCALE : PF_JPEG_COLOUR_SPACE;
    r->img = pf_image_new_for_decode((int)cinfo->image_width, (int)cinfo->image_height,
                                     gray ? 1 : 3, err);
    if (!r->img)
        return -2;
    jpeg_start_decompress(cinfo);
    jpeg_read_all_rows(r);
    jpeg_finish_decompress(cinfo);
    return 0;
}

pf_image *pf_image_decode_jpeg(const void *data, size_t len, const char *name, pf_error *err)
{
    pf_jpeg_reader *r = calloc(1, sizeof *r);
    if (!r) {
        pf_fail(err, "%s: cannot start the JPEG decoder (out of memory)", name);
        return NULL;
    }
    jpeg_init_errmgr(&r->err);
    r->cinfo.err = &r->err.base;
    r->progress.progress_monitor = jpeg_progress_fn;
    int rc = jpeg_decode_guarded(r, data, len, err);
    jpeg_destroy_decompress(&r->cinfo);
    free(r->rows);
    pf_image *img = r->img;
    if (rc == -1)
        pf_fail(err, "%s: corrupt or unsupported JPEG: %s", name, r->err.msg);
    else if (rc == -2)
        pf_fail_prefix(err, "%s", name);
    if (rc != 0) {
        pf_image_free(img);
        img = NULL;
    }
    free(r);
    return img;
}

/* --- writing --------------------------------------------------------------------------- */

typedef struct pf_jpeg_writer {
    struct jpeg_compress_struct cinfo;
    pf_jpeg_errmgr err;
    unsigned char *row;
} pf_jpeg_writer;

/* Gray and gray+alpha are written as grayscale, RGB and RGBA as RGB: JPEG has no alpha. */
static void jpeg_pack_row(const pf_image *img, int y, int comps, unsigned char *out)
{
    for (int c = 0; c < comps; c++) {
        const float *s = pf_image_at(img, 0, y, c);
        for (int x = 0; x < img->width; x++)
            out[(size_t)x * comps + c] = pf_image_to_u8(s[x]);
    }
}

static int jpeg_encode_guarded(pf_jpeg_writer *w, const pf_image *img, int quality, FILE *fp)
{
    j_compress_ptr cinfo = &w->cinfo;
    if (setjmp(w->err.jump))
        return -1;
    jpeg_create_compress(cinfo);
    jpeg_stdio_dest(cinfo, fp);
    int comps = img->channels >= 3 ? 3 : 1;
    cinfo->image_width = (JDIMENSION)img->width;
    cinfo->image_height = (JDIMENSION)img->height;
    cinfo->input_components = comps;
    cinfo->in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    jpeg_start_compress(cinfo, TRUE);
    w->row = malloc((size_t)img->width * (size_t)comps);
    if (!w->row)
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    JSAMPROW ptr = w->row;
    for (int y = 0; y < img->height; y++) {
        jpeg_pack_row(img, y, comps, w->row);
        jpeg_write_scanlines(cinfo, &ptr, 1);
    }
    jpeg_finish_compress(cinfo);
    return 0;
}

int pf_image_save_jpeg(const pf_image *img, const char *path, int quality, pf_error *err)
{
    if (quality < 1 || quality > 100)
        return pf_fail(err, "%s: JPEG quality must be 1..100, not %d", path, quality);
    if (img->channels < 1 || img->channels > 4)
        return pf_fail(err, "%s: cannot save an image with %d channels", path, img->channels);
    if (img->width > JPEG_MAX_DIMENSION || img->height > JPEG_MAX_DIMENSION)
        return pf_fail(err, "%s: %dx%d is too large for JPEG (at most %d per side)", path,
                       img->width, img->height, (int)JPEG_MAX_DIMENSION);
    pf_jpeg_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pf_fail(err, "%s: cannot start the JPEG encoder (out of memory)", path);
    jpeg_init_errmgr(&w->err);
    w->cinfo.err = &w->err.base;
    pf_atomic_file f;
    int rc = pf_atomic_open(&f, path, err);
    if (rc == 0 && jpeg_encode_guarded(w, img, quality, f.fp) != 0) {
        pf_fail(err, "%s: cannot write JPEG: %s", path, w->err.msg);
        pf_atomic_abort(&f);
        rc = -1;
    } else if (rc == 0) {
        rc = pf_atomic_commit(&f, err);
    }
    jpeg_destroy_compress(&w->cinfo);
    free(w->row);
    free(w);
    return rc;
}
