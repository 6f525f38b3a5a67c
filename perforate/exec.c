/* Execution genes: parsing, printing and validation (see exec.h). */
#include "perforate/exec.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

pf_exec_gene pf_exec_default(void)
{
    pf_exec_gene g = { 0 };
    g.at = -1;
    return g;
}

static bool reads_image(const pf_stage *st, const pf_image_decl *img)
{
    for (int i = 0; i < st->n_reads; i++)
        if (st->reads[i] == img)
            return true;
    return false;
}

int pf_exec_sole_consumer(const pf_program *prog, int stage)
{
    const pf_image_decl *img = prog->stages[stage]->image->image;
    if (img->role != PF_IMAGE_LOCAL)
        return -1;
    int found = -1;
    for (int i = stage + 1; i < prog->n_stages; i++) {
        if (!reads_image(prog->stages[i], img))
            continue;
        if (found >= 0)
            return -1;
        found = i;
    }
    return found;
}

/* An integer word in [lo, hi]. */
static int int_word(const char *w, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(w, &end, 10);
    if (!*w || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int find_stage(const pf_program *prog, const char *name)
{
    for (int i = 0; i < prog->n_stages; i++)
        if (strcmp(prog->stages[i]->name, name) == 0)
            return i;
    return -1;
}

static int parse_word(const pf_program *prog, char *const *w, int n, int *i, pf_exec_gene *g,
                      pf_error *err)
{
    const char *kw = w[*i];
    bool has_arg = *i + 1 < n;
    if (strcmp(kw, "root") == 0) {
        g->at = -1;
        g->slide = false;
    } else if (strcmp(kw, "inline") == 0) {
        g->at = PF_EXEC_INLINE;
        g->slide = false;
    } else if (strcmp(kw, "parallel") == 0) {
        g->parallel = true;
    } else if (strcmp(kw, "at") == 0) {
        if (!has_arg || (g->at = find_stage(prog, w[*i + 1])) < 0)
            return pf_fail(err, "'at' needs the name of a consumer stage");
        (*i)++;
        g->slide = *i + 1 < n && strcmp(w[*i + 1], "slide") == 0;
        *i += g->slide;
    } else if (strcmp(kw, "slide") == 0) {
        return pf_fail(err, "'slide' goes right after 'at STAGE' (e.g. 'exec at loop_output "
                       "slide')");
    } else if (strcmp(kw, "vectorize") == 0 || strcmp(kw, "unroll") == 0) {
        bool vec = kw[0] == 'v';
        int *slot = vec ? &g->vectorize : &g->unroll, v;
        if (!has_arg || int_word(w[*i + 1], 1, 64, &v) != 0 ||
            (vec ? (v != 4 && v != 8 && v != 16) : (v != 2 && v != 4 && v != 8)))
            return pf_fail(err, "'%s' takes %s", kw, vec ? "4, 8 or 16" : "2, 4 or 8");
        *slot = v;
        (*i)++;
    } else if (strcmp(kw, "tile") == 0) {
        int k = 0;
        while (k < 2 && *i + 1 < n && int_word(w[*i + 1], 1, PF_EXEC_MAX_TILE, &g->tile[k]) == 0) {
            k++;
            (*i)++;
        }
        if (k == 0)
            return pf_fail(err, "'tile' takes one or two sizes from 1 to %d", PF_EXEC_MAX_TILE);
    } else {
        return pf_fail(err, "unknown execution directive '%s' (root, inline, at STAGE [slide], "
                       "tile, vectorize, parallel, unroll)", kw);
    }
    return 0;
}

int pf_exec_parse(const pf_program *prog, int stage, char *const *words, int n, pf_exec_gene *g,
                  pf_error *err)
{
    (void)stage;
    *g = pf_exec_default();
    g->set = true;
    for (int i = 0; i < n; i++)
        if (parse_word(prog, words, n, &i, g, err) != 0)
            return -1;
    return 0;
}

void pf_exec_print(const pf_program *prog, const pf_exec_gene *g, pf_strbuf *out)
{
    if (g->at >= 0 && g->at < prog->n_stages)
        pf_sb_printf(out, "at %s%s", prog->stages[g->at]->name, g->slide ? " slide" : "");
    else
        pf_sb_puts(out, g->at == PF_EXEC_INLINE ? "inline" : "root");
    if (g->tile[0] > 0) {
        pf_sb_printf(out, " tile %d", g->tile[0]);
        if (g->tile[1] > 0)
            pf_sb_printf(out, " %d", g->tile[1]);
    }
    if (g->vectorize > 1)
        pf_sb_printf(out, " vectorize %d", g->vectorize);
    if (g->parallel)
        pf_sb_puts(out, " parallel");
    if (g->unroll > 1)
        pf_sb_printf(out, " unroll %d", g->unroll);
}

bool pf_exec_equal(const pf_exec_gene *a, const pf_exec_gene *b)
{
    if (a->set != b->set)
        return false;
    if (!a->set)
        return true;
    return a->at == b->at && a->slide == b->slide && a->tile[0] == b->tile[0] &&
           a->tile[1] == b->tile[1] && a->vectorize == b->vectorize &&
           a->parallel == b->parallel && a->unroll == b->unroll;
}

static int validate_at(const pf_program *prog, int stage, const pf_exec_gene *g,
                       const pf_approx_gene *approx, const pf_exec_gene *consumer,
                       const pf_approx_gene *consumer_approx, pf_error *err)
{
    const pf_stage *st = prog->stages[stage];
    int c = pf_exec_sole_consumer(prog, stage);
    if (c < 0 || c != g->at)
        return pf_fail(err, "%s: 'at %s' needs %s's image to be read by that stage only (and "
                       "not to be an output)", st->name, prog->stages[g->at]->name, st->name);
    if (st->n_vars < 2 || prog->stages[c]->n_vars < 2)
        return pf_fail(err, "%s: 'at' needs both stages to have at least two variables",
                       st->name);
    if (st->serial || prog->stages[c]->serial)
        return pf_fail(err, "%s: 'at' does not apply to serial (scatter) stages", st->name);
    /* Tiles recompute their halo: computing a pixel twice must give the same value, and no
     * other stage may have written it in between. */
    if (reads_image(st, st->image->image))
        return pf_fail(err, "%s: 'at' recomputes halo pixels, so the stage may not read its own "
                       "image", st->name);
    for (int i = 0; i < prog->n_stages; i++)
        for (int k = 0; i != stage && k < prog->stages[i]->n_writes; k++)
            if (prog->stages[i]->writes[k] == st->image->image)
                return pf_fail(err, "%s: 'at' needs the stage to be the only writer of %s (%s "
                               "writes it too)", st->name, st->image->image->name,
                               prog->stages[i]->name);
    if (!consumer || !consumer->set || consumer->tile[1] <= 0 || consumer->at == PF_EXEC_INLINE)
        return pf_fail(err, "%s: 'at %s' needs %s to be tiled in two dimensions (e.g. '%s exec "
                       "tile 64 32'), computed root or at its own consumer", st->name,
                       prog->stages[c]->name, prog->stages[c]->name, prog->stages[c]->name);
    if (approx && approx->kind != PF_GENE_EXACT &&
        !(approx->kind == PF_GENE_GRID && approx->on_demand))
        return pf_fail(err, "%s: 'at' needs the stage exact or grid-sampled on demand",
                       st->name);
    const pf_approx_gene *ca = consumer_approx;
    if (ca && (ca->kind == PF_GENE_IMPORTANCE || ca->kind == PF_GENE_CHANNELS ||
               ca->channels > 0) &&
        pf_stage_reference(prog->stages[c]) == st->image->image)
        return pf_fail(err, "%s: 'at %s' is not possible while %s's %s reads %s whole (its "
                       "reference image)", st->name, prog->stages[c]->name,
                       prog->stages[c]->name,
                       ca->kind == PF_GENE_IMPORTANCE ? "importance sampling" : "channel copy",
                       st->image->image->name);
    return 0;
}

/* The single assignment `IMG[v1, ..., vk] = e;` an inlinable stage consists of, or NULL. */
const pf_stmt *pf_exec_inline_body(const pf_stage *st)
{
    const pf_stmt *s = st->body;
    while (s && s->kind == PF_S_BLOCK && s->n_body == 1)
        s = s->body[0];
    if (!s || s->kind != PF_S_ASSIGN || s->assign_op != PF_ASSIGN_SET ||
        s->target.kind != PF_LV_IMAGE || s->target.scatter)
        return NULL;
    return s;
}

static bool reads_image_in(const pf_expr *e, const pf_image_decl *img)
{
    if (!e)
        return false;
    if (e->kind == PF_E_IMAGE_READ && e->sym->image == img)
        return true;
    if (reads_image_in(e->a, img) || reads_image_in(e->b, img) || reads_image_in(e->c, img))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (reads_image_in(e->args[i], img))
            return true;
    return false;
}

static int validate_inline(const pf_program *prog, const pf_stage *st,
                           const pf_approx_gene *approx, pf_error *err)
{
    const pf_image_decl *img = st->image->image;
    const pf_stmt *s = pf_exec_inline_body(st);
    if (st->serial || st->over || st->n_vars != img->ndims || !s)
        return pf_fail(err, "%s: 'inline' needs a stage that is one assignment to its own pixel "
                       "over its whole image", st->name);
    if (img->role != PF_IMAGE_LOCAL || pf_image_writer_count(prog, img) != 1)
        return pf_fail(err, "%s: 'inline' needs an intermediate image written by this stage "
                       "only", st->name);
    if (reads_image_in(s->value, img))
        return pf_fail(err, "%s: 'inline' needs a stage that does not read its own image",
                       st->name);
    if (approx && approx->kind != PF_GENE_EXACT)
        return pf_fail(err, "%s: an inlined stage cannot be approximated", st->name);
    return 0;
}

int pf_exec_validate(const pf_program *prog, int stage, const pf_exec_gene *g,
                     const pf_approx_gene *approx, const pf_exec_gene *consumer,
                     const pf_approx_gene *consumer_approx, pf_error *err)
{
    if (!g->set)
        return 0;
    if (stage < 0 || stage >= prog->n_stages)
        return pf_fail(err, "execution genes apply to stages only");
    const pf_stage *st = prog->stages[stage];
    if (st->serial && g->vectorize > 1)
        return pf_fail(err, "%s: a serial (scatter) stage cannot be vectorized (its 'parallel' "
                       "runs rows in bands where the scatter's row index changes)", st->name);
    if (g->tile[1] > 0 && st->n_vars < 2)
        return pf_fail(err, "%s: two tile sizes need two stage variables", st->name);
    for (int k = 0; k < 2; k++)
        if (g->tile[k] < 0 || g->tile[k] > PF_EXEC_MAX_TILE)
            return pf_fail(err, "%s: tile size %d out of range", st->name, g->tile[k]);
    if (g->vectorize != 0 && g->vectorize != 4 && g->vectorize != 8 && g->vectorize != 16)
        return pf_fail(err, "%s: vector width %d (4, 8 or 16)", st->name, g->vectorize);
    if (g->unroll != 0 && g->unroll != 2 && g->unroll != 4 && g->unroll != 8)
        return pf_fail(err, "%s: unroll factor %d (2, 4 or 8)", st->name, g->unroll);
    if (g->at == PF_EXEC_INLINE)
        return validate_inline(prog, st, approx, err);
    if (g->slide && (g->at < 0 || pf_exec_validate_slide(prog, stage, g, approx, consumer,
                                                          err) != 0))
        return g->at < 0 ? pf_fail(err, "%s: 'slide' needs 'at STAGE' ('exec at CONSUMER "
                                   "slide')", st->name) : -1;
    if (g->at >= 0)
        return validate_at(prog, stage, g, approx, consumer, consumer_approx, err);
    return 0;
}
