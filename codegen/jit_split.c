/* A compile split over threads (codegen/split.h): each thread emits, optimizes and compiles
 * its module to an object file in memory; the JIT links the objects. */
#define _GNU_SOURCE  /* sched_getaffinity */
#include "codegen/jit_internal.h"

#include "base/arena.h"
#include "base/clock.h"
#include "codegen/ir_clone.h"
#include "codegen/llvm_emit.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

typedef struct part_job {
    const ir_func *f;
    const pf_split *plan;
    int module, level;
    unsigned rewrites;  /* JIT_CONTRACT, JIT_RECIPROCALS, JIT_SCALAR_MATH */
    bool unrolled;
    LLVMMemoryBufferRef obj;  /* the module's object code, once compiled */
    pf_jit_times times;
    pf_error err;
} part_job;

/* Emits, optimizes and compiles one module of the plan to an object file in memory, in a
 * context of its own (LLVM contexts are independent, so the modules can compile at once). */
static void *compile_part(void *arg)
{
    part_job *p = arg;
    double t = pf_thread_cpu_ms();
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = pf_llvm_emit_part(p->f, ctx, JIT_ENTRY, p->plan, p->module,
                                          !(p->rewrites & JIT_SCALAR_MATH), &p->err);
    jit_lap(&t, &p->times.emit_ms);
    LLVMTargetMachineRef tm = mod ? jit_host_machine(p->level, &p->err) : NULL;
    if (tm && jit_optimize(mod, tm, p->level, false, p->unrolled, p->rewrites, &p->err) == 0) {
        jit_lap(&t, &p->times.optimize_ms);
        char *msg = NULL;
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, &p->obj)) {
            pf_fail(&p->err, "internal error: LLVM code generation: %.1500s", msg);
            LLVMDisposeMessage(msg);
            p->obj = NULL;
        }
        jit_lap(&t, &p->times.codegen_ms);
    }
    if (tm)
        LLVMDisposeTargetMachine(tm);
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return NULL;
}

static void add_times(pf_jit_times *to, const pf_jit_times *t)
{
    to->emit_ms += t->emit_ms;
    to->optimize_ms += t->optimize_ms;
    to->jit_ms += t->jit_ms;
    to->codegen_ms += t->codegen_ms;
}

/* Adds the modules' objects to a new JIT and looks the pipeline up (linking them). */
static pf_jit *link_parts(part_job *jobs, int n, int level, pf_jit_times *times, pf_error *err)
{
    double t = pf_thread_cpu_ms();
    pf_jit *j = pf_xcalloc(1, sizeof *j);
    j->jit = jit_create(level, err);
    jit_lap(&t, &times->jit_ms);
    LLVMOrcJITDylibRef jd = j->jit ? LLVMOrcLLJITGetMainJITDylib(j->jit) : NULL;
    for (int m = 0; m < n && jd; m++) {
        LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->jit, jd, jobs[m].obj);
        jobs[m].obj = NULL;  /* the JIT owns it now, added or not */
        if (e) {
            jit_llvm_error(e, "adding compiled code to the JIT", err);
            jd = NULL;
        }
    }
    bool ok = jd && jit_lookup(j, err) == 0;
    jit_lap(&t, &times->codegen_ms);
    if (!ok) {
        pf_jit_free(j);
        return NULL;
    }
    return j;
}

pf_jit *jit_compile_split(const ir_func *f, const pf_split *plan, int level, unsigned rewrites,
                          pf_jit_times *times, pf_error *err)
{
    int n = plan->n_modules;
    part_job jobs[PF_SPLIT_MAX_MODULES];
    pthread_t th[PF_SPLIT_MAX_MODULES];
    bool started[PF_SPLIT_MAX_MODULES] = { false };
    bool unrolled = ir_has_unroll(f->body);
    for (int m = 0; m < n; m++)
        jobs[m] = (part_job){ .f = f, .plan = plan, .module = m, .level = level,
                              .rewrites = rewrites, .unrolled = unrolled };
    for (int m = 1; m < n; m++)
        started[m] = pthread_create(&th[m], NULL, compile_part, &jobs[m]) == 0;
    compile_part(&jobs[0]);
    for (int m = 1; m < n; m++) {
        if (started[m])
            pthread_join(th[m], NULL);
        else
            compile_part(&jobs[m]);  /* no thread to be had: here, one after the other */
    }
    bool ok = true;
    for (int m = 0; m < n; m++) {
        add_times(times, &jobs[m].times);
        if (ok && !jobs[m].obj) {
            *err = jobs[m].err;
            ok = false;
        }
    }
    pf_jit *j = ok ? link_parts(jobs, n, level, times, err) : NULL;
    for (int m = 0; m < n; m++)
        if (jobs[m].obj)
            LLVMDisposeMemoryBuffer(jobs[m].obj);
    return j;
}

/* One per core this process may run on, at most 4 (a pipeline rarely has more pieces worth a
 * thread). */
static int default_compile_threads(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n < 1 ? 1 : n > 4 ? 4 : n;
}

/* The split plan for this compile, or NULL when it runs as one module. */
pf_split *jit_split_plan(const ir_func *f, const pf_jit_options *opt)
{
    int k = opt && opt->compile_threads > 0 ? opt->compile_threads : default_compile_threads();
    if (k < 2 || (opt && (opt->dump_llvm || opt->dump_llvm_unoptimized ||
                          opt->llvm_default_passes)))
        return NULL;
    pf_split *p = pf_split_candidates(f);
    pf_error ignored;
    if (pf_llvm_measure_pieces(f, p, !(opt && opt->no_vector_math), &ignored) != 0)
        p->n_pieces = 0;  /* the compile itself will report what went wrong */
    pf_split_deal(p, k);
    if (p->n_modules > 1)
        return p;
    pf_split_free(p);
    return NULL;
}

