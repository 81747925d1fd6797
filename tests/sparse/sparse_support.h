/* Helpers shared by the sparse tests (support_*.c). */
#ifndef SV_TEST_SPARSE_SUPPORT_H
#define SV_TEST_SPARSE_SUPPORT_H

#include "solvent/sparse.h"
#include "sparse_patterns.h"
#include "sv_test.h"

/* Random values on the pattern's entries, strictly diagonally dominant by
 * rows and columns (malloc'd, CSR order of the pattern). */
double *ts_random_values(const sv_sparse_pattern *p, sv_test_rng *rng);
/* Dense row-major n × n matrix of the pattern's values (malloc'd). */
double *ts_dense(const sv_sparse_pattern *p, const double *values);
/* LAPACK dgetrf of P·A·Pᵀ (row-major, malloc'd); asserts no row exchange. */
double *ts_lapack_lu_permuted(const sv_sparse_lu *lu, const double *a);
/* x = A⁻¹ b by dgetrf + dgetrs. */
void ts_lapack_solve(int n, const double *a, const double *b, double *x);

#endif
