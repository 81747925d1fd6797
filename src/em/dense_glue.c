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
    if (!m || !L || !Psi) return sv_error(SV_ERR_ARG, "sv_em_assemble: NULL argument");
    *L = *Psi = NULL;
    if (nb < 0) return sv_error(SV_ERR_ARG, "sv_em_assemble: nb = %d: expected >= 0", nb);
    sv_status s = sv_mem_check(ctx, sv_em_assemble_bytes(m, nb), "L and Psi (packed)");
    if (s) return s;
    sv_dense_sym *a = NULL, *b = NULL;
    if ((s = sv_dense_sym_create(ctx, m->n, SV_DENSE_R64, nb, &a))) return s;
    if ((s = sv_dense_sym_create(ctx, m->n, SV_DENSE_R64, nb, &b))) {
        sv_dense_sym_destroy(a);
        return s;
    }
    s = sv_em_assemble_raw(ctx, m, sv_dense_sym_data(a), sv_dense_sym_data(b), colbase_sym, a, info);
    if (s) {
        sv_dense_sym_destroy(a);
        sv_dense_sym_destroy(b);
        return s;
    }
    *L = a;
    *Psi = b;
    return SV_OK;
}
