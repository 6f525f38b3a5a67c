/* Kernels that lowering makes for runtime work on the GPU (the Gaussian reconstruction of
 * codegen/lower_gauss_gpu.c, the channel copy below): the grid of a kernel over a 2-D range
 * of points and a range of planes, and views of a stage's lattice.
 *
 * A kernel is the usual GPU nest (docs/gpu.md §2): block loops over tiles of threads, thread
 * loops inside, the planes the grid's z; run serially on the CPU it is the same loop nest. */
#include "codegen/lower_internal.h"

ir_stmt *lower_gpu_kernel(lower_ctx *c, const lower_gpu_range *r, ir_stmt *body)
{
    ir_func *f = c->f;
    ir_stmt *s = body;
    ir_var *blk[2] = { NULL, NULL };
    for (int d = 0; d < 2; d++) {
        if (!r->v[d])
            continue;
        blk[d] = ir_var_new(f, d == 0 ? "kxo" : "kyo", IR_I32, IR_VAR_LOOP);
        ir_expr *end = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, ir_ref(f, blk[d]),
                                                  ir_const_i32(f, r->threads[d])), r->n[d]);
        s = ir_for(f, r->v[d], ir_ref(f, blk[d]), end, NULL, IR_LOOP_GPU_THREAD, s);
        s->gpu_dim = d;
        s->width = r->threads[d];
    }
    for (int d = 0; d < 2; d++) {
        if (!r->v[d])
            continue;
        s = ir_for(f, blk[d], ir_const_i32(f, 0), r->n[d], ir_const_i32(f, r->threads[d]),
                   IR_LOOP_GPU_BLOCK, s);
        s->gpu_dim = d;
    }
    if (r->z) {
        s = ir_for(f, r->z, r->z_lo ? r->z_lo : ir_const_i32(f, 0), r->z_n, NULL,
                   IR_LOOP_GPU_BLOCK, s);
        s->gpu_dim = 2;
    }
    return s;
}

void lower_gpu_view(lower_view *v, lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                    ir_buffer *img)
{
    v->img = img;
    v->nd = img->ndims;
    for (int d = 0; d < v->nd; d++) {
        bool lattice = d < st->n_vars;
        v->lo[d] = lattice ? L->lo[d] : NULL;
        v->step[d] = lattice ? L->step[d] : NULL;
        v->n[d] = lattice ? L->n[d] : ir_ref(c->f, img->extent[d]);
    }
}

void lower_gpu_view_index(ir_func *f, const lower_view *v, ir_expr *const *j, ir_expr **i)
{
    for (int d = 0; d < v->nd; d++)
        i[d] = v->lo[d] ? irf_bin(f, IR_ADD, v->lo[d], irf_bin(f, IR_MUL, j[d], v->step[d]))
                        : j[d];
}

/* ---- channel subsampling's copy (pf_srt_copy_channels) ----
 *
 * Every element of the view whose channel (the last dimension, which the stage's last variable
 * runs over: docs/schedule.md §3 rule 7) is c0 or more takes the reference image's element at
 * the same image point, each index clamped into the reference's extents: a point a thread, the
 * channels the grid's z. */
bool lower_copy_channels_gpu(lower_ctx *c, const pf_stage *st, const lower_lattice *L,
                             ir_buffer *img, ir_buffer *ref, int c0)
{
    ir_func *f = c->f;
    if (!pf_plan_has_gpu(c->plan) || c->region || img->ndims != 3 || st->n_vars != 3 ||
        ref->ndims != 3 || img->window || ref->window)
        return false;
    lower_view v;
    lower_gpu_view(&v, c, st, L, img);
    ir_var *x = ir_var_new(f, "cx", IR_I32, IR_VAR_LOOP), *y = ir_var_new(f, "cy", IR_I32,
                                                                       IR_VAR_LOOP);
    ir_var *ch = ir_var_new(f, "cc", IR_I32, IR_VAR_LOOP);
    ir_expr *j[3] = { ir_ref(f, x), ir_ref(f, y), ir_ref(f, ch) }, *i[3], *ri[3];
    lower_gpu_view_index(f, &v, j, i);
    for (int d = 0; d < 3; d++) {
        ir_expr *last = irf_bin(f, IR_SUB, ir_ref(f, ref->extent[d]), ir_const_i32(f, 1));
        ri[d] = irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, i[d], ir_const_i32(f, 0)), last);
    }
    ir_stmt *body = ir_store(f, img, i, ir_load(f, ref, ri, 0), 0, false);
    lower_gpu_range r = { { x, y }, { v.n[0], v.n[1] }, { 64, 4 }, ch, ir_const_i32(f, c0),
                          v.n[2] };
    lower_emit(c, lower_gpu_kernel(c, &r, body));
    return true;
}
