/* The CPU emulation of the device's assembly: the steps of asm_kernel.h
 * on copies of the plan's arrays (standing for device memory), one entry
 * after another where the CUDA kernels (cuda/assemble.cu) run one thread
 * an entry, with the same per-entry functions. */
#include <string.h>

#include "gpu_internal.h"
#include "asm_kernel.h"

typedef struct emu_asm {
    sv_em_tables t;              /* the "device's" tables (its own arrays) */
    int nb;
    size_t e;                    /* elements of a packed array */
    double *L, *Psi, *PsiI;
} emu_asm;

static void asm_free(sv_ctx *ctx, emu_asm *A)
{
    if (!A) return;
    void *a[] = {A->t.P, A->t.P_im, A->t.Lx, A->t.Ly, A->t.Sxx, A->t.Syy, A->t.Sxy, A->t.Sxx_im, A->t.Syy_im,
                 A->t.Sxy_im, A->t.far_P, A->t.far_Lx, A->t.far_Ly, A->t.kind, A->t.ci, A->t.cj,
                 A->L, A->Psi, A->PsiI};
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++) sv_free(ctx, a[k]);
    sv_free(ctx, A);
}

void sv_gpu_emu_asm_release(sv_gpu_backend *b)
{
    asm_free(b->ctx, b->asm_st);
    b->asm_st = NULL;
}

/* A copy of len bytes of src ("uploaded"), or of nothing. */
static void *upload(sv_ctx *ctx, const void *src, size_t len, int *ok)
{
    if (!src || !*ok) return NULL;
    void *d = sv_alloc(ctx, len ? len : 1, "emulated device: assembly");
    if (!d) {
        *ok = 0;
        return NULL;
    }
    memcpy(d, src, len);
    return d;
}

static double *zeros(sv_ctx *ctx, size_t count, int *ok)
{
    if (!*ok) return NULL;
    double *d = sv_calloc(ctx, count ? count : 1, sizeof(double), "emulated device: assembly");
    if (!d) *ok = 0;
    return d;
}

/* The plan's tables and unknowns onto the "device", room for the folds and
 * the packed arrays. */
static emu_asm *asm_upload(sv_ctx *ctx, const sv_em_tables *src, int nb, int *ok)
{
    emu_asm *A = sv_calloc(ctx, 1, sizeof *A, "emulated device: assembly");
    if (!A) {
        *ok = 0;
        return NULL;
    }
    sv_em_tables *t = &A->t;
    *t = *src;
    size_t n1 = (size_t)t->nx * t->ny, n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1), nu = (size_t)t->n;
    t->P = upload(ctx, src->P, n1 * sizeof(double), ok);
    t->P_im = src->lossy ? upload(ctx, src->P_im, n1 * sizeof(double), ok) : NULL;
    t->Lx = upload(ctx, src->Lx, n1 * sizeof(double), ok);
    t->Ly = upload(ctx, src->Ly, n1 * sizeof(double), ok);
    t->far_P = upload(ctx, src->far_P, n1, ok);
    t->far_Lx = upload(ctx, src->far_Lx, n1, ok);
    t->far_Ly = upload(ctx, src->far_Ly, n1, ok);
    t->kind = upload(ctx, src->kind, nu * sizeof *src->kind, ok);
    t->ci = upload(ctx, src->ci, nu * sizeof(int), ok);
    t->cj = upload(ctx, src->cj, nu * sizeof(int), ok);
    t->Sxx = zeros(ctx, n1, ok);
    t->Syy = zeros(ctx, n1, ok);
    t->Sxy = zeros(ctx, n2, ok);
    t->Sxx_im = t->Syy_im = t->Sxy_im = NULL;
    if (t->lossy) {
        t->Sxx_im = zeros(ctx, n1, ok);
        t->Syy_im = zeros(ctx, n1, ok);
        t->Sxy_im = zeros(ctx, n2, ok);
    }
    A->nb = nb;
    A->e = sv_dense_packed_size(t->n, nb);
    A->L = zeros(ctx, A->e, ok);
    A->Psi = zeros(ctx, A->e, ok);
    A->PsiI = t->lossy ? zeros(ctx, A->e, ok) : NULL;
    return A;
}

sv_status sv_gpu_emu_asm_tables(sv_gpu_backend *b, const sv_em_tables *src, int nb, int fail)
{
    sv_gpu_emu_asm_release(b);
    if (fail == 1) return sv_error(SV_ERR_INTERNAL, "emulated device: the assembly's tables failed (a launch failure)");
    int ok = 1;
    emu_asm *A = asm_upload(b->ctx, src, nb, &ok);
    if (!ok) {
        sv_status st = sv_last_status();
        asm_free(b->ctx, A);
        return st;
    }
    b->asm_st = A;
    const sv_em_tables *t = &A->t;
    int n1 = t->nx * t->ny;
    size_t n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1);
    for (int q = 0; q < n1; q++) sv_em_tables_far_entry(t, q); /* 1 */
    for (size_t q = 0; q < n2; q++) {                          /* 2 */
        sv_em_tables_fold_entry(t->P, t->nx, t->ny, q, t->Sxx, t->Syy, t->Sxy);
        if (t->lossy) sv_em_tables_fold_entry(t->P_im, t->nx, t->ny, q, t->Sxx_im, t->Syy_im, t->Sxy_im);
    }
    for (int c = 0; c < t->nrt; c++) { /* 3 */
        size_t base = sv_dense_packed_offset(t->n, nb, c, c);
        for (int r = c; r < t->nrt; r++) sv_gpu_asm_pair(t, r, c, base + (size_t)(r - c), A->L, A->Psi, A->PsiI);
    }
    return SV_OK;
}

sv_status sv_gpu_emu_asm_finish(sv_gpu_backend *b, const sv_em_assembly_rows *w, double *L, double *Psi,
                                double *PsiI, double seconds[2], int fail)
{
    emu_asm *A = b->asm_st;
    if (!A) return sv_error(SV_ERR_INTERNAL, "emulated device: no assembly in progress");
    if (fail == 2) {
        sv_gpu_emu_asm_release(b);
        return sv_error(SV_ERR_INTERNAL, "emulated device: the assembly's rows failed (a launch failure)");
    }
    const sv_em_tables *t = &A->t;
    int n = t->n, nb = A->nb;
    double t0 = sv_time_now();
    for (int c = 0; c < n; c++) { /* 4 */
        size_t base = sv_dense_packed_offset(n, nb, c, c);
        for (int r = c > t->nrt ? c : t->nrt; r < n; r++)
            sv_gpu_asm_port(t, w, r, c, base + (size_t)(r - c), A->L, A->Psi, A->PsiI);
    }
    for (size_t k = 0; k < w->nl; k++) A->L[sv_dense_packed_offset(n, nb, w->l_r[k], w->l_c[k])] += w->l_val[k]; /* 5 */
    for (size_t e = 0; e < w->nps; e++)
        sv_gpu_asm_wall_psi(w, e, sv_dense_packed_offset(n, nb, w->ps_r[e], w->ps_c[e]), A->Psi, A->PsiI);
    double t1 = sv_time_now();
    memcpy(L, A->L, sizeof(double) * A->e); /* "download" */
    memcpy(Psi, A->Psi, sizeof(double) * A->e);
    if (PsiI && A->PsiI) memcpy(PsiI, A->PsiI, sizeof(double) * A->e);
    seconds[0] = t1 - t0;
    seconds[1] = sv_time_now() - t1;
    sv_gpu_emu_asm_release(b);
    return SV_OK;
}
