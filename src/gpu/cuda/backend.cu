// The CUDA backend: terms kept on the device, Z(f) formed there in complex
// single precision in the dense engine's packed block-column layout, its
// LDLᵀ without pivoting by block columns from cuBLAS level-3 calls, solves
// with the factors, and products of the terms with real blocks in double
// (cuBLAS dsymm/dgemm on the packed blocks) or double-float (df_products.cu).
//
// The algorithm is the one of the CPU emulation (../emulate.c), step for
// step, with cuBLAS in place of CBLAS; the tests run the emulation, and
// tests/gpu/test_device.c runs this on a device. Block column k (columns
// c0 … c0+w−1, rows c0 … n−1, leading dimension ld = n − c0):
//   1. diag_ldlt: unblocked LDLᵀ of the w × w diagonal block (one thread
//      block, one thread a column), the first pivot below pivot_min flagged;
//   2. trsm (right, lower, transposed, unit): A21 ← A21·L11⁻ᵀ = L21·D1;
//      panel_scale copies it to W and divides by D1, giving L21;
//   3. gemm (A·Bᵀ, transposed not conjugated: Zᵀ = Z) into every later
//      block column: A(cJ:, J) −= W(cJ:, :)·L21(J, :)ᵀ.
// Only the pivot flag comes back to the host per block column; everything
// else stays on the device.
#include <cstdio>
#include <cstring>
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "../df_kernel.h"
#include "cuda_check.h"
#include "cuda_iface.h"

#define SVC_MAX_TERMS SV_GPU_CUDA_MAX_TERMS

struct sv_gpu_cuda {
    int device;
    cublasHandle_t h;
    sv_gpu_cuda_df_fn df;
    int n, nb, nterms, modes, max_cols;
    size_t e;
    int kind[SVC_MAX_TERMS];
    size_t nnz[SVC_MAX_TERMS];
    double *pk[SVC_MAX_TERMS];              // packed or CSR values in double (mode 1)
    float *hi[SVC_MAX_TERMS], *lo[SVC_MAX_TERMS]; // the same as pairs (mode 2)
    int *rp[SVC_MAX_TERMS], *ci[SVC_MAX_TERMS];
    cuComplex *z, *w, *v;
    double *x, *y;
    float *xh, *xl;
    int *flag;
    void *asm_st; // the assembly in progress (assemble.cu)
};

extern "C" int sv_gpu_cuda_device_of(const sv_gpu_cuda *g) { return g->device; }
extern "C" void **sv_gpu_cuda_asm_slot(sv_gpu_cuda *g) { return &g->asm_st; }

#define CB(call)                                                                                       \
    do {                                                                                               \
        cublasStatus_t s_ = (call);                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
            snprintf(msg, mlen, "%s: %s", #call, cublasGetStatusString(s_));                           \
            return s_ == CUBLAS_STATUS_ALLOC_FAILED ? SVC_NOMEM : SVC_ERROR;                           \
        }                                                                                              \
    } while (0)

static void free_terms(sv_gpu_cuda *g)
{
    for (int k = 0; k < SVC_MAX_TERMS; k++) {
        cudaFree(g->pk[k]);
        cudaFree(g->hi[k]);
        cudaFree(g->lo[k]);
        cudaFree(g->rp[k]);
        cudaFree(g->ci[k]);
        g->pk[k] = NULL;
        g->hi[k] = g->lo[k] = NULL;
        g->rp[k] = g->ci[k] = NULL;
    }
    cudaFree(g->z);
    cudaFree(g->w);
    cudaFree(g->v);
    cudaFree(g->x);
    cudaFree(g->y);
    cudaFree(g->xh);
    cudaFree(g->xl);
    cudaFree(g->flag);
    g->z = g->w = g->v = NULL;
    g->x = g->y = NULL;
    g->xh = g->xl = NULL;
    g->flag = NULL;
}

extern "C" int sv_gpu_cuda_create(int device, sv_gpu_cuda_df_fn df, sv_gpu_cuda **out, char *msg, size_t mlen)
{
    *out = NULL;
    if (!df) { // module.cu passes the module's own launcher
        snprintf(msg, mlen, "no double-float product kernel");
        return SVC_ERROR;
    }
    CK(cudaSetDevice(device));
    sv_gpu_cuda *g = (sv_gpu_cuda *)calloc(1, sizeof(sv_gpu_cuda));
    if (!g) {
        snprintf(msg, mlen, "no host memory for the CUDA backend");
        return SVC_NOMEM;
    }
    g->device = device;
    g->df = df;
    cublasStatus_t s = cublasCreate(&g->h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, mlen, "cublasCreate: %s", cublasGetStatusString(s));
        free(g);
        return SVC_ERROR;
    }
    *out = g;
    return SVC_OK;
}

extern "C" void sv_gpu_cuda_destroy(sv_gpu_cuda *g)
{
    if (!g) return;
    cudaSetDevice(g->device);
    sv_gpu_cuda_asm_release(g);
    free_terms(g);
    cublasDestroy(g->h);
    free(g);
}

static __global__ void split_kernel(size_t len, const double *src, float *hi, float *lo)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    double v = src[i];
    if (v != v) v = 0; // NaN: the workspace above the diagonal
    float h = (float)v;
    hi[i] = h;
    lo[i] = (float)(v - (double)h);
}

static unsigned blocks(size_t len, int t)
{
    return (unsigned)((len + (size_t)t - 1) / (size_t)t);
}

extern "C" int sv_gpu_cuda_upload(sv_gpu_cuda *g, int n, int nb, int nterms, const int *kind,
                                  const double *const *packed, const int *const *rowptr, const int *const *colind,
                                  const double *const *values, const size_t *nnz, int modes, int max_cols, char *msg,
                                  size_t mlen)
{
    if (nterms > SVC_MAX_TERMS) {
        snprintf(msg, mlen, "%d terms: the CUDA backend takes at most %d", nterms, SVC_MAX_TERMS);
        return SVC_ERROR;
    }
    CK(cudaSetDevice(g->device));
    free_terms(g);
    g->n = n;
    g->nb = nb;
    g->nterms = nterms;
    g->modes = modes;
    g->max_cols = max_cols;
    size_t e = 0;
    for (int c0 = 0; c0 < n; c0 += nb) e += (size_t)(n - c0 < nb ? n - c0 : nb) * (size_t)(n - c0);
    g->e = e;
    for (int k = 0; k < nterms; k++) {
        g->kind[k] = kind[k];
        size_t len = kind[k] == 0 ? e : nnz[k];
        g->nnz[k] = len;
        const double *src = kind[k] == 0 ? packed[k] : values[k];
        double *d = NULL;
        CK(cudaMalloc(&d, sizeof(double) * (len ? len : 1)));
        g->pk[k] = d;
        CK(cudaMemcpy(d, src, sizeof(double) * len, cudaMemcpyHostToDevice));
        if (kind[k] == 1) {
            CK(cudaMalloc(&g->rp[k], sizeof(int) * (size_t)(n + 1)));
            CK(cudaMalloc(&g->ci[k], sizeof(int) * (len ? len : 1)));
            CK(cudaMemcpy(g->rp[k], rowptr[k], sizeof(int) * (size_t)(n + 1), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(g->ci[k], colind[k], sizeof(int) * len, cudaMemcpyHostToDevice));
        }
        if (modes & 2) {
            CK(cudaMalloc(&g->hi[k], sizeof(float) * (len ? len : 1)));
            CK(cudaMalloc(&g->lo[k], sizeof(float) * (len ? len : 1)));
            if (len) split_kernel<<<blocks(len, 256), 256>>>(len, d, g->hi[k], g->lo[k]);
            CK(cudaGetLastError());
            if (!(modes & 1)) { // pairs only: the doubles go (the plan counts 8 bytes an element)
                CK(cudaDeviceSynchronize());
                if (kind[k] == 0) {
                    cudaFree(d);
                    g->pk[k] = NULL;
                }
            }
        }
    }
    // Z keeps the packed terms' double copies for form when only pairs are kept:
    // form then reads hi + lo (see form_kernel).
    CK(cudaMalloc(&g->z, sizeof(cuComplex) * e));
    CK(cudaMalloc(&g->w, sizeof(cuComplex) * (size_t)n * (size_t)nb));
    CK(cudaMalloc(&g->v, sizeof(cuComplex) * (size_t)n * (size_t)max_cols));
    CK(cudaMalloc(&g->x, sizeof(double) * (size_t)n * (size_t)max_cols));
    CK(cudaMalloc(&g->y, sizeof(double) * (size_t)n * (size_t)max_cols * (size_t)nterms));
    if (modes & 2) {
        CK(cudaMalloc(&g->xh, sizeof(float) * (size_t)n * (size_t)max_cols));
        CK(cudaMalloc(&g->xl, sizeof(float) * (size_t)n * (size_t)max_cols));
    }
    CK(cudaMalloc(&g->flag, sizeof(int)));
    CK(cudaDeviceSynchronize());
    return SVC_OK;
}

struct form_args {
    int nt;
    const double *d[SVC_MAX_TERMS];
    const float *hi[SVC_MAX_TERMS], *lo[SVC_MAX_TERMS];
    double cre[SVC_MAX_TERMS], cim[SVC_MAX_TERMS];
};

// Z[o] = Σ_k c_k·A_k[o] over the packed terms, summed in double, rounded once.
static __global__ void form_kernel(size_t e, form_args a, cuComplex *z)
{
    size_t o = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= e) return;
    double re = 0, im = 0;
    for (int k = 0; k < a.nt; k++) {
        double v = a.d[k] ? a.d[k][o] : (double)a.hi[k][o] + (double)a.lo[k][o];
        re += a.cre[k] * v;
        im += a.cim[k] * v;
    }
    z[o] = make_cuComplex((float)re, (float)im);
}

// Z(i, j) += c·G_ij for the lower triangle of a CSR term (one thread a row:
// every (i, j) once, so no two threads write the same element).
static __global__ void form_csr_kernel(int n, int nb, const int *rp, const int *ci, const double *val, double cre,
                                       double cim, cuComplex *z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int e = rp[i]; e < rp[i + 1]; e++) {
        int j = ci[e];
        if (j > i) continue;
        size_t o = sv_dense_packed_offset(n, nb, i, j);
        cuComplex t = z[o];
        z[o] = make_cuComplex((float)((double)cuCrealf(t) + cre * val[e]), (float)((double)cuCimagf(t) + cim * val[e]));
    }
}

extern "C" int sv_gpu_cuda_form(sv_gpu_cuda *g, const double *coef, char *msg, size_t mlen)
{
    CK(cudaSetDevice(g->device));
    form_args a;
    memset(&a, 0, sizeof(a));
    for (int k = 0; k < g->nterms; k++) {
        if (g->kind[k] != 0) continue;
        a.d[a.nt] = g->pk[k];
        a.hi[a.nt] = g->hi[k];
        a.lo[a.nt] = g->lo[k];
        a.cre[a.nt] = coef[2 * k];
        a.cim[a.nt] = coef[2 * k + 1];
        a.nt++;
    }
    form_kernel<<<blocks(g->e, 256), 256>>>(g->e, a, g->z);
    CK(cudaGetLastError());
    for (int k = 0; k < g->nterms; k++)
        if (g->kind[k] == 1) {
            form_csr_kernel<<<blocks((size_t)g->n, 128), 128>>>(g->n, g->nb, g->rp[k], g->ci[k], g->pk[k],
                                                                 coef[2 * k], coef[2 * k + 1], g->z);
            CK(cudaGetLastError());
        }
    return SVC_OK;
}

// Unblocked LDLᵀ of the w × w diagonal block a (leading dimension ld), in
// place; one thread block, thread t updates columns t, t + blockDim.x, ….
// flag ← 1 + the first column whose pivot is below pivot_min or not finite.
static __global__ void diag_ldlt_kernel(cuComplex *a, int w, int ld, float pivot_min, int c0, int *flag)
{
    __shared__ cuComplex d;
    __shared__ int bad;
    for (int j = 0; j < w; j++) {
        if (threadIdx.x == 0) {
            d = a[(size_t)j * ld + j];
            float m = cuCabsf(d);
            bad = !(m >= pivot_min) || !isfinite(cuCrealf(d)) || !isfinite(cuCimagf(d));
            if (bad && *flag == 0) *flag = c0 + j + 1;
        }
        __syncthreads();
        if (bad) return;
        // A22 −= t·tᵀ/d, t = A(j+1:, j): thread per column kk
        for (int kk = j + 1 + threadIdx.x; kk < w; kk += blockDim.x) {
            cuComplex s = cuCdivf(a[(size_t)j * ld + kk], d);
            for (int i = kk; i < w; i++)
                a[(size_t)kk * ld + i] = cuCsubf(a[(size_t)kk * ld + i], cuCmulf(a[(size_t)j * ld + i], s));
        }
        __syncthreads();
        for (int i = j + 1 + threadIdx.x; i < w; i += blockDim.x) a[(size_t)j * ld + i] = cuCdivf(a[(size_t)j * ld + i], d);
        __syncthreads();
    }
}

// W = P (m × w, ld), then P ← P·D1⁻¹ (D1 on the diagonal of the block above P).
static __global__ void panel_scale_kernel(cuComplex *p, int m, int w, int ld, const cuComplex *a, cuComplex *wk)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
    if (i >= m || j >= w) return;
    cuComplex v = p[(size_t)j * ld + i];
    wk[(size_t)j * m + i] = v;
    p[(size_t)j * ld + i] = cuCdivf(v, a[(size_t)j * ld + j]);
}

extern "C" int sv_gpu_cuda_factor(sv_gpu_cuda *g, double pivot_min, char *msg, size_t mlen)
{
    CK(cudaSetDevice(g->device));
    int n = g->n, nb = g->nb;
    const cuComplex one = make_cuComplex(1, 0), mone = make_cuComplex(-1, 0);
    CK(cudaMemset(g->flag, 0, sizeof(int)));
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        cuComplex *a = g->z + sv_dense_packed_offset(n, nb, c0, c0);
        diag_ldlt_kernel<<<1, 128>>>(a, w, ld, (float)pivot_min, c0, g->flag);
        CK(cudaGetLastError());
        int flag = 0;
        CK(cudaMemcpy(&flag, g->flag, sizeof(int), cudaMemcpyDeviceToHost));
        if (flag) {
            snprintf(msg, mlen, "pivot %d below %.3g in single precision", flag - 1, pivot_min);
            return SVC_SINGULAR;
        }
        if (!m) break;
        cuComplex *p = a + w;
        CB(cublasCtrsm(g->h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, m, w, &one, a,
                       ld, p, ld));
        dim3 grid(blocks((size_t)m, 128), (unsigned)w);
        panel_scale_kernel<<<grid, 128>>>(p, m, w, ld, a, g->w);
        CK(cudaGetLastError());
        for (int cj = c0 + w; cj < n; cj += nb) {
            int wj = n - cj < nb ? n - cj : nb, r0 = cj - c0 - w;
            cuComplex *aj = g->z + sv_dense_packed_offset(n, nb, cj, cj);
            CB(cublasCgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_T, n - cj, wj, w, &mone, g->w + r0, m, p + r0, ld, &one, aj,
                           n - cj));
        }
    }
    CK(cudaDeviceSynchronize());
    return SVC_OK;
}

static __global__ void diag_solve_kernel(int n, int nb, int ncols, const cuComplex *z, cuComplex *v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (i >= n || c >= ncols) return;
    v[(size_t)c * n + i] = cuCdivf(v[(size_t)c * n + i], z[sv_dense_packed_offset(n, nb, i, i)]);
}

extern "C" int sv_gpu_cuda_solve(sv_gpu_cuda *g, int ncols, float *vh, char *msg, size_t mlen)
{
    CK(cudaSetDevice(g->device));
    if (ncols > g->max_cols) {
        snprintf(msg, mlen, "solve: %d columns, set up for %d", ncols, g->max_cols);
        return SVC_ERROR;
    }
    int n = g->n, nb = g->nb;
    const cuComplex one = make_cuComplex(1, 0), mone = make_cuComplex(-1, 0);
    cuComplex *v = g->v;
    CK(cudaMemcpy(v, vh, sizeof(cuComplex) * (size_t)n * ncols, cudaMemcpyHostToDevice));
    for (int c0 = 0; c0 < n; c0 += nb) { // L·y = v
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        const cuComplex *a = g->z + sv_dense_packed_offset(n, nb, c0, c0);
        CB(cublasCtrsm(g->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, w, ncols, &one, a,
                       ld, v + c0, n));
        if (m)
            CB(cublasCgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, m, ncols, w, &mone, a + w, ld, v + c0, n, &one, v + c0 + w,
                           n));
    }
    dim3 grid(blocks((size_t)n, 128), (unsigned)ncols);
    diag_solve_kernel<<<grid, 128>>>(n, nb, ncols, g->z, v); // D·z = y
    CK(cudaGetLastError());
    int nblk = (n + nb - 1) / nb;
    for (int k = nblk - 1; k >= 0; k--) { // Lᵀ·x = z
        int c0 = k * nb, w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
        const cuComplex *a = g->z + sv_dense_packed_offset(n, nb, c0, c0);
        if (m)
            CB(cublasCgemm(g->h, CUBLAS_OP_T, CUBLAS_OP_N, w, ncols, m, &mone, a + w, ld, v + c0 + w, n, &one, v + c0,
                           n));
        CB(cublasCtrsm(g->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, w, ncols, &one, a,
                       ld, v + c0, n));
    }
    CK(cudaMemcpy(vh, v, sizeof(cuComplex) * (size_t)n * ncols, cudaMemcpyDeviceToHost));
    return SVC_OK;
}

static __global__ void csr_kernel(int n, const int *rp, const int *ci, const double *val, int ncols, const double *x,
                                  double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (i >= n || c >= ncols) return;
    double s = 0;
    for (int e = rp[i]; e < rp[i + 1]; e++) s += val[e] * x[(size_t)c * n + ci[e]];
    y[(size_t)c * n + i] = s;
}

static __global__ void split_x_kernel(size_t len, const double *x, float *hi, float *lo)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    float h = (float)x[i];
    hi[i] = h;
    lo[i] = (float)(x[i] - (double)h);
}

extern "C" int sv_gpu_cuda_products(sv_gpu_cuda *g, int mode, int ncols, const double *xh, double *yh, char *msg,
                                    size_t mlen)
{
    CK(cudaSetDevice(g->device));
    int n = g->n, nb = g->nb;
    if (ncols > g->max_cols || !(g->modes & mode)) {
        snprintf(msg, mlen, "products: mode %d with %d columns, set up for modes %d and %d columns", mode, ncols,
                 g->modes, g->max_cols);
        return SVC_ERROR;
    }
    size_t len = (size_t)n * ncols;
    CK(cudaMemcpy(g->x, xh, sizeof(double) * len, cudaMemcpyHostToDevice));
    if (mode == 2) {
        split_x_kernel<<<blocks(len, 256), 256>>>(len, g->x, g->xh, g->xl);
        CK(cudaGetLastError());
    }
    const double one = 1, zero = 0;
    for (int k = 0; k < g->nterms; k++) {
        double *y = g->y + (size_t)k * len;
        if (mode == 2) {
            if (g->df(g->kind[k], n, nb, g->hi[k], g->lo[k], g->rp[k], g->ci[k], ncols, g->xh, g->xl, y) != SVC_OK) {
                snprintf(msg, mlen, "double-float products: %s", cudaGetErrorString(cudaGetLastError()));
                return SVC_ERROR;
            }
            continue;
        }
        if (g->kind[k] == 1) {
            dim3 grid(blocks((size_t)n, 128), (unsigned)ncols);
            csr_kernel<<<grid, 128>>>(n, g->rp[k], g->ci[k], g->pk[k], ncols, g->x, y);
            CK(cudaGetLastError());
            continue;
        }
        // packed symmetric term by block columns: the diagonal block by dsymm
        // (lower triangle only: the upper part is workspace), the panel P
        // below it twice, Y(below) += P·X(k) and Y(k) += Pᵀ·X(below).
        for (int c0 = 0; c0 < n; c0 += nb) {
            int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m = ld - w;
            const double *a = g->pk[k] + sv_dense_packed_offset(n, nb, c0, c0);
            CB(cublasDsymm(g->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, w, ncols, &one, a, ld, g->x + c0, n,
                           c0 == 0 ? &zero : &one, y + c0, n));
            if (!m) continue;
            // rows below: first touch of block column k's rows comes from
            // the panels of earlier block columns, so the first panel (c0 = 0)
            // overwrites and later ones accumulate.
            CB(cublasDgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, m, ncols, w, &one, a + w, ld, g->x + c0, n,
                           c0 == 0 ? &zero : &one, y + c0 + w, n));
            CB(cublasDgemm(g->h, CUBLAS_OP_T, CUBLAS_OP_N, w, ncols, m, &one, a + w, ld, g->x + c0 + w, n, &one,
                           y + c0, n));
        }
    }
    CK(cudaMemcpy(yh, g->y, sizeof(double) * len * (size_t)g->nterms, cudaMemcpyDeviceToHost));
    return SVC_OK;
}
