/* Exact solves with the dense engine: Z(f) is formed in packed storage
 * straight from the terms (single precision for the mixed path, double
 * otherwise), factorised by the dense engine's LDLᵀ, and the mixed path
 * refines the solution with residuals computed in double from the terms,
 * so no double copy of Z is ever held on the fast path. When refinement
 * fails (e.g. at very low frequency, where −jΨ/ω swamps the rest and
 * single precision loses the other terms) the dense engine calls back
 * form_c64 and factorises in double for that frequency alone. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

#ifdef SV_SWEEP_HAVE_DENSE
#include "solvent/dense.h"

/* Write Z(f) into a packed matrix (C32 or C64) of the same order; packed
 * terms are combined element by element in double and rounded once, CSR
 * terms then added at their positions. */
static sv_status form_packed(const sv_sweep_model *m, double freq, sv_dense_sym *a)
{
    int n = m->n, nt = m->nterms;
    double complex c[nt];
    sv_status st = sv_sweep_coefs(m, freq, c);
    if (st) return st;
    int nb = sv_dense_sym_block(a);
    int single = sv_dense_sym_type(a) == SV_DENSE_C32;
    void *data = sv_dense_sym_data(a);
    int npk = 0;
    const double *pk[nt];
    double complex pc[nt];
    for (int k = 0; k < nt; k++)
        if (m->terms[k].kind == SV_SWEEP_TERM_PACKED) {
            if (m->terms[k].nb != nb)
                return sv_error(SV_ERR_INTERNAL, "packed term block size %d differs from the matrix's %d",
                                m->terms[k].nb, nb);
            pk[npk] = m->terms[k].packed;
            pc[npk++] = c[k];
        }
#pragma omp parallel for schedule(dynamic, 8)
    for (int j = 0; j < n; j++) {
        size_t o = sv_sweep_packed_offset(n, nb, j, j);
        size_t len = (size_t)(n - j);
        if (single) {
            float complex *z = (float complex *)data + o;
            for (size_t i = 0; i < len; i++) {
                double complex s = 0.0;
                for (int k = 0; k < npk; k++) s += pc[k] * pk[k][o + i];
                z[i] = (float complex)s;
            }
        } else {
            double complex *z = (double complex *)data + o;
            for (size_t i = 0; i < len; i++) {
                double complex s = 0.0;
                for (int k = 0; k < npk; k++) s += pc[k] * pk[k][o + i];
                z[i] = s;
            }
        }
    }
    for (int k = 0; k < nt; k++) {
        const sv_sweep_term *t = &m->terms[k];
        if (t->kind != SV_SWEEP_TERM_CSR) continue;
        for (int i = 0; i < n; i++)
            for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++) {
                int j = t->colind[e];
                if (j > i) continue;
                size_t o = sv_sweep_packed_offset(n, nb, i, j);
                if (single)
                    ((float complex *)data)[o] += (float complex)(c[k] * t->values[e]);
                else
                    ((double complex *)data)[o] += c[k] * t->values[e];
            }
    }
    return SV_OK;
}

typedef struct op_user {
    const sv_sweep_model *m;
    double freq;
} op_user;

static sv_status op_residual(void *user, int nrhs, const double complex *x, int ldx, const double complex *b, int ldb,
                             double complex *r, int ldr)
{
    op_user *u = user;
    const sv_sweep_model *m = u->m;
    sv_status st = sv_sweep_model_apply(m, u->freq, nrhs, x, ldx, r, ldr);
    if (st) return st;
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < m->n; i++) r[(size_t)j * ldr + i] = b[(size_t)j * ldb + i] - r[(size_t)j * ldr + i];
    return SV_OK;
}

static sv_status op_form(void *user, sv_dense_sym *a64)
{
    op_user *u = user;
    return form_packed(u->m, u->freq, a64);
}

sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double complex *x,
                               int ldx, sv_sweep_exact_info *info)
{
    double t0 = sv_time_now();
    int n = m->n, p = m->nrhs;
    int nb = m->nb; /* 0 (no packed term) lets the dense engine choose */
    sv_dense_sym *a = NULL;
    sv_status st = sv_dense_sym_create(ctx, n, mixed ? SV_DENSE_C32 : SV_DENSE_C64, nb, &a);
    if (st) return st;
    double complex *b = sv_alloc(ctx, sizeof(double complex) * (size_t)n * (size_t)p, "exact solve right-hand sides");
    if (!b) {
        st = sv_last_status();
        sv_dense_sym_destroy(a);
        return st;
    }
    for (size_t i = 0; i < (size_t)n * (size_t)p; i++) b[i] = m->b[i];
    st = form_packed(m, freq, a);
    sv_sweep_exact_info out = {0};
    if (!st && mixed) {
        op_user u = {m, freq};
        sv_dense_operator op = {.residual = op_residual,
                                .form = op_form,
                                .norm_inf = sv_sweep_model_norm_inf(m, freq),
                                .n = n,
                                .user = &u};
        sv_dense_refine_info ri;
        memset(&ri, 0, sizeof(ri));
        st = sv_dense_solve_mixed(ctx, a, &op, p, b, n, x, ldx, NULL, &ri);
        out.fell_back = ri.fell_back;
        out.iterations = ri.iterations;
    } else if (!st) {
        sv_dense_factor *f = NULL;
        st = sv_dense_factor_create(ctx, a, NULL, &f, NULL);
        if (!st) {
            for (int j = 0; j < p; j++)
                memcpy(x + (size_t)j * ldx, b + (size_t)j * n, sizeof(double complex) * (size_t)n);
            st = sv_dense_factor_solve(f, p, x, ldx);
        }
        sv_dense_factor_destroy(f);
    }
    sv_free(ctx, b);
    sv_dense_sym_destroy(a);
    if (st) return st;
    st = sv_sweep_backward_error(m, freq, x, ldx, &out.backward_error);
    if (st) return st;
    out.seconds = sv_time_now() - t0;
    if (info) *info = out;
    return SV_OK;
}

#else

sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double complex *x,
                               int ldx, sv_sweep_exact_info *info)
{
    (void)ctx;
    (void)m;
    (void)freq;
    (void)x;
    (void)ldx;
    (void)info;
    return sv_error(SV_ERR_UNSUPPORTED, "%s exact solves need the dense engine, which this build lacks: use "
                                        "precision SV_SWEEP_LAPACK",
                    mixed ? "mixed-precision" : "double-precision");
}

#endif
