/* Binding a run: the inputs' actual extents give the size names their values; then every
 * output and intermediate image's extents are evaluated (shape expressions) and checked, with
 * messages that name the image and the dimension (numbered from 0). */
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>

static int bind_size(const pf_program *prog, const pf_image_decl *img, int d, int64_t ext,
                     pf_binding *b, bool *set, const pf_image_decl **setter, pf_error *err)
{
    const pf_symbol *s = img->extents[d]->sym;
    int k = s->index;
    if (!set[k]) {
        set[k] = true;
        setter[k] = img;
        b->sizes[k] = (int32_t)ext;
        return 0;
    }
    if (b->sizes[k] == ext)
        return 0;
    (void)prog;
    return pf_fail(err, "input '%s' has extent %lld in dimension %d, but size '%s' is %d "
                   "(from input '%s')", img->name, (long long)ext, d, s->name,
                   (int)b->sizes[k], setter[k]->name);
}

static int check_constant_extent(const pf_image_decl *img, int d, int64_t ext, pf_error *err)
{
    pf_value v;
    if (pf_eval_const_expr(img->extents[d], NULL, NULL, &v) != 0)
        return pf_fail(err, "extent %d of input '%s' cannot be evaluated", d, img->name);
    if (v.i == ext)
        return 0;
    if (d == img->ndims - 1 && img->ndims == 3)
        return pf_fail(err, "input '%s' has %lld channel(s) but the pipeline declares %d",
                       img->name, (long long)ext, (int)v.i);
    return pf_fail(err, "input '%s' has extent %lld in dimension %d but the pipeline declares "
                   "%d", img->name, (long long)ext, d, (int)v.i);
}

static int bind_inputs(const pf_program *prog, const int64_t input_extents[][PF_MAX_DIMS],
                       pf_binding *b, pf_error *err)
{
    bool *set = pf_xcalloc((size_t)prog->n_sizes + 1, sizeof *set);
    const pf_image_decl **setter = pf_xcalloc((size_t)prog->n_sizes + 1, sizeof *setter);
    int rc = 0;
    for (int i = 0; i < prog->n_inputs && rc == 0; i++) {
        const pf_image_decl *img = prog->inputs[i];
        for (int d = 0; d < img->ndims && rc == 0; d++) {
            int64_t ext = input_extents[i][d];
            b->extents[img->index][d] = ext;
            if (ext < 1 || ext > PF_MAX_EXTENT)
                rc = pf_fail(err, "input '%s' has extent %lld in dimension %d (must be 1 to "
                             "%lld)", img->name, (long long)ext, d, (long long)PF_MAX_EXTENT);
            else if (img->extents[d]->kind == PF_E_NAME && img->extents[d]->sym &&
                     img->extents[d]->sym->kind == PF_SYM_SIZE)
                rc = bind_size(prog, img, d, ext, b, set, setter, err);
            else
                rc = check_constant_extent(img, d, ext, err);
        }
    }
    free(set);
    free(setter);
    return rc;
}

static int bind_image(const pf_image_decl *img, const pf_param_values *params,
                      pf_binding *b, pf_error *err)
{
    int64_t count = 1;
    for (int d = 0; d < img->ndims; d++) {
        pf_value v;
        if (pf_eval_const_expr(img->extents[d], params, b->sizes, &v) != 0)
            return pf_fail(err, "extent %d of image '%s' cannot be evaluated", d, img->name);
        if (v.i < 1)
            return pf_fail(err, "extent %d of image '%s' is %d (must be >= 1)", d, img->name,
                           (int)v.i);
        if (v.i > PF_MAX_EXTENT)
            return pf_fail(err, "extent %d of image '%s' is %d (at most %lld)", d, img->name,
                           (int)v.i, (long long)PF_MAX_EXTENT);
        b->extents[img->index][d] = v.i;
        count *= v.i;
        if (count > PF_MAX_IMAGE_ELEMS)
            return pf_fail(err, "image '%s' has more than 2^31 elements", img->name);
    }
    return 0;
}

static int check_input_size(const pf_image_decl *img, const pf_binding *b, pf_error *err)
{
    int64_t count = 1;
    for (int d = 0; d < img->ndims; d++) {
        count *= b->extents[img->index][d];
        if (count > PF_MAX_IMAGE_ELEMS)
            return pf_fail(err, "input '%s' has more than 2^31 elements", img->name);
    }
    return 0;
}

int pf_bind(const pf_program *prog, const pf_param_values *params,
            const int64_t input_extents[][PF_MAX_DIMS], pf_binding *out, pf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!prog->checked)
        return pf_fail(err, "the program has not been checked");
    if (params && params->n != prog->n_params)
        return pf_fail(err, "the param values do not belong to this program");
    out->n_images = prog->n_images;
    out->extents = pf_xcalloc((size_t)prog->n_images + 1, sizeof *out->extents);
    for (int i = 0; i < prog->n_images; i++)
        for (int d = 0; d < PF_MAX_DIMS; d++)
            out->extents[i][d] = 1;
    out->n_sizes = prog->n_sizes;
    out->sizes = pf_xcalloc((size_t)prog->n_sizes + 1, sizeof *out->sizes);
    pf_param_values defaults = {0};
    if (!params) {
        pf_params_init(&defaults, prog);
        params = &defaults;
    }
    int rc = bind_inputs(prog, input_extents, out, err);
    for (int i = 0; i < prog->n_inputs && rc == 0; i++)
        rc = check_input_size(prog->inputs[i], out, err);
    for (int i = prog->n_inputs; i < prog->n_images && rc == 0; i++)
        rc = bind_image(prog->images[i], params, out, err);
    pf_params_free(&defaults);
    if (rc != 0)
        pf_binding_free(out);
    return rc;
}

void pf_binding_free(pf_binding *b)
{
    free(b->extents);
    free(b->sizes);
    memset(b, 0, sizeof *b);
}
