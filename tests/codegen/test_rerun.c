/* Vectorized loops that end in one shifted vector instead of a scalar tail (codegen/ir_rerun.h,
 * em_vector_loop): which bodies may run again, and outputs that match the interpreter on every
 * row width around the vector width (fewer columns than a vector, exactly one, one more). */
#include "codegen/ir_rerun.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include <stdio.h>

typedef struct loop_kit {
    pf_arena arena;
    ir_func *f;
    ir_buffer *in, *out;
    ir_var *x;
} loop_kit;

static void kit_open(loop_kit *k)
{
    pf_arena_init(&k->arena);
    k->f = ir_func_new(&k->arena, "t");
    k->in = ir_buffer_new(k->f, "in", IR_BUF_INPUT, 1);
    k->out = ir_buffer_new(k->f, "out", IR_BUF_OUTPUT, 1);
    k->x = ir_var_new(k->f, "x", IR_I32, IR_VAR_LOOP);
}

static ir_expr *at_x(loop_kit *k, ir_buffer *b)
{
    ir_expr *idx[1] = { ir_ref(k->f, k->x) };
    return ir_load(k->f, b, idx, 0);
}

static ir_stmt *store_x(loop_kit *k, ir_expr *value)
{
    ir_expr *idx[1] = { ir_ref(k->f, k->x) };
    return ir_store(k->f, k->out, idx, value, 0, false);
}

static bool reruns(loop_kit *k, ir_stmt *body)
{
    ir_stmt *loop = ir_for(k->f, k->x, ir_const_i32(k->f, 0), ir_const_i32(k->f, 100),
                           ir_const_i32(k->f, 1), IR_LOOP_VECTORIZED, body);
    return ir_body_reruns_safely(loop, k->f->n_vars);
}

/* out[x] = 2 in[x] may run twice; out[x] = out[x] + in[x] adds twice; a mutable declared
 * outside the loop carries state between iterations; a local one does not. */
static void test_which_bodies_rerun(void)
{
    loop_kit k;
    kit_open(&k);
    ir_func *f = k.f;
    ir_expr *twice = ir_bin(f, IR_MUL, at_x(&k, k.in), ir_const_f32(f, 2));
    CU_ASSERT_TRUE(reruns(&k, store_x(&k, twice)));
    ir_expr *acc = ir_bin(f, IR_ADD, at_x(&k, k.out), at_x(&k, k.in));
    CU_ASSERT_FALSE(reruns(&k, store_x(&k, acc)));
    ir_var *outer = ir_var_new(f, "n", IR_F32, IR_VAR_MUT);
    ir_stmt *count = ir_assign(f, outer, ir_bin(f, IR_ADD, ir_ref(f, outer), ir_const_f32(f, 1)));
    ir_stmt *carried[2] = { count, store_x(&k, ir_ref(f, outer)) };
    CU_ASSERT_FALSE(reruns(&k, ir_block(f, 2, carried)));
    ir_var *local = ir_var_new(f, "s", IR_F32, IR_VAR_MUT);
    ir_stmt *own[3] = { ir_decl(f, local, at_x(&k, k.in)),
                        ir_assign(f, local, ir_bin(f, IR_MUL, ir_ref(f, local), ir_ref(f, local))),
                        store_x(&k, ir_ref(f, local)) };
    CU_ASSERT_TRUE(reruns(&k, ir_block(f, 3, own)));
    ir_buffer *bufs[1] = { k.out };
    CU_ASSERT_FALSE(reruns(&k, ir_rtcall(f, IR_RT_ZERO_BUFFER, 1, bufs, 0, NULL)));
    pf_arena_free(&k.arena);
}

/* The JIT against the interpreter on rows of 1 to 2W + 1 interior columns (the bilateral
 * filter's 9x9 window leaves width - 8 of them; its pixels run 16 lanes on an AVX-512 host, 8
 * elsewhere), exact and sampled on every other row (x loops of step 1 shift; strided ones keep
 * their scalar tail). */
static void test_shifted_tail_matches_interpreter(void)
{
    pf_program *prog = cg_load_app("bilateral_filter");
    pf_param_values params;
    pf_params_init(&params, prog);
    static const char *const scheds[] = { NULL, "loop_pixels grid 1 2 reconstruct store linear\n" };
    for (int s = 0; s < 2; s++) {
        pf_plan *plan = cg_plan(prog, scheds[s]);
        pf_compile_options o[2] = { { .backend = PF_BACKEND_INTERP },
                                    { .backend = PF_BACKEND_JIT } };
        pf_variant *v[2];
        for (int b = 0; b < 2; b++) {
            v[b] = cg_compile(prog, &params, plan, &o[b]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(v[b]);
        }
        double worst = 0;
        for (int w = 9; w <= 8 + 2 * 16 + 1; w++) {
            pf_image *in = cg_synthetic(w, 11, 3, (unsigned)w);
            cg_run r[2];
            for (int b = 0; b < 2; b++)
                CU_ASSERT_EQUAL_FATAL(cg_run_variant(v[b], prog, &params, &in, 1, &r[b]), 0);
            double d = cg_max_abs_diff(r[0].out[0], r[1].out[0]);
            CU_ASSERT(d <= 1e-5);
            worst = d > worst ? d : worst;
            cg_run_free(&r[0]);
            cg_run_free(&r[1]);
            pf_image_free(in);
        }
        printf("\n    %s: widths 9..%d, max|diff| %.2g", scheds[s] ? "grid 1 2" : "exact",
               8 + 2 * 16 + 1, worst);
        for (int b = 0; b < 2; b++)
            pf_variant_free(v[b]);
        pf_plan_free(plan);
    }
    pf_params_free(&params);
    pf_program_free(prog);
}

PF_TEST_SUITE(codegen_rerun, PF_TEST(test_which_bodies_rerun),
              PF_TEST(test_shifted_tail_matches_interpreter))
