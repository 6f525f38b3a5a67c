/* Shared by the genome's files (genome.c: templates; genome_ops.c: mutation and crossover;
 * genome_exec.c: execution genes): the released parameter ranges and their draws. */
#ifndef PF_SEARCH_GENOME_INTERNAL_H
#define PF_SEARCH_GENOME_INTERNAL_H

#include "base/arena.h"
#include "search/genome.h"

#include <stdlib.h>

/* paper-apps.md §9, "Gene parameter ranges". */
#define PF_G_FRAC_LO 0.025
#define PF_G_FRAC_HI 0.95
#define PF_G_SIGMA_LO 0.25
#define PF_G_SIGMA_HI 3.0
#define PF_G_SIGMA_IMP_LO (1.0 / 150)
#define PF_G_SIGMA_IMP_HI (1.0 / 32)
/* A mutated float moves by at most this fraction of its range. */
#define PF_G_NUDGE 0.1
/* The largest grid spacing and step the templates draw (genome.c's tables). */
#define PF_G_SPACING_MAX 8
#define PF_G_STEP_MAX 16

void pf_gdraw_spacing(pf_rng *r, int d, pf_approx_gene *g);
int pf_gdraw_spacing_dims(const pf_perforable *info);
int pf_gdraw_channels(const pf_perforable *info, pf_rng *r);
pf_recon_kind pf_gdraw_recon(pf_rng *r, bool grid_hints);
double pf_gdraw_frac(pf_rng *r);
double pf_gdraw_sigma(pf_rng *r);
double pf_gdraw_sigma_imp(pf_rng *r);
int pf_gdraw_k(pf_rng *r);
int pf_gdraw_step(pf_rng *r);
/* Contiguous perforation from the released signed fraction: f > 0 keeps the first f, f < 0
 * the last |f|. */
void pf_gset_contiguous(double f, pf_approx_gene *g);
/* The loop draws for-loop templates (a for loop, or any loop in loop mode). */
bool pf_genome_loop_uses_for_templates(const pf_genome_ctx *c, int loop);

/* Execution genes (genome_exec.c). */
bool pf_genome_exec_enabled(const pf_genome_ctx *c);
void pf_genome_mutate_exec(const pf_genome_ctx *c, pf_rng *r, pf_schedule *s);
/* A CPU execution gene that computes its stage at the root, in parallel, at `lanes` lanes. */
pf_exec_gene pf_genome_root_gene(int lanes);

#endif
