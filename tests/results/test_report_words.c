/* Genes in words: each kind of gene read from a real app's parsed schedule, as the report's
 * table prints it. */
#include "lang/lang.h"
#include "results/report_internal.h"
#include "tests/harness/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pf_program *load(const char *app)
{
    char rel[64];
    snprintf(rel, sizeof rel, "apps/%s.pf", app);
    pf_program *p = pf_load_program(pf_test_src(rel), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

static void expect(const pf_program *prog, const char *genes, const char *words)
{
    char text[512];
    snprintf(text, sizeof text, "# perfora schedule 1\n%s", genes);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_report_genes_text(prog, text, &sb);
    if (strcmp(pf_sb_str(&sb), words) != 0)
        fprintf(stderr, "\n%s\n  gave: %s\n  want: %s\n", genes, pf_sb_str(&sb), words);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), words);
    pf_sb_free(&sb);
}

static void test_grid_and_reconstruction(void)
{
    pf_program *p = load("blur");
    expect(p, "loop_temp grid 1 4 1 reconstruct on-demand linear\n",
           "stage loop_temp: all columns, every 4th row, reconstructed on demand, linear");
    expect(p, "loop_output grid 4 2 1 reconstruct store gaussian 0.3\n",
           "stage loop_output: every 4th column, every 2nd row, reconstructed after the stage, "
           "Gaussian (sigma 0.3)");
    expect(p, "loop_output grid 1 3 1 reconstruct on-demand nearest\n",
           "stage loop_output: all columns, every 3rd row, reconstructed on demand (done after "
           "the stage: a pipeline output is whole), nearest");
    expect(p, "loop_temp grid 2 2 1 channels 1\n",
           "stage loop_temp: every 2nd column, every 2nd row, only channel 0 computed, the "
           "others copied from in, reconstructed after the stage, linear");
    pf_program_free(p);
}

static void test_other_samplings(void)
{
    pf_program *p = load("blur");
    expect(p, "loop_temp importance 0.3 0.02\n",
           "stage loop_temp: importance: 30% of the pixels, denser where in has detail (map "
           "blurred by 0.02 of the height), reconstructed after the stage, spatially varying "
           "Gaussian (sigma 0.73)");
    expect(p, "loop_temp adaptive 4 0.25\n",
           "stage loop_temp: adaptive: a coarse sample every 4th pixel, refined where they "
           "differ most to 25% of the pixels, reconstructed after the stage, spatially varying "
           "Gaussian (sigma 0.9)");
    expect(p, "loop_temp step 2\n",
           "stage loop_temp: every 2nd row, the others not computed (loop perforation)");
    expect(p, "loop_output first 0.5\n",
           "stage loop_output: the first 50% of the rows, the others not computed (loop "
           "perforation)");
    pf_program_free(p);
    p = load("artistic_blur");
    expect(p, "loop_u random 0.4\n", "loop loop_u (in stage loop_blur): each iteration "
           "kept with probability 0.4 (hashed)");
    pf_program_free(p);
}

static void test_execution_and_exact(void)
{
    pf_program *p = load("blur");
    expect(p, "", "the exact program, every stage with the default execution schedule");
    expect(p, "loop_output exec tile 64 16 vectorize 8 parallel\n",
           "stage loop_output: exact; execution: in tiles of 64 x 16, as 8-lane vectors, in "
           "parallel");
    expect(p, "loop_temp grid 1 2 1 reconstruct on-demand linear\n"
              "loop_temp exec at loop_output\nloop_output exec tile 32 32\n",
           "stage loop_temp: all columns, every 2nd row, reconstructed on demand, linear; "
           "execution: computed inside the tiles of loop_output (its halo recomputed)\n"
           "stage loop_output: exact; execution: in tiles of 32 x 32");
    expect(p, "loop_temp exec at loop_output slide\nloop_output exec tile 256 32 parallel\n",
           "stage loop_temp: exact; execution: computed row by row inside the tiles of "
           "loop_output (a sliding window)\n"
           "stage loop_output: exact; execution: in tiles of 256 x 32, in parallel");
    expect(p, "loop_output exec tile 128 64 reorder x y c xo yo unroll 2\n",
           "stage loop_output: exact; execution: in tiles of 128 x 64, loops (innermost "
           "first) x y c xo yo, inner loop unrolled 2 times");
    pf_strbuf sb;  /* a schedule this program cannot read: the parser's message */
    pf_sb_init(&sb);
    pf_report_genes_text(p, "# perfora schedule 1\nnosuch grid 2\n", &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "cannot read the schedule"));
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "'nosuch'"));
    pf_sb_free(&sb);
    pf_program_free(p);
}

static void test_html_is_escaped(void)
{
    pf_program *p = load("blur");
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_report_genes_html(p, "# perfora schedule 1\nloop_temp grid 1 4 1 <x>\n", &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(pf_sb_str(&sb), "&lt;x&gt;"));
    CU_ASSERT_PTR_NULL(strstr(pf_sb_str(&sb), "<x>"));
    pf_sb_free(&sb);
    pf_program_free(p);
}

PF_TEST_SUITE(results_words, PF_TEST(test_grid_and_reconstruction),
              PF_TEST(test_other_samplings), PF_TEST(test_execution_and_exact),
              PF_TEST(test_html_is_escaped))
