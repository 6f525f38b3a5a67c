/* perfora tune: the genetic search of a pipeline's variants on a benchmark, in a run
 * directory that a kill -9 leaves resumable (results/tune.h; docs/search.md). Wiring only:
 * options, the local process pool or, under mpirun, the MPI ranks (cluster/mpi.h), the
 * progress line, the stop signals. */
#include "cli/cli.h"
#include "cluster/mpi.h"
#include "cluster/pool.h"
#include "dataset/manifest.h"
#include "results/tune.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char tune_usage[] =
    "usage: perfora tune FILE.pf --out RUN [options]\n"
    "       perfora tune --resume RUN [--jobs J] [--generations G]\n"
    "       mpirun -np N perfora tune ...   (rank 0 searches, the other ranks evaluate)\n"
    "  --out RUN             the run directory (created; see docs/search.md)\n"
    "  --resume RUN          continue a run after a crash or kill (loses at most the\n"
    "                        generation in flight)\n"
    "  --dataset DIR         the images (a manifest or its directory; default: $PERFORA_DATASET,\n"
    "                        else the bundled data/images beside the pipeline, in the working\n"
    "                        directory or the installation)\n"
    "  --resolution WxH      only images of this size (e.g. 256x192; default: all)\n"
    "  --max-images N        at most N images per split\n"
    "  --population N        individuals per generation (100)\n"
    "  --generations G       generations, the initial one included (200)\n"
    "  --seed S              random seed (1): the same seed replays the same search up to\n"
    "                        timing noise\n"
    "  --jobs J              worker processes (default: the number of cores; under mpirun\n"
    "                        every rank but 0 is one worker)\n"
    "  --mode M              full (image perforation), grid (grid sampling only) or loop\n"
    "                        (loop perforation only: the paper's baseline)\n"
    "  --max-error E         error cap of the quality numbers, Lab units (10)\n"
    "  --tournament K        tournament size (2)\n"
    "  --elite F, --mutants F  fractions kept / mutated (0.3, 0.3)\n"
    "  --hints 0|1           the released reconstruction hints (1)\n"
    "  --seeds 0|1           structured seeds in the first generation (1; docs/search.md)\n"
    "  --exec-rate P         probability that a mutation draws an execution gene (0.25);\n"
    "                        --no-exec sets 0 (default execution schedules only)\n"
    "  --p-modify P          probability that a mutation redraws one parameter (0.3)\n"
    "  --p-accept-for P      probability that `add` accepts a for loop (0.2)\n"
    "  --backend B           jit (default), c or cuda\n"
    "  --target cuda         the GPU (--backend cuda): perforation with GPU execution genes\n"
    "                        (tiles and threads of blocks, producers in shared memory), timed\n"
    "                        by CUDA events against the exact program on the same GPU\n"
    "                        (docs/gpu.md)\n"
    "  --strict-float        CUDA: round every product before its add, as the interpreter\n"
    "                        (default: fused, as nvcc); its exports do the same\n"
    "  --no-gpu-rows         CUDA: no register window of rows (docs/gpu.md; comparisons)\n"
    "  --samples N           timing samples per image, median kept (5)\n"
    "  --min-sample-ms MS    calls per sample so that one lasts at least MS (20)\n"
    "  --timeout-factor F    a call may take F x the exact time + --timeout-min-ms (20, 2000)\n"
    "  --threads N           threads of a timed candidate (default: all the node's cores)\n"
    "  --screen-ms MS        screening: first time each candidate with one pair of blocks of\n"
    "                        MS per image, in full only if it may reach the frontier (5;\n"
    "                        0: every candidate in full)\n"
    "  --screen-margin M     ... unless a frontier point beats it by more than M (0.2)\n"
    "  --model off|on        model-guided search (off): per generation breed pool x M\n"
    "                        children, predict their time and error with models fitted to\n"
    "                        the candidates measured so far, measure only M (docs/search.md)\n"
    "  --model-measure M     children measured per generation (a fifth of the GA's)\n"
    "  --model-pool K        children bred per child measured (20)\n"
    "  --model-explore F     share of the measured children chosen at random (0.25)\n"
    "  --model-lookahead L   breed L more pools from the pools' predicted best before\n"
    "                        choosing (0)\n"
    "  --fidelity WxH        multi-fidelity: measure every child first on the training\n"
    "                        images of size WxH (briefly timed), at --resolution only when\n"
    "                        it stays promising (docs/search.md)\n"
    "  --fidelity-margin M   ... unless a low-fidelity frontier point beats it by more than\n"
    "                        M (0.2)\n"
    "  --fidelity-explore F  share promoted at random whatever their low measurement (0.1)\n"
    "  --watchdog-s S        kill a worker silent for S seconds (600)\n"
    "  --worker-deadline-s S under mpirun: drop a worker rank silent for S seconds and\n"
    "                        dispatch its candidate again (60)\n"
    "  --broadcast-data      under mpirun: rank 0 sends the program and images to the nodes\n"
    "                        (no shared filesystem)\n"
    "  --param NAME=VALUE    override a param of the pipeline\n"
    "  --no-test             do not re-measure the frontier on the test split\n"
    "  --confirm N           rounds of re-measuring the training frontier at the end (3; 0:\n"
    "                        none; docs/search.md §5)\n"
    "  --confirm-samples N   timing samples per image of a confirmation (15)\n"
    "  --no-extra-metrics    skip PSNR and SSIM (the Lab error alone is cheaper)\n"
    "  --quiet               no progress line\n"
    "SIGTERM or SIGINT stops the run (exit status 3; --resume goes on).\n";

#define TUNE_MAX_PARAMS 16

typedef struct tune_args {
    const char *program, *out, *resume;
    pf_tune_config cfg;
    pf_pool_options pool;
    pf_mpi_options mpi;
    int generations_set, jobs_set;
    bool quiet;
    const char *params[TUNE_MAX_PARAMS];
    int n_params;
} tune_args;

static int number(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (*end || end == v || !(d >= lo && d <= hi))
        return pf_cli_usage("tune", "%s takes a number from %g to %g", opt, lo, hi);
    *out = d;
    return 0;
}

static int integer(const char *opt, const char *v, int lo, int hi, int *out)
{
    double d = 0;
    if (number(opt, v, lo, hi, &d))
        return 2;
    if (d != floor(d))
        return pf_cli_usage("tune", "%s takes a whole number", opt);
    *out = (int)d;
    return 0;
}

static int ga_option(tune_args *a, const char *s, const char *v, bool *known)
{
    pf_ga_params *g = &a->cfg.ga;
    *known = true;
    if (strcmp(s, "--population") == 0)
        return integer(s, v, 2, 100000, &g->population);
    if (strcmp(s, "--generations") == 0) {
        a->generations_set = 1;
        return integer(s, v, 1, 1000000, &g->generations);
    }
    if (strcmp(s, "--seed") == 0)
        return pf_seed_parse(v, &g->seed) == 0 ? 0 : pf_cli_usage("tune", "--seed takes a whole "
                                                                  "number from 0 to 2^64 - 1");
    if (strcmp(s, "--mode") == 0)
        return pf_search_mode_parse(v, &g->genome.mode) == 0
                   ? 0 : pf_cli_usage("tune", "--mode is full, grid or loop");
    if (strcmp(s, "--tournament") == 0)
        return integer(s, v, 1, 1000, &g->tournament);
    if (strcmp(s, "--elite") == 0)
        return number(s, v, 0, 1, &g->elite_frac);
    if (strcmp(s, "--mutants") == 0)
        return number(s, v, 0, 1, &g->mutant_frac);
    if (strcmp(s, "--exec-rate") == 0)
        return number(s, v, 0, 1, &g->genome.exec_rate);
    if (strcmp(s, "--p-modify") == 0)
        return number(s, v, 0, 1, &g->genome.p_modify);
    if (strcmp(s, "--p-accept-for") == 0)
        return number(s, v, 0, 1, &g->genome.p_accept_for);
    if (strcmp(s, "--seeds") == 0) {
        int on = 0;
        int rc = integer(s, v, 0, 1, &on);
        if (rc == 0)
            g->seeds = on;
        return rc;
    }
    if (strcmp(s, "--hints") == 0) {
        int h = 0;
        int rc = integer(s, v, 0, 1, &h);
        if (rc == 0)
            g->genome.hints = h;
        return rc;
    }
    *known = false;
    return 0;
}

static int eval_option(tune_args *a, const char *s, const char *v, bool *known)
{
    pf_eval_config *e = &a->cfg.eval;
    *known = true;
    if (strcmp(s, "--dataset") == 0) {
        free(e->dataset);
        e->dataset = strdup(v);
        return 0;
    }
    if (strcmp(s, "--resolution") == 0)
        return pf_resolution_parse(v, &e->width, &e->height) == 0
                   ? 0 : pf_cli_usage("tune", "--resolution takes WxH, e.g. 256x192");
    if (strcmp(s, "--fidelity") == 0)
        return pf_resolution_parse(v, &e->low_width, &e->low_height) == 0
                   ? 0 : pf_cli_usage("tune", "--fidelity takes WxH, e.g. 256x192");
    if (strcmp(s, "--fidelity-margin") == 0)
        return number(s, v, 0, 0.99, &a->cfg.fidelity.margin);
    if (strcmp(s, "--fidelity-explore") == 0)
        return number(s, v, 0, 1, &a->cfg.fidelity.explore);
    if (strcmp(s, "--max-images") == 0)
        return integer(s, v, 1, 100000, &e->max_images);
    if (strcmp(s, "--samples") == 0)
        return integer(s, v, 1, 1000, &e->samples);
    if (strcmp(s, "--backend") == 0)
        return pf_backend_parse(v, &e->backend) == 0 && e->backend != PF_BACKEND_INTERP
                   ? 0 : pf_cli_usage("tune", "--backend is jit, c or cuda");
    if (strcmp(s, "--target") == 0 && strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0)
        return pf_cli_usage("tune", "unknown target '%s' (cpu, cuda)", v);
    if (strcmp(s, "--target") == 0) {
        e->backend = strcmp(v, "cuda") == 0 ? PF_BACKEND_CUDA : PF_BACKEND_JIT;
        return 0;
    }
    if (strcmp(s, "--min-sample-ms") == 0)
        return number(s, v, 0, 1e6, &e->min_sample_ms);
    if (strcmp(s, "--threads") == 0)
        return integer(s, v, 1, 1024, &e->threads);
    if (strcmp(s, "--screen-ms") == 0)
        return number(s, v, 0, 1e6, &e->screen_ms);
    if (strcmp(s, "--screen-margin") == 0)
        return number(s, v, 0, 0.99, &e->screen_margin);
    if (strcmp(s, "--timeout-factor") == 0)
        return number(s, v, 1, 1e6, &e->timeout_factor);
    if (strcmp(s, "--timeout-min-ms") == 0)
        return number(s, v, 1, 1e9, &e->timeout_min_ms);
    if (strcmp(s, "--param") == 0) {
        if (a->n_params == TUNE_MAX_PARAMS)
            return pf_cli_usage("tune", "at most %d --param", TUNE_MAX_PARAMS);
        a->params[a->n_params++] = v;
        return 0;
    }
    *known = false;
    return 0;
}

static int model_option(tune_args *a, const char *s, const char *v)
{
    pf_tune_model_config *m = &a->cfg.model;
    if (strcmp(s, "--model") == 0) {
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            return pf_cli_usage("tune", "--model is off or on");
        m->on = strcmp(v, "on") == 0;
        return 0;
    }
    if (strcmp(s, "--model-measure") == 0)
        return integer(s, v, 1, 100000, &m->measure);
    if (strcmp(s, "--model-pool") == 0)
        return integer(s, v, 1, 1000, &m->pool);
    if (strcmp(s, "--model-explore") == 0)
        return number(s, v, 0, 1, &m->explore);
    if (strcmp(s, "--model-lookahead") == 0)
        return integer(s, v, 0, 100, &m->lookahead);
    return pf_cli_usage("tune", "unknown option '%s'", s);
}

static int parse_option(tune_args *a, const char *s, const char *v)
{
    bool known;
    int rc = ga_option(a, s, v, &known);
    if (known)
        return rc;
    rc = eval_option(a, s, v, &known);
    if (known)
        return rc;
    if (strcmp(s, "--out") == 0)
        a->out = v;
    else if (strcmp(s, "--resume") == 0)
        a->resume = v;
    else if (strcmp(s, "--jobs") == 0) {
        a->jobs_set = 1;
        return integer(s, v, 1, 1024, &a->pool.jobs);
    } else if (strcmp(s, "--worker-deadline-s") == 0)
        return number(s, v, 0.1, 1e7, &a->mpi.deadline_s);
    else if (strncmp(s, "--model", 7) == 0)
        return model_option(a, s, v);
    else if (strcmp(s, "--max-error") == 0)
        return number(s, v, 1e-6, 1e6, &a->cfg.max_error);
    else if (strcmp(s, "--confirm") == 0)
        return integer(s, v, 0, 100, &a->cfg.confirm);
    else if (strcmp(s, "--confirm-samples") == 0)
        return integer(s, v, 1, 1000, &a->cfg.confirm_samples);
    else if (strcmp(s, "--watchdog-s") == 0) {
        double d = 0;
        rc = number(s, v, 1, 1e7, &d);
        if (rc == 0)
            a->pool.watchdog_ms = a->mpi.watchdog_ms = d * 1000;
        return rc;
    } else
        return pf_cli_usage("tune", "unknown option '%s'", s);
    return 0;
}

static int flag(tune_args *a, const char *s)
{
    if (strcmp(s, "--no-test") == 0)
        a->cfg.test = false;
    else if (strcmp(s, "--no-exec") == 0)
        a->cfg.ga.genome.exec_rate = 0;
    else if (strcmp(s, "--quiet") == 0)
        a->quiet = true;
    else if (strcmp(s, "--no-extra-metrics") == 0)
        a->cfg.eval.extra_metrics = false;
    else if (strcmp(s, "--broadcast-data") == 0)
        a->mpi.broadcast_data = true;
    else if (strcmp(s, "--strict-float") == 0)
        a->cfg.eval.strict_float = true;
    else if (strcmp(s, "--no-gpu-rows") == 0)
        a->cfg.eval.no_gpu_rows = true;
    else
        return -1;
    return 0;
}

/* Returns 0, or the exit code (-1 for --help: exit 0). */
static int parse_tune_args(int argc, char **argv, tune_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0) {
            fputs(tune_usage, stdout);
            return -1;
        } else if (flag(a, s) == 0) {
            continue;
        } else if (s[0] == '-' && s[1] == '-' && i + 1 < argc) {
            rc = parse_option(a, s, argv[++i]);
        } else if (s[0] != '-' && !a->program) {
            a->program = s;
        } else {
            return pf_cli_usage("tune", "unknown or incomplete option '%s'", s);
        }
        if (rc)
            return rc;
    }
    if (!a->resume && (!a->program || !a->out))
        return pf_cli_usage("tune", "give FILE.pf and --out RUN (or --resume RUN)");
    if (a->resume && a->program)
        return pf_cli_usage("tune", "--resume takes the run's own program; drop FILE.pf");
    if ((a->cfg.eval.strict_float || a->cfg.eval.no_gpu_rows) &&
        a->cfg.eval.backend != PF_BACKEND_CUDA)
        return pf_cli_usage("tune", "--strict-float and --no-gpu-rows are for --target cuda (the "
                            "CPU targets round every product unless asked otherwise)");
    return 0;
}

/* ---- progress ---- */

typedef struct progress_ctx {
    bool tty, quiet, line_open;
    time_t last;  /* not a terminal (a batch job's log, rank 0 under mpirun): the last line */
} progress_ctx;

/* Not on a terminal, the progress line is a log line every this many seconds. */
#define PROGRESS_EVERY_S 60

static void fmt_duration(double s, char *buf, size_t n)
{
    if (!isfinite(s))
        snprintf(buf, n, "?");
    else if (s >= 3600)
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

static void on_progress(void *ctx, const pf_tune_progress *p)
{
    progress_ctx *c = ctx;
    if (c->quiet || (!c->tty && time(NULL) - c->last < PROGRESS_EVERY_S))
        return;
    c->last = time(NULL);
    char eta[32], gen[32] = "";
    fmt_duration(p->eta_s, eta, sizeof eta);
    if (p->generation >= 0)
        snprintf(gen, sizeof gen, " gen %d/%d", p->generation, p->generations - 1);
    char line[1024];
    snprintf(line, sizeof line, "%s%s  evals %ld/%ld  %.2f/s  ETA %s  frontier %d  best %.2fx at "
             "error <= %g%s%s", p->phase, gen, p->done, p->total, p->per_second, eta,
             p->frontier, p->best_speedup, p->max_error, p->load ? "  " : "",
             p->load ? p->load : "");
    if (c->tty)
        fprintf(stderr, "\r\033[K%s", line);
    else
        fprintf(stderr, "tune: progress: %s\n", line);
    fflush(stderr);
    c->line_open = c->tty;
}

static void on_log(void *ctx, const char *line)
{
    progress_ctx *c = ctx;
    if (c->quiet)
        return;
    if (c->line_open)
        fputs("\r\033[K", stderr);
    c->line_open = false;
    fprintf(stderr, "tune: %s\n", line);
}

/* ---- wiring ---- */

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* SIGTERM (a batch system's, or mpirun passing it on) and SIGINT stop the run without waiting
 * for the candidates in flight; everything measured is on record for --resume. Under MPI,
 * SIGUSR1 is ignored: MPICH sends it to every rank when one dies. */
static void catch_stop_signals(bool mpi)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (mpi)
        signal(SIGUSR1, SIG_IGN);
}

/* The search through an evaluator; returns the exit status. */
static int search(pf_tune *t, pf_evaluator *ev, const tune_args *a)
{
    pf_error err;
    progress_ctx pc = { .tty = isatty(STDERR_FILENO) != 0, .quiet = a->quiet };
    pf_tune_hooks hooks = { .progress = on_progress, .log = on_log, .ctx = &pc,
                            .stop = &stop_requested };
    int rc = pf_tune_run(t, ev, &hooks, &err);
    if (pc.line_open)
        fputc('\n', stderr);
    const char *dir = pf_tune_dir(t);
    if (rc < 0) {
        pf_cli_error("%s", err.msg);
        return 1;
    }
    if (rc == 1) {
        pf_cli_error("stopped on a signal; continue with: perfora tune --resume %s", dir);
        return 3;
    }
    printf("frontier written to %s/frontier-train.tsv and %s/frontier-test.tsv (schedules in "
           "%s/frontier/, numbers in %s/summary.json)\n", dir, dir, dir, dir);
    return 0;
}

static int run(pf_tune *t, const tune_args *a)
{
    pf_error err;
    catch_stop_signals(false);
    pf_pool_options po = a->pool;
    if (pf_tune_config_of(t)->eval.backend == PF_BACKEND_CUDA)
        po.exe = "/proc/self/exe";  /* CUDA is not usable in a fork of a process that
                                        initialized it (this one checked the device) */
    pf_evaluator *ev = pf_pool_new(&pf_tune_config_of(t)->eval, &po, &err);
    if (!ev) {
        pf_cli_error("%s", err.msg);
        return 1;
    }
    int rc = search(t, ev, a);
    pf_evaluator_destroy(ev);
    return rc;
}

static pf_tune *start(tune_args *a, pf_error *err)
{
    if (a->resume)
        return pf_tune_resume(a->resume, a->generations_set ? a->cfg.ga.generations : 0, err);
    pf_eval_config *e = &a->cfg.eval;
    e->program = strdup(a->program);
    if (!e->dataset && !(e->dataset = pf_dataset_default(a->program, err)))
        return NULL;
    e->params = calloc((size_t)a->n_params + 1, sizeof *e->params);
    for (int i = 0; i < a->n_params; i++)
        e->params[e->n_params++] = strdup(a->params[i]);
    a->cfg.source = strdup(a->program);
    return pf_tune_create(a->out, &a->cfg, err);
}

/* Under mpirun: rank 0 runs the search over the other ranks, which evaluate. */
static int run_mpi(tune_args *a)
{
    pf_error err;
    pf_mpi *m = pf_mpi_start(&err);
    if (!m) {
        pf_cli_error("%s", err.msg);
        return 1;
    }
    if (pf_mpi_rank(m) != 0) {
        int rc = pf_mpi_worker_run(m, &err);
        if (rc != 0)
            pf_cli_error("rank %d: %s", pf_mpi_rank(m), err.msg);
        pf_mpi_end(m, false);
        return rc != 0;
    }
    if (a->jobs_set)
        pf_cli_error("--jobs is for a local run: under mpirun every rank but 0 is one worker");
    pf_tune *t = start(a, &err);
    pf_evaluator *ev = t ? pf_mpi_master_new(m, &pf_tune_config_of(t)->eval, pf_tune_dir(t),
                                             &a->mpi, &err) : NULL;
    if (!ev) {
        pf_cli_error("%s", err.msg);
        pf_tune_free(t);
        pf_mpi_abort(m, 1);
    }
    catch_stop_signals(true);
    int rc = search(t, ev, a);
    int lost = pf_mpi_master_close(ev);
    pf_tune_free(t);
    if (lost)
        pf_cli_error("%d worker rank%s %s: ending the MPI job with MPI_Abort(status 0), as "
                     "MPI_Finalize would wait for %s forever; the run directory is complete",
                     lost, lost == 1 ? "" : "s", rc == 3 ? "not waited for after the stop"
                     : lost == 1 ? "was lost" : "were lost", lost == 1 ? "it" : "them");
    pf_mpi_end(m, lost > 0);
    return rc;
}

int pf_cmd_tune(int argc, char **argv)
{
    tune_args a;
    memset(&a, 0, sizeof a);
    pf_tune_config_default(&a.cfg);
    a.mpi.deadline_s = 60;
    int rc = parse_tune_args(argc, argv, &a);
    if (rc == 0 && pf_mpi_launched_size() > 1) {
        rc = run_mpi(&a);
        pf_tune_config_free(&a.cfg);
        return rc;
    }
    if (rc == 0) {
        pf_error err;
        pf_tune *t = start(&a, &err);
        if (t)
            rc = run(t, &a);
        else
            pf_cli_error("%s", err.msg);
        rc = t ? rc : 1;
        pf_tune_free(t);
    }
    pf_tune_config_free(&a.cfg);
    return rc < 0 ? 0 : rc;
}
