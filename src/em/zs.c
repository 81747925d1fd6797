/* Surface impedance of a finite-thickness conductor, valid from DC up:
 * Zs = (k/σ)·coth(k·t), k = (1 + j)/δ, δ = sqrt(2/(ω·μ0·σ))
 * (current on one face; docs/em.md, "The model in one page"). */
#include <math.h>

#include "em_internal.h"

static double complex coth_c(double complex z)
{
    if (cabs(z) < 1e-3) return 1 / z + z / 3 - z * z * z / 45; /* series: 1 − e^{−2z} would cancel */
    double complex e = cexp(-2 * z);                            /* Re z > 0: never overflows */
    return (1 + e) / (1 - e);
}

double complex sv_em_surface_impedance(double sigma, double t, double freq_hz)
{
    if (isinf(sigma) && sigma > 0) return 0;
    if (!(sigma > 0) || !(t > 0) || !(freq_hz >= 0) || !isfinite(freq_hz) || !isfinite(t)) return NAN;
    if (freq_hz == 0) return 1 / (sigma * t);
    double w = 2 * SV_EM_PI * freq_hz;
    double delta = sqrt(2 / (w * SV_EM_MU0 * sigma));
    double complex k = (1 + I) / delta;
    return k / sigma * coth_c(k * t);
}
