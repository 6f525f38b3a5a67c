/* bench_guided: the released GA against the model-guided search and the multi-fidelity one
 * (docs/search.md §10), per app and seed, with the same population P: the plain GA for G
 * generations, the guided search measuring M children a generation (2) for as many
 * generations as a fifth of the GA's measurements allow (with --lookahead L also the same
 * with L pools bred ahead on predictions, "guided+la"), with --equal also the guided search
 * measuring as many candidates as the GA (the GA's new children a generation, G generations),
 * and with --fidelity WxH the plain GA and the guided search measuring every child first on
 * the WxH training images and at the bench's resolution only when promoted (tune --fidelity).
 * Runs alternate their order from app to app and seed to seed (a killed bench's unfinished runs
 * last), so that a drift of the machine's load does not favour one. Each search's training
 * frontier is then re-measured on the test split, all of them in one pool with their variants
 * interleaved (the same conditions for every search), and the
 * table gives per search: candidates measured (at the resolution; "low": at low fidelity), wall
 * time, the load average, the test-frontier area (mean relative time over error budgets 0..10,
 * lower is better) and test speedups at Lab <= 1, 2, 4. With --seeds N (seeds S, S+1, ...) a
 * last table gives per app and search the mean test area, its standard deviation and range
 * over the seeds, the mean of the per-seed ratios to the GA's area, and on how many seeds the
 * search was within 2% of the GA or better: one seed's area moves 7-15% between reruns here.
 * Candidates are timed with one thread by default (--threads 1): on a machine shared with other
 * work, a parallel schedule loses time to the other processes that a serial one does not, and
 * the GA then finds execution-only "speedups" that the load makes (docs/search.md §10);
 * one thread compares the searches on a landscape the load scales evenly.
 * Usage: bench_guided [--apps A,B,...] [--resolution WxH] [--population P] [--generations G]
 *                     [--measure M] [--guided-generations G2] [--pool K] [--explore F]
 *                     [--lookahead L] [--seed S] [--seeds N] [--jobs J] [--threads T]
 *                     [--equal] [--fidelity WxH] [--keep DIR] [--reuse-plain DIR]
 * (--reuse-plain DIR takes the plain GA's finished runs from an earlier run's --keep DIR
 * instead of running them again; their frontiers are re-measured with the others. The same
 * command again on the --keep DIR of a bench that was killed takes its finished runs as they
 * are and resumes an unfinished one; their wall times print as nan.) */
#include "base/arena.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "bench/bench_util.h"
#include "cluster/pool.h"
#include "dataset/manifest.h"
#include "dataset/proc.h"
#include "results/rundir.h"
#include "results/tune.h"
#include "search/pareto.h"
#include "search/strmap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct bench_args {
    char apps[512];
    int width, height, population, generations, measure, pool, jobs, threads, seeds;
    int low_width, low_height;  /* --fidelity (0: no multi-fidelity search) */
    int guided_generations;  /* of the guided search measuring M a generation (0: as many
                                as a fifth of the GA's measurements allow) */
    int lookahead;           /* > 0: also the guided search with that lookahead (guided+la) */
    double explore;
    unsigned long long seed;
    bool equal;
    const char *keep;
    const char *reuse;       /* --reuse-plain DIR: the plain GA's runs of an earlier --keep DIR */
} bench_args;

enum { PLAIN, GUIDED, LOOKAHEAD, EQUAL, FIDELITY, GUIDED_FID, N_KINDS };
static const char *const kind_names[N_KINDS] = { "plain GA", "guided", "guided+la", "guided, =",
                                                 "fidelity", "guided+fid" };
static const char *const kind_dirs[N_KINDS] = { "plain", "guided", "lookahead", "equal",
                                                "fidelity", "guided-fidelity" };

typedef struct search {
    int kind;
    char dir[PATH_MAX + 128];
    unsigned long long seed;
    long measured;          /* training candidates measured (at the bench's resolution) */
    long measured_low;      /* at low fidelity */
    double wall_s, load0, load1;
    bool resumed;           /* an unfinished run of the --keep DIR, continued */
    char **front;           /* the training frontier's schedule texts */
    int n_front;
    double train_area;
    double test_area, speedup[3];
} search;

static const double budgets[3] = { 1, 2, 4 };
#define MAX_SEEDS 32

static int parse(int argc, char **argv, bench_args *a)
{
    /* median: image perforation of its pixels and loop perforation of its window, both kinds
     * (unsharp mask finds nothing under the 10 Lab cap at these budgets: docs/search.md §10) */
    *a = (bench_args){ "blur,bilateral_filter,median", 256, 192, 30, 20, 2, 20, 2, 1, 1,
                       0, 0, 0, 0, 0.25, 5, false, NULL, NULL };
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(s, "--equal") == 0) {
            a->equal = true;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(s, "--apps") == 0)
            bench_strcpy(a->apps, sizeof a->apps, v);
        else if (strcmp(s, "--resolution") == 0)
            sscanf(v, "%dx%d", &a->width, &a->height);
        else if (strcmp(s, "--fidelity") == 0)
            sscanf(v, "%dx%d", &a->low_width, &a->low_height);
        else if (strcmp(s, "--seeds") == 0)
            a->seeds = atoi(v);
        else if (strcmp(s, "--population") == 0)
            a->population = atoi(v);
        else if (strcmp(s, "--generations") == 0)
            a->generations = atoi(v);
        else if (strcmp(s, "--measure") == 0)
            a->measure = atoi(v);
        else if (strcmp(s, "--pool") == 0)
            a->pool = atoi(v);
        else if (strcmp(s, "--explore") == 0)
            a->explore = atof(v);
        else if (strcmp(s, "--seed") == 0)
            a->seed = strtoull(v, NULL, 10);
        else if (strcmp(s, "--jobs") == 0)
            a->jobs = atoi(v);
        else if (strcmp(s, "--threads") == 0)
            a->threads = atoi(v);
        else if (strcmp(s, "--guided-generations") == 0)
            a->guided_generations = atoi(v);
        else if (strcmp(s, "--lookahead") == 0)
            a->lookahead = atoi(v);
        else if (strcmp(s, "--keep") == 0)
            a->keep = v;
        else if (strcmp(s, "--reuse-plain") == 0)
            a->reuse = v;
        else
            return -1;
    }
    return a->population >= 2 && a->generations >= 1 && a->measure >= 1 && a->seeds >= 1 &&
                   a->seeds <= MAX_SEEDS ? 0 : -1;
}

/* The GA's measurements: the initial population, then its new children each generation. */
static long ga_budget(const bench_args *a, int *fresh)
{
    *fresh = a->population - (int)floor(0.3 * a->population);
    return a->population + (long)(a->generations - 1) * *fresh;
}

/* Generations of the guided search measuring M a generation: as given, or the most that keep
 * its measurements within a fifth of the GA's. */
static int guided_generations(const bench_args *a)
{
    int fresh;
    long budget = ga_budget(a, &fresh) / 5 - a->population;
    if (a->guided_generations > 0)
        return a->guided_generations;
    return budget > 0 ? 1 + (int)(budget / a->measure) : 1;
}

static void app_config(const bench_args *a, const char *app, int kind, unsigned long long seed,
                       pf_tune_config *c)
{
    pf_tune_config_default(c);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/apps/%s.pf", PF_SOURCE_DIR, app);
    c->eval.program = pf_xstrdup(path);
    c->eval.dataset = pf_xstrdup(PF_SOURCE_DIR "/data/images");
    c->eval.width = a->width;
    c->eval.height = a->height;
    c->source = pf_xstrdup(path);
    c->ga.population = a->population;
    c->ga.generations = kind == GUIDED || kind == LOOKAHEAD || kind == GUIDED_FID
                            ? guided_generations(a)
                            : a->generations;
    c->ga.seed = seed;
    c->eval.threads = a->threads;
    c->test = false;  /* re-measured here, every search in the same pool */
    if (kind == FIDELITY || kind == GUIDED_FID) {
        c->eval.low_width = a->low_width;
        c->eval.low_height = a->low_height;
    }
    c->model.on = kind == GUIDED || kind == LOOKAHEAD || kind == EQUAL || kind == GUIDED_FID;
    c->model.lookahead = kind == LOOKAHEAD ? a->lookahead : 0;
    c->model.pool = a->pool;
    c->model.explore = a->explore;
    int fresh;
    ga_budget(a, &fresh);
    c->model.measure = kind == EQUAL ? fresh : a->measure;
}

/* The run's training records. */
static pf_eval_record *read_records(const char *dir, int *n)
{
    char *path = pf_run_path(dir, PF_RUN_EVALUATIONS), *text = NULL;
    size_t len;
    pf_error err;
    *n = 0;
    pf_eval_record *recs = NULL;
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, &err) == 0) {
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            recs = pf_xrealloc(recs, sizeof *recs * (size_t)(*n + 1));
            if (pf_record_from_json(line, &recs[*n], &err) == 0)
                (*n)++;
        }
    }
    free(text);
    free(path);
    return recs;
}

static double area_of(const pf_eval_record *recs, const int *idx, int n, double *speedup)
{
    double *t = pf_xmalloc(sizeof *t * 2 * (size_t)(n + 1)), *e = t + n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (idx[i] >= 0 && recs[idx[i]].valid) {
            t[m] = recs[idx[i]].time;
            e[m++] = recs[idx[i]].error;
        }
    double area = pf_frontier_area(t, e, m, 10);
    for (int b = 0; speedup && b < 3; b++)
        speedup[b] = 1 / pf_frontier_best_time(t, e, m, budgets[b]);
    free(t);
    return area;
}

static bool file_in(const char *dir, const char *name)
{
    char *path = pf_run_path(dir, name);
    bool there = access(path, R_OK) == 0;
    free(path);
    return there;
}

/* A run directory with its config (begun) and with its summary (finished). */
static bool run_started(const char *dir)
{
    return file_in(dir, PF_RUN_CONFIG);
}

static bool run_finished(const char *dir)
{
    return file_in(dir, PF_RUN_SUMMARY);
}

static void search_dir(const bench_args *a, const char *app, const char *root, search *s)
{
    bool reused = s->kind == PLAIN && a->reuse;
    snprintf(s->dir, sizeof s->dir, "%s/%s-%s-%llu", reused ? a->reuse : root, app,
             kind_dirs[s->kind], s->seed);
}

static int run_search(const bench_args *a, const char *app, const char *root, search *s)
{
    pf_tune_config cfg;
    app_config(a, app, s->kind, s->seed, &cfg);
    search_dir(a, app, root, s);
    bool reused = s->kind == PLAIN && a->reuse;
    /* A --keep DIR of a bench that was killed: its finished runs are taken as they are, an
     * unfinished one is resumed (its wall time then means nothing and is not printed). */
    s->resumed = !reused && run_started(s->dir);
    reused = reused || run_finished(s->dir);
    pf_error err;
    s->load0 = bench_loadavg();
    double t0 = pf_now_ms();
    int rc = 0;
    if (!reused) {
        pf_tune *t = s->resumed ? pf_tune_resume(s->dir, 0, &err)
                                : pf_tune_create(s->dir, &cfg, &err);
        pf_pool_options opt = { .jobs = a->jobs };
        pf_evaluator *ev = t ? pf_pool_new(&pf_tune_config_of(t)->eval, &opt, &err) : NULL;
        rc = ev ? pf_tune_run(t, ev, NULL, &err) : -1;
        pf_evaluator_destroy(ev);
        pf_tune_free(t);
    } else if (access(s->dir, R_OK) != 0) {
        rc = pf_fail(&err, "--reuse-plain: no run %s", s->dir);
    }
    pf_tune_config_free(&cfg);
    s->wall_s = reused || s->resumed ? NAN : (pf_now_ms() - t0) / 1000;
    s->load1 = bench_loadavg();
    if (rc != 0) {
        fprintf(stderr, "bench_guided: %s: %s\n", s->dir, err.msg);
        return -1;
    }
    int n, *front;
    pf_eval_record *recs = read_records(s->dir, &n);
    for (int i = 0; i < n; i++) {
        s->measured += recs[i].set == PF_SET_TRAIN && recs[i].generation >= 0;
        s->measured_low += recs[i].set == PF_SET_LOW;
    }
    s->n_front = pf_tune_front_of(recs, n, INT_MAX, &front);
    s->train_area = area_of(recs, front, s->n_front, NULL);
    s->front = pf_xcalloc((size_t)s->n_front + 1, sizeof *s->front);
    for (int i = 0; i < s->n_front; i++)
        s->front[i] = pf_xstrdup(recs[front[i]].schedule);
    free(front);
    for (int i = 0; i < n; i++)
        pf_record_free(&recs[i]);
    free(recs);
    fprintf(stderr, "bench_guided: %s %s seed %llu: %ld measured (%ld at low fidelity), %.0f s, "
            "training area %.4f\n", app, kind_names[s->kind], s->seed, s->measured,
            s->measured_low, s->wall_s, s->train_area);
    return 0;
}

/* Every frontier variant of every search on the test split, in one pool, interleaved. */
static int measure_test(const bench_args *a, const char *app, search *s, int n_s)
{
    pf_tune_config cfg;
    app_config(a, app, PLAIN, a->seed, &cfg);
    pf_error err;
    pf_pool_options opt = { .jobs = a->jobs };
    pf_evaluator *ev = pf_pool_new(&cfg.eval, &opt, &err);
    if (!ev) {
        fprintf(stderr, "bench_guided: %s\n", err.msg);
        pf_tune_config_free(&cfg);
        return -1;
    }
    pf_strmap sent;
    pf_strmap_init(&sent);
    int pending = 0, most = 0;
    for (int k = 0; k < n_s; k++)
        most = s[k].n_front > most ? s[k].n_front : most;
    for (int i = 0; i < most; i++)
        for (int k = 0; k < n_s; k++)
            if (i < s[k].n_front && pf_strmap_add(&sent, s[k].front[i], pending))
                pf_evaluator_submit(ev, pending++, PF_SET_TEST, s[k].front[i], &err);
    pf_eval_record *test = pf_xcalloc((size_t)pending + 1, sizeof *test);
    for (int got = 0; got < pending; got++) {
        pf_eval_record r;
        if (pf_evaluator_wait(ev, &r, &err) != 1)
            break;
        test[r.id] = r;
    }
    for (int k = 0; k < n_s; k++) {
        int *idx = pf_xmalloc(sizeof *idx * (size_t)(s[k].n_front + 1));
        for (int i = 0; i < s[k].n_front; i++)
            idx[i] = pf_strmap_get(&sent, s[k].front[i], &idx[i]) ? idx[i] : -1;
        s[k].test_area = area_of(test, idx, s[k].n_front, s[k].speedup);
        free(idx);
    }
    for (int i = 0; i < pending; i++)
        pf_record_free(&test[i]);
    free(test);
    pf_strmap_free(&sent);
    pf_evaluator_destroy(ev);
    pf_tune_config_free(&cfg);
    return 0;
}

static void print_row(const char *app, const search *s, const search *plain)
{
    printf("%-17s %-10s %4llu %6ld %6ld %6.2fx %7.0f %4.1f-%-4.1f %3d %7.4f %7.4f %+6.1f%% "
           "%5.2f %5.2f %5.2f\n",
           app, kind_names[s->kind], s->seed, s->measured, s->measured_low,
           (double)plain->measured / (s->measured + s->measured_low), s->wall_s, s->load0, s->load1, s->n_front,
           s->train_area, s->test_area, 100 * (s->test_area / plain->test_area - 1),
           s->speedup[0], s->speedup[1], s->speedup[2]);
}

/* The searches of one app, in their order. */
static int kinds_of(const bench_args *a, int *kinds)
{
    int n = 0;
    kinds[n++] = PLAIN;
    kinds[n++] = GUIDED;
    if (a->lookahead > 0)
        kinds[n++] = LOOKAHEAD;
    if (a->equal)
        kinds[n++] = EQUAL;
    if (a->low_width > 0) {
        kinds[n++] = FIDELITY;
        kinds[n++] = GUIDED_FID;
    }
    return n;
}

/* In a killed bench's --keep DIR, the unfinished runs go after the fresh ones: a fresh search's
 * wall time is part of the result, a resumed one's is not, so if the bench is killed again the
 * timed searches are the likelier to have finished. */
static void resumed_last(const bench_args *a, const char *app, const char *root, search *s,
                         int n_s)
{
    search tmp[N_KINDS];
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < n_s; k++) {
            search_dir(a, app, root, &s[k]);
            bool unfinished = run_started(s[k].dir) && !run_finished(s[k].dir);
            if (unfinished == (pass == 1))
                tmp[n++] = s[k];
        }
    memcpy(s, tmp, sizeof *s * (size_t)n_s);
}

/* One app at one seed: every search, the test re-measurement, a row each. */
static int run_app_seed(const bench_args *a, const char *app, unsigned long long seed, int turn,
                        const char *root, search *s, int n_s)
{
    int kinds[N_KINDS], rc = 0;
    kinds_of(a, kinds);
    for (int k = 0; k < n_s; k++) {  /* alternate the order from run to run */
        s[k].kind = kinds[turn % 2 == 0 ? k : (n_s - 1 - k)];
        s[k].seed = seed;
    }
    resumed_last(a, app, root, s, n_s);
    for (int k = 0; k < n_s && rc == 0; k++)
        rc = run_search(a, app, root, &s[k]);
    if (rc == 0)
        rc = measure_test(a, app, s, n_s);
    const search *plain = NULL;
    for (int k = 0; k < n_s; k++)
        if (s[k].kind == PLAIN)
            plain = &s[k];
    for (int i = 0; i < n_s && rc == 0; i++)
        for (int k = 0; k < n_s; k++)
            if (s[k].kind == kinds[i])
                print_row(app, &s[k], plain);
    fflush(stdout);
    for (int k = 0; k < n_s; k++) {
        for (int i = 0; i < s[k].n_front; i++)
            free(s[k].front[i]);
        free(s[k].front);
    }
    return rc;
}

/* Mean, standard deviation (n - 1), min and max of v[0..n). */
static void spread(const double *v, int n, double *mean, double *sd, double *lo, double *hi)
{
    double sum = 0, ss = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
    *mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : NAN;
}

/* Over the seeds of one app: per search its test area and its ratio to the GA's of the same
 * seed. area[k][i]: search k (position in kinds_of) at seed i; k = 0 is the GA. */
static void print_seeds(FILE *f, const char *app, const int *kinds, int n_s, int n_seeds,
                        double area[][MAX_SEEDS], const long *measured, const long *low)
{
    for (int k = 0; k < n_s; k++) {
        double ratio[MAX_SEEDS], m, sd, lo, hi, rm, rsd, rlo, rhi;
        int within = 0;
        for (int i = 0; i < n_seeds; i++) {
            ratio[i] = area[k][i] / area[0][i];
            within += ratio[i] <= 1.02;
        }
        spread(area[k], n_seeds, &m, &sd, &lo, &hi);
        spread(ratio, n_seeds, &rm, &rsd, &rlo, &rhi);
        fprintf(f, "%-17s %-10s %5d %8.0f %8.0f %7.4f %7.4f %7.4f-%-7.4f %+6.1f%% %6.1f%% "
                "%5d/%d\n", app, kind_names[kinds[k]], n_seeds, (double)measured[k] / n_seeds,
               (double)low[k] / n_seeds, m, sd, lo, hi, 100 * (rm - 1), 100 * rsd, within,
               n_seeds);
    }
}

static void print_intro(const bench_args *a)
{
    bench_print_header("bench_guided: the released GA against the model-guided and the "
                       "multi-fidelity search");
    printf("population %d, seeds %llu..%llu, %dx%d, %d workers, timed with %d thread%s; GA: %d "
           "generations; guided: %d children measured a generation for %d generations (%s, "
           "the same budget: %d generations of %d), %d bred per child measured, %.0f%% of them "
           "at random", a->population, a->seed, a->seed + (unsigned long long)a->seeds - 1,
           a->width, a->height, a->jobs, a->threads,
           a->threads == 1 ? "" : "s (0: all cores)", a->generations, a->measure,
           guided_generations(a),
           a->guided_generations > 0 ? "as given" : "a fifth of the GA's measurements",
           a->generations,
           a->population - (int)floor(0.3 * a->population), a->pool, 100 * a->explore);
    if (a->low_width > 0)
        printf("; fidelity (the GA's generations) and guided+fid (the guided search's): every "
               "child measured first at %dx%d", a->low_width, a->low_height);
    printf("\n%-17s %-10s %4s %6s %6s %7s %7s %9s %3s %7s %7s %7s %5s %5s %5s\n", "app",
           "search", "seed", "measd", "low", "fewer", "wall s", "load", "fr", "train", "test",
           "vs GA", "x@1", "x@2", "x@4");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_guided [--apps A,B] [--resolution WxH] [--population P] "
                        "[--generations G] [--measure M] [--guided-generations G2] [--pool K] "
                        "[--explore F] [--lookahead L] [--seed S] [--seeds N] [--jobs J] "
                        "[--threads T] [--equal] [--fidelity WxH] [--keep DIR] "
                        "[--reuse-plain DIR]\n");
        return 2;
    }
    char root[PATH_MAX - 128];
    if (a.keep)
        bench_strcpy(root, sizeof root, a.keep);
    else
        snprintf(root, sizeof root, "/tmp/bench_guided-%d", (int)getpid());
    print_intro(&a);
    double t0 = pf_now_ms();
    int rc = 0, n_app = 0, kinds[N_KINDS], n_s = kinds_of(&a, kinds);
    char *save = NULL, summary[8192] = "";
    for (char *app = strtok_r(a.apps, ",", &save); app && rc == 0;
         app = strtok_r(NULL, ",", &save), n_app++) {
        static double area[N_KINDS][MAX_SEEDS];
        long measured[N_KINDS] = { 0 }, low[N_KINDS] = { 0 };
        for (int i = 0; i < a.seeds && rc == 0; i++) {
            search s[N_KINDS];
            memset(s, 0, sizeof s);
            rc = run_app_seed(&a, app, a.seed + (unsigned long long)i, n_app + i, root, s, n_s);
            for (int k = 0; k < n_s; k++)
                for (int j = 0; j < n_s; j++)
                    if (s[j].kind == kinds[k]) {
                        area[k][i] = s[j].test_area;
                        measured[k] += s[j].measured;
                        low[k] += s[j].measured_low;
                    }
        }
        if (rc == 0 && a.seeds > 1) {
            /* the table over the seeds comes last, after every app's rows */
            char *buf = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&buf, &len);
            print_seeds(mem, app, kinds, n_s, a.seeds, area, measured, low);
            fclose(mem);
            strncat(summary, buf, sizeof summary - strlen(summary) - 1);
            free(buf);
        }
    }
    if (rc == 0 && a.seeds > 1)
        printf("\nover %d seeds:\n%-17s %-10s %5s %8s %8s %7s %7s %15s %7s %7s %7s\n%s",
               a.seeds, "app", "search", "seeds", "measd", "low", "area", "sd", "range",
               "vs GA", "sd", "<=+2%", summary);
    printf("measd: training candidates measured at the resolution (a mean over seeds in the "
           "last table), low: at low fidelity; fewer: the GA's count / this one's (measd + "
           "low); fr: "
           "training frontier size; train/test: frontier area (lower is better), test "
           "re-measured in one pool for all searches of an app and seed; vs GA: test area "
           "against the GA's of the same seed (last table: the mean of those ratios, and their "
           "sd); <=+2%%: seeds on which the search's test area was within 2%% of the GA's or "
           "better; x@E: test speedup at Lab <= E\nwhole bench: %.0f s%s%s\n",
           (pf_now_ms() - t0) / 1000, a.keep ? "; runs kept in " : "", a.keep ? a.keep : "");
    pf_error err;
    if (!a.keep && pf_remove_tree(root, &err) != 0)
        fprintf(stderr, "bench_guided: %s\n", err.msg);
    return rc == 0 ? 0 : 1;
}
