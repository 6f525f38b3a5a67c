/* Execution genes (Halide-style scheduling of one stage): text, validation against the
 * program, and the choices a search may draw from. The codegen applies them
 * (codegen/lower_stage.c and the LLVM emitter); docs/schedule.md is the reference.
 *
 *   loop_output exec tile 64 32 vectorize 8 parallel
 *   loop_output exec tile 128 64 reorder x y c xo yo vectorize 8 parallel
 *   loop_temp   exec at loop_output vectorize 8
 *   loop_temp   exec at loop_output slide          (rows computed inside loop_output's row loop)
 *   loop_output exec tile 64 64 gpu 64 4           (GPU: 64x64 tiles are blocks of 64x4 threads,
 *                                                   16 rows a thread; docs/gpu.md) */
#ifndef PF_PERFORATE_EXEC_H
#define PF_PERFORATE_EXEC_H

#include "base/error.h"
#include "base/strbuf.h"
#include "perforate/schedule.h"

/* An unset gene (the default schedule decides). */
pf_exec_gene pf_exec_default(void);

/* Parses the words after `exec` (words[0 .. n-1]) for stage `stage`; on error returns -1 with
 * a message naming the word (the caller adds FILE:LINE). */
int pf_exec_parse(const pf_program *prog, int stage, char *const *words, int n, pf_exec_gene *g,
                  pf_error *err);

/* Canonical text after `exec` for stage `stage`: compute level (`at C slide`), tile, reorder
 * (not when it is the default order), vectorize, parallel, unroll. */
void pf_exec_print(const pf_program *prog, int stage, const pf_exec_gene *g, pf_strbuf *out);
/* Equal canonical texts (a reorder equal to the default order equals none). */
bool pf_exec_equal(const pf_exec_gene *a, const pf_exec_gene *b);

/* The default loop order of a stage with n_vars variables under g's tiles, innermost first
 * (x, y, the tile loops of x and y, further variables in order); returns the count. */
int pf_exec_default_order(const pf_exec_gene *g, int n_vars, int *order);
/* Whether g's loop order (innermost first) has the loops over x and y, then the tile loops,
 * then the further variables: what producers computed at the stage's tiles and a fill per
 * tile need (they run at the innermost tile loop, over whole tiles, per value of the further
 * variables). True for the default order. */
bool pf_exec_tile_order_ok(const pf_exec_gene *g);

/* Checks the gene against the program and the stage's approximation gene (approx may be NULL):
 * vectorize needs a non-serial stage; reorder a non-serial stage, each of its loops once, tile
 * loops outside their variable's loop, x innermost when vectorized; tiles need sizes in [1, PF_EXEC_MAX_TILE] for at
 * most the first two variables; `inline` needs an exact stage that is one assignment to its own
 * pixel of an intermediate image it alone writes (and does not read); `at` needs a later consumer stage that is the only reader of
 * this stage's image (not an output), is itself tiled, and this stage exact or grid-sampled
 * on demand, the consumer's loop order pf_exec_tile_order_ok, and the consumer's approximation
 * (consumer_approx, may be NULL) not read this stage's image as its reference (importance
 * sampling and channel copies read it whole). */
int pf_exec_validate(const pf_program *prog, int stage, const pf_exec_gene *g,
                     const pf_approx_gene *approx, const pf_exec_gene *consumer,
                     const pf_approx_gene *consumer_approx, pf_error *err);

/* The chains of a whole schedule's genes (exec[stage]): at most PF_EXEC_MAX_CHAIN stages
 * computed `at` one another or inlined into one another, an inlined stage's expression at most
 * PF_EXEC_MAX_INLINE_NODES nodes with what is inlined into it, and no stage above
 * PF_MAX_INLINED_NODES that way. On failure *bad is the stage whose gene is refused. */
int pf_exec_validate_chains(const pf_program *prog, const pf_exec_gene *exec, int *bad,
                            pf_error *err);

/* `gpu`: a stage of two to four variables (the fourth: a loop of launches on the host), not
 * serial unless it accumulates (pf_stage_accumulates), tiled in x and y, computed root, in
 * the default order, without vectorize, parallel or unroll; at most PF_EXEC_MAX_THREADS
 * threads, none more than the tile's points. (A stage `at` a GPU stage is checked by
 * pf_exec_validate: it takes nothing of its own.) */
#define PF_EXEC_MAX_THREADS 1024
int pf_exec_validate_gpu(const pf_program *prog, int stage, const pf_exec_gene *g, pf_error *err);
/* Whether serial stage st may run its iterations concurrently with atomic adds: every image
 * write is `+=` or `-=` and it reads none of the images it writes (exec_atomic.c). False for
 * a stage that is not serial; why (may be NULL when why_len is 0) gets the reason when a
 * serial stage does not qualify. */
bool pf_stage_accumulates(const pf_stage *st, char *why, size_t why_len);
/* Threads of a `gpu` stage's blocks along d (0 x, 1 y): the gene's, else the tile size. */
int pf_exec_gpu_threads(const pf_exec_gene *g, int d);

/* `at C slide` on top of `at C`: C tiled in two dimensions (its row loop serial and in order
 * inside a tile), the stage exact, its image's boundary clamp or constant, and the rows of C's
 * reads a window that moves with C's row (pf_exec_slide_rows). */
int pf_exec_validate_slide(const pf_program *prog, int stage, const pf_exec_gene *g,
                           const pf_approx_gene *approx, const pf_exec_gene *consumer,
                           pf_error *err);

/* The rows [y + *lo, y + *hi] of producer's image that row y of consumer reads: every read at
 * row y + an offset made of integer constants and reduction (or `for`) variables whose bounds
 * are constants or y + constants; at most PF_EXEC_MAX_SLIDE rows. Else -1 with a message. */
#define PF_EXEC_MAX_SLIDE 1024
int pf_exec_slide_rows(const pf_program *prog, int producer, int consumer, int *lo, int *hi,
                       pf_error *err);

/* The single assignment `IMG[v1, ..., vk] = e;` an inlinable stage consists of, or NULL. */
const pf_stmt *pf_exec_inline_body(const pf_stage *st);

/* The single later stage that reads stage's image (its only possible `at` target), or -1. */
int pf_exec_sole_consumer(const pf_program *prog, int stage);
/* Whether no stage can be computed at stage's tiles and stage at none: it has no sole consumer
 * and is none's. Its default schedule is then `root vectorize W parallel`, and an execution
 * gene changes nothing of it but what the gene's own fields say. */
bool pf_exec_runs_alone(const pf_program *prog, int stage);

#endif
