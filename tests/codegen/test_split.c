/* Split compiles (codegen/split.h): which pieces the plan makes and how it deals them out to
 * modules; that the code is the same in one module and split (the same LLVM instructions after
 * the passes), and that compiling in 1, 2 or 3 modules gives the same outputs to the bit. */
#include "codegen/ir_clone.h"
#include "codegen/jit_internal.h"
#include "codegen/llvm_emit.h"
#include "codegen/lower.h"
#include "codegen/split.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <llvm-c/Core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The final loop IR of app under schedule (NULL: exact), as pf_variant_build compiles it. */
static ir_func *final_ir(pf_arena *arena, const char *app, const char *schedule)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_plan *plan = cg_plan(prog, schedule);
    pf_error err;
    ir_func *f = pf_variant_loop_ir(prog, &pv, plan, arena, &err);
    pf_plan_free(plan);  /* the IR keeps nothing of them */
    pf_params_free(&pv);
    pf_program_free(prog);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    return f;
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

static int count_parallel(const ir_stmt *s)
{
    if (!s)
        return 0;
    int n = s->kind == IR_S_FOR && s->loop_kind == IR_LOOP_PARALLEL;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        n += count_parallel(s->body[i]);
    return s->kind == IR_S_BLOCK ? n : n + count_parallel(s->then_s) + count_parallel(s->else_s);
}

/* Every piece is a parallel loop of f, inside its parent piece's loop. */
static void check_plan(const ir_func *f, const pf_split *p)
{
    for (int i = 0; i < p->n_pieces; i++) {
        const pf_piece *q = &p->piece[i];
        CU_ASSERT(q->s->kind == IR_S_FOR && q->s->loop_kind == IR_LOOP_PARALLEL);
        CU_ASSERT(contains(f->body, q->s));
        if (q->parent >= 0)
            CU_ASSERT(contains(p->piece[q->parent].s, q->s) && p->piece[q->parent].s != q->s);
    }
}

/* The bilateral grid's stages are parallel loops of their own: they are the pieces, and two
 * threads get two modules with at least a fifth of the work each. */
static void test_plan_stages(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = final_ir(&arena, "bilateral_grid", NULL);
    pf_split *one = pf_split_plan(f, 1);
    CU_ASSERT_EQUAL(one->n_modules, 1);
    for (int i = 0; i < one->n_pieces; i++)
        CU_ASSERT_EQUAL(one->piece[i].module, 0);
    pf_split_free(one);
    pf_split *p = pf_split_plan(f, 2);
    printf("\n    bilateral grid: %d pieces of %d parallel loops, loads %.0f / %.0f of %.0f",
           p->n_pieces, count_parallel(f->body), p->load[0], p->load[1], p->total);
    CU_ASSERT(p->n_pieces >= 2 && p->n_pieces <= count_parallel(f->body));
    CU_ASSERT_EQUAL(p->n_modules, 2);
    CU_ASSERT(p->load[0] >= 0.2 * p->total && p->load[1] >= 0.2 * p->total);
    CU_ASSERT(p->load[0] + p->load[1] > 0.999 * p->total);
    check_plan(f, p);
    pf_split_free(p);
    pf_arena_free(&arena);
}

/* A blur frontier variant whose output is computed in tiles of a parallel loop, with per-tile
 * nests (a plain-GA run's; split with those nests outlined, it ran 2x slower). */
#define TILED_VARIANT \
    "loop_temp grid 4 4 1 reconstruct on-demand linear\n" \
    "loop_output grid 4 4 1 reconstruct store linear\n" \
    "loop_output exec root tile 256 64 parallel unroll 4\n"

/* Nests inside a parallel loop's tiles or rows are not pieces, however much code they hold:
 * outlined, they compiled to other code than in one module (split.h). The median's window
 * nests and a blur variant's per-tile nests stay inside their parallel loop's piece. */
static void test_plan_nests_stay(void)
{
    static const struct {
        const char *app, *schedule;
    } cases[] = {
        { "median", NULL },
        { "blur", TILED_VARIANT },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_arena arena;
        pf_arena_init(&arena);
        ir_func *f = final_ir(&arena, cases[i].app, cases[i].schedule);
        pf_split *p = pf_split_candidates(f);
        CU_ASSERT(p->n_pieces >= 1 && p->n_pieces <= count_parallel(f->body));
        check_plan(f, p);
        pf_split_free(p);
        pf_arena_free(&arena);
    }
}

/* Dealing by cost: the longest piece first onto the least loaded module; a split that leaves
 * one module with more than 80% of the work is not made. */
static void test_deal(void)
{
    ir_stmt dummy[4];
    memset(dummy, 0, sizeof dummy);
    pf_piece pieces[4] = {
        { &dummy[0], -1, 1, 40 }, { &dummy[1], 0, 2, 30 }, { &dummy[2], 0, 3, 20 },
        { &dummy[3], 0, 4, 15 },
    };
    pf_split p = { .n_modules = 5, .n_pieces = 4, .piece = pieces };
    p.load[0] = 10;
    pf_split_deal(&p, 2);
    CU_ASSERT_EQUAL(p.n_modules, 2);
    CU_ASSERT_DOUBLE_EQUAL(p.total, 115, 1e-9);
    /* 40 -> m1 (40), 30 -> m0 (10 + 30), 20 -> m0 on the tie (60), 15 -> m1 (55) */
    CU_ASSERT(p.load[0] == 60 && p.load[1] == 55);
    CU_ASSERT_PTR_NOT_NULL(pf_split_elsewhere(&p, &dummy[0]));  /* m1 inside the function (m0) */
    CU_ASSERT_PTR_NOT_NULL(pf_split_elsewhere(&p, &dummy[1]));  /* m0 inside its parent (m1) */
    CU_ASSERT_PTR_NOT_NULL(pf_split_elsewhere(&p, &dummy[2]));
    CU_ASSERT_PTR_NULL(pf_split_elsewhere(&p, &dummy[3]));      /* m1 inside its parent (m1) */
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
    CU_ASSERT_PTR_NULL(pf_split_elsewhere(&p, &dummy[0]));
}

/* LLVM instructions after the passes, counted by opcode and result type (vector types by
 * lane count), over every function defined in mod. */
enum { N_OPS = 80, N_TYPES = 24 };
typedef struct census {
    int n[N_OPS][N_TYPES];
    int functions;
} census;

static void count_module(LLVMModuleRef mod, census *c)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn))
            continue;
        c->functions++;
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
                 in = LLVMGetNextInstruction(in)) {
                int op = (int)LLVMGetInstructionOpcode(in);
                LLVMTypeRef t = LLVMTypeOf(in);
                int ty = (int)LLVMGetTypeKind(t);
                if (ty == LLVMVectorTypeKind)
                    ty = 20 + (LLVMGetVectorSize(t) >= 16) + (LLVMGetVectorSize(t) >= 8);
                c->n[op < N_OPS ? op : N_OPS - 1][ty < N_TYPES ? ty : N_TYPES - 1]++;
            }
    }
}

/* Emits module m of plan (NULL: the whole function as one module), optimizes it as the JIT
 * does and counts its instructions into c. */
static void census_of(const ir_func *f, const pf_split *plan, int m, census *c)
{
    pf_error err;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = plan ? pf_llvm_emit_part(f, ctx, JIT_ENTRY, plan, m, true, &err)
                             : pf_llvm_emit(f, ctx, JIT_ENTRY, true, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mod);
    LLVMTargetMachineRef tm = jit_host_machine(3, false, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tm);
    CU_ASSERT_EQUAL(jit_optimize(mod, tm, 3, false, ir_has_unroll(f->body), 0, &err), 0);
    count_module(mod, c);
    LLVMDisposeTargetMachine(tm);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
}

/* The code a variant runs does not depend on the compile's thread count: compiled as one
 * module and split for 2 and 3 threads, the same instructions after the passes (the search
 * and `perfora export` compile one module; a plain `perfora run` splits). Exact programs and
 * perforated variants, with tiles inside parallel loops. The blur variant whose per-tile
 * nests became AVX-512 gathers when they were outlined has one parallel loop: it is now one
 * module at any thread count (no split to compare), and the apps with several parallel
 * stages are compared both ways. On 95c19a0, which outlined nests, every case here differed
 * (14-58 instruction kinds). */
static void test_same_code(void)
{
    static const struct {
        const char *app, *schedule;
    } cases[] = {
        { "blur", NULL },
        { "blur", TILED_VARIANT },
        { "blur", "loop_temp grid 2 8 1 reconstruct store linear\nloop_temp exec root\n"
                  "loop_output grid 4 8 1 reconstruct store linear\n" },
        { "bilateral_grid", NULL },
        { "bilateral_grid", "blur_z_loop grid 2 2 1 1 reconstruct store nearest\n" },
        { "bilateral_grid", "rgb_to_yuv exec tile 256 8 vectorize 8 parallel\n"
                            "trilerp_loop exec tile 256 8 vectorize 8 parallel\n"
                            "yuv_to_rgb exec tile 256 8 vectorize 8 parallel\n" },
        { "demosaic", NULL },
        { "median", NULL },
        { "mosaic", NULL },
        { "unsharp_mask", NULL },
    };
    jit_init_llvm();
    int split = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pf_arena arena;
        pf_arena_init(&arena);
        ir_func *f = final_ir(&arena, cases[i].app, cases[i].schedule);
        census *one = calloc(1, sizeof *one);
        census_of(f, NULL, 0, one);
        for (int threads = 2; threads <= 3; threads++) {
            pf_jit_options opt = { .opt_level = 3, .compile_threads = threads };
            pf_split *plan = jit_split_plan(f, &opt);
            if (!plan)
                continue;
            census *parts = calloc(1, sizeof *parts);
            for (int m = 0; m < plan->n_modules; m++)
                census_of(f, plan, m, parts);
            int differ = 0;
            for (int op = 0; op < N_OPS; op++)
                for (int ty = 0; ty < N_TYPES; ty++)
                    differ += one->n[op][ty] != parts->n[op][ty];
            printf("\n    %-15s %s: %d modules, %d/%d functions, %d instruction kinds differ",
                   cases[i].app, cases[i].schedule ? "variant" : "exact", plan->n_modules,
                   one->functions, parts->functions, differ);
            CU_ASSERT_EQUAL(differ, 0);
            CU_ASSERT_EQUAL(one->functions, parts->functions);
            split++;
            free(parts);
            pf_split_free(plan);
        }
        free(one);
        pf_arena_free(&arena);
    }
    CU_ASSERT(split >= 4);  /* the check saw split compiles, not only single modules */
}

/* apps x schedules compiled as 1, 2 and 3 modules: identical outputs, never more modules than
 * threads, and splits that happened (apps with several parallel stages). */
static void test_split_outputs(void)
{
    static const char *apps[] = { "blur", "unsharp_mask", "bilateral_filter", "bilateral_grid",
                                  "demosaic", "mosaic" };
    pf_image *photo = cg_load_photo("man_made_1_256x192.png", 3);
    pf_image *odd = cg_synthetic(45, 29, 3, 3u);
    int splits = 0;
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
                CU_ASSERT(st[1].jit_modules >= 1 && st[1].jit_modules <= threads);
                splits += st[1].jit_modules > 1;
            }
        }
        pf_program_free(prog);
    }
    CU_ASSERT(splits >= 4);
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

PF_TEST_SUITE(codegen_split, PF_TEST(test_plan_stages), PF_TEST(test_plan_nests_stay),
              PF_TEST(test_deal), PF_TEST(test_same_code), PF_TEST(test_split_outputs),
              PF_TEST(test_pure_runtime_calls))
