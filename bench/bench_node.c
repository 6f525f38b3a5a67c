/* bench_node: is a candidate's time measured in a busy node the time it has alone? The node
 * protocol (search/node.h) promises that a candidate is timed with the node quiet. Measured in
 * one run, blur on the bundled training photos, full timing (no screening):
 *   alone: a pool of one worker, candidates sent one at a time (nothing else of ours runs);
 *   busy:  a pool of J workers fed a stream of other candidates (random genomes of the
 *          search's initial population) with the targets among them, so that other workers
 *          compile, run outputs and score error around every target.
 * Targets: the exact program (its default schedule runs on every core) and a serial
 * execution-only schedule (one core): if the busy node's other workers took cores while a
 * target was timed, the exact program would be slowed and the serial one would look faster
 * than it is alone. Prints per target the median relative time alone and busy, and their
 * ratio (ideal 1).
 * Usage: bench_node [--jobs J] [--reps K] [--resolution WxH] [--samples S] */
#include "cluster/pool.h"
#include "dataset/manifest.h"
#include "search/evaluate.h"
#include "search/ga.h"
#include "search/genome.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXACT "# perfora schedule 1\n"
#define SERIAL EXACT "loop_temp exec root vectorize 16\nloop_output exec root\n"

typedef struct bench_args {
    int jobs, reps, samples, width, height;
} bench_args;

static void config(const bench_args *a, pf_eval_config *c)
{
    pf_eval_config_default(c);
    c->program = strdup(PF_SOURCE_DIR "/apps/blur.pf");
    c->dataset = strdup(PF_SOURCE_DIR "/data/images");
    c->width = a->width;
    c->height = a->height;
    c->samples = a->samples;
    c->screen_ms = 0;  /* every candidate timed in full, alone and busy alike */
    char lock[] = "/tmp/bench_node-XXXXXX";
    int fd = mkstemp(lock);
    if (fd >= 0)
        close(fd);
    c->lock_path = strdup(lock);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* `fillers` distinct genomes of the search's initial population (execution genes included). */
static char **random_genomes(const pf_eval_config *c, int n)
{
    pf_error err;
    pf_program *p = pf_load_program(c->program, &err);
    if (!p)
        return NULL;
    pf_genome_params gp = pf_genome_params_default();
    gp.exec_rate = 0.5;
    pf_genome_ctx ctx;
    pf_genome_ctx_init(&ctx, p, &gp);
    pf_rng rng;
    pf_rng_seed(&rng, 7);
    char **texts = calloc((size_t)n, sizeof *texts);
    for (int i = 0; i < n; i++) {
        pf_schedule s;
        pf_genome_initial(&ctx, &rng, &s);
        texts[i] = pf_schedule_text(p, &s);
        pf_schedule_free(&s);
    }
    pf_genome_ctx_free(&ctx);
    pf_program_free(p);
    return texts;
}

/* Sends texts[0..n) (ids = index) and stores each record's time by id. */
static int run_all(pf_evaluator *ev, char **texts, int n, bool one_at_a_time, double *time)
{
    pf_error err;
    int sent = 0, got = 0;
    while (got < n) {
        while (sent < n && (!one_at_a_time || sent == got))
            if (pf_evaluator_submit(ev, sent, PF_SET_TRAIN, texts[sent], &err) == 0)
                sent++;
            else
                return -1;
        pf_eval_record r;
        if (pf_evaluator_wait(ev, &r, &err) != 1) {
            fprintf(stderr, "bench_node: %s\n", err.msg);
            return -1;
        }
        if (!r.valid)
            fprintf(stderr, "bench_node: candidate %ld invalid: %s\n", r.id, r.reason);
        time[r.id] = r.time;
        pf_record_free(&r);
        got++;
    }
    return 0;
}

static int measure(const bench_args *a)
{
    pf_eval_config c;
    config(a, &c);
    int k = a->reps, n = 4 * k;  /* per rep: exact, filler, serial, filler */
    char **fill = random_genomes(&c, 2 * k);
    char **texts = calloc((size_t)n, sizeof *texts);
    double *busy = calloc((size_t)n, sizeof *busy), *alone = calloc((size_t)2 * k, sizeof *alone);
    for (int i = 0; i < k && fill; i++) {
        texts[4 * i] = EXACT;
        texts[4 * i + 1] = fill[2 * i];
        texts[4 * i + 2] = SERIAL;
        texts[4 * i + 3] = fill[2 * i + 1];
    }
    char **targets = calloc((size_t)2 * k, sizeof *targets);
    for (int i = 0; i < k; i++) {
        targets[2 * i] = EXACT;
        targets[2 * i + 1] = SERIAL;
    }
    pf_error err;
    pf_pool_options one = { .jobs = 1 }, many = { .jobs = a->jobs };
    pf_evaluator *ev = fill ? pf_pool_new(&c, &one, &err) : NULL;
    int rc = ev ? run_all(ev, targets, 2 * k, true, alone) : -1;
    pf_evaluator_destroy(ev);
    ev = rc == 0 ? pf_pool_new(&c, &many, &err) : NULL;
    rc = ev ? run_all(ev, texts, n, false, busy) : -1;
    pf_evaluator_destroy(ev);
    if (rc != 0) {
        fprintf(stderr, "bench_node: failed\n");
        return -1;
    }
    const char *names[2] = { "exact program (default schedule, all cores)",
                             "serial exec-only schedule (one core)" };
    for (int t = 0; t < 2; t++) {
        double al[64], bu[64];
        for (int i = 0; i < k && i < 64; i++) {
            al[i] = alone[2 * i + t];
            bu[i] = busy[4 * i + 2 * t];
        }
        double ma = median(al, k), mb = median(bu, k);
        printf("  %-45s alone %.3f  busy (%d workers) %.3f  busy/alone %.3f\n", names[t], ma,
               a->jobs, mb, mb / ma);
    }
    unlink(c.lock_path);
    for (int i = 0; fill && i < 2 * k; i++)
        free(fill[i]);
    free(fill);
    free(texts);
    free(targets);
    free(busy);
    free(alone);
    pf_eval_config_free(&c);
    return 0;
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){ 2, 7, 5, 256, 192 };
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--jobs") == 0)
            a->jobs = atoi(v);
        else if (strcmp(k, "--reps") == 0)
            a->reps = atoi(v);
        else if (strcmp(k, "--samples") == 0)
            a->samples = atoi(v);
        else if (strcmp(k, "--resolution") != 0 ||
                 pf_resolution_parse(v, &a->width, &a->height) != 0)
            return -1;
    }
    return a->jobs >= 1 && a->reps >= 1 && a->reps <= 64 && a->samples >= 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_node [--jobs J] [--reps K<=64] [--resolution WxH] "
                "[--samples S]\n");
        return 2;
    }
    printf("bench_node: blur %dx%d, %d samples per image, %d reps; relative time (candidate / "
           "exact default) measured alone and in a busy node:\n", a.width, a.height, a.samples,
           a.reps);
    return measure(&a) == 0 ? 0 : 1;
}
