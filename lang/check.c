/* The checker's driver: scopes and name lookup, the top-level declarations (params, consts,
 * helper functions), and pf_check itself, which runs the passes in order:
 *
 *   collect top-level names -> params/consts/functions in source order -> the pipeline
 *   -> recursion among helper functions
 *
 * Names are declared before use (functions excepted), and no name may be redeclared while it
 * is visible (no shadowing anywhere), so every name in a stage or function means one thing. */
#include "lang/check_internal.h"

#include "lang/builtins.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_check_error(pf_checker *c, pf_loc loc, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->n_errors++;
    pf_diag_error(c->diags, loc, "%s", buf);
}

void *pf_cvec_push(pf_checker *c, pf_cvec *v, size_t size)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        char *d = pf_arena_alloc(&c->scratch, size * (size_t)cap);
        if (v->n)
            memcpy(d, v->data, size * (size_t)v->n);
        v->data = d;
        v->cap = cap;
    }
    return v->data + size * (size_t)v->n++;
}

/* ---- name maps ---- */

static unsigned hash_name(const char *s)
{
    unsigned h = 2166136261u;  /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void pf_map_init(pf_checker *c, pf_name_map *m, unsigned size)
{
    unsigned n = 64;
    while (n < size && n < (1u << 18))
        n *= 2;
    m->buckets = PF_NEW_ARRAY(&c->scratch, pf_name_entry *, n);
    m->mask = n - 1;
}

pf_name_entry *pf_map_get(const pf_name_map *m, const char *name)
{
    for (pf_name_entry *e = m->buckets[hash_name(name) & m->mask]; e; e = e->next)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

pf_name_entry *pf_map_put(pf_checker *c, pf_name_map *m, const char *name, void *value,
                          pf_loc loc, int level)
{
    pf_name_entry *e = PF_NEW(&c->scratch, pf_name_entry);
    unsigned b = hash_name(name) & m->mask;
    e->name = name;
    e->value = value;
    e->loc = loc;
    e->level = level;
    e->next = m->buckets[b];
    m->buckets[b] = e;
    return e;
}

/* ---- scopes ---- */

void pf_scope_enter(pf_checker *c)
{
    c->level++;
}

/* Entries are removed newest first, so each is at the head of its bucket. */
void pf_scope_leave(pf_checker *c)
{
    pf_cvec *st = &c->scope_stack;
    while (st->n > 0) {
        pf_name_entry *e = PF_CVEC_AT(*st, pf_name_entry *, st->n - 1);
        if (e->level < c->level)
            break;
        unsigned b = hash_name(e->name) & c->scope.mask;
        PF_ASSERT(c->scope.buckets[b] == e);
        c->scope.buckets[b] = e->next;
        st->n--;
    }
    c->level--;
}

pf_symbol *pf_lookup(pf_checker *c, const char *name)
{
    pf_name_entry *e = pf_map_get(&c->scope, name);
    return e ? e->value : NULL;
}

const char *pf_sym_kind_name(pf_sym_kind k)
{
    switch (k) {
    case PF_SYM_PARAM: return "param";
    case PF_SYM_CONST: return "const";
    case PF_SYM_CONST_ARRAY: return "const array";
    case PF_SYM_FUNC: return "function";
    case PF_SYM_IMAGE: return "image";
    case PF_SYM_SIZE: return "size name";
    case PF_SYM_SCALAR: return "pipeline scalar";
    case PF_SYM_LOCAL: return "local variable";
    case PF_SYM_LOCAL_ARRAY: return "local array";
    case PF_SYM_LOOP_VAR: return "loop variable";
    }
    return "name";
}

const char *pf_sym_kind_phrase(pf_sym_kind k)
{
    switch (k) {
    case PF_SYM_IMAGE: return "an image";
    case PF_SYM_PARAM: return "a param";
    case PF_SYM_CONST: return "a const";
    case PF_SYM_CONST_ARRAY: return "a const array";
    case PF_SYM_FUNC: return "a function";
    case PF_SYM_SIZE: return "a size name";
    case PF_SYM_SCALAR: return "a pipeline scalar";
    case PF_SYM_LOCAL: return "a local variable";
    case PF_SYM_LOCAL_ARRAY: return "a local array";
    case PF_SYM_LOOP_VAR: return "a loop variable";
    }
    return "a name";
}

pf_symbol *pf_declare(pf_checker *c, pf_sym_kind kind, const char *name, pf_loc loc,
                      pf_type type)
{
    pf_symbol *s = PF_NEW(c->arena, pf_symbol);
    s->kind = kind;
    s->name = name;
    s->loc = loc;
    s->type = type;
    if (!name)
        return s;
    pf_symbol *old = pf_lookup(c, name);
    if (old) {
        pf_check_error(c, loc, "'%s' is already declared (as %s at %d:%d)", name,
                       pf_sym_kind_phrase(old->kind), old->loc.line, old->loc.col);
        return s;
    }
    pf_name_entry *e = pf_map_put(c, &c->scope, name, s, loc, c->level);
    PF_CPUSH(c, c->scope_stack, pf_name_entry *, e);
    return s;
}

void pf_report_unknown(pf_checker *c, pf_loc loc, const char *what, const char *name)
{
    if (pf_map_get(&c->reported, name))
        return;  /* each unknown name is reported once */
    pf_map_put(c, &c->reported, name, NULL, loc, 0);
    pf_name_entry *later = pf_map_get(&c->later, name);
    if (later && later->level == 1 && (c->ctx == PF_CTX_FUNC || c->ctx == PF_CTX_TOP))
        pf_check_error(c, loc, "'%s' belongs to the pipeline and is not visible here", name);
    else if (later)
        pf_check_error(c, loc, "'%s' is used before its declaration (at %d:%d)", name,
                       later->loc.line, later->loc.col);
    else
        pf_check_error(c, loc, "unknown %s '%s'", what, name);
}

int pf_alloc_slots(pf_checker *c, int n)
{
    int slot = c->next_slot;
    if (c->next_slot > PF_FRAME_MAX - n) {
        if (!c->frame_full)
            pf_check_error(c, c->stage ? c->stage->name_loc : c->func ? c->func->loc
                                                                      : c->prog->loc,
                           "too many local variables (more than %d frame slots)",
                           PF_FRAME_MAX);
        c->frame_full = true;
        return 0;
    }
    c->next_slot += n;
    if (c->next_slot > c->max_slot)
        c->max_slot = c->next_slot;
    return slot;
}

/* ---- top-level names ---- */

/* Records every top-level and pipeline-level name with where it is declared, reporting
 * duplicates among top-level names and names reserved for builtins. Returns, per decl, whether
 * it may be declared (not a duplicate). */
static void note_top_name(pf_checker *c, const char *name, pf_loc loc, bool *ok)
{
    *ok = name != NULL;
    if (!name)
        return;
    pf_name_entry *e = pf_map_get(&c->later, name);
    if (pf_builtin_reserved(name)) {
        /* Still declared, so that its uses are not reported as unknown. */
        pf_check_error(c, loc, "'%s' is the name of a builtin", name);
    }
    if (e) {
        pf_check_error(c, loc, "'%s' is already declared at %d:%d", name, e->loc.line,
                       e->loc.col);
        *ok = false;
    } else {
        pf_map_put(c, &c->later, name, NULL, loc, 0);
    }
}

static void note_pipeline_names(pf_checker *c)
{
    pf_program *prog = c->prog;
    for (int i = 0; i < prog->n_items; i++) {
        pf_item *it = prog->items[i];
        const char *name = it->kind == PF_ITEM_IMAGE ? it->image->name
                           : it->kind == PF_ITEM_SCALAR ? it->scalar_name : NULL;
        if (name && !pf_map_get(&c->later, name))
            pf_map_put(c, &c->later, name, NULL, it->loc, 1);
    }
    for (int i = 0; i < prog->n_inputs + prog->n_outputs; i++) {
        pf_image_decl *img = i < prog->n_inputs ? prog->inputs[i]
                                                : prog->outputs[i - prog->n_inputs];
        if (!pf_map_get(&c->later, img->name))
            pf_map_put(c, &c->later, img->name, NULL, img->loc, 1);
        for (int d = 0; i < prog->n_inputs && d < img->ndims; d++) {
            pf_expr *e = img->extents[d];
            if (e->kind == PF_E_NAME && !pf_map_get(&c->later, e->name))
                pf_map_put(c, &c->later, e->name, NULL, e->loc, 1);
        }
    }
}

/* ---- params and consts ---- */

static void check_param(pf_checker *c, pf_param_decl *d, int index, bool declare)
{
    c->ctx = PF_CTX_TOP;
    d->init = pf_check_typed(c, d->init, d->type, "the default value of a param");
    pf_fold(c, d->init, "the default value of a param", &d->default_value);
    if (!declare)
        return;
    d->sym = pf_declare(c, PF_SYM_PARAM, d->name, d->loc, d->type);
    d->sym->index = index;
    d->sym->value = d->default_value;
}

static bool check_array_length(pf_checker *c, pf_expr **len, const char *kind,
                               const char *name, int *out)
{
    *len = pf_check_typed(c, *len, PF_T_INT, "an array length");
    pf_value v = {0};
    *out = 1;
    if (!pf_fold(c, *len, "an array length", &v))
        return false;
    if (v.i < 1 || v.i > PF_ARRAY_MAX) {
        pf_check_error(c, (*len)->loc, "%s '%s' has length %d (must be 1 to %d)", kind, name,
                       (int)v.i, PF_ARRAY_MAX);
        return false;
    }
    *out = v.i;
    return true;
}

static void check_const_array(pf_checker *c, pf_const_decl *d, pf_symbol *s)
{
    int len;
    if (d->type == PF_T_BOOL)
        pf_check_error(c, d->loc, "arrays hold int or float values, not bool");
    bool ok = check_array_length(c, &d->len_expr, "const array", d->name, &len);
    if (ok && d->n_init != len)
        pf_check_error(c, d->loc, "const array '%s' has %d element(s) but %d initializer(s)",
                       d->name, len, d->n_init);
    s->kind = PF_SYM_CONST_ARRAY;
    s->array_len = len;
    s->array_values = PF_NEW_ARRAY(c->arena, pf_value, len);
    for (int i = 0; i < d->n_init; i++) {
        d->init[i] = pf_check_typed(c, d->init[i], d->type, "a const initializer");
        pf_value v = {0};
        pf_fold(c, d->init[i], "a const initializer", &v);
        if (i < len)
            s->array_values[i] = v;
    }
}

static void check_const(pf_checker *c, pf_const_decl *d, bool declare)
{
    c->ctx = PF_CTX_TOP;
    pf_symbol *s = PF_NEW(c->arena, pf_symbol);
    s->kind = PF_SYM_CONST;
    if (d->len_expr) {
        check_const_array(c, d, s);
    } else if (d->n_init != 1) {
        pf_check_error(c, d->loc, "const '%s' has an initializer list but no length "
                       "(write %s %s[%d] = {...})", d->name, pf_type_name(d->type), d->name,
                       d->n_init);
    } else {
        d->init[0] = pf_check_typed(c, d->init[0], d->type, "a const initializer");
        pf_fold(c, d->init[0], "a const initializer", &s->value);
    }
    pf_symbol *decl = declare ? pf_declare(c, s->kind, d->name, d->loc, d->type) : s;
    decl->value = s->value;
    decl->array_len = s->array_len;
    decl->array_values = s->array_values;
    d->sym = decl;
}

/* ---- helper functions ---- */

static void declare_functions(pf_checker *c, const bool *ok)
{
    pf_program *prog = c->prog;
    for (int i = 0; i < prog->n_funcs; i++) {
        pf_func *f = prog->funcs[i];
        f->sym = ok[i] ? pf_declare(c, PF_SYM_FUNC, f->name, f->loc, f->ret)
                       : PF_NEW(c->arena, pf_symbol);
        f->sym->kind = PF_SYM_FUNC;
        f->sym->func = f;
        f->sym->index = i;
    }
}

static void check_function(pf_checker *c, pf_func *f, int index)
{
    c->ctx = PF_CTX_FUNC;
    c->func = f;
    c->func_index = index;
    c->next_slot = c->max_slot = 0;
    c->frame_full = false;
    pf_scope_enter(c);
    f->params = PF_NEW_ARRAY(c->arena, pf_symbol *, f->n_params);
    for (int i = 0; i < f->n_params; i++) {
        f->params[i] = pf_declare(c, PF_SYM_LOCAL, f->param_names[i], f->param_locs[i],
                                  f->param_types[i]);
        f->params[i]->slot = pf_alloc_slots(c, 1);
    }
    pf_check_stmt(c, f->body);
    pf_scope_leave(c);
    if (!pf_stmt_returns(f->body))
        pf_check_error(c, f->loc, "function '%s' can reach its end without a return",
                       f->name);
    f->n_slots = c->max_slot;
    c->func = NULL;
}

/* ---- the driver ---- */

static unsigned count_names(const pf_program *prog)
{
    return (unsigned)(prog->n_params + prog->n_consts + prog->n_funcs + prog->n_items +
                      prog->n_inputs + prog->n_outputs) * 2;
}

static void init_checker(pf_checker *c, pf_program *prog, pf_diags *diags)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->arena = &prog->arena;
    c->diags = diags;
    pf_arena_init(&c->scratch);
    unsigned size = (unsigned)(strlen(prog->source) / 8);
    pf_map_init(c, &c->scope, size);
    pf_map_init(c, &c->later, count_names(prog));
    pf_map_init(c, &c->loop_names, size);
    pf_map_init(c, &c->reported, size);
}

static void check_top_level(pf_checker *c)
{
    pf_program *prog = c->prog;
    bool *ok[3];
    ok[PF_DECL_PARAM] = PF_NEW_ARRAY(&c->scratch, bool, prog->n_params + 1);
    ok[PF_DECL_CONST] = PF_NEW_ARRAY(&c->scratch, bool, prog->n_consts + 1);
    ok[PF_DECL_FUNC] = PF_NEW_ARRAY(&c->scratch, bool, prog->n_funcs + 1);
    bool pipeline_ok = false;
    for (int i = 0; i < prog->n_decls; i++) {
        pf_decl_ref r = prog->decls[i];
        if (r.kind == PF_DECL_PARAM)
            note_top_name(c, prog->params[r.index]->name, prog->params[r.index]->loc,
                          &ok[0][r.index]);
        else if (r.kind == PF_DECL_CONST)
            note_top_name(c, prog->consts[r.index]->name, prog->consts[r.index]->loc,
                          &ok[1][r.index]);
        else if (r.kind == PF_DECL_FUNC)
            note_top_name(c, prog->funcs[r.index]->name, prog->funcs[r.index]->loc,
                          &ok[2][r.index]);
        else
            note_top_name(c, prog->name, prog->loc, &pipeline_ok);
    }
    note_pipeline_names(c);
    declare_functions(c, ok[PF_DECL_FUNC]);
    for (int i = 0; i < prog->n_decls; i++) {
        pf_decl_ref r = prog->decls[i];
        if (r.kind == PF_DECL_PARAM)
            check_param(c, prog->params[r.index], r.index, ok[0][r.index]);
        else if (r.kind == PF_DECL_CONST)
            check_const(c, prog->consts[r.index], ok[1][r.index]);
        else if (r.kind == PF_DECL_FUNC)
            check_function(c, prog->funcs[r.index], r.index);
        else
            pf_check_pipeline(c);
    }
}

static bool has_pipeline(const pf_program *prog)
{
    for (int i = 0; i < prog->n_decls; i++)
        if (prog->decls[i].kind == PF_DECL_PIPELINE)
            return true;
    return false;
}

int pf_check(pf_program *prog, pf_diags *diags)
{
    if (prog->checked)
        return 0;
    pf_checker c;
    init_checker(&c, prog, diags);
    check_top_level(&c);
    int before = c.n_errors;
    pf_check_recursion(&c);
    if (c.n_errors == before)
        pf_check_inlining(&c);
    if (!has_pipeline(prog)) {
        pf_loc l = {1, 1};
        pf_check_error(&c, l, "the file declares no pipeline");
    }
    pf_arena_free(&c.scratch);
    prog->checked = c.n_errors == 0;
    return c.n_errors == 0 ? 0 : -1;
}
