/* bench_search: what one evaluation of the search costs on this machine, for the two-pass blur
 * on the bundled training photos. Three measurements in one run:
 *  1. a short search through the local pool (as `perfora tune` runs it): evaluations per
 *     second, and the share of the workers' time spent compiling, running (the outputs),
 *     timing (interleaved calls), measuring error, and waiting for the timing lock;
 *  2. the GA's own cost: generations proposed per second with free measurements;
 *  3. timing noise: the exact program evaluated as a candidate against itself, in process
 *     (its relative time should be 1; the spread is the noise floor of every ratio).
 * Usage: bench_search [--population N] [--generations G] [--jobs J] [--resolution WxH]
 *                     [--samples S] [--keep DIR] */
#include "base/clock.h"
#include "base/fileio.h"
#include "cluster/pool.h"
#include "dataset/manifest.h"
#include "results/tune.h"
#include "search/evaluate.h"
#include "search/ga.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bench_args {
    int population, generations, jobs, samples, width, height;
    const char *keep;
} bench_args;

static void base_config(const bench_args *a, pf_eval_config *c)
{
    pf_eval_config_default(c);
    c->program = strdup(PF_SOURCE_DIR "/apps/blur.pf");
    c->dataset = strdup(PF_SOURCE_DIR "/data/images");
    c->width = a->width;
    c->height = a->height;
    c->samples = a->samples;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* 3. The exact program against itself. */
static int noise(const bench_args *a)
{
    pf_eval_config c;
    base_config(a, &c);
    pf_error err;
    pf_eval_worker *w = pf_eval_worker_new(&c, 0, &err);
    if (!w || pf_eval_worker_prepare(w, PF_SET_TRAIN, &err) != 0) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return -1;
    }
    enum { N = 7 };
    double rel[N];
    for (int i = 0; i < N; i++) {
        pf_eval_record r;
        pf_eval_worker_evaluate(w, i, PF_SET_TRAIN, "# perfora schedule 1\n", &r);
        rel[i] = r.time;
        if (i == 0)
            for (int k = 0; k < r.n_images; k++)
                printf("  image %d: exact %.3f ms/call, %d calls per sample\n", k,
                       r.images[k].t_exact_ms, r.images[k].runs);
        pf_record_free(&r);
    }
    qsort(rel, N, sizeof rel[0], cmp_double);
    printf("noise: exact vs exact relative time over %d evaluations: median %.3f, min %.3f, "
           "max %.3f (ideal 1)\n", N, rel[N / 2], rel[0], rel[N - 1]);
    pf_eval_worker_free(w);
    pf_eval_config_free(&c);
    return 0;
}

typedef struct costs {
    double compile, run, timing, error, lock, wall;
    long n, invalid;
} costs;

static void add_costs(costs *c, const char *line)
{
    pf_eval_record r;
    if (pf_record_from_json(line, &r, NULL) != 0)
        return;
    c->compile += r.compile_ms;
    c->run += r.run_ms;
    c->timing += r.timing_ms;
    c->error += r.error_ms;
    c->lock += r.lock_wait_ms;
    c->wall += r.wall_ms;
    c->n++;
    c->invalid += !r.valid;
    pf_record_free(&r);
}

static void print_costs(const costs *c, double seconds, int jobs)
{
    double other = c->wall - c->compile - c->run - c->timing - c->error - c->lock;
    printf("search: %ld evaluations (%ld invalid) in %.1f s with %d workers: %.3f evaluations/s\n",
           c->n, c->invalid, seconds, jobs, c->n / seconds);
    printf("  share of the workers' evaluation time (%.1f s): compile %.1f%%, run (outputs) "
           "%.1f%%, timing %.1f%%, error metrics %.1f%%, waiting for the timing lock %.1f%%, "
           "other %.1f%%\n", c->wall / 1000, 100 * c->compile / c->wall, 100 * c->run / c->wall,
           100 * c->timing / c->wall, 100 * c->error / c->wall, 100 * c->lock / c->wall,
           100 * other / c->wall);
    printf("  per evaluation: compile %.0f ms, run %.0f ms, timing %.0f ms, error %.0f ms, lock "
           "wait %.0f ms\n", c->compile / c->n, c->run / c->n, c->timing / c->n, c->error / c->n,
           c->lock / c->n);
}

/* 1. A short search through the pool. */
static int search(const bench_args *a)
{
    char tmpl[] = "/tmp/bench_search-XXXXXX";
    const char *dir = a->keep;
    if (!dir && !(dir = mkdtemp(tmpl)))
        return -1;
    char *run = pf_path_join(dir, "run");
    pf_tune_config cfg;
    pf_tune_config_default(&cfg);
    pf_eval_config_free(&cfg.eval);
    base_config(a, &cfg.eval);
    cfg.ga.population = a->population;
    cfg.ga.generations = a->generations;
    cfg.test = false;
    cfg.source = strdup("apps/blur.pf");
    pf_error err;
    pf_tune *t = pf_tune_create(run, &cfg, &err);
    pf_pool_options opt = { a->jobs, 0 };
    pf_evaluator *ev = t ? pf_pool_new(&pf_tune_config_of(t)->eval, &opt, &err) : NULL;
    double t0 = pf_now_ms();
    int rc = ev ? pf_tune_run(t, ev, NULL, &err) : -1;
    double seconds = (pf_now_ms() - t0) / 1e3;
    if (rc != 0)
        fprintf(stderr, "bench_search: %s\n", err.msg);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    char *log = pf_path_join(run, "evaluations.jsonl"), *text;
    size_t len;
    costs c = { 0 };
    if (rc == 0 && pf_read_file(log, (size_t)1 << 30, &text, &len, &err) == 0) {
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            add_costs(&c, line);
        free(text);
        print_costs(&c, seconds, opt.jobs ? opt.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN));
    }
    if (!a->keep) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_search: could not remove %s\n", dir);
    }
    free(log);
    free(run);
    pf_tune_config_free(&cfg);
    return rc;
}

/* 2. The GA alone: propose and commit generations with free (hash) measurements. */
static void ga_cost(void)
{
    pf_error err;
    pf_program *p = pf_load_program(PF_SOURCE_DIR "/apps/demosaic.pf", &err);
    if (!p)
        return;
    pf_ga_params gp = pf_ga_params_default();
    pf_ga ga;
    pf_ga_init(&ga, p, &gp);
    double t0 = pf_now_ms();
    int gens = 50;
    for (int g = 0; g < gens; g++) {
        pf_ga_propose(&ga);
        for (int i = 0; i < ga.n_next; i++)
            if (!ga.next[i].measured)
                pf_ga_measured(&ga, i, (double)(i % 17) / 17, (double)(i % 13));
        pf_ga_commit(&ga);
    }
    double s = (pf_now_ms() - t0) / 1e3;
    printf("ga: %d generations of %d (demosaic, 13 loops) in %.3f s: %.2f ms per generation, "
           "negligible next to one evaluation\n", gens, gp.population, s, 1000 * s / gens);
    pf_ga_free(&ga);
    pf_program_free(p);
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){ 12, 4, 0, 5, 0, 0, NULL };
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--population") == 0)
            a->population = atoi(v);
        else if (strcmp(k, "--generations") == 0)
            a->generations = atoi(v);
        else if (strcmp(k, "--jobs") == 0)
            a->jobs = atoi(v);
        else if (strcmp(k, "--samples") == 0)
            a->samples = atoi(v);
        else if (strcmp(k, "--keep") == 0)
            a->keep = v;
        else if (strcmp(k, "--resolution") != 0 ||
                 pf_resolution_parse(v, &a->width, &a->height) != 0)
            return -1;
    }
    return a->population >= 2 && a->generations >= 1 && a->samples >= 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_search [--population N] [--generations G] [--jobs J] "
                "[--resolution WxH] [--samples S] [--keep DIR]\n");
        return 2;
    }
    printf("bench_search: apps/blur.pf on the bundled training photos%s\n",
           a.width ? " (one resolution)" : " (3 at 256x192, 3 at 820x614)");
    ga_cost();
    fflush(stdout);
    /* The pool first: its workers are forks, and must not inherit this process's generated-code
     * thread pool, which the in-process noise check may start. */
    if (search(&a) != 0)
        return 1;
    return noise(&a) == 0 ? 0 : 1;
}
