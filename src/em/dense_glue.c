/* L and Ψ (and Ψ_im) as the dense engine's packed matrices (sv_dense_sym),
 * by the CPU's assembly or another implementation's (solvent/em_assembly.h). */
#include "em_internal.h"

size_t sv_em_assemble_bytes(const sv_em_model *m, int nb)
{
    if (!m) return 0;
    return 2 * sv_dense_sym_bytes(m->n, SV_DENSE_R64, nb);
}

/* The packed layout's columns for the CPU's fill: user is (n, nb). */
static size_t colbase_packed(void *user, int j)
{
    const int *nnb = user;
    return sv_dense_packed_offset(nnb[0], nnb[1], j, j);
}

static sv_status cpu_assemble(void *content, sv_ctx *ctx, const sv_em_model *m, int nb, double *L, double *Psi,
                              double *PsiI)
{
    (void)content;
    int nnb[2] = {m->n, nb};
    return sv_em_assemble_entries(ctx, m, L, Psi, PsiI, colbase_packed, nnb);
}

static const sv_em_assembler cpu_assembler = {.name = "cpu", .content = NULL, .assemble = cpu_assemble};

const sv_em_assembler *sv_em_assembler_cpu(void) { return &cpu_assembler; }

sv_status sv_em_assemble(sv_ctx *ctx, const sv_em_model *m, int nb, sv_dense_sym **L, sv_dense_sym **Psi,
                         sv_em_assembly_info *info)
{
    return sv_em_assemble_with(ctx, m, nb, NULL, L, Psi, NULL, info);
}

/* The packed arrays and the assembler's entries, with the edge profiles'
 * changes on the host (edges.c): whichever implementation filled the rest;
 * *t0 when the arrays were there (the info's time starts there). */
static sv_status assemble_parts(sv_ctx *ctx, const sv_em_model *m, int nb, const sv_em_assembler *a, int three,
                                sv_dense_sym *t[3], double *t0)
{
    double edges = sv_em_edge_profiled(m) ? SV_EM_SHARE_EDGES : 0;
    sv_em_parts parts = sv_em_parts_begin(ctx, SV_EM_SHARE_ALLOC + SV_EM_SHARE_ENTRIES + edges);
    sv_em_part(&parts, SV_EM_SHARE_ALLOC);
    sv_status s = SV_OK;
    for (int k = 0; k < 2 + three && !s; k++) {
        s = sv_dense_sym_create(ctx, m->n, SV_DENSE_R64, nb, &t[k]);
        if (!s) s = sv_progress(ctx, "assembly", (k + 1.0) / (2 + three));
    }
    int nnb[2] = {m->n, t[0] ? sv_dense_sym_block(t[0]) : 0};
    *t0 = sv_time_now();
    sv_threads_saved prev = sv_threads_apply(ctx);
    sv_em_part(&parts, SV_EM_SHARE_ENTRIES);
    if (!s)
        s = a->assemble(a->content, ctx, m, nnb[1], sv_dense_sym_data(t[0]), sv_dense_sym_data(t[1]),
                        three ? sv_dense_sym_data(t[2]) : NULL);
    sv_em_part(&parts, edges);
    if (!s) s = sv_em_edge_correct(ctx, m, sv_dense_sym_data(t[0]), sv_dense_sym_data(t[1]), colbase_packed, nnb);
    sv_em_parts_end(&parts);
    sv_threads_restore(prev);
    if (!s) s = sv_em_check_diagonal(m, sv_dense_sym_data(t[0]), sv_dense_sym_data(t[1]),
                                     three ? sv_dense_sym_data(t[2]) : NULL, colbase_packed, nnb);
    return s;
}

sv_status sv_em_assemble_with(sv_ctx *ctx, const sv_em_model *m, int nb, const sv_em_assembler *a,
                              sv_dense_sym **L, sv_dense_sym **Psi, sv_dense_sym **PsiI, sv_em_assembly_info *info)
{
    if (!m || !L || !Psi) return sv_error(SV_ERR_ARG, "sv_em_assemble: NULL argument");
    *L = *Psi = NULL;
    if (PsiI) *PsiI = NULL;
    if (nb < 0) return sv_error(SV_ERR_ARG, "sv_em_assemble: nb = %d: expected >= 0", nb);
    if (PsiI && !(m->prj->st.tan_delta > 0))
        return sv_error(SV_ERR_ARG, "sv_em_assemble: the imaginary part of Psi asked for a lossless dielectric");
    if (!a) a = &cpu_assembler;
    int three = PsiI != NULL;
    size_t bytes = sv_em_assemble_bytes(m, nb) / 2 * (three ? 3 : 2);
    sv_status s = sv_mem_check(ctx, bytes, three ? "L, Psi and Psi's imaginary part (packed)" : "L and Psi (packed)");
    if (s) return s;
    sv_dense_sym *t[3] = {NULL, NULL, NULL};
    double t0 = 0;
    sv_progress_span op = sv_progress_span_begin(ctx, 0, 1);
    s = assemble_parts(ctx, m, nb, a, three, t, &t0);
    if (!s) s = sv_progress(ctx, "assembly", 1.0);
    sv_progress_span_end(ctx, op);
    if (s) {
        for (int k = 0; k < 3; k++) sv_dense_sym_destroy(t[k]);
        return s;
    }
    sv_em_assembly_info_fill(m, three, t0, info);
    *L = t[0];
    *Psi = t[1];
    if (three) *PsiI = t[2];
    return SV_OK;
}
