/* Lowering of expressions: names, operators, casts, image and array reads, builtins, inlined
 * helper calls and reductions. Expressions with statements of their own (a function body, a
 * reduction loop) emit those statements first and return a reference to the result. */
#include "codegen/lower_internal.h"
#include "lang/walk.h"

#include "base/error.h"
#include "perforate/exec.h"
#include "lang/lang.h"

#include <string.h>

ir_type lower_type(pf_type t)
{
    switch (t) {
    case PF_T_BOOL: return IR_BOOL;
    case PF_T_INT: return IR_I32;
    case PF_T_FLOAT: return IR_F32;
    default: pf_die("lowering an expression of type %s", pf_type_name(t));
    }
}

void lower_emit(lower_ctx *c, ir_stmt *s)
{
    ir_list_push(c->f, c->out, s);
}

ir_expr *lower_convert(lower_ctx *c, ir_expr *v, ir_type to)
{
    if (v->type == to)
        return v;
    if (to == IR_F32 && (v->type == IR_I32 || v->type == IR_BOOL))
        return irf_cast(c->f, IR_F32, v);
    if (to == IR_I32 && (v->type == IR_F32 || v->type == IR_BOOL))
        return irf_cast(c->f, IR_I32, v);
    pf_die("no conversion from %s to %s", ir_type_name(v->type), ir_type_name(to));
}

ir_expr *lower_snapshot(lower_ctx *c, const char *name, ir_expr *value)
{
    if (value->kind == IR_CONST || (value->kind == IR_VARREF && value->var->kind != IR_VAR_MUT))
        return value;
    ir_var *v = ir_var_new(c->f, name, value->type, IR_VAR_LET);
    lower_emit(c, ir_let(c->f, v, value));
    return ir_ref(c->f, v);
}

ir_expr *lower_expr_as(lower_ctx *c, const pf_expr *e, ir_type to)
{
    return lower_convert(c, lower_expr(c, e), to);
}

static ir_expr *param_value(lower_ctx *c, const pf_symbol *s)
{
    pf_value v = c->params->values[s->index];
    switch (s->type) {
    case PF_T_BOOL: return ir_const_bool(c->f, v.b);
    case PF_T_INT: return ir_const_i32(c->f, v.i);
    default: return ir_const_f32(c->f, v.f);
    }
}

static ir_expr *lower_name(lower_ctx *c, const pf_expr *e)
{
    const pf_symbol *s = e->sym;
    switch (s->kind) {
    case PF_SYM_PARAM:
        return param_value(c, s);
    case PF_SYM_CONST:
        if (s->type == PF_T_FLOAT)
            return ir_const_f32(c->f, s->value.f);
        return s->type == PF_T_BOOL ? ir_const_bool(c->f, s->value.b)
                                    : ir_const_i32(c->f, s->value.i);
    case PF_SYM_SIZE:
        return c->sizes[s->index];
    case PF_SYM_SCALAR:
        return c->scalars[s->index];
    case PF_SYM_LOCAL:
    case PF_SYM_LOOP_VAR:
        PF_ASSERT(s->slot >= 0 && s->slot < c->frame->n_slots && c->frame->slots[s->slot]);
        return c->frame->slots[s->slot];
    default:
        pf_die("lowering name '%s' of kind %d", s->name, (int)s->kind);
    }
}

static ir_op binary_op(pf_op op, bool *swap)
{
    *swap = false;
    switch (op) {
    case PF_OP_ADD: return IR_ADD;
    case PF_OP_SUB: return IR_SUB;
    case PF_OP_MUL: return IR_MUL;
    case PF_OP_DIV: return IR_DIV;
    case PF_OP_MOD: return IR_MOD;
    case PF_OP_LT: return IR_LT;
    case PF_OP_LE: return IR_LE;
    case PF_OP_GT: *swap = true; return IR_LT;  /* a > b is b < a, NaN included */
    case PF_OP_GE: *swap = true; return IR_LE;
    case PF_OP_EQ: return IR_EQ;
    case PF_OP_NE: return IR_NE;
    case PF_OP_AND: return IR_AND;
    case PF_OP_OR: return IR_OR;
    default: pf_die("not a binary operator: %d", (int)op);
    }
}

static ir_expr *lower_binary(lower_ctx *c, const pf_expr *e)
{
    ir_expr *a = lower_expr(c, e->a), *b = lower_expr(c, e->b);
    /* The checker converts mixed operands; be tolerant of int/float mixes anyway. */
    if (a->type != b->type) {
        ir_type t = (a->type == IR_F32 || b->type == IR_F32) ? IR_F32 : IR_I32;
        a = lower_convert(c, a, t);
        b = lower_convert(c, b, t);
    }
    bool swap;
    ir_op op = binary_op(e->op, &swap);
    return swap ? irf_bin(c->f, op, b, a) : irf_bin(c->f, op, a, b);
}

static ir_expr *lower_unary(lower_ctx *c, const pf_expr *e)
{
    ir_expr *a = lower_expr(c, e->a);
    return irf_un(c->f, e->op == PF_OP_NOT ? IR_NOT : IR_NEG, a);
}

static ir_expr *lower_cond(lower_ctx *c, const pf_expr *e)
{
    ir_expr *cond = lower_expr(c, e->a);
    ir_type t = lower_type(e->type);
    ir_expr *a = lower_expr_as(c, e->b, t), *b = lower_expr_as(c, e->c, t);
    return irf_select(c->f, cond, a, b);
}

static ir_expr *lower_cast(lower_ctx *c, const pf_expr *e)
{
    ir_expr *a = lower_expr(c, e->a);
    ir_type to = lower_type(e->type);
    if (a->type == to)
        return a;
    return irf_cast(c->f, to, a);
}

/* A read of an inlined stage's image: the stage's expression at the read's coordinates (after
 * the image's boundary mode), evaluated in a frame of its own. */
static ir_expr *lower_inlined_read(lower_ctx *c, const pf_expr *e, const pf_stage *st)
{
    const pf_image_decl *img = st->image->image;
    ir_buffer *b = c->bufs[img->index];
    ir_expr *inside = NULL;
    lower_frame fr = { 0 }, *saved = c->frame;
    fr.n_slots = st->n_slots;
    fr.slots = PF_NEW_ARRAY(c->f->arena, ir_expr *, st->n_slots + 1);
    fr.arrays = PF_NEW_ARRAY(c->f->arena, ir_var *, st->n_slots + 1);
    for (int d = 0; d < img->ndims; d++) {
        ir_expr *i = lower_expr_as(c, e->args[d], IR_I32);
        ir_expr *at = irf_boundary_index(c->f, b, d, i, &inside);
        fr.slots[st->vars[d]->slot] = lower_snapshot(c, "at", at);
    }
    const pf_stage *stage = c->stage;
    lower_own own = c->own;
    c->frame = &fr;
    c->stage = st;
    ir_expr *v = lower_expr_as(c, pf_exec_inline_body(st)->value, IR_F32);
    c->frame = saved;
    c->stage = stage;
    c->own = own;
    if (inside)
        v = irf_select(c->f, inside, v, ir_const_f32(c->f, img->constant_value));
    return v;
}

static ir_expr *lower_image_read(lower_ctx *c, const pf_expr *e)
{
    const pf_image_decl *img = e->sym->image;
    const pf_stage *w = img->first_writer;
    if (w && lower_exec(c, w->index)->at == PF_EXEC_INLINE)
        return lower_inlined_read(c, e, w);
    ir_expr *idx[IR_MAX_DIMS];
    uint8_t all = (uint8_t)((1u << img->ndims) - 1);
    bool own = c->stage && !c->stage->serial && c->stage->image->image == img;
    for (int d = 0; d < img->ndims; d++)
        idx[d] = (own && d < c->stage->n_vars) ? c->own.index[d]
                                               : lower_expr_as(c, e->args[d], IR_I32);
    if (c->store[img->index] && pf_plan_read_writer(c->plan, c->stage, img))  /* §4 */
        return ir_interp_read(c->f, c->store[img->index], c->interp[img->index], idx, all);
    if (c->store[img->index] && !own)
        return lower_error(c, "internal error: read of on-demand image '%s' without its "
                              "reconstruction", img->name);
    if (own) {  /* the stage's own pixel: inside by construction along the stage dimensions */
        uint8_t trailing = (uint8_t)(all & ~((1u << c->stage->n_vars) - 1));
        return ir_load(c->f, c->own.store, idx, trailing);
    }
    return ir_load(c->f, c->bufs[img->index], idx, all);
}

static ir_var *const_table(lower_ctx *c, const pf_symbol *s)
{
    for (int i = 0; i < c->n_tables; i++)
        if (c->tables[i].sym == s)
            return c->tables[i].table;
    if (c->n_tables == (int)(sizeof c->tables / sizeof *c->tables))
        pf_die("too many const arrays");
    ir_type t = lower_type(s->type);
    int32_t *vals = pf_arena_alloc(c->f->arena, 4 * (size_t)s->array_len);
    for (int i = 0; i < s->array_len; i++)
        memcpy(&vals[i], &s->array_values[i], 4);  /* i or f member: both 4 bytes */
    if (s->type == PF_T_BOOL)
        pf_die("bool const arrays are not lowered");
    ir_var *table = ir_table_new(c->f, s->name, t, s->array_len, vals);
    c->tables[c->n_tables].sym = s;
    c->tables[c->n_tables++].table = table;
    return table;
}

static ir_expr *lower_array_read(lower_ctx *c, const pf_expr *e)
{
    const pf_symbol *s = e->sym;
    ir_expr *index = lower_expr_as(c, e->args[0], IR_I32);
    if (s->kind == PF_SYM_CONST_ARRAY) {
        int64_t i;
        if (ir_is_const(index, &i)) {
            i = i < 0 ? 0 : i >= s->array_len ? s->array_len - 1 : i;
            pf_value v = s->array_values[i];
            return s->type == PF_T_FLOAT ? ir_const_f32(c->f, v.f) : ir_const_i32(c->f, v.i);
        }
        return ir_aload(c->f, const_table(c, s), index);
    }
    PF_ASSERT(s->kind == PF_SYM_LOCAL_ARRAY && c->frame->arrays[s->slot]);
    return ir_aload(c->f, c->frame->arrays[s->slot], index);
}

/* ---- builtins ---- */

static ir_expr *fconst(lower_ctx *c, float v)
{
    return ir_const_f32(c->f, v);
}

/* The paper's YUV matrices, evaluated left to right as written in docs/language.md. */
static ir_expr *dot3(lower_ctx *c, float k0, float k1, float k2, ir_expr **a)
{
    ir_func *f = c->f;
    ir_expr *t = irf_bin(f, IR_MUL, fconst(c, k0), a[0]);
    t = irf_bin(f, IR_ADD, t, irf_bin(f, IR_MUL, fconst(c, k1), a[1]));
    return irf_bin(f, IR_ADD, t, irf_bin(f, IR_MUL, fconst(c, k2), a[2]));
}

static ir_expr *lower_yuv(lower_ctx *c, pf_builtin b, ir_expr **a)
{
    ir_func *f = c->f;
    switch (b) {
    case PF_B_YUV_Y: return dot3(c, 0.299f, 0.587f, 0.114f, a);
    case PF_B_YUV_U: return dot3(c, -0.14713f, -0.28886f, 0.436f, a);
    case PF_B_YUV_V: return dot3(c, 0.615f, -0.51499f, -0.10001f, a);
    case PF_B_YUV_R: return irf_bin(f, IR_ADD, a[0], irf_bin(f, IR_MUL, fconst(c, 1.13983f), a[2]));
    case PF_B_YUV_G: {
        ir_expr *t = irf_bin(f, IR_SUB, a[0], irf_bin(f, IR_MUL, fconst(c, 0.39465f), a[1]));
        return irf_bin(f, IR_SUB, t, irf_bin(f, IR_MUL, fconst(c, 0.58060f), a[2]));
    }
    default: return irf_bin(f, IR_ADD, a[0], irf_bin(f, IR_MUL, fconst(c, 2.03211f), a[1]));
    }
}

static ir_fn math_fn(pf_builtin b)
{
    switch (b) {
    case PF_B_EXP: return IR_FN_EXP;
    case PF_B_LOG: return IR_FN_LOG;
    case PF_B_SQRT: return IR_FN_SQRT;
    case PF_B_SIN: return IR_FN_SIN;
    case PF_B_COS: return IR_FN_COS;
    case PF_B_TAN: return IR_FN_TAN;
    case PF_B_POW: return IR_FN_POW;
    case PF_B_ATAN2: return IR_FN_ATAN2;
    case PF_B_FLOOR: return IR_FN_FLOOR;
    case PF_B_CEIL: return IR_FN_CEIL;
    case PF_B_ROUND: return IR_FN_ROUND;
    default: pf_die("not a math builtin: %d", (int)b);
    }
}

static ir_expr *lower_abs(lower_ctx *c, ir_expr *a)
{
    if (a->type == IR_F32)
        return irf_call(c->f, IR_FN_FABS, IR_F32, 1, &a);
    /* abs(INT_MIN) wraps to INT_MIN, as 0 - x does. */
    ir_expr *neg = irf_un(c->f, IR_NEG, a);
    return irf_select(c->f, irf_bin(c->f, IR_LT, a, ir_const_i32(c->f, 0)), neg, a);
}

static ir_expr *lower_median(lower_ctx *c, const pf_expr *e)
{
    const pf_symbol *arr = e->args[0]->sym;
    PF_ASSERT(arr->kind == PF_SYM_LOCAL_ARRAY);
    ir_var *v = c->frame->arrays[arr->slot];
    ir_expr *args[2] = { NULL, lower_expr_as(c, e->args[1], IR_I32) };
    /* The array operand is passed as a reference to its variable: IR_FN_MEDIAN reads it. */
    ir_expr *ref = PF_NEW(c->f->arena, ir_expr);
    ref->kind = IR_VARREF;
    ref->type = v->type;
    ref->var = v;
    args[0] = ref;
    return ir_call(c->f, IR_FN_MEDIAN, v->type, 2, args);
}

static ir_expr *lower_builtin(lower_ctx *c, const pf_expr *e)
{
    if (e->builtin == PF_B_MEDIAN)
        return lower_median(c, e);
    ir_expr *a[4];
    PF_ASSERT(e->n_args <= 4);
    ir_type t = lower_type(e->type);
    bool numeric_result = e->builtin == PF_B_ABS || e->builtin == PF_B_MIN ||
                          e->builtin == PF_B_MAX || e->builtin == PF_B_CLAMP;
    for (int i = 0; i < e->n_args; i++) {
        a[i] = lower_expr(c, e->args[i]);
        if (e->builtin == PF_B_NOISE)
            a[i] = lower_convert(c, a[i], IR_I32);
        else if (numeric_result)
            a[i] = lower_convert(c, a[i], t);
        else
            a[i] = lower_convert(c, a[i], IR_F32);
    }
    ir_func *f = c->f;
    switch (e->builtin) {
    case PF_B_ABS: return lower_abs(c, a[0]);
    case PF_B_MIN: return irf_bin(f, IR_MIN, a[0], a[1]);
    case PF_B_MAX: return irf_bin(f, IR_MAX, a[0], a[1]);
    case PF_B_CLAMP: return irf_bin(f, IR_MIN, irf_bin(f, IR_MAX, a[0], a[1]), a[2]);
    case PF_B_NOISE: return ir_call(f, IR_FN_NOISE, IR_F32, e->n_args, a);
    case PF_B_YUV_Y: case PF_B_YUV_U: case PF_B_YUV_V:
    case PF_B_YUV_R: case PF_B_YUV_G: case PF_B_YUV_B:
        return lower_yuv(c, e->builtin, a);
    default:
        return irf_call(f, math_fn(e->builtin), IR_F32, e->n_args, a);
    }
}

/* ---- reductions ---- */

static ir_expr *reduce_identity(lower_ctx *c, pf_reduce_op op, ir_type t)
{
    if (op == PF_REDUCE_SUM)
        return t == IR_F32 ? fconst(c, 0.0f) : ir_const_i32(c->f, 0);
    if (t == IR_F32)
        return fconst(c, op == PF_REDUCE_MIN ? __builtin_inff() : -__builtin_inff());
    return ir_const_i32(c->f, op == PF_REDUCE_MIN ? INT32_MAX : INT32_MIN);
}

static ir_expr *reduce_step(lower_ctx *c, pf_reduce_op op, ir_expr *acc, ir_expr *v)
{
    static const ir_op ops[] = { IR_ADD, IR_MIN, IR_MAX };
    return irf_bin(c->f, ops[op], acc, v);
}

static ir_expr *lower_reduce_unrolled(lower_ctx *c, const pf_expr *e, ir_type t, int64_t lo,
                                      int64_t hi)
{
    int slot = e->sym->slot;
    ir_expr *saved = c->frame->slots[slot];
    ir_expr *acc = reduce_identity(c, e->reduce_op, t);
    for (int64_t i = lo; i <= hi; i++) {
        c->frame->slots[slot] = ir_const_i32(c->f, (int32_t)i);
        acc = reduce_step(c, e->reduce_op, acc, lower_expr_as(c, e->args[0], t));
    }
    c->frame->slots[slot] = saved;
    return lower_snapshot(c, "red", acc);
}

static ir_expr *lower_reduce_loop(lower_ctx *c, const pf_expr *e, ir_type t, ir_expr *lo,
                                  ir_expr *hi)
{
    ir_func *f = c->f;
    ir_var *acc = ir_var_new(f, "acc", t, IR_VAR_MUT);
    lower_emit(c, ir_decl(f, acc, reduce_identity(c, e->reduce_op, t)));
    ir_var *iv = ir_var_new(f, e->sym->name, IR_I32, IR_VAR_LOOP);
    int slot = e->sym->slot;
    ir_expr *saved = c->frame->slots[slot];
    c->frame->slots[slot] = ir_ref(f, iv);
    ir_list body = { 0 }, *outer = c->out;
    c->out = &body;
    ir_expr *v = lower_expr_as(c, e->args[0], t);
    lower_emit(c, ir_assign(f, acc, reduce_step(c, e->reduce_op, ir_ref(f, acc), v)));
    c->out = outer;
    c->frame->slots[slot] = saved;
    ir_expr *step = ir_const_i32(f, 1);
    ir_expr *end = lower_range(c, &lo, hi, &step, 1);
    lower_emit(c, ir_for(f, iv, lo, end, step, IR_LOOP_SERIAL, ir_list_block(f, &body)));
    return lower_snapshot(c, "red", ir_ref(f, acc));
}

/* pf_check's size limit counts what is unrolled here (lang/walk.h). */
_Static_assert(PF_UNROLL_REDUCTION <= PF_NODES_UNROLL_TAPS, "unrolling beyond what is counted");

static ir_expr *lower_reduce(lower_ctx *c, const pf_expr *e)
{
    ir_type t = lower_type(e->type);
    ir_expr *lo = lower_expr_as(c, e->a, IR_I32), *hi = lower_expr_as(c, e->b, IR_I32);
    int64_t l, h;
    if (ir_is_const(lo, &l) && ir_is_const(hi, &h) && h - l < PF_UNROLL_REDUCTION)
        return lower_reduce_unrolled(c, e, t, l, h);
    return lower_reduce_loop(c, e, t, lo, hi);
}

/* ---- helper function calls (inlined) ---- */

bool lower_stmt_assigns(const pf_stmt *s, const pf_symbol *sym)
{
    if (!s)
        return false;
    switch (s->kind) {
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++)
            if (lower_stmt_assigns(s->body[i], sym))
                return true;
        return false;
    case PF_S_ASSIGN:
        return s->target.sym == sym;
    case PF_S_IF:
        return lower_stmt_assigns(s->then_s, sym) || lower_stmt_assigns(s->else_s, sym);
    case PF_S_FOR:
        return lower_stmt_assigns(s->then_s, sym);
    default:
        return false;
    }
}

static void bind_params(lower_ctx *c, const pf_func *fn, ir_expr **args, lower_frame *fr)
{
    for (int i = 0; i < fn->n_params; i++) {
        const pf_symbol *p = fn->params[i];
        ir_expr *v = lower_convert(c, args[i], lower_type(p->type));
        if (lower_stmt_assigns(fn->body, p)) {
            ir_var *m = ir_var_new(c->f, p->name, v->type, IR_VAR_MUT);
            lower_emit(c, ir_decl(c->f, m, v));
            fr->slots[p->slot] = ir_ref(c->f, m);
        } else {
            fr->slots[p->slot] = lower_snapshot(c, p->name, v);
        }
    }
}

static const pf_stmt *single_return(const pf_func *fn)
{
    const pf_stmt *b = fn->body;
    if (b->kind == PF_S_BLOCK && b->n_body == 1 && b->body[0]->kind == PF_S_RETURN)
        return b->body[0];
    return NULL;
}

static ir_expr *lower_call(lower_ctx *c, const pf_expr *e)
{
    const pf_func *fn = e->sym->func;
    /* Arguments are the caller's expressions: g(g(g(x))) nests no deeper than g itself. */
    ir_expr **args = pf_arena_alloc(c->f->arena, sizeof *args * (size_t)(e->n_args + 1));
    for (int i = 0; i < e->n_args; i++)
        args[i] = lower_expr(c, e->args[i]);
    if (++c->inline_depth > PF_MAX_CALL_DEPTH)
        pf_die("helper inlining deeper than %d (pf_check limits it)", PF_MAX_CALL_DEPTH);
    lower_frame fr = { 0 }, *saved = c->frame;
    fr.n_slots = fn->n_slots;
    fr.slots = pf_arena_alloc(c->f->arena, sizeof *fr.slots * (size_t)(fn->n_slots + 1));
    fr.arrays = pf_arena_alloc(c->f->arena, sizeof *fr.arrays * (size_t)(fn->n_slots + 1));
    bind_params(c, fn, args, &fr);
    c->frame = &fr;
    ir_type rt = lower_type(fn->ret);
    ir_expr *result;
    const pf_stmt *ret = single_return(fn);
    if (ret) {
        result = lower_expr_as(c, ret->value, rt);
    } else {
        fr.ret = ir_var_new(c->f, fn->name, rt, IR_VAR_MUT);
        fr.done = ir_var_new(c->f, "returned", IR_BOOL, IR_VAR_MUT);
        ir_expr *zero = rt == IR_BOOL ? ir_const_bool(c->f, false)
                                      : reduce_identity(c, PF_REDUCE_SUM, rt);
        lower_emit(c, ir_decl(c->f, fr.ret, zero));
        lower_emit(c, ir_decl(c->f, fr.done, ir_const_bool(c->f, false)));
        lower_stmt(c, fn->body);
        result = lower_snapshot(c, fn->name, ir_ref(c->f, fr.ret));
    }
    c->frame = saved;
    c->inline_depth--;
    return result;
}

ir_expr *lower_expr(lower_ctx *c, const pf_expr *e)
{
    switch (e->kind) {
    case PF_E_INT: return ir_const_i32(c->f, e->ival);
    case PF_E_FLOAT: return ir_const_f32(c->f, e->fval);
    case PF_E_BOOL: return ir_const_bool(c->f, e->bval);
    case PF_E_NAME: return lower_name(c, e);
    case PF_E_UNARY: return lower_unary(c, e);
    case PF_E_BINARY: return lower_binary(c, e);
    case PF_E_COND: return lower_cond(c, e);
    case PF_E_CAST: return lower_cast(c, e);
    case PF_E_CALL: return lower_call(c, e);
    case PF_E_BUILTIN: return lower_builtin(c, e);
    case PF_E_IMAGE_READ: return lower_image_read(c, e);
    case PF_E_ARRAY_READ: return lower_array_read(c, e);
    case PF_E_REDUCE: return lower_reduce(c, e);
    default: pf_die("lowering an unchecked expression (kind %d)", (int)e->kind);
    }
}
