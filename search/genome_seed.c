/* Structured seeds of the initial population: genomes derived from the program's shape alone
 * (docs/search.md, "Seeds"), so that the search starts from the regular points a person would
 * try first on any pipeline, not only from one-gene random genomes. Nothing here knows an app:
 * a seed applies one lattice to every parallel stage at once, or (the execution seed) the
 * host's wider vectors to every parallel image stage, each computed at the root.
 *
 *   blur, spacing 4, both axes:  loop_temp grid 4 4 1 reconstruct on-demand linear
 *                                loop_output grid 4 4 1 reconstruct store linear */
#include "search/genome.h"
#include "search/genome_internal.h"
#include "lang/lang.h"
#include "perforate/default_schedule.h"
#include "perforate/exec.h"

#include <stdbool.h>
#include <string.h>

/* One lattice shape: the spacing of the stage's first (x) and second (y) drawn variable. */
typedef struct seed_shape {
    int sx, sy;
} seed_shape;

/* Isotropic lattices first (the usual perforation), then rows and columns alone, each at the
 * spacings the released templates draw; most useful first, since a small population takes
 * only the first few. */
static const seed_shape shapes[] = {
    { 4, 4 }, { 2, 2 }, { 8, 8 }, { 1, 4 }, { 4, 1 }, { 1, 2 }, { 2, 1 }, { 1, 8 }, { 8, 1 },
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Stages that read img (the writer itself excluded). */
static int reader_stages(const pf_program *prog, const pf_stage *writer)
{
    int n = 0;
    for (int s = 0; s < prog->n_stages; s++) {
        const pf_stage *st = prog->stages[s];
        if (st == writer)
            continue;
        for (int r = 0; r < st->n_reads; r++)
            if (st->reads[r] == writer->image->image) {
                n++;
                break;
            }
    }
    return n;
}

/* Whether every extent of im is a constant: a table (the bilateral filter's 9 x 9 spatial
 * kernel) that does not grow with the input. */
static bool is_table(const pf_image_decl *im)
{
    for (int d = 0; d < im->ndims; d++) {
        pf_value v;
        if (pf_eval_const_expr(im->extents[d], NULL, NULL, &v) != 0)
            return false;
    }
    return true;
}

/* The grid gene of `shape` for a parallel stage, or EXACT when the stage has no drawn
 * variable. On demand where it is legal and one stage reads the image (each reader
 * interpolates again: with several, storing once is the cheaper guess), unless the image is a
 * table: its fill costs a handful of points, while on demand every read of its reader, an
 * image-sized stage, interpolates (the bilateral filter's kernel on demand alone costs 1.22x
 * the exact time). Its seeds then also measure their lattice on the image-sized stage nearly
 * alone: paired with an on-demand table (1.3-1.7x slower: the bilateral filter's grid 4 4,
 * 0.326 of the exact time against 0.238), they taught the guided search's time model to
 * predict lattices skipping along x 1.3-2.5x slower than the plain GA measured them. */
static void grid_seed(const pf_genome_ctx *c, int loop, seed_shape shape, pf_approx_gene *g)
{
    const pf_perforable *info = &c->info[loop];
    int dims = pf_gdraw_spacing_dims(info);
    memset(g, 0, sizeof *g);
    if (dims < 1)
        return;
    g->kind = PF_GENE_GRID;
    g->n_spacing = info->n_vars;
    for (int d = 0; d < info->n_vars; d++)
        g->spacing[d] = 1;
    g->spacing[0] = shape.sx;
    if (dims >= 2)
        g->spacing[1] = shape.sy;
    else if (shape.sx == 1)
        g->spacing[0] = shape.sy;
    g->recon = PF_RECON_LINEAR;
    const pf_stage *st = c->prog->loops[loop].stage;
    g->on_demand = info->on_demand && !info->output && reader_stages(c->prog, st) == 1 &&
                   !is_table(st->image->image);
}

/* The loop-perforation seed: every S-th row (the `step` template), S = the shape's larger
 * spacing. */
static void step_seed(seed_shape shape, pf_approx_gene *g)
{
    memset(g, 0, sizeof *g);
    g->kind = PF_GENE_STEP;
    g->step = shape.sx > shape.sy ? shape.sx : shape.sy;
}

/* Fills out with seed number k over every parallel stage; returns 0 when the seed is a
 * valid, approximate genome. */
static int make_seed(const pf_genome_ctx *c, int k, pf_schedule *out)
{
    pf_schedule_reset(out);
    int genes = 0;
    for (int i = 0; i < c->prog->n_loops; i++) {
        const pf_perforable *info = &c->info[i];
        if (info->kind != PF_PERFORABLE_STAGE)
            continue;  /* scatters and for loops keep their exact form in a seed */
        pf_approx_gene g;
        if (c->p.mode == PF_MODE_LOOP)
            step_seed(shapes[k], &g);
        else
            grid_seed(c, i, shapes[k], &g);
        if (g.kind == PF_GENE_EXACT || pf_gene_validate(c->prog, i, &g, NULL) != 0)
            continue;
        out->approx[i] = g;
        genes++;
    }
    if (genes == 0)
        return -1;
    return pf_genome_repair(c, out, NULL);
}

static bool seen_before(const pf_schedule *out, int n)
{
    for (int i = 0; i < n; i++)
        if (pf_schedule_equal(&out[i], &out[n]))
            return true;
    return false;
}

/* Whether the default schedules stage s as a whole image: it runs alone, or it takes part in
 * a fusion the default may make (as producer or consumer). Not a stage computed at the root
 * beside a consumer that reads it whole, a table (the bilateral filter's 9 x 9 kernel). */
static bool image_stage(const pf_program *prog, int s)
{
    return pf_exec_runs_alone(prog, s) || !pf_default_alone(prog, s);
}

/* The execution seed: the exact program with every parallel image stage computed at the root
 * at 16 lanes where the default gives it 8 (docs/schedule.md: 16 only for transcendental
 * math), so apart from any stage the default would fuse it into: Halide's all-root starting
 * point at the host's full width. The median's selection network runs 1.37-1.39x faster so at
 * 256x192 on a 16-lane host; blur's exact program (the default fuses its temp into the
 * output's tiles, a choice made at 2048x1536) in 0.56-0.58 of its default time (confirmed in
 * six runs; before the seed the GA found such schedules by chance, the guided search seldom).
 * Without a clean example the time model learnt the width from random genes paired with slow
 * approximations and never measured it (docs/search.md §10). Returns 0 when it differs from
 * the exact program and is valid. */
static int make_exec_seed(const pf_genome_ctx *c, pf_schedule *out)
{
    pf_schedule_reset(out);
    if (c->p.gpu || !pf_genome_exec_enabled(c))
        return -1;  /* CPU genes only, and none where execution genes are off (--no-exec) */
    int genes = 0;
    for (int s = 0; s < c->prog->n_stages; s++) {
        const pf_stage *st = c->prog->stages[s];
        if (pf_default_width(st, 16) != 8 || !image_stage(c->prog, s))
            continue;  /* serial (0), 16 lanes already, or a table */
        out->exec[s] = pf_genome_root_gene(16);
        genes++;
    }
    if (genes == 0)
        return -1;
    return pf_genome_repair(c, out, NULL);
}

int pf_genome_seeds(const pf_genome_ctx *c, int max, pf_schedule *out)
{
    int n = 0;
    if (max > 0) {
        pf_schedule_init(&out[n], c->prog);
        if (make_exec_seed(c, &out[n]) == 0)
            n++;
        else
            pf_schedule_free(&out[n]);
    }
    for (int k = 0; k < N_SHAPES && n < max; k++) {
        pf_schedule_init(&out[n], c->prog);
        /* Shapes collapse on one-variable stages and in loop mode (one step per shape). */
        if (make_seed(c, k, &out[n]) == 0 && !seen_before(out, n))
            n++;
        else
            pf_schedule_free(&out[n]);
    }
    return n;
}
