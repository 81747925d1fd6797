/* Problem description: validation, an owned copy of the Jacobian pattern,
 * and the column colouring used to recover J from directional derivatives
 * (complex step, J·v, finite differences). */
#include <stdlib.h>
#include <string.h>

#include "ode_internal.h"
#include "solvent/sparse.h"

/* Colouring of the column intersection graph (two columns that share a row
 * get different colours): a greedy largest-first pass here, replaced by the
 * sparse engine's sv_sparse_color when that finds fewer colours. */
static sv_status color_columns(sv_ode_problem *P)
{
    int n = P->n, nnz = P->nnz;
    sv_status st = SV_OK;
    int *ccount = sv_calloc(P->ctx, (size_t)n + 1, sizeof(int), "ode colouring");
    int *cptr = sv_calloc(P->ctx, (size_t)n + 1, sizeof(int), "ode colouring");
    int *crow = sv_alloc(P->ctx, sizeof(int) * (size_t)(nnz ? nnz : 1), "ode colouring");
    int *order = sv_alloc(P->ctx, sizeof(int) * (size_t)n, "ode colouring");
    int *mark = sv_alloc(P->ctx, sizeof(int) * (size_t)(n + 1), "ode colouring");
    P->color = sv_alloc(P->ctx, sizeof(int) * (size_t)n, "ode colouring");
    P->color_ptr = sv_calloc(P->ctx, (size_t)n + 2, sizeof(int), "ode colouring");
    P->color_cols = sv_alloc(P->ctx, sizeof(int) * (size_t)n, "ode colouring");
    if (!ccount || !cptr || !crow || !order || !mark || !P->color || !P->color_ptr || !P->color_cols) {
        st = sv_last_status();
        goto done;
    }
    /* column-wise (CSC) view: rows of each column */
    for (int e = 0; e < nnz; e++) ccount[P->colind[e]]++;
    for (int j = 0; j < n; j++) cptr[j + 1] = cptr[j] + ccount[j];
    for (int j = 0; j < n; j++) ccount[j] = cptr[j];
    for (int i = 0; i < n; i++)
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) crow[ccount[P->colind[e]]++] = i;
    for (int j = 0; j < n; j++) order[j] = j;
    /* insertion sort by decreasing column count (stable, deterministic) */
    for (int a = 1; a < n; a++) {
        int j = order[a], cj = cptr[j + 1] - cptr[j], b = a;
        while (b > 0 && cptr[order[b - 1] + 1] - cptr[order[b - 1]] < cj) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = j;
    }
    for (int j = 0; j < n; j++) P->color[j] = -1;
    for (int c = 0; c <= n; c++) mark[c] = -1;
    int ncol = 0;
    for (int a = 0; a < n; a++) {
        int j = order[a];
        /* colours already used by columns sharing a row with j */
        for (int q = cptr[j]; q < cptr[j + 1]; q++) {
            int i = crow[q];
            for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) {
                int c = P->color[P->colind[e]];
                if (c >= 0) mark[c] = j;
            }
        }
        int c = 0;
        while (mark[c] == j) c++;
        P->color[j] = c;
        if (c + 1 > ncol) ncol = c + 1;
    }
    P->ncolors = ncol;
    /* The sparse engine's colouring tries several orderings; keep it when it
     * needs fewer colours (its pattern has the diagonal added, so its groups
     * are valid for ours too). */
    {
        sv_sparse_pattern *sp = NULL;
        sv_sparse_coloring *sc = NULL;
        if (sv_sparse_pattern_from_csr(P->ctx, n, P->rowptr, P->colind, &sp) == SV_OK &&
            sv_sparse_color(P->ctx, sp, &sc) == SV_OK && sv_sparse_coloring_count(sc) < ncol) {
            const int *cc = sv_sparse_coloring_colors(sc);
            for (int j = 0; j < n; j++) P->color[j] = cc[j];
            ncol = P->ncolors = sv_sparse_coloring_count(sc);
        }
        sv_sparse_coloring_destroy(sc);
        sv_sparse_pattern_destroy(sp);
        sv_clear_error();
    }
    for (int c = 0; c <= ncol; c++) P->color_ptr[c] = 0;
    for (int j = 0; j < n; j++) P->color_ptr[P->color[j] + 1]++;
    for (int c = 0; c < ncol; c++) P->color_ptr[c + 1] += P->color_ptr[c];
    for (int c = 0; c <= ncol; c++) mark[c] = P->color_ptr[c];
    for (int j = 0; j < n; j++) P->color_cols[mark[P->color[j]]++] = j;
done:
    sv_free(P->ctx, ccount);
    sv_free(P->ctx, cptr);
    sv_free(P->ctx, crow);
    sv_free(P->ctx, order);
    sv_free(P->ctx, mark);
    return st;
}

sv_status sv_ode_problem_create(sv_ctx *ctx, const sv_ode_problem_desc *d, sv_ode_problem **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ode_problem_create: out is NULL");
    *out = NULL;
    if (!d) return sv_error(SV_ERR_ARG, "sv_ode_problem_create: desc is NULL");
    const char *nm = d->name ? d->name : "problem";
    if (d->n < 1) return sv_error(SV_ERR_ARG, "%s: n = %d: expected >= 1", nm, d->n);
    if (d->nparams < 0) return sv_error(SV_ERR_ARG, "%s: nparams = %d: expected >= 0", nm, d->nparams);
    if (!d->f) return sv_error(SV_ERR_ARG, "%s: f is NULL: the right-hand side is required", nm);
    switch (d->jac_source) {
    case SV_ODE_JAC_ANALYTIC:
        if (!d->jac && !d->jac_batch)
            return sv_error(SV_ERR_ARG, "%s: jac_source = analytic but neither jac nor jac_batch is set", nm);
        break;
    case SV_ODE_JAC_COMPLEX_STEP:
        if (!d->f_complex)
            return sv_error(SV_ERR_ARG, "%s: jac_source = complex-step but f_complex is NULL", nm);
        break;
    case SV_ODE_JAC_JVP:
        if (!d->jvp) return sv_error(SV_ERR_ARG, "%s: jac_source = jvp but jvp is NULL", nm);
        break;
    case SV_ODE_JAC_FD:
        break;
    default:
        return sv_error(SV_ERR_ARG, "%s: jac_source = %d: expected 0..3 (analytic, complex-step, jvp, fd)", nm,
                        (int)d->jac_source);
    }
    int n = d->n;
    if ((d->rowptr == NULL) != (d->colind == NULL))
        return sv_error(SV_ERR_PATTERN, "%s: pattern needs both rowptr and colind (or neither for dense)", nm);
    if (d->rowptr) {
        if (d->rowptr[0] != 0)
            return sv_error(SV_ERR_PATTERN, "%s: rowptr[0] = %d: expected 0", nm, d->rowptr[0]);
        for (int i = 0; i < n; i++) {
            if (d->rowptr[i + 1] < d->rowptr[i])
                return sv_error(SV_ERR_PATTERN, "%s: rowptr[%d] = %d < rowptr[%d] = %d: must not decrease", nm,
                                i + 1, d->rowptr[i + 1], i, d->rowptr[i]);
            for (int e = d->rowptr[i]; e < d->rowptr[i + 1]; e++) {
                int j = d->colind[e];
                if (j < 0 || j >= n)
                    return sv_error(SV_ERR_PATTERN, "%s: colind[%d] = %d (row %d): expected 0..%d", nm, e, j, i,
                                    n - 1);
                if (e > d->rowptr[i] && j <= d->colind[e - 1])
                    return sv_error(SV_ERR_PATTERN,
                                    "%s: row %d: columns must be strictly increasing (colind[%d] = %d after %d)", nm,
                                    i, e, j, d->colind[e - 1]);
            }
        }
        if ((long long)d->rowptr[n] > (long long)n * n)
            return sv_error(SV_ERR_PATTERN, "%s: rowptr[n] = %d exceeds n² = %lld", nm, d->rowptr[n],
                            (long long)n * n);
    }
    sv_ode_problem *P = sv_calloc(ctx, 1, sizeof *P, "ode problem");
    if (!P) return sv_last_status();
    P->ctx = ctx;
    P->d = *d;
    P->n = n;
    P->np = d->nparams;
    P->dense = d->rowptr == NULL;
    P->nnz = P->dense ? n * n : d->rowptr[n];
    P->rowptr = sv_alloc(ctx, sizeof(int) * (size_t)(n + 1), "ode pattern");
    P->colind = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode pattern");
    P->erow = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode pattern");
    if (!P->rowptr || !P->colind || !P->erow) {
        sv_status st = sv_last_status();
        sv_ode_problem_destroy(P);
        return st;
    }
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
    sv_status st = color_columns(P);
    if (st != SV_OK) {
        sv_ode_problem_destroy(P);
        return st;
    }
    *out = P;
    return SV_OK;
}

void sv_ode_problem_destroy(sv_ode_problem *P)
{
    if (!P) return;
    sv_ctx *ctx = P->ctx;
    sv_free(ctx, P->rowptr);
    sv_free(ctx, P->colind);
    sv_free(ctx, P->erow);
    sv_free(ctx, P->color);
    sv_free(ctx, P->color_ptr);
    sv_free(ctx, P->color_cols);
    sv_free(ctx, P);
}

int sv_ode_problem_n(const sv_ode_problem *P) { return P ? P->n : 0; }
int sv_ode_problem_nparams(const sv_ode_problem *P) { return P ? P->np : 0; }
int sv_ode_problem_nnz(const sv_ode_problem *P) { return P ? P->nnz : 0; }
int sv_ode_problem_ncolors(const sv_ode_problem *P) { return P ? P->ncolors : 0; }

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
    }
    return "unknown trajectory status";
}
