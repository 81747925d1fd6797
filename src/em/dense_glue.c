/* L and Ψ as the dense engine's packed matrices (sv_dense_sym). */
#include "em_internal.h"

size_t sv_em_assemble_bytes(const sv_em_model *m, int nb)
{
    if (!m) return 0;
    return 2 * sv_dense_sym_bytes(m->n, SV_DENSE_R64, nb);
}

static size_t colbase_sym(void *user, int j) { return sv_dense_sym_offset((const sv_dense_sym *)user, j, j); }

sv_status sv_em_assemble(sv_ctx *ctx, const sv_em_model *m, int nb, sv_dense_sym **L, sv_dense_sym **Psi,
                         sv_em_assembly_info *info)
{
    return sv_em_assemble_terms(ctx, m, nb, L, Psi, NULL, info);
}

sv_status sv_em_assemble_terms(sv_ctx *ctx, const sv_em_model *m, int nb, sv_dense_sym **L, sv_dense_sym **Psi,
                               sv_dense_sym **PsiI, sv_em_assembly_info *info)
{
    if (!m || !L || !Psi) return sv_error(SV_ERR_ARG, "sv_em_assemble: NULL argument");
    *L = *Psi = NULL;
    if (PsiI) *PsiI = NULL;
    if (nb < 0) return sv_error(SV_ERR_ARG, "sv_em_assemble: nb = %d: expected >= 0", nb);
    int three = PsiI != NULL;
    size_t bytes = sv_em_assemble_bytes(m, nb) / 2 * (three ? 3 : 2);
    sv_status s = sv_mem_check(ctx, bytes, three ? "L, Psi and Psi's imaginary part (packed)" : "L and Psi (packed)");
    if (s) return s;
    sv_dense_sym *a[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 2 + three && !s; k++) s = sv_dense_sym_create(ctx, m->n, SV_DENSE_R64, nb, &a[k]);
    if (!s)
        s = sv_em_assemble_raw_lossy(ctx, m, sv_dense_sym_data(a[0]), sv_dense_sym_data(a[1]),
                                     three ? sv_dense_sym_data(a[2]) : NULL, colbase_sym, a[0], info);
    if (s) {
        for (int k = 0; k < 3; k++) sv_dense_sym_destroy(a[k]);
        return s;
    }
    *L = a[0];
    *Psi = a[1];
    if (three) *PsiI = a[2];
    return SV_OK;
}
