/* The CPU build of the device's double-float product kernels: the loops the
 * CUDA kernel runs in parallel (one thread per row, cuda/products.cu), here
 * run one row after another, with the arithmetic of df_kernel.h.
 *
 * Compiled twice: into the library as sv_gpu_emu_kernels_default, and by
 * the self-test's test (tests/gpu/CMakeLists.txt) with SV_GPU_BREAK_EFT as
 * sv_gpu_emu_kernels_broken, the build a simplifying compiler would make. */
#include "gpu_internal.h"
#include "df_kernel.h"

#ifdef SV_GPU_BREAK_EFT
#define SV_EMU_NAME(x) x##_broken
#define SV_EMU_LABEL "double-float (error terms removed)"
#else
#define SV_EMU_NAME(x) x##_default
#define SV_EMU_LABEL "double-float"
#endif

static void SV_EMU_NAME(df_packed)(int n, int nb, const float *ahi, const float *alo, const float *xhi,
                                   const float *xlo, double *y)
{
    for (int i = 0; i < n; i++) y[i] = sv_gpu_df_packed_row(n, nb, ahi, alo, xhi, xlo, i);
}

static void SV_EMU_NAME(df_csr)(int n, const int *rowptr, const int *colind, const float *vhi, const float *vlo,
                                const float *xhi, const float *xlo, double *y)
{
    for (int i = 0; i < n; i++) y[i] = sv_gpu_df_csr_row(rowptr, colind, vhi, vlo, xhi, xlo, i);
}

#ifdef SV_GPU_BREAK_EFT
extern const sv_gpu_emu_kernels sv_gpu_emu_kernels_broken;
#endif
const sv_gpu_emu_kernels SV_EMU_NAME(sv_gpu_emu_kernels) = {SV_EMU_LABEL, SV_EMU_NAME(df_packed), SV_EMU_NAME(df_csr)};
