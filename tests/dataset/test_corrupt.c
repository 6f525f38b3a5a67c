/* Bad input never crashes, leaks or hangs, and always fails with a message that names the file:
 * truncated and bit-flipped PNGs and JPEGs made here from valid ones, crafted headers with zero,
 * absurd or unsupported values, wrong magic, unreadable paths; and failed saves leave no file. */
#include "dataset/image.h"
#include "tests/dataset/codec_fixtures.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

typedef pf_image *(*pf_t_decoder)(const void *, size_t, const char *, pf_error *);

/* A decode of damaged bytes either fails naming the file or yields a sane image. Returns 1 if
 * it failed. */
static int decode_damaged(pf_t_decoder dec, const unsigned char *buf, size_t len,
                          const char *name)
{
    pf_error err;
    err.msg[0] = '\0';
    pf_image *img = dec(buf, len, name, &err);
    if (!img) {
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name));
        return 1;
    }
    CU_ASSERT(img->width > 0 && img->height > 0 && img->channels >= 1 && img->channels <= 4);
    int bad = 0;
    for (int c = 0; c < img->channels; c++)
        for (int y = 0; y < img->height; y++)
            for (int x = 0; x < img->width; x++) {
                float v = *pf_image_at(img, x, y, c);
                bad += !(v >= 0.0f && v <= 1.0f);
            }
    CU_ASSERT_EQUAL(bad, 0);
    pf_image_free(img);
    return 0;
}

static unsigned char *valid_png(size_t *len)
{
    pf_image *img = pf_t_noise_image(40, 30, 3, 77);
    pf_error err;
    const char *path = pf_test_tmp("valid.png");
    CU_ASSERT_EQUAL_FATAL(pf_image_save(img, path, &err), 0);
    pf_image_free(img);
    unsigned char *buf = pf_t_slurp(path, len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    return buf;
}

/* A JPEG written by our own saver (and a progressive one by libjpeg), from a smooth image with
 * some noise so every scan carries data. */
static unsigned char *valid_jpeg(int progressive, size_t *len)
{
    pf_image *img = pf_t_smooth_image(48, 40, 3);
    uint64_t seed = 3;
    for (size_t i = 0; i < img->plane * 3; i++)
        img->data[i] = fminf(1.0f, img->data[i] + 0.1f * (float)pf_t_uniform(&seed));
    if (!progressive) {
        pf_error err;
        const char *path = pf_test_tmp("valid.jpg");
        CU_ASSERT_EQUAL_FATAL(pf_image_save_jpeg(img, path, 90, &err), 0);
        pf_image_free(img);
        return pf_t_slurp(path, len);
    }
    unsigned char *px = malloc((size_t)img->width * img->height * 3);
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            for (int c = 0; c < 3; c++)
                px[((size_t)y * img->width + x) * 3 + c] =
                    (unsigned char)(*pf_image_at(img, x, y, c) * 255.0f);
    unsigned char *out = pf_t_encode_jpeg(px, img->width, img->height, 3, 90, 1, len);
    free(px);
    pf_image_free(img);
    return out;
}

/* Every prefix of a valid file is refused: the first 80 lengths one by one, then ~150 cuts
 * spread over the rest, and the file less its last byte. */
static void truncate_all(pf_t_decoder dec, const unsigned char *buf, size_t len, const char *name)
{
    int tried = 0, failed = 0;
    size_t step = len / 150 + 1;
    for (size_t cut = 0; cut < len; cut += cut < 80 ? 1 : step) {
        failed += decode_damaged(dec, buf, cut, name);
        tried++;
    }
    failed += decode_damaged(dec, buf, len - 1, name);
    tried++;
    CU_ASSERT_EQUAL(failed, tried);
    CU_ASSERT(decode_damaged(dec, buf, len, name) == 0); /* and the whole file is fine */
}

static void test_corrupt_truncated_png(void)
{
    size_t len;
    unsigned char *buf = valid_png(&len);
    truncate_all(pf_image_decode_png, buf, len, "cut.png");
    free(buf);
}

static void test_corrupt_truncated_jpeg(void)
{
    for (int prog = 0; prog <= 1; prog++) {
        size_t len;
        unsigned char *buf = valid_jpeg(prog, &len);
        truncate_all(pf_image_decode_jpeg, buf, len, prog ? "cut-prog.jpg" : "cut.jpg");
        free(buf);
    }
}

/* Truncated files on disk, through pf_image_load: the message names the path. */
static void test_corrupt_truncated_files_named(void)
{
    size_t len;
    unsigned char *png = valid_png(&len);
    const char *path = pf_test_tmp("short.png");
    CU_ASSERT_EQUAL_FATAL(pf_t_write(path, png, len / 2), 0);
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_image_load(path, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
    free(png);
    unsigned char *jpg = valid_jpeg(0, &len);
    path = pf_test_tmp("short.jpg");
    CU_ASSERT_EQUAL_FATAL(pf_t_write(path, jpg, len * 2 / 3), 0);
    CU_ASSERT_PTR_NULL(pf_image_load(path, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Premature end"));
    free(jpg);
}

/* `count` single-bit flips at deterministic positions (none in the first `skip` bytes);
 * fix_crc re-seals PNG chunks so the damage reaches inflate and the filters. */
static int flip_many(pf_t_decoder dec, const unsigned char *buf, size_t len, size_t skip,
                     int count, int fix_crc, const char *name)
{
    unsigned char *copy = malloc(len);
    uint64_t seed = 12345 + (uint64_t)len;
    int failed = 0;
    for (int i = 0; i < count; i++) {
        memcpy(copy, buf, len);
        size_t pos = skip + (size_t)(pf_t_rand(&seed) % (len - skip));
        copy[pos] ^= (unsigned char)(1u << (pf_t_rand(&seed) % 8));
        if (fix_crc)
            pf_t_png_fix_crcs(copy, len);
        failed += decode_damaged(dec, copy, len, name);
    }
    free(copy);
    return failed;
}

static void test_corrupt_bitflip_png(void)
{
    size_t len;
    unsigned char *buf = valid_png(&len);
    /* With intact CRCs every flip after the signature is caught by a checksum or a check. */
    int failed = flip_many(pf_image_decode_png, buf, len, 0, 300, 0, "flip.png");
    printf("\n    PNG, checksums kept: %d of 300 flips refused", failed);
    CU_ASSERT(failed >= 290);
    /* Control: re-sealing an undamaged file keeps it valid. */
    unsigned char *same = malloc(len);
    memcpy(same, buf, len);
    pf_t_png_fix_crcs(same, len);
    CU_ASSERT_EQUAL(memcmp(same, buf, len), 0);
    free(same);
    failed = flip_many(pf_image_decode_png, buf, len, 8, 300, 1, "flip.png");
    printf("\n    PNG, checksums re-sealed: %d of 300 flips refused", failed);
    CU_ASSERT(failed > 0);
    free(buf);
}

/* JPEG has no checksums: many flips decode to a damaged image; none may crash. */
static void test_corrupt_bitflip_jpeg(void)
{
    for (int prog = 0; prog <= 1; prog++) {
        size_t len;
        unsigned char *buf = valid_jpeg(prog, &len);
        int failed = flip_many(pf_image_decode_jpeg, buf, len, 0, 400, 0, "flip.jpg");
        printf("\n    %s JPEG: %d of 400 flips refused", prog ? "progressive" : "baseline",
               failed);
        CU_ASSERT(failed > 0);
        free(buf);
    }
}

/* --- crafted headers ---------------------------------------------------------------------- */

static void put_be32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Signature, an IHDR with the given fields, the IDAT of one gray pixel, and IEND. */
static size_t craft_png(unsigned char *out, unsigned long w, unsigned long h, int depth, int type)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    memcpy(out, sig, 8);
    put_be32(out + 8, 13);
    memcpy(out + 12, "IHDR", 4);
    put_be32(out + 16, w);
    put_be32(out + 20, h);
    out[24] = (unsigned char)depth;
    out[25] = (unsigned char)type;
    out[26] = out[27] = out[28] = 0; /* compression, filter, interlace */
    size_t pos = 33;                 /* after IHDR's CRC, which pf_t_png_fix_crcs fills in */
    static const unsigned char idat[] = { 0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00,
                                          0x01 };
    put_be32(out + pos, sizeof idat);
    memcpy(out + pos + 4, "IDAT", 4);
    memcpy(out + pos + 8, idat, sizeof idat);
    pos += 12 + sizeof idat;
    put_be32(out + pos, 0);
    memcpy(out + pos + 4, "IEND", 4);
    pos += 12;
    pf_t_png_fix_crcs(out, pos);
    return pos;
}

static void expect_png_error(unsigned long w, unsigned long h, int depth, int type,
                             const char *want1, const char *want2)
{
    unsigned char buf[128];
    size_t n = craft_png(buf, w, h, depth, type);
    pf_error err;
    pf_image *img = pf_image_decode_png(buf, n, "crafted.png", &err);
    CU_ASSERT_PTR_NULL(img);
    pf_image_free(img);
    printf("\n    %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "crafted.png"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want1));
    if (want2)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want2));
}

static void test_corrupt_png_headers(void)
{
    /* The crafted file itself is valid for 1x1 gray: check the fixture first. */
    unsigned char buf[128];
    size_t n = craft_png(buf, 1, 1, 8, 0);
    pf_error err;
    pf_image *img = pf_image_decode_png(buf, n, "crafted.png", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    CU_ASSERT_EQUAL(img->width, 1);
    pf_image_free(img);
    expect_png_error(100000, 100000, 8, 2, "100000x100000", "per side");
    expect_png_error(60000, 60000, 8, 2, "60000x60000", "limit");
    expect_png_error(15000, 15000, 8, 2, "15000x15000", "bomb");
    expect_png_error(0, 10, 8, 2, "zero", "0x10");
    expect_png_error(10, 0, 8, 2, "zero", "10x0");
    expect_png_error(0x80000000UL, 4, 8, 2, "2147483648x4", "per side");
    expect_png_error(4, 4, 3, 0, "bit depth 3", NULL);
    expect_png_error(4, 4, 16, 3, "bit depth 16", NULL);
    expect_png_error(4, 4, 8, 5, "colour type 5", NULL);
}

/* SOF0 fields: precision byte, then height and width (big-endian 16-bit). */
static void expect_jpeg_error(size_t sof, int precision, int h, int w, const char *want)
{
    size_t len;
    unsigned char *buf = valid_jpeg(0, &len);
    /* sof points at the segment length; +2 precision, +3 height, +5 width */
    buf[sof + 2] = (unsigned char)precision;
    buf[sof + 3] = (unsigned char)(h >> 8);
    buf[sof + 4] = (unsigned char)h;
    buf[sof + 5] = (unsigned char)(w >> 8);
    buf[sof + 6] = (unsigned char)w;
    pf_error err;
    pf_image *img = pf_image_decode_jpeg(buf, len, "crafted.jpg", &err);
    CU_ASSERT_PTR_NULL(img);
    pf_image_free(img);
    printf("\n    %s", err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "crafted.jpg"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    free(buf);
}

static void test_corrupt_jpeg_headers(void)
{
    size_t len;
    unsigned char *buf = valid_jpeg(0, &len);
    size_t sof = pf_t_jpeg_find_marker(buf, len, 0xc0);
    CU_ASSERT_FATAL(sof > 0);
    CU_ASSERT_EQUAL(buf[sof + 2], 8);
    CU_ASSERT_EQUAL((buf[sof + 3] << 8) | buf[sof + 4], 40);
    free(buf);
    expect_jpeg_error(sof, 8, 0, 48, "Empty JPEG image");
    expect_jpeg_error(sof, 8, 40, 0, "Empty JPEG image");
    expect_jpeg_error(sof, 8, 65500, 65500, "limit");
    expect_jpeg_error(sof, 12, 40, 48, "precision");
    expect_jpeg_error(sof, 8, 40, 5000, "remature end"); /* claims more than it holds */
}

static void expect_load_error(const char *name, const void *bytes, size_t n, const char *want)
{
    const char *path = pf_test_tmp(name);
    CU_ASSERT_EQUAL_FATAL(pf_t_write(path, bytes, n), 0);
    pf_error err;
    CU_ASSERT_PTR_NULL(pf_image_load(path, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
}

static void test_corrupt_wrong_magic_and_paths(void)
{
    expect_load_error("gif.png", "GIF89a\x01\x00\x01\x00", 10, "not a PNG or JPEG");
    expect_load_error("empty.png", "", 0, "empty");
    expect_load_error("text.jpg", "hello, world\n", 13, "not a PNG or JPEG");
    expect_load_error("ff.jpg", "\xff\xd8\xff\xe0garbage", 11, "corrupt");
    expect_load_error("sig.png", "\x89PNG\r\n\x1a\n", 8, "truncated");
    pf_error err;
    const char *missing = pf_test_tmp("does-not-exist.png");
    CU_ASSERT_PTR_NULL(pf_image_load(missing, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, missing));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));
    const char *dir = pf_test_tmp("a-directory.png");
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0777), 0);
    CU_ASSERT_PTR_NULL(pf_image_load(dir, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, dir));
}

/* --- failed saves ------------------------------------------------------------------------- */

/* Names in `dir` other than "." and "..", for checking that no temporary file is left. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_corrupt_failed_saves_leave_nothing(void)
{
    const char *dir = pf_test_tmp("saves");
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0777), 0);
    char path[4096];
    pf_image *img = pf_t_noise_image(200, 150, 3, 8);
    pf_error err;
    /* Into a missing directory. */
    snprintf(path, sizeof path, "%s/missing/x.png", dir);
    CU_ASSERT_EQUAL(pf_image_save(img, path, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    /* Onto an existing directory: everything is written, the final rename fails. */
    snprintf(path, sizeof path, "%s/is-a-dir.png", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0777), 0);
    CU_ASSERT_EQUAL(pf_image_save(img, path, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    snprintf(path, sizeof path, "%s/is-a-dir.jpg", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0777), 0);
    CU_ASSERT_EQUAL(pf_image_save(img, path, &err), -1);
    /* Bad parameters fail before anything is created. */
    snprintf(path, sizeof path, "%s/bad.png", dir);
    CU_ASSERT_EQUAL(pf_image_save_png(img, path, 12, &err), -1);
    CU_ASSERT_EQUAL(pf_image_save_jpeg(img, path, 0, &err), -1);
    CU_ASSERT_EQUAL(count_entries(dir), 2); /* just the two directories */
    /* Out of space half-way: a file size limit makes the encoder's writes fail. Nothing else may
     * write a file meanwhile (stdout may be one), so flush first and print nothing inside. */
    fflush(stdout);
    fflush(stderr);
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit small = { 4096, old.rlim_max };
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    const char *names[2] = { "full.png", "full.jpg" };
    int rc[2];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        setrlimit(RLIMIT_FSIZE, &small);
        rc[k] = pf_image_save(img, path, &err);
        setrlimit(RLIMIT_FSIZE, &old);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    }
    signal(SIGXFSZ, old_handler);
    CU_ASSERT_EQUAL(rc[0], -1);
    CU_ASSERT_EQUAL(rc[1], -1);
    CU_ASSERT_EQUAL(count_entries(dir), 2);
    /* And the same saves succeed without the limit. */
    CU_ASSERT_EQUAL(pf_image_save(img, path, &err), 0);
    CU_ASSERT_EQUAL(count_entries(dir), 3);
    pf_image_free(img);
}

PF_TEST_SUITE(dataset_corrupt, PF_TEST(test_corrupt_truncated_png),
              PF_TEST(test_corrupt_truncated_jpeg), PF_TEST(test_corrupt_truncated_files_named),
              PF_TEST(test_corrupt_bitflip_png), PF_TEST(test_corrupt_bitflip_jpeg),
              PF_TEST(test_corrupt_png_headers), PF_TEST(test_corrupt_jpeg_headers),
              PF_TEST(test_corrupt_wrong_magic_and_paths),
              PF_TEST(test_corrupt_failed_saves_leave_nothing))
