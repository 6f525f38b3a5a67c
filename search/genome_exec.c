/* Execution genes for the search (Halide-style, perforate/exec.h): compute root or at the sole
 * consumer, tile sizes from {8 .. 256} or none, vectorize {none, 4, 8, 16}, parallel on/off,
 * unroll {none, 2, 4}, the default loop order or further variables inside the tiles; for a GPU
 * target, `gpu` tiles and threads or the consumer's blocks instead; their mutation; and the
 * repair that keeps them legal when the genes around them change (compute-at depends on the
 * consumer's tiling and the stage's approximation). */
#include "perforate/exec.h"
#include "search/genome_internal.h"

static const int tiles[] = { 8, 16, 32, 64, 128, 256 };
static const int widths[] = { 0, 4, 8, 16 };
static const int unrolls[] = { 0, 2, 4 };

bool pf_genome_exec_enabled(const pf_genome_ctx *c)
{
    return c->p.exec_rate > 0 && c->prog->n_stages > 0;
}

pf_exec_gene pf_genome_root_gene(int lanes)
{
    pf_exec_gene g = pf_exec_default();
    g.set = true;
    g.parallel = true;
    g.vectorize = lanes;
    return g;
}

static void draw_tile(const pf_program *prog, int stage, pf_rng *r, pf_exec_gene *g)
{
    g->tile[0] = g->tile[1] = 0;
    if (pf_rng_below(r, 3) == 0)
        return;  /* untiled, one time in three */
    g->tile[0] = pf_rng_pick(r, tiles, 6);
    if (prog->stages[stage]->n_vars >= 2)
        g->tile[1] = pf_rng_pick(r, tiles, 6);
}

/* The search's one reorder (stages with further variables, not serial), legal by
 * construction: the further variables inside the tile loops (innermost first x, y, further
 * variables, tile loops), or, untiled, between the rows and x (x, further variables, y). */
static void set_order(const pf_program *prog, int stage, pf_exec_gene *g)
{
    int k = prog->stages[stage]->n_vars, n = 0;
    bool tiled = g->tile[0] > 0 || g->tile[1] > 0;
    g->order[n++] = 0;
    if (tiled)
        g->order[n++] = 1;
    for (int d = 2; d < k; d++)
        g->order[n++] = d;
    if (!tiled)
        g->order[n++] = 1;
    for (int d = 0; d < 2; d++)
        if (g->tile[d] > 0)
            g->order[n++] = PF_EXEC_TILE_LOOP(d);
    g->n_order = n;
}

static bool can_reorder(const pf_program *prog, int stage)
{
    return prog->stages[stage]->n_vars >= 3 && !prog->stages[stage]->serial;
}

/* compute-at needs the consumer computed root and tiled in two dimensions, in the default
 * loop order (the search's reorder puts further variables inside the tiles). */
static void prepare_consumer(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int consumer)
{
    pf_exec_gene *g = &s->exec[consumer];
    if (!g->set) {
        *g = pf_exec_default();
        g->set = true;
    }
    g->at = -1;
    g->slide = false;
    g->n_order = 0;
    if (g->tile[1] <= 0 && c->prog->stages[consumer]->n_vars >= 2) {
        g->tile[0] = pf_rng_pick(r, tiles, 6);
        g->tile[1] = pf_rng_pick(r, tiles, 6);
    }
}

static void toggle_at(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage)
{
    pf_exec_gene *g = &s->exec[stage];
    int consumer = pf_exec_sole_consumer(c->prog, stage);
    if (g->at >= 0 || consumer < 0) {
        g->at = -1;
        g->slide = false;
        return;
    }
    g->at = consumer;
    prepare_consumer(c, r, s, consumer);
}

/* Redraws field f (0 at, 1 tile, 2 vectorize, 3 parallel, 4 unroll, 5 reorder) of the stage's
 * gene; a reorder follows the tiles. */
static void redraw_field(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage, int f)
{
    pf_exec_gene *g = &s->exec[stage];
    bool serial = c->prog->stages[stage]->serial;
    switch (f) {
    case 0: toggle_at(c, r, s, stage); break;
    case 1: draw_tile(c->prog, stage, r, g); break;
    case 2: g->vectorize = serial ? 0 : pf_rng_pick(r, widths, 4); break;
    case 3: g->parallel = pf_rng_below(r, 2); break;  /* serial: bands (pass_bands) */
    case 4: g->unroll = pf_rng_pick(r, unrolls, 3); break;
    default: g->n_order = can_reorder(c->prog, stage) && pf_rng_below(r, 2); break;
    }
    if (g->n_order > 0)
        set_order(c->prog, stage, g);
}

/* ---- for a GPU target ----
 * A stage of two to four variables, not serial or serial with only atomic adds
 * (pf_stage_accumulates), gets `tile TX TY gpu TTX TTY` (tiles of {16 .. 128} x {4 .. 64}
 * points; 1, 2 or 4 columns a thread along x, and 1, 2, 4, 8 or 16 rows along y (at least one
 * thread each way), whose stencils then share loads through a register window of columns or
 * rows (codegen/pass_gpu_rows.c); at most 1024 threads), or is computed in its sole
 * consumer's blocks, in shared memory (neither serial; the consumer then gets a GPU tiling of
 * its own). Other stages keep the default: plain loops, which run as a kernel of one thread. */

static const int gpu_tx[] = { 16, 32, 64, 128 };
static const int gpu_ty[] = { 4, 8, 16, 32, 64 };

static bool gpu_capable(const pf_program *prog, int stage)
{
    const pf_stage *st = prog->stages[stage];
    return st->n_vars >= 2 && (!st->serial || pf_stage_accumulates(st, NULL, 0));
}

/* Whether stage may be computed in its consumer's blocks, or be such a consumer. */
static bool gpu_fusable(const pf_program *prog, int stage)
{
    return gpu_capable(prog, stage) && !prog->stages[stage]->serial;
}

static void draw_gpu_threads(pf_rng *r, pf_exec_gene *g)
{
    g->threads[0] = g->tile[0] >> pf_rng_below(r, 3);
    g->threads[1] = g->tile[1] >> pf_rng_below(r, 5);
    g->threads[1] = g->threads[1] < 1 ? 1 : g->threads[1];
    while (g->threads[0] * g->threads[1] > PF_EXEC_MAX_THREADS)
        g->threads[1] /= 2;
}

static void draw_gpu_tile(pf_rng *r, pf_exec_gene *g)
{
    *g = pf_exec_default();
    g->set = true;
    g->gpu = true;
    g->tile[0] = pf_rng_pick(r, gpu_tx, 4);
    g->tile[1] = pf_rng_pick(r, gpu_ty, 5);
    draw_gpu_threads(r, g);
}

static void random_gpu_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage)
{
    pf_exec_gene *g = &s->exec[stage];
    int consumer = pf_exec_sole_consumer(c->prog, stage);
    if (!gpu_capable(c->prog, stage)) {
        *g = pf_exec_default();
    } else if (consumer >= 0 && gpu_fusable(c->prog, stage) && gpu_fusable(c->prog, consumer) &&
               pf_rng_below(r, 3) == 0) {
        *g = pf_exec_default();
        g->set = true;
        g->at = consumer;
        if (!s->exec[consumer].gpu)
            draw_gpu_tile(r, &s->exec[consumer]);
    } else {
        draw_gpu_tile(r, g);
    }
}

static void mutate_gpu_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage)
{
    pf_exec_gene *g = &s->exec[stage];
    switch (pf_rng_below(r, 3)) {
    case 0:  /* one field: the threads of a GPU tiling */
        if (g->gpu)
            draw_gpu_threads(r, g);
        else
            random_gpu_exec(c, r, s, stage);
        break;
    case 1: random_gpu_exec(c, r, s, stage); break;
    default: *g = pf_exec_default(); break;  /* back to the default (GPU) schedule */
    }
}

void pf_genome_random_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s, int stage)
{
    if (c->p.gpu) {
        random_gpu_exec(c, r, s, stage);
        return;
    }
    pf_exec_gene *g = &s->exec[stage];
    *g = pf_exec_default();
    g->set = true;
    for (int f = 1; f < 6; f++)
        redraw_field(c, r, s, stage, f);
    if (pf_rng_below(r, 4) == 0)
        toggle_at(c, r, s, stage);
}

void pf_genome_mutate_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s)
{
    int stage = pf_rng_below(r, c->prog->n_stages);
    if (c->p.gpu) {
        mutate_gpu_exec(c, r, s, stage);
        return;
    }
    pf_exec_gene *g = &s->exec[stage];
    switch (pf_rng_below(r, 3)) {
    case 0:  /* one field, like the parameter redraw of approximation genes */
        if (!g->set) {
            *g = pf_exec_default();
            g->set = true;
        }
        redraw_field(c, r, s, stage, pf_rng_below(r, 6));
        break;
    case 1: pf_genome_random_exec(c, r, s, stage); break;
    default: *g = pf_exec_default(); break;  /* back to the default schedule */
    }
}

static int check_exec(const pf_genome_ctx *c, const pf_schedule *s, int i)
{
    const pf_exec_gene *g = &s->exec[i];
    const pf_exec_gene *consumer = g->at >= 0 && g->at < s->n_stages ? &s->exec[g->at] : NULL;
    const pf_approx_gene *ca = consumer ? &s->approx[c->prog->stages[g->at]->loop_id] : NULL;
    return pf_exec_validate(c->prog, i, g, &s->approx[c->prog->stages[i]->loop_id], consumer,
                            ca, NULL);
}

/* Two passes: repairing a consumer (at -> root, or reset) can change what its producer may do. */
static void repair_exec(const pf_genome_ctx *c, pf_schedule *s)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n_stages; i++) {
            pf_exec_gene *g = &s->exec[i];
            if (!g->set || check_exec(c, s, i) == 0)
                continue;
            g->at = -1;
            g->slide = false;
            /* for a GPU target, a stage no longer at its consumer goes back to the default
             * (GPU) schedule, not to plain loops (one GPU thread) */
            if (check_exec(c, s, i) != 0 || (c->p.gpu && !g->gpu))
                *g = pf_exec_default();
        }
}

int pf_genome_repair(const pf_genome_ctx *c, pf_schedule *s, pf_error *err)
{
    repair_exec(c, s);
    return pf_schedule_validate(c->prog, s, err);
}

int pf_genome_count(const pf_schedule *s)
{
    int n = 0;
    for (int i = 0; i < s->n_loops; i++)
        n += s->approx[i].kind != PF_GENE_EXACT;
    return n;
}
