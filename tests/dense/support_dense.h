/* Test matrices for the dense engine, built independently of the code
 * under test (full column-major storage, LAPACK where a factorisation is
 * needed). */
#ifndef SV_TEST_SUPPORT_DENSE_H
#define SV_TEST_SUPPORT_DENSE_H

#include <complex.h>

#include "sv_test.h"

/* Random complex symmetric n × n (column-major, lda = n), entries uniform in
 * the unit square, plus `shift` added to the diagonal (shift ≈ n makes it
 * well conditioned and safe without pivoting). Caller frees with free(). */
double complex *td_random_sym(sv_test_rng *r, int n, double complex shift);
/* Complex symmetric A = U·diag(s)·Uᵀ with U a random unitary (Takagi form):
 * singular values log-spaced from 1 down to 1/cond, so cond₂(A) = cond. */
double complex *td_sym_with_cond(sv_test_rng *r, int n, double cond);
/* Random n × p complex matrix. */
double complex *td_random(sv_test_rng *r, int n, int p);
/* Y = A·X with full A by a plain triple loop (long double accumulation). */
void td_matmul_full(int n, int p, const double complex *a, const double complex *x, double complex *y);
/* Max over columns of ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞), with full A. */
double td_backward_error(int n, int p, const double complex *a, const double complex *x, const double complex *b);
/* ‖A‖∞ of a full matrix. */
double td_norm_inf(int n, const double complex *a);
/* Solve with LAPACK's LU (zgetrf/zgetrs) on a copy: the reference solution. */
int td_lapack_lu_solve(int n, int p, const double complex *a, const double complex *b, double complex *x);
/* Solve with LAPACK's symmetric Bunch–Kaufman (zsytrf/zsytrs) on a copy. */
int td_lapack_sy_solve(int n, int p, const double complex *a, const double complex *b, double complex *x);
/* max |x − y| / max |y| over all entries. */
double td_rel_diff(int n, int p, const double complex *x, const double complex *y);

/* Complex symmetric matrix whose LDLᵀ (without pivoting) has a zero pivot
 * at index p (0 ≤ p < n) while staying nonsingular and well conditioned:
 * A = [B, C; Cᵀ, Cᵀ·B⁻¹·C + F] with F_00 = 0, so the Schur complement after
 * p steps is F. */
double complex *td_sym_zero_pivot(sv_test_rng *r, int n, int p);
/* Copy a full matrix into a new packed C64 matrix of block size nb. */
struct sv_dense_sym;
struct sv_dense_sym *td_packed(const double complex *a, int n, int nb, int single);

#endif
