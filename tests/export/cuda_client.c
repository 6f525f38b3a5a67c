/* A client of an exported CUDA library, compiled against the export by
 * tests/results/test_export_cuda.c (-DEXPORT_HEADER='"NAME.h"' -DEXPORT_FN=NAME, with the
 * library's sources, outside perfora's build):
 *   cuda_client plan W H    the plan the generated host code records for every image of
 *                           W x H x 3, one line per action (the test compares it with
 *                           codegen/gpu_host.c's walk); buffers at fake device addresses
 *   cuda_client ptx FILE    writes the embedded PTX to FILE (for ptxas)
 *   cuda_client device-plan W H  the same as tests/export/fake_cuda.c logs the device's calls
 *   cuda_client call W H    calls NAME() on W x H x 3 images (a one-input pipeline) and
 *                           prints its return code, error string and last error
 *   cuda_client run W H     three calls on padded images, for fake_cuda.c: return codes,
 *                           times, the outputs' padding and layout
 * With -DCALL_ONLY only `call` (test_export_build.sh links it against the built libraries). */
#include EXPORT_HEADER

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

#ifndef CALL_ONLY  /* plan and ptx reach into the library's runtime (a static build) */
#include "perfora_cuda_rt.h"

#define PROGRAM CAT(EXPORT_FN, _program)

extern const pf_crt_program PROGRAM;

/* The test's fake device address of buffer id (perfora's side uses the same). */
static uint64_t fake_address(int id)
{
    return (uint64_t)(id + 1) << 20;
}

/* symbolic: as tests/export/fake_cuda.c logs the device's calls: the zeroing (of the bytes
 * the runtime zeroes) and the launches, buffer parameters as "buf". */
static int plan(int w, int h, bool symbolic)
{
    const pf_crt_program *p = &PROGRAM;
    int64_t ext[16][PF_CRT_MAX_DIMS];
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++) {
        ext[i][0] = w, ext[i][1] = h, ext[i][2] = 3, ext[i][3] = 1;
    }
    pf_crt_plan pl;
    pf_error err;
    if (pf_crt_plan_make(p, (const int64_t(*)[PF_CRT_MAX_DIMS])ext, &pl, &err)) {
        printf("error %s\n", err.msg);
        pf_crt_plan_free(&pl);
        return 1;
    }
    uint64_t *dptr = malloc(sizeof *dptr * (size_t)(p->n_buffers + 1));
    for (int id = 0; id < p->n_buffers; id++)
        dptr[id] = fake_address(id);
    uint64_t slots[512];
    void *params[512];
    int64_t *used = calloc((size_t)p->n_buffers + 1, sizeof *used);
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++)
        used[p->arg_bufs[i]] = (int64_t)w * h * 3 * 4;
    int rc = 0;
    for (int i = 0; i < pl.n_acts && rc == 0; i++) {
        const pf_crt_action *a = &pl.acts[i];
        if (a->op == PF_CRT_ALLOC) {
            used[a->buf] = a->bytes;
            if (!symbolic)
                printf("alloc %d %lld %d\n", a->buf, (long long)a->bytes, a->zero);
            else if (a->zero)
                printf("zero %lld bytes\n", (long long)a->bytes);
            continue;
        }
        if (a->op == PF_CRT_ZERO) {
            if (symbolic)
                printf("zero %lld bytes\n", (long long)used[a->buf]);
            else
                printf("zero %d\n", a->buf);
            continue;
        }
        const pf_crt_kernel *k = &p->kernels[a->kernel];
        if (k->n_bufs + k->n_vars > 512 ||
            (rc = pf_crt_params(&pl, a, dptr, slots, params, &err)) != 0) {
            printf("error %s\n", rc ? err.msg : "too many parameters");
            rc = 1;
            break;
        }
        printf("launch %s grid %u %u %u block %u %u %u shared %u params", k->name, a->grid[0],
               a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2], a->shared);
        for (int j = 0; j < k->n_bufs + k->n_vars; j++)
            if (symbolic && j < k->n_bufs && k->bufs[j] >= 0)
                printf(" buf");
            else
                printf(" %llx", (unsigned long long)slots[j]);
        printf("\n");
    }
    free(dptr);
    free(used);
    pf_crt_plan_free(&pl);
    return rc;
}

static int write_ptx(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(PROGRAM.ptx, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write\n", path);
        return 1;
    }
    return 0;
}

#endif

/* A W x H x 3 image with rows padded by 3 floats (filled with fill), its elements a ramp or
 * -2 (what no download writes), their sum into *sum. */
static float *padded(int w, int h, int64_t str[3], float fill, bool ramp, double *sum)
{
    str[0] = 1, str[1] = w + 3, str[2] = str[1] * h;
    float *p = malloc(sizeof *p * (size_t)(str[2] * 3));
    for (int64_t i = 0; i < str[2] * 3; i++)
        p[i] = fill;
    *sum = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                float v = ramp ? (float)((x + 7 * y + 13 * c) % 101) / 100.0f : -2.0f;
                p[x + y * str[1] + c * str[2]] = v;
                *sum += v;
            }
    return p;
}

/* The output after a call on tests/export/fake_cuda.c (which runs no kernel and fills fresh
 * device memory with each float's index): the padding untouched, each element its packed
 * index (or 0 where the plan zeroed the image). */
static void check_output(const float *out, int w, int h, const int64_t str[3])
{
    bool padding = true, layout = true;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w + 3; x++) {
                float v = out[x + y * str[1] + c * str[2]];
                if (x >= w)
                    padding = padding && v != v;
                else
                    layout = layout && (v == (float)(x + w * (y + h * c)) || v == 0.0f);
            }
        }
    printf("padding kept %d layout %d\n", padding, layout);
}

/* Three calls on strided images (the second replays the first's plan, the third follows a
 * release), as a user calls the library. */
static int run(int w, int h)
{
    int64_t ext[3] = { w, h, 3 }, in_str[3], out_str[3];
    double sum, none;
    float *in = padded(w, h, in_str, -1.0f, true, &sum);
    float *out = padded(w, h, out_str, NAN, false, &none);
    printf("input sum %.6g\n", sum);
    for (int call = 1; call <= 3; call++) {
        int rc = EXPORT_FN(in, ext, in_str, out, ext, out_str, 0);
        struct CAT(EXPORT_FN, _times) t;
        CAT(EXPORT_FN, _last_times)(&t);
        printf("call %d rc %d launches %d kernel_ms %.2f\n", call, rc, t.launches, t.kernel_ms);
        if (rc == 0)
            check_output(out, w, h, out_str);
        else
            printf("last %s\n", CAT(EXPORT_FN, _last_error)());
        if (call == 2)
            CAT(EXPORT_FN, _release)();
    }
    CAT(EXPORT_FN, _release)();
    free(in);
    free(out);
    return 0;
}

static int call(int w, int h)
{
    int64_t ext[3] = { w, h, 3 }, str[3] = { 1, w, (int64_t)w * h };
    float *in = calloc((size_t)(w * h * 3), sizeof *in), *out = calloc((size_t)(w * h * 3),
                                                                       sizeof *out);
    int rc = EXPORT_FN(in, ext, str, out, ext, str, 0);
    printf("rc %d\nstring %s\nlast %s\n", rc, CAT(EXPORT_FN, _error_string)(rc),
           CAT(EXPORT_FN, _last_error)());
    rc = CAT(EXPORT_FN, _device)(0, ext, 0, ext);
    printf("device-null rc %d\n", rc);
    CAT(EXPORT_FN, _release)();
    free(in);
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
#ifndef CALL_ONLY
    if (argc == 4 && strcmp(argv[1], "plan") == 0)
        return plan(atoi(argv[2]), atoi(argv[3]), false);
    if (argc == 4 && strcmp(argv[1], "device-plan") == 0)
        return plan(atoi(argv[2]), atoi(argv[3]), true);
    if (argc == 3 && strcmp(argv[1], "ptx") == 0)
        return write_ptx(argv[2]);
#endif
    if (argc == 4 && strcmp(argv[1], "call") == 0)
        return call(atoi(argv[2]), atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "run") == 0)
        return run(atoi(argv[2]), atoi(argv[3]));
    fprintf(stderr, "usage: cuda_client plan|device-plan W H | ptx FILE | call|run W H\n");
    return 2;
}
