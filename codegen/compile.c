/* The driver (compile.h): every stage from a checked program and its plan to a runnable
 * variant, in order, and the table of backends. A backend that compiles the loop IR (the JIT,
 * the C backend; next CUDA) gets the function after lowering and the passes; the interpreter
 * reads the program and the plan directly. */
#include "codegen/compile.h"

#include "base/arena.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "codegen/cgen.h"
#include "codegen/gpu_device.h"
#include "codegen/gpu_ptx.h"
#include "codegen/jit.h"
#include "codegen/lower.h"
#include "codegen/passes.h"
#include "codegen/runtime.h"
#include "interp/interp.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct backend backend;

struct pf_variant {
    const backend *be;
    const pf_program *prog;
    const pf_plan *plan;
    pf_plan *own_plan;      /* built with a NULL plan: the exact one, freed with the variant */
    pf_param_values params;
    pf_jit *jit;
    void *dl;               /* C backend: the loaded shared object */
    pf_pipeline_fn fn;
    double compile_ms;
    pf_variant_stats stats;
    pf_gpu_program *gpu;    /* CUDA: the kernels on the device */
    pf_device_times device; /* CUDA: the last run's */
    pf_arena *ir;           /* CUDA: the loop IR the host side walks at every run */
};

/* A backend: `build` gets the final loop IR when `loop_ir` (else NULL), `run` the bound
 * buffers; `release` frees what build made. */
struct backend {
    pf_backend id;
    const char *name;
    bool loop_ir;
    int (*build)(pf_variant *v, const ir_func *f, const pf_compile_options *o, pf_error *err);
    int (*run)(pf_variant *v, const pf_buffer *buffers, const pf_binding *b, pf_error *err);
    void (*release)(pf_variant *v);
};

const char *const pf_compile_stage_names[] = { "lower", "narrow", "bounds", "ondemand", "rows",
                                               "channels", "bands", "collapse", "llvm",
                                               NULL };

pf_plan_target pf_host_plan_target(void)
{
    pf_plan_target t = { .vector_lanes = pf_jit_wide_float_lanes() };
    return t;
}

pf_plan_target pf_backend_plan_target(pf_backend b)
{
    pf_plan_target t = pf_host_plan_target();
    t.gpu = b == PF_BACKEND_CUDA;
    return t;
}

/* ---- the loop-IR passes, in order ---- */

typedef struct pass {
    const char *name;
    ir_func *(*run)(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps);
    bool gpu;  /* runs on the IR of a plan with GPU stages: it keeps block and thread loops
                  as they are (the others split, move or band loops; docs/gpu.md) */
    bool only_gpu;  /* runs only there (the GPU form of a pass that splits loops) */
} pass;

static ir_func *run_narrow(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_narrow ? f : pf_pass_narrow(f, ps);
}

static ir_func *run_bounds(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_bounds_pass ? f : pf_pass_bounds(f, !o->no_border_merge, ps);
}

static ir_func *run_bounds_gpu(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_bounds_pass ? f : pf_pass_bounds_gpu(f, ps);
}

static ir_func *run_ondemand(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return pf_pass_ondemand(f, !o->no_congruence, ps);
}

static ir_func *run_gpu_rows(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_gpu_rows ? f : pf_pass_gpu_rows(f, ps);
}

static ir_func *run_channels(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_channel_unroll ? f : pf_pass_channels(f, ps);
}

static ir_func *run_bands(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_bands ? f : pf_pass_bands(f, ps);
}

static ir_func *run_collapse(ir_func *f, const pf_compile_options *o, pf_pass_stats *ps)
{
    return o->no_collapse ? f : pf_pass_collapse(f, ps);
}

static const pass passes[] = { { "narrow", run_narrow, false, false },
                               { "bounds", run_bounds, false, false },
                               { "bounds", run_bounds_gpu, true, true },
                               { "ondemand", run_ondemand, true, false },
                               { "rows", run_gpu_rows, true, true },
                               { "channels", run_channels, false, false },
                               { "bands", run_bands, false, false },
                               { "collapse", run_collapse, false, false } };

static int verify(const ir_func *f, const char *after, pf_error *err)
{
    char msg[512];
    if (ir_verify(f, msg, sizeof msg) == 0)
        return 0;
    return pf_fail(err, "internal error: invalid IR after %s: %s", after, msg);
}

static bool dumping(const pf_compile_options *o, const char *stage)
{
    return o->dump && o->dump_stage && strcmp(o->dump_stage, stage) == 0;
}

/* --dump of a pass: its output, or "(unchanged)" when it is the text it was given. */
static void dump_pass(const pf_compile_options *o, const pf_strbuf *before, const ir_func *f)
{
    pf_strbuf after;
    pf_sb_init(&after);
    ir_print_func(f, &after);
    if (before && strcmp(pf_sb_str(before), pf_sb_str(&after)) == 0)
        pf_sb_puts(o->dump, "(unchanged)\n");
    else
        pf_sb_puts(o->dump, pf_sb_str(&after));
    pf_sb_free(&after);
}

static ir_func *run_pass(const pass *p, ir_func *f, const pf_compile_options *o,
                         pf_pass_stats *ps, pf_error *err)
{
    bool dump = dumping(o, p->name);
    pf_strbuf before;
    pf_sb_init(&before);
    if (dump)
        ir_print_func(f, &before);
    f = p->run(f, o, ps);
    if (dump)
        dump_pass(o, &before, f);
    pf_sb_free(&before);
    return verify(f, p->name, err) ? NULL : f;
}

static int dump_ir(const ir_func *f, const char *path, pf_error *err)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    ir_print_func(f, &sb);
    int rc = pf_write_file_atomic(path, pf_sb_str(&sb), sb.len, err);
    pf_sb_free(&sb);
    return rc;
}

static void keep_pass_stats(pf_variant_stats *s, const pf_pass_stats *ps)
{
    s->loops_split = ps->loops_split;
    s->borders_merged = ps->borders_merged;
    s->checks_removed = ps->checks_removed;
    s->ondemand_reads = ps->ondemand_reads;
    s->congruences_proven = ps->congruences_proven;
    s->channels_unrolled = ps->channels_unrolled;
    s->bands_parallel = ps->bands_parallel;
    s->bands_refused = ps->bands_refused;
    s->loops_collapsed = ps->loops_collapsed;
    s->arrays_narrowed = ps->arrays_narrowed;
    s->gpu_row_windows = ps->gpu_row_windows;
}

/* Lowering, then the passes. Each result is verified, so a broken pass is caught where it
 * runs. */
static ir_func *lower_and_optimize(pf_arena *arena, const pf_program *prog,
                                   const pf_param_values *params, const pf_plan *plan,
                                   const pf_compile_options *o, pf_variant_stats *stats,
                                   pf_error *err)
{
    double t0 = pf_thread_cpu_ms();
    ir_func *f = pf_lower(arena, prog, params, plan, err);
    if (!f || verify(f, "lowering", err))
        return NULL;
    if (dumping(o, "lower"))
        dump_pass(o, NULL, f);
    double t1 = pf_thread_cpu_ms();
    stats->lower_ms = t1 - t0;
    pf_pass_stats ps = { 0 };
    bool gpu = pf_plan_has_gpu(plan);
    for (size_t i = 0; f && i < sizeof passes / sizeof *passes; i++)
        if (gpu ? passes[i].gpu : !passes[i].only_gpu)
            f = run_pass(&passes[i], f, o, &ps, err);
    if (!f)
        return NULL;
    keep_pass_stats(stats, &ps);
    stats->passes_ms = pf_thread_cpu_ms() - t1;
    if (o->dump_ir && dump_ir(f, o->dump_ir, err))
        return NULL;
    if (o->emit_c_dir && pf_cgen_write_dir(f, o->emit_c_name ? o->emit_c_name : "pf_pipeline",
                                            o->emit_c_dir, err))
        return NULL;
    return f;
}

pf_gpu_ptx_options pf_compile_ptx_options(const pf_compile_options *o)
{
    return (pf_gpu_ptx_options){ .sm = o->gpu_arch, .strict_float = o->strict_float };
}

ir_func *pf_variant_loop_ir_with(const pf_program *prog, const pf_param_values *params,
                                 const pf_plan *plan, const pf_compile_options *o,
                                 pf_arena *arena, pf_error *err)
{
    pf_variant_stats stats;
    return lower_and_optimize(arena, prog, params, plan, o, &stats, err);
}

ir_func *pf_variant_loop_ir(const pf_program *prog, const pf_param_values *params,
                            const pf_plan *plan, pf_arena *arena, pf_error *err)
{
    pf_compile_options o = { 0 };
    return pf_variant_loop_ir_with(prog, params, plan, &o, arena, err);
}

/* ---- native code: the JIT and the C backend ---- */

/* The LLVM IR of a --dump llvm, through a temporary file (the JIT writes modules to files). */
static int dump_llvm_text(const pf_compile_options *o, const char *path, pf_error *err)
{
    char *text;
    size_t len;
    if (pf_read_file(path, (size_t)1 << 30, &text, &len, err))
        return -1;
    pf_sb_putn(o->dump, text, len);
    free(text);
    return 0;
}

static int build_jit(pf_variant *v, const ir_func *f, const pf_compile_options *o,
                     pf_error *err)
{
    char tmp[512] = "";
    const char *llvm = o->emit_llvm;
    if (dumping(o, "llvm") && !llvm) {
        const char *d = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(tmp, sizeof tmp, "%s/perfora-llvm-XXXXXX", d);
        int fd = mkstemp(tmp);
        if (fd < 0)
            return pf_fail(err, "cannot create a temporary file in %s", d);
        close(fd);
        llvm = tmp;
    }
    pf_jit_times jt;
    pf_jit_options jo = { .opt_level = o->opt_level ? o->opt_level : 3, .dump_llvm = llvm,
                          .llvm_default_passes = o->llvm_default_passes,
                          .fp_contract = o->fp_contract, .fast_math = o->fast_math,
                          .no_vector_math = o->no_vector_math, .times = &jt,
                          .compile_threads = o->compile_threads };
    const char *entry = o->emit_object_name ? o->emit_object_name : "pf_pipeline";
    if (o->emit_object && pf_jit_write_object(f, &jo, entry, o->emit_object, err))
        return -1;
    v->jit = pf_jit_compile(f, &jo, err);
    int rc = v->jit && dumping(o, "llvm") ? dump_llvm_text(o, llvm, err) : 0;
    if (tmp[0])
        unlink(tmp);
    if (!v->jit || rc)
        return -1;
    v->stats.emit_ms = jt.emit_ms;
    v->stats.optimize_ms = jt.optimize_ms;
    v->stats.jit_ms = jt.jit_ms;
    v->stats.codegen_ms = jt.codegen_ms;
    v->stats.jit_modules = jt.modules;
    v->fn = pf_jit_function(v->jit);
    return 0;
}

static int run_cc(const char *dir, int opt_level, pf_error *err)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cc -std=c11 -O%d -ffp-contract=off -march=native -fPIC -shared "
             "-pthread -o pipeline.so pf_pipeline.c perfora_rt.c -lm > cc.log 2>&1",
             dir, opt_level);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        return pf_fail(err, "the C compiler failed on the generated code (see %s/cc.log)", dir);
    return 0;
}

/* cc into a shared object, then dlopen. */
static int build_c(pf_variant *v, const ir_func *f, const pf_compile_options *o, pf_error *err)
{
    char tmpl[512];
    const char *dir = o->work_dir;
    if (!dir) {
        const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(tmpl, sizeof tmpl, "%s/perfora-cc-XXXXXX", t);
        if (!mkdtemp(tmpl))
            return pf_fail(err, "cannot create a build directory in %s", t);
        dir = tmpl;
    }
    if (pf_cgen_write_dir(f, "pf_pipeline", dir, err) != 0 ||
        run_cc(dir, o->opt_level ? o->opt_level : 3, err) != 0)
        return -1;
    char so[600];
    snprintf(so, sizeof so, "%s/pipeline.so", dir);
    v->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!v->dl)
        return pf_fail(err, "cannot load %s: %s", so, dlerror());
    v->fn = (pf_pipeline_fn)(uintptr_t)dlsym(v->dl, "pf_pipeline");
    if (!v->fn)
        return pf_fail(err, "%s has no pf_pipeline", so);
    if (!o->work_dir) {  /* the object is loaded; the directory is no longer needed */
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            return pf_fail(err, "cannot remove %s", dir);
    }
    return 0;
}

static int run_native(pf_variant *v, const pf_buffer *buffers, const pf_binding *b,
                      pf_error *err)
{
    (void)b;
    int32_t status = v->fn(buffers);
    if (status == 1)
        return pf_fail(err, "the pipeline ran out of memory (or an intermediate image spans "
                            "more than 2^31 elements)");
    if (status == 2)
        return pf_fail(err, "a buffer's x stride is not 1");
    if (status != 0)
        return pf_fail(err, "the pipeline failed with status %d", (int)status);
    return 0;
}

static void release_native(pf_variant *v)
{
    pf_jit_free(v->jit);
    if (v->dl)
        dlclose(v->dl);
}

/* ---- CUDA ---- */

/* The kernels' PTX (written out when asked, also where no driver is), then the device program:
 * the driver loads it, and every run walks the loop IR's host side (kept with the variant). */
static int build_cuda(pf_variant *v, const ir_func *f, const pf_compile_options *o,
                      pf_error *err)
{
    pf_gpu_module m;
    pf_gpu_ptx_options po = pf_compile_ptx_options(o);
    if (pf_gpu_emit_ptx(f, &po, &m, err))
        return -1;
    v->stats.gpu_kernels = m.n_kernels;
    if (o->emit_ptx && pf_write_file_atomic(o->emit_ptx, m.ptx, m.ptx_len, err)) {
        pf_gpu_module_free(&m);
        return -1;
    }
    v->gpu = pf_gpu_program_new(f, &m, err);
    return v->gpu ? 0 : -1;
}

static int run_cuda(pf_variant *v, const pf_buffer *buffers, const pf_binding *b,
                    pf_error *err)
{
    (void)b;
    return pf_gpu_program_run(v->gpu, buffers, &v->device, err);
}

static void release_cuda(pf_variant *v)
{
    pf_gpu_program_free(v->gpu);
}

bool pf_variant_device_times(const pf_variant *v, pf_device_times *t)
{
    if (!v->gpu)
        return false;
    *t = v->device;
    return true;
}

/* ---- the interpreter ---- */

static int build_interp(pf_variant *v, const ir_func *f, const pf_compile_options *o,
                        pf_error *err)
{
    (void)v, (void)f, (void)o, (void)err;
    return 0;
}

static int run_interp(pf_variant *v, const pf_buffer *buffers, const pf_binding *b,
                      pf_error *err)
{
    const pf_program *p = v->prog;
    return pf_interp_run(p, &v->params, v->plan, b, buffers, buffers + p->n_inputs, err);
}

/* ---- the table ---- */

static const backend backends[] = {
    { PF_BACKEND_JIT, "jit", true, build_jit, run_native, release_native },
    { PF_BACKEND_INTERP, "interp", false, build_interp, run_interp, release_native },
    { PF_BACKEND_C, "c", true, build_c, run_native, release_native },
    { PF_BACKEND_CUDA, "cuda", true, build_cuda, run_cuda, release_cuda },
};

const char *pf_backend_name(pf_backend b)
{
    return backends[b].name;
}

int pf_backend_parse(const char *name, pf_backend *out)
{
    for (size_t b = 0; b < sizeof backends / sizeof *backends; b++)
        if (strcmp(name, backends[b].name) == 0) {
            *out = backends[b].id;
            return 0;
        }
    return -1;
}

/* A --dump of a stage this backend does not have says so. */
static void note_missing_dump(const backend *be, const pf_compile_options *o)
{
    for (int i = 0; o->dump && o->dump_stage && pf_compile_stage_names[i]; i++) {
        const char *s = pf_compile_stage_names[i];
        bool llvm = strcmp(s, "llvm") == 0;
        if (strcmp(s, o->dump_stage) == 0 && (!be->loop_ir || (llvm && be->id != PF_BACKEND_JIT)))
            pf_sb_printf(o->dump, "(none: the %s backend %s)\n", be->name,
                         !be->loop_ir ? "runs the program and the plan directly"
                         : be->id == PF_BACKEND_CUDA ? "compiles the loop IR to PTX (--emit-ptx)"
                                                     : "compiles the loop IR to C, not LLVM IR");
    }
}

pf_variant *pf_variant_build(const pf_program *prog, const pf_param_values *params,
                             const pf_plan *plan, const pf_compile_options *opt, pf_error *err)
{
    pf_compile_options defaults = { 0 };
    const pf_compile_options *o = opt ? opt : &defaults;
    if (plan && plan->prog != prog) {
        pf_fail(err, "%s: the plan is of another program", prog->file_name);
        return NULL;
    }
    double t0 = pf_now_ms();
    pf_plan *own = NULL;
    if (!plan) {
        pf_plan_target t = pf_backend_plan_target(o->backend);
        if (!(plan = own = pf_plan_new(prog, NULL, &t, err)))
            return NULL;
    }
    pf_variant *v = pf_xcalloc(1, sizeof *v);
    v->be = &backends[o->backend];
    v->prog = prog;
    v->plan = plan;
    v->own_plan = own;
    v->params.n = params->n;
    v->params.values = pf_xmalloc(sizeof(pf_value) * (size_t)(params->n + 1));
    memcpy(v->params.values, params->values, sizeof(pf_value) * (size_t)params->n);
    if (o->threads > 0)
        pf_rt_set_threads(o->threads);
    note_missing_dump(v->be, o);
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = v->be->loop_ir ? lower_and_optimize(&arena, prog, &v->params, plan, o,
                                                     &v->stats, err)
                                : NULL;
    int rc = v->be->loop_ir && !f ? -1 : v->be->build(v, f, o, err);
    if (rc == 0 && v->gpu) {  /* the device program walks the IR at every run */
        v->ir = pf_xmalloc(sizeof *v->ir);
        *v->ir = arena;
    } else {
        pf_arena_free(&arena);
    }
    if (rc != 0) {
        pf_variant_free(v);
        return NULL;
    }
    v->compile_ms = pf_now_ms() - t0;
    return v;
}

/* The variant checks buffers against pf_bind, so generated code can trust its extents. */
static int check_buffers(pf_variant *v, const pf_buffer *buffers, pf_binding *b, pf_error *err)
{
    const pf_program *p = v->prog;
    int64_t (*ext)[PF_MAX_DIMS] = pf_xcalloc((size_t)p->n_inputs + 1, sizeof *ext);
    for (int i = 0; i < p->n_inputs; i++)
        for (int d = 0; d < PF_MAX_DIMS; d++)
            ext[i][d] = d < buffers[i].ndims ? buffers[i].extent[d] : 1;
    int rc = pf_bind(p, &v->params, (const int64_t(*)[PF_MAX_DIMS])ext, b, err);
    free(ext);
    if (rc != 0)
        return -1;
    for (int i = 0; i < p->n_outputs; i++) {
        const pf_image_decl *d = p->outputs[i];
        const pf_buffer *ob = &buffers[p->n_inputs + i];
        for (int k = 0; k < PF_MAX_DIMS; k++) {
            int64_t have = k < ob->ndims ? ob->extent[k] : 1;
            int64_t want = k < d->ndims ? b->extents[d->index][k] : 1;
            if (have != want) {
                pf_binding_free(b);
                return pf_fail(err, "output '%s': dimension %d has extent %" PRId64
                               ", the pipeline produces %" PRId64, d->name, k, have, want);
            }
        }
    }
    return 0;
}

int pf_variant_run(pf_variant *v, const pf_buffer *buffers, pf_error *err)
{
    pf_binding b;
    if (check_buffers(v, buffers, &b, err) != 0)
        return -1;
    int rc = v->be->run(v, buffers, &b, err);
    pf_binding_free(&b);
    return rc;
}

int pf_variant_time_calls(pf_variant *v, const pf_buffer *buffers, int calls, double *ms,
                          pf_error *err)
{
    double t0 = pf_now_ms();
    int rc = pf_variant_run(v, buffers, err);
    double kernels = v->device.kernel_ms;
    for (int k = 1; k < calls && rc == 0; k++) {
        rc = v->gpu ? pf_gpu_program_rerun(v->gpu, &v->device, err)
                    : pf_variant_run(v, buffers, err);
        kernels += v->device.kernel_ms;
    }
    *ms = v->gpu ? kernels : pf_now_ms() - t0;
    return rc;
}

double pf_variant_compile_ms(const pf_variant *v)
{
    return v->compile_ms;
}

pf_variant_stats pf_variant_get_stats(const pf_variant *v)
{
    return v->stats;
}

void pf_variant_free(pf_variant *v)
{
    if (!v)
        return;
    v->be->release(v);
    if (v->ir)
        pf_arena_free(v->ir);
    free(v->ir);
    pf_plan_free(v->own_plan);
    free(v->params.values);
    free(v);
}
