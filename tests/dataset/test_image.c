/* Tests for dataset/image.h: the type's layout, PNG and JPEG loading of every supported kind
 * (files written here by libpng/libjpeg directly), save/load round trips, and the prototype's
 * channel and 8-bit conventions. */
#include "dataset/image.h"
#include "tests/dataset/codec_fixtures.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

static const char *train_images[6] = {
    "man_made_1_256x192.png", "man_made_55_820x614.png", "natural_0_820x614.png",
    "natural_29_256x192.png", "people_0_256x192.png",    "people_56_820x614.png",
};

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_image_new_layout(void)
{
    pf_error err;
    pf_image *img = pf_image_new(33, 7, 3, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    CU_ASSERT_EQUAL(img->stride, 48);
    CU_ASSERT_EQUAL(img->plane, 48 * 7);
    CU_ASSERT(((uintptr_t)img->data & (PF_IMAGE_PAGE - 1)) == 0);
    for (size_t i = 0; i < img->plane * 3; i++)
        CU_ASSERT_EQUAL_FATAL(img->data[i], 0.0f);
    *pf_image_at(img, 32, 6, 2) = 5.0f;
    CU_ASSERT_EQUAL(img->data[2 * 48 * 7 + 6 * 48 + 32], 5.0f);
    pf_image *copy = pf_image_clone(img);
    CU_ASSERT_EQUAL(*pf_image_at(copy, 32, 6, 2), 5.0f);
    *pf_image_at(copy, 32, 6, 2) = 1.0f;
    CU_ASSERT_EQUAL(*pf_image_at(img, 32, 6, 2), 5.0f);
    pf_image_free(copy);
    pf_image_free(img);
    pf_image_free(NULL);
}

/* Every image starts on a page, whether malloc serves it from mmap (a process's first large
 * blocks) or from the heap (once freeing one raised its mmap threshold): a search's training
 * images (loaded first) and test images (loaded last) have one layout (issue 25). */
static void test_image_blocks_start_on_a_page(void)
{
    pf_error err;
    for (int round = 0; round < 3; round++) {
        pf_image *a = pf_image_new(820, 614, 3, &err), *b = pf_image_new(820, 614, 3, &err);
        pf_image *c = pf_image_new(17, 5, 1, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT(((uintptr_t)a->data & (PF_IMAGE_PAGE - 1)) == 0);
        CU_ASSERT(((uintptr_t)b->data & (PF_IMAGE_PAGE - 1)) == 0);
        CU_ASSERT(((uintptr_t)c->data & (PF_IMAGE_PAGE - 1)) == 0);
        pf_image_free(a);  /* glibc raises its mmap threshold: the next ones come from the heap */
        pf_image_free(b);
        pf_image_free(c);
    }
}

static void test_image_new_rejects_bad_sizes(void)
{
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_image_new(0, 10, 3, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "zero"));
    CU_ASSERT_PTR_NULL(pf_image_new(10, -4, 3, &err));
    CU_ASSERT_PTR_NULL(pf_image_new(10, 10, 5, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "channels"));
    CU_ASSERT_PTR_NULL(pf_image_new(70000, 10, 1, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "per side"));
    /* Within the side limit but 2^32 pixels: refused before any allocation. */
    CU_ASSERT_PTR_NULL(pf_image_new(65535, 65535, 4, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "pixels"));
}

/* The bundled photos load as 3-channel images of the size in their names, equal to what
 * libpng's simplified API decodes (an independent path through libpng). */
static void test_image_load_bundled_photos(void)
{
    for (int i = 0; i < 6; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "data/images/train/%s", train_images[i]);
        pf_error err;
        pf_image *img = pf_image_load(pf_test_src(rel), &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        int big = strstr(train_images[i], "820x614") != NULL;
        CU_ASSERT_EQUAL(img->width, big ? 820 : 256);
        CU_ASSERT_EQUAL(img->height, big ? 614 : 192);
        CU_ASSERT_EQUAL(img->channels, 3);
        png_image ref;
        memset(&ref, 0, sizeof ref);
        ref.version = PNG_IMAGE_VERSION;
        CU_ASSERT_FATAL(png_image_begin_read_from_file(&ref, pf_test_src(rel)));
        ref.format = PNG_FORMAT_RGB;
        unsigned char *px = malloc(PNG_IMAGE_SIZE(ref));
        CU_ASSERT_FATAL(png_image_finish_read(&ref, NULL, px, 0, NULL));
        int mismatches = 0;
        for (int y = 0; y < img->height; y++)
            for (int x = 0; x < img->width; x++)
                for (int c = 0; c < 3; c++)
                    mismatches += *pf_image_at(img, x, y, c) !=
                                  (float)px[((size_t)y * img->width + x) * 3 + c] / 255.0f;
        CU_ASSERT_EQUAL(mismatches, 0);
        free(px);
        pf_image_free(img);
    }
}

/* Random 8-bit values survive an 8-bit PNG round trip exactly, for 1 to 4 channels; the padding
 * of a loaded image is zero. */
static void test_image_png8_round_trip(void)
{
    for (int ch = 1; ch <= 4; ch++) {
        uint64_t seed = 99 + (uint64_t)ch;
        pf_image *img = pf_image_new(37, 23, ch, NULL);
        for (int c = 0; c < ch; c++)
            for (int y = 0; y < 23; y++)
                for (int x = 0; x < 37; x++)
                    *pf_image_at(img, x, y, c) = (float)(pf_t_rand(&seed) % 256) / 255.0f;
        pf_error err;
        const char *path = pf_test_tmp("rt8.png");
        CU_ASSERT_EQUAL_FATAL(pf_image_save(img, path, &err), 0);
        pf_image *back = pf_image_load(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        CU_ASSERT_EQUAL(back->channels, ch);
        CU_ASSERT_EQUAL(pf_t_max_abs_diff(img, back), 0.0);
        CU_ASSERT_EQUAL(*pf_image_at(back, 40, 5, ch - 1), 0.0f);
        pf_image_free(img);
        pf_image_free(back);
    }
}

static void test_image_png16_round_trip(void)
{
    uint64_t seed = 5;
    pf_image *img = pf_image_new(19, 11, 3, NULL);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 11; y++)
            for (int x = 0; x < 19; x++)
                *pf_image_at(img, x, y, c) = (float)(pf_t_rand(&seed) % 65536) / 65535.0f;
    pf_error err;
    const char *path = pf_test_tmp("rt16.png");
    CU_ASSERT_EQUAL_FATAL(pf_image_save_png(img, path, 16, &err), 0);
    pf_image *back = pf_image_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(pf_t_max_abs_diff(img, back), 0.0);
    pf_image_free(img);
    pf_image_free(back);
}

/* Saving clamps to [0,1] and rounds half up (NaN saves as 0). */
static void test_image_save_quantises(void)
{
    pf_image *img = pf_image_new(5, 1, 1, NULL);
    const float in[5] = { -0.5f, 1.5f, 0.5f, 100.4f / 255.0f, NAN };
    const float want[5] = { 0.0f, 1.0f, 128.0f / 255.0f, 100.0f / 255.0f, 0.0f };
    memcpy(img->data, in, sizeof in);
    pf_error err;
    const char *path = pf_test_tmp("quant.png");
    CU_ASSERT_EQUAL_FATAL(pf_image_save(img, path, &err), 0);
    pf_image *back = pf_image_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(back->data[i], want[i]);
    pf_image_free(img);
    pf_image_free(back);
}

static pf_image *load_spec(const char *name, const pf_t_png_spec *spec)
{
    const char *path = pf_test_tmp(name);
    CU_ASSERT_EQUAL_FATAL(pf_t_write_png(path, spec), 0);
    pf_error err;
    pf_image *img = pf_image_load(path, &err);
    if (!img)
        printf("\n    %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    return img;
}

/* A 16-bit RGB file written by libpng: samples come back as v / 65535 exactly. */
static void test_image_png16_from_libpng(void)
{
    int w = 6, h = 4;
    unsigned char rows[4 * 6 * 6];
    for (int i = 0; i < w * h * 3; i++) {
        unsigned v = (unsigned)(i * 2731 + 17) & 0xffff;
        rows[2 * i] = (unsigned char)(v >> 8);
        rows[2 * i + 1] = (unsigned char)(v & 0xff);
    }
    pf_t_png_spec s = { w, h, PNG_COLOR_TYPE_RGB, 16, PNG_INTERLACE_NONE, rows, 0, 0, 0, 0 };
    pf_image *img = load_spec("lib16.png", &s);
    CU_ASSERT_EQUAL(img->channels, 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                unsigned v = (unsigned)(((y * w + x) * 3 + c) * 2731 + 17) & 0xffff;
                CU_ASSERT_EQUAL(*pf_image_at(img, x, y, c), (float)v / 65535.0f);
            }
    pf_image_free(img);
}

/* Palette files (8-bit and 2-bit), with tRNS -> RGBA and without -> RGB. */
static void test_image_png_palette(void)
{
    const unsigned char pal[12] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30 };
    const unsigned char trns[2] = { 0, 128 };
    unsigned char rows8[3 * 4], rows2[3 * 1];
    for (int i = 0; i < 12; i++)
        rows8[i] = (unsigned char)(i % 4);
    for (int y = 0; y < 3; y++)
        rows2[y] = (unsigned char)(0x1b << (y & 1)); /* 2-bit indices 0,1,2,3 (row 1: 0,3,1,2) */
    pf_t_png_spec a = { 4, 3, PNG_COLOR_TYPE_PALETTE, 8, 0, rows8, pal, 4, trns, 2 };
    pf_image *img = load_spec("pal8.png", &a);
    CU_ASSERT_EQUAL(img->channels, 4);
    CU_ASSERT_EQUAL(*pf_image_at(img, 0, 0, 0), 1.0f);      /* index 0: red */
    CU_ASSERT_EQUAL(*pf_image_at(img, 0, 0, 3), 0.0f);      /* tRNS alpha 0 */
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 0, 3), 128.0f / 255.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 2, 0, 2), 1.0f);      /* index 2: blue, opaque */
    CU_ASSERT_EQUAL(*pf_image_at(img, 2, 0, 3), 1.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 3, 1, 1), 20.0f / 255.0f);
    pf_image_free(img);
    pf_t_png_spec b = { 4, 3, PNG_COLOR_TYPE_PALETTE, 2, 0, rows2, pal, 4, NULL, 0 };
    img = load_spec("pal2.png", &b);
    CU_ASSERT_EQUAL(img->channels, 3);
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 0, 1), 1.0f);      /* index 1: green */
    CU_ASSERT_EQUAL(*pf_image_at(img, 3, 0, 0), 10.0f / 255.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 1, 2), 30.0f / 255.0f); /* row 1 shifted: index 3 */
    pf_image_free(img);
}

/* Gray+alpha 8-bit, gray 1-bit (0/1 -> 0.0/1.0) and gray 16-bit. */
static void test_image_png_gray_kinds(void)
{
    unsigned char ga[2 * 3 * 2];
    for (int i = 0; i < 12; i++)
        ga[i] = (unsigned char)(i * 20);
    pf_t_png_spec a = { 3, 2, PNG_COLOR_TYPE_GRAY_ALPHA, 8, 0, ga, 0, 0, 0, 0 };
    pf_image *img = load_spec("ga8.png", &a);
    CU_ASSERT_EQUAL(img->channels, 2);
    CU_ASSERT_EQUAL(*pf_image_at(img, 2, 1, 0), 200.0f / 255.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 2, 1, 1), 220.0f / 255.0f);
    pf_image_free(img);

    unsigned char bits[2] = { 0xa0, 0x40 }; /* row 0: 1 0 1 0..., row 1: 0 1 0 ... */
    pf_t_png_spec b = { 3, 2, PNG_COLOR_TYPE_GRAY, 1, 0, bits, 0, 0, 0, 0 };
    img = load_spec("g1.png", &b);
    CU_ASSERT_EQUAL(img->channels, 1);
    CU_ASSERT_EQUAL(*pf_image_at(img, 0, 0, 0), 1.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 0, 0), 0.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 1, 0), 1.0f);
    pf_image_free(img);

    unsigned char g16[4] = { 0x12, 0x34, 0xff, 0xff };
    pf_t_png_spec c = { 2, 1, PNG_COLOR_TYPE_GRAY, 16, 0, g16, 0, 0, 0, 0 };
    img = load_spec("g16.png", &c);
    CU_ASSERT_EQUAL(*pf_image_at(img, 0, 0, 0), (float)0x1234 / 65535.0f);
    CU_ASSERT_EQUAL(*pf_image_at(img, 1, 0, 0), 1.0f);
    pf_image_free(img);
}

/* Adam7 interlaced RGBA: the same pixels as written. */
static void test_image_png_interlaced(void)
{
    int w = 13, h = 9;
    unsigned char *rows = malloc((size_t)w * h * 4);
    for (int i = 0; i < w * h * 4; i++)
        rows[i] = (unsigned char)(i * 7 + 3);
    pf_t_png_spec s = { w, h, PNG_COLOR_TYPE_RGB_ALPHA, 8, PNG_INTERLACE_ADAM7, rows, 0, 0, 0, 0 };
    pf_image *img = load_spec("adam7.png", &s);
    int bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 4; c++)
                bad += *pf_image_at(img, x, y, c) !=
                       (float)rows[((size_t)y * w + x) * 4 + c] / 255.0f;
    CU_ASSERT_EQUAL(bad, 0);
    free(rows);
    pf_image_free(img);
}

static unsigned char *smooth_bytes(int w, int h, int comps)
{
    pf_image *img = pf_t_smooth_image(w, h, comps);
    unsigned char *px = malloc((size_t)w * h * comps);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < comps; c++)
                px[((size_t)y * w + x) * comps + c] =
                    (unsigned char)lrintf(*pf_image_at(img, x, y, c) * 255.0f);
    pf_image_free(img);
    return px;
}

/* Baseline and progressive encodings of the same pixels at the same quality carry the same DCT
 * coefficients, so they must decode to identical images; and close to the source. */
static void test_image_jpeg_baseline_and_progressive(void)
{
    for (int comps = 1; comps <= 3; comps += 2) {
        int w = 64, h = 48;
        unsigned char *px = smooth_bytes(w, h, comps);
        size_t nb, np;
        unsigned char *base = pf_t_encode_jpeg(px, w, h, comps, 92, 0, &nb);
        unsigned char *prog = pf_t_encode_jpeg(px, w, h, comps, 92, 1, &np);
        CU_ASSERT(memcmp(base, prog, nb < np ? nb : np) != 0);
        pf_error err;
        pf_image *a = pf_image_decode_jpeg(base, nb, "base.jpg", &err);
        pf_image *b = pf_image_decode_jpeg(prog, np, "prog.jpg", &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_EQUAL(a->channels, comps);
        CU_ASSERT_EQUAL(a->width, w);
        CU_ASSERT_EQUAL(a->height, h);
        CU_ASSERT_EQUAL(pf_t_max_abs_diff(a, b), 0.0);
        double sum = 0.0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < comps; c++)
                    sum += fabs(*pf_image_at(a, x, y, c) * 255.0 -
                                px[((size_t)y * w + x) * comps + c]);
        CU_ASSERT(sum / (w * h * comps) < 2.0);
        pf_image_free(a);
        pf_image_free(b);
        free(base);
        free(prog);
        free(px);
    }
}

/* Our JPEG saver: RGB and gray, by extension, reloads close to the source. */
static void test_image_jpeg_save_round_trip(void)
{
    const char *names[2] = { "rt.jpg", "rt.JPEG" };
    for (int k = 0; k < 2; k++) {
        int ch = k == 0 ? 3 : 1;
        pf_image *img = pf_t_smooth_image(80, 60, ch);
        pf_error err;
        const char *path = pf_test_tmp(names[k]);
        CU_ASSERT_EQUAL_FATAL(pf_image_save(img, path, &err), 0);
        pf_image *back = pf_image_load(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        CU_ASSERT_EQUAL(back->channels, ch);
        CU_ASSERT(pf_t_max_abs_diff(img, back) < 8.0 / 255.0);
        pf_image_free(img);
        pf_image_free(back);
    }
    /* RGBA saves as RGB (JPEG has no alpha). */
    pf_image *rgba = pf_t_smooth_image(16, 16, 4);
    pf_error err;
    CU_ASSERT_EQUAL(pf_image_save_jpeg(rgba, pf_test_tmp("rgba.jpg"), 90, &err), 0);
    pf_image *back = pf_image_load(pf_test_tmp("rgba.jpg"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(back->channels, 3);
    pf_image_free(back);
    pf_image_free(rgba);
}

/* Loading goes by content: PNG bytes in a .jpg file load as PNG. */
static void test_image_load_by_content(void)
{
    pf_image *img = pf_t_noise_image(8, 8, 3, 1);
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_image_save(img, pf_test_tmp("content.png"), &err), 0);
    CU_ASSERT_EQUAL_FATAL(rename(pf_test_tmp("content.png"), pf_test_tmp("content.jpg")), 0);
    pf_image *back = pf_image_load(pf_test_tmp("content.jpg"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT(pf_t_max_abs_diff(img, back) <= 0.5 / 255.0 + 1e-7);
    pf_image_free(img);
    pf_image_free(back);
}

static void test_image_save_by_extension_errors(void)
{
    pf_image *img = pf_t_noise_image(4, 4, 3, 2);
    pf_error err;
    const char *path = pf_test_tmp("noext");
    CU_ASSERT_EQUAL(pf_image_save(img, path, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "noext"));
    CU_ASSERT(!file_exists(path));
    CU_ASSERT_EQUAL(pf_image_save(img, pf_test_tmp("x.tiff"), &err), -1);
    CU_ASSERT(!file_exists(pf_test_tmp("x.tiff")));
    CU_ASSERT_EQUAL(pf_image_save(img, pf_test_tmp("UPPER.PNG"), &err), 0);
    CU_ASSERT(file_exists(pf_test_tmp("UPPER.PNG")));
    pf_image_free(img);
}

static void test_image_to_rgb(void)
{
    for (int ch = 1; ch <= 4; ch++) {
        pf_image *img = pf_t_noise_image(9, 5, ch, 10 + (uint64_t)ch);
        pf_error err;
        pf_image *rgb = pf_image_to_rgb(img, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rgb);
        CU_ASSERT_EQUAL(rgb->channels, 3);
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 9; x++)
                for (int c = 0; c < 3; c++)
                    CU_ASSERT_EQUAL(*pf_image_at(rgb, x, y, c),
                                    *pf_image_at(img, x, y, ch >= 3 ? c : 0));
        pf_image_free(rgb);
        pf_image_free(img);
    }
}

static void test_image_quantize8_trunc(void)
{
    pf_image *img = pf_image_new(8, 1, 1, NULL);
    const float in[8] = { 0.5f, 1.2f, -0.1f, NAN, 254.9f / 255.0f, 1.0f, 0.0f, 3.0f / 255.0f };
    const float want[8] = { 127.0f / 255.0f, 1.0f, 0.0f, 0.0f, 254.0f / 255.0f, 1.0f, 0.0f,
                            3.0f / 255.0f };
    memcpy(img->data, in, sizeof in);
    pf_image_quantize8_trunc(img);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(img->data[i], want[i]);
    /* Idempotent on every 8-bit value. */
    pf_image *all = pf_image_new(256, 1, 1, NULL);
    for (int k = 0; k < 256; k++)
        all->data[k] = (float)k / 255.0f;
    pf_image_quantize8_trunc(all);
    for (int k = 0; k < 256; k++)
        CU_ASSERT_EQUAL_FATAL(all->data[k], (float)k / 255.0f);
    pf_image_free(all);
    pf_image_free(img);
}

PF_TEST_SUITE(dataset_image, PF_TEST(test_image_new_layout),
              PF_TEST(test_image_blocks_start_on_a_page),
              PF_TEST(test_image_new_rejects_bad_sizes), PF_TEST(test_image_load_bundled_photos),
              PF_TEST(test_image_png8_round_trip), PF_TEST(test_image_png16_round_trip),
              PF_TEST(test_image_save_quantises), PF_TEST(test_image_png16_from_libpng),
              PF_TEST(test_image_png_palette), PF_TEST(test_image_png_gray_kinds),
              PF_TEST(test_image_png_interlaced), PF_TEST(test_image_jpeg_baseline_and_progressive),
              PF_TEST(test_image_jpeg_save_round_trip), PF_TEST(test_image_load_by_content),
              PF_TEST(test_image_save_by_extension_errors), PF_TEST(test_image_to_rgb),
              PF_TEST(test_image_quantize8_trunc))
