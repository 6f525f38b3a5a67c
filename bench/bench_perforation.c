/* bench_perforation: what perforation buys on the paper's blur.
 *  Part 1 (issue 5): the paper's variant (apps/blur_paper.sched: grid (4,1) on-demand linear,
 *    then grid (4,4) store linear) against the exact JIT blur, both on 1 thread with the default
 *    execution schedule, on the six training photos at their own sizes: speedup and mean Lab
 *    error (the paper's metric and 8-bit convention; the paper reports 5.6x), and the same
 *    variant compiled without congruence simplification (what Z3 buys).
 *  Part 2 (issue 7): at 2048x1536, the variant with an execution schedule
 *    (bench/schedules/blur_paper.*.sched) against exact Halide 14 (Adams2019 and hand
 *    schedules) on 1 and 2 threads, with the floor set by memory bandwidth: a streaming copy of
 *    the input's bytes into an output buffer, timed in the same interleaved rounds. Errors on
 *    every bundled 820x614 photo resampled to 2048x1536.
 * Usage: bench_perforation [--reps N] [--part 1|2]. */
#include "bench/bench_util.h"

#include "dataset/metrics.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 12

static const char *const train[] = {
    "man_made_1_256x192.png", "natural_29_256x192.png", "people_0_256x192.png",
    "man_made_55_820x614.png", "natural_0_820x614.png", "people_56_820x614.png"
};

/* A timed thing: a perfora variant, a comparator, or the streaming copy. */
typedef struct trow {
    char name[64];
    pf_variant *v;
    bench_method m;
    bool copy;
    int threads;
    pf_image *in, *out;
    bool ok;
    char why[300];
    double t[64];
    int n;
} trow;

static int trow_run(trow *r)
{
    pf_error err;
    if (r->v) {
        if (bench_run(r->v, r->in, r->out, &err) != 0) {
            snprintf(r->why, sizeof r->why, "run failed: %.250s", err.msg);
            return -1;
        }
        return 0;
    }
    if (r->copy) {
        bench_copy(r->in->data, r->out->data, r->in->plane * 3 * sizeof(float), r->threads);
        return 0;
    }
    return r->m.run(r->m.ctx);
}

/* A warm-up run each, then `reps` interleaved rounds. */
static void measure(trow *rows, int n, int reps)
{
    for (int i = 0; i < n; i++)
        if (rows[i].ok && trow_run(&rows[i]) != 0)
            rows[i].ok = false;
    for (int k = 0; k < reps; k++)
        for (int i = 0; i < n; i++) {
            trow *r = &rows[i];
            if (!r->ok)
                continue;
            double t0 = pf_now_ms();
            if (trow_run(r) != 0) {
                r->ok = false;
                continue;
            }
            r->t[r->n++] = pf_now_ms() - t0;
        }
}

static double med(const trow *r)
{
    return r->ok && r->n ? pf_median(r->t, r->n) : NAN;
}

static void first_line(char *s)
{
    s[strcspn(s, "\n")] = 0;
}

static pf_variant *compile_sched(bench_prog *bp, const char *sched, int threads, unsigned flags,
                                 char *why, size_t nwhy)
{
    pf_error err;
    const pf_plan *plan = bench_plan(bp, sched, &err);
    pf_variant *v = plan ? bench_compile_with(bp, plan, threads, flags, &err) : NULL;
    if (!v) {
        snprintf(why, nwhy, "n/a: %.250s", err.msg);
        first_line(why);
    }
    return v;
}

/* Compiles from schedule text instead of a file. */
static pf_variant *compile_text(bench_prog *bp, const char *text, int threads, bool no_cong,
                                char *why, size_t nwhy)
{
    pf_error err;
    const pf_plan *plan = bench_plan_text(bp, text, &err);
    pf_variant *v = plan ? bench_compile(bp, plan, threads, no_cong, &err) : NULL;
    if (!v) {
        snprintf(why, nwhy, "n/a: %.250s", err.msg);
        first_line(why);
    }
    return v;
}

/* Where the variant's time goes: each half of the paper's schedule alone, on one photo. */
static void part1_breakdown(bench_prog *bp, int reps)
{
    static const struct {
        const char *name, *text;
        bool no_cong;
    } v[] = {
        { "exact", "# perfora schedule 1\n", false },
        { "loop_temp grid 4 1 1 on-demand linear only",
          "# perfora schedule 1\nloop_temp grid 4 1 1 reconstruct on-demand linear\n", false },
        { "loop_output grid 4 4 1 store linear only",
          "# perfora schedule 1\nloop_output grid 4 4 1 reconstruct store linear\n", false },
        { "loop_output grid 4 4 1 store nearest only",
          "# perfora schedule 1\nloop_output grid 4 4 1 reconstruct store nearest\n", false },
        { "both (the paper's variant)",
          "# perfora schedule 1\nloop_temp grid 4 1 1 reconstruct on-demand linear\n"
          "loop_output grid 4 4 1 reconstruct store linear\n", false },
        { "both, no congruence simplification",
          "# perfora schedule 1\nloop_temp grid 4 1 1 reconstruct on-demand linear\n"
          "loop_output grid 4 4 1 reconstruct store linear\n", true },
    };
    enum { N = sizeof v / sizeof v[0], NC = 2 };
    pf_error err;
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", 820, 614, &err);
    if (!in)
        return;
    trow rows[N + NC];
    memset(rows, 0, sizeof rows);
    bench_img vin = bench_view(in);
    for (int i = N; i < N + NC; i++) {  /* plain C: the exact blur and the variant by hand */
        rows[i].out = pf_image_new(820, 614, 3, &err);
        bench_img vo = bench_view(rows[i].out);
        snprintf(rows[i].name, sizeof rows[i].name, "%s", i == N ? "plain C reasonable, exact"
                                                                  : "plain C, the variant by hand");
        rows[i].ok = (i == N ? bench_plainc_make(BENCH_BLUR, 0, &vin, &vo, &rows[i].m)
                             : bench_plainc_blur_variant_make(&vin, &vo, &rows[i].m)) == 0;
    }
    for (int i = 0; i < N; i++) {
        snprintf(rows[i].name, sizeof rows[i].name, "%s", v[i].name);
        rows[i].v = compile_text(bp, v[i].text, 1, v[i].no_cong, rows[i].why,
                                 sizeof rows[i].why);
        rows[i].ok = rows[i].v != NULL;
        rows[i].in = in;
        rows[i].out = pf_image_new(820, 614, 3, &err);
    }
    measure(rows, N + NC, reps);
    printf("\n# where the time goes (natural_0 820x614, 1 thread; Lab error vs perfora exact)\n");
    printf("  %-44s %10s %10s %9s %9s %11s\n", "schedule", "median ms", "min ms", "exact/x",
           "Lab err", "compile ms");
    for (int i = 0; i < N + NC; i++) {
        double lab = NAN;
        if (!rows[i].ok) {
            printf("  %-44s %10s  %s\n", rows[i].name, "n/a", rows[i].why);
        } else {
            if (pf_metric_lab_de76_paper(rows[i].out, rows[0].out, &lab, &err) != 0)
                fprintf(stderr, "bench_perforation: %s\n", err.msg);
            char cms[16] = "-";
            if (rows[i].v)
                snprintf(cms, sizeof cms, "%.0f", pf_variant_compile_ms(rows[i].v));
            printf("  %-44s %10.3f %10.3f %9.2f %9.3f %11s\n", rows[i].name, med(&rows[i]),
                   bench_min(rows[i].t, rows[i].n), med(&rows[0]) / med(&rows[i]), lab, cms);
        }
    }
    for (int i = 0; i < N + NC; i++) {  /* rows[0].out is every row's reference */
        pf_variant_free(rows[i].v);
        bench_method_free(&rows[i].m);
        pf_image_free(rows[i].out);
    }
    pf_image_free(in);
}

/* ---- part 1: the paper's variant vs exact, per training photo ---- */

static int part1(int reps)
{
    printf("\n## Part 1 (issue 5): paper blur variant vs exact JIT blur, 1 thread, default "
           "execution schedule\n");
    printf("# variant: apps/blur_paper.sched; error: mean CIE76 Lab distance after the paper's "
           "8-bit save (pf_metric_lab_de76_paper); paper: 5.6x\n");
    printf("%-24s %9s %10s %10s %8s %12s %8s %9s %9s\n", "photo", "size", "exact ms",
           "variant ms", "speedup", "no-Z3 ms", "speedup", "Z3 gain", "Lab err");
    bench_prog bp;
    pf_error err;
    if (bench_prog_load(&bp, BENCH_SRC "/apps/blur.pf", &err) != 0) {
        printf("n/a: %s\n", err.msg);
        return 1;
    }
    char why[300] = "";
    pf_variant *vx = compile_sched(&bp, NULL, 1, 0, why, sizeof why);
    pf_variant *va = compile_sched(&bp, BENCH_SRC "/apps/blur_paper.sched", 1, 0, why,
                                   sizeof why);
    pf_variant *vn = compile_sched(&bp, BENCH_SRC "/apps/blur_paper.sched", 1, BENCH_NO_CONGRUENCE, why,
                                   sizeof why);
    if (!vx || !va || !vn) {
        printf("n/a: %s\n", why);
        pf_variant_free(vx);
        pf_variant_free(va);
        pf_variant_free(vn);
        bench_prog_free(&bp);
        return 1;
    }
    double log_sp = 0, log_nz = 0, sum_err = 0;
    int count = 0;
    for (size_t p = 0; p < sizeof train / sizeof train[0]; p++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", BENCH_TRAIN, train[p]);
        pf_image *in = pf_image_load(path, &err), *rgb = in ? pf_image_to_rgb(in, &err) : NULL;
        pf_image_free(in);
        if (!rgb) {
            printf("%-24s n/a: %s\n", train[p], err.msg);
            continue;
        }
        int w = rgb->width, h = rgb->height;
        trow rows[3] = { { .v = vx }, { .v = va }, { .v = vn } };
        for (int i = 0; i < 3; i++) {
            rows[i].in = rgb;
            rows[i].out = pf_image_new(w, h, 3, &err);
            rows[i].ok = true;
        }
        measure(rows, 3, reps);
        double lab = NAN, lab_nz = NAN;
        pf_metric_lab_de76_paper(rows[1].out, rows[0].out, &lab, &err);
        pf_metric_lab_de76_paper(rows[2].out, rows[0].out, &lab_nz, &err);
        double te = med(&rows[0]), ta = med(&rows[1]), tn = med(&rows[2]);
        char size[16];
        snprintf(size, sizeof size, "%dx%d", w, h);
        printf("%-24s %9s %10.3f %10.3f %8.2f %12.3f %8.2f %9.2f %9.3f%s\n", train[p], size, te,
               ta, te / ta, tn, te / tn, tn / ta, lab,
               fabs(lab - lab_nz) > 1e-6 ? " (no-Z3 error differs!)" : "");
        log_sp += log(te / ta);
        log_nz += log(te / tn);
        sum_err += lab;
        count++;
        for (int i = 0; i < 3; i++)
            pf_image_free(rows[i].out);
        pf_image_free(rgb);
    }
    if (count)
        printf("%-24s %9s %10s %10s %8.2f %12s %8.2f %9.2f %9.3f\n", "geomean / mean", "", "",
               "", exp(log_sp / count), "", exp(log_nz / count), exp((log_sp - log_nz) / count),
               sum_err / count);
    pf_variant_stats st = pf_variant_get_stats(va), sn = pf_variant_get_stats(vn);
    printf("# on-demand reads %d, congruences proven %d (no-Z3 build: %d, %d)\n",
           st.ondemand_reads, st.congruences_proven, sn.ondemand_reads, sn.congruences_proven);
    part1_breakdown(&bp, reps);
    pf_variant_free(vx);
    pf_variant_free(va);
    pf_variant_free(vn);
    bench_prog_free(&bp);
    return 0;
}

/* ---- part 2: variant + execution schedule vs Halide at 2048x1536 ---- */

/* The perforated blur schedules with execution lines: bench/schedules/blur_paper.*.sched. */
static int find_variant_schedules(char out[][512], int max)
{
    DIR *d = opendir(BENCH_SRC "/bench/schedules");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "blur_paper.", 11) == 0 && l > 6
            && strcmp(e->d_name + l - 6, ".sched") == 0)
            snprintf(out[n++], 512, "%.250s/bench/schedules/%.200s", BENCH_SRC, e->d_name);
    }
    closedir(d);
    return n;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Mean paper Lab error of variant v against exact x over the 820x614 bundled photos
 * resampled to w x h; -1 if none could be measured. */
static double mean_error(pf_variant *v, pf_variant *x, int w, int h, int *count)
{
    static const char *const dirs[] = { BENCH_TRAIN, BENCH_SRC "/data/images/test" };
    double sum = 0;
    *count = 0;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strstr(e->d_name, "_820x614.png"))
                continue;
            char path[512];
            pf_error err;
            snprintf(path, sizeof path, "%s/%s", dirs[k], e->d_name);
            pf_image *in = bench_photo(path, w, h, &err);
            pf_image *a = pf_image_new(w, h, 3, &err), *b = pf_image_new(w, h, 3, &err);
            double lab;
            if (in && a && b && bench_run(v, in, a, &err) == 0 && bench_run(x, in, b, &err) == 0
                && pf_metric_lab_de76_paper(a, b, &lab, &err) == 0) {
                sum += lab;
                (*count)++;
            }
            pf_image_free(in);
            pf_image_free(a);
            pf_image_free(b);
        }
        closedir(d);
    }
    return *count ? sum / *count : -1;
}

static void part2_table(bench_prog *bp, pf_image *in, int threads, int reps, char sch[][512],
                        int ns)
{
    trow rows[MAX_ROWS];
    memset(rows, 0, sizeof rows);
    int n = 0;
    pf_error err;
    int w = in->width, h = in->height;
    bench_img vin = bench_view(in);
#ifdef BENCH_HAVE_HALIDE
    bench_hl_set_threads(threads);
    static const int hl_flags[3] = { BENCH_HL_ADAMS, BENCH_HL_ADAMS | BENCH_HL_STRICT, 0 };
    static const char *const hl_names[3] = { "Adams2019", "Adams2019 strict_float", "hand" };
    for (int a = 0; a < 3; a++) {
        trow *r = &rows[n++];
        r->out = pf_image_new(w, h, 3, &err);
        bench_img vo = bench_view(r->out);
        snprintf(r->name, sizeof r->name, "Halide exact %s", hl_names[a]);
        r->ok = bench_hl_make(BENCH_BLUR, hl_flags[a], &vin, &vo, &r->m) == 0;
        bench_strcpy(r->why, sizeof r->why, r->m.note);
    }
#else
    (void)vin;
#endif
    int first_pf = n;
    const char *names[2 + 4] = { NULL, BENCH_SRC "/apps/blur_paper.sched" };
    for (int s = 0; s < ns && s < 4; s++)
        names[2 + s] = sch[s];
    for (int s = 0; s < 2 + ns && s < 6; s++) {
        trow *r = &rows[n++];
        r->in = in;
        r->out = pf_image_new(w, h, 3, &err);
        snprintf(r->name, sizeof r->name, "perfora %s", s == 0 ? "exact default"
                                                               : base_name(names[s]));
        r->v = compile_sched(bp, names[s], threads, 0, r->why, sizeof r->why);
        r->ok = r->v != NULL;
    }
    /* The default variant with fused multiply-adds (opt-in; Halide fuses by default). */
    trow *fc = &rows[n++];
    fc->in = in;
    fc->out = pf_image_new(w, h, 3, &err);
    snprintf(fc->name, sizeof fc->name, "perfora blur_paper.sched fp-contract");
    fc->v = compile_sched(bp, names[1], threads, BENCH_FP_CONTRACT, fc->why, sizeof fc->why);
    fc->ok = fc->v != NULL;
    trow *cp = &rows[n++];
    snprintf(cp->name, sizeof cp->name, "streaming copy in -> out");
    cp->copy = true;
    cp->threads = threads;
    cp->in = in;
    cp->out = pf_image_new(w, h, 3, &err);
    cp->ok = true;
    measure(rows, n, reps);
    double t_adams = first_pf > 0 ? med(&rows[0]) : NAN, t_copy = med(cp);
    double t_strict = first_pf > 1 && rows[1].ok ? med(&rows[1]) : NAN;
    double t_exact = med(&rows[first_pf]);
    printf("\n%dx%d, %d thread%s (copy: %.1f MB read + %.1f MB written)\n", w, h, threads,
           threads > 1 ? "s" : "", in->plane * 12.0 / 1e6, in->plane * 12.0 / 1e6);
    printf("  %-36s %10s %10s %10s %10s %11s %11s %9s  %s\n", "method", "median ms", "min ms",
           "Adams/x", "strict/x", "x/copy", "exact/x", "Lab err", "notes");
    for (int i = 0; i < n; i++) {
        trow *r = &rows[i];
        if (!r->ok) {
            first_line(r->why);
            printf("  %-36s %10s %10s %10s %10s %11s %11s %9s  %s\n", r->name, "n/a", "", "", "",
                   "", "", "", r->why);
            continue;
        }
        double t = med(r);
        char lab_s[16] = "-";
        if (r->v && i > first_pf) {
            int cnt;
            double lab = mean_error(r->v, rows[first_pf].v, w, h, &cnt);
            if (lab >= 0)
                snprintf(lab_s, sizeof lab_s, "%.3f", lab);
        }
        first_line(r->why);
        char adams_s[16] = "-", strict_s[16] = "-";
        if (!isnan(t_adams))
            snprintf(adams_s, sizeof adams_s, "%.2f", t_adams / t);
        if (!isnan(t_strict))
            snprintf(strict_s, sizeof strict_s, "%.2f", t_strict / t);
        printf("  %-36s %10.3f %10.3f %10s %10s %11.2f %11.2f %9s  %s\n", r->name, t,
               bench_min(r->t, r->n), adams_s, strict_s, t / t_copy, t_exact / t, lab_s,
               r->why);
    }
    for (int i = 0; i < n; i++) {
        bench_method_free(&rows[i].m);
        pf_variant_free(rows[i].v);
        pf_image_free(rows[i].out);
    }
}

static int part2(int reps)
{
    const int w = 2048, h = 1536;
    printf("\n## Part 2 (issue 7): blur variant + execution schedule vs exact Halide 14, "
           "%dx%d\n", w, h);
    printf("# target: Adams2019 / variant >= 2.5 with mean Lab error <= 0.5 (error: over every "
           "bundled 820x614 photo resampled to %dx%d)\n", w, h);
#ifndef BENCH_HAVE_HALIDE
    printf("# (Halide 14 not found at configure time: no Halide rows)\n");
#endif
    pf_error err;
    pf_image *in = bench_photo(BENCH_TRAIN "/natural_0_820x614.png", w, h, &err);
    bench_prog bp;
    if (!in || bench_prog_load(&bp, BENCH_SRC "/apps/blur.pf", &err) != 0) {
        printf("n/a: %s\n", err.msg);
        pf_image_free(in);
        return 1;
    }
    char sch[4][512];
    int ns = find_variant_schedules(sch, 4);
    for (int t = 1; t <= 2; t++)
        part2_table(&bp, in, t, reps, sch, ns);
    bench_prog_free(&bp);
    pf_image_free(in);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 15, parts = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]) > 64 ? 64 : atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--part") == 0)
            parts = atoi(argv[i + 1]) == 1 ? 1 : atoi(argv[i + 1]) == 2 ? 2 : 3;
    }
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        puts("usage: bench_perforation [--reps N (default 15)] [--part 1|2]");
        return 0;
    }
    bench_print_header("bench_perforation: the paper's blur variant vs exact perfora and "
                       "Halide");
    int rc = 0;
    if (parts & 1)
        rc |= part1(reps);
    if (parts & 2)
        rc |= part2(reps);
    return rc;
}
