/* perfora export of a GPU variant (docs/export.md, "CUDA libraries"): the plan for the GPU
 * target, the driver's loop IR (the IR the CUDA backend runs), the PTX of its kernels
 * (gpu_ptx.h), and the host side as C (cgen_cuda.h) into NAME_host.c, with the runtime
 * perfora_cuda_rt.h/.c beside it. export_cuda_api.c writes NAME.c. */
#include "results/export_internal.h"

#include "base/arena.h"
#include "codegen/cgen_cuda.h"
#include "codegen/compile.h"
#include "codegen/gpu_ptx.h"
#include "perforate/plan.h"

#include <stdio.h>
#include <string.h>

static int write_runtime(const char *tmp, pf_error *err)
{
    pf_strbuf h, c;
    pf_sb_init(&h);
    pf_sb_init(&c);
    pf_sb_puts(&h, pf_cgen_cuda_runtime_header());
    pf_sb_puts(&c, pf_cgen_cuda_runtime_source());
    int rc = pf_export_write_text(tmp, "perfora_cuda_rt", ".h", &h, err);
    if (rc == 0)
        rc = pf_export_write_text(tmp, "perfora_cuda_rt", ".c", &c, err);
    pf_sb_free(&h);
    pf_sb_free(&c);
    return rc;
}

int pf_export_cuda(const pf_export_options *o, const pf_export_source *s,
                   pf_export_target *t, const char *tmp, pf_error *err)
{
    pf_plan_target target = pf_backend_plan_target(PF_BACKEND_CUDA);
    pf_plan *plan = pf_plan_parse(s->prog, s->schedule, o->schedule ? o->schedule : "<schedule>",
                                  &target, err);
    if (!plan)
        return pf_fail_prefix(err, "the variant's schedule");
    pf_arena arena;
    pf_arena_init(&arena);
    pf_gpu_module m = { 0 };
    pf_strbuf host;
    pf_sb_init(&host);
    /* as the search compiled it */
    pf_compile_options co = { .strict_float = s->strict_float, .no_gpu_rows = s->no_gpu_rows };
    pf_gpu_ptx_options po = pf_compile_ptx_options(&co);
    ir_func *f = pf_variant_loop_ir_with(s->prog, &s->pv, plan, &co, &arena, err);
    int rc = f ? 0 : -1;
    if (rc == 0)
        rc = pf_gpu_emit_ptx(f, &po, &m, err);
    if (rc == 0)
        rc = pf_cgen_cuda_host(f, &m, t->name, &host, err);
    if (rc == 0)
        rc = pf_export_write_text(tmp, t->name, "_host.c", &host, err);
    if (rc == 0)
        rc = write_runtime(tmp, err);
    t->kernels = m.n_kernels;
    t->gpu_arch = PF_GPU_DEFAULT_SM;
    pf_sb_free(&host);
    pf_gpu_module_free(&m);
    pf_arena_free(&arena);
    pf_plan_free(plan);
    return rc;
}
