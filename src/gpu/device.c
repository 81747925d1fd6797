/* Device discovery: which device there is, how much memory it has, how fast
 * it is in double precision, or why there is none. Without CUDA every query
 * says "not built with CUDA"; with it, the CUDA back end module is loaded
 * (loader.c: not without a driver) and asks the CUDA runtime
 * (cuda/query.cu); a machine without a driver, the module or a device gets
 * the loader's or the runtime's reason, not a crash. */
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"

int sv_gpu_built(void)
{
#ifdef SV_GPU_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

sv_status sv_gpu_query(int device, sv_gpu_device_info *info)
{
    if (!info) return sv_error(SV_ERR_ARG, "info is NULL");
    memset(info, 0, sizeof(*info));
    info->device = device;
    if (device < 0) return sv_error(SV_ERR_ARG, "device = %d: expected >= 0", device);
    info->built = sv_gpu_built();
    const sv_gpu_cuda_module *mod = sv_gpu_module_default(info->reason, sizeof info->reason);
    if (!mod) {
        if (!info->built)
            return sv_error(SV_ERR_UNSUPPORTED, "no GPU back end: Solvent was not built with CUDA (SOLVENT_CUDA)");
        return sv_error(SV_ERR_UNSUPPORTED, "no usable CUDA device %d: %s", device, info->reason);
    }
    sv_status st = sv_gpu_module_query(mod, device, info);
    if (st || !info->available) {
        info->available = 0;
        if (!info->reason[0]) snprintf(info->reason, sizeof info->reason, "%s", sv_last_error());
        return sv_error(SV_ERR_UNSUPPORTED, "no usable CUDA device %d: %s", device, info->reason);
    }
    return SV_OK;
}

int sv_gpu_available(char *reason, size_t len)
{
    sv_gpu_device_info info;
    int ok = sv_gpu_query(0, &info) == SV_OK;
    if (!ok) sv_clear_error();
    if (reason && len) snprintf(reason, len, "%s", ok ? "" : info.reason);
    return ok;
}

const char *sv_gpu_describe(const sv_gpu_device_info *info, char *buf, size_t len)
{
    if (!buf || !len) return buf;
    if (!info)
        snprintf(buf, len, "no CUDA device: unknown");
    else if (!info->available)
        snprintf(buf, len, "no CUDA device: %s", info->reason[0] ? info->reason : "unknown reason");
    else
        snprintf(buf, len, "%s (sm_%d%d, %.1f GiB, %.1f GiB free)", info->name, info->cc_major, info->cc_minor,
                 info->total_bytes / 1073741824.0, info->free_bytes / 1073741824.0);
    return buf;
}
