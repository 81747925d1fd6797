// Device discovery through the CUDA runtime. Without a driver or a device the
// runtime returns an error code (cudaErrorInsufficientDriver,
// cudaErrorNoDevice, ...): its text becomes the reason; nothing here aborts.
#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_iface.h"

extern "C" int sv_gpu_cuda_query_c(int device, char *name, size_t nlen, int *cc_major, int *cc_minor, size_t *total,
                                   size_t *free_bytes, int *fp32_per_fp64, char *reason, size_t rlen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(reason, rlen, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        cudaGetLastError(); // clear the sticky-free error state
        return SVC_ERROR;
    }
    if (count < 1) {
        snprintf(reason, rlen, "the CUDA runtime sees no device");
        return SVC_ERROR;
    }
    if (device >= count) {
        snprintf(reason, rlen, "device %d requested, %d present", device, count);
        return SVC_ERROR;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, device);
    if (e == cudaSuccess) e = cudaSetDevice(device);
    size_t fr = 0, to = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&fr, &to);
    int ratio = 0;
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, device);
    if (e != cudaSuccess) {
        snprintf(reason, rlen, "device %d: %s (%s)", device, cudaGetErrorString(e), cudaGetErrorName(e));
        cudaGetLastError();
        return SVC_ERROR;
    }
    snprintf(name, nlen, "%s", p.name);
    *cc_major = p.major;
    *cc_minor = p.minor;
    *total = to;
    *free_bytes = fr;
    *fp32_per_fp64 = ratio;
    reason[0] = 0;
    return SVC_OK;
}
