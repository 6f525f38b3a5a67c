/* `perfora run FILE.pf --interp` end to end: spawns the built perfora binary (next to the
 * tests/ build folder) on the bundled photos. Outputs are compared byte for byte with images
 * that the plain load/save round trip (`perfora run --in --out`) or another pipeline writes,
 * so the test needs no image decoder of its own. */
#include "tests/harness/harness.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *photo_a = "data/images/train/natural_29_256x192.png";
static const char *photo_b = "data/images/train/man_made_1_256x192.png";

static const char *perfora_path(void)
{
    static char path[4096];
    if (!path[0]) {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return NULL;
        exe[n] = '\0';
        snprintf(path, sizeof path, "%s/../perfora", dirname(exe));
    }
    return access(path, X_OK) == 0 ? path : NULL;
}

/* Runs `perfora ARGS` with stderr captured in tmp "stderr.txt"; returns the exit code. */
static int perfora(const char *fmt, ...)
{
    char args[8192], cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", perfora_path(), args,
             pf_test_tmp("stderr.txt"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    *len = got;
    return buf;
}

static int same_files(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *da = read_all(a, &la), *db = read_all(b, &lb);
    int same = da && db && la == lb && memcmp(da, db, la) == 0;
    free(da);
    free(db);
    return same;
}

static int stderr_has(const char *needle)
{
    size_t n;
    char *s = read_all(pf_test_tmp("stderr.txt"), &n);
    int has = s && strstr(s, needle) != NULL;
    if (!has)
        fprintf(stderr, "\n  stderr lacks '%s':\n%s", needle, s ? s : "(none)");
    free(s);
    return has;
}

static const char *write_program(const char *name, const char *src)
{
    const char *path = pf_test_tmp(name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(src, f);
    fclose(f);
    return path;
}

/* The binary is built with the tests; its absence is a failure, not a skip. */
static int have_perfora(void)
{
    if (perfora_path())
        return 1;
    fprintf(stderr, "\n  the perfora binary is not built next to tests/\n");
    CU_FAIL("perfora binary missing");
    return 0;
}

static void test_cli_identity_and_invert(void)
{
    if (!have_perfora())
        return;
    const char *id = write_program("id.pf",
        "pipeline id(image in[W, H, C]) -> (image out[W, H, C]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c];\n}\n");
    const char *inv = write_program("inv.pf",
        "pipeline inv(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = 1.0 - in[x, y, c];\n}\n");
    const char *rt = pf_test_tmp("rt.png"), *a = pf_test_tmp("id.png");
    CU_ASSERT_EQUAL_FATAL(perfora("run --in '%s' --out '%s'", pf_test_src(photo_a), rt), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", id, pf_test_src(photo_a),
                            a), 0);
    CU_ASSERT(same_files(a, rt));
    const char *i1 = pf_test_tmp("inv1.png"), *i2 = pf_test_tmp("inv2.png");
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", inv, pf_test_src(photo_a),
                            i1), 0);
    CU_ASSERT(!same_files(i1, rt));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", inv, i1, i2), 0);
    CU_ASSERT(same_files(i2, rt));
}

static void test_cli_params(void)
{
    if (!have_perfora())
        return;
    const char *gain = write_program("gain.pf",
        "param float gain = 1.0;\n"
        "pipeline g(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c] * gain;\n}\n");
    const char *zero = write_program("zero.pf",
        "pipeline z(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = 0.0;\n}\n");
    const char *in = pf_test_src(photo_a);
    const char *rt = pf_test_tmp("rt_p.png"), *g1 = pf_test_tmp("g1.png");
    const char *g0 = pf_test_tmp("g0.png"), *z = pf_test_tmp("z.png");
    CU_ASSERT_EQUAL_FATAL(perfora("run --in '%s' --out '%s'", in, rt), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", gain, in, g1), 0);
    CU_ASSERT(same_files(g1, rt));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --param gain=0 --in '%s' --out '%s'", gain, in,
                            g0), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", zero, in, z), 0);
    CU_ASSERT(same_files(g0, z));
    CU_ASSERT(!same_files(g0, rt));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --param nope=1 --in '%s' --out '%s'", gain, in,
                            g0), 1);
    CU_ASSERT(stderr_has("nope"));
}

/* A grey output; a grey photo fed to a pipeline that declares 3 channels becomes R = G = B. */
static void test_cli_grey_and_rgb(void)
{
    if (!have_perfora())
        return;
    const char *grey = write_program("grey.pf",
        "pipeline g(image in[W, H, 3]) -> (image out[W, H]) {\n"
        "    for each (x, y) of out as s out[x, y] = in[x, y, 1];\n}\n");
    const char *rgb = write_program("rgb.pf",
        "pipeline r(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c];\n}\n");
    const char *spread = write_program("spread.pf",
        "pipeline s(image in[W, H]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y];\n}\n");
    const char *g = pf_test_tmp("grey.png"), *r = pf_test_tmp("rgb.png");
    const char *s = pf_test_tmp("spread.png");
    CU_ASSERT_EQUAL_FATAL(perfora("run '%s' --interp --in '%s' --out '%s'", grey,
                                  pf_test_src(photo_a), g), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", rgb, g, r), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", spread, g, s), 0);
    CU_ASSERT(same_files(r, s));
    /* a [W, H] input takes a grey image, not an RGB one */
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", spread,
                            pf_test_src(photo_a), s), 1);
    CU_ASSERT(stderr_has("grey"));
}

static void test_cli_two_inputs_two_outputs(void)
{
    if (!have_perfora())
        return;
    const char *two = write_program("two.pf",
        "pipeline t(image a[W, H, C], image b[V, U, D]) -> (image oa[W, H, C],\n"
        "                                                   image ob[V, U, D]) {\n"
        "    for each (x, y, c) of oa as s1 oa[x, y, c] = a[x, y, c];\n"
        "    for each (x, y, c) of ob as s2 ob[x, y, c] = b[x, y, c];\n}\n");
    const char *ra = pf_test_tmp("ra.png"), *rb = pf_test_tmp("rb.png");
    const char *oa = pf_test_tmp("oa.png"), *ob = pf_test_tmp("ob.png");
    const char *a = pf_test_src(photo_a), *b = pf_test_src(photo_b);
    CU_ASSERT_EQUAL_FATAL(perfora("run --in '%s' --out '%s'", a, ra), 0);
    CU_ASSERT_EQUAL_FATAL(perfora("run --in '%s' --out '%s'", b, rb), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --in '%s' --out '%s' --out '%s'", two,
                            a, b, oa, ob), 0);
    CU_ASSERT(same_files(oa, ra));
    CU_ASSERT(same_files(ob, rb));
    CU_ASSERT(!same_files(oa, ob));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", two, a, oa), 1);
    CU_ASSERT(stderr_has("2 input(s)"));
}

/* A 4-channel image fed to a pipeline that declares 3 channels loses its alpha. */
static void test_cli_rgba_input(void)
{
    if (!have_perfora())
        return;
    const char *rgba = write_program("rgba.pf",
        "pipeline a(image in[W, H, 3]) -> (image out[W, H, 4]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = c == 3 ? 0.5 : in[x, y, c];\n}\n");
    const char *id = write_program("id3.pf",
        "pipeline id(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c];\n}\n");
    const char *in = pf_test_src(photo_b);
    const char *rt = pf_test_tmp("rt_rgba.png"), *a = pf_test_tmp("rgba.png");
    const char *back = pf_test_tmp("back.png");
    CU_ASSERT_EQUAL_FATAL(perfora("run --in '%s' --out '%s'", in, rt), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", rgba, in, a), 0);
    CU_ASSERT(!same_files(a, rt));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", id, a, back), 0);
    CU_ASSERT(same_files(back, rt));
}

/* A 1-D image is one row of a file: [W] out, then [N] in, give the same row. */
static void test_cli_one_dimensional(void)
{
    if (!have_perfora())
        return;
    const char *row = write_program("row.pf",
        "pipeline r(image in[W, H, 3]) -> (image out[W]) {\n"
        "    for each (x) of out as s out[x] = in[x, 5, 1];\n}\n");
    const char *widen = write_program("widen.pf",
        "pipeline w(image in[N]) -> (image out[N, 1]) {\n"
        "    for each (x, y) of out as s out[x, y] = in[x];\n}\n");
    const char *r1 = pf_test_tmp("row1.png"), *r2 = pf_test_tmp("row2.png");
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", row,
                            pf_test_src(photo_a), r1), 0);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", widen, r1, r2), 0);
    CU_ASSERT(same_files(r1, r2));
    /* a photo is not a one-row grey image */
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", widen,
                            pf_test_src(photo_a), r2), 1);
}

static void test_cli_errors(void)
{
    if (!have_perfora())
        return;
    const char *bad = write_program("bad.pf",
        "pipeline b(image in[W, H, 3]) -> (image out[W, H, 3]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c] +;\n}\n");
    const char *in = pf_test_src(photo_a), *o = pf_test_tmp("bad.png");
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", bad, in, o), 1);
    CU_ASSERT(stderr_has("bad.pf:2:"));
    const char *id = write_program("id2.pf",
        "pipeline id(image in[W, H, C]) -> (image out[W, H, C]) {\n"
        "    for each (x, y, c) of out as s out[x, y, c] = in[x, y, c];\n}\n");
    CU_ASSERT_EQUAL(perfora("run '%s' --backend nosuch --in '%s' --out '%s'", id, in, o), 2);
    CU_ASSERT(stderr_has("unknown backend"));
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s'", id, in), 2);
    CU_ASSERT_EQUAL(perfora("run '%s' --interp --in '%s' --out '%s'", id,
                            pf_test_tmp("missing.png"), o), 1);
    CU_ASSERT(stderr_has("missing.png"));
}

PF_TEST_SUITE(interp_cli,
              PF_TEST(test_cli_identity_and_invert), PF_TEST(test_cli_params),
              PF_TEST(test_cli_grey_and_rgb), PF_TEST(test_cli_two_inputs_two_outputs),
              PF_TEST(test_cli_rgba_input), PF_TEST(test_cli_one_dimensional),
              PF_TEST(test_cli_errors))
