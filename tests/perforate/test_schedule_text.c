/* Tests of the schedule text format: the paper's blur variant, defaults, canonical form and
 * equality of differently written schedules, version lines, files, and syntax errors with their
 * line numbers (docs/schedule.md). */
#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include "perforate/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses text, checks that printing gives `canonical`, and that the canonical text parses back
 * to an equal schedule printing the same text. */
static void check_canonical(const pf_program *p, const char *text, const char *canonical)
{
    pf_schedule s, t;
    pf_error err;
    if (pt_parse(p, text, &s, &err) != 0) {
        fprintf(stderr, "unexpected error: %s\n", err.msg);
        CU_FAIL_FATAL("schedule did not parse");
    }
    char *out = pt_print(p, &s);
    if (strcmp(out, canonical) != 0)
        fprintf(stderr, "got:\n%swant:\n%s", out, canonical);
    CU_ASSERT_STRING_EQUAL(out, canonical);
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, out, &t, &err), 0);
    CU_ASSERT(pf_schedule_equal(&s, &t));
    char *again = pt_print(p, &t);
    CU_ASSERT_STRING_EQUAL(again, out);
    free(again);
    free(out);
    pf_schedule_free(&t);
    pf_schedule_free(&s);
}

/* The paper's 5.6x variant (Section 7.6): stage1 = loop_temp, stage2 = loop_output. */
static void test_blur_paper_variant(void)
{
    pf_program *p = pt_load_app("blur");
    static const char text[] =
        "# perfora schedule 1\n"
        "# apps/blur.pf: the paper's 5.6x blur variant (Section 7.6)\n"
        "loop_temp    grid 4 1 1  reconstruct on-demand linear\n"
        "loop_output  grid 4 4 1  reconstruct store linear\n";
    check_canonical(p, text,
                    "# perfora schedule 1\n"
                    "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                    "loop_output grid 4 4 1 reconstruct store linear\n");
    pf_schedule s;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, text, &s, &err), 0);
    const pf_approx_gene *g = &s.approx[pf_program_find_loop(p, "loop_temp") - p->loops];
    CU_ASSERT_EQUAL(g->kind, PF_GENE_GRID);
    CU_ASSERT_EQUAL(g->n_spacing, 3);
    CU_ASSERT(g->spacing[0] == 4 && g->spacing[1] == 1 && g->spacing[2] == 1);
    CU_ASSERT_EQUAL(g->recon, PF_RECON_LINEAR);
    CU_ASSERT(g->on_demand);
    CU_ASSERT_EQUAL(g->line, 3);
    CU_ASSERT_STRING_EQUAL(s.file_name, "t.sched");
    pf_schedule_free(&s);
    pf_program_free(p);
}

static void test_defaults_spelled_out(void)
{
    pf_program *p = pt_load_app("blur");
    check_canonical(p, "loop_temp grid 2 2 1\nloop_output adaptive 3 0.25\n",
                    "# perfora schedule 1\n"
                    "loop_temp grid 2 2 1 reconstruct store linear\n"
                    "loop_output adaptive 3 0.25 reconstruct store gaussian-sv 0.9\n");
    check_canonical(p, "loop_output importance 0.5 0.015625 channels 1\n",
                    "# perfora schedule 1\n"
                    "loop_output importance 0.5 0.015625 channels 1 reconstruct store "
                    "gaussian-sv 0.73\n");
    check_canonical(p, "", "# perfora schedule 1\n");
    check_canonical(p, "# only a comment\n\n   \n", "# perfora schedule 1\n");
    pf_program_free(p);

    /* A serial stage's default is no reconstruction, and nothing is spelled out. */
    p = pt_load_app("bilateral_grid");
    check_canonical(p, "populate_b_grid_loop grid 2 2\n",
                    "# perfora schedule 1\npopulate_b_grid_loop grid 2 2\n");
    pf_program_free(p);
}

static void test_every_gene_form(void)
{
    pf_program *p = pt_load_app("median");
    check_canonical(p,
                    "median_x_loop random 0.25\nloop_pixels step 2\nmedian_y_loop first .5\n",
                    "# perfora schedule 1\n"
                    "loop_pixels step 2\n"
                    "median_y_loop first 0.5\n"
                    "median_x_loop random 0.25\n");
    check_canonical(p, "median_y_loop last 1\nloop_pixels channels 2\n",
                    "# perfora schedule 1\nloop_pixels channels 2\nmedian_y_loop last 1\n");
    check_canonical(p, "loop_pixels grid 2 2 1 reconstruct store gaussian 1.5\n",
                    "# perfora schedule 1\n"
                    "loop_pixels grid 2 2 1 reconstruct store gaussian 1.5\n");
    check_canonical(p, "loop_pixels grid 8 1 3 reconstruct store nearest\n",
                    "# perfora schedule 1\n"
                    "loop_pixels grid 8 1 3 reconstruct store nearest\n");
    check_canonical(p, "loop_pixels importance 0.1 0.02 reconstruct store gaussian 0.5\n",
                    "# perfora schedule 1\n"
                    "loop_pixels importance 0.1 0.02 reconstruct store gaussian 0.5\n");
    check_canonical(p, "loop_pixels adaptive 2 1 reconstruct store nearest\n",
                    "# perfora schedule 1\n"
                    "loop_pixels adaptive 2 1 reconstruct store nearest\n");
    pf_program_free(p);
}

/* Differently written texts of one schedule: equal, with one canonical text. */
static void test_equal_when_written_differently(void)
{
    pf_program *p = pt_load_app("blur");
    static const char *const same[] = {
        "loop_temp grid 4 1 1 reconstruct store linear\n"
        "loop_output importance 0.3 0.02 channels 1\n",
        /* order of lines, tabs, CRLF, comments, no final newline */
        "# perfora schedule 1 -- written by hand\r\n"
        "\tloop_output importance .3 2e-2 channels 1   # the vertical pass\r\n"
        "\n"
        "loop_temp\tgrid 04 +1 1 reconstruct store linear",
        /* clauses in the other order, the default spelled out, extra digits past six */
        "loop_output importance 0.3000000001 0.0200000 reconstruct store gaussian-sv 0.73 "
        "channels 1\n"
        "loop_temp grid 4 1 1 reconstruct store linear\n",
    };
    pf_schedule first;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, same[0], &first, &err), 0);
    char *want = pt_print(p, &first);
    for (size_t i = 1; i < sizeof same / sizeof same[0]; i++) {
        pf_schedule s;
        if (pt_parse(p, same[i], &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            CU_FAIL("did not parse");
            continue;
        }
        CU_ASSERT(pf_schedule_equal(&first, &s));
        char *got = pt_print(p, &s);
        CU_ASSERT_STRING_EQUAL(got, want);
        free(got);
        pf_schedule_free(&s);
    }
    /* ... and texts that differ in one value are not equal. */
    static const char *const differ[] = {
        "loop_temp grid 4 1 1 reconstruct store nearest\n"
        "loop_output importance 0.3 0.02 channels 1\n",
        "loop_temp grid 4 1 1 reconstruct store linear\n"
        "loop_output importance 0.300001 0.02 channels 1\n",
        "loop_temp grid 4 1 1 reconstruct store linear\n"
        "loop_output importance 0.3 0.02\n",
        "loop_temp grid 4 1 1 reconstruct on-demand linear\n",
    };
    for (size_t i = 0; i < sizeof differ / sizeof differ[0]; i++) {
        pf_schedule s;
        CU_ASSERT_EQUAL_FATAL(pt_parse(p, differ[i], &s, &err), 0);
        CU_ASSERT(!pf_schedule_equal(&first, &s));
        char *got = pt_print(p, &s);
        CU_ASSERT(strcmp(got, want) != 0);
        free(got);
        pf_schedule_free(&s);
    }
    free(want);
    pf_schedule_free(&first);
    pf_program_free(p);
}

/* Loop perforation that skips no iteration: `step 1`, `first 1`, `last 1`; not a grid of
 * spacings 1 (its fills), nor `random 1` (its tests), nor any perforation that skips. */
static void test_genes_that_skip_nothing(void)
{
    pf_approx_gene yes[] = { { .kind = PF_GENE_STEP, .step = 1 },
                             { .kind = PF_GENE_FIRST, .frac = 1 },
                             { .kind = PF_GENE_LAST, .frac = 1 } };
    pf_approx_gene no[] = { { .kind = PF_GENE_STEP, .step = 2 },
                            { .kind = PF_GENE_FIRST, .frac = 0.999 },
                            { .kind = PF_GENE_LAST, .frac = 0.5 },
                            { .kind = PF_GENE_RANDOM, .frac = 1 },
                            { .kind = PF_GENE_GRID, .n_spacing = 2, .spacing = { 1, 1 } },
                            { .kind = PF_GENE_EXACT } };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        CU_ASSERT(pf_gene_skips_nothing(&yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CU_ASSERT(!pf_gene_skips_nothing(&no[i]));
}

/* A full grid: spacing 1 on every variable and all channels; not one that thins a variable or
 * keeps one channel, nor another kind. */
static void test_full_grid(void)
{
    pf_approx_gene full = { .kind = PF_GENE_GRID, .n_spacing = 3, .spacing = { 1, 1, 1 } };
    pf_approx_gene no[] = { { .kind = PF_GENE_GRID, .n_spacing = 3, .spacing = { 1, 2, 1 } },
                            { .kind = PF_GENE_GRID, .n_spacing = 2, .spacing = { 1, 1 },
                              .channels = 1 },
                            { .kind = PF_GENE_STEP, .step = 1 } };
    CU_ASSERT(pf_gene_full_grid(&full));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CU_ASSERT(!pf_gene_full_grid(&no[i]));
}

/* Equality looks only at what the text holds: stray fields of a gene built in code do not
 * count, and values equal to six digits are equal. */
static void test_gene_equality_is_canonical(void)
{
    pf_approx_gene a = { .kind = PF_GENE_STEP, .step = 4 };
    pf_approx_gene b = a;
    b.frac = 0.7;
    b.recon = PF_RECON_GAUSSIAN;
    b.spacing[3] = 9;
    b.line = 12;
    CU_ASSERT(pf_gene_equal(&a, &b));
    pf_approx_gene c = { .kind = PF_GENE_FIRST, .frac = 0.1234564 };
    pf_approx_gene d = { .kind = PF_GENE_FIRST, .frac = 0.12345649 };
    pf_approx_gene e = { .kind = PF_GENE_FIRST, .frac = 0.1234566 };
    CU_ASSERT(pf_gene_equal(&c, &d));
    CU_ASSERT(!pf_gene_equal(&c, &e));
    pf_approx_gene f = { .kind = PF_GENE_GRID, .n_spacing = 2, .spacing = { 2, 2 },
                         .recon = PF_RECON_LINEAR, .sigma = 3.0 };
    pf_approx_gene g = f;
    g.sigma = 0.5;  /* linear has no sigma */
    CU_ASSERT(pf_gene_equal(&f, &g));
    g.on_demand = true;
    CU_ASSERT(!pf_gene_equal(&f, &g));
    CU_ASSERT_DOUBLE_EQUAL(pf_round6(0.1234567), 0.123457, 1e-12);
    CU_ASSERT_EQUAL(pf_round6(1.0), 1.0);
}

static void test_version_line(void)
{
    pf_program *p = pt_load_app("blur");
    pf_schedule s;
    pf_error err;
    CU_ASSERT_EQUAL(pt_parse(p, "# perfora schedule 1 - apps/blur.pf\nloop_temp step 2\n", &s,
                             &err), 0);
    pf_schedule_free(&s);
    CU_ASSERT_EQUAL(pt_parse(p, "  #perfora schedule 1\n", &s, &err), 0);
    pf_schedule_free(&s);
    CU_ASSERT_EQUAL(pt_parse(p, "\xef\xbb\xbf# perfora schedule 1\nloop_temp step 2\n", &s,
                             &err), 0);
    pf_schedule_free(&s);
    CU_ASSERT_EQUAL(pt_parse(p, "# perfora schedule 2\nloop_temp step 2\n", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.sched:1: unsupported schedule format version '2'"));
    CU_ASSERT_EQUAL(pt_parse(p, "# perfora schedule\n", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.sched:1: "));
    /* Only the first line is a version line; later ones are comments. */
    CU_ASSERT_EQUAL(pt_parse(p, "\n# perfora schedule 2\n", &s, &err), 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

static void test_exec_lines(void)
{
    pf_program *p = pt_load_app("blur");
    pf_schedule s;
    pf_error err;
    /* Written out of canonical order; printed canonically, after the stage's approximation. */
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "loop_output exec parallel vectorize 8 tile 64 16\n"
                                      "loop_temp exec vectorize 4 at loop_output unroll 2\n"
                                      "loop_temp grid 4 1 1 reconstruct on-demand linear\n",
                                   &s, &err), 0);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(p, &s, &sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb),
                           "# perfora schedule 1\n"
                           "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                           "loop_temp exec at loop_output vectorize 4 unroll 2\n"
                           "loop_output exec root tile 64 16 vectorize 8 parallel\n");
    pf_schedule t;
    CU_ASSERT_EQUAL(pt_parse(p, pf_sb_str(&sb), &t, &err), 0);
    CU_ASSERT(pf_schedule_equal(&s, &t));
    t.exec[1].vectorize = 16;
    CU_ASSERT(!pf_schedule_equal(&s, &t));
    pf_schedule_free(&t);
    pf_sb_free(&sb);
    pf_schedule_free(&s);
    static const struct { const char *text, *msg; } bad[] = {
        { "loop_temp exec tile 0\n", "t.sched:1: loop_temp: 'tile' takes one or two sizes" },
        { "loop_temp exec vectorize 3\n", "t.sched:1: loop_temp: 'vectorize' takes 4, 8 or 16" },
        { "loop_temp exec spin\n", "unknown execution directive 'spin'" },
        { "loop_temp exec at nowhere\n", "'at' needs the name of a consumer stage" },
        { "loop_temp exec at loop_output\n",
          "t.sched:1: loop_temp: 'at loop_output' needs loop_output to be tiled in two "
          "dimensions" },
        { "loop_output exec at loop_temp\n", "needs loop_output's image to be read by that "
                                              "stage only" },
        { "loop_temp exec root\nloop_temp exec root\n", "t.sched:2: loop_temp: 'loop_temp' "
                                                          "already has an exec line at line 1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CU_ASSERT_EQUAL(pt_parse(p, bad[i].text, &s, &err), -1);
        if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\n    got: %s\n    want: %s\n", err.msg, bad[i].msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
    }
    pf_program_free(p);
    /* Serial stages are not vectorized; 'parallel' asks for bands (pass_bands). */
    p = pt_load_app("bilateral_grid");
    CU_ASSERT_EQUAL(pt_parse(p, "populate_b_grid_loop exec vectorize 8\n", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "serial (scatter) stage cannot be vectorized"));
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "populate_b_grid_loop exec parallel\n", &s, &err), 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* `at C slide`: the word right after `at C`, printed there; equality sees it; every refusal
 * names the stage and says why. */
static void expect_refused(const pf_program *p, const char *text, const char *msg)
{
    pf_schedule s;
    pf_error err;
    CU_ASSERT_EQUAL(pt_parse(p, text, &s, &err), -1);
    if (!strstr(err.msg, msg))
        fprintf(stderr, "\n    got: %s\n    want: %s\n", err.msg, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
}

static void test_exec_slide_lines(void)
{
    pf_program *p = pt_load_app("blur");
    pf_schedule s, t;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "loop_output exec tile 256 64 parallel\n"
                                      "loop_temp exec vectorize 8 at loop_output slide\n",
                                   &s, &err), 0);
    CU_ASSERT(s.exec[0].slide && s.exec[0].at == 1);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(p, &s, &sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb), "# perfora schedule 1\n"
                                           "loop_temp exec at loop_output slide vectorize 8\n"
                                           "loop_output exec root tile 256 64 parallel\n");
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, pf_sb_str(&sb), &t, &err), 0);
    CU_ASSERT(pf_schedule_equal(&s, &t));
    t.exec[0].slide = false;
    CU_ASSERT(!pf_schedule_equal(&s, &t));
    pf_schedule_free(&t);
    /* the last compute level wins: `root` after `at C slide` drops the slide */
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "loop_temp exec at loop_output slide root\n", &t, &err), 0);
    CU_ASSERT(!t.exec[0].slide && t.exec[0].at == -1);
    pf_schedule_free(&t);
    pf_sb_free(&sb);
    pf_schedule_free(&s);
    expect_refused(p, "loop_temp exec slide at loop_output\nloop_output exec tile 64 64\n",
                   "t.sched:1: loop_temp: 'slide' goes right after 'at STAGE'");
    expect_refused(p, "loop_temp exec at loop_output tile 8 8 slide\n"
                      "loop_output exec tile 64 64\n", "'slide' goes right after 'at STAGE'");
    expect_refused(p, "loop_temp exec at loop_output slide\nloop_output exec parallel\n",
                   "loop_temp: 'at loop_output slide' needs loop_output tiled in two "
                   "dimensions, so that its row loop runs serially and in order inside each "
                   "tile; untiled and parallel, its row loop is the parallel loop");
    expect_refused(p, "loop_temp exec at loop_output slide\nloop_output exec tile 64\n",
                   "needs loop_output tiled in two dimensions");
    expect_refused(p, "loop_temp exec at loop_output slide\n", "needs loop_output tiled");
    expect_refused(p, "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
                      "loop_temp exec at loop_output slide\nloop_output exec tile 64 64\n",
                   "loop_temp: 'at loop_output slide' needs loop_temp exact");
    expect_refused(p, "loop_output exec at loop_temp slide\nloop_temp exec tile 8 8\n",
                   "needs every read of out in loop_temp at row y + a constant");
    pf_program_free(p);
    static const char src[] =
        "param int k = 2;\n"
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    image a[W, H] boundary mirror;\n    image b[W, H];\n    image c[W, H];\n"
        "    image d[W, H];\n    image e[W, H];\n"
        "    for each (x, y) of a as sa a[x, y] = in[x, y];\n"
        "    for each (x, y) of b as sb b[x, y] = a[x, y - 1] + in[x, y];\n"
        "    for each (x, y) of c as sc c[x, y] = b[x, 2 * y] + b[x, y + k];\n"
        "    for each (x, y) of d as sd d[x, y] = sum(c[x, y + j], j = -3 .. y);\n"
        "    for each (x, y) of e as se e[x, y] = d[x, y + 2000] + d[x, y];\n"
        "    for each (x, y) of out as so out[x, y] = e[x, y] + sum(e[x, j], j = y .. y + 4);\n"
        "}\n";
    p = pf_compile_string("slide.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    expect_refused(p, "sa exec at sb slide\nsb exec tile 8 8\n",
                   "sa: 'at sb slide' needs a's boundary clamp or constant (a mirror read");
    expect_refused(p, "sb exec at sc slide\nsc exec tile 8 8\n",
                   "sb: 'at sc slide' needs every read of b in sc at row y + a constant");
    expect_refused(p, "sc exec at sd slide\nsd exec tile 8 8\n",
                   "needs every read of c in sd at row y");
    expect_refused(p, "sd exec at se slide\nse exec tile 8 8\n",
                   "sd: 'at se slide' would keep 2001 rows of d (at most 1024)");
    expect_refused(p, "sc exec at sd slide\nsd exec tile 8 8 reorder y x xo yo\n",
                   "needs sd's x loop inside its row loop");
    /* a window that moves with y through a reduction's bounds is fine */
    CU_ASSERT_EQUAL(pt_parse(p, "se exec at so slide\nso exec tile 8 8\n", &s, &err), 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* `reorder` lists a stage's loops innermost first; canonically after the tiles; an order equal
 * to the default one prints nothing and equals no reorder. */
static void test_exec_reorder_text(void)
{
    pf_program *p = pt_load_app("blur");
    check_canonical(p, "loop_output exec vectorize 8 reorder x y c xo yo tile 128 64 parallel\n",
                    "# perfora schedule 1\n"
                    "loop_output exec root tile 128 64 reorder x y c xo yo vectorize 8 "
                    "parallel\n");
    check_canonical(p, "loop_output exec reorder y c x\n",
                    "# perfora schedule 1\nloop_output exec root reorder y c x\n");
    /* the default order: x, y, the tile loops, then further variables */
    check_canonical(p, "loop_output exec tile 64 16 reorder x y xo yo c vectorize 8\n",
                    "# perfora schedule 1\nloop_output exec root tile 64 16 vectorize 8\n");
    check_canonical(p, "loop_temp exec reorder x y c\n",
                    "# perfora schedule 1\nloop_temp exec root\n");
    pf_schedule s, t;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "loop_output exec tile 64 16 reorder x y c xo yo\n", &s,
                                   &err), 0);
    CU_ASSERT_EQUAL_FATAL(pt_parse(p, "loop_output exec tile 64 16\n", &t, &err), 0);
    CU_ASSERT(!pf_schedule_equal(&s, &t));
    /* a gene built in code with the default order spelled out equals one without */
    static const int def[] = { 0, 1, PF_EXEC_TILE_LOOP(0), PF_EXEC_TILE_LOOP(1), 2 };
    t.exec[1].n_order = 5;
    memcpy(t.exec[1].order, def, sizeof def);
    CU_ASSERT(pf_exec_equal(&t.exec[1], &(pf_exec_gene){ .set = true, .at = -1,
                                                         .tile = { 64, 16 } }));
    char *text = pt_print(p, &t);
    CU_ASSERT_STRING_EQUAL(text, "# perfora schedule 1\nloop_output exec root tile 64 16\n");
    free(text);
    t.exec[1].order[2] = 2;  /* x y c xo yo */
    t.exec[1].order[4] = PF_EXEC_TILE_LOOP(0);
    t.exec[1].order[3] = PF_EXEC_TILE_LOOP(1);
    CU_ASSERT(!pf_schedule_equal(&s, &t));
    t.exec[1].order[3] = PF_EXEC_TILE_LOOP(0);
    t.exec[1].order[4] = PF_EXEC_TILE_LOOP(1);
    CU_ASSERT(pf_schedule_equal(&s, &t));
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &t, &err), 0);
    pf_schedule_free(&t);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* Every refusal of `reorder` names the stage and why. */
static void test_exec_reorder_refusals(void)
{
    static const struct { const char *app, *text, *msg; } bad[] = {
        { "blur", "loop_output exec reorder\n", "'reorder' takes the stage's loops" },
        { "blur", "loop_output exec reorder x y z\n",
          "t.sched:1: loop_output: 'reorder': 'z' is not a loop of loop_output (its loops, "
          "innermost first: x y c)" },
        { "blur", "loop_output exec reorder x y c xo\n", "'xo' is not a loop of loop_output" },
        { "blur", "loop_output exec reorder x y\n",
          "t.sched:1: loop_output: 'reorder' must list each of the stage's loops exactly once" },
        { "blur", "loop_output exec reorder x x c\n", "must list each of the stage's loops" },
        { "blur", "loop_output exec tile 8 8 reorder x y c xo yo c\n",
          "must list each of the stage's loops exactly once, innermost first (x y xo yo c)" },
        { "blur", "loop_output exec tile 8 8 reorder x y c xo yo c x\n", "lists 7 loops" },
        { "blur", "loop_output exec tile 8 8 reorder xo x y c yo\n",
          "loop_output: 'reorder' puts tile loop xo inside x" },
        { "blur", "loop_output exec tile 8 8 reorder x yo y xo c\n", "puts tile loop yo inside y" },
        { "blur", "loop_output exec vectorize 8 reorder y x c\n",
          "loop_output: 'reorder' with 'vectorize' needs x innermost" },
        { "blur", "loop_temp exec at loop_output\nloop_output exec tile 8 8 reorder x y c xo yo\n",
          "loop_temp: 'at loop_output' needs loop_output's reorder to keep its tile loops outside "
          "its loops over x and y, and its loops over further variables outside its tile loops" },
        { "blur", "loop_temp exec at loop_output\nloop_output exec tile 8 8 reorder x xo y yo c\n",
          "needs loop_output's reorder to keep its tile loops outside" },
        { "bilateral_grid", "populate_b_grid_loop exec reorder y x\n",
          "populate_b_grid_loop: 'reorder' does not apply to a serial (scatter) stage" },
        { "unsharp_mask", "loop_temp exec inline reorder y x c\n",
          "an inlined stage has no loops to reorder" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pf_program *p = pt_load_app(bad[i].app);
        pf_schedule s;
        pf_error err;
        CU_ASSERT_EQUAL(pt_parse(p, bad[i].text, &s, &err), -1);
        if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\n    got: %s\n    want: %s\n", err.msg, bad[i].msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
        pf_program_free(p);
    }
    /* legal: with `at`, the tile loops in either order (the producers run at the inner one) */
    pf_program *p = pt_load_app("blur");
    pf_schedule s;
    pf_error err;
    CU_ASSERT_EQUAL(pt_parse(p, "loop_temp exec at loop_output\n"
                                "loop_output exec tile 8 8 reorder x y yo xo c\n", &s, &err), 0);
    pf_schedule_free(&s);
    /* a tile loop `xo` that a stage variable's name hides cannot be listed */
    static const char src[] =
        "pipeline p(image in[W, H]) -> (image out[W, H]) {\n"
        "    for each (x, xo) of out as so out[x, xo] = in[x, xo];\n}\n";
    pf_program *q = pf_compile_string("clash.pf", src, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(pt_parse(q, "so exec tile 4 4 reorder x xo xoo\n", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "so: 'reorder' cannot name the tile loop of x: xo is "
                                           "a stage variable"));
    CU_ASSERT_EQUAL(pt_parse(q, "so exec reorder xo x\n", &s, &err), 0);  /* untiled */
    pf_schedule_free(&s);
    pf_program_free(q);
    /* the default order is legal on a serial stage (it is no reorder) */
    pf_program_free(p);
    p = pt_load_app("bilateral_grid");
    CU_ASSERT_EQUAL(pt_parse(p, "populate_b_grid_loop exec reorder x y\n", &s, &err), 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

static void test_load_and_from_string(void)
{
    pf_program *p = pt_load_app("blur");
    pf_error err;
    const char *path = pf_test_tmp("v.sched");
    static const char text[] = "loop_output grid 2 2 1\n";
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    pf_schedule s;
    CU_ASSERT_EQUAL_FATAL(pf_schedule_load(p, path, &s, &err), 0);
    CU_ASSERT_STRING_EQUAL(s.file_name, path);
    pf_schedule *t = pf_schedule_from_string(p, text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(pf_schedule_equal(&s, t));
    pf_schedule_delete(t);
    pf_schedule_free(&s);

    /* Errors name the file and line. */
    f = fopen(path, "w");
    fputs("\n\nloop_output grid 2 2\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(pf_schedule_load(p, path, &s, &err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:3: loop_output: the grid gives 2 spacings", path);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    CU_ASSERT_PTR_NULL(pf_schedule_from_string(p, "nope step 2", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "<schedule>:1: 'nope'"));

    f = fopen(path, "wb");
    fwrite("loop_temp step 2\n\0x", 1, 19, f);
    fclose(f);
    CU_ASSERT_EQUAL(pf_schedule_load(p, path, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NUL"));
    CU_ASSERT_EQUAL(pf_schedule_load(p, pf_test_tmp("missing.sched"), &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.sched"));
    pf_program_free(p);
}

/* Syntax errors: each names its line (and the word where there is one). */
typedef struct bad_text {
    const char *text;
    const char *want;  /* a substring of the message */
} bad_text;

static const bad_text syntax_errors[] = {
    { "loop_tmp grid 2 2 1\n",
      "t.sched:1: 'loop_tmp' is not a stage or named loop of " },
    { "loop_tmp grid 2 2 1\n", "(did you mean 'loop_temp'?)" },
    { "\n\nzzzzzzzzzz step 2\n", "t.sched:3: 'zzzzzzzzzz' is not a stage or named loop" },
    { "loop_temp\n", "t.sched:1: loop_temp: missing gene after the loop name" },
    { "loop_temp gird 2 2 1\n", "t.sched:1: loop_temp: unknown gene 'gird'" },
    { "loop_temp grid\n", "t.sched:1: loop_temp: missing grid spacings" },
    { "loop_temp grid 2 x 1\n", "t.sched:1: loop_temp: a grid spacing must be an integer, "
                                "got 'x'" },
    { "loop_temp grid 2.5 1 1\n", "a grid spacing must be an integer, got '2.5'" },
    { "loop_temp adaptive 3\n", "t.sched:1: loop_temp: missing F (adaptive K F)" },
    { "loop_temp adaptive 0.5 0.5\n", "K must be an integer, got '0.5'" },
    { "loop_temp importance 0.5\n", "missing SIGMA (importance F SIGMA)" },
    { "loop_temp importance 0.5 nan\n", "SIGMA must be a decimal number, got 'nan'" },
    { "loop_temp importance 0x1p-2 0.5\n", "F must be a decimal number, got '0x1p-2'" },
    { "loop_temp first 1e\n", "F must be a decimal number, got '1e'" },
    { "loop_temp step\n", "missing N (step N)" },
    { "loop_temp step 2 3\n", "unexpected '3' after the step gene" },
    { "loop_temp channels 1 reconstruct store linear\n",
      "reconstruction needs a sampling gene (grid, adaptive or importance) before it" },
    { "loop_temp grid 2 2 1 reconstruct\n",
      "expected store or on-demand after 'reconstruct', got end of line" },
    { "loop_temp grid 2 2 1 reconstruct linear\n",
      "expected store or on-demand after 'reconstruct', got 'linear'" },
    { "loop_temp grid 2 2 1 reconstruct store\n", "missing reconstruction method" },
    { "loop_temp grid 2 2 1 reconstruct store cubic\n",
      "unknown reconstruction method 'cubic'" },
    { "loop_temp grid 2 2 1 reconstruct store gaussian\n", "missing SIGMA (gaussian SIGMA)" },
    { "loop_temp grid 2 2 1 reconstruct store linear reconstruct store nearest\n",
      "'reconstruct' is given twice" },
    { "loop_temp grid 2 2 1 channels 1 channels 2\n", "'channels' is given twice" },
    { "loop_temp grid 2 2 1 channels\n", "missing C (channels C)" },
    { "loop_temp grid 2 2 1 reconstruct store linear please\n",
      "unexpected 'please' after the grid gene (expected channels or reconstruct)" },
    { "loop_temp step 2\nloop_output step 2\nloop_temp step 3\n",
      "t.sched:3: loop_temp: 'loop_temp' already has an approximation at line 1" },
    { "loop_temp grid 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n",
      "t.sched:1: too many words on one line" },
};

static void test_syntax_errors(void)
{
    pf_program *p = pt_load_app("blur");
    for (size_t i = 0; i < sizeof syntax_errors / sizeof syntax_errors[0]; i++) {
        pf_schedule s;
        pf_error err;
        int rc = pt_parse(p, syntax_errors[i].text, &s, &err);
        CU_ASSERT_EQUAL(rc, -1);
        if (rc == 0) {
            fprintf(stderr, "accepted: %s", syntax_errors[i].text);
            pf_schedule_free(&s);
        } else if (!strstr(err.msg, syntax_errors[i].want)) {
            fprintf(stderr, "for: %swant: %s\n got: %s\n", syntax_errors[i].text,
                    syntax_errors[i].want, err.msg);
            CU_FAIL("wrong message");
        }
    }
    pf_program_free(p);
}

PF_TEST_SUITE(schedule_text,
              PF_TEST(test_blur_paper_variant), PF_TEST(test_defaults_spelled_out),
              PF_TEST(test_every_gene_form), PF_TEST(test_equal_when_written_differently),
              PF_TEST(test_gene_equality_is_canonical), PF_TEST(test_genes_that_skip_nothing),
              PF_TEST(test_full_grid),
              PF_TEST(test_version_line),
              PF_TEST(test_exec_lines), PF_TEST(test_exec_slide_lines),
              PF_TEST(test_exec_reorder_text), PF_TEST(test_exec_reorder_refusals),
              PF_TEST(test_load_and_from_string),
              PF_TEST(test_syntax_errors))
