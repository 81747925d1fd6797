/* Built-in problems: lookup by name, ownership of their data. */
#include <stdlib.h>
#include <string.h>

#include "builtin_internal.h"

void sv_ode_builtin_bruss_free(void *data);
void sv_ode_builtin_eb50_free(void *data);
void sv_ode_builtin_pollu_free(void *data);

static const char *const names[] = {"rober", "hires", "orego", "vdpol", "bruss2d", "eb50", "lorenz", "pollu", NULL};

const char *const *sv_ode_builtin_names(void) { return names; }

sv_status sv_ode_builtin_set(sv_ode_builtin *b, const sv_ode_problem_desc *d, double t0, double t1,
                             const double *y0, const double *p, double rtol, double atol)
{
    b->t0 = t0;
    b->t1 = t1;
    b->rtol = rtol;
    b->atol = atol;
    b->y0 = malloc(sizeof(double) * (size_t)d->n);
    b->params = malloc(sizeof(double) * (size_t)(d->nparams ? d->nparams : 1));
    if (!b->y0 || !b->params) return sv_error(SV_ERR_NOMEM, "%s: out of memory", b->name);
    memcpy(b->y0, y0, sizeof(double) * (size_t)d->n);
    if (d->nparams) memcpy(b->params, p, sizeof(double) * (size_t)d->nparams);
    return SV_OK;
}

sv_status sv_ode_builtin_create(sv_ctx *ctx, const char *name, double arg, sv_ode_jac_source jac,
                                sv_ode_builtin **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ode_builtin_create: out is NULL");
    *out = NULL;
    if (!name) return sv_error(SV_ERR_ARG, "sv_ode_builtin_create: name is NULL");
    int k = 0;
    while (names[k] && strcmp(names[k], name)) k++;
    if (!names[k])
        return sv_error(SV_ERR_ARG,
                        "unknown built-in problem '%s': expected rober, hires, orego, vdpol, bruss2d, eb50, lorenz or pollu",
                        name);
    sv_ode_builtin *b = calloc(1, sizeof *b);
    if (!b) return sv_error(SV_ERR_NOMEM, "%s: out of memory", name);
    b->name = names[k];
    sv_ode_problem_desc d;
    memset(&d, 0, sizeof d);
    d.name = names[k];
    sv_status st = sv_ode_builtin_small(b, name, &d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = sv_ode_builtin_bruss(ctx, b, name, &d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = sv_ode_builtin_eb50(ctx, b, name, &d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = sv_ode_builtin_pollu(ctx, b, name, &d, arg);
    if (st == SV_OK) {
        d.jac_source = jac;
        if (jac == SV_ODE_JAC_COMPLEX_STEP && !d.f_complex)
            st = sv_error(SV_ERR_UNSUPPORTED, "%s: no complex right-hand side for complex-step Jacobians", name);
        else if (jac == SV_ODE_JAC_JVP && !d.jvp)
            st = sv_error(SV_ERR_UNSUPPORTED, "%s: no J·v callback", name);
        else
            st = sv_ode_problem_create(ctx, &d, &b->prob);
    }
    if (st != SV_OK) {
        sv_ode_builtin_destroy(b);
        return st;
    }
    *out = b;
    return SV_OK;
}

void sv_ode_builtin_destroy(sv_ode_builtin *b)
{
    if (!b) return;
    sv_ode_problem_destroy(b->prob);
    if (b->data && b->name && !strcmp(b->name, "bruss2d")) sv_ode_builtin_bruss_free(b->data);
    if (b->data && b->name && !strcmp(b->name, "eb50")) sv_ode_builtin_eb50_free(b->data);
    if (b->data && b->name && !strcmp(b->name, "pollu")) sv_ode_builtin_pollu_free(b->data);
    free(b->y0);
    free(b->params);
    free(b->tstops);
    free(b->atol_vec);
    free(b);
}
