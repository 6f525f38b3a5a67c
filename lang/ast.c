/* Small helpers every consumer of the AST uses: names of types and operators, lookups in the
 * program tables, and freeing a program (its arena holds every node). */
#include "lang/ast.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

void pf_program_free(pf_program *prog)
{
    if (!prog)
        return;
    pf_arena_free(&prog->arena);
    free(prog);
}

const char *pf_type_name(pf_type t)
{
    switch (t) {
    case PF_T_ERROR: return "<error>";
    case PF_T_VOID: return "void";
    case PF_T_BOOL: return "bool";
    case PF_T_INT: return "int";
    case PF_T_FLOAT: return "float";
    }
    return "?";
}

/* ORDER pf_op */
static const char *const op_names[] = {
    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "-", "!",
};

const char *pf_op_name(pf_op op)
{
    PF_ASSERT((int)op >= 0 && (size_t)op < sizeof op_names / sizeof op_names[0]);
    return op_names[op];
}

const pf_loop_info *pf_program_find_loop(const pf_program *prog, const char *name)
{
    for (int i = 0; i < prog->n_loops; i++)
        if (strcmp(prog->loops[i].name, name) == 0)
            return &prog->loops[i];
    return NULL;
}

const pf_image_decl *pf_program_find_image(const pf_program *prog, const char *name)
{
    for (int i = 0; i < prog->n_images; i++)
        if (strcmp(prog->images[i]->name, name) == 0)
            return prog->images[i];
    return NULL;
}
