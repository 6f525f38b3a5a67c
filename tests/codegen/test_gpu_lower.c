/* GPU lowering run on the CPU (issue 24, docs/gpu.md): every app's plan for a GPU target
 * (block and thread loops, shared-memory windows, barriers) compiled by the JIT, which runs
 * block and thread loops as serial loops, equals the reference interpreter (max abs <= 1e-5),
 * with the default GPU schedule, with the kernels lowering makes for stored reconstructions
 * (fills, Gaussian, channel copies) and under random perforation + random GPU genes (fixed
 * seed).
 * The IR is the one the CUDA backend gets: the driver runs the same passes for both. Suite
 * codegen_gpu_run runs the same tests on the CUDA backend where a GPU is (SKIP elsewhere). */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "codegen/cuda_driver.h"
#include "codegen/gpu_host.h"
#include "codegen/compile.h"
#include "codegen/ir.h"
#include "perforate/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const apps[] = { "blur", "unsharp_mask", "bilateral_filter",
                                    "bilateral_grid", "demosaic", "mosaic", "median",
                                    "artistic_blur" };

static const pf_plan_target gpu_target = { .vector_lanes = 8, .gpu = true };

/* Odd sizes: partial blocks in x and y; a 3-channel input (demosaic and mosaic need 3). */
static const int sizes[][2] = { { 97, 61 }, { 40, 23 } };

/* The backend the GPU lowering runs on, against the interpreter: the JIT (block and thread loops
 * as serial loops), or in suite codegen_gpu_run the CUDA backend on a GPU; and the bound. */
static pf_backend under_test = PF_BACKEND_JIT;
static double tolerance = 1e-5;

/* Whether s holds a runtime call the CUDA backend's host does not run yet (docs/gpu.md §5). */
static bool host_call(const ir_stmt *s)
{
    if (!s)
        return false;
    if (s->kind == IR_S_RTCALL)
        return s->rt != IR_RT_ZERO_BUFFER && !pf_gpu_rtcall_on_host(s);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (host_call(s->body[i]))
            return true;
    return s->kind != IR_S_BLOCK && (host_call(s->then_s) || host_call(s->else_s));
}

static bool cuda_refuses(const pf_program *prog, const pf_param_values *params,
                         const pf_plan *plan)
{
    pf_arena arena;
    pf_arena_init(&arena);
    pf_error err;
    ir_func *f = pf_variant_loop_ir(prog, params, plan, &arena, &err);
    bool refused = f && host_call(f->body);
    pf_arena_free(&arena);
    return refused;
}

/* Runs plan on the backend under test and the interpreter on in; returns the max |diff| over
 * the outputs, or -1 for a plan the CUDA backend refuses by design (a host runtime call: the
 * refusal itself is checked in codegen_gpu_host). */
static double jit_vs_interp(const pf_program *prog, const pf_param_values *params,
                            const pf_plan *plan, pf_image *in)
{
    if (under_test == PF_BACKEND_CUDA && cuda_refuses(prog, params, plan)) {
        printf("\n    %-16s not run: a reconstruction the CUDA host does not run yet",
               prog->name);
        return -1;
    }
    cg_run ref, got;
    if (cg_run_plan(prog, params, plan, PF_BACKEND_INTERP, &in, 1, &ref) != 0)
        return 1e30;
    int rc = cg_run_plan(prog, params, plan, under_test, &in, 1, &got);
    double worst = rc == 0 ? 0.0 : 1e30;
    for (int i = 0; rc == 0 && i < ref.n_out; i++) {
        double d = cg_max_abs_diff(ref.out[i], got.out[i]);
        worst = d > worst ? d : worst;
    }
    cg_run_free(&ref);
    if (rc == 0)
        cg_run_free(&got);
    return worst;
}

static pf_plan *gpu_plan(const pf_program *prog, const char *text)
{
    pf_error err;
    pf_plan *p = pf_plan_parse(prog, text, "<gpu test>", &gpu_target, &err);
    if (!p)
        fprintf(stderr, "\n%s: %s\n%s", prog->name, err.msg, text);
    return p;
}

/* The loop IR of a plan after `stage` (a pass, or "lower"). */
static char *stage_ir(const pf_program *prog, const pf_param_values *params,
                      const pf_plan *plan, const char *stage)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_compile_options o = { 0 };
    o.dump_stage = stage;
    o.dump = &sb;
    pf_variant *v = cg_compile(prog, params, plan, &o);
    pf_variant_free(v);
    return pf_sb_take(&sb);
}

/* The loop IR of a plan as lowered: the GPU passes change no loop (the later dumps:
 * "(unchanged)", but for the clamps the bounds pass clears). */
static char *plan_ir(const pf_program *prog, const pf_param_values *params, const pf_plan *plan)
{
    return stage_ir(prog, params, plan, "lower");
}

/* plan against the interpreter on both sizes (seeds seed, seed + 1); what names the test. */
static void on_sizes(const pf_program *prog, const pf_param_values *params, const pf_plan *plan,
                     unsigned seed, const char *what)
{
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        pf_image *in = cg_synthetic(sizes[s][0], sizes[s][1], 3, seed + (unsigned)s);
        double d = jit_vs_interp(prog, params, plan, in);
        printf("\n    %-16s %3dx%-3d %s max|diff| %.2g", prog->name, sizes[s][0], sizes[s][1],
               what, d);
        CU_ASSERT(d <= tolerance);
        pf_image_free(in);
    }
}

/* Every app under its default GPU schedule: block and thread loops present in the IR (and
 * barriers where a producer sits in shared memory), and the same result as the interpreter. */
static void test_default_gpu_schedule(void)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        pf_program *prog = cg_load_app(apps[a]);
        pf_param_values params;
        pf_params_init(&params, prog);
        pf_plan *plan = gpu_plan(prog, "");
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        CU_ASSERT(pf_plan_has_gpu(plan));
        char *ir = plan_ir(prog, &params, plan);
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, "gpu block for"));
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, "gpu thread for"));
        bool fused = false;
        for (int i = 0; i < prog->n_stages; i++)
            fused = fused || plan->stages[i].exec.at >= 0;
        CU_ASSERT_EQUAL(strstr(ir, "barrier;") != NULL, fused);
        free(ir);
        on_sizes(prog, &params, plan, 5u, "default GPU schedule");
        pf_plan_free(plan);
        pf_params_free(&params);
        pf_program_free(prog);
    }
}

/* The bounds pass on GPU IR (pf_pass_bounds_gpu): no loop split, a clamp gone where the
 * enclosing loop ranges, narrowed by the `if`s around it, keep the index inside the image, and
 * kept elsewhere: in[x + 3] may read column W under x < W - 2, and the else branch has no
 * x >= 2 (a clamp wrongly removed reads the next row or past the image: the comparison with
 * the interpreter shows it). The blur's taps are all proven inside: no clamp is left. */
static void test_gpu_bounds(void)
{
    const char *src = "pipeline p(image in[W, H, C]) -> (image out[W, H, C]) {\n"
                      "    for each (x, y, c) of out as L {\n"
                      "        if (x >= 2 && x < W - 2)\n"
                      "            out[x, y, c] = in[x - 2, y, c] + 2.0 * in[x + 3, y, c];\n"
                      "        else\n"
                      "            out[x, y, c] = in[x - 2, y, c];\n"
                      "    }\n"
                      "}\n";
    pf_error err;
    pf_program *progs[2] = { pf_compile_string("guard.pf", src, &err), cg_load_app("blur") };
    CU_ASSERT_PTR_NOT_NULL_FATAL(progs[0]);
    const int want_lowered[2] = { 3, 34 }, want_left[2] = { 2, 0 };
    for (int i = 0; i < 2; i++) {
        pf_param_values params;
        pf_params_init(&params, progs[i]);
        pf_plan *plan = gpu_plan(progs[i], "");
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        char *lowered = stage_ir(progs[i], &params, plan, "lower"),
             *bounded = stage_ir(progs[i], &params, plan, "bounds");
        printf("\n    %-16s clamped loads: %d lowered, %d after the GPU bounds pass",
               progs[i]->name, cg_count(lowered, "{clamp"), cg_count(bounded, "{clamp"));
        CU_ASSERT_EQUAL(cg_count(lowered, "{clamp"), want_lowered[i]);
        CU_ASSERT_EQUAL(cg_count(bounded, "{clamp"), want_left[i]);
        CU_ASSERT_EQUAL(cg_count(bounded, "gpu thread for"), cg_count(lowered, "gpu thread for"));
        CU_ASSERT_EQUAL(cg_count(bounded, "for "), cg_count(lowered, "for "));
        free(lowered);
        free(bounded);
        on_sizes(progs[i], &params, plan, 11u, "GPU bounds pass");
        pf_plan_free(plan);
        pf_params_free(&params);
        pf_program_free(progs[i]);
    }
}

/* Rows per thread with a register window (codegen/pass_gpu_rows.c): each thread's rows
 * consecutive, the rows a vertical stencil shares loaded once, in two versions (windows inside
 * what the buffer holds, or the rows one by one). The taller image has blocks away from the
 * image's edges, where the window version runs; at 97x61 every block touches an edge. Each
 * case against the interpreter; `windows`: row loops rewritten (the IR's window lets show it). */
static void test_gpu_rows(void)
{
    static const struct {
        const char *app, *sched;
        bool windows;
    } cases[] = {
        { "blur", "", true },  /* 64 x 64 tiles, 64 x 4 threads: 16 rows a thread */
        { "blur", "loop_output exec tile 32 32 gpu 32 8\nloop_temp exec at loop_output\n", true },
        /* 32 rows a thread: 16 a pass, two passes */
        { "blur", "loop_output exec tile 16 64 gpu 16 2\nloop_temp exec at loop_output\n", true },
        /* temp a kernel of its own: the window reads a global buffer */
        { "blur", "loop_temp exec tile 32 8 gpu\nloop_output exec tile 32 32 gpu 32 4\n", true },
        /* a row a thread: nothing to share */
        { "blur", "loop_output exec tile 32 8 gpu\nloop_temp exec at loop_output\n", false },
        /* 4 columns a thread in temp (a window of the input's columns), 4 rows in the output */
        { "blur", "loop_output exec tile 64 64 gpu 16 16\nloop_temp exec at loop_output\n", true },
        /* temp a kernel of its own, 4 columns a thread */
        { "blur", "loop_temp exec tile 64 8 gpu 16 8\nloop_output exec tile 32 8 gpu\n", true },
        /* the output's rows two apart */
        { "blur", "loop_output grid 1 2 1 reconstruct store linear\n"
                  "loop_output exec tile 32 32 gpu 32 4\n", true },
        { "unsharp_mask", "", true },
    };
    const int tall[2] = { 83, 150 };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *prog = cg_load_app(cases[i].app);
        pf_param_values params;
        pf_params_init(&params, prog);
        pf_plan *plan = gpu_plan(prog, cases[i].sched);
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        char *ir = stage_ir(prog, &params, plan, "rows");
        int lets = cg_count(ir, "let win_");
        printf("\n    %-16s case %zu: %d window values", prog->name, i, lets);
        CU_ASSERT_EQUAL(lets > 0, cases[i].windows);
        free(ir);
        on_sizes(prog, &params, plan, 40u + (unsigned)i, "GPU rows");
        pf_image *in = cg_synthetic(tall[0], tall[1], 3, 60u + (unsigned)i);
        double d = jit_vs_interp(prog, &params, plan, in);
        printf("\n    %-16s %3dx%-3d GPU rows max|diff| %.2g", prog->name, tall[0], tall[1], d);
        CU_ASSERT(d <= tolerance);
        pf_image_free(in);
        pf_plan_free(plan);
        pf_params_free(&params);
        pf_program_free(prog);
    }
}

/* app under sched: its final IR has `want` (and not `absent`, unless NULL), the CUDA backend
 * would run it (no host runtime call), and it equals the interpreter on both sizes. */
static void run_case(const char *app, const char *sched, const char *want, const char *absent,
                     unsigned seed, const char *what)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values params;
    pf_params_init(&params, prog);
    pf_plan *plan = gpu_plan(prog, sched);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    char *ir = plan_ir(prog, &params, plan);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, want));
    if (absent)
        CU_ASSERT_PTR_NULL(strstr(ir, absent));
    free(ir);
    CU_ASSERT_FALSE(cuda_refuses(prog, &params, plan));
    on_sizes(prog, &params, plan, seed, what);
    pf_plan_free(plan);
    pf_params_free(&params);
    pf_program_free(prog);
}

/* A store-mode grid stage on the GPU fills its skipped pixels in kernels (one a pass, a point
 * a thread: codegen/lower_fill.c), not in a loop nest the CUDA backend would run on one
 * thread (no host loop nest); the paper's blur variant (linear) and a nearest fill of unsharp
 * mask's output. */
static void test_gpu_fill(void)
{
    run_case("blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                     "loop_output grid 4 4 1 reconstruct store linear\n",
             "gpu block for<y> fyo", "\n    for ", 11u, "GPU fill");
    run_case("unsharp_mask", "loop_output grid 3 2 1 reconstruct store nearest\n",
             "gpu block for<y> fyo", "\n    for ", 11u, "GPU fill");
}

/* Gaussian reconstructions and channel copies on the GPU (codegen/lower_gauss_gpu.c,
 * lower_gpu_kernel.c): kernels, no runtime call left, the interpreter's values; the recursive
 * filter both tiled (tiles of 32, and of 5 so that lines span many tiles and end in partial
 * ones) and one thread per row and column (PF_GPU_GAUSS). unsharp_mask's stages have `over`
 * ranges (a lattice view that is not the image); sigma 4 on a 3x2 grid is a wide filter
 * (width 9.8, feedback gain 1/B = 260: states kept as one float instead of two measured
 * 4.5e-6 there), sigma 16 on a 5x3 grid a very wide one (width 62, 1/B = 6e4); the bilateral
 * grid's blur_x a 4-D stage (planes = z x i), its rgb_to_yuv a 2-variable stage over a 3-D
 * image (planes beyond the stage's variables). */
static void test_gpu_gauss(void)
{
    static const char *const cases[][2] = {
        { "blur", "loop_output grid 4 4 1 reconstruct store gaussian 0.5\n" },
        { "blur", "loop_output grid 2 3 1 channels 2 reconstruct store gaussian 1.3\n" },
        { "unsharp_mask", "loop_output grid 3 2 1 reconstruct store gaussian 4\n"
                          "loop_temp channels 1\n" },
        { "bilateral_filter", "loop_pixels grid 2 2 reconstruct store gaussian 0.8\n" },
        { "blur", "loop_output grid 5 3 1 reconstruct store gaussian 16\n" },
        { "bilateral_grid", "blur_x_loop grid 2 2 1 1 reconstruct store gaussian 1\n"
                            "rgb_to_yuv grid 2 1 reconstruct store gaussian 2\n" },
    };
    static const char *const modes[] = { "tiled", "tiled:5", "rows" };
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        setenv("PF_GPU_GAUSS", modes[m], 1);
        char what[48];
        snprintf(what, sizeof what, "%-7s GPU gaussian", modes[m]);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            run_case(cases[i][0], cases[i][1], m < 2 ? "tiled recursive filter"
                                                     : "one thread per row and column",
                     NULL, 17u, what);
    }
    unsetenv("PF_GPU_GAUSS");
}

/* ---- scatter stages on the GPU: atomic adds (docs/gpu.md §5) ---- */

/* A histogram: every pixel adds to a cell of a few rows and columns (many adders a cell);
 * op is the write's operator, extra one more statement. */
static pf_program *histogram(const char *op, const char *extra)
{
    char src[1024];
    snprintf(src, sizeof src,
             "pipeline p(image in[W, H, 1]) -> (image out[8, 5, 2]) {\n"
             "    image hist[8, 5, 2] boundary constant(0.0);\n"
             "    for each (x, y) of in as splat {\n"
             "        int k = int(in[x, y, 0] * 7.99);\n"
             "        hist[k, y %% 5, 0] %s 1.0;\n"
             "        hist[k, y / 16, 1] %s float(x %% 7) * 0.25;\n"
             "        %s\n"
             "    }\n"
             "    for each (x, y, c) of out as copy\n"
             "        out[x, y, c] = hist[x, y, c];\n"
             "}\n", op, op, extra);
    pf_error err;
    pf_program *prog = pf_compile_string("hist.pf", src, &err);
    if (!prog)
        fprintf(stderr, "\n    %s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    return prog;
}

/* The histogram's cells are sums of small multiples of 1/4, exact in any order: the GPU
 * lowering (tiles of pixels, a pixel a thread, atomic adds) must give the interpreter's result
 * exactly; any add lost, doubled or put in the wrong cell shows. */
static void test_gpu_scatter_exact(void)
{
    static const char *const schedules[] = { "", "splat exec tile 16 4 gpu\n",
                                             "splat exec tile 32 8 gpu 16 2\n",
                                             "splat exec tile 8 8 gpu\nsplat step 2\n",
                                             "splat exec tile 16 4 gpu\nsplat importance 0.5 0.1\n" };
    const char *ops[] = { "+=", "-=" };
    pf_image *in = cg_synthetic(61, 83, 1, 31u);
    for (size_t o = 0; o < 2; o++) {
        pf_program *prog = histogram(ops[o], "");
        pf_param_values params;
        pf_params_init(&params, prog);
        for (size_t i = 0; i < sizeof schedules / sizeof *schedules; i++) {
            pf_plan *plan = gpu_plan(prog, schedules[i]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
            char *ir = plan_ir(prog, &params, plan);
            CU_ASSERT_PTR_NOT_NULL(strstr(ir, "{scatter}{atomic}"));
            CU_ASSERT_PTR_NOT_NULL(strstr(ir, "gpu thread for"));
            free(ir);
            double d = jit_vs_interp(prog, &params, plan, in);
            char label[128];
            snprintf(label, sizeof label, "%s", schedules[i]);
            for (char *p = strchr(label, '\n'); p; p = strchr(p, '\n'))
                *p = p[1] ? ';' : '\0';
            printf("\n    histogram %s, %-50s max|diff| %.2g", ops[o], label, d);
            CU_ASSERT_EQUAL(d, 0.0);
            pf_plan_free(plan);
        }
        pf_params_free(&params);
        pf_program_free(prog);
    }
    pf_image_free(in);
}

/* A scatter stage whose result depends on the order stays serial: 'gpu' is refused with the
 * reason (a write that is not an add; a read of the image it writes). */
static void test_gpu_scatter_refused(void)
{
    static const struct { const char *op, *extra, *want; } cases[] = {
        { "=", "", "is not '+=' or '-='" },
        { "+=", "hist[0, 0, 0] *= 0.5;", "is not '+=' or '-='" },
        { "+=", "hist[k, 0, 1] += hist[0, 0, 0];", "reads 'hist', which it writes" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_program *prog = histogram(cases[i].op, cases[i].extra);
        pf_error err;
        pf_plan *plan = pf_plan_parse(prog, "splat exec tile 32 8 gpu\n", "<t>", &gpu_target,
                                      &err);
        CU_ASSERT_PTR_NULL(plan);
        pf_plan_free(plan);
        if (!strstr(err.msg, cases[i].want))
            printf("\n    unexpected message: %s", err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].want));
        /* the default GPU schedule leaves it serial: a kernel of one thread, same result */
        plan = gpu_plan(prog, "");
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        CU_ASSERT_FALSE(plan->stages[0].exec.gpu);
        pf_plan_free(plan);
        pf_program_free(prog);
    }
}

/* The bilateral grid at 256x192 (ss = 4: up to 16 pixels a grid cell, so the tiles' order of
 * the splat's adds differs from the rows' order): the bound of docs/gpu.md §5,
 * 2 gamma_(n-1) (1 + 2.03211 * 0.436) with n = 16, gamma_k = k u / (1 - k u), u = 2^-24. */
static void test_gpu_splat_order(void)
{
    pf_program *prog = cg_load_app("bilateral_grid");
    pf_param_values params;
    pf_params_init(&params, prog);
    pf_plan *plan = gpu_plan(prog, "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    CU_ASSERT_TRUE(plan->stages[1].exec.gpu);  /* populate_b_grid_loop */
    double u = ldexp(1.0, -24), g = 15 * u / (1 - 15 * u), bound = 2 * g * (1 + 2.03211 * 0.436);
    pf_image *in = cg_synthetic(256, 192, 3, 41u);
    double d = jit_vs_interp(prog, &params, plan, in);
    printf("\n    bilateral_grid 256x192 default GPU schedule max|diff| %.2g (bound %.2g)", d,
           bound);
    CU_ASSERT(d <= bound);
    pf_image_free(in);
    pf_plan_free(plan);
    pf_params_free(&params);
    pf_program_free(prog);
}

/* ---- random perforation + random GPU genes ---- */

static int pick(unsigned *seed, int n)
{
    return (int)(rand_r(seed) % (unsigned)n);
}

/* A random approximation line for stage loop i (or nothing). */
static void random_approx(const pf_program *prog, int loop, unsigned *seed, pf_strbuf *out)
{
    pf_perforable info;
    pf_perforable_info(prog, loop, &info);
    const char *name = prog->loops[loop].name;
    int r = pick(seed, 6);
    if (info.kind == PF_PERFORABLE_FOR) {
        if (r == 0)
            pf_sb_printf(out, "%s step 2\n", name);
        else if (r == 1)
            pf_sb_printf(out, "%s random 0.6\n", name);
        return;
    }
    const char *recon = info.kind == PF_PERFORABLE_SERIAL_STAGE ? ""
                        : pick(seed, 2) ? " reconstruct store nearest"
                                        : " reconstruct store gaussian-sv 0.8";
    if (r == 3 && (info.genes & (1u << PF_GENE_ADAPTIVE))) {  /* masks: docs/gpu.md §5 */
        pf_sb_printf(out, "%s adaptive %d 0.4%s\n", name, 2 + 2 * pick(seed, 2), recon);
        return;
    }
    if (r == 4 && (info.genes & (1u << PF_GENE_IMPORTANCE))) {
        pf_sb_printf(out, "%s importance 0.5 0.1%s\n", name, recon);
        return;
    }
    bool channels = info.channels;
    if (r == 5 && channels) {  /* channel subsampling alone */
        pf_sb_printf(out, "%s channels %d\n", name, 1 + pick(seed, 2));
        return;
    }
    if (r >= 3 || !(info.genes & (1u << PF_GENE_GRID)))
        return;
    pf_sb_printf(out, "%s grid", name);
    for (int d = 0; d < info.n_vars; d++)
        pf_sb_printf(out, " %d", d >= 2 ? 1 : 1 + pick(seed, 3));
    if (info.kind == PF_PERFORABLE_SERIAL_STAGE) {
        pf_sb_puts(out, "\n");
        return;
    }
    if (channels && pick(seed, 3) == 0)
        pf_sb_printf(out, " channels %d", 1 + pick(seed, 2));
    static const char *const store[] = { "linear", "nearest", "gaussian 0.7", "gaussian 2.5" };
    if (info.on_demand && r == 0)
        pf_sb_printf(out, " reconstruct on-demand %s\n", pick(seed, 2) ? "linear" : "nearest");
    else
        pf_sb_printf(out, " reconstruct store %s\n", store[pick(seed, 4)]);
}

/* A random GPU gene for a stage that can take one: tiles and threads, sometimes fewer
 * threads than points (several rows a thread); or, half the time when the stage's sole
 * consumer has a GPU gene, computed in that consumer's blocks (shared memory). gpu[i]: stage i
 * got a GPU gene. */
static void random_gpu(const pf_program *prog, int i, unsigned *seed, bool *gpu,
                       pf_strbuf *out)
{
    static const int tx[] = { 8, 16, 32, 64 }, ty[] = { 1, 4, 8, 16 };
    const pf_stage *st = prog->stages[i];
    int c = pf_exec_sole_consumer(prog, i);
    if (c >= 0 && gpu[c] && !st->serial && !prog->stages[c]->serial && pick(seed, 2)) {
        pf_sb_printf(out, "%s exec at %s\n", st->name, prog->stages[c]->name);
        return;
    }
    if ((st->serial && !pf_stage_accumulates(st, NULL, 0)) || st->n_vars < 2 ||
        pick(seed, 4) == 0)
        return;
    gpu[i] = true;
    int x = tx[pick(seed, 4)], y = ty[pick(seed, 4)];
    pf_sb_printf(out, "%s exec tile %d %d gpu", st->name, x, y);
    if (pick(seed, 2))
        pf_sb_printf(out, " %d %d", x / (1 + pick(seed, 2)), y > 1 ? y / 2 : 1);
    pf_sb_puts(out, "\n");
}

static void test_random_gpu_schedules(void)
{
    unsigned seed = 24;
    int tried = 0, ran = 0, shared = 0, masked = 0, gauss = 0, copies = 0;
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        pf_program *prog = cg_load_app(apps[a]);
        pf_param_values params;
        pf_params_init(&params, prog);
        pf_image *in = cg_synthetic(53, 37, 3, 99u + (unsigned)a);
        int n = strcmp(apps[a], "artistic_blur") == 0 ? 2 : 4;
        for (int k = 0; k < n; k++) {
            pf_strbuf text;
            pf_sb_init(&text);
            for (int l = 0; l < prog->n_loops; l++)
                random_approx(prog, l, &seed, &text);
            bool gpu[64] = { false };
            for (int i = prog->n_stages - 1; i >= 0; i--)  /* consumers first */
                random_gpu(prog, i, &seed, gpu, &text);
            tried++;
            pf_error err;
            pf_plan *plan = pf_plan_parse(prog, pf_sb_str(&text), "<random>", &gpu_target, &err);
            if (plan) {
                double d = jit_vs_interp(prog, &params, plan, in);
                for (int i = 0; i < prog->n_stages; i++)
                    shared += plan->stages[i].exec.at >= 0 &&
                              plan->stages[plan->stages[i].exec.at].exec.gpu;
                printf("\n    %-16s random GPU schedule %d max|diff| %.2g", prog->name, k, d);
                if (d > tolerance)
                    printf("\n%s", pf_sb_str(&text));
                CU_ASSERT(d <= tolerance);
                ran += d >= 0;
                masked += d >= 0 && (strstr(pf_sb_str(&text), " adaptive ") ||
                                     strstr(pf_sb_str(&text), " importance "));
                gauss += d >= 0 && strstr(pf_sb_str(&text), "gaussian");
                copies += d >= 0 && strstr(pf_sb_str(&text), "channels");
                pf_plan_free(plan);
            } else {
                printf("\n    %-16s random schedule %d refused: %s", prog->name, k, err.msg);
            }
            pf_sb_free(&text);
        }
        pf_image_free(in);
        pf_params_free(&params);
        pf_program_free(prog);
    }
    printf("\n    %d of %d random GPU schedules were valid and ran (%d with adaptive or "
           "importance masks); %d producers in shared memory; %d with Gaussian "
           "reconstructions, %d with channel copies", ran, tried, masked, shared, gauss, copies);
    CU_ASSERT(ran >= tried / 2);
    CU_ASSERT(masked >= 3);
    CU_ASSERT(shared >= 3);
    CU_ASSERT(gauss >= 3 && copies >= 2);
}

/* GPU genes are parsed, printed and refused like the others, with messages that say why. */
static void test_gpu_genes(void)
{
    pf_program *p = cg_load_app("blur");
    pf_error err;
    static const struct { const char *text, *want; } bad[] = {
        { "loop_output exec gpu\n", "needs 'tile TX TY'" },
        { "loop_output exec tile 64 64 gpu\n", "more than 1024" },
        { "loop_output exec tile 32 8 gpu 64 8\n", "more threads than the tile" },
        { "loop_output exec tile 32 8 vectorize 8 gpu\n", "without vectorize" },
        { "loop_temp exec at loop_output vectorize 8\nloop_output exec tile 32 8 gpu\n",
          "takes no tile, vectorize" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pf_schedule *s = pf_schedule_from_string(p, bad[i].text, &err);
        CU_ASSERT_PTR_NULL(s);
        pf_schedule_delete(s);
        if (!strstr(err.msg, bad[i].want))
            printf("\n    unexpected message for %s: %s", bad[i].text, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].want));
    }
    pf_schedule *s = pf_schedule_from_string(p, "loop_output exec tile 64 64 gpu 64 4\n"
                                                "loop_temp exec at loop_output\n", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(p, s, &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "loop_output exec root tile 64 64 gpu 64 4"));
    pf_schedule *back = pf_schedule_from_string(p, pf_sb_str(&sb), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT(pf_schedule_equal(s, back));
    /* threads equal to the tile are the default and print as nothing */
    pf_schedule *same = pf_schedule_from_string(p, "loop_output exec tile 32 8 gpu 32 8\n", &err);
    pf_schedule *plain = pf_schedule_from_string(p, "loop_output exec tile 32 8 gpu\n", &err);
    CU_ASSERT_FATAL(same && plain);
    CU_ASSERT(pf_schedule_equal(same, plain));
    pf_schedule_delete(same);
    pf_schedule_delete(plain);
    pf_schedule_delete(back);
    pf_sb_free(&sb);
    pf_schedule_delete(s);
    pf_program_free(p);
}

/* ---- the verifier's GPU rules ---- */

/* A function with one output `out` (1-D) and a loop variable x for the rules' nests. */
static ir_func *rules_func(pf_arena *arena, ir_buffer **out, ir_var **x)
{
    ir_func *f = ir_func_new(arena, "gpu_rules");
    *out = ir_buffer_new(f, "out", IR_BUF_OUTPUT, 1);
    f->n_outputs = 1;
    f->args = PF_NEW_ARRAY(arena, ir_buffer *, 1);
    f->args[0] = *out;
    (*out)->extent_is_param[0] = true;
    *x = ir_var_new(f, "x", IR_I32, IR_VAR_LOOP);
    return f;
}

/* body in x = 0 .. out's extent (a loop of kind inner, width w) inside one iteration of a
 * loop of kind outer, verified; ir_verify's message, or "" when it accepts. Frees the arena. */
static const char *verify_loops(pf_arena *arena, ir_func *f, ir_buffer *out, ir_var *x,
                                ir_loop_kind outer, ir_loop_kind inner, int w, ir_stmt *body,
                                char *msg, size_t cap)
{
    ir_var *b = ir_var_new(f, "b", IR_I32, IR_VAR_LOOP);
    ir_stmt *in = ir_for(f, x, ir_const_i32(f, 0), ir_ref(f, out->extent[0]), ir_const_i32(f, 1),
                         inner, body);
    in->width = w;
    ir_stmt *o = ir_for(f, b, ir_const_i32(f, 0), ir_const_i32(f, 1), ir_const_i32(f, 1), outer,
                        in);
    o->width = 1;
    f->body = o;
    msg[0] = '\0';
    ir_verify(f, msg, cap);
    pf_arena_free(arena);
    return msg;
}

/* out[x] = 0 for x in a loop of kind `inner` (width w) inside a loop of kind `outer`, with a
 * barrier inside the inner loop when asked; ir_verify's message, or "" when it accepts. */
static const char *verify_nest(ir_loop_kind outer, ir_loop_kind inner, int w, bool barrier,
                               char *msg, size_t cap)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_buffer *out;
    ir_var *x;
    ir_func *f = rules_func(&arena, &out, &x);
    ir_expr *idx[1] = { ir_ref(f, x) };
    ir_list body = { 0 };
    ir_list_push(f, &body, ir_store(f, out, idx, ir_const_f32(f, 0.0f), 1, false));
    if (barrier)
        ir_list_push(f, &body, ir_barrier(f));
    return verify_loops(&arena, f, out, x, outer, inner, w, ir_list_block(f, &body), msg, cap);
}

/* out[x / 2] (a scatter) := out[x / 2] + 1 when rmw, else 1, in a GPU block and thread loop
 * (or a CPU parallel loop), marked atomic or not; ir_verify's message, or "". */
static const char *verify_scatter(bool atomic, bool rmw, ir_loop_kind inner, char *msg,
                                  size_t cap)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_buffer *out;
    ir_var *x;
    ir_func *f = rules_func(&arena, &out, &x);
    ir_expr *idx[1] = { ir_bin(f, IR_DIV, ir_ref(f, x), ir_const_i32(f, 2)) };
    ir_expr *one = ir_const_f32(f, 1.0f);
    ir_expr *v = rmw ? ir_bin(f, IR_ADD, ir_load(f, out, idx, 0), one) : one;
    ir_stmt *st = ir_store(f, out, idx, v, 0, true);
    st->atomic = atomic;
    bool gpu = inner == IR_LOOP_GPU_THREAD;
    return verify_loops(&arena, f, out, x, gpu ? IR_LOOP_GPU_BLOCK : IR_LOOP_SERIAL, inner,
                        gpu ? 64 : 1, st, msg, cap);
}

static void test_verifier_gpu_rules(void)
{
    char s[512];
    CU_ASSERT_STRING_EQUAL(verify_scatter(true, true, IR_LOOP_GPU_THREAD, s, sizeof s), "");
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_scatter(false, true, IR_LOOP_GPU_THREAD, s, sizeof s),
                                  "scatter store to out inside a parallel"));
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_scatter(true, false, IR_LOOP_GPU_THREAD, s, sizeof s),
                                  "atomic store to out is not"));
    /* atomic adds are plain stores on the CPU: not inside a CPU-parallel loop */
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_scatter(true, true, IR_LOOP_PARALLEL, s, sizeof s),
                                  "scatter store to out inside a parallel"));
    char m[512];
    CU_ASSERT_STRING_EQUAL(verify_nest(IR_LOOP_GPU_BLOCK, IR_LOOP_GPU_THREAD, 256, false, m,
                                       sizeof m), "");
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_nest(IR_LOOP_SERIAL, IR_LOOP_GPU_THREAD, 256, false, m,
                                              sizeof m), "outside a block loop"));
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_nest(IR_LOOP_GPU_BLOCK, IR_LOOP_GPU_THREAD, 2048, false,
                                              m, sizeof m), "more than 1024 threads"));
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_nest(IR_LOOP_GPU_BLOCK, IR_LOOP_GPU_THREAD, 256, true, m,
                                              sizeof m), "barrier"));
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_nest(IR_LOOP_GPU_BLOCK, IR_LOOP_PARALLEL, 1, false, m,
                                              sizeof m), "inside a GPU loop"));
    CU_ASSERT_PTR_NOT_NULL(strstr(verify_nest(IR_LOOP_GPU_THREAD, IR_LOOP_GPU_BLOCK, 1, false, m,
                                              sizeof m), "outside a block loop"));
}

/* ---- the same on a GPU: the CUDA backend against the interpreter (max abs <= 1e-4) ---- */

/* Whether a CUDA device is here; SKIP and why when not. */
static bool cuda_device(void)
{
    pf_error err;
    pf_cuda *c = pf_cuda_open(&err);
    if (!c) {
        printf("\n    SKIP: %s", err.msg);
        return false;
    }
    printf("\n    on %s (sm_%d)", pf_cuda_device_name(c), pf_cuda_capability(c));
    pf_cuda_close(c);
    return true;
}

static void on_cuda(void (*test)(void))
{
    if (!cuda_device())
        return;
    under_test = PF_BACKEND_CUDA;
    tolerance = 1e-4;
    test();
    under_test = PF_BACKEND_JIT;
    tolerance = 1e-5;
}

static void test_cuda_default_gpu_schedule(void)
{
    on_cuda(test_default_gpu_schedule);
}

static void test_cuda_random_gpu_schedules(void)
{
    on_cuda(test_random_gpu_schedules);
}

static void test_cuda_gpu_fill(void)
{
    on_cuda(test_gpu_fill);
}

static void test_cuda_gpu_scatter(void)
{
    on_cuda(test_gpu_scatter_exact);
    on_cuda(test_gpu_splat_order);
}

static void test_cuda_gpu_rows(void)
{
    on_cuda(test_gpu_rows);
}

static void test_cuda_gpu_gauss(void)
{
    on_cuda(test_gpu_gauss);
}

PF_TEST_SUITE(codegen_gpu_run, PF_TEST(test_cuda_default_gpu_schedule),
              PF_TEST(test_cuda_gpu_fill), PF_TEST(test_cuda_gpu_rows),
              PF_TEST(test_cuda_gpu_gauss),
              PF_TEST(test_cuda_gpu_scatter), PF_TEST(test_cuda_random_gpu_schedules))

PF_TEST_SUITE(codegen_gpu_lower, PF_TEST(test_gpu_genes), PF_TEST(test_verifier_gpu_rules),
              PF_TEST(test_default_gpu_schedule), PF_TEST(test_gpu_bounds),
              PF_TEST(test_gpu_rows),
              PF_TEST(test_gpu_fill), PF_TEST(test_gpu_gauss),
              PF_TEST(test_gpu_scatter_exact), PF_TEST(test_gpu_scatter_refused),
              PF_TEST(test_gpu_splat_order), PF_TEST(test_random_gpu_schedules))
