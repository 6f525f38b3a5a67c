/* bench_modes (issue 25): does a short variant's time depend on its compile or on the moment?
 * The same schedule timed in different records of one search reads up to 1.4x apart, while the
 * images of one record agree within a few percent. This compiles the exact program and the
 * variant K times each in one process (each compile with its own copies of the input and output
 * unless --shared-images; --scatter puts megabytes of other allocations between compiles, as a
 * worker's heap has after other candidates), then runs R rounds; a round times, for every
 * compile k, a block of exact calls of compile k and a block of variant calls of compile k (each
 * block as long as the search's, --block-ms). It prints per compile the median over rounds of
 * each time and of the paired ratio, by the blocks' mean calls (as the search) and by their
 * median calls (as `perfora run --time`), splits the spread of the variant's time into the part
 * between compiles and the part between rounds, and ends with long runs of one program's calls
 * after the other's (as `perfora run --time` in two processes). Compiles that stay apart over
 * rounds mean the code or its buffers' placement decide; rounds that move every compile mean
 * the moment does.
 *
 * Usage: bench_modes PIPELINE.pf SCHEDULE [--compiles K] [--rounds R] [--block-ms B]
 *        [--size WxH] [--threads N] [--shared-images] [--scatter] */
#include "bench/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_K 16
#define MAX_R 64

typedef struct modes_opts {
    const char *pipeline, *schedule;
    int compiles, rounds, threads, w, h;
    bool shared_images, scatter;
    double block_ms;
} modes_opts;

/* A block of calls lasting at least `block` ms (at least 3 calls, at most MAX_CALLS): the
 * per-call mean, and in *med the median of the calls' own times. */
#define MAX_CALLS 4096
static double block_ms(pf_variant *v, pf_image *in, pf_image *out, double block, double *med)
{
    static double t[MAX_CALLS];
    pf_error err;
    int calls = 0;
    double t0 = pf_now_ms(), prev = t0;
    while (calls < MAX_CALLS && (calls < 3 || prev - t0 < block)) {
        if (bench_run(v, in, out, &err) != 0)
            return NAN;
        double now = pf_now_ms();
        t[calls++] = now - prev;
        prev = now;
    }
    if (med)
        *med = pf_median(t, calls);
    return (prev - t0) / calls;
}

/* Interquartile range of log(v), as a ratio (exp of it). */
static double log_iqr(const double *v, int n)
{
    double l[MAX_R > MAX_K ? MAX_R : MAX_K];
    for (int i = 0; i < n; i++)
        l[i] = log(v[i]);
    for (int i = 1; i < n; i++)  /* insertion sort: n is small */
        for (int j = i; j > 0 && l[j - 1] > l[j]; j--) {
            double t = l[j];
            l[j] = l[j - 1];
            l[j - 1] = t;
        }
    double q1 = l[(n - 1) / 4], q3 = l[(3 * (n - 1) + 3) / 4];
    return exp(q3 - q1);
}

static int parse_opts(int argc, char **argv, modes_opts *o)
{
    *o = (modes_opts){ NULL, NULL, 6, 12, 0, 820, 614, false, false, 20.0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--compiles") && v && ++i)
            o->compiles = atoi(v);
        else if (!strcmp(a, "--rounds") && v && ++i)
            o->rounds = atoi(v);
        else if (!strcmp(a, "--block-ms") && v && ++i)
            o->block_ms = atof(v);
        else if (!strcmp(a, "--scatter"))
            o->scatter = true;
        else if (!strcmp(a, "--shared-images"))
            o->shared_images = true;
        else if (!strcmp(a, "--threads") && v && ++i)
            o->threads = atoi(v);
        else if (!strcmp(a, "--size") && v && ++i) {
            if (sscanf(v, "%dx%d", &o->w, &o->h) != 2)
                return -1;
        } else if (a[0] != '-' && !o->pipeline)
            o->pipeline = a;
        else if (a[0] != '-' && !o->schedule)
            o->schedule = a;
        else
            return -1;
    }
    if (!o->pipeline || !o->schedule || o->compiles < 1 || o->compiles > MAX_K ||
        o->rounds < 2 || o->rounds > MAX_R || o->w < 1 || o->h < 1)
        return -1;
    return 0;
}

static void report(const modes_opts *o, double te[][MAX_R], double tv[][MAX_R])
{
    double med_v[MAX_K], med_e[MAX_K], own[MAX_K];
    printf("compile  exact ms  variant ms  speedup (median of paired ratios)  "
           "variant IQR over rounds\n");
    for (int k = 0; k < o->compiles; k++) {
        double q[MAX_R];
        for (int r = 0; r < o->rounds; r++)
            q[r] = te[k][r] / tv[k][r];
        med_e[k] = pf_median(te[k], o->rounds);
        med_v[k] = pf_median(tv[k], o->rounds);
        own[k] = log_iqr(tv[k], o->rounds);
        printf("%7d  %8.3f  %10.3f  %6.2fx  %6.3f\n", k, med_e[k], med_v[k],
               pf_median(q, o->rounds), own[k]);
    }
    double own_med = pf_median(own, o->compiles), mx = 0.0;
    for (int k = 0; k < o->compiles; k++)
        mx = med_v[k] > mx ? med_v[k] : mx;
    printf("variant: between compiles, max/min of the medians %.3f, their IQR %.3f; within a "
           "compile over rounds, median IQR %.3f\n",
           mx / bench_min(med_v, o->compiles), log_iqr(med_v, o->compiles), own_med);
    printf("exact: between compiles (IQR of the medians) %.3f\n", log_iqr(med_e, o->compiles));
}

int main(int argc, char **argv)
{
    modes_opts o;
    if (parse_opts(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_modes PIPELINE.pf SCHEDULE [--compiles K] [--rounds R] "
                        "[--block-ms B] [--size WxH] [--threads N] [--shared-images] "
                        "[--scatter]\n");
        return 2;
    }
    bench_print_header("bench_modes: a variant's time by compile and by round");
    pf_error err;
    bench_prog bp;
    if (bench_prog_load(&bp, o.pipeline, &err) != 0) {
        fprintf(stderr, "bench_modes: %s\n", err.msg);
        return 1;
    }
    const pf_plan *pe = bench_plan(&bp, NULL, &err);
    const pf_plan *pv = pe ? bench_plan(&bp, o.schedule, &err) : NULL;
    pf_image *in = pv ? bench_photo(BENCH_TRAIN "/natural_0_820x614.png", o.w, o.h, &err) : NULL;
    pf_image *out = in ? pf_image_new(o.w, o.h, 3, &err) : NULL;
    pf_variant *ve[MAX_K] = { 0 }, *vv[MAX_K] = { 0 };
    /* Each compile its own copies of the input and output (their own physical pages): with
     * --shared-images every compile uses the same two. */
    pf_image *ins[MAX_K], *outs[MAX_K];
    int ok = out != NULL;
    void *junk[MAX_K] = { 0 };
    for (int k = 0; ok && k < o.compiles; k++) {
        if (o.scatter) { /* a worker's heap after other candidates: memory in between */
            size_t sz = ((size_t)(k * 7919 % 13) + 1) << 19;
            junk[k] = malloc(sz);
            if (junk[k])
                memset(junk[k], 1, sz);
        }
        ve[k] = bench_compile(&bp, pe, o.threads, false, &err);
        vv[k] = ve[k] ? bench_compile(&bp, pv, o.threads, false, &err) : NULL;
        ins[k] = o.shared_images || !vv[k] ? in : pf_image_clone(in);
        outs[k] = o.shared_images || !vv[k] ? out : pf_image_clone(out);
        ok = vv[k] != NULL && ins[k] && outs[k];
    }
    if (!ok) {
        fprintf(stderr, "bench_modes: %s\n", err.msg);
        return 1;
    }
    static double te[MAX_K][MAX_R], tv[MAX_K][MAX_R], me[MAX_K][MAX_R], mv[MAX_K][MAX_R];
    for (int k = 0; k < o.compiles; k++) {  /* warm-up: pool, page faults, caches */
        block_ms(ve[k], ins[k], outs[k], 2.0, NULL);
        block_ms(vv[k], ins[k], outs[k], 2.0, NULL);
    }
    for (int r = 0; r < o.rounds; r++)
        for (int k = 0; k < o.compiles; k++) {
            te[k][r] = block_ms(ve[k], ins[k], outs[k], o.block_ms, &me[k][r]);
            tv[k][r] = block_ms(vv[k], ins[k], outs[k], o.block_ms, &mv[k][r]);
        }
    printf("# %s, schedule %s, %dx%d, threads %d, %d compiles x %d rounds, blocks of %.0f ms\n",
           o.pipeline, o.schedule, o.w, o.h, o.threads, o.compiles, o.rounds, o.block_ms);
    report(&o, te, tv);
    printf("the same blocks by the median call instead of the mean:\n");
    report(&o, me, mv);
    /* As `perfora run --time` times: a long run of one program's calls, then the other's. */
    printf("long runs of %.0f ms, exact then variant (compile 0): mean / median call, ms\n",
           10 * o.block_ms);
    for (int r = 0; r < 3; r++) {
        double e_med, v_med, e = block_ms(ve[0], in, out, 10 * o.block_ms, &e_med);
        double v = block_ms(vv[0], in, out, 10 * o.block_ms, &v_med);
        printf("  exact %.3f / %.3f, variant %.3f / %.3f: speedup %.2fx by means, %.2fx by "
               "medians\n", e, e_med, v, v_med, e / v, e_med / v_med);
    }
    for (int k = 0; k < o.compiles; k++) {
        pf_variant_free(ve[k]);
        pf_variant_free(vv[k]);
        if (ins[k] != in) {
            pf_image_free(ins[k]);
            pf_image_free(outs[k]);
        }
    }
    for (int k = 0; k < o.compiles; k++)
        free(junk[k]);
    pf_image_free(in);
    pf_image_free(out);
    bench_prog_free(&bp);
    return 0;
}
