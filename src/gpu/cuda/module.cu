// The CUDA back end module's one exported symbol: the table of its functions
// (cuda_iface.h). Everything else in the module is hidden (compiled with
// -fvisibility=hidden), so two builds of it (the tests load a second one
// whose double-float kernel has no error terms) never mix their functions.
//
// SV_GPU_CUDA_DF names the double-float product launcher the module uses:
// sv_gpu_cuda_df_products_default (df_products.cu) in the installed module,
// sv_gpu_cuda_df_products_broken in the tests' build
// (tests/gpu/broken_df_products.cu).
#include "cuda_iface.h"

#ifndef SV_GPU_CUDA_DF
#define SV_GPU_CUDA_DF sv_gpu_cuda_df_products_default
#define SV_GPU_CUDA_VARIANT "cuda"
#else
#define SV_GPU_CUDA_VARIANT "cuda (" SV_GPU_STR(SV_GPU_CUDA_DF) ")"
#endif
#define SV_GPU_STR2(x) #x
#define SV_GPU_STR(x) SV_GPU_STR2(x)

extern "C" int SV_GPU_CUDA_DF(int kind, int n, int nb, const float *ahi, const float *alo, const int *rowptr,
                              const int *colind, int ncols, const float *xhi, const float *xlo, double *y);

static int create(int device, sv_gpu_cuda **out, char *msg, size_t mlen)
{
    return sv_gpu_cuda_create(device, SV_GPU_CUDA_DF, out, msg, mlen);
}

static const sv_gpu_cuda_module table = {
    SV_GPU_CUDA_MODULE_ABI,
    sizeof(sv_gpu_cuda_module),
    SV_GPU_CUDA_VARIANT,
    sv_gpu_cuda_query_c,
    create,
    sv_gpu_cuda_destroy,
    sv_gpu_cuda_upload,
    sv_gpu_cuda_form,
    sv_gpu_cuda_factor,
    sv_gpu_cuda_solve,
    sv_gpu_cuda_products,
    sv_gpu_cuda_asm_tables,
    sv_gpu_cuda_asm_finish,
    sv_gpu_cuda_asm_release,
};

extern "C" __attribute__((visibility("default"))) const sv_gpu_cuda_module *sv_gpu_cuda_module_v1(void)
{
    return &table;
}
