/* The genome operators: every random, mutated and crossed genome of every app in every mode is
 * valid and round-trips through its text; modes restrict the genes; a seed replays the same
 * genomes; execution genes reach compute-at. */
#include "perforate/exec.h"
#include "perforate/plan.h"
#include "search/ga.h"
#include "search/genome.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Valid, and its canonical text parses back to an equal schedule. */
static void expect_valid(const pf_program *p, const pf_schedule *s)
{
    pf_error err;
    int rc = pf_schedule_validate(p, s, &err);
    if (rc)
        fprintf(stderr, "invalid genome: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *text = pf_schedule_text(p, s);
    pf_schedule t;
    rc = pf_schedule_parse(p, text, "<genome>", &t, &err);
    if (rc)
        fprintf(stderr, "%s\n%s", err.msg, text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(pf_schedule_equal(s, &t));
    pf_schedule_free(&t);
    free(text);
}

static bool is_perf(pf_gene_kind k)
{
    return k == PF_GENE_STEP || k == PF_GENE_FIRST || k == PF_GENE_LAST || k == PF_GENE_RANDOM;
}

/* The mode's gene space: loop mode has loop perforation only; grid mode has grid sampling on
 * stages; for loops always take loop perforation. */
static void expect_mode(const pf_genome_ctx *c, const pf_schedule *s)
{
    for (int i = 0; i < s->n_loops; i++) {
        pf_gene_kind k = s->approx[i].kind;
        if (k == PF_GENE_EXACT)
            continue;
        bool ok;
        if (c->p.mode == PF_MODE_LOOP || c->info[i].kind == PF_PERFORABLE_FOR)
            ok = is_perf(k);
        else if (c->p.mode == PF_MODE_GRID)
            ok = k == PF_GENE_GRID;
        else
            ok = !is_perf(k);
        CU_ASSERT(ok);
        /* A per-channel loop's channel is never sampled (the prototype has no such loop). */
        if (k == PF_GENE_GRID && c->info[i].channel_loop)
            CU_ASSERT_EQUAL(s->approx[i].spacing[s->approx[i].n_spacing - 1], 1);
    }
}

/* A chain of operators: initial genomes, mutations of them, crossovers of pairs. */
static void exercise(const pf_program *p, pf_search_mode mode, uint64_t seed, int rounds)
{
    pf_genome_params gp = pf_genome_params_default();
    gp.mode = mode;
    gp.hints = seed % 2;
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_rng r;
    pf_rng_seed(&r, seed);
    pf_schedule a, b, child;
    pf_genome_initial(&c, &r, &a);
    pf_genome_initial(&c, &r, &b);
    for (int i = 0; i < rounds; i++) {
        pf_genome_mutate(&c, &r, i % 2 ? &a : &b);
        expect_valid(p, i % 2 ? &a : &b);
        expect_mode(&c, i % 2 ? &a : &b);
        pf_genome_crossover(&c, &r, &a, &b, &child);
        expect_valid(p, &child);
        expect_mode(&c, &child);
        pf_schedule_free(&b);
        b = child;
    }
    pf_schedule_free(&a);
    pf_schedule_free(&b);
    pf_genome_ctx_free(&c);
}

static void test_every_genome_is_valid(void)
{
    for (int a = 0; st_apps[a]; a++) {
        pf_program *p = st_load_app(st_apps[a]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (int mode = 0; mode < PF_MODE_COUNT; mode++)
            for (uint64_t seed = 1; seed <= 6; seed++)
                exercise(p, (pf_search_mode)mode, seed * 7919 + (uint64_t)a, 60);
        pf_program_free(p);
    }
}

static void test_random_genes_fit_each_loop(void)
{
    for (int a = 0; st_apps[a]; a++) {
        pf_program *p = st_load_app(st_apps[a]);
        pf_genome_params gp = pf_genome_params_default();
        gp.hints = false;
        pf_genome_ctx c;
        pf_genome_ctx_init(&c, p, &gp);
        pf_rng r;
        pf_rng_seed(&r, 99);
        int approximated = 0;
        for (int loop = 0; loop < p->n_loops; loop++)
            for (int i = 0; i < 200; i++) {
                pf_approx_gene g;
                pf_genome_random_gene(&c, &r, loop, &g);
                CU_ASSERT_EQUAL(pf_gene_validate(p, loop, &g, NULL), 0);
                approximated += g.kind != PF_GENE_EXACT;
            }
        CU_ASSERT_EQUAL(approximated, 200 * p->n_loops);  /* every loop has some template */
        pf_genome_ctx_free(&c);
        pf_program_free(p);
    }
}

/* The released parameter ranges, seen on many blur genes. */
static void test_gene_ranges(void)
{
    pf_program *p = st_load_app("blur");
    pf_genome_params gp = pf_genome_params_default();
    gp.hints = false;
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_rng r;
    pf_rng_seed(&r, 5);
    int kinds[PF_GENE_KIND_COUNT] = { 0 }, on_demand = 0, seen[2][9] = { { 0 } };
    for (int i = 0; i < 3000; i++) {
        pf_approx_gene g;
        pf_genome_random_gene(&c, &r, 0, &g);
        kinds[g.kind]++;
        on_demand += g.on_demand;
        if (g.kind == PF_GENE_GRID)
            for (int d = 0; d < g.n_spacing; d++)
                CU_ASSERT(g.spacing[d] == 1 || g.spacing[d] == 2 || g.spacing[d] == 4 ||
                          g.spacing[d] == 8);
        if (g.kind == PF_GENE_GRID) {
            CU_ASSERT_EQUAL_FATAL(g.n_spacing, 3);
            CU_ASSERT_EQUAL(g.spacing[2], 1);  /* c: the per-channel loop */
            seen[0][g.spacing[0]]++;
            seen[1][g.spacing[1]]++;
        }
        if (g.kind == PF_GENE_ADAPTIVE || g.kind == PF_GENE_IMPORTANCE)
            CU_ASSERT(g.frac >= 0.025 && g.frac <= 0.95);
        if (g.kind == PF_GENE_IMPORTANCE)
            CU_ASSERT(g.sigma_imp >= 1.0 / 150 - 1e-9 && g.sigma_imp <= 1.0 / 32 + 1e-9);
        if (g.recon == PF_RECON_GAUSSIAN || g.recon == PF_RECON_GAUSSIAN_SV)
            CU_ASSERT(g.sigma >= 0.25 && g.sigma <= 3.0);
    }
    /* Six templates: importance 3/6, grid 2/6 (one of them on demand), adaptive 1/6. */
    CU_ASSERT(kinds[PF_GENE_IMPORTANCE] > 1300 && kinds[PF_GENE_IMPORTANCE] < 1700);
    CU_ASSERT(kinds[PF_GENE_ADAPTIVE] > 380 && kinds[PF_GENE_ADAPTIVE] < 620);
    CU_ASSERT(on_demand > 380 && on_demand < 620);
    for (int d = 0; d < 2; d++)  /* x and y: all of {1, 2, 4, 8} */
        CU_ASSERT(seen[d][1] && seen[d][2] && seen[d][4] && seen[d][8]);
    pf_genome_ctx_free(&c);
    pf_program_free(p);
}

/* A sequence of operator texts for a seed. */
static char *trace(const pf_program *p, uint64_t seed)
{
    pf_genome_params gp = pf_genome_params_default();
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_rng r;
    pf_rng_seed(&r, seed);
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule a, b;
    pf_genome_initial(&c, &r, &a);
    pf_genome_initial(&c, &r, &b);
    for (int i = 0; i < 50; i++) {
        pf_genome_mutate(&c, &r, &a);
        pf_schedule child;
        pf_genome_crossover(&c, &r, &a, &b, &child);
        pf_schedule_free(&b);
        b = child;
        pf_schedule_print(p, &b, &sb);
    }
    pf_schedule_free(&a);
    pf_schedule_free(&b);
    pf_genome_ctx_free(&c);
    return pf_sb_take(&sb);
}

static void test_seed_replays(void)
{
    pf_program *p = st_load_app("demosaic");
    char *x = trace(p, 42), *y = trace(p, 42), *z = trace(p, 43);
    CU_ASSERT_STRING_EQUAL(x, y);
    CU_ASSERT(strcmp(x, z) != 0);
    free(x);
    free(y);
    free(z);
    pf_program_free(p);
}

/* Execution genes: drawn, and compute-at is reachable (loop_temp at loop_output in blur), so is
 * the search's reorder, alone and with tiles; every genome is valid. */
static void test_exec_genes_reach_compute_at(void)
{
    pf_program *p = st_load_app("blur");
    pf_genome_params gp = pf_genome_params_default();
    gp.exec_rate = 1.0;
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_rng r;
    pf_rng_seed(&r, 3);
    pf_schedule s;
    pf_schedule_init(&s, p);
    int at = 0, set = 0, reordered = 0, tiled_reorder = 0;
    for (int i = 0; i < 400; i++) {
        pf_genome_mutate(&c, &r, &s);
        expect_valid(p, &s);
        set += s.exec[0].set || s.exec[1].set;
        at += s.exec[0].at == 1;
        reordered += s.exec[0].n_order > 0 || s.exec[1].n_order > 0;
        tiled_reorder += s.exec[1].n_order > 0 && s.exec[1].tile[0] > 0;
    }
    CU_ASSERT(set > 100);
    CU_ASSERT(at > 0);
    CU_ASSERT(reordered > 20);  /* the further variable inside the tiles, or the rows */
    CU_ASSERT(tiled_reorder > 0);
    pf_schedule_free(&s);
    pf_genome_params none = pf_genome_params_default();
    none.exec_rate = 0;
    pf_genome_ctx_free(&c);
    pf_genome_ctx_init(&c, p, &none);
    for (int i = 0; i < 100; i++) {
        pf_genome_initial(&c, &r, &s);
        pf_genome_mutate(&c, &r, &s);
        CU_ASSERT(!s.exec[0].set && !s.exec[1].set);
        pf_schedule_free(&s);
    }
    pf_genome_ctx_free(&c);
    pf_program_free(p);
}

/* For a GPU target (tune --target cuda): every execution gene the search draws on a stage that
 * can run as GPU blocks is a `gpu` tiling or computes the stage in its consumer's blocks;
 * every genome is valid and plans for a GPU (the codegen suites run such plans against the
 * interpreter: codegen_gpu_lower, codegen_gpu_run). */
static void test_gpu_exec_genes(void)
{
    const pf_plan_target gpu = { .vector_lanes = 8, .gpu = true };
    int at_total = 0;
    for (int a = 0; st_apps[a]; a++) {
        pf_program *p = st_load_app(st_apps[a]);
        pf_genome_params gp = pf_genome_params_default();
        gp.exec_rate = 1.0;
        gp.gpu = true;
        pf_genome_ctx c;
        pf_genome_ctx_init(&c, p, &gp);
        pf_rng r;
        pf_rng_seed(&r, 11 + (uint64_t)a);
        pf_schedule s;
        pf_genome_initial(&c, &r, &s);
        int tiled = 0, at = 0, cpu = 0, atomic = 0;
        for (int i = 0; i < 150; i++) {
            pf_genome_mutate(&c, &r, &s);
            expect_valid(p, &s);
            for (int k = 0; k < p->n_stages; k++) {
                const pf_exec_gene *g = &s.exec[k];
                const pf_stage *st = p->stages[k];
                bool capable = (!st->serial || pf_stage_accumulates(st, NULL, 0)) &&
                               st->n_vars >= 2;
                tiled += g->set && g->gpu;
                atomic += g->set && g->gpu && st->serial;  /* the splat: atomic adds */
                at += g->set && g->at >= 0;
                cpu += g->set && capable && !g->gpu && g->at < 0;
            }
            char *text = pf_schedule_text(p, &s);
            pf_error err;
            pf_plan *plan = pf_plan_parse(p, text, "<gpu genome>", &gpu, &err);
            if (!plan)
                fprintf(stderr, "%s: %s\n%s", st_apps[a], err.msg, text);
            CU_ASSERT_PTR_NOT_NULL(plan);
            pf_plan_free(plan);
            free(text);
        }
        printf("\n    %-16s 150 mutations: %d GPU tilings, %d at a consumer", st_apps[a], tiled,
               at);
        CU_ASSERT(tiled > 0);
        CU_ASSERT_EQUAL(cpu, 0);
        if (strcmp(st_apps[a], "bilateral_grid") == 0)
            CU_ASSERT(atomic > 0);
        at_total += at;
        pf_schedule_free(&s);
        pf_genome_ctx_free(&c);
        pf_program_free(p);
    }
    CU_ASSERT(at_total > 20);  /* producers reach their consumers' shared memory */
}

/* Crossover takes a contiguous run of loops from one parent and never all of them. */
static void test_crossover_two_points(void)
{
    pf_program *p = st_load_app("demosaic");  /* 13 loops */
    pf_genome_params gp = pf_genome_params_default();
    gp.exec_rate = 0;
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_rng r;
    pf_rng_seed(&r, 11);
    pf_schedule a, b;
    pf_schedule_init(&a, p);
    pf_schedule_init(&b, p);
    for (int i = 0; i < p->n_loops; i++) {  /* a: step 2 everywhere, b: step 3 */
        a.approx[i] = (pf_approx_gene){ .kind = PF_GENE_STEP, .step = 2 };
        b.approx[i] = (pf_approx_gene){ .kind = PF_GENE_STEP, .step = 3 };
    }
    for (int t = 0; t < 500; t++) {
        pf_schedule child;
        pf_genome_crossover(&c, &r, &a, &b, &child);
        int changes = 0, from_b = 0;
        for (int i = 0; i < p->n_loops; i++) {
            from_b += child.approx[i].step == 3;
            changes += i > 0 && child.approx[i].step != child.approx[i - 1].step;
        }
        CU_ASSERT(changes <= 2);
        CU_ASSERT(from_b > 0 && from_b < p->n_loops);
        pf_schedule_free(&child);
    }
    pf_schedule_free(&a);
    pf_schedule_free(&b);
    pf_genome_ctx_free(&c);
    pf_program_free(p);
}

/* Every seed is valid, in its mode, and puts one lattice on every parallel stage whose genes
 * allow it: the same spacings (rows and columns of the stage's first two drawn variables), on
 * demand only where one stage reads the image. */
static void expect_seed(const pf_genome_ctx *c, const pf_schedule *s)
{
    expect_valid(c->prog, s);
    expect_mode(c, s);
    int sx = 0, sy = 0, step = 0, genes = 0;
    for (int i = 0; i < s->n_loops; i++) {
        const pf_approx_gene *g = &s->approx[i];
        if (c->info[i].kind != PF_PERFORABLE_STAGE) {
            CU_ASSERT_EQUAL(g->kind, PF_GENE_EXACT);
            continue;
        }
        genes += g->kind != PF_GENE_EXACT;
        if (g->kind == PF_GENE_STEP) {
            CU_ASSERT(step == 0 || step == g->step);
            step = g->step;
        }
        if (g->kind != PF_GENE_GRID || c->info[i].n_vars < 2 ||
            (c->info[i].channel_loop && c->info[i].n_vars < 3))
            continue;
        CU_ASSERT(sx == 0 || (sx == g->spacing[0] && sy == g->spacing[1]));
        sx = g->spacing[0];
        sy = g->spacing[1];
        CU_ASSERT_EQUAL(g->recon, PF_RECON_LINEAR);
        if (g->on_demand)
            CU_ASSERT(c->info[i].on_demand && !c->info[i].output);
    }
    int wide = 0;  /* the execution seed: exact, 16 lanes at the root */
    for (int st = 0; st < c->prog->n_stages; st++)
        if (s->exec[st].set) {
            CU_ASSERT(genes == 0 && s->exec[st].vectorize == 16 && s->exec[st].at == -1);
            wide++;
        }
    CU_ASSERT(genes > 0 || wide > 0);
}

static void test_seeds(void)
{
    for (int a = 0; st_apps[a]; a++) {
        pf_program *p = st_load_app(st_apps[a]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (int mode = 0; mode < PF_MODE_COUNT; mode++) {
            pf_genome_params gp = pf_genome_params_default();
            gp.mode = (pf_search_mode)mode;
            pf_genome_ctx c;
            pf_genome_ctx_init(&c, p, &gp);
            pf_schedule seeds[16];
            int n = pf_genome_seeds(&c, 16, seeds);
            CU_ASSERT(n >= 1 && n <= 10);
            int two = pf_genome_seeds(&c, 2, seeds + n);
            CU_ASSERT(two <= 2);  /* max is honoured */
            for (int i = 0; i < two; i++)
                pf_schedule_free(&seeds[n + i]);
            int more = pf_genome_seeds(&c, 2, seeds + n);
            for (int i = 0; i < n; i++)
                expect_seed(&c, &seeds[i]);
            for (int i = 0; i < n + more; i++)
                pf_schedule_free(&seeds[i]);
            pf_genome_ctx_free(&c);
        }
        pf_program_free(p);
    }
}

/* The median's and blur's first seed is their exact program at 16 lanes, every stage at the
 * root (the default gives them 8, and fuses blur's temp into its output's tiles); the
 * bilateral filter's pixels have 16 already and its 9 x 9 table is no image stage, so it gets
 * none; no app gets one with execution genes off or for a GPU target. */
static void test_exec_seed(void)
{
    static const char *const apps[] = { "median", "blur", "bilateral_filter" };
    for (int a = 0; a < 3; a++) {
        pf_program *p = st_load_app(apps[a]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        pf_genome_params gp = pf_genome_params_default();
        pf_genome_ctx c;
        pf_genome_ctx_init(&c, p, &gp);
        pf_schedule seeds[16];
        int n = pf_genome_seeds(&c, 16, seeds), exec_only = 0;
        for (int i = 0; i < n; i++) {
            char *text = pf_schedule_text(p, &seeds[i]);
            bool wide = strstr(text, "exec root vectorize 16 parallel\n") != NULL;
            exec_only += wide && !strstr(text, "grid");
            if (a < 2 && i == 0)
                CU_ASSERT(wide && !strstr(text, "grid") && !strstr(text, " at "));
            free(text);
            pf_schedule_free(&seeds[i]);
        }
        CU_ASSERT_EQUAL(exec_only, a < 2 ? 1 : 0);
        pf_genome_ctx_free(&c);
        for (int off = 0; off < 2; off++) {  /* none with --no-exec, none for a GPU */
            gp.exec_rate = off ? 0.25 : 0;
            gp.gpu = off;
            pf_genome_ctx_init(&c, p, &gp);
            n = pf_genome_seeds(&c, 16, seeds);
            for (int i = 0; i < n; i++) {
                for (int st = 0; st < p->n_stages; st++)
                    CU_ASSERT(!seeds[i].exec[st].set || seeds[i].exec[st].gpu);
                pf_schedule_free(&seeds[i]);
            }
            pf_genome_ctx_free(&c);
        }
        pf_program_free(p);
    }
}

/* The first lattice seed of app (after the execution seed, where it has one) holds the two
 * lines want (a 4x4 lattice on two stages). */
static void expect_first_seed(const char *app, const char *const want[2])
{
    pf_program *p = st_load_app(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pf_genome_params gp = pf_genome_params_default();
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp);
    pf_schedule s[2];
    int n = pf_genome_seeds(&c, 2, s);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    char *text = pf_schedule_text(p, &s[0]);
    if (!strstr(text, "grid")) {
        free(text);
        text = pf_schedule_text(p, &s[1]);
    }
    for (int i = 0; i < 2; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want[i]));
    free(text);
    for (int i = 0; i < n; i++)
        pf_schedule_free(&s[i]);
    pf_genome_ctx_free(&c);
    pf_program_free(p);
}

/* The blur's first seed: the 4x4 lattice on both passes, the intermediate on demand (one
 * stage reads it), the output stored. */
static void test_blur_first_seed(void)
{
    static const char *const want[2] = { "loop_temp grid 4 4 1 reconstruct on-demand linear",
                                         "loop_output grid 4 4 1 reconstruct store linear" };
    expect_first_seed("blur", want);
}

/* The bilateral filter's first seed: the 4x4 lattice on both stages, the 9 x 9 kernel table
 * stored although one stage reads it (a table's fill costs a handful of points; on demand,
 * every read of the image-sized stage would interpolate). */
static void test_table_seed_is_stored(void)
{
    static const char *const want[2] = { "loop_kernel grid 4 4 reconstruct store linear",
                                         "loop_pixels grid 4 4 reconstruct store linear" };
    expect_first_seed("bilateral_filter", want);
}

/* Loads app with its genome context and schedule text parsed into s. */
static pf_program *near_setup(const char *app, const char *text, pf_genome_ctx *c, pf_schedule *s)
{
    pf_program *prog = st_load_app(app);
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_genome_params gp = pf_genome_params_default();
    pf_genome_ctx_init(c, prog, &gp);
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(pf_schedule_parse(prog, text, "<test>", s, &err), 0);
    return prog;
}

/* Checks that near[0..n) are valid, and frees them with the rest of near_setup's. */
static void near_teardown(pf_program *prog, pf_genome_ctx *c, pf_schedule *s, pf_schedule *near,
                          int n)
{
    for (int i = 0; i < n; i++) {
        expect_valid(prog, &near[i]);
        pf_schedule_free(&near[i]);
    }
    pf_schedule_free(s);
    pf_genome_ctx_free(c);
    pf_program_free(prog);
}

/* How many of s[0..n) print with line a (and b, when given). */
static int texts_holding(const pf_program *prog, const pf_schedule *s, int n, const char *a,
                         const char *b)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        char *t = pf_schedule_text(prog, &s[i]);
        found += strstr(t, a) != NULL && (!b || strstr(t, b) != NULL);
        free(t);
    }
    return found;
}

/* The sampling neighbours of a bilateral filter genome: each drawn spacing doubled or halved
 * within 1..8 (a step within 1..16), the reconstruction on demand instead of stored; each valid
 * and new. */
static void test_neighbours(void)
{
    pf_genome_ctx c;
    pf_schedule s, near[32];
    pf_error err;
    pf_program *prog =
        near_setup("bilateral_filter", "loop_pixels grid 1 8 reconstruct store linear\n", &c, &s);
    int n = pf_genome_neighbours(&c, &s, near, 32);
    static const char *const want[] = { "loop_pixels grid 2 8 reconstruct store linear\n",
                                        "loop_pixels grid 1 4 reconstruct store linear\n",
                                        "loop_pixels grid 1 8 reconstruct on-demand linear\n" };
    CU_ASSERT_EQUAL(n, 3);  /* 1 halved and 8 doubled are out of range */
    for (int w = 0; w < 3; w++)
        CU_ASSERT(texts_holding(prog, near, n, want[w], NULL) > 0);
    for (int i = 0; i < n; i++) {
        expect_valid(prog, &near[i]);
        CU_ASSERT(!pf_schedule_equal(&near[i], &s));
        pf_schedule_free(&near[i]);
    }
    CU_ASSERT_EQUAL(pf_genome_neighbours(&c, &s, near, 1), 1);  /* at most max */
    pf_schedule_free(&near[0]);
    pf_schedule_free(&s);
    /* A step doubles up to the templates' largest, 16 (a spacing stops at 8). */
    CU_ASSERT_EQUAL_FATAL(pf_schedule_parse(prog, "loop_pixels step 8\n", "<test>", &s, &err), 0);
    n = pf_genome_neighbours(&c, &s, near, 32);
    CU_ASSERT_EQUAL(n, 2);
    for (int i = 0; i < n; i++) {
        int l = 0;
        while (l < s.n_loops && s.approx[l].kind != PF_GENE_STEP)
            l++;
        CU_ASSERT_FATAL(l < s.n_loops);
        CU_ASSERT(near[i].approx[l].step == 4 || near[i].approx[l].step == 16);
        pf_schedule_free(&near[i]);
    }
    pf_schedule_free(&s);
    pf_schedule_parse(prog, "", "<test>", &s, &err);  /* exact: no sampling to move */
    CU_ASSERT_EQUAL(pf_genome_neighbours(&c, &s, near, 32), 0);
    pf_schedule_free(&s);
    pf_genome_ctx_free(&c);
    pf_program_free(prog);
}

/* A `for` loop the genome keeps exact has one neighbour, step 2 (the median's window loops):
 * the halving of step 2 runs the exact loop, so this is the other direction of a step. */
static void test_neighbours_perforate_exact_for_loops(void)
{
    pf_genome_ctx c;
    pf_schedule s, near[32];
    pf_program *prog =
        near_setup("median", "loop_pixels grid 4 4 1 reconstruct store linear\n", &c, &s);
    int n = pf_genome_neighbours(&c, &s, near, 32);
    static const char *const want[] = { "median_y_loop step 2\n", "median_x_loop step 2\n" };
    for (int w = 0; w < 2; w++)
        CU_ASSERT_EQUAL(texts_holding(prog, near, n, want[w], "loop_pixels grid 4 4 1"), 1);
    near_teardown(prog, &c, &s, near, n);
}

/* How many width neighbours of app's genome `text` there are, and of them, how many print
 * with line `want` (when given). */
static int width_neighbours(const char *app, const char *text, const char *want, int *found)
{
    pf_genome_ctx c;
    pf_schedule s, near[8];
    pf_program *prog = near_setup(app, text, &c, &s);
    int n = pf_genome_width_neighbours(&c, &s, near, 8);
    *found = want ? texts_holding(prog, near, n, want, NULL) : 0;
    near_teardown(prog, &c, &s, near, n);
    return n;
}

/* A stage on an x-strided grid at the other vector width: the bilateral filter's pixels,
 * 16 lanes by default (an exp per tap), at 8; an explicit gene's 8 at 16; the median's one
 * stage, 8 by default, at 16. None on a dense row, nor where the default fuses (blur), with
 * an execution gene or without. */
static void test_width_neighbours(void)
{
    int found;
    CU_ASSERT_EQUAL(width_neighbours("bilateral_filter",
                                     "loop_pixels grid 4 4 reconstruct store linear\n",
                                     "loop_pixels exec root vectorize 8 parallel", &found), 1);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(width_neighbours("bilateral_filter",
                                     "loop_pixels grid 4 8 reconstruct on-demand linear\n"
                                     "loop_pixels exec root vectorize 8 unroll 4\n",
                                     "loop_pixels exec root vectorize 16 unroll 4", &found), 1);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(width_neighbours("median", "loop_pixels grid 2 2 1 reconstruct store linear\n",
                                     "loop_pixels exec root vectorize 16 parallel", &found), 1);
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(width_neighbours("bilateral_filter",
                                     "loop_pixels grid 1 8 reconstruct store linear\n", NULL,
                                     &found), 0);
    CU_ASSERT_EQUAL(width_neighbours("blur", "loop_temp grid 4 4 1 reconstruct on-demand linear\n"
                                     "loop_output grid 4 4 1 reconstruct store linear\n", NULL,
                                     &found), 0);
    CU_ASSERT_EQUAL(width_neighbours("blur", "loop_temp grid 4 4 1 reconstruct on-demand linear\n"
                                     "loop_output grid 4 4 1 reconstruct store linear\n"
                                     "loop_output exec root vectorize 16 parallel\n", NULL,
                                     &found), 0);
}

/* Parses texts[0..n) into f, with donors[i] = &f[i]. */
static void parse_donors(const pf_program *prog, const char *const *texts, int n, pf_schedule *f,
                         const pf_schedule **donors)
{
    pf_error err;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL_FATAL(pf_schedule_parse(prog, texts[i], "<test>", &f[i], &err), 0);
        donors[i] = &f[i];
    }
}

/* Execution transplants: a frontier member takes each other member's distinct execution
 * schedule (the default counts), never its own; every stage's gene at once. */
static void test_exec_transplants(void)
{
    pf_program *prog = st_load_app("median");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_genome_params gp = pf_genome_params_default();
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, prog, &gp);
    static const char *const texts[] = {
        "loop_pixels grid 1 2 1 reconstruct store linear\n",
        "loop_pixels exec root vectorize 16 parallel\n",
        "loop_pixels grid 2 2 1 reconstruct store linear\n",  /* the default again */
        "loop_pixels grid 4 4 1 reconstruct store linear\nloop_pixels exec root vectorize 16 "
        "parallel\n",  /* the same gene again */
    };
    pf_schedule f[4], out[8];
    const pf_schedule *donors[4];
    parse_donors(prog, texts, 4, f, donors);
    int n = pf_genome_exec_transplants(&c, &f[0], donors, 4, out, 8);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    char *t = pf_schedule_text(prog, &out[0]);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "loop_pixels grid 1 2 1 reconstruct store linear\n"
                                     "loop_pixels exec root vectorize 16 parallel\n"));
    free(t);
    pf_schedule_free(&out[0]);
    n = pf_genome_exec_transplants(&c, &f[3], donors, 4, out, 8);  /* the default, once */
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT(!out[0].exec[0].set);
    pf_schedule_free(&out[0]);
    CU_ASSERT_EQUAL(pf_genome_exec_transplants(&c, &f[0], donors, 4, out, 0), 0);  /* max */
    for (int i = 0; i < 4; i++)
        pf_schedule_free(&f[i]);
    pf_genome_ctx_free(&c);
    pf_program_free(prog);
    /* Blur: the genes of a stage computed at another travel together. */
    prog = st_load_app("blur");
    CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
    pf_genome_ctx_init(&c, prog, &gp);
    static const char *const blur[] = {
        "loop_temp grid 4 4 1 reconstruct on-demand linear\n"
        "loop_output grid 4 4 1 reconstruct store linear\n",
        "loop_temp exec at loop_output\nloop_output exec root tile 256 32 vectorize 8 parallel\n",
    };
    parse_donors(prog, blur, 2, f, donors);
    CU_ASSERT_EQUAL_FATAL(pf_genome_exec_transplants(&c, &f[0], donors, 2, out, 8), 1);
    t = pf_schedule_text(prog, &out[0]);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "loop_temp exec at loop_output\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "loop_output exec root tile 256 32 vectorize 8 parallel\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "loop_temp grid 4 4 1 reconstruct on-demand linear\n"));
    free(t);
    pf_schedule_free(&out[0]);
    for (int i = 0; i < 2; i++)
        pf_schedule_free(&f[i]);
    pf_genome_ctx_free(&c);
    pf_program_free(prog);
}

PF_TEST_SUITE(search_genome, PF_TEST(test_neighbours), PF_TEST(test_neighbours_perforate_exact_for_loops), PF_TEST(test_exec_transplants), PF_TEST(test_width_neighbours), PF_TEST(test_gpu_exec_genes), PF_TEST(test_seeds), PF_TEST(test_exec_seed), PF_TEST(test_blur_first_seed), PF_TEST(test_table_seed_is_stored), PF_TEST(test_every_genome_is_valid),
              PF_TEST(test_random_genes_fit_each_loop), PF_TEST(test_gene_ranges),
              PF_TEST(test_seed_replays), PF_TEST(test_exec_genes_reach_compute_at),
              PF_TEST(test_crossover_two_points))
