/* The device's assembly of L, Ψ (and Ψ_im), one entry per call, written
 * once for both compilers like df_kernel.h: as plain C it is the CPU
 * emulation's (emu_assembly.c), as CUDA the kernels' (cuda/assemble.cu).
 * Every formula comes from the em module's solvent/em_tables.h, the same
 * functions its CPU assembly calls, and every entry is written or added in
 * the order the CPU assembly writes and adds it:
 *   1. the tables' far entries (P, P_im, Lx, Ly) where the plan marks them;
 *   2. the folds of P into Sxx, Syy, Sxy (and of P_im);
 *   3. every rooftop pair (r, c), r ≥ c, from the tables;
 *   4. the rows of the port half rooftops: L from the plan, Ψ from P;
 *   5. the side walls' δL, then their δΨ contributions, entry by entry in
 *      the plan's order.
 * Arrays are packed (dense_layout.h, block size nb) and zero-filled first,
 * as the CPU's sv_dense_sym. */
#ifndef SV_GPU_ASM_KERNEL_H
#define SV_GPU_ASM_KERNEL_H

#include <stddef.h>

#if defined(__CUDACC__)
#define SV_GPU_ASM_FN __host__ __device__ __forceinline__
#ifndef SV_LAYOUT_FN
#define SV_LAYOUT_FN __host__ __device__ __forceinline__
#endif
#else
#define SV_GPU_ASM_FN static inline
#endif
#include "solvent/dense_layout.h"
#include "solvent/em_tables.h"

/* 3. Rooftops r ≥ c (both < nrt) at packed offset o. */
SV_GPU_ASM_FN void sv_gpu_asm_pair(const sv_em_tables *t, int r, int c, size_t o, double *L, double *Psi,
                                   double *PsiI)
{
    double l, p, pi = 0;
    sv_em_tables_pair(t, t->kind[r], t->ci[r], t->cj[r], t->kind[c], t->ci[c], t->cj[c], &l, &p, PsiI ? &pi : NULL);
    L[o] = l;
    Psi[o] = p;
    if (PsiI) PsiI[o] = pi;
}

/* 4. Port half rooftop r (≥ nrt) with unknown c ≤ r, at packed offset o. */
SV_GPU_ASM_FN void sv_gpu_asm_port(const sv_em_tables *t, const sv_em_assembly_rows *w, int r, int c, size_t o,
                                   double *L, double *Psi, double *PsiI)
{
    L[o] = w->port_L[(size_t)(r - t->nrt) + (size_t)w->np * (size_t)c];
    Psi[o] = sv_em_psi_cells(t->P, t->nx, t->kind[r], t->ci[r], t->cj[r], t->kind[c], t->ci[c], t->cj[c]);
    if (PsiI) PsiI[o] = sv_em_psi_cells(t->P_im, t->nx, t->kind[r], t->ci[r], t->cj[r], t->kind[c], t->ci[c], t->cj[c]);
}

/* 5. The walls' δΨ of distinct entry e, at packed offset o. */
SV_GPU_ASM_FN void sv_gpu_asm_wall_psi(const sv_em_assembly_rows *w, size_t e, size_t o, double *Psi, double *PsiI)
{
    for (size_t k = w->ps_start[e]; k < w->ps_start[e + 1]; k++) {
        Psi[o] += w->ps_val[k];
        if (PsiI) PsiI[o] += w->ps_val_im[k];
    }
}

#endif
