/* Planning: what a sweep's exact solves hold on the device, and whether to
 * run there, fall back to the CPU or refuse.
 *
 * Device memory (bytes, E = elements of the packed layout ≈ n²/2 + n·nb/2):
 *   terms      8·E per packed term (double, or double-float: two floats at
 *              the same offsets, the same 8 bytes), 12·nnz + 4·(n + 1) per
 *              CSR term (double values or hi/lo floats, int columns, rows)
 *   Z(f)       8·E (complex single, packed like the terms; factorised in place)
 *   vectors    c = nrhs·(nderiv + 1) complex columns: their real and
 *              imaginary parts as 2c real columns (8·n·2c, in double or as
 *              float pairs), the products of every term with them
 *              (8·n·2c per term), and the complex single solve block (8·n·c)
 *   workspace  the factorisation's panel copy (8·n·nb), pivot flags, and a
 *              fixed reserve for the cuBLAS/cuSOLVER handles' workspaces and
 *              the CUDA context's own allocations (SV_GPU_RESERVE)
 * and 5 % on top for the allocator's rounding. */
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"

#define SV_GPU_RESERVE ((size_t)256 << 20)

static int ovf_mul(size_t a, size_t b, size_t *out)
{
    return sv_size_mul(a, b, out) != SV_OK;
}

size_t sv_gpu_plan_workspace_bytes(int n, int nb, int cols)
{
    (void)cols;
    return 8 * (size_t)n * (size_t)nb + 4096 + SV_GPU_RESERVE;
}

static const char *gib(size_t b, char *buf, size_t len)
{
    if (b >= (size_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
    else
        snprintf(buf, len, "%.1f MiB", b / 1048576.0);
    return buf;
}

sv_status sv_gpu_plan_make(const sv_gpu_plan_input *in, sv_gpu_plan *plan)
{
    if (!in || !plan) return sv_error(SV_ERR_ARG, "plan input or output is NULL");
    memset(plan, 0, sizeof(*plan));
    if (in->n < 1) return sv_error(SV_ERR_ARG, "plan: n = %d: expected >= 1", in->n);
    if (in->nb < 0) return sv_error(SV_ERR_ARG, "plan: nb = %d: expected >= 0", in->nb);
    if (in->npacked < 0 || in->ncsr < 0 || in->npacked + in->ncsr < 1)
        return sv_error(SV_ERR_ARG, "plan: %d packed and %d CSR terms: expected at least one term", in->npacked,
                        in->ncsr);
    if (in->nrhs < 1) return sv_error(SV_ERR_ARG, "plan: nrhs = %d: expected >= 1", in->nrhs);
    if (in->nderiv < 0 || in->nderiv > SV_GPU_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "plan: nderiv = %d: expected 0 to %d", in->nderiv, SV_GPU_MAX_DERIV);
    if (in->residual < SV_GPU_RESIDUAL_AUTO || in->residual > SV_GPU_RESIDUAL_DF)
        return sv_error(SV_ERR_ARG, "plan: residual = %d: expected SV_GPU_RESIDUAL_AUTO, _DOUBLE or _DF",
                        (int)in->residual);
    int nb = in->nb ? in->nb : 128;
    size_t n = (size_t)in->n, e = sv_dense_packed_size(in->n, nb);
    size_t cols = (size_t)in->nrhs * (size_t)(in->nderiv + 1), nterms = (size_t)(in->npacked + in->ncsr);
    size_t t1, t2, t3, v1, v2, v3;
    if (ovf_mul(e, 8 * (size_t)in->npacked, &t1) || ovf_mul(in->csr_nnz, 12, &t2) ||
        ovf_mul((size_t)in->ncsr, 4 * (n + 1), &t3) || ovf_mul(e, 8, &plan->z_bytes) ||
        ovf_mul(8 * n, 2 * cols, &v1) || ovf_mul(v1, nterms, &v2) || ovf_mul(8 * n, cols, &v3))
        return sv_error(SV_ERR_ARG, "plan: n = %d: the sizes overflow size_t", in->n);
    plan->terms_bytes = t1 + t2 + t3;
    plan->vector_bytes = v1 + v2 + v3;
    plan->workspace_bytes = sv_gpu_plan_workspace_bytes(in->n, nb, (int)cols);
    size_t sum = plan->terms_bytes + plan->z_bytes + plan->vector_bytes + plan->workspace_bytes;
    plan->total_bytes = sum + sum / 20;
    plan->device_free = in->device_free;

    /* the residual path: native FP64 where it runs at least a quarter of the
     * single-precision rate (H100/H200: half), else double-float */
    if (in->residual != SV_GPU_RESIDUAL_AUTO)
        plan->residual = in->residual;
    else
        plan->residual = in->fp32_per_fp64 > 4 ? SV_GPU_RESIDUAL_DF : SV_GPU_RESIDUAL_DOUBLE;

    char b1[32], b2[32];
    if (plan->total_bytes <= in->device_free) {
        plan->decision = SV_GPU_USE;
        snprintf(plan->message, sizeof plan->message, "needs %s of the device's %s free (%s residuals)",
                 gib(plan->total_bytes, b1, sizeof b1), gib(in->device_free, b2, sizeof b2),
                 plan->residual == SV_GPU_RESIDUAL_DOUBLE ? "double" : "double-float");
    } else {
        plan->decision = in->required ? SV_GPU_REFUSE : SV_GPU_FALLBACK;
        snprintf(plan->message, sizeof plan->message,
                 "%d unknowns need about %s on the device, more than the %s free%s", in->n,
                 gib(plan->total_bytes, b1, sizeof b1), gib(in->device_free, b2, sizeof b2),
                 in->required ? "" : ": solving on the CPU");
    }
    return SV_OK;
}

size_t sv_gpu_assembly_bytes(const sv_em_tables *t, int nb, size_t walls_bytes)
{
    size_t n1 = (size_t)t->nx * t->ny, n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1), parts = t->lossy ? 2 : 1;
    size_t packed = sv_dense_packed_size(t->n, nb) * sizeof(double) * (parts + 1);
    size_t tables = (parts + 2) * n1 * sizeof(double) + parts * (2 * n1 + n2) * sizeof(double) + 3 * n1;
    size_t unknowns = 3 * (size_t)t->n * sizeof(int), ports = (size_t)(t->n - t->nrt) * (size_t)t->n * sizeof(double);
    size_t sum = packed + tables + unknowns + ports + walls_bytes + SV_GPU_RESERVE;
    return sum + sum / 20;
}
