/* Problem description: validation, an owned copy of the Jacobian pattern,
 * and the column colouring used to recover J from directional derivatives
 * (complex step, J·v, finite differences). */
#include <limits.h>
#include <string.h>

#include "ode_internal.h"
#include "solvent/sparse.h"

/* The column colouring, from the sparse engine: a greedy pass by decreasing
 * column count on the problem's own pattern, replaced by the engine's best
 * of several orderings on the pattern plus its diagonal when that needs
 * fewer colours (docs/ode.md says why both; either is valid for the
 * problem's pattern, which has no more edges than the one with the diagonal). */
static sv_status color_columns(sv_ode_problem *P)
{
    sv_sparse_color_options o;
    sv_sparse_color_options_default(&o);
    o.order = SV_SPARSE_COLOR_COLUMN_COUNT;
    sv_sparse_coloring *own = NULL, *alt = NULL;
    sv_status st = sv_sparse_color_csr(P->ctx, P->n, P->rowptr, P->colind, &o, &own);
    if (st == SV_OK) {
        o.order = SV_SPARSE_COLOR_BEST;
        o.add_diagonal = 1;
        st = sv_sparse_color_csr(P->ctx, P->n, P->rowptr, P->colind, &o, &alt);
    }
    if (st == SV_OK && sv_sparse_coloring_count(alt) < sv_sparse_coloring_count(own)) {
        sv_sparse_coloring *t = own;
        own = alt;
        alt = t;
    }
    sv_sparse_coloring_destroy(alt);
    if (st != SV_OK) {
        sv_sparse_coloring_destroy(own);
        return st;
    }
    P->coloring = own;
    P->ncolors = sv_sparse_coloring_count(own);
    P->color = sv_sparse_coloring_colors(own);
    return SV_OK;
}

/* A Jacobian source needs its callback. */
static sv_status check_jac_source(const sv_ode_problem_desc *d, const char *nm)
{
    switch (d->jac_source) {
    case SV_ODE_JAC_ANALYTIC:
        if (!d->jac && !d->jac_batch)
            return sv_error(SV_ERR_ARG, "%s: jac_source = analytic but neither jac nor jac_batch is set", nm);
        return SV_OK;
    case SV_ODE_JAC_COMPLEX_STEP:
        if (!d->f_complex) return sv_error(SV_ERR_ARG, "%s: jac_source = complex-step but f_complex is NULL", nm);
        return SV_OK;
    case SV_ODE_JAC_JVP:
        if (!d->jvp) return sv_error(SV_ERR_ARG, "%s: jac_source = jvp but jvp is NULL", nm);
        return SV_OK;
    case SV_ODE_JAC_FD:
        return SV_OK;
    }
    return sv_error(SV_ERR_ARG, "%s: jac_source = %d: expected 0..3 (analytic, complex-step, jvp, fd)", nm,
                    (int)d->jac_source);
}

/* CSR with columns in range and strictly increasing per row (or no pattern). */
static sv_status check_pattern(const sv_ode_problem_desc *d, const char *nm)
{
    int n = d->n;
    if ((d->rowptr == NULL) != (d->colind == NULL))
        return sv_error(SV_ERR_PATTERN, "%s: pattern needs both rowptr and colind (or neither for dense)", nm);
    if (!d->rowptr) return SV_OK;
    if (d->rowptr[0] != 0) return sv_error(SV_ERR_PATTERN, "%s: rowptr[0] = %d: expected 0", nm, d->rowptr[0]);
    for (int i = 0; i < n; i++) {
        if (d->rowptr[i + 1] < d->rowptr[i])
            return sv_error(SV_ERR_PATTERN, "%s: rowptr[%d] = %d < rowptr[%d] = %d: must not decrease", nm, i + 1,
                            d->rowptr[i + 1], i, d->rowptr[i]);
        for (int e = d->rowptr[i]; e < d->rowptr[i + 1]; e++) {
            int j = d->colind[e];
            if (j < 0 || j >= n)
                return sv_error(SV_ERR_PATTERN, "%s: colind[%d] = %d (row %d): expected 0..%d", nm, e, j, i, n - 1);
            if (e > d->rowptr[i] && j <= d->colind[e - 1])
                return sv_error(SV_ERR_PATTERN,
                                "%s: row %d: columns must be strictly increasing (colind[%d] = %d after %d)", nm, i, e,
                                j, d->colind[e - 1]);
        }
    }
    if ((long long)d->rowptr[n] > (long long)n * n)
        return sv_error(SV_ERR_PATTERN, "%s: rowptr[n] = %d exceeds n² = %lld", nm, d->rowptr[n], (long long)n * n);
    /* the sparse engine adds the diagonal: entries and diagonal together are counted in int */
    if ((long long)d->rowptr[n] + n > INT_MAX)
        return sv_error(SV_ERR_ARG, "%s: rowptr[n] = %d entries and n = %d diagonal ones exceed %d", nm, d->rowptr[n],
                        n, INT_MAX);
    return SV_OK;
}

/* Entry counts and indices are int (CSR), and the sparse engine needs
 * 2n + 2 to fit: a dense problem (no pattern) has n² entries. */
static sv_status check_size(const sv_ode_problem_desc *d, const char *nm)
{
    if (d->n > INT_MAX / 2 - 1)
        return sv_error(SV_ERR_ARG, "%s: n = %d: expected at most %d", nm, d->n, INT_MAX / 2 - 1);
    if (!d->rowptr && (long long)d->n * d->n > INT_MAX)
        return sv_error(SV_ERR_ARG,
                        "%s: n = %d without a pattern: its n² = %lld Jacobian entries exceed %d; give the sparsity "
                        "pattern (rowptr, colind)",
                        nm, d->n, (long long)d->n * d->n, INT_MAX);
    return SV_OK;
}

/* Sensitivity directions in range, and the callback their source needs
 * (whether Rodas5P's second-order callback is there is checked by the solve,
 * which knows the method). */
static sv_status check_sens(const sv_ode_problem_desc *d, const char *nm)
{
    if (d->nsens_params < 0 || d->nsens_y0 < 0 || (d->nsens_params && !d->sens_params) ||
        (d->nsens_y0 && !d->sens_y0))
        return sv_error(SV_ERR_ARG, "%s: nsens_params = %d, nsens_y0 = %d: expected >= 0 with their index arrays",
                        nm, d->nsens_params, d->nsens_y0);
    for (int k = 0; k < d->nsens_params; k++)
        if (d->sens_params[k] < 0 || d->sens_params[k] >= d->nparams)
            return sv_error(SV_ERR_ARG, "%s: sens_params[%d] = %d: expected 0..%d", nm, k, d->sens_params[k],
                            d->nparams - 1);
    for (int k = 0; k < d->nsens_y0; k++)
        if (d->sens_y0[k] < 0 || d->sens_y0[k] >= d->n)
            return sv_error(SV_ERR_ARG, "%s: sens_y0[%d] = %d: expected 0..%d", nm, k, d->sens_y0[k], d->n - 1);
    if (d->nsens_params + d->nsens_y0 == 0) return SV_OK;
    switch (d->sens_source) {
    case SV_ODE_SENS_ANALYTIC:
        if (!d->dfdp && !d->dfdp_batch && d->nsens_params)
            return sv_error(SV_ERR_ARG, "%s: sens_source = analytic but neither dfdp nor dfdp_batch is set", nm);
        return SV_OK;
    case SV_ODE_SENS_COMPLEX_STEP:
        if (!d->f_complex_p) return sv_error(SV_ERR_ARG, "%s: sens_source = complex-step but f_complex_p is NULL", nm);
        return SV_OK;
    case SV_ODE_SENS_TANGENT:
        if (!d->tangent && !d->tangent_batch)
            return sv_error(SV_ERR_ARG, "%s: sens_source = tangent but neither tangent nor tangent_batch is set", nm);
        return SV_OK;
    case SV_ODE_SENS_FD:
        return SV_OK;
    }
    return sv_error(SV_ERR_ARG, "%s: sens_source = %d: expected 0..3 (analytic, complex-step, tangent, fd)", nm,
                    (int)d->sens_source);
}

static sv_status check_desc(const sv_ode_problem_desc *d)
{
    const char *nm = d->name ? d->name : "problem";
    if (d->n < 1) return sv_error(SV_ERR_ARG, "%s: n = %d: expected >= 1", nm, d->n);
    if (d->nparams < 0) return sv_error(SV_ERR_ARG, "%s: nparams = %d: expected >= 0", nm, d->nparams);
    if (!d->f) return sv_error(SV_ERR_ARG, "%s: f is NULL: the right-hand side is required", nm);
    sv_status st = check_size(d, nm);
    if (st == SV_OK) st = check_jac_source(d, nm);
    if (st == SV_OK) st = check_pattern(d, nm);
    return st != SV_OK ? st : check_sens(d, nm);
}

/* The owned list of directions: parameter indices, then y0 indices. */
static sv_status copy_sens(sv_ode_problem *P, const sv_ode_problem_desc *d)
{
    P->nsp = d->nsens_params;
    P->ns = d->nsens_params + d->nsens_y0;
    if (!P->ns) return SV_OK;
    P->sens_idx = sv_alloc(P->ctx, sizeof(int) * (size_t)P->ns, "ode sensitivity directions");
    if (!P->sens_idx) return sv_last_status();
    for (int k = 0; k < d->nsens_params; k++) P->sens_idx[k] = d->sens_params[k];
    for (int k = 0; k < d->nsens_y0; k++) P->sens_idx[P->nsp + k] = d->sens_y0[k];
    P->d.sens_params = P->sens_idx;
    P->d.sens_y0 = P->sens_idx + P->nsp;
    return SV_OK;
}

/* The owned copy of the pattern (the full n × n one when none was given)
 * and the row of every entry. */
static sv_status copy_pattern(sv_ode_problem *P, const sv_ode_problem_desc *d)
{
    int n = P->n;
    size_t nb = sizeof(int) * (size_t)(P->nnz ? P->nnz : 1);
    P->rowptr = sv_alloc(P->ctx, sizeof(int) * (size_t)(n + 1), "ode pattern");
    P->colind = sv_alloc(P->ctx, nb, "ode pattern");
    P->erow = sv_alloc(P->ctx, nb, "ode pattern");
    if (!P->rowptr || !P->colind || !P->erow) return sv_last_status();
    if (P->dense) {
        for (int i = 0; i <= n; i++) P->rowptr[i] = i * n;
        for (int e = 0; e < n * n; e++) P->colind[e] = e % n;
    } else {
        memcpy(P->rowptr, d->rowptr, sizeof(int) * (size_t)(n + 1));
        memcpy(P->colind, d->colind, sizeof(int) * (size_t)P->nnz);
    }
    for (int i = 0; i < n; i++)
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) P->erow[e] = i;
    P->d.rowptr = P->rowptr;
    P->d.colind = P->colind;
    return SV_OK;
}

sv_status sv_ode_problem_create(sv_ctx *ctx, const sv_ode_problem_desc *d, sv_ode_problem **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ode_problem_create: out is NULL");
    *out = NULL;
    if (!d) return sv_error(SV_ERR_ARG, "sv_ode_problem_create: desc is NULL");
    sv_status st = check_desc(d);
    if (st != SV_OK) return st;
    sv_ode_problem *P = sv_calloc(ctx, 1, sizeof *P, "ode problem");
    if (!P) return sv_last_status();
    P->ctx = ctx;
    P->d = *d;
    P->n = d->n;
    P->np = d->nparams;
    P->dense = d->rowptr == NULL;
    P->nnz = P->dense ? d->n * d->n : d->rowptr[d->n];
    st = copy_pattern(P, d);
    if (st == SV_OK) st = copy_sens(P, d);
    if (st == SV_OK) st = ode_mass_create(ctx, d, &P->mass);
    if (st == SV_OK && P->mass) { /* the owned copy stands for the caller's arrays (sv_ode_problem_with_sens) */
        P->d.mass = P->mass->val;
        P->d.mass_rowptr = P->mass->rowptr;
        P->d.mass_colind = P->mass->colind;
    }
    if (st == SV_OK) st = ode_invariants_create(ctx, d, &P->inv);
    if (st == SV_OK && P->inv) P->d.invariants = P->inv->C;
    if (st == SV_OK) st = color_columns(P);
    if (st == SV_OK)
        *out = P;
    else
        sv_ode_problem_destroy(P);
    return st;
}

/* P's description as it was given, to derive a problem from. */
static sv_ode_problem_desc described(const sv_ode_problem *P)
{
    sv_ode_problem_desc d = P->d;
    if (P->dense) d.rowptr = d.colind = NULL; /* the owned full pattern stands for "dense" */
    return d;
}

sv_status sv_ode_problem_with_sens(sv_ctx *ctx, const sv_ode_problem *P, int nsens_params, const int *sens_params,
                                   int nsens_y0, const int *sens_y0, sv_ode_problem **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ode_problem_with_sens: out is NULL");
    *out = NULL;
    if (!P) return sv_error(SV_ERR_ARG, "sv_ode_problem_with_sens: prob is NULL");
    sv_ode_problem_desc d = described(P);
    d.nsens_params = nsens_params;
    d.sens_params = sens_params;
    d.nsens_y0 = nsens_y0;
    d.sens_y0 = sens_y0;
    return sv_ode_problem_create(ctx, &d, out);
}

/* Like sv_ode_problem_with_sens: a built-in problem's callbacks with the
 * caller's invariants (validated, and copied, by sv_ode_problem_create). */
sv_status sv_ode_problem_with_invariants(sv_ctx *ctx, const sv_ode_problem *P, int ninvariants,
                                         const double *invariants, sv_ode_problem **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ode_problem_with_invariants: out is NULL");
    *out = NULL;
    if (!P) return sv_error(SV_ERR_ARG, "sv_ode_problem_with_invariants: prob is NULL");
    sv_ode_problem_desc d = described(P);
    d.ninvariants = ninvariants;
    d.invariants = invariants;
    return sv_ode_problem_create(ctx, &d, out);
}

void sv_ode_problem_destroy(sv_ode_problem *P)
{
    if (!P) return;
    sv_sparse_coloring_destroy(P->coloring);
    ode_mass_destroy(P->ctx, P->mass);
    ode_invariants_destroy(P->ctx, P->inv);
    sv_free_each(P->ctx, (void *const[]){P->rowptr, P->colind, P->erow, P->sens_idx, P}, 5);
}

int sv_ode_problem_n(const sv_ode_problem *P) { return P ? P->n : 0; }
int sv_ode_problem_nparams(const sv_ode_problem *P) { return P ? P->np : 0; }
int sv_ode_problem_nnz(const sv_ode_problem *P) { return P ? P->nnz : 0; }
int sv_ode_problem_ncolors(const sv_ode_problem *P) { return P ? P->ncolors : 0; }
int sv_ode_problem_nsens(const sv_ode_problem *P) { return P ? P->ns : 0; }
int sv_ode_problem_nalg(const sv_ode_problem *P) { return P && P->mass ? P->mass->nalg : 0; }
int sv_ode_problem_ninvariants(const sv_ode_problem *P) { return P && P->inv ? P->inv->m : 0; }

void sv_ode_options_default(sv_ode_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->method = SV_ODE_RODAS5P;
    o->rtol = 1e-6;
    o->atol = 1e-8;
    o->max_steps = 1000000;
    o->beta1 = 0.14;
    o->beta2 = 0.08;
    o->safety = 0.9;
    o->qmin = 0.2;
    o->qmax = 10.0;
    o->qsteady_max = 0; /* 0: the method's default (1.2 Rodas5P, 1.0 Tsit5) */
    o->min_step_rel = 1e-14;
    o->lu = SV_ODE_LU_DOUBLE;
    o->lanes = 0;
    o->max_refusals = 30;
    o->check_pattern = SV_ODE_CHECK_ON;
}

const char *sv_ode_traj_status_string(sv_ode_traj_status s)
{
    switch (s) {
    case SV_ODE_SUCCESS: return "success";
    case SV_ODE_MAX_STEPS: return "maximum number of steps reached";
    case SV_ODE_STEP_TOO_SMALL: return "step size too small";
    case SV_ODE_NONFINITE: return "non-finite values (NaN or Inf) in the solution or f";
    case SV_ODE_F_FAILED: return "a callback reported failure";
    case SV_ODE_NOT_RUN: return "not run";
    case SV_ODE_STOPPED: return "stopped by an event";
    }
    return "unknown trajectory status";
}
