/* bench_guided: the released GA against the model-guided search (docs/search.md §10), per
 * app, with the same seed and population P: the plain GA for G generations, the guided search
 * measuring M children a generation (2) for as many generations as a fifth of the GA's
 * measurements allow, and with --equal also the guided search measuring as many candidates as
 * the GA (the GA's new children a generation, G generations). Runs alternate their
 * order from app to app, so that a drift of the machine's load does not favour one. Each
 * search's training frontier is then re-measured on the test split, all of them in one pool
 * with their variants interleaved (the same conditions for every search), and the table gives
 * per search: candidates measured, wall time, the load average, the test-frontier area (mean
 * relative time over error budgets 0..10, lower is better) and test speedups at Lab <= 1, 2, 4.
 * Candidates are timed with one thread by default (--threads 1): on a machine shared with other
 * work, a parallel schedule loses time to the other processes that a serial one does not, and
 * the GA then finds execution-only "speedups" that the load makes (docs/search.md §10);
 * one thread compares the two searches on a landscape the load scales evenly.
 * Usage: bench_guided [--apps A,B,...] [--resolution WxH] [--population P] [--generations G]
 *                     [--measure M] [--guided-generations G2] [--pool K] [--explore F]
 *                     [--seed S] [--jobs J] [--threads T] [--equal] [--keep DIR] */
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
    int width, height, population, generations, measure, pool, jobs, threads;
    int guided_generations;  /* of the guided search measuring M a generation (0: as many
                                as a fifth of the GA's measurements allow) */
    double explore;
    unsigned long long seed;
    bool equal;
    const char *keep;
} bench_args;

enum { PLAIN, GUIDED, EQUAL, N_KINDS };
static const char *const kind_names[N_KINDS] = { "plain GA", "guided", "guided, =" };

typedef struct search {
    int kind;
    char dir[PATH_MAX + 128];
    long measured;          /* training candidates measured */
    double wall_s, load0, load1;
    char **front;           /* the training frontier's schedule texts */
    int n_front;
    double train_area;
    double test_area, speedup[3];
} search;

static const double budgets[3] = { 1, 2, 4 };

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){ "blur,bilateral_filter,unsharp_mask", 256, 192, 30, 20, 2, 20, 2, 1, 0,
                       0.25, 5, false, NULL };
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
        else if (strcmp(s, "--keep") == 0)
            a->keep = v;
        else
            return -1;
    }
    return a->population >= 2 && a->generations >= 1 && a->measure >= 1 ? 0 : -1;
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

static void app_config(const bench_args *a, const char *app, int kind, pf_tune_config *c)
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
    c->ga.generations = kind == GUIDED ? guided_generations(a) : a->generations;
    c->ga.seed = a->seed;
    c->eval.threads = a->threads;
    c->test = false;  /* re-measured here, every search in the same pool */
    c->model.on = kind != PLAIN;
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

static int run_search(const bench_args *a, const char *app, const char *root, search *s)
{
    pf_tune_config cfg;
    app_config(a, app, s->kind, &cfg);
    snprintf(s->dir, sizeof s->dir, "%s/%s-%s", root, app,
             s->kind == PLAIN ? "plain" : s->kind == GUIDED ? "guided" : "equal");
    pf_error err;
    s->load0 = bench_loadavg();
    double t0 = pf_now_ms();
    pf_tune *t = pf_tune_create(s->dir, &cfg, &err);
    pf_pool_options opt = { .jobs = a->jobs };
    pf_evaluator *ev = t ? pf_pool_new(&pf_tune_config_of(t)->eval, &opt, &err) : NULL;
    int rc = ev ? pf_tune_run(t, ev, NULL, &err) : -1;
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    pf_tune_config_free(&cfg);
    s->wall_s = (pf_now_ms() - t0) / 1000;
    s->load1 = bench_loadavg();
    if (rc != 0) {
        fprintf(stderr, "bench_guided: %s: %s\n", s->dir, err.msg);
        return -1;
    }
    int n, *front;
    pf_eval_record *recs = read_records(s->dir, &n);
    for (int i = 0; i < n; i++)
        s->measured += recs[i].set == PF_SET_TRAIN && recs[i].generation >= 0;
    s->n_front = pf_tune_front_of(recs, n, INT_MAX, &front);
    s->train_area = area_of(recs, front, s->n_front, NULL);
    s->front = pf_xcalloc((size_t)s->n_front + 1, sizeof *s->front);
    for (int i = 0; i < s->n_front; i++)
        s->front[i] = pf_xstrdup(recs[front[i]].schedule);
    free(front);
    for (int i = 0; i < n; i++)
        pf_record_free(&recs[i]);
    free(recs);
    fprintf(stderr, "bench_guided: %s %s: %ld measured, %.0f s, training area %.4f\n", app,
            kind_names[s->kind], s->measured, s->wall_s, s->train_area);
    return 0;
}

/* Every frontier variant of every search on the test split, in one pool, interleaved. */
static int measure_test(const bench_args *a, const char *app, search *s, int n_s)
{
    pf_tune_config cfg;
    app_config(a, app, PLAIN, &cfg);
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
    printf("%-17s %-10s %6ld %6.2fx %7.0f %4.1f-%-4.1f %3d %7.4f %7.4f %+6.1f%% %5.2f %5.2f "
           "%5.2f\n",
           app, kind_names[s->kind], s->measured, (double)plain->measured / s->measured,
           s->wall_s, s->load0, s->load1, s->n_front, s->train_area, s->test_area,
           100 * (s->test_area / plain->test_area - 1), s->speedup[0], s->speedup[1],
           s->speedup[2]);
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_guided [--apps A,B] [--resolution WxH] [--population P] "
                        "[--generations G] [--measure M] [--guided-generations G2] [--pool K] "
                        "[--explore F] [--seed S] [--jobs J] [--threads T] [--equal] "
                        "[--keep DIR]\n");
        return 2;
    }
    char root[PATH_MAX - 128];
    if (a.keep)
        bench_strcpy(root, sizeof root, a.keep);
    else
        snprintf(root, sizeof root, "/tmp/bench_guided-%d", (int)getpid());
    bench_print_header("bench_guided: the released GA against the model-guided search");
    printf("population %d, seed %llu, %dx%d, %d workers, timed with %d thread%s; GA: %d "
           "generations; guided: %d children measured a generation for %d generations (%s, "
           "the same budget: %d generations of %d), %d bred per child measured, %.0f%% of them "
           "at random\n", a.population, a.seed, a.width, a.height, a.jobs, a.threads,
           a.threads == 1 ? "" : "s (0: all cores)", a.generations, a.measure,
           guided_generations(&a), "a fifth of the GA's measurements", a.generations,
           a.population - (int)floor(0.3 * a.population), a.pool, 100 * a.explore);
    fflush(stdout);
    double t0 = pf_now_ms();
    int rc = 0, n_app = 0;
    printf("%-17s %-10s %6s %7s %7s %9s %3s %7s %7s %7s %5s %5s %5s\n", "app", "search",
           "measd", "fewer", "wall s", "load", "fr", "train", "test", "vs GA", "x@1", "x@2",
           "x@4");
    char *save = NULL;
    for (char *app = strtok_r(a.apps, ",", &save); app;
         app = strtok_r(NULL, ",", &save), n_app++) {
        search s[N_KINDS];
        memset(s, 0, sizeof s);
        int n_s = a.equal ? 3 : 2;
        for (int k = 0; k < n_s; k++)  /* alternate the order from app to app */
            s[k].kind = n_app % 2 == 0 ? k : (n_s - 1 - k);
        for (int k = 0; k < n_s && rc == 0; k++)
            rc = run_search(&a, app, root, &s[k]);
        if (rc == 0)
            rc = measure_test(&a, app, s, n_s);
        const search *plain = NULL;
        for (int k = 0; k < n_s; k++)
            if (s[k].kind == PLAIN)
                plain = &s[k];
        for (int kind = 0; kind < n_s && rc == 0; kind++)
            for (int k = 0; k < n_s; k++)
                if (s[k].kind == kind)
                    print_row(app, &s[k], plain);
        fflush(stdout);
        for (int k = 0; k < n_s; k++) {
            for (int i = 0; i < s[k].n_front; i++)
                free(s[k].front[i]);
            free(s[k].front);
        }
    }
    printf("measd: training candidates measured; fewer: the GA's count / this one's; fr: "
           "training frontier size; train/test: frontier area (lower is better), test "
           "re-measured in one pool for all searches; vs GA: test area against the GA's; x@E: "
           "test speedup at Lab <= E\nwhole bench: %.0f s%s%s\n", (pf_now_ms() - t0) / 1000,
           a.keep ? "; runs kept in " : "", a.keep ? a.keep : "");
    pf_error err;
    if (!a.keep && pf_remove_tree(root, &err) != 0)
        fprintf(stderr, "bench_guided: %s\n", err.msg);
    return rc == 0 ? 0 : 1;
}
