/* The JIT's options: perfora's pass list at opt level 3 against LLVM's default<O3>
 * (llvm_default_passes) and the lower opt levels, which must all compute the same outputs; the
 * opt-in float rewrites (fp_contract, fast_math's reciprocals), which may differ by ulps; and
 * the per-phase compile times a variant reports (pf_variant_stats); no unrolled copies of a
 * parallel loop's chunk; LLVM's code pages dropped from the resident set after a compile. */
#include "base/fileio.h"
#include "base/resident.h"
#include "codegen/jit.h"
#include "codegen/llvm_recip.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <llvm-c/Analysis.h>
#include <llvm-c/IRReader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* app compiled with `a` and with `b`, run on in: the outputs must be equal to the bit (no
 * fast-math anywhere, so no pass may change a result). */
static void same_outputs(const char *app, const pf_compile_options *a,
                         const pf_compile_options *b, pf_image *in)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_variant *va = cg_compile(prog, &pv, NULL, a), *vb = cg_compile(prog, &pv, NULL, b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(va);
    CU_ASSERT_PTR_NOT_NULL_FATAL(vb);
    cg_run ra, rb;
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(va, prog, &pv, &in, 1, &ra), 0);
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(vb, prog, &pv, &in, 1, &rb), 0);
    CU_ASSERT_EQUAL(ra.n_out, rb.n_out);
    for (int i = 0; i < ra.n_out && i < rb.n_out; i++) {
        double d = cg_max_abs_diff(ra.out[i], rb.out[i]);
        printf("\n    %-16s %4dx%-4d max|diff| %g", app, in->width, in->height, d);
        CU_ASSERT_EQUAL(d, 0.0);
    }
    cg_run_free(&ra);
    cg_run_free(&rb);
    pf_variant_free(va);
    pf_variant_free(vb);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* Apps that exercise what the pass list keeps: 8-lane stencils with scalar tails (blur),
 * short constant loops to unroll (demosaic), loops LLVM vectorizes itself and SLP groups
 * (bilateral grid), a gather loop with a runtime call (median). */
static void test_pass_list_matches_llvm_o3(void)
{
    static const char *apps[] = { "blur", "demosaic", "bilateral_grid", "median" };
    pf_compile_options lean = { 0 }, full = { 0 };
    full.llvm_default_passes = true;
    pf_image *photo = cg_load_photo("man_made_1_256x192.png", 3);
    pf_image *odd = cg_synthetic(37, 23, 3, 5u);
    for (size_t i = 0; i < sizeof apps / sizeof *apps; i++) {
        same_outputs(apps[i], &lean, &full, photo);
        same_outputs(apps[i], &lean, &full, odd);
    }
    pf_image_free(photo);
    pf_image_free(odd);
}

/* Opt levels 1 and 2 still run LLVM's default<O1> and <O2>. */
static void test_opt_levels_agree(void)
{
    pf_image *photo = cg_load_photo("natural_29_256x192.png", 3);
    for (int level = 1; level <= 2; level++) {
        pf_compile_options lean = { 0 }, lower = { 0 };
        lower.opt_level = level;
        same_outputs("unsharp_mask", &lean, &lower, photo);
    }
    pf_image_free(photo);
}

/* Every phase is timed on a thread's CPU clock, so the phases add up to at most the compile's
 * wall time on one thread, and to at most that times the modules of a split compile (its
 * threads' clocks summed); the interpreter has no LLVM phases. */
static void test_phase_times(void)
{
    pf_program *prog = cg_load_app("bilateral_grid");
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_compile_options o = { 0 };
    for (int threads = 1; threads <= 2; threads++) {
        o.compile_threads = threads;
        pf_variant *v = cg_compile(prog, &pv, NULL, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        pf_variant_stats s = pf_variant_get_stats(v);
        const double t[] = { s.lower_ms, s.passes_ms, s.emit_ms, s.optimize_ms, s.jit_ms,
                             s.codegen_ms };
        double sum = 0;
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            CU_ASSERT(t[i] >= 0);
            sum += t[i];
        }
        CU_ASSERT(s.emit_ms > 0 && s.optimize_ms > 0 && s.codegen_ms > 0);
        CU_ASSERT_EQUAL(s.jit_modules, threads);  /* its stages' parallel loops split in two */
        CU_ASSERT(sum <= s.jit_modules * pf_variant_compile_ms(v) + 1.0);
        pf_variant_free(v);
    }
    o.backend = PF_BACKEND_INTERP;
    pf_variant *v = cg_compile(prog, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    pf_variant_stats s = pf_variant_get_stats(v);
    CU_ASSERT(s.emit_ms == 0 && s.optimize_ms == 0 && s.jit_ms == 0 && s.codegen_ms == 0);
    pf_variant_free(v);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* pf_llvm_reciprocals on a module written as text: a division by a constant (scalar or
 * splat) multiplies by its reciprocal; two divisions of a block by one value share one
 * reciprocal; a lone division by a variable, a constant whose reciprocal is not a normal
 * float, a vector of unequal constants and a double division stay divisions. */
static void test_reciprocals_rewrite(void)
{
    static const char ir[] =
        "define float @f(float %x, float %a, float %b, float %d, float %e, <4 x float> %v,\n"
        "                double %g) {\n"
        "  %q1 = fdiv float %x, 4.000000e+00\n"
        "  %q2 = fdiv float %a, %d\n"
        "  %q3 = fdiv float %b, %d\n"
        "  %q4 = fdiv float %x, %e\n"
        "  %q5 = fdiv float %x, 0x47EFFFFFE0000000\n"
        "  %w1 = fdiv <4 x float> %v, <float 2.0, float 2.0, float 2.0, float 2.0>\n"
        "  %w2 = fdiv <4 x float> %v, <float 2.0, float 3.0, float 2.0, float 2.0>\n"
        "  %q6 = fdiv double %g, 4.000000e+00\n"
        "  %s1 = fadd float %q1, %q2\n  %s2 = fadd float %s1, %q3\n"
        "  %s3 = fadd float %s2, %q4\n  %s4 = fadd float %s3, %q5\n"
        "  %e1 = extractelement <4 x float> %w1, i32 0\n"
        "  %e2 = extractelement <4 x float> %w2, i32 1\n"
        "  %s5 = fadd float %s4, %e1\n  %s6 = fadd float %s5, %e2\n"
        "  %t = fptrunc double %q6 to float\n  %s7 = fadd float %s6, %t\n"
        "  ret float %s7\n}\n";
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, sizeof ir - 1, "t");
    LLVMModuleRef mod;
    char *msg = NULL;
    CU_ASSERT_FATAL(LLVMParseIRInContext(ctx, buf, &mod, &msg) == 0);
    CU_ASSERT_EQUAL(pf_llvm_reciprocals(mod), 4);  /* q1, q2, q3, w1 */
    CU_ASSERT_FALSE(LLVMVerifyModule(mod, LLVMReturnStatusAction, NULL));
    char *text = LLVMPrintModuleToString(mod);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fmul float %x, 2.500000e-01"));
    CU_ASSERT_EQUAL(cg_count(text, "fdiv float 1.000000e+00, %d"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fmul float %a, %recip"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fmul float %b, %recip"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fdiv float %x, %e"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fdiv float %x, 0x47EFFFFFE0000000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fmul <4 x float> %v, <float 5.000000e-01"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fdiv <4 x float> %v, <float 2.000000e+00, float 3.0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fdiv double %g"));
    LLVMDisposeMessage(text);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
}

/* Compiles prog with o (whose emit_llvm names a file), runs it on in into *r and returns the
 * optimized module's text (free it). */
static char *run_and_read_module(pf_program *prog, pf_param_values *pv, pf_image *in,
                                 const pf_compile_options *o, cg_run *r)
{
    pf_variant *v = cg_compile(prog, pv, NULL, o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, pv, &in, 1, r), 0);
    char *ll = NULL;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(o->emit_llvm, 1 << 26, &ll, NULL, &err), 0);
    pf_variant_free(v);
    return ll;
}

/* fast_math on the bilateral filter: its divisions by constants and the three channel sums'
 * division by the weight sum become multiplications (fewer fdiv in the optimized module),
 * products fuse into the sums, and the output stays within 1e-5 of the exact one. */
static void test_fast_math(void)
{
    pf_program *prog = cg_load_app("bilateral_filter");
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_image *in = cg_load_photo("man_made_1_256x192.png", 3);
    cg_run r[2];
    int fdivs[2], fmas[2];
    for (int fast = 0; fast < 2; fast++) {
        pf_compile_options o = { 0 };
        o.fast_math = fast;
        o.emit_llvm = pf_test_tmp(fast ? "fast.ll" : "exact.ll");
        char *ll = run_and_read_module(prog, &pv, in, &o, &r[fast]);
        fdivs[fast] = cg_count(ll, " = fdiv ");
        fmas[fast] = cg_count(ll, "call <");  /* vector calls: the exp's steps, fused sums */
        free(ll);
    }
    printf("\n    fdiv instructions: exact %d, fast-math %d; vector calls %d, %d", fdivs[0],
           fdivs[1], fmas[0], fmas[1]);
    CU_ASSERT(fdivs[1] < fdivs[0]);
    CU_ASSERT(fmas[1] > fmas[0]);
    double d = cg_max_abs_diff(r[0].out[0], r[1].out[0]);
    printf("; max|diff| %g", d);
    CU_ASSERT(d > 0 && d <= 1e-5);
    cg_run_free(&r[0]);
    cg_run_free(&r[1]);
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* The optimized LLVM module of program `src` (or of app `app` when src is NULL), compiled as
 * one module with the default schedule; free it. */
static char *optimized_module(const char *app, const char *src, const char *file)
{
    pf_error err;
    pf_program *prog = src ? pf_compile_string(file, src, &err) : cg_load_app(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_compile_options o = { 0 };
    o.compile_threads = 1;
    o.emit_llvm = pf_test_tmp(file);
    pf_variant *v = cg_compile(prog, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    char *ll = NULL;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(o.emit_llvm, 1 << 26, &ll, NULL, &err), 0);
    pf_variant_free(v);
    pf_params_free(&pv);
    pf_program_free(prog);
    return ll;
}

/* Cold loops with a real body (blur's 17-tap scalar tails, the bilateral filter's border
 * columns) are functions of their own, compiled by LLVM's fast code generator (optnone after
 * the IR passes); a one-line tail stays where it is (a function would cost more than it
 * saves). The results are checked everywhere else against the interpreter. */
static void test_cold_functions(void)
{
    static const char *const apps[] = { "blur", "bilateral_filter" };
    for (int i = 0; i < 2; i++) {
        char *ll = optimized_module(apps[i], NULL, "cold.ll");
        int n = cg_count(ll, "define internal i32 @pf_cold");
        printf("\n    %s: %d cold functions", apps[i], n);
        CU_ASSERT(n >= 2);
        const char *def = strstr(ll, "@pf_cold");
        const char *attrs = def ? strstr(def, ") #") : NULL;  /* its attribute group */
        char group[64] = "";
        if (attrs)
            snprintf(group, sizeof group, "attributes #%d = { noinline optnone", atoi(attrs + 3));
        CU_ASSERT(attrs && strstr(ll, group));
        free(ll);
    }
    char *ll = optimized_module(NULL,
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "  for each (x, y) of out as s out[x, y] = in[x, y] * 2.0;\n}\n", "small.ll");
    CU_ASSERT_PTR_NULL(strstr(ll, "pf_cold"));
    free(ll);
}

/* A constant table read at an index that differs between lanes is one gather, not a load per
 * lane (the loads LLVM's SLP vectorizer used to join, at a quarter of demosaic's compile). */
static void test_table_gather(void)
{
    char *ll = optimized_module(NULL,
        "const float T[4] = { 0.5, 1.5, 2.5, 3.5 };\n"
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "  for each (x, y) of out as s out[x, y] = T[(x + y) % 4] * in[x, y];\n}\n",
        "table.ll");
    CU_ASSERT_PTR_NOT_NULL(strstr(ll, "@llvm.masked.gather"));
    free(ll);
}

/* fp_contract: the optimized module fuses the blur's weighted sums (llvm.fmuladd; none
 * without the option), and the outputs stay within 1e-5 of the unfused ones. */
static void test_fp_contract(void)
{
    pf_program *prog = cg_load_app("blur");
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_image *in = cg_load_photo("man_made_1_256x192.png", 3);
    cg_run r[2];
    for (int fused = 0; fused < 2; fused++) {
        pf_compile_options o = { 0 };
        o.fp_contract = fused;
        o.emit_llvm = pf_test_tmp(fused ? "fused.ll" : "plain.ll");
        char *ll = run_and_read_module(prog, &pv, in, &o, &r[fused]);
        CU_ASSERT_EQUAL(strstr(ll, "@llvm.fmuladd") != NULL, fused);
        free(ll);
    }
    double d = cg_max_abs_diff(r[0].out[0], r[1].out[0]);
    printf("\n    fused vs unfused max|diff| %g", d);
    CU_ASSERT(d <= 1e-5);
    cg_run_free(&r[0]);
    cg_run_free(&r[1]);
    pf_image_free(in);
    pf_params_free(&pv);
    pf_program_free(prog);
}


/* A parallel loop's chunk of rows is never unrolled: its back edge once had no loop id, and
 * LLVM unrolled it 8 times at run time (with a remainder loop), copying the vectorized row
 * loop inside 9 times and doubling the compile time of a simple stage. */
static void test_chunk_loop_not_unrolled(void)
{
    const char *src =
        "pipeline half(image in[W, H, C]) -> (image out[W, H, C]) {\n"
        "    for each (x, y, c) of out as loop_out {\n"
        "        out[x, y, c] = in[x, y, c] * 0.5;\n"
        "    }\n"
        "}\n";
    pf_error err;
    pf_program *prog = pf_compile_string("half.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_compile_options o = { 0 };
    o.emit_llvm = pf_test_tmp("half.ll");
    pf_variant *v = cg_compile(prog, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    char *ll = NULL;
    CU_ASSERT_EQUAL_FATAL(pf_read_file(o.emit_llvm, 1 << 26, &ll, NULL, &err), 0);
    int vector_loads = cg_count(ll, "load <8 x float>");
    printf("\n    vector loads in the optimized module: %d", vector_loads);
    CU_ASSERT_EQUAL(vector_loads, 1);
    CU_ASSERT_PTR_NULL(strstr(ll, ".prol"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ll, "llvm.loop.unroll.disable"));
    pf_image *in = cg_load_photo("man_made_1_256x192.png", 3);
    cg_run r;
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &pv, &in, 1, &r), 0);
    CU_ASSERT_EQUAL(r.out[0]->data[1000], in->data[1000] * 0.5f);
    cg_run_free(&r);
    pf_image_free(in);
    free(ll);
    pf_variant_free(v);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* What `perfora run` does between the compile and the run: the code pages LLVM touched leave
 * the resident set (this binary links LLVM statically, as perfora does), and everything still
 * works after: the compiled pipeline (JIT memory, not the executable's) and a new compile. */
static void test_drop_code_pages(void)
{
    pf_program *prog = cg_load_app("unsharp_mask");
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_compile_options o = { 0 };
    pf_variant *v = cg_compile(prog, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    long long before = pf_resident_code_bytes();
    CU_ASSERT(pf_drop_code_pages() > 0);
    long long after = pf_resident_code_bytes();
    printf("\n    resident code %.1f MiB -> %.1f MiB", before / 1048576.0, after / 1048576.0);
    CU_ASSERT(before > 0 && after >= 0 && after < before - (1 << 20));
    pf_image *in = cg_synthetic(40, 30, 3, 9u);
    cg_run r[2];
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(v, prog, &pv, &in, 1, &r[0]), 0);
    pf_variant *again = cg_compile(prog, &pv, NULL, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT_EQUAL_FATAL(cg_run_variant(again, prog, &pv, &in, 1, &r[1]), 0);
    CU_ASSERT_EQUAL(cg_max_abs_diff(r[0].out[0], r[1].out[0]), 0.0);
    cg_run_free(&r[0]);
    cg_run_free(&r[1]);
    pf_image_free(in);
    pf_variant_free(again);
    pf_variant_free(v);
    pf_params_free(&pv);
    pf_program_free(prog);
}

/* The host CPU the JIT tunes for, checked against CPUID read here. LLVM 16 names AMD's Zen 5
 * "generic"; the JIT then vectorized 8-wide instead of 16 and its outputs differed from a Zen 4's
 * in the last ulp (search_hashes failed on a Zen 5 host). Every AMD CPU with AVX-512 is a Zen 4
 * or newer: the JIT must name a znver CPU and use 16 float lanes there. */
static void test_host_cpu_named(void)
{
    const char *cpu = pf_jit_host_cpu();
    CU_ASSERT(cpu[0] != 0);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    int amd = __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u; /* "AuthenticAMD" */
    int avx512f = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 16 & 1u);
    printf("\n    host CPU %s, %d float lanes", cpu, pf_jit_wide_float_lanes());
    if (!amd || !avx512f) {
        printf(" (SKIP: not an AMD CPU with AVX-512; nothing more to check)");
        return;
    }
    CU_ASSERT_EQUAL(strncmp(cpu, "znver", 5), 0);
    CU_ASSERT_EQUAL(pf_jit_wide_float_lanes(), 16);
#else
    printf("\n    SKIP: not an x86 host (CPU %s)", cpu);
#endif
}

PF_TEST_SUITE(codegen_jit, PF_TEST(test_pass_list_matches_llvm_o3),
              PF_TEST(test_opt_levels_agree), PF_TEST(test_phase_times),
              PF_TEST(test_fp_contract), PF_TEST(test_reciprocals_rewrite),
              PF_TEST(test_cold_functions), PF_TEST(test_table_gather),
              PF_TEST(test_fast_math), PF_TEST(test_chunk_loop_not_unrolled),
              PF_TEST(test_drop_code_pages), PF_TEST(test_host_cpu_named))
