/* Stage sums over nw slot-major values, one vectorisable pass per stage
 * count: Rodas5P's U = y + Σ a_sj k_j and Σ C_sj k_j (ode_stage_sum, base
 * NULL = 0) and Tsit5's Σ a_sj k_j (ode_stage_sum_plain). Summation order is
 * fixed (left to right), the same in every lane; the state and the
 * sensitivities (sens_*.c) share these so that they round alike. */
#ifndef SV_ODE_STAGE_SUM_H
#define SV_ODE_STAGE_SUM_H

#include <stddef.h>

/* out = base + Σ_{j<s} c_j k_j over nw values (k_j at k + j·nw; base NULL = 0). */
#define K(j) k[(size_t)(j) * nw + q]
#define ODE_SUM_CASES(B) \
    switch (s) { \
    case 1: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0); break; \
    case 2: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1); break; \
    case 3: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2); break; \
    case 4: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3); break; \
    case 5: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4); break; \
    case 6: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5); break; \
    case 7: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5) + c[6] * K(6); break; \
    default: break; \
    }
static inline void ode_stage_sum(size_t nw, double *restrict out, const double *restrict base, const double *c,
                                 const double *restrict k, int s)
{
    if (base) {
        ODE_SUM_CASES(base[q])
    } else {
        ODE_SUM_CASES(0.0)
    }
}
#undef ODE_SUM_CASES
#undef K

/* out = Σ_{j<s} c_j k_j over nw values (no base term: Tsit5 scales by h first). */
#define K(j) k[(size_t)(j) * nw + q]
static inline void ode_stage_sum_plain(size_t nw, double *restrict out, const double *c, const double *restrict k,
                                       int s)
{
    switch (s) {
    case 1: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0); break;
    case 2: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1); break;
    case 3: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2); break;
    case 4: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3); break;
    case 5:
        for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4);
        break;
    case 6:
        for (size_t q = 0; q < nw; q++)
            out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5);
        break;
    default:
        for (size_t q = 0; q < nw; q++)
            out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5) + c[6] * K(6);
        break;
    }
}
#undef K

#endif
