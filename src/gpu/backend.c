/* The device backend: the sv_gpu_backend vtable around the CUDA back end
 * module (src/gpu/cuda/, loaded by loader.c and reached through its table,
 * cuda/cuda_iface.h), and the device query through it. Errors from the
 * module (an int and a message) become Solvent statuses here: the module
 * itself calls nothing of libsolvent's. Without a module (not built with
 * CUDA, no driver, module missing) both refuse with the loader's reason. */
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"

static sv_status map(int rc, const char *what, const char *msg)
{
    switch (rc) {
    case SVC_OK: return SV_OK;
    case SVC_SINGULAR: return sv_error(SV_ERR_SINGULAR, "%s: %s", what, msg);
    case SVC_NOMEM: return sv_error(SV_ERR_BUDGET, "%s: out of device memory: %s", what, msg);
    default: return sv_error(SV_ERR_INTERNAL, "%s: %s", what, msg);
    }
}

typedef struct dev {
    sv_ctx *ctx;
    const sv_gpu_cuda_module *mod;
    sv_gpu_cuda *g;
    int nterms;
    char msg[256];
} dev;

static sv_status dev_upload(sv_gpu_backend *b, const sv_gpu_problem *p, int modes, int max_cols)
{
    dev *D = b->st;
    int nt = p->nterms;
    if (nt > SV_GPU_CUDA_MAX_TERMS)
        return sv_error(SV_ERR_UNSUPPORTED, "%d terms: the CUDA back end takes at most %d", nt, SV_GPU_CUDA_MAX_TERMS);
    int kind[SV_GPU_CUDA_MAX_TERMS];
    const double *pk[SV_GPU_CUDA_MAX_TERMS], *val[SV_GPU_CUDA_MAX_TERMS];
    const int *rp[SV_GPU_CUDA_MAX_TERMS], *ci[SV_GPU_CUDA_MAX_TERMS];
    size_t nnz[SV_GPU_CUDA_MAX_TERMS];
    for (int k = 0; k < nt; k++) {
        kind[k] = p->terms[k].kind == SV_SWEEP_TERM_PACKED ? 0 : 1;
        pk[k] = p->terms[k].packed;
        val[k] = p->terms[k].values;
        rp[k] = p->terms[k].rowptr;
        ci[k] = p->terms[k].colind;
        nnz[k] = p->terms[k].nnz;
    }
    D->nterms = nt;
    return map(D->mod->upload(D->g, p->n, p->nb, nt, kind, pk, rp, ci, val, nnz, modes, max_cols, D->msg, sizeof D->msg),
               "uploading the terms", D->msg);
}

static sv_status dev_form(sv_gpu_backend *b, const double complex *c)
{
    dev *D = b->st;
    double cc[16];
    for (int k = 0; k < D->nterms; k++) {
        cc[2 * k] = creal(c[k]);
        cc[2 * k + 1] = cimag(c[k]);
    }
    return map(D->mod->form(D->g, cc, D->msg, sizeof D->msg), "forming Z(f)", D->msg);
}

static sv_status dev_factor(sv_gpu_backend *b, double pivot_min)
{
    dev *D = b->st;
    return map(D->mod->factor(D->g, pivot_min, D->msg, sizeof D->msg), "factorising Z(f)", D->msg);
}

static sv_status dev_solve(sv_gpu_backend *b, int ncols, float complex *v)
{
    dev *D = b->st;
    /* float complex is two floats, real part first (C17 6.2.5), as cuComplex */
    return map(D->mod->solve(D->g, ncols, (float *)v, D->msg, sizeof D->msg), "solving", D->msg);
}

static sv_status dev_products(sv_gpu_backend *b, sv_gpu_residual mode, int ncols, const double *x, double *y)
{
    dev *D = b->st;
    return map(D->mod->products(D->g, (int)mode, ncols, x, y, D->msg, sizeof D->msg), "residual products", D->msg);
}

static sv_status dev_asm_tables(sv_gpu_backend *b, const sv_em_tables *t, int nb)
{
    dev *D = b->st;
    return map(D->mod->asm_tables(D->g, t, nb, D->msg, sizeof D->msg), "assembling the tables", D->msg);
}

static sv_status dev_asm_finish(sv_gpu_backend *b, const sv_em_assembly_rows *w, double *L, double *Psi,
                                double *PsiI, double seconds[2])
{
    dev *D = b->st;
    return map(D->mod->asm_finish(D->g, w, L, Psi, PsiI, seconds, D->msg, sizeof D->msg), "assembling the rows",
               D->msg);
}

static void dev_asm_release(sv_gpu_backend *b)
{
    dev *D = b->st;
    D->mod->asm_release(D->g);
}

static void dev_destroy(sv_gpu_backend *b)
{
    if (!b) return;
    dev *D = b->st;
    sv_ctx *ctx = D->ctx;
    D->mod->destroy(D->g);
    sv_free(ctx, D);
    sv_free(ctx, b);
}

static sv_status cuda_backend_create(sv_ctx *ctx, const sv_gpu_cuda_module *mod, int device, sv_gpu_backend **out)
{
    sv_gpu_backend *b = sv_calloc(ctx, 1, sizeof(*b), "CUDA backend");
    dev *D = sv_calloc(ctx, 1, sizeof(*D), "CUDA backend");
    if (!b || !D) {
        sv_free(ctx, b);
        sv_free(ctx, D);
        return sv_last_status();
    }
    D->ctx = ctx;
    D->mod = mod;
    int rc = mod->create(device, &D->g, D->msg, sizeof D->msg);
    if (rc) {
        sv_status st = map(rc, "starting the CUDA back end", D->msg);
        sv_free(ctx, b);
        sv_free(ctx, D);
        return st;
    }
    *b = (sv_gpu_backend){.name = mod->variant, .st = D, .ctx = ctx, .upload = dev_upload, .form = dev_form,
                          .factor = dev_factor, .solve = dev_solve, .products = dev_products,
                          .asm_tables = dev_asm_tables, .asm_finish = dev_asm_finish, .asm_release = dev_asm_release,
                          .destroy = dev_destroy};
    *out = b;
    return SV_OK;
}

sv_status sv_gpu_module_query(const sv_gpu_cuda_module *mod, int device, sv_gpu_device_info *info)
{
    int rc = mod->query(device, info->name, sizeof info->name, &info->cc_major, &info->cc_minor, &info->total_bytes,
                        &info->free_bytes, &info->fp32_per_fp64, info->reason, sizeof info->reason);
    info->available = rc == SVC_OK;
    return rc == SVC_OK ? SV_OK : sv_error(SV_ERR_UNSUPPORTED, "%s", info->reason);
}

sv_status sv_gpu_backend_device(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    char reason[256];
    const sv_gpu_cuda_module *mod = user ? (const sv_gpu_cuda_module *)user : sv_gpu_module_default(reason, sizeof reason);
    if (!mod) {
        if (!sv_gpu_built())
            return sv_error(SV_ERR_UNSUPPORTED, "no GPU back end: Solvent was not built with CUDA (SOLVENT_CUDA)");
        return sv_error(SV_ERR_UNSUPPORTED, "no GPU back end: %s", reason);
    }
    return cuda_backend_create(ctx, mod, device, out);
}
