/* Where the exact solves run: the CPU, or a GPU once it has passed its
 * start-up self-test (solvent/gpu.h); the report says which, and why not
 * the GPU when it was not used. */
#include <stdio.h>

#include "planar_internal.h"

static sv_status cpu_because(sv_planar_job *j, const char *why)
{
    snprintf(j->rep.device, sizeof j->rep.device, "cpu (%s)", why);
    return SV_OK;
}

sv_status planar_check_device(const sv_planar_job *j)
{
    if (j->o.device != SV_PLANAR_DEVICE_GPU) return SV_OK;
    char why[256];
    if (!sv_gpu_available(why, sizeof why)) return sv_error(SV_ERR_UNSUPPORTED, "device gpu: no usable CUDA device: %s", why);
    if (j->o.precision != SV_SWEEP_MIXED)
        return sv_error(SV_ERR_ARG, "device gpu solves in single precision refined to double: precision %s runs on "
                                    "the CPU only",
                        j->o.precision == SV_SWEEP_DOUBLE ? "double" : "reference");
    return SV_OK;
}

sv_status planar_choose_device(sv_planar_job *j)
{
    snprintf(j->rep.device, sizeof j->rep.device, "cpu");
    sv_planar_device d = j->o.device;
    if (d == SV_PLANAR_DEVICE_CPU || j->nf - j->dc == 0) return SV_OK;
    if (j->so.precision != SV_SWEEP_MIXED)
        return cpu_because(j, j->so.precision == SV_SWEEP_DOUBLE ? "double precision runs on the CPU"
                                                                 : "the reference precision runs on the CPU");
    sv_gpu_options go;
    sv_gpu_options_default(&go);
    go.required = d == SV_PLANAR_DEVICE_GPU;
    /* the device refines at most SV_GPU_MAX_DERIV derivative orders (as
     * many as the CPU path): a sweep on the device asks for no more */
    int nderiv = j->so.derivatives == 0 || j->so.derivatives > SV_GPU_MAX_DERIV ? SV_GPU_MAX_DERIV : j->so.derivatives;
    sv_status s = sv_gpu_solver_create(j->ctx, sv_em_affine_model(j->model), nderiv < 0 ? 0 : nderiv, &go, &j->gpu);
    if (s) return s;
    sv_gpu_report gr;
    sv_gpu_solver_report(j->gpu, &gr);
    if (!gr.on_device) {
        sv_gpu_solver_destroy(j->gpu);
        j->gpu = NULL;
        return cpu_because(j, gr.note);
    }
    j->so.solver = sv_gpu_solver_sweep(j->gpu);
    j->so.derivatives = nderiv;
    j->rep.on_device = 1;
    snprintf(j->rep.device, sizeof j->rep.device, "gpu %s, %s residuals (self-test passed)", gr.device,
             gr.residual == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
    return SV_OK;
}
