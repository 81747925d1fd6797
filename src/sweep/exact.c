/* Exact solves of Z(f)·X = B: the dispatcher and the LAPACK reference
 * solver (a full double copy of Z and zgesv: independent of the dense
 * engine, used by tests and as the `lapack` precision). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <lapacke.h>

#include "sweep_internal.h"

#include "solvent/dense.h"

sv_status sv_sweep_deriv_rhs(const sv_sweep_model *m, double freq, int order, const double complex *x, int ldx,
                             const double complex *dx, int lddx, double complex *r, int ldr)
{
    int n = m->n, p = m->nrhs, nt = m->nterms;
    double complex d[3][nt];
    sv_status st = sv_sweep_coef_derivs(m, freq, d[0], d[1], order >= 3 ? d[2] : NULL);
    if (st) return st;
    double complex *t = sv_alloc(m->ctx, sizeof(double complex) * (size_t)n * (size_t)p, "derivative workspace");
    if (!t) return sv_last_status();
    for (int j = 0; j < p; j++) memset(r + (size_t)j * ldr, 0, sizeof(double complex) * (size_t)n);
    /* r = −Σ_{i=1..order} C(order, i)·Z⁽ⁱ⁾·X⁽ᵒʳᵈᵉʳ⁻ⁱ⁾ */
    double binom = 1;
    for (int i = 1; i <= order && !st; i++) {
        binom = binom * (order - i + 1) / i;
        int g = order - i; /* derivative of X that Z⁽ⁱ⁾ multiplies */
        const double complex *xg = g ? dx + (size_t)(g - 1) * lddx * p : x;
        st = sv_sweep_apply_coefs(m, d[i - 1], p, xg, g ? lddx : ldx, t, n);
        for (int j = 0; !st && j < p; j++)
            for (int e = 0; e < n; e++) r[(size_t)j * ldr + e] -= binom * t[(size_t)j * n + e];
    }
    sv_free(m->ctx, t);
    return st;
}

sv_status sv_sweep_exact_lapack(sv_ctx *ctx, const sv_sweep_model *m, double freq, double complex *x, int ldx,
                                int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info)
{
    double t0 = sv_time_now();
    int n = m->n, p = m->nrhs;
    size_t nn;
    if (sv_size_mul((size_t)n, (size_t)n, &nn) || nn > SIZE_MAX / sizeof(double complex))
        return sv_error(SV_ERR_ARG, "n = %d: the full matrix would overflow size_t", n);
    double complex *z = sv_alloc(ctx, nn * sizeof(double complex), "full Z(f) for the LAPACK solve");
    lapack_int *ipiv = sv_alloc(ctx, sizeof(lapack_int) * (size_t)n, "LAPACK pivots");
    if (!z || !ipiv) {
        sv_status st = sv_last_status();
        sv_free(ctx, z);
        sv_free(ctx, ipiv);
        return st;
    }
    sv_status st = sv_sweep_form_full(m, freq, z, n);
    if (!st) {
        for (int j = 0; j < p; j++)
            for (int i = 0; i < n; i++) x[(size_t)j * ldx + i] = m->b[(size_t)j * n + i];
        lapack_int rc = LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, z, n, ipiv);
        if (rc == 0) rc = LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, p, z, n, ipiv, x, ldx);
        if (rc > 0)
            st = sv_error(SV_ERR_SINGULAR, "Z(%g) is exactly singular (zero pivot %d of %d)", freq, (int)rc, n);
        else if (rc < 0)
            st = sv_error(SV_ERR_INTERNAL, "zgetrf/zgetrs argument %d rejected", (int)-rc);
    }
    for (int d = 1; !st && d <= nderiv; d++) {
        double complex *dd = dx + (size_t)(d - 1) * lddx * p;
        st = sv_sweep_deriv_rhs(m, freq, d, x, ldx, dx, lddx, dd, lddx);
        if (!st && LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, p, z, n, ipiv, dd, lddx))
            st = sv_error(SV_ERR_INTERNAL, "zgetrs failed on the derivative right-hand sides");
    }
    sv_free(ctx, z);
    sv_free(ctx, ipiv);
    if (st) return st;
    double berr = 0.0;
    st = sv_sweep_backward_error(m, freq, x, ldx, &berr);
    if (st) return st;
    if (info) {
        memset(info, 0, sizeof(*info));
        info->backward_error = berr;
        info->seconds = sv_time_now() - t0;
    }
    return SV_OK;
}

sv_status sv_sweep_solve_exact(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                               double complex *x, int ldx, sv_sweep_exact_info *info)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    if (!x) return sv_error(SV_ERR_ARG, "x is NULL");
    if (ldx < m->n) return sv_error(SV_ERR_ARG, "ldx = %d: expected >= n = %d", ldx, m->n);
    if (!isfinite(freq)) return sv_error(SV_ERR_NONFINITE, "frequency %g is not finite", freq);
    return sv_sweep_solve_exact_deriv(ctx, m, freq, precision, 0.0, x, ldx, 0, NULL, 0, info);
}

sv_status sv_sweep_solve_exact_deriv(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                                     double refine_tol, double complex *x, int ldx, int nderiv, double complex *dx,
                                     int lddx, sv_sweep_exact_info *info)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    if (!x) return sv_error(SV_ERR_ARG, "x is NULL");
    if (ldx < m->n) return sv_error(SV_ERR_ARG, "ldx = %d: expected >= n = %d", ldx, m->n);
    if (nderiv < 0 || nderiv > SV_SWEEP_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "nderiv = %d: expected 0 to %d", nderiv, SV_SWEEP_MAX_DERIV);
    if (nderiv > 0 && !dx) return sv_error(SV_ERR_ARG, "dx is NULL with nderiv = %d", nderiv);
    if (nderiv > 0 && lddx < m->n) return sv_error(SV_ERR_ARG, "lddx = %d: expected >= n = %d", lddx, m->n);
    if (!(refine_tol >= 0 && refine_tol < 1e-6))
        return sv_error(SV_ERR_ARG, "refine_tol = %g: expected 0 (default) or 0 < refine_tol < 1e-6", refine_tol);
    if (!isfinite(freq)) return sv_error(SV_ERR_NONFINITE, "frequency %g is not finite", freq);
    if (precision != SV_SWEEP_MIXED && precision != SV_SWEEP_DOUBLE && precision != SV_SWEEP_LAPACK)
        return sv_error(SV_ERR_ARG, "precision = %d: expected SV_SWEEP_MIXED, _DOUBLE or _LAPACK", (int)precision);
    sv_threads_saved section = sv_threads_apply(ctx); /* BLAS on this thread (threads.c) */
    sv_status st = precision == SV_SWEEP_LAPACK
                       ? sv_sweep_exact_lapack(ctx, m, freq, x, ldx, nderiv, dx, lddx, info)
                       : sv_sweep_exact_dense(ctx, m, freq, precision == SV_SWEEP_MIXED, refine_tol, x, ldx, nderiv,
                                              dx, lddx, info);
    sv_threads_restore(section);
    return st;
}

size_t sv_sweep_exact_bytes_k(int n, int nterms, int nrhs, int nb, sv_sweep_precision precision)
{
    if (n < 1 || nrhs < 1 || nterms < 1) return 0;
    size_t N = (size_t)n, P = (size_t)nrhs, K = (size_t)nterms, nn = N * N;
    size_t z = sizeof(double complex);
    /* Vectors (exact_dense.c, gmres.c), with all derivative groups: the
     * right-hand sides and the single-precision solve vectors, then the
     * larger of the block refinement (iterate, residuals, right-hand sides,
     * best iterate; the real/imaginary split and one product block per
     * term) and GMRES (Krylov and preconditioned vectors, residuals, the
     * real/imaginary split of a product, Hessenberg matrices and
     * rotations). */
    size_t w = P * (1 + SV_SWEEP_MAX_DERIV), nw = N * w;
    size_t vec = N * P * z + sv_dense_solve_work_bytes(n, (int)w);
    size_t refine = (3 * nw + N * P) * z + 2 * nw * (K + 1) * sizeof(double);
    size_t M = (size_t)SV_SWEEP_GMRES_M;
    size_t gmres = (2 * M + 4) * N * P * z + 4 * N * P * sizeof(double) + P * (M + 1) * (M + 3) * z;
    vec += refine > gmres ? refine : gmres;
    if (nb < 1) nb = 64;
    size_t packed = sv_dense_packed_size(n, nb);
    switch (precision) {
    case SV_SWEEP_MIXED: return packed * sizeof(float complex) + vec;
    case SV_SWEEP_DOUBLE: return packed * z + vec;
    case SV_SWEEP_LAPACK: return nn * z + N * sizeof(int) + vec;
    }
    return 0;
}

size_t sv_sweep_exact_bytes(int n, int nrhs, int nb, sv_sweep_precision precision)
{
    return sv_sweep_exact_bytes_k(n, 3, nrhs, nb, precision);
}
