/* Solvent planar EM model: the assembly of L and Ψ (and Ψ_im) by another
 * implementation than the CPU's, an accelerator's (solvent/gpu.h,
 * sv_gpu_assembler).
 *
 * The CPU assembly (sv_em_assemble) computes small tables of every distinct
 * coefficient and fills the N²/2 packed entries by lookups
 * (solvent/em_tables.h). An accelerator does the bulk of it — the far table
 * entries by the point approximation and the image series, the folds, the
 * fill — from a plan the CPU makes:
 *   sv_em_assembly_plan_create   the tables with their near entries (the
 *                                closed forms), the far ones marked for the
 *                                device, the unknowns' kinds and cells
 *   sv_em_assembly_plan_rows     what the tables do not give: the rows of the
 *                                port half rooftops' L, and thick metal's
 *                                side-wall updates (may overlap the device's
 *                                work on the tables)
 * and applying both as solvent/em_tables.h defines them reproduces the CPU
 * assembly; em then adds the edge profile of strips one cell wide on the
 * host (edges.c), after whichever implementation filled the rest. An implementation is an sv_em_assembler (content plus its one
 * operation), passed to sv_em_assemble_with; em checks the result's
 * diagonal and reports as for its own assembly. See docs/gpu.md,
 * "Assembly on the device". */
#ifndef SOLVENT_EM_ASSEMBLY_H
#define SOLVENT_EM_ASSEMBLY_H

#include "solvent/core.h"
#include "solvent/dense.h"
#include "solvent/em.h"
#include "solvent/em_tables.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the plan ------------------------------------------------------------- */
typedef struct sv_em_assembly_plan sv_em_assembly_plan;

/* The tables of model m (borrowed: it must outlive the plan) with their near
 * entries computed (in parallel with ctx's threads, reporting progress:
 * SV_ERR_CANCELLED when the callback stops it), their far entries left
 * to the implementation (far_P, far_Lx, far_Ly), the unknowns' kinds and
 * cells; psi_im = 1 asks for Ψ's imaginary part too (a lossy dielectric:
 * SV_ERR_ARG otherwise), so P is complex. */
sv_status sv_em_assembly_plan_create(sv_ctx *ctx, const sv_em_model *m, int psi_im, sv_em_assembly_plan **out);
void sv_em_assembly_plan_destroy(sv_em_assembly_plan *p);
/* The tables (host arrays owned by the plan; S* are NULL: the
 * implementation folds P itself, sv_em_tables_fold_entry). */
const sv_em_tables *sv_em_assembly_plan_tables(const sv_em_assembly_plan *p);
/* The port rows of L and the side walls' updates, computed on the first
 * call (in parallel with ctx's threads, reporting progress). *rows is
 * owned by the plan. */
sv_status sv_em_assembly_plan_rows(sv_em_assembly_plan *p, const sv_em_assembly_rows **rows);

/* ---- assemblers ----------------------------------------------------------- */
/* An implementation of the assembly: `assemble` fills L, Ψ and, when PsiI is
 * not NULL, Ψ_im (packed R64 arrays of order N = sv_em_model_unknowns(m),
 * block size nb, zero-filled) with what the CPU's tables, fill and side
 * walls give. */
typedef struct sv_em_assembler {
    const char *name;
    void *content;
    sv_status (*assemble)(void *content, sv_ctx *ctx, const sv_em_model *m, int nb, double *L, double *Psi,
                          double *PsiI);
} sv_em_assembler;

/* The CPU's own assembler (what a NULL assembler means): for an
 * implementation that stands in for it where it cannot run. */
const sv_em_assembler *sv_em_assembler_cpu(void);

/* sv_em_assemble by assembler a (NULL: the CPU's), with Ψ's imaginary part
 * into *PsiI when PsiI is not NULL (a lossy dielectric only). The memory
 * check, the diagonal's check, progress and info as sv_em_assemble. */
sv_status sv_em_assemble_with(sv_ctx *ctx, const sv_em_model *m, int nb, const sv_em_assembler *a,
                              sv_dense_sym **L, sv_dense_sym **Psi, sv_dense_sym **PsiI, sv_em_assembly_info *info);

#ifdef __cplusplus
}
#endif
#endif
