/* The report's variant images: the exact program and every frontier variant run on one test
 * image, each output saved as a PNG, and each variant's per-pixel error (the paper's CIE76
 * Delta E on 8-bit outputs, as the search measured it) as a heat map on one colour scale
 * shared by all variants, so that maps can be compared by eye. */
#include "results/report_internal.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "codegen/compile.h"
#include "dataset/colour.h"
#include "dataset/metrics.h"
#include "perforate/plan.h"
#include "results/report_plot.h"
#include "results/rundir.h"
#include "run/pipeline_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the colour scale ----
 * A straight line in CIE Lab from a dark blue to a light yellow, like cividis: lightness rises
 * steadily, so the map reads in grey print; equal steps of error are equal steps of colour
 * difference (Delta E76); and the hues run along the blue-yellow axis that the common
 * red-green colour-vision deficiencies keep. The ends are those of the longest such line
 * inside the sRGB gamut (found by a grid search), moved a little inside it. */
#define HEAT_STEPS 256
static const float heat_lo[3] = { 20, 18, -44 }, heat_hi[3] = { 94, -18, 86 };

static uint32_t lab_colour(const float lab[3])
{
    float rgb[3];
    pf_lab_to_srgb(lab, rgb);
    uint32_t c = 0;
    for (int i = 0; i < 3; i++) {
        float v = rgb[i] < 0 ? 0 : rgb[i] > 1 ? 1 : rgb[i];
        c = c << 8 | (uint32_t)lrintf(v * 255);
    }
    return c;
}

uint32_t pf_report_heat_colour(double e, double top)
{
    double t = top > 0 && e > 0 ? fmin(e / top, 1) : 0;
    t = round(t * (HEAT_STEPS - 1)) / (HEAT_STEPS - 1);
    float lab[3];
    for (int i = 0; i < 3; i++)
        lab[i] = (float)(heat_lo[i] + t * (heat_hi[i] - heat_lo[i]));
    return lab_colour(lab);
}

pf_canvas *pf_report_heat_legend(double top)
{
    pf_canvas *c = pf_canvas_new(420, 58, "Colour scale of the error maps");
    double x0 = 14, x1 = 406, y0 = 6, h = 16;
    int n = 96;
    for (int i = 0; i < n; i++) {
        uint32_t col = pf_report_heat_colour(top * (i + 0.5) / n, top);
        pf_paint p = { PF_NONE, col, 0, 1, PF_DASH_SOLID };
        double w = (x1 - x0) / n;
        pf_canvas_rect(c, x0 + i * w, y0, w + 0.6, h, &p);  /* overlap: no seams */
    }
    pf_paint frame = { PF_GREY, PF_NONE, 1, 1, PF_DASH_SOLID };
    pf_canvas_rect(c, x0, y0, x1 - x0, h, &frame);
    pf_axis a = { .lo = 0, .hi = top, .p0 = x0, .p1 = x1 };
    double t[16];
    int nt = pf_axis_ticks(&a, t, 16);
    for (int i = 0; i < nt; i++) {
        char buf[32];
        pf_axis_label(&a, t[i], buf, sizeof buf);
        if (i == nt - 1 && t[i] >= top)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "+");
        double x = pf_axis_pos(&a, t[i]);
        pf_canvas_line(c, (double[4]){ x, y0 + h, x, y0 + h + 4 }, 2, &frame);
        pf_canvas_text(c, x, y0 + h + 15, buf, 11, PF_ANCHOR_MIDDLE, 0, 0x222222);
    }
    pf_canvas_text(c, (x0 + x1) / 2, 54, "per-pixel CIE76 \xCE\x94" "E in Lab (Lab units)", 11,
                   PF_ANCHOR_MIDDLE, 0, 0x000000);
    return c;
}

/* ---- building and running a variant ---- */

/* The report's one way from schedule text to an output: parse, apply the approximations to
 * the program, compile with the execution genes (as search/evaluate.c builds candidates), run
 * once on io's inputs. Returns a copy of output `out`, or NULL with err. */
static pf_image *run_variant(pf_program *prog, const pf_param_values *pv, pf_backend backend,
                             const char *text, pf_io *io, int out, pf_error *err)
{
    pf_plan_target target = pf_host_plan_target();
    pf_plan *plan = pf_plan_parse(prog, text, "<schedule>", &target, err);
    if (!plan)
        return NULL;
    /* A GPU run's pictures come from the JIT, which runs the same plans (GPU genes as serial
     * loops) to within 1e-4 of the GPU (docs/gpu.md §4): the report needs no GPU. */
    pf_compile_options o = { .backend = backend == PF_BACKEND_CUDA ? PF_BACKEND_JIT : backend };
    pf_variant *v = pf_variant_build(prog, pv, plan, &o, err);
    pf_image *img = NULL;
    if (v && pf_variant_run(v, io->buf, err) == 0)
        img = pf_image_clone(io->out[out]);
    pf_variant_free(v);
    pf_plan_free(plan);
    return img;
}

/* ---- the pictures ---- */

/* The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 x 10^k that is >= v (and at least 1). */
static double nice_top(double v)
{
    static const double m[] = { 1, 1.5, 2, 3, 4, 5, 6, 8, 10 };
    if (!(v > 1))
        return 1;
    double mag = pow(10, floor(log10(v)));
    for (int i = 0; i < 9; i++)
        if (m[i] * mag >= v * (1 - 1e-9))
            return m[i] * mag;
    return 10 * mag;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The 95th percentile and the mean of an error map. The scale's top is the largest 95th
 * percentile of the variants: a few large errors (often along borders) saturate instead of
 * leaving the rest of every map dark. */
static double map_stats(const pf_image *map, double *mean)
{
    size_t n = (size_t)map->width * (size_t)map->height, k = 0;
    float *v = pf_xmalloc(sizeof *v * n);
    double sum = 0;
    for (int y = 0; y < map->height; y++) {
        const float *row = pf_image_at(map, 0, y, 0);
        for (int x = 0; x < map->width; x++) {
            v[k++] = row[x];
            sum += row[x];
        }
    }
    qsort(v, n, sizeof *v, cmp_float);
    double p95 = v[(size_t)(0.95 * (double)(n - 1))];
    free(v);
    *mean = sum / (double)n;
    return p95;
}

static int save_heat(const pf_image *map, double top, const char *path, pf_error *err)
{
    pf_image *rgb = pf_image_new(map->width, map->height, 3, err);
    if (!rgb)
        return -1;
    for (int y = 0; y < map->height; y++)
        for (int x = 0; x < map->width; x++) {
            uint32_t c = pf_report_heat_colour(*pf_image_at(map, x, y, 0), top);
            for (int ch = 0; ch < 3; ch++)
                *pf_image_at(rgb, x, y, ch) = ((c >> (16 - 8 * ch)) & 255) / 255.0f;
        }
    int rc = pf_image_save_png(rgb, path, 8, err);
    pf_image_free(rgb);
    return rc;
}

/* dir/rel, saving img there. */
static int save_as(const pf_image *img, const char *dir, const char *rel, pf_error *err)
{
    char *path = pf_path_join(dir, rel);
    int rc = pf_image_save_png(img, path, 8, err);
    free(path);
    return rc;
}

typedef struct shoot_ctx {
    const pf_report_run *r;
    pf_program *prog;
    pf_param_values pv;
    pf_io io;
    pf_image *exact;
    pf_image **maps;           /* [n]: error maps until coloured */
    const pf_report_options *opt;
} shoot_ctx;

static char *xfmt(const char *fmt, int k)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, k);
    return pf_xstrdup(buf);
}

/* The record's error on this photo, when it measured the same single output. */
static double recorded(const shoot_ctx *s, const pf_report_images *im, int k)
{
    int i = im->set == PF_SET_TEST ? s->r->test[k] : s->r->front[k];
    if (i < 0 || im->n_outputs != 1 || !s->r->recs[i].valid ||
        im->index >= s->r->recs[i].n_images)
        return NAN;
    return s->r->recs[i].images[im->index].error;
}

/* One variant: its output saved, its error map kept in s->maps[k]. */
static int shoot(shoot_ctx *s, pf_report_images *im, int k, const char *dir, pf_error *err)
{
    pf_report_shot *sh = &im->shots[k];
    const pf_eval_record *rec = &s->r->recs[s->r->front[k]];
    sh->variant = k;
    sh->recorded_de = recorded(s, im, k);
    pf_report_note(s->opt, "report: compiling and running frontier variant %d of %d", k + 1,
                   im->n);
    pf_error verr;
    pf_image *out = run_variant(s->prog, &s->pv, s->r->cfg.eval.backend, rec->schedule,
                                &s->io, im->output, &verr);
    if (!out) {
        sh->failed = pf_xstrdup(verr.msg);
        return 0;
    }
    s->maps[k] = pf_metric_lab_de76_map(out, s->exact, 1, err);
    sh->file = xfmt("img/variant-%03d.png", k);
    int rc = s->maps[k] ? save_as(out, dir, sh->file, err) : -1;
    pf_image_free(out);
    return rc;
}

/* The first test photo when every variant was measured on the test split, else the first
 * training photo: either way one on which the search has already run every variant (in a
 * worker process, where a crash would only have made it invalid), so running them here in
 * the report's own process is safe. */
static pf_image_set photo_split(const pf_report_run *r)
{
    bool tested = r->n_images[PF_SET_TEST] > 0;
    for (int k = 0; k < r->n_front; k++)
        tested &= r->test[k] >= 0 && r->recs[r->test[k]].valid;
    return tested ? PF_SET_TEST : PF_SET_TRAIN;
}

/* The photo, its inputs bound, the exact output. */
static int prepare(shoot_ctx *s, pf_report_images *im, const char *dir, pf_error *err)
{
    const pf_report_run *r = s->r;
    im->set = photo_split(r);
    if (r->n_images[im->set] == 0)
        return pf_fail(err, "%s/%s lists no images", r->dir, PF_RUN_CONFIG);
    im->image = pf_xstrdup(r->images[im->set][0]);
    im->n_outputs = s->prog->n_outputs;
    pf_params_init(&s->pv, s->prog);
    for (int i = 0; i < r->cfg.eval.n_params; i++)
        if (pf_params_set(&s->pv, s->prog, r->cfg.eval.params[i], err))
            return -1;
    pf_image *in[1] = { pf_io_load_input(s->prog, &s->pv, 0, im->image, err) };
    if (!in[0])
        return pf_fail_prefix(err, "the run's first %s image (%s/%s); --no-images reports "
                              "without pictures", im->set == PF_SET_TEST ? "test" : "training",
                              r->dir, PF_RUN_CONFIG);
    if (pf_io_bind(&s->io, s->prog, &s->pv, in, err))
        return -1;
    im->width = s->io.in[0]->width;
    im->height = s->io.in[0]->height;
    im->input_file = pf_xstrdup("img/input.png");
    im->exact_file = pf_xstrdup("img/exact.png");
    pf_report_note(s->opt, "report: compiling and running the exact program on %s", im->image);
    s->exact = run_variant(s->prog, &s->pv, r->cfg.eval.backend, "# perfora schedule 1\n",
                           &s->io, im->output, err);
    if (!s->exact)
        return pf_fail_prefix(err, "the exact program");
    if (save_as(s->io.in[0], dir, im->input_file, err) ||
        save_as(s->exact, dir, im->exact_file, err))
        return -1;
    return 0;
}

/* The shared scale, then every map coloured and saved. */
static int colour_maps(shoot_ctx *s, pf_report_images *im, const char *dir, pf_error *err)
{
    double top = 0;
    for (int k = 0; k < im->n; k++)
        if (s->maps[k])
            top = fmax(top, map_stats(s->maps[k], &im->shots[k].mean_de));
    im->top = nice_top(top);
    for (int k = 0; k < im->n; k++) {
        if (!s->maps[k])
            continue;
        im->shots[k].error_file = xfmt("img/variant-%03d-error.png", k);
        char *path = pf_path_join(dir, im->shots[k].error_file);
        int rc = save_heat(s->maps[k], im->top, path, err);
        free(path);
        if (rc)
            return -1;
    }
    return 0;
}

int pf_report_images_make(const pf_report_run *r, pf_program *prog, const char *dir,
                          const pf_report_options *opt, pf_report_images *im, pf_error *err)
{
    memset(im, 0, sizeof *im);
    shoot_ctx s = { r, prog, { 0 }, { 0 }, NULL, NULL, opt };
    char *img_dir = pf_path_join(dir, "img");
    int rc = pf_mkdir_p(img_dir, err);
    free(img_dir);
    if (rc == 0)
        rc = prepare(&s, im, dir, err);
    im->n = r->n_front;
    im->shots = pf_xcalloc((size_t)im->n + 1, sizeof *im->shots);
    s.maps = pf_xcalloc((size_t)im->n + 1, sizeof *s.maps);
    for (int k = 0; k < im->n && rc == 0; k++)
        rc = shoot(&s, im, k, dir, err);
    if (rc == 0)
        rc = colour_maps(&s, im, dir, err);
    for (int k = 0; k < im->n; k++)
        pf_image_free(s.maps[k]);
    free(s.maps);
    pf_image_free(s.exact);
    pf_io_free(&s.io);
    pf_params_free(&s.pv);
    return rc;
}

void pf_report_images_free(pf_report_images *im)
{
    for (int k = 0; im->shots && k < im->n; k++) {
        free(im->shots[k].file);
        free(im->shots[k].error_file);
        free(im->shots[k].failed);
    }
    free(im->shots);
    free(im->skipped);
    free(im->image);
    free(im->input_file);
    free(im->exact_file);
    memset(im, 0, sizeof *im);
}
