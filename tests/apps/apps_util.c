/* Shared plumbing of the apps/ tests (see apps_util.h). */
#include "tests/apps/apps_util.h"

#include "base/clock.h"
#include "interp/interp.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const apps_photos[APPS_N_PHOTOS] = {
    "man_made_1_256x192.png",  "natural_29_256x192.png", "people_0_256x192.png",
    "man_made_55_820x614.png", "natural_0_820x614.png",  "people_56_820x614.png",
};

pf_program *apps_load(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "apps/%s.pf", name);
    pf_error err;
    pf_program *prog = pf_load_program(pf_test_src(rel), &err);
    if (!prog) {
        fprintf(stderr, "\n%s\n", err.msg);
        CU_FAIL("apps_load: the program does not load (see stderr)");
    }
    return prog;
}

/* Allocates the output image from the bound extents of output 0 (2-D outputs get 1 channel). */
static pf_image *new_output(const pf_program *prog, const pf_binding *b, pf_error *err)
{
    const pf_image_decl *o = prog->outputs[0];
    const int64_t *e = b->extents[o->index];
    int channels = o->ndims >= 3 ? (int)e[2] : 1;
    return pf_image_new((int)e[0], (int)e[1], channels, err);
}

static int set_params(pf_param_values *pv, const pf_program *prog, const char *const *params,
                      pf_error *err)
{
    for (int i = 0; params && params[i]; i++)
        if (pf_params_set(pv, prog, params[i], err) != 0)
            return -1;
    return 0;
}

/* The interpreter call itself, timed; the output is returned through *outp. */
static int run_bound(const pf_program *prog, const pf_param_values *pv, const pf_image *in,
                     pf_image **outp, double *seconds, pf_error *err)
{
    int64_t ext[1][PF_MAX_DIMS] = { { in->width, in->height, in->channels, 1 } };
    pf_binding b;
    if (pf_bind(prog, pv, (const int64_t(*)[PF_MAX_DIMS])ext, &b, err) != 0)
        return -1;
    pf_image *out = new_output(prog, &b, err);
    int rc = -1;
    if (out) {
        pf_buffer ib = pf_image_buffer(in, 0), ob = pf_image_buffer(out, 0);
        double t0 = pf_now_ms();
        rc = pf_interp_run(prog, pv, NULL, &b, &ib, &ob, err);
        if (seconds)
            *seconds = (pf_now_ms() - t0) / 1e3;
    }
    pf_binding_free(&b);
    if (rc != 0) {
        pf_image_free(out);
        out = NULL;
    }
    *outp = out;
    return rc;
}

pf_image *apps_run(const pf_program *prog, const pf_image *in, const char *const *params,
                   double *seconds)
{
    if (!prog || !in)
        return NULL;
    pf_error err;
    pf_param_values pv;
    pf_params_init(&pv, prog);
    pf_image *out = NULL;
    int rc = set_params(&pv, prog, params, &err);
    if (rc == 0)
        rc = run_bound(prog, &pv, in, &out, seconds, &err);
    pf_params_free(&pv);
    if (rc != 0) {
        fprintf(stderr, "\n%s: %s\n", prog->file_name, err.msg);
        CU_FAIL("apps_run: the interpreter failed (see stderr)");
        return NULL;
    }
    return out;
}

pf_image *apps_photo(const char *file)
{
    char rel[256];
    snprintf(rel, sizeof rel, "data/images/train/%s", file);
    pf_error err;
    pf_image *raw = pf_image_load(pf_test_src(rel), &err);
    pf_image *rgb = raw ? pf_image_to_rgb(raw, &err) : NULL;
    pf_image_free(raw);
    if (!rgb) {
        fprintf(stderr, "\n%s\n", err.msg);
        CU_FAIL("apps_photo: cannot load a training photo (see stderr)");
    }
    return rgb;
}

pf_image *apps_noise_image(int w, int h, int c, unsigned seed)
{
    pf_error err;
    pf_image *img = pf_image_new(w, h, c, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    uint32_t s = seed * 2654435761u + 12345u;
    for (int k = 0; k < c; k++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                s = s * 1664525u + 1013904223u; /* LCG: reproducible on every platform */
                *pf_image_at(img, x, y, k) = (float)(s >> 24) / 255.0f;
            }
    return img;
}

float apps_max_diff(const pf_image *a, const pf_image *b)
{
    if (!a || !b || a->width != b->width || a->height != b->height ||
        a->channels != b->channels)
        return INFINITY;
    float m = 0.0f;
    for (int c = 0; c < a->channels; c++)
        for (int y = 0; y < a->height; y++)
            for (int x = 0; x < a->width; x++) {
                float u = *pf_image_at(a, x, y, c), v = *pf_image_at(b, x, y, c);
                if (isnan(u) || isnan(v)) {
                    if (isnan(u) != isnan(v))
                        return INFINITY;
                    continue;
                }
                float d = fabsf(u - v);
                if (!(d <= m))
                    m = d;
            }
    return m;
}

static void save_for_viewing(const char *app, const char *label, const pf_image *img)
{
    const char *dir = getenv("PF_APPS_OUT");
    if (!dir || !*dir || !img)
        return;
    char path[1024];
    size_t n = strlen(label);
    if (n > 4 && strcmp(label + n - 4, ".png") == 0)
        n -= 4; /* photo labels are file names */
    snprintf(path, sizeof path, "%s/%s_%.*s.png", dir, app, (int)n, label);
    pf_error err;
    if (pf_image_save(img, path, &err) != 0)
        fprintf(stderr, "\n%s\n", err.msg);
}

void apps_expect_match(const char *app, const char *label, const pf_image *got,
                       const pf_image *want, double seconds)
{
    float d = apps_max_diff(got, want);
    printf("\n  %-17s %-26s max|diff| = %.3g   interpreter %.2f s", app, label, (double)d,
           seconds);
    fflush(stdout);
    CU_ASSERT(d <= APPS_TOL);
    save_for_viewing(app, label, got);
}

int apps_full(void)
{
    const char *f = getenv("PF_APPS_FULL");
    return f && *f && strcmp(f, "0") != 0;
}

float apps_at_clamped(const pf_image *img, int x, int y, int c)
{
    x = x < 0 ? 0 : x >= img->width ? img->width - 1 : x;
    y = y < 0 ? 0 : y >= img->height ? img->height - 1 : y;
    return *pf_image_at(img, x, y, c);
}
