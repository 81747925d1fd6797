#include "support_synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include <lapacke.h>

#include "sv_test.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Random orthogonal matrix: Q of the QR factorisation of a random matrix. */
static void random_orthogonal(int n, sv_test_rng *r, double *q)
{
    double *tau = malloc(sizeof(double) * n);
    for (int i = 0; i < n * n; i++) q[i] = sv_test_uniform(r);
    LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, q, n, tau);
    LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, q, n, tau);
    free(tau);
}

/* A = Q·diag(d)·Qᵀ */
static void spectral(int n, const double *q, const double *d, double *a)
{
    double *qd = calloc((size_t)n * n, sizeof(double));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) qd[j * n + i] = q[j * n + i] * d[j];
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, qd, n, q, n, 0.0, a, n);
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) a[j * n + i] = a[i * n + j] = 0.5 * (a[j * n + i] + a[i * n + j]);
    free(qd);
}

/* Pack the lower triangle by walking block columns in order, as the dense
 * engine's layout contract describes (written independently of the
 * module's offset formula). */
double *synth_pack(int n, int nb, const double *full)
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
                /* upper part of the diagonal block is workspace: poison it */
                p[o++] = i >= j ? full[j * n + i] : NAN;
            }
    }
    return p;
}

double complex synth_coef(void *user, int k, double f)
{
    const synth *s = user;
    double w = 2 * M_PI * f;
    if (k == 0) return I * w;
    if (k == 1) return -I / w;
    return s->r0 * (1.0 + I) * sqrt(f / 1e9);
}

void synth_create(synth *s, int n, int nb, int p, int resonances, double r0, unsigned long long seed)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->nb = nb;
    s->p = p;
    s->r0 = r0;
    sv_test_rng r;
    sv_test_rng_seed(&r, seed);
    double *q = calloc((size_t)n * n, sizeof(double)), *d = calloc((size_t)n, sizeof(double));
    s->Lf = malloc(sizeof(double) * n * n);
    s->Pf = malloc(sizeof(double) * n * n);
    random_orthogonal(n, &r, q);
    for (int i = 0; i < n; i++) d[i] = 1e-9 * (1.25 + 0.75 * sv_test_uniform(&r)); /* 0.5–2 nH */
    spectral(n, q, d, s->Lf);
    random_orthogonal(n, &r, q);
    int nnull = n / 3;
    for (int i = 0; i < n; i++) {
        double f;
        if (i < nnull)
            f = 0.0; /* the null space: loop currents */
        else if (i < nnull + resonances)
            f = 2e9 + 7e9 * (i - nnull + 0.5) / resonances;
        else
            f = pow(10.0, 10.5 + 1.5 * (0.5 + 0.5 * sv_test_uniform(&r))); /* 30–1000 GHz */
        double w = 2 * M_PI * f;
        d[i] = 1e-9 * w * w;
    }
    spectral(n, q, d, s->Pf);
    free(q);
    free(d);
    s->Lp = synth_pack(n, nb, s->Lf);
    s->Pp = synth_pack(n, nb, s->Pf);
    /* G: rooftop overlap pattern on a chain, 2/3 on the diagonal, 1/6 beside. */
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
    for (int j = 0; j < p; j++) {
        s->ports[j] = (int)((long)j * (n - 1) / (p > 1 ? p - 1 : 1));
        s->b[(size_t)j * n + s->ports[j]] = 1.0;
    }
    s->terms[0] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = s->Lp, .nb = nb};
    s->terms[1] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = s->Pp, .nb = nb};
    s->terms[2] = (sv_sweep_term){.kind = SV_SWEEP_TERM_CSR, .rowptr = s->rowptr, .colind = s->colind,
                                  .values = s->gval};
    sv_status st = sv_sweep_model_create(NULL, n, 3, s->terms, synth_coef, s, p, s->b, n, &s->model);
    assert_int_equal(st, SV_OK);
}

void synth_destroy(synth *s)
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

void synth_full_z(const synth *s, double f, double complex *z)
{
    int n = s->n;
    double complex c0 = synth_coef((void *)s, 0, f), c1 = synth_coef((void *)s, 1, f),
                   c2 = synth_coef((void *)s, 2, f);
    for (int i = 0; i < n * n; i++) z[i] = c0 * s->Lf[i] + c1 * s->Pf[i];
    for (int i = 0; i < n; i++)
        for (int e = s->rowptr[i]; e < s->rowptr[i + 1]; e++) z[(size_t)s->colind[e] * n + i] += c2 * s->gval[e];
}

void synth_solve(const synth *s, double f, double complex *x)
{
    int n = s->n;
    double complex *z = malloc(sizeof(double complex) * n * n);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    synth_full_z(s, f, z);
    for (int i = 0; i < n * s->p; i++) x[i] = s->b[i];
    lapack_int rc = LAPACKE_zgesv(LAPACK_COL_MAJOR, n, s->p, z, n, ipiv, x, n);
    assert_int_equal(rc, 0);
    free(z);
    free(ipiv);
}

double synth_residual_of(int n, int p, const double complex *z, const double *b, const double complex *x)
{
    double worst = 0;
    for (int j = 0; j < p; j++) {
        double ss = 0, bb = 0;
        for (int i = 0; i < n; i++) {
            long double complex acc = 0;
            for (int k = 0; k < n; k++) acc += (long double complex)z[(size_t)k * n + i] * x[(size_t)j * n + k];
            acc -= b[(size_t)j * n + i];
            ss += (double)(creall(acc) * creall(acc) + cimagl(acc) * cimagl(acc));
            bb += b[(size_t)j * n + i] * b[(size_t)j * n + i];
        }
        double e = sqrt(ss / bb);
        if (e > worst) worst = e;
    }
    return worst;
}

double synth_true_residual(const synth *s, double f, const double complex *x)
{
    double complex *z = malloc(sizeof(double complex) * s->n * s->n);
    synth_full_z(s, f, z);
    double worst = synth_residual_of(s->n, s->p, z, s->b, x);
    free(z);
    return worst;
}

void synth_basis_x(const double *V, int n, int q, int p, const double complex *y, double complex *x)
{
    for (int j = 0; j < p; j++)
        for (int r = 0; r < n; r++) {
            double complex acc = 0;
            for (int c = 0; c < q; c++) acc += V[(size_t)c * n + r] * y[(size_t)j * q + c];
            x[(size_t)j * n + r] = acc;
        }
}

void synth_port_y(const synth *s, const double complex *x, double complex *y)
{
    int n = s->n, p = s->p;
    for (int j = 0; j < p; j++)
        for (int a = 0; a < p; a++) {
            double complex acc = 0;
            for (int i = 0; i < n; i++) acc += s->b[(size_t)a * n + i] * x[(size_t)j * n + i];
            y[j * p + a] = acc;
        }
}

/* S = (I − z0·Y)(I + z0·Y)⁻¹, i.e. (I + z0·Y)ᵀ·Sᵀ = (I − z0·Y)ᵀ. */
void s_from_y(int p, const double complex *y, double z0, double complex *sm)
{
    double complex a[64], b[64];
    lapack_int ipiv[8];
    for (int j = 0; j < p; j++)
        for (int i = 0; i < p; i++) {
            double complex zy = z0 * y[i * p + j]; /* transposed */
            a[j * p + i] = (i == j) + zy;
            b[j * p + i] = (i == j) - zy;
        }
    lapack_int rc = LAPACKE_zgesv(LAPACK_COL_MAJOR, p, p, a, p, ipiv, b, p);
    assert_int_equal(rc, 0);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < p; i++) sm[j * p + i] = b[i * p + j];
}

double max_singular(int p, const double complex *a)
{
    double complex c[64];
    double sv[8], superb[8];
    memcpy(c, a, sizeof(double complex) * p * p);
    lapack_int rc = LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', p, p, c, p, sv, NULL, 1, NULL, 1, superb);
    assert_int_equal(rc, 0);
    return sv[0];
}
