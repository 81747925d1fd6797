/* Tiny systems (n ≤ 8) in full storage, W lanes: LU without pivoting and
 * the two triangular solves, written once for n and W that are
 * compile-time constants at each use (dense_small.c's per-(n, W) table and
 * the fused stepper, fused_rodas5p.c, which inlines them). Slot (i, j) =
 * i·n + j, lane w at slot·W + w; after the factor the diagonal holds
 * 1/U_ii (the sparse engine's convention). The operation order is that of
 * the sparse engine's up-looking LU on a full pattern (each entry receives
 * its updates in increasing k), so either factor of the same M rounds the
 * same. */
#ifndef SV_ODE_DENSE_SMALL_H
#define SV_ODE_DENSE_SMALL_H

#include <math.h>

#include "ode_internal.h"

/* Right-looking elimination in natural order; bad[w] is set (never
 * cleared) for a zero or non-finite pivot, and elimination goes on. */
ODE_INLINE void ode_dense_small_factor_nw(double *restrict a, unsigned char *bad, const int n, const int W)
{
    for (int k = 0; k < n; k++) {
        double dk[ODE_WMAX];
        for (int w = 0; w < W; w++) {
            double d = a[(k * n + k) * W + w];
            if (d == 0 || !isfinite(d)) bad[w] = 1;
            dk[w] = 1.0 / d;
            a[(k * n + k) * W + w] = dk[w];
        }
        for (int i = k + 1; i < n; i++) {
            double l[ODE_WMAX];
            for (int w = 0; w < W; w++) {
                l[w] = a[(i * n + k) * W + w] * dk[w];
                a[(i * n + k) * W + w] = l[w];
            }
            for (int j = k + 1; j < n; j++) {
                double u[ODE_WMAX], t[ODE_WMAX];
                for (int w = 0; w < W; w++) u[w] = a[(k * n + j) * W + w];
                for (int w = 0; w < W; w++) t[w] = a[(i * n + j) * W + w] - l[w] * u[w];
                for (int w = 0; w < W; w++) a[(i * n + j) * W + w] = t[w];
            }
        }
    }
}

/* x = M⁻¹ x with the factor a (forward, then backward substitution). */
ODE_INLINE void ode_dense_small_solve_nw(const double *restrict a, double *restrict x, const int n, const int W)
{
    double z[8][ODE_WMAX];
    _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {
        for (int w = 0; w < W; w++) z[i][w] = x[i * W + w];
        _Pragma("GCC unroll 8") for (int j = 0; j < i; j++)
            for (int w = 0; w < W; w++) z[i][w] -= a[(i * n + j) * W + w] * z[j][w];
    }
    _Pragma("GCC unroll 8") for (int i = n - 1; i >= 0; i--) {
        _Pragma("GCC unroll 8") for (int j = i + 1; j < n; j++)
            for (int w = 0; w < W; w++) z[i][w] -= a[(i * n + j) * W + w] * z[j][w];
        for (int w = 0; w < W; w++) z[i][w] *= a[(i * n + i) * W + w];
    }
    for (int i = 0; i < n; i++)
        for (int w = 0; w < W; w++) x[i * W + w] = z[i][w];
}

#endif
