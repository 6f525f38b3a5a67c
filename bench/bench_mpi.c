/* bench_mpi: the capacity of rank 0 in the search over MPI (cluster/mpi.h), run under mpirun
 * with PF_MPI_TEST_HOOK=instant (every worker answers at once with a made-up record), so that
 * everything measured is rank 0's work and the messages (bench/bench_mpi.sh runs it at
 * several N). Two measurements in one run:
 *   dispatch: 20000 candidates submitted at once, collected as they come back;
 *   search:   a whole search (GA, cache, evaluations.jsonl, checkpoints) of population 1000.
 * Each prints candidates per second and rank 0's CPU time per candidate (getrusage), whose
 * inverse is the ceiling rank 0 could reach with enough idle cores and workers.
 * Usage: mpirun -np N -x PF_MPI_TEST_HOOK=instant bench_mpi [--candidates M] */
#include "cluster/mpi.h"
#include "results/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static void report(const char *what, int ranks, long n, double wall, double cpu)
{
    printf("%-9s N=%-3d %6ld candidates in %6.2f s: %8.0f candidates/s; rank 0 CPU %6.1f us "
           "per candidate (ceiling %.0f/s)\n", what, ranks, n, wall, n / wall, 1e6 * cpu / n,
           n / cpu);
}

static int dispatch(pf_evaluator *ev, int ranks, long m)
{
    pf_error err;
    char text[64];
    double w0 = now_s(), c0 = cpu_s();
    for (long i = 0; i < m; i++) {
        snprintf(text, sizeof text, "# perfora schedule 1\n# candidate %ld\n", i);
        if (pf_evaluator_submit(ev, i, PF_SET_TRAIN, text, &err) != 0)
            return -1;
    }
    for (long i = 0; i < m; i++) {
        pf_eval_record r;
        if (pf_evaluator_wait(ev, &r, &err) != 1) {
            fprintf(stderr, "bench_mpi: %s\n", err.msg);
            return -1;
        }
        pf_record_free(&r);
    }
    report("dispatch", ranks, m, now_s() - w0, cpu_s() - c0);
    return 0;
}

static int search(pf_tune *t, pf_evaluator *ev, int ranks)
{
    pf_error err;
    double w0 = now_s(), c0 = cpu_s();
    if (pf_tune_run(t, ev, NULL, &err) < 0) {
        fprintf(stderr, "bench_mpi: %s\n", err.msg);
        return -1;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/evaluations.jsonl", pf_tune_dir(t));
    FILE *f = fopen(path, "r");
    long n = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        n += ch == '\n';
    if (f)
        fclose(f);
    report("search", ranks, n, now_s() - w0, cpu_s() - c0);
    return 0;
}

static pf_tune *new_run(char *dir, pf_error *err)
{
    if (!mkdtemp(dir))
        return NULL;
    strcat(dir, "/run");
    pf_tune_config cfg;
    pf_tune_config_default(&cfg);
    cfg.eval.program = strdup(PF_SOURCE_DIR "/apps/blur.pf");
    cfg.eval.dataset = strdup(PF_SOURCE_DIR "/data/images");
    cfg.ga.population = 1000;
    cfg.ga.generations = 5;
    cfg.test = false;
    cfg.source = strdup("apps/blur.pf");
    pf_tune *t = pf_tune_create(dir, &cfg, err);
    pf_tune_config_free(&cfg);
    return t;
}

int main(int argc, char **argv)
{
    long m = argc == 3 && strcmp(argv[1], "--candidates") == 0 ? atol(argv[2]) : 20000;
    pf_error err;
    pf_mpi *mpi = pf_mpi_start(&err);
    if (!mpi) {
        fprintf(stderr, "bench_mpi: %s\n", err.msg);
        return 1;
    }
    if (pf_mpi_rank(mpi) != 0) {
        pf_mpi_worker_run(mpi, &err);
        pf_mpi_end(mpi, false);
        return 0;
    }
    char dir[1100] = "/tmp/bench_mpi-XXXXXX";
    pf_tune *t = new_run(dir, &err);
    pf_mpi_options opt = { .deadline_s = 60 };
    pf_evaluator *ev = t ? pf_mpi_master_new(mpi, &pf_tune_config_of(t)->eval, dir, &opt, &err)
                         : NULL;
    if (!ev) {
        fprintf(stderr, "bench_mpi: %s\n", err.msg);
        pf_mpi_abort(mpi, 1);
    }
    int rc = dispatch(ev, pf_mpi_size(mpi), m);
    if (rc == 0)
        rc = search(t, ev, pf_mpi_size(mpi));
    int lost = pf_mpi_master_close(ev);
    pf_tune_free(t);
    char cmd[1200];
    *strrchr(dir, '/') = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_mpi: could not remove %s\n", dir);
    pf_mpi_end(mpi, lost > 0);
    return rc ? 1 : 0;
}
