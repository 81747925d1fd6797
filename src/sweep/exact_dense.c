/* Exact solves with the dense engine: Z(f) is formed in packed storage
 * straight from the terms (single precision for the mixed path, double
 * otherwise), factorised by the dense engine's LDLᵀ, and the mixed path
 * refines the solution with residuals computed in double from the terms,
 * so no double copy of Z is ever held on the fast path. When refinement
 * fails (e.g. at very low frequency, where −jΨ/ω swamps the rest and
 * single precision loses the other terms) Z is formed and factorised in
 * double for that frequency alone. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

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
#pragma omp parallel for schedule(dynamic, 8) if (n >= 1024)
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

/* Refinement target of the mixed path: normwise backward error, with ‖Z‖
 * bounded by Σ|c_k|·‖A_k‖ (the scale at which the residual of the terms is
 * computed). The default 1e-15 gives S within about 3e-13 of double solves
 * on the planar examples; an ill-conditioned model (a synthetic one with
 * condition 1e6 in the tests) needs 1e-16 for 1e-10, at the price of more
 * iterations. Where refinement stalls above a tighter target (its floor is
 * rounding in the residual of the terms), a result at 1e-15 is accepted;
 * anything worse is solved again in double. */
#define SWEEP_REFINE_TOL 1e-15
#define SWEEP_ACCEPT_TOL 1e-15

/* Pivot threshold of the single-precision LDLᵀ (relative to max|z_ij|).
 * The dense engine's default, 1e-4, guards callers that trust the factors;
 * the sweep does not: every solution is refined with residuals from the
 * terms in double, and growth in the factors that spoils it shows as
 * refinement that stalls, which falls back to double below. Near the low
 * end of a band −jΨ/ω makes the smallest pivots about (f/f_max)² of the
 * largest: 9.9e-5 at 1 GHz on the pixelated example, where the default sent
 * the factorisation to the pivoted LU (a full N² single copy, and 0.5–2.7 s
 * instead of 0.06–0.1 s, measured) although the unpivoted factors refine to
 * 1e-16 in 4 steps. Below single precision's unit roundoff a pivot carries
 * no digits, so the LU fallback still guards that. */
#define SWEEP_PIVOT_SINGLE 6e-8

/* A factorised Z(f): the dense engine's LDLᵀ of the packed matrix, in
 * single or double precision. */
typedef struct fact {
    sv_ctx *ctx;
    sv_dense_sym *a;
    sv_dense_factor *f;
    int single, n;
    float complex *w; /* n × p single-precision vectors */
} fact;

static void fact_destroy(fact *F)
{
    sv_dense_factor_destroy(F->f);
    sv_dense_sym_destroy(F->a);
    sv_free(F->ctx, F->w);
    memset(F, 0, sizeof(*F));
}

static sv_status fact_create(sv_ctx *ctx, const sv_sweep_model *m, double freq, int single, fact *F)
{
    memset(F, 0, sizeof(*F));
    F->ctx = ctx;
    F->single = single;
    F->n = m->n;
    /* nb = 0 (no packed term) lets the dense engine choose */
    sv_status st = sv_dense_sym_create(ctx, m->n, single ? SV_DENSE_C32 : SV_DENSE_C64, m->nb, &F->a);
    if (!st) st = form_packed(m, freq, F->a);
    sv_dense_factor_options fo = {.pivot_threshold = single ? SWEEP_PIVOT_SINGLE : 0, .allow_fallback = 1};
    if (!st) st = sv_dense_factor_create(ctx, F->a, &fo, &F->f, NULL);
    if (!st && single) {
        F->w = sv_alloc(ctx, sizeof(float complex) * (size_t)m->n * (size_t)m->nrhs, "single-precision vectors");
        if (!F->w) st = sv_last_status();
    }
    if (st) fact_destroy(F);
    return st;
}

/* v ← Z⁻¹·v (p ≤ nrhs columns) with the factors. In single precision each
 * column is scaled to unit size before rounding, so that small residuals
 * keep their digits. */
static sv_status fact_solve(const fact *F, int p, double complex *v, int ldv)
{
    int n = F->n;
    if (!F->single) return sv_dense_factor_solve(F->f, p, v, ldv);
    double scale[p];
    for (int c = 0; c < p; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) s = fmax(s, cabs(v[(size_t)c * ldv + i]));
        scale[c] = s > 0 && isfinite(s) ? s : 1;
        for (int i = 0; i < n; i++) F->w[(size_t)c * n + i] = (float complex)(v[(size_t)c * ldv + i] / scale[c]);
    }
    sv_status st = sv_dense_factor_solve(F->f, p, F->w, n);
    if (st) return st;
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++) v[(size_t)c * ldv + i] = (double complex)F->w[(size_t)c * n + i] * scale[c];
    return SV_OK;
}

/* Normwise backward error of x for Z·x = rhs, max over columns (∞-norms). */
static double berr_of(int n, int p, double znorm, const double complex *r, const double complex *x, int ldx,
                      const double complex *rhs)
{
    double worst = 0;
    for (int c = 0; c < p; c++) {
        double rn = 0, xn = 0, bn = 0;
        for (int i = 0; i < n; i++) {
            rn = fmax(rn, cabs(r[(size_t)c * n + i]));
            xn = fmax(xn, cabs(x[(size_t)c * ldx + i]));
            bn = fmax(bn, cabs(rhs[(size_t)c * n + i]));
        }
        double den = znorm * xn + bn;
        double e = den > 0 ? rn / den : (rn > 0 ? INFINITY : 0);
        if (isnan(rn) || isnan(xn)) e = NAN;
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* Solve Z·X = rhs (n × p, leading dimension n) with the factors and refine
 * with residuals computed in double from the terms: classical iterative
 * refinement, stopping at the tolerance, after maxit steps, or when a step
 * no longer gains a factor 2 (the rounding floor of the residual). X keeps
 * the best iterate. The dense engine's sv_dense_solve_mixed does the same
 * for one set of right-hand sides; the sweep refines here itself because it
 * solves a second set (the derivative directions) with the same factors. */
static sv_status refine(const fact *F, const sv_sweep_model *m, double freq, int p, const double complex *rhs,
                        double complex *x, int ldx, double tol, int maxit, double *berr, int *its)
{
    int n = m->n;
    double znorm = sv_sweep_model_norm_inf(m, freq);
    size_t sz = (size_t)n * (size_t)p;
    double complex *r = sv_alloc(F->ctx, sizeof(double complex) * sz * 2, "refinement residuals");
    if (!r) return sv_last_status();
    double complex *best = r + sz;
    for (int c = 0; c < p; c++) memcpy(x + (size_t)c * ldx, rhs + (size_t)c * n, sizeof(double complex) * (size_t)n);
    sv_status st = fact_solve(F, p, x, ldx);
    double best_e = INFINITY, prev = INFINITY;
    *its = 0;
    while (!st) {
        st = sv_sweep_model_apply(m, freq, p, x, ldx, r, n);
        if (st) break;
        for (size_t e = 0; e < sz; e++) r[e] = rhs[e] - r[e];
        double be = berr_of(n, p, znorm, r, x, ldx, rhs);
        if (be < best_e) {
            best_e = be;
            for (int c = 0; c < p; c++)
                memcpy(best + (size_t)c * n, x + (size_t)c * ldx, sizeof(double complex) * (size_t)n);
        }
        if (!(be > tol) || *its >= maxit || !(be < 0.5 * prev)) break;
        prev = be;
        st = fact_solve(F, p, r, n);
        if (st) break;
        for (int c = 0; c < p; c++)
            for (int i = 0; i < n; i++) x[(size_t)c * ldx + i] += r[(size_t)c * n + i];
        (*its)++;
    }
    if (!st && isfinite(best_e))
        for (int c = 0; c < p; c++) memcpy(x + (size_t)c * ldx, best + (size_t)c * n, sizeof(double complex) * (size_t)n);
    *berr = best_e;
    sv_free(F->ctx, r);
    return st;
}

sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double tol,
                               double complex *x, int ldx, int nderiv, double complex *dx, int lddx,
                               sv_sweep_exact_info *info)
{
    if (!(tol > 0)) tol = SWEEP_REFINE_TOL;
    double accept = tol > SWEEP_ACCEPT_TOL ? tol : SWEEP_ACCEPT_TOL;
    double t0 = sv_time_now();
    int n = m->n, p = m->nrhs;
    sv_sweep_exact_info out = {0};
    size_t sz = (size_t)n * (size_t)p;
    double complex *b = sv_alloc(ctx, sizeof(double complex) * sz, "exact solve right-hand sides");
    if (!b) return sv_last_status();
    for (size_t i = 0; i < sz; i++) b[i] = m->b[i];
    fact F;
    double be = INFINITY;
    sv_status st = fact_create(ctx, m, freq, mixed, &F);
    if (mixed && st == SV_ERR_SINGULAR) {
        sv_clear_error(); /* singular in single precision: may be fine in double */
        st = SV_OK;
    } else if (!st) {
        sv_sweep_serial ss = sv_sweep_serial_begin(); /* memory-bound steps: see serial.c */
        st = refine(&F, m, freq, p, b, x, ldx, mixed ? tol : 1e-16, mixed ? 30 : 3, &be, &out.iterations);
        sv_sweep_serial_end(ss);
    }
    if (!st && mixed && !(be <= accept)) {
        /* Refinement failed (at very low frequency −jΨ/ω swamps jωL beyond
         * single precision): factorise in double for this frequency. The
         * single matrix goes first, so the peak is 8·N², not 12·N². */
        sv_log(ctx, SV_LOG_DEBUG, "f = %g: single-precision refinement reached %.3g > %.3g: double fallback", freq,
               be, accept);
        fact_destroy(&F);
        out.fell_back = 1;
        st = fact_create(ctx, m, freq, 0, &F);
        if (!st) {
            sv_sweep_serial ss = sv_sweep_serial_begin();
            st = refine(&F, m, freq, p, b, x, ldx, 1e-16, 3, &be, &out.iterations);
            sv_sweep_serial_end(ss);
        }
    }
    if (!st && nderiv > 0) {
        /* the derivative directions, with the same factors: a basis
         * direction needs no more than a few digits, refined to 1e-12 at most */
        double complex *r2 = sv_alloc(ctx, sizeof(double complex) * sz, "derivative right-hand sides");
        if (!r2) st = sv_last_status();
        sv_sweep_serial ss = sv_sweep_serial_begin();
        for (int d = 1; !st && d <= nderiv; d++) {
            double complex *dd = dx + (size_t)(d - 1) * lddx * p;
            double be2;
            int its2;
            st = sv_sweep_deriv_rhs(m, freq, d, x, ldx, dx, lddx, r2, n);
            if (!st) st = refine(&F, m, freq, p, r2, dd, lddx, 1e-12, 4, &be2, &its2);
        }
        sv_sweep_serial_end(ss);
        sv_free(ctx, r2);
    }
    fact_destroy(&F);
    sv_free(ctx, b);
    if (st) return st;
    out.backward_error = be;
    out.seconds = sv_time_now() - t0;
    if (info) *info = out;
    return SV_OK;
}
