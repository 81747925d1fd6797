/* The device's double-float kernels compiled a second time as a compiler
 * that simplifies (a + b) − a to b would build them: every error term 0.
 * Defines sv_gpu_emu_kernels_broken for test_selftest.c. */
#define SV_GPU_BREAK_EFT 1
#include "gpu/emu_kernels.c"
