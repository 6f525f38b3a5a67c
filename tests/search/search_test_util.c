/* Shared helpers of the search suites (see search_test_util.h). */
#include "tests/search/search_test_util.h"

#include "base/arena.h"
#include "base/fileio.h"
#include "results/rundir.h"
#include "search/strmap.h"
#include "tests/harness/harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const st_apps[] = { "artistic_blur", "bilateral_filter", "bilateral_grid", "blur",
                                "demosaic", "median", "mosaic", "unsharp_mask", NULL };

pf_program *st_load_app(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "apps/%s.pf", name);
    pf_error err;
    pf_program *p = pf_load_program(pf_test_src(rel), &err);
    if (!p)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL(p);
    return p;
}

pf_image *st_train_crop(int x0, int y0, int w, int h)
{
    pf_error err;
    pf_image *photo = pf_image_load(pf_test_src("data/images/train/man_made_1_256x192.png"),
                                    &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(photo);
    pf_image *rgb = pf_image_to_rgb(photo, &err);
    pf_image_free(photo);
    pf_image *crop = pf_image_new(w, h, 3, &err);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                *pf_image_at(crop, x, y, c) = *pf_image_at(rgb, x0 + x, y0 + y, c);
    pf_image_free(rgb);
    return crop;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Values with few digits, so they survive the 7-digit records unchanged. */
void st_fake_measure(const char *text, double *time, double *error)
{
    uint64_t h = fnv(text);
    const char *nl = strchr(text, '\n');
    if (nl && !nl[1]) {  /* the exact program */
        *time = 1.0;
        *error = 0.0;
        return;
    }
    *time = 0.05 + (double)(h % 1000) / 1000.0;
    *error = (double)((h >> 20) % 2000) / 100.0;
}

typedef struct fake {
    pf_evaluator base;
    double delay_ms;
    long *submitted;
    pf_eval_record *q;
    int n, cap;
    double lucky;        /* the first training measurement of a schedule is time x lucky */
    bool low_independent; /* low fidelity: unrelated to the full measurement (else half the
                             time and twice the error) */
    pf_front_point *front;  /* the frontier the search last sent: the screening's */
    int n_front;
    int samples;         /* the samples asked of the candidates submitted next (0: 5) */
    pf_strmap measured;  /* schedules measured on the training split */
    long stall_after;    /* > 0: wait blocks for good once this many records were handed back */
    long returned;
} fake;

static int fake_submit(pf_evaluator *ev, long id, pf_image_set set, const char *schedule,
                       pf_error *err)
{
    (void)err;
    fake *f = (fake *)ev;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 32;
        f->q = pf_xrealloc(f->q, sizeof *f->q * (size_t)f->cap);
    }
    pf_eval_record *r = &f->q[f->n++];
    pf_record_init(r);
    r->id = id;
    r->set = set;
    r->schedule = pf_xstrdup(schedule);
    r->valid = true;
    st_fake_measure(schedule, &r->time, &r->error);
    if (set == PF_SET_LOW && f->low_independent) {
        char *low = pf_xmalloc(strlen(schedule) + 8);
        sprintf(low, "%s# low\n", schedule);
        st_fake_measure(low, &r->time, &r->error);
        free(low);
    } else if (set == PF_SET_LOW) {
        r->time *= 0.5;
        r->error *= 2;
    } else if (set == PF_SET_TEST)
        r->time *= 1.1;
    else if (pf_strmap_add(&f->measured, schedule, 0))
        r->time *= f->lucky;
    r->worker = 0;
    r->n_images = 1;  /* one image, with the samples a worker would have taken */
    r->images = pf_xcalloc(1, sizeof *r->images);
    r->images[0] = (pf_eval_image){ .rel_time = r->time, .error = r->error,
                                    .samples = f->samples > 0 ? f->samples : 5 };
    (*f->submitted)++;
    return 0;
}

static int fake_wait(pf_evaluator *ev, pf_eval_record *out, pf_error *err)
{
    (void)err;
    fake *f = (fake *)ev;
    if (f->n == 0)
        return 0;
    if (f->stall_after > 0 && f->returned == f->stall_after)
        for (;;)
            pause();
    f->returned++;
    if (f->delay_ms > 0) {
        struct timespec ts = { 0, (long)(f->delay_ms * 1e6) };
        nanosleep(&ts, NULL);
    }
    *out = f->q[0];
    /* measured now, as a pool dispatches when a worker is free: screened against the frontier
     * the search sent last (its time stands for the screened one) */
    out->full_timing = out->set == PF_SET_TEST ||
                       pf_screen_may_reach(f->front, f->n_front, out->error, out->time, 0.2);
    memmove(f->q, f->q + 1, sizeof *f->q * (size_t)--f->n);
    return 1;
}

static const char *fake_describe(pf_evaluator *ev)
{
    (void)ev;
    return "fake evaluator (tests)";
}

static void fake_destroy(pf_evaluator *ev)
{
    fake *f = (fake *)ev;
    for (int i = 0; i < f->n; i++)
        pf_record_free(&f->q[i]);
    free(f->q);
    free(f->front);
    pf_strmap_free(&f->measured);
    free(f);
}

static void fake_set_frontier(pf_evaluator *ev, const pf_front_point *pts, int n)
{
    fake *f = (fake *)ev;
    free(f->front);
    f->front = pf_front_copy(pts, n);
    f->n_front = n;
}

static void fake_set_samples(pf_evaluator *ev, int samples)
{
    ((fake *)ev)->samples = samples;
}

static const pf_evaluator_ops fake_ops = { .submit = fake_submit, .wait = fake_wait,
                                           .describe = fake_describe, .destroy = fake_destroy,
                                           .set_frontier = fake_set_frontier,
                                           .set_samples = fake_set_samples };

pf_evaluator *st_fake_evaluator_lucky(double delay_ms, long *submitted, double lucky)
{
    fake *f = pf_xcalloc(1, sizeof *f);
    f->base.ops = &fake_ops;
    f->delay_ms = delay_ms;
    f->submitted = submitted;
    f->lucky = lucky;
    pf_strmap_init(&f->measured);
    return &f->base;
}

pf_evaluator *st_fake_evaluator_fidelity(double delay_ms, long *submitted, bool independent)
{
    pf_evaluator *ev = st_fake_evaluator_lucky(delay_ms, submitted, 1.0);
    ((fake *)ev)->low_independent = independent;
    return ev;
}

void st_fake_stall_after(pf_evaluator *ev, long results)
{
    ((fake *)ev)->stall_after = results;
}

pf_evaluator *st_fake_evaluator(double delay_ms, long *submitted)
{
    return st_fake_evaluator_lucky(delay_ms, submitted, 1.0);
}

void st_blur_config(pf_eval_config *c, int max_images)
{
    pf_eval_config_default(c);
    c->program = pf_xstrdup(pf_test_src("apps/blur.pf"));
    c->dataset = pf_xstrdup(pf_test_src("data/images"));
    c->width = 256;
    c->height = 192;
    c->max_images = max_images;
    c->samples = 1;
    c->min_sample_ms = 1;
    c->timeout_min_ms = 500;
    c->lock_path = pf_xstrdup(pf_test_tmp("timing.lock"));
}

long st_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

char *st_run_file(const char *dir, const char *name)
{
    char *path = pf_run_path(dir, name), *text = NULL;
    size_t len;
    pf_error err;
    if (pf_read_file(path, 1 << 26, &text, &len, &err) != 0)
        text = NULL;
    free(path);
    return text;
}
