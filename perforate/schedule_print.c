/* Printing a schedule as its canonical text (docs/schedule.md, "Canonical form"): the search
 * keys its evaluation cache on this text, so it is a function of the canonical projection only
 * (pf_gene_canonical) and never of how the schedule was written. */
#include "perforate/schedule.h"

#include "perforate/exec.h"

static void print_recon(const pf_approx_gene *g, pf_strbuf *out)
{
    if (g->recon == PF_RECON_NONE)
        return;
    pf_sb_printf(out, " reconstruct %s %s", g->on_demand ? "on-demand" : "store",
                 pf_recon_name(g->recon));
    if (g->recon == PF_RECON_GAUSSIAN || g->recon == PF_RECON_GAUSSIAN_SV)
        pf_sb_printf(out, " %.6g", g->sigma);
}

static void print_sampling_clauses(const pf_approx_gene *g, pf_strbuf *out)
{
    if (g->channels)
        pf_sb_printf(out, " channels %d", g->channels);
    print_recon(g, out);
}

void pf_gene_print(const pf_approx_gene *gene, pf_strbuf *out)
{
    pf_approx_gene g;
    pf_gene_canonical(gene, &g);
    switch (g.kind) {
    case PF_GENE_EXACT: return;
    case PF_GENE_GRID:
        pf_sb_puts(out, "grid");
        for (int d = 0; d < g.n_spacing && d < PF_BUFFER_MAX_DIMS; d++)
            pf_sb_printf(out, " %d", g.spacing[d]);
        break;
    case PF_GENE_ADAPTIVE: pf_sb_printf(out, "adaptive %d %.6g", g.k, g.frac); break;
    case PF_GENE_IMPORTANCE:
        pf_sb_printf(out, "importance %.6g %.6g", g.frac, g.sigma_imp);
        break;
    case PF_GENE_CHANNELS: pf_sb_printf(out, "channels %d", g.channels); return;
    case PF_GENE_STEP: pf_sb_printf(out, "step %d", g.step); return;
    case PF_GENE_FIRST:
    case PF_GENE_LAST:
    case PF_GENE_RANDOM:
        pf_sb_printf(out, "%s %.6g", pf_gene_kind_name(g.kind), g.frac);
        return;
    default: pf_sb_printf(out, "<gene kind %d>", (int)g.kind); return;
    }
    print_sampling_clauses(&g, out);
}

void pf_schedule_print(const pf_program *prog, const pf_schedule *s, pf_strbuf *out)
{
    pf_sb_printf(out, "# perfora schedule %d\n", PF_SCHEDULE_VERSION);
    for (int i = 0; i < s->n_loops && i < prog->n_loops; i++) {
        const pf_approx_gene *g = &s->approx[i];
        if (g->kind != PF_GENE_EXACT) {
            pf_sb_printf(out, "%s ", prog->loops[i].name);
            pf_gene_print(g, out);
            pf_sb_putc(out, '\n');
        }
        const pf_loop_info *li = &prog->loops[i];
        if (li->kind == PF_LOOP_STAGE && li->stage->index < s->n_stages &&
            s->exec[li->stage->index].set) {
            pf_sb_printf(out, "%s exec ", li->name);
            pf_exec_print(prog, li->stage->index, &s->exec[li->stage->index], out);
            pf_sb_putc(out, '\n');
        }
    }
}
