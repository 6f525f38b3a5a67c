/* `P exec at C slide` (docs/schedule.md section 8): the rows of P's image one row of C reads
 * (the windows of read_window.h), and the validation of the directive beyond what `at`
 * requires. */
#include "perforate/exec.h"

#include "perforate/read_window.h"

#include <stdint.h>

/* The union of the row windows of every read (each at row y + a constant window). */
typedef struct rows {
    bool ok;
    int reads;
    int64_t lo, hi;
} rows;

static void add_rows(void *ctx, const pf_expr *read, const pf_window_scope *scope)
{
    rows *R = ctx;
    if (read->n_args < 2)
        return;
    pf_window w = pf_window_of(scope, read->args[1]);
    if (!w.ok || w.coef != 1 || w.lo > w.hi) {
        R->ok = false;
        return;
    }
    R->lo = R->reads ? (w.lo < R->lo ? w.lo : R->lo) : w.lo;
    R->hi = R->reads ? (w.hi > R->hi ? w.hi : R->hi) : w.hi;
    R->reads++;
}

int pf_exec_slide_rows(const pf_program *prog, int producer, int consumer, int *lo, int *hi,
                       pf_error *err)
{
    const pf_stage *p = prog->stages[producer], *c = prog->stages[consumer];
    const pf_image_decl *img = p->image->image;
    const pf_symbol *y = c->n_vars >= 2 ? c->vars[1] : NULL;
    rows S = { y != NULL, 0, 0, 0 };
    if (y)
        pf_read_windows(c, img, y, add_rows, &S);
    if (!S.ok || S.reads == 0)
        return pf_fail(err, "%s: 'at %s slide' needs every read of %s in %s at row %s + a "
                       "constant (constants and reduction variables with constant bounds), so "
                       "that the rows one row of %s reads form a window of constant height "
                       "that only moves forward", p->name, c->name, img->name, c->name,
                       y ? y->name : "y", c->name);
    if (S.hi - S.lo + 1 > PF_EXEC_MAX_SLIDE)
        return pf_fail(err, "%s: 'at %s slide' would keep %lld rows of %s (at most %d)", p->name,
                       c->name, (long long)(S.hi - S.lo + 1), img->name, PF_EXEC_MAX_SLIDE);
    *lo = (int)S.lo;
    *hi = (int)S.hi;
    return 0;
}

int pf_exec_validate_slide(const pf_program *prog, int stage, const pf_exec_gene *g,
                           const pf_approx_gene *approx, const pf_exec_gene *consumer,
                           pf_error *err)
{
    const pf_stage *st = prog->stages[stage];
    if (g->at < 0)
        return pf_fail(err, "%s: 'slide' needs 'at STAGE' ('exec at CONSUMER slide')", st->name);
    const char *cn = prog->stages[g->at]->name;
    if (!consumer || !consumer->set || consumer->tile[1] <= 0)
        return pf_fail(err, "%s: 'at %s slide' needs %s tiled in two dimensions, so that its "
                       "row loop runs serially and in order inside each tile%s (e.g. '%s exec "
                       "tile 256 64')", st->name, cn, cn,
                       consumer && consumer->parallel
                           ? "; untiled and parallel, its row loop is the parallel loop" : "",
                       cn);
    int px = -1, py = -1;  /* positions of x and y in the consumer's reorder, innermost first */
    for (int i = 0; i < consumer->n_order; i++) {
        px = consumer->order[i] == 0 ? i : px;
        py = consumer->order[i] == 1 ? i : py;
    }
    if (px > py)
        return pf_fail(err, "%s: 'at %s slide' needs %s's x loop inside its row loop (its "
                       "reorder puts x outside y: each row of the window must be computed "
                       "across the tile before the next)", st->name, cn, cn);
    if (approx && approx->kind != PF_GENE_EXACT)
        return pf_fail(err, "%s: 'at %s slide' needs %s exact (an approximated or on-demand "
                       "producer has no rows to slide)", st->name, cn, st->name);
    const pf_image_decl *img = st->image->image;
    if (img->boundary == PF_BOUNDARY_MIRROR || img->boundary == PF_BOUNDARY_WRAP)
        return pf_fail(err, "%s: 'at %s slide' needs %s's boundary clamp or constant (a %s read "
                       "beyond the edge can land on a row the window no longer holds)",
                       st->name, cn, img->name,
                       img->boundary == PF_BOUNDARY_MIRROR ? "mirror" : "wrap");
    int lo, hi;
    return pf_exec_slide_rows(prog, stage, g->at, &lo, &hi, err);
}
