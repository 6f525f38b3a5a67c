/* bench_worker: one evaluation worker building and running many candidates in a row, as a pool
 * or MPI worker does for a whole search: its resident memory after the first 100 candidates and
 * at the end (a worker must stay flat: growth <= 10% after the first 100), and candidates per
 * second. Candidates are random genomes of the search's own generator (fixed seed); each is
 * parsed, planned, compiled (on one thread, under a timing lock, as `perfora tune` workers
 * compile), run on one photo, timed with one sample and measured.
 * Usage: bench_worker [--candidates N] [--app NAME] [--resolution WxH] [--seed S] [--split]
 * (--split: no timing lock, so compiles split over threads as in an in-process evaluator)
 * Exit status 1 when the growth after the first 100 candidates is above 10%. */
#include "base/clock.h"
#include "base/strbuf.h"
#include "dataset/manifest.h"
#include "search/evaluate.h"
#include "search/genome.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct args {
    int candidates, width, height;
    bool split;  /* no timing lock: compiles split over threads (an in-process evaluator) */
    unsigned long long seed;
    const char *app;
} args;

/* Resident memory now (not the peak), MiB. */
static double rss_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "%ld %ld", &pages, &resident);
    fclose(f);
    return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0) : -1;
}

static int parse(int argc, char **argv, args *a)
{
    *a = (args){ 2000, 256, 192, false, 21, "blur" };
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(k, "--split") == 0) {
            a->split = true;
            continue;
        }
        i++;
        if (strcmp(k, "--candidates") == 0)
            a->candidates = atoi(v);
        else if (strcmp(k, "--app") == 0)
            a->app = v;
        else if (strcmp(k, "--seed") == 0)
            a->seed = strtoull(v, NULL, 10);
        else if (strcmp(k, "--resolution") != 0 ||
                 pf_resolution_parse(v, &a->width, &a->height) != 0)
            return -1;
    }
    return a->candidates >= 1 ? 0 : -1;
}

/* The next candidate's text: an initial genome with 0 to 3 mutations. */
static char *next_text(const pf_genome_ctx *gc, pf_rng *r)
{
    pf_schedule s;
    pf_genome_initial(gc, r, &s);
    for (int m = pf_rng_below(r, 4); m > 0; m--)
        pf_genome_mutate(gc, r, &s);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(gc->prog, &s, &sb);
    pf_schedule_free(&s);
    return pf_sb_take(&sb);
}

static int run(const args *a, pf_eval_worker *w, const pf_program *prog)
{
    pf_genome_params gp = pf_genome_params_default();
    gp.exec_rate = 0.5;
    pf_genome_ctx gc;
    pf_genome_ctx_init(&gc, prog, &gp);
    pf_rng r;
    pf_rng_seed(&r, a->seed);
    double t0 = pf_now_ms(), rss100 = -1, rss_max = 0;
    long invalid = 0;
    for (int i = 1; i <= a->candidates; i++) {
        char *text = next_text(&gc, &r);
        pf_eval_record rec;
        pf_eval_worker_evaluate(w, i, PF_SET_TRAIN, text, &rec);
        invalid += !rec.valid;
        pf_record_free(&rec);
        free(text);
        double m = rss_mib();
        rss_max = m > rss_max ? m : rss_max;
        if (i == 100)
            rss100 = m;
        if (i == 1 || i % 100 == 0 || i == a->candidates) {
            struct mallinfo2 mi = mallinfo2();
            printf("  after %5d candidates: resident %.1f MiB (highest so far %.1f; malloc: %.1f "
                   "MiB in use, %.1f free), %.2f candidates/s\n", i, m, rss_max,
                   (double)mi.uordblks / 1048576.0, (double)mi.fordblks / 1048576.0,
                   1e3 * i / (pf_now_ms() - t0));
            fflush(stdout);
        }
    }
    pf_genome_ctx_free(&gc);
    double end = rss_mib();
    double s = (pf_now_ms() - t0) / 1e3;
    printf("bench_worker: %d candidates (%ld invalid) in %.1f s: %.2f candidates/s\n",
           a->candidates, invalid, s, a->candidates / s);
    if (rss100 <= 0)
        return 0;
    double growth = 100.0 * (end - rss100) / rss100;
    printf("bench_worker: resident memory after the first 100 candidates %.1f MiB, at the end "
           "%.1f MiB: growth %+.1f%% (limit +10%%)\n", rss100, end, growth);
    return growth <= 10.0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    args a;
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: bench_worker [--candidates N] [--app NAME] [--resolution WxH] "
                "[--seed S] [--split]\n");
        return 2;
    }
    pf_eval_config c;
    pf_eval_config_default(&c);
    char path[512];
    snprintf(path, sizeof path, "%s/apps/%s.pf", PF_SOURCE_DIR, a.app);
    c.program = strdup(path);
    c.dataset = strdup(PF_SOURCE_DIR "/data/images");
    c.width = a.width;
    c.height = a.height;
    c.max_images = 1;
    c.samples = 1;
    c.min_sample_ms = 1e-6;  /* one call per sample: the same work in every run */
    c.extra_metrics = false;
    /* a timing lock, as every `perfora tune` worker has: its compiles run on one thread */
    char lock[] = "/tmp/bench_worker-lock-XXXXXX";
    int fd = a.split ? -1 : mkstemp(lock);
    if (fd >= 0)
        close(fd);
    c.lock_path = fd >= 0 ? strdup(lock) : NULL;
    pf_error err;
    pf_eval_worker *w = pf_eval_worker_new(&c, 0, &err);
    pf_program *prog = w ? pf_load_program(path, &err) : NULL;
    if (!w || !prog || pf_eval_worker_prepare(w, PF_SET_TRAIN, &err) != 0) {
        fprintf(stderr, "bench_worker: %s\n", err.msg);
        return 1;
    }
    printf("bench_worker: apps/%s.pf on one %dx%d training photo, %d candidates, seed %llu\n",
           a.app, a.width, a.height, a.candidates, a.seed);
    int rc = run(&a, w, prog);
    pf_program_free(prog);
    pf_eval_worker_free(w);
    pf_eval_config_free(&c);
    if (fd >= 0)
        unlink(lock);
    return rc;
}
