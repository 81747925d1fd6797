/* Test and benchmark patterns for the sparse engine: the structures named in
 * the issue, each built from its definition (references in the .c file). */
#ifndef SV_TEST_SPARSE_PATTERNS_H
#define SV_TEST_SPARSE_PATTERNS_H

#include <stdint.h>

#include "solvent/sparse.h"

/* Coordinate lists are built into a growable buffer, then turned into a
 * pattern (NULL on failure). */
sv_sparse_pattern *tp_tridiagonal(int n);
sv_sparse_pattern *tp_block_tridiagonal(int nblocks, int bs);
/* 2D Brusselator on an N × N periodic grid, species interleaved:
 * index of (u or v) at point (i, j) = 2(iN + j) + s. */
sv_sparse_pattern *tp_brusselator2d(int N);
/* n × n with the diagonal and `per_row` distinct random off-diagonal
 * columns per row. */
sv_sparse_pattern *tp_random(int n, int per_row, uint64_t seed);
sv_sparse_pattern *tp_eb50_declared(void);
sv_sparse_pattern *tp_eb50_true(void);
sv_sparse_pattern *tp_pollu(void);
sv_sparse_pattern *tp_hires(void);

/* EB-50 variable indices (docs/ode.md, EB-50). */
enum { EB_ETA = 0, EB_DC = 1, EB_DB = 2, EB_VB = 3, EB_T0 = 4, EB_E2 = 20, EB_N0 = 34 };

#endif
