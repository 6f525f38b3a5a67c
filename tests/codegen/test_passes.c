/* What the passes buy on perforated code, checked on the final loop IR of the paper's blur
 * variant (apps/blur_paper.sched): lattice reads at 4*J + k lose their boundary checks in the
 * interior (pass_bounds with coefficients), on-demand reads that land on samples become plain
 * loads at x / 4 (pass_ondemand: no clamps inside the image), and the store-mode fill is
 * generated loops, not a runtime call (lower_fill.c); in LLVM, the horizontal pass's strided
 * taps load one span and the tile fill's strided stores interleave (llvm_vstride.c). Also the
 * affine facts and simplifications they rest on. */
#include "base/fileio.h"
#include "codegen/affine.h"
#include "codegen/ir_simplify.h"
#include "perforate/schedule.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char paper[] = "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                            "loop_output grid 4 4 1 reconstruct store linear\n";

/* The line of text containing p. */
static char *line_of(const char *text, const char *p, char *buf, size_t n)
{
    const char *a = p, *b = p;
    while (a > text && a[-1] != '\n')
        a--;
    while (*b && *b != '\n')
        b++;
    size_t len = (size_t)(b - a) < n - 1 ? (size_t)(b - a) : n - 1;
    memcpy(buf, a, len);
    buf[len] = '\0';
    return buf;
}

static void test_lattice_reads_lose_their_checks(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, paper);
    /* the stage over the storage index J is split, and its vector copy reads unclamped */
    const char *vec = strstr(ir, "vectorized for<8> J");
    CU_ASSERT_PTR_NOT_NULL_FATAL(vec);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "interior_lo"));
    char line[4096];
    const char *read = strstr(vec, "in[((J");
    CU_ASSERT_PTR_NOT_NULL_FATAL(read);
    line_of(ir, read, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "* 4) + -8)"));
    CU_ASSERT_PTR_NULL(strstr(line, "{clamp"));
    free(ir);
    pf_program_free(p);
}

static void test_ondemand_reads_on_samples_are_plain(void)
{
    pf_program *p = cg_load_app("blur");
    char *ir = cg_ir_dump(p, paper);
    /* Z3 proves x = 4k on the output's lattice, which loops over sample indices J with
     * x = 4J: one load at x / 4 = J, no blend, no clamp */
    const char *stage = strstr(ir, "// stage loop_output");
    CU_ASSERT_PTR_NOT_NULL_FATAL(stage);
    const char *read = strstr(stage, "* temp_grid[J_");
    CU_ASSERT_PTR_NOT_NULL_FATAL(read);
    char line[8192];
    line_of(ir, read, line, sizeof line);
    CU_ASSERT_PTR_NULL(strstr(line, "min(max("));
    CU_ASSERT_PTR_NULL(strstr(line, "select("));
    free(ir);
    pf_program_free(p);
}

static void test_store_fill_is_generated(void)
{
    pf_program *p = cg_load_app("blur");
    /* untiled: one pass over the whole image after the stage */
    char *ir = cg_ir_dump(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                             "loop_output grid 4 4 1 reconstruct store linear\n"
                             "loop_output exec vectorize 8 parallel\n");
    CU_ASSERT_PTR_NULL(strstr(ir, "reconstruct("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "parallel for fj"));      /* rows on threads */
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "vectorized for<8> fx"));  /* columns in lanes */
    CU_ASSERT_PTR_NULL(strstr(ir, "zero_buffer(out)"));  /* the fill writes every sample */
    free(ir);
    /* the default schedule tiles the stage (512 x 32 samples: its producer is fused), which
     * then fills per tile */
    ir = cg_ir_dump(p, paper);
    const char *yo = strstr(ir, "parallel for yo"), *win = strstr(ir, "allocate out_samples");
    CU_ASSERT(yo && win && yo < win && strstr(yo, "step 32\n"));
    CU_ASSERT_PTR_NULL(strstr(ir, "for fj"));
    free(ir);
    /* Gaussian reconstruction stays a runtime call, and the output is zeroed first */
    ir = cg_ir_dump(p, "loop_output grid 2 2 1 reconstruct store gaussian 1\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "reconstruct("));
    free(ir);
    pf_program_free(p);
}

/* The optimized LLVM module of a program under schedule text (approximations and execution). */
static char *llvm_text_prog(const pf_program *p, const char *sched)
{
    pf_error err;
    pf_plan *plan = cg_plan(p, sched);
    pf_param_values pv;
    pf_params_init(&pv, p);
    pf_compile_options o = { 0 };
    o.emit_llvm = pf_test_tmp("strided.ll");
    pf_variant_free(cg_compile(p, &pv, plan, &o));
    char *text = NULL;
    CU_ASSERT_EQUAL(pf_read_file(o.emit_llvm, 1 << 26, &text, NULL, &err), 0);
    pf_params_free(&pv);
    pf_plan_free(plan);
    return text;
}

static char *llvm_text_of(const char *app, const char *sched)
{
    pf_program *p = cg_load_app(app);
    char *text = llvm_text_prog(p, sched);
    pf_program_free(p);
    return text;
}

static char *llvm_text(const char *sched)
{
    return llvm_text_of("blur", sched);
}

/* Calls of an intrinsic (its declaration left out). */
static int calls(const char *text, const char *name)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, name)); p++) {
        const char *line = p;
        while (line > text && line[-1] != '\n')
            line--;
        n += strncmp(line, "declare", 7) != 0;
    }
    return n;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* llvm_vstride.c: the 17 taps in[4J - 8 + k] of the horizontal pass are loaded as one span
 * (its last chunk masked) instead of 17 strided loads with a masked chunk each, and the tile
 * fill's four stores R[4X + k] become contiguous stores, not scatters. */
static void test_strided_taps_load_once(void)
{
    char *ll = llvm_text("loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                         "loop_output grid 4 4 1 reconstruct store linear\n"
                         "loop_temp exec at loop_output vectorize 8\n"
                         "loop_output exec tile 64 16 vectorize 8\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ll);
    int masked = count(ll, "call <8 x float> @llvm.masked.load");
    CU_ASSERT(masked >= 1 && masked <= 4);  /* 17 per copy of the loop body without groups */
    CU_ASSERT_EQUAL(count(ll, "call void @llvm.masked.scatter"), 0);
    CU_ASSERT(count(ll, "!nontemporal") >= 1);  /* the image rows bypass the cache */
    free(ll);
}

/* llvm_vec.c: a read whose lanes are strided along x and whose row needs the boundary mode
 * (rows above and below the image, or a row tested by an `if`: the bilateral filter's taps on
 * a grid with a spacing in x) is a row index clamped as a scalar and a strided load, not a
 * gather (on AMD's AVX-512 a gather of 16 floats cost more than computing every pixel: the
 * bilateral filter's 2 x 2 grid ran at 0.86 of the exact time). The results equal the
 * interpreter's under every boundary mode. */
static void test_strided_rows_with_boundary_are_loads(void)
{
    static const char *const modes[] = { "clamp", "mirror", "wrap", "constant(0.5)" };
    static const char *const scheds[] = {
        "so grid 2 1\nso exec vectorize 8\n",
        "so grid 4 2\nso exec tile 32 4 vectorize 16\n",
        "so grid 3 1 reconstruct store linear\n",
    };
    pf_image *imgs[2] = { cg_synthetic(45, 29, 1, 8), cg_synthetic(64, 5, 1, 9) };
    for (int m = 0; m < 4; m++) {
        char src[512];
        snprintf(src, sizeof src,
                 "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
                 "    image t[W, H] boundary %s;\n"
                 "    for each (x, y) of t as st t[x, y] = in[x, y] * 2.0 + float(y);\n"
                 "    for each (x, y) of out as so\n"
                 "        out[x, y] = t[x, y - 2] + 2.0 * t[x, y + 3] + t[x + 1, y - 1];\n"
                 "}\n", modes[m]);
        pf_error err;
        pf_program *p = pf_compile_string("rows.pf", src, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        char *ll = llvm_text_prog(p, scheds[0]);
        int gathers = calls(ll, "@llvm.masked.gather");
        printf("\n    boundary %-13s gathers %d", modes[m], gathers);
        CU_ASSERT_EQUAL(gathers, 0);
        free(ll);
        for (int s = 0; s < 3; s++)
            for (int i = 0; i < 2; i++) {
                pf_plan *plan = cg_plan(p, scheds[s]);
                pf_param_values pv;
                pf_params_init(&pv, p);
                cg_run ref, got;
                CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_INTERP, &imgs[i], 1,
                                                  &ref), 0);
                CU_ASSERT_EQUAL_FATAL(cg_run_plan(p, &pv, plan, PF_BACKEND_JIT, &imgs[i], 1,
                                                  &got), 0);
                CU_ASSERT(cg_max_abs_diff(ref.out[0], got.out[0]) <= 1e-5);
                cg_run_free(&ref);
                cg_run_free(&got);
                pf_params_free(&pv);
                pf_plan_free(plan);
            }
        pf_program_free(p);
    }
    char *ll = llvm_text_of("bilateral_filter", "loop_pixels grid 2 2\n");
    printf("\n    bilateral filter, grid 2 x 2: gathers %d", calls(ll, "@llvm.masked.gather"));
    CU_ASSERT_EQUAL(calls(ll, "@llvm.masked.gather"), 0);
    free(ll);
    pf_image_free(imgs[0]);
    pf_image_free(imgs[1]);
}

/* Adaptive and importance sampling's passes over their masks are vector loops: the mask test
 * is a lane predicate, and a vector whose lanes are all skipped is skipped (llvm_vec.c). As
 * scalar loops, the bilateral filter's adaptive and importance variants ran 5-6x the exact
 * time on one thread (0.9x and 1.9x since). Every pass: a vectorized loop whose body is the
 * mask test. */
static void test_masked_passes_are_vectorized(void)
{
    static const char *const scheds[] = {
        "loop_pixels adaptive 2 0.5 reconstruct store nearest\n",
        "loop_pixels importance 0.5 0.02 reconstruct store gaussian-sv 0.73\n",
    };
    static const int passes[] = { 2, 1 };
    pf_program *p = cg_load_app("bilateral_filter");
    for (int i = 0; i < 2; i++) {
        char *ir = cg_ir_dump(p, scheds[i]);
        int vector_passes = 0;
        for (const char *q = ir; (q = strstr(q, "vectorized for")); q++) {
            const char *next = strchr(q, '\n');
            const char *test = next ? strstr(next, "if ((loop_pixels_mask[") : NULL;
            const char *after = next ? strchr(next + 1, '\n') : NULL;
            vector_passes += test && after && test < after;
        }
        printf("\n    %.40s: %d vectorized passes", scheds[i], vector_passes);
        CU_ASSERT(vector_passes >= passes[i]);
        free(ir);
    }
    pf_program_free(p);
}

/* llvm_vec.c: a mutable declared under the lane predicate of a masked pass (the median's window
 * counter inside `if (mask == ...)`) stays one scalar when every assignment to it is the same in
 * all lanes: the lanes where the mask is off never see it. As a vector of counters, each window
 * store went through 8 extracted lanes (64 extractelement in the module), and the median's
 * adaptive variant ran 3.4x the exact time (0.9x since). */
static void test_masked_window_counter_is_scalar(void)
{
    char *ll = llvm_text_of("median", "loop_pixels adaptive 2 0.3 reconstruct store nearest\n"
                                      "loop_pixels exec root vectorize 8 parallel\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ll);
    printf("\n    extractelement: %d", count(ll, "extractelement"));
    CU_ASSERT_EQUAL(count(ll, "extractelement"), 0);
    free(ll);
}

/* A parallel chunk copies the caller's loop variables and mutables it reads into its own
 * slots once: read through the caller's frame, LLVM reloaded them after every store to a
 * window (memory it cannot tell apart from that frame), in every vector iteration of the
 * paper variant's fill (36 such loads of i32 scalars in its optimized module, 2 now). */
static void test_parallel_chunks_copy_captured_scalars(void)
{
    char *ll = llvm_text("loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                         "loop_output grid 4 4 1 reconstruct store linear\n"
                         "loop_output exec tile 128 16 vectorize 8 parallel\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ll);
    CU_ASSERT(count(ll, "@pf_rt_parallel_for") >= 1);
    int reloads = count(ll, "= load i32, ptr %");
    printf("\n    i32 loads in the optimized module: %d", reloads);
    CU_ASSERT(reloads <= 8);
    free(ll);
}

/* The bilateral grid's slice gathers from a 4-D grid at coordinates converted from floats: the
 * gathers' offsets are 32-bit vector arithmetic (64-bit products are three multiplies each on
 * AVX2) and float lanes convert to int32 with one vector conversion, not lane by lane
 * (llvm.fptosi.sat on vectors). */
static void test_gathers_and_conversions_stay_vectors(void)
{
    char *ll = llvm_text_of("bilateral_grid", "trilerp_loop exec tile 256 8 vectorize 8\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ll);
    CU_ASSERT(count(ll, "@llvm.masked.gather") + count(ll, "load float") >= 1);
    CU_ASSERT_EQUAL(count(ll, "mul <8 x i64>") + count(ll, "mul nsw <8 x i64>"), 0);
    CU_ASSERT_EQUAL(count(ll, "@llvm.fptosi.sat.v8"), 0);  /* (SLP may pair scalar ones) */
    CU_ASSERT(count(ll, "fptosi <8 x float>") >= 1);
    free(ll);
}

/* The simplifier folds x*k/k and x*m%k (k divides m): an image coordinate x = 4J of a stage
 * looping over sample indices J then reads its on-demand producer at J, not (4J)/4 behind a
 * select on (4J)%4 == 0 (which pass_bounds cannot see through at the tile's borders). */
static void test_simplify_multiples(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = ir_func_new(&arena, "t");
    ir_var *j = ir_var_new(f, "J", IR_I32, IR_VAR_LOOP);
    ir_expr *J = ir_ref(f, j), *four = ir_const_i32(f, 4);
    ir_expr *x = irf_bin(f, IR_MUL, J, four);
    CU_ASSERT_PTR_EQUAL(irf_bin(f, IR_DIV, x, ir_const_i32(f, 4)), J);
    CU_ASSERT(ir_is_const(irf_bin(f, IR_MOD, x, ir_const_i32(f, 4)), NULL));
    CU_ASSERT(ir_is_const(irf_bin(f, IR_MOD, irf_bin(f, IR_MUL, four, J), ir_const_i32(f, 2)),
                          NULL));
    ir_expr *half = irf_bin(f, IR_DIV, x, ir_const_i32(f, 2));  /* 2J: not folded */
    CU_ASSERT(half->kind == IR_BIN && half->op == IR_DIV);
    ir_expr *m3 = irf_bin(f, IR_MOD, irf_bin(f, IR_MUL, J, ir_const_i32(f, 3)), four);
    CU_ASSERT(m3->kind == IR_BIN && m3->op == IR_MOD);
    pf_arena_free(&arena);
}

/* f64 scalars (the GPU Gaussian's recursion, codegen/lower_gauss_gpu.c) are neither integer
 * constants nor f32 ones: the simplifier does not fold them with integer or float arithmetic
 * (1e8 + 1 - 1e8 is 1 in double, 0 in float), casts of integer constants fold exactly, and they
 * print with their double value. */
static void test_simplify_f64(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = ir_func_new(&arena, "t");
    ir_expr *big = ir_const_f64(f, 1e8), *one = ir_const_f64(f, 1.0);
    CU_ASSERT_FALSE(ir_is_const(big, NULL));
    CU_ASSERT_FALSE(ir_is_const_f(big, NULL));
    ir_expr *e = irf_bin(f, IR_SUB, irf_bin(f, IR_ADD, big, one), big);
    CU_ASSERT(e->type == IR_F64 && (e->kind == IR_BIN || e->dval == 1.0));
    CU_ASSERT(irf_bin(f, IR_MUL, one, big)->type == IR_F64);
    CU_ASSERT(irf_bin(f, IR_LT, one, big)->type == IR_BOOL);
    ir_expr *c = irf_cast(f, IR_F64, ir_const_i32(f, -3));
    CU_ASSERT(c->kind == IR_CONST && c->type == IR_F64 && c->dval == -3.0);
    CU_ASSERT(ir_expr_equal(c, ir_const_f64(f, -3.0)));
    CU_ASSERT_FALSE(ir_expr_equal(c, ir_const_f64(f, 3.0)));
    pf_strbuf sb;
    pf_sb_init(&sb);
    ir_print_expr(irf_cast(f, IR_F32, ir_const_f64(f, 0.1)), &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "0.10000000000000001d"));
    pf_sb_free(&sb);
    pf_arena_free(&arena);
}

static void test_affine_positive_variables(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = ir_func_new(&arena, "t");
    ir_var *w = ir_var_new(f, "W", IR_I32, IR_VAR_LET), *x = ir_var_new(f, "X", IR_I32, IR_VAR_LET);
    w->positive = true;
    aff zero = aff_const(0), W = aff_var(w), X = aff_var(x);
    aff w_minus_1 = aff_add(W, aff_const(-1));
    CU_ASSERT_EQUAL(aff_ge(&w_minus_1, &zero), 1);       /* W >= 1 */
    aff w_minus_2 = aff_add(W, aff_const(-2));
    CU_ASSERT_EQUAL(aff_ge(&w_minus_2, &zero), -1);      /* W may be 1 */
    aff neg_w = aff_scale(W, -1);
    CU_ASSERT_EQUAL(aff_ge(&neg_w, &zero), 0);           /* -W < 0 */
    aff two_w = aff_scale(W, 2);
    CU_ASSERT_EQUAL(aff_ge(&two_w, &W), 1);              /* 2W >= W */
    CU_ASSERT_EQUAL(aff_ge(&X, &zero), -1);              /* nothing known of X */
    aff mixed = aff_sub(W, X);
    CU_ASSERT_EQUAL(aff_ge(&mixed, &zero), -1);
    pf_arena_free(&arena);
}

/* Bounds through min and max (the clamped loop bounds of compute-at producers): max(yo - 8, 0)
 * is at least 0, min(yo + 64, H) at most H (the operand without loop variables is preferred),
 * sums carry bounds; nothing comes out of a min as a lower bound. */
static void test_affine_bounds_through_min_max(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = ir_func_new(&arena, "t");
    ir_var *h = ir_var_new(f, "H", IR_I32, IR_VAR_LET), *yo = ir_var_new(f, "yo", IR_I32,
                                                                          IR_VAR_LOOP);
    aff_env env;
    aff_env_init(&env, f->n_vars);
    aff zero = aff_const(0), H = aff_var(h);
    env.lo[yo->id] = &zero;  /* yo in [0, H - 1] */
    aff hm1 = aff_add(H, aff_const(-1));
    env.hi[yo->id] = &hm1;
    ir_expr *Y = ir_ref(f, yo), *HH = ir_ref(f, h);
    ir_expr *lo = ir_bin(f, IR_MAX, ir_bin(f, IR_ADD, Y, ir_const_i32(f, -8)), ir_const_i32(f, 0));
    aff a = aff_bound(&env, lo, true);
    CU_ASSERT(a.ok && a.n == 0 && a.c == 0);
    ir_expr *hi = ir_bin(f, IR_MIN, ir_bin(f, IR_ADD, Y, ir_const_i32(f, 64)), HH);
    aff b = aff_bound(&env, hi, false);
    CU_ASSERT(b.ok && b.n == 1 && b.v[0] == h && b.k[0] == 1 && b.c == 0);
    aff c = aff_bound(&env, ir_bin(f, IR_ADD, hi, ir_const_i32(f, 7)), false);
    CU_ASSERT(c.ok && c.n == 1 && c.c == 7);
    CU_ASSERT_FALSE(aff_bound(&env, hi, true).ok);   /* min(yo + 64, H) >= ? */
    CU_ASSERT_FALSE(aff_of(&env, hi).ok);            /* and it is not affine itself */
    env.lo[yo->id] = env.hi[yo->id] = NULL;
    aff_env_free(&env);
    pf_arena_free(&arena);
}

PF_TEST_SUITE(codegen_passes, PF_TEST(test_lattice_reads_lose_their_checks),
              PF_TEST(test_ondemand_reads_on_samples_are_plain),
              PF_TEST(test_store_fill_is_generated), PF_TEST(test_strided_taps_load_once),
              PF_TEST(test_strided_rows_with_boundary_are_loads),
              PF_TEST(test_masked_passes_are_vectorized),
              PF_TEST(test_masked_window_counter_is_scalar),
              PF_TEST(test_gathers_and_conversions_stay_vectors),
              PF_TEST(test_parallel_chunks_copy_captured_scalars),
              PF_TEST(test_simplify_multiples), PF_TEST(test_simplify_f64),
              PF_TEST(test_affine_positive_variables),
              PF_TEST(test_affine_bounds_through_min_max))
