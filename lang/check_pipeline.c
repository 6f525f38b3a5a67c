/* Checking the pipeline: input extents (size names or constants), output and intermediate
 * images (shape-expression extents, positive when constant), pipeline scalars, and stages —
 * the for-each write rule (own image at the loop coordinates, else scatter and serial), reads
 * of the own image, unique stage/loop names, and data flow (an image is read only after an
 * earlier stage writes it; every output is written). Fills the program's tables. */
#include "lang/check_internal.h"

#include <stdio.h>
#include <string.h>

static pf_image_state *image_state(pf_checker *c, const pf_image_decl *img)
{
    return &PF_CVEC_AT(c->image_state, pf_image_state, img->index);
}

/* ---- data flow notes (called while checking a stage body) ---- */

void pf_note_read(pf_checker *c, pf_image_decl *img, pf_loc loc)
{
    pf_image_state *st = image_state(c, img);
    int mark = c->stage->index + 1;
    if (st->read_mark == mark)
        return;
    st->read_mark = mark;
    st->first_read = loc;
    PF_CPUSH(c, c->reads, pf_image_decl *, img);
}

void pf_note_write(pf_checker *c, pf_image_decl *img)
{
    pf_image_state *st = image_state(c, img);
    int mark = c->stage->index + 1;
    if (st->write_mark == mark)
        return;
    st->write_mark = mark;
    PF_CPUSH(c, c->writes, pf_image_decl *, img);
}

/* ---- images ---- */

static void add_image(pf_checker *c, pf_image_decl *img, int role_index)
{
    img->index = c->images.n;
    img->role_index = role_index;
    PF_CPUSH(c, c->images, pf_image_decl *, img);
    pf_image_state st = {0};
    PF_CPUSH(c, c->image_state, pf_image_state, st);
}

static const char *role_name(pf_image_role r)
{
    return r == PF_IMAGE_INPUT ? "input" : r == PF_IMAGE_OUTPUT ? "output" : "image";
}

/* An input extent: a size name (new or repeated) or a constant int expression >= 1. */
static void input_extent(pf_checker *c, pf_image_decl *img, int d)
{
    pf_expr *e = img->extents[d];
    if (e->kind == PF_E_NAME) {
        pf_symbol *s = pf_lookup(c, e->name);
        if (!s) {
            s = pf_declare(c, PF_SYM_SIZE, e->name, e->loc, PF_T_INT);
            s->index = c->sizes.n;
            PF_CPUSH(c, c->sizes, pf_symbol *, s);
        }
        if (s->kind == PF_SYM_SIZE) {
            e->sym = s;
            e->type = PF_T_INT;
            return;
        }
        if (s->kind != PF_SYM_CONST) {
            pf_check_error(c, e->loc, "extent %d of input '%s' must be a size name or a "
                           "constant, and '%s' is %s", d, img->name, e->name,
                           pf_sym_kind_phrase(s->kind));
            return;
        }
    }
    char what[300];
    snprintf(what, sizeof what, "extent %d of input '%s'", d, img->name);
    img->extents[d] = pf_check_typed(c, e, PF_T_INT, what);
    pf_value v;
    if (pf_fold(c, img->extents[d], what, &v) && v.i < 1)
        pf_check_error(c, e->loc, "extent %d of input '%s' is %d (must be >= 1)", d, img->name,
                       (int)v.i);
}

/* An output or intermediate extent: an int shape expression, >= 1 when constant. */
static void shape_extent(pf_checker *c, pf_image_decl *img, int d)
{
    char what[300];
    snprintf(what, sizeof what, "extent %d of %s '%s'", d, role_name(img->role), img->name);
    img->extents[d] = pf_check_typed(c, img->extents[d], PF_T_INT, what);
    bool is_const = false;
    int32_t v = 0;
    if (pf_check_shape(c, img->extents[d], what, &is_const, &v) && is_const && v < 1)
        pf_check_error(c, img->extents[d]->loc, "extent %d of %s '%s' is %d (must be >= 1)", d,
                       role_name(img->role), img->name, (int)v);
}

static void check_boundary(pf_checker *c, pf_image_decl *img)
{
    if (img->boundary != PF_BOUNDARY_CONSTANT)
        return;
    c->ctx = PF_CTX_TOP;  /* a constant: no pipeline names */
    img->boundary_value = pf_check_typed(c, img->boundary_value, PF_T_FLOAT,
                                         "a boundary value");
    pf_value v = {0};
    if (pf_fold(c, img->boundary_value, "a boundary value", &v))
        img->constant_value = v.f;
    c->ctx = PF_CTX_PIPELINE;
}

static void check_image(pf_checker *c, pf_image_decl *img, int role_index)
{
    int max_dims = img->role == PF_IMAGE_LOCAL ? 4 : 3;
    if (img->ndims < 1 || img->ndims > max_dims)
        pf_check_error(c, img->loc, "%s '%s' has %d dimensions (%s images have 1 to %d)",
                       role_name(img->role), img->name, img->ndims,
                       img->role == PF_IMAGE_LOCAL ? "intermediate" : "input and output",
                       max_dims);
    for (int d = 0; d < img->ndims; d++) {
        if (img->role == PF_IMAGE_INPUT)
            input_extent(c, img, d);
        else
            shape_extent(c, img, d);
    }
    check_boundary(c, img);
    img->sym = pf_declare(c, PF_SYM_IMAGE, img->name, img->loc, PF_T_FLOAT);
    img->sym->image = img;
    add_image(c, img, role_index);
    img->sym->index = img->index;
}

/* ---- pipeline scalars ---- */

static void check_scalar(pf_checker *c, pf_item *it)
{
    c->next_slot = c->max_slot = 0;
    c->frame_full = false;
    char what[300];
    snprintf(what, sizeof what, "the initializer of '%s'", it->scalar_name);
    it->scalar_init = pf_check_typed(c, it->scalar_init, it->scalar_type, what);
    if (c->max_slot > c->prog->n_scalar_slots)
        c->prog->n_scalar_slots = c->max_slot;
    pf_symbol *s = pf_declare(c, PF_SYM_SCALAR, it->scalar_name, it->loc, it->scalar_type);
    s->init = it->scalar_init;
    s->index = c->scalars.n;
    char why[300];
    int depth = pf_shape_depth(c, it->scalar_init);
    s->shape = it->scalar_init->type != PF_T_ERROR &&
               !pf_find_nonconst(it->scalar_init, true, why, sizeof why) &&
               depth <= PF_SHAPE_CHAIN_MAX;
    it->scalar_sym = s;
    PF_CPUSH(c, c->scalars, pf_symbol *, s);
    PF_CPUSH(c, c->scalar_depth, int, depth);
}

/* ---- stages ---- */

static void register_stage_name(pf_checker *c, pf_stage *st)
{
    pf_name_entry *old = pf_map_get(&c->loop_names, st->name);
    if (old)
        pf_check_error(c, st->name_loc, "stage name '%s' is already used at %d:%d", st->name,
                       old->loc.line, old->loc.col);
    else
        pf_map_put(c, &c->loop_names, st->name, NULL, st->name_loc, 0);
    pf_loop_info li = {0};
    li.kind = PF_LOOP_STAGE;
    li.name = st->name;
    li.loc = st->name_loc;
    li.stage = st;
    st->loop_id = c->loops.n;
    PF_CPUSH(c, c->loops, pf_loop_info, li);
}

/* The image a stage iterates; NULL after reporting. */
static pf_symbol *stage_image(pf_checker *c, pf_stage *st)
{
    pf_symbol *s = pf_lookup(c, st->image_name);
    if (!s) {
        pf_report_unknown(c, st->image_loc, "image", st->image_name);
        return NULL;
    }
    if (s->kind != PF_SYM_IMAGE) {
        pf_check_error(c, st->image_loc, "a stage iterates an image, and '%s' is %s",
                       st->image_name, pf_sym_kind_phrase(s->kind));
        return NULL;
    }
    if (st->n_vars > s->image->ndims) {
        pf_check_error(c, st->var_locs[s->image->ndims], "stage '%s' has %d loop variables "
                       "but image '%s' has %d dimension(s)", st->name, st->n_vars,
                       st->image_name, s->image->ndims);
        return NULL;
    }
    return s;
}

static void check_over(pf_checker *c, pf_stage *st)
{
    if (!st->over)
        return;
    for (int i = 0; i < st->n_vars; i++) {
        pf_range *r = &st->over[i];
        pf_expr **parts[3] = {&r->lo, &r->hi, &r->step};
        for (int k = 0; k < 3; k++) {
            if (!*parts[k])
                continue;
            *parts[k] = pf_check_typed(c, *parts[k], PF_T_INT, "an 'over' bound");
            bool is_const;
            int32_t v;
            pf_check_shape(c, *parts[k], "an 'over' bound", &is_const, &v);
        }
    }
}

static void declare_stage_vars(pf_checker *c, pf_stage *st, pf_symbol *img)
{
    st->vars = PF_NEW_ARRAY(c->arena, pf_symbol *, st->n_vars);
    for (int i = 0; i < st->n_vars; i++) {
        pf_symbol *v = pf_declare(c, PF_SYM_LOOP_VAR, st->var_names[i], st->var_locs[i],
                                  PF_T_INT);
        v->slot = pf_alloc_slots(c, 1);
        v->stage = st;
        v->stage_dim = i;
        st->vars[i] = img ? v : NULL;
    }
}

static pf_image_decl **copy_images(pf_checker *c, const pf_cvec *v)
{
    pf_image_decl **out = PF_NEW_ARRAY(c->arena, pf_image_decl *, v->n + 1);
    if (v->n)
        memcpy(out, v->data, sizeof *out * (size_t)v->n);
    return out;
}

/* After the body: seriality, own-image reads, data flow, first writers. */
static void finish_stage(pf_checker *c, pf_stage *st)
{
    pf_image_decl *own = st->image ? st->image->image : NULL;
    st->serial = c->scatter || (own && own->role == PF_IMAGE_INPUT);
    if (!st->serial && c->foreign_own_read.line != 0)
        pf_check_error(c, c->foreign_own_read, "stage '%s' reads its own image '%s' away from "
                       "its loop coordinates (only a serial stage may)", st->name, own->name);
    for (int i = 0; i < c->reads.n; i++) {
        pf_image_decl *img = PF_CVEC_AT(c->reads, pf_image_decl *, i);
        pf_image_state *s = image_state(c, img);
        bool own_write = s->write_mark == st->index + 1;
        if (img->role != PF_IMAGE_INPUT && !s->written && !own_write)
            pf_check_error(c, s->first_read, "image '%s' is read before any stage writes it",
                           img->name);
    }
    for (int i = 0; i < c->writes.n; i++) {
        pf_image_decl *img = PF_CVEC_AT(c->writes, pf_image_decl *, i);
        image_state(c, img)->written = true;
        if (!img->first_writer)
            img->first_writer = st;
    }
    st->n_reads = c->reads.n;
    st->reads = copy_images(c, &c->reads);
    st->n_writes = c->writes.n;
    st->writes = copy_images(c, &c->writes);
}

static void check_stage(pf_checker *c, pf_stage *st)
{
    st->index = c->stages.n;
    PF_CPUSH(c, c->stages, pf_stage *, st);
    register_stage_name(c, st);
    pf_symbol *img = stage_image(c, st);
    st->image = img;
    check_over(c, st);
    c->ctx = PF_CTX_STAGE;
    c->stage = st;
    c->next_slot = c->max_slot = 0;
    c->frame_full = false;
    c->for_depth = 0;
    c->reads.n = c->writes.n = 0;
    c->scatter = false;
    c->foreign_own_read = (pf_loc){0, 0};
    pf_scope_enter(c);
    declare_stage_vars(c, st, img);
    pf_check_stmt(c, st->body);
    pf_scope_leave(c);
    st->n_slots = c->max_slot;
    finish_stage(c, st);
    c->stage = NULL;
    c->ctx = PF_CTX_PIPELINE;
}

/* ---- the pipeline ---- */

static void check_outputs_written(pf_checker *c)
{
    pf_program *prog = c->prog;
    for (int i = 0; i < prog->n_outputs; i++) {
        pf_image_decl *img = prog->outputs[i];
        if (img->sym && pf_lookup(c, img->name) == img->sym && !img->first_writer)
            pf_check_error(c, img->loc, "output '%s' is never written by a stage", img->name);
    }
}

#define COPY_TABLE(c, vec, T, n_out, out)                                      \
    do {                                                                       \
        (n_out) = (vec).n;                                                     \
        (out) = PF_NEW_ARRAY((c)->arena, T, (vec).n + 1);                      \
        if ((vec).n)                                                           \
            memcpy((out), (vec).data, sizeof(T) * (size_t)(vec).n);            \
    } while (0)

static void fill_tables(pf_checker *c)
{
    pf_program *prog = c->prog;
    COPY_TABLE(c, c->images, pf_image_decl *, prog->n_images, prog->images);
    COPY_TABLE(c, c->sizes, pf_symbol *, prog->n_sizes, prog->sizes);
    COPY_TABLE(c, c->scalars, pf_symbol *, prog->n_scalars, prog->scalars);
    COPY_TABLE(c, c->stages, pf_stage *, prog->n_stages, prog->stages);
    COPY_TABLE(c, c->loops, pf_loop_info, prog->n_loops, prog->loops);
}

static void check_items(pf_checker *c)
{
    pf_program *prog = c->prog;
    int n_locals = 0;
    for (int i = 0; i < prog->n_items; i++) {
        pf_item *it = prog->items[i];
        c->ctx = PF_CTX_PIPELINE;
        switch (it->kind) {
        case PF_ITEM_IMAGE: check_image(c, it->image, n_locals++); break;
        case PF_ITEM_SCALAR: check_scalar(c, it); break;
        case PF_ITEM_STAGE: check_stage(c, it->stage); break;
        }
    }
}

void pf_check_pipeline(pf_checker *c)
{
    pf_program *prog = c->prog;
    pf_scope_enter(c);
    c->ctx = PF_CTX_PIPELINE;
    for (int i = 0; i < prog->n_inputs; i++)
        check_image(c, prog->inputs[i], i);
    for (int i = 0; i < prog->n_outputs; i++)
        check_image(c, prog->outputs[i], i);
    check_items(c);
    check_outputs_written(c);
    fill_tables(c);
    pf_scope_leave(c);
    c->ctx = PF_CTX_TOP;
}
