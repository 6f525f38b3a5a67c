/* LLVM emission of the calls into the stage runtime (reconstruct/stage_rt.h): lattice views
 * and reconstruction parameters are built on the stack, and a failing call makes the pipeline
 * return 3. */
#include "codegen/llvm_internal.h"

#include "base/error.h"

static void store_field(emit *e, LLVMTypeRef st, LLVMValueRef p, int field, int d,
                        LLVMValueRef v)
{
    LLVMValueRef f = LLVMBuildStructGEP2(e->b, st, p, (unsigned)field, "");
    if (field >= 2) {
        LLVMValueRef idx[2] = { em_i64(e, 0), em_i64(e, d) };
        f = LLVMBuildInBoundsGEP2(e->b, LLVMArrayType(e->t_i64, 4), f, idx, 2, "");
    }
    LLVMBuildStore(e->b, v, f);
}

/* A pf_buffer on the stack describing b, or its lattice view when `view` gives (lo, step, n)
 * for the first k dimensions (docs/perforation.md §1). */
static LLVMValueRef em_view(emit *e, const ir_buffer *b, ir_expr *const *view, int k)
{
    LLVMTypeRef st = buffer_struct(e);
    LLVMValueRef p = entry_alloca(e, st, "view");
    LLVMValueRef off = em_i64(e, 0);
    for (int d = 0; d < 4; d++) {
        LLVMValueRef ext = em_i64(e, 1), stride = em_i64(e, 0);
        if (d < b->ndims) {
            ext = LLVMBuildSExt(e->b, em_var(e, b->extent[d]), e->t_i64, "");
            stride = em_var(e, b->stride[d]);
        }
        if (d < k) {
            LLVMValueRef lo = LLVMBuildSExt(e->b, em_expr(e, view[3 * d]), e->t_i64, "");
            LLVMValueRef step = LLVMBuildSExt(e->b, em_expr(e, view[3 * d + 1]), e->t_i64, "");
            off = LLVMBuildAdd(e->b, off, LLVMBuildMul(e->b, lo, stride, ""), "");
            ext = LLVMBuildSExt(e->b, em_expr(e, view[3 * d + 2]), e->t_i64, "");
            stride = LLVMBuildMul(e->b, stride, step, "");
        }
        store_field(e, st, p, 2, d, ext);
        store_field(e, st, p, 3, d, stride);
    }
    LLVMValueRef data = LLVMBuildGEP2(e->b, e->t_f32, e->buf_data[b->id], &off, 1, "");
    store_field(e, st, p, 0, 0, data);
    store_field(e, st, p, 1, 0, em_i32(e, b->ndims));
    return p;
}

/* An i64 array on the stack from every `stride`-th of n i32 expressions. */
static LLVMValueRef i64_list(emit *e, ir_expr *const *vals, int n, int stride)
{
    LLVMValueRef arr = entry_alloca(e, LLVMArrayType(e->t_i64, IR_MAX_DIMS), "list");
    for (int i = 0; i < n; i++) {
        LLVMValueRef v = LLVMBuildSExt(e->b, em_expr(e, vals[i * stride]), e->t_i64, "");
        LLVMValueRef idx = em_i64(e, i);
        LLVMBuildStore(e->b, v, LLVMBuildInBoundsGEP2(e->b, e->t_i64, arr, &idx, 1, ""));
    }
    return arr;
}

/* pf_recon_spec: { i32 sample, i32 recon, [4 x i32] spacing, i32 k, float frac, float sigma }
 * from the 9 scalar arguments in that order. */
static LLVMValueRef em_recon_spec(emit *e, ir_expr *const *a)
{
    LLVMTypeRef fields[6] = { e->t_i32, e->t_i32, LLVMArrayType(e->t_i32, 4), e->t_i32,
                              e->t_f32, e->t_f32 };
    LLVMTypeRef st = LLVMStructTypeInContext(e->ctx, fields, 6, 0);
    LLVMValueRef p = entry_alloca(e, st, "spec");
    static const int field_of[9] = { 0, 1, 2, 2, 2, 2, 3, 4, 5 };
    for (int i = 0; i < 9; i++) {
        LLVMValueRef f = LLVMBuildStructGEP2(e->b, st, p, (unsigned)field_of[i], "");
        if (field_of[i] == 2) {
            LLVMValueRef idx[2] = { em_i64(e, 0), em_i64(e, i - 2) };
            f = LLVMBuildInBoundsGEP2(e->b, LLVMArrayType(e->t_i32, 4), f, idx, 2, "");
        }
        LLVMBuildStore(e->b, em_expr(e, a[i]), f);
    }
    return p;
}

static void call_checked(emit *e, const char *name, LLVMTypeRef *ps, int n, LLVMValueRef *args)
{
    LLVMValueRef r = em_call_ext(e, name, e->t_i32, ps, n, args);
    LLVMBasicBlockRef ok = new_block(e, "srt_ok");
    LLVMValueRef bad = LLVMBuildICmp(e->b, LLVMIntSLT, r, em_i32(e, 0), "");
    LLVMBuildCondBr(e->b, bad, e->rt_fail_bb, ok);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

static LLVMValueRef data(emit *e, const ir_stmt *s, int i)
{
    return i < s->n_bufs ? e->buf_data[s->bufs[i]->id] : LLVMConstNull(e->t_ptr);
}

void em_stage_rt(emit *e, const ir_stmt *s)
{
    LLVMTypeRef P = e->t_ptr, I = e->t_i32, F = e->t_f32;
    int k = s->view_dims;
    ir_expr *const *a = s->args;
    switch (s->rt) {
    case IR_RT_IMPORTANCE_MASK: {
        LLVMValueRef args[9] = { em_view(e, s->bufs[0], NULL, 0), i64_list(e, a, 2, 2),
                                 i64_list(e, a + 1, 2, 2), em_expr(e, a[4]), em_expr(e, a[5]),
                                 em_expr(e, a[6]), em_expr(e, a[7]), data(e, s, 1),
                                 data(e, s, 2) };
        LLVMTypeRef ps[9] = { P, P, P, I, I, F, F, P, P };
        call_checked(e, "pf_rt_importance_mask_threaded", ps, 9, args);
        return;
    }
    case IR_RT_ADAPTIVE_COARSE: {
        LLVMValueRef args[4] = { em_expr(e, a[0]), em_expr(e, a[1]), em_expr(e, a[2]),
                                 data(e, s, 0) };
        LLVMTypeRef ps[4] = { I, I, I, P };
        call_checked(e, "pf_rt_adaptive_coarse_threaded", ps, 4, args);
        return;
    }
    case IR_RT_ADAPTIVE_REFINE: {
        LLVMValueRef args[5] = { em_view(e, s->bufs[0], a, k), em_expr(e, a[3 * k]),
                                 em_expr(e, a[3 * k + 1]), data(e, s, 1), data(e, s, 2) };
        LLVMTypeRef ps[5] = { P, I, F, P, P };
        call_checked(e, "pf_rt_adaptive_refine_threaded", ps, 5, args);
        return;
    }
    case IR_RT_RECONSTRUCT: {
        LLVMValueRef args[4] = { em_view(e, s->bufs[0], a, k), em_recon_spec(e, a + 3 * k),
                                 data(e, s, 1), data(e, s, 2) };
        LLVMTypeRef ps[4] = { P, P, P, P };
        call_checked(e, "pf_rt_reconstruct", ps, 4, args);
        return;
    }
    case IR_RT_COPY_CHANNELS: {
        LLVMValueRef args[6] = { em_view(e, s->bufs[0], a, k), em_i32(e, k),
                                 i64_list(e, a, k, 3), i64_list(e, a + 1, k, 3),
                                 em_view(e, s->bufs[1], NULL, 0), em_expr(e, a[3 * k]) };
        LLVMTypeRef ps[6] = { P, I, P, P, P, I };
        call_checked(e, "pf_rt_copy_channels", ps, 6, args);
        return;
    }
    default:
        pf_die("LLVM emission: runtime call %d", (int)s->rt);
    }
}
