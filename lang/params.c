/* Run-time parameter values: a program's defaults, and `name=value` overrides parsed by the
 * param's type (as given on the command line with --param). */
#include "lang/lang.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pf_params_init(pf_param_values *pv, const pf_program *prog)
{
    pv->n = prog->n_params;
    pv->values = pf_xcalloc((size_t)pv->n + 1, sizeof *pv->values);
    for (int i = 0; i < pv->n; i++)
        pv->values[i] = prog->params[i]->default_value;
}

void pf_params_free(pf_param_values *pv)
{
    free(pv->values);
    pv->values = NULL;
    pv->n = 0;
}

static int parse_int(const char *s, int32_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static int parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (*s == '\0' || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, bool *out)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *out = false;
    else
        return -1;
    return 0;
}

static int find_param(const pf_program *prog, const char *name, size_t len)
{
    for (int i = 0; i < prog->n_params; i++)
        if (strlen(prog->params[i]->name) == len && memcmp(prog->params[i]->name, name, len) == 0)
            return i;
    return -1;
}

int pf_params_set(pf_param_values *pv, const pf_program *prog, const char *assignment,
                  pf_error *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return pf_fail(err, "expected --param name=value, got '%s'", assignment);
    size_t len = (size_t)(eq - assignment);
    int i = find_param(prog, assignment, len);
    if (i < 0 || i >= pv->n)
        return pf_fail(err, "the program has no param '%.*s'", (int)len, assignment);
    const pf_param_decl *d = prog->params[i];
    const char *text = eq + 1;
    int rc = -1;
    pf_value v = {0};
    if (d->type == PF_T_INT)
        rc = parse_int(text, &v.i);
    else if (d->type == PF_T_FLOAT)
        rc = parse_float(text, &v.f);
    else if (d->type == PF_T_BOOL)
        rc = parse_bool(text, &v.b);
    if (rc != 0)
        return pf_fail(err, "param '%s' is %s %s, and '%s' is not one", d->name,
                       d->type == PF_T_INT ? "an" : "a", pf_type_name(d->type), text);
    pv->values[i] = v;
    return 0;
}
