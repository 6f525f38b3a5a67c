/* The driver: the one way anything builds a runnable variant (`perfora run`, the search's
 * evaluation, bench/, tests; next the CUDA target and exports). A checked program, its
 * parameter values and a plan (perforate/plan.h) become a variant through one backend: the
 * reference interpreter, the LLVM JIT, or C source compiled by the system's cc. compile.c lists
 * every pass in order and is where a further backend plugs in (docs/architecture.md). */
#ifndef PF_CODEGEN_COMPILE_H
#define PF_CODEGEN_COMPILE_H

#include "base/arena.h"
#include "base/buffer.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/gpu_device.h"
#include "codegen/gpu_ptx.h"
#include "lang/lang.h"
#include "perforate/plan.h"

/* CUDA (docs/gpu.md): the loop IR of a GPU plan as NVPTX kernels, run through the CUDA driver
 * (loaded at run time). */
typedef enum pf_backend { PF_BACKEND_JIT, PF_BACKEND_INTERP, PF_BACKEND_C, PF_BACKEND_CUDA } pf_backend;

/* The target half of the driver's input: which backend, and how it compiles and runs. What is
 * computed (approximations, execution genes) is the plan's, never these options'. */
typedef struct pf_compile_options {
    pf_backend backend;
    int threads;              /* worker threads for parallel loops; 0 = all cores */
    int opt_level;            /* LLVM (JIT) and cc (C backend) optimisation level; 0 = default 3 */
    bool llvm_default_passes; /* JIT: LLVM's default<O3> instead of perfora's pass list (slower
                                 to compile, same outputs; for comparisons, see jit.h) */
    bool fp_contract;         /* JIT: fuse a product into the add that uses it (one FMA; about
                                 an ulp from the interpreter per fused add; llvm_contract.c) */
    bool strict_float;        /* CUDA: every product rounded before its add, as the interpreter
                                 and the CPU targets by default; else fused (FMA), as nvcc and
                                 Halide's GPU code (pf_gpu_ptx_options) */
    bool fast_math;           /* JIT: fp_contract, and divisions by a constant or repeatedly by
                                 one value multiply by its reciprocal (about 1.5 ulp each;
                                 llvm_recip.c): Halide's float semantics unless strict_float */
    bool no_vector_math;      /* JIT: vector exp/log/pow... as one libm call per lane instead of
                                 perfora's inline vector code (llvm_vmath.c; for comparisons) */
    int compile_threads;      /* JIT: threads for the compile (jit.h); 0 = one per core, up
                                 to 4; 1 = one module on the calling thread */
    bool no_bounds_pass;      /* keep every boundary check (tests, benches) */
    bool no_border_merge;     /* a split loop's two border parts stay two loops (pass_bounds) */
    bool no_congruence;       /* on-demand reads without Z3's constant weights (benches) */
    bool no_gpu_rows;         /* GPU plans: each thread's rows one by one, every tap loaded per
                                 row (pass_gpu_rows off; benches) */
    bool no_channel_unroll;   /* channel loops stay outside y and x (pass_channels off) */
    bool no_bands;            /* scatter stages stay serial even when asked (pass_bands off) */
    bool no_collapse;         /* no pass_collapse: each channel keeps its own parallel loop */
    bool no_narrow;           /* no pass_narrow: window arrays keep their declared length */
    const char *dump_ir;      /* write the final loop IR here (text), or NULL */
    const char *emit_llvm;    /* write the optimized LLVM IR here, or NULL */
    const char *emit_c_dir;   /* write NAME.c/NAME.h/perfora_rt.* here, or NULL */
    const char *emit_c_name;  /* the function emit_c_dir's files define (NULL: pf_pipeline) */
    const char *emit_object;  /* JIT: also write the module as an object file for this CPU
                                 (jit.h: pf_jit_write_object), or NULL */
    const char *emit_object_name;  /* the function emit_object defines (NULL: pf_pipeline) */
    const char *emit_ptx;     /* CUDA: write the kernels' PTX here, or NULL */
    const char *gpu_arch;     /* CUDA: the PTX target, "sm_80" (default) or newer */
    const char *work_dir;     /* C backend: where to build (default: a fresh dir in $TMPDIR) */
    /* One stage's output (pf_compile_stage_names: "lower", each pass, "llvm") is appended to
     * `dump` when dump_stage names it; "(unchanged)" when a pass changed nothing. */
    const char *dump_stage;
    pf_strbuf *dump;
} pf_compile_options;

typedef struct pf_variant pf_variant;

/* THE DRIVER. Builds prog with params as plan says (NULL: the exact program with the default
 * schedule for this machine, a plan the variant makes and frees), for the backend and options
 * o (NULL: the JIT with defaults). The program and the plan must outlive the variant; the plan
 * must be of this program. NULL with err on failure. */
pf_variant *pf_variant_build(const pf_program *prog, const pf_param_values *params,
                             const pf_plan *plan, const pf_compile_options *o, pf_error *err);

/* The final loop IR every loop-IR backend gets for prog, params and plan (lowering, then the
 * passes the plan allows, each result verified), in arena; NULL with err. For tools and tests
 * that look at the IR itself (the CUDA host side's launches, without a device). */
struct ir_func *pf_variant_loop_ir(const pf_program *prog, const pf_param_values *params,
                                   const pf_plan *plan, pf_arena *arena, pf_error *err);
/* The same under compile options o (the passes it turns off: no_gpu_rows, no_bounds_pass...). */
struct ir_func *pf_variant_loop_ir_with(const pf_program *prog, const pf_param_values *params,
                                        const pf_plan *plan, const pf_compile_options *o,
                                        pf_arena *arena, pf_error *err);

/* The PTX options that o asks for (its gpu_arch, strict_float): what build_cuda compiles with,
 * and what a CUDA export of the same variant must compile with. */
pf_gpu_ptx_options pf_compile_ptx_options(const pf_compile_options *o);

/* The plan target of this machine (its preferred vector width), for pf_plan_new & co. */
pf_plan_target pf_host_plan_target(void);
/* ... for a backend: the host's, a GPU for CUDA (its default schedule is the GPU one). */
pf_plan_target pf_backend_plan_target(pf_backend b);

/* Runs the variant: buffers are the inputs then the outputs, with the extents pf_bind gives
 * for the inputs' extents (the variant checks them). Outputs are fully overwritten. */
int pf_variant_run(pf_variant *v, const pf_buffer *buffers, pf_error *err);

/* `calls` runs (at least one) of v on the same inputs, and *ms their total time: on the host's
 * clock for the whole block, or on a device the kernels' (the inputs uploaded once, then the
 * kernels run again on them: pf_gpu_program_rerun). For timing blocks of calls; the outputs
 * are those of the first call. */
int pf_variant_time_calls(pf_variant *v, const pf_buffer *buffers, int calls, double *ms,
                          pf_error *err);

/* Milliseconds spent compiling (parse excluded: lowering, passes, LLVM/cc, JIT). */
double pf_variant_compile_ms(const pf_variant *v);

/* Counters of what the passes did (for dumps, tests and notes), and where the compile time
 * went (CPU ms per phase: of the compiling thread, and for the LLVM phases of a split compile
 * summed over its threads; the LLVM phases are 0 for other backends). */
typedef struct pf_variant_stats {
    int loops_split;
    int borders_merged;
    int checks_removed;
    int ondemand_reads;
    int congruences_proven;
    int channels_unrolled;
    int bands_parallel, bands_refused;  /* scatter loops banded / asked but left serial */
    int loops_collapsed;      /* channel loops merged into their parallel loops */
    int arrays_narrowed;      /* window arrays declared as long as their counter goes */
    int gpu_row_windows;      /* GPU row loops with a register window of rows */
    double lower_ms;         /* pf_lower */
    double passes_ms;        /* the loop-IR passes */
    double emit_ms;          /* loop IR -> LLVM IR */
    double optimize_ms;      /* LLVM's pass pipeline */
    double jit_ms;           /* setting up the JIT */
    double codegen_ms;       /* machine code generation and linking */
    int jit_modules;         /* LLVM modules the JIT compile was split into (compile_threads) */
    int gpu_kernels;         /* CUDA: kernels in the PTX */
} pf_variant_stats;
pf_variant_stats pf_variant_get_stats(const pf_variant *v);

/* A variant that runs on a device (CUDA): true, and the times of its last run (kernels by CUDA
 * events; the transfers apart, not in kernel_ms). False for the host's backends, whose time is
 * the call's. */
bool pf_variant_device_times(const pf_variant *v, pf_device_times *t);

void pf_variant_free(pf_variant *v);

const char *pf_backend_name(pf_backend b);
int pf_backend_parse(const char *name, pf_backend *out);

/* The stages `dump_stage` may name that the driver produces, in order, NULL-terminated:
 * "lower", "bounds", "ondemand", "channels", "bands", "llvm". */
extern const char *const pf_compile_stage_names[];

#endif
