/* Split compiles (codegen/split.h): which pieces the plan outlines and how it deals them out
 * to modules, and that compiling in 1, 2 or 3 modules gives the same outputs to the bit. */
#include "codegen/ir_clone.h"
#include "codegen/llvm_emit.h"
#include "codegen/lower.h"
#include "codegen/passes.h"
#include "codegen/split.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The app's loop IR with the default schedule, after the passes pf_variant_build runs. */
static ir_func *lowered(pf_arena *arena, const char *app, pf_program **prog, pf_param_values *pv)
{
    *prog = cg_load_app(app);
    pf_params_init(pv, *prog);
    pf_error err;
    pf_plan *plan = cg_plan(*prog, NULL);
    ir_func *f = pf_lower(arena, *prog, pv, plan, &err);
    pf_plan_free(plan);  /* the IR keeps nothing of it */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    pf_pass_stats ps = { 0 };
    f = pf_pass_bounds(f, true, &ps);
    f = pf_pass_ondemand(f, true, &ps);
    f = pf_pass_channels(f, &ps);
    return pf_pass_bands(f, &ps);
}

static bool contains(const ir_stmt *outer, const ir_stmt *s)
{
    if (!outer)
        return false;
    if (outer == s)
        return true;
    for (int i = 0; outer->kind == IR_S_BLOCK && i < outer->n; i++)
        if (contains(outer->body[i], s))
            return true;
    return outer->kind != IR_S_BLOCK && (contains(outer->then_s, s) || contains(outer->else_s, s));
}

/* Loops that enclose s inside `in` and step by 1 (rows, columns, channels). */
static int unit_step_loops_around(const ir_stmt *in, const ir_stmt *s)
{
    if (!in || in == s || !contains(in, s))
        return 0;
    int here = in->kind == IR_S_FOR && in->step->kind == IR_CONST && in->step->ival == 1;
    if (in->kind == IR_S_BLOCK) {
        for (int i = 0; i < in->n; i++)
            if (contains(in->body[i], s))
                return unit_step_loops_around(in->body[i], s);
    }
    return here + unit_step_loops_around(contains(in->then_s, s) ? in->then_s : in->else_s, s);
}

/* Blur's default schedule: tiles in parallel, each computing the horizontal pass into a window
 * and the vertical pass by row bands. The pieces are the parallel body and the nests inside a
 * tile; the two modules each get at least a fifth of the work; a nested piece lies inside its
 * parent; nothing is outlined below a tile (at most the channel loop steps by 1 around it). */
static void test_plan_blur(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    pf_program *prog;
    pf_param_values pv;
    ir_func *f = lowered(&arena, "blur", &prog, &pv);
    pf_split *one = pf_split_plan(f, 1);
    CU_ASSERT_EQUAL(one->n_modules, 1);
    for (int i = 0; i < one->n_pieces; i++)
        CU_ASSERT_EQUAL(one->piece[i].module, 0);
    pf_split_free(one);
    pf_split *p = pf_split_plan(f, 2);
    printf("\n    blur: %d pieces, loads %.0f / %.0f of %.0f", p->n_pieces, p->load[0], p->load[1],
           p->total);
    CU_ASSERT(p->n_pieces >= 3);
    CU_ASSERT_EQUAL(p->n_modules, 2);
    CU_ASSERT(p->load[0] >= 0.2 * p->total && p->load[1] >= 0.2 * p->total);
    CU_ASSERT(p->load[0] + p->load[1] > 0.999 * p->total);
    for (int i = 0; i < p->n_pieces; i++) {
        const pf_piece *q = &p->piece[i];
        CU_ASSERT(q->module == 0 || q->module == 1);
        CU_ASSERT_EQUAL(q->kind == PF_PIECE_CHUNK, q->s->loop_kind == IR_LOOP_PARALLEL);
        if (q->parent >= 0)
            CU_ASSERT(contains(p->piece[q->parent].s, q->s) && p->piece[q->parent].s != q->s);
        CU_ASSERT(unit_step_loops_around(f->body, q->s) <= 1);
    }
    pf_split_free(p);
    pf_params_free(&pv);
    pf_program_free(prog);
    pf_arena_free(&arena);
}

/* The median's parallel loop runs per row: inside it only the column nests that hold a window
 * per pixel (three loop levels) are pieces, never the row's simple loops. */
static void test_plan_row_loops(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    pf_program *prog;
    pf_param_values pv;
    ir_func *f = lowered(&arena, "median", &prog, &pv);
    pf_split *p = pf_split_candidates(f);
    CU_ASSERT(p->n_pieces >= 2);
    int nests = 0;
    for (int i = 0; i < p->n_pieces; i++) {
        const pf_piece *q = &p->piece[i];
        if (q->kind != PF_PIECE_NEST)
            continue;
        nests++;
        CU_ASSERT(q->parent >= 0 && p->piece[q->parent].kind == PF_PIECE_CHUNK);
        CU_ASSERT(ir_loop_depth(q->s) >= 3);  /* columns > window rows > window columns */
    }
    CU_ASSERT(nests >= 1);
    pf_split_free(p);
    pf_params_free(&pv);
    pf_program_free(prog);
    pf_arena_free(&arena);
}

/* Dealing by cost: the longest piece first onto the least loaded module; a split that leaves
 * one module with more than 80% of the work is not made. */
static void test_deal(void)
{
    ir_stmt dummy[4];
    memset(dummy, 0, sizeof dummy);
    pf_piece pieces[4] = {
        { &dummy[0], PF_PIECE_CHUNK, -1, 1, 40 }, { &dummy[1], PF_PIECE_NEST, 0, 2, 30 },
        { &dummy[2], PF_PIECE_NEST, 0, 3, 20 }, { &dummy[3], PF_PIECE_NEST, 0, 4, 15 },
    };
    pf_split p = { .n_modules = 5, .n_pieces = 4, .piece = pieces };
    p.load[0] = 10;
    pf_split_deal(&p, 2);
    CU_ASSERT_EQUAL(p.n_modules, 2);
    CU_ASSERT_DOUBLE_EQUAL(p.total, 115, 1e-9);
    /* 40 -> m1 (40), 30 -> m0 (10 + 30), 20 -> m0 on the tie (60), 15 -> m1 (55) */
    CU_ASSERT(p.load[0] == 60 && p.load[1] == 55);
    CU_ASSERT_PTR_NOT_NULL(pf_split_outlined(&p, &dummy[0]));  /* m1 inside the function (m0) */
    CU_ASSERT_PTR_NOT_NULL(pf_split_outlined(&p, &dummy[1]));  /* m0 inside the chunk (m1) */
    CU_ASSERT_PTR_NOT_NULL(pf_split_outlined(&p, &dummy[2]));
    CU_ASSERT_PTR_NULL(pf_split_outlined(&p, &dummy[3]));      /* m1 inside the chunk (m1) */
    pieces[0].cost = 400;
    for (int i = 0; i < 4; i++)
        pieces[i].module = i + 1;
    p.n_modules = 5;
    memset(p.load, 0, sizeof p.load);  /* the deal left the modules' loads there */
    p.load[0] = 10;
    pf_split_deal(&p, 2);
    CU_ASSERT_EQUAL(p.n_modules, 1);  /* 400 of 475 in one module whatever the deal */
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pieces[i].module, 0);
    CU_ASSERT_PTR_NULL(pf_split_outlined(&p, &dummy[0]));
}

/* apps x schedules compiled as 1, 2 and 3 modules: identical outputs, and a split that
 * happened (every app here has pieces worth splitting for 2 threads). */
static void test_split_outputs(void)
{
    static const char *apps[] = { "blur", "unsharp_mask", "bilateral_filter", "bilateral_grid",
                                  "demosaic", "mosaic" };
    pf_image *photo = cg_load_photo("man_made_1_256x192.png", 3);
    pf_image *odd = cg_synthetic(45, 29, 3, 3u);
    for (size_t i = 0; i < sizeof apps / sizeof *apps; i++) {
        pf_program *prog = cg_load_app(apps[i]);
        for (int threads = 2; threads <= 3; threads++) {
            pf_compile_options o[2] = { { 0 }, { 0 } };
            o[0].compile_threads = 1;
            o[1].compile_threads = threads;
            pf_variant_stats st[2];
            for (int k = 0; k < 2; k++) {
                pf_image *in = k ? odd : photo;
                double d = cg_diff_options(prog, in, o, st);
                printf("\n    %-16s %dx%d, %d vs %d modules: max|diff| %g", apps[i], in->width,
                       in->height, st[0].jit_modules, st[1].jit_modules, d);
                CU_ASSERT_EQUAL(d, 0.0);
                CU_ASSERT_EQUAL(st[0].jit_modules, 1);
                CU_ASSERT(st[1].jit_modules >= 2 && st[1].jit_modules <= threads);
            }
        }
        pf_program_free(prog);
    }
    pf_image_free(photo);
    pf_image_free(odd);
}

/* The vector math calls into libmvec (log here; exp is inline code, llvm_vexp.c) are declared
 * as touching no memory. Without that, once the buffers' addresses escape (into another
 * module's piece), LLVM must assume the call writes them and reloads every read after it: the
 * split compile ran 4.5% more instructions per run of the bilateral filter before the
 * declarations said so (then with libmvec's exp). */
static void test_pure_runtime_calls(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    pf_error err;
    pf_program *prog = pf_compile_string(
        "log.pf", "pipeline l(image in[W, H]) -> (image out[W, H]) {\n"
                  "  for each (x, y) of out as s out[x, y] = log(in[x, y] + 1.0);\n}\n", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_plan *plan = cg_plan(prog, NULL);
    ir_func *f = pf_lower(&arena, prog, &pv, plan, &err);
    pf_plan_free(plan);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = pf_llvm_emit(f, ctx, "pf_pipeline", true, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mod);
    LLVMValueRef fn = LLVMGetNamedFunction(mod, "_ZGVdN8v_logf");
    if (fn) {  /* libmvec present (x86-64 with AVX2): the usual case */
        unsigned kind = LLVMGetEnumAttributeKindForName("memory", 6);
        LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(LLVMGetEnumAttributeValue(a), 0);  /* memory(none) */
    } else {
        printf("\n    no libmvec on this host: log is LLVM's intrinsic, memory(none) already");
        CU_ASSERT_PTR_NOT_NULL(LLVMGetNamedFunction(mod, "llvm.log.v8f32"));
    }
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    pf_params_free(&pv);
    pf_program_free(prog);
    pf_arena_free(&arena);
}

PF_TEST_SUITE(codegen_split, PF_TEST(test_plan_blur), PF_TEST(test_plan_row_loops),
              PF_TEST(test_deal), PF_TEST(test_split_outputs),
              PF_TEST(test_pure_runtime_calls))
