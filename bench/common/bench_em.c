/* The anchors' full Z(f), formed from the planar model's terms. */
#include "bench_em.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

static void die(const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what, sv_last_error());
    exit(1);
}

/* z += c·A for a packed term (both triangles). */
static void add_packed(int n, const sv_sweep_term *t, double complex c, double complex *z)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int j = 0; j < n; j++) {
        const double *col = t->packed + sv_dense_packed_offset(n, t->nb, j, j) - j; /* col[i]: (i, j), i ≥ j */
        for (int i = j; i < n; i++) {
            double complex v = c * col[i];
            z[(size_t)j * n + i] += v;
            if (i != j) z[(size_t)i * n + j] += v;
        }
    }
}

/* z += c·A for a CSR term (both triangles stored). */
static void add_csr(int n, const sv_sweep_term *t, double complex c, double complex *z)
{
    for (int r = 0; r < n; r++)
        for (int e = t->rowptr[r]; e < t->rowptr[r + 1]; e++) z[(size_t)t->colind[e] * n + r] += c * t->values[e];
}

/* z += c·U·W·Uᵀ for a low-rank term: the two real products by BLAS, as a
 * user forming Z would write them, then added with the coefficient. */
static void add_lowrank(int n, const sv_sweep_term *t, double complex c, double complex *z)
{
    int r = t->rank;
    double *uw = malloc(sizeof(double) * (size_t)n * r), *full = malloc(sizeof(double) * (size_t)n * n);
    if (!uw || !full) die("low-rank term");
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, r, r, 1.0, t->u, n, t->core, r, 0.0, uw, n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, r, 1.0, uw, n, t->u, n, 0.0, full, n);
#pragma omp parallel for schedule(static)
    for (size_t e = 0; e < (size_t)n * n; e++) z[e] += c * full[e];
    free(full);
    free(uw);
}

void bench_em_full_z(const sv_em_affine *a, double freq_hz, double complex *z)
{
    int n = sv_em_model_unknowns(sv_em_affine_em(a));
    int nterms = sv_sweep_model_nterms(sv_em_affine_model(a));
    memset(z, 0, sizeof(double complex) * (size_t)n * n);
    for (int k = 0; k < nterms; k++) {
        sv_sweep_term t;
        if (sv_em_affine_term(a, k, &t)) die("model term");
        double complex c = sv_em_affine_coefficient(a, k, freq_hz);
        if (t.kind == SV_SWEEP_TERM_PACKED) add_packed(n, &t, c, z);
        else if (t.kind == SV_SWEEP_TERM_LOWRANK) add_lowrank(n, &t, c, z);
        else add_csr(n, &t, c, z);
    }
}

double *bench_em_band(int nf, const sv_em_sweep *sw)
{
    sv_em_sweep b = *sw;
    b.points = nf;
    double *f = malloc(sizeof(double) * (size_t)nf);
    if (!f || sv_em_band_frequencies(&b, f)) die("band");
    return f;
}
