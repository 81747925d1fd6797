/* Internals of the dense engine shared by its source files. */
#ifndef SV_DENSE_INTERNAL_H
#define SV_DENSE_INTERNAL_H

#include <complex.h>
#include <stddef.h>

#include "solvent/dense.h"

/* Default block size: large enough that the trailing update's gemm calls
 * (K = nb) run near peak (single-threaded they do from nb = 128 on), small
 * enough that the panel work on the look-ahead thread does not become the
 * critical path too early: that happens once the trailing matrix is below
 * about 6·nb rows, so smaller orders take the smaller block. Chosen by
 * measurement (see docs/dense.md). */
static inline int sv_dense_default_nb(int n) { return n <= 3000 ? 128 : 192; }

struct sv_dense_sym {
    sv_ctx *ctx;
    int n, nb;
    sv_dense_type type;
    size_t size; /* elements */
    void *data;
};

size_t sv_dense_elem_bytes(sv_dense_type t);
/* sv_dense_factor_create with a switch for the fallback's singularity test
 * (reciprocal condition estimate below the precision's ε). Mixed precision
 * turns it off: single factors of a matrix singular to single precision are
 * still a good preconditioner for GMRES refinement. */
sv_status sv_dense_factor_create_ex(sv_ctx *ctx, sv_dense_sym *a, const sv_dense_factor_options *opts,
                                    sv_dense_factor **out, sv_dense_factor_info *info, int check_rcond);
/* Default pivot threshold of the factorisation for a type. */
double sv_dense_default_threshold(sv_dense_type type);




/* Blocked LDLᵀ kernels (ldlt_tmpl.h), _z double, _c single. scratch holds
 * 3 · nb² elements, task0 one int per block column
 * plus one. factor: on a tiny pivot (|d| < thr,
 * measured as max(|Re|, |Im|)) sets *bad_index ≥ 0 and *kfail, the first
 * block column not factored. recover: undo block columns before kfail. */
void sv_dense_ldlt_factor_z(sv_dense_sym *a, double thr, void *scratch, int *task0, int nthreads, int use3m, int stop_midway, sv_ctx *ctx, int *bad_index, int *kfail,
                            double *minpiv);
void sv_dense_ldlt_factor_c(sv_dense_sym *a, double thr, void *scratch, int *task0, int nthreads, int use3m, int stop_midway, sv_ctx *ctx, int *bad_index, int *kfail,
                            double *minpiv);
void sv_dense_ldlt_recover_z(sv_dense_sym *a, int kfail, void *scratch);
void sv_dense_ldlt_recover_c(sv_dense_sym *a, int kfail, void *scratch);
void sv_dense_ldlt_solve_z(const sv_dense_sym *a, int nrhs, void *x, int ldx);
void sv_dense_ldlt_solve_c(const sv_dense_sym *a, int nrhs, void *x, int ldx);
/* The same on a team of nthreads for few right-hand sides; part: workspace
 * of nthreads · nb · nrhs elements of the factor's type. */
void sv_dense_ldlt_solve_team_z(const sv_dense_sym *a, int nrhs, void *x, int ldx, int nthreads, void *part);
void sv_dense_ldlt_solve_team_c(const sv_dense_sym *a, int nrhs, void *x, int ldx, int nthreads, void *part);
/* Right-hand sides up to which a solve runs on Solvent's own team (or one
 * thread) rather than multi-threaded OpenBLAS, and the order from which the
 * team is used. */
#define SV_DENSE_SOLVE_1T_MAX_RHS 8
#define SV_DENSE_SOLVE_TEAM_MIN_N 512
/* max(|Re|, |Im|) over the stored entries, or −1 with the position of a
 * non-finite entry. */
double sv_dense_amax_z(const sv_dense_sym *a, int *bi, int *bj);
double sv_dense_amax_c(const sv_dense_sym *a, int *bi, int *bj);
#endif
