/* Tiny systems (n ≤ 8) in full storage, W lanes: LU without pivoting and
 * the two triangular solves with n and W compile-time constants, fully
 * unrolled. Slot (i, j) = i·n + j, lane w at slot·W + w; after the factor
 * the diagonal holds 1/U_ii (the sparse engine's convention).
 *
 * The kernels themselves are in dense_small.h.
 *
 * Why this special case next to the sparse engine: for such systems the
 * engine's table-driven batch kernels spend more on walking their schedule
 * than on arithmetic (measured 1.6–2.9× slower: docs/ode.md). lin.c uses
 * these kernels only when the factor is at least 3/4 full. A nearly full
 * pattern is padded to full: the explicit zeros change no finite value
 * (x − l·0 = x, and a zero multiplier stays zero). */
#include "dense_small.h"

/* One instance per (n, W): the constants let the compiler unroll and
 * vectorise the lane loops without remainder code. */
#define DENSE_SMALL(N, WC)                                                                            \
    static void dfactor_##N##_##WC(double *restrict a, unsigned char *bad)                           \
    {                                                                                                 \
        ode_dense_small_factor_nw(a, bad, N, WC);                                                     \
    }                                                                                                 \
    static void dsolve_##N##_##WC(const double *restrict a, double *restrict x)                      \
    {                                                                                                 \
        ode_dense_small_solve_nw(a, x, N, WC);                                                        \
    }
#define DENSE_SMALL_W(N) DENSE_SMALL(N, 1) DENSE_SMALL(N, 2) DENSE_SMALL(N, 4) DENSE_SMALL(N, 8)
DENSE_SMALL_W(2)
DENSE_SMALL_W(3)
DENSE_SMALL_W(4)
DENSE_SMALL_W(5)
DENSE_SMALL_W(6)
DENSE_SMALL_W(7)
DENSE_SMALL_W(8)
#define DENSE_ROW(N) {dfactor_##N##_1, dfactor_##N##_2, dfactor_##N##_4, dfactor_##N##_8}
#define DENSE_SROW(N) {dsolve_##N##_1, dsolve_##N##_2, dsolve_##N##_4, dsolve_##N##_8}
static void (*const dense_factor_tab[9][4])(double *, unsigned char *) = {
    {0}, {0}, DENSE_ROW(2), DENSE_ROW(3), DENSE_ROW(4), DENSE_ROW(5), DENSE_ROW(6), DENSE_ROW(7), DENSE_ROW(8)};
static void (*const dense_solve_tab[9][4])(const double *, double *) = {
    {0}, {0}, DENSE_SROW(2), DENSE_SROW(3), DENSE_SROW(4), DENSE_SROW(5), DENSE_SROW(6), DENSE_SROW(7),
    DENSE_SROW(8)};
static int widx(int W) { return W == 1 ? 0 : W == 2 ? 1 : W == 4 ? 2 : 3; }

void ode_dense_small_factor(int n, int W, double *buf, unsigned char *bad)
{
    dense_factor_tab[n][widx(W)](buf, bad);
}

void ode_dense_small_solve(int n, int W, const double *buf, double *x)
{
    dense_solve_tab[n][widx(W)](buf, x);
}
