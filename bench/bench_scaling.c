/* bench_scaling (issue 28): how perforated variants scale with threads, against the exact
 * program at the same thread count. For blur, the bilateral filter and the bilateral grid, at
 * 820x614 and 2048x1536, at 1 and 2 threads and all cores: the exact default schedule, the
 * paper's blur variant, the variants of the table and one variant per reconstruction
 * the runtime runs (gaussian, gaussian-sv, nearest; importance and adaptive sampling).
 *
 * Per phase, two ways. By subtraction inside one process: each grid variant that reconstructs
 * in store mode is also compiled with its store reconstruction removed ("samples": the stage's
 * sampled pixels), so fill = full - samples (generated fills included). And by the runtime's
 * own timers (pf_rt_phase_timing): the wall time of the runtime calls of each run, as masks
 * (adaptive and importance sampling), reconstruction and copies. Every variant runs through
 * pf_variant_run; a round runs every row once at one thread count (pf_rt_set_threads), so a
 * load spike hits all rows of the round alike, and each speedup is the median over rounds of
 * the paired ratio exact / variant from the same round. A last row, "copy (memory floor)",
 * is bench/copy.pf, which reads the input and writes the output once: its speedup is the most
 * a variant that reads its input and writes every output pixel can reach at that thread count.
 *
 * Usage: bench_scaling [--reps N] [--app blur|bilateral_filter|bilateral_grid] [--size WxH]. */
#include "bench/bench_util.h"

#include "codegen/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROWS 9
#define MAX_REPS 64
#define MAX_T 3

typedef struct app_rows {
    const char *app;
    const char *name[MAX_ROWS];
    const char *sched[MAX_ROWS];  /* NULL: exact; a path when it ends in .sched */
} app_rows;

static const app_rows apps[] = {
    { "blur",
      { "exact", "blur_paper.sched", "temp 4x1 od + out 4x8", "temp 2x8 root + out 4x8",
        "out 2x2 gaussian 1", "out importance gsv", "out adaptive nearest" },
      { NULL, "apps/blur_paper.sched",
        "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
        "loop_output grid 4 8 1 reconstruct store linear\n",
        "loop_temp grid 2 8 1 reconstruct store linear\nloop_temp exec root vectorize 8 "
        "parallel\nloop_output grid 4 8 1 reconstruct store linear\n",
        "loop_output grid 2 2 1 reconstruct store gaussian 1\n",
        "loop_output importance 0.3 0.02 reconstruct store gaussian-sv 0.73\n",
        "loop_output adaptive 2 0.4 reconstruct store nearest\n" } },
    { "bilateral_filter",
      { "exact", "pixels 2x2 linear", "pixels 2x2 gaussian 1", "pixels importance gsv",
        "pixels adaptive nearest" },
      { NULL, "loop_pixels grid 2 2 reconstruct store linear\n",
        "loop_pixels grid 2 2 reconstruct store gaussian 1\n",
        "loop_pixels importance 0.5 0.02 reconstruct store gaussian-sv 0.73\n",
        "loop_pixels adaptive 2 0.5 reconstruct store nearest\n" } },
    { "bilateral_grid",
      { "exact", "blurs od + trilerp 2x2", "trilerp 2x2 gaussian 1", "rgb_to_yuv 8x2 od" },
      { NULL,
        "blur_y_loop grid 8 4 1 1 reconstruct on-demand linear\n"
        "blur_x_loop grid 8 4 1 1 reconstruct on-demand linear\n"
        "blur_z_loop grid 4 4 1 1 reconstruct on-demand linear\n"
        "trilerp_loop grid 2 2 1 reconstruct store linear\n",
        "trilerp_loop grid 2 2 1 reconstruct store gaussian 1\n",
        "rgb_to_yuv grid 8 2 reconstruct on-demand linear\n" } },
};

/* One timed variant: full, and (when it reconstructs in store mode) without reconstruction. */
typedef struct row {
    const char *name;
    pf_variant *v, *samples;
    double t[MAX_T][MAX_REPS], ts[MAX_T][MAX_REPS];
    double phase[MAX_T][PF_RT_PHASE_COUNT][MAX_REPS]; /* runtime calls' ms (pf_rt_phase_ms) */
    char why[200];
} row;

/* The schedule text with every " reconstruct store ..." clause cut: the samples alone. */
static char *without_store(const char *text)
{
    char *s = strdup(text), *p;
    bool cut = false;
    while ((p = strstr(s, " reconstruct store")) != NULL) {
        char *end = strchr(p, '\n');
        memmove(p, end, strlen(end) + 1);
        cut = true;
    }
    if (!cut) {
        free(s);
        return NULL;
    }
    return s;
}

static pf_variant *build(bench_prog *bp, const char *sched, char *why, size_t nwhy)
{
    pf_error err;
    const pf_plan *plan = !sched ? bench_plan(bp, NULL, &err)
                          : strstr(sched, ".sched") ? bench_plan(bp, sched, &err)
                                                    : bench_plan_text(bp, sched, &err);
    pf_variant *v = plan ? bench_compile(bp, plan, 0, false, &err) : NULL;
    if (!v)
        snprintf(why, nwhy, "n/a: %.150s", err.msg);
    return v;
}

static void setup_row(bench_prog *bp, const app_rows *a, int i, row *r)
{
    r->name = a->name[i];
    const char *sched = a->sched[i];
    char path[512];
    if (sched && strstr(sched, ".sched")) {
        snprintf(path, sizeof path, "%s/%s", PF_SOURCE_DIR, sched);
        sched = path;
    }
    r->v = build(bp, sched, r->why, sizeof r->why);
    /* Adaptive and importance sampling without their reconstruction are not their samples
     * alone (their masks and passes change): their phases come from the runtime's timers. */
    bool masked = sched && (strstr(sched, "adaptive") || strstr(sched, "importance"));
    char *cut = sched && !masked && !strstr(sched, ".sched") ? without_store(sched) : NULL;
    if (r->v && cut)
        r->samples = build(bp, cut, r->why, sizeof r->why);
    free(cut);
}

static double run_ms(pf_variant *v, pf_image *in, pf_image *out)
{
    pf_error err;
    double t0 = pf_now_ms();
    if (bench_run(v, in, out, &err) != 0)
        return NAN;
    return pf_now_ms() - t0;
}

static double med(const double *v, int n)
{
    double c[MAX_REPS];
    memcpy(c, v, sizeof *c * (size_t)n);
    return pf_median(c, n);
}

/* Median over rounds of a / b, paired by round. */
static double paired(const double *a, const double *b, int n)
{
    double q[MAX_REPS];
    for (int i = 0; i < n; i++)
        q[i] = a[i] / b[i];
    return pf_median(q, n);
}

static void measure(row *rows, int n_rows, const int *threads, int n_t, int reps,
                    pf_image *in, pf_image *out)
{
    for (int k = 0; k < n_t; k++) {
        pf_rt_set_threads(threads[k]);
        for (int i = 0; i < n_rows; i++)  /* warm-up: pool, page faults */
            if (rows[i].v)
                run_ms(rows[i].v, in, out);
        for (int rep = 0; rep < reps; rep++)
            for (int i = 0; i < n_rows; i++) {
                pf_rt_phase_timing(true);
                if (rows[i].v)
                    rows[i].t[k][rep] = run_ms(rows[i].v, in, out);
                for (int p = 0; p < PF_RT_PHASE_COUNT; p++)
                    rows[i].phase[k][p][rep] = pf_rt_phase_ms((pf_rt_phase)p);
                pf_rt_phase_timing(false);
                if (rows[i].samples)
                    rows[i].ts[k][rep] = run_ms(rows[i].samples, in, out);
            }
    }
    pf_rt_set_threads(0);
}

/* The runtime calls' share of a row's time: "; mask M, recon R, copy C" for the phases it has. */
static void print_phases(const row *r, int k, int reps)
{
    static const char *name[PF_RT_PHASE_COUNT] = { "mask", "recon", "copy" };
    const char *sep = "; ";
    for (int p = 0; p < PF_RT_PHASE_COUNT; p++) {
        double ms = med(r->phase[k][p], reps);
        if (ms > 0.0) {
            printf("%s%s %.2f", sep, name[p], ms);
            sep = ", ";
        }
    }
}

static void print_table(const char *app, int w, int h, row *rows, int n_rows,
                        const int *threads, int n_t, int reps)
{
    printf("\n## %s, %dx%d (median ms over %d rounds; speedup = paired exact/variant)\n\n", app,
           w, h, reps);
    printf("| variant |");
    for (int k = 0; k < n_t; k++)
        printf(" %d thr: ms (samples + fill; runtime calls) | speedup |", threads[k]);
    printf(" speedup at %d / at 1 |\n|---|", threads[n_t - 1]);
    for (int k = 0; k < n_t; k++)
        printf("---|---|");
    printf("---|\n");
    for (int i = 0; i < n_rows; i++) {
        row *r = &rows[i];
        printf("| %s |", r->name);
        if (!r->v) {
            printf(" %s |\n", r->why);
            continue;
        }
        double s1 = NAN, sn = NAN;
        for (int k = 0; k < n_t; k++) {
            double t = med(r->t[k], reps);
            printf(" %.2f", t);
            if (r->samples) {
                double ts = med(r->ts[k], reps);
                printf(" (%.2f + %.2f)", ts, t - ts);
            }
            print_phases(r, k, reps);
            printf(" |");
            double s = paired(rows[0].t[k], r->t[k], reps);
            printf(" %.2fx |", s);
            if (k == 0)
                s1 = s;
            sn = s;
        }
        printf(" %.2f |\n", sn / s1);
    }
}

static int scaling_app(const app_rows *a, int w, int h, const int *threads, int n_t, int reps)
{
    pf_error err;
    bench_prog bp = { 0 };
    char path[512];
    snprintf(path, sizeof path, "%s/apps/%s.pf", PF_SOURCE_DIR, a->app);
    if (bench_prog_load(&bp, path, &err) != 0) {
        fprintf(stderr, "bench_scaling: %s\n", err.msg);
        return -1;
    }
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", w, h, &err);
    pf_image *out = in ? pf_image_new(w, h, 3, &err) : NULL;
    if (!out) {
        fprintf(stderr, "bench_scaling: %s\n", err.msg);
        pf_image_free(in);
        bench_prog_free(&bp);
        return -1;
    }
    row *rows = calloc(MAX_ROWS, sizeof *rows);
    int n_rows = 0;
    while (n_rows < MAX_ROWS - 1 && a->name[n_rows]) {
        setup_row(&bp, a, n_rows, &rows[n_rows]);
        n_rows++;
    }
    bench_prog copy = { 0 };
    snprintf(path, sizeof path, "%s/bench/copy.pf", PF_SOURCE_DIR);
    rows[n_rows].name = "copy (memory floor)";
    if (bench_prog_load(&copy, path, &err) == 0)
        rows[n_rows].v = build(&copy, NULL, rows[n_rows].why, sizeof rows[n_rows].why);
    else
        snprintf(rows[n_rows].why, sizeof rows[n_rows].why, "n/a: %.150s", err.msg);
    n_rows++;
    measure(rows, n_rows, threads, n_t, reps, in, out);
    print_table(a->app, w, h, rows, n_rows, threads, n_t, reps);
    for (int i = 0; i < n_rows; i++) {
        pf_variant_free(rows[i].v);
        pf_variant_free(rows[i].samples);
    }
    free(rows);
    pf_image_free(in);
    pf_image_free(out);
    bench_prog_free(&copy);
    bench_prog_free(&bp);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 15;
    const char *only = NULL;
    int sizes[2][2] = { { 820, 614 }, { 2048, 1536 } }, n_sizes = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--app") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
                 sscanf(argv[++i], "%dx%d", &sizes[0][0], &sizes[0][1]) == 2)
            n_sizes = 1;
        else {
            fprintf(stderr, "usage: bench_scaling [--reps N] [--app NAME] [--size WxH]\n");
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads[MAX_T] = { 1, 2, (int)cores }, n_t = cores > 2 ? 3 : cores == 2 ? 2 : 1;
    bench_print_header("bench_scaling: perforated variants against exact, by thread count");
    printf("# fill = full - samples (the same schedule without its store reconstruction)\n");
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        if (only && strcmp(only, apps[a].app) != 0)
            continue;
        for (int s = 0; s < n_sizes; s++)
            if (scaling_app(&apps[a], sizes[s][0], sizes[s][1], threads, n_t, reps) != 0)
                return 1;
    }
    return 0;
}
