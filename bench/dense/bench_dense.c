/* Dense complex symmetric solves: Solvent against LAPACK (OpenBLAS).
 *
 * For N in {1000, 2157, 4000} (and 8000 with --big), on a well-conditioned
 * random complex symmetric matrix (entries uniform in the unit square,
 * diagonal shifted by 4·√N, so no pivoting is needed and cond ≈ 5):
 *   ours:    double LDLᵀ factor + solve; single LDLᵀ + refinement to double
 *            accuracy (including the rounding of A to single);
 *   anchors: zgetrf+zgetrs, zsytrf+zsytrs, zcgesv, on full storage.
 * One right-hand side; medians of SV_BENCH_REPS (default 3) repetitions.
 * Backward errors ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) of every method are
 * computed the same way (Solvent's packed product, in double). Memory: the
 * context's peak (everything Solvent allocated, the packed matrix included)
 * and the process's peak RSS, taken before any full matrix exists.
 *
 * Usage: bench_dense [--big] [--n N]... */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "solvent/dense.h"

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Entry (i, j) of the benchmark matrix, a pure function of (i, j): packed
 * and full copies are generated independently with no copy kept. */
static double complex entry(int n, int i, int j)
{
    if (i < j) {
        int t = i;
        i = j;
        j = t;
    }
    uint64_t h = mix(((uint64_t)i << 32) ^ (uint64_t)j ^ 0x5157ULL);
    double re = (double)(h >> 11) * 0x1p-53 * 2 - 1;
    double im = (double)(mix(h) >> 11) * 0x1p-53 * 2 - 1;
    if (i == j) re += 4 * sqrt((double)n), im += 4 * sqrt((double)n);
    return CMPLX(re, im);
}

static void fill_packed(sv_dense_sym *a)
{
    int n = sv_dense_sym_order(a);
    double complex *d = sv_dense_sym_data(a);
#pragma omp parallel for schedule(dynamic, 16)
    for (int j = 0; j < n; j++) {
        size_t o = sv_dense_sym_offset(a, j, j);
        for (int i = j; i < n; i++) d[o + (size_t)(i - j)] = entry(n, i, j);
    }
}

static void fill_full(int n, double complex *f)
{
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) f[(size_t)j * n + i] = entry(n, i, j);
}

static void fill_rhs(int n, double complex *b)
{
    for (int i = 0; i < n; i++) b[i] = CMPLX(cos(0.37 * i), sin(0.11 * i + 1));
}

typedef struct result {
    double t, berr, peak, extra;
} result;

static double berr_of(sv_dense_sym *a, const double complex *b, const double complex *x)
{
    sv_dense_operator op;
    double e = NAN;
    fill_packed(a);
    if (sv_dense_operator_from_sym(a, &op) == SV_OK) sv_dense_backward_error(&op, 1, b, sv_dense_sym_order(a), x,
                                                                             sv_dense_sym_order(a), &e);
    return e;
}

static void line(const char *cs, int n, const char *anchor, result ours, result anc, const char *extra_key)
{
    bench_json j;
    bench_json_begin(&j, "dense", cs);
    bench_json_int(&j, "n", n);
    bench_json_int(&j, "threads", omp_get_max_threads());
    bench_json_num(&j, "ours_s", ours.t);
    bench_json_str(&j, "anchor", anchor);
    bench_json_num(&j, "anchor_s", anc.t);
    bench_json_num(&j, "ratio", ours.t / anc.t);
    bench_json_num(&j, "backward_err", ours.berr);
    bench_json_num(&j, "anchor_backward_err", anc.berr);
    bench_json_num(&j, "peak_bytes", ours.peak);
    bench_json_num(&j, "peak_over_8n2", ours.peak / (8.0 * n * (double)n));
    bench_json_num(&j, "anchor_matrix_bytes", 16.0 * n * (double)n);
    if (extra_key) bench_json_num(&j, extra_key, ours.extra);
    if (anc.extra != 0) bench_json_num(&j, "anchor_iterations", anc.extra);
    bench_json_end(&j);
}

static void run_n(int n, int reps)
{
    double *tv = malloc(sizeof *tv * reps);
    double complex *b = malloc(sizeof *b * n), *x = malloc(sizeof *x * n);
    fill_rhs(n, b);
    result dbl = {0}, mixd = {0}, lu = {0}, sy = {0}, cg = {0};

    /* Solvent double: factor + solve, in a context that counts memory. */
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_dense_sym *a;
    if (sv_dense_sym_create(ctx, n, SV_DENSE_C64, 0, &a)) {
        fprintf(stderr, "bench_dense: %s\n", sv_last_error());
        exit(1);
    }
    int path = 0;
    for (int r = 0; r < reps; r++) {
        fill_packed(a);
        memcpy(x, b, sizeof *b * n);
        sv_ctx_reset_peak(ctx);
        double t0 = sv_time_now();
        sv_dense_factor *f;
        sv_dense_factor_info info;
        if (sv_dense_factor_create(ctx, a, NULL, &f, &info) || sv_dense_factor_solve(f, 1, x, n)) {
            fprintf(stderr, "bench_dense: %s\n", sv_last_error());
            exit(1);
        }
        tv[r] = sv_time_now() - t0;
        path = info.path;
        sv_dense_factor_destroy(f);
    }
    dbl.t = bench_median(tv, reps);
    dbl.peak = (double)sv_ctx_memory_peak(ctx) + 16.0 * n; /* + the right-hand side */
    dbl.extra = path;
    double rss_after_double = (double)bench_peak_rss();
    dbl.berr = berr_of(a, b, x);

    /* Solvent mixed: round A to single, factor, refine against the double
     * packed A (the default operator). */
    sv_dense_sym *a32;
    sv_dense_sym_create(ctx, n, SV_DENSE_C32, 0, &a32);
    sv_dense_operator op;
    sv_dense_operator_from_sym(a, &op);
    int iters = 0;
    for (int r = 0; r < reps; r++) {
        sv_dense_refine_info info;
        double t0 = sv_time_now();
        sv_dense_sym_convert(a, a32);
        if (sv_dense_solve_mixed(ctx, a32, &op, 1, b, n, x, n, NULL, &info)) {
            fprintf(stderr, "bench_dense: %s\n", sv_last_error());
            exit(1);
        }
        tv[r] = sv_time_now() - t0;
        iters = info.iterations + 100 * info.fell_back;
        mixd.berr = info.backward_error;
    }
    mixd.t = bench_median(tv, reps);
    mixd.extra = iters;
    sv_dense_backward_error(&op, 1, b, n, x, n, &mixd.berr);
    mixd.peak = (double)sv_ctx_memory_peak(ctx);

    /* LAPACK on full storage. */
    double complex *full = malloc(sizeof *full * (size_t)n * n), *w = malloc(sizeof *w * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * n);
    fill_full(n, full);
    for (int r = 0; r < reps; r++) {
        memcpy(w, full, sizeof *w * (size_t)n * n);
        memcpy(x, b, sizeof *b * n);
        double t0 = sv_time_now();
        LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, w, n, ipiv);
        LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, 1, w, n, ipiv, x, n);
        tv[r] = sv_time_now() - t0;
    }
    lu.t = bench_median(tv, reps);
    sv_dense_backward_error(&op, 1, b, n, x, n, &lu.berr);

    double complex q;
    LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, w, n, ipiv, &q, -1);
    lapack_int lwork = (lapack_int)creal(q);
    /* OpenBLAS 0.3.21's zsytrf reads past its workspace: n extra elements. */
    double complex *work = malloc(sizeof *work * ((size_t)lwork + n));
    for (int r = 0; r < reps; r++) {
        memcpy(w, full, sizeof *w * (size_t)n * n);
        memcpy(x, b, sizeof *b * n);
        double t0 = sv_time_now();
        LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, w, n, ipiv, work, lwork);
        LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', n, 1, w, n, ipiv, x, n);
        tv[r] = sv_time_now() - t0;
    }
    sy.t = bench_median(tv, reps);
    sv_dense_backward_error(&op, 1, b, n, x, n, &sy.berr);
    free(work);

    lapack_int iter = 0;
    for (int r = 0; r < reps; r++) {
        memcpy(w, full, sizeof *w * (size_t)n * n);
        double t0 = sv_time_now();
        LAPACKE_zcgesv(LAPACK_COL_MAJOR, n, 1, w, n, ipiv, b, n, x, n, &iter);
        tv[r] = sv_time_now() - t0;
    }
    cg.t = bench_median(tv, reps);
    cg.extra = iter;
    sv_dense_backward_error(&op, 1, b, n, x, n, &cg.berr);

    line("ldlt_double", n, "zgetrf+zgetrs", dbl, lu, "path");
    line("ldlt_double", n, "zsytrf+zsytrs", dbl, sy, "path");
    line("single_refined", n, "zgetrf+zgetrs", mixd, lu, "iterations");
    line("single_refined", n, "zcgesv", mixd, cg, "iterations");
    bench_json j;
    bench_json_begin(&j, "dense", "memory_double");
    bench_json_int(&j, "n", n);
    bench_json_num(&j, "ours_s", dbl.t);
    bench_json_str(&j, "anchor", "8*n^2 bytes");
    bench_json_num(&j, "anchor_s", 0);
    bench_json_num(&j, "ratio", dbl.peak / (8.0 * n * (double)n));
    bench_json_num(&j, "peak_bytes", dbl.peak);
    bench_json_num(&j, "peak_rss_bytes_before_full_matrices", rss_after_double);
    bench_json_end(&j);

    sv_dense_sym_destroy(a32);
    sv_dense_sym_destroy(a);
    sv_ctx_destroy(ctx);
    free(full);
    free(w);
    free(ipiv);
    free(b);
    free(x);
    free(tv);
}

int main(int argc, char **argv)
{
    int ns[16], k = 0, big = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--big")) big = 1;
        else if (!strcmp(argv[i], "--n") && i + 1 < argc && k < 16) ns[k++] = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_dense [--big] [--n N]...\n");
            return 2;
        }
    }
    if (k == 0) {
        if (big) ns[k++] = 8000; /* first, so its peak RSS is its own */
        ns[k++] = 1000;
        ns[k++] = 2157;
        ns[k++] = 4000;
    }
    int reps = bench_reps(3);
    for (int i = 0; i < k; i++) run_n(ns[i], reps);
    return 0;
}
