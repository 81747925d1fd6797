/* sv_dense_factor: the blocked LDLᵀ fast path, and LU with partial pivoting
 * (LAPACK getrf) as the stable fallback when a pivot is tiny.
 *
 * Why LU for the fallback: LAPACK has no fast pivoted factorisation on a
 * packed layout (zsptrf is unblocked and 6–8 × slower than zsytrf), and this
 * OpenBLAS's zsytrf reads past its workspace on pivoting matrices. getrf on
 * a full copy is fast, robust and well tested; the price is n² elements of
 * extra memory, which is checked against the budget first and reported. */
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "dense_internal.h"

struct sv_dense_factor {
    sv_ctx *ctx;
    sv_dense_sym *a;
    sv_dense_type type;
    sv_dense_path path;
    void *lu;          /* fallback: full n × n LU factors (C64 or C32) */
    lapack_int *ipiv;  /* fallback: row interchanges */
};

double sv_dense_default_threshold(sv_dense_type type) { return type == SV_DENSE_C32 ? 1e-4 : 1e-8; }

void sv_dense_factor_options_default(sv_dense_factor_options *opts)
{
    if (opts) memset(opts, 0, sizeof *opts);
}

/* Expand the packed lower triangle into a full column-major n × n matrix. */
static void expand_full(const sv_dense_sym *a, void *full)
{
    const int n = a->n;
    size_t es = sv_dense_elem_bytes(a->type);
    char *f = full;
    const char *d = a->data;
    for (int j = 0; j < n; j++) {
        memcpy(f + ((size_t)j * n + j) * es, d + sv_dense_sym_offset(a, j, j) * es, (size_t)(n - j) * es);
        for (int i = j + 1; i < n; i++) memcpy(f + ((size_t)i * n + j) * es, f + ((size_t)j * n + i) * es, es);
    }
}

static sv_status run_fallback(sv_ctx *ctx, sv_dense_factor *f, sv_dense_factor_info *info, int check_rcond)
{
    sv_dense_sym *a = f->a;
    const int n = a->n;
    size_t es = sv_dense_elem_bytes(a->type), full, ipb;
    if (sv_size_mul((size_t)n * (size_t)n, es, &full)) return sv_last_status();
    ipb = (size_t)n * sizeof(lapack_int);
    if (sv_mem_check(ctx, full + ipb + 256, "the pivoted fallback factorisation (full LU copy)"))
        return sv_last_status();
    f->lu = sv_alloc(ctx, full, "fallback LU factors");
    f->ipiv = sv_alloc(ctx, ipb ? ipb : 1, "fallback pivot indices");
    if (!f->lu || !f->ipiv) return sv_last_status();
    info->fallback_bytes = full + ipb;
    expand_full(a, f->lu);
    double anorm = sv_dense_sym_norm_inf(a), rcond = 0;
    lapack_int linfo;
    if (a->type == SV_DENSE_C64) {
        linfo = LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, f->lu, n, f->ipiv);
        if (linfo == 0 && check_rcond) LAPACKE_zgecon(LAPACK_COL_MAJOR, 'I', n, f->lu, n, anorm, &rcond);
    } else {
        float rc = 0;
        linfo = LAPACKE_cgetrf(LAPACK_COL_MAJOR, n, n, f->lu, n, f->ipiv);
        if (linfo == 0 && check_rcond) LAPACKE_cgecon(LAPACK_COL_MAJOR, 'I', n, f->lu, n, (float)anorm, &rc);
        rcond = rc;
    }
    if (linfo > 0)
        return sv_error(SV_ERR_SINGULAR, "dense factorisation: the matrix is singular (LU pivot %d is exactly zero)",
                        (int)linfo);
    if (linfo < 0) return sv_error(SV_ERR_INTERNAL, "dense factorisation: getrf rejected argument %d", (int)-linfo);
    double eps = a->type == SV_DENSE_C64 ? 0x1p-53 : 0x1p-24;
    if (check_rcond && !(rcond >= eps))
        return sv_error(SV_ERR_SINGULAR,
                        "dense factorisation: the matrix is singular to working precision (reciprocal condition "
                        "estimate %.3g < %.3g)",
                        rcond, eps);
    f->path = SV_DENSE_PATH_FALLBACK;
    return SV_OK;
}

sv_status sv_dense_factor_create(sv_ctx *ctx, sv_dense_sym *a, const sv_dense_factor_options *opts,
                                 sv_dense_factor **out, sv_dense_factor_info *info)
{
    return sv_dense_factor_create_ex(ctx, a, opts, out, info, 1);
}

/* max(|Re|, |Im|) over the matrix; refuses a non-finite or zero matrix. */
static sv_status matrix_amax(const sv_dense_sym *a, double *amax)
{
    int bi = -1, bj = -1, z = a->type == SV_DENSE_C64;
    *amax = a->n ? (z ? sv_dense_amax_z(a, &bi, &bj) : sv_dense_amax_c(a, &bi, &bj)) : 0;
    if (*amax < 0)
        return sv_error(SV_ERR_NONFINITE, "sv_dense_factor_create: entry (%d, %d) of the matrix is not finite", bi, bj);
    if (a->n > 0 && *amax == 0) return sv_error(SV_ERR_SINGULAR, "sv_dense_factor_create: the matrix is zero");
    return SV_OK;
}

/* Undo the block columns before kfail: A is the original matrix again (up
 * to rounding in the recomputed products). */
static void ldlt_recover(sv_dense_sym *a, int kfail, void *scratch)
{
    if (a->type == SV_DENSE_C64) sv_dense_ldlt_recover_z(a, kfail, scratch);
    else sv_dense_ldlt_recover_c(a, kfail, scratch);
}

/* The blocked LDLᵀ of f->a with pivot threshold tau·amax; on a tiny pivot,
 * A restored and (if allowed) the pivoted fallback. */
static sv_status factor_ldlt(sv_ctx *ctx, sv_dense_factor *f, double tau, double amax, int use3m, int allow_fallback,
                             int restore_on_cancel, int check_rcond, sv_dense_factor_info *info)
{
    sv_dense_sym *a = f->a;
    const int n = a->n;
    if (n == 0) return SV_OK;
    sv_threads_saved prev = sv_threads_apply(ctx);
    int nthreads = sv_threads_team();
    if (nthreads < 1) nthreads = 1;
    size_t es = sv_dense_elem_bytes(a->type);
    void *scratch = sv_alloc(ctx, 3 * (size_t)a->nb * a->nb * es, "dense factorisation workspace");
    int *task0 = sv_alloc(ctx, sizeof(int) * ((size_t)(n / a->nb) + 2), "dense factorisation task table");
    sv_status st = scratch && task0 ? SV_OK : sv_last_status();
    int bad = -1, kfail = -1;
    if (!st) {
        double minpiv = INFINITY, thr = tau * amax;
        if (a->type == SV_DENSE_C64)
            sv_dense_ldlt_factor_z(a, thr, scratch, task0, nthreads, use3m, !restore_on_cancel, ctx, &bad, &kfail, &minpiv);
        else
            sv_dense_ldlt_factor_c(a, thr, scratch, task0, nthreads, use3m, !restore_on_cancel, ctx, &bad, &kfail, &minpiv);
        info->min_pivot_ratio = minpiv / amax;
        /* a tiny pivot, or cancelled (−2) unless the caller discards A: give A back */
        if (bad >= 0 || (bad == -2 && restore_on_cancel)) ldlt_recover(a, kfail, scratch);
    }
    if (!st && bad == -2)
        st = sv_error(SV_ERR_CANCELLED, "dense LDLT factorisation cancelled by the progress callback");
    if (!st && bad >= 0) {
        info->small_pivot_index = bad;
        if (!allow_fallback)
            st = sv_error(SV_ERR_SINGULAR,
                          "dense LDLT: pivot %d is below the threshold %.3g x max|a_ij| and the pivoted "
                          "fallback is disabled (disallow_fallback = 1)",
                          bad, tau);
    }
    sv_free(ctx, scratch);
    if (!st && bad >= 0) {
        st = run_fallback(ctx, f, info, check_rcond);
        info->path = f->path;
    }
    sv_free(ctx, task0);
    sv_threads_restore(prev);
    return st;
}

sv_status sv_dense_factor_create_ex(sv_ctx *ctx, sv_dense_sym *a, const sv_dense_factor_options *opts,
                                    sv_dense_factor **out, sv_dense_factor_info *info, int check_rcond)
{
    double t0 = sv_time_now();
    if (!out) return sv_error(SV_ERR_ARG, "sv_dense_factor_create: out is NULL");
    *out = NULL;
    if (!a) return sv_error(SV_ERR_ARG, "sv_dense_factor_create: a is NULL");
    if (a->type != SV_DENSE_C64 && a->type != SV_DENSE_C32)
        return sv_error(SV_ERR_ARG, "sv_dense_factor_create: a has type %d: expected SV_DENSE_C64 or SV_DENSE_C32",
                        (int)a->type);
    sv_dense_factor_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info->small_pivot_index = -1;
    info->path = SV_DENSE_PATH_LDLT;
    if (opts && !(opts->pivot_threshold >= 0 && opts->pivot_threshold < 1))
        return sv_error(SV_ERR_ARG, "sv_dense_factor_create: pivot_threshold = %g: expected in [0, 1)",
                        opts->pivot_threshold);
    double tau = opts && opts->pivot_threshold > 0 ? opts->pivot_threshold : sv_dense_default_threshold(a->type);
    double amax;
    sv_status st = matrix_amax(a, &amax);
    if (st) return st;

    sv_dense_factor *f = sv_calloc(ctx, 1, sizeof *f, "dense factor");
    if (!f) return sv_last_status();
    *f = (sv_dense_factor){.ctx = ctx, .a = a, .type = a->type, .path = SV_DENSE_PATH_LDLT};
    st = factor_ldlt(ctx, f, tau, amax, !(opts && opts->plain_gemm), !(opts && opts->disallow_fallback),
                     !(opts && opts->discard_on_cancel), check_rcond, info);
    info->seconds = sv_time_now() - t0;
    if (st != SV_OK) {
        sv_dense_factor_destroy(f);
        return st;
    }
    *out = f;
    return SV_OK;
}

void sv_dense_factor_destroy(sv_dense_factor *f)
{
    if (!f) return;
    sv_free(f->ctx, f->lu);
    sv_free(f->ctx, f->ipiv);
    sv_free(f->ctx, f);
}

sv_dense_type sv_dense_factor_type(const sv_dense_factor *f) { return f ? f->type : SV_DENSE_C64; }

sv_dense_path sv_dense_factor_path(const sv_dense_factor *f) { return f ? f->path : SV_DENSE_PATH_LDLT; }

sv_status sv_dense_factor_solve(const sv_dense_factor *f, int nrhs, void *b, int ldb)
{
    if (!f) return sv_error(SV_ERR_ARG, "sv_dense_factor_solve: f is NULL");
    const int n = f->a->n;
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_dense_factor_solve: nrhs = %d: expected >= 0", nrhs);
    if (ldb < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_factor_solve: ldb = %d: expected >= n = %d", ldb, n);
    if (n == 0 || nrhs == 0) return SV_OK;
    if (!b) return sv_error(SV_ERR_ARG, "sv_dense_factor_solve: b is NULL");
    sv_threads_saved prev = sv_threads_apply(f->ctx);
    /* A solve with a few right-hand sides is memory bound and made of many
     * small BLAS calls: multi-threaded OpenBLAS pays a synchronisation per
     * call. Such solves of the LDLᵀ factors run on Solvent's own team instead
     * (each thread streams a slice of the factors, ldlt_tmpl.h), or on one
     * thread where there is one, or the order is too small for a team to pay
     * off; OpenBLAS gets one thread here (restored below). */
    int small = nrhs <= SV_DENSE_SOLVE_1T_MAX_RHS, saved = sv_threads_team();
    sv_threads_saved serial = {0};
    if (small) serial = sv_threads_serial_begin();
    int team = small && f->path == SV_DENSE_PATH_LDLT && saved > 1 && n >= SV_DENSE_SOLVE_TEAM_MIN_N;
    size_t esz = f->type == SV_DENSE_C64 ? sizeof(double complex) : sizeof(float complex);
    void *part = team ? sv_alloc(f->ctx, esz * (size_t)saved * (size_t)f->a->nb * (size_t)nrhs, "solve workspace")
                      : NULL;
    if (team && !part) {
        sv_clear_error(); /* no memory for the team's partial sums: one thread then */
        team = 0;
    }
    if (team) {
        if (f->type == SV_DENSE_C64) sv_dense_ldlt_solve_team_z(f->a, nrhs, b, ldb, saved, part);
        else sv_dense_ldlt_solve_team_c(f->a, nrhs, b, ldb, saved, part);
        sv_free(f->ctx, part);
    } else if (f->path == SV_DENSE_PATH_LDLT) {
        if (f->type == SV_DENSE_C64) sv_dense_ldlt_solve_z(f->a, nrhs, b, ldb);
        else sv_dense_ldlt_solve_c(f->a, nrhs, b, ldb);
    } else if (f->type == SV_DENSE_C64) {
        LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, nrhs, f->lu, n, f->ipiv, b, ldb);
    } else {
        LAPACKE_cgetrs(LAPACK_COL_MAJOR, 'N', n, nrhs, f->lu, n, f->ipiv, b, ldb);
    }
    if (small) sv_threads_restore(serial);
    sv_threads_restore(prev);
    return SV_OK;
}

size_t sv_dense_solve_work_bytes(int n, int nrhs)
{
    if (n < 0 || nrhs < 0) return 0;
    return sizeof(float complex) * (size_t)n * (size_t)nrhs + sizeof(double) * (size_t)nrhs;
}

/* The C32 factors as a single-precision solve (sv_dense_solve32_fn). */
static sv_status factor_solve32(void *user, int nrhs, float complex *w)
{
    const sv_dense_factor *f = user;
    return sv_dense_factor_solve(f, nrhs, w, f->a->n);
}

sv_status sv_dense_factor_solve_scaled(const sv_dense_factor *f, int nrhs, double complex *b, int ldb, void *work)
{
    if (!f) return sv_error(SV_ERR_ARG, "sv_dense_factor_solve_scaled: f is NULL");
    if (f->type == SV_DENSE_C64) return sv_dense_factor_solve(f, nrhs, b, ldb);
    return sv_dense_solve_scaled(f->a->n, nrhs, b, ldb, work, factor_solve32, (void *)f);
}

sv_status sv_dense_solve_scaled(int n, int nrhs, double complex *b, int ldb, void *work, sv_dense_solve32_fn solve32,
                                void *user)
{
    if (n < 0 || nrhs < 0 || ldb < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG,
                        "sv_dense_solve_scaled: n = %d, nrhs = %d, ldb = %d: expected n, nrhs >= 0, ldb >= n", n,
                        nrhs, ldb);
    if (n == 0 || nrhs == 0) return SV_OK;
    if (!b || !work || !solve32)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_scaled: %s is NULL", !b ? "b" : !work ? "work" : "solve32");
    float complex *w = work;
    double *scale = (double *)(w + (size_t)n * nrhs); /* nrhs doubles after the vectors */
    for (int c = 0; c < nrhs; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) s = fmax(s, cabs(b[(size_t)c * ldb + i]));
        scale[c] = s > 0 && isfinite(s) ? s : 1;
        for (int i = 0; i < n; i++) w[(size_t)c * n + i] = (float complex)(b[(size_t)c * ldb + i] / scale[c]);
    }
    sv_status st = solve32(user, nrhs, w);
    if (st) return st;
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < n; i++) b[(size_t)c * ldb + i] = (double complex)w[(size_t)c * n + i] * scale[c];
    return SV_OK;
}
