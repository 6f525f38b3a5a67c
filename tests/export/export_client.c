/* A small C client of an exported library (test_export_build.sh compiles it against each
 * export with -DEXPORT_HEADER='"NAME.h"' -DEXPORT_FN=NAME, outside perfora's build): reads
 * the input and the JIT's output written by export_ref, runs the library on the input held
 * in buffers with padded rows, and compares. With --errors it also checks the error codes.
 *
 *   export_client in.raw ref.raw THREADS [--errors]
 * Prints "max_abs_diff D uses_object U"; exits 0 when D <= 1e-5 and every check passed. */
#include EXPORT_HEADER

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN EXPORT_FN
#define FN_USES_OBJECT CAT(EXPORT_FN, _uses_object)
#define FN_ERROR_STRING CAT(EXPORT_FN, _error_string)

typedef struct raw {
    int32_t nd;
    int64_t ext[3];
    float *data;     /* dense */
    int64_t count;
} raw;

static int read_raw(const char *path, raw *r)
{
    FILE *f = fopen(path, "rb");
    if (!f || fread(&r->nd, sizeof r->nd, 1, f) != 1 || r->nd != 3 ||
        fread(r->ext, sizeof(int64_t), 3, f) != 3) {
        fprintf(stderr, "%s: not a 3-D raw image\n", path);
        return -1;
    }
    r->count = r->ext[0] * r->ext[1] * r->ext[2];
    r->data = malloc(sizeof(float) * (size_t)r->count);
    size_t got = fread(r->data, sizeof(float), (size_t)r->count, f);
    fclose(f);
    return got == (size_t)r->count ? 0 : -1;
}

/* A copy with rows padded by 3 floats (so stride[1] != width is exercised). */
static float *padded(const raw *r, int64_t stride[3], float fill)
{
    stride[0] = 1;
    stride[1] = r->ext[0] + 3;
    stride[2] = stride[1] * r->ext[1];
    float *p = malloc(sizeof(float) * (size_t)(stride[2] * r->ext[2]));
    for (int64_t i = 0; i < stride[2] * r->ext[2]; i++)
        p[i] = fill;
    return p;
}

static float *at(float *p, const int64_t *s, int64_t x, int64_t y, int64_t c)
{
    return p + x * s[0] + y * s[1] + c * s[2];
}

static int expect(const char *what, int got, int want)
{
    if (got == want)
        return 0;
    fprintf(stderr, "%s: returned %d (%s), expected %d\n", what, got, FN_ERROR_STRING(got),
            want);
    return 1;
}

/* Bad arguments get their codes and leave the output untouched. */
static int check_errors(const float *in, const int64_t *ie, const int64_t *is, float *out,
                        const int64_t *oe, const int64_t *os)
{
    int64_t bad_e[3] = { oe[0] + 1, oe[1], oe[2] }, bad_s[3] = { 2, is[1], is[2] };
    int64_t zero_e[3] = { 0, ie[1], ie[2] };
    int fails = 0;
    fails += expect("output one column wider", FN(in, ie, is, out, bad_e, os, 1), 2);
    fails += expect("input extent 0", FN(in, zero_e, is, out, oe, os, 1), 2);
    fails += expect("input stride[0] 2", FN(in, ie, bad_s, out, oe, os, 1), 3);
    fails += expect("NULL input", FN(NULL, ie, is, out, oe, os, 1), 1);
    fails += expect("threads -1", FN(in, ie, is, out, oe, os, -1), 1);
    if (out[0] == out[0])
        fails += expect("output touched by a refused call", 1, 0);
    return fails;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    raw in, ref;
    if (read_raw(argv[1], &in) || read_raw(argv[2], &ref))
        return 2;
    int threads = atoi(argv[3]);
    int64_t is[3], os[3];
    float *pin = padded(&in, is, 0), *pout = padded(&ref, os, NAN);
    for (int64_t c = 0; c < in.ext[2]; c++)
        for (int64_t y = 0; y < in.ext[1]; y++)
            memcpy(at(pin, is, 0, y, c), in.data + (c * in.ext[1] + y) * in.ext[0],
                   sizeof(float) * (size_t)in.ext[0]);
    int fails = argc > 4 && strcmp(argv[4], "--errors") == 0
                    ? check_errors(pin, in.ext, is, pout, ref.ext, os) : 0;
    int rc = FN(pin, in.ext, is, pout, ref.ext, os, threads);
    if (rc != 0) {
        fprintf(stderr, "%s\n", FN_ERROR_STRING(rc));
        return 1;
    }
    double worst = 0;
    for (int64_t c = 0; c < ref.ext[2]; c++)
        for (int64_t y = 0; y < ref.ext[1]; y++)
            for (int64_t x = 0; x < ref.ext[0]; x++) {
                double d = fabs((double)*at(pout, os, x, y, c) -
                                ref.data[(c * ref.ext[1] + y) * ref.ext[0] + x]);
                if (!(d <= worst))  /* NaN (an element not written) counts as infinite */
                    worst = d == d ? d : INFINITY;
            }
    printf("max_abs_diff %g uses_object %d\n", worst, FN_USES_OBJECT());
    return worst <= 1e-5 && fails == 0 ? 0 : 1;
}
