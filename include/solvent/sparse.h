/* Solvent sparse engine: an LU compiled for one sparsity pattern, refactored
 * many times with new numbers, and Jacobian colouring.
 *
 * Workflow (done once per pattern):
 *   sv_sparse_pattern_from_csr / _from_coo / _from_mask  -> validated pattern
 *   sv_sparse_lu_analyse                                  -> ordering + exact symbolic LU
 *   sv_sparse_color                                       -> colouring for J recovery
 * Then, millions of times:
 *   write values into the LU buffer (sv_sparse_lu_load / _load_shifted, or a
 *   colour-wise recovery straight into the slots), sv_sparse_lu_factor,
 *   sv_sparse_lu_solve; or the _batch variants over W matrices at once.
 *
 * The pattern must be a SUPERSET of the true nonzeros of every matrix
 * loaded: the symbolic analysis reserves slots only for the entries it is
 * told about and their fill, so a nonzero outside the pattern has nowhere to
 * go (it is dropped, and the factors are those of a different matrix).
 *
 * Buffer layout: one array of nnz(L+U) values in CSR order of the permuted
 * matrix P·A·Pᵀ: in each row, L entries strictly left of the diagonal, then
 * the diagonal, then U to its right. After factorisation the diagonal slot
 * holds 1/U_ii. Batched buffers are slot-major: value of slot s for lane w
 * at s·W + w (likewise vectors: entry i of lane w at i·W + w). */
#ifndef SOLVENT_SPARSE_H
#define SOLVENT_SPARSE_H

#include <stdint.h>

#include "solvent/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- patterns ----------------------------------------------------------- */
typedef struct sv_sparse_pattern sv_sparse_pattern;

/* n × n pattern in CSR (row pointers of length n+1, column indices). Indices
 * are checked to be in range; duplicates are merged; columns sorted; the
 * diagonal is added where missing. */
sv_status sv_sparse_pattern_from_csr(sv_ctx *ctx, int n, const int *rowptr, const int *colind,
                                     sv_sparse_pattern **out);
/* From nnz coordinate pairs (0-based). */
sv_status sv_sparse_pattern_from_coo(sv_ctx *ctx, int n, int nnz, const int *rows, const int *cols,
                                     sv_sparse_pattern **out);
/* From a dense row-major n × n 0/1 mask (non-zero byte = entry). */
sv_status sv_sparse_pattern_from_mask(sv_ctx *ctx, int n, const unsigned char *mask,
                                      sv_sparse_pattern **out);
/* The full n × n pattern (no structure known). */
sv_status sv_sparse_pattern_dense(sv_ctx *ctx, int n, sv_sparse_pattern **out);
void sv_sparse_pattern_destroy(sv_sparse_pattern *p);

int sv_sparse_pattern_n(const sv_sparse_pattern *p);
int sv_sparse_pattern_nnz(const sv_sparse_pattern *p);
const int *sv_sparse_pattern_rowptr(const sv_sparse_pattern *p);  /* n+1 */
const int *sv_sparse_pattern_colind(const sv_sparse_pattern *p);  /* nnz, sorted per row */
/* Entry index of (i, j) in CSR order, or -1 when (i, j) is not in the pattern. */
int sv_sparse_pattern_find(const sv_sparse_pattern *p, int i, int j);

/* ---- symbolic analysis -------------------------------------------------- */
typedef enum sv_sparse_ordering {
    SV_SPARSE_ORDER_AMD = 0,     /* SuiteSparse AMD on the pattern of S + Sᵀ */
    SV_SPARSE_ORDER_NATURAL = 1  /* the given order */
} sv_sparse_ordering;

typedef struct sv_sparse_lu sv_sparse_lu;

/* Order the pattern and compute the exact L+U pattern, the slot maps and the
 * operation schedule. The analysis keeps no pointer to `pattern`. */
sv_status sv_sparse_lu_analyse(sv_ctx *ctx, const sv_sparse_pattern *pattern, sv_sparse_ordering ordering,
                               sv_sparse_lu **out);
void sv_sparse_lu_destroy(sv_sparse_lu *lu);

int sv_sparse_lu_n(const sv_sparse_lu *lu);
int sv_sparse_lu_nnz(const sv_sparse_lu *lu);           /* slots = nnz(L + U) */
long long sv_sparse_lu_flops(const sv_sparse_lu *lu);   /* multiply-adds per factor + solve */
/* perm[k] = original index of row/column k of P·A·Pᵀ. */
const int *sv_sparse_lu_perm(const sv_sparse_lu *lu);
/* Slot in the buffer of pattern entry e (CSR order of the pattern analysed). */
const int *sv_sparse_lu_entry_slot(const sv_sparse_lu *lu);
/* Slot of the original diagonal entry (i, i), i in original numbering. */
const int *sv_sparse_lu_diag_slot(const sv_sparse_lu *lu);
/* Pattern hash: identifies the slot layout and operation sequence, used to
 * match generated kernels to an analysis. */
uint64_t sv_sparse_lu_hash(const sv_sparse_lu *lu);

/* ---- loading values ----------------------------------------------------- */
/* buf = A: clear every slot (fill included), then scatter the pattern's
 * values (CSR order of the analysed pattern). */
void sv_sparse_lu_load(const sv_sparse_lu *lu, const double *values, double *buf);
/* buf = shift·I − J, J given as pattern values: what M = I/(hγ) − J needs. */
void sv_sparse_lu_load_shifted(const sv_sparse_lu *lu, const double *values, double shift, double *buf);

/* ---- numeric kernels (no pivoting) -------------------------------------- */
/* Factor in place. Returns 0, or 1 + the (permuted) row of the first zero or
 * non-finite pivot; the factorisation then still completes and the result
 * carries inf/NaN, never a crash. */
int sv_sparse_lu_factor(const sv_sparse_lu *lu, double *buf);
/* x = A⁻¹ b with b and x in original numbering; x may alias b. work: n doubles. */
void sv_sparse_lu_solve(const sv_sparse_lu *lu, const double *buf, const double *b, double *x, double *work);

/* Single precision versions (same slots and operation order). */
void sv_sparse_lu_load_f32(const sv_sparse_lu *lu, const double *values, float *buf);
void sv_sparse_lu_load_shifted_f32(const sv_sparse_lu *lu, const double *values, double shift, float *buf);
int sv_sparse_lu_factor_f32(const sv_sparse_lu *lu, float *buf);
void sv_sparse_lu_solve_f32(const sv_sparse_lu *lu, const float *buf, const float *b, float *x, float *work);

/* Batches of W matrices sharing the pattern, slot-major (see above). W is 1,
 * 2, 4 or 8. flags[w] receives lane w's factor result (as for the scalar
 * kernel); flags may be NULL. b, x, work: n·W values, slot-major. */
sv_status sv_sparse_lu_factor_batch(const sv_sparse_lu *lu, int W, double *buf, int *flags);
sv_status sv_sparse_lu_solve_batch(const sv_sparse_lu *lu, int W, const double *buf, const double *b, double *x,
                                   double *work);
sv_status sv_sparse_lu_factor_batch_f32(const sv_sparse_lu *lu, int W, float *buf, int *flags);
sv_status sv_sparse_lu_solve_batch_f32(const sv_sparse_lu *lu, int W, const float *buf, const float *b, float *x,
                                       float *work);

/* ---- colouring ---------------------------------------------------------- */
typedef struct sv_sparse_coloring sv_sparse_coloring;

/* Colour the column intersection graph (columns sharing a row get different
 * colours), trying several orderings and keeping the fewest colours. */
sv_status sv_sparse_color(sv_ctx *ctx, const sv_sparse_pattern *pattern, sv_sparse_coloring **out);
void sv_sparse_coloring_destroy(sv_sparse_coloring *c);
int sv_sparse_coloring_count(const sv_sparse_coloring *c);
const int *sv_sparse_coloring_colors(const sv_sparse_coloring *c);   /* colour of each column */
/* SV_OK when every colour group is structurally orthogonal, else SV_ERR_PATTERN. */
sv_status sv_sparse_coloring_check(const sv_sparse_coloring *c, const sv_sparse_pattern *pattern);
/* Recovery: jv = J·d_c, d_c the 0/1 seed of colour c (original numbering).
 * For every pattern entry (i, j) with colour(j) = c: buf[slot(i, j)] += alpha·jv[i].
 * (alpha = −1 builds −J; add the shift on the diagonal slots afterwards.) */
void sv_sparse_recover_color(const sv_sparse_coloring *c, const sv_sparse_lu *lu, int color, const double *jv,
                             double alpha, double *buf);
/* Same into pattern-ordered values: values[e] = jv[i] for entries e = (i, j) of colour c. */
void sv_sparse_recover_color_values(const sv_sparse_coloring *c, const sv_sparse_pattern *pattern, int color,
                                    const double *jv, double *values);

#ifdef __cplusplus
}
#endif
#endif
