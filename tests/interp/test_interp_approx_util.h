/* Helpers for the tests of approximated programs in the interpreter, shared by tests/interp
 * (the real stage runtime) and tests/interp_seam (a fake one linked in its place): dense
 * images, plans made by hand (an exact plan whose approximations a test sets, unvalidated, so
 * the interpreter is checked on its own), and running a program with pf_interp_run.
 * Header-only so that both test executables can use it. */
#ifndef PF_TESTS_INTERP_APPROX_UTIL_H
#define PF_TESTS_INTERP_APPROX_UTIL_H

#include "interp/interp.h"
#include "perforate/plan.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dense image: element (i0, i1, i2, i3) at data[i0 + e0 * (i1 + e1 * (i2 + e2 * i3))]. */
typedef struct ta_image {
    int ndims;
    int64_t ext[4];
    float *data;
} ta_image;

static inline ta_image ta_new(int ndims, int64_t e0, int64_t e1, int64_t e2)
{
    ta_image im = { ndims, { e0, ndims > 1 ? e1 : 1, ndims > 2 ? e2 : 1, 1 }, NULL };
    im.data = calloc((size_t)(im.ext[0] * im.ext[1] * im.ext[2]), sizeof(float));
    return im;
}

static inline int64_t ta_count(const ta_image *im)
{
    return im->ext[0] * im->ext[1] * im->ext[2] * im->ext[3];
}

static inline float *ta_at(const ta_image *im, int64_t x, int64_t y, int64_t c)
{
    return &im->data[x + im->ext[0] * (y + im->ext[1] * c)];
}

static inline void ta_free(ta_image *im)
{
    free(im->data);
    im->data = NULL;
}

static inline pf_buffer ta_buffer(const ta_image *im)
{
    pf_buffer b = { im->data, im->ndims, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };
    int64_t s = 1;
    for (int d = 0; d < 4; d++) {
        b.extent[d] = im->ext[d];
        b.stride[d] = s;
        s *= im->ext[d];
    }
    return b;
}

/* A smooth test image with some texture: values in about [0, 1]. */
static inline ta_image ta_pattern(int ndims, int64_t w, int64_t h, int64_t c)
{
    ta_image im = ta_new(ndims, w, h, c);
    for (int64_t k = 0; k < im.ext[2]; k++)
        for (int64_t y = 0; y < im.ext[1]; y++)
            for (int64_t x = 0; x < w; x++)
                *ta_at(&im, x, y, k) = 0.5f + 0.3f * sinf(0.37f * (float)x + 0.11f * (float)k) *
                                                  cosf(0.23f * (float)y) +
                                       (((x * 7 + y * 13 + k) % 5 == 0) ? 0.15f : 0.0f);
    return im;
}

static inline pf_program *ta_compile(const char *src)
{
    pf_error err;
    pf_program *p = pf_compile_string("test.pf", src, &err);
    if (!p)
        fprintf(stderr, "\n--- compile failed:\n%s\n", err.msg);
    return p;
}

static inline const pf_stage *ta_stage(const pf_program *p, const char *name)
{
    for (int i = 0; i < p->n_stages; i++)
        if (strcmp(p->stages[i]->name, name) == 0)
            return p->stages[i];
    CU_FAIL_FATAL("no such stage");
    return NULL;
}

/* The exact plan of p, for a test to approximate by hand. Free with pf_plan_free. */
static inline pf_plan *ta_plan(const pf_program *p)
{
    pf_error err;
    pf_plan *pl = pf_plan_new(p, NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pl);
    return pl;
}

/* A zeroed approximation (sample all, no reconstruction) of the stage, in the plan. */
static inline pf_stage_approx *ta_approx(pf_plan *pl, const char *stage)
{
    pf_stage_approx *a = PF_NEW(&pl->arena, pf_stage_approx);
    pl->stages[ta_stage(pl->prog, stage)->index].approx = a;
    return a;
}

static inline pf_stage_approx *ta_grid(pf_plan *pl, const char *stage, int s0, int s1, int s2,
                                       pf_recon_kind recon)
{
    pf_stage_approx *a = ta_approx(pl, stage);
    a->sample = PF_SAMPLE_GRID;
    a->spacing[0] = s0;
    a->spacing[1] = s1;
    a->spacing[2] = s2;
    a->spacing[3] = 1;
    a->recon = recon;
    return a;
}

static inline const pf_image_decl *ta_image_decl(const pf_program *p, const char *name)
{
    const pf_image_decl *d = pf_program_find_image(p, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    return d;
}

/* Loop perforation of a named `for` loop; returns its loop id. */
static inline int ta_loop_perf(pf_plan *pl, const char *loop, pf_loop_perf_kind kind, int step,
                               float frac)
{
    const pf_loop_info *li = pf_program_find_loop(pl->prog, loop);
    CU_ASSERT_PTR_NOT_NULL_FATAL(li);
    CU_ASSERT_PTR_NOT_NULL_FATAL(li->stmt);
    pf_loop_approx *la = PF_NEW(&pl->arena, pf_loop_approx);
    int id = (int)(li - pl->prog->loops);
    la->perf = (pf_loop_perf){ kind, step, frac, id };
    pl->loops[id] = la;
    return id;
}

/* The writer's image stored on demand (its approximation must say on_demand): every read of
 * it in a later stage reconstructs (pf_plan_read_writer). */
static inline void ta_on_demand(pf_plan *pl, const char *writer)
{
    const pf_stage *w = ta_stage(pl->prog, writer);
    pl->on_demand[w->image->image->index] = w;
}

/* ---- running ---- */

/* Binds the inputs, allocates the outputs (filled with 99 first: the run must overwrite every
 * element) and runs the plan's program with pf_interp_run. outs[] gets prog->n_outputs images
 * that the caller frees (also after a failure). Returns 0 or -1 (err). */
static inline int ta_run(const pf_plan *pl, ta_image *ins, ta_image *outs, pf_error *err)
{
    const pf_program *p = pl->prog;
    pf_param_values pv;
    pf_params_init(&pv, p);
    int64_t ext[8][PF_MAX_DIMS];
    for (int i = 0; i < p->n_inputs && i < 8; i++)
        for (int d = 0; d < PF_MAX_DIMS; d++)
            ext[i][d] = ins[i].ext[d];
    pf_binding b;
    int rc = pf_bind(p, &pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, err);
    if (rc == 0) {
        pf_buffer ib[8], ob[8];
        for (int i = 0; i < p->n_inputs && i < 8; i++)
            ib[i] = ta_buffer(&ins[i]);
        for (int i = 0; i < p->n_outputs && i < 8; i++) {
            const pf_image_decl *d = p->outputs[i];
            const int64_t *e = b.extents[d->index];
            outs[i] = ta_new(d->ndims, e[0], e[1], e[2]);
            for (int64_t k = 0; k < ta_count(&outs[i]); k++)
                outs[i].data[k] = 99.0f;
            ob[i] = ta_buffer(&outs[i]);
        }
        rc = pf_interp_run(p, &pv, pl, &b, ib, ob, err);
        pf_binding_free(&b);
    }
    pf_params_free(&pv);
    return rc;
}

/* Runs and expects success; one output. */
static inline ta_image ta_run1(const pf_plan *pl, ta_image *in)
{
    ta_image out = { 0, { 0, 0, 0, 0 }, NULL };
    pf_error err;
    int rc = ta_run(pl, in, &out, &err);
    if (rc)
        fprintf(stderr, "\n--- run failed: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    return out;
}

#endif
