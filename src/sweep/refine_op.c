/* The refinement engine's view of an exact solve (sv_dense_refine_ops):
 * the solution X of Z(f)·X = B and its frequency derivatives as groups,
 *     Z·X' = −Z'·X,   Z·X'' = −(Z''·X + 2·Z'·X'),   …
 * (Leibniz: Z·X⁽ᵍ⁾ = −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾), every residual in
 * double from the products of the terms A_k with the real and imaginary
 * parts of the columns, combined with c_k(f) and its derivatives; the
 * exact solver's factors as the preconditioner, and for the fallback the
 * CPU's double solver. The products come from the solver (a GPU's on the
 * device) or the model. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

size_t sv_sweep_op_bytes(int n, int nterms, int nrhs, int nd)
{
    size_t np = (size_t)n * (size_t)nrhs, nw = np * (size_t)(nd + 1), K = (size_t)nterms;
    return sizeof(double complex) * (2 * np + 4 * K) + sizeof(double) * 2 * nw * (K + 1);
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
    return sv_sweep_solver_products(o->solver, 2 * ncols, o->xs, o->ts);
}

/* y (n) += Σ_k scale·coef_k·(A_k·v)[:, col] from the last term_products of
 * ncols columns. */
static void combine(const sv_sweep_op *o, int ncols, const double complex *coef, double scale, int col,
                    double complex *y)
{
    int n = o->m->n;
    for (int k = 0; k < o->m->nterms; k++) {
        double complex ck = scale * coef[k];
        if (ck == 0) continue;
        const double *re = o->ts + (size_t)k * n * 2 * (size_t)ncols + (size_t)col * n;
        const double *im = re + (size_t)ncols * n;
        for (int i = 0; i < n; i++) y[i] += ck * CMPLX(re[i], im[i]);
    }
}

/* y = Σ_k coef_k·A_k·x (ncols ≤ nrhs·(nd + 1) columns). */
static sv_status apply_with(const sv_sweep_op *o, const double complex *coef, int ncols, const double complex *x,
                            int ldx, double complex *y, int ldy)
{
    sv_status st = term_products(o, ncols, x, ldx);
    if (st) return st;
    for (int j = 0; j < ncols; j++) {
        memset(y + (size_t)j * ldy, 0, sizeof(double complex) * (size_t)o->m->n);
        combine(o, ncols, coef, 1.0, j, y + (size_t)j * ldy);
    }
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
    const sv_sweep_op *o = user;
    return apply_with(o, o->c, ncols, x, ldx, y, ldy);
}

/* Every group's residual from one pass over the terms: the products A_k·W
 * once, combined with c_k for Z·W and with its derivatives for the groups'
 * right-hand sides. */
static sv_status op_residuals(void *user, int ngroups, const double complex *w, double complex *rhs,
                              double complex *r)
{
    const sv_sweep_op *o = user;
    int n = o->m->n, p = o->m->nrhs, ncols = p * ngroups;
    sv_status st = term_products(o, ncols, w, n);
    if (st) return st;
    for (int g = 0; g < ngroups; g++)
        for (int j = 0; j < p; j++) {
            int col = g * p + j;
            double complex *h = rhs + (size_t)col * n, *rc = r + (size_t)col * n;
            if (g > 0) {
                memset(h, 0, sizeof(double complex) * (size_t)n);
                double binom = 1;
                for (int i = 1; i <= g; i++) {
                    binom = binom * (g - i + 1) / i;
                    combine(o, ncols, deriv_coefs(o, i), -binom, (g - i) * p + j, h);
                }
            }
            memcpy(rc, h, sizeof(double complex) * (size_t)n);
            combine(o, ncols, o->c, -1.0, col, rc);
        }
    return SV_OK;
}

/* Group g's right-hand side from X and the derivatives below it. */
static sv_status op_group_rhs(void *user, int g, const double complex *x, int ldx, const double complex *dx,
                              int lddx, double complex *r, int ldr)
{
    const sv_sweep_op *o = user;
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
    o->c = sv_calloc(ctx, (size_t)4 * K + 2 * np, sizeof(double complex), "exact solve vectors");
    o->xs = o->c ? sv_alloc(ctx, sizeof(double) * 2 * nw * (size_t)(K + 1), "refinement products") : NULL;
    if (!o->xs) {
        sv_status st = sv_last_status();
        sv_sweep_op_free(o);
        return st;
    }
    o->b = o->c + 4 * K;
    o->t = o->b + np;
    o->ts = o->xs + 2 * nw;
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
    sv_free(o->ctx, o->xs);
    memset(o, 0, sizeof *o);
}
