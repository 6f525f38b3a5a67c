/* pass_collapse: a perforated blur's channel loop and its parallel tile loop run as one
 * parallel loop (channels x tiles tasks, one fork and join); no output changes; a channel loop
 * whose iterations could touch each other's results stays as it was. */
#include "codegen/compile.h"
#include "codegen/passes.h"
#include "lang/lang.h"
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "base/arena.h"
#include "codegen/ir_simplify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char paper[] = "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                            "loop_output grid 4 4 1 reconstruct store linear\n";

/* The output stage of blur under the paper's schedule: its channels and 128-row tiles in one
 * parallel loop that steps over tiles, with no serial loop around it. */
static void test_blur_channels_and_tiles_in_one_loop(void)
{
    pf_program *p = cg_load_app("blur");
    char *before = cg_ir_dump_collapsed(p, paper, false);
    char *after = cg_ir_dump_collapsed(p, paper, true);
    CU_ASSERT_EQUAL(cg_count(before, "parallel for "), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(before, "parallel for yo"));
    CU_ASSERT_EQUAL(cg_count(after, "parallel for "), 1);
    const char *ck = strstr(after, "parallel for ck");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ck);
    CU_ASSERT_PTR_NOT_NULL(strstr(ck, "step 32  // loop_output"));  /* still over tiles */
    CU_ASSERT_PTR_NULL(strstr(after, "parallel for yo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ck, "let yo"));
    free(before);
    free(after);
    pf_program_free(p);
}

/* sched compiled with and without the pass (on 2 threads): identical outputs on in, and
 * whether it applied. */
static void expect_same(const pf_program *p, const char *sched, pf_image *in, int collapsed,
                        const char *what)
{
    pf_compile_options o[2] = { { .threads = 2 }, { .threads = 2, .no_collapse = true } };
    pf_variant_stats st[2] = { { 0 }, { 0 } };
    double d = cg_diff_schedule_options(p, sched, in, o, st);
    if (d != 0)
        printf("\n    %s: max |with - without| = %g", what, d);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(st[0].loops_collapsed, collapsed);
    CU_ASSERT_EQUAL(st[1].loops_collapsed, 0);
}

static void test_collapse_changes_no_result(void)
{
    pf_program *blur = cg_load_app("blur");
    pf_program *median = cg_load_app("median");
    pf_image *photo = cg_load_photo("natural_0_820x614.png", 3);
    expect_same(blur, paper, photo, 1, "blur paper, photo");
    expect_same(blur, "", photo, 1, "blur exact, photo");
    expect_same(median, "loop_pixels grid 2 2 1 reconstruct store linear\n", photo, 1,
                "median 2x2, photo");
    pf_image_free(photo);
    static const int sizes[][2] = { { 130, 67 }, { 9, 300 }, { 7, 3 }, { 1, 1 } };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pf_image *in = cg_synthetic(sizes[i][0], sizes[i][1], 3, 5u + (unsigned)i);
        char what[48];
        snprintf(what, sizeof what, "blur paper %dx%d", sizes[i][0], sizes[i][1]);
        expect_same(blur, paper, in, 1, what);
        pf_image_free(in);
    }
    pf_program_free(median);
    pf_program_free(blur);
}

/* ---- the independence rules, on IR built by hand ---- */

typedef struct hand {
    pf_arena arena;
    ir_func *f;
    ir_buffer *in, *out;
    ir_var *c, *y;
} hand;

static void hand_init(hand *h)
{
    pf_arena_init(&h->arena);
    h->f = ir_func_new(&h->arena, "t");
    h->in = ir_buffer_new(h->f, "in", IR_BUF_INPUT, 2);
    h->out = ir_buffer_new(h->f, "out", IR_BUF_OUTPUT, 2);
    h->c = ir_var_new(h->f, "c", IR_I32, IR_VAR_LOOP);
    h->y = ir_var_new(h->f, "y", IR_I32, IR_VAR_LOOP);
}

/* for c = 0 .. 3 { parallel for y = y_lo .. 100 step 10 { out[y_idx, c_idx] = value } } */
static int collapsed_count(hand *h, ir_expr *y_lo, ir_expr *y_idx, ir_expr *c_idx,
                           ir_expr *value)
{
    ir_func *f = h->f;
    ir_expr *idx[2] = { y_idx, c_idx };
    ir_stmt *store = ir_store(f, h->out, idx, value, 0, false);
    ir_stmt *par = ir_for(f, h->y, y_lo, ir_const_i32(f, 100), ir_const_i32(f, 10),
                          IR_LOOP_PARALLEL, store);
    par->width = 1;
    f->body = ir_for(f, h->c, ir_const_i32(f, 0), ir_const_i32(f, 3), ir_const_i32(f, 1),
                     IR_LOOP_SERIAL, par);
    pf_pass_stats st = { 0 };
    pf_pass_collapse(f, &st);  /* (its output is verified where apps compile: above) */
    return st.loops_collapsed;
}

static void test_only_independent_channels_collapse(void)
{
    hand h;
    hand_init(&h);
    ir_func *f = h.f;
    ir_expr *Y = ir_ref(f, h.y), *C = ir_ref(f, h.c), *zero = ir_const_i32(f, 0);
    ir_expr *rd[2] = { Y, C };
    /* out[y, c] = in[y, c]: each channel its own elements */
    CU_ASSERT_EQUAL(collapsed_count(&h, zero, Y, C, ir_load(f, h.in, rd, 0)), 1);
    /* out[y, 0] = in[y, c]: every channel writes the same element */
    CU_ASSERT_EQUAL(collapsed_count(&h, zero, Y, zero, ir_load(f, h.in, rd, 0)), 0);
    /* out[y, c] = out[y, 0]: a channel reads what channel 0 writes */
    ir_expr *first[2] = { Y, zero };
    CU_ASSERT_EQUAL(collapsed_count(&h, zero, Y, C, ir_load(f, h.out, first, 0)), 0);
    /* for y = c .. 100: the parallel loop's bounds depend on the channel */
    CU_ASSERT_EQUAL(collapsed_count(&h, C, Y, C, ir_load(f, h.in, rd, 0)), 0);
    pf_arena_free(&h.arena);
}

PF_TEST_SUITE(codegen_collapse, PF_TEST(test_blur_channels_and_tiles_in_one_loop),
              PF_TEST(test_collapse_changes_no_result),
              PF_TEST(test_only_independent_channels_collapse))
