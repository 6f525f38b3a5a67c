/* Random approximation genes from the released GA's templates (paper-apps.md §9): six foreach
 * templates, three for-loop templates, and the parameter ranges. A template that does not fit
 * a loop (importance without a reference image, on-demand with two writers, ...) is not drawn;
 * a drawn gene that fails pf_gene_validate is redrawn. */
#include "search/genome.h"
#include "search/genome_internal.h"

#include <math.h>
#include <string.h>

static const char *const mode_names[PF_MODE_COUNT] = { "full", "grid", "loop" };

const char *pf_search_mode_name(pf_search_mode m)
{
    return (unsigned)m < PF_MODE_COUNT ? mode_names[m] : "?";
}

int pf_search_mode_parse(const char *s, pf_search_mode *out)
{
    for (int m = 0; m < PF_MODE_COUNT; m++)
        if (strcmp(s, mode_names[m]) == 0) {
            *out = (pf_search_mode)m;
            return 0;
        }
    return -1;
}

pf_genome_params pf_genome_params_default(void)
{
    pf_genome_params p = { PF_MODE_FULL, true, 0.25, 0.3, 0.2, false };
    return p;
}

void pf_genome_ctx_init(pf_genome_ctx *c, const pf_program *prog, const pf_genome_params *p)
{
    c->prog = prog;
    c->p = *p;
    c->info = pf_xcalloc((size_t)prog->n_loops + 1, sizeof *c->info);
    for (int i = 0; i < prog->n_loops; i++)
        pf_perforable_info(prog, i, &c->info[i]);
}

void pf_genome_ctx_free(pf_genome_ctx *c)
{
    free(c->info);
    c->info = NULL;
}

/* ---- parameter draws (the released ranges) ---- */

static const int spacings[] = { 1, 2, 4, PF_G_SPACING_MAX };
static const int ks[] = { 2, 2, 2, 3, 4 };
static const int steps[] = { 1, 2, 3, 4, 8, PF_G_STEP_MAX };

void pf_gdraw_spacing(pf_rng *r, int d, pf_approx_gene *g)
{
    g->spacing[d] = pf_rng_pick(r, spacings, 4);
}

/* The variables whose spacing is drawn: all but a per-channel loop's channel, which the
 * prototype's `foreach (y, x)` does not have (paper-apps.md, "Loops over a colour image"). */
int pf_gdraw_spacing_dims(const pf_perforable *info)
{
    return info->channel_loop ? info->n_vars - 1 : info->n_vars;
}

/* {1, all, all, all}: one channel with probability 1/4, where legal. */
int pf_gdraw_channels(const pf_perforable *info, pf_rng *r)
{
    return info->channels && pf_rng_below(r, 4) == 0 ? 1 : 0;
}

pf_recon_kind pf_gdraw_recon(pf_rng *r, bool grid_hints)
{
    static const pf_recon_kind all[] = { PF_RECON_GAUSSIAN, PF_RECON_GAUSSIAN_SV,
                                         PF_RECON_NEAREST };
    static const pf_recon_kind hinted[] = { PF_RECON_GAUSSIAN, PF_RECON_NEAREST };
    return grid_hints ? hinted[pf_rng_below(r, 2)] : all[pf_rng_below(r, 3)];
}

double pf_gdraw_frac(pf_rng *r)
{
    return pf_rng_range(r, PF_G_FRAC_LO, PF_G_FRAC_HI);
}

double pf_gdraw_sigma(pf_rng *r)
{
    return pf_rng_range(r, PF_G_SIGMA_LO, PF_G_SIGMA_HI);
}

double pf_gdraw_sigma_imp(pf_rng *r)
{
    return pf_rng_range(r, PF_G_SIGMA_IMP_LO, PF_G_SIGMA_IMP_HI);
}

int pf_gdraw_k(pf_rng *r)
{
    return pf_rng_pick(r, ks, 5);
}

int pf_gdraw_step(pf_rng *r)
{
    return pf_rng_pick(r, steps, 6);
}

/* ---- foreach templates ---- */

/* The template numbers of paper-apps.md §9 (1..6). */
enum { T_IMPORTANCE = 1, T_GRID_STORE, T_GRID_ON_DEMAND, T_ADAPTIVE, T_IMPORTANCE_DEF,
       T_IMPORTANCE_SIGMA };

static bool template_fits(const pf_genome_ctx *c, const pf_perforable *info, int t)
{
    bool serial = info->kind == PF_PERFORABLE_SERIAL_STAGE;
    bool importance = info->genes & (1u << PF_GENE_IMPORTANCE);
    switch (t) {
    case T_GRID_STORE: return true;
    case T_GRID_ON_DEMAND: return serial || info->on_demand;
    case T_ADAPTIVE:
        return c->p.mode == PF_MODE_FULL && (info->genes & (1u << PF_GENE_ADAPTIVE));
    default: return c->p.mode == PF_MODE_FULL && importance;
    }
}

static void grid_gene(const pf_perforable *info, pf_rng *r, pf_approx_gene *g)
{
    g->kind = PF_GENE_GRID;
    g->n_spacing = info->n_vars;
    for (int d = 0; d < info->n_vars; d++)
        g->spacing[d] = 1;
    for (int d = 0; d < pf_gdraw_spacing_dims(info); d++)
        pf_gdraw_spacing(r, d, g);
    g->channels = pf_gdraw_channels(info, r);
}

static void importance_gene(pf_rng *r, double sigma_imp, pf_approx_gene *g)
{
    g->kind = PF_GENE_IMPORTANCE;
    g->frac = pf_gdraw_frac(r);
    g->sigma_imp = sigma_imp;
}

/* Fills template t; `hints` fixes the sigmas the released hints fix. */
static void fill_template(const pf_perforable *info, pf_rng *r, int t, bool hints,
                          pf_approx_gene *g)
{
    switch (t) {
    case T_IMPORTANCE:
        importance_gene(r, pf_gdraw_sigma_imp(r), g);
        g->channels = pf_gdraw_channels(info, r);
        g->recon = hints ? PF_RECON_GAUSSIAN_SV : pf_gdraw_recon(r, false);
        g->sigma = hints ? 0.73 : pf_gdraw_sigma(r);
        break;
    case T_GRID_STORE:
        grid_gene(info, r, g);
        g->recon = pf_gdraw_recon(r, hints);
        g->sigma = hints ? 0.3 : pf_gdraw_sigma(r);
        break;
    case T_GRID_ON_DEMAND:
        grid_gene(info, r, g);
        g->recon = PF_RECON_LINEAR;
        g->on_demand = true;
        break;
    case T_ADAPTIVE:
        g->kind = PF_GENE_ADAPTIVE;
        g->frac = pf_gdraw_frac(r);
        g->k = pf_gdraw_k(r);
        g->recon = PF_RECON_GAUSSIAN_SV;
        g->sigma = hints ? 0.9 : pf_gdraw_sigma(r);
        break;
    case T_IMPORTANCE_DEF:
        importance_gene(r, 1.0 / 64, g);
        g->recon = pf_gdraw_recon(r, false);
        g->sigma = 0.5;
        break;
    default: /* T_IMPORTANCE_SIGMA */
        importance_gene(r, 1.0 / 64, g);
        g->recon = pf_gdraw_recon(r, false);
        g->sigma = pf_gdraw_sigma(r);
        break;
    }
}

/* Serial (scatter) stages take no reconstruction and no channel subsampling. */
static void strip_for_serial(pf_approx_gene *g)
{
    g->recon = PF_RECON_NONE;
    g->sigma = 0.0;
    g->on_demand = false;
    g->channels = 0;
}

static void foreach_gene(const pf_genome_ctx *c, pf_rng *r, const pf_perforable *info,
                         pf_approx_gene *g)
{
    int fits[6], n = 0;
    for (int t = T_IMPORTANCE; t <= T_IMPORTANCE_SIGMA; t++)
        if (template_fits(c, info, t))
            fits[n++] = t;
    fill_template(info, r, fits[pf_rng_below(r, n)], c->p.hints, g);
    if (info->kind == PF_PERFORABLE_SERIAL_STAGE)
        strip_for_serial(g);
}

/* ---- for templates (also foreach loops in loop mode) ---- */

void pf_gset_contiguous(double f, pf_approx_gene *g)
{
    g->kind = f > 0 ? PF_GENE_FIRST : PF_GENE_LAST;
    g->frac = fabs(f);
}

static void for_gene(pf_rng *r, pf_approx_gene *g)
{
    switch (pf_rng_below(r, 3)) {
    case 0: pf_gset_contiguous(pf_rng_range(r, -1.0, 1.0), g); break;
    case 1:
        g->kind = PF_GENE_STEP;
        g->step = pf_gdraw_step(r);
        break;
    default:
        g->kind = PF_GENE_RANDOM;
        g->frac = pf_gdraw_frac(r);
        break;
    }
}

bool pf_genome_loop_uses_for_templates(const pf_genome_ctx *c, int loop)
{
    return c->info[loop].kind == PF_PERFORABLE_FOR || c->p.mode == PF_MODE_LOOP;
}

#define GENE_TRIES 64

void pf_genome_random_gene(const pf_genome_ctx *c, pf_rng *r, int loop, pf_approx_gene *out)
{
    const pf_perforable *info = &c->info[loop];
    for (int attempt = 0; attempt < GENE_TRIES; attempt++) {
        memset(out, 0, sizeof *out);
        if (pf_genome_loop_uses_for_templates(c, loop))
            for_gene(r, out);
        else
            foreach_gene(c, r, info, out);
        if (pf_gene_validate(c->prog, loop, out, NULL) == 0)
            return;
    }
    memset(out, 0, sizeof *out);  /* no template fits: the loop stays exact */
}
