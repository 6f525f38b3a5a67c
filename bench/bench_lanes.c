/* bench_lanes: the vector width of a transcendental stage sampled on a grid. The default
 * schedule gives such a stage (the bilateral filter's pixels: an exp per tap) the host's widest
 * vectors, 16 lanes on AVX-512; on a grid that skips columns, each vector's loads read columns
 * that far apart. Per grid of `loop_pixels` (store linear): the time of the default schedule and
 * of the explicit `exec root vectorize W parallel` for W = 8 and 16 (the default's own
 * settings but the width), and the ratio 8 / 16 lanes. A round times every row once, in order;
 * each ratio is the median over rounds of the paired ratio of one round, so a load spike hits a
 * round's rows alike. Each variant is compiled --compiles times (a variant's time can depend on
 * its compile, docs/bench.md, bench_modes): the ratio is printed per compile pair.
 *
 * Usage: bench_lanes [--rounds N] [--threads T] [--size WxH] [--compiles K]. */
#include "bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 64
#define MAX_COMPILES 4

static const char *const grids[] = { "1 2", "1 4", "1 8", "2 2", "2 4", "2 8",
                                     "4 1", "4 4", "4 8", "8 8" };
#define N_GRIDS (int)(sizeof grids / sizeof *grids)
/* per grid and compile: the default, 8 lanes, 16 lanes */
#define N_KINDS 3

/* The schedule text of grid g in kind k (0 default, 1 8 lanes, 2 16 lanes). */
static void sched_text(int g, int k, char *out, size_t n)
{
    int len = snprintf(out, n, "loop_pixels grid %s reconstruct store linear\n", grids[g]);
    if (k > 0)
        snprintf(out + len, n - (size_t)len, "loop_pixels exec root vectorize %d parallel\n",
                 k == 1 ? 8 : 16);
}

static double median_ratio(const double *a, const double *b, int rounds)
{
    double r[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++)
        r[k] = a[k] / b[k];
    return pf_median(r, rounds);
}

int main(int argc, char **argv)
{
    int rounds = 21, threads = 1, w = 820, h = 614, compiles = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--size") == 0)
            sscanf(argv[i + 1], "%dx%d", &w, &h);
        else if (strcmp(argv[i], "--compiles") == 0)
            compiles = atoi(argv[i + 1]);
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || threads < 1 || w < 1 || h < 1 || compiles < 1 ||
        compiles > MAX_COMPILES || argc % 2 == 0) {
        fprintf(stderr, "usage: bench_lanes [--rounds N (1..%d)] [--threads T] [--size WxH] "
                "[--compiles K (1..%d)]\n", MAX_ROUNDS, MAX_COMPILES);
        return 2;
    }
    bench_print_header("bench_lanes: 8 or 16 lanes for the bilateral filter's sampled pixels");
    pf_error err;
    bench_prog bp = { 0 };
    if (bench_prog_load(&bp, BENCH_SRC "/apps/bilateral_filter.pf", &err) != 0) {
        fprintf(stderr, "bench_lanes: %s\n", err.msg);
        return 1;
    }
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", w, h, &err);
    pf_image *out = in ? pf_image_new(w, h, 3, &err) : NULL;
    int n = N_GRIDS * compiles * N_KINDS;
    pf_variant **v = calloc((size_t)n, sizeof *v);
    double (*t)[MAX_ROUNDS] = calloc((size_t)n, sizeof *t);
    for (int r = 0; out && v && t && r < n; r++) {
        char text[256];
        sched_text(r / (compiles * N_KINDS), r % N_KINDS, text, sizeof text);
        const pf_plan *plan = bench_plan_text(&bp, text, &err);
        v[r] = plan ? bench_compile(&bp, plan, threads, false, &err) : NULL;
        if (!v[r])
            break;
        bench_run_ms(v[r], in, out, "bench_lanes");  /* warm: first touch, the pool's threads */
    }
    if (!out || !v || !t || !v[n - 1]) {
        fprintf(stderr, "bench_lanes: %s\n", out && v && t ? err.msg : "out of memory");
        return 1;
    }
    for (int k = 0; k < rounds; k++)
        for (int r = 0; r < n; r++)
            t[r][k] = bench_run_ms(v[r], in, out, "bench_lanes");
    printf("%dx%d, %d threads, %d rounds, %d compiles of each\n", w, h, threads, rounds,
           compiles);
    printf("%-8s %12s %12s %12s   %s\n", "grid", "default ms", "8 lanes ms", "16 lanes ms",
           "8 / 16 lanes per compile");  /* the times: of the first compile */
    for (int g = 0; g < N_GRIDS; g++) {
        double (*tg)[MAX_ROUNDS] = t + g * compiles * N_KINDS;
        printf("%-8s %12.3f %12.3f %12.3f  ", grids[g], pf_median(tg[0], rounds),
               pf_median(tg[1], rounds), pf_median(tg[2], rounds));
        for (int c = 0; c < compiles; c++)
            printf(" %6.3f", median_ratio(tg[c * N_KINDS + 1], tg[c * N_KINDS + 2], rounds));
        printf("\n");
    }
    for (int r = 0; r < n; r++)
        pf_variant_free(v[r]);
    free(v);
    free(t);
    pf_image_free(out);
    pf_image_free(in);
    bench_prog_free(&bp);
    return 0;
}
