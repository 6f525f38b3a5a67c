/* The interpreter's translator, part 1: emitting code, allocating frame slots, mapping
 * symbols to slots, and the slots of literals, consts, params, sizes, pipeline scalars and const
 * arrays (filled before a unit runs). Slots are assigned here rather than taken from the checker,
 * so the oracle does not inherit a slot-numbering mistake. See interp_compile.h. */
#include "interp/interp_compile.h"

#include <stdlib.h>
#include <string.h>

/* ---- emission ---- */

int pf_ic_fail(pf_icomp *c, pf_loc loc, const char *what)
{
    if (!c->failed)
        pf_fail(c->err, "%s:%d:%d: %s", c->prog->file_name ? c->prog->file_name : "<program>",
                loc.line, loc.col, what);
    c->failed = 1;
    return 0;
}

void pf_ic_put(pf_icomp *c, int32_t w)
{
    pf_iunit *u = c->u;
    if (u->n_code == u->cap_code) {
        u->cap_code = u->cap_code ? 2 * u->cap_code : 256;
        u->code = pf_xrealloc(u->code, sizeof *u->code * (size_t)u->cap_code);
    }
    u->code[u->n_code++] = w;
}

void pf_ic_put_n(pf_icomp *c, int n, const int32_t *w)
{
    for (int i = 0; i < n; i++)
        pf_ic_put(c, w[i]);
}

int pf_ic_new_slots(pf_icomp *c, int n)
{
    int s = c->u->n_slots;
    c->u->n_slots += n;
    if (c->u->n_slots > c->konst_cap) {
        int cap = c->konst_cap ? 2 * c->konst_cap : 256;
        while (cap < c->u->n_slots)
            cap *= 2;
        c->konst = pf_xrealloc(c->konst, (size_t)cap);
        memset(c->konst + c->konst_cap, 0, (size_t)(cap - c->konst_cap));
        c->konst_cap = cap;
    }
    return s;
}

int pf_ic_def_n(pf_icomp *c, pf_iop op, int n, const int32_t *operands)
{
    int d = pf_ic_new_slots(c, 1);
    c->def_pos = pf_ic_here(c);
    pf_ic_put(c, op);
    pf_ic_put(c, d);
    pf_ic_put_n(c, n, operands);
    c->def_end = pf_ic_here(c);
    c->def_slot = d;
    return d;
}

static void add_fill(pf_icomp *c, pf_ifill f)
{
    pf_iunit *u = c->u;
    if (u->n_fills == u->cap_fills) {
        u->cap_fills = u->cap_fills ? 2 * u->cap_fills : 16;
        u->fills = pf_xrealloc(u->fills, sizeof *u->fills * (size_t)u->cap_fills);
    }
    u->fills[u->n_fills++] = f;
}

void pf_ic_jumps_add(pf_ic_jumps *j, int pos)
{
    if (j->n == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 8;
        j->pos = pf_xrealloc(j->pos, sizeof *j->pos * (size_t)j->cap);
    }
    j->pos[j->n++] = pos;
}

void pf_ic_jumps_patch(pf_icomp *c, pf_ic_jumps *j)
{
    for (int i = 0; i < j->n; i++)
        c->u->code[j->pos[i]] = pf_ic_here(c);
    free(j->pos);
    memset(j, 0, sizeof *j);
}

void pf_ic_begin_unit(pf_icomp *c, pf_iunit *u)
{
    memset(u, 0, sizeof *u);
    c->u = u;
    c->def_end = -1;
    pf_ic_map_reset(c);
    if (c->konst)
        memset(c->konst, 0, (size_t)c->konst_cap);
}

void pf_ic_free(pf_icomp *c)
{
    pf_ic_map_reset(c);
    free(c->konst);
    c->konst = NULL;
    c->konst_cap = 0;
}

/* ---- symbol -> slot map ---- */

static size_t sym_hash(const pf_symbol *s) { return ((uintptr_t)s >> 4) * 2654435761u; }

static pf_symslot *map_find(pf_icomp *c, const pf_symbol *sym)
{
    if (!c->map_cap)
        return NULL;
    size_t m = (size_t)c->map_cap - 1;
    for (size_t i = sym_hash(sym) & m;; i = (i + 1) & m) {
        if (c->map[i].sym == sym || !c->map[i].sym)
            return &c->map[i];
    }
}

void pf_ic_map_put(pf_icomp *c, const pf_symbol *sym, int slot)
{
    if (2 * (c->map_used + 1) > c->map_cap) {
        pf_symslot *old = c->map;
        int old_cap = c->map_cap;
        c->map_cap = old_cap ? 2 * old_cap : 64;
        c->map = pf_xcalloc((size_t)c->map_cap, sizeof *c->map);
        c->map_used = 0;
        for (int i = 0; i < old_cap; i++)
            if (old[i].sym)
                pf_ic_map_put(c, old[i].sym, old[i].slot);
        free(old);
    }
    pf_symslot *e = map_find(c, sym);
    if (!e->sym)
        c->map_used++;
    e->sym = sym;
    e->slot = slot;
}

int pf_ic_map_get(pf_icomp *c, const pf_symbol *sym)
{
    pf_symslot *e = map_find(c, sym);
    return e && e->sym ? e->slot : -1;
}

void pf_ic_map_reset(pf_icomp *c)
{
    free(c->map);
    c->map = NULL;
    c->map_cap = c->map_used = 0;
}

/* ---- operands ---- */

/* A slot holding a literal, shared by equal literals (same type and bits). */
int pf_ic_const_slot(pf_icomp *c, pf_type t, pf_value v)
{
    pf_iunit *u = c->u;
    for (int i = 0; i < u->n_fills; i++) {
        const pf_ifill *f = &u->fills[i];
        if (f->kind == PF_IFILL_VALUE && f->index == (int)t &&
            memcmp(&f->value, &v, sizeof v) == 0)
            return f->slot;
    }
    int s = pf_ic_new_slots(c, 1);
    add_fill(c, (pf_ifill){ .kind = PF_IFILL_VALUE, .slot = s, .index = (int)t, .value = v });
    c->konst[s] = 1;
    return s;
}

bool pf_ic_const_value(const pf_icomp *c, int s, pf_value *v)
{
    if (c->failed || s < 0 || s >= c->u->n_slots || !c->konst[s])
        return false;
    for (int i = 0; i < c->u->n_fills; i++) {
        if (c->u->fills[i].kind == PF_IFILL_VALUE && c->u->fills[i].slot == s) {
            *v = c->u->fills[i].value;
            return true;
        }
    }
    return false;
}

int pf_ic_const_int(pf_icomp *c, int32_t i)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.i = i;
    return pf_ic_const_slot(c, PF_T_INT, v);
}

int pf_ic_const_float(pf_icomp *c, float f)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.f = f;
    return pf_ic_const_slot(c, PF_T_FLOAT, v);
}

int pf_ic_const_bool(pf_icomp *c, bool b)
{
    pf_value v;
    memset(&v, 0, sizeof v);
    v.b = b;
    return pf_ic_const_slot(c, PF_T_BOOL, v);
}

/* A slot filled from a run-time table (param, size, scalar), one per symbol. */
static int global_slot(pf_icomp *c, const pf_symbol *sym, pf_ifill_kind kind)
{
    int s = pf_ic_map_get(c, sym);
    if (s >= 0)
        return s;
    const pf_program *p = c->prog;
    int n = kind == PF_IFILL_PARAM ? p->n_params : kind == PF_IFILL_SIZE ? p->n_sizes
                                                                         : p->n_scalars;
    if (sym->index < 0 || sym->index >= n)
        return pf_ic_fail(c, sym->loc, "interpreter: name with a bad table index");
    s = pf_ic_new_slots(c, 1);
    add_fill(c, (pf_ifill){ .kind = kind, .slot = s, .index = sym->index });
    pf_ic_map_put(c, sym, s);
    return s;
}

int pf_ic_name_slot(pf_icomp *c, const pf_expr *e)
{
    const pf_symbol *sym = e->sym;
    if (!sym)
        return pf_ic_fail(c, e->loc, "interpreter: unresolved name (program not checked?)");
    switch (sym->kind) {
    case PF_SYM_PARAM: return global_slot(c, sym, PF_IFILL_PARAM);
    case PF_SYM_SIZE: return global_slot(c, sym, PF_IFILL_SIZE);
    case PF_SYM_SCALAR: return global_slot(c, sym, PF_IFILL_SCALAR);
    case PF_SYM_CONST: {
        pf_value v = sym->value;
        if (sym->type == PF_T_BOOL) {
            memset(&v, 0, sizeof v);
            v.b = sym->value.b;
        }
        return pf_ic_const_slot(c, sym->type, v);
    }
    case PF_SYM_LOCAL:
    case PF_SYM_LOOP_VAR: {
        int s = pf_ic_map_get(c, sym);
        if (s < 0)
            return pf_ic_fail(c, e->loc, "interpreter: local used outside its scope");
        return s;
    }
    default:
        return pf_ic_fail(c, e->loc, "interpreter: this name is not a scalar value");
    }
}

/* The first slot of an array (local, or const filled once per unit run) and its length. */
int pf_ic_array_base(pf_icomp *c, const pf_symbol *sym, pf_loc loc, int *len)
{
    if (!sym || (sym->kind != PF_SYM_LOCAL_ARRAY && sym->kind != PF_SYM_CONST_ARRAY) ||
        sym->array_len < 1) {
        *len = 1;
        return pf_ic_fail(c, loc, "interpreter: not an array");
    }
    *len = sym->array_len;
    int s = pf_ic_map_get(c, sym);
    if (s >= 0)
        return s;
    if (sym->kind == PF_SYM_LOCAL_ARRAY)
        return pf_ic_fail(c, loc, "interpreter: array used outside its scope");
    if (!sym->array_values)
        return pf_ic_fail(c, loc, "interpreter: const array without values");
    s = pf_ic_new_slots(c, sym->array_len);
    add_fill(c, (pf_ifill){ .kind = PF_IFILL_ARRAY, .slot = s, .array = sym->array_values,
                            .len = sym->array_len });
    pf_ic_map_put(c, sym, s);
    return s;
}

void pf_ic_note_access(pf_icomp *c, int img, pf_expr *const *index)
{
    const pf_stage *st = c->stage;
    if (!st || c->failed)
        return;
    bool own = st->image && st->image->image && st->image->image->index == img;
    for (int k = 0; own && k < st->n_vars; k++)
        own = index[k]->kind == PF_E_NAME && index[k]->sym == st->vars[k];
    if (!own)
        c->u->serial = true;
}

int pf_ic_image_index(pf_icomp *c, const pf_symbol *sym, pf_loc loc)
{
    if (!sym || sym->kind != PF_SYM_IMAGE || !sym->image || sym->image->index < 0 ||
        sym->image->index >= c->prog->n_images)
        return pf_ic_fail(c, loc, "interpreter: not an image");
    return sym->image->index;
}
