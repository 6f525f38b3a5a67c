/* Tests for the image benchmark: SHA-256, Lanczos resampling against a direct 2-D reference,
 * the manifest (parse, print, filter, errors with file:line), the source list, the embedded
 * default benchmark in data/images, and a real build from one Debian package (python3-sklearn,
 * about 2 MB) checked for its manifest, sizes, determinism and clean failures. The build tests
 * need `apt-get download` to reach Debian's archive; without it they fail and say why. */
#include "dataset/builder.h"
#include "dataset/image.h"
#include "dataset/manifest.h"
#include "dataset/resample.h"
#include "dataset/sha256.h"
#include "dataset/sources.h"
#include "tests/dataset/dataset_test_util.h"
#include "tests/harness/harness.h"

#include "base/fileio.h"
#include "base/strbuf.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- SHA-256 ------------------------------------------------------------------------------- */

static void test_sha256_fips_vectors(void)
{
    char hex[65];
    pf_sha256_hex("", 0, hex);
    CU_ASSERT_STRING_EQUAL(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    pf_sha256_hex("abc", 3, hex);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    pf_sha256_hex(two, strlen(two), hex);
    CU_ASSERT_STRING_EQUAL(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* A million 'a', fed in uneven pieces across block boundaries. */
    pf_sha256 s;
    pf_sha256_init(&s);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof a ? left : sizeof a;
        pf_sha256_update(&s, a, n);
        left -= n;
    }
    pf_sha256_final_hex(&s, hex);
    CU_ASSERT_STRING_EQUAL(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* --- resampling ---------------------------------------------------------------------------- */

static pf_image *constant_image(int w, int h, int c, float v)
{
    pf_image *img = pf_image_new(w, h, c, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int k = 0; k < c; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(img, x, y, k) = v + 0.1f * (float)k;
    return img;
}

static pf_image *checkerboard(int w, int h, int channels)
{
    pf_image *img = pf_image_new(w, h, channels, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int k = 0; k < channels; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(img, x, y, k) = (float)((x + y) & 1);
    return img;
}

/* Largest |img - v| over channel c, leaving out a border of `margin` pixels. */
static double max_dev_inside(const pf_image *img, int c, double v, int margin)
{
    double m = 0.0;
    for (int y = margin; y < img->height - margin; y++)
        for (int x = margin; x < img->width - margin; x++)
            m = fmax(m, fabs(*pf_image_at(img, x, y, c) - v));
    return m;
}

static double max_dev(const pf_image *img, int c, double v)
{
    return max_dev_inside(img, c, v, 0);
}

static void test_resample_constant_stays_constant(void)
{
    pf_image *img = constant_image(37, 23, 3, 0.3f);
    static const int sizes[][2] = { { 11, 7 }, { 80, 50 }, { 37, 23 }, { 5, 29 } };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        pf_image *out = pf_resample(img, sizes[i][0], sizes[i][1], NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_EQUAL(out->width, sizes[i][0]);
        CU_ASSERT_EQUAL(out->height, sizes[i][1]);
        for (int c = 0; c < 3; c++)
            CU_ASSERT(max_dev(out, c, 0.3 + 0.1 * c) < 1e-5);
        pf_image_free(out);
    }
    pf_image_free(img);
}

/* A 1 px checkerboard is pure Nyquist-frequency content: an antialiasing filter must remove it
 * (uniform 0.5), where point sampling would give 0s and 1s or a moire pattern. Factors 4 and
 * 3.2 (not an integer, the harder case). Along the image's edge the repeated edge pixels break
 * the pattern's balance, so the outermost output pixels may be off by about 1%. */
static void test_resample_checkerboard_no_aliasing(void)
{
    pf_image *img = checkerboard(64, 48, 1);
    pf_image *a = pf_resample(img, 16, 12, NULL), *b = pf_resample(img, 20, 15, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(max_dev_inside(a, 0, 0.5, 1) < 0.002);
    CU_ASSERT(max_dev_inside(b, 0, 0.5, 1) < 0.004);
    CU_ASSERT(max_dev(a, 0, 0.5) < 0.015);
    CU_ASSERT(max_dev(b, 0, 0.5) < 0.015);
    pf_image_free(a);
    pf_image_free(b);
    pf_image_free(img);
}

static double ref_lanczos3(double x)
{
    x = fabs(x);
    if (x == 0.0)
        return 1.0;
    if (x >= 3.0)
        return 0.0;
    return sin(M_PI * x) / (M_PI * x) * sin(M_PI * x / 3.0) / (M_PI * x / 3.0);
}

/* Normalised Lanczos weight of source sample j for output sample i on one axis. */
static double ref_weight(int n_src, double x0, double len, int n_out, int i, int j)
{
    double scale = len / n_out, fs = fmax(scale, 1.0), c = x0 + (i + 0.5) * scale, sum = 0.0;
    for (int k = -200; k < n_src + 200; k++)
        sum += ref_lanczos3((k + 0.5 - c) / fs);
    double w = 0.0; /* taps beyond the edge repeat the edge sample */
    for (int k = -200; k < n_src + 200; k++) {
        int kk = k < 0 ? 0 : k >= n_src ? n_src - 1 : k;
        if (kk == j)
            w += ref_lanczos3((k + 0.5 - c) / fs);
    }
    return w / sum;
}

/* The separable implementation against the direct 2-D sum, down and up, with a window. */
static void test_resample_matches_direct_reference(void)
{
    pf_image *img = pf_t_noise_image(13, 9, 2, 77);
    static const pf_window wins[] = { { 0, 0, 13, 9 }, { 1.25, 0.5, 10.5, 7.875 } };
    static const int sizes[][2] = { { 5, 4 }, { 29, 17 } };
    for (int wi = 0; wi < 2; wi++)
        for (int si = 0; si < 2; si++) {
            pf_window w = wins[wi];
            int ow = sizes[si][0], oh = sizes[si][1];
            pf_image *out = pf_resample_window(img, w, ow, oh, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            double worst = 0.0;
            for (int c = 0; c < 2; c++)
                for (int y = 0; y < oh; y++)
                    for (int x = 0; x < ow; x++) {
                        double ref = 0.0;
                        for (int q = 0; q < 9; q++)
                            for (int p = 0; p < 13; p++)
                                ref += ref_weight(13, w.x0, w.w, ow, x, p) *
                                       ref_weight(9, w.y0, w.h, oh, y, q) *
                                       *pf_image_at(img, p, q, c);
                        worst = fmax(worst, fabs(ref - *pf_image_at(out, x, y, c)));
                    }
            CU_ASSERT(worst < 1e-5);
            pf_image_free(out);
        }
    pf_image_free(img);
}

static void test_resample_same_size_is_identity(void)
{
    pf_image *img = pf_t_noise_image(31, 17, 3, 5);
    pf_image *out = pf_resample(img, 31, 17, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    double worst = 0.0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 17; y++)
            for (int x = 0; x < 31; x++)
                worst = fmax(worst, fabs(*pf_image_at(img, x, y, c) - *pf_image_at(out, x, y, c)));
    CU_ASSERT(worst < 1e-5);
    pf_image_free(out);
    pf_image_free(img);
}

static void test_crop_window_aspect_and_anchor(void)
{
    pf_window w = pf_crop_window(1000, 500, 820, 614, 0.5);
    PF_ASSERT_NEAR(w.h, 500.0, 1e-12);
    PF_ASSERT_NEAR(w.w, 500.0 * 820 / 614, 1e-9);
    PF_ASSERT_NEAR(w.x0, (1000 - w.w) / 2, 1e-9);
    PF_ASSERT_NEAR(w.y0, 0.0, 1e-12);
    w = pf_crop_window(512, 512, 256, 192, 0.0);
    PF_ASSERT_NEAR(w.y0, 0.0, 1e-12);
    PF_ASSERT_NEAR(w.h, 384.0, 1e-9);
    w = pf_crop_window(512, 600, 256, 192, 1.0);
    PF_ASSERT_NEAR(w.y0 + w.h, 600.0, 1e-9);
    w = pf_crop_window(640, 480, 256, 192, 0.5); /* already 4:3: the whole image */
    PF_ASSERT_NEAR(w.x0 + w.y0, 0.0, 1e-12);
    PF_ASSERT_NEAR(w.w * w.h, 640.0 * 480.0, 1e-6);
}

/* The photo path averages light: a black/white checkerboard becomes the sRGB code of linear
 * 0.5 (188/255), not 0.5; a gray source comes out RGB with equal channels on the 8-bit grid. */
static void test_resample_photo_linear_light(void)
{
    pf_image *img = checkerboard(64, 48, 1);
    pf_image *out = pf_resample_photo(img, 16, 12, 0.5, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(out->channels, 3);
    for (int c = 0; c < 3; c++) {
        CU_ASSERT(max_dev_inside(out, c, 188.0 / 255.0, 1) < 1.5 / 255.0);
        CU_ASSERT(max_dev(out, c, 188.0 / 255.0) < 5.0 / 255.0);
    }
    for (int y = 0; y < out->height; y++)
        for (int x = 0; x < out->width; x++) {
            float v = *pf_image_at(out, x, y, 1);
            CU_ASSERT_EQUAL(v, *pf_image_at(out, x, y, 0));
            PF_ASSERT_NEAR(v * 255.0f, roundf(v * 255.0f), 1e-3);
        }
    pf_image_free(out);
    pf_image_free(img);
}

PF_TEST_SUITE(dataset_resample, PF_TEST(test_sha256_fips_vectors),
              PF_TEST(test_resample_constant_stays_constant),
              PF_TEST(test_resample_checkerboard_no_aliasing),
              PF_TEST(test_resample_matches_direct_reference),
              PF_TEST(test_resample_same_size_is_identity),
              PF_TEST(test_crop_window_aspect_and_anchor),
              PF_TEST(test_resample_photo_linear_light))

/* --- the manifest -------------------------------------------------------------------------- */

#define HDR "file\tphoto\tsplit\tcategory\tresolution\ttexture\ttexture_class\tpackage\tversion\t" \
            "package_path\tlicence\tsha256\n"
#define SHA_A "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ROW_A "test/natural_a_820x614.png\ta\ttest\tnatural\t820x614\t9.500\tlow\tpkg\t1.0-1\t" \
              "/usr/share/a.jpg\tGPL-2+\t" SHA_A "\n"
#define ROW_B "test/natural_a_256x192.png\ta\ttest\tnatural\t256x192\t9.500\tlow\tpkg\t1.0-1\t" \
              "/usr/share/a.jpg\tGPL-2+\t" SHA_A "\n"
#define ROW_C "train/people_0_256x192.png\tpaper-people_0\ttrain\tpeople\t256x192\t16.250\thigh\t" \
              "src\t-\tproj/images/train\tCC\t" SHA_A "\n"

static void test_manifest_parse_and_filter(void)
{
    pf_error err;
    pf_manifest *m = pf_manifest_parse("# comment\n" HDR ROW_A "\n" ROW_B ROW_C, "m.tsv", "/bench",
                                       &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->count, 3);
    const pf_manifest_entry *e = &m->entries[0];
    CU_ASSERT_STRING_EQUAL(e->path, "/bench/test/natural_a_820x614.png");
    CU_ASSERT_EQUAL(e->split, PF_SPLIT_TEST);
    CU_ASSERT_EQUAL(e->category, PF_CAT_NATURAL);
    CU_ASSERT_EQUAL(e->width, 820);
    CU_ASSERT_EQUAL(e->height, 614);
    PF_ASSERT_NEAR(e->texture, 9.5, 1e-12);
    CU_ASSERT_EQUAL(e->texture_class, PF_TEX_LOW);
    CU_ASSERT_EQUAL(e->line, 3);
    CU_ASSERT_STRING_EQUAL(m->entries[2].licence, "CC");
    size_t n;
    pf_manifest_filter f = { PF_SPLIT_TEST, 256, 192, -1 };
    char **paths = pf_manifest_list(m, &f, &n);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(paths[0], "/bench/test/natural_a_256x192.png");
    CU_ASSERT_PTR_NULL(paths[1]);
    pf_manifest_list_free(paths);
    f = (pf_manifest_filter){ -1, 256, 192, -1 };
    paths = pf_manifest_list(m, &f, &n);
    CU_ASSERT_EQUAL(n, 2);
    pf_manifest_list_free(paths);
    f = (pf_manifest_filter){ PF_SPLIT_TRAIN, 0, 0, PF_CAT_PEOPLE };
    paths = pf_manifest_list(m, &f, &n);
    CU_ASSERT_EQUAL(n, 1);
    pf_manifest_list_free(paths);
    f = PF_MANIFEST_ANY;
    paths = pf_manifest_list(m, &f, &n);
    CU_ASSERT_EQUAL(n, 3);
    pf_manifest_list_free(paths);
    pf_manifest_free(m);
}

static void test_manifest_print_parse_round_trip(void)
{
    pf_error err;
    pf_manifest *m = pf_manifest_parse(HDR ROW_A ROW_B ROW_C, "m.tsv", "/bench", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    pf_strbuf a, b;
    pf_sb_init(&a);
    pf_sb_init(&b);
    pf_manifest_format(m, &a);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&a), HDR ROW_A ROW_B ROW_C));
    pf_manifest *m2 = pf_manifest_parse(pf_sb_str(&a), "again.tsv", "/bench", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m2);
    pf_manifest_format(m2, &b);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&a), pf_sb_str(&b));
    pf_sb_free(&a);
    pf_sb_free(&b);
    pf_manifest_free(m);
    pf_manifest_free(m2);
}

/* Parses text that must fail and checks the message holds `want`. */
static void expect_manifest_error(const char *text, const char *want)
{
    pf_error err;
    pf_manifest *m = pf_manifest_parse(text, "bad.tsv", "/bench", &err);
    CU_ASSERT_PTR_NULL(m);
    if (m) {
        pf_manifest_free(m);
        return;
    }
    if (!strstr(err.msg, want))
        fprintf(stderr, "\n  expected '%s' in: %s\n", want, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
}

static void test_manifest_errors_name_file_and_line(void)
{
    expect_manifest_error("", "bad.tsv: no header line");
    expect_manifest_error("# only a comment\n", "no header line");
    expect_manifest_error("file\tphoto\n", "bad.tsv:1: header has 2 columns");
    expect_manifest_error("fle\tphoto\tsplit\tcategory\tresolution\ttexture\ttexture_class\t"
                          "package\tversion\tpackage_path\tlicence\tsha256\n",
                          "bad.tsv:1: header column 'fle' where 'file' was expected");
    expect_manifest_error(HDR "a.png\tx\ttest\n", "bad.tsv:2: 3 fields where the header has 12");
    expect_manifest_error(HDR ROW_A "b.png\ta\tvalidation\tnatural\t820x614\t1\tlow\tp\tv\t/p\tL\t"
                          SHA_A "\n", "bad.tsv:3: unknown split 'validation'");
    expect_manifest_error(HDR "b.png\ta\ttest\tanimals\t820x614\t1\tlow\tp\tv\t/p\tL\t" SHA_A "\n",
                          "bad.tsv:2: unknown category 'animals'");
    expect_manifest_error(HDR "b.png\ta\ttest\tnatural\t820*614\t1\tlow\tp\tv\t/p\tL\t" SHA_A "\n",
                          "bad.tsv:2: resolution '820*614' is not WIDTHxHEIGHT");
    expect_manifest_error(HDR "b.png\ta\ttest\tnatural\t820x614\tlots\tlow\tp\tv\t/p\tL\t" SHA_A
                          "\n", "bad.tsv:2: texture 'lots' is not a non-negative number");
    expect_manifest_error(HDR "b.png\ta\ttest\tnatural\t820x614\t20\tlow\tp\tv\t/p\tL\t" SHA_A "\n",
                          "bad.tsv:2: texture class 'low' does not match texture 20");
    expect_manifest_error(HDR "b.png\ta\ttest\tnatural\t820x614\t1\tlow\tp\tv\t/p\tL\tABC\n",
                          "bad.tsv:2: sha256 'ABC' is not 64 lower-case hex digits");
    expect_manifest_error(HDR "b.png\ta\ttest\tnatural\t820x614\t1\tlow\t\tv\t/p\tL\t" SHA_A "\n",
                          "bad.tsv:2: column 'package' is empty");
    expect_manifest_error(HDR ROW_A ROW_A, "bad.tsv:3: file 'test/natural_a_820x614.png' is "
                                           "listed twice (first on line 2)");
}

static void write_text(const char *path, const char *text)
{
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_write_file_atomic(path, text, strlen(text), &err), 0);
}

/* Loading by directory or file, verifying sha256s, and the summary table. */
static void test_manifest_load_verify_summary(void)
{
    pf_error err;
    const char *dir = pf_test_tmp("mf");
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(pf_test_tmp("mf/test"), &err), 0);
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(pf_test_tmp("mf/train"), &err), 0);
    write_text(pf_test_tmp("mf/test/natural_a_820x614.png"), "");
    write_text(pf_test_tmp("mf/test/natural_a_256x192.png"), "");
    write_text(pf_test_tmp("mf/train/people_0_256x192.png"), "");
    write_text(pf_test_tmp("mf/manifest.tsv"), HDR ROW_A ROW_B ROW_C);
    pf_manifest *m = pf_manifest_load(dir, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(pf_manifest_verify(m, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(m->entries[0].path, "/mf/test/natural_a_820x614.png"));
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_manifest_summary(m, &sb);
    const char *want[] = {
        "as 820x614/256x192 (photos):\n",
        "train  people           0/0 (0)        0/0 (0)        0/1 (1)        0/1 (1)\n",
        "test   natural          1/1 (1)        0/0 (0)        0/0 (0)        1/1 (1)\n",
        "test   all              1/1 (1)        0/0 (0)        0/0 (0)        1/1 (1)\n",
        "test   low           1     9.50     9.50     9.50\n",
        "train  high          1    16.25    16.25    16.25\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(pf_sb_str(&sb), want[i]))
            fprintf(stderr, "\n  summary lacks '%s':\n%s", want[i], pf_sb_str(&sb));
        CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), want[i]));
    }
    pf_sb_free(&sb);
    pf_manifest_free(m);

    m = pf_manifest_load(pf_test_tmp("mf/manifest.tsv"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    write_text(pf_test_tmp("mf/test/natural_a_256x192.png"), "changed");
    CU_ASSERT_EQUAL(pf_manifest_verify(m, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "manifest.tsv:3: test/natural_a_256x192.png: sha256"));
    pf_manifest_free(m);

    /* a manifest by another name is named as it is (issue 27: messages said manifest.tsv) */
    write_text(pf_test_tmp("mf/list.tsv"), HDR ROW_A ROW_B ROW_C);
    m = pf_manifest_load(pf_test_tmp("mf/list.tsv"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(pf_manifest_verify(m, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "list.tsv:3: test/natural_a_256x192.png: sha256"));
    pf_sb_init(&sb);
    pf_manifest_summary(m, &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "/mf/list.tsv: 3 images"));
    pf_sb_free(&sb);
    pf_manifest_free(m);

    CU_ASSERT_PTR_NULL(pf_manifest_load(pf_test_tmp("mf/test"), &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a benchmark directory"));
    CU_ASSERT_PTR_NULL(pf_manifest_load(pf_test_tmp("nowhere"), &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nowhere"));
}

/* Issue 27: the default benchmark was the build tree's path, compiled in. It is found beside
 * the pipeline (or the working directory, or an installation), and PERFORA_DATASET wins. */
static void test_default_dataset_dir(void)
{
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(pf_test_tmp("proj/apps"), &err), 0);
    CU_ASSERT_EQUAL_FATAL(pf_mkdir_p(pf_test_tmp("proj/data/images"), &err), 0);
    write_text(pf_test_tmp("proj/data/images/manifest.tsv"), HDR);
    unsetenv(PF_DATASET_ENV);
    char *d = pf_dataset_default(pf_test_tmp("proj/apps/blur.pf"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "/proj/apps/../data/images"));
    free(d);
    setenv(PF_DATASET_ENV, "/somewhere/else", 1);
    d = pf_dataset_default(pf_test_tmp("proj/apps/blur.pf"), &err);
    CU_ASSERT_STRING_EQUAL(d, "/somewhere/else");
    free(d);
    unsetenv(PF_DATASET_ENV);
}

/* The embedded default benchmark: the six training photos plus a few test photos at both
 * sizes, whole and unchanged, each image the size its line says. */
static void test_embedded_benchmark(void)
{
    pf_error err;
    pf_manifest *m = pf_manifest_load(pf_test_src("data/images"), &err);
    if (!m)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(pf_manifest_verify(m, &err), 0);
    size_t n_train, n_test_big, n_test_small;
    pf_manifest_filter f = { PF_SPLIT_TRAIN, 0, 0, -1 };
    pf_manifest_list_free(pf_manifest_list(m, &f, &n_train));
    f = (pf_manifest_filter){ PF_SPLIT_TEST, PF_BENCH_MEDIUM_W, PF_BENCH_MEDIUM_H, -1 };
    pf_manifest_list_free(pf_manifest_list(m, &f, &n_test_big));
    f = (pf_manifest_filter){ PF_SPLIT_TEST, PF_BENCH_LOW_W, PF_BENCH_LOW_H, -1 };
    pf_manifest_list_free(pf_manifest_list(m, &f, &n_test_small));
    CU_ASSERT_EQUAL(n_train, 6);
    CU_ASSERT(n_test_big >= 4);
    CU_ASSERT_EQUAL(n_test_big, n_test_small);
    for (size_t i = 0; i < m->count; i++) {
        pf_image *img = pf_image_load(m->entries[i].path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        CU_ASSERT_EQUAL(img->width, m->entries[i].width);
        CU_ASSERT_EQUAL(img->height, m->entries[i].height);
        pf_image_free(img);
    }
    pf_manifest_free(m);
}

PF_TEST_SUITE(dataset_manifest, PF_TEST(test_manifest_parse_and_filter),
              PF_TEST(test_manifest_print_parse_round_trip),
              PF_TEST(test_manifest_errors_name_file_and_line),
              PF_TEST(test_manifest_load_verify_summary), PF_TEST(test_embedded_benchmark),
              PF_TEST(test_default_dataset_dir))

/* --- the source list ----------------------------------------------------------------------- */

#define SRC_HDR "photo\tpackage\tpath\tformat\tcategory\tcrop\tlicence\tlicence_evidence\tsha256\n"

static void expect_sources_error(const char *text, const char *want)
{
    pf_error err;
    pf_source_list *l = pf_sources_parse(text, "src.tsv", &err);
    CU_ASSERT_PTR_NULL(l);
    if (l) {
        pf_sources_free(l);
        return;
    }
    if (!strstr(err.msg, want))
        fprintf(stderr, "\n  expected '%s' in: %s\n", want, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
}

static void test_sources_parse_and_errors(void)
{
    pf_error err;
    pf_source_list *l = pf_sources_load(pf_test_src("dataset/sources.tsv"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->count >= 40);
    int raw = 0;
    for (size_t i = 0; i < l->count; i++)
        raw += strncmp(l->items[i].format, "rgb8-bz2:", 9) == 0;
    CU_ASSERT_EQUAL(raw, 1);
    pf_sources_free(l);

    l = pf_sources_parse(SRC_HDR "a-1\tp\t/x.jpg\timage\tpeople\t0.25\tGPL\tGPL\t" SHA_A "\n",
                         "src.tsv", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    PF_ASSERT_NEAR(l->items[0].anchor, 0.25, 1e-12);
    CU_ASSERT_EQUAL(l->items[0].category, PF_CAT_PEOPLE);
    pf_sources_free(l);

    expect_sources_error(SRC_HDR "A_1\tp\t/x\timage\tpeople\tcentre\tL\tL\t" SHA_A "\n",
                         "src.tsv:2: photo id 'A_1' must be lower-case");
    expect_sources_error(SRC_HDR "a\tp\t/x\timage\tpeople\tmiddle\tL\tL\t" SHA_A "\n",
                         "src.tsv:2: crop 'middle' is neither");
    expect_sources_error(SRC_HDR "a\tp\tx.jpg\timage\tpeople\tcentre\tL\tL\t" SHA_A "\n",
                         "src.tsv:2: path 'x.jpg' must be absolute");
    expect_sources_error(SRC_HDR "a\tp\t/x\ttiff\tpeople\tcentre\tL\tL\t" SHA_A "\n",
                         "src.tsv:2: format 'tiff'");
    expect_sources_error(SRC_HDR "a\tp\t/x\timage\tpeople\tcentre\tL\tL\t" SHA_A "\n"
                                 "a\tp\t/y\timage\tpeople\tcentre\tL\tL\t" SHA_A "\n",
                         "src.tsv:3: photo id 'a' is used twice (first on line 2)");
}

PF_TEST_SUITE(dataset_sources, PF_TEST(test_sources_parse_and_errors))

/* --- building from a real package ---------------------------------------------------------- */

#define TEST_PACKAGE "python3-sklearn"

static const char *const only_test_package[] = { TEST_PACKAGE, NULL };

static pf_dataset_build_opts build_opts(const char *out, const char *sources)
{
    pf_dataset_build_opts o = { 0 };
    o.out_dir = out;
    o.sources_path = sources ? sources : pf_test_src("dataset/sources.tsv");
    o.fetch_script = pf_test_src("dataset/fetch.sh");
    o.train_dir = pf_test_src("data/images/train");
    o.packages_dir = pf_test_tmp("debs"); /* the second build reuses the first's download */
    o.only_packages = only_test_package;
    return o;
}

/* Whether the test directory holds a leftover DIR.tmp-* directory. */
static int leftover_tmp_dirs(void)
{
    DIR *d = opendir(pf_test_tmpdir());
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp-") != NULL;
    if (d)
        closedir(d);
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int same_bytes(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    pf_error err;
    if (pf_read_file(a, (size_t)64 << 20, &x, &nx, &err) != 0)
        return 0;
    if (pf_read_file(b, (size_t)64 << 20, &y, &ny, &err) != 0) {
        free(x);
        return 0;
    }
    int same = nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return same;
}

/* Builds `out` from the test package; on failure says why and fails the test. */
static int build_or_say_why(const char *out)
{
    pf_error err;
    pf_dataset_build_opts o = build_opts(out, NULL);
    if (pf_dataset_build(&o, &err) == 0)
        return 0;
    fprintf(stderr, "\n  building a benchmark from %s failed (this test needs `apt-get download` "
                    "to reach Debian's archive):\n  %s\n", TEST_PACKAGE, err.msg);
    CU_FAIL("dataset build from " TEST_PACKAGE " failed; see the message above");
    return -1;
}

static void check_built_benchmark(const char *dir)
{
    pf_error err;
    pf_manifest *m = pf_manifest_load(dir, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(pf_manifest_verify(m, &err), 0);
    CU_ASSERT_EQUAL(m->count, 6 + 2 * 2); /* the six train images, two photos at two sizes */
    int test_rows = 0;
    for (size_t i = 0; i < m->count; i++) {
        const pf_manifest_entry *e = &m->entries[i];
        pf_image *img = pf_image_load(e->path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(img);
        CU_ASSERT_EQUAL(img->width, e->width);
        CU_ASSERT_EQUAL(img->height, e->height);
        pf_image_free(img);
        if (e->split != PF_SPLIT_TEST)
            continue;
        test_rows++;
        CU_ASSERT_STRING_EQUAL(e->package, TEST_PACKAGE);
        CU_ASSERT_STRING_EQUAL(e->licence, "BSD-3-Clause");
        CU_ASSERT(strcmp(e->version, "-") != 0);
        CU_ASSERT(strncmp(e->package_path, "/usr/lib/python3/dist-packages/sklearn/", 39) == 0);
        CU_ASSERT((e->width == 820 && e->height == 614) || (e->width == 256 && e->height == 192));
        CU_ASSERT(e->texture > 0.0);
    }
    CU_ASSERT_EQUAL(test_rows, 4);
    /* Both sizes of a photo carry the texture (and class) measured at 820x614. */
    CU_ASSERT_STRING_EQUAL(m->entries[6].photo, m->entries[7].photo);
    PF_ASSERT_NEAR(m->entries[6].texture, m->entries[7].texture, 0.0);
    char *lic = pf_path_join(dir, "licences/" TEST_PACKAGE ".copyright");
    CU_ASSERT(exists(lic));
    free(lic);
    pf_manifest_free(m);
}

static void test_build_one_package_deterministic(void)
{
    const char *a = pf_test_tmp("bench-a"), *b = pf_test_tmp("bench-b");
    if (build_or_say_why(a) != 0)
        return;
    check_built_benchmark(a);
    if (build_or_say_why(b) != 0)
        return;
    pf_error err;
    pf_manifest *m = pf_manifest_load(a, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(same_bytes(m->path, pf_test_tmp("bench-b/manifest.tsv")));
    for (size_t i = 0; i < m->count; i++) {
        char *other = pf_path_join(b, m->entries[i].file);
        CU_ASSERT(same_bytes(m->entries[i].path, other));
        free(other);
    }
    pf_manifest_free(m);
    CU_ASSERT_EQUAL(leftover_tmp_dirs(), 0);
    /* An existing directory is never overwritten. */
    pf_dataset_build_opts o = build_opts(a, NULL);
    CU_ASSERT_EQUAL(pf_dataset_build(&o, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "already exists"));
}

/* A build that must fail: the message holds `want`, and neither the output directory nor a
 * temporary one is left behind. */
static void expect_build_failure(const char *name, const char *sources_text, const char *want)
{
    const char *sources = NULL;
    if (sources_text) {
        char file[128];
        snprintf(file, sizeof file, "%s.sources.tsv", name);
        sources = pf_test_tmp(file);
        write_text(sources, sources_text);
    }
    const char *out = pf_test_tmp(name);
    pf_dataset_build_opts o = build_opts(out, sources);
    o.only_packages = NULL;
    o.train_dir = NULL; /* these builds fail on their packages; the six need not be copied */
    pf_error err;
    CU_ASSERT_EQUAL(pf_dataset_build(&o, &err), -1);
    if (!strstr(err.msg, want))
        fprintf(stderr, "\n  expected '%s' in: %s\n", want, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    CU_ASSERT(!exists(out));
    CU_ASSERT_EQUAL(leftover_tmp_dirs(), 0);
}

#define SK_DIR "/usr/lib/python3/dist-packages/sklearn/datasets/images/"
#define SK_LIC "\tBSD-3-Clause\tLicense: BSD-3-Clause\t"

/* The listed sha256 of one photo of the real source list. */
static void listed_sha256(const char *photo, char out[65])
{
    pf_error err;
    pf_source_list *l = pf_sources_load(pf_test_src("dataset/sources.tsv"), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    strcpy(out, SHA_A);
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].photo, photo) == 0)
            memcpy(out, l->items[i].sha256, 65);
    pf_sources_free(l);
}

static void test_build_failures_leave_nothing(void)
{
    expect_build_failure("no-package",
                         SRC_HDR "x\tperfora-no-such-package\t/x.jpg\timage\tnatural\tcentre"
                                 "\tL\tL\t" SHA_A "\n",
                         "package perfora-no-such-package:");
    expect_build_failure("no-file",
                         SRC_HDR "x\t" TEST_PACKAGE "\t" SK_DIR "missing.jpg\timage\tnatural"
                                 "\tcentre" SK_LIC SHA_A "\n",
                         "has no regular file " SK_DIR "missing.jpg");
    expect_build_failure("changed-file",
                         SRC_HDR "x\t" TEST_PACKAGE "\t" SK_DIR "china.jpg\timage\tnatural"
                                 "\tcentre" SK_LIC SHA_A "\n",
                         "the package changed");
    char sha[65], text[1024];
    listed_sha256("sklearn-china", sha);
    snprintf(text, sizeof text,
             SRC_HDR "x\t" TEST_PACKAGE "\t" SK_DIR "china.jpg\timage\tman_made\tcentre\tWTFPL"
                     "\tLicense: WTFPL\t%s\n", sha);
    expect_build_failure("changed-licence", text, "no longer contains 'License: WTFPL'");

    pf_error err;
    pf_dataset_build_opts o = build_opts(pf_test_tmp("no-list"), pf_test_tmp("no-such.tsv"));
    CU_ASSERT_EQUAL(pf_dataset_build(&o, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such.tsv"));
    CU_ASSERT(!exists(pf_test_tmp("no-list")));
}

PF_TEST_SUITE(dataset_builder, PF_TEST(test_build_one_package_deterministic),
              PF_TEST(test_build_failures_leave_nothing))
