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
 * checked by its normwise backward error, computed on the CPU in double:
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

sv_status sv_gpu_selftest(sv_ctx *ctx, sv_gpu_backend *b, int modes, unsigned long long seed,
                          sv_gpu_selftest_result *res)
{
    if (!b || !res) return sv_error(SV_ERR_ARG, "backend or result is NULL");
    memset(res, 0, sizeof(*res));
    res->double_ok = res->df_ok = -1;
    const int n = ST_N, nb = ST_NB, nc = ST_COLS, nt = 3;
    size_t e = sv_dense_packed_size(n, nb);
    int nnz = 3 * n - 2;
    double *pk = sv_calloc(ctx, 2 * e, sizeof(double), "self-test terms");
    double *val = sv_alloc(ctx, sizeof(double) * (size_t)nnz, "self-test terms");
    int *rp = sv_alloc(ctx, sizeof(int) * (size_t)(n + 1), "self-test terms");
    int *ci = sv_alloc(ctx, sizeof(int) * (size_t)nnz, "self-test terms");
    double *x = sv_alloc(ctx, sizeof(double) * (size_t)n * nc, "self-test vectors");
    double *y = sv_alloc(ctx, sizeof(double) * (size_t)n * nc * nt, "self-test vectors");
    long double *yr = sv_alloc(ctx, sizeof(long double) * 2 * (size_t)n, "self-test vectors");
    float complex *v = sv_alloc(ctx, sizeof(float complex) * (size_t)n * nc, "self-test vectors");
    double complex *zf = sv_alloc(ctx, sizeof(double complex) * (size_t)n * n, "self-test matrix");
    sv_status st = SV_OK;
    if (!pk || !val || !rp || !ci || !x || !y || !yr || !v || !zf) {
        st = sv_last_status();
        goto out;
    }
    rng r = {seed ? seed : 0x5eed};
    /* term 0: diagonally dominant (so the solve check has a well-conditioned
     * matrix), O(1); term 1: O(1e-9) (the planar model's L is in nanohenries);
     * term 2: tridiagonal CSR. Values are not representable in float. */
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            size_t o = sv_dense_packed_offset(n, nb, i, j);
            pk[o] = uni(&r) + (i == j ? n : 0);
            pk[e + o] = 1e-9 * uni(&r);
        }
    int q = 0;
    for (int i = 0; i < n; i++) {
        rp[i] = q;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) {
                ci[q] = j;
                val[q++] = j == i ? 2.0 + uni(&r) * 0.1 : 0.0;
            }
    }
    rp[n] = q;
    for (int i = 0; i < n; i++) /* symmetric off-diagonals */
        for (int a = rp[i]; a < rp[i + 1]; a++)
            if (ci[a] == i + 1) {
                double w = 0.5 * uni(&r);
                val[a] = w;
                for (int c = rp[i + 1]; c < rp[i + 2]; c++)
                    if (ci[c] == i) val[c] = w;
            }
    for (size_t i = 0; i < (size_t)n * nc; i++) x[i] = uni(&r) * (1.0 + 1e-3 * uni(&r));
    sv_gpu_term_view tv[3] = {{.kind = SV_SWEEP_TERM_PACKED, .packed = pk},
                              {.kind = SV_SWEEP_TERM_PACKED, .packed = pk + e},
                              {.kind = SV_SWEEP_TERM_CSR, .rowptr = rp, .colind = ci, .values = val, .nnz = (size_t)nnz}};
    sv_gpu_problem prob = {.n = n, .nb = nb, .nterms = nt, .terms = tv};
    st = b->upload(b, &prob, modes, nc);
    if (st) goto out;

    for (int mode = 1; mode <= 2; mode++) {
        if (!(modes & mode)) continue;
        st = b->products(b, (sv_gpu_residual)mode, nc, x, y);
        double worst = st ? INFINITY : 0;
        for (int k = 0; !st && k < nt; k++)
            for (int c = 0; c < nc; c++) {
                reference(&tv[k], n, nb, x + (size_t)c * n, yr, yr + n);
                long double scale = 0;
                for (int i = 0; i < n; i++) scale = fmaxl(scale, yr[n + i]);
                for (int i = 0; i < n; i++) {
                    double d = (double)(fabsl((long double)y[((size_t)k * nc + c) * n + i] - yr[i]) / scale);
                    if (!(d <= worst)) worst = d;
                }
            }
        if (st) sv_clear_error();
        st = SV_OK;
        int ok = worst <= SV_GPU_SELFTEST_TOL;
        if (mode == 1) {
            res->double_ok = ok;
            res->double_err = worst;
        } else {
            res->df_ok = ok;
            res->df_err = worst;
        }
    }

    /* the single-precision factors: Z = (1 + 0.2j)·A0 + 1e9j·A1 + 0.1·G */
    double complex c[3] = {1.0 + 0.2 * I, 1e9 * I, 0.1};
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t o = sv_dense_packed_offset(n, nb, i, j);
            zf[(size_t)j * n + i] = c[0] * pk[o] + c[1] * pk[e + o];
        }
    for (int i = 0; i < n; i++)
        for (int a = rp[i]; a < rp[i + 1]; a++) zf[(size_t)ci[a] * n + i] += c[2] * val[a];
    for (size_t i = 0; i < (size_t)n * nc; i++) v[i] = (float)uni(&r) + (float)uni(&r) * I;
    double bn[ST_COLS], xn[ST_COLS];
    for (int cc = 0; cc < nc; cc++) {
        bn[cc] = 0;
        for (int i = 0; i < n; i++) bn[cc] = fmax(bn[cc], cabsf(v[(size_t)cc * n + i]));
    }
    float complex *b0 = (float complex *)(y); /* keep a copy of the right-hand sides */
    memcpy(b0, v, sizeof(float complex) * (size_t)n * nc);
    st = b->form(b, c);
    if (!st) st = b->factor(b, 0.0);
    if (!st) st = b->solve(b, nc, v);
    if (st) {
        res->solve_ok = 0;
        res->solve_err = INFINITY;
        snprintf(res->message, sizeof res->message, "device solve failed: %s", sv_last_error());
        sv_clear_error();
        st = SV_OK;
    } else {
        double znorm = 0, worst = 0;
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += cabs(zf[(size_t)j * n + i]);
            znorm = fmax(znorm, s);
        }
        for (int cc = 0; cc < nc; cc++) {
            double rn = 0;
            xn[cc] = 0;
            for (int i = 0; i < n; i++) xn[cc] = fmax(xn[cc], cabsf(v[(size_t)cc * n + i]));
            for (int i = 0; i < n; i++) {
                double complex s = b0[(size_t)cc * n + i];
                for (int j = 0; j < n; j++) s -= zf[(size_t)j * n + i] * (double complex)v[(size_t)cc * n + j];
                rn = fmax(rn, cabs(s));
            }
            double be = rn / (znorm * xn[cc] + bn[cc]);
            if (!(be <= worst)) worst = be;
        }
        res->solve_err = worst;
        res->solve_ok = worst <= ST_SOLVE_TOL;
    }
    if (!res->message[0])
        snprintf(res->message, sizeof res->message, "double %s (%.1e), double-float %s (%.1e), solve %s (%.1e)",
                 res->double_ok < 0 ? "not run" : res->double_ok ? "passed" : "FAILED", res->double_err,
                 res->df_ok < 0 ? "not run" : res->df_ok ? "passed" : "FAILED", res->df_err,
                 res->solve_ok ? "passed" : "FAILED", res->solve_err);
out:
    sv_free(ctx, pk);
    sv_free(ctx, val);
    sv_free(ctx, rp);
    sv_free(ctx, ci);
    sv_free(ctx, x);
    sv_free(ctx, y);
    sv_free(ctx, yr);
    sv_free(ctx, v);
    sv_free(ctx, zf);
    return st;
}
