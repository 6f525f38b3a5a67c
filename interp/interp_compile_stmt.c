/* The interpreter's translator, part 3: statements, and the units (one per helper function,
 * pipeline scalar and stage) that pf_icode_build produces. See interp_compile.h. */
#include "interp/interp_compile.h"

#include <stdlib.h>
#include <string.h>

/* ---- statements ---- */

static void stmt(pf_icomp *c, const pf_stmt *s);

static const pf_iop assign_int_ops[] = { PF_I_MOV, PF_I_ADD_I, PF_I_SUB_I, PF_I_MUL_I, PF_I_DIV_I };
static const pf_iop assign_float_ops[] = { PF_I_MOV, PF_I_ADD_F, PF_I_SUB_F, PF_I_MUL_F,
                                           PF_I_DIV_F };

/* Compiles e so that its value lands in slot d (of type t). When e's last instruction wrote a
 * fresh temporary, that instruction is retargeted at d instead of adding a MOV. */
void pf_ic_expr_into(pf_icomp *c, const pf_expr *e, pf_type t, int d)
{
    int mark = c->u->n_slots;
    int v = pf_ic_expr_as(c, e, t);
    if (c->failed)
        return;
    if (v >= mark && c->def_end == pf_ic_here(c) && c->def_slot == v) {
        c->u->code[c->def_pos + 1] = d;
        c->def_end = -1;
        return;
    }
    pf_ic_mov(c, d, v);
}

static void decl_stmt(pf_icomp *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->sym;
    if (!sym) {
        pf_ic_fail(c, s->loc, "interpreter: unchecked declaration");
        return;
    }
    if (sym->kind == PF_SYM_LOCAL_ARRAY) {
        if (sym->array_len < 1 || s->value) {
            pf_ic_fail(c, s->loc, "interpreter: malformed local array");
            return;
        }
        int base = pf_ic_new_slots(c, sym->array_len);
        pf_ic_map_put(c, sym, base);
        PF_IC_EMIT(c, PF_I_ZERO, base, sym->array_len);
        return;
    }
    int slot = pf_ic_new_slots(c, 1);
    if (s->value)
        pf_ic_expr_into(c, s->value, sym->type, slot);
    else
        PF_IC_EMIT(c, PF_I_ZERO, slot, 1);
    /* Mapped after the initializer: `float x = x;` reads an outer x. */
    pf_ic_map_put(c, sym, slot);
}

static pf_iop assign_opcode(pf_icomp *c, const pf_stmt *s, pf_type t)
{
    if (s->assign_op == PF_ASSIGN_SET)
        return PF_I_MOV;
    if (t == PF_T_INT)
        return assign_int_ops[s->assign_op];
    if (t == PF_T_FLOAT)
        return assign_float_ops[s->assign_op];
    pf_ic_fail(c, s->loc, "interpreter: compound assignment to a bool");
    return PF_I_MOV;
}

static void assign_local(pf_icomp *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->target.sym;
    int slot = pf_ic_map_get(c, sym);
    if (slot < 0 || sym->kind != PF_SYM_LOCAL) {
        pf_ic_fail(c, s->loc, "interpreter: assignment to something that is not a local");
        return;
    }
    pf_iop op = assign_opcode(c, s, sym->type);
    if (op == PF_I_MOV) {
        pf_ic_expr_into(c, s->value, sym->type, slot);
        return;
    }
    pf_ic_accumulate(c, slot, slot, op, s->value, sym->type);
}

static void assign_array(pf_icomp *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->target.sym;
    if (!sym || sym->kind != PF_SYM_LOCAL_ARRAY || s->target.n_index != 1) {
        pf_ic_fail(c, s->loc, "interpreter: assignment to something that is not a local array");
        return;
    }
    int len;
    int base = pf_ic_array_base(c, sym, s->loc, &len);
    int i = pf_ic_expr_as(c, s->target.index[0], PF_T_INT);
    int v = pf_ic_expr_as(c, s->value, sym->type);
    pf_iop op = assign_opcode(c, s, sym->type);
    if (op != PF_I_MOV) {
        int t = pf_ic_new_slots(c, 1);
        PF_IC_EMIT(c, PF_I_ALOAD, t, base, len, i, op, t, t, v);
        v = t;
    }
    PF_IC_EMIT(c, PF_I_ASTORE, base, len, i, v);
}

static void assign_image(pf_icomp *c, const pf_stmt *s)
{
    int img = pf_ic_image_index(c, s->target.sym, s->loc);
    if (c->failed)
        return;
    const pf_image_decl *d = c->prog->images[img];
    if (d->role == PF_IMAGE_INPUT) {
        pf_ic_fail(c, s->loc, "interpreter: inputs are never written");
        return;
    }
    if (s->target.n_index != d->ndims) {
        pf_ic_fail(c, s->loc, "interpreter: wrong number of image indices");
        return;
    }
    pf_ic_note_access(c, img, s->target.index);
    /* an image stored on demand: only its writer writes it, at its own pixel's J */
    const pf_stage *od = c->ic->od_writer[img];
    if (od && od != c->stage) {
        pf_ic_fail(c, s->loc, "interpreter: a write to an image another stage stores on demand");
        return;
    }
    int32_t idx[PF_MAX_DIMS];
    for (int k = 0; k < PF_MAX_DIMS; k++)
        idx[k] = k < d->ndims ? pf_ic_expr_as(c, s->target.index[k], PF_T_INT)
                              : pf_ic_const_int(c, 0);
    int v = pf_ic_expr_as(c, s->value, PF_T_FLOAT);
    PF_IC_EMIT(c, od ? PF_I_WRITE_J : PF_I_WRITE, (int32_t)s->assign_op, img, v, idx[0], idx[1],
               idx[2], idx[3]);
}

static void if_stmt(pf_icomp *c, const pf_stmt *s)
{
    pf_ic_jumps to_else = { 0, 0, NULL };
    pf_ic_jump_if_false(c, s->cond, &to_else);
    stmt(c, s->then_s);
    if (s->else_s) {
        PF_IC_EMIT(c, PF_I_JMP, 0);
        int to_end = pf_ic_here(c) - 1;
        pf_ic_jumps_patch(c, &to_else);
        stmt(c, s->else_s);
        c->u->code[to_end] = pf_ic_here(c);
    } else {
        pf_ic_jumps_patch(c, &to_else);
    }
}

int pf_ic_perf_skip(pf_icomp *c, const pf_stmt *s, int var, int lo, int hi, int st)
{
    const pf_stage *stage = c->stage;
    int zero = pf_ic_const_int(c, 0);
    int a = stage->n_vars > 0 ? pf_ic_map_get(c, stage->vars[0]) : zero;
    int b = stage->n_vars > 1 ? pf_ic_map_get(c, stage->vars[1]) : zero;
    PF_IC_EMIT(c, PF_I_PERF_SKIP, var, lo, hi, st, s->loop_id, a < 0 ? zero : a,
               b < 0 ? zero : b, 0);
    return pf_ic_here(c) - 1;
}

/* A perforated loop (docs/perforation.md §5) keeps its bounds in private slots and starts
 * each iteration with PERF_SKIP, which jumps to the FOR_NEXT unless the gene runs it. */
static void for_stmt(pf_icomp *c, const pf_stmt *s)
{
    const pf_loop_approx *la = pf_iloop_approx(c->ic, s->loop_id);
    if (!s->sym) {
        pf_ic_fail(c, s->loc, "interpreter: unchecked loop");
        return;
    }
    int lo = pf_ic_expr_as(c, s->lo, PF_T_INT);
    int hi = pf_ic_expr_as(c, s->hi, PF_T_INT);
    int st = s->step ? pf_ic_expr_as(c, s->step, PF_T_INT) : -1;
    int var = pf_ic_new_slots(c, 1);
    pf_ic_map_put(c, s->sym, var);
    if (la) {
        /* the body may assign the local that lo names: j needs lo as it was on entry */
        int lo_p = pf_ic_new_slots(c, 1);
        PF_IC_EMIT(c, PF_I_MOV, lo_p, lo);
        lo = lo_p;
    }
    int hi_p, st_p, body;
    int exit_pos = pf_ic_loop_open(c, var, lo, hi, st, &hi_p, &st_p, &body);
    int skip = la ? pf_ic_perf_skip(c, s, var, lo, hi_p, st_p) : -1;
    stmt(c, s->then_s);
    if (skip >= 0)
        c->u->code[skip] = pf_ic_here(c);
    pf_ic_loop_close(c, var, hi_p, st_p, body, exit_pos);
}

static void sort_stmt(pf_icomp *c, const pf_stmt *s)
{
    const pf_symbol *sym = s->target.sym;
    if (!sym || sym->kind != PF_SYM_LOCAL_ARRAY) {
        pf_ic_fail(c, s->loc, "interpreter: sort takes a local array");
        return;
    }
    int len;
    int base = pf_ic_array_base(c, sym, s->loc, &len);
    int n = pf_ic_expr_as(c, s->value, PF_T_INT);
    PF_IC_EMIT(c, sym->type == PF_T_INT ? PF_I_SORT_I : PF_I_SORT_F, base, len, n);
}

static void return_stmt(pf_icomp *c, const pf_stmt *s)
{
    if (!s->value) {
        pf_ic_fail(c, s->loc, "interpreter: return without a value");
        return;
    }
    pf_type t = s->value->type;
    if (c->func_index >= 0)
        t = c->prog->funcs[c->func_index]->ret;
    PF_IC_EMIT(c, PF_I_RET, pf_ic_expr_as(c, s->value, t));
}

static void stmt(pf_icomp *c, const pf_stmt *s)
{
    if (c->failed || !s)
        return;
    switch (s->kind) {
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++)
            stmt(c, s->body[i]);
        break;
    case PF_S_DECL: decl_stmt(c, s); break;
    case PF_S_ASSIGN:
        if (s->target.kind == PF_LV_LOCAL)
            assign_local(c, s);
        else if (s->target.kind == PF_LV_ARRAY)
            assign_array(c, s);
        else
            assign_image(c, s);
        break;
    case PF_S_IF: if_stmt(c, s); break;
    case PF_S_FOR: for_stmt(c, s); break;
    case PF_S_SORT: sort_stmt(c, s); break;
    case PF_S_RETURN: return_stmt(c, s); break;
    }
}

/* ---- units ---- */

static void compile_function(pf_icomp *c, int fi)
{
    const pf_func *f = c->prog->funcs[fi];
    pf_ic_begin_unit(c, &c->ic->funcs[fi]);
    c->func_index = fi;
    for (int i = 0; i < f->n_params; i++) {
        if (!f->params || !f->params[i]) {
            pf_ic_fail(c, f->loc, "interpreter: unchecked function");
            return;
        }
        pf_ic_map_put(c, f->params[i], pf_ic_new_slots(c, 1));
    }
    stmt(c, f->body);
    PF_IC_EMIT(c, PF_I_HALT);
    c->func_index = -1;
}

static void compile_scalar(pf_icomp *c, const pf_item *it)
{
    const pf_symbol *sym = it->scalar_sym;
    if (!sym || sym->index < 0 || sym->index >= c->prog->n_scalars || !it->scalar_init) {
        pf_ic_fail(c, it->loc, "interpreter: unchecked pipeline scalar");
        return;
    }
    pf_iunit *u = &c->ic->scalars[sym->index];
    pf_ic_begin_unit(c, u);
    u->result_slot = pf_ic_new_slots(c, 1);
    pf_ic_expr_into(c, it->scalar_init, sym->type, u->result_slot);
    PF_IC_EMIT(c, PF_I_HALT);
}

/* Prologue (at 0): the `over` bounds; body (at body_pc): one iteration. */
static void compile_stage(pf_icomp *c, const pf_stage *st)
{
    pf_iunit *u = &c->ic->stages[st->index];
    pf_ic_begin_unit(c, u);
    const pf_image_decl *img = st->image && st->image->image ? st->image->image : NULL;
    if (!img || st->n_vars < 1 || st->n_vars > img->ndims || !st->vars) {
        pf_ic_fail(c, st->loc, "interpreter: unchecked stage");
        return;
    }
    for (int v = 0; v < st->n_vars; v++) {
        u->var_slot[v] = pf_ic_new_slots(c, 1);
        pf_ic_map_put(c, st->vars[v], u->var_slot[v]);
        for (int k = 0; k < 3; k++)
            u->over_slot[v][k] = -1;
        if (!st->over)
            continue;
        u->over_slot[v][0] = pf_ic_expr_as(c, st->over[v].lo, PF_T_INT);
        u->over_slot[v][1] = pf_ic_expr_as(c, st->over[v].hi, PF_T_INT);
        if (st->over[v].step)
            u->over_slot[v][2] = pf_ic_expr_as(c, st->over[v].step, PF_T_INT);
    }
    PF_IC_EMIT(c, PF_I_HALT);
    u->body_pc = pf_ic_here(c);
    c->stage = st;
    stmt(c, st->body);
    c->stage = NULL;
    PF_IC_EMIT(c, PF_I_HALT);
}

/* The call graph in compressed rows: the callees of f are adj[first[f] .. first[f + 1] - 1]. */
typedef struct pf_icallgraph {
    int *first, *adj;
} pf_icallgraph;

static pf_icallgraph call_graph(const pf_icomp *c)
{
    int n = c->prog->n_funcs;
    pf_icallgraph g = { pf_xcalloc((size_t)n + 2, sizeof(int)),
                        pf_xcalloc((size_t)c->n_calls + 1, sizeof(int)) };
    int *fill = pf_xcalloc((size_t)n + 1, sizeof(int));
    for (int e = 0; e < c->n_calls; e++)
        g.first[c->calls[e][0] + 1]++;
    for (int f = 0; f < n; f++)
        g.first[f + 1] += g.first[f];
    for (int e = 0; e < c->n_calls; e++) {
        int f = c->calls[e][0];
        g.adj[g.first[f] + fill[f]++] = c->calls[e][1];
    }
    free(fill);
    return g;
}

/* Depth-first from root without recursion (a program may hold many thousands of helpers):
 * fails on a cycle, or when calls nest deeper than PF_ICALL_DEPTH_MAX (each level of a run
 * takes C stack). depth[f] is the longest chain of calls starting at f. */
static void walk_calls(pf_icomp *c, const pf_icallgraph *g, int root, unsigned char *state,
                       int *depth, int *stack, int *cursor)
{
    int top = 0;
    stack[top++] = root;
    state[root] = 1;
    while (top > 0 && !c->failed) {
        int f = stack[top - 1];
        if (g->first[f] + cursor[f] < g->first[f + 1]) {
            int h = g->adj[g->first[f] + cursor[f]++];
            if (state[h] == 1)
                pf_ic_fail(c, c->prog->funcs[h]->loc, "interpreter: recursive helper function");
            else if (state[h] == 0) {
                state[h] = 1;
                stack[top++] = h;
            }
            continue;
        }
        depth[f] = 1;
        for (int k = g->first[f]; k < g->first[f + 1]; k++)
            if (depth[g->adj[k]] + 1 > depth[f])
                depth[f] = depth[g->adj[k]] + 1;
        if (depth[f] > PF_ICALL_DEPTH_MAX)
            pf_ic_fail(c, c->prog->funcs[f]->loc,
                       "interpreter: helper function calls nest too deeply");
        state[f] = 2;
        top--;
    }
}

/* The checker refuses recursion; the interpreter relies on it (one frame per function), so it
 * checks again rather than corrupt a frame. */
static void check_calls(pf_icomp *c)
{
    int n = c->prog->n_funcs;
    pf_icallgraph g = call_graph(c);
    unsigned char *state = pf_xcalloc((size_t)n + 1, 1);
    int *depth = pf_xcalloc((size_t)n + 1, sizeof(int));
    int *stack = pf_xcalloc((size_t)n + 1, sizeof(int));
    int *cursor = pf_xcalloc((size_t)n + 1, sizeof(int));
    for (int f = 0; f < n && !c->failed; f++)
        if (state[f] == 0)
            walk_calls(c, &g, f, state, depth, stack, cursor);
    free(state);
    free(depth);
    free(stack);
    free(cursor);
    free(g.first);
    free(g.adj);
}

static void compile_all(pf_icomp *c)
{
    const pf_program *prog = c->prog;
    for (int f = 0; f < prog->n_funcs && !c->failed; f++)
        compile_function(c, f);
    if (!c->failed)
        check_calls(c);
    for (int i = 0; i < prog->n_items && !c->failed; i++) {
        if (prog->items[i]->kind == PF_ITEM_SCALAR)
            compile_scalar(c, prog->items[i]);
    }
    for (int i = 0; i < prog->n_scalars && !c->failed; i++) {
        if (!c->ic->scalars[i].code)
            pf_ic_fail(c, prog->loc, "interpreter: unchecked pipeline scalar table");
    }
    for (int s = 0; s < prog->n_stages && !c->failed; s++) {
        if (!prog->stages[s] || prog->stages[s]->index != s)
            pf_ic_fail(c, prog->loc, "interpreter: unchecked stage table");
        else
            compile_stage(c, prog->stages[s]);
    }
}

int pf_icode_build(pf_icode *ic, const pf_program *prog, const pf_plan *plan, pf_error *err)
{
    memset(ic, 0, sizeof *ic);
    ic->prog = prog;
    ic->plan = plan;
    if (!prog || !prog->checked)
        return pf_fail(err, "interpreter: the program has not been checked");
    ic->funcs = pf_xcalloc((size_t)prog->n_funcs + 1, sizeof *ic->funcs);
    ic->scalars = pf_xcalloc((size_t)prog->n_scalars + 1, sizeof *ic->scalars);
    ic->stages = pf_xcalloc((size_t)prog->n_stages + 1, sizeof *ic->stages);
    ic->od_writer = pf_xcalloc((size_t)prog->n_images + 1, sizeof *ic->od_writer);
    for (int i = 0; plan && i < prog->n_images; i++)
        ic->od_writer[i] = plan->on_demand[i];
    pf_icomp c = { .prog = prog, .ic = ic, .err = err, .func_index = -1 };
    compile_all(&c);
    free(c.calls);
    pf_ic_free(&c);
    if (c.failed) {
        pf_icode_free(ic);
        return -1;
    }
    pf_icode_verify(ic);
    return 0;
}

static void unit_free(pf_iunit *u)
{
    free(u->code);
    free(u->fills);
}

void pf_icode_free(pf_icode *ic)
{
    const pf_program *prog = ic->prog;
    for (int i = 0; ic->funcs && i < prog->n_funcs; i++)
        unit_free(&ic->funcs[i]);
    for (int i = 0; ic->scalars && i < prog->n_scalars; i++)
        unit_free(&ic->scalars[i]);
    for (int i = 0; ic->stages && i < prog->n_stages; i++)
        unit_free(&ic->stages[i]);
    free(ic->funcs);
    free(ic->scalars);
    free(ic->stages);
    free(ic->od_writer);
    memset(ic, 0, sizeof *ic);
}
