/* The default GPU schedule (default_schedule.h): what a stage without an `exec` line gets when
 * the plan's target is a GPU (docs/gpu.md).
 *
 * - Every stage of two or more variables that is not serial runs on the GPU: 32 x 8 tiles are
 *   blocks of 32 x 8 threads, one point a thread (a warp covers 32 consecutive x, so loads and
 *   stores of a row coalesce); a third variable (the channel) is the grid's z, a fourth (the
 *   bilateral grid's channel of its 4-D grid) a loop of launches on the host.
 * - A producer the CPU default would compute per tile of its consumer (pf_default_fusable: a
 *   small stencil, exact or sampled on demand) is computed in the consumer's blocks, by its
 *   threads, in shared memory; the consumer then has 64 x 64 tiles and 64 x 4 threads, 16 rows a
 *   thread, the shape of the best hand CUDA blur of ../shared/anchors/gpu (halo 16 rows per 64),
 *   unless the producer's image has a mirror or wrap boundary (its window would not fit).
 *   Only one level: a producer that has producers of its own, or a consumer that is itself
 *   computed at another stage, stays root (its image goes through global memory).
 * - A serial (scatter) stage whose writes are all adds (pf_stage_accumulates: the bilateral
 *   grid's splat) runs on the GPU too, 32 x 8 tiles, a pixel a thread, its writes atomic adds;
 *   it is never fused (`at` does not apply to serial stages).
 * - Other serial stages, and stages of one variable, keep plain loops: the CUDA backend runs
 *   such a nest as a kernel of one thread (correct, slow: docs/gpu.md §5 says why). */
#include "perforate/default_schedule.h"

#include "lang/lang.h"
#include "perforate/exec.h"

enum { TILE_X = 32, TILE_Y = 8, FUSED_X = 64, FUSED_Y = 64, FUSED_TX = 64, FUSED_TY = 4 };

static bool gpu_stage(const pf_stage *st)
{
    return st->n_vars >= 2 && (!st->serial || pf_stage_accumulates(st, NULL, 0));
}

/* Mirror and wrap boundaries make a read's row anywhere in the image to bounds inference: the
 * block's window would be whole columns, more shared memory than a block has (mosaic's
 * blur_x at 2048x1536: 384 KiB). */
static bool bounded_window(const pf_stage *st)
{
    for (int i = 0; i < st->n_writes; i++)
        if (st->writes[i]->boundary == PF_BOUNDARY_MIRROR ||
            st->writes[i]->boundary == PF_BOUNDARY_WRAP)
            return false;
    return true;
}

static bool has_producer(const pf_plan *plan, int c)
{
    for (int i = 0; i < plan->prog->n_stages; i++)
        if (plan->stages[i].exec.at == c)
            return true;
    return false;
}

void pf_default_gpu_schedule(pf_plan *plan)
{
    const pf_program *prog = plan->prog;
    pf_plan_stage *S = plan->stages;
    for (int i = 0; i < prog->n_stages; i++) {
        if (S[i].exec_given)
            continue;
        S[i].exec = pf_exec_default();
        if (!gpu_stage(prog->stages[i]))
            continue;
        S[i].exec.gpu = true;
        S[i].exec.tile[0] = TILE_X;
        S[i].exec.tile[1] = TILE_Y;
    }
    for (int p = 0; p < prog->n_stages; p++) {
        if (S[p].exec_given || !gpu_stage(prog->stages[p]) || prog->stages[p]->serial ||
            has_producer(plan, p) ||
            !pf_default_fusable(plan, p) || !bounded_window(prog->stages[p]))
            continue;
        int c = pf_exec_sole_consumer(prog, p);
        if (!gpu_stage(prog->stages[c]) || prog->stages[c]->serial)
            continue;
        S[p].exec = pf_exec_default();
        S[p].exec.at = c;
        S[c].exec.tile[0] = FUSED_X;
        S[c].exec.tile[1] = FUSED_Y;
        S[c].exec.threads[0] = FUSED_TX;
        S[c].exec.threads[1] = FUSED_TY;
    }
}
