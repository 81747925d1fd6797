/* The blocked LDLᵀ kernels (ldlt_tmpl.h) in complex single precision. */
#include "dense_internal.h"

#define T float complex
#define R float
#define FN(x) x##_c
#define BLAS(x) cblas_c##x
#define CSQRT(x) csqrtf(x)
#define ABS1(x) fmaxf(fabsf(crealf(x)), fabsf(cimagf(x)))

#include "ldlt_tmpl.h"

void sv_dense_ldlt_factor_c(sv_dense_sym *a, double thr, void *scratch, int *task0, int nthreads, int use3m, int stop_midway, sv_ctx *ctx, int *bad_index, int *kfail,
                           double *minpiv)
{
    R mp = (R)*minpiv;
    FN(ldlt_factor)(a, (R)thr, scratch, task0, nthreads, use3m, stop_midway, ctx, bad_index, kfail, &mp);
    *minpiv = mp;
}

void sv_dense_ldlt_recover_c(sv_dense_sym *a, int kfail, void *scratch) { FN(ldlt_recover)(a, kfail, scratch); }

void sv_dense_ldlt_solve_c(const sv_dense_sym *a, int nrhs, void *x, int ldx) { FN(ldlt_solve)(a, nrhs, x, ldx); }

void sv_dense_ldlt_solve_team_c(const sv_dense_sym *a, int nrhs, void *x, int ldx, int nthreads, void *part)
{
    FN(ldlt_solve_team)(a, nrhs, x, ldx, nthreads, part);
}

double sv_dense_amax_c(const sv_dense_sym *a, int *bi, int *bj) { return FN(amax)(a, bi, bj); }

