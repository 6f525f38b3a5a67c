/* The table of reasons that keep a pixel loop serial, and the walk that finds serial pixel
 * loops in lowered code (ir_audit.h). */
#include "codegen/ir_audit.h"

#include "lang/approx_rt.h"

#include <string.h>

static const ir_serial_reason reasons[IR_SERIAL_COUNT] = {
    [IR_SERIAL_NONE] = { "none", false, "no reason given: the loop may run in parallel" },
    [IR_SERIAL_SCHEDULE] = { "schedule", true,
                             "the stage's execution gene does not ask for `parallel` (the "
                             "search's choice; its fill and reconstruction follow it)" },
    [IR_SERIAL_SCATTER] = { "scatter", true,
                            "a serial stage (it writes outside its own pixel) whose rows "
                            "pass_bands cannot split into bands that write disjoint cells (when "
                            "compiling, or, for the fallback of banded rows, because the rows' "
                            "cell keys are found unordered when it runs)" },
    [IR_SERIAL_DITHER] = { "dither", true,
                           "importance sampling's mask: Ostromoukhov error diffusion carries "
                           "each pixel's error to the next ones in scan order (the importance "
                           "map's Gaussians before it are split by rows)" },
    [IR_SERIAL_ADAPTIVE] = { "adaptive-mask", true,
                             "adaptive sampling's refinement: it ranks every block of the "
                             "image against the others to pick the fraction to refine (the "
                             "coarse mask, the priorities and the outputs are split by rows)" },
    [IR_SERIAL_GRID_ND] = { "grid-nd", false,
                            "a grid fill codegen/lower_fill.c does not lower (a one-variable "
                            "stage over a larger image, spacing beyond the second variable, a "
                            "compute-at region), run by the one-pass N-D filler of "
                            "reconstruct/rt_grid.c" },
};

const ir_serial_reason *ir_serial_reason_of(ir_serial_why why)
{
    return why < IR_SERIAL_COUNT ? &reasons[why] : &reasons[IR_SERIAL_NONE];
}

bool ir_rt_threaded(const ir_stmt *s)
{
    switch (s->rt) {
    case IR_RT_ZERO_BUFFER:
    case IR_RT_COPY_CHANNELS:
    case IR_RT_ADAPTIVE_COARSE:
        return true;
    case IR_RT_RECONSTRUCT: {
        /* args after the view: sample, recon (lower_stage.c emit_reconstruct) */
        int64_t sample = 0, recon = 0;
        int k = s->view_dims;
        ir_is_const(s->args[3 * k], &sample);
        ir_is_const(s->args[3 * k + 1], &recon);
        return !(sample == PF_SAMPLE_GRID &&
                 (recon == PF_RECON_LINEAR || recon == PF_RECON_NEAREST));
    }
    default:
        return false;
    }
}

/* A loop whose iterations run at once: on the pool, or as GPU blocks or threads. */
static bool runs_parallel(const ir_stmt *s)
{
    return s->kind == IR_S_FOR &&
           (s->loop_kind == IR_LOOP_PARALLEL || s->loop_kind == IR_LOOP_GPU_BLOCK ||
            s->loop_kind == IR_LOOP_GPU_THREAD);
}

typedef struct audit {
    void (*found)(void *ctx, const ir_serial_nest *nest);
    void *ctx;
    const char *stage;
    int count;
} audit;

static void report(audit *A, const ir_stmt *at, ir_serial_why why)
{
    ir_serial_nest n = { at, A->stage ? A->stage : "?", why };
    A->count++;
    if (A->found)
        A->found(A->ctx, &n);
}

/* Whether s stores to an image or calls the runtime outside every parallel loop. */
static bool writes_serially(const ir_stmt *s)
{
    if (!s)
        return false;
    switch (s->kind) {
    case IR_S_STORE:
        return true;
    case IR_S_RTCALL:
        return !ir_rt_threaded(s);
    case IR_S_FOR:
        if (runs_parallel(s))
            return false;
        break;
    default:
        break;
    }
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        if (writes_serially(s->body[i]))
            return true;
    return s->kind != IR_S_BLOCK && (writes_serially(s->then_s) || writes_serially(s->else_s));
}

/* The reason a serial nest carries: its own, else the first one on a serial loop or runtime
 * call inside it that is not in a parallel loop. */
static ir_serial_why reason_in(const ir_stmt *s)
{
    if (!s || runs_parallel(s))
        return IR_SERIAL_NONE;
    if ((s->kind == IR_S_FOR || s->kind == IR_S_RTCALL) && s->serial_why)
        return (ir_serial_why)s->serial_why;
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++) {
        ir_serial_why w = reason_in(s->body[i]);
        if (w)
            return w;
    }
    if (s->kind == IR_S_BLOCK)
        return IR_SERIAL_NONE;
    ir_serial_why w = reason_in(s->then_s);
    return w ? w : reason_in(s->else_s);
}

/* Top-level walk outside any loop: a loop or runtime call that writes serially is a nest. */
static void walk(audit *A, const ir_stmt *s)
{
    if (!s)
        return;
    if (s->kind == IR_S_COMMENT && s->text && strncmp(s->text, "stage ", 6) == 0)
        A->stage = s->text + 6;
    if (s->kind == IR_S_FOR && s->text)
        A->stage = s->text;
    if (s->kind == IR_S_FOR || s->kind == IR_S_RTCALL) {
        if (writes_serially(s))
            report(A, s, reason_in(s));
        else if (s->kind == IR_S_FOR && !runs_parallel(s))
            walk(A, s->then_s);  /* a serial loop around parallel ones: look inside */
        return;
    }
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        walk(A, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        walk(A, s->then_s);
        walk(A, s->else_s);
    }
}

int ir_audit_serial(const ir_func *f, void (*found)(void *ctx, const ir_serial_nest *nest),
                    void *ctx)
{
    audit A = { found, ctx, NULL, 0 };
    walk(&A, f->body);
    return A.count;
}
