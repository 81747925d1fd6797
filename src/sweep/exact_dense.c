/* The CPU dense exact solver (an sv_sweep_solver): Z(f) is formed in packed
 * storage straight from the terms (single precision for the mixed path,
 * double otherwise) and factorised by the dense engine's LDLᵀ; the
 * refinement engine refines with residuals computed in double from the
 * terms, so no double copy of Z is held on the fast path
 * (solvent/sweep_solver.h for how a solve proceeds). */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"


/* Write Σ c_k·A_k into a packed matrix (C32 or C64) of the same order;
 * packed terms are combined element by element in double and rounded once,
 * CSR terms then added at their positions. */
static sv_status form_packed(sv_ctx *ctx, const sv_sweep_model *m, const double complex *c, sv_dense_sym *a)
{
    int n = m->n, nt = m->nterms;
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
    /* the packed terms, then the low-rank ones, each half of the progress;
     * column j starts after 1 − (1 − j/n)² of the packed entries */
    sv_progress_span part = sv_progress_span_begin(ctx, 0, 0.5);
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "forming Z(f)", 1.0);
#pragma omp parallel for schedule(dynamic, 8) if (n >= 1024) num_threads(sv_threads_team())
    for (int j = 0; j < n; j++) {
        if (sv_progress_loop_at(&loop, 1 - (1 - (double)j / n) * (1 - (double)j / n))) continue;
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
    sv_status st = sv_progress_loop_end(&loop);
    sv_progress_span_end(ctx, part);
    if (st) return st;
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
    part = sv_progress_span_begin(ctx, 0.5, 1);
    st = sv_sweep_lowrank_add_packed(ctx, m, c, nb, single, data);
    sv_progress_span_end(ctx, part);
    return st;
}

/* Pivot threshold of the single-precision LDLᵀ, relative to max|z_ij|.
 * The dense engine's default (1e-4) guards callers that trust the factors;
 * the sweep does not: every solution is refined with residuals from the
 * terms in double, and growth in the factors that spoils it shows as
 * refinement that stalls, which falls back to double. Below single
 * precision's roundoff a pivot carries no digits: the factorisation then
 * stops (no pivoted LU in single: it costs a full N² copy and finds such a
 * matrix singular anyway) and the frequency goes to the double fallback.
 * docs/sweep.md has the measurements. */
typedef struct dense_solver {
    const sv_sweep_model *m;
    int single;
    double tol;         /* single: the refinement target (0 = the plan's default) */
    sv_ctx *home;       /* the content's own */
    sv_ctx *ctx;        /* of the solve in progress */
    sv_dense_sym *a;    /* Z(f), then its factors */
    sv_dense_factor *f;
    void *w;            /* workspace of the scaled single-precision solves */
} dense_solver;

static void dense_release(void *content)
{
    dense_solver *D = content;
    sv_dense_factor_destroy(D->f);
    sv_dense_sym_destroy(D->a);
    sv_free(D->ctx, D->w);
    D->f = NULL;
    D->a = NULL;
    D->w = NULL;
}

/* The coefficients of the factorised matrix: Z(f)'s, or for single factors
 * at low frequencies those of the preconditioner (precond.c). */
static sv_status form_coefs(const dense_solver *D, sv_ctx *ctx, double freq, double complex *c)
{
    if (!D->single) return sv_sweep_model_coefs(D->m, freq, c);
    double lift;
    sv_status st = sv_sweep_precond_coefs(D->m, freq, c, &lift);
    if (!st && lift > 1)
        sv_log(ctx, SV_LOG_DEBUG, "f = %g: single factors with the minor terms lifted x%.3g", freq, lift);
    return st;
}

static sv_status dense_setup(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    dense_solver *D = content;
    const sv_sweep_model *m = D->m;
    double complex c[m->nterms];
    memset(plan, 0, sizeof *plan);
    plan->factors = D->single ? SV_SWEEP_FACTORS_SINGLE : SV_SWEEP_FACTORS_DOUBLE;
    plan->tolerance = D->tol;
    dense_release(D);
    D->ctx = ctx;
    /* nb = 0 (no packed term) lets the dense engine choose */
    sv_status st = sv_dense_sym_create(ctx, m->n, D->single ? SV_DENSE_C32 : SV_DENSE_C64, m->nb, &D->a);
    if (!st) st = form_coefs(D, ctx, freq, c);
    /* forming Z(f) reads every term once; factorising it is n³/3 */
    sv_progress_span step = sv_progress_span_begin(ctx, 0, 0.1);
    if (!st) st = form_packed(ctx, m, c, D->a);
    sv_progress_span_end(ctx, step);
    /* a stopped solve discards Z(f): no need to give it back */
    sv_dense_factor_options fo = {.pivot_threshold = D->single ? SV_SWEEP_PIVOT_SINGLE : 0,
                                  .disallow_fallback = D->single, .discard_on_cancel = 1};
    step = sv_progress_span_begin(ctx, 0.1, 1);
    if (!st) st = sv_dense_factor_create(ctx, D->a, &fo, &D->f, NULL);
    sv_progress_span_end(ctx, step);
    if (!st && D->single) {
        /* the solution and derivative groups together */
        D->w = sv_alloc(ctx, sv_dense_solve_work_bytes(m->n, m->nrhs * (1 + nderiv)), "single-precision vectors");
        if (!D->w) st = sv_last_status();
    }
    if (st) dense_release(D);
    return st;
}

/* v ← Z⁻¹·v with the factors; single-precision ones scale each column
 * before rounding (sv_dense_factor_solve_scaled), so that small residuals
 * keep their digits. */
static sv_status dense_precond(void *content, int ncols, double complex *v, int ldv)
{
    const dense_solver *D = content;
    return sv_dense_factor_solve_scaled(D->f, ncols, v, ldv, D->w);
}

static void dense_destroy(void *content)
{
    dense_solver *D = content;
    if (!D) return;
    dense_release(D);
    sv_free(D->home, D);
}

static const sv_sweep_solver_ops dense_ops = {.name = "dense LDLT", .setup = dense_setup, .precond = dense_precond,
                                              .release = dense_release, .destroy = dense_destroy};

sv_status sv_sweep_dense_solver_create(sv_ctx *ctx, const sv_sweep_model *m, int single, double tol,
                                       sv_sweep_solver **out)
{
    dense_solver *D = sv_calloc(ctx, 1, sizeof *D, "dense exact solver");
    if (!D) return sv_last_status();
    *D = (dense_solver){.m = m, .single = single, .tol = tol, .home = ctx, .ctx = ctx};
    sv_status st = sv_sweep_solver_create(ctx, m, &dense_ops, D, out);
    if (st) dense_destroy(D);
    return st;
}
