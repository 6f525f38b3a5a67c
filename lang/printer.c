/* The pretty-printer: source text that parses back to an equal AST (pf_program_equal). It
 * puts parentheses only where precedence needs them, omits implicit casts, and prints floats
 * with the fewest digits that read back as the same binary32. */
#include "lang/lang.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Precedence levels, loosest first: ?: = 0, || = 1 ... * / % = 6, unary = 7, primary = 8. */
enum { PREC_COND = 0, PREC_UNARY = 7, PREC_PRIMARY = 8 };

static int binary_prec(pf_op op)
{
    switch (op) {
    case PF_OP_OR: return 1;
    case PF_OP_AND: return 2;
    case PF_OP_EQ: case PF_OP_NE: return 3;
    case PF_OP_LT: case PF_OP_LE: case PF_OP_GT: case PF_OP_GE: return 4;
    case PF_OP_ADD: case PF_OP_SUB: return 5;
    default: return 6;
    }
}

static const pf_expr *skip_implicit(const pf_expr *e)
{
    while (e && e->kind == PF_E_CAST && e->implicit)
        e = e->a;
    return e;
}

static int expr_prec(const pf_expr *e)
{
    switch (e->kind) {
    case PF_E_COND: return PREC_COND;
    case PF_E_BINARY: return binary_prec(e->op);
    case PF_E_UNARY: return PREC_UNARY;
    /* Synthesized negative literals print as a negation. */
    case PF_E_INT:
        return e->ival == INT32_MIN ? 5 : e->ival < 0 ? PREC_UNARY : PREC_PRIMARY;
    case PF_E_FLOAT:
        if (isnan(e->fval) || isinf(e->fval))
            return 6;  /* printed as a division */
        return signbit(e->fval) ? PREC_UNARY : PREC_PRIMARY;
    default: return PREC_PRIMARY;
    }
}

/* The shortest form of f that strtof reads back exactly, always with a '.' or an exponent:
 * plain decimals for ordinary magnitudes (10.0, not 1e+01), %g's exponent form otherwise. */
static void print_float_digits(pf_strbuf *sb, float f)
{
    char buf[80];
    bool plain = f == 0.0f || (f >= 1e-4f && f < 1e16f);
    for (int digits = 1; digits <= 40; digits++) {
        if (plain)
            snprintf(buf, sizeof buf, "%.*f", digits, (double)f);
        else
            snprintf(buf, sizeof buf, "%.*g", digits > 9 ? 9 : digits, (double)f);
        if (strtof(buf, NULL) == f)
            break;
    }
    pf_sb_puts(sb, buf);
    if (!strpbrk(buf, ".e"))
        pf_sb_puts(sb, ".0");
}

static void print_float(pf_strbuf *sb, float f)
{
    if (isnan(f))
        pf_sb_puts(sb, "0.0 / 0.0");
    else if (isinf(f))
        pf_sb_puts(sb, f > 0 ? "1.0 / 0.0" : "-1.0 / 0.0");
    else if (signbit(f)) {
        pf_sb_putc(sb, '-');
        print_float_digits(sb, -f);
    } else {
        print_float_digits(sb, f);
    }
}

static void print_int(pf_strbuf *sb, int32_t v)
{
    if (v == INT32_MIN)
        pf_sb_puts(sb, "-2147483647 - 1");
    else
        pf_sb_printf(sb, "%d", (int)v);
}

static void expr_at(const pf_expr *e, pf_strbuf *sb, int min_prec);

static void expr_list(pf_expr *const *args, int n, pf_strbuf *sb)
{
    for (int i = 0; i < n; i++) {
        if (i)
            pf_sb_puts(sb, ", ");
        expr_at(args[i], sb, PREC_COND);
    }
}

static const char *reduce_name(pf_reduce_op op)
{
    return op == PF_REDUCE_SUM ? "sum" : op == PF_REDUCE_MIN ? "min" : "max";
}

static void expr_body(const pf_expr *e, pf_strbuf *sb)
{
    switch (e->kind) {
    case PF_E_INT: print_int(sb, e->ival); break;
    case PF_E_FLOAT: print_float(sb, e->fval); break;
    case PF_E_BOOL: pf_sb_puts(sb, e->bval ? "true" : "false"); break;
    case PF_E_NAME: pf_sb_puts(sb, e->name); break;
    case PF_E_UNARY:
        pf_sb_puts(sb, pf_op_name(e->op));
        expr_at(e->a, sb, PREC_UNARY);
        break;
    case PF_E_BINARY: {
        int p = binary_prec(e->op);
        expr_at(e->a, sb, p);
        pf_sb_printf(sb, " %s ", pf_op_name(e->op));
        expr_at(e->b, sb, p + 1);
        break;
    }
    case PF_E_COND:
        expr_at(e->a, sb, PREC_COND + 1);
        pf_sb_puts(sb, " ? ");
        expr_at(e->b, sb, PREC_COND);
        pf_sb_puts(sb, " : ");
        expr_at(e->c, sb, PREC_COND);
        break;
    case PF_E_CAST:
        pf_sb_printf(sb, "%s(", pf_type_name(e->type));
        expr_at(e->a, sb, PREC_COND);
        pf_sb_putc(sb, ')');
        break;
    case PF_E_CALL:
    case PF_E_BUILTIN:
        pf_sb_printf(sb, "%s(", e->kind == PF_E_BUILTIN && !e->name ? pf_builtin_name(e->builtin)
                                                                     : e->name);
        expr_list(e->args, e->n_args, sb);
        pf_sb_putc(sb, ')');
        break;
    case PF_E_INDEX:
    case PF_E_IMAGE_READ:
    case PF_E_ARRAY_READ:
        pf_sb_printf(sb, "%s[", e->name ? e->name : e->sym->name);
        expr_list(e->args, e->n_args, sb);
        pf_sb_putc(sb, ']');
        break;
    case PF_E_REDUCE:
        pf_sb_printf(sb, "%s(", reduce_name(e->reduce_op));
        expr_at(e->args[0], sb, PREC_COND);
        pf_sb_printf(sb, ", %s = ", e->name);
        expr_at(e->a, sb, PREC_COND);
        pf_sb_puts(sb, " .. ");
        expr_at(e->b, sb, PREC_COND);
        pf_sb_putc(sb, ')');
        break;
    }
}

static void expr_at(const pf_expr *e, pf_strbuf *sb, int min_prec)
{
    e = skip_implicit(e);
    if (!e) {
        pf_sb_puts(sb, "0");  /* only a broken synthesized tree gets here */
        return;
    }
    bool parens = expr_prec(e) < min_prec;
    if (parens)
        pf_sb_putc(sb, '(');
    expr_body(e, sb);
    if (parens)
        pf_sb_putc(sb, ')');
}

void pf_print_expr(const pf_expr *e, pf_strbuf *out)
{
    expr_at(e, out, PREC_COND);
}

/* ---- statements ---- */

static void stmt(pf_strbuf *sb, const pf_stmt *s, int ind);
static void stmt_text(pf_strbuf *sb, const pf_stmt *s, int ind);

static void block_text(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    pf_sb_puts(sb, "{\n");
    for (int i = 0; i < s->n_body; i++)
        stmt(sb, s->body[i], ind + 1);
    pf_sb_indent(sb, ind);
    pf_sb_putc(sb, '}');
}

/* The body of if/for/stage after its header: a block stays on the header's line. */
static void body(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    if (s && s->kind == PF_S_BLOCK) {
        pf_sb_putc(sb, ' ');
        block_text(sb, s, ind);
        pf_sb_putc(sb, '\n');
    } else {
        pf_sb_putc(sb, '\n');
        stmt(sb, s, ind + 1);
    }
}

/* Whether an `else` printed after s would bind to an `if` inside s. */
static bool ends_in_open_if(const pf_stmt *s)
{
    if (!s)
        return false;
    if (s->kind == PF_S_IF)
        return s->else_s ? ends_in_open_if(s->else_s) : true;
    if (s->kind == PF_S_FOR)
        return ends_in_open_if(s->then_s);
    return false;
}

static void if_text(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    pf_sb_puts(sb, "if (");
    pf_print_expr(s->cond, sb);
    pf_sb_putc(sb, ')');
    if (!s->else_s) {
        body(sb, s->then_s, ind);
        return;
    }
    if (s->then_s && s->then_s->kind == PF_S_BLOCK) {
        pf_sb_putc(sb, ' ');
        block_text(sb, s->then_s, ind);
        pf_sb_puts(sb, " else");
    } else if (ends_in_open_if(s->then_s)) {
        /* Only a synthesized tree needs these braces; a parsed one had its own. */
        pf_sb_puts(sb, " {\n");
        stmt(sb, s->then_s, ind + 1);
        pf_sb_indent(sb, ind);
        pf_sb_puts(sb, "} else");
    } else {
        pf_sb_putc(sb, '\n');
        stmt(sb, s->then_s, ind + 1);
        pf_sb_indent(sb, ind);
        pf_sb_puts(sb, "else");
    }
    if (s->else_s->kind == PF_S_IF) {
        pf_sb_putc(sb, ' ');
        stmt_text(sb, s->else_s, ind);
    } else {
        body(sb, s->else_s, ind);
    }
}

static void range_text(pf_strbuf *sb, const pf_expr *lo, const pf_expr *hi, const pf_expr *step)
{
    pf_print_expr(lo, sb);
    pf_sb_puts(sb, " .. ");
    pf_print_expr(hi, sb);
    if (step) {
        pf_sb_puts(sb, " step ");
        pf_print_expr(step, sb);
    }
}

static void for_text(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    pf_sb_printf(sb, "for (%s) of ", s->var_name);
    range_text(sb, s->lo, s->hi, s->step);
    if (s->loop_name)
        pf_sb_printf(sb, " as %s", s->loop_name);
    body(sb, s->then_s, ind);
}

static const char *const assign_ops[] = {"=", "+=", "-=", "*=", "/="};

static void lvalue_text(pf_strbuf *sb, const pf_lvalue *lv)
{
    pf_sb_puts(sb, lv->name ? lv->name : lv->sym->name);
    if (lv->n_index > 0) {
        pf_sb_putc(sb, '[');
        expr_list(lv->index, lv->n_index, sb);
        pf_sb_putc(sb, ']');
    }
}

static void decl_text(pf_strbuf *sb, const pf_stmt *s)
{
    pf_sb_printf(sb, "%s %s", pf_type_name(s->decl_type), s->decl_name);
    if (s->len_expr) {
        pf_sb_putc(sb, '[');
        pf_print_expr(s->len_expr, sb);
        pf_sb_putc(sb, ']');
    }
    if (s->value) {
        pf_sb_puts(sb, " = ");
        pf_print_expr(s->value, sb);
    }
    pf_sb_puts(sb, ";\n");
}

/* A statement without its leading indentation, ending in a newline. */
static void stmt_text(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    switch (s->kind) {
    case PF_S_BLOCK:
        block_text(sb, s, ind);
        pf_sb_putc(sb, '\n');
        break;
    case PF_S_DECL: decl_text(sb, s); break;
    case PF_S_ASSIGN:
        lvalue_text(sb, &s->target);
        pf_sb_printf(sb, " %s ", assign_ops[s->assign_op]);
        pf_print_expr(s->value, sb);
        pf_sb_puts(sb, ";\n");
        break;
    case PF_S_IF: if_text(sb, s, ind); break;
    case PF_S_FOR: for_text(sb, s, ind); break;
    case PF_S_SORT:
        pf_sb_printf(sb, "sort(%s, ", s->target.name ? s->target.name : s->target.sym->name);
        pf_print_expr(s->value, sb);
        pf_sb_puts(sb, ");\n");
        break;
    case PF_S_RETURN:
        pf_sb_puts(sb, "return ");
        pf_print_expr(s->value, sb);
        pf_sb_puts(sb, ";\n");
        break;
    }
}

static void stmt(pf_strbuf *sb, const pf_stmt *s, int ind)
{
    pf_sb_indent(sb, ind);
    if (!s) {
        pf_sb_puts(sb, "{\n");
        pf_sb_indent(sb, ind);
        pf_sb_puts(sb, "}\n");
        return;
    }
    stmt_text(sb, s, ind);
}

/* ---- the pipeline ---- */

static void image_text(pf_strbuf *sb, const pf_image_decl *img)
{
    pf_sb_printf(sb, "image %s[", img->name);
    expr_list(img->extents, img->ndims, sb);
    pf_sb_putc(sb, ']');
    switch (img->boundary) {
    case PF_BOUNDARY_CLAMP: break;
    case PF_BOUNDARY_MIRROR: pf_sb_puts(sb, " boundary mirror"); break;
    case PF_BOUNDARY_WRAP: pf_sb_puts(sb, " boundary wrap"); break;
    case PF_BOUNDARY_CONSTANT:
        pf_sb_puts(sb, " boundary constant(");
        pf_print_expr(img->boundary_value, sb);
        pf_sb_putc(sb, ')');
        break;
    }
}

static void image_list(pf_strbuf *sb, pf_image_decl *const *imgs, int n)
{
    pf_sb_putc(sb, '(');
    for (int i = 0; i < n; i++) {
        if (i)
            pf_sb_puts(sb, ", ");
        image_text(sb, imgs[i]);
    }
    pf_sb_putc(sb, ')');
}

static void stage_text(pf_strbuf *sb, const pf_stage *st)
{
    pf_sb_puts(sb, "for each (");
    for (int i = 0; i < st->n_vars; i++)
        pf_sb_printf(sb, "%s%s", i ? ", " : "", st->var_names[i]);
    pf_sb_printf(sb, ") of %s", st->image_name);
    if (st->over) {
        pf_sb_puts(sb, " over (");
        for (int i = 0; i < st->n_vars; i++) {
            if (i)
                pf_sb_puts(sb, ", ");
            range_text(sb, st->over[i].lo, st->over[i].hi, st->over[i].step);
        }
        pf_sb_putc(sb, ')');
    }
    pf_sb_printf(sb, " as %s", st->name);
    body(sb, st->body, 1);
}

static void item_text(pf_strbuf *sb, const pf_item *it)
{
    pf_sb_indent(sb, 1);
    switch (it->kind) {
    case PF_ITEM_IMAGE:
        image_text(sb, it->image);
        pf_sb_puts(sb, ";\n");
        break;
    case PF_ITEM_SCALAR:
        pf_sb_printf(sb, "%s %s = ", pf_type_name(it->scalar_type), it->scalar_name);
        pf_print_expr(it->scalar_init, sb);
        pf_sb_puts(sb, ";\n");
        break;
    case PF_ITEM_STAGE: stage_text(sb, it->stage); break;
    }
}

static void pipeline_text(pf_strbuf *sb, const pf_program *prog)
{
    pf_sb_printf(sb, "pipeline %s", prog->name);
    image_list(sb, prog->inputs, prog->n_inputs);
    pf_sb_puts(sb, " -> ");
    image_list(sb, prog->outputs, prog->n_outputs);
    pf_sb_puts(sb, " {\n");
    for (int i = 0; i < prog->n_items; i++)
        item_text(sb, prog->items[i]);
    pf_sb_puts(sb, "}\n");
}

/* ---- top level ---- */

static void const_text(pf_strbuf *sb, const pf_const_decl *d)
{
    pf_sb_printf(sb, "const %s %s", pf_type_name(d->type), d->name);
    if (d->len_expr) {
        pf_sb_putc(sb, '[');
        pf_print_expr(d->len_expr, sb);
        pf_sb_putc(sb, ']');
    }
    pf_sb_puts(sb, " = ");
    if (!d->len_expr && d->n_init == 1) {
        pf_print_expr(d->init[0], sb);
    } else {
        pf_sb_putc(sb, '{');
        for (int i = 0; i < d->n_init; i++) {
            pf_sb_puts(sb, i == 0 ? "" : i % 8 == 0 ? ",\n    " : ", ");
            pf_print_expr(d->init[i], sb);
        }
        pf_sb_putc(sb, '}');
    }
    pf_sb_puts(sb, ";\n");
}

static void func_text(pf_strbuf *sb, const pf_func *f)
{
    pf_sb_printf(sb, "%s %s(", pf_type_name(f->ret), f->name);
    for (int i = 0; i < f->n_params; i++)
        pf_sb_printf(sb, "%s%s %s", i ? ", " : "", pf_type_name(f->param_types[i]),
                     f->param_names[i]);
    pf_sb_puts(sb, ") ");
    block_text(sb, f->body, 0);
    pf_sb_putc(sb, '\n');
}

void pf_print_program(const pf_program *prog, pf_strbuf *out)
{
    pf_decl_kind last = PF_DECL_PARAM;
    for (int i = 0; i < prog->n_decls; i++) {
        const pf_decl_ref *r = &prog->decls[i];
        /* A blank line around functions and the pipeline, none between params/consts. */
        bool big = r->kind == PF_DECL_FUNC || r->kind == PF_DECL_PIPELINE;
        if (i > 0 && (big || last == PF_DECL_FUNC || last == PF_DECL_PIPELINE))
            pf_sb_putc(out, '\n');
        last = r->kind;
        switch (r->kind) {
        case PF_DECL_PARAM: {
            const pf_param_decl *d = prog->params[r->index];
            pf_sb_printf(out, "param %s %s = ", pf_type_name(d->type), d->name);
            pf_print_expr(d->init, out);
            pf_sb_puts(out, ";\n");
            break;
        }
        case PF_DECL_CONST: const_text(out, prog->consts[r->index]); break;
        case PF_DECL_FUNC: func_text(out, prog->funcs[r->index]); break;
        case PF_DECL_PIPELINE: pipeline_text(out, prog); break;
        }
    }
}
