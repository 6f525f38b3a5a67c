/* The reference interpreter's driver (interp/interp.h): checks the caller's buffers against the
 * binding, allocates and zeroes images, evaluates pipeline scalars and runs stages in program
 * order. Translation lives in interp_compile*.c, execution in interp_exec.c and
 * interp_stage.c.
 *
 * Where docs/language.md leaves a choice open, the interpreter does this (and backends must
 * agree):
 *  - sum(e, i = a .. b) starts from +0 and adds each term in ascending i; min/max reductions
 *    start from their identity and take acc = min(acc, e) / max(acc, e), the builtins with acc
 *    first, so NaN terms are ignored (an all-NaN range gives the identity).
 *  - sort and median use lang/builtins.c's stable insertion sort by `<` (a NaN stays in place
 *    and stops smaller elements from moving past it).
 *  - `over` ranges are the progression lo, lo + step, ... <= hi, anchored at lo, keeping the
 *    values inside [0, extent - 1].
 *  - Any image write outside the image is dropped, not only scatters (a non-serial stage can
 *    still compute a bad trailing index, e.g. a channel); a compound write there reads nothing.
 *  - Every stage iterates in the serial order (last variable outermost); non-serial stages may
 *    be split among threads, which cannot change any element.
 * Approximated programs follow docs/perforation.md; interp_approx.c and interp_ondemand.c say
 * how each approximation of the plan is executed. */
#include "interp/interp.h"

#include "interp/interp_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- images ---- */

/* The view of a caller's buffer as image `d` with the bound extents `ext`: extra trailing
 * dimensions of the buffer must be 1 (a grey pf_image is a W x H x 1 view of a [W, H] image). */
static int attach_buffer(pf_iimage *im, const pf_image_decl *d, const int64_t *ext,
                         const pf_buffer *buf, pf_error *err)
{
    if (!buf || !buf->data || buf->ndims < 1 || buf->ndims > PF_BUFFER_MAX_DIMS)
        return pf_fail(err, "image '%s': no buffer given", d->name);
    for (int k = 0; k < PF_MAX_DIMS; k++) {
        int64_t have = k < buf->ndims ? buf->extent[k] : 1;
        int64_t want = k < d->ndims ? ext[k] : 1;
        if (have != want)
            return pf_fail(err, "image '%s': dimension %d has extent %" PRId64
                           ", the pipeline expects %" PRId64, d->name, k, have, want);
        im->extent[k] = want;
        im->stride[k] = k < buf->ndims ? buf->stride[k] : 0;
    }
    im->data = buf->data;
    return 0;
}

static void zero_buffer(const pf_iimage *im)
{
    const int64_t *e = im->extent, *s = im->stride;
    for (int64_t i3 = 0; i3 < e[3]; i3++)
        for (int64_t i2 = 0; i2 < e[2]; i2++)
            for (int64_t i1 = 0; i1 < e[1]; i1++) {
                float *row = im->data + i3 * s[3] + i2 * s[2] + i1 * s[1];
                for (int64_t i0 = 0; i0 < e[0]; i0++)
                    row[i0 * s[0]] = 0.0f;
            }
}

static int alloc_local(pf_iimage *im, const pf_image_decl *d, const int64_t *ext, pf_error *err)
{
    int64_t n = 1;
    for (int k = 0; k < PF_MAX_DIMS; k++) {
        im->extent[k] = k < d->ndims ? ext[k] : 1;
        if (im->extent[k] < 1 || im->extent[k] > PF_MAX_IMAGE_ELEMS)
            return pf_fail(err, "image '%s': dimension %d has extent %" PRId64, d->name, k,
                           im->extent[k]);
        im->stride[k] = n;
        n *= im->extent[k];
        if (n > PF_MAX_IMAGE_ELEMS)
            return pf_fail(err, "image '%s' has more than 2^31 elements", d->name);
    }
    im->data = calloc((size_t)n, sizeof(float));
    if (!im->data)
        return pf_fail(err, "image '%s': out of memory for %" PRId64 " elements", d->name, n);
    return 0;
}

/* An image stored on demand gets its extents now and its (downsampled) data when its writer
 * starts (interp_ondemand.c): only then is the writer's lattice known. */
static int setup_on_demand(pf_iimage *im, const pf_image_decl *d, const int64_t *ext,
                           pf_error *err)
{
    for (int k = 0; k < PF_MAX_DIMS; k++) {
        im->extent[k] = k < d->ndims ? ext[k] : 1;
        if (im->extent[k] < 1 || im->extent[k] > PF_MAX_IMAGE_ELEMS)
            return pf_fail(err, "image '%s': dimension %d has extent %" PRId64, d->name, k,
                           im->extent[k]);
    }
    im->od = pf_xcalloc(1, sizeof *im->od);
    return 0;
}

static int setup_images(pf_ictx *x, const pf_program *prog, const pf_binding *b,
                        const pf_buffer *inputs, const pf_buffer *outputs, pf_error *err)
{
    for (int i = 0; i < prog->n_images; i++) {
        const pf_image_decl *d = prog->images[i];
        pf_iimage *im = &x->images[d->index];
        im->ndims = d->ndims;
        im->boundary = d->boundary;
        im->constant = d->constant_value;
        const int64_t *ext = b->extents[d->index];
        int rc;
        if (x->ic->od_writer[d->index])
            rc = setup_on_demand(im, d, ext, err);
        else if (d->role == PF_IMAGE_INPUT)
            rc = attach_buffer(im, d, ext, &inputs[d->role_index], err);
        else if (d->role == PF_IMAGE_OUTPUT)
            rc = attach_buffer(im, d, ext, &outputs[d->role_index], err);
        else
            rc = alloc_local(im, d, ext, err);
        if (rc)
            return -1;
        if (d->role == PF_IMAGE_OUTPUT)
            zero_buffer(im);
    }
    return 0;
}

static void free_images(pf_ictx *x, const pf_program *prog)
{
    for (int i = 0; x->images && i < prog->n_images; i++) {
        pf_iimage *im = &x->images[prog->images[i]->index];
        if (prog->images[i]->role == PF_IMAGE_LOCAL)
            free(im->data);
        free(im->od);
    }
    free(x->images);
}

/* ---- frames ---- */

static pf_value *new_frame(const pf_iunit *u, const pf_ictx *x)
{
    pf_value *f = pf_xcalloc((size_t)u->n_slots + 1, sizeof *f);
    pf_iunit_fill(u, x, f);
    return f;
}

void pf_ictx_own_frames(pf_ictx *x)
{
    const pf_program *prog = x->ic->prog;
    x->func_frames = pf_xcalloc((size_t)prog->n_funcs + 1, sizeof *x->func_frames);
    for (int i = 0; i < prog->n_funcs; i++)
        x->func_frames[i] = new_frame(&x->ic->funcs[i], x);
}

void pf_ictx_free_frames(pf_ictx *x)
{
    for (int i = 0; x->func_frames && i < x->ic->prog->n_funcs; i++)
        free(x->func_frames[i]);
    free(x->func_frames);
    x->func_frames = NULL;
}

static void run_scalar(pf_ictx *x, const pf_symbol *sym, pf_value *scalars)
{
    const pf_iunit *u = &x->ic->scalars[sym->index];
    pf_value *F = new_frame(u, x);
    pf_iexec(x, u, 0, F);
    scalars[sym->index] = F[u->result_slot];
    free(F);
}

static int run_items(pf_ictx *x, const pf_program *prog, const pf_binding *b, pf_error *err)
{
    pf_value *scalars = pf_xcalloc((size_t)prog->n_scalars + 1, sizeof *scalars);
    x->scalars = scalars;
    int rc = 0;
    for (int i = 0; i < prog->n_items && rc == 0; i++) {
        const pf_item *it = prog->items[i];
        if (it->kind == PF_ITEM_SCALAR)
            run_scalar(x, it->scalar_sym, scalars);
        else if (it->kind == PF_ITEM_STAGE)
            rc = pf_istage_run(x, it->stage, b->extents[it->stage->image->image->index], err);
    }
    x->scalars = NULL;
    free(scalars);
    return rc;
}

/* ---- entry points ---- */

static int check_run_args(const pf_program *prog, const pf_param_values *params,
                          const pf_binding *b, pf_error *err)
{
    if (!prog || !prog->checked)
        return pf_fail(err, "interpreter: the program has not been checked");
    if (!params || params->n != prog->n_params)
        return pf_fail(err, "interpreter: parameter values do not match the program");
    if (b && (b->n_images != prog->n_images || b->n_sizes != prog->n_sizes))
        return pf_fail(err, "interpreter: the binding does not match the program");
    return 0;
}

int pf_interp_run(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                  const pf_binding *binding, const pf_buffer *inputs, const pf_buffer *outputs,
                  pf_error *err)
{
    if (check_run_args(prog, params, binding, err))
        return -1;
    if (!binding)
        return pf_fail(err, "interpreter: no binding");
    if (plan && plan->prog != prog)
        return pf_fail(err, "interpreter: the plan is of another program");
    pf_icode ic;
    if (pf_icode_build(&ic, prog, plan, err))
        return -1;
    pf_ictx x = { .ic = &ic, .params = params->values, .sizes = binding->sizes };
    x.images = pf_xcalloc((size_t)prog->n_images + 1, sizeof *x.images);
    int rc = setup_images(&x, prog, binding, inputs, outputs, err);
    if (rc == 0) {
        pf_ictx_own_frames(&x);
        rc = run_items(&x, prog, binding, err);
        pf_ictx_free_frames(&x);
    }
    free_images(&x, prog);
    pf_icode_free(&ic);
    return rc;
}

int pf_interp_call(const pf_program *prog, const pf_param_values *params, const pf_func *f,
                   const pf_value *args, pf_value *result, pf_error *err)
{
    if (check_run_args(prog, params, NULL, err))
        return -1;
    int fi = -1;
    for (int i = 0; i < prog->n_funcs; i++)
        if (prog->funcs[i] == f)
            fi = i;
    if (fi < 0)
        return pf_fail(err, "interpreter: the function is not part of the program");
    pf_icode ic;
    if (pf_icode_build(&ic, prog, NULL, err))
        return -1;
    pf_ictx x = { .ic = &ic, .params = params->values };
    pf_ictx_own_frames(&x);
    pf_value *F = x.func_frames[fi];
    for (int i = 0; i < f->n_params; i++)
        F[i] = args[i];
    pf_iexec(&x, &ic.funcs[fi], 0, F);
    *result = x.ret;
    pf_ictx_free_frames(&x);
    pf_icode_free(&ic);
    return 0;
}
