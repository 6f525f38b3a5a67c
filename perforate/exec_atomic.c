/* Which serial (scatter) stages may run on the GPU with atomic adds (exec.h,
 * pf_stage_accumulates; docs/gpu.md §5).
 *
 * A serial stage runs its iterations in order because a scatter may write a cell another
 * iteration writes or reads. When every image write of the stage is `+=` or `-=` and the stage
 * reads none of the images it writes, no iteration sees another's result: each cell ends as
 * its start value plus the sum of its addends, whatever the order. Run concurrently, each
 * write is then one atomic add (codegen marks the store `atomic`); only the order of the float
 * additions changes (docs/gpu.md §5 derives the bound). Any other write (`=`, `*=`, `/=`) or a
 * read of a written image makes the result depend on the order: such a stage stays serial. */
#include "perforate/exec.h"

#include "lang/lang.h"

#include <stdio.h>

/* The first image write of s that is not `+=` or `-=`, or NULL. */
static const pf_stmt *non_additive_write(const pf_stmt *s)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case PF_S_BLOCK:
        for (int i = 0; i < s->n_body; i++) {
            const pf_stmt *w = non_additive_write(s->body[i]);
            if (w)
                return w;
        }
        return NULL;
    case PF_S_ASSIGN:
        return s->target.kind == PF_LV_IMAGE && s->assign_op != PF_ASSIGN_ADD &&
                       s->assign_op != PF_ASSIGN_SUB
                   ? s : NULL;
    case PF_S_IF: {
        const pf_stmt *w = non_additive_write(s->then_s);
        return w ? w : non_additive_write(s->else_s);
    }
    case PF_S_FOR:
        return non_additive_write(s->then_s);
    default:
        return NULL;
    }
}

bool pf_stage_accumulates(const pf_stage *st, char *why, size_t why_len)
{
    if (why_len)
        why[0] = '\0';
    if (!st->serial)
        return false;
    const pf_stmt *w = non_additive_write(st->body);
    if (w) {
        snprintf(why, why_len, "its write to '%s' (line %d) is not '+=' or '-='",
                 w->target.name, w->loc.line);
        return false;
    }
    for (int i = 0; i < st->n_writes; i++)
        for (int j = 0; j < st->n_reads; j++)
            if (st->writes[i] == st->reads[j]) {
                snprintf(why, why_len, "it reads '%s', which it writes", st->writes[i]->name);
                return false;
            }
    return true;
}
