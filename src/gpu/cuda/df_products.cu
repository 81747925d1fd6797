// The device's double-float products: one thread per row and column, each
// running the row loop of ../df_kernel.h (the same source the CPU tests run,
// src/gpu/emu_kernels.c). Compiled into the CUDA back end module as
// sv_gpu_cuda_df_products_default and, for the device self-test's test, a
// second time with SV_GPU_BREAK_EFT as ..._broken (into a second module that
// only the tests build: tests/gpu/CMakeLists.txt).
#include <cuda_runtime.h>

#include "../df_kernel.h"
#include "cuda_iface.h"

#ifdef SV_GPU_BREAK_EFT
#define SV_DF_NAME sv_gpu_cuda_df_products_broken
#else
#define SV_DF_NAME sv_gpu_cuda_df_products_default
#endif

static __global__ void df_packed_kernel(int n, int nb, const float *ahi, const float *alo, int ncols,
                                        const float *xhi, const float *xlo, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (i >= n || c >= ncols) return;
    size_t o = (size_t)c * n;
    y[o + i] = sv_gpu_df_packed_row(n, nb, ahi, alo, xhi + o, xlo + o, i);
}

static __global__ void df_csr_kernel(int n, const int *rowptr, const int *colind, const float *vhi, const float *vlo,
                                     int ncols, const float *xhi, const float *xlo, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (i >= n || c >= ncols) return;
    size_t o = (size_t)c * n;
    y[o + i] = sv_gpu_df_csr_row(rowptr, colind, vhi, vlo, xhi + o, xlo + o, i);
}

extern "C" int SV_DF_NAME(int kind, int n, int nb, const float *ahi, const float *alo, const int *rowptr,
                          const int *colind, int ncols, const float *xhi, const float *xlo, double *y)
{
    dim3 grid((unsigned)((n + 127) / 128), (unsigned)ncols);
    if (kind == 0)
        df_packed_kernel<<<grid, 128>>>(n, nb, ahi, alo, ncols, xhi, xlo, y);
    else
        df_csr_kernel<<<grid, 128>>>(n, rowptr, colind, ahi, alo, ncols, xhi, xlo, y);
    return cudaGetLastError() == cudaSuccess ? SVC_OK : SVC_ERROR;
}
