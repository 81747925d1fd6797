/* The normwise backward error: the one definition every refinement stops on
 * and reports (Higham, Accuracy and Stability of Numerical Algorithms, 2nd
 * ed., §7.1, with ∞-norms and ‖Z‖∞ bounded by the caller). */
#include <math.h>

#include "dense_internal.h"

/* max |v_i|, NaN if an entry is NaN (it must not pass for a small one) */
static double colmax(int n, const double complex *v)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double a = cabs(v[i]);
        if (isnan(a)) return a;
        if (a > m) m = a;
    }
    return m;
}

double sv_dense_backward_error_residual(int n, int ncols, double norm_inf, const double complex *r, int ldr,
                                        const double complex *x, int ldx, const double complex *b, int ldb,
                                        double *per_col)
{
    double worst = 0;
    for (int c = 0; c < ncols; c++) {
        double rn = colmax(n, r + (size_t)c * ldr), xn = colmax(n, x + (size_t)c * ldx),
               bn = colmax(n, b + (size_t)c * ldb);
        double den = norm_inf * xn + bn;
        double e = den > 0 ? rn / den : (rn > 0 ? INFINITY : 0);
        if (isnan(rn) || isnan(xn) || isnan(bn)) e = NAN;
        if (per_col) per_col[c] = e;
        if (!(e <= worst) && !isnan(worst)) worst = e; /* NaN stays */
    }
    return worst;
}

sv_status sv_dense_backward_error(const sv_dense_operator *op, int nrhs, const double complex *b, int ldb,
                                  const double complex *x, int ldx, double *berr)
{
    if (!op || !op->residual || !berr)
        return sv_error(SV_ERR_ARG, "sv_dense_backward_error: NULL %s", !berr ? "berr" : "operator or residual");
    const int n = op->n;
    if (n < 0) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: op->n = %d: expected >= 0", n);
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: nrhs = %d: expected >= 0", nrhs);
    if (ldb < (n > 1 ? n : 1) || ldx < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_backward_error: ldb = %d, ldx = %d: expected >= n = %d", ldb, ldx, n);
    *berr = 0;
    if (n == 0 || nrhs == 0) return SV_OK;
    if (!b || !x) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: NULL %s", b ? "x" : "b");
    double complex *r = sv_alloc(NULL, sizeof *r * (size_t)n * nrhs, "residual");
    if (!r) return sv_last_status();
    sv_status st = op->residual(op->user, nrhs, x, ldx, b, ldb, r, n);
    if (!st) *berr = sv_dense_backward_error_residual(n, nrhs, op->norm_inf, r, n, x, ldx, b, ldb, NULL);
    sv_free(NULL, r);
    return st;
}
