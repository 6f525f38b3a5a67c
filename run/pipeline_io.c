/* Binding programs to images (see pipeline_io.h). */
#include "run/pipeline_io.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The value of a constant extent, or -1 for an extent that depends on a size name. */
static int64_t constant_extent(const pf_program *prog, const pf_param_values *params,
                               const pf_expr *e)
{
    if (e->kind == PF_E_NAME && e->sym && e->sym->kind == PF_SYM_SIZE)
        return -1;
    int32_t *sizes = calloc((size_t)prog->n_sizes + 1, sizeof *sizes);
    pf_value v;
    int rc = pf_eval_const_expr(e, params, sizes, &v);
    free(sizes);
    return rc == 0 ? v.i : -1;
}

pf_image *pf_io_load_input(const pf_program *prog, const pf_param_values *params, int i,
                           const char *path, pf_error *err)
{
    const pf_image_decl *d = prog->inputs[i];
    if (d->ndims == 4) {
        pf_fail(err, "input '%s': 4-D images cannot be read from files", d->name);
        return NULL;
    }
    pf_image *img = pf_image_load(path, err);
    if (!img)
        return NULL;
    if (d->ndims == 3 && img->channels != 3 &&
        constant_extent(prog, params, d->extents[2]) == 3) {
        pf_image *rgb = pf_image_to_rgb(img, err);
        pf_image_free(img);
        return rgb;
    }
    if (d->ndims <= 2 && img->channels != 1) {
        pf_fail(err, "input '%s' is a grey image (%d dimensions) but %s has %d channels",
                d->name, d->ndims, path, img->channels);
        pf_image_free(img);
        return NULL;
    }
    if (d->ndims == 1 && img->height != 1) {
        pf_fail(err, "input '%s' is 1-D (one row) but %s has %d rows", d->name, path,
                img->height);
        pf_image_free(img);
        return NULL;
    }
    return img;
}

static pf_buffer view(const pf_image_decl *d, const pf_image *img)
{
    pf_buffer b = pf_image_buffer(img, d->ndims <= 2);
    b.ndims = d->ndims;
    return b;
}

/* Output [W, H, C] is a W x H image with C channels, [W, H] a grey one, [N] one row. */
static int make_output(pf_io *io, const pf_program *prog, int i, pf_error *err)
{
    const pf_image_decl *d = prog->outputs[i];
    const int64_t *e = io->binding.extents[d->index];
    if (d->ndims == 4)
        return pf_fail(err, "output '%s': 4-D images cannot be stored as images", d->name);
    int64_t w = e[0], h = d->ndims >= 2 ? e[1] : 1, c = d->ndims == 3 ? e[2] : 1;
    if (c > 4)
        return pf_fail(err, "output '%s' has %lld channels; an image holds 1 to 4", d->name,
                       (long long)c);
    if (w > PF_IMAGE_MAX_SIDE || h > PF_IMAGE_MAX_SIDE)
        return pf_fail(err, "output '%s' is too large (%lld x %lld)", d->name, (long long)w,
                       (long long)h);
    io->out[i] = pf_image_new((int)w, (int)h, (int)c, err);
    if (!io->out[i])
        return -1;
    io->buf[prog->n_inputs + i] = view(d, io->out[i]);
    return 0;
}

int pf_io_bind(pf_io *io, const pf_program *prog, const pf_param_values *params,
               pf_image **inputs, pf_error *err)
{
    memset(io, 0, sizeof *io);
    if (prog->n_inputs > PF_IO_MAX || prog->n_outputs > PF_IO_MAX) {
        for (int i = 0; i < prog->n_inputs; i++)
            pf_image_free(inputs[i]);
        return pf_fail(err, "pipeline '%s' has more than %d inputs or outputs", prog->name,
                       PF_IO_MAX);
    }
    io->n_in = prog->n_inputs;
    io->n_out = prog->n_outputs;
    int64_t ext[PF_IO_MAX][PF_MAX_DIMS];
    for (int i = 0; i < prog->n_inputs; i++) {
        io->in[i] = inputs[i];
        io->buf[i] = view(prog->inputs[i], inputs[i]);
        for (int k = 0; k < PF_MAX_DIMS; k++)
            ext[i][k] = k < io->buf[i].ndims ? io->buf[i].extent[k] : 1;
    }
    if (pf_bind(prog, params, (const int64_t(*)[PF_MAX_DIMS])ext, &io->binding, err)) {
        pf_io_free(io);
        return -1;
    }
    io->bound = true;
    for (int i = 0; i < prog->n_outputs; i++)
        if (make_output(io, prog, i, err)) {
            pf_io_free(io);
            return -1;
        }
    return 0;
}

int pf_io_check_output_name(const char *path, pf_error *err)
{
    const char *dot = strrchr(path, '.');
    if (dot && (strcasecmp(dot, ".png") == 0 || strcasecmp(dot, ".jpg") == 0 ||
                strcasecmp(dot, ".jpeg") == 0))
        return 0;
    return pf_fail(err, "%s: cannot tell the format from the extension (use .png, .jpg or "
                   ".jpeg)", path);
}

void pf_io_free(pf_io *io)
{
    for (int i = 0; i < PF_IO_MAX; i++) {
        pf_image_free(io->in[i]);
        pf_image_free(io->out[i]);
    }
    if (io->bound)
        pf_binding_free(&io->binding);
    memset(io, 0, sizeof *io);
}
