// CK(call): a CUDA runtime call that, failing, writes its name and the
// runtime's reason into msg (mlen bytes) and returns SVC_NOMEM (out of
// memory) or SVC_ERROR from the enclosing function.
#ifndef SV_GPU_CUDA_CHECK_H
#define SV_GPU_CUDA_CHECK_H

#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_iface.h"

#define CK(call)                                                                                       \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            snprintf(msg, mlen, "%s: %s", #call, cudaGetErrorString(e_));                              \
            cudaGetLastError();                                                                        \
            return e_ == cudaErrorMemoryAllocation ? SVC_NOMEM : SVC_ERROR;                            \
        }                                                                                              \
    } while (0)

#endif
