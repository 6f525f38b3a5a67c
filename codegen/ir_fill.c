/* Local arrays filled in order by a counter (see ir_fill.h): what the vector code (llvm_vec.c)
 * and pass_narrow rely on. */
#include "codegen/ir_fill.h"

#include <stdbool.h>

typedef struct fill {
    const ir_var *a;
    const ir_var *count;  /* the counter of the first store */
    bool ok;
} fill;

/* n + 1 */
static bool is_increment(const ir_expr *e, const ir_var *n)
{
    int64_t one;
    return e->kind == IR_BIN && e->op == IR_ADD && e->a->kind == IR_VARREF && e->a->var == n &&
           ir_is_const(e->b, &one) && one == 1;
}

/* Every mention of the array in e is median(a, count). */
static void fill_expr(fill *f, const ir_expr *e)
{
    if (!e || !f->ok)
        return;
    if (e->kind == IR_CALL && e->fn == IR_FN_MEDIAN && e->args[0]->var == f->a) {
        f->ok = e->args[1]->kind == IR_VARREF && e->args[1]->var == f->count;
        return;
    }
    if ((e->kind == IR_VARREF || e->kind == IR_ALOAD) && e->var == f->a)
        f->ok = false;
    fill_expr(f, e->a);
    fill_expr(f, e->b);
    fill_expr(f, e->c);
    for (int i = 0; i < e->n_args; i++)
        fill_expr(f, e->args[i]);
}

/* Statement j of block b, a store to the array: `let i = n; a[i] = v; n = n + 1;`. */
static bool is_fill_store(fill *f, const ir_stmt *b, int j)
{
    const ir_stmt *let = j > 0 ? b->body[j - 1] : NULL, *st = b->body[j];
    const ir_stmt *inc = j + 1 < b->n ? b->body[j + 1] : NULL;
    if (!let || !inc || let->kind != IR_S_LET || let->value->kind != IR_VARREF ||
        st->index->kind != IR_VARREF || st->index->var != let->var || inc->kind != IR_S_ASSIGN)
        return false;
    const ir_var *n = let->value->var;
    if (n->kind != IR_VAR_MUT || inc->var != n || !is_increment(inc->value, n))
        return false;
    if (!f->count)
        f->count = n;
    return n == f->count;
}

static void fill_stmt(fill *f, const ir_stmt *s)
{
    if (!s || !f->ok)
        return;
    for (int j = 0; s->kind == IR_S_BLOCK && j < s->n && f->ok; j++) {
        const ir_stmt *t = s->body[j];
        if (t->kind == IR_S_ARRAY_STORE && t->var == f->a && !is_fill_store(f, s, j))
            f->ok = false;
        /* the counter changes only right after a store */
        if (t->kind == IR_S_ASSIGN && f->count && t->var == f->count &&
            !(j > 0 && s->body[j - 1]->kind == IR_S_ARRAY_STORE &&
              s->body[j - 1]->var == f->a && is_fill_store(f, s, j - 1)))
            f->ok = false;
        if (t->kind == IR_S_SORT && t->var == f->a)
            f->ok = false;
        fill_stmt(f, t);
    }
    if (s->kind == IR_S_BLOCK)
        return;
    fill_expr(f, s->value);
    fill_expr(f, s->cond);
    fill_expr(f, s->lo);
    fill_expr(f, s->hi);
    for (int i = 0; s->kind == IR_S_STORE && i < s->n; i++)
        fill_expr(f, s->idx[i]);
    fill_stmt(f, s->then_s);
    fill_stmt(f, s->else_s);
}

/* Whether `int count = 0` follows the array's declaration in its block. */
static bool counter_declared_after(const ir_stmt *s, const ir_var *a, const ir_var *count)
{
    if (!s)
        return false;
    for (int j = 0; s->kind == IR_S_BLOCK && j < s->n; j++) {
        const ir_stmt *t = s->body[j];
        if (t->kind == IR_S_ARRAY_DECL && t->var == a) {
            int64_t zero;
            for (int k = j + 1; k < s->n; k++)
                if (s->body[k]->kind == IR_S_DECL && s->body[k]->var == count)
                    return ir_is_const(s->body[k]->value, &zero) && zero == 0;
            return false;
        }
        if (counter_declared_after(t, a, count))
            return true;
    }
    return s->kind != IR_S_BLOCK &&
           (counter_declared_after(s->then_s, a, count) ||
            counter_declared_after(s->else_s, a, count));
}

const ir_var *ir_fill_counter(const ir_stmt *body, const ir_var *a)
{
    fill f = { a, NULL, true };
    fill_stmt(&f, body);
    if (f.ok && f.count)  /* the counter is known now: check its increments everywhere */
        fill_stmt(&f, body);
    return f.ok && f.count && counter_declared_after(body, a, f.count) ? f.count : NULL;
}

/* ---- how far the counter goes ---- */

/* Iterations of loop s when its bounds and step are constants, else -1. */
static int64_t trip_count(const ir_stmt *s)
{
    int64_t lo, hi, step = 1;
    if (!ir_is_const(s->lo, &lo) || !ir_is_const(s->hi, &hi) ||
        (s->step && !ir_is_const(s->step, &step)) || step < 1)
        return -1;
    return hi > lo ? (hi - lo + step - 1) / step : 0;
}

#define FILL_MAX INT32_MAX

int64_t ir_fill_max_count(const ir_stmt *s, const ir_var *count)
{
    if (!s)
        return 0;
    int64_t n = 0, a, b;
    switch (s->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < s->n; i++) {
            if ((a = ir_fill_max_count(s->body[i], count)) < 0 || (n += a) > FILL_MAX)
                return -1;
        }
        return n;
    case IR_S_ASSIGN:
        return s->var == count;
    case IR_S_IF:  /* one branch runs */
        a = ir_fill_max_count(s->then_s, count);
        b = ir_fill_max_count(s->else_s, count);
        return a < 0 || b < 0 ? -1 : a > b ? a : b;
    case IR_S_FOR:
    case IR_S_ALLOC:
        if ((a = ir_fill_max_count(s->then_s, count)) <= 0)
            return a;  /* a loop that never increments may have any bounds */
        b = s->kind == IR_S_FOR ? trip_count(s) : 1;
        return b < 0 || a * b > FILL_MAX ? -1 : a * b;
    default:
        return 0;
    }
}

