/* Adaptive sampling's coarse mask as a GPU kernel (docs/gpu.md §5): for a stage on the GPU the
 * mask pf_srt_adaptive_coarse would build on the host (and the CUDA backend upload each call)
 * is a loop nest of 32 x 8 blocks, a mask element a thread. The other mask calls (the
 * adaptive refinement, importance sampling) stay runtime calls: the CUDA host runs them. */
#include "codegen/lower_internal.h"

#include "codegen/ir_simplify.h"

enum { MASK_TX = 32, MASK_TY = 8 };

static ir_expr *i32(ir_func *f, int v)
{
    return ir_const_i32(f, v);
}

/* Whether j (in [0, n)) is the coarse position of its k-tile: j == min(k*(j/k) + k/2, n - 1),
 * pf_rt_adaptive_coarse_pos (reconstruct/runtime.h); every tile has exactly that one. */
static ir_expr *coarse_at(ir_func *f, ir_expr *j, ir_expr *n, int k)
{
    ir_expr *tile = irf_bin(f, IR_DIV, j, i32(f, k));
    ir_expr *centre = irf_bin(f, IR_ADD, irf_bin(f, IR_MUL, tile, i32(f, k)), i32(f, k / 2));
    ir_expr *pos = irf_bin(f, IR_MIN, centre, irf_bin(f, IR_SUB, n, i32(f, 1)));
    return irf_bin(f, IR_EQ, j, pos);
}

static ir_stmt *gpu_loop(ir_func *f, ir_var *v, ir_expr *lo, ir_expr *hi, int step,
                         ir_loop_kind kind, int dim, int width, ir_stmt *body)
{
    ir_stmt *s = ir_for(f, v, lo, hi, i32(f, step), kind, body);
    s->gpu_dim = dim;
    s->width = width;
    return s;
}

ir_stmt *lower_gpu_coarse_mask(lower_ctx *c, ir_buffer *mask, ir_expr *n1, ir_expr *n2, int k)
{
    ir_func *f = c->f;
    ir_var *x = ir_var_new(f, "mx", IR_I32, IR_VAR_LOOP), *y = ir_var_new(f, "my", IR_I32,
                                                                         IR_VAR_LOOP);
    ir_var *xo = ir_var_new(f, "mxo", IR_I32, IR_VAR_LOOP), *yo = ir_var_new(f, "myo", IR_I32,
                                                                           IR_VAR_LOOP);
    ir_expr *idx[2] = { ir_ref(f, x), ir_ref(f, y) };
    ir_expr *coarse = irf_bin(f, IR_AND, coarse_at(f, idx[0], n1, k), coarse_at(f, idx[1], n2, k));
    ir_stmt *s = ir_store(f, mask, idx, irf_select(f, coarse, ir_const_f32(f, 2.0f),
                                                   ir_const_f32(f, 0.0f)), 0, false);
    ir_expr *xe = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, ir_ref(f, xo), i32(f, MASK_TX)), n1);
    ir_expr *ye = irf_bin(f, IR_MIN, irf_bin(f, IR_ADD, ir_ref(f, yo), i32(f, MASK_TY)), n2);
    s = gpu_loop(f, x, ir_ref(f, xo), xe, 1, IR_LOOP_GPU_THREAD, 0, MASK_TX, s);
    s = gpu_loop(f, y, ir_ref(f, yo), ye, 1, IR_LOOP_GPU_THREAD, 1, MASK_TY, s);
    s = gpu_loop(f, xo, i32(f, 0), n1, MASK_TX, IR_LOOP_GPU_BLOCK, 0, 1, s);
    s = gpu_loop(f, yo, i32(f, 0), n2, MASK_TY, IR_LOOP_GPU_BLOCK, 1, 1, s);
    s->text = "adaptive coarse mask";
    return s;
}
