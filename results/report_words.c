/* A schedule in words for the report's table, from the parsed pf_schedule (not its text):
 *
 *   loop_temp grid 1 4 1 reconstruct on-demand linear
 *     -> "stage loop_temp: all columns, every 4th row, reconstructed on demand, linear"
 *   loop_output exec tile 64 16 vectorize 8 parallel
 *     -> "stage loop_output: exact; execution: in tiles of 64 x 16, as 8-lane vectors, in
 *         parallel"
 *
 * Dimension 0 of a stage's image is its columns and dimension 1 its rows; the last variable of
 * a per-channel loop (pf_stage_channel_loop) is its channels; other variables are named. */
#include "results/report_page.h"

#include "perforate/exec.h"
#include "perforate/schedule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *ordinal(int n)
{
    int t = n % 100;
    return t >= 11 && t <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd"
                                     : n % 10 == 3 ? "rd" : "th";
}

/* The word for the values of stage variable d (plural when `many`). */
static void dim_word(const pf_stage *st, int d, bool many, pf_strbuf *sb)
{
    int dims = st->image && st->image->image ? st->image->image->ndims : st->n_vars;
    if (dims >= 2 && d == 0)
        pf_sb_puts(sb, many ? "columns" : "column");
    else if (dims >= 2 && d == 1)
        pf_sb_puts(sb, many ? "rows" : "row");
    else if (d == st->n_vars - 1 && pf_stage_channel_loop(st))
        pf_sb_puts(sb, many ? "channels" : "channel");
    else
        pf_sb_printf(sb, "%s", st->var_names[d]);
}

/* "all rows" or "every 4th row". */
static void every(const pf_stage *st, int d, int s, pf_strbuf *sb)
{
    if (s == 1) {
        pf_sb_puts(sb, "all ");
        dim_word(st, d, true, sb);
        return;
    }
    pf_sb_printf(sb, "every %d%s ", s, ordinal(s));
    dim_word(st, d, false, sb);
}

static void grid_words(const pf_stage *st, const pf_approx_gene *g, pf_strbuf *sb)
{
    for (int d = 0; d < g->n_spacing; d++) {
        if (g->spacing[d] == 1 && d == st->n_vars - 1 && d >= 2 && pf_stage_channel_loop(st))
            continue;  /* "all channels" says nothing */
        if (d)
            pf_sb_puts(sb, ", ");
        every(st, d, g->spacing[d], sb);
    }
}

static void recon_words(const pf_approx_gene *g, bool output, pf_strbuf *sb)
{
    if (g->recon == PF_RECON_NONE) {
        pf_sb_puts(sb, ", skipped samples not reconstructed (a scatter stage)");
        return;
    }
    if (g->on_demand)
        pf_sb_printf(sb, ", reconstructed on demand%s", output ? " (done after the stage: a "
                                                                 "pipeline output is whole)" : "");
    else
        pf_sb_puts(sb, ", reconstructed after the stage");
    switch (g->recon) {
    case PF_RECON_NEAREST: pf_sb_puts(sb, ", nearest"); break;
    case PF_RECON_LINEAR: pf_sb_puts(sb, ", linear"); break;
    case PF_RECON_GAUSSIAN: pf_sb_printf(sb, ", Gaussian (sigma %g)", g->sigma); break;
    case PF_RECON_GAUSSIAN_SV:
        pf_sb_printf(sb, ", spatially varying Gaussian (sigma %g)", g->sigma);
        break;
    default: break;
    }
}

static const char *ref_name(const pf_perforable *info)
{
    return info->ref ? info->ref->name : "the reference image";
}

/* Loop perforation of a stage's row variable or of a for loop. */
static void perforation_words(const pf_approx_gene *g, const char *what, const char *one,
                              pf_strbuf *sb)
{
    switch (g->kind) {
    case PF_GENE_STEP: pf_sb_printf(sb, "every %d%s %s", g->step, ordinal(g->step), one); break;
    case PF_GENE_FIRST: pf_sb_printf(sb, "the first %.3g%% of the %s", 100 * g->frac, what); break;
    case PF_GENE_LAST: pf_sb_printf(sb, "the last %.3g%% of the %s", 100 * g->frac, what); break;
    case PF_GENE_RANDOM:
        pf_sb_printf(sb, "each %s kept with probability %.3g (hashed)", one, g->frac);
        break;
    default: break;
    }
}

static void sampling_words(const pf_program *prog, int loop, const pf_approx_gene *g,
                           pf_strbuf *sb)
{
    const pf_stage *st = prog->loops[loop].stage;
    pf_perforable info;
    pf_perforable_info(prog, loop, &info);
    if (g->kind == PF_GENE_GRID)
        grid_words(st, g, sb);
    else if (g->kind == PF_GENE_ADAPTIVE)
        pf_sb_printf(sb, "adaptive: a coarse sample every %d%s pixel, refined where they "
                     "differ most to %.3g%% of the pixels", g->k, ordinal(g->k), 100 * g->frac);
    else if (g->kind == PF_GENE_IMPORTANCE)
        pf_sb_printf(sb, "importance: %.3g%% of the pixels, denser where %s has detail (map "
                     "blurred by %.3g of the height)", 100 * g->frac, ref_name(&info),
                     g->sigma_imp);
    if (g->channels) {
        pf_sb_puts(sb, g->kind == PF_GENE_CHANNELS ? "" : ", ");
        if (g->channels == 1)
            pf_sb_puts(sb, "only channel 0 computed");
        else
            pf_sb_printf(sb, "only channels 0..%d computed", g->channels - 1);
        pf_sb_printf(sb, ", the others copied from %s", ref_name(&info));
    }
    if (g->kind != PF_GENE_CHANNELS)
        recon_words(g, info.output, sb);
}

static void approx_words(const pf_program *prog, int loop, const pf_approx_gene *g,
                         pf_strbuf *sb)
{
    const pf_loop_info *li = &prog->loops[loop];
    if (li->kind == PF_LOOP_FOR) {
        pf_sb_printf(sb, "loop %s (in stage %s): ", li->name, li->stage->name);
        perforation_words(g, "iterations", "iteration", sb);
        return;
    }
    pf_sb_printf(sb, "stage %s: ", li->name);
    if (g->kind >= PF_GENE_STEP) {
        const pf_stage *st = li->stage;
        pf_strbuf rows, row;
        pf_sb_init(&rows);
        pf_sb_init(&row);
        dim_word(st, st->n_vars >= 2 ? 1 : 0, true, &rows);
        dim_word(st, st->n_vars >= 2 ? 1 : 0, false, &row);
        perforation_words(g, pf_sb_str(&rows), pf_sb_str(&row), sb);
        pf_sb_puts(sb, ", the others not computed (loop perforation)");
        pf_sb_free(&rows);
        pf_sb_free(&row);
        return;
    }
    sampling_words(prog, loop, g, sb);
}

/* The name of loop `id` of a reorder: a stage variable, or a tile loop (its variable + "o"). */
static void order_name(const pf_stage *st, int id, pf_strbuf *sb)
{
    if (id >= PF_EXEC_TILE_LOOP(0))
        pf_sb_printf(sb, "%so", st->var_names[id - PF_EXEC_TILE_LOOP(0)]);
    else
        pf_sb_puts(sb, st->var_names[id]);
}

static void exec_words(const pf_program *prog, int stage, const pf_exec_gene *g, pf_strbuf *sb)
{
    const pf_stage *st = prog->stages[stage];
    size_t start = sb->len;
#define SEP (sb->len > start ? ", " : "")
    if (g->at == PF_EXEC_INLINE)
        pf_sb_puts(sb, "inlined into every read of its image");
    else if (g->at >= 0)
        pf_sb_printf(sb, "%s inside the tiles of %s%s", g->slide ? "computed row by row"
                     : "computed", prog->stages[g->at]->name, g->slide ? " (a sliding window)"
                     : " (its halo recomputed)");
    if (g->tile[0] && g->tile[1])
        pf_sb_printf(sb, "%sin tiles of %d x %d", SEP, g->tile[0], g->tile[1]);
    else if (g->tile[0])
        pf_sb_printf(sb, "%sin strips of %d columns", SEP, g->tile[0]);
    if (g->n_order) {
        pf_sb_printf(sb, "%sloops (innermost first) ", SEP);
        for (int i = 0; i < g->n_order; i++) {
            if (i)
                pf_sb_putc(sb, ' ');
            order_name(st, g->order[i], sb);
        }
    }
    if (g->vectorize)
        pf_sb_printf(sb, "%sas %d-lane vectors", SEP, g->vectorize);
    if (g->parallel)
        pf_sb_printf(sb, "%sin parallel", SEP);
    if (g->unroll)
        pf_sb_printf(sb, "%sinner loop unrolled %d times", SEP, g->unroll);
    if (sb->len == start)
        pf_sb_puts(sb, "computed whole, one loop nest after another (root)");
#undef SEP
}

typedef void (*item_fn)(pf_strbuf *out, const char *line);

/* One item per approximated loop (with its stage's execution gene when it has one), then one
 * per stage scheduled but not approximated. */
static void genes(const pf_program *prog, const pf_schedule *s, item_fn item, pf_strbuf *out)
{
    pf_strbuf line;
    pf_sb_init(&line);
    bool any = false;
    for (int l = 0; l < s->n_loops; l++) {
        const pf_loop_info *li = &prog->loops[l];
        bool stage = li->kind == PF_LOOP_STAGE;
        const pf_exec_gene *e = stage ? &s->exec[li->stage->index] : NULL;
        if (s->approx[l].kind == PF_GENE_EXACT && !(e && e->set))
            continue;
        pf_sb_clear(&line);
        if (s->approx[l].kind != PF_GENE_EXACT)
            approx_words(prog, l, &s->approx[l], &line);
        else
            pf_sb_printf(&line, "stage %s: exact", li->name);
        if (e && e->set) {
            pf_sb_puts(&line, "; execution: ");
            exec_words(prog, li->stage->index, e, &line);
        }
        item(out, pf_sb_str(&line));
        any = true;
    }
    if (!any)
        item(out, "the exact program, every stage with the default execution schedule");
    pf_sb_free(&line);
}

static void genes_of_text(const pf_program *prog, const char *text, item_fn item, pf_strbuf *out)
{
    pf_schedule s;
    pf_error err;
    if (pf_schedule_parse(prog, text, "<schedule>", &s, &err) != 0) {
        char buf[PF_ERROR_MAX + 64];
        snprintf(buf, sizeof buf, "(this perfora cannot read the schedule: %s)", err.msg);
        item(out, buf);
    } else {
        genes(prog, &s, item, out);
    }
    pf_schedule_free(&s);
}

static void html_item(pf_strbuf *out, const char *line)
{
    pf_sb_puts(out, "<li>");
    pf_xml_escape(out, line);
    pf_sb_puts(out, "</li>");
}

static void text_item(pf_strbuf *out, const char *line)
{
    if (out->len)
        pf_sb_putc(out, '\n');
    pf_sb_puts(out, line);
}

void pf_report_genes_html(const pf_program *prog, const char *s, pf_strbuf *out)
{
    pf_sb_puts(out, "<ul class=\"genes\">");
    genes_of_text(prog, s, html_item, out);
    pf_sb_puts(out, "</ul>");
}

void pf_report_genes_text(const pf_program *prog, const char *s, pf_strbuf *out)
{
    genes_of_text(prog, s, text_item, out);
}
