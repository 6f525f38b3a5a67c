/* Helpers shared by the interpreter's test files (see test_interp_util.h). */
#include "tests/interp/test_interp_util.h"

#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ti_image ti_new(int ndims, int64_t e0, int64_t e1, int64_t e2, int64_t e3)
{
    ti_image im = { ndims, { e0, e1, e2, e3 }, NULL };
    for (int d = ndims; d < 4; d++)
        im.ext[d] = 1;
    im.data = calloc((size_t)(im.ext[0] * im.ext[1] * im.ext[2] * im.ext[3]), sizeof(float));
    return im;
}

ti_image ti_vec(int n, const float *values)
{
    ti_image im = ti_new(1, n, 1, 1, 1);
    memcpy(im.data, values, sizeof(float) * (size_t)n);
    return im;
}

void ti_free(ti_image *im)
{
    free(im->data);
    im->data = NULL;
}

static int64_t ti_offset(const ti_image *im, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return i0 + im->ext[0] * (i1 + im->ext[1] * (i2 + im->ext[2] * i3));
}

float ti_at(const ti_image *im, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return im->data[ti_offset(im, i0, i1, i2, i3)];
}

void ti_set(ti_image *im, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v)
{
    im->data[ti_offset(im, i0, i1, i2, i3)] = v;
}

static pf_buffer ti_buffer(const ti_image *im)
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

pf_program *ti_compile(const char *src)
{
    pf_error err;
    pf_program *p = pf_compile_string("test.pf", src, &err);
    if (!p)
        fprintf(stderr, "\n--- compile failed:\n%s\n", err.msg);
    return p;
}

static int ti_bind(const pf_program *prog, const pf_param_values *pv, ti_image *ins,
                   pf_binding *b, pf_error *err)
{
    int64_t (*ext)[PF_MAX_DIMS] = calloc((size_t)prog->n_inputs + 1, sizeof *ext);
    for (int i = 0; i < prog->n_inputs; i++)
        for (int d = 0; d < PF_MAX_DIMS; d++)
            ext[i][d] = ins[i].ext[d];
    int rc = pf_bind(prog, pv, (const int64_t(*)[PF_MAX_DIMS])ext, b, err);
    free(ext);
    return rc;
}

static void ti_alloc_outputs(const pf_program *prog, const pf_binding *b, ti_image *outs,
                             pf_buffer *out_bufs)
{
    for (int i = 0; i < prog->n_outputs; i++) {
        const pf_image_decl *d = prog->outputs[i];
        const int64_t *e = b->extents[d->index];
        outs[i] = ti_new(d->ndims, e[0], e[1], e[2], e[3]);
        int64_t n = outs[i].ext[0] * outs[i].ext[1] * outs[i].ext[2] * outs[i].ext[3];
        for (int64_t k = 0; k < n; k++)
            outs[i].data[k] = 99.0f;
        out_bufs[i] = ti_buffer(&outs[i]);
    }
}

int ti_run(const pf_program *prog, const char *const *params, int n_params, ti_image *ins,
           ti_image *outs, pf_error *err)
{
    memset(outs, 0, sizeof *outs * (size_t)prog->n_outputs);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    int rc = 0;
    for (int i = 0; i < n_params && rc == 0; i++)
        rc = pf_params_set(&pv, prog, params[i], err);
    pf_binding b;
    if (rc == 0 && ti_bind(prog, &pv, ins, &b, err) == 0) {
        pf_buffer *in_bufs = calloc((size_t)prog->n_inputs + 1, sizeof *in_bufs);
        pf_buffer *out_bufs = calloc((size_t)prog->n_outputs + 1, sizeof *out_bufs);
        for (int i = 0; i < prog->n_inputs; i++)
            in_bufs[i] = ti_buffer(&ins[i]);
        ti_alloc_outputs(prog, &b, outs, out_bufs);
        rc = pf_interp_run(prog, &pv, NULL, &b, in_bufs, out_bufs, err);
        free(in_bufs);
        free(out_bufs);
        pf_binding_free(&b);
    } else {
        rc = -1;
    }
    pf_params_free(&pv);
    return rc;
}

int ti_run_src(const char *src, ti_image *ins, ti_image *outs)
{
    pf_program *p = ti_compile(src);
    if (!p)
        return -1;
    pf_error err;
    int rc = ti_run(p, NULL, 0, ins, outs, &err);
    if (rc)
        fprintf(stderr, "\n--- run failed: %s\n", err.msg);
    pf_program_free(p);
    return rc;
}

pf_value ti_call(const pf_program *prog, const char *name, int n, const pf_value *args)
{
    pf_value r;
    memset(&r, 0, sizeof r);
    const pf_func *f = NULL;
    for (int i = 0; i < prog->n_funcs; i++)
        if (strcmp(prog->funcs[i]->name, name) == 0)
            f = prog->funcs[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(f->n_params, n);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_error err;
    int rc = pf_interp_call(prog, &pv, f, args, &r, &err);
    if (rc)
        fprintf(stderr, "\n--- call failed: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    pf_params_free(&pv);
    return r;
}

pf_value ti_i(int32_t i)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.i = i;
    return v;
}

pf_value ti_f(float f)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.f = f;
    return v;
}

pf_value ti_b(bool b)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.b = b;
    return v;
}
