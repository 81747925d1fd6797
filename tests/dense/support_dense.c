#include "support_dense.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double complex crand(sv_test_rng *r)
{
    double re = sv_test_uniform(r);
    double im = sv_test_uniform(r);
    return CMPLX(re, im);
}

double complex *td_random_sym(sv_test_rng *r, int n, double complex shift)
{
    double complex *a = malloc(sizeof *a * (size_t)(n > 0 ? n : 1) * (size_t)(n > 0 ? n : 1));
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double complex v = crand(r);
            if (i == j) v += shift;
            a[(size_t)j * n + i] = v;
            a[(size_t)i * n + j] = v;
        }
    return a;
}

double complex *td_random(sv_test_rng *r, int n, int p)
{
    size_t len = (size_t)(n > 0 ? n : 1) * (size_t)(p > 0 ? p : 1);
    double complex *x = malloc(sizeof *x * len);
    for (size_t i = 0; i < (size_t)n * (size_t)p; i++) x[i] = crand(r);
    return x;
}

double complex *td_sym_with_cond(sv_test_rng *r, int n, double cond)
{
    double complex *u = td_random(r, n, n);
    double complex *tau = malloc(sizeof *tau * (size_t)n);
    LAPACKE_zgeqrf(LAPACK_COL_MAJOR, n, n, u, n, tau);
    LAPACKE_zungqr(LAPACK_COL_MAJOR, n, n, n, u, n, tau);
    double complex *us = malloc(sizeof *us * (size_t)n * n);
    for (int j = 0; j < n; j++) {
        double s = n > 1 ? pow(cond, -(double)j / (n - 1)) : 1.0;
        for (int i = 0; i < n; i++) us[(size_t)j * n + i] = u[(size_t)j * n + i] * s;
    }
    double complex *a = malloc(sizeof *a * (size_t)n * n);
    const double complex one = 1, zero = 0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, &one, us, n, u, n, &zero, a, n);
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) a[(size_t)i * n + j] = a[(size_t)j * n + i];
    free(u);
    free(us);
    free(tau);
    return a;
}

void td_matmul_full(int n, int p, const double complex *a, const double complex *x, double complex *y)
{
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++) {
            long double re = 0, im = 0;
            for (int k = 0; k < n; k++) {
                double complex aa = a[(size_t)k * n + i], xx = x[(size_t)c * n + k];
                re += (long double)creal(aa) * creal(xx) - (long double)cimag(aa) * cimag(xx);
                im += (long double)creal(aa) * cimag(xx) + (long double)cimag(aa) * creal(xx);
            }
            y[(size_t)c * n + i] = CMPLX((double)re, (double)im);
        }
}

double td_norm_inf(int n, const double complex *a)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < n; k++) s += cabs(a[(size_t)k * n + i]);
        if (s > m) m = s;
    }
    return m;
}

double td_backward_error(int n, int p, const double complex *a, const double complex *x, const double complex *b)
{
    double na = td_norm_inf(n, a), worst = 0;
    double complex *ax = malloc(sizeof *ax * (size_t)(n > 0 ? n : 1) * (size_t)(p > 0 ? p : 1));
    td_matmul_full(n, p, a, x, ax);
    for (int c = 0; c < p; c++) {
        double rn = 0, xn = 0, bn = 0;
        for (int i = 0; i < n; i++) {
            size_t o = (size_t)c * n + i;
            rn = fmax(rn, cabs(b[o] - ax[o]));
            xn = fmax(xn, cabs(x[o]));
            bn = fmax(bn, cabs(b[o]));
        }
        double den = na * xn + bn;
        double e = den > 0 ? rn / den : rn;
        if (!(e <= worst)) worst = e; /* NaN propagates */
    }
    free(ax);
    return worst;
}

int td_lapack_lu_solve(int n, int p, const double complex *a, const double complex *b, double complex *x)
{
    double complex *f = malloc(sizeof *f * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)n);
    memcpy(f, a, sizeof *f * (size_t)n * n);
    memcpy(x, b, sizeof *x * (size_t)n * p);
    int info = LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, f, n, ipiv);
    if (info == 0) info = LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, p, f, n, ipiv, x, n);
    free(f);
    free(ipiv);
    return info;
}

int td_lapack_sy_solve(int n, int p, const double complex *a, const double complex *b, double complex *x)
{
    double complex *f = malloc(sizeof *f * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)n);
    memcpy(f, a, sizeof *f * (size_t)n * n);
    memcpy(x, b, sizeof *x * (size_t)n * p);
    double complex q;
    int info = LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, f, n, ipiv, &q, -1);
    /* OpenBLAS 0.3.21's zsytrf reads past its workspace on pivoting
     * matrices (shared/reference/anchors.md): give it n extra elements. */
    lapack_int lwork = (lapack_int)creal(q);
    double complex *work = malloc(sizeof *work * (size_t)(lwork + n + 1));
    if (info == 0) info = LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, f, n, ipiv, work, lwork);
    if (info == 0) info = LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', n, p, f, n, ipiv, x, n);
    free(work);
    free(f);
    free(ipiv);
    return info;
}

double td_rel_diff(int n, int p, const double complex *x, const double complex *y)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < (size_t)n * p; i++) {
        d = fmax(d, cabs(x[i] - y[i]));
        m = fmax(m, cabs(y[i]));
    }
    return m > 0 ? d / m : d;
}

double complex *td_sym_zero_pivot(sv_test_rng *r, int n, int p)
{
    int q = n - p;
    double complex *a = td_random_sym(r, n, 0);
    /* B: leading p × p, well conditioned. */
    for (int i = 0; i < p; i++) a[(size_t)i * n + i] += 2.0 * p + 2;
    /* F = random symmetric + shift, with F_00 = 0. */
    double complex *f = td_random_sym(r, q, 2.0 * q + 2);
    f[0] = 0;
    if (p > 0) {
        /* S = Cᵀ·B⁻¹·C with C = A(0:p, p:n). */
        double complex *bb = malloc(sizeof *bb * (size_t)p * p), *y = malloc(sizeof *y * (size_t)p * q);
        lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)p);
        for (int j = 0; j < p; j++)
            for (int i = 0; i < p; i++) bb[(size_t)j * p + i] = a[(size_t)j * n + i];
        for (int j = 0; j < q; j++)
            for (int i = 0; i < p; i++) y[(size_t)j * p + i] = a[(size_t)(p + j) * n + i];
        LAPACKE_zgesv(LAPACK_COL_MAJOR, p, q, bb, p, ipiv, y, p); /* Y = B⁻¹·C */
        for (int j = 0; j < q; j++)
            for (int i = j; i < q; i++) {
                double complex s = 0;
                for (int k = 0; k < p; k++) s += a[(size_t)(p + i) * n + k] * y[(size_t)j * p + k];
                f[(size_t)j * q + i] += s;
                if (i != j) f[(size_t)i * q + j] = f[(size_t)j * q + i];
            }
        free(bb);
        free(y);
        free(ipiv);
    }
    for (int j = 0; j < q; j++)
        for (int i = 0; i < q; i++) a[(size_t)(p + j) * n + p + i] = f[(size_t)j * q + i];
    free(f);
    return a;
}

#include "solvent/dense.h"

struct sv_dense_sym *td_packed(const double complex *a, int n, int nb, int single)
{
    sv_dense_sym *z = NULL, *c = NULL;
    if (sv_dense_sym_create(NULL, n, SV_DENSE_C64, nb, &z)) return NULL;
    sv_dense_sym_from_full(z, a, n > 0 ? n : 1);
    if (!single) return z;
    sv_dense_sym_create(NULL, n, SV_DENSE_C32, nb, &c);
    sv_dense_sym_convert(z, c);
    sv_dense_sym_destroy(z);
    return c;
}
