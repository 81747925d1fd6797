/* Built-in problems: the registry of names, and a problem made by name
 * from the file that defines it into a record (builtin_record.c). */
#include <string.h>

#include "builtin_internal.h"

static const char *const names[] = {"rober", "hires",  "orego", "vdpol",     "bruss2d",  "eb50",
                                    "lorenz", "pollu", "akzo", "rober_dae", "transamp", "ball", NULL};

const char *const *sv_ode_builtin_names(void) { return names; }

/* The problem's description from the file that defines it. */
static sv_status describe(sv_ctx *ctx, sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    sv_status st = ode_builtin_small(b, name, d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = ode_builtin_bruss(b, name, d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = ode_builtin_eb50(ctx, b, name, d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = ode_builtin_pollu(b, name, d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = ode_builtin_dae(b, name, d, arg);
    if (st == SV_ERR_UNSUPPORTED) st = ode_builtin_ball(b, name, d, arg);
    return st;
}

/* The Jacobian source asked for, when the problem has its callback. */
static sv_status set_jac_source(sv_ode_problem_desc *d, const char *name, sv_ode_jac_source jac)
{
    d->jac_source = jac;
    if (jac == SV_ODE_JAC_COMPLEX_STEP && !d->f_complex)
        return sv_error(SV_ERR_UNSUPPORTED, "%s: no complex right-hand side for complex-step Jacobians", name);
    if (jac == SV_ODE_JAC_JVP && !d->jvp) return sv_error(SV_ERR_UNSUPPORTED, "%s: no J·v callback", name);
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
                        "unknown built-in problem '%s': expected rober, hires, orego, vdpol, bruss2d, eb50, lorenz, pollu, "
                        "akzo, rober_dae, transamp or ball",
                        name);
    /* an argument the problem has no use for would be silently ignored */
    if (arg != 0 && strcmp(name, "bruss2d") && strcmp(name, "eb50"))
        return sv_error(SV_ERR_ARG, "%s: arg = %g: this problem takes no argument (only bruss2d's grid N and eb50's "
                        "wavenumber k do)", name, arg);
    sv_ode_builtin *b = ode_builtin_record_new();
    if (!b) return sv_error(SV_ERR_NOMEM, "%s: out of memory", name);
    b->name = names[k];
    sv_ode_problem_desc d;
    memset(&d, 0, sizeof d);
    d.name = names[k];
    sv_status st = describe(ctx, b, name, &d, arg);
    if (st == SV_OK) st = set_jac_source(&d, name, jac);
    if (st == SV_OK) st = sv_ode_problem_create(ctx, &d, &b->prob);
    if (st == SV_OK)
        *out = b;
    else
        sv_ode_builtin_destroy(b);
    return st;
}

void sv_ode_builtin_destroy(sv_ode_builtin *b)
{
    if (!b) return;
    sv_ode_problem_destroy(b->prob);
    ode_builtin_record_free(b);
}
