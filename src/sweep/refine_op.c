/* The refinement engine's view of an exact solve (sv_dense_refine_ops):
 * the solution X of Z(f)·X = B and its frequency derivatives as groups,
 *     Z·X' = −Z'·X,   Z·X'' = −(Z''·X + 2·Z'·X'),   …
 * (Leibniz: Z·X⁽ᵍ⁾ = −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾), every residual in
 * double from the products of the terms A_k with the real and imaginary
 * parts of the columns, combined with c_k(f) and its derivatives; the
 * exact solver's factors as the preconditioner, and for the fallback the
 * CPU's double solver. The products come from the solver (a GPU's on the
 * device) or the model.
 *
 * A model with low-rank terms (U·W_k·Uᵀ sharing U) keeps their products in
 * rank space, W_k·Uᵀ·x, and a combination Σ c_k·A_k·x costs one product
 * with U for the whole group instead of one per term. Such models' products
 * are always the model's on the CPU (no device forms low-rank terms). */
#include <math.h>
#include <string.h>
#include <cblas.h>

#include "sweep_internal.h"

size_t sv_sweep_op_bytes(int n, int nterms, int nrhs, int nd)
{
    size_t np = (size_t)n * (size_t)nrhs, nw = np * (size_t)(nd + 1), K = (size_t)nterms;
    /* xs, the products (a low-rank term's take rank ≤ n rows), Uᵀ·xs or U·S,
     * and the pending combinations of the low-rank groups (S) */
    size_t doubles = 2 * nw * (2 * K + 2);
    return sizeof(double complex) * (2 * np + 4 * K) + sizeof(double) * doubles +
           (sizeof(double complex *) + sizeof(size_t)) * ((size_t)nrhs * (nd + 1) + K + 1);
}

/* Term k's products of the last term_products of ncols2 real columns: A_k·xs
 * (n × ncols2), or W_k·Uᵀ·xs (rank × ncols2) for a low-rank term. */
static double *term_slot(const sv_sweep_op *o, int k, int ncols2) { return o->ts + o->tsrow[k] * (size_t)ncols2; }

/* The low-rank share of term_products: for every group T = Uᵀ·xs once,
 * then W_k·T into term k's slot. */
static void lowrank_products(const sv_sweep_op *o, int ncols2)
{
    const sv_sweep_model *m = o->m;
    int n = m->n;
    for (int g = 0; g < m->ngroups; g++) {
        const sv_sweep_term *t0 = &m->terms[m->group_terms[m->group_first[g]]];
        int r = t0->rank;
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, r, ncols2, n, 1.0, t0->u, n, o->xs, n, 0.0, o->ut, r);
        for (int e = m->group_first[g]; e < m->group_first[g + 1]; e++) {
            int k = m->group_terms[e];
            cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, r, ncols2, 1.0, m->terms[k].core, r, o->ut, r, 0.0,
                        term_slot(o, k, ncols2), r);
        }
    }
}

/* ts_k = A_k·[Re v, Im v] for every term, v n × ncols (ld ldv). */
static sv_status term_products(const sv_sweep_op *o, int ncols, const double complex *v, int ldv)
{
    int n = o->m->n;
    for (int j = 0; j < ncols; j++)
        for (int i = 0; i < n; i++) {
            double complex e = v[(size_t)j * ldv + i];
            o->xs[(size_t)j * n + i] = creal(e);
            o->xs[(size_t)(ncols + j) * n + i] = cimag(e);
        }
    if (o->m->ngroups == 0) return sv_sweep_solver_products(o->solver, 2 * ncols, o->xs, o->ts);
    for (int k = 0; k < o->m->nterms; k++) {
        if (o->m->term_group[k] >= 0) continue;
        sv_status st = sv_sweep_model_apply_term(o->m, k, 2 * ncols, o->xs, n, term_slot(o, k, 2 * ncols), n);
        if (st) return st;
    }
    lowrank_products(o, 2 * ncols);
    return SV_OK;
}

/* A low-rank group's share of a combination, U·Σ_{k in g} ck·(W_k·Uᵀ·v)[:, col],
 * is gathered in rank space per target y (S, two real columns each) and
 * multiplied by U once for all targets (flush_lowrank): one pass over U
 * instead of one per combination. */
static void combine_lowrank(sv_sweep_op *o, int ncols, const double complex *coef, double scale, int col,
                            double complex *y)
{
    const sv_sweep_model *m = o->m;
    int t = 0;
    while (t < o->npend && o->pend[t] != y) t++;
    if (t == o->npend) {
        o->pend[o->npend++] = y;
        for (int g = 0; g < m->ngroups; g++) {
            int r = m->terms[m->group_terms[m->group_first[g]]].rank;
            memset(o->ps + o->psrow[g] * (size_t)o->pcols + (size_t)2 * t * r, 0, sizeof(double) * 2 * (size_t)r);
        }
    }
    for (int g = 0; g < m->ngroups; g++) {
        int r = m->terms[m->group_terms[m->group_first[g]]].rank;
        double *sre = o->ps + o->psrow[g] * (size_t)o->pcols + (size_t)2 * t * r, *sim = sre + r;
        for (int e = m->group_first[g]; e < m->group_first[g + 1]; e++) {
            int k = m->group_terms[e];
            double complex ck = scale * coef[k];
            if (ck == 0) continue;
            const double *re = term_slot(o, k, 2 * ncols) + (size_t)col * r;
            const double *im = re + (size_t)ncols * r;
            for (int a = 0; a < r; a++) {
                sre[a] += creal(ck) * re[a] - cimag(ck) * im[a];
                sim[a] += creal(ck) * im[a] + cimag(ck) * re[a];
            }
        }
    }
}

/* Every pending target y += U·S (the real and imaginary columns). */
static void flush_lowrank(sv_sweep_op *o)
{
    const sv_sweep_model *m = o->m;
    int n = m->n;
    for (int g = 0; g < m->ngroups && o->npend; g++) {
        const sv_sweep_term *t0 = &m->terms[m->group_terms[m->group_first[g]]];
        int r = t0->rank;
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, 2 * o->npend, r, 1.0, t0->u, n,
                    o->ps + o->psrow[g] * (size_t)o->pcols, r, 0.0, o->ut, n);
        for (int t = 0; t < o->npend; t++) {
            const double *yre = o->ut + (size_t)2 * t * n, *yim = yre + n;
            for (int i = 0; i < n; i++) o->pend[t][i] += CMPLX(yre[i], yim[i]);
        }
    }
    o->npend = 0;
}

/* y (n) += Σ_k scale·coef_k·(A_k·v)[:, col] from the last term_products of
 * ncols columns; the low-rank terms' share lands at the next flush_lowrank. */
static void combine(sv_sweep_op *o, int ncols, const double complex *coef, double scale, int col, double complex *y)
{
    int n = o->m->n;
    if (o->m->ngroups) combine_lowrank(o, ncols, coef, scale, col, y);
    for (int k = 0; k < o->m->nterms; k++) {
        double complex ck = scale * coef[k];
        if (ck == 0 || o->m->term_group[k] >= 0) continue;
        const double *re = term_slot(o, k, 2 * ncols) + (size_t)col * n;
        const double *im = re + (size_t)ncols * n;
        for (int i = 0; i < n; i++) y[i] += ck * CMPLX(re[i], im[i]);
    }
}

/* y = Σ_k coef_k·A_k·x (ncols ≤ nrhs·(nd + 1) columns). */
static sv_status apply_with(sv_sweep_op *o, const double complex *coef, int ncols, const double complex *x, int ldx,
                            double complex *y, int ldy)
{
    sv_status st = term_products(o, ncols, x, ldx);
    if (st) return st;
    for (int j = 0; j < ncols; j++) {
        memset(y + (size_t)j * ldy, 0, sizeof(double complex) * (size_t)o->m->n);
        combine(o, ncols, coef, 1.0, j, y + (size_t)j * ldy);
    }
    flush_lowrank(o);
    return SV_OK;
}

static const double complex *deriv_coefs(const sv_sweep_op *o, int i) { return o->c + (size_t)i * o->m->nterms; }

/* ---- the operations ------------------------------------------------------------- */
static sv_status op_precond(void *user, int ncols, double complex *v, int ldv)
{
    return sv_sweep_solver_precond(((sv_sweep_op *)user)->solver, ncols, v, ldv);
}

static sv_status op_apply(void *user, int ncols, const double complex *x, int ldx, double complex *y, int ldy)
{
    sv_sweep_op *o = user;
    return apply_with(o, o->c, ncols, x, ldx, y, ldy);
}

/* Every group's residual from one pass over the terms: the products A_k·W
 * once, combined with c_k for Z·W and with its derivatives for the groups'
 * right-hand sides. */
static sv_status op_residuals(void *user, int ngroups, const double complex *w, double complex *rhs,
                              double complex *r)
{
    sv_sweep_op *o = user;
    int n = o->m->n, p = o->m->nrhs, ncols = p * ngroups;
    sv_status st = term_products(o, ncols, w, n);
    if (st) return st;
    /* the groups' right-hand sides first (complete before they are copied) */
    for (int g = 1; g < ngroups; g++)
        for (int j = 0; j < p; j++) {
            double complex *h = rhs + (size_t)(g * p + j) * n;
            memset(h, 0, sizeof(double complex) * (size_t)n);
            double binom = 1;
            for (int i = 1; i <= g; i++) {
                binom = binom * (g - i + 1) / i;
                combine(o, ncols, deriv_coefs(o, i), -binom, (g - i) * p + j, h);
            }
        }
    flush_lowrank(o);
    for (int col = 0; col < ncols; col++) {
        double complex *rc = r + (size_t)col * n;
        memcpy(rc, rhs + (size_t)col * n, sizeof(double complex) * (size_t)n);
        combine(o, ncols, o->c, -1.0, col, rc);
    }
    flush_lowrank(o);
    return SV_OK;
}

/* Group g's right-hand side from X and the derivatives below it. */
static sv_status op_group_rhs(void *user, int g, const double complex *x, int ldx, const double complex *dx,
                              int lddx, double complex *r, int ldr)
{
    sv_sweep_op *o = user;
    int n = o->m->n, p = o->m->nrhs;
    for (int j = 0; j < p; j++) memset(r + (size_t)j * ldr, 0, sizeof(double complex) * (size_t)n);
    double binom = 1;
    sv_status st = SV_OK;
    for (int i = 1; i <= g && !st; i++) {
        binom = binom * (g - i + 1) / i;
        int h = g - i; /* derivative of X that Z⁽ⁱ⁾ multiplies */
        const double complex *xh = h ? dx + (size_t)(h - 1) * lddx * p : x;
        st = apply_with(o, deriv_coefs(o, i), p, xh, h ? lddx : ldx, o->t, n);
        for (int j = 0; !st && j < p; j++)
            for (int e = 0; e < n; e++) r[(size_t)j * ldr + e] -= binom * o->t[(size_t)j * n + e];
    }
    return st;
}

/* The solver's factors fell short: Z(f) formed and factorised in double on
 * the CPU. The solver's factors go first, so the peak is the double matrix,
 * not both. */
static sv_status op_fallback(void *user, double reached)
{
    sv_sweep_op *o = user;
    sv_log(o->ctx, SV_LOG_DEBUG, "f = %g: %s: backward error %.3g: double fallback", o->freq,
           sv_sweep_solver_name(o->primary), reached);
    sv_sweep_solver_release(o->primary);
    sv_sweep_solver_plan plan;
    sv_status st = sv_sweep_dense_solver_create(o->ctx, o->m, 0, 0.0, &o->fallback);
    if (!st) st = sv_sweep_solver_setup(o->fallback, o->ctx, o->freq, o->nd, &plan);
    if (!st) o->solver = o->fallback;
    return st;
}

/* ---- set-up ------------------------------------------------------------------------ */
static sv_status op_coefs(sv_sweep_op *o)
{
    const sv_sweep_model *m = o->m;
    int K = m->nterms;
    sv_status st = sv_sweep_model_coefs(m, o->freq, o->c);
    if (!st && o->nd > 0)
        st = sv_sweep_model_coef_derivs(m, o->freq, o->c + K, o->c + 2 * K, o->nd >= 3 ? o->c + 3 * K : NULL);
    return st;
}

sv_status sv_sweep_op_init(sv_sweep_op *o, sv_ctx *ctx, sv_sweep_solver *s, double freq, int nd)
{
    memset(o, 0, sizeof *o);
    const sv_sweep_model *m = sv_sweep_solver_model(s);
    o->ctx = ctx;
    o->m = m;
    o->primary = o->solver = s;
    o->freq = freq;
    o->nd = nd;
    int n = m->n, p = m->nrhs, K = m->nterms;
    size_t np = (size_t)n * (size_t)p, nw = np * (size_t)(nd + 1);
    o->pcols = 2 * p * (nd + 1); /* pending targets: at most one per column */
    o->c = sv_calloc(ctx, (size_t)4 * K + 2 * np, sizeof(double complex), "exact solve vectors");
    o->tsrow = o->c ? sv_alloc(ctx, sizeof(size_t) * (size_t)(2 * K + 1), "refinement product layout") : NULL;
    o->pend = o->tsrow ? sv_alloc(ctx, sizeof(double complex *) * (size_t)o->pcols / 2, "refinement targets") : NULL;
    size_t rows = 0, prow = 0; /* the products' rows, the pending combinations' */
    if (o->tsrow) o->psrow = o->tsrow + K;
    for (int k = 0; o->pend && k < K; k++) {
        int g = m->term_group[k];
        o->tsrow[k] = rows;
        rows += g >= 0 ? (size_t)m->terms[k].rank : (size_t)n;
        if (g >= 0 && m->group_terms[m->group_first[g]] == k) {
            o->psrow[g] = prow;
            prow += (size_t)m->terms[k].rank;
        }
    }
    o->xs = o->pend ? sv_alloc(ctx, sizeof(double) * (2 * nw + rows * 2 * (nw / n) + 2 * nw + prow * o->pcols),
                               "refinement products")
                    : NULL;
    if (!o->xs) {
        sv_status st = sv_last_status();
        sv_sweep_op_free(o);
        return st;
    }
    o->b = o->c + 4 * K;
    o->t = o->b + np;
    o->ts = o->xs + 2 * nw;
    o->ut = o->ts + rows * 2 * (nw / n);
    o->ps = o->ut + 2 * nw;
    for (size_t i = 0; i < np; i++) o->b[i] = m->b[i];
    sv_status st = op_coefs(o);
    if (st) {
        sv_sweep_op_free(o);
        return st;
    }
    o->ops = (sv_dense_refine_ops){.n = n, .nrhs = p, .norm_inf = sv_sweep_model_norm_inf(m, freq), .user = o,
                                   .precond = op_precond, .residuals = op_residuals, .apply = op_apply,
                                   .group_rhs = nd > 0 ? op_group_rhs : NULL};
    return SV_OK;
}

void sv_sweep_op_allow_fallback(sv_sweep_op *o, int allow) { o->ops.fallback = allow ? op_fallback : NULL; }

int sv_sweep_op_in_fallback(const sv_sweep_op *o) { return o->fallback && o->solver == o->fallback; }

void sv_sweep_op_free(sv_sweep_op *o)
{
    if (o->primary) sv_sweep_solver_release(o->primary);
    sv_sweep_solver_destroy(o->fallback); /* releases its factors */
    sv_free(o->ctx, o->c);
    sv_free(o->ctx, o->tsrow);
    sv_free(o->ctx, o->pend);
    sv_free(o->ctx, o->xs);
    memset(o, 0, sizeof *o);
}
