/* Validating a schedule against its program (docs/schedule.md, "Validation"), and what each
 * perforable loop accepts. Parsing calls pf_gene_validate on every line; code that builds
 * schedules (the search) calls pf_schedule_validate. Ranges are checked on the canonical values,
 * so a gene is valid exactly when its canonical text is. */
#include "perforate/schedule.h"
#include "perforate/schedule_internal.h"

#include "perforate/exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "LOOP: why" */
static int gfail(pf_error *err, const pf_loop_info *li, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int gfail(pf_error *err, const pf_loop_info *li, const char *fmt, ...)
{
    char why[PF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return pf_fail(err, "%s: %s", li->name, why);
}

/* In (0, hi] as the float that runs (a NaN fails). */
static bool in_range(double v, double hi)
{
    float f = (float)pf_round6(v);
    return f > 0.0f && f <= (float)hi;
}

static bool is_perf(pf_gene_kind k)
{
    return k == PF_GENE_STEP || k == PF_GENE_FIRST || k == PF_GENE_LAST || k == PF_GENE_RANDOM;
}

/* ---- program facts ---- */

static bool stage_writes(const pf_stage *st, const pf_image_decl *img)
{
    for (int i = 0; i < st->n_writes; i++)
        if (st->writes[i] == img)
            return true;
    return false;
}

const pf_image_decl *pf_stage_reference(const pf_stage *st)
{
    for (int i = 0; i < st->n_reads; i++) {
        const pf_image_decl *img = st->reads[i];
        if (img->ndims >= 2 && !stage_writes(st, img))
            return img;
    }
    return NULL;
}

int pf_image_writer_count(const pf_program *prog, const pf_image_decl *img)
{
    int n = 0;
    for (int i = 0; i < prog->n_stages; i++)
        n += stage_writes(prog->stages[i], img);
    return n;
}

static const pf_image_decl *stage_image(const pf_stage *st)
{
    return st->image ? st->image->image : NULL;
}

/* The stage's variables as "(x, y, c)", for messages. */
static const char *var_list(const pf_stage *st, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int v = 0; v < st->n_vars && n < size; v++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", v ? ", " : "", st->var_names[v]);
    if (n < size)
        snprintf(buf + n, size - n, ")");
    return buf;
}

/* ---- gene checks ---- */

static int check_perf(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    if (g->kind == PF_GENE_STEP) {
        if (g->step < 1 || g->step > PF_GENE_MAX_STEP)
            return gfail(err, li, "step %d is out of range (1..%d)", g->step, PF_GENE_MAX_STEP);
        return 0;
    }
    if (!in_range(g->frac, 1.0))
        return gfail(err, li, "%s %.6g is out of range (a fraction in (0, 1])",
                     pf_gene_kind_name(g->kind), g->frac);
    return 0;
}

static int check_for(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    if (!is_perf(g->kind))
        return gfail(err, li, "'%s' is a for loop: it takes step, first, last or random, not %s",
                     li->name, pf_gene_kind_name(g->kind));
    return check_perf(li, g, err);
}

/* Channel subsampling: C in range, the last variable over the last dimension of a 3-D image,
 * a reference image with as many dimensions to copy the other channels from. */
static int check_channels(const pf_loop_info *li, int c, pf_error *err)
{
    const pf_stage *st = li->stage;
    const pf_image_decl *img = stage_image(st);
    if (c < 1 || c > PF_GENE_MAX_CHANNELS)
        return gfail(err, li, "channels %d is out of range (1..%d)", c, PF_GENE_MAX_CHANNELS);
    if (!img || img->ndims != 3 || st->n_vars != 3)
        return gfail(err, li, "channel subsampling needs the stage's last variable to run over "
                     "the last dimension of a 3-D image ('%s' iterates %d of the %d dimensions "
                     "of '%s')", li->name, st->n_vars, img ? img->ndims : 0, st->image_name);
    const pf_image_decl *ref = pf_stage_reference(st);
    if (!ref)
        return gfail(err, li, "channel subsampling needs a reference image to copy channels "
                     "from, and '%s' reads no image with at least 2 dimensions", li->name);
    if (ref->ndims != img->ndims)
        return gfail(err, li, "channel subsampling copies from the reference image '%s', which "
                     "has %d dimensions, not %d like '%s'", ref->name, ref->ndims, img->ndims,
                     img->name);
    return 0;
}

static int check_grid(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    const pf_stage *st = li->stage;
    char vars[256];
    if (g->n_spacing != st->n_vars)
        return gfail(err, li, "the grid gives %d spacing%s but the stage has %d variable%s %s",
                     g->n_spacing, g->n_spacing == 1 ? "" : "s", st->n_vars,
                     st->n_vars == 1 ? "" : "s", var_list(st, vars, sizeof vars));
    for (int d = 0; d < g->n_spacing; d++)
        if (g->spacing[d] < 1 || g->spacing[d] > PF_GENE_MAX_SPACING)
            return gfail(err, li, "grid spacing %d of variable %s is out of range (1..%d)",
                         g->spacing[d], st->var_names[d], PF_GENE_MAX_SPACING);
    return 0;
}

static int check_two_vars(const pf_loop_info *li, const char *what, pf_error *err)
{
    int n = li->stage->n_vars;
    if (n < 2)
        return gfail(err, li, "%s sampling needs a stage with at least 2 variables, and '%s' "
                     "has %d", what, li->name, n);
    return 0;
}

static int check_adaptive(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    if (check_two_vars(li, "adaptive", err))
        return -1;
    if (g->k < PF_GENE_MIN_K || g->k > PF_GENE_MAX_K)
        return gfail(err, li, "adaptive K %d is out of range (%d..%d)", g->k, PF_GENE_MIN_K,
                     PF_GENE_MAX_K);
    if (!in_range(g->frac, 1.0))
        return gfail(err, li, "adaptive fraction %.6g is out of range (0, 1]", g->frac);
    return 0;
}

static int check_importance(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    if (check_two_vars(li, "importance", err))
        return -1;
    if (!in_range(g->frac, 1.0))
        return gfail(err, li, "importance fraction %.6g is out of range (0, 1]", g->frac);
    if (!in_range(g->sigma_imp, 1.0))
        return gfail(err, li, "importance sigma %.6g is out of range (0, 1] (a fraction of "
                     "the image height)", g->sigma_imp);
    if (!pf_stage_reference(li->stage))
        return gfail(err, li, "importance sampling needs a reference image, and '%s' reads no "
                     "image with at least 2 dimensions", li->name);
    return 0;
}

static int check_gaussian(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    if (!in_range(g->sigma, PF_GENE_MAX_SIGMA))
        return gfail(err, li, "reconstruction sigma %.6g is out of range (0, %g]", g->sigma,
                     PF_GENE_MAX_SIGMA);
    if (g->kind != PF_GENE_GRID)
        return 0;
    for (int d = 2; d < g->n_spacing; d++)
        if (g->spacing[d] != 1)
            return gfail(err, li, "%s reconstruction of a grid needs spacing 1 beyond the first "
                         "two variables (variable %s has spacing %d)", pf_recon_name(g->recon),
                         li->stage->var_names[d], g->spacing[d]);
    return 0;
}

static int check_on_demand(const pf_program *prog, const pf_loop_info *li,
                           const pf_approx_gene *g, pf_error *err)
{
    if (g->kind != PF_GENE_GRID)
        return gfail(err, li, "on-demand reconstruction needs grid sampling, not %s",
                     pf_gene_kind_name(g->kind));
    if (g->recon != PF_RECON_LINEAR && g->recon != PF_RECON_NEAREST)
        return gfail(err, li, "on-demand reconstruction needs linear or nearest, not %s",
                     pf_recon_name(g->recon));
    const pf_image_decl *img = stage_image(li->stage);
    int writers = img ? pf_image_writer_count(prog, img) : 0;
    if (writers != 1)
        return gfail(err, li, "on-demand reconstruction needs '%s' to have one writer stage, "
                     "and %d stages write it", img ? img->name : "?", writers);
    return 0;
}

static int check_recon(const pf_program *prog, const pf_loop_info *li, const pf_approx_gene *g,
                       pf_error *err)
{
    switch (g->recon) {
    case PF_RECON_NONE:
        return gfail(err, li, "%s sampling needs a reconstruction (reconstruct store|on-demand "
                     "METHOD)", pf_gene_kind_name(g->kind));
    case PF_RECON_LINEAR:
        if (g->kind != PF_GENE_GRID)
            return gfail(err, li, "linear reconstruction needs grid sampling, not %s",
                         pf_gene_kind_name(g->kind));
        break;
    case PF_RECON_GAUSSIAN:
    case PF_RECON_GAUSSIAN_SV:
        if (check_gaussian(li, g, err))
            return -1;
        break;
    case PF_RECON_NEAREST: break;
    default: return gfail(err, li, "unknown reconstruction %d", (int)g->recon);
    }
    return g->on_demand ? check_on_demand(prog, li, g, err) : 0;
}

/* Serial (scatter) stages run in order and cannot be reconstructed (a skipped iteration simply
 * does not scatter): grid, importance or loop perforation, nothing else. */
static int check_serial(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    pf_gene_kind k = g->kind;
    if (k != PF_GENE_GRID && k != PF_GENE_IMPORTANCE && !is_perf(k))
        return gfail(err, li, "'%s' is a serial (scatter) stage: it takes grid, importance, "
                     "step, first, last or random, not %s", li->name, pf_gene_kind_name(k));
    if (is_perf(k))
        return 0;
    if (g->channels)
        return gfail(err, li, "'%s' is a serial (scatter) stage: it cannot subsample channels",
                     li->name);
    if (g->recon != PF_RECON_NONE)
        return gfail(err, li, "'%s' is a serial (scatter) stage: it cannot be reconstructed "
                     "(skipped iterations do not scatter); drop the reconstruct clause",
                     li->name);
    return 0;
}

static int check_sampling(const pf_loop_info *li, const pf_approx_gene *g, pf_error *err)
{
    switch (g->kind) {
    case PF_GENE_GRID: return check_grid(li, g, err);
    case PF_GENE_ADAPTIVE: return check_adaptive(li, g, err);
    case PF_GENE_IMPORTANCE: return check_importance(li, g, err);
    default: return 0;
    }
}

static int check_stage(const pf_program *prog, const pf_loop_info *li, const pf_approx_gene *g,
                       pf_error *err)
{
    if (li->stage->serial && check_serial(li, g, err))
        return -1;
    if (is_perf(g->kind))
        return check_perf(li, g, err);
    if (g->kind == PF_GENE_CHANNELS)
        return check_channels(li, g->channels, err);
    if (check_sampling(li, g, err))
        return -1;
    if (li->stage->serial)
        return 0;
    if (g->channels && check_channels(li, g->channels, err))
        return -1;
    return check_recon(prog, li, g, err);
}

int pf_gene_validate(const pf_program *prog, int loop, const pf_approx_gene *gene, pf_error *err)
{
    if (loop < 0 || loop >= prog->n_loops)
        return pf_fail(err, "loop index %d is out of range (the program has %d loops)", loop,
                       prog->n_loops);
    if ((unsigned)gene->kind >= PF_GENE_KIND_COUNT)
        return pf_fail(err, "%s: unknown gene kind %d", prog->loops[loop].name,
                       (int)gene->kind);
    if (gene->kind == PF_GENE_EXACT)
        return 0;
    /* Canonical values (what the text says), but the raw spacing count, so a count that does
     * not fit the spacing array is reported rather than clipped. */
    pf_approx_gene g;
    pf_gene_canonical(gene, &g);
    g.n_spacing = gene->n_spacing;
    const pf_loop_info *li = &prog->loops[loop];
    if (li->kind == PF_LOOP_FOR)
        return check_for(li, &g, err);
    return check_stage(prog, li, &g, err);
}

/* Importance sampling and channel subsampling read their reference image at full size, so it
 * may not be one that another gene stores downsampled (on demand). */
static int check_references(const pf_program *prog, const pf_schedule *s, const char *file,
                            pf_error *err)
{
    for (int i = 0; i < prog->n_stages; i++) {
        const pf_stage *st = prog->stages[i];
        const pf_approx_gene *g = &s->approx[st->loop_id];
        bool needs_ref = g->kind == PF_GENE_IMPORTANCE || g->kind == PF_GENE_CHANNELS ||
                         g->channels > 0;
        const pf_image_decl *ref = needs_ref ? pf_stage_reference(st) : NULL;
        if (!ref || !ref->first_writer || ref->role == PF_IMAGE_OUTPUT)
            continue;
        const pf_approx_gene *w = &s->approx[ref->first_writer->loop_id];
        if (w->kind == PF_GENE_GRID && w->on_demand) {
            pf_fail(err, "%s: its reference image '%s' is stored downsampled (on-demand "
                    "reconstruction in %s)", st->name, ref->name, ref->first_writer->name);
            return g->line > 0 ? pf_fail_prefix(err, "%s:%d", file, g->line) : -1;
        }
    }
    return 0;
}

int pf_schedule_validate(const pf_program *prog, const pf_schedule *s, pf_error *err)
{
    if (s->n_loops != prog->n_loops || s->n_stages != prog->n_stages)
        return pf_fail(err, "the schedule has %d loops and %d stages but '%s' has %d and %d: it "
                       "was made for another program", s->n_loops, s->n_stages, prog->name,
                       prog->n_loops, prog->n_stages);
    const char *file = s->file_name ? s->file_name : "<schedule>";
    for (int i = 0; i < s->n_loops; i++) {
        const pf_approx_gene *g = &s->approx[i];
        if (pf_gene_validate(prog, i, g, err) == 0)
            continue;
        return g->line > 0 ? pf_fail_prefix(err, "%s:%d", file, g->line) : -1;
    }
    return pf_schedule_validate_links(prog, s, err);
}

int pf_schedule_validate_links(const pf_program *prog, const pf_schedule *s, pf_error *err)
{
    const char *file = s->file_name ? s->file_name : "<schedule>";
    if (check_references(prog, s, file, err))
        return -1;
    for (int i = 0; i < s->n_stages; i++) {
        const pf_exec_gene *g = &s->exec[i];
        const pf_exec_gene *consumer = g->at >= 0 && g->at < s->n_stages ? &s->exec[g->at] : NULL;
        const pf_approx_gene *ca = consumer ? &s->approx[prog->stages[g->at]->loop_id] : NULL;
        if (pf_exec_validate(prog, i, g, &s->approx[prog->stages[i]->loop_id], consumer, ca,
                             err) == 0)
            continue;
        return g->line > 0 ? pf_fail_prefix(err, "%s:%d", file, g->line) : -1;
    }
    int bad;
    if (pf_exec_validate_chains(prog, s->exec, &bad, err) != 0)
        return s->exec[bad].line > 0 ? pf_fail_prefix(err, "%s:%d", file, s->exec[bad].line)
                                     : -1;
    return 0;
}

void pf_gene_set_default_recon(const pf_program *prog, int loop, pf_approx_gene *g)
{
    g->recon = PF_RECON_NONE;
    g->on_demand = false;
    g->sigma = 0.0;
    if (loop < 0 || loop >= prog->n_loops || prog->loops[loop].kind != PF_LOOP_STAGE ||
        prog->loops[loop].stage->serial)
        return;
    switch (g->kind) {
    case PF_GENE_GRID: g->recon = PF_RECON_LINEAR; break;
    case PF_GENE_ADAPTIVE: g->recon = PF_RECON_GAUSSIAN_SV; g->sigma = 0.9; break;
    case PF_GENE_IMPORTANCE: g->recon = PF_RECON_GAUSSIAN_SV; g->sigma = 0.73; break;
    default: break;
    }
}

/* ---- what each loop accepts ---- */

#define GENE_BIT(k) (1u << (k))
#define PERF_BITS                                                                          \
    (GENE_BIT(PF_GENE_STEP) | GENE_BIT(PF_GENE_FIRST) | GENE_BIT(PF_GENE_LAST) |          \
     GENE_BIT(PF_GENE_RANDOM))

static bool channels_legal(const pf_stage *st)
{
    const pf_image_decl *img = stage_image(st);
    const pf_image_decl *ref = pf_stage_reference(st);
    return !st->serial && img && img->ndims == 3 && st->n_vars == 3 && ref &&
           ref->ndims == img->ndims;
}

static void stage_info(const pf_program *prog, const pf_stage *st, pf_perforable *out)
{
    const pf_image_decl *img = stage_image(st);
    out->kind = st->serial ? PF_PERFORABLE_SERIAL_STAGE : PF_PERFORABLE_STAGE;
    out->n_vars = st->n_vars;
    out->channel_loop = pf_stage_channel_loop(st);
    out->ref = pf_stage_reference(st);
    out->output = img && img->role == PF_IMAGE_OUTPUT;
    out->genes |= PERF_BITS | GENE_BIT(PF_GENE_GRID);
    if (st->n_vars >= 2 && out->ref)
        out->genes |= GENE_BIT(PF_GENE_IMPORTANCE);
    if (st->serial)
        return;
    if (st->n_vars >= 2)
        out->genes |= GENE_BIT(PF_GENE_ADAPTIVE);
    out->channels = channels_legal(st);
    if (out->channels)
        out->genes |= GENE_BIT(PF_GENE_CHANNELS);
    out->on_demand = img && pf_image_writer_count(prog, img) == 1;
}

void pf_perforable_info(const pf_program *prog, int loop, pf_perforable *out)
{
    memset(out, 0, sizeof *out);
    const pf_loop_info *li = &prog->loops[loop];
    out->loop = loop;
    out->name = li->name;
    out->genes = GENE_BIT(PF_GENE_EXACT);
    if (li->kind == PF_LOOP_FOR) {
        out->kind = PF_PERFORABLE_FOR;
        out->genes |= PERF_BITS;
        return;
    }
    stage_info(prog, li->stage, out);
}

static void describe_loop(const pf_program *prog, int loop, pf_strbuf *out)
{
    pf_perforable p;
    pf_perforable_info(prog, loop, &p);
    pf_sb_printf(out, "  %s  %s", p.name, pf_perforable_kind_name(p.kind));
    if (p.kind != PF_PERFORABLE_FOR) {
        char vars[256];
        pf_sb_printf(out, " %s", var_list(prog->loops[loop].stage, vars, sizeof vars));
    }
    pf_sb_puts(out, ":");
    for (int k = 1; k < PF_GENE_KIND_COUNT; k++)
        if (p.genes & GENE_BIT(k))
            pf_sb_printf(out, " %s", pf_gene_kind_name((pf_gene_kind)k));
    if (p.on_demand)
        pf_sb_puts(out, p.output ? "; on-demand (runs as store: output)" : "; on-demand");
    if (p.channel_loop)
        pf_sb_printf(out, "; per-channel %s", prog->loops[loop].stage->var_names[2]);
    if (p.ref)
        pf_sb_printf(out, "; reference %s", p.ref->name);
    pf_sb_putc(out, '\n');
}

void pf_perforable_describe(const pf_program *prog, pf_strbuf *out)
{
    for (int i = 0; i < prog->n_loops; i++)
        describe_loop(prog, i, out);
}
