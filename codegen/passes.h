/* The IR passes, each a function IR -> IR (a pass that changes nothing returns an equal
 * function). The order they run in is in compile.c. */
#ifndef PF_CODEGEN_PASSES_H
#define PF_CODEGEN_PASSES_H

#include "codegen/ir.h"

#include <stdbool.h>

typedef struct pf_pass_stats {
    int loops_split;      /* pass_bounds: loops partitioned into border/interior */
    int borders_merged;   /* pass_bounds: split loops whose two border parts run as one loop */
    int checks_removed;   /* pass_bounds: boundary checks proven unnecessary */
    int ondemand_reads;   /* pass_ondemand: on-demand reads expanded */
    int congruences_proven; /* pass_ondemand: dimensions whose weights Z3 made constant */
    int channels_unrolled; /* pass_channels: channel loops moved into their pixel loops */
    int bands_parallel;   /* pass_bands: scatter loops run in parallel bands */
    int bands_refused;    /* pass_bands: asked for but left serial (not provably disjoint) */
    int loops_collapsed;  /* pass_collapse: channel loops merged into their parallel loop */
    int arrays_narrowed;  /* pass_narrow: window arrays declared as long as their counter goes */
    int gpu_row_windows;  /* pass_gpu_rows: GPU row loops given a register window of rows */
} pf_pass_stats;

/* pass_narrow.c: a local array filled in order by a counter (ir_fill.h) is declared with as
 * many elements as the counter can reach when that is fewer (a window whose loops are
 * perforated), so that the vector median's network covers it. Runs first, on CPU plans. */
ir_func *pf_pass_narrow(ir_func *f, pf_pass_stats *stats);

/* pass_bounds.c: boundary-check removal and interior/border loop partitioning; with
 * merge_borders, the two border parts of a loop whose iterations may run in any order run as
 * one loop. */
ir_func *pf_pass_bounds(ir_func *f, bool merge_borders, pf_pass_stats *stats);
/* ... on the IR of a plan with GPU stages: only the clamp bits it proves unnecessary are
 * cleared, no loop is split, and an `if` on a loop variable narrows its range in the
 * then-branch (GPU loops are never split, so that is where a guard's facts are used). */
ir_func *pf_pass_bounds_gpu(ir_func *f, pf_pass_stats *stats);

/* pass_ondemand.c: expands on-demand reads (IR_INTERP), with congruence simplification through
 * Z3 unless `congruence` is false. Must run after pass_bounds and before emission. */
ir_func *pf_pass_ondemand(ir_func *f, bool congruence, pf_pass_stats *stats);

/* pass_gpu_rows.c: on the IR of a plan with GPU stages, a thread loop over rows whose threads
 * take several rows each, around a thread loop over columns, gives each thread consecutive
 * rows and reads the rows a vertical stencil shares once per column into registers (a
 * register window); the same for a thread loop over columns and a horizontal stencil. Runs
 * after pass_ondemand. */
ir_func *pf_pass_gpu_rows(ir_func *f, pf_pass_stats *stats);

/* pass_channels.c: a pointwise stage's loop over a few channels (constant trip count 2..4)
 * moves into its innermost loops, unrolled, where what every channel computes alike (reads
 * included) is computed once per pixel. Runs after pass_ondemand. */
ir_func *pf_pass_channels(ir_func *f, pf_pass_stats *stats);

/* pass_bands.c: a serial scatter loop the schedule asks to run in parallel (FOR.banded) runs
 * its rows in bands that start where the scatter's row index changes, when that index is a
 * function of the row alone (checked monotone when the code runs; serial otherwise). Runs
 * last, on what the other passes made. */
ir_func *pf_pass_bands(ir_func *f, pf_pass_stats *stats);

/* pass_collapse.c: a serial loop over a further variable (channels) whose whole body is a
 * parallel loop, with iterations independent across channels, becomes one parallel loop over
 * both (one fork and join instead of one per channel, and channels x tiles tasks). Runs after
 * pass_bands, on CPU plans. */
ir_func *pf_pass_collapse(ir_func *f, pf_pass_stats *stats);

#endif
