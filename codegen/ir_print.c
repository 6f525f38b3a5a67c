/* Text dumps of the loop IR (perfora run --dump=ir, tests, debugging). The format is for people:
 * C-like, one statement a line, loops labelled with their kind. */
#include "codegen/ir.h"

static const char *boundary_name(pf_boundary b)
{
    static const char *names[] = { "clamp", "mirror", "wrap", "constant" };
    return names[b];
}

static void print_args(ir_expr **args, int n, pf_strbuf *out)
{
    for (int i = 0; i < n; i++) {
        if (i)
            pf_sb_puts(out, ", ");
        ir_print_expr(args[i], out);
    }
}

static void print_const(const ir_expr *e, pf_strbuf *out)
{
    switch (e->type) {
    case IR_BOOL:
        pf_sb_puts(out, e->ival ? "true" : "false");
        break;
    case IR_I32:
        pf_sb_printf(out, "%lld", (long long)e->ival);
        break;
    case IR_I64:
        pf_sb_printf(out, "%lldL", (long long)e->ival);
        break;
    case IR_F32:
        pf_sb_printf(out, "%.9gf", (double)e->fval);
        break;
    case IR_F64:
        pf_sb_printf(out, "%.17gd", e->dval);
        break;
    }
}

void ir_print_expr(const ir_expr *e, pf_strbuf *out)
{
    switch (e->kind) {
    case IR_CONST:
        print_const(e, out);
        break;
    case IR_VARREF:
        pf_sb_puts(out, e->var->name);
        break;
    case IR_BIN:
        if (e->op == IR_MIN || e->op == IR_MAX) {
            pf_sb_printf(out, "%s(", ir_op_name(e->op));
            ir_print_expr(e->a, out);
            pf_sb_puts(out, ", ");
            ir_print_expr(e->b, out);
            pf_sb_putc(out, ')');
            break;
        }
        pf_sb_putc(out, '(');
        ir_print_expr(e->a, out);
        pf_sb_printf(out, " %s ", ir_op_name(e->op));
        ir_print_expr(e->b, out);
        pf_sb_putc(out, ')');
        break;
    case IR_UN:
        pf_sb_puts(out, ir_op_name(e->op));
        ir_print_expr(e->a, out);
        break;
    case IR_SELECT:
        pf_sb_puts(out, "select(");
        ir_print_expr(e->a, out);
        pf_sb_puts(out, ", ");
        ir_print_expr(e->b, out);
        pf_sb_puts(out, ", ");
        ir_print_expr(e->c, out);
        pf_sb_putc(out, ')');
        break;
    case IR_CAST:
        pf_sb_printf(out, "%s(", ir_type_name(e->type));
        ir_print_expr(e->a, out);
        pf_sb_putc(out, ')');
        break;
    case IR_LOAD:
        pf_sb_printf(out, "%s[", e->buf->name);
        print_args(e->args, e->n_args, out);
        pf_sb_putc(out, ']');
        if (e->clamp_mask)
            pf_sb_printf(out, "{%s:%x}", boundary_name(e->buf->boundary), e->clamp_mask);
        break;
    case IR_INTERP:
        pf_sb_printf(out, "%s<%s %s>[", e->interp->image->name,
                     e->interp->linear ? "linear" : "nearest", e->buf->name);
        print_args(e->args, e->n_args, out);
        pf_sb_putc(out, ']');
        if (e->clamp_mask)
            pf_sb_printf(out, "{%s:%x}", boundary_name(e->interp->image->boundary),
                         e->clamp_mask);
        break;
    case IR_ALOAD:
        pf_sb_printf(out, "%s[", e->var->name);
        ir_print_expr(e->a, out);
        pf_sb_putc(out, ']');
        break;
    case IR_CALL:
        pf_sb_printf(out, "%s(", ir_fn_name(e->fn));
        print_args(e->args, e->n_args, out);
        pf_sb_putc(out, ')');
        break;
    }
}

static const char *loop_kind_name(ir_loop_kind k)
{
    static const char *names[] = { "for", "parallel for", "vectorized for", "unrolled for",
                                   "gpu block for", "gpu thread for" };
    return names[k];
}

static void print_for(const ir_stmt *s, int indent, pf_strbuf *out)
{
    pf_sb_puts(out, loop_kind_name(s->loop_kind));
    if (s->loop_kind == IR_LOOP_VECTORIZED || s->loop_kind == IR_LOOP_UNROLLED)
        pf_sb_printf(out, "<%d>", s->width);
    if (s->loop_kind == IR_LOOP_GPU_BLOCK)
        pf_sb_printf(out, "<%c>", "xyz"[s->gpu_dim]);
    if (s->loop_kind == IR_LOOP_GPU_THREAD)
        pf_sb_printf(out, "<%c %d>", "xyz"[s->gpu_dim], s->width);
    if (s->banded)
        pf_sb_puts(out, s->loop_kind == IR_LOOP_PARALLEL ? "<bands>" : "<bands asked>");
    pf_sb_printf(out, " %s = ", s->var->name);
    ir_print_expr(s->lo, out);
    pf_sb_puts(out, " .. ");
    ir_print_expr(s->hi, out);
    int64_t step;
    if (!ir_is_const(s->step, &step) || step != 1) {
        pf_sb_puts(out, " step ");
        ir_print_expr(s->step, out);
    }
    if (s->text)
        pf_sb_printf(out, "  // %s", s->text);
    pf_sb_putc(out, '\n');
    ir_print_stmt(s->then_s, indent + 1, out);
}

static void print_store(const ir_stmt *s, pf_strbuf *out)
{
    pf_sb_printf(out, "%s[", s->buf->name);
    print_args(s->idx, s->n, out);
    pf_sb_putc(out, ']');
    if (s->check_mask)
        pf_sb_printf(out, "{checked:%x}", s->check_mask);
    pf_sb_printf(out, "%s%s%s = ", s->scatter ? "{scatter}" : "", s->atomic ? "{atomic}" : "",
                 s->stream ? "{stream}" : "");
    ir_print_expr(s->value, out);
    pf_sb_puts(out, ";\n");
}

static void print_if(const ir_stmt *s, int indent, pf_strbuf *out)
{
    pf_sb_puts(out, "if (");
    ir_print_expr(s->cond, out);
    pf_sb_puts(out, ")\n");
    ir_print_stmt(s->then_s, indent + 1, out);
    if (s->else_s) {
        pf_sb_indent(out, indent);
        pf_sb_puts(out, "else\n");
        ir_print_stmt(s->else_s, indent + 1, out);
    }
}

static void print_alloc(const ir_stmt *s, int indent, pf_strbuf *out)
{
    const ir_buffer *b = s->buf;
    pf_sb_printf(out, "allocate %s[", b->name);
    for (int d = 0; d < b->ndims; d++)
        pf_sb_printf(out, "%s%s", d ? ", " : "", b->extent[d]->name);
    pf_sb_putc(out, ']');
    for (int d = 0; s->window && d < b->ndims; d++) {  /* the part held: origin + size */
        pf_sb_printf(out, "%s%s = ", d ? ", " : " window ", b->origin[d]->name);
        ir_print_expr(s->window[2 * d], out);
        pf_sb_printf(out, " + %s = ", b->size[d]->name);
        ir_print_expr(s->window[2 * d + 1], out);
        if (b->fold[d])
            pf_sb_printf(out, " folded (index i at i & %d)", b->fold[d] - 1);
    }
    pf_sb_printf(out, " boundary %s%s\n", boundary_name(b->boundary),
                 s->zero ? " zeroed" : "");
    ir_print_stmt(s->then_s, indent + 1, out);
}

void ir_print_stmt(const ir_stmt *s, int indent, pf_strbuf *out)
{
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->n; i++)
            ir_print_stmt(s->body[i], indent, out);
        return;
    }
    pf_sb_indent(out, indent);
    switch (s->kind) {
    case IR_S_BLOCK:
        break;
    case IR_S_LET:
    case IR_S_DECL:
    case IR_S_ASSIGN:
        pf_sb_printf(out, "%s%s%s = ", s->kind == IR_S_LET ? "let " : "",
                     s->kind == IR_S_DECL ? "var " : "", s->var->name);
        ir_print_expr(s->value, out);
        pf_sb_puts(out, ";\n");
        break;
    case IR_S_ARRAY_DECL:
        pf_sb_printf(out, "array %s %s[%d];\n", ir_type_name(s->var->type), s->var->name,
                     s->var->array_len);
        break;
    case IR_S_ARRAY_STORE:
        pf_sb_printf(out, "%s[", s->var->name);
        ir_print_expr(s->index, out);
        pf_sb_puts(out, "] = ");
        ir_print_expr(s->value, out);
        pf_sb_puts(out, ";\n");
        break;
    case IR_S_SORT:
        pf_sb_printf(out, "sort(%s, ", s->var->name);
        ir_print_expr(s->value, out);
        pf_sb_puts(out, ");\n");
        break;
    case IR_S_STORE:
        print_store(s, out);
        break;
    case IR_S_FOR:
        print_for(s, indent, out);
        break;
    case IR_S_IF:
        print_if(s, indent, out);
        break;
    case IR_S_ALLOC:
        print_alloc(s, indent, out);
        break;
    case IR_S_RTCALL:
        pf_sb_printf(out, "%s(", ir_rt_name(s->rt));
        for (int i = 0; i < s->n_bufs; i++)
            pf_sb_printf(out, "%s%s", i ? ", " : "", s->bufs[i]->name);
        for (int i = 0; i < s->n; i++) {
            pf_sb_puts(out, ", ");
            ir_print_expr(s->args[i], out);
        }
        pf_sb_puts(out, ");\n");
        break;
    case IR_S_COMMENT:
        pf_sb_printf(out, "// %s\n", s->text);
        break;
    case IR_S_BARRIER:
        pf_sb_puts(out, "barrier;\n");
        break;
    }
}

void ir_print_func(const ir_func *f, pf_strbuf *out)
{
    pf_sb_printf(out, "func %s(", f->name);
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++)
        pf_sb_printf(out, "%s%s %s", i ? ", " : "", i < f->n_inputs ? "in" : "out",
                     f->args[i]->name);
    pf_sb_puts(out, ")\n");
    ir_print_stmt(f->body, 1, out);
}
