/* The planar model's assembly on the device: an implementation of the em
 * module's assembler interface (solvent/em_assembly.h). One assembly is
 *   1. the plan's tables on the CPU (the near entries from the closed forms),
 *   2. the device's work on them queued (far entries, folds, the fill:
 *      asm_kernel.h steps 1–3),
 *   3. meanwhile on the CPU the plan's rows: the port half rooftops' L and
 *      the side walls' updates,
 *   4. the device's rows and walls (steps 4–5), the result copied back.
 * Where the device cannot (none, too little memory, a device error) the
 * CPU's assembler makes it instead and the report says why: the answer is
 * the same either way. */
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"

struct sv_gpu_assembler {
    sv_ctx *ctx;
    sv_gpu_options opt;
    sv_gpu_device_info info;
    sv_gpu_backend *b; /* NULL: the CPU assembles */
    sv_em_assembler iface;
    sv_gpu_assembly_report rep;
};

/* The CPU's assembler, with the reason in the report. */
static sv_status on_cpu(sv_gpu_assembler *a, sv_ctx *ctx, const sv_em_model *m, int nb, double *L, double *Psi,
                        double *PsiI)
{
    a->rep.cpu_assemblies++;
    const sv_em_assembler *cpu = sv_em_assembler_cpu();
    return cpu->assemble(cpu->content, ctx, m, nb, L, Psi, PsiI);
}

/* A device error: the device is dropped (this and every later assembly on
 * the CPU). The error is handled: the CPU's assembler answers instead, and
 * the note and the log say why. */
static void drop_device(sv_gpu_assembler *a, sv_ctx *ctx)
{
    snprintf(a->rep.note, sizeof a->rep.note, "device error in the assembly: %s: the CPU from there on",
             sv_last_error());
    sv_log(ctx, SV_LOG_WARN, "GPU assembler: %s", a->rep.note);
    sv_clear_error();
    a->rep.device_errors++;
    a->b->asm_release(a->b);
    a->b->destroy(a->b);
    a->b = NULL;
}

/* Steps 2–4 with a plan made: SV_OK, a device error (dev = 1), or the
 * CPU's error in the plan's rows. */
static sv_status on_device(sv_gpu_assembler *a, sv_em_assembly_plan *plan, int nb, double *L, double *Psi,
                           double *PsiI, int *dev)
{
    sv_gpu_backend *b = a->b;
    double t0 = sv_time_now();
    *dev = 1;
    sv_status st = b->asm_tables(b, sv_em_assembly_plan_tables(plan), nb);
    if (st) return st;
    const sv_em_assembly_rows *rows;
    *dev = 0;
    st = sv_em_assembly_plan_rows(plan, &rows);
    a->rep.seconds_rows = sv_time_now() - t0;
    if (st) {
        b->asm_release(b);
        return st;
    }
    *dev = 1;
    double sec[2] = {0, 0};
    st = b->asm_finish(b, rows, L, Psi, PsiI, sec);
    a->rep.seconds_device = sec[0];
    a->rep.seconds_copy = sec[1];
    return st;
}

static sv_status gpu_assemble(void *content, sv_ctx *ctx, const sv_em_model *m, int nb, double *L, double *Psi,
                              double *PsiI)
{
    sv_gpu_assembler *a = content;
    a->rep.assemblies++;
    if (!a->b) return on_cpu(a, ctx, m, nb, L, Psi, PsiI);
    double t0 = sv_time_now();
    sv_em_assembly_plan *plan;
    sv_status st = sv_em_assembly_plan_create(ctx, m, PsiI != NULL, &plan);
    if (st) return st;
    a->rep.seconds_tables = sv_time_now() - t0;
    a->rep.device_bytes = sv_gpu_assembly_bytes(sv_em_assembly_plan_tables(plan), nb, 0);
    if (a->rep.device_bytes > a->info.free_bytes) {
        snprintf(a->rep.note, sizeof a->rep.note, "%d unknowns need about %.2f GiB on the device, %.2f GiB free: "
                 "assembled on the CPU", sv_em_model_unknowns(m), a->rep.device_bytes / 1073741824.0,
                 a->info.free_bytes / 1073741824.0);
        sv_em_assembly_plan_destroy(plan);
        return on_cpu(a, ctx, m, nb, L, Psi, PsiI);
    }
    int dev = 0;
    st = on_device(a, plan, nb, L, Psi, PsiI, &dev);
    sv_em_assembly_plan_destroy(plan);
    if (!st) {
        a->rep.device_assemblies++;
        return SV_OK;
    }
    if (!dev) return st;
    drop_device(a, ctx);
    return on_cpu(a, ctx, m, nb, L, Psi, PsiI);
}

sv_status sv_gpu_assembler_create_with(sv_ctx *ctx, const sv_gpu_options *opts, const sv_gpu_device_info *info,
                                       sv_gpu_backend_factory factory, void *factory_user, sv_gpu_assembler **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    if (!info || !factory) return sv_error(SV_ERR_ARG, "device info or backend factory is NULL");
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    if (opts) o = *opts;
    if (o.device < 0) return sv_error(SV_ERR_ARG, "device = %d: expected >= 0", o.device);
    sv_gpu_assembler *a = sv_calloc(ctx, 1, sizeof *a, "GPU assembler");
    if (!a) return sv_last_status();
    a->ctx = ctx;
    a->opt = o;
    a->info = *info;
    a->iface = (sv_em_assembler){.name = "gpu", .content = a, .assemble = gpu_assemble};
    sv_gpu_describe(info, a->rep.device, sizeof a->rep.device);
    sv_status st = SV_OK;
    if (!info->available)
        snprintf(a->rep.note, sizeof a->rep.note, "no CUDA device: %s", info->reason);
    else if ((st = factory(factory_user, ctx, o.device, &a->b)) != SV_OK)
        snprintf(a->rep.note, sizeof a->rep.note, "the device could not be set up: %s", sv_last_error());
    if (!a->b && o.required) {
        st = sv_error(st ? st : SV_ERR_UNSUPPORTED, "GPU required but not usable: %s", a->rep.note);
        sv_free(ctx, a);
        return st;
    }
    if (st) sv_clear_error(); /* handled: the CPU assembles, and the note says why */
    if (!a->b) sv_log(ctx, SV_LOG_INFO, "GPU assembler on the CPU: %s", a->rep.note);
    *out = a;
    return SV_OK;
}

sv_status sv_gpu_assembler_create(sv_ctx *ctx, const sv_gpu_options *opts, sv_gpu_assembler **out)
{
    sv_gpu_device_info info;
    int device = opts ? opts->device : 0;
    if (sv_gpu_query(device < 0 ? 0 : device, &info)) sv_clear_error(); /* the reason is in info */
    return sv_gpu_assembler_create_with(ctx, opts, &info, sv_gpu_backend_device, NULL, out);
}

void sv_gpu_assembler_destroy(sv_gpu_assembler *a)
{
    if (!a) return;
    if (a->b) a->b->destroy(a->b);
    sv_free(a->ctx, a);
}

const sv_em_assembler *sv_gpu_assembler_em(sv_gpu_assembler *a) { return a ? &a->iface : NULL; }

void sv_gpu_assembler_report(const sv_gpu_assembler *a, sv_gpu_assembly_report *r)
{
    if (!r) return;
    if (!a) {
        memset(r, 0, sizeof *r);
        return;
    }
    *r = a->rep;
    r->on_device = a->b != NULL;
}
