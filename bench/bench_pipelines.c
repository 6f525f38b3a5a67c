/* bench_pipelines: perfora's exact JIT pipelines against what users run instead -- plain C
 * (naive and reasonable), OpenCV 4.6 and Halide 14 (hand schedule and Adams2019) -- on blur,
 * unsharp mask, bilateral filter, bilateral grid and median at 820x614 and 2048x1536, with 1
 * and 2 threads; plus perfora's compile latency per app and the peak RSS of `perfora run`.
 * Every time is the median of interleaved repetitions in this one run; the tables give ratios,
 * which survive a shared, loaded machine where absolute times do not. Outputs are checked
 * against perfora's wherever the comparator computes the same thing (max |difference|).
 * Usage: bench_pipelines --help. docs/bench.md explains every column. */
#include "bench/bench_latency.h"
#include "bench/bench_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_METHODS 24
#define MAX_SCHED 4

static const char *const app_file[BENCH_APP_COUNT] = {
    "blur", "unsharp_mask", "bilateral_filter", "bilateral_grid", "median"
};

typedef struct options {
    int reps;            /* timed rounds */
    double budget_ms;    /* per method and table: fewer rounds for slow methods */
    int sizes;           /* bit 0: 820x614, bit 1: 2048x1536 */
    int threads;         /* bit 0: 1 thread, bit 1: 2 threads */
    unsigned apps;       /* bit per bench_app */
    bool speed, latency, rss;
    int compile_reps;
    const char *photo;
} options;

/* One row of a table: a method bound to its own output image. */
typedef struct row {
    char name[48];
    bench_method m;
    pf_image *out;
    pf_variant *pv;       /* perfora rows: the variant (run through bench_run) */
    pf_image *pv_in;
    bool perfora;
    bool ok;              /* usable */
    char why[320];        /* n/a reason, or a note */
    double diff;          /* max |out - perfora default| where comparable; NAN if not */
    double t[64];
    int n, reps;
    double cpu, wall;     /* summed over the timed runs: cpu / wall = threads really busy */
} row;

/* ---- methods ---- */

static int perfora_run(row *r, pf_error *err)
{
    return bench_run(r->pv, r->pv_in, r->out, err);
}

static int row_run(row *r)
{
    if (r->perfora) {
        pf_error err;
        if (perfora_run(r, &err) != 0) {
            snprintf(r->why, sizeof r->why, "run failed: %.250s", err.msg);
            return -1;
        }
        return 0;
    }
    return r->m.run(r->m.ctx);
}

static void row_free(row *r)
{
    bench_method_free(&r->m);
    pf_variant_free(r->pv);
    pf_image_free(r->out);
    memset(r, 0, sizeof *r);
}

/* The exact schedule files bench/schedules/APP.NAME.sched, sorted, at most MAX_SCHED. (Files
 * named APP_something.sched, e.g. blur_paper.tiled.sched, are perforated variants for
 * bench_perforation.) */
static int find_schedules(const char *app, char out[][512])
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bench/schedules", BENCH_SRC);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    size_t la = strlen(app);
    while ((e = readdir(d)) && n < MAX_SCHED) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, app, la) == 0 && l > 6 && strcmp(e->d_name + l - 6, ".sched") == 0
            && e->d_name[la] == '.')
            snprintf(out[n++], 512, "%.255s/%.200s", dir, e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++)  /* a few names: insertion sort */
        for (int j = i; j > 0 && strcmp(out[j - 1], out[j]) > 0; j--) {
            char t[512];
            memcpy(t, out[j], 512);
            memcpy(out[j], out[j - 1], 512);
            memcpy(out[j - 1], t, 512);
        }
    return n;
}

static void add_comparator(row *r, const char *name, int rc, pf_image *out)
{
    snprintf(r->name, sizeof r->name, "%s", name);
    r->out = out;
    r->ok = rc == 0;
    bench_strcpy(r->why, sizeof r->why, r->m.note);
    r->diff = NAN;
}

/* Adds a perfora row for schedule file `sched` (NULL: the default schedule), compiled with
 * BENCH_* `flags` (0: as perfora compiles by default). */
static void add_perfora(row *r, bench_prog *bp, const char *sched, unsigned flags, int threads,
                        pf_image *in, pf_image *out)
{
    pf_error err;
    const char *base = sched ? strrchr(sched, '/') + 1 : NULL;
    snprintf(r->name, sizeof r->name, "perfora %s%s", base ? base : "default",
             flags & BENCH_FAST_MATH ? " fast-math" : "");
    if (flags & BENCH_NO_CHANNEL_UNROLL)
        snprintf(r->name, sizeof r->name, "(perfora default, channels outside)");
    if (flags & BENCH_NO_BANDS)
        snprintf(r->name, sizeof r->name, "(perfora default, splat serial)");
    r->perfora = true;
    r->out = out;
    r->pv_in = in;
    r->diff = NAN;
    const pf_plan *plan = bench_plan(bp, sched, &err);
    r->pv = plan ? bench_compile_with(bp, plan, threads, flags, &err) : NULL;
    if (!r->pv) {
        snprintf(r->why, sizeof r->why, "n/a: %.300s", err.msg);
        return;
    }
    r->ok = true;
}

/* ---- one table: an app at one size and thread count ---- */

#define N_HL 3
#ifdef BENCH_HAVE_HALIDE
static const int hl_flags[N_HL] = { 0, BENCH_HL_ADAMS, BENCH_HL_ADAMS | BENCH_HL_STRICT };
static const char *const hl_names[N_HL] = { "hand", "Adams2019", "Adams2019 strict_float" };
#endif

typedef struct app_bench {
    bench_app app;
    bench_prog prog;
    pf_image *in, *ref;   /* the input and perfora's default output (1 thread) */
    /* Halide: hand, Adams2019, Adams2019 with strict_float (cmp.h: Halide's default compiles
     * with reassociation and contraction); compiled once, shared by both thread counts */
    bench_method hl[N_HL];
    pf_image *hl_out[N_HL];
    int hl_rc[N_HL];
} app_bench;

static void first_line(char *s)
{
    s[strcspn(s, "\n")] = 0;
}

/* Runs every usable row once (warm-up and output check), then interleaved rounds. */
static void measure(row *rows, int n, const options *o, const pf_image *ref)
{
    for (int i = 0; i < n; i++) {
        row *r = &rows[i];
        if (!r->ok)
            continue;
        double t0 = pf_now_ms();
        if (row_run(r) != 0) {
            r->ok = false;
            continue;
        }
        double w = pf_now_ms() - t0;
        if (r->m.finish)
            r->m.finish(r->m.ctx);
        if (r->perfora || r->m.check) {
            int at[3];
            long bad;
            r->diff = bench_max_diff_at(r->out, ref, r->perfora ? 0 : r->m.x0,
                                        r->perfora ? 0 : r->m.y0,
                                        r->perfora ? ref->width : r->m.x1,
                                        r->perfora ? ref->height : r->m.y1, 1e-4, at, &bad);
            if (bad) {  /* more than rounding: say where */
                char note[320];
                snprintf(note, sizeof note, "%ld samples differ by > 1e-4, max at (%d, %d, %d): "
                         "%g vs perfora %g; %.150s", bad, at[0], at[1], at[2],
                         *pf_image_at(r->out, at[0], at[1], at[2]),
                         *pf_image_at(ref, at[0], at[1], at[2]), r->why);
                bench_strcpy(r->why, sizeof r->why, note);
            }
        }
        r->reps = (int)(o->budget_ms / (w > 0.01 ? w : 0.01));
        r->reps = r->reps < 1 ? 1 : r->reps > o->reps ? o->reps : r->reps;
    }
    for (int round = 0; round < o->reps; round++)
        for (int i = 0; i < n; i++) {
            row *r = &rows[i];
            if (!r->ok || round >= r->reps)
                continue;
            double t0 = pf_now_ms(), c0 = pf_cpu_ms();
            if (row_run(r) != 0) {
                r->ok = false;
                continue;
            }
            r->t[r->n++] = pf_now_ms() - t0;
            r->wall += r->t[r->n - 1];
            r->cpu += pf_cpu_ms() - c0;
        }
}

static double row_median(const row *r)
{
    return r->ok && r->n ? pf_median(r->t, r->n) : NAN;
}

static void print_rows(const row *rows, int n, double t_perfora)
{
    printf("  %-48s %10s %10s %5s %8s %9s %11s  %s\n", "method", "median ms", "min ms", "runs",
           "cpu/wall", "perfora/x", "max|diff|", "notes");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        char why[320];
        snprintf(why, sizeof why, "%s", r->why);
        first_line(why);
        if (!r->ok) {
            printf("  %-48s %10s %10s %5s %8s %9s %11s  %s\n", r->name, "n/a", "", "", "", "", "",
                   why);
            continue;
        }
        double med = row_median(r);
        char diff[32] = "-";
        if (!isnan(r->diff))
            snprintf(diff, sizeof diff, "%.2g", r->diff);
        printf("  %-48s %10.3f %10.3f %5d %8.2f %9.2f %11s  %s\n", r->name, med,
               bench_min(r->t, r->n), r->n, r->cpu / r->wall, t_perfora / med, diff, why);
    }
}

/* The summary ratios of one table, kept for the final ratio table. */
typedef struct summary {
    bool done;
    double perfora, best;          /* default schedule; best perfora row */
    double best_fast;              /* best perfora row compiled with --fast-math */
    double naive, reasonable, cv, hand, adams, strict;  /* NAN when not measured */
    char best_name[48], best_fast_name[64];
} summary;

static double named(const row *rows, int n, const char *part)
{
    for (int i = 0; i < n; i++)
        if (strstr(rows[i].name, part))
            return row_median(&rows[i]);
    return NAN;
}

static void run_table(app_bench *ab, int threads, const options *o, summary *sum)
{
    row rows[MAX_METHODS];
    memset(rows, 0, sizeof rows);
    int n = 0;
    pf_image *in = ab->in;
    bench_img vin = bench_view(in);
    pf_error err;
    if (threads == 1) {
        for (int naive = 1; naive >= 0; naive--) {
            pf_image *out = pf_image_new(in->width, in->height, 3, &err);
            bench_img vo = bench_view(out);
            int rc = bench_plainc_make(ab->app, naive, &vin, &vo, &rows[n].m);
            add_comparator(&rows[n++], naive ? "C naive" : "C reasonable", rc, out);
        }
    }
#ifdef BENCH_HAVE_OPENCV
    bench_cv_set_threads(threads);
    {
        pf_image *out = pf_image_new(in->width, in->height, 3, &err);
        bench_img vo = bench_view(out);
        int rc = bench_cv_make(ab->app, &vin, &vo, &rows[n].m);
        char name[48];
        snprintf(name, sizeof name, "OpenCV %s", bench_cv_version());
        add_comparator(&rows[n++], name, rc, out);
    }
#endif
#ifdef BENCH_HAVE_HALIDE
    bench_hl_set_threads(threads);
    for (int a = 0; a < N_HL; a++) {
        row *r = &rows[n++];
        snprintf(r->name, sizeof r->name, "Halide %s %s", bench_hl_version(), hl_names[a]);
        r->m = ab->hl[a];
        r->m.destroy = NULL;  /* the method and its output belong to app_bench */
        r->out = ab->hl_out[a];
        r->ok = ab->hl_rc[a] == 0;
        snprintf(r->why, sizeof r->why, "%s%s", r->ok ? "" : "n/a: ", ab->hl[a].note);
        r->diff = NAN;
    }
#endif
    /* perfora exact (the default schedule, then each schedule file), then the same rows
     * compiled with --fast-math (Halide's float semantics: the like-for-like comparison with
     * Halide's default, as exact perfora is with strict_float) */
    int first_perfora = n, first_fast = 0;
    char scheds[MAX_SCHED][512];
    int ns = find_schedules(app_file[ab->app], scheds);
    for (unsigned fm = 0; fm <= BENCH_FAST_MATH; fm += BENCH_FAST_MATH) {
        first_fast = fm ? n : first_fast;
        for (int s = -1; s < ns; s++, n++)
            add_perfora(&rows[n], &ab->prog, s < 0 ? NULL : scheds[s], fm, threads, in,
                        pf_image_new(in->width, in->height, 3, &err));
    }
    int n_timed = n;  /* rows after this one show what a pass buys; never the best */
    if (ab->app == BENCH_BGRID) {
        add_perfora(&rows[n++], &ab->prog, NULL, BENCH_NO_CHANNEL_UNROLL, threads, in,
                    pf_image_new(in->width, in->height, 3, &err));
        add_perfora(&rows[n++], &ab->prog, NULL, BENCH_NO_BANDS, threads, in,
                    pf_image_new(in->width, in->height, 3, &err));
    }
    measure(rows, n, o, ab->ref);
    double tp = row_median(&rows[first_perfora]);
    printf("\n%s %dx%d, %d thread%s\n", app_file[ab->app], in->width, in->height, threads,
           threads > 1 ? "s" : "");
    print_rows(rows, n, tp);
    sum->done = true;
    sum->perfora = tp;
    sum->best = tp;
    snprintf(sum->best_name, sizeof sum->best_name, "default");
    for (int i = first_perfora + 1; i < first_fast; i++) {
        double t = row_median(&rows[i]);
        if (!isnan(t) && (isnan(sum->best) || t < sum->best)) {
            sum->best = t;
            snprintf(sum->best_name, sizeof sum->best_name, "%s", rows[i].name + 8);
        }
    }
    sum->best_fast = NAN;
    for (int i = first_fast; i < n_timed; i++) {
        double t = row_median(&rows[i]);
        if (!isnan(t) && (isnan(sum->best_fast) || t < sum->best_fast)) {
            sum->best_fast = t;
            snprintf(sum->best_fast_name, sizeof sum->best_fast_name, "%s", rows[i].name + 8);
        }
    }
    sum->naive = named(rows, n, "C naive");
    sum->reasonable = named(rows, n, "C reasonable");
    sum->cv = named(rows, n, "OpenCV");
    sum->hand = named(rows, n, " hand");
    sum->adams = named(rows, n, " Adams2019");  /* the first: the default target */
    sum->strict = named(rows, n, " Adams2019 strict_float");
    for (int i = 0; i < n; i++) {
        if (strncmp(rows[i].name, "Halide", 6) == 0) {
            rows[i].m.ctx = NULL;  /* not ours to free */
            rows[i].out = NULL;
        }
        row_free(&rows[i]);
    }
}

/* ---- per size and app ---- */

static int app_setup(app_bench *ab, bench_app app, pf_image *in, pf_error *err)
{
    memset(ab, 0, sizeof *ab);
    ab->app = app;
    ab->in = in;
    char path[512];
    snprintf(path, sizeof path, "%s/apps/%s.pf", BENCH_SRC, app_file[app]);
    if (bench_prog_load(&ab->prog, path, err) != 0)
        return -1;
    const pf_plan *plan = bench_plan(&ab->prog, NULL, err);
    pf_variant *v = plan ? bench_compile(&ab->prog, plan, 1, false, err) : NULL;
    if (!v)
        return -1;
    ab->ref = pf_image_new(in->width, in->height, 3, err);
    int rc = bench_run(v, in, ab->ref, err);
    pf_variant_free(v);
    if (rc != 0)
        return -1;
#ifdef BENCH_HAVE_HALIDE
    bench_img vin = bench_view(in);
    for (int a = 0; a < N_HL; a++) {
        ab->hl_out[a] = pf_image_new(in->width, in->height, 3, err);
        bench_img vo = bench_view(ab->hl_out[a]);
        double t0 = pf_now_ms();
        ab->hl_rc[a] = bench_hl_make(app, hl_flags[a], &vin, &vo, &ab->hl[a]);
        fprintf(stderr, "  [Halide %s %s: %s in %.1f s]\n", app_file[app], hl_names[a],
                ab->hl_rc[a] ? "failed" : "compiled", (pf_now_ms() - t0) / 1e3);
    }
#endif
    return 0;
}

static void app_teardown(app_bench *ab)
{
    for (int a = 0; a < N_HL; a++) {
        bench_method_free(&ab->hl[a]);
        pf_image_free(ab->hl_out[a]);
    }
    pf_image_free(ab->ref);
    bench_prog_free(&ab->prog);
}

static void print_ratio_table(summary s[2][2][BENCH_APP_COUNT], const options *o)
{
    static const int W[2] = { 820, 2048 }, H[2] = { 614, 1536 };
    printf("\n## Ratios (time of perfora exact JIT / time of the other; < 1: perfora faster)\n");
    printf("# HL-strict: Halide Adams2019 with strict_float (no reassociation or contraction, as\n"
           "# perfora's exact code); HL-hand and HL-Adams compile with Halide's fast-math;\n"
           "# fast/HLAdams: the best perfora row compiled with --fast-math over HL-Adams (like\n"
           "# for like, as best/HLstrict is for exact perfora)\n");
    printf("%-17s %-9s %3s %8s %8s %8s %8s %9s %10s %11s %12s %13s %13s  %s\n", "app", "size",
           "thr", "/naiveC", "/reasC", "/OpenCV", "/HL-hand", "/HL-Adams", "/HL-strict",
           "best/HLhand", "best/HLAdams", "best/HLstrict", "fast/HLAdams",
           "best perfora schedule; best fast-math");
    for (int z = 0; z < 2; z++)
        for (int t = 0; t < 2; t++)
            for (int a = 0; a < BENCH_APP_COUNT; a++) {
                const summary *q = &s[z][t][a];
                if (!q->done)
                    continue;
                char size[16], r[10][16];
                snprintf(size, sizeof size, "%dx%d", W[z], H[z]);
                const double num[10] = { q->perfora, q->perfora, q->perfora, q->perfora,
                                         q->perfora, q->perfora, q->best, q->best, q->best,
                                         q->best_fast };
                const double den[10] = { q->naive, q->reasonable, q->cv, q->hand, q->adams,
                                         q->strict, q->hand, q->adams, q->strict, q->adams };
                for (int k = 0; k < 10; k++) {
                    double v = num[k] / den[k];
                    if (isnan(v))
                        snprintf(r[k], sizeof r[k], "-");
                    else
                        snprintf(r[k], sizeof r[k], "%.2f", v);
                }
                printf("%-17s %-9s %3d %8s %8s %8s %8s %9s %10s %11s %12s %13s %13s  %s; %s\n",
                       app_file[a], size, t + 1, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7],
                       r[8], r[9], q->best_name, q->best_fast_name);
            }
    (void)o;
}

static int speed_tables(const options *o)
{
    static const int W[2] = { 820, 2048 }, H[2] = { 614, 1536 };
    static summary sum[2][2][BENCH_APP_COUNT];
    printf("\n## Speed: median of up to %d interleaved runs per method (budget %.0f ms each)\n",
           o->reps, o->budget_ms);
#ifndef BENCH_HAVE_OPENCV
    printf("(OpenCV not found at configure time: its rows are missing)\n");
#endif
#ifndef BENCH_HAVE_HALIDE
    printf("(Halide 14 not found at configure time: its rows are missing)\n");
#endif
    for (int z = 0; z < 2; z++) {
        if (!(o->sizes & (1 << z)))
            continue;
        pf_error err;
        pf_image *in = bench_photo(o->photo, W[z], H[z], &err);
        if (!in) {
            fprintf(stderr, "bench_pipelines: %s\n", err.msg);
            return 1;
        }
        for (int a = 0; a < BENCH_APP_COUNT; a++) {
            if (!(o->apps & (1u << a)))
                continue;
            app_bench ab;
            if (app_setup(&ab, (bench_app)a, in, &err) != 0) {
                printf("\n%s %dx%d: n/a: %s\n", app_file[a], W[z], H[z], err.msg);
                app_teardown(&ab);
                continue;
            }
            for (int t = 0; t < 2; t++)
                if (o->threads & (1 << t))
                    run_table(&ab, t + 1, o, &sum[z][t][a]);
            app_teardown(&ab);
            fflush(stdout);
        }
        pf_image_free(in);
    }
    print_ratio_table(sum, o);
    return 0;
}

/* ---- command line ---- */

static const char usage[] =
    "usage: bench_pipelines [options]\n"
    "  --reps N          timed rounds per table (default 9)\n"
    "  --budget MS       a method whose warm-up run takes w ms gets at most MS / w rounds "
    "(default 4000)\n"
    "  --size S          820 | 2048 | all (default all)\n"
    "  --threads T       1 | 2 | all (default all)\n"
    "  --app NAME        blur | unsharp_mask | bilateral_filter | bilateral_grid | median "
    "(repeatable; default all)\n"
    "  --only PART       speed | latency | rss (repeatable; default all three)\n"
    "  --compile-reps N  compilations per app for the latency table (default 11)\n"
    "  --photo FILE      the input photo (default data/images/train/natural_0_820x614.png)\n"
    "  --no-vector-math  perfora's exp, log, pow, sin, cos as one libm call per lane\n";

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){ 9, 4000.0, 3, 3, 0, false, false, false, 11,
                    BENCH_TRAIN "/natural_0_820x614.png" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(a, "--no-vector-math") == 0) {
            bench_default_flags |= BENCH_NO_VECTOR_MATH;
            continue;
        }
        if (!v)
            goto bad;
        i++;
        if (strcmp(a, "--reps") == 0)
            o->reps = atoi(v) < 1 ? 1 : atoi(v) > 64 ? 64 : atoi(v);
        else if (strcmp(a, "--budget") == 0)
            o->budget_ms = atof(v);
        else if (strcmp(a, "--compile-reps") == 0)
            o->compile_reps = atoi(v) < 1 ? 1 : atoi(v);
        else if (strcmp(a, "--photo") == 0)
            o->photo = v;
        else if (strcmp(a, "--size") == 0)
            o->sizes = strcmp(v, "820") == 0 ? 1 : strcmp(v, "2048") == 0 ? 2 : 3;
        else if (strcmp(a, "--threads") == 0)
            o->threads = strcmp(v, "1") == 0 ? 1 : strcmp(v, "2") == 0 ? 2 : 3;
        else if (strcmp(a, "--only") == 0) {
            if (strcmp(v, "speed") == 0)
                o->speed = true;
            else if (strcmp(v, "latency") == 0)
                o->latency = true;
            else if (strcmp(v, "rss") == 0)
                o->rss = true;
            else
                goto bad;
        } else if (strcmp(a, "--app") == 0) {
            int k = 0;
            while (k < BENCH_APP_COUNT && strcmp(v, app_file[k]) != 0)
                k++;
            if (k == BENCH_APP_COUNT)
                goto bad;
            o->apps |= 1u << k;
        } else {
            goto bad;
        }
    }
    if (!o->apps)
        o->apps = (1u << BENCH_APP_COUNT) - 1;
    if (!o->speed && !o->latency && !o->rss)
        o->speed = o->latency = o->rss = true;
    return 0;
bad:
    fputs(usage, stderr);
    return 2;
}

/* Each thread count in a process of its own: once Halide's thread pool has run a 2-thread
 * table, halide_set_num_threads(1) no longer kept its pipelines on one core (cpu/wall 1.6-1.97
 * in the 1-thread tables that followed), so the 1-thread Halide times were 2-thread times. */
static int speed(const options *o)
{
    if (o->threads != 3)
        return speed_tables(o);
    int rc = 0;
    for (int t = 0; t < 2; t++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            options one = *o;
            one.threads = 1 << t;
            int r = speed_tables(&one);
            fflush(stdout);
            _exit(r);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    bench_print_header("bench_pipelines: perfora exact vs plain C, OpenCV, Halide");
    int rc = 0;
    if (o.latency)
        rc |= bench_latency_table(o.compile_reps);
    if (o.rss)
        rc |= bench_rss_table();
    if (o.speed)
        rc |= speed(&o);
    return rc;
}
