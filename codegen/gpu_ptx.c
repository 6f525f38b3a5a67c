/* The kernels of a GPU-lowered function (gpu_ptx.h). The LLVM emitter of the CPU (llvm_emit.c,
 * llvm_expr.c) emits every statement and expression; here are what differs on the GPU: the
 * walk that finds the kernels, their parameters (the values each uses from the host), and
 * block loops (ctaid), thread loops (tid, strided by the loop's thread count), barriers and
 * shared-memory windows. The device runtime, libdevice and PTX output are in gpu_rt.c. */
#include "codegen/gpu_ptx.h"

#include "codegen/gpu_host.h"
#include "codegen/gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- barriers ---- */

static void gpu_barrier(emit *e)
{
    LLVMTypeRef t = LLVMFunctionType(e->t_void, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, "llvm.nvvm.barrier0");
    if (!fn)
        fn = LLVMAddFunction(e->mod, "llvm.nvvm.barrier0", t);
    LLVMBuildCall2(e->b, t, fn, NULL, 0, "");
    gpu_state(e)->kernel->barrier = true;
}

/* ---- loops ---- */

/* for (v = from; v < hi; v += stride) body, v a loop variable of the IR. */
static void strided_loop(emit *e, const ir_stmt *s, LLVMValueRef from, LLVMValueRef stride)
{
    LLVMValueRef hi = em_expr(e, s->hi);
    LLVMValueRef iv = entry_alloca(e, e->t_i32, s->var->name);
    e->var[s->var->id] = iv;
    LLVMBuildStore(e->b, from, iv);
    LLVMBasicBlockRef head = new_block(e, "gpu_loop"), body = new_block(e, "gpu_body"),
                      done = new_block(e, "gpu_done");
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, head);
    LLVMValueRef v = LLVMBuildLoad2(e->b, e->t_i32, iv, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v, hi, ""), body, done);
    LLVMPositionBuilderAtEnd(e->b, body);
    e->n_rows = 0;
    em_stmt(e, s->then_s);
    v = LLVMBuildLoad2(e->b, e->t_i32, iv, "");
    LLVMBuildStore(e->b, LLVMBuildAdd(e->b, v, stride, ""), iv);
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, done);
    e->n_rows = 0;
}

/* A block loop: this block's iteration, v = lo + ctaid * step, when below hi (the grid is
 * ceil((hi - lo) / step) blocks; the test costs nothing and keeps a rounded-up grid safe). */
static void block_loop(emit *e, const ir_stmt *s)
{
    LLVMValueRef step = em_expr(e, s->step);
    LLVMValueRef v = LLVMBuildAdd(e->b, em_expr(e, s->lo),
                                  LLVMBuildMul(e->b, gpu_sreg(e, "ctaid", s->gpu_dim), step, ""), "");
    LLVMValueRef iv = entry_alloca(e, e->t_i32, s->var->name);
    e->var[s->var->id] = iv;
    LLVMBuildStore(e->b, v, iv);
    LLVMBasicBlockRef body = new_block(e, "block"), done = new_block(e, "block_done");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v, em_expr(e, s->hi), ""), body, done);
    LLVMPositionBuilderAtEnd(e->b, body);
    gpu_state(e)->kernel->grid_dims++;
    em_stmt(e, s->then_s);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* A thread loop of width w: thread t < w takes iterations t, t + w, ... */
static void thread_loop(emit *e, const ir_stmt *s)
{
    pf_gpu_kernel *k = gpu_state(e)->kernel;
    int d = s->gpu_dim, w = s->width;
    if (w > k->block[d])
        k->block[d] = w;
    LLVMValueRef t = gpu_sreg(e, "tid", d), step = em_expr(e, s->step);
    LLVMBasicBlockRef body = new_block(e, "thread"), done = new_block(e, "thread_done");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, t, em_i32(e, w), ""), body, done);
    LLVMPositionBuilderAtEnd(e->b, body);
    LLVMValueRef from = LLVMBuildAdd(e->b, em_expr(e, s->lo), LLVMBuildMul(e->b, t, step, ""), "");
    strided_loop(e, s, from, LLVMBuildMul(e->b, step, em_i32(e, w), ""));
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

static void gpu_loop(emit *e, const ir_stmt *s)
{
    if (s->loop_kind == IR_LOOP_GPU_BLOCK)
        block_loop(e, s);
    else if (s->loop_kind == IR_LOOP_GPU_THREAD)
        thread_loop(e, s);
    else  /* inside a kernel every other loop is one thread's serial loop */
        strided_loop(e, s, em_expr(e, s->lo), em_expr(e, s->step));
}

/* ---- shared memory ---- */

/* A shared window: dense, at the current offset of the kernel's dynamic shared memory (later
 * windows of the same block follow it); zeroed by the block's threads together when asked. */
static void gpu_alloc(emit *e, const ir_stmt *s)
{
    gpu_emit *g = gpu_state(e);
    const ir_buffer *b = s->buf;
    if (!b->gpu_shared) {
        gpu_unsupported(e, "an allocation of %s inside a kernel outside a GPU block's shared "
                        "memory (give its stage a 'gpu' gene, or compute it root)", b->name);
        return;
    }
    g->kernel->shared = true;
    LLVMValueRef count = em_i64(e, 1);
    for (int d = 0; d < b->ndims; d++) {
        e->var[b->origin[d]->id] = em_expr(e, s->window[2 * d]);
        e->var[b->size[d]->id] = em_expr(e, s->window[2 * d + 1]);
        e->var[b->stride[d]->id] = count;
        ir_var *held = b->size[d];
        count = LLVMBuildMul(e->b, count, LLVMBuildSExt(e->b, em_var(e, held), e->t_i64, ""), "");
    }
    LLVMValueRef base = LLVMBuildAddrSpaceCast(e->b, g->shared, e->t_ptr, "shared");
    LLVMValueRef first = LLVMBuildGEP2(e->b, e->t_f32, base, &g->shared_off, 1, "window_data");
    if (s->zero)
        gpu_zero_shared(e, first, count);
    LLVMValueRef saved = g->shared_off;
    g->shared_off = LLVMBuildAdd(e->b, g->shared_off, count, "");
    e->buf_data[b->id] = em_window_base(e, b, first);
    em_stmt(e, s->then_s);
    g->shared_off = saved;
}

static const em_gpu_hooks hooks = { gpu_loop, gpu_alloc, gpu_barrier };

/* ---- kernels ---- */

/* The parameter list, for the host that launches the kernel (gpu_device.c). */
static void record_params(pf_gpu_kernel *k, const ir_func *f, const ir_var **by_id,
                          const char *vars, const char *bufs)
{
    k->buf_params = pf_xmalloc(sizeof *k->buf_params * (size_t)(f->n_buffers + 1));
    k->var_params = pf_xmalloc(sizeof *k->var_params * (size_t)(f->n_vars + 1));
    k->var_types = pf_xmalloc(sizeof *k->var_types * (size_t)(f->n_vars + 1));
    for (int id = 0; id < f->n_buffers; id++)
        if (bufs[id])
            k->buf_params[k->n_buf_params++] = id;
    for (int id = 0; id < f->n_vars; id++)
        if (vars[id] && by_id[id] && !by_id[id]->const_init) {
            k->var_types[k->n_var_params] = by_id[id]->type;
            k->var_params[k->n_var_params++] = id;
        }
}

/* The kernel of host statement s: its parameters are the buffers it uses (noalias pointers),
 * then the variables it uses from the host, in id order and in their own types. */
static void kernel(emit *e, const ir_stmt *s, bool one_thread)
{
    gpu_emit *g = gpu_state(e);
    const ir_func *f = e->irf;
    char *vars = pf_xcalloc((size_t)f->n_vars + 1, 1), *bufs = pf_xcalloc((size_t)f->n_buffers + 1, 1);
    em_free_values(f, s, vars, bufs);
    int np = 0;
    LLVMTypeRef *ps = pf_xmalloc(sizeof *ps * (size_t)(f->n_vars + f->n_buffers + 1));
    for (int id = 0; id < f->n_buffers; id++)
        if (bufs[id])
            ps[np++] = e->t_ptr;
    const ir_var **by_id = gpu_vars_by_id(g);
    for (int id = 0; id < f->n_vars; id++)
        if (vars[id] && by_id[id] && !by_id[id]->const_init)
            ps[np++] = em_type(e, by_id[id]->type);
    pf_gpu_kernel *k = gpu_new_kernel(g, s, np);
    record_params(k, f, by_id, vars, bufs);
    LLVMValueRef fn = LLVMAddFunction(e->mod, k->name, LLVMFunctionType(e->t_void, ps,
                                                                       (unsigned)np, 0));
    free(ps);
    gpu_begin_kernel(e, fn);
    int i = 0;
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    for (int id = 0; id < f->n_buffers; id++)
        if (bufs[id]) {
            LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, LLVMCreateEnumAttribute(e->ctx, noalias, 0));
            e->buf_data[id] = LLVMGetParam(fn, (unsigned)i++);
        }
    for (int id = 0; id < f->n_vars; id++) {
        const ir_var *v = by_id[id];
        if (!vars[id] || !v || v->const_init)
            continue;
        LLVMValueRef p = LLVMGetParam(fn, (unsigned)i++);
        if (v->kind != IR_VAR_LET) {  /* mutables and loop variables live in allocas */
            LLVMValueRef a = entry_alloca(e, em_type(e, v->type), v->name);
            LLVMBuildStore(e->b, p, a);
            p = a;
        }
        e->var[id] = p;
    }
    free(vars);
    free(bufs);
    LLVMBasicBlockRef done = new_block(e, "kernel_done");
    if (one_thread) {  /* a serial nest: thread 0 of block 0 runs it */
        LLVMBasicBlockRef run = new_block(e, "one_thread");
        LLVMValueRef t0 = LLVMBuildICmp(e->b, LLVMIntEQ, gpu_sreg(e, "tid", 0), em_i32(e, 0), "");
        LLVMBuildCondBr(e->b, t0, run, done);
        LLVMPositionBuilderAtEnd(e->b, run);
    }
    em_stmt(e, s);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
    unsigned block[3] = { 1, 1, 1 };
    if (!one_thread)
        pf_gpu_block_threads(s, block);
    gpu_end_kernel(e, block);
}

/* The host's statements: lets, allocations and runtime calls stay on the host (not emitted);
 * a block loop nest is a kernel; a host loop around kernels is walked into; any other loop
 * nest or store is a kernel of one thread. */
static void walk_host(emit *e, const ir_stmt *s)
{
    if (!s || gpu_state(e)->failed)
        return;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++)
            walk_host(e, s->body[i]);
        return;
    case IR_S_IF:
        walk_host(e, s->then_s);
        walk_host(e, s->else_s);
        return;
    case IR_S_ALLOC:
        walk_host(e, s->then_s);
        return;
    case IR_S_RTCALL:
        gpu_state(e)->out->host_calls++;
        return;
    case IR_S_FOR:
        if (s->loop_kind == IR_LOOP_GPU_BLOCK)
            kernel(e, s, false);
        else if (pf_gpu_has_block_loop(s->then_s))
            walk_host(e, s->then_s);
        else
            kernel(e, s, true);
        return;
    case IR_S_STORE: case IR_S_ARRAY_DECL: case IR_S_ARRAY_STORE: case IR_S_SORT:
        kernel(e, s, true);
        return;
    case IR_S_BARRIER:
        gpu_unsupported(e, "a barrier outside a kernel");
        return;
    case IR_S_LET: case IR_S_DECL: case IR_S_ASSIGN: case IR_S_COMMENT:
        return;
    }
}

int pf_gpu_emit_ptx(const ir_func *f, const pf_gpu_ptx_options *o, pf_gpu_module *out,
                    pf_error *err)
{
    static const pf_gpu_ptx_options defaults = { 0 };
    memset(out, 0, sizeof *out);
    emit e = { 0 };
    gpu_emit g = { 0 };
    if (gpu_module_begin(&e, &g, f, &hooks, out, err))
        return -1;
    walk_host(&e, f->body);
    return gpu_module_finish(&e, &g, o ? o : &defaults, err);
}
