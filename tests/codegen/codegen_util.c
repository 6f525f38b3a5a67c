/* Helpers for the codegen tests (see codegen_util.h). */
#include "tests/codegen/codegen_util.h"

#include "base/clock.h"
#include "base/fileio.h"
#include "perforate/schedule.h"

#include "tests/harness/harness.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

pf_program *cg_load_app(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "apps/%s.pf", name);
    pf_error err;
    pf_program *p = pf_load_program(pf_test_src(rel), &err);
    if (!p)
        fprintf(stderr, "cannot load %s: %s\n", rel, err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

pf_image *cg_load_photo(const char *name, int channels)
{
    char rel[256];
    snprintf(rel, sizeof rel, "data/images/train/%s", name);
    pf_error err;
    pf_image *img = pf_image_load(pf_test_src(rel), &err);
    if (!img)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    if (channels == 3 && img->channels != 3) {
        pf_image *rgb = pf_image_to_rgb(img, &err);
        pf_image_free(img);
        img = rgb;
    }
    return img;
}

pf_image *cg_synthetic(int w, int h, int channels, unsigned seed)
{
    pf_error err;
    pf_image *img = pf_image_new(w, h, channels, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (int c = 0; c < channels; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                seed = seed * 1103515245u + 12345u;
                *pf_image_at(img, x, y, c) = (float)((seed >> 8) & 0xffff) / 65535.0f;
            }
    return img;
}

static pf_buffer input_buffer(const pf_image_decl *d, const pf_image *img)
{
    pf_buffer b = pf_image_buffer(img, d->ndims <= 2);
    if (d->ndims == 1)
        b.ndims = 1;
    return b;
}

pf_plan *cg_plan(const pf_program *prog, const char *schedule)
{
    pf_error err;
    pf_plan_target t = pf_host_plan_target();
    pf_plan *p = schedule ? pf_plan_parse(prog, schedule, "<test>", &t, &err)
                          : pf_plan_new(prog, NULL, &t, &err);
    if (!p)
        fprintf(stderr, "\nschedule refused: %s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

static int run_with(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                    const pf_compile_options *o, pf_image **inputs, int n_inputs, cg_run *out);

int cg_run_backend(const pf_program *prog, const pf_param_values *params, pf_backend backend,
                   bool no_bounds, pf_image **inputs, int n_inputs, cg_run *out)
{
    pf_compile_options o = { 0 };
    o.backend = backend;
    o.no_bounds_pass = no_bounds;
    pf_plan *plan = cg_plan(prog, NULL);
    int rc = run_with(prog, params, plan, &o, inputs, n_inputs, out);
    pf_plan_free(plan);
    return rc;
}

int cg_run_plan(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                pf_backend backend, pf_image **inputs, int n_inputs, cg_run *out)
{
    /* Every other compile split into up to 3 modules (codegen/split.h), whatever the machine's
     * cores: the random-schedule tests check both ways of compiling against the interpreter. */
    static int calls;
    pf_compile_options o = { 0 };
    o.backend = backend;
    o.compile_threads = calls++ % 2 ? 3 : 1;
    return run_with(prog, params, plan, &o, inputs, n_inputs, out);
}

pf_variant *cg_compile(const pf_program *prog, const pf_param_values *params,
                       const pf_plan *plan, const pf_compile_options *o)
{
    pf_error err;
    pf_variant *v = pf_variant_build(prog, params, plan, o, &err);
    if (!v)
        fprintf(stderr, "compile (%s): %s\n", pf_backend_name(o->backend), err.msg);
    return v;
}

int cg_run_variant(pf_variant *v, const pf_program *prog, const pf_param_values *params,
                   pf_image **inputs, int n_inputs, cg_run *out)
{
    pf_error err;
    memset(out, 0, sizeof *out);
    if (n_inputs != prog->n_inputs || prog->n_outputs > CG_MAX_IO)
        return -1;
    int64_t ext[CG_MAX_IO][PF_MAX_DIMS];
    pf_buffer bufs[2 * CG_MAX_IO];
    for (int i = 0; i < n_inputs; i++) {
        bufs[i] = input_buffer(prog->inputs[i], inputs[i]);
        for (int d = 0; d < PF_MAX_DIMS; d++)
            ext[i][d] = d < bufs[i].ndims ? bufs[i].extent[d] : 1;
    }
    pf_binding b;
    if (pf_bind(prog, params, (const int64_t(*)[PF_MAX_DIMS])ext, &b, &err) != 0) {
        fprintf(stderr, "bind: %s\n", err.msg);
        return -1;
    }
    out->n_out = prog->n_outputs;
    for (int i = 0; i < prog->n_outputs; i++) {
        const pf_image_decl *d = prog->outputs[i];
        const int64_t *e = b.extents[d->index];
        out->out[i] = pf_image_new((int)e[0], d->ndims > 1 ? (int)e[1] : 1,
                                   d->ndims > 2 ? (int)e[2] : 1, &err);
        /* Garbage in every output sample: a backend must overwrite all of them, and one that
         * skips a sample shows up as 1e30 in the comparison. */
        pf_image *o = out->out[i];
        for (size_t k = 0; k < o->plane * (size_t)o->channels; k++)
            o->data[k] = 1e30f;
        bufs[n_inputs + i] = input_buffer(d, out->out[i]);
    }
    pf_binding_free(&b);
    double t0 = pf_now_ms();
    int rc = pf_variant_run(v, bufs, &err);
    out->ms = pf_now_ms() - t0;
    if (rc != 0)
        fprintf(stderr, "run: %s\n", err.msg);
    return rc;
}

static int run_with(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                    const pf_compile_options *o, pf_image **inputs, int n_inputs, cg_run *out)
{
    memset(out, 0, sizeof *out);
    pf_variant *v = cg_compile(prog, params, plan, o);
    if (!v)
        return -1;
    int rc = cg_run_variant(v, prog, params, inputs, n_inputs, out);
    pf_variant_free(v);
    return rc;
}

void cg_run_free(cg_run *r)
{
    for (int i = 0; i < r->n_out; i++)
        pf_image_free(r->out[i]);
    r->n_out = 0;
}

double cg_diff_options(const pf_program *prog, pf_image *in, const pf_compile_options o[2],
                       pf_variant_stats st[2])
{
    return cg_diff_schedule_options(prog, NULL, in, o, st);
}

double cg_diff_schedule_options(const pf_program *prog, const char *schedule, pf_image *in,
                                const pf_compile_options o[2], pf_variant_stats st[2])
{
    pf_param_values pv;
    pf_params_init(&pv, prog);
    cg_run r[2] = { { 0 }, { 0 } };
    double d = 0;
    pf_plan *plan = cg_plan(prog, schedule);
    for (int k = 0; k < 2; k++) {
        pf_variant *v = cg_compile(prog, &pv, plan, &o[k]);
        if (!v || cg_run_variant(v, prog, &pv, &in, 1, &r[k]) != 0)
            d = INFINITY;
        if (v)
            st[k] = pf_variant_get_stats(v);
        pf_variant_free(v);
    }
    for (int i = 0; d == 0 && i < r[0].n_out; i++) {
        double di = cg_max_abs_diff(r[0].out[i], r[1].out[i]);
        d = di > d || di != di ? di : d;
    }
    cg_run_free(&r[0]);
    cg_run_free(&r[1]);
    pf_plan_free(plan);
    pf_params_free(&pv);
    return d;
}

double cg_max_abs_diff(const pf_image *a, const pf_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels)
        return INFINITY;
    double m = 0;
    for (int c = 0; c < a->channels; c++)
        for (int y = 0; y < a->height; y++)
            for (int x = 0; x < a->width; x++) {
                float va = *pf_image_at(a, x, y, c), vb = *pf_image_at(b, x, y, c);
                if (va != va && vb != vb)
                    continue;  /* NaN in both (e.g. 0/0 where a grid cell got no sample) */
                double d = fabs((double)va - vb);
                if (d > m || d != d)
                    m = d != d ? INFINITY : d;
            }
    return m;
}

char *cg_ir_dump_collapsed(const pf_program *prog, const char *schedule, bool collapse)
{
    pf_error err;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_plan *plan = cg_plan(prog, schedule);
    pf_compile_options o = { 0 };
    o.dump_ir = pf_test_tmp("exec.ir");
    o.no_collapse = !collapse;
    pf_variant *v = pf_variant_build(prog, &pv, plan, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_variant_free(v);
    pf_plan_free(plan);
    pf_params_free(&pv);
    char *text;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(o.dump_ir, 1 << 24, &text, NULL, &err), 0);
    return text;
}

char *cg_ir_dump(const pf_program *prog, const char *schedule)
{
    return cg_ir_dump_collapsed(prog, schedule, false);
}

int cg_count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}
