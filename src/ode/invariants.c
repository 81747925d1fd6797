/* Declared linear invariants c_k·y = const (ode.h's sv_ode_problem_desc):
 * their validation and the projection that keeps every accepted state on
 * them. Rounding along a combination that f conserves is never damped by
 * the equations, so it adds up step after step (docs/explanation/
 * simd-lanes.md); projecting back after each step stops that at the cost
 * of a few dot products per step. */
#include <math.h>
#include <string.h>

#include "ode_internal.h"

/* Rows that Gram–Schmidt reduces below this fraction of their own norm are
 * taken as combinations of the earlier ones: C D Cᵀ would then be singular
 * or so ill-conditioned that the projection amplifies rounding. */
#define ODE_INV_DEPENDENT 1e-10

/* Every entry finite, no row all zero. */
static sv_status check_rows(const sv_ode_problem_desc *d, const char *nm)
{
    const int n = d->n;
    for (int k = 0; k < d->ninvariants; k++) {
        int nonzero = 0;
        for (int i = 0; i < n; i++) {
            double c = d->invariants[(size_t)k * n + i];
            if (!isfinite(c))
                return sv_error(SV_ERR_ARG, "%s: invariants row %d, column %d = %g: expected a finite value", nm, k, i,
                                c);
            nonzero |= c != 0;
        }
        if (!nonzero) return sv_error(SV_ERR_ARG, "%s: invariants row %d is all zero: it conserves nothing", nm, k);
    }
    return SV_OK;
}

/* Modified Gram–Schmidt over the rows (q: m·n work): the first row that
 * is a combination of those before it is named. */
static sv_status check_independent(sv_ctx *ctx, const sv_ode_problem_desc *d, const char *nm)
{
    const int n = d->n, m = d->ninvariants;
    double *q = sv_alloc(ctx, sizeof(double) * (size_t)m * n, "ode invariants check");
    if (!q) return sv_last_status();
    sv_status st = SV_OK;
    for (int k = 0; k < m && st == SV_OK; k++) {
        double *r = q + (size_t)k * n, nrm0 = 0, nrm = 0;
        for (int i = 0; i < n; i++) r[i] = d->invariants[(size_t)k * n + i], nrm0 += r[i] * r[i];
        for (int j = 0; j < k; j++) {
            const double *qj = q + (size_t)j * n;
            double dot = 0;
            for (int i = 0; i < n; i++) dot += qj[i] * r[i];
            for (int i = 0; i < n; i++) r[i] -= dot * qj[i];
        }
        for (int i = 0; i < n; i++) nrm += r[i] * r[i];
        if (!(sqrt(nrm) > ODE_INV_DEPENDENT * sqrt(nrm0))) {
            st = sv_error(SV_ERR_ARG,
                          "%s: invariants row %d is a linear combination of rows 0..%d (to %g relative): the rows "
                          "must be linearly independent",
                          nm, k, k - 1, ODE_INV_DEPENDENT);
            break;
        }
        for (int i = 0; i < n; i++) r[i] /= sqrt(nrm);
    }
    sv_free(ctx, q);
    return st;
}

/* What invariants may be combined with: the projection is a step of the
 * state alone, so a DAE's algebraic constraints and the sensitivities'
 * own equations would not be kept consistent with it. */
static sv_status check_combination(const sv_ode_problem_desc *d, const char *nm)
{
    if (d->mass)
        return sv_error(SV_ERR_ARG, "%s: ninvariants = %d with a mass matrix: invariants are supported for ODEs only",
                        nm, d->ninvariants);
    if (d->nsens_params + d->nsens_y0 > 0)
        return sv_error(SV_ERR_ARG,
                        "%s: ninvariants = %d with %d sensitivity directions: invariants are not supported with "
                        "sensitivities",
                        nm, d->ninvariants, d->nsens_params + d->nsens_y0);
    return SV_OK;
}

sv_status ode_invariants_create(sv_ctx *ctx, const sv_ode_problem_desc *d, ode_invariants **out)
{
    const char *nm = d->name ? d->name : "problem";
    *out = NULL;
    if (d->ninvariants < 0 || d->ninvariants > d->n)
        return sv_error(SV_ERR_ARG, "%s: ninvariants = %d: expected 0..n = %d", nm, d->ninvariants, d->n);
    if (d->ninvariants == 0) return SV_OK;
    if (!d->invariants)
        return sv_error(SV_ERR_ARG, "%s: ninvariants = %d but invariants is NULL: expected %d × %d values", nm,
                        d->ninvariants, d->ninvariants, d->n);
    sv_status st = check_combination(d, nm);
    if (st == SV_OK) st = check_rows(d, nm);
    if (st == SV_OK) st = check_independent(ctx, d, nm);
    if (st != SV_OK) return st;
    ode_invariants *inv = sv_calloc(ctx, 1, sizeof *inv, "ode invariants");
    size_t len = (size_t)d->ninvariants * d->n;
    double *C = sv_alloc(ctx, sizeof(double) * len, "ode invariants");
    if (!inv || !C) {
        sv_free_each(ctx, (void *const[]){inv, C}, 2);
        return sv_last_status();
    }
    memcpy(C, d->invariants, sizeof(double) * len);
    inv->m = d->ninvariants;
    inv->C = C;
    *out = inv;
    return SV_OK;
}

void ode_invariants_destroy(sv_ctx *ctx, ode_invariants *inv)
{
    if (!inv) return;
    sv_free_each(ctx, (void *const[]){inv->C, inv}, 2);
}

void ode_invariants_values(const ode_invariants *inv, int n, const double *x, size_t xs, double *target)
{
    for (int k = 0; k < inv->m; k++) {
        const double *c = inv->C + (size_t)k * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += c[i] * x[i * xs];
        target[k] = s;
    }
}

/* G = C D Cᵀ (lower triangle, m × m), D = diag(d). */
static void weighted_gram(const ode_invariants *inv, int n, const double *d, double *G)
{
    const int m = inv->m;
    for (int k = 0; k < m; k++)
        for (int l = 0; l <= k; l++) {
            const double *ck = inv->C + (size_t)k * n, *cl = inv->C + (size_t)l * n;
            double s = 0;
            for (int i = 0; i < n; i++) s += ck[i] * cl[i] * d[i];
            G[(size_t)k * m + l] = s;
        }
}

/* In place: G = L Lᵀ (lower), then r ← G⁻¹ r. Returns 0 when G is not
 * positive definite (a pivot not > 0 or not finite). */
static int cholesky_solve(int m, double *G, double *r)
{
    for (int j = 0; j < m; j++) {
        double d = G[(size_t)j * m + j];
        for (int p = 0; p < j; p++) d -= G[(size_t)j * m + p] * G[(size_t)j * m + p];
        if (!(d > 0) || !isfinite(d)) return 0;
        d = sqrt(d);
        G[(size_t)j * m + j] = d;
        for (int i = j + 1; i < m; i++) {
            double s = G[(size_t)i * m + j];
            for (int p = 0; p < j; p++) s -= G[(size_t)i * m + p] * G[(size_t)j * m + p];
            G[(size_t)i * m + j] = s / d;
        }
    }
    for (int i = 0; i < m; i++) {
        double s = r[i];
        for (int p = 0; p < i; p++) s -= G[(size_t)i * m + p] * r[p];
        r[i] = s / G[(size_t)i * m + i];
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = r[i];
        for (int p = i + 1; p < m; p++) s -= G[(size_t)p * m + i] * r[p];
        r[i] = s / G[(size_t)i * m + i];
    }
    return 1;
}

/* r ← (C D Cᵀ)⁻¹ r; 0 when C D Cᵀ is not positive definite. One row (the
 * common case) needs no factorisation: a division. */
static int solve_gram(const ode_invariants *inv, int n, const double *d, double *G, double *r)
{
    if (inv->m > 1) {
        weighted_gram(inv, n, d, G);
        return cholesky_solve(inv->m, G, r);
    }
    double g = 0;
    for (int i = 0; i < n; i++) g += inv->C[i] * inv->C[i] * d[i];
    if (!(g > 0) || !isfinite(g)) return 0;
    r[0] /= g;
    return 1;
}

void ode_invariants_project(const ode_invariants *inv, int n, const double *atolv, double rtol, const double *target,
                            const double *x, size_t xs, double *out, size_t os, double *work)
{
    const int m = inv->m;
    double *d = work, *lam = work + n, *G = work + n + m;
    for (int i = 0; i < n; i++) {
        double sc = atolv[i] + rtol * fabs(x[i * xs]);
        d[i] = sc * sc;
    }
    ode_invariants_values(inv, n, x, xs, lam);
    for (int k = 0; k < m; k++) lam[k] -= target[k];
    if (!solve_gram(inv, n, d, G, lam)) {
        for (int i = 0; i < n; i++) out[i * os] = x[i * xs];
        return;
    }
    for (int i = 0; i < n; i++) {
        double corr = 0;
        for (int k = 0; k < m; k++) corr += inv->C[(size_t)k * n + i] * lam[k];
        out[i * os] = x[i * xs] - d[i] * corr;
    }
}
