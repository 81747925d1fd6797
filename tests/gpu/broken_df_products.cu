// The device's double-float product kernel compiled a second time with the
// error terms removed (sv_gpu_cuda_df_products_broken): the kernel of the
// tests' second CUDA module, gpu_cuda_broken, which test_device.c loads.
#define SV_GPU_BREAK_EFT 1
#include "gpu/cuda/df_products.cu"
