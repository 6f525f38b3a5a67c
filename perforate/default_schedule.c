/* The default execution schedule (see default_schedule.h). Every stage whose iterations are
 * independent runs its rows (or tiles) on the thread pool and its x loop as 8-lane vector code
 * (AVX2 width for floats; 16 lanes for arithmetic-bound stages on hosts that prefer AVX-512,
 * default_width below); serial (scatter) stages ask for parallel bands of rows, which
 * pass_bands makes where the scatter's row index is a function of the row (else they stay serial).
 *
 * On top of that one fusion rule, the one that pays most in Halide's schedules: an exact stage
 * (or one sampled on a grid and reconstructed on demand, pf_plan_stage.scratch_ok) whose only
 * consumer reads it through a small stencil (every read at the consumer's own x and
 * y plus a constant offset, or a reduction or loop variable with constant bounds, of at most
 * MAX_HALO, and at exactly the consumer's own index along further dimensions) is computed per
 * TILE_X x TILE_Y tile of that consumer, in a scratch window that stays in cache
 * (codegen/lower_at.c), instead of going through memory as a full-size image. Chains fuse too
 * (unsharp mask: the horizontal blur per tile of the vertical one, that per tile of the
 * combination), up to PF_EXEC_MAX_CHAIN stages: each link nests a loop nest and its window
 * bounds in the next, so a long chain of stencils would compile in time and memory that grow
 * with the square of its length, and its nest would be as deep as the program is long
 * (issue 27). The price is the recomputed halo: 16 rows per 64 for the 17-tap blur. And a
 * stage sampled on a grid whose skipped pixels are filled after it (store mode) is tiled, so
 * that each tile fills its own pixels while its samples are in cache.
 *
 * The search starts from this schedule and measures speedups against it, so a speedup is never
 * just a better schedule of the exact program. */
#include "perforate/default_schedule.h"

#include "base/arena.h"
#include "lang/lang.h"
#include "perforate/exec.h"
#include "perforate/read_window.h"

#include <stdlib.h>

enum { MAX_HALO = 16, TILE_X = 128, TILE_Y = 64, FILL_X = 512, FILL_Y = 64, FUSED_FILL_X = 2048,
       FUSED_FILL_Y = 128, MAX_TILE = 1024 };

static bool is_var(const pf_expr *e, const pf_symbol *v)
{
    return e->kind == PF_E_NAME && e->sym == v;
}

/* Index e of a read is v itself, or v plus or minus an offset (on the left of a sum too) whose
 * window is constant and within MAX_HALO. */
static bool near_own(const pf_window_scope *S, const pf_expr *e, const pf_symbol *v)
{
    if (is_var(e, v))
        return true;
    if (e->kind != PF_E_BINARY || (e->op != PF_OP_ADD && e->op != PF_OP_SUB))
        return false;
    const pf_expr *off = is_var(e->a, v) ? e->b : e->op == PF_OP_ADD && is_var(e->b, v) ? e->a
                                                                                         : NULL;
    pf_window w = off ? pf_window_of(S, off) : (pf_window){ false, 0, 0, 0 };
    return w.ok && w.coef == 0 && w.lo >= -MAX_HALO && w.hi <= MAX_HALO;
}

typedef struct stencil {
    const pf_stage *consumer;
    int d;      /* the dimension checked */
    int reads;
    bool ok;
} stencil;

/* Reads along x and y (d < 2): near the consumer's own index; further dimensions (outside the
 * tile: channels, grid slices, where nothing is recomputed): exactly its own index. */
static void check_read(void *ctx, const pf_expr *read, const pf_window_scope *scope)
{
    stencil *T = ctx;
    const pf_expr *e = read->args[T->d];
    const pf_symbol *v = T->consumer->vars[T->d];
    T->reads++;
    T->ok = T->ok && (T->d < 2 ? near_own(scope, e, v) : is_var(e, v));
}

/* Whether the consumer reads img only through a small stencil around its own x and y. */
static bool stencil_reads(const pf_stage *consumer, const pf_image_decl *img)
{
    for (int d = 0; d < img->ndims && d < consumer->n_vars; d++) {
        stencil T = { consumer, d, 0, true };
        pf_read_windows(consumer, img, consumer->vars[d], check_read, &T);
        if (!T.ok || T.reads == 0)
            return false;
    }
    return true;
}

static bool plain_stage(const pf_stage *st)
{
    return st->n_vars >= 2 && !st->serial;
}

/* Consumers whose approximation keeps one loop nest over the lattice (masks run it twice). */
static bool single_nest(const pf_stage_approx *a)
{
    return !a || a->sample == PF_SAMPLE_GRID || a->sample == PF_SAMPLE_LOOP ||
           a->sample == PF_SAMPLE_ALL;
}

bool pf_default_may_fuse(const pf_program *prog, int p)
{
    int c = pf_exec_sole_consumer(prog, p);
    if (c < 0)
        return false;
    const pf_stage *ps = prog->stages[p], *cs = prog->stages[c];
    return plain_stage(ps) && plain_stage(cs) && stencil_reads(cs, ps->image->image);
}

bool pf_default_alone(const pf_program *prog, int s)
{
    if (pf_default_may_fuse(prog, s))
        return false;
    for (int p = 0; p < prog->n_stages; p++)
        if (p != s && pf_exec_sole_consumer(prog, p) == s && pf_default_may_fuse(prog, p))
            return false;
    return true;
}

bool pf_default_fusable(const pf_plan *plan, int p)
{
    const pf_program *prog = plan->prog;
    int c = pf_exec_sole_consumer(prog, p);
    if (!pf_default_may_fuse(prog, p) || plan->stages[c].exec_given ||
        plan->stages[c].exec.at != -1)
        return false;
    return single_nest(plan->stages[c].approx) && plan->stages[p].scratch_ok;
}

/* Tile size n pixels as a count of samples at spacing sp, in [1, MAX_TILE]. */
static int samples(int px, int sp)
{
    int n = px / sp;
    return n < 1 ? 1 : n > MAX_TILE ? MAX_TILE : n;
}

/* A store-mode grid stage reconstructs per tile when tiled (lower_fill.c): its image is then
 * written once instead of three times. Tiles of about w x h pixels (tiles count samples). */
static void tile_for_fill(const pf_stage_approx *a, int w, int h, pf_exec_gene *g)
{
    const int *sp = a->spacing;
    g->tile[0] = samples(w, sp[0]);
    g->tile[1] = samples(h, sp[1]);
}

/* ---- which stages are bound by arithmetic ---- */

static bool math_in_loop_stmt(const pf_stmt *s, int loops, int calls);

static bool is_transcendental(pf_builtin b)
{
    return b == PF_B_EXP || b == PF_B_LOG || b == PF_B_SIN || b == PF_B_COS || b == PF_B_TAN ||
           b == PF_B_POW || b == PF_B_ATAN2;
}

/* Whether e calls exp, log, pow or a trigonometric function inside a loop of the pixel body
 * (loops: the `for` loops and reductions around e; calls: helper calls followed so far). */
static bool math_in_loop_expr(const pf_expr *e, int loops, int calls)
{
    if (!e)
        return false;
    if (e->kind == PF_E_BUILTIN && loops > 0 && is_transcendental(e->builtin))
        return true;
    if (e->kind == PF_E_CALL && e->sym && e->sym->func && calls < 8 &&
        math_in_loop_stmt(e->sym->func->body, loops, calls + 1))
        return true;
    int inner = loops + (e->kind == PF_E_REDUCE);
    if (math_in_loop_expr(e->a, loops, calls) || math_in_loop_expr(e->b, loops, calls) ||
        math_in_loop_expr(e->c, loops, calls))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (math_in_loop_expr(e->args[i], inner, calls))
            return true;
    return false;
}

static bool math_in_loop_stmt(const pf_stmt *s, int loops, int calls)
{
    if (!s)
        return false;
    for (int i = 0; i < s->n_body; i++)
        if (math_in_loop_stmt(s->body[i], loops, calls))
            return true;
    for (int i = 0; i < s->target.n_index; i++)
        if (math_in_loop_expr(s->target.index[i], loops, calls))
            return true;
    int inner = loops + (s->kind == PF_S_FOR);
    return math_in_loop_expr(s->value, loops, calls) || math_in_loop_expr(s->cond, loops, calls) ||
           math_in_loop_expr(s->lo, loops, calls) || math_in_loop_expr(s->hi, loops, calls) ||
           math_in_loop_stmt(s->then_s, inner, calls) || math_in_loop_stmt(s->else_s, loops, calls);
}

/* Vector width of a non-serial stage: 8 lanes (AVX2), or the host's wider registers for a
 * stage whose pixel runs a window of transcendental math (the bilateral filter: an exp per
 * tap). Such a tap is a chain of ~40 vector instructions, bound by instruction throughput,
 * and 16-lane AVX-512 code does a tap of 16 pixels in about the time 8-lane code takes for 8
 * (docs/bench-history.md, 2026-11-26). Elsewhere 16 lanes gained nothing measurable (blur, unsharp,
 * demosaic and the bilateral grid are bound by memory) or doubled the code (the median's
 * selection network: compile 89 -> 145 ms for 1.15x). */
int pf_default_width(const pf_stage *st, int wide_lanes)
{
    if (st->serial)
        return 0;
    return wide_lanes > 8 && pf_default_wide_math(st) ? wide_lanes : 8;
}

bool pf_default_wide_math(const pf_stage *st)
{
    return math_in_loop_stmt(st->body, 0, 0);
}

void pf_default_schedule(pf_plan *plan)
{
    if (plan->target.gpu) {
        pf_default_gpu_schedule(plan);
        return;
    }
    const pf_program *prog = plan->prog;
    pf_plan_stage *S = plan->stages;
    for (int i = 0; i < prog->n_stages; i++) {
        if (S[i].exec_given)
            continue;
        S[i].exec = pf_exec_default();
        S[i].exec.vectorize = pf_default_width(prog->stages[i], plan->target.vector_lanes);
        S[i].exec.parallel = true;
    }
    /* below[i]: stages in the chain of producers computed at i's tiles, i included */
    int *below = pf_xcalloc((size_t)prog->n_stages + 1, sizeof *below);
    for (int p = 0; p < prog->n_stages; p++) {
        below[p] += 1;
        if (S[p].exec_given || below[p] >= PF_EXEC_MAX_CHAIN || !pf_default_fusable(plan, p))
            continue;
        int c = pf_exec_sole_consumer(prog, p);
        S[p].exec.at = c;
        if (below[c] < below[p])
            below[c] = below[p];
        if (S[c].tile_fill_ok) {
            /* Wide tiles: a tile's producer samples and fill have borders in x (halo reads,
             * the next tile's first column, scalar edge loops), and on images up to 2048
             * wide these tiles have none but the image's. The paper's blur variant at
             * 2048x1536, 2 threads: 5.0 ms with 2048x128, 7.0 with 1024x128, 8-9 with the
             * fill's own 512x64. */
            tile_for_fill(S[c].approx, FUSED_FILL_X, FUSED_FILL_Y, &S[c].exec);
        } else {
            S[c].exec.tile[0] = TILE_X;
            S[c].exec.tile[1] = TILE_Y;
        }
    }
    free(below);
    for (int i = 0; i < prog->n_stages; i++)
        if (!S[i].exec_given && S[i].exec.tile[0] == 0 && S[i].tile_fill_ok)
            tile_for_fill(S[i].approx, FILL_X, FILL_Y, &S[i].exec);
}
