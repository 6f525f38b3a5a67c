/* bench_search: what one evaluation of the search costs on this machine, for the two-pass blur
 * on the bundled training photos. Three measurements in one run:
 *  1. a short search through the local pool (as `perfora tune` runs it): evaluations per
 *     second, and the share of the workers' time spent compiling, running (the outputs),
 *     timing (screening and full timing, with the node quiet), measuring error, and waiting
 *     (for the node to stop timing before a build, for the turn to time); how many candidates
 *     the screening sent to full timing and how well their screened time predicted it; and
 *     what the node protocol makes of a node with C cores: building is spread over the
 *     workers, timing is not (docs/search.md, "The node protocol");
 *  2. the GA's own cost: generations proposed per second with free measurements;
 *  3. timing noise: the exact program evaluated as a candidate against itself, in process
 *     (its relative time should be 1; the spread is the noise floor of every ratio).
 * Usage: bench_search [--population N] [--generations G] [--jobs J] [--resolution WxH]
 *                     [--samples S] [--screen-ms MS] [--screen-margin M] [--keep DIR]
 * (--screen-margin 0.99 times every screened candidate in full too: the screening's accuracy) */
#include "base/clock.h"
#include "base/fileio.h"
#include "bench/node_sim.h"
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
    double screen_ms, screen_margin;
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
    if (a->screen_ms >= 0)
        c->screen_ms = a->screen_ms;
    if (a->screen_margin >= 0)
        c->screen_margin = a->screen_margin;
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
    double compile, run, timing, error, build_wait, lock, wall;
    long n, invalid, full, screened;
    double ratio[4096];  /* time / screen_time of the candidates timed in full after screening */
    int n_ratio;
    pf_eval_record *recs;  /* every record, for the projection */
    int n_recs, samples;
    double screen_ms, min_sample_ms;
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
    c->build_wait += r.build_wait_ms;
    c->lock += r.lock_wait_ms;
    c->wall += r.wall_ms;
    c->n++;
    c->invalid += !r.valid;
    if (r.valid && isfinite(r.screen_time)) {
        c->screened++;
        c->full += r.full_timing;
        if (r.full_timing && c->n_ratio < 4096)
            c->ratio[c->n_ratio++] = r.time / r.screen_time;
    }
    c->recs = realloc(c->recs, sizeof *c->recs * (size_t)(c->n_recs + 1));
    c->recs[c->n_recs++] = r;
}

/* The screening's accuracy: time in full / screened time, over the candidates timed in full. */
static void print_screening(costs *c)
{
    if (c->screened == 0)
        return;
    printf("  screening: %ld of %ld screened candidates timed in full (%.0f%%)", c->full,
           c->screened, 100.0 * c->full / c->screened);
    if (c->n_ratio > 0) {
        qsort(c->ratio, (size_t)c->n_ratio, sizeof c->ratio[0], cmp_double);
        int n = c->n_ratio;
        printf("; full / screened time over those: min %.3f, 10%% %.3f, median %.3f, 90%% "
               "%.3f, max %.3f", c->ratio[0], c->ratio[n / 10], c->ratio[n / 2],
               c->ratio[(9 * n) / 10], c->ratio[n - 1]);
    }
    printf("\n");
}

/* A record's timing on a quiet node: per image a probe call, then per sample an exact and a
 * candidate block, each lasting its minimum (screen_ms, min_sample_ms) or one call; the
 * screening's pair first. Calls as long as the least loaded moment of the run says: the exact
 * call the fastest seen on that image (emin), the candidate's that times its relative time
 * (pairs make ratios robust to load, not per-call times). With `all_full`: timed in full
 * without screening. */
static double quiet_timing(const costs *c, const pf_eval_record *r, const double *emin,
                           bool all_full)
{
    double t = 0;
    for (int i = 0; r->valid && i < r->n_images && i < 64; i++) {
        double te = emin[i], tc = r->images[i].rel_time * te;
        int n = r->full_timing ? r->images[i].samples : tc > 4 * te ? 1 : c->samples;
        if (isfinite(r->screen_time) && !all_full)
            t += tc + fmax(c->screen_ms, te) + fmax(c->screen_ms, tc);
        if (r->full_timing || all_full)
            t += tc + n * (fmax(c->min_sample_ms, te) + fmax(c->min_sample_ms, tc));
    }
    return t;
}

/* Building (compile, outputs, error) spreads over the workers of a node; timing runs one
 * candidate at a time. A node of C cores with C workers, simulated under the node protocol
 * (node_sim.h) from this run's evaluations: a build takes its CPU time (its own core; other
 * processes' load does not stretch it), a timing what it takes on a quiet node (quiet_timing;
 * here, the load stretches it). */
static void print_projection(const costs *c)
{
    double emin[64];
    for (int i = 0; i < 64; i++)
        emin[i] = INFINITY;
    for (int k = 0; k < c->n_recs; k++)
        for (int i = 0; c->recs[k].valid && i < c->recs[k].n_images && i < 64; i++)
            emin[i] = fmin(emin[i], c->recs[k].images[i].t_exact_ms);
    sim_job *jobs = calloc((size_t)c->n_recs + 1, sizeof *jobs);
    double build = 0, timing = 0, one_all_full = 0;
    for (int k = 0; k < c->n_recs; k++) {
        const pf_eval_record *r = &c->recs[k];
        int g = r->generation >= 0 ? r->generation : 1 << 20;  /* the test split comes last */
        jobs[k] = (sim_job){ r->build_cpu_ms, quiet_timing(c, r, emin, false), g };
        build += jobs[k].build_ms / c->n_recs;
        timing += jobs[k].timing_ms / c->n_recs;
        one_all_full += r->build_cpu_ms + quiet_timing(c, r, emin, true);
    }
    printf("  a node of C cores under the node protocol, simulated from these %d evaluations "
           "(build %.0f ms of CPU, timing on a quiet node %.0f ms on average):\n", c->n_recs,
           build, timing);
    double one = sim_node(jobs, c->n_recs, 1, true);
    for (int cores = 1; cores <= 64; cores *= 4) {
        double t = sim_node(jobs, c->n_recs, cores, true);
        printf("    %2d cores: %6.2f evaluations/s, %4.1fx one core", cores,
               1000 * c->n_recs / t, one / t);
        if (cores >= 16)
            printf(" (%4.1fx without generation barriers)",
                   one / sim_node(jobs, c->n_recs, cores, false));
        printf("\n");
    }
    printf("    the limit, timing alone: %.1fx; 16 cores against one core that times every "
           "candidate in full (no screening): %.1fx\n", (build + timing) / timing,
           one_all_full / sim_node(jobs, c->n_recs, 16, true));
    free(jobs);
}

static void print_costs(costs *c, double seconds, int jobs)
{
    double other = c->wall - c->compile - c->run - c->timing - c->error - c->build_wait -
                   c->lock;
    printf("search: %ld evaluations (%ld invalid) in %.1f s with %d workers: %.3f evaluations/s\n",
           c->n, c->invalid, seconds, jobs, c->n / seconds);
    printf("  share of the workers' evaluation time (%.1f s): compile %.1f%%, run (outputs) "
           "%.1f%%, error metrics %.1f%%, timing %.1f%%, waiting to build %.1f%%, waiting to "
           "time %.1f%%, other %.1f%%\n", c->wall / 1000, 100 * c->compile / c->wall,
           100 * c->run / c->wall, 100 * c->error / c->wall, 100 * c->timing / c->wall,
           100 * c->build_wait / c->wall, 100 * c->lock / c->wall, 100 * other / c->wall);
    printf("  per evaluation: compile %.0f ms, run %.0f ms, error %.0f ms, timing %.0f ms, wait "
           "to build %.0f ms, wait to time %.0f ms\n", c->compile / c->n, c->run / c->n,
           c->error / c->n, c->timing / c->n, c->build_wait / c->n, c->lock / c->n);
    print_screening(c);
    print_projection(c);
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
    pf_pool_options opt = { .jobs = a->jobs };
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
    static costs c;
    c.screen_ms = cfg.eval.screen_ms;
    c.min_sample_ms = cfg.eval.min_sample_ms;
    c.samples = cfg.eval.samples;
    if (rc == 0 && pf_read_file(log, (size_t)1 << 30, &text, &len, &err) == 0) {
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            add_costs(&c, line);
        free(text);
        print_costs(&c, seconds, opt.jobs ? opt.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN));
        for (int i = 0; i < c.n_recs; i++)
            pf_record_free(&c.recs[i]);
        free(c.recs);
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
    *a = (bench_args){ 12, 4, 0, 5, 0, 0, -1, -1, NULL };
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
        else if (strcmp(k, "--screen-ms") == 0)
            a->screen_ms = atof(v);
        else if (strcmp(k, "--screen-margin") == 0)
            a->screen_margin = atof(v);
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
                "[--resolution WxH] [--samples S] [--screen-ms MS] [--screen-margin M] "
                "[--keep DIR]\n");
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
