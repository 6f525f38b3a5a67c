/* bench_decode: what the image layer costs over plain libpng / libjpeg-turbo. Each bundled
 * training photo is decoded from memory by pf_image_decode_png/_jpeg (planar float) and by the
 * library's own classic read loop (8-bit interleaved, the same transforms), alternating which
 * goes first, and the medians are compared. The JPEG inputs are made here from the photos
 * (libjpeg, quality 90, baseline and progressive). Usage: bench_decode [repetitions]. */
#include "base/clock.h"
#include "dataset/image.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jpeglib.h>

#define MAX_INPUTS 32

typedef struct input {
    char name[64];
    const char *format;
    unsigned char *data;
    size_t len;
    int width, height;
    double *t_ref, *t_pf; /* one sample per repetition */
} input;

/* --- the references: each library's plain read loop into an 8-bit interleaved buffer ------ */

typedef struct mem_reader {
    const unsigned char *data;
    size_t len, pos;
} mem_reader;

static void ref_png_read(png_structp png, png_bytep out, png_size_t n)
{
    mem_reader *r = png_get_io_ptr(png);
    if (r->len - r->pos < n)
        png_error(png, "truncated");
    memcpy(out, r->data + r->pos, n);
    r->pos += n;
}

static int ref_decode_png(const unsigned char *data, size_t len)
{
    mem_reader r = { data, len, 0 };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pixels);
        free(rows);
        return -1;
    }
    png_set_read_fn(png, &r, ref_png_read);
    png_read_info(png, info);
    if (png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (png_get_color_type(png, info) == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info), h = png_get_image_height(png, info);
    pixels = malloc(rowbytes * h);
    rows = malloc(sizeof(png_bytep) * h);
    for (size_t y = 0; y < h; y++)
        rows[y] = pixels + rowbytes * y;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    int sink = pixels[rowbytes * h / 2];
    free(pixels);
    free(rows);
    return sink;
}

static int ref_decode_jpeg(const unsigned char *data, size_t len)
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, data, (unsigned long)len);
    jpeg_read_header(&c, TRUE);
    c.out_color_space = c.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&c);
    size_t rowbytes = (size_t)c.output_width * c.output_components;
    unsigned char *pixels = malloc(rowbytes * c.output_height);
    while (c.output_scanline < c.output_height) {
        JSAMPROW rows[16];
        JDIMENSION left = c.output_height - c.output_scanline, n = left < 16 ? left : 16;
        for (JDIMENSION k = 0; k < n; k++)
            rows[k] = pixels + rowbytes * (c.output_scanline + k);
        jpeg_read_scanlines(&c, rows, n);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    int sink = pixels[rowbytes * c.output_height / 2];
    free(pixels);
    return sink;
}

/* --- inputs ------------------------------------------------------------------------------- */

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    *len = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    return buf;
}

static unsigned char *encode_jpeg(const pf_image *img, int progressive, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    unsigned char *out = NULL;
    unsigned long n = 0;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = (JDIMENSION)img->width;
    c.image_height = (JDIMENSION)img->height;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)img->width * 3);
    while (c.next_scanline < c.image_height) {
        int y = (int)c.next_scanline;
        for (int x = 0; x < img->width; x++)
            for (int k = 0; k < 3; k++)
                row[x * 3 + k] = (unsigned char)(*pf_image_at(img, x, y, k) * 255.0f + 0.5f);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = n;
    return out;
}

static void add_input(input *in, int *n, const char *name, const char *format,
                      unsigned char *data, size_t len, const pf_image *img, int reps)
{
    input *p = &in[(*n)++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->format = format;
    p->data = data;
    p->len = len;
    p->width = img->width;
    p->height = img->height;
    p->t_ref = calloc((size_t)reps, sizeof(double));
    p->t_pf = calloc((size_t)reps, sizeof(double));
}

static int load_inputs(input *in, int reps)
{
    static const char *names[6] = {
        "man_made_1_256x192", "man_made_55_820x614", "natural_0_820x614",
        "natural_29_256x192", "people_0_256x192",    "people_56_820x614",
    };
    int n = 0;
    for (int i = 0; i < 6; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/data/images/train/%s.png", PF_SOURCE_DIR, names[i]);
        size_t len;
        unsigned char *png = read_all(path, &len);
        pf_error err;
        pf_image *img = png ? pf_image_decode_png(png, len, path, &err) : NULL;
        if (!img) {
            fprintf(stderr, "bench_decode: cannot read %s\n", path);
            exit(1);
        }
        add_input(in, &n, names[i], "png", png, len, img, reps);
        unsigned char *jpg = encode_jpeg(img, 0, &len);
        add_input(in, &n, names[i], "jpeg", jpg, len, img, reps);
        jpg = encode_jpeg(img, 1, &len);
        add_input(in, &n, names[i], "jpeg-prog", jpg, len, img, reps);
        pf_image_free(img);
    }
    return n;
}

/* --- timing ------------------------------------------------------------------------------- */

static volatile int sink;

static double time_ref(const input *p)
{
    double t0 = pf_now_ms();
    sink += strcmp(p->format, "png") == 0 ? ref_decode_png(p->data, p->len)
                                          : ref_decode_jpeg(p->data, p->len);
    return (pf_now_ms() - t0) / 1e3;
}

static double time_pf(const input *p)
{
    pf_error err;
    double t0 = pf_now_ms();
    pf_image *img = strcmp(p->format, "png") == 0
                        ? pf_image_decode_png(p->data, p->len, p->name, &err)
                        : pf_image_decode_jpeg(p->data, p->len, p->name, &err);
    if (!img) {
        fprintf(stderr, "bench_decode: %s\n", err.msg);
        exit(1);
    }
    sink += (int)img->data[0];
    pf_image_free(img);
    return (pf_now_ms() - t0) / 1e3;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1)
        reps = 1;
    input in[MAX_INPUTS];
    int n = load_inputs(in, reps);
    for (int i = 0; i < n; i++) { /* warm-up: page in code and allocator */
        time_ref(&in[i]);
        time_pf(&in[i]);
    }
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < n; i++) {
            if (r % 2 == 0) {
                in[i].t_ref[r] = time_ref(&in[i]);
                in[i].t_pf[r] = time_pf(&in[i]);
            } else {
                in[i].t_pf[r] = time_pf(&in[i]);
                in[i].t_ref[r] = time_ref(&in[i]);
            }
        }
    printf("decode from memory, %d interleaved runs; ref = libpng/libjpeg-turbo read loop to "
           "8-bit interleaved, pf = pf_image_decode_* to planar float.\nms columns: medians; "
           "pf/ref: median of the per-run ratios (each pair timed back to back)\n\n", reps);
    printf("%-22s %-10s %9s %9s %9s %7s\n", "image", "format", "bytes", "ref ms", "pf ms",
           "pf/ref");
    double sum_ref[3] = { 0 }, sum_pf[3] = { 0 };
    double *ratio = malloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < reps; r++)
            ratio[r] = in[i].t_pf[r] / in[i].t_ref[r];
        double tr = pf_median(in[i].t_ref, reps) * 1e3, tp = pf_median(in[i].t_pf, reps) * 1e3;
        printf("%-22s %-10s %9zu %9.3f %9.3f %7.3f\n", in[i].name, in[i].format, in[i].len, tr,
               tp, pf_median(ratio, reps));
        sum_ref[i % 3] += tr;
        sum_pf[i % 3] += tp;
    }
    free(ratio);
    printf("\nsums of the medians (pf/ref = ratio of the sums):\n");
    printf("%-22s %-10s %9s %9.3f %9.3f %7.3f\n", "all six", "png", "", sum_ref[0], sum_pf[0],
           sum_pf[0] / sum_ref[0]);
    printf("%-22s %-10s %9s %9.3f %9.3f %7.3f\n", "all six", "jpeg", "", sum_ref[1], sum_pf[1],
           sum_pf[1] / sum_ref[1]);
    printf("%-22s %-10s %9s %9.3f %9.3f %7.3f\n", "all six", "jpeg-prog", "", sum_ref[2],
           sum_pf[2], sum_pf[2] / sum_ref[2]);
    for (int i = 0; i < n; i++) {
        free(in[i].data);
        free(in[i].t_ref);
        free(in[i].t_pf);
    }
    return 0;
}
