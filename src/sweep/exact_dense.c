/* Exact solves with the dense engine: Z(f) is formed in packed storage
 * straight from the terms (single precision for the mixed path, double
 * otherwise), factorised by the dense engine's LDLᵀ, and the mixed path
 * refines the solution with residuals computed in double from the terms,
 * so no double copy of Z is ever held on the fast path. When classical
 * refinement stalls (low frequency, where −jΨ/ω outgrows jωL) GMRES-based
 * refinement on the same factors takes over (gmres.c); only when that too
 * fails, or a pivot is below single precision's roundoff, is Z formed and
 * factorised in double for that frequency alone. */
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
#pragma omp parallel for schedule(dynamic, 8) if (n >= 1024) num_threads(sv_threads_team())
    for (int j = 0; j < n; j++) {
        size_t o = sv_dense_packed_offset(n, nb, j, j);
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
                size_t o = sv_dense_packed_offset(n, nb, i, j);
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
 * no digits: the single factorisation then stops (allow_fallback = 0) and
 * the frequency goes straight to the double factorisation. The dense
 * engine's pivoted LU fallback is not used in single here: at 0.1 GHz on the
 * pixelated example it took 0.75 s (LU plus condition estimate, against
 * 0.11 s for the LDLᵀ), held a full N² single copy (8·N² bytes beside the
 * 4·N² packed matrix and the 8·N² of the terms: the 20.5·N² peak measured
 * on the 11402-unknown square) and then reported the matrix singular in
 * single anyway, so the double factorisation followed. */
#define SWEEP_PIVOT_SINGLE 6e-8

/* A factorised Z(f): the dense engine's LDLᵀ of the packed matrix, in
 * single or double precision. */
typedef struct fact {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    sv_dense_sym *a;
    sv_dense_factor *f;
    void *w; /* workspace of the scaled single-precision solves */
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
    F->m = m;
    /* nb = 0 (no packed term) lets the dense engine choose */
    sv_status st = sv_dense_sym_create(ctx, m->n, single ? SV_DENSE_C32 : SV_DENSE_C64, m->nb, &F->a);
    if (!st) st = form_packed(m, freq, F->a);
    /* single: no pivoted LU fallback (see SWEEP_PIVOT_SINGLE) */
    sv_dense_factor_options fo = {.pivot_threshold = single ? SWEEP_PIVOT_SINGLE : 0, .allow_fallback = !single};
    if (!st) st = sv_dense_factor_create(ctx, F->a, &fo, &F->f, NULL);
    if (!st && single) {
        F->w = sv_alloc(ctx, sv_dense_solve_work_bytes(m->n, m->nrhs * (1 + SV_SWEEP_MAX_DERIV)),
                        "single-precision vectors"); /* solution and derivative groups */
        if (!F->w) st = sv_last_status();
    }
    if (st) fact_destroy(F);
    return st;
}

/* v ← Z⁻¹·v (p ≤ nrhs·(1 + SV_SWEEP_MAX_DERIV) columns) with the factors;
 * single-precision ones scale each column before rounding
 * (sv_dense_factor_solve_scaled), so that small residuals keep their
 * digits. */
static sv_status fact_solve(const fact *F, int p, double complex *v, int ldv)
{
    return sv_dense_factor_solve_scaled(F->f, p, v, ldv, F->w);
}

/* The CPU's products and solves for the block refinement (refine_block.c). */
static sv_status cpu_products(void *user, int ncols, const double *xs, double *ts)
{
    const sv_sweep_model *m = ((const fact *)user)->m;
    for (int k = 0; k < m->nterms; k++) {
        sv_status st = sv_sweep_model_apply_term(m, k, ncols, xs, m->n, ts + (size_t)k * m->n * ncols, m->n);
        if (st) return st;
    }
    return SV_OK;
}

static sv_status cpu_solve(void *user, int ncols, double complex *v, int ldv) { return fact_solve(user, ncols, v, ldv); }

static sv_status refine_block(const fact *F, const sv_sweep_model *m, double freq, int nd, const double complex *b,
                              double complex *x, int ldx, double complex *dx, int lddx, double tol, double accept,
                              int maxit, double *berr, int *its)
{
    sv_sweep_refine_ops ops = {.products = cpu_products, .solve = cpu_solve, .user = (void *)F};
    return sv_sweep_refine_block(F->ctx, m, freq, nd, &ops, b, x, ldx, dx, lddx, tol, accept, maxit, berr, its);
}

/* The single factors as GMRES's preconditioner. */
static sv_status fact_precond(void *user, int ncols, double complex *v, int ldv)
{
    return fact_solve(user, ncols, v, ldv);
}

/* When classical refinement stalls (low frequency: see gmres.c): GMRES-based
 * refinement of the solution from its best iterate (at most
 * SWEEP_GMRES_MAX_STEPS steps, each a pass over the terms and a solve with
 * the factors), then of each derivative group in turn (its right-hand side
 * needs the lower ones), from the factors' first solution, to
 * SWEEP_DERIV_TOL. A derivative group that GMRES cannot bring there within
 * SWEEP_GMRES_DERIV_STEPS is left out with the ones above it (zero columns:
 * the sweep's basis skips them), which may cost the sweep an exact solve,
 * never accuracy; so are all of them when the solution took more steps than
 * that. Measured at 0.1 GHz on 0.5 mm cells: a 30 × 30-cell square took
 * 24 steps for the solution, 10–11 for each derivative; the 76 × 76-cell
 * one 60 for the solution and 52–53 for each derivative, at 11402 unknowns
 * about 0.2 s each: three derivatives would have cost three exact solves. */
#define SWEEP_GMRES_MAX_STEPS 240
#define SWEEP_GMRES_DERIV_STEPS 30
static sv_status refine_gmres(const fact *F, const sv_sweep_model *m, double freq, int nd, const double complex *b,
                              double complex *x, int ldx, double complex *dx, int lddx, double tol, double accept,
                              double *berr, int *steps)
{
    int n = m->n, p = m->nrhs, s = 0;
    sv_status st = sv_sweep_gmres_refine(F->ctx, m, freq, fact_precond, (void *)F, b, x, ldx, tol,
                                         SWEEP_GMRES_MAX_STEPS, berr, &s);
    *steps = s;
    if (st || !(*berr <= accept) || nd == 0) return st;
    /* derivatives only where they come cheap: one cycle each, and only if
     * the solution took no more (else the frequency is too hard for them
     * to be worth their steps) */
    int deriv_steps = s <= SWEEP_GMRES_DERIV_STEPS ? SWEEP_GMRES_DERIV_STEPS : 0;
    double complex *r = sv_alloc(F->ctx, sizeof(double complex) * (size_t)n * p, "derivative right-hand sides");
    if (!r) return sv_last_status();
    int g = 1;
    for (; g <= nd && !st; g++) {
        double complex *xg = dx + (size_t)(g - 1) * lddx * p;
        st = sv_sweep_deriv_rhs(m, freq, g, x, ldx, dx, lddx, r, n);
        for (int j = 0; !st && j < p; j++) memcpy(xg + (size_t)j * lddx, r + (size_t)j * n, sizeof(double complex) * n);
        if (!st) st = fact_solve(F, p, xg, lddx);
        double be = INFINITY;
        s = 0;
        if (!st && deriv_steps)
            st = sv_sweep_gmres_refine(F->ctx, m, freq, fact_precond, (void *)F, r, xg, lddx, SWEEP_DERIV_TOL,
                                       deriv_steps, &be, &s);
        *steps += s;
        if (!st && !(be <= 10 * SWEEP_DERIV_TOL)) break;
    }
    for (int h = g; !st && h <= nd; h++) /* left out */
        for (int j = 0; j < p; j++)
            memset(dx + ((size_t)(h - 1) * p + j) * lddx, 0, sizeof(double complex) * (size_t)n);
    sv_free(F->ctx, r);
    return st;
}

/* Threads for refinement. Below about a million stored elements a pass is
 * too short for a thread team (one thread, as for the reduced model: see
 * sv_threads_serial_begin). Above, the passes keep the caller's threads: measured at 2042
 * unknowns on the two-core machine at a quieter moment (load average 2.9,
 * in alternation, 3 runs each), the 21-point sweep took 1.00 s with two
 * threads in refinement against 1.14 s with one; under heavier load (load
 * average 4–5) one thread was ahead in two runs of three, by 10–30 %. The
 * wall-clock target is for a quiet machine, so the caller's count wins;
 * --threads 1 (or OMP_NUM_THREADS=1) is the choice on a busy one. */
static sv_threads_saved refine_threads_begin(int n)
{
    sv_threads_saved ss = {0};
    if ((double)n * n < 2e6) ss = sv_threads_serial_begin();
    return ss;
}

static void refine_threads_end(sv_threads_saved ss) { sv_threads_restore(ss); }

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
        sv_threads_saved ss = refine_threads_begin(n);
        st = refine_block(&F, m, freq, nderiv, b, x, ldx, dx, lddx, mixed ? tol : 1e-16, mixed ? accept : 1.0,
                          mixed ? 30 : 4, &be, &out.iterations);
        refine_threads_end(ss);
    }
    if (!st && mixed && F.f && !(be <= accept)) {
        sv_threads_saved ss = refine_threads_begin(n);
        st = refine_gmres(&F, m, freq, nderiv, b, x, ldx, dx, lddx, tol, accept, &be, &out.gmres_steps);
        refine_threads_end(ss);
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
            sv_threads_saved ss = refine_threads_begin(n);
            st = refine_block(&F, m, freq, nderiv, b, x, ldx, dx, lddx, 1e-16, 1.0, 4, &be, &out.iterations);
            refine_threads_end(ss);
        }
    }
    fact_destroy(&F);
    sv_free(ctx, b);
    if (st) return st;
    out.backward_error = be;
    out.seconds = sv_time_now() - t0;
    if (info) *info = out;
    return SV_OK;
}
