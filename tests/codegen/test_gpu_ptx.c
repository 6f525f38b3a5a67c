/* NVPTX code generation (issue 24, docs/gpu.md): every app's default GPU plan becomes PTX
 * (--emit-ptx's file), which CUDA's ptxas assembles for sm_90 without error; its register and
 * spill counts per kernel are printed (the note's PTX statistics). Where ptxas is not on the
 * machine the assembly check prints SKIP and why. And the CUDA driver, loaded at run time,
 * fails with a clear message where there is none. */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "base/fileio.h"
#include "codegen/cuda_driver.h"
#include "codegen/gpu_device.h"
#include "codegen/gpu_ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const apps[] = { "blur", "unsharp_mask", "bilateral_filter",
                                    "bilateral_grid", "demosaic", "mosaic", "median",
                                    "artistic_blur" };

/* ptxas from $PTXAS, else CUDA's default place, else NULL. */
static const char *ptxas_path(void)
{
    const char *p = getenv("PTXAS");
    if (p && *p && access(p, X_OK) == 0)
        return p;
    return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* Builds app for CUDA with its default GPU schedule, the PTX written to path; returns the
 * kernel count (the build itself stops at the driver where there is none), -2 when the app
 * needs CUDA's libdevice and the machine has none (SKIP printed), -1 on failure. */
static const pf_plan_target gpu_target = { .vector_lanes = 8, .gpu = true };

/* The plan of schedule text for a GPU target (NULL: the default GPU schedule). */
static pf_plan *gpu_plan(const pf_program *prog, const char *text)
{
    pf_error err;
    pf_plan *p = text ? pf_plan_parse(prog, text, "<ptx test>", &gpu_target, &err)
                      : pf_plan_new(prog, NULL, &gpu_target, &err);
    if (!p)
        printf("\n    %s: %s", prog->name, err.msg);
    return p;
}

/* --strict-float for the next emit_ptx (test_ptx_fma). */
static bool strict_float;

static int emit_ptx(const char *app, const char *sched, const char *path)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values params;
    pf_params_init(&params, prog);
    pf_compile_options o = { 0 };
    o.backend = PF_BACKEND_CUDA;
    o.emit_ptx = path;
    o.strict_float = strict_float;
    unlink(path);
    pf_error err;
    pf_plan *plan = sched ? gpu_plan(prog, sched) : NULL;
    pf_variant *v = !sched || plan ? pf_variant_build(prog, &params, plan, &o, &err) : NULL;
    if (sched && !plan)
        snprintf(err.msg, sizeof err.msg, "no plan");
    pf_plan_free(plan);
    int kernels = -1;
    char lib[1024];
    if (v) {
        kernels = pf_variant_get_stats(v).gpu_kernels;
        pf_variant_free(v);
    } else if (strstr(err.msg, "no CUDA") || strstr(err.msg, "not implemented yet")) {
        kernels = 0;  /* the PTX was written; counted from the file below */
    } else if (strstr(err.msg, "libdevice") && !pf_gpu_libdevice_path(lib, sizeof lib)) {
        printf("\n    SKIP %s: %s", app, err.msg);
        kernels = -2;
    } else {
        printf("\n    %s: %s", app, err.msg);
    }
    pf_params_free(&params);
    pf_program_free(prog);
    return kernels;
}

/* ptxas -v on path: 0 when it assembles; prints each kernel's registers and spills, and
 * sets *max_regs (when not NULL) to the most registers a kernel uses. */
static int assemble(const char *ptxas, const char *app, const char *path, int kernels,
                    int *max_regs)
{
    char cmd[1024], log[512];
    snprintf(log, sizeof log, "%s.log", path);
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -v '%s' -o /dev/null > '%s' 2>&1", ptxas, path,
             log);
    int rc = system(cmd);
    char *text = NULL;
    size_t len;
    pf_error err;
    if (pf_read_file(log, 1 << 20, &text, &len, &err) != 0)
        return -1;
    if (rc != 0)
        printf("\n    ptxas failed on %s:\n%s", app, text);
    int regs = 0, spills = 0, used = cg_count(text, "Used ");
    for (const char *p = strstr(text, "Used "); p; p = strstr(p + 1, "Used ")) {
        int r = atoi(p + 5);
        regs = r > regs ? r : regs;
    }
    for (const char *p = strstr(text, "bytes spill stores"); p;
         p = strstr(p + 1, "bytes spill stores")) {
        const char *q = p;
        while (q > text && q[-1] == ' ')
            q--;
        while (q > text && q[-1] >= '0' && q[-1] <= '9')
            q--;
        spills += atoi(q);
    }
    printf("\n    %-16s %d kernels, ptxas sm_90: max %3d registers, %d bytes spilled", app,
           kernels, regs, spills);
    CU_ASSERT_EQUAL(used, kernels);  /* every kernel assembled */
    if (max_regs)
        *max_regs = regs;
    free(text);
    unlink(log);
    return rc == 0 ? 0 : -1;
}

/* ptxas, or NULL with SKIP printed. */
static const char *ptxas_or_skip(void)
{
    const char *ptxas = ptxas_path();
    if (!ptxas)
        printf("\n    SKIP (assembly only): ptxas not found (not at /usr/local/cuda/bin/ptxas, "
               "$PTXAS unset): the PTX is emitted and checked, not assembled");
    return ptxas;
}

/* The PTX of app under sched (NULL: its default GPU schedule) written to path and read back,
 * with its kernel count; NULL where the machine lacks libdevice (SKIP printed). */
static char *ptx_of(const char *app, const char *sched, const char *path, int *kernels)
{
    int built = emit_ptx(app, sched, path);
    if (built == -2)
        return NULL;
    CU_ASSERT(built >= 0);
    char *ptx = NULL;
    size_t len;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(path, 1 << 24, &ptx, &len, &err), 0);
    *kernels = cg_count(ptx, ".entry pf_kernel_");
    return ptx;
}

static void test_ptx_every_app(void)
{
    const char *ptxas = ptxas_or_skip();
    char dir[] = "/tmp/perfora-ptx-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s.ptx", dir, apps[a]);
        int kernels = 0;
        char *ptx = ptx_of(apps[a], NULL, path, &kernels);
        if (!ptx)
            continue;
        CU_ASSERT(kernels >= 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".target sm_80"));
        CU_ASSERT_PTR_NOT_NULL(strstr(ptx, "%ctaid."));
        CU_ASSERT_PTR_NOT_NULL(strstr(ptx, "%tid."));
        /* the apps whose default GPU schedule keeps a producer in shared memory */
        if (strcmp(apps[a], "blur") == 0 || strcmp(apps[a], "unsharp_mask") == 0) {
            CU_ASSERT_PTR_NOT_NULL(strstr(ptx, "bar.sync"));
            CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".extern .shared"));
        }
        /* the bilateral grid's splat: a pixel a thread, its writes atomic adds */
        if (strcmp(apps[a], "bilateral_grid") == 0)
            CU_ASSERT_EQUAL(cg_count(ptx, "atom.global.add.f32") +
                                cg_count(ptx, "red.global.add.f32"), 4);
        /* the median's whole windows: the selection network in registers (gpu_rt.c; 1094
         * min/max for 81 elements), not only the sort */
        if (strcmp(apps[a], "median") == 0)
            CU_ASSERT(cg_count(ptx, "min.f32") + cg_count(ptx, "max.f32") >= 1000);
        if (ptxas)
            CU_ASSERT_EQUAL(assemble(ptxas, apps[a], path, kernels, NULL), 0);
        free(ptx);
        unlink(path);
    }
    rmdir(dir);
}

/* A product used only by an add is one fma.rn.f32 in the kernels, as nvcc makes it (its
 * default --fmad=true) and Halide's GPU code; --strict-float rounds both, as the interpreter
 * does. The blur: a product and an add per tap; fused, each pair one fma. */
static void test_ptx_fma(void)
{
    char path[] = "/tmp/perfora-ptx-fma-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    int pairs = 0;
    for (int strict = 1; strict >= 0; strict--) {
        strict_float = strict;
        int kernels = 0;
        char *ptx = ptx_of("blur", NULL, path, &kernels);
        strict_float = false;
        CU_ASSERT_PTR_NOT_NULL_FATAL(ptx);
        int fma = cg_count(ptx, "fma.rn.f32"), mul = cg_count(ptx, "mul.rn.f32"),
            add = cg_count(ptx, "add.rn.f32");
        printf("\n    blur%-15s fma %d, mul %d, add %d", strict ? " --strict-float" : "", fma,
               mul, add);
        if (strict) {
            pairs = mul;
            CU_ASSERT(mul >= 34 && add == mul && fma == 0);
        } else {
            CU_ASSERT(fma == pairs && mul == 0 && add == 0);
        }
        free(ptx);
    }
    unlink(path);
}

/* Every kernel declares its block (.maxntid), so ptxas keeps its registers within what the
 * block may take: the median on 64x16 = 1024-thread blocks got 108 registers a thread, more
 * than a block of 1024 may have (65536 an SM), and its launch failed on an H200 (CUDA error
 * 701, too many resources requested). */
static void test_ptx_launch_bounds(void)
{
    const char *ptxas = ptxas_or_skip();
    const char *path = "/tmp/pf_test_launch_bounds.ptx";
    int kernels = 0;
    char *ptx = ptx_of("median", "loop_pixels exec tile 64 16 gpu\n", path, &kernels);
    if (!ptx)
        return;
    CU_ASSERT(kernels >= 1);
    CU_ASSERT_EQUAL(cg_count(ptx, ".maxntid "), kernels);
    CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".maxntid 64, 16, 1"));
    int regs = 0;
    if (ptxas) {
        CU_ASSERT_EQUAL(assemble(ptxas, "median 64x16", path, kernels, &regs), 0);
        CU_ASSERT(regs > 0 && regs <= 64);
    }
    free(ptx);
    unlink(path);
}

/* Perforation with masks on the GPU (docs/gpu.md §5): adaptive sampling's coarse-mask kernel
 * and importance sampling of the bilateral grid's splat (atomic adds where the host's mask
 * says) assemble too. */
static void test_ptx_masks(void)
{
    static const char *const cases[][2] = {
        { "blur", "loop_output adaptive 4 0.3 reconstruct store nearest\n" },
        { "bilateral_grid", "populate_b_grid_loop importance 0.4 0.1\n" },
    };
    const char *ptxas = ptxas_or_skip();
    char dir[] = "/tmp/perfora-ptx-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s.ptx", dir, cases[i][0]);
        int kernels = 0;
        char *ptx = ptx_of(cases[i][0], cases[i][1], path, &kernels);
        if (!ptx)
            continue;
        if (ptxas)
            CU_ASSERT_EQUAL(assemble(ptxas, cases[i][0], path, kernels, NULL), 0);
        free(ptx);
        unlink(path);
    }
    rmdir(dir);
}

/* The kernels lowering makes for runtime work (docs/gpu.md §5): a store-mode Gaussian
 * reconstruction, tiled and one thread per row and column (PF_GPU_GAUSS), and channel copies;
 * PTX emitted and assembled like the apps' (registers and spills printed). */
static const char *const runtime_cases[][3] = {
    { "blur", "tiled", "loop_output grid 4 4 1 reconstruct store gaussian 0.8\n" },
    { "blur", "rows", "loop_output grid 4 4 1 reconstruct store gaussian 0.8\n" },
    { "unsharp_mask", "tiled", "loop_output grid 3 2 1 channels 2 reconstruct store gaussian 2\n"
                               "loop_temp channels 1\n" },
};

static void test_ptx_runtime_kernels(void)
{
    const char *ptxas = ptxas_or_skip();
    char dir[] = "/tmp/perfora-ptx-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    for (size_t i = 0; i < sizeof runtime_cases / sizeof *runtime_cases; i++) {
        setenv("PF_GPU_GAUSS", runtime_cases[i][1], 1);
        char path[256], label[64];
        snprintf(path, sizeof path, "%s/case%zu.ptx", dir, i);
        snprintf(label, sizeof label, "%s %s", runtime_cases[i][0], runtime_cases[i][1]);
        int kernels = 0;
        char *ptx = ptx_of(runtime_cases[i][0], runtime_cases[i][2], path, &kernels);
        if (!ptx)
            continue;
        /* the stage's kernels, the Gaussian's init and division, and per axis 1 (rows) or 6
         * (tiled: tails, carry, fix-up per pass) */
        CU_ASSERT(kernels >= (strcmp(runtime_cases[i][1], "rows") == 0 ? 5 : 15));
        CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".f64"));  /* the recursion runs in double */
        if (ptxas)
            CU_ASSERT_EQUAL(assemble(ptxas, label, path, kernels, NULL), 0);
        free(ptx);
        unlink(path);
    }
    unsetenv("PF_GPU_GAUSS");
    rmdir(dir);
}

/* ---- the launches' parameter blocks, without a GPU ---- */

/* The PTX type of each parameter of kernel `name` (".u64", ".u32", ".f32", ".u8"), in order. */
static int ptx_param_types(const char *ptx, const char *name, char types[][8], int cap)
{
    char head[64];
    snprintf(head, sizeof head, ".entry %s(", name);
    const char *p = strstr(ptx, head), *end = p ? strchr(p, ')') : NULL;
    int n = 0;
    for (p = p ? strstr(p, ".param ") : NULL; p && p < end && n < cap;
         p = strstr(p + 1, ".param ")) {
        sscanf(p + 7, "%7s", types[n]);
        n++;
    }
    return n;
}

static const char *ptx_type(ir_type t)
{
    return t == IR_BOOL ? ".u8" : t == IR_I32 ? ".u32" : t == IR_I64 ? ".u64" : ".f32";
}

typedef struct fake_device {
    const ir_func *f;
    const pf_gpu_module *m;
    uint64_t *dptr;       /* by buffer id */
    uint64_t next;
    int launches;
} fake_device;

static int fake_alloc(void *ctx, const ir_buffer *b, size_t bytes, bool zero, pf_error *err)
{
    (void)bytes, (void)zero, (void)err;
    fake_device *d = ctx;
    d->dptr[b->id] = d->next += 1 << 20;
    return 0;
}

static void fake_release(void *ctx, const ir_buffer *b)
{
    (void)ctx, (void)b;
}

static int fake_zero(void *ctx, const ir_buffer *b, pf_error *err)
{
    fake_device *d = ctx;
    return d->dptr[b->id] ? 0 : pf_fail(err, "%s zeroed before its allocation", b->name);
}

/* The parameter block of the launch: every buffer has memory, every variable a value. */
static int fake_launch(void *ctx, const pf_gpu_launch *l, pf_error *err)
{
    fake_device *d = ctx;
    int k = 0;
    while (k < d->m->n_kernels && d->m->kernels[k].nest != l->nest)
        k++;
    if (k == d->m->n_kernels)
        return pf_fail(err, "a launch of a nest without a kernel");
    const pf_gpu_kernel *kn = &d->m->kernels[k];
    uint64_t slots[256];
    void *params[256];
    if (kn->n_params > 256)
        return pf_fail(err, "%d parameters", kn->n_params);
    d->launches++;
    return pf_gpu_kernel_params(d->f, kn, d->dptr, l->vars, l->known, slots, params, err);
}

/* Every app's kernels: the parameters the host passes are the PTX's, in number and type, and
 * the host walk at 2048x1536 fills every launch's parameter block (what the CUDA backend hands
 * cuLaunchKernel). */
static void check_launches(const char *label, const char *app, const char *sched)
{
    {
        pf_program *prog = cg_load_app(app);
        pf_param_values params;
        pf_params_init(&params, prog);
        pf_error err;
        pf_plan *plan = gpu_plan(prog, sched);
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        pf_arena arena;
        pf_arena_init(&arena);
        ir_func *f = pf_variant_loop_ir(prog, &params, plan, &arena, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        pf_gpu_module m;
        char lib[1024];
        if (pf_gpu_emit_ptx(f, NULL, &m, &err) != 0) {
            CU_ASSERT(strstr(err.msg, "libdevice") && !pf_gpu_libdevice_path(lib, sizeof lib));
            printf("\n    SKIP %s: %s", label, err.msg);
        } else {
            for (int k = 0; k < m.n_kernels; k++) {
                const pf_gpu_kernel *kn = &m.kernels[k];
                char types[256][8];
                int n = ptx_param_types(m.ptx, kn->name, types, 256);
                CU_ASSERT_EQUAL(n, kn->n_params);
                CU_ASSERT_EQUAL(n, kn->n_buf_params + kn->n_var_params);
                for (int i = 0; i < kn->n_buf_params && i < n; i++)
                    CU_ASSERT_STRING_EQUAL(types[i], ".u64");
                for (int i = 0; i < kn->n_var_params && kn->n_buf_params + i < n; i++)
                    CU_ASSERT_STRING_EQUAL(types[kn->n_buf_params + i],
                                           ptx_type(kn->var_types[i]));
            }
            fake_device d = { f, &m, pf_xcalloc((size_t)f->n_buffers + 1, 8), 0, 0 };
            int64_t ext[8][IR_MAX_DIMS];
            for (int i = 0; i < f->n_inputs + f->n_outputs && i < 8; i++) {
                for (int k = 0; k < IR_MAX_DIMS; k++)
                    ext[i][k] = k == 0 ? 2048 : k == 1 ? 1536 : k == 2 ? 3 : 1;
                fake_alloc(&d, f->args[i], 0, false, &err);
            }
            pf_gpu_host_ops ops = { &d, fake_alloc, fake_release, fake_zero, fake_launch, NULL };
            int rc = pf_gpu_host_run(f, (const int64_t(*)[IR_MAX_DIMS])ext, &ops, &err);
            if (rc)
                printf("\n    %s: %s", label, err.msg);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT(d.launches >= m.n_kernels);
            printf("\n    %-16s %d kernels, %d launches at 2048x1536: parameters match the PTX",
                   label, m.n_kernels, d.launches);
            free(d.dptr);
            pf_gpu_module_free(&m);
        }
        pf_arena_free(&arena);
        pf_plan_free(plan);
        pf_params_free(&params);
        pf_program_free(prog);
    }
}

static void test_launch_params(void)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        check_launches(apps[a], apps[a], NULL);
    for (size_t i = 0; i < sizeof runtime_cases / sizeof *runtime_cases; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s %s", runtime_cases[i][0], runtime_cases[i][1]);
        setenv("PF_GPU_GAUSS", runtime_cases[i][1], 1);
        check_launches(label, runtime_cases[i][0], runtime_cases[i][2]);
    }
    unsetenv("PF_GPU_GAUSS");
}

/* No driver: a clear message, whatever the machine has (PF_CUDA_DRIVER names the library). */
static void test_no_driver(void)
{
    pf_error err;
    setenv("PF_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    CU_ASSERT_PTR_NULL(pf_cuda_open(&err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no CUDA driver found"));
    setenv("PF_CUDA_DRIVER", "libm.so.6", 1);  /* loads, but is not the driver */
    CU_ASSERT_PTR_NULL(pf_cuda_open(&err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no CUDA driver found (libm.so.6 has no cuInit"));
    unsetenv("PF_CUDA_DRIVER");
    pf_cuda *c = pf_cuda_open(&err);
    if (c) {
        printf("\n    a CUDA device is here: %s (sm_%d)", pf_cuda_device_name(c),
               pf_cuda_capability(c));
        pf_cuda_close(c);
    } else {
        printf("\n    this machine: %s", err.msg);
        CU_ASSERT(strstr(err.msg, "no CUDA driver found") || strstr(err.msg, "no CUDA device"));
    }
}

PF_TEST_SUITE(codegen_gpu_ptx, PF_TEST(test_ptx_every_app), PF_TEST(test_ptx_fma),
              PF_TEST(test_ptx_launch_bounds),
              PF_TEST(test_ptx_masks),
              PF_TEST(test_ptx_runtime_kernels),
              PF_TEST(test_launch_params),
              PF_TEST(test_no_driver))
