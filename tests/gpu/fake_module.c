/* Stand-ins for the CUDA back end module, for the loader's tests (no CUDA
 * needed): built three times as libsolvent-cuda.so in three directories,
 *   FAKE_KIND 0: a module of the right ABI whose query describes a made-up
 *                device and whose create refuses (the loader finds and
 *                uses it; errors map to Solvent statuses);
 *   FAKE_KIND 1: the same table with the ABI number one higher (a module
 *                from another build);
 *   FAKE_KIND 2: no entry point at all (not a Solvent module). */
#include <stdio.h>

#include "gpu/cuda/cuda_iface.h"

#if FAKE_KIND != 2
static int query(int device, char *name, size_t nlen, int *cc_major, int *cc_minor, size_t *total,
                 size_t *free_bytes, int *fp32_per_fp64, char *reason, size_t rlen)
{
    if (device != 0) {
        snprintf(reason, rlen, "fake module: device %d requested, 1 present", device);
        return SVC_ERROR;
    }
    snprintf(name, nlen, "Fake device");
    *cc_major = 9;
    *cc_minor = 0;
    *total = (size_t)3 << 30;
    *free_bytes = (size_t)2 << 30;
    *fp32_per_fp64 = 2;
    reason[0] = 0;
    return SVC_OK;
}

static int create(int device, sv_gpu_cuda **out, char *msg, size_t mlen)
{
    *out = NULL;
    snprintf(msg, mlen, "fake module: cannot start device %d", device);
    return SVC_ERROR;
}

static const sv_gpu_cuda_module table = {
    .abi = SV_GPU_CUDA_MODULE_ABI + (FAKE_KIND == 1),
    .size = sizeof(sv_gpu_cuda_module),
    .variant = "fake",
    .query = query,
    .create = create,
};

__attribute__((visibility("default"))) const sv_gpu_cuda_module *sv_gpu_cuda_module_v1(void)
{
    return &table;
}
#else
__attribute__((visibility("default"))) int sv_gpu_fake_not_a_module(void)
{
    return 0;
}
#endif
