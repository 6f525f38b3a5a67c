/* Features of a candidate for the search's models, from its pf_schedule and the checked program
 * (see model_features.h): the program's static costs per stage (reads per sample with constant
 * trip counts, lattice size at a nominal input size) and each candidate's per-stage sampling,
 * reconstruction and execution gene. */
#include "search/model_features.h"

#include "base/arena.h"
#include "perforate/default_schedule.h"
#include "perforate/exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The nominal input size of the static costs: only the stages' shares depend on it. */
static const long nominal_dims[] = { 512, 384, 3, 3 };

/* ---- constant trip counts ---- */

/* The value of a constant integer expression (literals, consts, the input sizes at their
 * nominal values, + - * /); false when it is not one. */
static bool fold_int(const pf_expr *e, const long *sizes, long *out)
{
    long a, b;
    switch (e->kind) {
    case PF_E_INT: *out = e->ival; return true;
    case PF_E_NAME:
        if (e->sym && e->sym->kind == PF_SYM_CONST && e->sym->type == PF_T_INT) {
            *out = e->sym->value.i;
            return true;
        }
        if (e->sym && e->sym->kind == PF_SYM_SIZE && sizes) {
            *out = sizes[e->sym->index];
            return true;
        }
        return false;
    case PF_E_CAST: return fold_int(e->a, sizes, out);
    case PF_E_UNARY:
        if (e->op != PF_OP_NEG || !fold_int(e->a, sizes, &a))
            return false;
        *out = -a;
        return true;
    case PF_E_BINARY:
        if (!fold_int(e->a, sizes, &a) || !fold_int(e->b, sizes, &b))
            return false;
        switch (e->op) {
        case PF_OP_ADD: *out = a + b; return true;
        case PF_OP_SUB: *out = a - b; return true;
        case PF_OP_MUL: *out = a * b; return true;
        case PF_OP_DIV: *out = b ? a / b : 0; return b != 0;
        default: return false;
        }
    default: return false;
    }
}

/* Iterations of lo .. hi (inclusive, step 1 or a constant); 1 when not constant. */
static double trips(const pf_expr *lo, const pf_expr *hi, const pf_expr *step)
{
    long a, b, s = 1;
    if (!lo || !hi || !fold_int(lo, NULL, &a) || !fold_int(hi, NULL, &b))
        return 1;
    if (step && (!fold_int(step, NULL, &s) || s <= 0))
        s = 1;
    return b >= a ? (double)((b - a) / s + 1) : 0;
}

/* ---- reads per sample ---- */

/* Reads of image `of` (NULL: of any image). */
static double expr_reads(const pf_expr *e, const pf_image_decl *of);

static double args_reads(pf_expr *const *args, int n, const pf_image_decl *of)
{
    double r = 0;
    for (int i = 0; i < n; i++)
        r += args[i] ? expr_reads(args[i], of) : 0;
    return r;
}

static double expr_reads(const pf_expr *e, const pf_image_decl *of)
{
    if (!e)
        return 0;
    double r = (e->a ? expr_reads(e->a, of) : 0) + (e->b ? expr_reads(e->b, of) : 0) +
               (e->c ? expr_reads(e->c, of) : 0);
    switch (e->kind) {
    case PF_E_IMAGE_READ:
        return (!of || (e->sym && e->sym->image == of)) + args_reads(e->args, e->n_args, of);
    case PF_E_REDUCE:
        return r + trips(e->a, e->b, NULL) * args_reads(e->args, e->n_args, of);
    case PF_E_CALL:
    case PF_E_BUILTIN:
    case PF_E_ARRAY_READ: return r + args_reads(e->args, e->n_args, of);
    default: return r;
    }
}

static double stmt_reads(const pf_stmt *s, const pf_image_decl *of)
{
    if (!s)
        return 0;
    double r = 0;
    switch (s->kind) {
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++)
            r += stmt_reads(s->body[i], of);
        return r;
    case PF_S_IF:
        return expr_reads(s->cond, of) + stmt_reads(s->then_s, of) + stmt_reads(s->else_s, of);
    case PF_S_FOR: return trips(s->lo, s->hi, s->step) * stmt_reads(s->then_s, of);
    case PF_S_ASSIGN:
        for (int i = 0; i < s->target.n_index; i++)
            r += expr_reads(s->target.index[i], of);
        return r + expr_reads(s->value, of);
    default: return expr_reads(s->value, of);
    }
}

/* ---- the program ---- */

static void nominal_sizes(const pf_program *prog, long *sizes)
{
    for (int i = 0; i < prog->n_sizes; i++)
        sizes[i] = 1;
    for (int i = 0; i < prog->n_inputs; i++) {
        const pf_image_decl *im = prog->inputs[i];
        for (int d = 0; d < im->ndims && d < 4; d++) {
            const pf_expr *x = im->extents[d];
            if (x->kind == PF_E_NAME && x->sym && x->sym->kind == PF_SYM_SIZE)
                sizes[x->sym->index] = nominal_dims[d];
        }
    }
}

static double stage_points(const pf_stage *st, const long *sizes)
{
    const pf_image_decl *im = st->image->image;
    double p = 1;
    for (int d = 0; d < im->ndims; d++) {
        long v;
        p *= fold_int(im->extents[d], sizes, &v) && v > 0 ? (double)v : nominal_dims[d < 4 ? d
                                                                                         : 3];
    }
    return p;
}

static int count_readers(const pf_program *prog, const pf_stage *st)
{
    int n = 0;
    for (int s = 0; s < prog->n_stages; s++)
        for (int r = 0; r < prog->stages[s]->n_reads; r++)
            n += prog->stages[s] != st && prog->stages[s]->reads[r] == st->image->image;
    return n;
}

/* The dimensions d in which every read of `of` indexes with the stage's variable d itself. */
static unsigned expr_aligned(const pf_expr *e, const pf_stage *st, const pf_image_decl *of)
{
    if (!e)
        return ~0u;
    unsigned m = expr_aligned(e->a, st, of) & expr_aligned(e->b, st, of) &
                 expr_aligned(e->c, st, of);
    for (int i = 0; i < e->n_args; i++)
        m &= expr_aligned(e->args[i], st, of);
    if (e->kind == PF_E_IMAGE_READ && e->sym && e->sym->image == of)
        for (int d = 0; d < e->n_args; d++) {
            const pf_expr *x = e->args[d];
            while (x->kind == PF_E_CAST)
                x = x->a;
            if (!(x->kind == PF_E_NAME && d < st->n_vars && x->sym == st->vars[d]))
                m &= ~(1u << d);
        }
    return m;
}

static unsigned stmt_aligned(const pf_stmt *s, const pf_stage *st, const pf_image_decl *of)
{
    if (!s)
        return ~0u;
    unsigned m = expr_aligned(s->value, st, of) & expr_aligned(s->cond, st, of) &
                 stmt_aligned(s->then_s, st, of) & stmt_aligned(s->else_s, st, of);
    for (int i = 0; s->kind == PF_S_BLOCK && i < s->n_body; i++)
        m &= stmt_aligned(s->body[i], st, of);
    for (int i = 0; s->kind == PF_S_ASSIGN && i < s->target.n_index; i++)
        m &= expr_aligned(s->target.index[i], st, of);
    return m;
}

/* reads_of[r * S + s]: reads of stage s's image per sample of stage r (other stages). */
static void reads_between(const pf_program *prog, pf_program_static *ps)
{
    int S = prog->n_stages;
    ps->reads_of = pf_xcalloc((size_t)(S * S) + 1, sizeof *ps->reads_of);
    ps->aligned = pf_xcalloc((size_t)(S * S) + 1, sizeof *ps->aligned);
    for (int r = 0; r < S; r++)
        for (int s = 0; s < S; s++) {
            const pf_image_decl *im = prog->stages[s]->image->image;
            if (r == s)
                continue;
            ps->reads_of[r * S + s] = stmt_reads(prog->stages[r]->body, im);
            ps->aligned[r * S + s] = stmt_aligned(prog->stages[r]->body, prog->stages[r], im);
        }
}

void pf_program_static_init(const pf_program *prog, int wide_lanes, pf_program_static *ps)
{
    memset(ps, 0, sizeof *ps);
    long *sizes = pf_xcalloc((size_t)prog->n_sizes + 1, sizeof *sizes);
    nominal_sizes(prog, sizes);
    ps->n_stages = prog->n_stages;
    ps->stage = pf_xcalloc((size_t)prog->n_stages + 1, sizeof *ps->stage);
    double total = 0;
    for (int s = 0; s < prog->n_stages; s++) {
        const pf_stage *st = prog->stages[s];
        pf_stage_static *x = &ps->stage[s];
        x->taps = stmt_reads(st->body, NULL);
        x->bytes = 4 * (x->taps + st->n_writes);
        x->points = stage_points(st, sizes);
        x->readers = count_readers(prog, st);
        x->consumer = pf_exec_sole_consumer(prog, s);
        x->output = st->image->image->role == PF_IMAGE_OUTPUT;
        x->lanes = pf_default_width(st, wide_lanes);
        total += x->points * (x->taps + 1);
    }
    for (int s = 0; s < prog->n_stages; s++) {
        ps->stage[s].share = ps->stage[s].points * (ps->stage[s].taps + 1) / total;
        ps->stage[s].alone = pf_default_alone(prog, s);
    }
    ps->total = total;
    reads_between(prog, ps);
    ps->n_loops = prog->n_loops;
    ps->loop_stage = pf_xcalloc(2 * (size_t)prog->n_loops + 1, sizeof *ps->loop_stage);
    ps->loop_channels = ps->loop_stage + prog->n_loops;
    for (int l = 0; l < prog->n_loops; l++) {
        const pf_stage *st = prog->loops[l].stage;
        ps->loop_stage[l] = st ? st->index : -1;
        ps->loop_channels[l] =
            prog->loops[l].kind == PF_LOOP_STAGE && st && pf_stage_channel_loop(st) ? 3 : 1;
    }
    free(sizes);
}

void pf_program_static_free(pf_program_static *ps)
{
    free(ps->stage);
    free(ps->loop_stage);
    free(ps->reads_of);
    free(ps->aligned);
    memset(ps, 0, sizeof *ps);
}

/* ---- a candidate ---- */

double pf_gene_fraction(const pf_program_static *ps, int loop, const pf_approx_gene *g)
{
    double f = 1;
    switch (g->kind) {
    case PF_GENE_EXACT: return 1;
    case PF_GENE_GRID:
        for (int d = 0; d < g->n_spacing; d++)
            f /= g->spacing[d] > 0 ? g->spacing[d] : 1;
        break;
    case PF_GENE_ADAPTIVE:
    case PF_GENE_IMPORTANCE:
    case PF_GENE_FIRST:
    case PF_GENE_LAST:
    case PF_GENE_RANDOM: f = g->frac; break;
    case PF_GENE_STEP: f = 1.0 / (g->step > 0 ? g->step : 1); break;
    case PF_GENE_CHANNELS: return fmin(1, (double)g->channels / 3);
    default: break;
    }
    if (g->channels > 0 && g->kind != PF_GENE_CHANNELS)
        f *= fmin(1, (double)g->channels / fmax(3, ps->loop_channels[loop]));
    return f > 0 ? f : 1e-6;
}

bool pf_gene_computes_all(const pf_program_static *ps, int loop, const pf_approx_gene *g)
{
    if (g->kind == PF_GENE_EXACT || pf_gene_skips_nothing(g))
        return true;
    /* every point sampled, though not by the exact loop: a grid's fills, random's tests */
    return (g->kind == PF_GENE_GRID || g->kind == PF_GENE_RANDOM) &&
           pf_gene_fraction(ps, loop, g) >= 1;
}

static double grid_spacing(const pf_approx_gene *g, double frac)
{
    if (g->kind != PF_GENE_GRID)
        return 1 / sqrt(frac);
    double p = 1;
    int n = 0;
    for (int d = 0; d < g->n_spacing; d++)
        if (g->spacing[d] > 1) {
            p *= g->spacing[d];
            n++;
        }
    return n ? pow(p, 1.0 / n) : 1;
}

static void stage_exec(const pf_exec_gene *e, int default_lanes, pf_stage_features *f)
{
    f->exec_set = e->set;
    f->at = e->set ? e->at : -1;
    f->parallel = e->set ? e->parallel : true;
    f->vectorize = e->set ? e->vectorize : default_lanes;
    f->unroll = e->set ? e->unroll : 0;
    f->tile0 = e->set ? e->tile[0] : 0;
    f->tile1 = e->set ? e->tile[1] : 0;
    f->reorder = e->set && e->n_order > 0;
    f->slide = e->set && e->slide;
}

void pf_features_of(const pf_program *prog, const pf_program_static *ps, const pf_schedule *s,
                    pf_features *out)
{
    out->n_stages = prog->n_stages;
    out->stage = pf_xcalloc((size_t)prog->n_stages + 1, sizeof *out->stage);
    for (int i = 0; i < prog->n_stages; i++) {
        out->stage[i].frac = 1;
        for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++)
            out->stage[i].grid[d] = 1;
    }
    for (int l = 0; l < prog->n_loops; l++) {
        const pf_approx_gene *g = &s->approx[l];
        int st = ps->loop_stage[l];
        if (st < 0 || g->kind == PF_GENE_EXACT)
            continue;
        pf_stage_features *f = &out->stage[st];
        double frac = pf_gene_fraction(ps, l, g);
        f->frac *= frac;  /* a for loop's perforation thins its stage's work */
        if (prog->loops[l].kind != PF_LOOP_STAGE) {
            f->inner_random |= g->kind == PF_GENE_RANDOM;
            continue;
        }
        f->kind = g->kind;
        f->recon = g->recon;
        f->on_demand = g->on_demand && !ps->stage[st].output;
        f->channels = g->channels > 0 || g->kind == PF_GENE_CHANNELS;
        f->sigma = g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV ? g->sigma
                                                                                       : 0;
        f->spacing = grid_spacing(g, frac);
        for (int d = 0; d < PF_BUFFER_MAX_DIMS; d++)
            f->grid[d] = g->kind == PF_GENE_GRID ? (d < g->n_spacing ? g->spacing[d] : 1)
                         : g->kind == PF_GENE_STEP ? (d == 1 ? g->step : 1)  /* rows */
                         : g->kind == PF_GENE_CHANNELS || g->kind == PF_GENE_FIRST ||
                                   g->kind == PF_GENE_LAST ? 1 : 0;
    }
    for (int i = 0; i < prog->n_stages; i++) {
        if (out->stage[i].spacing <= 0)
            out->stage[i].spacing = 1;
        stage_exec(&s->exec[i], ps->stage[i].lanes, &out->stage[i]);
        /* A stage that runs alone has no default to lose: a catch-all fitted on a few slow
         * genes (a median's `reorder x c y`, 1.6x) put its exact program at 16 lanes at 3.65x
         * the exact time (measured: 0.72x), and the guided search never measured it. */
        out->stage[i].exec_set &= !ps->stage[i].alone;
    }
    for (int i = 0; i < prog->n_stages; i++) {  /* computed in the consumer's tiles */
        pf_stage_features *f = &out->stage[i];
        if (f->at >= 0 && f->at < prog->n_stages) {
            f->tile0 = out->stage[f->at].tile0;
            f->tile1 = out->stage[f->at].tile1;
        }
    }
}

void pf_features_free(pf_features *f)
{
    free(f->stage);
    memset(f, 0, sizeof *f);
}

/* ---- one gene, for the error model ---- */

void pf_gene_features(const pf_program_static *ps, int loop, const pf_approx_gene *g, double *x)
{
    memset(x, 0, sizeof *x * PF_GENE_NFEAT);
    double frac = pf_gene_fraction(ps, loop, g);
    x[0] = log(frac);
    switch (g->kind) {
    case PF_GENE_GRID: x[1] = 1; break;
    case PF_GENE_ADAPTIVE: x[2] = 1; break;
    case PF_GENE_IMPORTANCE: x[3] = 1; break;
    case PF_GENE_STEP: x[4] = 1; break;
    case PF_GENE_FIRST:
    case PF_GENE_LAST: x[5] = 1; break;
    case PF_GENE_RANDOM: x[6] = 1; break;
    default: x[7] = 1; break;  /* channels */
    }
    x[8] = g->recon == PF_RECON_NEAREST;
    x[9] = g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV;
    /* x[10]: unused (on demand, a grid computes the image its stored fill does) */
    x[11] = g->channels > 0 || g->kind == PF_GENE_CHANNELS;
    x[12] = x[9] ? log(g->sigma > 0 ? g->sigma : 1) : 0;
    if (g->kind == PF_GENE_GRID && g->n_spacing >= 2)  /* rows thinned more than columns */
        x[13] = log((double)g->spacing[1] / g->spacing[0]);
}
