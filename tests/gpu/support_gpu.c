#include "support_gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include <lapacke.h>

#include "sv_test.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void random_orthogonal(int n, sv_test_rng *r, double *q)
{
    double *tau = malloc(sizeof(double) * n);
    for (int i = 0; i < n * n; i++) q[i] = sv_test_uniform(r);
    LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, q, n, tau);
    LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, q, n, tau);
    free(tau);
}

/* A = Q·diag(d)·Qᵀ, symmetrised */
static void spectral(int n, const double *q, const double *d, double *a)
{
    double *qd = calloc((size_t)n * n, sizeof(double));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) qd[(size_t)j * n + i] = q[(size_t)j * n + i] * d[j];
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, qd, n, q, n, 0.0, a, n);
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++)
            a[(size_t)j * n + i] = a[(size_t)i * n + j] = 0.5 * (a[(size_t)j * n + i] + a[(size_t)i * n + j]);
    free(qd);
}

double *gsynth_pack(int n, int nb, const double *full)
{
    size_t total = 0;
    for (int c0 = 0; c0 < n; c0 += nb) total += (size_t)(n - c0 < nb ? n - c0 : nb) * (n - c0);
    double *p = malloc(sizeof(double) * total);
    size_t o = 0;
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb;
        for (int jj = 0; jj < w; jj++)
            for (int i = c0; i < n; i++) {
                int j = c0 + jj;
                p[o++] = i >= j ? full[(size_t)j * n + i] : NAN; /* workspace: poisoned */
            }
    }
    return p;
}

double complex gsynth_coef(void *user, int k, double f)
{
    const gsynth *s = user;
    double w = 2 * M_PI * f;
    if (k == 0) return I * w;
    if (k == 1) return -I / w;
    return s->r0 * (1.0 + I) * sqrt(f / 1e9);
}

void gsynth_create(gsynth *s, int n, int nb, int p, int resonances, double r0, unsigned long long seed)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->nb = nb;
    s->p = p;
    s->r0 = r0;
    sv_test_rng r;
    sv_test_rng_seed(&r, seed);
    double *q = calloc((size_t)n * n, sizeof(double)), *d = calloc((size_t)n, sizeof(double));
    s->Lf = malloc(sizeof(double) * (size_t)n * n);
    s->Pf = malloc(sizeof(double) * (size_t)n * n);
    random_orthogonal(n, &r, q);
    for (int i = 0; i < n; i++) d[i] = 1e-9 * (1.25 + 0.75 * sv_test_uniform(&r));
    spectral(n, q, d, s->Lf);
    random_orthogonal(n, &r, q);
    int nnull = n / 3;
    for (int i = 0; i < n; i++) {
        double f;
        if (i < nnull)
            f = 0.0;
        else if (i < nnull + resonances)
            f = 2e9 + 7e9 * (i - nnull + 0.5) / resonances;
        else
            f = pow(10.0, 10.5 + 1.5 * (0.5 + 0.5 * sv_test_uniform(&r)));
        double w = 2 * M_PI * f;
        d[i] = 1e-9 * w * w;
    }
    spectral(n, q, d, s->Pf);
    free(q);
    free(d);
    s->Lp = gsynth_pack(n, nb, s->Lf);
    s->Pp = gsynth_pack(n, nb, s->Pf);
    s->rowptr = malloc(sizeof(int) * (n + 1));
    s->colind = malloc(sizeof(int) * 3 * n);
    s->gval = malloc(sizeof(double) * 3 * n);
    int e = 0;
    for (int i = 0; i < n; i++) {
        s->rowptr[i] = e;
        for (int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            s->colind[e] = j;
            s->gval[e++] = j == i ? 2.0 / 3.0 : 1.0 / 6.0;
        }
    }
    s->rowptr[n] = e;
    s->b = calloc((size_t)n * p, sizeof(double));
    for (int j = 0; j < p; j++) s->b[(size_t)j * n + (int)((long)j * (n - 1) / (p > 1 ? p - 1 : 1))] = 1.0;
    s->terms[0] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = s->Lp, .nb = nb};
    s->terms[1] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = s->Pp, .nb = nb};
    s->terms[2] = (sv_sweep_term){.kind = SV_SWEEP_TERM_CSR, .rowptr = s->rowptr, .colind = s->colind,
                                  .values = s->gval};
    assert_int_equal(sv_sweep_model_create(NULL, n, 3, s->terms, gsynth_coef, s, p, s->b, n, &s->model), SV_OK);
}

void gsynth_destroy(gsynth *s)
{
    sv_sweep_model_destroy(s->model);
    free(s->Lf);
    free(s->Pf);
    free(s->Lp);
    free(s->Pp);
    free(s->rowptr);
    free(s->colind);
    free(s->gval);
    free(s->b);
}

void gsynth_full_z(const gsynth *s, double f, double complex *z)
{
    int n = s->n;
    double complex c0 = gsynth_coef((void *)s, 0, f), c1 = gsynth_coef((void *)s, 1, f),
                   c2 = gsynth_coef((void *)s, 2, f);
    for (size_t i = 0; i < (size_t)n * n; i++) z[i] = c0 * s->Lf[i] + c1 * s->Pf[i];
    for (int i = 0; i < n; i++)
        for (int e = s->rowptr[i]; e < s->rowptr[i + 1]; e++) z[(size_t)s->colind[e] * n + i] += c2 * s->gval[e];
}

void gsynth_solve(const gsynth *s, double f, double complex *x)
{
    int n = s->n;
    double complex *z = malloc(sizeof(double complex) * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    gsynth_full_z(s, f, z);
    for (int i = 0; i < n * s->p; i++) x[i] = s->b[i];
    assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, n, s->p, z, n, ipiv, x, n), 0);
    free(z);
    free(ipiv);
}

double rel_diff(int len, const double complex *a, const double complex *b)
{
    double d = 0, m = 0;
    for (int i = 0; i < len; i++) {
        d = fmax(d, cabs(a[i] - b[i]));
        m = fmax(m, cabs(b[i]));
    }
    return m > 0 ? d / m : d;
}
