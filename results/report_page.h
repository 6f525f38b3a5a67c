/* The report page's sections and HTML helpers, shared by report_page.c (skeleton, summary,
 * plots), report_table.c (variants, pictures) and report_facts.c (the run's facts). */
#ifndef PF_RESULTS_REPORT_PAGE_H
#define PF_RESULTS_REPORT_PAGE_H

#include "results/report_internal.h"

void pf_html_printf(pf_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A canvas as inline SVG, then freed (nothing for NULL). */
void pf_html_svg(pf_strbuf *sb, pf_canvas *c);

/* The whole page (XHTML-compatible HTML5) for runs[0] with runs[1..n-1] compared. */
void pf_report_page(pf_report_run *const *runs, int n, const pf_program *prog,
                    const pf_report_images *imgs, pf_strbuf *out);

void pf_report_variants_section(const pf_report_run *r, const pf_program *prog,
                                const pf_report_images *imgs, pf_strbuf *sb);
void pf_report_pictures_section(const pf_report_run *r, const pf_report_images *imgs,
                                pf_strbuf *sb);
void pf_report_facts_section(pf_report_run *const *runs, int n, pf_strbuf *sb);

#endif
