/* The direct solve at one frequency: the planar model's exact solve by the
 * sweep engine (double precision), or where the charge term swamps the
 * others, the loop–tree solve (lowfreq.c); then the port admittances. */
#include <math.h>

#include "em_internal.h"

sv_status sv_em_solve(sv_ctx *ctx, const sv_em_affine *a, double freq_hz, double complex *y)
{
    if (!a || !y) return sv_error(SV_ERR_ARG, "sv_em_solve: NULL argument");
    sv_status st = sv_em_check_solve_frequency("sv_em_solve", freq_hz);
    if (st) return st;
    if (sv_em_affine_low_frequency(a, freq_hz)) return sv_em_solve_loop_tree(ctx, a, freq_hz, y);
    const sv_em_model *em = sv_em_affine_em(a);
    sv_status valid = sv_em_check_validity(em->prj, &em->opts, freq_hz);
    if (valid) return valid;
    int n = em->n, np = em->prj->nports;
    double complex *x = sv_alloc(ctx, sizeof *x * (size_t)n * (size_t)np, "em port solutions");
    if (!x) return sv_last_status();
    sv_status s = sv_sweep_solve_exact(ctx, sv_em_affine_model(a), freq_hz, SV_SWEEP_DOUBLE, x, n, NULL);
    if (!s) s = sv_em_port_admittance(em, x, n, y);
    sv_free(ctx, x);
    return s;
}
