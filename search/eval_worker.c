/* The evaluation worker's life: load the program, compile its exact variant, prepare a split
 * (inputs, reference outputs, the exact time that sets the calls per sample) under the node
 * protocol, the frontier it screens against, and an in-process evaluator around one worker. */
#include "search/evaluate_internal.h"

#include "base/arena.h"
#include "base/clock.h"
#include "dataset/manifest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static void read_hook(pf_eval_worker *w)
{
    const char *h = getenv(PF_SEARCH_TEST_HOOK_ENV);
    const char *colon = h ? strchr(h, ':') : NULL;
    if (!colon || colon == h || (size_t)(colon - h) >= sizeof w->hook_kind || !colon[1])
        return;
    memcpy(w->hook_kind, h, (size_t)(colon - h));
    w->hook_text = pf_xstrdup(colon + 1);
}

pf_compile_options pf_eval_compile_options(const pf_eval_worker *w)
{
    pf_compile_options o = { 0 };
    o.backend = w->cfg.backend;
    o.compile_threads = w->cfg.lock_path ? 1 : 0;
    o.threads = w->cfg.threads;
    o.strict_float = w->cfg.strict_float;
    o.no_gpu_rows = w->cfg.no_gpu_rows;
    return o;
}

static int variant_timer(void *ctx, pf_variant *v, const pf_buffer *bufs, int calls, bool exact,
                         double *ms, pf_error *err)
{
    (void)ctx, (void)exact;
    return pf_variant_time_calls(v, bufs, calls, ms, err);
}

double pf_eval_time_calls(pf_eval_worker *w, pf_variant *v, const pf_buffer *bufs, int calls,
                          bool exact, pf_error *err)
{
    double ms;
    return w->timer(w->timer_ctx, v, bufs, calls, exact, &ms, err) == 0 ? ms : -1;
}

void pf_eval_worker_set_timer(pf_eval_worker *w, pf_eval_timer_fn fn, void *ctx)
{
    w->timer = fn ? fn : variant_timer;
    w->timer_ctx = fn ? ctx : NULL;
}

void pf_eval_worker_set_samples(pf_eval_worker *w, int samples)
{
    w->samples = samples > 0 ? samples : 0;
}

static int load_program(pf_eval_worker *w, pf_error *err)
{
    w->prog = pf_load_program(w->cfg.program, err);
    if (!w->prog)
        return -1;
    if (w->prog->n_inputs != 1)
        return pf_fail(err, "%s: the search feeds one photo per run, and pipeline '%s' takes "
                       "%d inputs", w->cfg.program, w->prog->name, w->prog->n_inputs);
    pf_params_init(&w->params, w->prog);
    for (int i = 0; i < w->cfg.n_params; i++)
        if (pf_params_set(&w->params, w->prog, w->cfg.params[i], err))
            return -1;
    w->target = pf_backend_plan_target(w->cfg.backend);  /* CUDA: the GPU default schedule */
    w->exact_plan = pf_plan_new(w->prog, NULL, &w->target, err);
    if (!w->exact_plan)
        return -1;
    pf_compile_options o = pf_eval_compile_options(w);
    w->exact = pf_variant_build(w->prog, &w->params, w->exact_plan, &o, err);
    return w->exact ? 0 : pf_fail_prefix(err, "compiling the exact program");
}

pf_eval_worker *pf_eval_worker_new(const pf_eval_config *c, int worker_id, pf_error *err)
{
    pf_eval_worker *w = pf_xcalloc(1, sizeof *w);
    pf_eval_config_copy(&w->cfg, c);
    w->id = worker_id;
    w->timer = variant_timer;
    read_hook(w);
    if (pf_node_open(&w->node, c->lock_path, err) != 0 || load_program(w, err) != 0) {
        pf_eval_worker_free(w);
        return NULL;
    }
    return w;
}

static void free_set(eval_set *s)
{
    for (int i = 0; i < s->n; i++) {
        eval_image *im = &s->img[i];
        for (int o = 0; o < PF_IO_MAX; o++)
            pf_image_free(im->ref[o]);
        if (im->io.bound)
            pf_io_free(&im->io);
        free(im->path);
    }
    free(s->img);
    memset(s, 0, sizeof *s);
}

void pf_eval_worker_free(pf_eval_worker *w)
{
    if (!w)
        return;
    for (int s = 0; s < PF_SET_COUNT; s++)
        free_set(&w->sets[s]);
    pf_variant_free(w->exact);
    pf_plan_free(w->exact_plan);
    if (w->prog) {
        pf_params_free(&w->params);
        pf_program_free(w->prog);
    }
    pf_node_close(&w->node);
    free(w->front);
    free(w->hook_text);
    pf_eval_config_free(&w->cfg);
    free(w);
}

/* The exact time of one call: the median of three calls after a first one (which also gave the
 * reference). Sets the calls per sample. */
static int time_exact(pf_eval_worker *w, eval_image *im, pf_error *err)
{
    double t[3];
    for (int k = 0; k < 3; k++)
        if ((t[k] = pf_eval_time_calls(w, w->exact, im->io.buf, 1, true, err)) < 0)
            return -1;
    double lo = fmin(t[0], fmin(t[1], t[2])), hi = fmax(t[0], fmax(t[1], t[2]));
    im->t_exact_ms = t[0] + t[1] + t[2] - lo - hi;
    double runs = ceil(w->cfg.min_sample_ms / fmax(im->t_exact_ms, 1e-3));
    im->runs = runs < 1 ? 1 : runs > 1e6 ? 1000000 : (int)runs;
    return 0;
}

/* Every error is measured against the exact outputs: one that is NaN or infinite would make
 * every candidate's error NaN (issue 27: the search then ended with an empty frontier and
 * exit status 0). */
static int reference_not_finite(const pf_eval_worker *w, const eval_image *im, pf_error *err)
{
    for (int o = 0; o < im->io.n_out; o++) {
        const pf_image *img = im->io.out[o];
        for (int c = 0; c < img->channels; c++)
            for (int y = 0; y < img->height; y++)
                for (int x = 0; x < img->width; x++) {
                    float v = *pf_image_at(img, x, y, c);
                    if (isfinite(v))
                        continue;
                    return pf_fail(err, "the exact pipeline's output '%s' is %s at (%d, %d, %d) "
                                   "on %s: errors are measured against it, so no variant can "
                                   "be scored (fix the pipeline or its params)",
                                   w->prog->outputs[o]->name, isnan(v) ? "NaN" : "infinite",
                                   x, y, c, im->name);
                }
    }
    return 0;
}

/* The input and the reference outputs (building), then the exact time (timing: the node
 * quiet, as when candidates are timed against it). */
static int prepare_image(pf_eval_worker *w, eval_image *im, pf_error *err)
{
    pf_node_build_begin(&w->node);
    pf_image *in[1] = { pf_io_load_input(w->prog, &w->params, 0, im->path, err) };
    int rc = !in[0] || pf_io_bind(&im->io, w->prog, &w->params, in, err) ? -1 : 0;
    if (rc == 0 && pf_variant_run(w->exact, im->io.buf, err))
        rc = pf_fail_prefix(err, "running the exact program on %s", im->name);
    if (rc == 0)
        rc = reference_not_finite(w, im, err);
    for (int o = 0; rc == 0 && o < im->io.n_out; o++)
        im->ref[o] = pf_image_clone(im->io.out[o]);
    pf_node_build_end(&w->node);
    if (rc != 0)
        return -1;
    pf_node_time_begin(&w->node);
    rc = time_exact(w, im, err);
    pf_node_time_end(&w->node);
    return rc;
}

int pf_eval_worker_prepare(pf_eval_worker *w, pf_image_set set, pf_error *err)
{
    eval_set *s = &w->sets[set];
    if (s->ready)
        return 0;
    free_set(s);
    char **paths = pf_eval_image_list(&w->cfg, set, &s->n, err);
    if (!paths)
        return -1;
    s->img = pf_xcalloc((size_t)s->n, sizeof *s->img);
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0; i++) {
        eval_image *im = &s->img[i];
        im->path = pf_xstrdup(paths[i]);
        const char *slash = strrchr(im->path, '/');
        im->name = slash ? slash + 1 : im->path;
        rc = prepare_image(w, im, err);
        if (w->beat)
            w->beat(w->beat_ctx, "prepared an image");
    }
    pf_manifest_list_free(paths);
    if (rc != 0) {
        free_set(s);
        return -1;
    }
    s->ready = true;
    return 0;
}

double pf_eval_worker_exact_ms(const pf_eval_worker *w, pf_image_set set, int i)
{
    const eval_set *s = &w->sets[set];
    return s->ready && i >= 0 && i < s->n ? s->img[i].t_exact_ms : NAN;
}

void pf_eval_worker_use_alarms(pf_eval_worker *w, bool on)
{
    w->alarms = on;
}

bool pf_eval_worker_broken(const pf_eval_worker *w)
{
    return w->cfg.backend == PF_BACKEND_CUDA && pf_gpu_context_lost();
}

void pf_eval_worker_set_frontier(pf_eval_worker *w, const pf_front_point *pts, int n)
{
    free(w->front);
    w->front = pf_front_copy(pts, n);
    w->n_front = n;
}

void pf_eval_worker_set_heartbeat(pf_eval_worker *w, pf_eval_heartbeat_fn fn, void *ctx)
{
    w->beat = fn;
    w->beat_ctx = ctx;
}

/* ---- an evaluator in this process: submit queues, wait evaluates the oldest ---- */

typedef struct inproc_job {
    long id;
    pf_image_set set;
    char *schedule;
    int samples;
} inproc_job;

typedef struct inproc {
    pf_evaluator base;
    pf_eval_worker *w;
    inproc_job *q;
    int head, n, cap;
    int samples;  /* of the candidates submitted from now on */
} inproc;

static int inproc_submit(pf_evaluator *ev, long id, pf_image_set set, const char *schedule,
                         pf_error *err)
{
    (void)err;
    inproc *p = (inproc *)ev;
    if (p->head + p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->q = pf_xrealloc(p->q, sizeof *p->q * (size_t)p->cap);
    }
    p->q[p->head + p->n++] = (inproc_job){ id, set, pf_xstrdup(schedule), p->samples };
    return 0;
}

static int inproc_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    (void)err;
    inproc *p = (inproc *)ev;
    if (p->n == 0) {
        p->head = 0;
        return 0;
    }
    inproc_job j = p->q[p->head++];
    p->n--;
    pf_eval_worker_set_samples(p->w, j.samples);
    pf_eval_worker_evaluate(p->w, j.id, j.set, j.schedule, out);
    free(j.schedule);
    return 1;
}

static const char *inproc_describe(pf_evaluator *ev)
{
    (void)ev;
    return "one in-process worker (no crash isolation); timing is sequential in this process";
}

static void inproc_destroy(pf_evaluator *ev)
{
    inproc *p = (inproc *)ev;
    for (int i = 0; i < p->n; i++)
        free(p->q[p->head + i].schedule);
    free(p->q);
    pf_eval_worker_free(p->w);
    free(p);
}

static void inproc_set_samples(pf_evaluator *ev, int samples)
{
    ((inproc *)ev)->samples = samples;
}

static const pf_evaluator_ops inproc_ops = { .submit = inproc_submit, .wait = inproc_wait,
                                             .describe = inproc_describe,
                                             .destroy = inproc_destroy,
                                             .set_samples = inproc_set_samples };

pf_evaluator *pf_eval_inprocess_new(const pf_eval_config *c, pf_error *err)
{
    pf_eval_worker *w = pf_eval_worker_new(c, 0, err);
    if (!w || pf_eval_worker_prepare(w, PF_SET_TRAIN, err) != 0) {
        pf_eval_worker_free(w);
        return NULL;
    }
    inproc *p = pf_xcalloc(1, sizeof *p);
    p->base.ops = &inproc_ops;
    p->w = w;
    return &p->base;
}
