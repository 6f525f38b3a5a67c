/* A plan: one variant of a checked program, resolved from its schedule for a target. Per stage
 * the approximation that runs and the execution gene (the schedule's `exec` line, or the
 * default schedule filled in), per named `for` loop its perforation, per image the stage that
 * stores it downsampled (later stages' reads reconstruct on demand), and the facts lowering
 * and the default schedule share. Lowering (codegen/lower.h) and the interpreter
 * (interp/interp.h) read the same plan; docs/perforation.md defines what each part means.
 *
 *   "stage1 grid 4 1 1 reconstruct on-demand linear"     target: 16-lane vectors
 *     -> stage1: grid 4 1 1, linear, on demand (reads of A in stage2 interpolate)
 *        stage1 exec: at stage2 (default)   stage2 exec: tile 128 64 vectorize 8 parallel
 *
 * A plan is validated once, when it is made, and never changes afterwards. It lives in its
 * own arena (pf_plan_free frees all of it) and points into the program only read-only: the
 * program is never written, so one program serves any number of plans, at the same time too.
 * The Z3-proven weights of on-demand reads are not here: they depend on the loops lowering
 * builds (tiles, border splits) and are proven by codegen/pass_ondemand.c on the loop IR. */
#ifndef PF_PERFORATE_PLAN_H
#define PF_PERFORATE_PLAN_H

#include "base/arena.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "perforate/approx.h"
#include "perforate/schedule.h"

/* What a plan's defaults depend on besides the program: the machine its variant runs on
 * (codegen/compile.h's pf_host_plan_target() describes this one). */
typedef struct pf_plan_target {
    int vector_lanes;  /* float lanes of the preferred vector registers, 8 or 16: the default
                          vector width of stages bound by transcendental math */
    bool gpu;          /* the variant runs on a GPU: the default schedule is the GPU one
                          (perforate/default_gpu_schedule.c) */
} pf_plan_target;

/* One stage of a plan. */
typedef struct pf_plan_stage {
    const pf_stage_approx *approx;  /* NULL: exact */
    pf_exec_gene exec;              /* what runs: the schedule's `exec` line, else the default */
    bool exec_given;                /* exec came from the schedule */
    bool scratch_ok;                /* computed at its consumer, its image may live in a
                                       per-tile scratch window (pf_plan_scratch_ok) */
    bool tile_fill_ok;              /* store-mode grid whose fill may run per tile */
    int slide_lo, slide_hi;         /* exec.slide: row y of the consumer reads rows
                                       [y + slide_lo, y + slide_hi] of this stage's image */
} pf_plan_stage;

typedef struct pf_plan {
    const pf_program *prog;
    pf_plan_target target;
    pf_plan_stage *stages;          /* [prog->n_stages], by pf_stage.index */
    const pf_loop_approx **loops;   /* [prog->n_loops]: a named for loop's perforation (NULL:
                                       exact; always NULL for stages, see stages[]) */
    const pf_stage **on_demand;     /* [prog->n_images]: the stage that stores the image
                                       downsampled, or NULL */
    char *schedule;                 /* the canonical text of the schedule it resolves */
    pf_arena arena;                 /* everything above */
} pf_plan;

/* The plan of schedule s (NULL: the exact program) for target t (NULL: 8-lane vectors).
 * Validates s against prog (pf_schedule_validate); NULL with err when it does not fit. */
pf_plan *pf_plan_new(const pf_program *prog, const pf_schedule *s, const pf_plan_target *t,
                     pf_error *err);
/* The plan of schedule text (pf_schedule_parse's format and messages; file_name may be
 * NULL). The text is validated once, by the parser. */
pf_plan *pf_plan_parse(const pf_program *prog, const char *text, const char *file_name,
                       const pf_plan_target *t, pf_error *err);
/* The plan of a schedule file (pf_schedule_load). */
pf_plan *pf_plan_load(const pf_program *prog, const char *path, const pf_plan_target *t,
                      pf_error *err);
void pf_plan_free(pf_plan *p);

/* A stage's approximation, or NULL when it runs exactly. */
static inline const pf_stage_approx *pf_plan_approx(const pf_plan *p, const pf_stage *st)
{
    return p->stages[st->index].approx;
}

/* The on-demand writer a read of img in stage `reader` reconstructs from: reads in the
 * stages after the one that stores img downsampled interpolate (docs/perforation.md §4); the
 * writer's own reads, and earlier stages', read plainly. NULL: a plain read. */
static inline const pf_stage *pf_plan_read_writer(const pf_plan *p, const pf_stage *reader,
                                                  const pf_image_decl *img)
{
    const pf_stage *w = p->on_demand[img->index];
    return w && reader && reader->index > w->index ? w : NULL;
}

/* Whether some stage runs on the GPU (its execution gene says `gpu`). */
bool pf_plan_has_gpu(const pf_plan *p);

/* The text form: the schedule, then per stage its approximation and resolved execution, per
 * perforated loop its perforation, per on-demand image its writer (perfora run --dump plan). */
void pf_plan_print(const pf_plan *p, pf_strbuf *out);

#endif
