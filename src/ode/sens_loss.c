/* The weighted least-squares loss of a solved ensemble and its gradient
 * with respect to the sensitivity directions (ode.h): the chain rule a
 * fitting loop or a Hamiltonian Monte Carlo sampler would otherwise write
 * around sens_out. */
#include <math.h>

#include "ode_internal.h"

sv_status sv_ode_loss_gradient(const sv_ode_problem *P, const sv_ode_ensemble *E, const double *data,
                               const double *sigma, double *loss, double *grad)
{
    if (!P || !E || !data || !loss)
        return sv_error(SV_ERR_ARG, "sv_ode_loss_gradient: %s is NULL",
                        !P ? "prob" : !E ? "ens" : !data ? "data" : "loss");
    const int n = P->n, ns = P->ns, nsave = E->nsave;
    if (grad && (!E->sens_out || ns == 0))
        return sv_error(SV_ERR_ARG, "sv_ode_loss_gradient: grad asked for but the ensemble has no sensitivities "
                                    "(sens_out NULL or no directions)");
    if (!E->out) return sv_error(SV_ERR_ARG, "sv_ode_loss_gradient: ens->out is NULL");
    if (sigma)
        for (int i = 0; i < n; i++)
            if (!(sigma[i] > 0) || !isfinite(sigma[i]))
                return sv_error(SV_ERR_ARG, "sv_ode_loss_gradient: sigma[%d] = %g: expected a finite value > 0", i,
                                sigma[i]);
    for (long tr = 0; tr < E->ntraj; tr++) {
        double *g = grad ? grad + (size_t)tr * ns : NULL;
        if (E->status && E->status[tr] != SV_ODE_SUCCESS) {
            loss[tr] = NAN;
            for (int j = 0; g && j < ns; j++) g[j] = NAN;
            continue;
        }
        double L = 0;
        for (int j = 0; g && j < ns; j++) g[j] = 0;
        for (int s = 0; s < nsave; s++)
            for (int i = 0; i < n; i++) {
                size_t q = ((size_t)tr * nsave + s) * n + i;
                if (isnan(data[q])) continue; /* not observed */
                double w = sigma ? 1.0 / (sigma[i] * sigma[i]) : 1.0, r = E->out[q] - data[q];
                L += w * r * r;
                for (int j = 0; g && j < ns; j++) g[j] += 2 * w * r * E->sens_out[q * ns + j];
            }
        loss[tr] = L;
    }
    return SV_OK;
}
