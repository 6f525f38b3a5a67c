/* Which pixel loops of a lowered function run on one thread, and why: THE table of reasons that
 * keep a loop over pixels serial (mirrored in docs/parallel.md). Lowering and the passes mark a
 * serial loop or runtime call with one of these (ir_stmt.serial_why) where they keep it serial
 * on purpose; ir_audit_serial finds every store or runtime call that runs outside any parallel
 * loop and reports it with the reason its loop nest carries, or with IR_SERIAL_NONE when none
 * does: a loop that may run in parallel and does not (tests/codegen/test_parallel.c fails on
 * it, for every approximation kind on every app). */
#ifndef PF_CODEGEN_IR_AUDIT_H
#define PF_CODEGEN_IR_AUDIT_H

#include "codegen/ir.h"

#include <stdbool.h>

/* ORDER IR_SERIAL: keep in step with the table in ir_audit.c. */
typedef enum ir_serial_why {
    IR_SERIAL_NONE = 0,   /* no reason: a defect */
    IR_SERIAL_SCHEDULE,   /* the stage's execution gene is not parallel */
    IR_SERIAL_SCATTER,    /* a serial stage whose writes pass_bands cannot split into bands */
    IR_SERIAL_DITHER,     /* importance sampling's mask: error diffusion */
    IR_SERIAL_ADAPTIVE,   /* adaptive sampling's masks: coarse lattice and block ranking */
    IR_SERIAL_GRID_ND,    /* a grid fill the lowering cannot do, run by reconstruct/rt_grid.c */
    IR_SERIAL_COUNT
} ir_serial_why;

typedef struct ir_serial_reason {
    const char *name;     /* short name, as the docs and test messages print it */
    bool inherent;        /* the dependence is in the algorithm (else: not done yet) */
    const char *why;      /* one sentence */
} ir_serial_reason;

const ir_serial_reason *ir_serial_reason_of(ir_serial_why why);

/* A serial pixel loop nest: its outermost statement that runs outside every parallel loop
 * (a loop, or a runtime call), the stage it belongs to (the nearest loop label or stage
 * comment before it; "?" if none) and the reason it carries. */
typedef struct ir_serial_nest {
    const ir_stmt *at;
    const char *stage;
    ir_serial_why why;
} ir_serial_nest;

/* Calls found(ctx, nest) for each serial pixel loop nest of f, in program order; returns how
 * many there were. A runtime call that splits its own work across the thread pool
 * (ir_rt_threaded) is not serial. */
int ir_audit_serial(const ir_func *f, void (*found)(void *ctx, const ir_serial_nest *nest),
                    void *ctx);

/* Whether the runtime call s splits its work across the thread pool (codegen/runtime.c). */
bool ir_rt_threaded(const ir_stmt *s);

#endif
