/* perfora report: the HTML report of a search run (results/report.h; docs/report.md). Wiring
 * only: options, progress lines on stderr, the path written on stdout. */
#include "cli/cli.h"
#include "results/report.h"

#include <stdio.h>
#include <string.h>

static const char report_usage[] =
    "usage: perfora report RUN [--compare RUN2 ...] [--out DIR] [--no-images] [--quiet]\n"
    "  RUN              a run directory of perfora tune (finished, or still running)\n"
    "  --compare RUN2   overlay another run on the plots (e.g. a --mode loop run); repeatable\n"
    "  --out DIR        the report directory (default: RUN/report)\n"
    "  --no-images      no variant pictures (nothing is compiled)\n"
    "  --quiet          no progress lines\n"
    "Writes DIR/index.html (one page: inline SVG, PNGs beside it, no script), pareto.svg and\n"
    "pareto.png, and prints the page's path.\n";

#define REPORT_MAX_COMPARE 16

static void note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

int pf_cmd_report(int argc, char **argv)
{
    pf_report_options o = { 0 };
    const char *compare[REPORT_MAX_COMPARE];
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--help") == 0) {
            fputs(report_usage, stdout);
            return 0;
        } else if (strcmp(s, "--no-images") == 0) {
            o.no_images = true;
        } else if (strcmp(s, "--quiet") == 0) {
            quiet = true;
        } else if (strcmp(s, "--compare") == 0 && i + 1 < argc) {
            if (o.n_compare == REPORT_MAX_COMPARE)
                return pf_cli_usage("report", "at most %d --compare runs", REPORT_MAX_COMPARE);
            compare[o.n_compare++] = argv[++i];
        } else if (strcmp(s, "--out") == 0 && i + 1 < argc) {
            o.out = argv[++i];
        } else if (s[0] != '-' && !o.run) {
            o.run = s;
        } else {
            return pf_cli_usage("report", "unknown or incomplete option '%s'", s);
        }
    }
    if (!o.run)
        return pf_cli_usage("report", "which run? (perfora report RUN)");
    o.compare = compare;
    o.note = quiet ? NULL : note;
    pf_report_result res;
    pf_error err;
    if (pf_report_write(&o, &res, &err) != 0) {
        pf_cli_error("report: %s", err.msg);
        return 1;
    }
    printf("%s\n", res.index);
    if (res.in_progress && !quiet)
        fprintf(stderr, "report: the run is not finished; run perfora report again later\n");
    pf_report_result_free(&res);
    return 0;
}
