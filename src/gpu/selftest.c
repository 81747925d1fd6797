/* The start-up self-test: the device computes products of random terms with
 * random vectors in each residual path (native double, double-float) and a
 * solve with its single-precision factors; the CPU computes the same in
 * long double. A path whose error exceeds what its arithmetic allows is
 * disabled (the tool we are measured against met a shader compiler that
 * simplified (a + b) − a to b and silently zeroed its error terms: exactly
 * what this catches, see tests/gpu/test_selftest.c).
 *
 * Errors are relative to the size of the sums, max_i Σ_j |a_ij·x_j|: double
 * gives about n·2⁻⁵³, double-float about 2⁻⁴⁶ (Joldes–Muller–Popescu bounds
 * for the sum and product, accumulated), broken error terms about 2⁻²⁴;
 * the threshold SV_GPU_SELFTEST_TOL = 1e-12 sits between. The solve is
 * checked by its normwise backward error, computed on the CPU in double
 * (sv_dense_backward_error_residual):
 * single precision with n = 97 gives about 1e-7, and 1e-4 catches factors
 * that are wrong. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"
#include "df_kernel.h"

#define ST_N 97
#define ST_NB 16
#define ST_COLS 3
#define ST_SOLVE_TOL 1e-4

typedef struct rng {
    unsigned long long s;
} rng;

static double uni(rng *r) /* [−1, 1) */
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(r->s >> 11) / 4503599627370496.0 - 1.0;
}

/* The test problem: two packed terms and a CSR one, random vectors, all in
 * one zeroed allocation (the packed terms' upper workspace stays zero). */
typedef struct st_data {
    int n, nb, nc, nt, nnz;
    size_t e;
    void *mem;
    double *pk, *val, *x, *y;
    int *rp, *ci;
    long double *yr;
    double complex *zf, *w; /* full Z; the solve's right-hand sides, solution and residual */
    float complex *v;
    sv_gpu_term_view tv[3];
} st_data;

/* The next piece of *at, `bytes` long, 16-byte aligned. */
static void *carve(char **at, size_t bytes)
{
    void *p = *at;
    *at += (bytes + 15) / 16 * 16;
    return p;
}

static sv_status st_alloc(sv_ctx *ctx, st_data *d)
{
    memset(d, 0, sizeof *d);
    d->n = ST_N;
    d->nb = ST_NB;
    d->nc = ST_COLS;
    d->nt = 3;
    d->e = sv_dense_packed_size(d->n, d->nb);
    d->nnz = 3 * d->n - 2;
    size_t n = (size_t)d->n, nc = (size_t)d->nc, nnz = (size_t)d->nnz;
    size_t sizes[10] = {2 * d->e * sizeof(double), nnz * sizeof(double), (n + 1) * sizeof(int), nnz * sizeof(int),
                        n * nc * sizeof(double), n * nc * (size_t)d->nt * sizeof(double), 2 * n * sizeof(long double),
                        n * nc * sizeof(float complex), n * n * sizeof(double complex),
                        3 * n * nc * sizeof(double complex)};
    size_t total = 0;
    for (int i = 0; i < 10; i++) total += (sizes[i] + 15) / 16 * 16;
    d->mem = sv_calloc(ctx, total, 1, "self-test problem");
    if (!d->mem) return sv_last_status();
    char *at = d->mem;
    d->pk = carve(&at, sizes[0]);
    d->val = carve(&at, sizes[1]);
    d->rp = carve(&at, sizes[2]);
    d->ci = carve(&at, sizes[3]);
    d->x = carve(&at, sizes[4]);
    d->y = carve(&at, sizes[5]);
    d->yr = carve(&at, sizes[6]);
    d->v = carve(&at, sizes[7]);
    d->zf = carve(&at, sizes[8]);
    d->w = carve(&at, sizes[9]);
    return SV_OK;
}

/* term 0: diagonally dominant (so the solve check has a well-conditioned
 * matrix), O(1); term 1: O(1e-9) (the planar model's L is in nanohenries);
 * term 2: tridiagonal CSR. Values are not representable in float. */
static void st_terms(st_data *d, rng *r)
{
    int n = d->n, nb = d->nb;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            size_t o = sv_dense_packed_offset(n, nb, i, j);
            d->pk[o] = uni(r) + (i == j ? n : 0);
            d->pk[d->e + o] = 1e-9 * uni(r);
        }
    int q = 0, *rp = d->rp, *ci = d->ci;
    for (int i = 0; i < n; i++) {
        rp[i] = q;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) {
                ci[q] = j;
                d->val[q++] = j == i ? 2.0 + uni(r) * 0.1 : 0.0;
            }
    }
    rp[n] = q;
    for (int i = 0; i < n; i++) /* symmetric off-diagonals */
        for (int a = rp[i]; a < rp[i + 1]; a++)
            if (ci[a] == i + 1) {
                double w = 0.5 * uni(r);
                d->val[a] = w;
                for (int c = rp[i + 1]; c < rp[i + 2]; c++)
                    if (ci[c] == i) d->val[c] = w;
            }
    for (size_t i = 0; i < (size_t)n * d->nc; i++) d->x[i] = uni(r) * (1.0 + 1e-3 * uni(r));
    d->tv[0] = (sv_gpu_term_view){.kind = SV_SWEEP_TERM_PACKED, .packed = d->pk};
    d->tv[1] = (sv_gpu_term_view){.kind = SV_SWEEP_TERM_PACKED, .packed = d->pk + d->e};
    d->tv[2] = (sv_gpu_term_view){.kind = SV_SWEEP_TERM_CSR, .rowptr = rp, .colind = ci, .values = d->val,
                                  .nnz = (size_t)d->nnz};
}

/* y_ref = A·x in long double for a term (full symmetric access through the
 * packed layout or CSR); s = Σ|a_ij·x_j| per row. */
static void reference(const sv_gpu_term_view *t, int n, int nb, const double *x, long double *y, long double *s)
{
    for (int i = 0; i < n; i++) y[i] = s[i] = 0;
    if (t->kind == SV_SWEEP_TERM_PACKED) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                long double a = t->packed[sv_dense_packed_offset(n, nb, i, j)];
                y[i] += a * x[j];
                s[i] += fabsl(a * x[j]);
            }
    } else {
        for (int i = 0; i < n; i++)
            for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++) {
                long double a = t->values[e];
                y[i] += a * x[t->colind[e]];
                s[i] += fabsl(a * x[t->colind[e]]);
            }
    }
}

/* One residual path's products against the long double reference:
 * max |y − y_ref| / max Σ|a_ij·x_j| (∞ if the device failed). */
static double st_products(sv_gpu_backend *b, st_data *d, int mode)
{
    int n = d->n, nc = d->nc;
    if (b->products(b, (sv_gpu_residual)mode, nc, d->x, d->y)) {
        sv_clear_error(); /* handled: the path failed its test */
        return INFINITY;
    }
    double worst = 0;
    for (int k = 0; k < d->nt; k++)
        for (int c = 0; c < nc; c++) {
            reference(&d->tv[k], n, d->nb, d->x + (size_t)c * n, d->yr, d->yr + n);
            long double scale = 0;
            for (int i = 0; i < n; i++) scale = fmaxl(scale, d->yr[n + i]);
            for (int i = 0; i < n; i++) {
                double e = (double)(fabsl((long double)d->y[((size_t)k * nc + c) * n + i] - d->yr[i]) / scale);
                if (!(e <= worst)) worst = e;
            }
        }
    return worst;
}

/* The single-precision factors of Z = c_0·A0 + c_1·A1 + c_2·G on a random
 * complex block: the normwise backward error of the device's solution, with
 * Z full in double on the CPU (∞ if the device failed; why in message). */
static double st_solve(sv_gpu_backend *b, st_data *d, rng *r, char *message, size_t len)
{
    int n = d->n, nb = d->nb, nc = d->nc;
    const double complex c[3] = {1.0 + 0.2 * I, 1e9 * I, 0.1};
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t o = sv_dense_packed_offset(n, nb, i, j);
            d->zf[(size_t)j * n + i] = c[0] * d->pk[o] + c[1] * d->pk[d->e + o];
        }
    for (int i = 0; i < n; i++)
        for (int a = d->rp[i]; a < d->rp[i + 1]; a++) d->zf[(size_t)d->ci[a] * n + i] += c[2] * d->val[a];
    size_t nv = (size_t)n * nc;
    for (size_t i = 0; i < nv; i++) d->v[i] = (float)uni(r) + (float)uni(r) * I;
    double complex *bw = d->w, *xw = bw + nv, *rw = xw + nv;
    for (size_t i = 0; i < nv; i++) bw[i] = d->v[i];
    sv_status st = b->form(b, c);
    if (!st) st = b->factor(b, 0.0);
    if (!st) st = b->solve(b, nc, d->v);
    if (st) {
        snprintf(message, len, "device solve failed: %s", sv_last_error());
        sv_clear_error(); /* handled: the factorisation failed its test */
        return INFINITY;
    }
    double znorm = 0;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += cabs(d->zf[(size_t)j * n + i]);
        znorm = fmax(znorm, s);
    }
    for (size_t i = 0; i < nv; i++) xw[i] = d->v[i];
    for (int cc = 0; cc < nc; cc++)
        for (int i = 0; i < n; i++) {
            double complex s = bw[(size_t)cc * n + i];
            for (int j = 0; j < n; j++) s -= d->zf[(size_t)j * n + i] * xw[(size_t)cc * n + j];
            rw[(size_t)cc * n + i] = s;
        }
    return sv_dense_backward_error_residual(n, nc, znorm, rw, n, xw, n, bw, n, NULL);
}

sv_status sv_gpu_selftest(sv_ctx *ctx, sv_gpu_backend *b, int modes, unsigned long long seed,
                          sv_gpu_selftest_result *res)
{
    if (!b || !res) return sv_error(SV_ERR_ARG, "backend or result is NULL");
    memset(res, 0, sizeof(*res));
    res->double_ok = res->df_ok = -1;
    st_data d;
    sv_status st = st_alloc(ctx, &d);
    rng r = {seed ? seed : 0x5eed};
    if (!st) st_terms(&d, &r);
    sv_gpu_problem prob = {.n = d.n, .nb = d.nb, .nterms = d.nt, .terms = d.tv};
    if (!st) st = b->upload(b, &prob, modes, d.nc);
    if (st) {
        sv_free(ctx, d.mem);
        return st;
    }
    if (modes & 1) {
        res->double_err = st_products(b, &d, 1);
        res->double_ok = res->double_err <= SV_GPU_SELFTEST_TOL;
    }
    if (modes & 2) {
        res->df_err = st_products(b, &d, 2);
        res->df_ok = res->df_err <= SV_GPU_SELFTEST_TOL;
    }
    res->solve_err = st_solve(b, &d, &r, res->message, sizeof res->message);
    res->solve_ok = res->solve_err <= ST_SOLVE_TOL;
    if (!res->message[0])
        snprintf(res->message, sizeof res->message, "double %s (%.1e), double-float %s (%.1e), solve %s (%.1e)",
                 res->double_ok < 0 ? "not run" : res->double_ok ? "passed" : "FAILED", res->double_err,
                 res->df_ok < 0 ? "not run" : res->df_ok ? "passed" : "FAILED", res->df_err,
                 res->solve_ok ? "passed" : "FAILED", res->solve_err);
    sv_free(ctx, d.mem);
    return SV_OK;
}
