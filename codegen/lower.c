/* Lowering of the pipeline: buffers, size names, pipeline scalars, image allocations and the
 * loop nest of each stage. Statements and expressions are in lower_stmt.c and lower_expr.c. */
#include "codegen/lower_internal.h"

#include "base/error.h"
#include "perforate/exec.h"

#include <stdarg.h>
#include <stdio.h>

ir_expr *lower_error(lower_ctx *c, const char *fmt, ...)
{
    if (!c->failed && c->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
        va_end(ap);
    }
    c->failed = true;
    return ir_const_f32(c->f, 0.0f);
}

static ir_buffer *make_buffer(lower_ctx *c, const pf_image_decl *img)
{
    static const ir_buffer_kind kinds[] = { IR_BUF_INPUT, IR_BUF_OUTPUT, IR_BUF_INTERNAL };
    ir_buffer *b = ir_buffer_new(c->f, img->name, kinds[img->role], img->ndims);
    b->boundary = img->boundary;
    b->constant_value = img->constant_value;
    b->decl = img;
    for (int d = 0; d < img->ndims; d++)
        b->extent[d]->positive = true;  /* pf_bind: every image extent is >= 1 */
    return b;
}

/* Arguments first (inputs then outputs) so buffer ids of arguments are 0..n_args-1. */
static void make_buffers(lower_ctx *c)
{
    const pf_program *p = c->prog;
    ir_func *f = c->f;
    f->n_inputs = p->n_inputs;
    f->n_outputs = p->n_outputs;
    f->args = PF_NEW_ARRAY(f->arena, ir_buffer *, p->n_inputs + p->n_outputs);
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++) {
        const pf_image_decl *img = i < p->n_inputs ? p->inputs[i] : p->outputs[i - p->n_inputs];
        ir_buffer *b = make_buffer(c, img);
        b->arg_index = i;
        f->args[i] = b;
        c->bufs[img->index] = b;
    }
    for (int i = 0; i < p->n_images; i++)
        if (!c->bufs[i])
            c->bufs[i] = make_buffer(c, p->images[i]);
}

/* Size names take the extent of the first input dimension that declares them; every other
 * argument extent is defined from its declaration (the caller guarantees equality). */
static void bind_sizes(lower_ctx *c)
{
    const pf_program *p = c->prog;
    for (int i = 0; i < p->n_inputs; i++) {
        const pf_image_decl *img = p->inputs[i];
        ir_buffer *b = c->bufs[img->index];
        for (int d = 0; d < img->ndims; d++) {
            const pf_expr *e = img->extents[d];
            if (e->kind == PF_E_NAME && e->sym && e->sym->kind == PF_SYM_SIZE &&
                !c->sizes[e->sym->index]) {
                c->sizes[e->sym->index] = ir_ref(c->f, b->extent[d]);
                b->extent_is_param[d] = true;
            }
        }
    }
    for (int i = 0; i < p->n_sizes; i++)
        PF_ASSERT(c->sizes[i]);
}

static void define_arg_extents(lower_ctx *c)
{
    ir_func *f = c->f;
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        ir_buffer *b = f->args[i];
        for (int d = 0; d < b->ndims; d++)
            if (!b->extent_is_param[d])
                lower_emit(c, ir_let(f, b->extent[d],
                                     lower_expr_as(c, b->decl->extents[d], IR_I32)));
    }
}

/* Pipeline scalars have no frame of their own; size one by the slots their reductions use. */
static int max_slot(const pf_expr *e)
{
    if (!e)
        return -1;
    int m = (e->kind == PF_E_REDUCE && e->sym) ? e->sym->slot : -1;
    const pf_expr *kids[3] = { e->a, e->b, e->c };
    for (int i = 0; i < 3; i++) {
        int k = max_slot(kids[i]);
        m = k > m ? k : m;
    }
    for (int i = 0; i < e->n_args; i++) {
        int k = max_slot(e->args[i]);
        m = k > m ? k : m;
    }
    return m;
}

static void scratch_frame(lower_ctx *c, lower_frame *fr, const pf_expr *e)
{
    fr->n_slots = max_slot(e) + 1;
    fr->slots = PF_NEW_ARRAY(c->f->arena, ir_expr *, fr->n_slots + 1);
    fr->arrays = PF_NEW_ARRAY(c->f->arena, ir_var *, fr->n_slots + 1);
}

static void lower_scalar(lower_ctx *c, const pf_item *it)
{
    lower_frame fr = { 0 }, *saved = c->frame;
    scratch_frame(c, &fr, it->scalar_init);
    c->frame = &fr;
    ir_expr *v = lower_expr_as(c, it->scalar_init, lower_type(it->scalar_type));
    c->frame = saved;
    c->scalars[it->scalar_sym->index] = lower_snapshot(c, it->scalar_name, v);
}

/* True when executing s certainly assigns (=) the iteration's own pixel of img. */
static bool definitely_stores(const pf_stmt *s, const pf_image_decl *img)
{
    if (!s)
        return false;
    switch (s->kind) {
    case PF_S_ASSIGN:
        return s->target.kind == PF_LV_IMAGE && !s->target.scatter &&
               s->target.sym->image == img && s->assign_op == PF_ASSIGN_SET;
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++)
            if (definitely_stores(s->body[i], img))
                return true;
        return false;
    case PF_S_IF:
        return definitely_stores(s->then_s, img) && definitely_stores(s->else_s, img);
    default:
        return false;
    }
}

/* An image must start zeroed unless its first writer is an exact, non-serial stage over all of
 * it (every dimension a loop variable, no `over`) that certainly assigns its own pixel: then
 * every element is written before anything reads it (the checker's data-flow rule). */
/* Grid sampling with multilinear or nearest reconstruction writes every lattice point: the
 * body the samples, the fill (reconstruct/rt_grid.c) every other point. */
static bool approx_fills_all(const pf_stage_approx *a)
{
    return !a || (a->sample == PF_SAMPLE_GRID &&
                  (a->recon == PF_RECON_LINEAR || a->recon == PF_RECON_NEAREST));
}

bool lower_needs_zero(const lower_ctx *c, const pf_image_decl *img)
{
    const pf_stage *st = img->first_writer;
    if (!st || st->serial || st->over || !approx_fills_all(lower_approx(c, st)) ||
        st->n_vars != img->ndims)
        return true;
    if (st->image->image != img)
        return true;
    return !definitely_stores(st->body, img);
}

static void lower_items(lower_ctx *c, int from);

static void lower_image_item(lower_ctx *c, const pf_image_decl *img, int next)
{
    ir_func *f = c->f;
    if (img->role != PF_IMAGE_LOCAL) {
        lower_items(c, next);
        return;
    }
    ir_buffer *b = c->bufs[img->index];
    const pf_stage_approx *wa = img->first_writer ? lower_approx(c, img->first_writer) : NULL;
    bool on_demand = wa && wa->on_demand;
    lower_frame fr = { 0 }, *saved = c->frame;
    for (int d = 0; d < img->ndims; d++) {
        scratch_frame(c, &fr, img->extents[d]);
        c->frame = &fr;
        lower_emit(c, ir_let(f, b->extent[d], lower_expr_as(c, img->extents[d], IR_I32)));
        c->frame = saved;
    }
    if (on_demand) {
        lower_ondemand_image(c, img);
        b = c->store[img->index];
        if (c->scratch[img->index])
            ir_buffer_make_window(f, b);
    }
    if ((img->first_writer && lower_exec(c, img->first_writer->index)->at == PF_EXEC_INLINE) ||
        b->window) {
        lower_items(c, next);  /* computed at every read, or per tile (lower_at.c): no storage */
        return;
    }
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    lower_items(c, next);
    c->out = outer;
    lower_emit(c, ir_alloc(f, b, on_demand || lower_needs_zero(c, img), ir_list_block(f, &body)));
}

/* Items from `from` to the end; an image declaration wraps everything after it in its
 * allocation. */
static void lower_items(lower_ctx *c, int from)
{
    const pf_program *p = c->prog;
    for (int i = from; i < p->n_items; i++) {
        const pf_item *it = p->items[i];
        switch (it->kind) {
        case PF_ITEM_IMAGE:
            lower_image_item(c, it->image, i + 1);
            return;
        case PF_ITEM_SCALAR:
            lower_scalar(c, it);
            break;
        case PF_ITEM_STAGE:
            if (lower_exec(c, it->stage->index)->at == -1)  /* else inside its consumer or reads */
                lower_stage(c, it->stage);
            break;
        }
    }
}

ir_func *pf_lower(pf_arena *arena, const pf_program *prog, const pf_param_values *params,
                  const pf_plan *plan, pf_error *err)
{
    if (!prog->checked || plan->prog != prog) {
        pf_fail(err, "%s: %s", prog->file_name, prog->checked ? "the plan is of another program"
                                                             : "program was not checked");
        return NULL;
    }
    lower_ctx c = { 0 };
    c.f = ir_func_new(arena, prog->name);
    c.prog = prog;
    c.params = params;
    c.plan = plan;
    c.bufs = PF_NEW_ARRAY(arena, ir_buffer *, prog->n_images + 1);
    c.sizes = PF_NEW_ARRAY(arena, ir_expr *, prog->n_sizes + 1);
    c.scalars = PF_NEW_ARRAY(arena, ir_expr *, prog->n_scalars + 1);
    c.lattice = PF_NEW_ARRAY(arena, lower_lattice, prog->n_stages + 1);
    c.store = PF_NEW_ARRAY(arena, ir_buffer *, prog->n_images + 1);
    c.interp = PF_NEW_ARRAY(arena, ir_interp *, prog->n_images + 1);
    c.err = err;
    make_buffers(&c);
    c.scratch = PF_NEW_ARRAY(arena, bool, prog->n_images + 1);
    for (int i = 0; i < prog->n_stages; i++) {
        const pf_image_decl *img = prog->stages[i]->image->image;
        if (lower_exec(&c, i)->at < 0 || !plan->stages[i].scratch_ok)
            continue;
        c.scratch[img->index] = true;
        if (!lower_approx(&c, prog->stages[i]))  /* on demand: its storage, once made */
            ir_buffer_make_window(c.f, c.bufs[img->index]);
    }
    bind_sizes(&c);
    ir_list body = { 0 };
    c.out = &body;
    define_arg_extents(&c);
    for (int i = 0; i < prog->n_outputs; i++)
        if (lower_needs_zero(&c, prog->outputs[i]))
            lower_emit(&c, ir_rtcall(c.f, IR_RT_ZERO_BUFFER, 1, &c.bufs[prog->outputs[i]->index],
                                     0, NULL));
    lower_items(&c, 0);
    c.f->body = ir_list_block(c.f, &body);
    return c.failed ? NULL : c.f;
}
