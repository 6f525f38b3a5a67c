/* Whether a stage's last variable is a per-channel loop: the colour channel, used only as the
 * channel index of 3-D images. The released prototype writes such stages as `foreach (y, x)` and
 * inserts the channel loop itself, so its search draws grid spacings for y and x only
 * (../shared/docs/paper-apps.md, "Loops over a colour image"); our language names the channel,
 * and the search needs this fact to draw the same genes. */
#include "perforate/schedule.h"

#include <stdbool.h>

static bool expr_ok(const pf_expr *e, const pf_symbol *c);

static bool args_ok(pf_expr *const *args, int n, const pf_symbol *c)
{
    for (int i = 0; i < n; i++)
        if (!expr_ok(args[i], c))
            return false;
    return true;
}

/* The channel index of a 3-D image access: exactly the variable `c`. */
static bool is_channel_index(const pf_expr *e, const pf_symbol *c)
{
    return e && e->kind == PF_E_NAME && e->sym == c;
}

/* True when `c` occurs in `e` only as the last index of 3-D image reads. */
static bool expr_ok(const pf_expr *e, const pf_symbol *c)
{
    if (!e)
        return true;
    if (e->kind == PF_E_NAME)
        return e->sym != c;
    if (e->kind == PF_E_IMAGE_READ && e->n_args == 3 && is_channel_index(e->args[2], c))
        return args_ok(e->args, 2, c);
    return expr_ok(e->a, c) && expr_ok(e->b, c) && expr_ok(e->c, c) &&
           args_ok(e->args, e->n_args, c);
}

static bool lvalue_ok(const pf_lvalue *lv, const pf_symbol *c)
{
    if (lv->kind == PF_LV_IMAGE && lv->n_index == 3 && is_channel_index(lv->index[2], c))
        return args_ok(lv->index, 2, c);
    return args_ok(lv->index, lv->n_index, c);
}

static bool stmt_ok(const pf_stmt *s, const pf_symbol *c)
{
    if (!s)
        return true;
    for (int i = 0; i < s->n_body; i++)
        if (!stmt_ok(s->body[i], c))
            return false;
    bool target = s->kind == PF_S_ASSIGN || s->kind == PF_S_SORT;
    return (!target || lvalue_ok(&s->target, c)) && expr_ok(s->len_expr, c) &&
           expr_ok(s->value, c) && expr_ok(s->cond, c) && expr_ok(s->lo, c) &&
           expr_ok(s->hi, c) && expr_ok(s->step, c) && stmt_ok(s->then_s, c) &&
           stmt_ok(s->else_s, c);
}

bool pf_stage_channel_loop(const pf_stage *st)
{
    const pf_image_decl *img = st->image ? st->image->image : NULL;
    if (st->serial || !img || img->ndims != 3 || st->n_vars != 3)
        return false;
    if (st->over && st->over[2].step)
        return false;
    return stmt_ok(st->body, st->vars[2]);
}
