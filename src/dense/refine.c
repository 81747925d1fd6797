/* Mixed precision: factor in complex single, refine to double accuracy.
 *
 * Classical iterative refinement (x ← x + M⁻¹·(b − A·x), residual in double
 * from the caller's operator, correction through the single factors M) runs
 * first; when its backward error stops falling by at least a factor of 2 per
 * step it switches to GMRES-based refinement (Carson & Higham, SIAM J. Sci.
 * Comput. 40 (2018) A817): the correction solves A·d = r by flexible GMRES
 * preconditioned on the right by the single factors, which converges for
 * condition numbers far beyond what classical refinement tolerates. If
 * neither reaches the tolerance within the iteration limit, A is formed in
 * double and factored again (the fallback). */
#include <math.h>
#include <string.h>

#include "dense_internal.h"

#define DEFAULT_TOL 1e-15
#define DEFAULT_MAXIT 30
#define GMRES_M 30         /* Krylov vectors per GMRES cycle */
#define GMRES_RTOL 1e-10   /* inner relative residual target */

/* ---- the default operator: a stored C64 packed matrix ------------------- */
static sv_status sym_residual(void *user, int nrhs, const double complex *x, int ldx, const double complex *b, int ldb,
                              double complex *r, int ldr)
{
    const sv_dense_sym *a = user;
    sv_status st = sv_dense_sym_matmul(a, nrhs, x, ldx, r, ldr);
    if (st) return st;
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < a->n; i++) r[(size_t)c * ldr + i] = b[(size_t)c * ldb + i] - r[(size_t)c * ldr + i];
    return SV_OK;
}

static sv_status sym_form(void *user, sv_dense_sym *a64) { return sv_dense_sym_convert(user, a64); }

sv_status sv_dense_operator_from_sym(const sv_dense_sym *a64, sv_dense_operator *op)
{
    if (!a64 || !op) return sv_error(SV_ERR_ARG, "sv_dense_operator_from_sym: NULL %s", a64 ? "op" : "a64");
    if (a64->type != SV_DENSE_C64 && a64->type != SV_DENSE_R64)
        return sv_error(SV_ERR_ARG, "sv_dense_operator_from_sym: a64 has type %d: expected SV_DENSE_C64 or R64",
                        (int)a64->type);
    op->residual = sym_residual;
    op->form = sym_form;
    op->norm_inf = sv_dense_sym_norm_inf(a64);
    op->n = a64->n;
    op->user = (void *)a64;
    return SV_OK;
}

/* ---- helpers ------------------------------------------------------------- */
static double colmax(int n, const double complex *v)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double a = cabs(v[i]);
        if (!(a <= m)) m = a; /* NaN propagates */
    }
    return m;
}

/* Backward error of each column: ‖r‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞). */
static double berr_cols(int n, int p, double anorm, const double complex *r, int ldr, const double complex *x, int ldx,
                        const double complex *b, int ldb, double *per_col)
{
    double worst = 0;
    for (int c = 0; c < p; c++) {
        double rn = colmax(n, r + (size_t)c * ldr), xn = colmax(n, x + (size_t)c * ldx),
               bn = colmax(n, b + (size_t)c * ldb);
        double den = anorm * xn + bn;
        double e = den > 0 ? rn / den : (rn > 0 ? INFINITY : 0);
        if (isnan(rn) || isnan(xn)) e = NAN;
        if (per_col) per_col[c] = e;
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* v ← M⁻¹·v with the single-precision factors (sv_dense_factor_solve_scaled:
 * each column scaled before rounding). w: sv_dense_solve_work_bytes(n, p). */
static void solve_single(const sv_dense_factor *f, int p, double complex *v, int ldv, float complex *w)
{
    sv_dense_factor_solve_scaled(f, p, v, ldv, w);
}

/* A·v through the operator: residual with b = 0 gives −A·v. */
static sv_status apply_a(const sv_dense_operator *op, int n, const double complex *v, double complex *out,
                         const double complex *zero)
{
    sv_status st = op->residual(op->user, 1, v, n, zero, n, out, n);
    if (st) return st;
    for (int i = 0; i < n; i++) out[i] = -out[i];
    return SV_OK;
}

/* Flexible GMRES(m) for A·d = r, right-preconditioned by M (the single
 * factors): one cycle of at most GMRES_M steps, stopping at a relative
 * residual of GMRES_RTOL. d is overwritten. work: see gmres_work_elems. */
static size_t gmres_work_elems(int n) { return (size_t)(2 * GMRES_M + 3) * n + (size_t)(GMRES_M + 1) * (GMRES_M + 4); }

static sv_status gmres(const sv_dense_operator *op, const sv_dense_factor *f, int n, const double complex *r,
                       double complex *d, double complex *work, float complex *w32, int *steps)
{
    const int m = GMRES_M;
    double complex *V = work, *Z = V + (size_t)(m + 1) * n, *zero = Z + (size_t)m * n, *tmp = zero + n;
    double complex *H = tmp + n, *g = H + (size_t)(m + 1) * m, *cs = g + (m + 1), *sn = cs + (m + 1);
    memset(zero, 0, sizeof *zero * (size_t)n);
    double beta = 0;
    for (int i = 0; i < n; i++) beta += creal(r[i] * conj(r[i]));
    beta = sqrt(beta);
    memset(d, 0, sizeof *d * (size_t)n);
    *steps = 0;
    if (beta == 0) return SV_OK;
    for (int i = 0; i < n; i++) V[i] = r[i] / beta;
    memset(g, 0, sizeof *g * (size_t)(m + 1));
    g[0] = beta;
    int k = 0;
    for (; k < m; k++) {
        double complex *vk = V + (size_t)k * n, *zk = Z + (size_t)k * n, *vn = V + (size_t)(k + 1) * n;
        memcpy(zk, vk, sizeof *zk * (size_t)n);
        solve_single(f, 1, zk, n, w32);
        sv_status st = apply_a(op, n, zk, vn, zero);
        if (st) return st;
        for (int i = 0; i <= k; i++) { /* modified Gram–Schmidt (Hermitian inner product) */
            const double complex *vi = V + (size_t)i * n;
            double complex h = 0;
            for (int t = 0; t < n; t++) h += conj(vi[t]) * vn[t];
            H[(size_t)k * (m + 1) + i] = h;
            for (int t = 0; t < n; t++) vn[t] -= h * vi[t];
        }
        double hn = 0;
        for (int t = 0; t < n; t++) hn += creal(vn[t] * conj(vn[t]));
        hn = sqrt(hn);
        H[(size_t)k * (m + 1) + k + 1] = hn;
        if (hn > 0)
            for (int t = 0; t < n; t++) vn[t] /= hn;
        /* Apply the earlier Givens rotations, then a new one for row k+1. */
        double complex *hc = H + (size_t)k * (m + 1);
        for (int i = 0; i < k; i++) {
            double complex a = hc[i], b = hc[i + 1];
            hc[i] = conj(cs[i]) * a + conj(sn[i]) * b;
            hc[i + 1] = -sn[i] * a + cs[i] * b;
        }
        double complex a = hc[k], b = hc[k + 1];
        double den = sqrt(creal(a * conj(a)) + creal(b * conj(b)));
        if (den == 0) {
            cs[k] = 1;
            sn[k] = 0;
        } else {
            cs[k] = a / den;
            sn[k] = b / den;
        }
        hc[k] = conj(cs[k]) * a + conj(sn[k]) * b;
        hc[k + 1] = 0;
        g[k + 1] = -sn[k] * g[k];
        g[k] = conj(cs[k]) * g[k];
        *steps = k + 1;
        if (cabs(g[k + 1]) <= GMRES_RTOL * beta || hn == 0) {
            k++;
            break;
        }
    }
    /* Back substitution for y (stored in g), then d = Z·y. */
    for (int i = k - 1; i >= 0; i--) {
        double complex s = g[i];
        for (int j = i + 1; j < k; j++) s -= H[(size_t)j * (m + 1) + i] * g[j];
        g[i] = s / H[(size_t)i * (m + 1) + i];
    }
    for (int j = 0; j < k; j++)
        for (int t = 0; t < n; t++) d[t] += Z[(size_t)j * n + t] * g[j];
    return SV_OK;
}

static sv_status check_finite(int n, int p, const double complex *b, int ldb)
{
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++)
            if (!isfinite(creal(b[(size_t)c * ldb + i])) || !isfinite(cimag(b[(size_t)c * ldb + i])))
                return sv_error(SV_ERR_NONFINITE, "sv_dense_solve_mixed: b(%d, %d) is not finite", i, c);
    return SV_OK;
}

sv_status sv_dense_backward_error(const sv_dense_operator *op, int nrhs, const double complex *b, int ldb,
                                  const double complex *x, int ldx, double *berr)
{
    if (!op || !op->residual || !berr)
        return sv_error(SV_ERR_ARG, "sv_dense_backward_error: NULL %s", !berr ? "berr" : "operator or residual");
    const int n = op->n;
    if (n < 0) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: op->n = %d: expected >= 0", n);
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: nrhs = %d: expected >= 0", nrhs);
    if (ldb < (n > 1 ? n : 1) || ldx < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_backward_error: ldb = %d, ldx = %d: expected >= n = %d", ldb, ldx, n);
    *berr = 0;
    if (n == 0 || nrhs == 0) return SV_OK;
    if (!b || !x) return sv_error(SV_ERR_ARG, "sv_dense_backward_error: NULL %s", b ? "x" : "b");
    double complex *r = sv_alloc(NULL, sizeof *r * (size_t)n * nrhs, "residual");
    if (!r) return sv_last_status();
    sv_status st = op->residual(op->user, nrhs, x, ldx, b, ldb, r, n);
    if (!st) *berr = berr_cols(n, nrhs, op->norm_inf, r, n, x, ldx, b, ldb, NULL);
    sv_free(NULL, r);
    return st;
}

/* The double fallback: form A in double through the operator, factor it
 * (with its own pivoted fallback), solve, and polish with two steps of
 * refinement in double. */
static sv_status double_fallback(sv_ctx *ctx, const sv_dense_sym *a32, const sv_dense_operator *op, int p,
                                 const double complex *b, int ldb, double complex *x, int ldx, double complex *r,
                                 sv_dense_refine_info *info)
{
    const int n = a32->n;
    if (!op->form)
        return sv_error(SV_ERR_NOCONV, "sv_dense_solve_mixed: refinement did not converge (backward error %.3g) and "
                                       "the operator cannot form A in double (form is NULL)",
                        info->backward_error);
    size_t need = sv_dense_sym_bytes(n, SV_DENSE_C64, a32->nb);
    if (sv_mem_check(ctx, need, "the double-precision fallback of mixed-precision refinement"))
        return sv_last_status();
    sv_dense_sym *a64 = NULL;
    sv_dense_factor *f64 = NULL;
    sv_status st = sv_dense_sym_create(ctx, n, SV_DENSE_C64, a32->nb, &a64);
    if (!st) st = op->form(op->user, a64);
    if (!st) st = sv_dense_factor_create(ctx, a64, NULL, &f64, &info->factor);
    if (!st) {
        for (int c = 0; c < p; c++) memcpy(x + (size_t)c * ldx, b + (size_t)c * ldb, sizeof *x * (size_t)n);
        st = sv_dense_factor_solve(f64, p, x, ldx);
    }
    for (int it = 0; !st && it < 2; it++) {
        st = op->residual(op->user, p, x, ldx, b, ldb, r, n);
        if (st) break;
        st = sv_dense_factor_solve(f64, p, r, n);
        for (int c = 0; !st && c < p; c++)
            for (int i = 0; i < n; i++) x[(size_t)c * ldx + i] += r[(size_t)c * n + i];
    }
    if (!st) st = op->residual(op->user, p, x, ldx, b, ldb, r, n);
    if (!st) info->backward_error = berr_cols(n, p, op->norm_inf, r, n, x, ldx, b, ldb, NULL);
    info->fell_back = 1;
    sv_dense_factor_destroy(f64);
    sv_dense_sym_destroy(a64);
    return st;
}

sv_status sv_dense_solve_mixed(sv_ctx *ctx, sv_dense_sym *a32, const sv_dense_operator *op, int nrhs,
                               const double complex *b, int ldb, double complex *x, int ldx,
                               const sv_dense_refine_options *opts, sv_dense_refine_info *info)
{
    double t0 = sv_time_now();
    sv_dense_refine_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info->factor.small_pivot_index = -1;
    if (!a32 || !op || !op->residual)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: NULL %s", !a32 ? "a32" : "operator or residual callback");
    if (a32->type != SV_DENSE_C32)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: a32 has type %d: expected SV_DENSE_C32", (int)a32->type);
    const int n = a32->n, p = nrhs;
    if (op->n != n) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: op->n = %d but a32 has order %d", op->n, n);
    if (!(op->norm_inf > 0) || !isfinite(op->norm_inf))
        if (n > 0)
            return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: op->norm_inf = %g: expected a positive finite number",
                            op->norm_inf);
    if (p < 0) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: nrhs = %d: expected >= 0", p);
    if (ldb < (n > 1 ? n : 1) || ldx < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: ldb = %d, ldx = %d: expected >= n = %d", ldb, ldx, n);
    if (n == 0 || p == 0) return SV_OK;
    if (!b || !x) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: NULL %s", b ? "x" : "b");
    double tol = DEFAULT_TOL;
    int maxit = DEFAULT_MAXIT, allow_gmres = 1, allow_fallback = 1;
    if (opts) {
        if (!(opts->tolerance >= 0) || opts->max_iterations < 0)
            return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: tolerance = %g, max_iterations = %d: expected >= 0",
                            opts->tolerance, opts->max_iterations);
        if (opts->tolerance > 0) tol = opts->tolerance;
        if (opts->max_iterations > 0) maxit = opts->max_iterations;
        allow_gmres = opts->allow_gmres;
        allow_fallback = opts->allow_fallback;
        if (!(opts->pivot_threshold >= 0 && opts->pivot_threshold < 1))
            return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: pivot_threshold = %g: expected in [0, 1)",
                            opts->pivot_threshold);
    }
    /* The single factorisation keeps its own pivoted fallback. */
    sv_dense_factor_options fopts = {.pivot_threshold = opts ? opts->pivot_threshold : 0, .allow_fallback = 1};
    sv_status st = check_finite(n, p, b, ldb);
    if (st) return st;

    /* Workspace: residuals (double), single-precision vectors, GMRES basis. */
    size_t rb = sizeof(double complex) * (size_t)n * p;
    size_t wb = sv_dense_solve_work_bytes(n, p);
    size_t gb = allow_gmres ? sizeof(double complex) * (gmres_work_elems(n) + (size_t)n) : 0;
    double complex *r = sv_alloc(ctx, rb, "refinement residuals");
    float complex *w32 = r ? sv_alloc(ctx, wb, "refinement single-precision vectors") : NULL;
    double complex *gw = w32 && gb ? sv_alloc(ctx, gb, "GMRES refinement workspace") : NULL;
    double *berr_c = w32 ? sv_alloc(ctx, sizeof(double) * (size_t)p, "refinement backward errors") : NULL;
    if (!r || !w32 || (gb && !gw) || !berr_c) {
        st = sv_last_status();
        goto out;
    }

    sv_dense_factor *f = NULL;
    double tf = sv_time_now();
    st = sv_dense_factor_create_ex(ctx, a32, &fopts, &f, &info->factor, 0);
    info->seconds_factor = sv_time_now() - tf;
    double tr = sv_time_now();
    int converged = 0;
    info->backward_error = INFINITY;
    if (st == SV_OK) {
        for (int c = 0; c < p; c++) memcpy(x + (size_t)c * ldx, b + (size_t)c * ldb, sizeof *x * (size_t)n);
        solve_single(f, p, x, ldx, w32);
        int gmres_mode = 0, stalls = 0;
        double prev = INFINITY;
        for (;;) {
            st = op->residual(op->user, p, x, ldx, b, ldb, r, n);
            if (st) break;
            double be = berr_cols(n, p, op->norm_inf, r, n, x, ldx, b, ldb, berr_c);
            info->backward_error = be;
            if (be <= tol) {
                converged = 1;
                break;
            }
            if (info->iterations >= maxit || isnan(be)) break;
            /* Classical refinement stalls when a step gains less than a
             * factor 2: switch to GMRES (or give up without it). GMRES that
             * stops gaining too gives up. */
            if (!(be < 0.5 * prev)) {
                if (!gmres_mode && allow_gmres) {
                    gmres_mode = 1;
                    info->gmres_used = 1;
                } else if (++stalls >= 2 || !(be < prev)) {
                    break;
                }
            }
            prev = be < prev ? be : prev;
            info->iterations++;
            if (!gmres_mode) {
                solve_single(f, p, r, n, w32);
                for (int c = 0; c < p; c++)
                    for (int i = 0; i < n; i++) x[(size_t)c * ldx + i] += r[(size_t)c * n + i];
            } else {
                double complex *d = gw + gmres_work_elems(n);
                for (int c = 0; c < p && !st; c++) {
                    if (berr_c[c] <= tol) continue;
                    int steps;
                    st = gmres(op, f, n, r + (size_t)c * n, d, gw, w32, &steps);
                    for (int i = 0; i < n && !st; i++) x[(size_t)c * ldx + i] += d[i];
                }
                if (st) break;
            }
        }
        sv_dense_factor_destroy(f);
    }
    info->seconds_refine = sv_time_now() - tr;
    if (st == SV_OK && !converged) {
        if (!allow_fallback) {
            st = sv_error(SV_ERR_NOCONV,
                          "sv_dense_solve_mixed: refinement reached backward error %.3g after %d iterations, above "
                          "the tolerance %.3g, and the double fallback is disabled (allow_fallback = 0)",
                          info->backward_error, info->iterations, tol);
        } else {
            double tfb = sv_time_now();
            st = double_fallback(ctx, a32, op, p, b, ldb, x, ldx, r, info);
            info->seconds_factor += sv_time_now() - tfb;
        }
    } else if (st == SV_ERR_SINGULAR && allow_fallback && op->form) {
        /* Singular in single precision (a tiny pivot and an LU that failed
         * too): the matrix may still be fine in double. */
        sv_clear_error();
        st = double_fallback(ctx, a32, op, p, b, ldb, x, ldx, r, info);
    }
out:
    sv_free(ctx, r);
    sv_free(ctx, w32);
    sv_free(ctx, gw);
    sv_free(ctx, berr_c);
    (void)t0;
    return st;
}
