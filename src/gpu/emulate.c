/* The CPU emulation of the device backend: the same algorithms as the CUDA
 * backend (cuda/backend.cu) on the same data layout, with CBLAS in place of
 * cuBLAS and the df_kernel.h arithmetic compiled for the CPU, so that the
 * blocked factorisation, the host-side refinement loop, the self-test and
 * the fallbacks are exercised on every machine. Not a fast path: the tests
 * and the self-test's own tests use it; nothing else does.
 *
 * Blocked right-looking LDLᵀ without pivoting of the complex symmetric
 * (Zᵀ = Z, not Hermitian) packed matrix, block column k (columns c0 … c0+w−1,
 * stored rows c0 … n−1 with leading dimension n − c0):
 *   1. A11 = L11·D1·L11ᵀ by the unblocked algorithm (the device's small
 *      diagonal-block kernel);
 *   2. the panel A21 ← A21·L11⁻ᵀ = L21·D1 (trsm, right, lower, transposed,
 *      unit), copied to W, then scaled by D1⁻¹ to give L21;
 *   3. every later block column J: A(cJ:, J) −= W(cJ:, :)·L21(J, :)ᵀ (gemm
 *      with the second operand transposed, not conjugated).
 * (Golub & Van Loan, Matrix Computations, 4th ed., §4.1.2 and §3.2.9 for
 * the blocked LDLᵀ/LU pattern.) */
#include <math.h>
#include <string.h>
#include <cblas.h>

#include "gpu_internal.h"
#include "df_kernel.h"

typedef struct emu {
    sv_ctx *ctx;
    sv_gpu_emu_options opt;
    const sv_gpu_emu_kernels *k;
    sv_gpu_problem p;
    sv_gpu_term_view *terms;
    int modes, max_cols;
    size_t e;
    float **hi, **lo;          /* per term: double-float copies (packed or CSR values) */
    float complex *z;          /* packed Z(f), then its factors */
    float complex *w;          /* panel copy, n × nb */
    float *xh, *xl;            /* one column as pairs */
    unsigned long long rng;
    int solves;
} emu;

static void emu_free(emu *E)
{
    if (E->hi)
        for (int k = 0; k < E->p.nterms; k++) {
            sv_free(E->ctx, E->hi[k]);
            sv_free(E->ctx, E->lo[k]);
        }
    sv_free(E->ctx, E->hi);
    sv_free(E->ctx, E->lo);
    sv_free(E->ctx, E->terms);
    sv_free(E->ctx, E->z);
    sv_free(E->ctx, E->w);
    sv_free(E->ctx, E->xh);
    sv_free(E->ctx, E->xl);
    E->hi = E->lo = NULL;
    E->terms = NULL;
    E->z = E->w = NULL;
    E->xh = E->xl = NULL;
}

static sv_status emu_upload(sv_gpu_backend *b, const sv_gpu_problem *p, int modes, int max_cols)
{
    emu *E = b->st;
    emu_free(E);
    if (E->opt.fail_upload)
        return sv_error(SV_ERR_BUDGET, "emulated device: out of device memory uploading %d terms of order %d",
                        p->nterms, p->n);
    E->p = *p;
    E->modes = modes;
    E->max_cols = max_cols;
    E->e = sv_dense_packed_size(p->n, p->nb);
    size_t n = (size_t)p->n;
    E->terms = sv_alloc(E->ctx, sizeof(sv_gpu_term_view) * (size_t)p->nterms, "emulated device: terms");
    E->hi = sv_calloc(E->ctx, (size_t)p->nterms, sizeof(float *), "emulated device: term pairs");
    E->lo = sv_calloc(E->ctx, (size_t)p->nterms, sizeof(float *), "emulated device: term pairs");
    E->z = sv_alloc(E->ctx, sizeof(float complex) * E->e, "emulated device: Z(f)");
    E->w = sv_alloc(E->ctx, sizeof(float complex) * n * (size_t)p->nb, "emulated device: panel");
    E->xh = sv_alloc(E->ctx, sizeof(float) * n, "emulated device: vector pairs");
    E->xl = sv_alloc(E->ctx, sizeof(float) * n, "emulated device: vector pairs");
    if (!E->terms || !E->hi || !E->lo || !E->z || !E->w || !E->xh || !E->xl) goto fail;
    memcpy(E->terms, p->terms, sizeof(sv_gpu_term_view) * (size_t)p->nterms);
    E->p.terms = E->terms;
    if (modes & 2)
        for (int k = 0; k < p->nterms; k++) {
            const sv_gpu_term_view *t = &p->terms[k];
            size_t len = t->kind == SV_SWEEP_TERM_PACKED ? E->e : t->nnz;
            const double *src = t->kind == SV_SWEEP_TERM_PACKED ? t->packed : t->values;
            E->hi[k] = sv_alloc(E->ctx, sizeof(float) * (len ? len : 1), "emulated device: term pairs");
            E->lo[k] = sv_alloc(E->ctx, sizeof(float) * (len ? len : 1), "emulated device: term pairs");
            if (!E->hi[k] || !E->lo[k]) goto fail;
            for (size_t i = 0; i < len; i++) {
                double v = src[i];
                if (t->kind == SV_SWEEP_TERM_PACKED && isnan(v)) v = 0; /* workspace above the diagonal */
                E->hi[k][i] = (float)v;
                E->lo[k][i] = (float)(v - (double)E->hi[k][i]);
            }
        }
    return SV_OK;
fail: {
    sv_status st = sv_last_status();
    emu_free(E);
    return st;
}
}

static sv_status emu_form(sv_gpu_backend *b, const double complex *c)
{
    emu *E = b->st;
    int n = E->p.n, nb = E->p.nb;
    /* packed terms element by element in double, rounded once (as the CPU) */
    for (size_t o = 0; o < E->e; o++) {
        double complex s = 0;
        for (int k = 0; k < E->p.nterms; k++)
            if (E->p.terms[k].kind == SV_SWEEP_TERM_PACKED) s += c[k] * E->p.terms[k].packed[o];
        E->z[o] = (float complex)s;
    }
    for (int k = 0; k < E->p.nterms; k++) {
        const sv_gpu_term_view *t = &E->p.terms[k];
        if (t->kind != SV_SWEEP_TERM_CSR) continue;
        for (int i = 0; i < n; i++)
            for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++)
                if (t->colind[e] <= i) E->z[sv_dense_packed_offset(n, nb, i, t->colind[e])] += (float complex)(c[k] * t->values[e]);
    }
    return SV_OK;
}

/* uniform in [−1, 1) from a 64-bit LCG (for the noise option) */
static double emu_uniform(emu *E)
{
    E->rng = E->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(E->rng >> 11) / 4503599627370496.0 - 1.0;
}

/* Unblocked LDLᵀ of the w × w diagonal block (lower, leading dimension ld). */
static sv_status emu_diag_block(emu *E, float complex *a, int w, int ld, int c0, double pivot_min)
{
    for (int j = 0; j < w; j++) {
        float complex d = a[(size_t)j * ld + j];
        if (E->opt.factor_noise > 0) d *= (float)(1.0 + E->opt.factor_noise * emu_uniform(E));
        if (!(cabsf(d) >= pivot_min) || !isfinite(crealf(d)) || !isfinite(cimagf(d)))
            return sv_error(SV_ERR_SINGULAR, "pivot %d: |d| = %.3g below %.3g in single precision", c0 + j,
                            (double)cabsf(d), pivot_min);
        a[(size_t)j * ld + j] = d;
        /* A22 −= t·tᵀ/d with t = A(j+1:, j), then L(j+1:, j) = t/d */
        for (int kk = j + 1; kk < w; kk++) {
            float complex s = a[(size_t)j * ld + kk] / d;
            for (int i = kk; i < w; i++) a[(size_t)kk * ld + i] -= a[(size_t)j * ld + i] * s;
        }
        for (int i = j + 1; i < w; i++) a[(size_t)j * ld + i] /= d;
    }
    return SV_OK;
}

static sv_status emu_factor(sv_gpu_backend *b, double pivot_min)
{
    emu *E = b->st;
    int n = E->p.n, nb = E->p.nb;
    const float complex one = 1.0f, mone = -1.0f;
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        float complex *a = E->z + sv_dense_packed_offset(n, nb, c0, c0);
        sv_status st = emu_diag_block(E, a, w, ld, c0, pivot_min);
        if (st) return st;
        if (!m) break;
        float complex *pn = a + w;
        cblas_ctrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, m, w, &one, a, ld, pn, ld);
        for (int j = 0; j < w; j++) {
            float complex d = a[(size_t)j * ld + j];
            for (int i = 0; i < m; i++) {
                E->w[(size_t)j * m + i] = pn[(size_t)j * ld + i];
                pn[(size_t)j * ld + i] /= d;
            }
        }
        for (int cj = c0 + w; cj < n; cj += nb) {
            int wj = n - cj < nb ? n - cj : nb, r0 = cj - c0 - w;
            float complex *aj = E->z + sv_dense_packed_offset(n, nb, cj, cj);
            cblas_cgemm(CblasColMajor, CblasNoTrans, CblasTrans, n - cj, wj, w, &mone, E->w + r0, m, pn + r0, ld,
                        &one, aj, n - cj);
        }
    }
    return SV_OK;
}

static sv_status emu_solve(sv_gpu_backend *b, int ncols, float complex *v)
{
    emu *E = b->st;
    int n = E->p.n, nb = E->p.nb;
    const float complex one = 1.0f, mone = -1.0f;
    if (E->opt.fail_solve_after > 0 && ++E->solves > E->opt.fail_solve_after)
        return sv_error(SV_ERR_INTERNAL, "emulated device: solve %d failed (an unspecified launch failure)", E->solves);
    for (int c0 = 0; c0 < n; c0 += nb) { /* L·y = v */
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        const float complex *a = E->z + sv_dense_packed_offset(n, nb, c0, c0);
        cblas_ctrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, w, ncols, &one, a, ld, v + c0, n);
        if (m)
            cblas_cgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, ncols, w, &mone, a + w, ld, v + c0, n, &one,
                        v + c0 + w, n);
    }
    for (int c0 = 0; c0 < n; c0 += nb) { /* D·z = y */
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0;
        const float complex *a = E->z + sv_dense_packed_offset(n, nb, c0, c0);
        for (int j = 0; j < w; j++)
            for (int c = 0; c < ncols; c++) v[(size_t)c * n + c0 + j] /= a[(size_t)j * ld + j];
    }
    int nblk = (n + nb - 1) / nb;
    for (int k = nblk - 1; k >= 0; k--) { /* Lᵀ·x = z */
        int c0 = k * nb, w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        const float complex *a = E->z + sv_dense_packed_offset(n, nb, c0, c0);
        if (m)
            cblas_cgemm(CblasColMajor, CblasTrans, CblasNoTrans, w, ncols, m, &mone, a + w, ld, v + c0 + w, n, &one,
                        v + c0, n);
        cblas_ctrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, w, ncols, &one, a, ld, v + c0, n);
    }
    return SV_OK;
}

static sv_status emu_products(sv_gpu_backend *b, sv_gpu_residual mode, int ncols, const double *x, double *y)
{
    emu *E = b->st;
    int n = E->p.n, nb = E->p.nb;
    if (ncols > E->max_cols) return sv_error(SV_ERR_ARG, "products: %d columns, uploaded for %d", ncols, E->max_cols);
    if (mode == SV_GPU_RESIDUAL_DF && !(E->modes & 2))
        return sv_error(SV_ERR_ARG, "products: double-float terms were not uploaded");
    if (mode == SV_GPU_RESIDUAL_DOUBLE && !(E->modes & 1))
        return sv_error(SV_ERR_ARG, "products: double terms were not uploaded");
    for (int k = 0; k < E->p.nterms; k++) {
        const sv_gpu_term_view *t = &E->p.terms[k];
        for (int c = 0; c < ncols; c++) {
            const double *xc = x + (size_t)c * n;
            double *yc = y + ((size_t)k * ncols + c) * n;
            if (mode == SV_GPU_RESIDUAL_DF) {
                for (int i = 0; i < n; i++) {
                    E->xh[i] = (float)xc[i];
                    E->xl[i] = (float)(xc[i] - (double)E->xh[i]);
                }
                if (t->kind == SV_SWEEP_TERM_PACKED)
                    E->k->df_packed(n, nb, E->hi[k], E->lo[k], E->xh, E->xl, yc);
                else
                    E->k->df_csr(n, t->rowptr, t->colind, E->hi[k], E->lo[k], E->xh, E->xl, yc);
                continue;
            }
            memset(yc, 0, sizeof(double) * (size_t)n);
            if (t->kind == SV_SWEEP_TERM_PACKED) {
                /* column j of block column c0 is contiguous from row j on */
                for (int c0 = 0; c0 < n; c0 += nb) {
                    int w = n - c0 < nb ? n - c0 : nb, ld = n - c0;
                    const double *blk = t->packed + sv_dense_packed_offset(n, nb, c0, c0);
                    for (int jj = 0; jj < w; jj++) {
                        int j = c0 + jj;
                        const double *col = blk + (size_t)jj * ld - c0;
                        double xj = xc[j], acc = 0;
                        yc[j] += col[j] * xj;
                        for (int i = j + 1; i < n; i++) {
                            yc[i] += col[i] * xj;
                            acc += col[i] * xc[i];
                        }
                        yc[j] += acc;
                    }
                }
            } else {
                for (int i = 0; i < n; i++)
                    for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++) yc[i] += t->values[e] * xc[t->colind[e]];
            }
            if (E->opt.break_double)
                for (int i = 0; i < n; i++) yc[i] *= 1.0 + 1e-9;
        }
    }
    return SV_OK;
}

static sv_status emu_asm_tables(sv_gpu_backend *b, const sv_em_tables *t, int nb)
{
    emu *E = b->st;
    return sv_gpu_emu_asm_tables(b, t, nb, E->opt.fail_assembly);
}

static sv_status emu_asm_finish(sv_gpu_backend *b, const sv_em_assembly_rows *w, double *L, double *Psi,
                                double *PsiI, double seconds[2])
{
    emu *E = b->st;
    return sv_gpu_emu_asm_finish(b, w, L, Psi, PsiI, seconds, E->opt.fail_assembly);
}

static void emu_destroy(sv_gpu_backend *b)
{
    if (!b) return;
    emu *E = b->st;
    sv_ctx *ctx = E->ctx;
    sv_gpu_emu_asm_release(b);
    emu_free(E);
    sv_free(ctx, E);
    sv_free(ctx, b);
}

sv_status sv_gpu_backend_emulated(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out)
{
    (void)device;
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    sv_gpu_backend *b = sv_calloc(ctx, 1, sizeof(*b), "emulated device");
    emu *E = sv_calloc(ctx, 1, sizeof(*E), "emulated device");
    if (!b || !E) {
        sv_free(ctx, b);
        sv_free(ctx, E);
        return sv_last_status();
    }
    E->ctx = ctx;
    if (user) E->opt = *(const sv_gpu_emu_options *)user;
    E->k = E->opt.kernels ? E->opt.kernels : &sv_gpu_emu_kernels_default;
    E->rng = 0x9e3779b97f4a7c15ULL;
    *b = (sv_gpu_backend){.name = "emulated", .st = E, .ctx = ctx, .upload = emu_upload, .form = emu_form,
                          .factor = emu_factor, .solve = emu_solve, .products = emu_products,
                          .asm_tables = emu_asm_tables, .asm_finish = emu_asm_finish,
                          .asm_release = sv_gpu_emu_asm_release, .destroy = emu_destroy};
    *out = b;
    return SV_OK;
}
