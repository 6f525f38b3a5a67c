/* pf_compile: every stage from a checked program to a runnable variant, in order. */
#include "codegen/compile.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "codegen/cgen.h"
#include "codegen/jit.h"
#include "codegen/lower.h"
#include "codegen/passes.h"
#include "codegen/runtime.h"
#include "interp/interp.h"
#include "perforate/schedule.h"
#include "reconstruct/stage_rt.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct pf_variant {
    pf_backend backend;
    const pf_program *prog;
    pf_param_values params;
    pf_jit *jit;
    void *dl;               /* C backend: the loaded shared object */
    pf_pipeline_fn fn;
    double compile_ms;
    pf_variant_stats stats;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const char *pf_backend_name(pf_backend b)
{
    static const char *names[] = { "jit", "interp", "c" };
    return names[b];
}

int pf_backend_parse(const char *name, pf_backend *out)
{
    for (int b = PF_BACKEND_JIT; b <= PF_BACKEND_C; b++)
        if (strcmp(name, pf_backend_name((pf_backend)b)) == 0) {
            *out = (pf_backend)b;
            return 0;
        }
    return -1;
}

static int verify(const ir_func *f, const char *after, pf_error *err)
{
    char msg[512];
    if (ir_verify(f, msg, sizeof msg) == 0)
        return 0;
    return pf_fail(err, "internal error: invalid IR after %s: %s", after, msg);
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

/* The passes, in order. Each result is verified, so a broken pass is caught where it runs. */
static ir_func *lower_and_optimize(pf_arena *arena, const pf_program *prog,
                                   const pf_param_values *params, const pf_compile_options *o,
                                   pf_variant_stats *stats, pf_error *err)
{
    const pf_exec_gene *exec = o->schedule ? o->schedule->exec : NULL;
    double t0 = pf_thread_cpu_ms();
    ir_func *f = pf_lower(arena, prog, params, exec, err);
    if (!f || verify(f, "lowering", err))
        return NULL;
    double t1 = pf_thread_cpu_ms();
    stats->lower_ms = t1 - t0;
    pf_pass_stats ps = { 0 };
    if (!o->no_bounds_pass) {
        f = pf_pass_bounds(f, !o->no_border_merge, &ps);
        if (verify(f, "pass_bounds", err))
            return NULL;
    }
    f = pf_pass_ondemand(f, !o->no_congruence, &ps);
    if (verify(f, "pass_ondemand", err))
        return NULL;
    if (!o->no_channel_unroll) {
        f = pf_pass_channels(f, &ps);
        if (verify(f, "pass_channels", err))
            return NULL;
    }
    if (!o->no_bands) {
        f = pf_pass_bands(f, &ps);
        if (verify(f, "pass_bands", err))
            return NULL;
    }
    stats->loops_split = ps.loops_split;
    stats->borders_merged = ps.borders_merged;
    stats->checks_removed = ps.checks_removed;
    stats->ondemand_reads = ps.ondemand_reads;
    stats->congruences_proven = ps.congruences_proven;
    stats->channels_unrolled = ps.channels_unrolled;
    stats->bands_parallel = ps.bands_parallel;
    stats->bands_refused = ps.bands_refused;
    stats->passes_ms = pf_thread_cpu_ms() - t1;
    if (o->dump_ir && dump_ir(f, o->dump_ir, err))
        return NULL;
    if (o->emit_c_dir && pf_cgen_write_dir(f, "pf_pipeline", o->emit_c_dir, err))
        return NULL;
    return f;
}

/* ---- the C backend: cc into a shared object, then dlopen ---- */

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

static int compile_c(pf_variant *v, const ir_func *f, const pf_compile_options *o,
                     pf_error *err)
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

pf_variant *pf_compile(const pf_program *prog, const pf_param_values *params,
                       const pf_compile_options *opt, pf_error *err)
{
    pf_compile_options defaults = { 0 };
    const pf_compile_options *o = opt ? opt : &defaults;
    double t0 = now_ms();
    pf_variant *v = pf_xcalloc(1, sizeof *v);
    v->backend = o->backend;
    v->prog = prog;
    v->params.n = params->n;
    v->params.values = pf_xmalloc(sizeof(pf_value) * (size_t)(params->n + 1));
    memcpy(v->params.values, params->values, sizeof(pf_value) * (size_t)params->n);
    if (o->threads > 0)
        pf_rt_set_threads(o->threads);
    if (o->backend == PF_BACKEND_INTERP)
        return v;
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = lower_and_optimize(&arena, prog, params, o, &v->stats, err);
    int rc = -1;
    if (f && o->backend == PF_BACKEND_JIT) {
        pf_jit_times jt;
        pf_jit_options jo = { .opt_level = o->opt_level ? o->opt_level : 3,
                              .dump_llvm = o->emit_llvm,
                              .llvm_default_passes = o->llvm_default_passes,
                              .fp_contract = o->fp_contract, .fast_math = o->fast_math,
                              .times = &jt,
                              .compile_threads = o->compile_threads };
        v->jit = pf_jit_compile(f, &jo, err);
        if (v->jit) {
            v->stats.emit_ms = jt.emit_ms;
            v->stats.optimize_ms = jt.optimize_ms;
            v->stats.jit_ms = jt.jit_ms;
            v->stats.codegen_ms = jt.codegen_ms;
            v->stats.jit_modules = jt.modules;
            v->fn = pf_jit_function(v->jit);
            rc = 0;
        }
    } else if (f) {
        rc = compile_c(v, f, o, err);
    }
    pf_arena_free(&arena);
    if (rc != 0) {
        pf_variant_free(v);
        return NULL;
    }
    v->compile_ms = now_ms() - t0;
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
    const pf_program *p = v->prog;
    int rc = 0;
    if (v->backend == PF_BACKEND_INTERP) {
        rc = pf_interp_run_approx(p, &v->params, &b, buffers, buffers + p->n_inputs,
                                  pf_srt_table(), err);
    } else {
        int32_t status = v->fn(buffers);
        if (status == 1)
            rc = pf_fail(err, "the pipeline ran out of memory (or an intermediate image "
                              "spans more than 2^31 elements)");
        else if (status == 2)
            rc = pf_fail(err, "a buffer's x stride is not 1");
        else if (status != 0)
            rc = pf_fail(err, "the pipeline failed with status %d", (int)status);
    }
    pf_binding_free(&b);
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
    pf_jit_free(v->jit);
    if (v->dl)
        dlclose(v->dl);
    free(v->params.values);
    free(v);
}
