/* The text form of a plan (pf_plan_print): what `perfora run --dump plan` shows and the golden
 * files of tests/perforate hold. One line per fact, so a diff names what changed. */
#include "perforate/plan.h"

#include "perforate/exec.h"

static const char *sample_name(pf_sample_kind k)
{
    static const char *names[] = { "all", "grid", "adaptive", "importance", "loop" };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static void print_perf(const pf_loop_perf *p, pf_strbuf *out)
{
    switch (p->kind) {
    case PF_PERF_STEP: pf_sb_printf(out, "step %d", p->step); break;
    case PF_PERF_FIRST: pf_sb_printf(out, "first %.9g", p->frac); break;
    case PF_PERF_LAST: pf_sb_printf(out, "last %.9g", p->frac); break;
    case PF_PERF_RANDOM: pf_sb_printf(out, "random %.9g (hash seed %d)", p->frac, p->id); break;
    }
}

static void print_approx(const pf_stage *st, const pf_stage_approx *a, pf_strbuf *out)
{
    if (!a) {
        pf_sb_puts(out, "exact");
        return;
    }
    pf_sb_printf(out, "sample %s", sample_name(a->sample));
    switch (a->sample) {
    case PF_SAMPLE_GRID:
        for (int d = 0; d < st->n_vars; d++)
            pf_sb_printf(out, " %d", a->spacing[d]);
        break;
    case PF_SAMPLE_ADAPTIVE: pf_sb_printf(out, " k %d frac %.9g", a->k, a->frac); break;
    case PF_SAMPLE_IMPORTANCE:
        pf_sb_printf(out, " frac %.9g sigma %.9g", a->frac, a->sigma_imp);
        break;
    case PF_SAMPLE_LOOP: pf_sb_putc(out, ' '); print_perf(&a->perf, out); break;
    case PF_SAMPLE_ALL: break;
    }
    if (a->channels > 0)
        pf_sb_printf(out, ", channels %d", a->channels);
    if (a->recon != PF_RECON_NONE) {
        pf_sb_printf(out, ", reconstruct %s %s", a->on_demand ? "on-demand" : "store",
                     pf_recon_name(a->recon));
        if (a->recon == PF_RECON_GAUSSIAN || a->recon == PF_RECON_GAUSSIAN_SV)
            pf_sb_printf(out, " %.9g", a->sigma);
    }
    if (a->ref)
        pf_sb_printf(out, ", reference %s", a->ref->name);
}

static void print_stage(const pf_plan *p, int i, pf_strbuf *out)
{
    const pf_program *prog = p->prog;
    const pf_stage *st = prog->stages[i];
    const pf_plan_stage *ps = &p->stages[i];
    pf_sb_printf(out, "stage %s: ", st->name);
    print_approx(st, ps->approx, out);
    pf_sb_printf(out, "\n  exec %s: ", ps->exec_given ? "(schedule)" : "(default)");
    pf_exec_print(prog, i, &ps->exec, out);
    if (ps->exec.slide)
        pf_sb_printf(out, " (rows y%+d .. y%+d)", ps->slide_lo, ps->slide_hi);
    pf_sb_putc(out, '\n');
    if (ps->scratch_ok || ps->tile_fill_ok)
        pf_sb_printf(out, "  %s%s%s\n", ps->scratch_ok ? "scratch window if computed at" : "",
                     ps->scratch_ok && ps->tile_fill_ok ? ", " : "",
                     ps->tile_fill_ok ? "fill per tile if tiled" : "");
}

void pf_plan_print(const pf_plan *p, pf_strbuf *out)
{
    const pf_program *prog = p->prog;
    if (p->target.gpu)
        pf_sb_printf(out, "plan of %s for a GPU\n", prog->name);
    else
        pf_sb_printf(out, "plan of %s for %d-lane vectors\n", prog->name, p->target.vector_lanes);
    int lines = 0;
    for (const char *c = p->schedule; *c;) {  /* the schedule's genes, as comments */
        const char *nl = c;
        while (*nl && *nl != '\n')
            nl++;
        if (*c != '#') {
            pf_sb_puts(out, "# ");
            pf_sb_putn(out, c, (size_t)(nl - c));
            pf_sb_putc(out, '\n');
            lines++;
        }
        c = *nl ? nl + 1 : nl;
    }
    if (!lines)
        pf_sb_puts(out, "# (an exact schedule)\n");
    for (int i = 0; i < prog->n_stages; i++)
        print_stage(p, i, out);
    for (int l = 0; l < prog->n_loops; l++)
        if (p->loops[l]) {
            pf_sb_printf(out, "loop %s: ", prog->loops[l].name);
            print_perf(&p->loops[l]->perf, out);
            pf_sb_putc(out, '\n');
        }
    for (int i = 0; i < prog->n_images; i++)
        if (p->on_demand[i])
            pf_sb_printf(out, "image %s: stored downsampled by %s; later stages' reads "
                         "interpolate\n", prog->images[i]->name, p->on_demand[i]->name);
}
