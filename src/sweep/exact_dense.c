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

/* Kept for the operator's contract (the sweep handles the fallback itself
 * so that the single matrix is freed before the double one is made). */
static sv_status op_form(void *user, sv_dense_sym *a64)
{
    op_user *u = user;
    return form_packed(u->m, u->freq, a64);
}

/* Refinement target of the mixed path: normwise backward error, with ‖Z‖
 * bounded by Σ|c_k|·‖A_k‖ (the scale at which the residual of the terms is
 * computed). The default 1e-15 gives S within about 3e-13 of double solves
 * on the planar examples; an ill-conditioned model (a synthetic one with
 * condition 1e6 in the tests) needs 1e-16 for 1e-10, at the price of more
 * iterations (GMRES). Where refinement cannot reach a tighter target (its
 * floor is rounding in the residual of the terms), a result at 1e-15 is
 * accepted; anything worse is solved again in double. */
#define SWEEP_REFINE_TOL 1e-15
#define SWEEP_ACCEPT_TOL 1e-15

/* Double precision: form Z in C64 packed, factor, solve, and polish with up
 * to two steps of refinement with residuals from the terms. */
static sv_status solve_double(sv_ctx *ctx, const sv_sweep_model *m, double freq, const double complex *b,
                              double complex *x, int ldx, sv_sweep_exact_info *out)
{
    int n = m->n, p = m->nrhs;
    sv_dense_sym *a = NULL;
    sv_dense_factor *f = NULL;
    double complex *r = NULL;
    sv_status st = sv_dense_sym_create(ctx, n, SV_DENSE_C64, m->nb, &a);
    if (!st) st = form_packed(m, freq, a);
    if (!st) st = sv_dense_factor_create(ctx, a, NULL, &f, NULL);
    if (!st) {
        for (int j = 0; j < p; j++) memcpy(x + (size_t)j * ldx, b + (size_t)j * n, sizeof(double complex) * (size_t)n);
        st = sv_dense_factor_solve(f, p, x, ldx);
    }
    if (!st) st = sv_sweep_backward_error(m, freq, x, ldx, &out->backward_error);
    if (!st && out->backward_error > 1e-16) {
        r = sv_alloc(ctx, sizeof(double complex) * (size_t)n * (size_t)p, "double refinement residual");
        if (!r) st = sv_last_status();
        for (int it = 0; !st && it < 2 && out->backward_error > 1e-16; it++) {
            st = sv_sweep_model_residual(m, freq, x, ldx, r, n);
            if (!st) st = sv_dense_factor_solve(f, p, r, n);
            for (int j = 0; !st && j < p; j++)
                for (int i = 0; i < n; i++) x[(size_t)j * ldx + i] += r[(size_t)j * n + i];
            if (!st) st = sv_sweep_backward_error(m, freq, x, ldx, &out->backward_error);
            out->iterations++;
        }
    }
    sv_free(ctx, r);
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(a);
    return st;
}

sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double tol,
                               double complex *x, int ldx, sv_sweep_exact_info *info)
{
    if (!(tol > 0)) tol = SWEEP_REFINE_TOL;
    double t0 = sv_time_now();
    int n = m->n, p = m->nrhs;
    sv_sweep_exact_info out = {0};
    double complex *b = sv_alloc(ctx, sizeof(double complex) * (size_t)n * (size_t)p, "exact solve right-hand sides");
    if (!b) return sv_last_status();
    for (size_t i = 0; i < (size_t)n * (size_t)p; i++) b[i] = m->b[i];
    sv_status st = SV_OK;
    if (mixed) {
        /* nb = 0 (no packed term) lets the dense engine choose */
        sv_dense_sym *a = NULL;
        st = sv_dense_sym_create(ctx, n, SV_DENSE_C32, m->nb, &a);
        if (!st) st = form_packed(m, freq, a);
        if (!st) {
            op_user u = {m, freq};
            sv_dense_operator op = {.residual = op_residual,
                                    .form = op_form,
                                    .norm_inf = sv_sweep_model_norm_inf(m, freq),
                                    .n = n,
                                    .user = &u};
            sv_dense_refine_options ro = {.tolerance = tol, .allow_gmres = 1, .allow_fallback = 0};
            sv_dense_refine_info ri;
            memset(&ri, 0, sizeof(ri));
            st = sv_dense_solve_mixed(ctx, a, &op, p, b, n, x, ldx, &ro, &ri);
            out.iterations = ri.iterations;
            if (st == SV_ERR_NOCONV && ri.backward_error <= (tol > SWEEP_ACCEPT_TOL ? tol : SWEEP_ACCEPT_TOL)) {
                sv_clear_error();
                st = SV_OK;
            }
        }
        /* the single matrix goes before the double one comes: 8·N² at the peak, not 12·N² */
        sv_dense_sym_destroy(a);
        if (st == SV_ERR_NOCONV || st == SV_ERR_SINGULAR) {
            sv_clear_error();
            out.fell_back = 1;
            st = solve_double(ctx, m, freq, b, x, ldx, &out);
        } else if (!st) {
            st = sv_sweep_backward_error(m, freq, x, ldx, &out.backward_error);
        }
    } else {
        st = solve_double(ctx, m, freq, b, x, ldx, &out);
    }
    sv_free(ctx, b);
    if (st) return st;
    out.seconds = sv_time_now() - t0;
    if (info) *info = out;
    return SV_OK;
}

#else

sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double tol,
                               double complex *x, int ldx, sv_sweep_exact_info *info)
{
    (void)tol;
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
