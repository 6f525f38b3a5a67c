/* Tests of schedule validation: a table of schedules that do not fit their program, each with
 * the line and message it must be refused with; the same rules through pf_schedule_validate
 * for schedules built in code; and what pf_perforable_info reports per loop. */
#include "tests/harness/harness.h"
#include "tests/perforate/perf_test_util.h"

#include "base/strbuf.h"
#include "perforate/default_schedule.h"
#include "perforate/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A program with the corner cases the apps lack: an image with two writers, a 1-D stage, a
 * stage reading no image, a 3-D stage whose reference image is 2-D. */
static const char lab_src[] =
    "pipeline lab(image in[W, H, 3], image line[N]) -> (image out[W, H, 3], image o1[N]) {\n"
    "    image a[W, H, 3];\n"
    "    image g[W, H];\n"
    "    image v[W, H, 3];\n"
    "    image k[4, 4];\n"
    "    for each (x, y, c) of a as first_pass a[x, y, c] = in[x, y, c];\n"
    "    for each (x, y, c) of a as second_pass a[x, y, c] = a[x, y, c] * 2.0;\n"
    "    for each (i) of o1 as one_d o1[i] = line[i];\n"
    "    for each (x, y) of g as gray g[x, y] = in[x, y, 0];\n"
    "    for each (x, y) of k as fill k[x, y] = 1.0;\n"
    "    for each (x, y, c) of v as from_gray v[x, y, c] = g[x, y] + k[0, 0];\n"
    "    for each (x, y, c) of out as final {\n"
    "        float s = 0.0;\n"
    "        for (t) of 0 .. 2 as taps s += a[x, y, t] + v[x, y, c];\n"
    "        out[x, y, c] = s;\n"
    "    }\n"
    "}\n";

typedef struct bad_schedule {
    const char *app;   /* apps/APP.pf, or "lab" for lab_src */
    const char *text;
    const char *want;  /* a substring of the message, starting with "t.sched:LINE: " */
} bad_schedule;

static const bad_schedule validation_errors[] = {
    /* a reference image stored on demand (the rule spans two genes) */
    { "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\nloop_output importance 0.3 0.02\n",
      "t.sched:2: loop_output: its reference image 'temp' is stored downsampled" },
    { "blur", "loop_temp grid 4 1 1 reconstruct on-demand linear\n\nloop_output channels 1\n",
      "t.sched:3: loop_output: its reference image 'temp' is stored downsampled" },
    /* loop kinds */
    { "median", "loop_pixels step 2\nmedian_x_loop grid 2\n",
      "t.sched:2: median_x_loop: 'median_x_loop' is a for loop: it takes step, first, last or "
      "random, not grid" },
    { "median", "median_y_loop channels 1\n", "t.sched:1: median_y_loop: 'median_y_loop' is a "
      "for loop" },
    { "median", "median_y_loop importance 0.5 0.1\n", "is a for loop" },
    /* grid spacings */
    { "blur", "# v\nloop_output grid 4 4\n",
      "t.sched:2: loop_output: the grid gives 2 spacings but the stage has 3 variables "
      "(x, y, c)" },
    { "blur", "loop_output grid 1 1 1 1 1\n", "the grid gives 5 spacings but the stage has 3" },
    { "blur", "loop_output grid 4 0 1\n",
      "t.sched:1: loop_output: grid spacing 0 of variable y is out of range (1..64)" },
    { "blur", "loop_output grid 4 65 1\n", "grid spacing 65 of variable y is out of range" },
    { "blur", "loop_output grid -4 1 1\n", "grid spacing -4 of variable x is out of range" },
    /* a number past the int range is reported as written (issue 27: "grid spacing 2147483647") */
    { "blur", "loop_output grid 99999999999999999999 1 1\n",
      "t.sched:1: loop_output: a grid spacing 99999999999999999999 is out of range (1..64" },
    { "blur", "loop_temp step -99999999999\n", "N -99999999999 is out of range (1..64" },
    /* adaptive, importance ranges */
    { "blur", "loop_temp adaptive 1 0.5\n", "t.sched:1: loop_temp: adaptive K 1 is out of "
      "range (2..16)" },
    { "blur", "loop_temp adaptive 17 0.5\n", "adaptive K 17 is out of range" },
    { "blur", "loop_temp adaptive 2 0\n", "adaptive fraction 0 is out of range (0, 1]" },
    { "blur", "loop_temp adaptive 2 1.5\n", "adaptive fraction 1.5 is out of range" },
    { "blur", "loop_temp importance 0 0.1\n", "importance fraction 0 is out of range" },
    { "blur", "loop_temp importance -0.5 0.1\n", "importance fraction -0.5 is out of range" },
    { "blur", "loop_temp importance 0.5 1.01\n", "importance sigma 1.01 is out of range" },
    { "blur", "loop_temp importance 0.5 1e-60\n", "importance sigma 1e-60 is out of range" },
    { "blur", "loop_temp importance 0.5 1e999\n", "importance sigma inf is out of range" },
    /* loop perforation ranges */
    { "median", "median_x_loop step 0\n", "t.sched:1: median_x_loop: step 0 is out of range "
      "(1..64)" },
    { "median", "median_x_loop step 65\n", "step 65 is out of range" },
    { "median", "median_x_loop first 0\n", "first 0 is out of range (a fraction in (0, 1])" },
    { "median", "median_x_loop last 1.00001\n", "last 1.00001 is out of range" },
    { "median", "median_x_loop random 2\n", "random 2 is out of range" },
    { "blur", "loop_temp step 100\n", "t.sched:1: loop_temp: step 100 is out of range" },
    /* channels */
    { "blur", "loop_temp channels 0\n", "t.sched:1: loop_temp: channels 0 is out of range "
      "(1..64)" },
    { "blur", "loop_temp grid 2 2 1 channels 65\n", "channels 65 is out of range" },
    { "bilateral_filter", "loop_pixels channels 1\n",
      "t.sched:1: loop_pixels: channel subsampling needs the stage's last variable to run over "
      "the last dimension of a 3-D image ('loop_pixels' iterates 2 of the 3 dimensions of "
      "'out')" },
    { "demosaic", "loop_gx grid 2 2 channels 1\n", "iterates 2 of the 2 dimensions" },
    { "bilateral_grid", "blur_y_loop channels 1\n", "iterates 4 of the 4 dimensions" },
    { "lab", "from_gray channels 1\n",
      "t.sched:1: from_gray: channel subsampling copies from the reference image 'g', which "
      "has 2 dimensions, not 3 like 'v'" },
    /* reconstruction rules */
    { "blur", "loop_temp adaptive 3 0.5 reconstruct store linear\n",
      "t.sched:1: loop_temp: linear reconstruction needs grid sampling, not adaptive" },
    { "blur", "loop_temp importance 0.5 0.1 reconstruct store linear\n",
      "linear reconstruction needs grid sampling, not importance" },
    { "blur", "loop_temp importance 0.5 0.1 reconstruct on-demand nearest\n",
      "t.sched:1: loop_temp: on-demand reconstruction needs grid sampling, not importance" },
    { "blur", "loop_temp adaptive 2 0.5 reconstruct on-demand nearest\n",
      "on-demand reconstruction needs grid sampling, not adaptive" },
    { "blur", "loop_temp grid 4 1 1 reconstruct on-demand gaussian 1\n",
      "on-demand reconstruction needs linear or nearest, not gaussian" },
    { "blur", "loop_temp grid 4 1 1 reconstruct on-demand gaussian-sv 1\n",
      "on-demand reconstruction needs linear or nearest, not gaussian-sv" },
    { "blur", "loop_temp grid 4 1 2 reconstruct store gaussian 1\n",
      "t.sched:1: loop_temp: gaussian reconstruction of a grid needs spacing 1 beyond the first "
      "two variables (variable c has spacing 2)" },
    { "bilateral_grid", "blur_y_loop grid 2 2 1 2 reconstruct store gaussian-sv 1\n",
      "gaussian-sv reconstruction of a grid needs spacing 1 beyond the first two variables "
      "(variable i has spacing 2)" },
    { "blur", "loop_temp grid 4 1 1 reconstruct store gaussian 0\n",
      "reconstruction sigma 0 is out of range (0, 16]" },
    { "blur", "loop_temp grid 4 1 1 reconstruct store gaussian 16.5\n",
      "reconstruction sigma 16.5 is out of range" },
    { "lab", "second_pass grid 2 2 1 reconstruct on-demand linear\n",
      "t.sched:1: second_pass: on-demand reconstruction needs 'a' to have one writer stage, "
      "and 2 stages write it" },
    { "lab", "first_pass grid 2 2 1 reconstruct on-demand nearest\n",
      "and 2 stages write it" },
    /* stage variables, reference images */
    { "lab", "one_d adaptive 2 0.5\n", "t.sched:1: one_d: adaptive sampling needs a stage with "
      "at least 2 variables, and 'one_d' has 1" },
    { "lab", "one_d importance 0.5 0.1\n", "importance sampling needs a stage with at least 2 "
      "variables" },
    { "lab", "fill importance 0.5 0.1\n", "t.sched:1: fill: importance sampling needs a "
      "reference image, and 'fill' reads no image with at least 2 dimensions" },
    { "bilateral_filter", "loop_kernel importance 0.5 0.1\n", "importance sampling needs a "
      "reference image" },
    { "lab", "one_d grid 2 2\n", "the grid gives 2 spacings but the stage has 1 variable (i)" },
    /* serial (scatter) stages */
    { "bilateral_grid", "populate_b_grid_loop adaptive 2 0.5\n",
      "t.sched:1: populate_b_grid_loop: 'populate_b_grid_loop' is a serial (scatter) stage: it "
      "takes grid, importance, step, first, last or random, not adaptive" },
    { "bilateral_grid", "populate_b_grid_loop channels 1\n", "is a serial (scatter) stage" },
    { "bilateral_grid", "populate_b_grid_loop grid 2 2 reconstruct store nearest\n",
      "'populate_b_grid_loop' is a serial (scatter) stage: it cannot be reconstructed" },
    { "bilateral_grid", "populate_b_grid_loop importance 0.5 0.1 reconstruct store nearest\n",
      "it cannot be reconstructed" },
    { "bilateral_grid", "populate_b_grid_loop grid 2 2 channels 1\n",
      "'populate_b_grid_loop' is a serial (scatter) stage: it cannot subsample channels" },
    { "bilateral_grid", "populate_b_grid_loop grid 2 2 reconstruct on-demand linear\n",
      "it cannot be reconstructed" },
};

static pf_program *load(const char *app)
{
    if (strcmp(app, "lab") == 0)
        return pt_compile("lab.pf", lab_src);
    return pt_load_app(app);
}

static void test_validation_errors(void)
{
    for (size_t i = 0; i < sizeof validation_errors / sizeof validation_errors[0]; i++) {
        const bad_schedule *b = &validation_errors[i];
        pf_program *p = load(b->app);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        pf_schedule s;
        pf_error err;
        int rc = pt_parse(p, b->text, &s, &err);
        CU_ASSERT_EQUAL(rc, -1);
        if (rc == 0) {
            fprintf(stderr, "accepted (%s): %s", b->app, b->text);
            pf_schedule_free(&s);
        } else if (!strstr(err.msg, b->want)) {
            fprintf(stderr, "for (%s): %swant: %s\n got: %s\n", b->app, b->text, b->want,
                    err.msg);
            CU_FAIL("wrong message");
        }
        pf_program_free(p);
    }
}

/* The lab program's legal corner cases parse. */
static void test_lab_accepts(void)
{
    pf_program *p = pt_compile("lab.pf", lab_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_schedule s;
    pf_error err;
    static const char text[] =
        "first_pass grid 2 2 1 reconstruct store linear\n"
        "one_d grid 4\n"
        "gray importance 0.5 0.1\n"
        "from_gray grid 2 2 3 reconstruct store nearest\n"
        "final grid 2 2 1 channels 1 reconstruct on-demand linear\n"
        "taps random 0.5\n";
    int rc = pt_parse(p, text, &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    pf_schedule_free(&s);
    pf_program_free(p);
}

/* Schedules built in code go through the same rules; without a line the message has no
 * location but still names the loop. */
static void test_validate_built_in_code(void)
{
    pf_program *p = pt_load_app("blur");
    int temp = (int)(pf_program_find_loop(p, "loop_temp") - p->loops);
    pf_schedule s;
    pf_error err;
    pf_schedule_init(&s, p);
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), 0);
    pf_approx_gene *g = &s.approx[temp];
    g->kind = PF_GENE_GRID;
    g->n_spacing = 3;
    g->spacing[0] = g->spacing[1] = g->spacing[2] = 2;
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, "loop_temp: grid sampling needs a reconstruction "
                           "(reconstruct store|on-demand METHOD)");
    pf_gene_set_default_recon(p, temp, g);
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), 0);
    g->frac = 0.123456789;  /* ignored by grid */
    g->frac = -1;
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), 0);
    g->line = 7;
    g->spacing[0] = 100;
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, "<schedule>:7: loop_temp: grid spacing 100 of variable x "
                           "is out of range (1..64)");
    g->spacing[0] = 2;
    g->kind = (pf_gene_kind)99;
    CU_ASSERT_EQUAL(pf_gene_validate(p, temp, g, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown gene kind 99"));
    g->kind = PF_GENE_GRID;
    g->recon = (pf_recon_kind)42;
    CU_ASSERT_EQUAL(pf_gene_validate(p, temp, g, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown reconstruction 42"));
    CU_ASSERT_EQUAL(pf_gene_validate(p, -1, g, &err), -1);
    CU_ASSERT_EQUAL(pf_gene_validate(p, p->n_loops, g, &err), -1);
    pf_schedule_reset(&s);
    s.exec[0].set = true;
    s.exec[0].vectorize = 5;
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "vector width 5"));
    pf_schedule_free(&s);

    /* A schedule of another program is refused. */
    pf_program *q = pt_load_app("median");
    pf_schedule_init(&s, q);
    CU_ASSERT_EQUAL(pf_schedule_validate(p, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "made for another program"));
    pf_schedule_free(&s);
    pf_program_free(q);
    pf_program_free(p);
}

static const pf_perforable *find_info(const pf_program *p, pf_perforable *buf, const char *n)
{
    const pf_loop_info *li = pf_program_find_loop(p, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(li);
    pf_perforable_info(p, (int)(li - p->loops), buf);
    return buf;
}

#define BIT(k) (1u << (k))

static void test_perforable_info(void)
{
    pf_perforable b;
    pf_program *p = pt_load_app("blur");
    const pf_perforable *i = find_info(p, &b, "loop_temp");
    CU_ASSERT_EQUAL(i->kind, PF_PERFORABLE_STAGE);
    CU_ASSERT_EQUAL(i->n_vars, 3);
    CU_ASSERT_EQUAL(i->genes, (1u << PF_GENE_KIND_COUNT) - 1);
    CU_ASSERT(i->channels && i->on_demand && !i->output);
    CU_ASSERT_STRING_EQUAL(i->ref->name, "in");
    i = find_info(p, &b, "loop_output");
    CU_ASSERT(i->on_demand && i->output);
    CU_ASSERT_STRING_EQUAL(i->ref->name, "temp");
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_perforable_describe(p, &sb);
    CU_ASSERT_STRING_EQUAL(pf_sb_str(&sb),
                           "  loop_temp  stage (x, y, c): grid adaptive importance channels step "
                           "first last random; on-demand; per-channel c; reference in\n"
                           "  loop_output  stage (x, y, c): grid adaptive importance channels "
                           "step first last random; on-demand (runs as store: output); "
                           "per-channel c; reference temp\n");
    pf_sb_free(&sb);
    pf_program_free(p);

    p = pt_load_app("bilateral_grid");
    i = find_info(p, &b, "populate_b_grid_loop");
    CU_ASSERT_EQUAL(i->kind, PF_PERFORABLE_SERIAL_STAGE);
    CU_ASSERT_EQUAL(i->genes, BIT(PF_GENE_EXACT) | BIT(PF_GENE_GRID) | BIT(PF_GENE_IMPORTANCE) |
                                  BIT(PF_GENE_STEP) | BIT(PF_GENE_FIRST) | BIT(PF_GENE_LAST) |
                                  BIT(PF_GENE_RANDOM));
    CU_ASSERT(!i->channels && !i->on_demand);
    /* The splat iterates yuv and reads it without writing it: yuv is its reference. */
    CU_ASSERT_STRING_EQUAL(i->ref->name, "yuv");
    i = find_info(p, &b, "blur_y_loop");
    CU_ASSERT(!(i->genes & BIT(PF_GENE_CHANNELS)));
    CU_ASSERT_EQUAL(i->n_vars, 4);
    pf_program_free(p);

    p = pt_load_app("median");
    i = find_info(p, &b, "median_x_loop");
    CU_ASSERT_EQUAL(i->kind, PF_PERFORABLE_FOR);
    CU_ASSERT_EQUAL(i->n_vars, 0);
    CU_ASSERT_EQUAL(i->genes, BIT(PF_GENE_EXACT) | BIT(PF_GENE_STEP) | BIT(PF_GENE_FIRST) |
                                  BIT(PF_GENE_LAST) | BIT(PF_GENE_RANDOM));
    pf_program_free(p);

    p = pt_load_app("bilateral_filter");
    i = find_info(p, &b, "loop_kernel");
    CU_ASSERT_PTR_NULL(i->ref);
    CU_ASSERT(!(i->genes & BIT(PF_GENE_IMPORTANCE)));
    CU_ASSERT(i->genes & BIT(PF_GENE_ADAPTIVE));
    pf_program_free(p);
}

/* The capability bits agree with validation: for every loop of every app, a representative gene
 * of each kind validates exactly when its bit is set. */
static void test_info_agrees_with_validation(void)
{
    for (int a = 0; pt_apps[a]; a++) {
        pf_program *p = pt_load_app(pt_apps[a]);
        for (int l = 0; l < p->n_loops; l++) {
            pf_perforable info;
            pf_perforable_info(p, l, &info);
            for (int k = 0; k < PF_GENE_KIND_COUNT; k++) {
                pf_approx_gene g;
                pt_sample_gene(p, l, (pf_gene_kind)k, &g);
                pf_error err;
                bool ok = pf_gene_validate(p, l, &g, &err) == 0;
                bool legal = (info.genes >> k) & 1u;
                if (ok != legal)
                    fprintf(stderr, "%s %s %s: validate %d, info %d (%s)\n", pt_apps[a],
                            info.name, pf_gene_kind_name((pf_gene_kind)k), ok, legal,
                            ok ? "" : err.msg);
                CU_ASSERT_EQUAL(ok, legal);
            }
        }
        pf_program_free(p);
    }
}

/* The per-channel loop: the channel used only as the channel index of 3-D images. */
static bool channel_loop_of(const char *body)
{
    char src[1024];
    snprintf(src, sizeof src,
             "pipeline p(image in[W, H, C]) -> (image out[W, H, C]) {\n"
             "    for each (x, y, c) of out as l { %s }\n}\n", body);
    pf_program *p = pt_compile("channel_loop", src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_perforable b;
    bool r = find_info(p, &b, "l")->channel_loop;
    pf_program_free(p);
    return r;
}

static void test_channel_loop(void)
{
    CU_ASSERT(channel_loop_of("out[x, y, c] = in[x, y, c] * 0.5;"));
    CU_ASSERT(channel_loop_of("out[x, y, c] = in[x + 1, y, c] + in[x, y, 0];"));
    CU_ASSERT(channel_loop_of("if (x > 2) out[x, y, c] = in[x, y, c]; else out[x, y, c] = 0.0;"));
    /* c as a number, or shifted, or in another dimension: not the prototype's channel loop. */
    CU_ASSERT(!channel_loop_of("out[x, y, c] = in[x, y, c] * c;"));
    CU_ASSERT(!channel_loop_of("out[x, y, c] = in[x, y, 2 - c];"));
    CU_ASSERT(!channel_loop_of("out[x, y, c] = in[c, y, c];"));
    CU_ASSERT(!channel_loop_of("if (c == 0) out[x, y, c] = 1.0; else out[x, y, c] = 0.0;"));
    pf_perforable b;
    const char *yes[][2] = { { "blur", "loop_temp" }, { "unsharp_mask", "loop_temp" },
                             { "unsharp_mask", "mask_combination_loop" },
                             { "median", "loop_pixels" }, { "artistic_blur", "loop_blur" } };
    for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
        pf_program *p = pt_load_app(yes[k][0]);
        CU_ASSERT(find_info(p, &b, yes[k][1])->channel_loop);
        pf_program_free(p);
    }
    pf_program *p = pt_load_app("bilateral_grid");
    CU_ASSERT(!find_info(p, &b, "blur_y_loop")->channel_loop);  /* 4-D: i is drawn */
    pf_program_free(p);
}

/* A chain of n stages, each reading the previous at `taps` horizontal offsets. */
static char *chain_src(int n, int taps)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_sb_puts(&sb, "pipeline p(image in[W, H]) -> (image out[W, H]) {\n");
    for (int i = 0; i < n - 1; i++)
        pf_sb_printf(&sb, "  image a%d[W, H];\n", i);
    for (int i = 0; i < n; i++) {
        pf_sb_printf(&sb, i < n - 1 ? "  for each (x, y) of a%d as s%d a%d[x, y] = "
                                    : "  for each (x, y) of out as s%d out[x, y] = ", i, i, i);
        for (int t = 0; t < taps; t++) {
            if (i)
                pf_sb_printf(&sb, "%sa%d[x + %d, y]", t ? " + " : "", i - 1, t);
            else
                pf_sb_printf(&sb, "%sin[x + %d, y]", t ? " + " : "", t);
        }
        pf_sb_puts(&sb, ";\n");
    }
    pf_sb_puts(&sb, "}\n");
    return pf_sb_take(&sb);
}

/* Chains of stages computed inside their consumers: at most PF_EXEC_MAX_CHAIN linked by `at`
 * or `inline`, and inlined stencils may not multiply past PF_EXEC_MAX_INLINE_NODES (issue 27:
 * nothing bounded the nesting a schedule could ask for). */
static void test_chain_limits(void)
{
    char *src = chain_src(12, 1);
    pf_program *p = pt_compile("chain.pf", src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_strbuf ok, bad, inl;
    pf_sb_init(&ok);
    pf_sb_init(&bad);
    pf_sb_init(&inl);
    for (int i = 0; i < 12; i++) {
        /* s3 .. s10 (8 stages) at one another; s2 at s3 would make 9 */
        if (i >= 3 && i < 10)
            pf_sb_printf(&ok, "s%d exec at s%d tile 64 32\n", i, i + 1);
        else if (i == 10)
            pf_sb_printf(&ok, "s10 exec tile 64 32\n");
        if (i >= 2 && i < 10)
            pf_sb_printf(&bad, "s%d exec at s%d tile 64 32\n", i, i + 1);
        else if (i == 10)
            pf_sb_printf(&bad, "s10 exec tile 64 32\n");
        if (i < 9)
            pf_sb_printf(&inl, "s%d exec inline\n", i);
    }
    pf_schedule s;
    pf_error err;
    int rc = pt_parse(p, ok.data, &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0)
        pf_schedule_free(&s);
    CU_ASSERT_EQUAL(pt_parse(p, bad.data, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.sched:8: s9: 'at s10' makes a chain of 9 stages "
                                           "computed at one another (at most 8)"));
    CU_ASSERT_EQUAL(pt_parse(p, inl.data, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.sched:9: s8: a chain of 9 stages inlined"));
    pf_program_free(p);
    free(src);
    /* 3-tap stencils inlined 7 deep: 3^7 copies of the first */
    src = chain_src(9, 3);
    p = pt_compile("stencils.pf", src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_sb_clear(&inl);
    for (int i = 0; i < 8; i++)
        pf_sb_printf(&inl, "s%d exec inline\n", i);
    CU_ASSERT_EQUAL(pt_parse(p, inl.data, &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nodes with the stages inlined into it (at most"));
    pf_program_free(p);
    free(src);
    pf_sb_free(&ok);
    pf_sb_free(&bad);
    pf_sb_free(&inl);
}

/* A stage runs alone when no stage may be computed at it nor it at another: the median's one
 * stage; not blur's two passes (temp's sole consumer is the output) nor the bilateral filter's
 * kernel table and pixels. With the default's choice of width, these and may_fuse say which
 * stages the search's execution seed gives 16 lanes at the root (search/genome_seed.c). */
static void test_runs_alone(void)
{
    static const struct {
        const char *app;
        bool alone[2], may_fuse[2];
    } want[] = { { "median", { true, true }, { false, false } },
                 { "blur", { false, false }, { true, false } },
                 /* its table is read at [c + R, r + R], not near the pixel: never fused */
                 { "bilateral_filter", { false, false }, { false, false } } };
    for (int a = 0; a < 3; a++) {
        pf_program *p = pt_load_app(want[a].app);
        for (int s = 0; s < p->n_stages && s < 2; s++) {
            CU_ASSERT_EQUAL(pf_exec_runs_alone(p, s), want[a].alone[s]);
            CU_ASSERT_EQUAL(pf_default_may_fuse(p, s), want[a].may_fuse[s]);
        }
        /* the default's 16 lanes: the bilateral filter's exp per tap, not the median's network */
        CU_ASSERT_EQUAL(pf_default_wide_math(p->stages[p->n_stages - 1]), a == 2);
        pf_program_free(p);
    }
}

PF_TEST_SUITE(schedule_validate,
              PF_TEST(test_validation_errors), PF_TEST(test_lab_accepts), PF_TEST(test_chain_limits),
              PF_TEST(test_validate_built_in_code), PF_TEST(test_perforable_info), PF_TEST(test_runs_alone),
              PF_TEST(test_info_agrees_with_validation), PF_TEST(test_channel_loop))
