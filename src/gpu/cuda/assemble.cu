// The device's assembly of L, Ψ (and Ψ_im): the steps of ../asm_kernel.h,
// one thread an entry, with the per-entry functions the CPU emulation runs
// (../emu_assembly.c) and, inside them, the em module's own formulas
// (solvent/em_tables.h). The module is compiled with --fmad=false and IEEE
// division and square root (nvcc's defaults without --use_fast_math), and
// those formulas use nothing else, so the far entries round as the CPU's.
//
//   asm_tables   upload the plan's tables and unknowns; kernels for the far
//                entries (1), the folds (2) and the rooftop pairs (3) into
//                zeroed packed arrays; returns once they are queued
//   asm_finish   upload the port rows and the walls' lists; kernels for the
//                port rows (4), the walls' δL and δΨ (5); copy the packed
//                arrays to the host; free everything
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#include "../asm_kernel.h"
#include "cuda_check.h"
#include "cuda_iface.h"

#define SVC_ASM_MAX_ALLOCS 40

struct asm_state {
    sv_em_tables t; // device pointers
    int nb;
    size_t e;
    double *L, *Psi, *PsiI;
    void *alloc[SVC_ASM_MAX_ALLOCS];
    int nalloc;
};

static unsigned grid_of(size_t len, int threads) { return (unsigned)((len + (size_t)threads - 1) / (size_t)threads); }

// cudaMalloc, remembered for asm_release.
static cudaError_t dev_alloc(asm_state *A, void **p, size_t bytes)
{
    *p = NULL;
    if (A->nalloc == SVC_ASM_MAX_ALLOCS) return cudaErrorMemoryAllocation;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaSuccess) A->alloc[A->nalloc++] = *p;
    return e;
}

// A device copy of len bytes of host src (NULL stays NULL).
template <typename T> static cudaError_t dev_copy(asm_state *A, T **d, const T *src, size_t count)
{
    *d = NULL;
    if (!src) return cudaSuccess;
    cudaError_t e = dev_alloc(A, (void **)d, sizeof(T) * count);
    if (e == cudaSuccess && count) e = cudaMemcpy(*d, src, sizeof(T) * count, cudaMemcpyHostToDevice);
    return e;
}

template <typename T> static cudaError_t dev_zeros(asm_state *A, T **d, size_t count)
{
    cudaError_t e = dev_alloc(A, (void **)d, sizeof(T) * count);
    if (e == cudaSuccess) e = cudaMemset(*d, 0, sizeof(T) * (count ? count : 1));
    return e;
}

extern "C" void sv_gpu_cuda_asm_release(sv_gpu_cuda *g)
{
    if (!g) return;
    asm_state **slot = (asm_state **)sv_gpu_cuda_asm_slot(g);
    asm_state *A = *slot;
    if (!A) return;
    cudaSetDevice(sv_gpu_cuda_device_of(g));
    for (int k = 0; k < A->nalloc; k++) cudaFree(A->alloc[k]);
    free(A);
    *slot = NULL;
}

// 1: the far entries of P (P_im), Lx, Ly.
static __global__ void far_kernel(sv_em_tables t)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < t.nx * t.ny) sv_em_tables_far_entry(&t, q);
}

// 2: the folds.
static __global__ void fold_kernel(sv_em_tables t)
{
    size_t q = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= (size_t)(2 * t.nx + 1) * (2 * t.ny + 1)) return;
    sv_em_tables_fold_entry(t.P, t.nx, t.ny, q, t.Sxx, t.Syy, t.Sxy);
    if (t.lossy) sv_em_tables_fold_entry(t.P_im, t.nx, t.ny, q, t.Sxx_im, t.Syy_im, t.Sxy_im);
}

// 3: the rooftop pairs, one block a column c, its threads down the rows.
static __global__ void pair_kernel(sv_em_tables t, int nb, double *L, double *Psi, double *PsiI)
{
    int c = blockIdx.x;
    if (c >= t.nrt) return;
    size_t base = sv_dense_packed_offset(t.n, nb, c, c);
    for (int r = c + threadIdx.x; r < t.nrt; r += blockDim.x)
        sv_gpu_asm_pair(&t, r, c, base + (size_t)(r - c), L, Psi, PsiI);
}

// 4: the rows of the port half rooftops, one thread an (r, c), r ≥ c.
static __global__ void port_kernel(sv_em_tables t, sv_em_assembly_rows w, int nb, double *L, double *Psi,
                                   double *PsiI)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w.np == 0 || k >= (size_t)w.np * (size_t)t.n) return;
    int c = (int)(k / (size_t)w.np), r = t.nrt + (int)(k % (size_t)w.np);
    if (r < c) return;
    sv_gpu_asm_port(&t, &w, r, c, sv_dense_packed_offset(t.n, nb, r, c), L, Psi, PsiI);
}

// 5: the walls' δL (each entry once) and δΨ (each distinct entry by one thread, its
// contributions in order).
static __global__ void wall_l_kernel(int n, int nb, sv_em_assembly_rows w, double *L)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < w.nl) L[sv_dense_packed_offset(n, nb, w.l_r[k], w.l_c[k])] += w.l_val[k];
}

static __global__ void wall_psi_kernel(int n, int nb, sv_em_assembly_rows w, double *Psi, double *PsiI)
{
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < w.nps) sv_gpu_asm_wall_psi(&w, e, sv_dense_packed_offset(n, nb, w.ps_r[e], w.ps_c[e]), Psi, PsiI);
}

// The tables and unknowns onto the device, room for the folds and the packed arrays.
static int upload_tables(asm_state *A, const sv_em_tables *h, int nb, char *msg, size_t mlen)
{
    sv_em_tables *t = &A->t;
    *t = *h;
    size_t n1 = (size_t)h->nx * h->ny, n2 = (size_t)(2 * h->nx + 1) * (2 * h->ny + 1), nu = (size_t)h->n;
    CK(dev_copy(A, &t->P, h->P, n1));
    CK(dev_copy(A, &t->P_im, h->lossy ? h->P_im : (double *)NULL, n1));
    CK(dev_copy(A, &t->Lx, h->Lx, n1));
    CK(dev_copy(A, &t->Ly, h->Ly, n1));
    CK(dev_copy(A, &t->far_P, h->far_P, n1));
    CK(dev_copy(A, &t->far_Lx, h->far_Lx, n1));
    CK(dev_copy(A, &t->far_Ly, h->far_Ly, n1));
    CK(dev_copy(A, &t->kind, h->kind, nu));
    CK(dev_copy(A, &t->ci, h->ci, nu));
    CK(dev_copy(A, &t->cj, h->cj, nu));
    CK(dev_zeros(A, &t->Sxx, n1));
    CK(dev_zeros(A, &t->Syy, n1));
    CK(dev_zeros(A, &t->Sxy, n2));
    t->Sxx_im = t->Syy_im = t->Sxy_im = NULL;
    if (h->lossy) {
        CK(dev_zeros(A, &t->Sxx_im, n1));
        CK(dev_zeros(A, &t->Syy_im, n1));
        CK(dev_zeros(A, &t->Sxy_im, n2));
    }
    A->nb = nb;
    A->e = sv_dense_packed_size(h->n, nb);
    CK(dev_zeros(A, &A->L, A->e));
    CK(dev_zeros(A, &A->Psi, A->e));
    A->PsiI = NULL;
    if (h->lossy) CK(dev_zeros(A, &A->PsiI, A->e));
    return SVC_OK;
}

extern "C" int sv_gpu_cuda_asm_tables(sv_gpu_cuda *g, const sv_em_tables *h, int nb, char *msg, size_t mlen)
{
    sv_gpu_cuda_asm_release(g);
    CK(cudaSetDevice(sv_gpu_cuda_device_of(g)));
    asm_state *A = (asm_state *)calloc(1, sizeof(asm_state));
    if (!A) {
        snprintf(msg, mlen, "no host memory for the device's assembly");
        return SVC_NOMEM;
    }
    *(asm_state **)sv_gpu_cuda_asm_slot(g) = A;
    int rc = upload_tables(A, h, nb, msg, mlen);
    if (rc) return rc;
    const sv_em_tables &t = A->t;
    size_t n1 = (size_t)t.nx * t.ny, n2 = (size_t)(2 * t.nx + 1) * (2 * t.ny + 1);
    far_kernel<<<grid_of(n1, 128), 128>>>(t);
    CK(cudaGetLastError());
    fold_kernel<<<grid_of(n2, 256), 256>>>(t);
    CK(cudaGetLastError());
    if (t.nrt > 0) {
        pair_kernel<<<(unsigned)t.nrt, 256>>>(t, nb, A->L, A->Psi, A->PsiI);
        CK(cudaGetLastError());
    }
    return SVC_OK;
}

// The rows onto the device (struct w with device pointers).
static int upload_rows(asm_state *A, const sv_em_assembly_rows *h, sv_em_assembly_rows *w, char *msg, size_t mlen)
{
    *w = *h;
    CK(dev_copy(A, (double **)&w->port_L, h->port_L, (size_t)h->np * (size_t)A->t.n));
    CK(dev_copy(A, (int **)&w->l_r, h->l_r, h->nl));
    CK(dev_copy(A, (int **)&w->l_c, h->l_c, h->nl));
    CK(dev_copy(A, (double **)&w->l_val, h->l_val, h->nl));
    size_t nv = h->nps ? h->ps_start[h->nps] : 0;
    CK(dev_copy(A, (int **)&w->ps_r, h->ps_r, h->nps));
    CK(dev_copy(A, (int **)&w->ps_c, h->ps_c, h->nps));
    CK(dev_copy(A, (size_t **)&w->ps_start, h->ps_start, h->nps ? h->nps + 1 : 0));
    CK(dev_copy(A, (double **)&w->ps_val, h->ps_val, nv));
    CK(dev_copy(A, (double **)&w->ps_val_im, A->t.lossy ? h->ps_val_im : (const double *)NULL, nv));
    return SVC_OK;
}

static double now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int finish(asm_state *A, const sv_em_assembly_rows *h, double *L, double *Psi, double *PsiI, double *seconds,
                  char *msg, size_t mlen)
{
    double t0 = now();
    sv_em_assembly_rows w;
    int rc = upload_rows(A, h, &w, msg, mlen);
    if (rc) return rc;
    const sv_em_tables &t = A->t;
    size_t nport = (size_t)w.np * (size_t)t.n;
    if (nport) {
        port_kernel<<<grid_of(nport, 256), 256>>>(t, w, A->nb, A->L, A->Psi, A->PsiI);
        CK(cudaGetLastError());
    }
    if (w.nl) {
        wall_l_kernel<<<grid_of(w.nl, 256), 256>>>(t.n, A->nb, w, A->L);
        CK(cudaGetLastError());
    }
    if (w.nps) {
        wall_psi_kernel<<<grid_of(w.nps, 256), 256>>>(t.n, A->nb, w, A->Psi, A->PsiI);
        CK(cudaGetLastError());
    }
    CK(cudaDeviceSynchronize());
    double t1 = now();
    CK(cudaMemcpy(L, A->L, sizeof(double) * A->e, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(Psi, A->Psi, sizeof(double) * A->e, cudaMemcpyDeviceToHost));
    if (PsiI && A->PsiI) CK(cudaMemcpy(PsiI, A->PsiI, sizeof(double) * A->e, cudaMemcpyDeviceToHost));
    seconds[0] = t1 - t0;
    seconds[1] = now() - t1;
    return SVC_OK;
}

extern "C" int sv_gpu_cuda_asm_finish(sv_gpu_cuda *g, const sv_em_assembly_rows *h, double *L, double *Psi,
                                      double *PsiI, double *seconds, char *msg, size_t mlen)
{
    asm_state *A = *(asm_state **)sv_gpu_cuda_asm_slot(g);
    if (!A) {
        snprintf(msg, mlen, "no assembly in progress");
        return SVC_ERROR;
    }
    CK(cudaSetDevice(sv_gpu_cuda_device_of(g)));
    int rc = finish(A, h, L, Psi, PsiI, seconds, msg, mlen);
    sv_gpu_cuda_asm_release(g);
    return rc;
}
