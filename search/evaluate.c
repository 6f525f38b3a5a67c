/* Measuring one candidate in this process: build (plan the schedule's text, then the driver),
 * outputs and error alongside the node's other workers, then screening and interleaved timing
 * with the node quiet (see evaluate.h and node.h). */
#include "search/evaluate.h"
#include "search/evaluate_internal.h"

#include "base/arena.h"
#include "base/clock.h"
#include "dataset/metrics.h"

#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <fcntl.h>
#include <unistd.h>

static void beat(pf_eval_worker *w, const char *phase)
{
    if (w->beat)
        w->beat(w->beat_ctx, phase);
}

/* ---- alarms: a candidate call that runs past its limit kills the worker (SIGALRM's default
 * action), which the pool reports as a timeout ---- */

static void arm(const pf_eval_worker *w, double limit_ms)
{
    if (!w->alarms)
        return;
    struct itimerval it = { { 0, 0 }, { 0, 0 } };
    it.it_value.tv_sec = (time_t)(limit_ms / 1000);
    it.it_value.tv_usec = (suseconds_t)(fmod(limit_ms, 1000.0) * 1000) + 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(const pf_eval_worker *w)
{
    if (!w->alarms)
        return;
    struct itimerval it = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

static double limit_ms(const pf_eval_worker *w, double exact_ms, int calls)
{
    return w->cfg.timeout_factor * exact_ms * calls + w->cfg.timeout_min_ms;
}

/* ---- the test hook (PF_SEARCH_TEST_HOOK) ---- */

static void run_hook(const pf_eval_worker *w, const char *schedule, pf_io *io)
{
    if (!w->hook_text || !strstr(schedule, w->hook_text))
        return;
    if (strcmp(w->hook_kind, "crash") == 0) {
        signal(SIGSEGV, SIG_DFL);  /* a plain crash, even under a sanitizer's handler */
        raise(SIGSEGV);
    }
    if (strcmp(w->hook_kind, "hang") == 0)
        for (;;)
            pause();
    if (strcmp(w->hook_kind, "nan") == 0 && io->n_out > 0)
        io->out[0]->data[0] = NAN;
}

/* ---- phases ---- */

typedef struct candidate {
    pf_plan *plan;
    pf_variant *variant;
    pf_image **outs;  /* [image * PF_IO_MAX + output]: copies of the first call's outputs */
    int n_outs;
} candidate;

static int build(pf_eval_worker *w, const char *text, candidate *c, pf_eval_record *out)
{
    pf_error err;
    c->plan = pf_plan_parse(w->prog, text, "<candidate>", &w->target, &err);
    if (!c->plan) {
        pf_record_set_invalid(out, "schedule refused: %s", err.msg);
        return -1;
    }
    pf_compile_options o = pf_eval_compile_options(w);
    double t0 = pf_now_ms();
    c->variant = pf_variant_build(w->prog, &w->params, c->plan, &o, &err);
    out->compile_ms = pf_now_ms() - t0;
    if (!c->variant) {
        pf_record_set_invalid(out, "compile error: %s", err.msg);
        return -1;
    }
    beat(w, "compiled");
    return 0;
}

static bool outputs_finite(const pf_io *io)
{
    for (int o = 0; o < io->n_out; o++) {
        const pf_image *im = io->out[o];
        for (int c = 0; c < im->channels; c++)
            for (int y = 0; y < im->height; y++) {
                const float *row = pf_image_at(im, 0, y, c);
                for (int x = 0; x < im->width; x++)
                    if (!isfinite(row[x]))
                        return false;
            }
    }
    return true;
}

/* Error of the outputs against the references, averaged over outputs. */
static int measure_error(const pf_eval_worker *w, eval_image *im, pf_image *const *outs,
                         pf_eval_image *m, pf_error *err)
{
    double e = 0, p = 0, s = 0;
    int n = im->io.n_out;
    for (int o = 0; o < n; o++) {
        double v;
        if (pf_metric_lab_de76_paper(outs[o], im->ref[o], &v, err))
            return -1;
        e += v;
        if (!w->cfg.extra_metrics)
            continue;
        if (pf_metric_psnr(outs[o], im->ref[o], &v, err))
            return -1;
        p += v > 100 ? 100 : v;
        if (pf_metric_ssim(outs[o], im->ref[o], &v, err) == 0)
            s += v;
        else
            s = NAN;  /* an image below 11 pixels has no SSIM */
    }
    m->error = e / n;
    m->psnr = w->cfg.extra_metrics ? p / n : NAN;
    m->ssim = w->cfg.extra_metrics ? s / n : NAN;
    return 0;
}

/* First (untimed) call per image, while building: NaN/Inf detection, and a copy of the outputs
 * (the timed calls overwrite them) for the error metrics. */
static int outputs_phase(pf_eval_worker *w, eval_set *set, candidate *c, const char *text,
                         pf_eval_record *out)
{
    pf_error err;
    c->n_outs = set->n * PF_IO_MAX;
    c->outs = pf_xcalloc((size_t)c->n_outs, sizeof *c->outs);
    double t0 = pf_now_ms();
    int rc = 0;
    for (int i = 0; i < set->n && rc == 0; i++) {
        eval_image *im = &set->img[i];
        arm(w, limit_ms(w, im->t_exact_ms, 1));
        rc = pf_variant_run(c->variant, im->io.buf, &err);
        run_hook(w, text, &im->io);
        disarm(w);
        if (rc != 0) {
            pf_record_set_invalid(out, "run error on %s: %s", im->name, err.msg);
        } else if (!outputs_finite(&im->io)) {
            pf_record_set_invalid(out, "non-finite output (NaN or Inf) on %s", im->name);
            rc = -1;
        }
        for (int o = 0; rc == 0 && o < im->io.n_out; o++)
            c->outs[i * PF_IO_MAX + o] = pf_image_clone(im->io.out[o]);
    }
    out->run_ms = pf_now_ms() - t0;
    beat(w, "outputs");
    return rc;
}

/* The error metrics of every image. */
static int error_phase(pf_eval_worker *w, eval_set *set, candidate *c, pf_eval_record *out)
{
    pf_error err;
    double t0 = pf_now_ms();
    int rc = 0;
    for (int i = 0; i < set->n && rc == 0; i++) {
        eval_image *im = &set->img[i];
        rc = measure_error(w, im, c->outs + i * PF_IO_MAX, &out->images[i], &err);
        if (rc != 0)
            pf_record_set_invalid(out, "error metric on %s: %s", im->name, err.msg);
    }
    out->error_ms = pf_now_ms() - t0;
    return rc;
}

/* The exact block's calls: im->runs lasts min_sample_ms; a screening block is shorter. */
static int exact_runs(const pf_eval_worker *w, const eval_image *im, double min_ms)
{
    if (min_ms >= w->cfg.min_sample_ms)
        return im->runs;
    double r = ceil(min_ms / fmax(im->t_exact_ms, 1e-3));
    return r < 1 ? 1 : r > im->runs ? im->runs : (int)r;
}

/* `calls` calls of v; the time of the whole block (ms), or -1 on a failed call. */
static double time_calls(pf_eval_worker *w, pf_variant *v, eval_image *im, int calls,
                         bool candidate)
{
    if (candidate)
        arm(w, limit_ms(w, im->t_exact_ms, calls));
    pf_error err = { 0 };
    /* on a device, its kernels' time (the transfers are not the variant's) */
    double t = pf_eval_time_calls(w, v, im->io.buf, calls, !candidate, &err);
    if (candidate)
        disarm(w);
    if (t < 0)
        snprintf(w->timing_error, sizeof w->timing_error, "%.200s",
                 err.msg[0] ? err.msg : "no reason given");
    return t;
}

/* A candidate whose probe call is this many times slower than the exact program is dominated by
 * it (slower, and not more exact): one sample ranks it well enough. */
#define PF_SLOW_RATIO 4.0

/* One call's time, to size the candidate's blocks. A probe past PF_SLOW_RATIO is taken again
 * and the faster one kept: a single call of a few milliseconds can read several times slow
 * when the machine stalls (a CI runner running other suites), and the slow verdict costs the
 * candidate all its samples but one (a test of --samples 3 saw 1). */
static double probe_call(pf_eval_worker *w, pf_variant *cand, eval_image *im)
{
    double probe = time_calls(w, cand, im, 1, true);
    if (probe > PF_SLOW_RATIO * im->t_exact_ms) {
        double again = time_calls(w, cand, im, 1, true);
        probe = again < 0 ? again : fmin(probe, again);
    }
    return probe;
}

/* The interleaved samples of one image: an exact block of im->runs calls (scaled to min_ms),
 * then a candidate block of enough calls to last min_ms (from one probe call); the ratio of
 * their per-call times. Pairing each candidate block with the exact block just before it
 * cancels slow drifts in the machine's load, which is why the median is taken over the
 * ratios. */
static int time_image(pf_eval_worker *w, eval_image *im, pf_variant *cand, int samples,
                      double min_ms, pf_eval_image *m, pf_eval_record *out)
{
    double probe = probe_call(w, cand, im);
    double calls = ceil(min_ms / fmax(probe, 1e-3));
    int r = exact_runs(w, im, min_ms), rc = calls < 1 ? 1 : calls > 1e6 ? 1000000 : (int)calls;
    int n = probe > PF_SLOW_RATIO * im->t_exact_ms ? 1 : samples;
    double *te = pf_xmalloc(sizeof(double) * 3 * (size_t)n), *tc = te + n, *ratio = tc + n;
    int status = probe < 0 ? -1 : 0;
    for (int s = 0; s < n && status == 0; s++) {
        te[s] = time_calls(w, w->exact, im, r, false) / r;
        /* not after a failed exact block: its reason is the record's (a fault the candidate
         * left on the GPU shows there first) */
        tc[s] = te[s] < 0 ? -1 : time_calls(w, cand, im, rc, true) / rc;
        if (te[s] < 0 || tc[s] < 0)
            status = -1;
        else
            ratio[s] = tc[s] / (te[s] > 1e-9 ? te[s] : 1e-9);
    }
    if (status == 0) {
        m->rel_time = pf_median(ratio, n);
        m->rel_lo = pf_quantile(ratio, n, 0.25);
        m->rel_hi = pf_quantile(ratio, n, 0.75);
        m->t_exact_ms = pf_median(te, n);
        m->t_cand_ms = pf_median(tc, n);
        m->runs = rc;
        m->samples = n;
    } else {
        pf_record_set_invalid(out, "a timed call failed on %s: %s", im->name, w->timing_error);
    }
    free(te);
    return status;
}

/* CPU time of this process (every thread), ms. */
static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* Building, alongside the node's other workers: compile, the untimed first calls, the error
 * metrics. */
static int build_phase(pf_eval_worker *w, eval_set *set, candidate *c, const char *text,
                       pf_eval_record *out)
{
    double t0 = pf_now_ms();
    pf_node_build_begin(&w->node);
    out->build_wait_ms = pf_now_ms() - t0;
    double cpu0 = cpu_ms();
    int rc = build(w, text, c, out);
    if (rc == 0)
        rc = outputs_phase(w, set, c, text, out);
    if (rc == 0)
        rc = error_phase(w, set, c, out);
    out->build_cpu_ms = cpu_ms() - cpu0;
    pf_node_build_end(&w->node);
    return rc;
}

/* One untimed call of each variant on the first image, before a timing pass. Timing follows
 * building (compile, a call per image, error metrics), which leaves caches, the thread pool
 * and both variants cold. On the training split the screening pass used to take that first
 * cold call, so its full timing ran warm, while the test split's timing (and every pass with
 * --screen-ms 0) began cold: the first exact block read slow, so the first ratio read fast,
 * and the candidate's cold probe gave it few calls per block or, past PF_SLOW_RATIO, a single
 * sample (issue 25: training speedups read below the test speedups of the same variants).
 * Warming both here makes every pass start alike on every split. */
static int warm_up(pf_eval_worker *w, eval_image *im, pf_variant *cand, pf_eval_record *out)
{
    if (time_calls(w, w->exact, im, 1, false) >= 0 && time_calls(w, cand, im, 1, true) >= 0)
        return 0;
    pf_record_set_invalid(out, "a timed call failed on %s: %s", im->name, w->timing_error);
    return -1;
}

/* Every image timed with `samples` pairs of blocks lasting at least min_ms. */
static int time_images(pf_eval_worker *w, eval_set *set, candidate *c, int samples,
                       double min_ms, pf_eval_record *out)
{
    int rc = set->n > 0 ? warm_up(w, &set->img[0], c->variant, out) : 0;
    for (int i = 0; i < set->n && rc == 0; i++) {
        rc = time_image(w, &set->img[i], c->variant, samples, min_ms, &out->images[i], out);
        beat(w, "timed an image");
    }
    return rc;
}

/* Whether the screened times put the candidate within reach of the frontier. */
static bool worth_full_timing(const pf_eval_worker *w, pf_eval_record *out)
{
    double t = 0, e = 0;
    for (int i = 0; i < out->n_images; i++) {
        t += out->images[i].rel_time;
        e += out->images[i].error;
    }
    out->screen_time = t / out->n_images;
    return pf_screen_may_reach(w->front, w->n_front, e / out->n_images, out->screen_time,
                               w->cfg.screen_margin);
}

/* Timing, with the node quiet. On the training split a screening (one short pair of blocks per
 * image) comes first, and the full timing follows only for a candidate that may reach the
 * frontier; the test split is always timed in full, the low-fidelity one never. */
static int timing_phase(pf_eval_worker *w, pf_image_set id, eval_set *set, candidate *c,
                        pf_eval_record *out)
{
    double t0 = pf_now_ms();
    pf_node_time_begin(&w->node);
    double t1 = pf_now_ms();
    out->lock_wait_ms = t1 - t0;
    int rc = 0;
    bool full = true;
    if (id == PF_SET_LOW && w->cfg.screen_ms > 0) {
        /* a multi-fidelity first look: timed as briefly as a screening, never in full (the
         * frontier it would compare with is at the other resolution) */
        rc = time_images(w, set, c, 1, w->cfg.screen_ms, out);
        full = false;
    } else if (id == PF_SET_TRAIN && w->cfg.screen_ms > 0) {
        rc = time_images(w, set, c, 1, w->cfg.screen_ms, out);
        full = rc == 0 && worth_full_timing(w, out);
    }
    if (rc == 0 && full)
        rc = time_images(w, set, c, w->samples > 0 ? w->samples : w->cfg.samples,
                         w->cfg.min_sample_ms, out);
    out->full_timing = full;
    out->timing_ms = pf_now_ms() - t1;
    pf_node_time_end(&w->node);
    return rc;
}

static void summarise(pf_eval_record *out)
{
    double t = 0, lo = 0, hi = 0, e = 0, p = 0, s = 0;
    for (int i = 0; i < out->n_images; i++) {
        t += out->images[i].rel_time;
        lo += out->images[i].rel_lo;
        hi += out->images[i].rel_hi;
        e += out->images[i].error;
        p += out->images[i].psnr;
        s += out->images[i].ssim;
    }
    int n = out->n_images;
    out->time = t / n;
    out->time_lo = lo / n;
    out->time_hi = hi / n;
    out->error = e / n;
    out->psnr = p / n;
    out->ssim = s / n;
    out->valid = true;
}

static void measure(pf_eval_worker *w, pf_image_set set, candidate *c, const char *text,
                    pf_eval_record *out)
{
    eval_set *s = &w->sets[set];
    out->n_images = s->n;
    out->images = pf_xcalloc((size_t)s->n, sizeof *out->images);
    if (build_phase(w, s, c, text, out) == 0 && timing_phase(w, set, s, c, out) == 0) {
        summarise(out);
        return;
    }
    free(out->images);  /* partial measurements of an invalid candidate mean nothing */
    out->images = NULL;
    out->n_images = 0;
}

void pf_eval_worker_evaluate(pf_eval_worker *w, long id, pf_image_set set,
                             const char *schedule, pf_eval_record *out)
{
    double t0 = pf_now_ms();
    pf_record_init(out);
    out->id = id;
    out->set = set;
    out->worker = w->id;
    out->schedule = pf_xstrdup(schedule);
    pf_error err;
    candidate c;
    memset(&c, 0, sizeof c);
    if (pf_eval_worker_prepare(w, set, &err) != 0)
        pf_record_set_invalid(out, "cannot prepare the %s images: %s", pf_image_set_name(set),
                              err.msg);
    else
        measure(w, set, &c, schedule, out);
    pf_variant_free(c.variant);
    for (int i = 0; i < c.n_outs; i++)
        pf_image_free(c.outs[i]);
    free(c.outs);
    pf_plan_free(c.plan);
    /* What the candidate's compile freed goes back to the system: a worker builds thousands,
     * and a split compile's threads leave free memory in malloc arenas of their own. */
    malloc_trim(0);
    out->wall_ms = pf_now_ms() - t0;
}
