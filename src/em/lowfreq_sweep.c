/* The planar model's sweep: the sweep engine over the frequencies where
 * Z(f) itself can be solved in double, the loop–tree solve (lowfreq.c)
 * below, merged into one result. */
#include <math.h>
#include <string.h>

#include "em_internal.h"

/* A result for nf frequencies, allocated as the sweep's own
 * (sv_sweep_result_destroy frees it). */
static sv_status result_alloc(sv_ctx *ctx, int nf, int np, const double *freq, sv_sweep_result **out)
{
    sv_sweep_result *r = sv_calloc(ctx, 1, sizeof *r, "sweep result");
    if (!r) return sv_last_status();
    *r = (sv_sweep_result){.ctx = ctx, .nfreq = nf, .nout = np, .nrhs = np, .converged = 1};
    r->freq = sv_alloc(ctx, sizeof(double) * (size_t)nf, "sweep result frequencies");
    r->h = sv_calloc(ctx, (size_t)nf * (size_t)np * (size_t)np, sizeof(double complex), "sweep result outputs");
    r->exact = sv_calloc(ctx, (size_t)nf, 1, "sweep result flags");
    r->fallback = sv_calloc(ctx, (size_t)nf, 1, "sweep result flags");
    r->residual = sv_calloc(ctx, (size_t)nf, sizeof(double), "sweep result residuals");
    *out = r;
    if (!r->freq || !r->h || !r->exact || !r->fallback || !r->residual) return sv_last_status();
    memcpy(r->freq, freq, sizeof(double) * (size_t)nf);
    return SV_OK;
}

/* The swept frequencies' outputs and figures into the merged result. */
static void merge_swept(sv_sweep_result *r, const sv_sweep_result *hr, const int *at)
{
    size_t pp = (size_t)r->nout * (size_t)r->nrhs;
    for (int i = 0; i < hr->nfreq; i++) {
        memcpy(r->h + (size_t)at[i] * pp, hr->h + (size_t)i * pp, sizeof(double complex) * pp);
        r->exact[at[i]] = hr->exact[i];
        r->fallback[at[i]] = hr->fallback[i];
        r->residual[at[i]] = hr->residual[i];
    }
    r->n_exact += hr->n_exact;
    r->n_fallback = hr->n_fallback;
    r->n_gmres = hr->n_gmres;
    r->basis_size = hr->basis_size;
    r->converged = hr->converged;
    r->max_residual = hr->max_residual;
    r->seconds_exact += hr->seconds_exact;
    r->seconds_reduced = hr->seconds_reduced;
    r->peak_bytes = hr->peak_bytes;
}

/* The swept frequencies (those above the threshold) by the sweep engine. */
static sv_status sweep_high(sv_ctx *ctx, const sv_em_affine *a, int nf, const double *freq,
                            const sv_sweep_options *opts, sv_sweep_result *r)
{
    double *fh = sv_alloc(ctx, sizeof(double) * (size_t)nf, "swept frequencies");
    int *at = sv_alloc(ctx, sizeof(int) * (size_t)nf, "swept frequencies");
    sv_status st = fh && at ? SV_OK : sv_last_status();
    int nh = 0;
    for (int i = 0; !st && i < nf; i++)
        if (!sv_em_affine_low_frequency(a, freq[i])) {
            fh[nh] = freq[i];
            at[nh++] = i;
        }
    sv_sweep_result *hr = NULL;
    if (!st && nh > 0) st = sv_sweep_run(ctx, sv_em_affine_model(a), nh, fh, opts, &hr);
    if (!st && hr) merge_swept(r, hr, at);
    sv_sweep_result_destroy(hr);
    sv_free(ctx, fh);
    sv_free(ctx, at);
    return st;
}

/* Each frequency below the threshold by the loop–tree solve, reported
 * (and stopped when asked) between them. */
static sv_status solve_low(sv_ctx *ctx, const sv_em_affine *a, int low, sv_sweep_result *r)
{
    size_t pp = (size_t)r->nout * (size_t)r->nrhs;
    double t0 = sv_time_now();
    sv_status st = SV_OK;
    for (int i = 0, done = 0; !st && i < r->nfreq; i++)
        if (sv_em_affine_low_frequency(a, r->freq[i])) {
            st = sv_progress(ctx, "low-frequency solves", (double)done++ / low);
            if (!st) st = sv_em_solve_loop_tree(ctx, a, r->freq[i], r->h + (size_t)i * pp);
            r->exact[i] = 1;
            r->n_exact++;
        }
    r->seconds_exact += sv_time_now() - t0;
    return st;
}

sv_status sv_em_sweep_run(sv_ctx *ctx, const sv_em_affine *a, int nfreq, const double *freq,
                          const sv_sweep_options *opts, sv_sweep_result **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_sweep_run: out is NULL");
    *out = NULL;
    if (!a || !freq) return sv_error(SV_ERR_ARG, "sv_em_sweep_run: NULL argument");
    int low = 0;
    for (int i = 0; i < nfreq; i++) {
        sv_status st = sv_em_check_solve_frequency("sv_em_sweep_run", freq[i]);
        if (st) return st;
        low += sv_em_affine_low_frequency(a, freq[i]);
    }
    if (low == 0) return sv_sweep_run(ctx, sv_em_affine_model(a), nfreq, freq, opts, out);
    double t0 = sv_time_now();
    sv_sweep_result *r = NULL;
    sv_status st = result_alloc(ctx, nfreq, sv_em_affine_em(a)->prj->nports, freq, &r);
    /* the swept frequencies' share of the progress, then the low ones' */
    sv_progress_span span = sv_progress_span_begin(ctx, 0, (double)(nfreq - low) / nfreq);
    if (!st) st = sweep_high(ctx, a, nfreq, freq, opts, r);
    sv_progress_span_end(ctx, span);
    span = sv_progress_span_begin(ctx, (double)(nfreq - low) / nfreq, 1);
    if (!st) st = solve_low(ctx, a, low, r);
    if (!st) st = sv_progress(ctx, "low-frequency solves", 1.0);
    sv_progress_span_end(ctx, span);
    if (st) {
        sv_sweep_result_destroy(r);
        return st;
    }
    r->seconds_total = sv_time_now() - t0;
    *out = r;
    return SV_OK;
}
