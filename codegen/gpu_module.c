/* The NVPTX module of the GPU emitter (gpu_internal.h): the target machine, the module and its
 * kernels' frames, and the path from the finished module to PTX text (libdevice linked in when
 * needed, internalized, LLVM's O3 for NVPTX, the PTX printer). */
#include "codegen/gpu_internal.h"
#include "codegen/llvm_contract.h"

#include "base/arena.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"

static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

static LLVMTargetMachineRef nvptx_machine(const char *sm, pf_error *err)
{
    pthread_once(&nvptx_once, init_nvptx);
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &msg)) {
        pf_fail(err, "this LLVM has no NVPTX target: %s", msg);
        LLVMDisposeMessage(msg);
        return NULL;
    }
    /* PTX 7.0 is what sm_80 needs; later architectures are newer PTX versions of LLVM 16's
     * list (sm_90: 7.8). */
    const char *features = strcmp(sm, "sm_90") == 0 ? "+ptx78" : "+ptx70";
    return LLVMCreateTargetMachine(target, NVPTX_TRIPLE, sm, features, LLVMCodeGenLevelAggressive,
                                   LLVMRelocDefault, LLVMCodeModelDefault);
}

/* ---- every variable by id ---- */

static void note_var(const ir_var **by_id, const ir_var *v)
{
    if (v)
        by_id[v->id] = v;
}

static void note_buffer(const ir_var **by_id, const ir_buffer *b)
{
    for (int d = 0; d < b->ndims; d++) {
        note_var(by_id, b->extent[d]);
        note_var(by_id, b->stride[d]);
        note_var(by_id, b->origin[d]);
        note_var(by_id, b->size[d]);
    }
}

static void note_expr(const ir_var **by_id, const ir_expr *x)
{
    if (!x)
        return;
    note_var(by_id, x->var);
    note_expr(by_id, x->a);
    note_expr(by_id, x->b);
    note_expr(by_id, x->c);
    for (int i = 0; i < x->n_args; i++)
        note_expr(by_id, x->args[i]);
}

static void note_stmt(const ir_var **by_id, const ir_stmt *s)
{
    if (!s)
        return;
    note_var(by_id, s->var);
    const ir_expr *xs[] = { s->value, s->index, s->lo, s->hi, s->step, s->cond };
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
        note_expr(by_id, xs[i]);
    for (int i = 0; i < s->n && (s->kind == IR_S_STORE || s->kind == IR_S_RTCALL); i++)
        note_expr(by_id, s->kind == IR_S_STORE ? s->idx[i] : s->args[i]);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        note_stmt(by_id, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        note_stmt(by_id, s->then_s);
        note_stmt(by_id, s->else_s);
    }
}

const ir_var **gpu_vars_by_id(gpu_emit *g)
{
    return g->vars;
}

/* ---- the module ---- */

int gpu_module_begin(emit *e, gpu_emit *g, const ir_func *f, const em_gpu_hooks *hooks,
                     pf_gpu_module *out, pf_error *err)
{
    g->out = out;
    g->err = err;
    g->vars = pf_xcalloc((size_t)f->n_vars + 1, sizeof *g->vars);
    for (int i = 0; i < f->n_buffers; i++)
        note_buffer(g->vars, f->buffers[i]);
    for (int i = 0; i < f->n_tables; i++)
        note_var(g->vars, f->tables[i]);
    note_stmt(g->vars, f->body);
    e->ctx = LLVMContextCreate();
    e->irf = f;
    e->mod = LLVMModuleCreateWithNameInContext("perfora_gpu", e->ctx);
    LLVMSetTarget(e->mod, NVPTX_TRIPLE);
    e->b = LLVMCreateBuilderInContext(e->ctx);
    e->ab = LLVMCreateBuilderInContext(e->ctx);
    e->gpu = hooks;
    e->gpu_state = g;
    em_init_types(e);
    e->var = pf_xcalloc((size_t)f->n_vars + 1, sizeof *e->var);
    em_define_tables(e);  /* module globals; each kernel's table points at them */
    g->module_var = e->var;
    /* extern __shared__ float pf_shared[] */
    g->shared = LLVMAddGlobalInAddressSpace(e->mod, LLVMArrayType(e->t_f32, 0), "pf_shared", 3);
    LLVMSetAlignment(g->shared, 16);
    LLVMSetLinkage(g->shared, LLVMExternalLinkage);
    return 0;
}

pf_gpu_kernel *gpu_new_kernel(gpu_emit *g, const ir_stmt *s, int n_params)
{
    pf_gpu_module *m = g->out;
    if (m->n_kernels == g->cap_kernels) {
        g->cap_kernels = g->cap_kernels ? 2 * g->cap_kernels : 8;
        m->kernels = pf_xrealloc(m->kernels, sizeof *m->kernels * (size_t)g->cap_kernels);
    }
    pf_gpu_kernel *k = &m->kernels[m->n_kernels];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "pf_kernel_%d", m->n_kernels);
    m->n_kernels++;
    k->nest = s;
    k->stage = s->kind == IR_S_FOR ? s->text : NULL;
    k->block[0] = k->block[1] = k->block[2] = 1;
    k->n_params = n_params;
    g->kernel = k;
    return k;
}

void gpu_begin_kernel(emit *e, LLVMValueRef fn)
{
    gpu_emit *g = gpu_state(e);
    const ir_func *f = e->irf;
    e->fn = fn;
    e->var = pf_xcalloc((size_t)f->n_vars + 1, sizeof *e->var);
    e->buf_data = pf_xcalloc((size_t)f->n_buffers + 1, sizeof *e->buf_data);
    e->n_rows = 0;
    for (int i = 0; i < f->n_tables; i++)
        e->var[f->tables[i]->id] = g->module_var[f->tables[i]->id];
    LLVMBasicBlockRef entry = new_block(e, "entry"), start = new_block(e, "start");
    LLVMPositionBuilderAtEnd(e->ab, entry);
    /* allocation and runtime failures cannot happen in a kernel (nothing there allocates or
     * calls the stage runtime); the blocks exist because the shared emitter names them */
    e->fail_bb = new_block(e, "fail");
    e->rt_fail_bb = new_block(e, "rt_fail");
    LLVMPositionBuilderAtEnd(e->b, e->fail_bb);
    LLVMBuildRetVoid(e->b);
    LLVMPositionBuilderAtEnd(e->b, e->rt_fail_bb);
    LLVMBuildRetVoid(e->b);
    LLVMPositionBuilderAtEnd(e->b, start);
    g->shared_off = em_i64(e, 0);
}

static void annotate(emit *e, const char *key, int value)
{
    LLVMValueRef md[3] = { e->fn, LLVMMDStringInContext(e->ctx, key, (unsigned)strlen(key)),
                           em_i32(e, value) };
    LLVMAddNamedMetadataOperand(e->mod, "nvvm.annotations", LLVMMDNodeInContext(e->ctx, md, 3));
}

void gpu_end_kernel(emit *e, const unsigned block[3])
{
    LLVMBuildRetVoid(e->b);
    LLVMBuildBr(e->ab, LLVMGetNextBasicBlock(LLVMGetFirstBasicBlock(e->fn)));
    /* !nvvm.annotations: the function is a kernel, launched with at most `block` threads
     * (.maxntid): ptxas then keeps its registers within what that many threads may take
     * (64 a thread at 1024 threads), spilling if it must, so the launch cannot fail for
     * registers (a 1024-thread median block with 108 registers did: CUDA error 701). */
    annotate(e, "kernel", 1);
    for (int d = 0; d < 3; d++)
        annotate(e, d == 0 ? "maxntidx" : d == 1 ? "maxntidy" : "maxntidz", (int)block[d]);
    free(e->var);
    free(e->buf_data);
    e->var = NULL;
    e->buf_data = NULL;
}

LLVMValueRef gpu_sreg(emit *e, const char *reg, int dim)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", reg, "xyz"[dim]);
    LLVMTypeRef t = LLVMFunctionType(e->t_i32, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    if (!fn)
        fn = LLVMAddFunction(e->mod, name, t);
    return LLVMBuildCall2(e->b, t, fn, NULL, 0, "");
}

void gpu_zero_shared(emit *e, LLVMValueRef p, LLVMValueRef count)
{
    /* the block's threads, as one linear range: t = tid.x + ntid.x * (tid.y + ntid.y * tid.z) */
    LLVMValueRef t = em_i32(e, 0), n = em_i32(e, 1);
    for (int d = 2; d >= 0; d--) {
        LLVMValueRef ti = gpu_sreg(e, "tid", d), ni = gpu_sreg(e, "ntid", d);
        t = LLVMBuildAdd(e->b, ti, LLVMBuildMul(e->b, ni, t, ""), "");
        n = LLVMBuildMul(e->b, n, ni, "");
    }
    LLVMValueRef iv = entry_alloca(e, e->t_i64, "zero_i");
    LLVMBuildStore(e->b, LLVMBuildZExt(e->b, t, e->t_i64, ""), iv);
    LLVMBasicBlockRef head = new_block(e, "zero"), body = new_block(e, "zero_body"),
                      done = new_block(e, "zero_done");
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, head);
    LLVMValueRef i = LLVMBuildLoad2(e->b, e->t_i64, iv, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, i, count, ""), body, done);
    LLVMPositionBuilderAtEnd(e->b, body);
    LLVMBuildStore(e->b, LLVMConstReal(e->t_f32, 0.0), LLVMBuildGEP2(e->b, e->t_f32, p, &i, 1, ""));
    LLVMBuildStore(e->b, LLVMBuildAdd(e->b, i, LLVMBuildZExt(e->b, n, e->t_i64, ""), ""), iv);
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, done);
    e->gpu->barrier(e);
}

void gpu_unsupported(emit *e, const char *fmt, ...)
{
    gpu_emit *g = gpu_state(e);
    if (g->failed)
        return;
    g->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pf_fail(g->err, "CUDA: not supported yet: %s", msg);
}

/* ---- PTX ---- */

/* Everything but the kernels internal, so that O3 inlines the device runtime and libdevice
 * and drops what is not called. */
static void internalize(emit *e)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(e->mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (!LLVMIsDeclaration(fn) && strncmp(name, "pf_kernel_", 10) != 0)
            LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(e->mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g))
            LLVMSetLinkage(g, LLVMInternalLinkage);
}

static int to_ptx(emit *e, LLVMTargetMachineRef tm, pf_gpu_module *out, pf_error *err)
{
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(e->mod, dl);
    LLVMDisposeTargetData(dl);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef le = LLVMRunPasses(e->mod, "default<O3>", tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (le) {
        char *m = LLVMGetErrorMessage(le);
        pf_fail(err, "internal error: LLVM's passes failed on the GPU module: %s", m);
        LLVMDisposeErrorMessage(m);
        return -1;
    }
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, e->mod, LLVMAssemblyFile, &msg, &buf)) {
        pf_fail(err, "internal error: NVPTX code generation failed: %s", msg);
        LLVMDisposeMessage(msg);
        return -1;
    }
    size_t n = LLVMGetBufferSize(buf);
    out->ptx = pf_xmalloc(n + 1);
    memcpy(out->ptx, LLVMGetBufferStart(buf), n);
    out->ptx[n] = '\0';
    out->ptx_len = strlen(out->ptx);
    LLVMDisposeMemoryBuffer(buf);
    return 0;
}

int gpu_module_finish(emit *e, gpu_emit *g, const pf_gpu_ptx_options *o, pf_error *err)
{
    int rc = g->failed ? -1 : 0;
    LLVMTargetMachineRef tm = rc ? NULL : nvptx_machine(o->sm ? o->sm : PF_GPU_DEFAULT_SM, err);
    const char *libdevice = o->libdevice;
    if (!rc && !tm)
        rc = -1;
    if (!rc) {
        g->out->libdevice = gpu_device_runtime(e);
        /* Before libdevice is linked: its functions keep the rounding NVIDIA compiled in. */
        if (!o->strict_float)
            g->out->fused = pf_llvm_contract(e->mod);
        char path[1024];
        if (g->out->libdevice && !libdevice)
            libdevice = pf_gpu_libdevice_path(path, sizeof path);
        if (g->out->libdevice && !libdevice)
            rc = pf_fail(err, "CUDA: the program calls math functions (exp, log, sin, ...), "
                              "which come from CUDA's libdevice: none found (set CUDA_HOME to "
                              "the CUDA toolkit)");
        else if (g->out->libdevice)
            rc = gpu_link_libdevice(e, libdevice, err);
    }
    char *msg = NULL;
    if (!rc && LLVMVerifyModule(e->mod, LLVMReturnStatusAction, &msg))
        rc = pf_fail(err, "internal error: LLVM rejected the GPU module: %.1500s", msg);
    LLVMDisposeMessage(msg);
    if (!rc) {
        internalize(e);
        rc = to_ptx(e, tm, g->out, err);
    }
    if (tm)
        LLVMDisposeTargetMachine(tm);
    LLVMDisposeModule(e->mod);
    LLVMDisposeBuilder(e->b);
    LLVMDisposeBuilder(e->ab);
    LLVMContextDispose(e->ctx);
    free(g->module_var);
    free(g->vars);
    if (rc)
        pf_gpu_module_free(g->out);
    return rc;
}

const char *pf_gpu_libdevice_path(char *buf, size_t cap)
{
    const char *homes[] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda" };
    for (size_t i = 0; i < sizeof homes / sizeof *homes; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        snprintf(buf, cap, "%s/nvvm/libdevice/libdevice.10.bc", homes[i]);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return NULL;
}

void pf_gpu_module_free(pf_gpu_module *m)
{
    for (int i = 0; m->kernels && i < m->n_kernels; i++) {
        free(m->kernels[i].buf_params);
        free(m->kernels[i].var_params);
        free(m->kernels[i].var_types);
    }
    free(m->ptx);
    free(m->kernels);
    memset(m, 0, sizeof *m);
}
