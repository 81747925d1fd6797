/* The parts of em that use the dense engine: L and Ψ as sv_dense_sym
 * packed matrices, and the direct solve at one frequency. */
#include <math.h>
#include <string.h>

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

sv_status sv_em_solve(sv_ctx *ctx, const sv_em_model *m, const sv_dense_sym *L, const sv_dense_sym *Psi,
                      const sv_em_csr *G, double freq_hz, double complex *y)
{
    if (!m || !L || !Psi || !y) return sv_error(SV_ERR_ARG, "sv_em_solve: NULL argument");
    if (!(freq_hz > 0) || !isfinite(freq_hz))
        return sv_error(SV_ERR_ARG, "sv_em_solve: frequency = %g Hz: expected a finite value > 0 (the "
                                    "quasi-static model is singular at DC)",
                        freq_hz);
    int n = m->n, np = m->prj->nports;
    if (sv_dense_sym_order(L) != n || sv_dense_sym_order(Psi) != n || sv_dense_sym_type(L) != SV_DENSE_R64 ||
        sv_dense_sym_type(Psi) != SV_DENSE_R64 || sv_dense_sym_block(L) != sv_dense_sym_block(Psi))
        return sv_error(SV_ERR_ARG, "sv_em_solve: L and Psi must be R64 of order N = %d with one block size", n);
    double complex zs = sv_em_surface_impedance(m->prj->st.sigma, m->prj->st.t, freq_hz);
    if (zs != 0 && !G) return sv_error(SV_ERR_ARG, "sv_em_solve: G is NULL but the metal is lossy");
    double w = 2 * SV_EM_PI * freq_hz;
    sv_dense_sym *z = NULL;
    sv_status s = sv_dense_sym_create(ctx, n, SV_DENSE_C64, sv_dense_sym_block(L), &z);
    if (s) return s;
    double complex *zd = sv_dense_sym_data(z);
    const double *ld = sv_dense_sym_cdata(L), *pd = sv_dense_sym_cdata(Psi);
    size_t len = sv_dense_sym_size(z);
    /* same layout for every type: one offset addresses the same entry */
    for (size_t q = 0; q < len; q++) zd[q] = I * (w * ld[q] - pd[q] / w);
    if (zs != 0)
        for (int r = 0; r < n; r++)
            for (int k = G->rowptr[r]; k < G->rowptr[r + 1]; k++)
                if (G->col[k] <= r) zd[sv_dense_sym_offset(z, r, G->col[k])] += zs * G->val[k];
    double complex *x = sv_alloc(ctx, sizeof *x * (size_t)n * np, "em port solutions");
    double *b = sv_alloc(ctx, sizeof *b * (size_t)n * np, "em port right-hand sides");
    sv_dense_factor *f = NULL;
    if (!x || !b) {
        s = sv_last_status();
        goto out;
    }
    sv_em_port_rhs(m, b, n);
    for (size_t q = 0; q < (size_t)n * np; q++) x[q] = b[q];
    if ((s = sv_dense_factor_create(ctx, z, NULL, &f, NULL))) goto out;
    if ((s = sv_dense_factor_solve(f, np, x, n))) goto out;
    s = sv_em_port_admittance(m, x, n, y);
out:
    sv_dense_factor_destroy(f);
    sv_free(ctx, x);
    sv_free(ctx, b);
    sv_dense_sym_destroy(z);
    return s;
}
