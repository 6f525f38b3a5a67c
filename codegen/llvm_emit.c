/* LLVM emission of loop-IR statements and of the pipeline's entry points (see llvm_emit.h). */
#include "codegen/llvm_internal.h"

#include "base/arena.h"
#include "base/error.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


LLVMValueRef entry_alloca(emit *e, LLVMTypeRef t, const char *name)
{
    return LLVMBuildAlloca(e->ab, t, name);
}

LLVMBasicBlockRef new_block(emit *e, const char *name)
{
    return LLVMAppendBasicBlockInContext(e->ctx, e->fn, name);
}

static void em_block(emit *e, const ir_stmt *s)
{
    for (int i = 0; i < s->n; i++)
        em_stmt(e, s->body[i]);
}

static void em_mutable(emit *e, const ir_stmt *s)
{
    e->n_rows = 0;  /* cached row pointers may depend on the variable being changed */
    if (s->kind == IR_S_DECL)
        e->var[s->var->id] = entry_alloca(e, em_type(e, s->var->type), s->var->name);
    LLVMBuildStore(e->b, em_expr(e, s->value), e->var[s->var->id]);
}

static void em_array_decl(emit *e, const ir_stmt *s)
{
    const ir_var *a = s->var;
    LLVMTypeRef at = LLVMArrayType(em_type(e, a->type), (unsigned)a->array_len);
    LLVMValueRef p = entry_alloca(e, at, a->name);
    e->var[a->id] = p;
    LLVMBuildMemSet(e->b, p, LLVMConstInt(e->t_i8, 0, 0), em_i64(e, 4 * (int64_t)a->array_len),
                    4);
}

static void em_sort(emit *e, const ir_stmt *s)
{
    const ir_var *a = s->var;
    LLVMValueRef n = em_expr(e, s->value);
    LLVMValueRef lo[2] = { n, em_i32(e, 0) };
    n = em_intrinsic(e, "llvm.smax", e->t_i32, lo, 2);
    LLVMValueRef hi[2] = { n, em_i32(e, a->array_len) };
    n = em_intrinsic(e, "llvm.smin", e->t_i32, hi, 2);
    LLVMValueRef args[2] = { e->var[a->id], n };
    LLVMTypeRef ps[2] = { e->t_ptr, e->t_i32 };
    em_call_known(e, a->type == IR_F32 ? "pf_rt_sort_f32" : "pf_rt_sort_i32", e->t_void, ps, 2,
                  args, EM_MEMORY_ARGS);
}

/* v into the element at p: a plain store, or in a GPU kernel an atomic store's addend added
 * with one atomic read-modify-write (the cell's other adders may run concurrently; the
 * result is unused, so PTX gets a `red.add.f32`). */
static void em_store_at(emit *e, const ir_stmt *s, LLVMValueRef v, LLVMValueRef p)
{
    if (s->atomic && e->gpu)
        LLVMBuildAtomicRMW(e->b, LLVMAtomicRMWBinOpFAdd, p, v, LLVMAtomicOrderingMonotonic, 0);
    else
        LLVMBuildStore(e->b, v, p);
}

/* What a store writes: its value, or in a GPU kernel an atomic store's addend (negated for a
 * subtraction: a - v and a + (-v) are the same IEEE result). */
static LLVMValueRef em_store_value(emit *e, const ir_stmt *s)
{
    bool negate;
    const ir_expr *add = s->atomic && e->gpu ? ir_store_addend(s, &negate) : NULL;
    if (!add)
        return em_expr(e, s->value);
    LLVMValueRef v = em_expr(e, add);
    return negate ? LLVMBuildFNeg(e->b, v, "") : v;
}

static void em_store(emit *e, const ir_stmt *s)
{
    const ir_buffer *buf = s->buf;
    LLVMValueRef v = em_store_value(e, s);
    if (!s->check_mask) {
        em_store_at(e, s, v, em_inside_ptr(e, buf, s->idx));
        return;
    }
    LLVMValueRef idx[IR_MAX_DIMS], ok = NULL;
    for (int d = 0; d < buf->ndims; d++) {
        idx[d] = em_expr(e, s->idx[d]);
        if (s->check_mask & (1u << d)) {
            LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, idx[d],
                                            em_var(e, buf->extent[d]), "");
            ok = ok ? LLVMBuildAnd(e->b, ok, in, "") : in;
        }
    }
    LLVMBasicBlockRef st = new_block(e, "store"), done = new_block(e, "stored");
    LLVMBuildCondBr(e->b, ok, st, done);
    LLVMPositionBuilderAtEnd(e->b, st);
    em_store_at(e, s, v, em_element_ptr(e, buf, idx));
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* Attaches a loop id to a loop's back edge: an unroll count (unroll > 1) or the hint `no_unroll`
 * names, and with no_vectorize, LLVM's loop vectorizer told to leave the loop alone. */
static void set_loop_id(emit *e, LLVMValueRef br, int unroll, const char *no_unroll,
                        bool no_vectorize)
{
    LLVMMetadataRef ops[3];
    int n = 1;
    if (unroll > 1) {
        LLVMMetadataRef kv[2] = { LLVMMDStringInContext2(e->ctx, "llvm.loop.unroll.count", 22),
                                  LLVMValueAsMetadata(em_i32(e, unroll)) };
        ops[n++] = LLVMMDNodeInContext2(e->ctx, kv, 2);
    } else {
        LLVMMetadataRef k = LLVMMDStringInContext2(e->ctx, no_unroll, strlen(no_unroll));
        ops[n++] = LLVMMDNodeInContext2(e->ctx, &k, 1);
    }
    if (no_vectorize) {
        LLVMMetadataRef kv[2] = { LLVMMDStringInContext2(e->ctx, "llvm.loop.vectorize.enable",
                                                         26),
                                  LLVMValueAsMetadata(LLVMConstInt(e->t_i1, 0, 0)) };
        ops[n++] = LLVMMDNodeInContext2(e->ctx, kv, 2);
    }
    /* The first operand of a loop id refers to the node itself. */
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(e->ctx, NULL, 0);
    ops[0] = tmp;
    LLVMMetadataRef id = LLVMMDNodeInContext2(e->ctx, ops, (size_t)n);
    LLVMMetadataReplaceAllUsesWith(tmp, id);
    unsigned kind = LLVMGetMDKindIDInContext(e->ctx, "llvm.loop", 9);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(e->ctx, id));
}

/* Loop metadata: an `unroll` directive's count; otherwise no runtime unrolling (our vector
 * loops are already as wide as asked, and LLVM's partial copies with remainder loops cost compile
 * time: bilateral filter 280 -> 180 ms, bilateral grid 1,200 -> 950 ms, run time unchanged within
 * noise); a vector loop's scalar tail is never vectorized again. In cold code (e->cold: border
 * copies of vectorized loops, scalar tails) loops are not unrolled at all, not even fully: the
 * 9x9 median's window loops in its ten-odd border and tail copies of the body took 60% of its
 * compile time, for a few pixels per row. */
void em_loop_metadata(emit *e, LLVMValueRef br, int unroll, bool is_tail)
{
    bool cold = e->cold > 0;
    set_loop_id(e, br, unroll, cold ? "llvm.loop.unroll.disable"
                                    : "llvm.loop.unroll.runtime.disable", is_tail || cold);
}

/* An outer loop that is never unrolled: a parallel loop's chunk of iterations. LLVM unrolled
 * it at run time (its back edge had no loop id), copying the inner loops 4-8 times: 85 copied
 * blocks in the bilateral grid. */
void em_loop_no_unroll(emit *e, LLVMValueRef br)
{
    set_loop_id(e, br, 1, "llvm.loop.unroll.disable", false);
}

/* The outermost cold loop with a body of at least this estimated cost (split.h: IR nodes) is
 * compiled in a function of its own by LLVM's fast code generator (em_cold_loop): blur's
 * 17-tap scalar tails went from a third of its compile to little (callgrind, one module:
 * 342 -> 301 M instructions). A smaller body costs more as a function than it saves (mosaic's
 * one-line copies: 242 -> 273 M with every cold loop outlined, 250 M from 64 up). */
enum { COLD_FUNCTION_MIN_COST = 64 };

static LLVMValueRef widen(emit *e, LLVMValueRef v)
{
    return LLVMTypeOf(v) == e->t_i64 ? v : LLVMBuildSExt(e->b, v, e->t_i64, "");
}

void em_count_open(emit *e, const ir_stmt *s, LLVMValueRef lo, em_count *c)
{
    bool wide = ir_for_counts_wide(s) || LLVMTypeOf(lo) == e->t_i64;
    c->hi = em_expr(e, s->hi);
    c->step = em_expr(e, s->step);
    LLVMValueRef iv = entry_alloca(e, e->t_i32, s->var->name);
    e->var[s->var->id] = iv;
    c->t = wide ? e->t_i64 : e->t_i32;
    c->ctr = wide ? entry_alloca(e, e->t_i64, "wide") : iv;
    if (wide) {
        lo = widen(e, lo);
        c->hi = widen(e, c->hi);
        c->step = widen(e, c->step);
    }
    LLVMBuildStore(e->b, lo, c->ctr);
    c->head = new_block(e, "loop");
    LLVMBasicBlockRef body = new_block(e, "body");
    c->exit = new_block(e, "end");
    LLVMBuildBr(e->b, c->head);
    LLVMPositionBuilderAtEnd(e->b, c->head);
    LLVMValueRef v = LLVMBuildLoad2(e->b, c->t, c->ctr, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v, c->hi, ""), body, c->exit);
    LLVMPositionBuilderAtEnd(e->b, body);
    if (wide)  /* below hi <= 2^31: an i32 value */
        LLVMBuildStore(e->b, LLVMBuildTrunc(e->b, v, e->t_i32, ""), iv);
}

LLVMValueRef em_count_close(emit *e, em_count *c)
{
    /* No wrap: narrow counting steps by 1 below hi, or by a step the bounds leave room for;
     * wide counting stays within 2^31 + 2^31 * 64. */
    LLVMValueRef v = LLVMBuildLoad2(e->b, c->t, c->ctr, "");
    LLVMBuildStore(e->b, LLVMBuildNSWAdd(e->b, v, c->step, ""), c->ctr);
    LLVMValueRef br = LLVMBuildBr(e->b, c->head);
    LLVMPositionBuilderAtEnd(e->b, c->exit);
    return br;
}

LLVMValueRef em_trip_count(emit *e, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef step)
{
    LLVMValueRef span = LLVMBuildSub(e->b, hi, lo, "");
    LLVMValueRef n = LLVMBuildAdd(e->b, LLVMBuildSDiv(e->b, LLVMBuildSub(e->b, span, em_i32(e, 1),
                                                                         ""), step, ""),
                                  em_i32(e, 1), "");
    /* lo < hi, not span > 0: an empty loop's span may wrap (lo 2^31 - 1, hi -4 is positive as
     * an i32 difference: found by fuzz_jit, issue 27). */
    return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, lo, hi, ""), n, em_i32(e, 0),
                           "");
}

void em_serial_loop(emit *e, const ir_stmt *s, LLVMValueRef lo, bool is_tail)
{
    bool cold = is_tail || s->cold;
    if (cold && e->cold == 0 && pf_split_stmt_cost(s->then_s) >= COLD_FUNCTION_MIN_COST) {
        em_cold_loop(e, s, lo, is_tail);
        return;
    }
    e->cold += cold;
    em_count c;
    em_count_open(e, s, lo, &c);
    em_stmt(e, s->then_s);
    em_loop_metadata(e, em_count_close(e, &c), s->unroll, is_tail);
    e->cold -= cold;
}

static void em_for(emit *e, const ir_stmt *s)
{
    if (e->gpu) {
        e->gpu->loop(e, s);
        return;
    }
    if (s->loop_kind == IR_LOOP_PARALLEL) {
        em_parallel_for(e, s, pf_split_elsewhere(e->split, s));
        return;
    }
    if (s->loop_kind == IR_LOOP_VECTORIZED && s->width > 1 && em_can_vectorize(e, s)) {
        LLVMValueRef tail = em_vector_loop(e, s);
        em_serial_loop(e, s, tail, true);
        return;
    }
    bool gpu = s->loop_kind == IR_LOOP_GPU_BLOCK;  /* addressed as in a kernel (em_inside_ptr) */
    e->in_gpu_block += gpu;
    em_serial_loop(e, s, em_expr(e, s->lo), false);
    e->in_gpu_block -= gpu;
}

static void em_if(emit *e, const ir_stmt *s)
{
    LLVMValueRef c = em_expr(e, s->cond);
    LLVMBasicBlockRef then_bb = new_block(e, "then"), done = new_block(e, "endif");
    LLVMBasicBlockRef else_bb = s->else_s ? new_block(e, "else") : done;
    LLVMBuildCondBr(e->b, c, then_bb, else_bb);
    LLVMPositionBuilderAtEnd(e->b, then_bb);
    em_stmt(e, s->then_s);
    LLVMBuildBr(e->b, done);
    if (s->else_s) {
        LLVMPositionBuilderAtEnd(e->b, else_bb);
        em_stmt(e, s->else_s);
        LLVMBuildBr(e->b, done);
    }
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* Dense layout, x innermost; rows of 32 floats or more start on a 32-byte boundary so row
 * loads of vector code stay aligned, and a row of a multiple of 1024 floats (4 KiB) gets 16
 * more: otherwise the rows a vertical stencil reads together all map to the same L1 sets
 * (2048-wide blur: 17 rows 8 KiB apart thrash an 8-way cache). cgen.c's pf_row_stride agrees. */
static LLVMValueRef em_strides(emit *e, const ir_buffer *b)
{
    LLVMValueRef stride = em_i64(e, 1);
    for (int d = 0; d < b->ndims; d++) {
        e->var[b->stride[d]->id] = stride;
        ir_var *held = b->window ? b->size[d] : b->extent[d];
        LLVMValueRef ext = LLVMBuildSExt(e->b, em_var(e, held), e->t_i64, "");
        if (d == 0 && !b->dense) {
            LLVMValueRef padded = LLVMBuildAnd(e->b, LLVMBuildAdd(e->b, ext, em_i64(e, 7), ""),
                                               em_i64(e, -8), "");
            LLVMValueRef page = LLVMBuildICmp(e->b, LLVMIntEQ,
                                              LLVMBuildAnd(e->b, padded, em_i64(e, 1023), ""),
                                              em_i64(e, 0), "");
            padded = LLVMBuildAdd(e->b, padded,
                                  LLVMBuildSelect(e->b, page, em_i64(e, 16), em_i64(e, 0), ""),
                                  "");
            LLVMValueRef big = LLVMBuildICmp(e->b, LLVMIntSGE, ext, em_i64(e, 32), "");
            ext = LLVMBuildSelect(e->b, big, padded, ext, "");
        }
        stride = LLVMBuildMul(e->b, stride, ext, "");
    }
    return stride;  /* total elements */
}

/* The address image coordinates 0 would have in a window buffer: element (origin) is at p.
 * Outside the allocation, so its element addresses are built without `inbounds`. */
LLVMValueRef em_window_base(emit *e, const ir_buffer *b, LLVMValueRef p)
{
    LLVMValueRef off = em_i64(e, 0);
    for (int d = 0; d < b->ndims; d++) {
        LLVMValueRef o = LLVMBuildSExt(e->b, em_var(e, b->origin[d]), e->t_i64, "");
        off = LLVMBuildSub(e->b, off, LLVMBuildMul(e->b, o, em_var(e, b->stride[d]), ""), "");
    }
    return LLVMBuildGEP2(e->b, e->t_f32, p, &off, 1, "window");
}

/* Vector gathers and scatters of internal buffers compute 32-bit element offsets (llvm_vec.c):
 * every offset of the image, sum of index * stride (a window's strides with the image's
 * indices), must stay below 2^31. Images have at most 2^31 elements (lang/bind.c), but the
 * padded rows can push the offsets of one that size past it: that run fails as an allocation
 * failure would, before anything is computed. */
static void fail_if_offsets_overflow(emit *e, const ir_buffer *b)
{
    LLVMValueRef span = em_i64(e, 0);
    for (int d = 0; d < b->ndims; d++) {
        LLVMValueRef n = LLVMBuildSExt(e->b, em_var(e, b->extent[d]), e->t_i64, "");
        span = LLVMBuildAdd(e->b, span, LLVMBuildMul(e->b, n, em_var(e, b->stride[d]), ""), "");
    }
    LLVMBasicBlockRef ok = new_block(e, "offsets_ok");
    LLVMValueRef big = LLVMBuildICmp(e->b, LLVMIntSGT, span, em_i64(e, INT32_MAX), "");
    LLVMBuildCondBr(e->b, big, e->fail_bb, ok);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

static void em_alloc(emit *e, const ir_stmt *s)
{
    if (e->gpu) {
        e->gpu->alloc(e, s);
        return;
    }
    const ir_buffer *b = s->buf;
    for (int d = 0; s->window && d < b->ndims; d++) {
        e->var[b->origin[d]->id] = em_expr(e, s->window[2 * d]);
        e->var[b->size[d]->id] = em_expr(e, s->window[2 * d + 1]);
    }
    LLVMValueRef count = em_strides(e, b);
    fail_if_offsets_overflow(e, b);
    LLVMValueRef bytes = LLVMBuildMul(e->b, count, em_i64(e, 4), "");
    LLVMValueRef args[2] = { bytes, em_i32(e, s->zero ? 1 : 0) };
    LLVMTypeRef ps[2] = { e->t_i64, e->t_i32 };
    LLVMValueRef p = em_call_ext(e, "pf_rt_alloc", e->t_ptr, ps, 2, args);
    LLVMBasicBlockRef ok = new_block(e, "allocated");
    LLVMValueRef null = LLVMBuildIsNull(e->b, p, "");
    LLVMBuildCondBr(e->b, null, e->fail_bb, ok);
    LLVMPositionBuilderAtEnd(e->b, ok);
    e->buf_data[b->id] = b->window ? em_window_base(e, b, p) : p;
    em_stmt(e, s->then_s);
    LLVMTypeRef fp[1] = { e->t_ptr };
    em_call_ext(e, "pf_rt_free", e->t_void, fp, 1, &p);
}

static LLVMValueRef i64_array(emit *e, const ir_buffer *b, ir_var *const *vars, bool sext)
{
    LLVMValueRef arr = entry_alloca(e, LLVMArrayType(e->t_i64, IR_MAX_DIMS), "dims");
    for (int d = 0; d < b->ndims; d++) {
        LLVMValueRef v = em_var(e, vars[d]);
        if (sext)
            v = LLVMBuildSExt(e->b, v, e->t_i64, "");
        LLVMValueRef i = em_i64(e, d);
        LLVMBuildStore(e->b, v, LLVMBuildInBoundsGEP2(e->b, e->t_i64, arr, &i, 1, ""));
    }
    return arr;
}

/* pf_buffer as LLVM sees it: { ptr data, i32 ndims, [4 x i64] extent, [4 x i64] stride }. */
LLVMTypeRef buffer_struct(emit *e)
{
    LLVMTypeRef fields[4] = { e->t_ptr, e->t_i32, LLVMArrayType(e->t_i64, 4),
                              LLVMArrayType(e->t_i64, 4) };
    return LLVMStructTypeInContext(e->ctx, fields, 4, 0);
}

static void em_rtcall(emit *e, const ir_stmt *s)
{
    if (s->rt != IR_RT_ZERO_BUFFER) {
        em_stage_rt(e, s);
        return;
    }
    const ir_buffer *b = s->bufs[0];
    LLVMValueRef args[4] = { e->buf_data[b->id], em_i32(e, b->ndims),
                             i64_array(e, b, b->extent, true),
                             i64_array(e, b, b->stride, false) };
    LLVMTypeRef ps[4] = { e->t_ptr, e->t_i32, e->t_ptr, e->t_ptr };
    em_call_ext(e, "pf_rt_zero_buffer_threaded", e->t_void, ps, 4, args);
}

void em_stmt(emit *e, const ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_BLOCK: em_block(e, s); return;
    case IR_S_LET: e->var[s->var->id] = em_expr(e, s->value); return;
    case IR_S_DECL:
    case IR_S_ASSIGN: em_mutable(e, s); return;
    case IR_S_ARRAY_DECL: em_array_decl(e, s); return;
    case IR_S_ARRAY_STORE:
        LLVMBuildStore(e->b, em_expr(e, s->value),
                       em_array_ptr(e, s->var, em_expr(e, s->index)));
        return;
    case IR_S_SORT: em_sort(e, s); return;
    case IR_S_STORE: em_store(e, s); return;
    case IR_S_FOR: em_for(e, s); return;
    case IR_S_IF: em_if(e, s); return;
    case IR_S_ALLOC: em_alloc(e, s); return;
    case IR_S_RTCALL: em_rtcall(e, s); return;
    case IR_S_COMMENT: return;
    case IR_S_BARRIER:  /* serially, a thread loop has ended before it */
        if (e->gpu)
            e->gpu->barrier(e);
        return;
    }
}

/* ---- functions ---- */

void em_init_types(emit *e)
{
    e->t_i1 = LLVMInt1TypeInContext(e->ctx);
    e->t_i8 = LLVMInt8TypeInContext(e->ctx);
    e->t_i32 = LLVMInt32TypeInContext(e->ctx);
    e->t_i64 = LLVMInt64TypeInContext(e->ctx);
    e->t_f32 = LLVMFloatTypeInContext(e->ctx);
    e->t_f64 = LLVMDoubleTypeInContext(e->ctx);
    e->t_ptr = LLVMPointerTypeInContext(e->ctx, 0);
    e->t_void = LLVMVoidTypeInContext(e->ctx);
}

void em_define_tables(emit *e)
{
    const ir_func *f = e->irf;
    for (int i = 0; i < f->n_tables; i++) {
        const ir_var *t = f->tables[i];
        LLVMTypeRef et = em_type(e, t->type);
        LLVMValueRef *vals = pf_xmalloc(sizeof *vals * (size_t)t->array_len);
        for (int k = 0; k < t->array_len; k++) {
            if (t->type == IR_F32)
                vals[k] = LLVMConstReal(et, (double)((const float *)t->const_init)[k]);
            else
                vals[k] = em_i32(e, ((const int32_t *)t->const_init)[k]);
        }
        LLVMValueRef init = LLVMConstArray(et, vals, (unsigned)t->array_len);
        free(vals);
        LLVMValueRef g = LLVMAddGlobal(e->mod, LLVMTypeOf(init), t->name);
        LLVMSetInitializer(g, init);
        LLVMSetGlobalConstant(g, 1);
        LLVMSetLinkage(g, LLVMPrivateLinkage);
        LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
        e->var[t->id] = g;
    }
}

/* The body's parameters: per argument buffer, its data pointer (noalias), its i32 extents
 * and its i64 strides. */
static int body_param_count(const ir_func *f)
{
    int n = 0;
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        n += 1 + f->args[i]->ndims;
        for (int d = 0; d < f->args[i]->ndims; d++)
            n += f->args[i]->extent_is_param[d];
    }
    return n;
}

static LLVMValueRef make_body_fn(emit *e, const char *name)
{
    const ir_func *f = e->irf;
    int np = body_param_count(f), k = 0;
    LLVMTypeRef *ps = pf_xmalloc(sizeof *ps * (size_t)(np + 1));
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        ps[k++] = e->t_ptr;
        for (int d = 0; d < f->args[i]->ndims; d++)
            if (f->args[i]->extent_is_param[d])
                ps[k++] = e->t_i32;
        for (int d = 0; d < f->args[i]->ndims; d++)
            ps[k++] = e->t_i64;
    }
    char *body_name = pf_xmalloc(strlen(name) + 8);
    sprintf(body_name, "%s.body", name);
    LLVMValueRef fn = LLVMAddFunction(e->mod, body_name, LLVMFunctionType(e->t_i32, ps,
                                                                          (unsigned)np, 0));
    free(body_name);
    free(ps);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    k = 0;
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        LLVMAddAttributeAtIndex(fn, (unsigned)k + 1, LLVMCreateEnumAttribute(e->ctx, noalias, 0));
        e->buf_data[b->id] = LLVMGetParam(fn, (unsigned)k++);
        for (int d = 0; d < b->ndims; d++)
            if (b->extent_is_param[d])
                e->var[b->extent[d]->id] = LLVMGetParam(fn, (unsigned)k++);
        for (int d = 0; d < b->ndims; d++)
            e->var[b->stride[d]->id] = LLVMGetParam(fn, (unsigned)k++);
    }
    return fn;
}

static void emit_body(emit *e, const char *name)
{
    e->fn = make_body_fn(e, name);
    LLVMBasicBlockRef entry = new_block(e, "entry"), start = new_block(e, "start");
    e->fail_bb = new_block(e, "fail");
    e->rt_fail_bb = new_block(e, "rt_fail");
    LLVMPositionBuilderAtEnd(e->ab, entry);
    LLVMPositionBuilderAtEnd(e->b, e->fail_bb);
    LLVMBuildRet(e->b, em_i32(e, 1));
    LLVMPositionBuilderAtEnd(e->b, e->rt_fail_bb);
    LLVMBuildRet(e->b, em_i32(e, 3));
    LLVMPositionBuilderAtEnd(e->b, start);
    em_stmt(e, e->irf->body);
    LLVMBuildRet(e->b, em_i32(e, 0));
    LLVMBuildBr(e->ab, start);  /* the entry block holds only allocas */
}

static LLVMValueRef load_field(emit *e, LLVMTypeRef st, LLVMValueRef buf, int field, int d)
{
    LLVMValueRef p = LLVMBuildStructGEP2(e->b, st, buf, (unsigned)field, "");
    if (field == 0)
        return LLVMBuildLoad2(e->b, e->t_ptr, p, "");
    LLVMValueRef idx[2] = { em_i64(e, 0), em_i64(e, d) };
    p = LLVMBuildInBoundsGEP2(e->b, LLVMArrayType(e->t_i64, 4), p, idx, 2, "");
    return LLVMBuildLoad2(e->b, e->t_i64, p, "");
}

/* The entry point unpacks each pf_buffer, refuses x strides other than 1, and calls the body. */
static void emit_entry(emit *e, const char *name, LLVMValueRef body)
{
    const ir_func *f = e->irf;
    LLVMTypeRef st = buffer_struct(e);
    LLVMValueRef fn = LLVMAddFunction(e->mod, name, LLVMFunctionType(e->t_i32, &e->t_ptr, 1, 0));
    e->fn = fn;
    LLVMPositionBuilderAtEnd(e->b, new_block(e, "entry"));
    int np = body_param_count(f), k = 0;
    LLVMValueRef *args = pf_xmalloc(sizeof *args * (size_t)(np + 1));
    LLVMValueRef bad = LLVMConstInt(e->t_i1, 0, 0);
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const ir_buffer *b = f->args[i];
        LLVMValueRef idx = em_i64(e, i);
        LLVMValueRef bp = LLVMBuildInBoundsGEP2(e->b, st, LLVMGetParam(fn, 0), &idx, 1, "");
        args[k++] = load_field(e, st, bp, 0, 0);
        for (int d = 0; d < b->ndims; d++)
            if (b->extent_is_param[d])
                args[k++] = LLVMBuildTrunc(e->b, load_field(e, st, bp, 2, d), e->t_i32, "");
        for (int d = 0; d < b->ndims; d++) {
            LLVMValueRef s = load_field(e, st, bp, 3, d);
            if (d == 0)
                bad = LLVMBuildOr(e->b, bad,
                                  LLVMBuildICmp(e->b, LLVMIntNE, s, em_i64(e, 1), ""), "");
            args[k++] = s;
        }
    }
    LLVMBasicBlockRef call = new_block(e, "call"), refuse = new_block(e, "refuse");
    LLVMBuildCondBr(e->b, bad, refuse, call);
    LLVMPositionBuilderAtEnd(e->b, refuse);
    LLVMBuildRet(e->b, em_i32(e, 2));
    LLVMPositionBuilderAtEnd(e->b, call);
    LLVMValueRef r = LLVMBuildCall2(e->b, LLVMGlobalGetValueType(body), body, args,
                                    (unsigned)np, "");
    LLVMBuildRet(e->b, r);
    free(args);
}

LLVMValueRef em_module(emit *e, const ir_func *f, LLVMContextRef ctx, const char *name,
                       const pf_split *split, pf_error *err)
{
    e->ctx = ctx;
    e->irf = f;
    e->split = split && split->n_modules > 1 ? split : NULL;
    e->mod = LLVMModuleCreateWithNameInContext(name, ctx);
    e->b = LLVMCreateBuilderInContext(ctx);
    e->ab = LLVMCreateBuilderInContext(ctx);
    em_init_types(e);
    e->var = pf_xcalloc((size_t)f->n_vars + 1, sizeof *e->var);
    e->buf_data = pf_xcalloc((size_t)f->n_buffers + 1, sizeof *e->buf_data);
    em_define_tables(e);
    emit_body(e, name);
    LLVMValueRef body = e->fn;
    emit_entry(e, name, body);
    LLVMValueRef entry = e->fn;
    LLVMDisposeBuilder(e->b);
    LLVMDisposeBuilder(e->ab);
    free(e->var);
    free(e->buf_data);
    char *msg = NULL;
    if (LLVMVerifyModule(e->mod, LLVMReturnStatusAction, &msg)) {
        pf_fail(err, "internal error: LLVM rejected the generated module: %.1500s", msg);
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(e->mod);
        free(e->owned);
        e->owned = NULL;
        return NULL;
    }
    LLVMDisposeMessage(msg);
    return entry;
}

LLVMModuleRef pf_llvm_emit(const ir_func *f, LLVMContextRef ctx, const char *name,
                           bool vector_math, pf_error *err)
{
    emit e = { 0 };
    e.scalar_math = !vector_math;
    if (!em_module(&e, f, ctx, name, NULL, err))
        return NULL;
    free(e.owned);
    return e.mod;
}
