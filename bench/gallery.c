/* bench_gallery: one variant per sampling strategy (grid, adaptive, importance, loop
 * perforation) on blur and on the bilateral filter, written as PNGs next to the exact output
 * with a per-pixel error heat map (paper-mode CIE76 Delta E, 0 black .. 10 and above white),
 * plus the schedules and a minimal index.html. Run through bench/gallery.sh.
 * Usage: bench_gallery OUT_DIR [PHOTO.png]. */
#include "bench/bench_util.h"

#include "base/fileio.h"
#include "dataset/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAT_MAX 10.0  /* Delta E mapped to the top of the colour ramp */

typedef struct variant {
    const char *app;       /* apps/APP.pf */
    const char *strategy;  /* file stem */
    const char *schedule;  /* text */
} variant;

static const variant variants[] = {
    { "blur", "grid",
      "loop_temp grid 4 1 1 reconstruct on-demand linear\n"
      "loop_output grid 4 4 1 reconstruct store linear\n" },
    { "blur", "adaptive", "loop_output adaptive 4 0.25\n" },
    { "blur", "importance", "loop_output importance 0.25 0.05\n" },
    { "blur", "loop_perforation", "loop_output step 2\n" },
    { "bilateral_filter", "grid", "loop_pixels grid 2 2 reconstruct store linear\n" },
    { "bilateral_filter", "adaptive", "loop_pixels adaptive 4 0.25\n" },
    { "bilateral_filter", "importance", "loop_pixels importance 0.25 0.05\n" },
    { "bilateral_filter", "loop_perforation", "loop_pixels step 2\n" },
};
#define N_VARIANTS (int)(sizeof variants / sizeof variants[0])

/* A black - red - yellow - white ramp of t in [0, 1]. */
static void heat(double t, float rgb[3])
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    rgb[0] = (float)fmin(1.0, 3.0 * t);
    rgb[1] = (float)fmin(1.0, fmax(0.0, 3.0 * t - 1.0));
    rgb[2] = (float)fmin(1.0, fmax(0.0, 3.0 * t - 2.0));
}

static pf_image *heat_map(const pf_image *de, pf_error *err)
{
    pf_image *img = pf_image_new(de->width, de->height, 3, err);
    if (!img)
        return NULL;
    for (int y = 0; y < de->height; y++)
        for (int x = 0; x < de->width; x++) {
            float rgb[3];
            heat(*pf_image_at(de, x, y, 0) / HEAT_MAX, rgb);
            for (int c = 0; c < 3; c++)
                *pf_image_at(img, x, y, c) = rgb[c];
        }
    return img;
}

static int save_in(const char *dir, const char *name, const pf_image *img, pf_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return pf_image_save(img, path, err);
}

/* Runs app under schedule text (NULL: exact) on in; returns the output. */
static pf_image *run_variant(bench_prog *bp, const char *text, pf_image *in, double *ms,
                             pf_error *err)
{
    const pf_plan *plan = bench_plan(bp, NULL, err);
    if (text) {
        char full[1024];
        snprintf(full, sizeof full, "# perfora schedule 1\n%s", text);
        plan = bench_plan_text(bp, full, err);
    }
    pf_variant *v = plan ? bench_compile(bp, plan, 1, false, err) : NULL;
    pf_image *out = v ? pf_image_new(in->width, in->height, 3, err) : NULL;
    double t[5];
    for (int r = 0; out && r < 5; r++) {
        double t0 = pf_now_ms();
        if (bench_run(v, in, out, err) != 0) {
            pf_image_free(out);
            out = NULL;
        }
        t[r] = pf_now_ms() - t0;
    }
    if (out)
        *ms = pf_median(t, 5);
    pf_variant_free(v);
    return out;
}

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '\n')
            fputs("<br>", f);
        else
            fputc(*s, f);
}

/* One app's section: reference, then a row per variant. */
static int gallery_app(const char *dir, const char *app, pf_image *in, FILE *html)
{
    char path[512], sub[1024];
    pf_error err;
    bench_prog bp;
    snprintf(path, sizeof path, "%s/apps/%s.pf", BENCH_SRC, app);
    snprintf(sub, sizeof sub, "%s/%s", dir, app);
    if (pf_mkdir_p(sub, &err) != 0 || bench_prog_load(&bp, path, &err) != 0) {
        fprintf(stderr, "bench_gallery: %s\n", err.msg);
        return -1;
    }
    double t_exact = 0;
    pf_image *ref = run_variant(&bp, NULL, in, &t_exact, &err);
    if (!ref || save_in(sub, "reference.png", ref, &err) != 0) {
        fprintf(stderr, "bench_gallery: %s: %s\n", app, err.msg);
        bench_prog_free(&bp);
        pf_image_free(ref);
        return -1;
    }
    fprintf(html, "<h2>%s</h2>\n<p>exact: %.2f ms (1 thread)</p>\n<table>\n"
            "<tr><th>strategy</th><th>output</th><th>error (&Delta;E 0..%g)</th>"
            "<th>numbers</th></tr>\n<tr><td>reference</td><td><img src=\"%s/reference.png\">"
            "</td><td></td><td>exact</td></tr>\n", app, t_exact, HEAT_MAX, app);
    printf("%-17s %-17s %9s %8s %10s  %s\n", app, "reference", "", "", "", "exact");
    for (int i = 0; i < N_VARIANTS; i++) {
        const variant *v = &variants[i];
        if (strcmp(v->app, app) != 0)
            continue;
        double ms = 0, lab = NAN;
        pf_image *out = run_variant(&bp, v->schedule, in, &ms, &err);
        pf_image *de = out ? pf_metric_lab_de76_map(out, ref, 1, &err) : NULL;
        pf_image *hm = de ? heat_map(de, &err) : NULL;
        char name[128], sched_path[1100];
        snprintf(sched_path, sizeof sched_path, "%s/%s.sched", sub, v->strategy);
        FILE *sf = fopen(sched_path, "w");
        if (sf) {
            fprintf(sf, "# perfora schedule 1\n%s", v->schedule);
            fclose(sf);
        }
        if (!hm || pf_metric_lab_de76_paper(out, ref, &lab, &err) != 0) {
            printf("%-17s %-17s n/a: %s\n", app, v->strategy, err.msg);
            fprintf(html, "<tr><td>%s</td><td colspan=3>n/a: ", v->strategy);
            html_escape(html, err.msg);
            fputs("</td></tr>\n", html);
        } else {
            snprintf(name, sizeof name, "%s.png", v->strategy);
            save_in(sub, name, out, &err);
            snprintf(name, sizeof name, "%s_error.png", v->strategy);
            save_in(sub, name, hm, &err);
            char one_line[256];
            bench_strcpy(one_line, sizeof one_line, v->schedule);
            for (char *q = one_line; *q; q++)
                if (*q == '\n')
                    *q = q[1] ? ';' : 0;
            printf("%-17s %-17s %7.2fms %7.2fx %10.3f  %s\n", app, v->strategy, ms,
                   t_exact / ms, lab, one_line);
            fprintf(html, "<tr><td>%s</td><td><img src=\"%s/%s.png\"></td>"
                    "<td><img src=\"%s/%s_error.png\"></td><td>%.2fx faster<br>mean "
                    "&Delta;E %.3f<br><code>", v->strategy, app, v->strategy, app,
                    v->strategy, t_exact / ms, lab);
            html_escape(html, v->schedule);
            fputs("</code></td></tr>\n", html);
        }
        pf_image_free(out);
        pf_image_free(de);
        pf_image_free(hm);
    }
    fputs("</table>\n", html);
    pf_image_free(ref);
    bench_prog_free(&bp);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        puts("usage: bench_gallery OUT_DIR [PHOTO.png]");
        return argc < 2 ? 2 : 0;
    }
    const char *dir = argv[1];
    const char *photo = argc > 2 ? argv[2] : BENCH_TRAIN "/man_made_55_820x614.png";
    pf_error err;
    pf_image *in = pf_mkdir_p(dir, &err) == 0 ? bench_photo(photo, 820, 614, &err) : NULL;
    if (!in) {
        fprintf(stderr, "bench_gallery: %s\n", err.msg);
        return 1;
    }
    save_in(dir, "input.png", in, &err);
    char index[1024];
    snprintf(index, sizeof index, "%s/index.html", dir);
    FILE *html = fopen(index, "w");
    if (!html) {
        fprintf(stderr, "bench_gallery: cannot write %s\n", index);
        pf_image_free(in);
        return 1;
    }
    fprintf(html, "<!doctype html>\n<meta charset=\"utf-8\">\n<title>perfora gallery</title>\n"
            "<style>img{width:410px;image-rendering:pixelated}td{vertical-align:top;"
            "font:13px sans-serif}</style>\n<h1>perfora gallery</h1>\n<p>input: ");
    html_escape(html, photo);
    fprintf(html, " (<a href=\"input.png\">input.png</a>). Heat maps: per-pixel CIE76 "
            "&Delta;E after the paper's 8-bit save, black 0, red, yellow, white &ge; %g.</p>\n",
            HEAT_MAX);
    printf("%-17s %-17s %9s %8s %10s  %s\n", "app", "strategy", "time", "speedup", "Lab err",
           "schedule");
    int rc = 0;
    rc |= gallery_app(dir, "blur", in, html);
    rc |= gallery_app(dir, "bilateral_filter", in, html);
    fclose(html);
    pf_image_free(in);
    printf("gallery: %s\n", index);
    return rc ? 1 : 0;
}
