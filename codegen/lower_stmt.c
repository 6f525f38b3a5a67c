/* Lowering of statements inside stages and inlined helper functions. */
#include "codegen/lower_internal.h"

#include "base/error.h"

static bool contains_return(const pf_stmt *s)
{
    if (!s)
        return false;
    switch (s->kind) {
    case PF_S_RETURN:
        return true;
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++)
            if (contains_return(s->body[i]))
                return true;
        return false;
    case PF_S_IF:
        return contains_return(s->then_s) || contains_return(s->else_s);
    case PF_S_FOR:
        return contains_return(s->then_s);
    default:
        return false;
    }
}

/* Lowers s into a fresh list and returns it as a block. */
static ir_stmt *lower_nested(lower_ctx *c, const pf_stmt *s)
{
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    lower_stmt(c, s);
    c->out = outer;
    return ir_list_block(c->f, &body);
}

static ir_expr *not_returned(lower_ctx *c)
{
    return ir_un(c->f, IR_NOT, ir_ref(c->f, c->frame->done));
}

static void lower_let_decl(lower_ctx *c, const pf_stmt *s);
static bool assigned_after(const pf_stmt *block, int i);

/* In an inlined function, the statements after one that may return run only while `done` is
 * false: the language has no early exit, so the IR models it with a flag. A local never
 * assigned after its declaration is a let (lower_let_decl). */
static void lower_block_from(lower_ctx *c, const pf_stmt *s, int from)
{
    for (int i = from; i < s->n_body; i++) {
        const pf_stmt *st = s->body[i];
        if (st->kind == PF_S_DECL && st->sym->kind == PF_SYM_LOCAL && !assigned_after(s, i))
            lower_let_decl(c, st);
        else
            lower_stmt(c, st);
        if (c->frame->done && contains_return(s->body[i]) && i + 1 < s->n_body) {
            ir_list rest = { 0 }, *outer = c->out;
            c->out = &rest;
            lower_block_from(c, s, i + 1);
            c->out = outer;
            lower_emit(c, ir_if(c->f, not_returned(c), ir_list_block(c->f, &rest), NULL));
            return;
        }
    }
}

static void lower_block(lower_ctx *c, const pf_stmt *s)
{
    lower_block_from(c, s, 0);
}

/* A local's initial value: its initializer, else the zero of its type. */
static ir_expr *decl_init(lower_ctx *c, const pf_stmt *s, ir_type t)
{
    if (s->value)
        return lower_expr_as(c, s->value, t);
    if (t == IR_F32)
        return ir_const_f32(c->f, 0.0f);
    return t == IR_BOOL ? ir_const_bool(c->f, false) : ir_const_i32(c->f, 0);
}

static void lower_decl(lower_ctx *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->sym;
    ir_type t = lower_type(sym->type);
    if (sym->kind == PF_SYM_LOCAL_ARRAY) {
        ir_var *a = ir_var_new(c->f, sym->name, t, IR_VAR_ARRAY);
        a->array_len = sym->array_len;
        lower_emit(c, ir_array_decl(c->f, a));
        c->frame->arrays[sym->slot] = a;
        return;
    }
    ir_expr *init = decl_init(c, s, t);
    ir_var *v = ir_var_new(c->f, sym->name, t, IR_VAR_MUT);
    lower_emit(c, ir_decl(c->f, v, init));
    c->frame->slots[sym->slot] = ir_ref(c->f, v);
}

/* Whether the local declared by block->body[i] is assigned later in the block (its scope). */
static bool assigned_after(const pf_stmt *block, int i)
{
    for (int j = i + 1; j < block->n_body; j++)
        if (lower_stmt_assigns(block->body[j], block->body[i]->sym))
            return true;
    return false;
}

/* A local that is never assigned after its declaration (`int xx = x + k;`) is lowered as a
 * let: the affine reasoning sees through lets (pass_bounds then splits a loop on a test of
 * xx against the image) and the vectorizer classifies a let per lane (uniform, affine in the
 * lane) where a mutable is always a full vector. */
static void lower_let_decl(lower_ctx *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->sym;
    ir_type t = lower_type(sym->type);
    ir_expr *init = decl_init(c, s, t);
    c->frame->slots[sym->slot] = lower_snapshot(c, sym->name, init);
}

static ir_expr *combine(lower_ctx *c, pf_assign_op op, ir_expr *cur, ir_expr *rhs)
{
    static const ir_op ops[] = { IR_ADD, IR_ADD, IR_SUB, IR_MUL, IR_DIV };
    rhs = lower_convert(c, rhs, cur->type);
    return op == PF_ASSIGN_SET ? rhs : irf_bin(c->f, ops[op], cur, rhs);
}

/* A trailing index (past the stage's loop variables) needs a bounds check unless it is a
 * constant inside a constant extent. */
static bool index_provably_inside(lower_ctx *c, const pf_image_decl *img, int d, ir_expr *idx)
{
    int64_t i;
    pf_value ext;
    if (!ir_is_const(idx, &i))
        return false;
    if (pf_eval_const_expr(img->extents[d], c->params, NULL, &ext) != 0)
        return false;
    return i >= 0 && i < ext.i;
}

static void lower_image_store(lower_ctx *c, const pf_stmt *s)
{
    const pf_lvalue *lv = &s->target;
    const pf_image_decl *img = lv->sym->image;
    ir_buffer *buf = c->bufs[img->index];
    ir_expr *idx[IR_MAX_DIMS];
    uint8_t check = 0;
    int own = lv->scatter ? 0 : c->stage->n_vars;
    if (!lv->scatter)
        buf = c->own.store;  /* an on-demand image is stored downsampled */
    else if (c->store[img->index])
        lower_error(c, "stage '%s' scatters into '%s', which is stored downsampled (on-demand)",
                    c->stage->name, img->name);
    for (int d = 0; d < img->ndims; d++) {
        idx[d] = d < own ? c->own.index[d] : lower_expr_as(c, lv->index[d], IR_I32);
        if (d >= own && !index_provably_inside(c, img, d, idx[d]))
            check |= (uint8_t)(1u << d);
    }
    ir_expr *rhs = lower_expr(c, s->value), *cur = NULL;
    if (s->assign_op != PF_ASSIGN_SET)
        cur = ir_load(c->f, buf, idx, check);
    ir_expr *v = combine(c, s->assign_op, cur ? cur : ir_const_f32(c->f, 0), rhs);
    ir_stmt *st = ir_store(c->f, buf, idx, v, check, lv->scatter);
    /* a serial stage on the GPU: its writes are adds (pf_stage_accumulates), run atomically */
    if (c->stage->serial && lower_exec(c, c->stage->index)->gpu) {
        bool negate;
        st->atomic = true;
        if (!ir_store_addend(st, &negate))
            lower_error(c, "stage '%s' runs on the GPU but its write to '%s' is not an atomic "
                        "add (the schedule was not validated)", c->stage->name, img->name);
    }
    lower_emit(c, st);
}

static void lower_assign(lower_ctx *c, const pf_stmt *s)
{
    const pf_lvalue *lv = &s->target;
    switch (lv->kind) {
    case PF_LV_LOCAL: {
        ir_expr *cur = c->frame->slots[lv->sym->slot];
        PF_ASSERT(cur && cur->kind == IR_VARREF && cur->var->kind == IR_VAR_MUT);
        ir_expr *v = combine(c, s->assign_op, cur, lower_expr(c, s->value));
        lower_emit(c, ir_assign(c->f, cur->var, v));
        return;
    }
    case PF_LV_ARRAY: {
        ir_var *a = c->frame->arrays[lv->sym->slot];
        ir_expr *index = lower_snapshot(c, "i", lower_expr_as(c, lv->index[0], IR_I32));
        ir_expr *cur = ir_aload(c->f, a, index);
        ir_expr *v = combine(c, s->assign_op, cur, lower_expr(c, s->value));
        lower_emit(c, ir_array_store(c->f, a, index, v));
        return;
    }
    case PF_LV_IMAGE:
        lower_image_store(c, s);
        return;
    }
}

static void lower_if(lower_ctx *c, const pf_stmt *s)
{
    ir_expr *cond = lower_expr(c, s->cond);
    int64_t k;
    if (ir_is_const(cond, &k)) {  /* e.g. a branch on a param */
        const pf_stmt *taken = k ? s->then_s : s->else_s;
        if (taken)
            lower_emit(c, lower_nested(c, taken));
        return;
    }
    ir_stmt *then_s = lower_nested(c, s->then_s);
    ir_stmt *else_s = s->else_s ? lower_nested(c, s->else_s) : NULL;
    lower_emit(c, ir_if(c->f, cond, then_s, else_s));
}

/* A constant of type t (i32 or i64). */
static ir_expr *const_of(ir_func *f, ir_type t, int64_t v)
{
    return t == IR_I64 ? ir_const_i64(f, v) : ir_const_i32(f, (int32_t)v);
}

/* Loop perforation of a named loop (docs/perforation.md §5): new bounds or step, or a skip
 * test on the iteration index. Returns the test for `random`, else NULL. The bounds are of
 * lo's type (lower_range), and nothing here overflows it: lo + m * step only for m < n. */
static ir_expr *perforate_for(lower_ctx *c, const pf_loop_perf *p, ir_expr *lo, ir_expr **end,
                              ir_expr **step, ir_expr **first, ir_expr *v)
{
    ir_func *f = c->f;
    ir_type t = lo->type;
    ir_expr *one = const_of(f, t, 1);
    ir_expr *n = irf_bin(f, IR_MAX, irf_bin(f, IR_DIV, irf_bin(f, IR_ADD, irf_bin(f, IR_SUB,
                                                                                 *end, lo),
                                                                 irf_bin(f, IR_SUB, *step, one)),
                                            *step), const_of(f, t, 0));
    n = lower_snapshot(c, "iterations", n);
    ir_expr *n_f = irf_cast(f, IR_F32, n);
    ir_expr *m = NULL;
    switch (p->kind) {
    case PF_PERF_STEP:
        *step = lower_snapshot(c, "step", irf_bin(f, IR_MUL, *step, const_of(f, t, p->step)));
        return NULL;
    case PF_PERF_FIRST:
    case PF_PERF_LAST:
        m = irf_cast(f, IR_I32, irf_bin(f, IR_MUL, ir_const_f32(f, p->kind == PF_PERF_FIRST
                                                                   ? p->frac : 1.0f - p->frac),
                                        n_f));
        m = irf_cast(f, t, m);
        m = irf_select(f, irf_bin(f, IR_LT, m, n),
                       irf_bin(f, IR_ADD, lo, irf_bin(f, IR_MUL, m, *step)), *end);
        if (p->kind == PF_PERF_FIRST)
            *end = lower_snapshot(c, "end", m);
        else
            *first = lower_snapshot(c, "lo", m);
        return NULL;
    case PF_PERF_RANDOM: {
        ir_expr *zero = ir_const_i32(f, 0);
        int k = c->stage ? c->stage->n_vars : 0;
        ir_expr *j = irf_bin(f, IR_DIV, irf_bin(f, IR_SUB, irf_cast(f, t, v), lo), *step);
        ir_expr *args[4] = { ir_const_i32(f, p->id), irf_cast(f, IR_I32, j),
                             k > 0 ? c->own.coord[0] : zero, k > 1 ? c->own.coord[1] : zero };
        ir_expr *h = ir_call(f, IR_FN_PERF_HASH, IR_F32, 4, args);
        return irf_bin(f, IR_LT, h, ir_const_f32(f, p->frac));
    }
    }
    return NULL;
}

/* The IR bounds of an inclusive range lo .. hi by step >= 1 (a `for` loop, scaled by `mult`
 * when loop-perforated, or a reduction): [lo, end) in i32 when constants leave room for the
 * values the loop and the passes form (step * mult, lo or end + step, end - lo + step, and
 * end - lo of an empty range, lo > hi), else in i64 (ir.h), where end = 2^31 for
 * hi = 2147483647 fits. Sets *end; converts lo and step. */
ir_expr *lower_range(lower_ctx *c, ir_expr **lo, ir_expr *hi, ir_expr **step, int64_t mult)
{
    ir_func *f = c->f;
    int64_t l, h, s;
    bool narrow = ir_is_const(*lo, &l) && ir_is_const(hi, &h) && ir_is_const(*step, &s) &&
                  s * mult <= INT32_MAX && (l > h ? l : h) + s * mult <= INT32_MAX &&
                  h - l + s * mult <= INT32_MAX && h - l > INT32_MIN;
    if (narrow)
        return lower_snapshot(c, "end", irf_bin(f, IR_ADD, hi, ir_const_i32(f, 1)));
    *lo = irf_cast(f, IR_I64, *lo);
    *step = irf_cast(f, IR_I64, *step);
    return lower_snapshot(c, "end", irf_bin(f, IR_ADD, irf_cast(f, IR_I64, hi),
                                            ir_const_i64(f, 1)));
}

static void lower_for(lower_ctx *c, const pf_stmt *s)
{
    ir_func *f = c->f;
    ir_expr *lo = lower_snapshot(c, "lo", lower_expr_as(c, s->lo, IR_I32));
    ir_expr *hi = lower_expr_as(c, s->hi, IR_I32);
    ir_expr *step = ir_const_i32(f, 1);
    if (s->step)
        step = lower_snapshot(c, "step", irf_bin(f, IR_MAX, lower_expr_as(c, s->step, IR_I32),
                                                 ir_const_i32(f, 1)));
    const pf_loop_approx *la = s->loop_id >= 0 ? c->plan->loops[s->loop_id] : NULL;
    int64_t mult = la && la->perf.kind == PF_PERF_STEP ? la->perf.step : 1;
    ir_expr *end = lower_range(c, &lo, hi, &step, mult);
    ir_var *iv = ir_var_new(f, s->sym->name, IR_I32, IR_VAR_LOOP);
    ir_expr *first = lo, *keep = NULL;
    if (la)
        keep = perforate_for(c, &la->perf, lo, &end, &step, &first, ir_ref(f, iv));
    c->frame->slots[s->sym->slot] = ir_ref(f, iv);
    ir_stmt *body = lower_nested(c, s->then_s);
    if (keep)
        body = ir_if(f, keep, body, NULL);
    if (c->frame->done && contains_return(s->then_s))
        body = ir_if(f, not_returned(c), body, NULL);
    ir_stmt *loop = ir_for(f, iv, first, end, step, IR_LOOP_SERIAL, body);
    loop->align = lo;
    loop->text = s->loop_name;
    lower_emit(c, loop);
}

static void lower_return(lower_ctx *c, const pf_stmt *s)
{
    PF_ASSERT(c->frame->ret);
    ir_expr *v = lower_expr_as(c, s->value, c->frame->ret->type);
    lower_emit(c, ir_assign(c->f, c->frame->ret, v));
    lower_emit(c, ir_assign(c->f, c->frame->done, ir_const_bool(c->f, true)));
}

void lower_stmt(lower_ctx *c, const pf_stmt *s)
{
    switch (s->kind) {
    case PF_S_BLOCK:
        lower_block(c, s);
        return;
    case PF_S_DECL:
        lower_decl(c, s);
        return;
    case PF_S_ASSIGN:
        lower_assign(c, s);
        return;
    case PF_S_IF:
        lower_if(c, s);
        return;
    case PF_S_FOR:
        lower_for(c, s);
        return;
    case PF_S_SORT:
        lower_emit(c, ir_sort(c->f, c->frame->arrays[s->target.sym->slot],
                              lower_expr_as(c, s->value, IR_I32)));
        return;
    case PF_S_RETURN:
        lower_return(c, s);
        return;
    }
}
