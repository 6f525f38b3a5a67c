/* bench_window: loop perforation of the median filter's 9x9 window (apps/median.pf), compiled
 * with pass_narrow (the window array as long as its perforated loops fill, so the vector
 * median's selection network covers it) and without (the array keeps 81 elements and the
 * median runs per lane in the runtime). Per schedule: the speedup over the exact program with
 * and without the pass, and the largest difference between the two outputs (0: the pass
 * changes no result). A round times every row once, in order; each speedup is the median over
 * rounds of the paired ratio exact / variant of the same round, so a load spike hits a round's
 * rows alike.
 *
 * Usage: bench_window [--rounds N] [--threads T] [--size WxH]. */
#include "bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 64

static const char *const scheds[] = {
    "median_x_loop step 4\n",
    "median_y_loop step 3\nmedian_x_loop step 3\n",
    "median_y_loop first 0.6\n",
    "median_y_loop step 2\nmedian_x_loop last 0.5\n",
    "median_x_loop random 0.5\n",
    "loop_pixels grid 8 8 1 reconstruct store linear\n",
    "loop_pixels grid 8 8 1 reconstruct store linear\nmedian_y_loop step 4\n",
    "loop_pixels grid 2 2 1 reconstruct store linear\nmedian_x_loop step 2\n",
};
#define N_SCHEDS (int)(sizeof scheds / sizeof *scheds)
#define N_ROWS (1 + 2 * N_SCHEDS) /* exact, then each schedule with and without the pass */

/* One line of a schedule's text, for the table. */
static void one_line(const char *s, char *out, size_t n)
{
    bench_strcpy(out, n, s);
    for (char *c = strchr(out, '\n'); c; c = strchr(c, '\n'))
        *c = c[1] ? ';' : '\0';
}

int main(int argc, char **argv)
{
    int rounds = 15, threads = 2, w = 820, h = 614;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--size") == 0)
            sscanf(argv[i + 1], "%dx%d", &w, &h);
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || threads < 1 || w < 1 || h < 1 || argc % 2 == 0) {
        fprintf(stderr, "usage: bench_window [--rounds N (1..%d)] [--threads T] [--size WxH]\n",
                MAX_ROUNDS);
        return 2;
    }
    bench_print_header("bench_window: the median's perforated window, with and without pass_narrow");
    pf_error err;
    bench_prog bp = { 0 };
    if (bench_prog_load(&bp, BENCH_SRC "/apps/median.pf", &err) != 0) {
        fprintf(stderr, "bench_window: %s\n", err.msg);
        return 1;
    }
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", w, h, &err);
    pf_image *out[N_ROWS];
    pf_variant *v[N_ROWS];
    for (int r = 0; in && r < N_ROWS; r++) {
        const pf_plan *plan = r == 0 ? bench_plan(&bp, NULL, &err)
                                     : bench_plan_text(&bp, scheds[(r - 1) / 2], &err);
        unsigned flags = r > 0 && (r - 1) % 2 ? BENCH_NO_NARROW : 0;
        v[r] = plan ? bench_compile_with(&bp, plan, threads, flags, &err) : NULL;
        out[r] = v[r] ? pf_image_new(w, h, 3, &err) : NULL;
        if (!out[r]) {
            fprintf(stderr, "bench_window: %s\n", err.msg);
            return 1;
        }
        /* warm: first-touch of the output, the pool's threads */
        bench_run_ms(v[r], in, out[r], "bench_window");
    }
    static double t[N_ROWS][MAX_ROUNDS];
    for (int k = 0; k < rounds; k++)
        for (int r = 0; r < N_ROWS; r++)
            t[r][k] = bench_run_ms(v[r], in, out[r], "bench_window");
    printf("%dx%d, %d threads, %d rounds; exact %.2f ms (median)\n", w, h, threads, rounds,
           pf_median(t[0], rounds));
    printf("%-64s %9s %9s %9s %9s %12s\n", "schedule", "ms", "speedup", "ms -pass", "speedup",
           "max |diff|");
    for (int s = 0; s < N_SCHEDS; s++) {
        double ms[2], sp[2];
        for (int j = 0; j < 2; j++) {
            double ratio[MAX_ROUNDS], *tv = t[1 + 2 * s + j];
            for (int k = 0; k < rounds; k++)
                ratio[k] = t[0][k] / tv[k];
            sp[j] = pf_median(ratio, rounds);
            ms[j] = pf_median(tv, rounds);
        }
        char name[128];
        one_line(scheds[s], name, sizeof name);
        printf("%-64s %9.2f %8.2fx %9.2f %8.2fx %12g\n", name, ms[0], sp[0], ms[1], sp[1],
               bench_max_diff(out[1 + 2 * s], out[2 + 2 * s], 0, 0, w, h));
    }
    for (int r = 0; r < N_ROWS; r++) {
        pf_variant_free(v[r]);
        pf_image_free(out[r]);
    }
    pf_image_free(in);
    bench_prog_free(&bp);
    return 0;
}
