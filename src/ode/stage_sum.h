/* Stage sums over nw slot-major values, one vectorisable pass per stage
 * count: Rodas5P's U = y + Σ a_sj k_j and Σ C_sj k_j together
 * (ode_stage_sums) and Tsit5's Σ a_sj k_j (ode_stage_sum_plain). Summation order is
 * fixed (left to right), the same in every lane; the state and the
 * sensitivities (sens_*.c) share these so that they round alike. */
#ifndef SV_ODE_STAGE_SUM_H
#define SV_ODE_STAGE_SUM_H

#include <stddef.h>

/* The sums' terms c_0 k_0 + … + c_{m−1} k_{m−1} at value q, left to right. */
#define K(j) k[(size_t)(j) * nw + q]
#define ODE_T1(c) c[0] * K(0)
#define ODE_T2(c) ODE_T1(c) + c[1] * K(1)
#define ODE_T3(c) ODE_T2(c) + c[2] * K(2)
#define ODE_T4(c) ODE_T3(c) + c[3] * K(3)
#define ODE_T5(c) ODE_T4(c) + c[4] * K(4)
#define ODE_T6(c) ODE_T5(c) + c[5] * K(5)
#define ODE_T7(c) ODE_T6(c) + c[6] * K(6)

/* Rodas5P's stage s over nw values, both sums in one pass over k (k_j at
 * k + j·nw): U = y + Σ_{j<s} a_j k_j and R = 0 + Σ_{j<s} c_j k_j (the
 * right-hand side's Σ C_sj k_j; the 0 + keeps a −0 sum +0, as it always
 * was). */
static inline void ode_stage_sums(size_t nw, double *restrict U, const double *restrict y, const double *a,
                                  double *restrict R, const double *c, const double *restrict k, int s)
{
#define ODE_SUMS_CASE(m) \
    case m: \
        for (size_t q = 0; q < nw; q++) { \
            U[q] = y[q] + ODE_T##m(a); \
            R[q] = 0.0 + ODE_T##m(c); \
        } \
        break;
    switch (s) {
        ODE_SUMS_CASE(1)
        ODE_SUMS_CASE(2)
        ODE_SUMS_CASE(3)
        ODE_SUMS_CASE(4)
        ODE_SUMS_CASE(5)
        ODE_SUMS_CASE(6)
        ODE_SUMS_CASE(7)
    default: break;
    }
#undef ODE_SUMS_CASE
}

/* out = Σ_{j<s} c_j k_j over nw values (no base term: Tsit5 scales by h
 * first); s = 7 for any larger s. */
static inline void ode_stage_sum_plain(size_t nw, double *restrict out, const double *c, const double *restrict k,
                                       int s)
{
#define ODE_PLAIN_CASE(m) \
    for (size_t q = 0; q < nw; q++) out[q] = ODE_T##m(c); \
    break;
    switch (s) {
    case 1: ODE_PLAIN_CASE(1)
    case 2: ODE_PLAIN_CASE(2)
    case 3: ODE_PLAIN_CASE(3)
    case 4: ODE_PLAIN_CASE(4)
    case 5: ODE_PLAIN_CASE(5)
    case 6: ODE_PLAIN_CASE(6)
    default: ODE_PLAIN_CASE(7)
    }
#undef ODE_PLAIN_CASE
}
#undef ODE_T1
#undef ODE_T2
#undef ODE_T3
#undef ODE_T4
#undef ODE_T5
#undef ODE_T6
#undef ODE_T7
#undef K

#endif
