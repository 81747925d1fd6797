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
    /* single: no pivoted LU fallback (see SWEEP_PIVOT_SINGLE) */
    sv_dense_factor_options fo = {.pivot_threshold = single ? SWEEP_PIVOT_SINGLE : 0, .allow_fallback = !single};
    if (!st) st = sv_dense_factor_create(ctx, F->a, &fo, &F->f, NULL);
    if (!st && single) {
        F->w = sv_alloc(ctx, sizeof(float complex) * (size_t)m->n * (size_t)m->nrhs * (1 + SV_SWEEP_MAX_DERIV),
                        "single-precision vectors"); /* solution and derivative groups */
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

/* Solve the solution and its frequency derivatives together and refine
 * them as one block, with residuals computed in double from the terms.
 *
 * The columns are W = [X, X', X'', …] (p each, nd + 1 groups), the solutions
 * of the block lower-triangular system
 *     Z·X = B,   Z·X' = −Z'·X,   Z·X'' = −(Z''·X + 2·Z'·X'),   …
 * Every step computes the products A_k·W once for all columns (one pass
 * over each term) and takes every residual from them: R0 = B − Z·X,
 * R1 = −Z'·X − Z·X', R2 = −Z''·X − 2·Z'·X' − Z·X'' (Z' and Z'' by
 * combining the same products with the coefficients' derivatives), then
 * corrects all columns with one solve with the factors (block Jacobi:
 * derivative group g lags the solution by g steps). Why: refinement is memory-bound, each pass reads
 * the 8·N² bytes of the packed terms or the 4·N² of the single factors, and
 * a pass over 6 columns costs about what a pass over 2 does. Refining the
 * three groups one after the other (as before) took about 24 passes per
 * exact solve at 2042 unknowns, 5 ms each, against 0.055 s for the
 * factorisation; together they take about 6.
 *
 * The solution column group stops at its tolerance tol, after maxit steps,
 * or when a step no longer gains a factor 2 (the rounding floor of the
 * residual); the derivative groups, which only orient basis directions,
 * stop at SWEEP_DERIV_TOL or SWEEP_DERIV_EXTRA steps after the solution
 * group, whichever comes first. A solution group that stalls above accept
 * ends the loop at once (the caller falls back to double). X keeps the solution's best iterate; *berr is its backward
 * error (normwise, ‖Z‖ bounded by Σ|c_k|·‖A_k‖). */
/* Derivative directions are refined to a backward error of 1e-13, at most
 * 3 steps beyond the solution's. They only widen the basis (what the sweep
 * reports is checked by its residual estimate), but their accuracy decides
 * how much a basis direction is worth: inaccurate ones do not deflate and
 * add noise, not information. Exact solves needed at 2042 unknowns for
 * 21/41/201/1001 points with three derivatives: 6/6/7/7 at 1e-9 and at
 * 1e-12, 5/6/7/7 at 1e-13 and at 1e-15; with two derivatives 7/7/8 at 1e-9,
 * 6/6/7/8 at 1e-13. At the low end of a band, where Z is ill-conditioned,
 * a backward error of 5e-11 let a 41-point sweep of a 30 × 30-cell square
 * need 4 exact solves instead of 3. Stopping them 2 steps after the
 * solution instead of 3 saved 18 ms per exact solve at 2042 unknowns but
 * cost an exact solve at 41, 201 and 1001 points. */
#define SWEEP_DERIV_TOL 1e-13
#define SWEEP_DERIV_EXTRA 3

typedef struct block {
    int n, p, nd, w;     /* order, ports, derivative groups, columns w = p·(nd + 1) */
    double complex *c;   /* coefficients */
    double complex *d[SV_SWEEP_MAX_DERIV]; /* their derivatives d[i−1] = c⁽ⁱ⁾ */
    double *xs, *ts;     /* real parts | imaginary parts of W; per-term products */
} block;

/* ts_k = A_k·[Re W, Im W] for every term. */
static sv_status block_products(const sv_sweep_model *m, block *B, const double complex *W)
{
    int n = B->n, w = B->w;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < n; i++) {
            double complex v = W[(size_t)j * n + i];
            B->xs[(size_t)j * n + i] = creal(v);
            B->xs[(size_t)(w + j) * n + i] = cimag(v);
        }
    for (int k = 0; k < m->nterms; k++) {
        sv_status st =
            sv_sweep_model_apply_term(m, k, 2 * w, B->xs, n, B->ts + (size_t)k * n * 2 * (size_t)w, n);
        if (st) return st;
    }
    return SV_OK;
}

/* y (n) += Σ_k coef_k · (A_k·W)[:, col] */
static void block_combine(const sv_sweep_model *m, const block *B, const double complex *coef, double scale,
                          int col, double complex *y)
{
    int n = B->n, w = B->w;
    for (int k = 0; k < m->nterms; k++) {
        double complex ck = scale * coef[k];
        if (ck == 0) continue;
        const double *re = B->ts + (size_t)k * n * 2 * (size_t)w + (size_t)col * n;
        const double *im = re + (size_t)w * n;
        for (int i = 0; i < n; i++) y[i] += ck * CMPLX(re[i], im[i]);
    }
}

/* Residuals of all groups (R, n × w) and the right-hand sides of the
 * derivative groups (rhs, n × w; group 0 is B, set by the caller). */
static void block_residuals(const sv_sweep_model *m, const block *B, double complex *rhs, double complex *R)
{
    int n = B->n, p = B->p;
    for (int g = 0; g <= B->nd; g++)
        for (int j = 0; j < p; j++) {
            int col = g * p + j;
            double complex *h = rhs + (size_t)col * n, *r = R + (size_t)col * n;
            if (g > 0) { /* −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾ (sweep_internal.h) */
                memset(h, 0, sizeof(double complex) * (size_t)n);
                double binom = 1;
                for (int i = 1; i <= g; i++) {
                    binom = binom * (g - i + 1) / i;
                    block_combine(m, B, B->d[i - 1], -binom, (g - i) * p + j, h);
                }
            }
            memcpy(r, h, sizeof(double complex) * (size_t)n);
            block_combine(m, B, B->c, -1.0, col, r);
        }
}

static sv_status refine_block(const fact *F, const sv_sweep_model *m, double freq, int nd, const double complex *b,
                              double complex *x, int ldx, double complex *dx, int lddx, double tol, double accept,
                              int maxit, double *berr, int *its)
{
    int n = m->n, p = m->nrhs, nt = m->nterms;
    block B = {.n = n, .p = p, .nd = nd, .w = p * (nd + 1)};
    double complex c[nt], d[SV_SWEEP_MAX_DERIV][nt];
    B.c = c;
    for (int i = 0; i < SV_SWEEP_MAX_DERIV; i++) B.d[i] = d[i];
    sv_status st = sv_sweep_coefs(m, freq, c);
    if (!st && nd > 0) st = sv_sweep_coef_derivs(m, freq, d[0], d[1], nd >= 3 ? d[2] : NULL);
    if (st) return st;
    double znorm = sv_sweep_model_norm_inf(m, freq);
    size_t nw = (size_t)n * (size_t)B.w, np = (size_t)n * (size_t)p;
    double complex *W = sv_alloc(F->ctx, sizeof(double complex) * (3 * nw + np), "refinement vectors");
    double *re = sv_alloc(F->ctx, sizeof(double) * 2 * nw * (size_t)(nt + 1), "refinement products");
    if (!W || !re) {
        st = sv_last_status();
        sv_free(F->ctx, W);
        sv_free(F->ctx, re);
        return st;
    }
    double complex *R = W + nw, *rhs = R + nw, *best = rhs + nw;
    B.xs = re;
    B.ts = re + 2 * nw;
    memcpy(rhs, b, sizeof(double complex) * np);
    memcpy(W, b, sizeof(double complex) * np);
    memset(W + np, 0, sizeof(double complex) * (nw - np)); /* derivatives: first correction next step */
    st = fact_solve(F, p, W, n);
    double best_e = INFINITY, prev = INFINITY;
    int main_done = 0, extra = 0;
    *its = 0;
    while (!st) {
        st = block_products(m, &B, W);
        if (st) break;
        block_residuals(m, &B, rhs, R);
        double be = berr_of(n, p, znorm, R, W, n, rhs);
        if (be < best_e) {
            best_e = be;
            memcpy(best, W, sizeof(double complex) * np);
        }
        /* the solution group: converged, or at its rounding floor */
        if (!main_done && (!(be > tol) || !(be < 0.5 * prev))) main_done = 1;
        prev = fmin(prev, be);
        if (main_done && !(best_e <= accept)) break; /* stalled short: the caller falls back */
        int deriv_done = 1;
        for (int g = 1; g <= nd && deriv_done; g++) {
            size_t o = (size_t)g * np;
            if (!(berr_of(n, p, znorm, R + o, W + o, n, rhs + o) <= SWEEP_DERIV_TOL)) deriv_done = 0;
        }
        if (main_done) extra++;
        if ((main_done && (deriv_done || extra > SWEEP_DERIV_EXTRA)) || *its >= maxit) break;
        st = fact_solve(F, B.w, R, n);
        if (st) break;
        for (size_t e = 0; e < nw; e++) W[e] += R[e];
        (*its)++;
    }
    if (!st) {
        if (isfinite(best_e)) memcpy(W, best, sizeof(double complex) * np);
        for (int j = 0; j < p; j++) memcpy(x + (size_t)j * ldx, W + (size_t)j * n, sizeof(double complex) * (size_t)n);
        for (int g = 1; g <= nd; g++)
            for (int j = 0; j < p; j++)
                memcpy(dx + (size_t)(g - 1) * lddx * p + (size_t)j * lddx, W + ((size_t)g * p + j) * n,
                       sizeof(double complex) * (size_t)n);
    }
    *berr = best_e;
    sv_free(F->ctx, W);
    sv_free(F->ctx, re);
    return st;
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
 * serial.c). Above, the passes keep the caller's threads: measured at 2042
 * unknowns on the two-core machine at a quieter moment (load average 2.9,
 * in alternation, 3 runs each), the 21-point sweep took 1.00 s with two
 * threads in refinement against 1.14 s with one; under heavier load (load
 * average 4–5) one thread was ahead in two runs of three, by 10–30 %. The
 * wall-clock target is for a quiet machine, so the caller's count wins;
 * --threads 1 (or OMP_NUM_THREADS=1) is the choice on a busy one. */
static sv_sweep_serial refine_threads_begin(int n)
{
    sv_sweep_serial ss = {0, 0};
    if ((double)n * n < 2e6) ss = sv_sweep_serial_begin();
    return ss;
}

static void refine_threads_end(int n, sv_sweep_serial ss)
{
    if ((double)n * n < 2e6) sv_sweep_serial_end(ss);
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
        sv_sweep_serial ss = refine_threads_begin(n);
        st = refine_block(&F, m, freq, nderiv, b, x, ldx, dx, lddx, mixed ? tol : 1e-16, mixed ? accept : 1.0,
                          mixed ? 30 : 4, &be, &out.iterations);
        refine_threads_end(n, ss);
    }
    if (!st && mixed && F.f && !(be <= accept)) {
        sv_sweep_serial ss = refine_threads_begin(n);
        st = refine_gmres(&F, m, freq, nderiv, b, x, ldx, dx, lddx, tol, accept, &be, &out.gmres_steps);
        refine_threads_end(n, ss);
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
            sv_sweep_serial ss = refine_threads_begin(n);
            st = refine_block(&F, m, freq, nderiv, b, x, ldx, dx, lddx, 1e-16, 1.0, 4, &be, &out.iterations);
            refine_threads_end(n, ss);
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
