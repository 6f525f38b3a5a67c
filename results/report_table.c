/* The page's table of frontier variants (genes in words, speed and error on both splits,
 * PSNR, SSIM, the timing's spread) and their pictures on one test photo. */
#include "results/report_page.h"

#include "base/arena.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void speed_error(const pf_eval_record *r, pf_strbuf *sb)
{
    if (!r) {
        pf_sb_puts(sb, "<td colspan=\"2\">not measured yet</td>");
        return;
    }
    if (!r->valid) {
        pf_sb_puts(sb, "<td colspan=\"2\" class=\"bad\">invalid: ");
        pf_xml_escape(sb, r->reason ? r->reason : "no reason recorded");
        pf_sb_puts(sb, "</td>");
        return;
    }
    pf_sb_printf(sb, "<td class=\"num\">%.2f\xC3\x97</td><td class=\"num\">%.3g</td>",
                 1 / r->time, r->error);
}

/* The record's relative time, its range over the images, and the per-sample range when the
 * records carry one (else how many samples each image's median took). */
static void spread(const pf_eval_record *r, const pf_report_extra *x, pf_strbuf *sb)
{
    if (!r || !r->valid) {
        pf_sb_puts(sb, "<td></td>");
        return;
    }
    double lo, hi;
    pf_report_rel_spread(r, &lo, &hi);
    pf_sb_printf(sb, "<td class=\"num spread\">%#.3g<br/><small>", r->time);
    if (r->n_images > 1)
        pf_sb_printf(sb, "images %.3g\xE2\x80\x93%.3g<br/>", lo, hi);
    int samples = r->n_images ? r->images[0].samples : 0;
    if (x && !isnan(x->spread_lo))
        pf_sb_printf(sb, "samples %.3g\xE2\x80\x93%.3g", x->spread_lo, x->spread_hi);
    else if (samples)
        pf_sb_printf(sb, "median of %d sample%s", samples, samples == 1 ? "" : "s");
    pf_sb_puts(sb, "</small></td>");
}

static void quality_cells(const pf_eval_record *te, const pf_eval_record *tr, pf_strbuf *sb)
{
    const pf_eval_record *r = te && te->valid ? te : tr;
    const char *mark = r == tr ? " (training)" : "";
    if (!r || !r->valid || isnan(r->psnr)) {
        pf_sb_puts(sb, "<td></td><td></td>");
        return;
    }
    if (r->psnr >= 100)  /* evaluate.c caps it: identical 8-bit outputs */
        pf_sb_printf(sb, "<td class=\"num\">identical%s</td>", mark);
    else
        pf_sb_printf(sb, "<td class=\"num\">%.1f dB%s</td>", r->psnr, mark);
    pf_sb_printf(sb, "<td class=\"num\">%.4f%s</td>", r->ssim, mark);
}

static void variant_row(const pf_report_run *r, const pf_program *prog, int k,
                        const pf_report_images *imgs, pf_strbuf *sb)
{
    const pf_eval_record *tr = &r->recs[r->front[k]];
    const pf_eval_record *te = r->test[k] >= 0 ? &r->recs[r->test[k]] : NULL;
    pf_sb_printf(sb, "<tr id=\"variant-%d\"><td class=\"name\"><strong>variant %d</strong><br/>"
                 "<small>frontier/variant-%03d.sched</small>", k, k, k);
    if (imgs && !imgs->skipped)
        pf_sb_printf(sb, "<br/><a href=\"#shot-%d\">pictures</a>", k);
    pf_sb_puts(sb, "</td><td class=\"genes\">");
    if (prog)
        pf_report_genes_html(prog, tr->schedule, sb);
    pf_sb_puts(sb, "<details><summary>schedule</summary><pre>");
    pf_xml_escape(sb, tr->schedule);
    pf_sb_puts(sb, "</pre></details></td>");
    speed_error(tr, sb);
    speed_error(te, sb);
    quality_cells(te, tr, sb);
    spread(te && te->valid ? te : tr, te && te->valid ? &r->extra[r->test[k]]
                                                      : &r->extra[r->front[k]], sb);
    pf_sb_printf(sb, "<td class=\"num\">%d</td></tr>\n", tr->generation);
}

void pf_report_variants_section(const pf_report_run *r, const pf_program *prog,
                                const pf_report_images *imgs, pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"variants\"><h2>Frontier variants</h2>\n");
    if (r->n_front == 0) {
        pf_sb_puts(sb, "<p>No valid candidate has been measured yet.</p>\n</section>\n");
        return;
    }
    pf_sb_puts(sb, "<p class=\"caption\">The training frontier in order of training error. "
               "Speedup is over the exact program; error is the mean CIE76 \xCE\x94" "E in Lab "
               "units; PSNR and SSIM are on the test images (or the training images where "
               "marked). Relative time is the candidate's time over the exact program's, "
               "per image the median of paired samples, then averaged over the images; the "
               "range is over the images.</p>\n<table class=\"variants\">\n"
               "<tr><th rowspan=\"2\">variant</th>"
               "<th rowspan=\"2\">what it does</th><th colspan=\"2\">training images</th>"
               "<th colspan=\"2\">test images</th><th rowspan=\"2\">PSNR</th>"
               "<th rowspan=\"2\">SSIM</th><th rowspan=\"2\">relative time</th>"
               "<th rowspan=\"2\">gene&#173;ration</th></tr>\n<tr><th>speedup</th>"
               "<th>error</th><th>speedup</th><th>error</th></tr>\n");
    for (int k = 0; k < r->n_front; k++)
        variant_row(r, prog, k, imgs, sb);
    pf_sb_puts(sb, "</table>\n</section>\n");
}

/* ---- pictures ---- */

static void picture(pf_strbuf *sb, const char *file, const char *cls, const char *alt,
                    const char *caption)
{
    pf_sb_puts(sb, "<figure><a href=\"");
    pf_xml_escape(sb, file);
    pf_sb_puts(sb, "\"><img src=\"");
    pf_xml_escape(sb, file);
    pf_sb_printf(sb, "\" class=\"%s\" alt=\"", cls);
    pf_xml_escape(sb, alt);
    pf_sb_puts(sb, "\"/></a><figcaption>");
    pf_xml_escape(sb, caption);
    pf_sb_puts(sb, "</figcaption></figure>\n");
}

static void shot_row(const pf_report_run *r, const pf_report_images *im, int k, pf_strbuf *sb)
{
    const pf_report_shot *s = &im->shots[k];
    const pf_eval_record *tr = &r->recs[r->front[k]];
    pf_sb_printf(sb, "<h3 id=\"shot-%d\">variant %d: %.2f\xC3\x97 faster, error %.3g "
                 "(training images)</h3>\n", k, k, 1 / tr->time, tr->error);
    if (s->failed) {
        pf_sb_puts(sb, "<p class=\"bad\">No pictures: ");
        pf_xml_escape(sb, s->failed);
        pf_sb_puts(sb, "</p>\n");
        return;
    }
    char cap[256], alt[128];
    pf_sb_puts(sb, "<div class=\"shots\">\n");
    picture(sb, im->exact_file, "photo", "the exact program's output", "exact program");
    snprintf(alt, sizeof alt, "variant %d's output", k);
    picture(sb, s->file, "photo", alt, alt);
    snprintf(alt, sizeof alt, "variant %d's error map", k);
    if (isnan(s->recorded_de))
        snprintf(cap, sizeof cap, "error map: mean %.3g on this photo", s->mean_de);
    else
        snprintf(cap, sizeof cap, "error map: mean %.3g on this photo (the run measured %.3g)",
                 s->mean_de, s->recorded_de);
    picture(sb, s->error_file, "map", alt, cap);
    pf_sb_puts(sb, "</div>\n");
}

void pf_report_pictures_section(const pf_report_run *r, const pf_report_images *im,
                                pf_strbuf *sb)
{
    pf_sb_puts(sb, "<section id=\"pictures\"><h2>Pictures</h2>\n");
    if (!im || im->skipped) {
        pf_sb_puts(sb, "<p>");
        pf_xml_escape(sb, im && im->skipped ? im->skipped : "No pictures.");
        pf_sb_puts(sb, "</p>\n</section>\n");
        return;
    }
    pf_sb_puts(sb, "<p class=\"caption\">");
    pf_html_printf(sb, "Every frontier variant run on one %s photo, %s (%dx%d), %s: the exact "
                   "program's output, the variant's output, and the variant's per-pixel error "
                   "(CIE76 \xCE\x94" "E in Lab on 8-bit outputs, as the search measures it) on "
                   "one colour scale for all variants; errors above its top take the top "
                   "colour. Click a picture for the full-size PNG.",
                   im->set == PF_SET_TEST ? "test" : "training", im->image, im->width, im->height,
                   im->n_outputs > 1 ? "its first output" : "its output");
    pf_sb_puts(sb, "</p>\n<figure>\n");
    pf_html_svg(sb, pf_report_heat_legend(im->top));
    pf_sb_puts(sb, "</figure>\n<div class=\"shots\">\n");
    picture(sb, im->input_file, "photo", "the input photo", "input photo");
    pf_sb_puts(sb, "</div>\n");
    for (int k = 0; k < im->n; k++)
        shot_row(r, im, k, sb);
    pf_sb_puts(sb, "</section>\n");
}
