/* Loop IR construction helpers and simple structural queries. */
#include "codegen/ir.h"

#include "base/error.h"
#include "codegen/ir_simplify.h"

#include <stdio.h>
#include <string.h>

ir_func *ir_func_new(pf_arena *arena, const char *name)
{
    ir_func *f = PF_NEW(arena, ir_func);
    f->arena = arena;
    f->name = pf_arena_strdup(arena, name);
    return f;
}

ir_var *ir_var_new(ir_func *f, const char *name, ir_type type, ir_var_kind kind)
{
    ir_var *v = PF_NEW(f->arena, ir_var);
    v->id = f->n_vars++;
    /* Suffix the id so printed names (and C identifiers) are unique. */
    size_t n = strlen(name) + 16;
    char *s = pf_arena_alloc(f->arena, n);
    snprintf(s, n, "%s_%d", name, v->id);
    v->name = s;
    v->type = type;
    v->kind = kind;
    return v;
}

ir_buffer *ir_buffer_new(ir_func *f, const char *name, ir_buffer_kind kind, int ndims)
{
    PF_ASSERT(ndims >= 1 && ndims <= IR_MAX_DIMS);
    ir_buffer *b = PF_NEW(f->arena, ir_buffer);
    b->id = f->n_buffers;
    b->name = pf_arena_strdup(f->arena, name);
    b->kind = kind;
    b->ndims = ndims;
    b->arg_index = -1;
    for (int d = 0; d < ndims; d++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%.40s_extent%d", name, d);
        b->extent[d] = ir_var_new(f, nm, IR_I32, IR_VAR_LET);
        snprintf(nm, sizeof nm, "%.40s_stride%d", name, d);
        b->stride[d] = ir_var_new(f, nm, IR_I64, IR_VAR_LET);
    }
    ir_buffer **nb = PF_NEW_ARRAY(f->arena, ir_buffer *, f->n_buffers + 1);
    if (f->n_buffers)
        memcpy(nb, f->buffers, sizeof *nb * (size_t)f->n_buffers);
    nb[f->n_buffers++] = b;
    f->buffers = nb;
    return b;
}

void ir_buffer_make_window(ir_func *f, ir_buffer *b)
{
    PF_ASSERT(b->kind == IR_BUF_INTERNAL);
    b->window = true;
    for (int d = 0; d < b->ndims; d++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%.40s_origin%d", b->name, d);
        b->origin[d] = ir_var_new(f, nm, IR_I32, IR_VAR_LET);
        snprintf(nm, sizeof nm, "%.40s_size%d", b->name, d);
        b->size[d] = ir_var_new(f, nm, IR_I32, IR_VAR_LET);
    }
}

ir_var *ir_table_new(ir_func *f, const char *name, ir_type type, int len, const void *values)
{
    PF_ASSERT(type == IR_I32 || type == IR_F32);
    ir_var *v = ir_var_new(f, name, type, IR_VAR_ARRAY);
    v->array_len = len;
    v->const_init = pf_arena_memdup(f->arena, values, 4 * (size_t)len);
    ir_var **nt = PF_NEW_ARRAY(f->arena, ir_var *, f->n_tables + 1);
    if (f->n_tables)
        memcpy(nt, f->tables, sizeof *nt * (size_t)f->n_tables);
    nt[f->n_tables++] = v;
    f->tables = nt;
    return v;
}

static ir_expr *expr_new(ir_func *f, ir_expr_kind kind, ir_type type)
{
    ir_expr *e = PF_NEW(f->arena, ir_expr);
    e->kind = kind;
    e->type = type;
    return e;
}

ir_expr *ir_const_i32(ir_func *f, int32_t v)
{
    ir_expr *e = expr_new(f, IR_CONST, IR_I32);
    e->ival = v;
    return e;
}

ir_expr *ir_const_i64(ir_func *f, int64_t v)
{
    ir_expr *e = expr_new(f, IR_CONST, IR_I64);
    e->ival = v;
    return e;
}

ir_expr *ir_const_f32(ir_func *f, float v)
{
    ir_expr *e = expr_new(f, IR_CONST, IR_F32);
    e->fval = v;
    return e;
}

ir_expr *ir_const_f64(ir_func *f, double v)
{
    ir_expr *e = expr_new(f, IR_CONST, IR_F64);
    e->dval = v;
    return e;
}

ir_expr *ir_const_bool(ir_func *f, bool v)
{
    ir_expr *e = expr_new(f, IR_CONST, IR_BOOL);
    e->ival = v;
    return e;
}

ir_expr *ir_ref(ir_func *f, ir_var *v)
{
    PF_ASSERT(v->kind != IR_VAR_ARRAY);
    ir_expr *e = expr_new(f, IR_VARREF, v->type);
    e->var = v;
    return e;
}

static bool is_compare(ir_op op)
{
    return op == IR_LT || op == IR_LE || op == IR_EQ || op == IR_NE;
}

ir_expr *ir_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b)
{
    if (a->type != b->type)
        pf_die("ir_bin %s: operand types %s and %s differ", ir_op_name(op),
               ir_type_name(a->type), ir_type_name(b->type));
    ir_type t = (is_compare(op) || op == IR_AND || op == IR_OR) ? IR_BOOL : a->type;
    ir_expr *e = expr_new(f, IR_BIN, t);
    e->op = op;
    e->a = a;
    e->b = b;
    return e;
}

ir_expr *ir_un(ir_func *f, ir_op op, ir_expr *a)
{
    ir_expr *e = expr_new(f, IR_UN, a->type);
    e->op = op;
    e->a = a;
    return e;
}

ir_expr *ir_select(ir_func *f, ir_expr *c, ir_expr *a, ir_expr *b)
{
    if (c->type != IR_BOOL || a->type != b->type)
        pf_die("ir_select: bad operand types");
    ir_expr *e = expr_new(f, IR_SELECT, a->type);
    e->a = c;
    e->b = a;
    e->c = b;
    return e;
}

ir_expr *ir_cast(ir_func *f, ir_type to, ir_expr *a)
{
    if (a->type == to)
        return a;
    ir_expr *e = expr_new(f, IR_CAST, to);
    e->a = a;
    return e;
}

ir_expr *ir_load(ir_func *f, ir_buffer *buf, ir_expr **idx, uint8_t clamp_mask)
{
    ir_expr *e = expr_new(f, IR_LOAD, IR_F32);
    e->buf = buf;
    e->n_args = buf->ndims;
    e->args = pf_arena_memdup(f->arena, idx, sizeof *idx * (size_t)buf->ndims);
    e->clamp_mask = clamp_mask;
    return e;
}

ir_expr *ir_aload(ir_func *f, ir_var *array, ir_expr *index)
{
    PF_ASSERT(array->kind == IR_VAR_ARRAY);
    ir_expr *e = expr_new(f, IR_ALOAD, array->type);
    e->var = array;
    e->a = index;
    return e;
}

ir_expr *ir_call(ir_func *f, ir_fn fn, ir_type type, int n, ir_expr **args)
{
    ir_expr *e = expr_new(f, IR_CALL, type);
    e->fn = fn;
    e->n_args = n;
    e->args = pf_arena_memdup(f->arena, args, sizeof *args * (size_t)n);
    return e;
}

ir_expr *ir_interp_read(ir_func *f, ir_buffer *store, ir_interp *g, ir_expr **idx,
                        uint8_t clamp_mask)
{
    ir_expr *e = expr_new(f, IR_INTERP, IR_F32);
    e->buf = store;
    e->interp = g;
    e->n_args = g->image->ndims;
    e->args = pf_arena_memdup(f->arena, idx, sizeof *idx * (size_t)e->n_args);
    e->clamp_mask = clamp_mask;
    return e;
}

ir_expr *ir_with_args(ir_func *f, const ir_expr *e, ir_expr **args, uint8_t clamp_mask)
{
    switch (e->kind) {
    case IR_LOAD:
        return ir_load(f, e->buf, args, clamp_mask);
    case IR_INTERP:
        return ir_interp_read(f, e->buf, e->interp, args, clamp_mask);
    case IR_CALL:
        return e->fn == IR_FN_MEDIAN ? ir_call(f, e->fn, e->type, e->n_args, args)
                                     : ir_fold(f, ir_call(f, e->fn, e->type, e->n_args, args));
    default:
        pf_die("ir_with_args on expression kind %d", (int)e->kind);
    }
}

static ir_stmt *stmt_new(ir_func *f, ir_stmt_kind kind)
{
    ir_stmt *s = PF_NEW(f->arena, ir_stmt);
    s->kind = kind;
    return s;
}

ir_stmt *ir_block(ir_func *f, int n, ir_stmt **body)
{
    ir_stmt *s = stmt_new(f, IR_S_BLOCK);
    s->n = n;
    s->body = n ? pf_arena_memdup(f->arena, body, sizeof *body * (size_t)n) : NULL;
    return s;
}

ir_stmt *ir_let(ir_func *f, ir_var *v, ir_expr *value)
{
    PF_ASSERT(v->kind == IR_VAR_LET && v->type == value->type);
    ir_stmt *s = stmt_new(f, IR_S_LET);
    s->var = v;
    s->value = value;
    return s;
}

ir_stmt *ir_decl(ir_func *f, ir_var *v, ir_expr *value)
{
    PF_ASSERT(v->kind == IR_VAR_MUT && v->type == value->type);
    ir_stmt *s = stmt_new(f, IR_S_DECL);
    s->var = v;
    s->value = value;
    return s;
}

ir_stmt *ir_assign(ir_func *f, ir_var *v, ir_expr *value)
{
    PF_ASSERT(v->kind == IR_VAR_MUT && v->type == value->type);
    ir_stmt *s = stmt_new(f, IR_S_ASSIGN);
    s->var = v;
    s->value = value;
    return s;
}

ir_stmt *ir_array_decl(ir_func *f, ir_var *array)
{
    ir_stmt *s = stmt_new(f, IR_S_ARRAY_DECL);
    s->var = array;
    return s;
}

ir_stmt *ir_array_store(ir_func *f, ir_var *array, ir_expr *index, ir_expr *value)
{
    PF_ASSERT(array->kind == IR_VAR_ARRAY && array->type == value->type);
    ir_stmt *s = stmt_new(f, IR_S_ARRAY_STORE);
    s->var = array;
    s->index = index;
    s->value = value;
    return s;
}

ir_stmt *ir_sort(ir_func *f, ir_var *array, ir_expr *n)
{
    ir_stmt *s = stmt_new(f, IR_S_SORT);
    s->var = array;
    s->value = n;
    return s;
}

ir_stmt *ir_store(ir_func *f, ir_buffer *buf, ir_expr **idx, ir_expr *value, uint8_t check_mask,
                  bool scatter)
{
    PF_ASSERT(value->type == IR_F32);
    ir_stmt *s = stmt_new(f, IR_S_STORE);
    s->buf = buf;
    s->n = buf->ndims;
    s->idx = pf_arena_memdup(f->arena, idx, sizeof *idx * (size_t)buf->ndims);
    s->value = value;
    s->check_mask = check_mask;
    s->scatter = scatter;
    return s;
}

ir_stmt *ir_for(ir_func *f, ir_var *v, ir_expr *lo, ir_expr *hi, ir_expr *step,
                ir_loop_kind kind, ir_stmt *body)
{
    PF_ASSERT(v->kind == IR_VAR_LOOP);
    ir_stmt *s = stmt_new(f, IR_S_FOR);
    s->var = v;
    s->lo = lo;
    s->hi = hi;
    s->step = step ? step : ir_const_i32(f, 1);
    s->loop_kind = kind;
    s->width = 1;
    s->then_s = body;
    return s;
}

bool ir_for_counts_wide(const ir_stmt *s)
{
    int64_t step, hi;
    if (s->hi->type == IR_I64 || !ir_is_const(s->step, &step))
        return true;
    /* the last value is at most hi - 1 */
    return step != 1 && !(ir_is_const(s->hi, &hi) && hi - 1 + step <= INT32_MAX);
}

ir_stmt *ir_if(ir_func *f, ir_expr *cond, ir_stmt *then_s, ir_stmt *else_s)
{
    PF_ASSERT(cond->type == IR_BOOL);
    ir_stmt *s = stmt_new(f, IR_S_IF);
    s->cond = cond;
    s->then_s = then_s;
    s->else_s = else_s;
    return s;
}

ir_stmt *ir_alloc(ir_func *f, ir_buffer *buf, bool zero, ir_stmt *body)
{
    ir_stmt *s = stmt_new(f, IR_S_ALLOC);
    s->buf = buf;
    s->zero = zero;
    s->then_s = body;
    return s;
}

ir_stmt *ir_alloc_window(ir_func *f, ir_buffer *buf, bool zero, ir_expr **origin,
                         ir_expr **size, ir_stmt *body)
{
    PF_ASSERT(buf->window);
    ir_stmt *s = ir_alloc(f, buf, zero, body);
    s->window = PF_NEW_ARRAY(f->arena, ir_expr *, 2 * buf->ndims);
    for (int d = 0; d < buf->ndims; d++) {
        s->window[2 * d] = origin[d];
        s->window[2 * d + 1] = size[d];
    }
    return s;
}

ir_stmt *ir_rtcall(ir_func *f, ir_rt rt, int n_bufs, ir_buffer **bufs, int n, ir_expr **args)
{
    ir_stmt *s = stmt_new(f, IR_S_RTCALL);
    s->rt = rt;
    s->n_bufs = n_bufs;
    s->bufs = n_bufs ? pf_arena_memdup(f->arena, bufs, sizeof *bufs * (size_t)n_bufs) : NULL;
    s->n = n;
    s->args = n ? pf_arena_memdup(f->arena, args, sizeof *args * (size_t)n) : NULL;
    return s;
}

const char *ir_rt_name(ir_rt rt)
{
    /* ORDER IR_RT */
    static const char *names[] = { "zero_buffer", "importance_mask", "adaptive_coarse",
                                   "adaptive_refine", "reconstruct", "copy_channels" };
    _Static_assert(sizeof names / sizeof *names == IR_RT_COUNT, "ORDER IR_RT");
    return names[rt];
}

ir_stmt *ir_comment(ir_func *f, const char *text)
{
    ir_stmt *s = stmt_new(f, IR_S_COMMENT);
    s->text = pf_arena_strdup(f->arena, text);
    return s;
}

ir_stmt *ir_barrier(ir_func *f)
{
    return stmt_new(f, IR_S_BARRIER);
}

void ir_list_push(ir_func *f, ir_list *l, ir_stmt *s)
{
    if (!s)
        return;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        ir_stmt **items = PF_NEW_ARRAY(f->arena, ir_stmt *, cap);
        if (l->n)
            memcpy(items, l->items, sizeof *items * (size_t)l->n);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
}

ir_stmt *ir_list_block(ir_func *f, ir_list *l)
{
    ir_stmt *s = stmt_new(f, IR_S_BLOCK);
    s->n = l->n;
    s->body = l->items;
    l->n = l->cap = 0;
    l->items = NULL;
    return s;
}

const char *ir_type_name(ir_type t)
{
    static const char *names[] = { "bool", "i32", "i64", "f32", "f64" };
    return names[t];
}

const char *ir_op_name(ir_op op)
{
    static const char *names[] = { "+", "-", "*", "/", "%", "min", "max",
                                   "<", "<=", "==", "!=", "&&", "||", "-", "!" };
    return names[op];
}

const char *ir_fn_name(ir_fn fn)
{
    /* ORDER IR_FN */
    static const char *names[] = { "exp", "log", "sqrt", "sin", "cos", "tan",
                                   "pow", "atan2", "floor", "ceil", "round", "fabs",
                                   "noise", "median", "perf_hash" };
    _Static_assert(sizeof names / sizeof *names == IR_FN_COUNT, "ORDER IR_FN");
    return names[fn];
}

bool ir_is_const(const ir_expr *e, int64_t *ival)
{
    if (e->kind != IR_CONST || ir_type_is_float(e->type))
        return false;
    if (ival)
        *ival = e->ival;
    return true;
}

bool ir_is_const_f(const ir_expr *e, float *fval)
{
    if (e->kind != IR_CONST || e->type != IR_F32)
        return false;
    if (fval)
        *fval = e->fval;
    return true;
}

bool ir_expr_equal(const ir_expr *a, const ir_expr *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->type != b->type)
        return false;
    switch (a->kind) {
    case IR_CONST:
        if (a->type == IR_F64)
            return memcmp(&a->dval, &b->dval, sizeof a->dval) == 0;
        return a->type == IR_F32 ? memcmp(&a->fval, &b->fval, sizeof a->fval) == 0
                                 : a->ival == b->ival;
    case IR_VARREF:
        return a->var == b->var;
    case IR_BIN:
        return a->op == b->op && ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b);
    case IR_UN:
        return a->op == b->op && ir_expr_equal(a->a, b->a);
    case IR_SELECT:
        return ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b) &&
               ir_expr_equal(a->c, b->c);
    case IR_CAST:
        return ir_expr_equal(a->a, b->a);
    case IR_ALOAD:
        return a->var == b->var && ir_expr_equal(a->a, b->a);
    case IR_LOAD:
        if (a->buf != b->buf || a->clamp_mask != b->clamp_mask)
            return false;
        break;
    case IR_INTERP:
        if (a->buf != b->buf || a->interp != b->interp || a->clamp_mask != b->clamp_mask)
            return false;
        break;
    case IR_CALL:
        if (a->fn != b->fn || a->n_args != b->n_args)
            return false;
        break;
    }
    for (int i = 0; i < a->n_args; i++)
        if (!ir_expr_equal(a->args[i], b->args[i]))
            return false;
    return true;
}

static bool reads_buffer(const ir_expr *e, const ir_buffer *b)
{
    if (!e)
        return false;
    if ((e->kind == IR_LOAD || e->kind == IR_INTERP) && e->buf == b)
        return true;
    if (e->kind == IR_INTERP && (e->interp->image == b || e->interp->ref == b))
        return true;
    if (reads_buffer(e->a, b) || reads_buffer(e->b, b) || reads_buffer(e->c, b))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (reads_buffer(e->args[i], b))
            return true;
    return false;
}

/* Whether e loads the cell store s writes. */
static bool loads_own_cell(const ir_stmt *s, const ir_expr *e)
{
    if (e->kind != IR_LOAD || e->buf != s->buf || e->n_args != s->n)
        return false;
    for (int d = 0; d < s->n; d++)
        if (!ir_expr_equal(e->args[d], s->idx[d]))
            return false;
    return true;
}

const ir_expr *ir_store_addend(const ir_stmt *s, bool *negate)
{
    *negate = false;
    const ir_expr *v = s->kind == IR_S_STORE ? s->value : NULL;
    if (!v || v->kind != IR_BIN || v->type != IR_F32 || (v->op != IR_ADD && v->op != IR_SUB))
        return NULL;
    const ir_expr *add = NULL;
    if (loads_own_cell(s, v->a))
        add = v->b;
    else if (v->op == IR_ADD && loads_own_cell(s, v->b))
        add = v->a;
    if (!add || reads_buffer(add, s->buf))
        return NULL;
    for (int d = 0; d < s->n; d++)
        if (reads_buffer(s->idx[d], s->buf))
            return NULL;
    *negate = v->op == IR_SUB;
    return add;
}

bool ir_expr_uses_var(const ir_expr *e, const ir_var *v)
{
    if (!e)
        return false;
    if ((e->kind == IR_VARREF || e->kind == IR_ALOAD) && e->var == v)
        return true;
    if (ir_expr_uses_var(e->a, v) || ir_expr_uses_var(e->b, v) || ir_expr_uses_var(e->c, v))
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (ir_expr_uses_var(e->args[i], v))
            return true;
    return false;
}
