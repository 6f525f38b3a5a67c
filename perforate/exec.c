/* Execution genes: parsing, printing and validation (see exec.h). */
#include "perforate/exec.h"

#include "base/arena.h"
#include "lang/lang.h"
#include "lang/walk.h"

#include <limits.h>
#include <stdio.h>
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

bool pf_exec_runs_alone(const pf_program *prog, int stage)
{
    if (pf_exec_sole_consumer(prog, stage) >= 0)
        return false;
    for (int p = 0; p < stage; p++)
        if (pf_exec_sole_consumer(prog, p) == stage)
            return false;
    return true;
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

/* ---- loop order (`reorder`) ---- */

static const char *const keywords[] = { "root", "inline", "at", "tile", "reorder",
                                        "vectorize", "parallel", "unroll", "gpu" };

static bool is_keyword(const char *w)
{
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        if (strcmp(w, keywords[i]) == 0)
            return true;
    return false;
}

static int n_tiled(const pf_exec_gene *g, int n_vars)
{
    int n = 0;
    for (int d = 0; d < 2 && d < n_vars; d++)
        n += g->tile[d] > 0;
    return n;
}

int pf_exec_default_order(const pf_exec_gene *g, int n_vars, int *order)
{
    int n = 0;
    for (int d = 0; d < 2 && d < n_vars; d++)
        order[n++] = d;
    for (int d = 0; d < 2 && d < n_vars; d++)
        if (g->tile[d] > 0)
            order[n++] = PF_EXEC_TILE_LOOP(d);
    for (int d = 2; d < n_vars; d++)
        order[n++] = d;
    return n;
}

/* Whether the gene's reorder is the default order of a stage with k variables (k < 0: as
 * many as the list's length and the tiles imply, for a valid gene). */
static bool order_is_default(const pf_exec_gene *g, int k)
{
    if (k < 0)
        k = g->n_order - n_tiled(g, PF_EXEC_MAX_ORDER);
    int def[PF_EXEC_MAX_ORDER];
    if (g->n_order <= 0 || k < 1 || pf_exec_default_order(g, k, def) != g->n_order)
        return g->n_order <= 0;
    return memcmp(def, g->order, sizeof *def * (size_t)g->n_order) == 0;
}

/* The loop's name: the stage variable's, or `<var>o` for its tile loop. */
static void print_loop(const pf_stage *st, int id, pf_strbuf *out)
{
    int d = id >= PF_EXEC_TILE_LOOP(0) ? id - PF_EXEC_TILE_LOOP(0) : id;
    if (d < 0 || d >= st->n_vars)
        pf_sb_puts(out, "?");
    else
        pf_sb_printf(out, "%s%s", st->var_names[d], id == d ? "" : "o");
}

static void loop_name(const pf_stage *st, int id, char *buf, size_t cap)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    print_loop(st, id, &sb);
    snprintf(buf, cap, "%s", pf_sb_str(&sb));
    pf_sb_free(&sb);
}

/* A tiled variable v whose tile loop's name `vo` is also a stage variable's, or -1. */
static int tile_name_clash(const pf_stage *st, const pf_exec_gene *g)
{
    for (int d = 0; d < 2 && d < st->n_vars; d++) {
        size_t len = strlen(st->var_names[d]);
        for (int e = 0; g->tile[d] > 0 && e < st->n_vars; e++)
            if (strncmp(st->var_names[e], st->var_names[d], len) == 0 &&
                strcmp(st->var_names[e] + len, "o") == 0)
                return d;
    }
    return -1;
}

/* The stage's loops under gene g, innermost first, as text ("x y c xo yo"). */
static void loops_text(const pf_stage *st, const pf_exec_gene *g, char *buf, size_t cap)
{
    int order[PF_EXEC_MAX_ORDER], n = pf_exec_default_order(g, st->n_vars, order);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < cap; i++) {
        char name[80];
        loop_name(st, order[i], name, sizeof name);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", name);
    }
}

/* The loop named `name` of the stage under gene g (its tiles), or -1. */
static int find_loop(const pf_stage *st, const pf_exec_gene *g, const char *name)
{
    for (int d = 0; d < st->n_vars; d++)
        if (strcmp(st->var_names[d], name) == 0)
            return d;
    for (int d = 0; d < 2 && d < st->n_vars; d++) {
        size_t len = strlen(st->var_names[d]);
        if (g->tile[d] > 0 && strncmp(st->var_names[d], name, len) == 0 &&
            strcmp(name + len, "o") == 0)
            return PF_EXEC_TILE_LOOP(d);
    }
    return -1;
}

/* The names after `reorder` (w[0 .. n-1]) as loop ids; an order equal to the default one is
 * dropped (canonical form: it prints nothing). */
static int resolve_order(const pf_stage *st, char *const *w, int n, pf_exec_gene *g,
                         pf_error *err)
{
    char loops[256];
    loops_text(st, g, loops, sizeof loops);
    if (n > PF_EXEC_MAX_ORDER)
        return pf_fail(err, "'reorder' lists %d loops; %s has %d (%s)", n, st->name,
                       st->n_vars + n_tiled(g, st->n_vars), loops);
    for (int i = 0; i < n; i++) {
        g->order[i] = find_loop(st, g, w[i]);
        if (g->order[i] < 0)
            return pf_fail(err, "'reorder': '%s' is not a loop of %s (its loops, innermost "
                           "first: %s)", w[i], st->name, loops);
    }
    g->n_order = n;
    if (order_is_default(g, st->n_vars))
        g->n_order = 0;
    return 0;
}

/* One directive; `reorder` only notes where its names are (*reorder, *n_reorder): they are
 * resolved once the tiles are known. */
static int parse_word(const pf_program *prog, char *const *w, int n, int *i, pf_exec_gene *g,
                      int *reorder, int *n_reorder, pf_error *err)
{
    const char *kw = w[*i];
    bool has_arg = *i + 1 < n;
    if (strcmp(kw, "reorder") == 0) {
        *reorder = *i + 1;
        while (*i + 1 < n && !is_keyword(w[*i + 1]))
            (*i)++;
        *n_reorder = *i + 1 - *reorder;
        if (*n_reorder == 0)
            return pf_fail(err, "'reorder' takes the stage's loops, innermost first");
    } else if (strcmp(kw, "root") == 0) {
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
    } else if (strcmp(kw, "gpu") == 0) {
        g->gpu = true;
        for (int k = 0; k < 2 && *i + 1 < n &&
                        int_word(w[*i + 1], 1, PF_EXEC_MAX_THREADS, &g->threads[k]) == 0; k++)
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
                       "tile, reorder, vectorize, parallel, unroll, gpu)", kw);
    }
    return 0;
}

int pf_exec_parse(const pf_program *prog, int stage, char *const *words, int n, pf_exec_gene *g,
                  pf_error *err)
{
    *g = pf_exec_default();
    g->set = true;
    int reorder = 0, n_reorder = 0;
    for (int i = 0; i < n; i++)
        if (parse_word(prog, words, n, &i, g, &reorder, &n_reorder, err) != 0)
            return -1;
    for (int k = 0; k < 2; k++)  /* canonical: threads equal to the tile are the default */
        if (g->threads[k] == g->tile[k])
            g->threads[k] = 0;
    if (n_reorder > 0)
        return resolve_order(prog->stages[stage], words + reorder, n_reorder, g, err);
    return 0;
}

int pf_exec_gpu_threads(const pf_exec_gene *g, int d)
{
    return g->threads[d] > 0 ? g->threads[d] : g->tile[d];
}

void pf_exec_print(const pf_program *prog, int stage, const pf_exec_gene *g, pf_strbuf *out)
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
    if (stage >= 0 && stage < prog->n_stages &&
        !order_is_default(g, prog->stages[stage]->n_vars)) {
        pf_sb_puts(out, " reorder");
        for (int i = 0; i < g->n_order; i++) {
            pf_sb_putc(out, ' ');
            print_loop(prog->stages[stage], g->order[i], out);
        }
    }
    if (g->vectorize > 1)
        pf_sb_printf(out, " vectorize %d", g->vectorize);
    if (g->parallel)
        pf_sb_puts(out, " parallel");
    if (g->unroll > 1)
        pf_sb_printf(out, " unroll %d", g->unroll);
    if (g->gpu) {
        pf_sb_puts(out, " gpu");
        if (g->threads[0] > 0 || g->threads[1] > 0)
            pf_sb_printf(out, " %d %d", pf_exec_gpu_threads(g, 0), pf_exec_gpu_threads(g, 1));
    }
}

bool pf_exec_equal(const pf_exec_gene *a, const pf_exec_gene *b)
{
    if (a->set != b->set)
        return false;
    if (!a->set)
        return true;
    if (a->at != b->at || a->slide != b->slide || a->tile[0] != b->tile[0] ||
        a->tile[1] != b->tile[1] || a->vectorize != b->vectorize || a->parallel != b->parallel || a->unroll != b->unroll)
        return false;
    if (a->gpu != b->gpu ||
        (a->gpu && (pf_exec_gpu_threads(a, 0) != pf_exec_gpu_threads(b, 0) ||
                    pf_exec_gpu_threads(a, 1) != pf_exec_gpu_threads(b, 1))))
        return false;
    bool da = order_is_default(a, -1), db = order_is_default(b, -1);
    if (da || db)
        return da == db;
    return a->n_order == b->n_order &&
           memcmp(a->order, b->order, sizeof *a->order * (size_t)a->n_order) == 0;
}

bool pf_exec_tile_order_ok(const pf_exec_gene *g)
{
    int phase = 0;  /* 0: x and y, 1: tile loops, 2: further variables */
    for (int i = 0; i < g->n_order; i++) {
        int id = g->order[i];
        int p = id >= PF_EXEC_TILE_LOOP(0) ? 1 : id >= 2 ? 2 : 0;
        if (p < phase)
            return false;
        phase = p;
    }
    return true;
}

/* Each of the stage's loops once (no more, no fewer), each tile loop outside its variable's
 * loop, x innermost when vectorized; not on serial stages, whose order is the semantics. */
static int validate_order(const pf_stage *st, const pf_exec_gene *g, pf_error *err)
{
    char loops[256];
    loops_text(st, g, loops, sizeof loops);
    if (st->serial)
        return pf_fail(err, "%s: 'reorder' does not apply to a serial (scatter) stage: its "
                       "iteration order (last variable outermost) is the program's meaning",
                       st->name);
    if (g->at == PF_EXEC_INLINE)
        return pf_fail(err, "%s: an inlined stage has no loops to reorder", st->name);
    int clash = tile_name_clash(st, g);
    if (clash >= 0)
        return pf_fail(err, "%s: 'reorder' cannot name the tile loop of %s: %so is a stage "
                       "variable", st->name, st->var_names[clash], st->var_names[clash]);
    int k = st->n_vars, pos[PF_EXEC_TILE_LOOP(2)];
    for (int i = 0; i < PF_EXEC_TILE_LOOP(2); i++)
        pos[i] = -1;
    bool ok = g->n_order == k + n_tiled(g, k);
    for (int i = 0; ok && i < g->n_order; i++) {
        int id = g->order[i], d = id >= PF_EXEC_TILE_LOOP(0) ? id - PF_EXEC_TILE_LOOP(0) : id;
        ok = d >= 0 && d < k && (id == d || (d < 2 && g->tile[d] > 0)) && pos[id] < 0;
        if (ok)
            pos[id] = i;
    }
    if (!ok)
        return pf_fail(err, "%s: 'reorder' must list each of the stage's loops exactly once, "
                       "innermost first (%s)", st->name, loops);
    for (int d = 0; d < 2 && d < k; d++)
        if (g->tile[d] > 0 && pos[PF_EXEC_TILE_LOOP(d)] < pos[d])
            return pf_fail(err, "%s: 'reorder' puts tile loop %so inside %s: a tile loop must be "
                           "outside its variable's loop", st->name, st->var_names[d],
                           st->var_names[d]);
    if (g->vectorize > 1 && g->order[0] != 0)
        return pf_fail(err, "%s: 'reorder' with 'vectorize' needs %s innermost (first in the "
                       "list)", st->name, st->var_names[0]);
    return 0;
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
    const pf_stage *cs = prog->stages[c];
    if (consumer->gpu && (g->tile[0] > 0 || g->vectorize > 1 || g->parallel || g->unroll > 1 ||
                          g->n_order > 0 || g->slide || g->gpu))
        return pf_fail(err, "%s: 'at %s' on a GPU stage computes %s in %s's blocks, by its "
                       "threads, in shared memory: it takes no tile, vectorize, parallel, "
                       "unroll, reorder, slide or gpu of its own", st->name, cs->name, st->name,
                       cs->name);
    if (!pf_exec_tile_order_ok(consumer))
        return pf_fail(err, "%s: 'at %s' needs %s's reorder to keep its tile loops outside its "
                       "loops over %s and %s, and its loops over further variables outside its "
                       "tile loops (the tile's region is inferred there)", st->name, cs->name,
                       cs->name, cs->var_names[0], cs->var_names[1]);
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
    if (g->n_order < 0 || g->n_order > PF_EXEC_MAX_ORDER)
        return pf_fail(err, "%s: 'reorder' of %d loops", st->name, g->n_order);
    if (!order_is_default(g, st->n_vars) && validate_order(st, g, err) != 0)
        return -1;
    if (g->gpu && pf_exec_validate_gpu(prog, stage, g, err) != 0)
        return -1;
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

/* ---- chains of stages computed inside their consumers (issue 27) ---- */

/* A stage's expression nodes once the stages it reads `inline` are copied in: its own (with
 * helpers inlined) plus, per read of an inlined stage, that stage's weight, times the taps of
 * the constant-bound reductions and loops around the read. */
typedef struct inline_weight {
    const pf_exec_gene *exec;
    const int64_t *weight;       /* by stage index, of the stages before */
    const int *depth;
    int64_t mult[64];            /* multiplier per scope level (beyond 63: the last) */
    int level;
    int64_t sum;
    int max_depth;
} inline_weight;

static int64_t sat_mul64(int64_t a, int64_t b)
{
    return b > 0 && a > PF_NODES_MAX / b ? PF_NODES_MAX : a * b;
}

static void w_enter(void *ctx, const pf_symbol *var, const pf_expr *lo, const pf_expr *hi)
{
    (void)var;
    inline_weight *w = ctx;
    pf_value l, h;
    int64_t taps = 1;
    if (pf_eval_const_expr(lo, NULL, NULL, &l) == 0 && pf_eval_const_expr(hi, NULL, NULL, &h) == 0
        && h.i >= l.i)
        taps = (int64_t)h.i - l.i + 1;
    int up = w->level < 63 ? w->level : 63;
    w->level++;
    w->mult[w->level < 63 ? w->level : 63] = sat_mul64(w->mult[up], taps);
}

static void w_leave(void *ctx)
{
    ((inline_weight *)ctx)->level--;
}

static void w_read(void *ctx, const pf_expr *e)
{
    inline_weight *w = ctx;
    const pf_stage *q = e->sym && e->sym->image ? e->sym->image->first_writer : NULL;
    if (!q || w->exec[q->index].at != PF_EXEC_INLINE)
        return;
    int64_t add = sat_mul64(w->weight[q->index], w->mult[w->level < 63 ? w->level : 63]);
    w->sum = w->sum + add > PF_NODES_MAX ? PF_NODES_MAX : w->sum + add;
    if (w->depth[q->index] > w->max_depth)
        w->max_depth = w->depth[q->index];
}

static int64_t stage_weight(const pf_program *prog, int i, const pf_exec_gene *exec,
                            const int64_t *weight, const int *depth, int *max_depth)
{
    const pf_stage *st = prog->stages[i];
    inline_weight w = { exec, weight, depth, { 1 }, 0, 0, 0 };
    pf_read_visitor v = { &w, w_enter, w_leave, w_read };
    bool in = exec[i].at == PF_EXEC_INLINE && pf_exec_inline_body(st);
    if (in)
        pf_visit_reads_expr(pf_exec_inline_body(st)->value, &v);
    else
        pf_visit_reads_stmt(st->body, &v);
    *max_depth = w.max_depth;
    int64_t own = in ? pf_expr_nodes(pf_exec_inline_body(st)->value) : pf_stmt_nodes(st->body);
    return own + w.sum > PF_NODES_MAX ? PF_NODES_MAX : own + w.sum;
}

int pf_exec_validate_chains(const pf_program *prog, const pf_exec_gene *exec, int *bad,
                            pf_error *err)
{
    int n = prog->n_stages, rc = 0;
    int *below = pf_xcalloc((size_t)n + 1, sizeof *below);
    int *depth = pf_xcalloc((size_t)n + 1, sizeof *depth);
    int64_t *weight = pf_xcalloc((size_t)n + 1, sizeof *weight);
    for (int i = 0; i < n && rc == 0; i++) {
        const pf_stage *st = prog->stages[i];
        int d;
        weight[i] = stage_weight(prog, i, exec, weight, depth, &d);
        depth[i] = d + (exec[i].at == PF_EXEC_INLINE);
        below[i] = below[i] ? below[i] : 1;  /* itself, or its longest chain of producers */
        int c = exec[i].at;
        if (c >= 0 && c < n && below[c] < below[i] + 1)
            below[c] = below[i] + 1;
        *bad = i;
        if (c >= 0 && c < n && below[c] > PF_EXEC_MAX_CHAIN)
            rc = pf_fail(err, "%s: 'at %s' makes a chain of %d stages computed at one another "
                         "(at most %d)", st->name, prog->stages[c]->name, below[c],
                         PF_EXEC_MAX_CHAIN);
        else if (depth[i] > PF_EXEC_MAX_CHAIN)
            rc = pf_fail(err, "%s: a chain of %d stages inlined into one another (at most %d)",
                         st->name, depth[i], PF_EXEC_MAX_CHAIN);
        else if (exec[i].at == PF_EXEC_INLINE && weight[i] > PF_EXEC_MAX_INLINE_NODES)
            rc = pf_fail(err, "%s: inlined, its expression is %lld nodes with the stages inlined "
                         "into it (at most %d; every read copies it)", st->name,
                         (long long)weight[i], PF_EXEC_MAX_INLINE_NODES);
        else if (weight[i] > PF_MAX_INLINED_NODES)
            rc = pf_fail(err, "%s: %lld expression nodes with the stages it reads inlined (at "
                         "most %d)", st->name, (long long)weight[i], PF_MAX_INLINED_NODES);
    }
    free(below);
    free(depth);
    free(weight);
    return rc;
}

int pf_exec_validate_gpu(const pf_program *prog, int stage, const pf_exec_gene *g, pf_error *err)
{
    const pf_stage *st = prog->stages[stage];
    char why[200];
    if (st->serial && !pf_stage_accumulates(st, why, sizeof why))
        return pf_fail(err, "%s: 'gpu' applies to a serial (scatter) stage only when its "
                       "writes are atomic adds ('+=' or '-=' into images it does not read); "
                       "%s, so its iterations depend on each other", st->name, why);
    if (st->n_vars < 2)
        return pf_fail(err, "%s: 'gpu' needs a stage of two to four variables (tiles of x and "
                       "y are blocks, a third variable is the grid's z, a fourth a loop of "
                       "launches); it has %d", st->name, st->n_vars);
    if (g->tile[0] <= 0 || g->tile[1] <= 0)
        return pf_fail(err, "%s: 'gpu' maps tiles to blocks: it needs 'tile TX TY' (e.g. '%s "
                       "exec tile 32 8 gpu')", st->name, st->name);
    if (g->at != -1 || g->vectorize > 1 || g->parallel || g->unroll > 1 || g->n_order > 0)
        return pf_fail(err, "%s: a 'gpu' stage is computed root, in the default loop order, "
                       "without vectorize, parallel or unroll (its threads are its parallelism)",
                       st->name);
    int tx = pf_exec_gpu_threads(g, 0), ty = pf_exec_gpu_threads(g, 1);
    if (tx > g->tile[0] || ty > g->tile[1])
        return pf_fail(err, "%s: 'gpu %d %d': more threads than the tile's %d x %d points",
                       st->name, tx, ty, g->tile[0], g->tile[1]);
    if (tx * ty > PF_EXEC_MAX_THREADS)
        return pf_fail(err, "%s: 'gpu': %d x %d = %d threads a block, more than %d (give fewer "
                       "threads, e.g. 'tile %d %d gpu 32 8': each thread then computes several "
                       "points)", st->name, tx, ty, tx * ty, PF_EXEC_MAX_THREADS, g->tile[0],
                       g->tile[1]);
    return 0;
}
