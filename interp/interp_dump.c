/* The interpreter's register code, readable and checked: opcode names and signatures (from the
 * PF_IOPS list), a verifier run on every translation, and a disassembler for debugging. */
#include "interp/interp_internal.h"

#include <stdlib.h>
#include <string.h>

#define PF_IOP_NAME(name, sig) #name,
#define PF_IOP_SIG(name, sig) sig,
static const char *const iop_names[PF_I_OP_COUNT] = { PF_IOPS(PF_IOP_NAME) };
static const char *const iop_sigs[PF_I_OP_COUNT] = { PF_IOPS(PF_IOP_SIG) };

const char *pf_iop_name(pf_iop op)
{
    return (unsigned)op < PF_I_OP_COUNT ? iop_names[op] : "?";
}

const char *pf_iop_signature(pf_iop op)
{
    return (unsigned)op < PF_I_OP_COUNT ? iop_sigs[op] : "";
}

/* Words of the instruction at code[pc] (opcode included), or 0 when malformed. */
static int instr_len(const pf_iunit *u, int pc)
{
    int32_t op = u->code[pc];
    if (op < 0 || op >= PF_I_OP_COUNT)
        return 0;
    int len = 1 + (int)strlen(iop_sigs[op]);
    if (op == PF_I_CALL) {
        if (pc + 3 >= u->n_code || u->code[pc + 3] < 0)
            return 0;
        len += u->code[pc + 3];
    }
    return pc + len <= u->n_code ? len : 0;
}

/* ---- verification ---- */

typedef struct pf_iverify {
    const pf_icode *ic;
    const pf_iunit *u;
    const char *what;
    int index;
    unsigned char *start;  /* [n_code]: an instruction starts here */
} pf_iverify;

static void bad(const pf_iverify *v, int pc, const char *why)
{
    pf_die("interpreter code of %s %d, position %d (%s): %s", v->what, v->index, pc,
           pc >= 0 && pc < v->u->n_code ? pf_iop_name((pf_iop)v->u->code[pc]) : "-", why);
}

static void check_slots(const pf_iverify *v, int pc, int32_t first, int32_t n)
{
    if (first < 0 || n < 1 || first > v->u->n_slots - n)
        bad(v, pc, "slot outside the frame");
}

static void check_operand(const pf_iverify *v, int pc, char kind, int k)
{
    const int32_t *w = &v->u->code[pc + 1];
    const pf_program *prog = v->ic->prog;
    switch (kind) {
    case 'd': case 's': case 'b': check_slots(v, pc, w[k], 1); break;
    case 'a': check_slots(v, pc, w[k], w[k + 1]); break;
    case 'n': if (w[k] < 0) bad(v, pc, "negative count"); break;
    case 'o': if (w[k] < 0 || w[k] > PF_ASSIGN_DIV) bad(v, pc, "bad assignment op"); break;
    case 'm': if (w[k] < 0 || w[k] >= prog->n_images) bad(v, pc, "bad image"); break;
    case 'f': if (w[k] < 0 || w[k] >= prog->n_funcs) bad(v, pc, "bad function"); break;
    case 'l':
        if (w[k] < 0 || w[k] >= prog->n_loops || prog->loops[w[k]].kind != PF_LOOP_FOR ||
            !prog->loops[w[k]].stmt || !pf_iloop_approx(v->ic, w[k]))
            bad(v, pc, "not a perforated named loop");
        break;
    case 'p':
        if (w[k] < 0 || w[k] >= v->u->n_code || !v->start[w[k]])
            bad(v, pc, "jump to no instruction");
        break;
    default: bad(v, pc, "bad signature");
    }
}

static void check_instr(const pf_iverify *v, int pc)
{
    const int32_t *code = v->u->code;
    const char *sig = iop_sigs[code[pc]];
    for (int k = 0; sig[k]; k++)
        check_operand(v, pc, sig[k], k);
    if (code[pc] == PF_I_CALL) {
        for (int k = 0; k < code[pc + 3]; k++)
            check_slots(v, pc, code[pc + 4 + k], 1);
    }
    if (code[pc] == PF_I_NOISE && (code[pc + 2] < 1 || code[pc + 2] > 4))
        bad(v, pc, "noise of a bad arity");
    bool od_op = code[pc] == PF_I_READ_OD || code[pc] == PF_I_READ_J || code[pc] == PF_I_WRITE_J;
    if (od_op && (!v->ic->od_writer || !v->ic->od_writer[code[pc + 2]]))
        bad(v, pc, "on-demand access of an image stored in full");
}

static void check_fills(const pf_iverify *v)
{
    for (int i = 0; i < v->u->n_fills; i++) {
        const pf_ifill *f = &v->u->fills[i];
        check_slots(v, -1, f->slot, f->kind == PF_IFILL_ARRAY ? f->len : 1);
    }
}

static void verify_unit(const pf_icode *ic, const pf_iunit *u, const char *what, int index)
{
    pf_iverify v = { ic, u, what, index, pf_xcalloc((size_t)u->n_code + 1, 1) };
    int last = -1;
    for (int pc = 0; pc < u->n_code;) {
        int len = instr_len(u, pc);
        if (!len)
            bad(&v, pc, "malformed instruction");
        v.start[pc] = 1;
        last = pc;
        pc += len;
    }
    if (last < 0 || u->code[last] != PF_I_HALT)
        bad(&v, last, "the code does not end in HALT");
    if (u->body_pc < 0 || u->body_pc >= u->n_code || !v.start[u->body_pc])
        bad(&v, u->body_pc, "bad body position");
    for (int pc = 0; pc < u->n_code; pc += instr_len(u, pc))
        check_instr(&v, pc);
    check_fills(&v);
    free(v.start);
}

void pf_icode_verify(const pf_icode *ic)
{
    const pf_program *prog = ic->prog;
    for (int i = 0; i < prog->n_funcs; i++)
        verify_unit(ic, &ic->funcs[i], "function", i);
    for (int i = 0; i < prog->n_scalars; i++)
        verify_unit(ic, &ic->scalars[i], "scalar", i);
    for (int i = 0; i < prog->n_stages; i++) {
        const pf_iunit *u = &ic->stages[i];
        verify_unit(ic, u, "stage", i);
        for (int k = 0; k < prog->stages[i]->n_vars; k++) {
            pf_iverify v = { ic, u, "stage", i, NULL };
            check_slots(&v, -1, u->var_slot[k], 1);
            for (int j = 0; j < 3; j++)
                if (u->over_slot[k][j] >= 0)
                    check_slots(&v, -1, u->over_slot[k][j], 1);
        }
    }
}

/* ---- disassembly ---- */

static void dump_fill(const pf_ifill *f, pf_strbuf *out)
{
    static const char *const kinds[] = { "value", "param", "size", "scalar", "array" };
    pf_sb_printf(out, "    r%d = %s", f->slot, kinds[f->kind]);
    if (f->kind == PF_IFILL_VALUE) {
        if (f->index == PF_T_FLOAT)
            pf_sb_printf(out, " %.9g", (double)f->value.f);
        else if (f->index == PF_T_BOOL)
            pf_sb_puts(out, f->value.b ? " true" : " false");
        else
            pf_sb_printf(out, " %d", f->value.i);
    } else if (f->kind == PF_IFILL_ARRAY) {
        pf_sb_printf(out, " [%d]", f->len);
    } else {
        pf_sb_printf(out, " %d", f->index);
    }
    pf_sb_putc(out, '\n');
}

static void dump_instr(const pf_iunit *u, int pc, int len, pf_strbuf *out)
{
    const int32_t *w = &u->code[pc];
    const char *sig = iop_sigs[w[0]];
    pf_sb_printf(out, "  %5d  %-9s", pc, iop_names[w[0]]);
    for (int k = 1; k < len; k++) {
        char kind = k <= (int)strlen(sig) ? sig[k - 1] : 's';
        const char *prefix = strchr("dsba", kind) ? "r" : kind == 'p' ? "@" : "";
        pf_sb_printf(out, "%s%s%d", k > 1 ? ", " : " ", prefix, w[k]);
    }
    pf_sb_putc(out, '\n');
}

static void dump_unit(const pf_iunit *u, const char *what, const char *name, pf_strbuf *out)
{
    pf_sb_printf(out, "%s %s: %d slots, body at %d%s\n", what, name, u->n_slots, u->body_pc,
                 u->serial ? ", in order" : "");
    for (int i = 0; i < u->n_fills; i++)
        dump_fill(&u->fills[i], out);
    for (int pc = 0; pc < u->n_code;) {
        int len = instr_len(u, pc);
        if (!len)
            break;
        dump_instr(u, pc, len, out);
        pc += len;
    }
}

void pf_icode_dump(const pf_icode *ic, pf_strbuf *out)
{
    const pf_program *prog = ic->prog;
    for (int i = 0; i < prog->n_funcs; i++)
        dump_unit(&ic->funcs[i], "function", prog->funcs[i]->name, out);
    for (int i = 0; i < prog->n_scalars; i++)
        dump_unit(&ic->scalars[i], "scalar", prog->scalars[i]->name, out);
    for (int i = 0; i < prog->n_stages; i++)
        dump_unit(&ic->stages[i], "stage", prog->stages[i]->name, out);
}
