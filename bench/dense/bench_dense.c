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
 * Repetitions interleave the methods (a shared machine's load then falls on
 * all of them alike).
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

static void line(const char *cs, int n, const char *anchor, result ours, result anc, const char *extra_key)
{
    bench_json j;
    bench_json_begin(&j, "dense", cs);
    bench_json_int(&j, "n", n);
    bench_json_int(&j, "threads", omp_get_max_threads());
    bench_json_str(&j, "omp_wait_policy", getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "default");
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

static void die(const char *what)
{
    fprintf(stderr, "bench_dense: %s: %s\n", what, sv_last_error());
    exit(1);
}

enum { M_DBL, M_MIX, M_LU, M_SY, M_CG, M_COUNT };

static void run_n(int n, int reps)
{
    double *tv[M_COUNT];
    double complex *xs[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) {
        tv[m] = malloc(sizeof(double) * reps);
        xs[m] = malloc(sizeof(double complex) * n);
    }
    double complex *b = malloc(sizeof *b * n);
    fill_rhs(n, b);
    result res[M_COUNT] = {{0}};

    /* Memory probe first, before any full matrix exists: one double factor +
     * solve in a context that counts every byte Solvent allocates. */
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_dense_sym *a, *a32;
    if (sv_dense_sym_create(ctx, n, SV_DENSE_C64, 0, &a)) die("matrix");
    fill_packed(a);
    memcpy(xs[M_DBL], b, sizeof *b * n);
    sv_dense_factor *f;
    sv_dense_factor_info finfo;
    if (sv_dense_factor_create(ctx, a, NULL, &f, &finfo) || sv_dense_factor_solve(f, 1, xs[M_DBL], n))
        die("double factor + solve");
    sv_dense_factor_destroy(f);
    res[M_DBL].peak = (double)sv_ctx_memory_peak(ctx) + 16.0 * n; /* + the right-hand side */
    res[M_DBL].extra = finfo.path;
    double rss = (double)bench_peak_rss();
    if (sv_dense_sym_create(ctx, n, SV_DENSE_C32, 0, &a32)) die("single matrix");

    double complex *full = malloc(sizeof *full * (size_t)n * n), *w = malloc(sizeof *w * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * n);
    fill_full(n, full);
    double complex q;
    LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, w, n, ipiv, &q, -1);
    lapack_int lwork = (lapack_int)creal(q);
    /* OpenBLAS 0.3.21's zsytrf reads past its workspace: n extra elements. */
    double complex *work = malloc(sizeof *work * ((size_t)lwork + n));

    /* Repetitions interleave the methods, so that a change in the load of a
     * shared machine falls on all of them alike. */
    int iters = 0;
    lapack_int cg_iter = 0;
    sv_dense_operator op;
    for (int r = 0; r < reps; r++) {
        double t0;
        fill_packed(a);
        memcpy(xs[M_DBL], b, sizeof *b * n);
        t0 = sv_time_now();
        if (sv_dense_factor_create(ctx, a, NULL, &f, &finfo) || sv_dense_factor_solve(f, 1, xs[M_DBL], n))
            die("double factor + solve");
        tv[M_DBL][r] = sv_time_now() - t0;
        sv_dense_factor_destroy(f);

        fill_packed(a); /* the operator's matrix: A itself */
        sv_dense_operator_from_sym(a, &op);
        sv_dense_refine_info ri;
        t0 = sv_time_now();
        sv_dense_sym_convert(a, a32);
        if (sv_dense_solve_mixed(ctx, a32, &op, 1, b, n, xs[M_MIX], n, NULL, &ri)) die("mixed solve");
        tv[M_MIX][r] = sv_time_now() - t0;
        iters = ri.iterations + 100 * ri.fell_back;

        memcpy(w, full, sizeof *w * (size_t)n * n);
        memcpy(xs[M_LU], b, sizeof *b * n);
        t0 = sv_time_now();
        LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, w, n, ipiv);
        LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, 1, w, n, ipiv, xs[M_LU], n);
        tv[M_LU][r] = sv_time_now() - t0;

        memcpy(w, full, sizeof *w * (size_t)n * n);
        memcpy(xs[M_SY], b, sizeof *b * n);
        t0 = sv_time_now();
        LAPACKE_zsytrf_work(LAPACK_COL_MAJOR, 'L', n, w, n, ipiv, work, lwork);
        LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', n, 1, w, n, ipiv, xs[M_SY], n);
        tv[M_SY][r] = sv_time_now() - t0;

        memcpy(w, full, sizeof *w * (size_t)n * n);
        t0 = sv_time_now();
        LAPACKE_zcgesv(LAPACK_COL_MAJOR, n, 1, w, n, ipiv, b, n, xs[M_CG], n, &cg_iter);
        tv[M_CG][r] = sv_time_now() - t0;
    }
    res[M_MIX].peak = (double)sv_ctx_memory_peak(ctx);
    res[M_MIX].extra = iters;
    res[M_CG].extra = cg_iter;
    fill_packed(a);
    sv_dense_operator_from_sym(a, &op);
    for (int m = 0; m < M_COUNT; m++) {
        res[m].t = bench_median(tv[m], reps);
        sv_dense_backward_error(&op, 1, b, n, xs[m], n, &res[m].berr);
    }

    line("ldlt_double", n, "zgetrf+zgetrs", res[M_DBL], res[M_LU], "path");
    line("ldlt_double", n, "zsytrf+zsytrs", res[M_DBL], res[M_SY], "path");
    line("single_refined", n, "zgetrf+zgetrs", res[M_MIX], res[M_LU], "iterations");
    line("single_refined", n, "zcgesv", res[M_MIX], res[M_CG], "iterations");
    bench_json j;
    bench_json_begin(&j, "dense", "memory_double");
    bench_json_int(&j, "n", n);
    bench_json_num(&j, "ours_s", res[M_DBL].t);
    bench_json_str(&j, "anchor", "8*n^2 bytes");
    bench_json_num(&j, "anchor_s", 0);
    bench_json_num(&j, "ratio", res[M_DBL].peak / (8.0 * n * (double)n));
    bench_json_num(&j, "peak_bytes", res[M_DBL].peak);
    bench_json_num(&j, "peak_rss_bytes_before_full_matrices", rss);
    bench_json_end(&j);

    sv_dense_sym_destroy(a32);
    sv_dense_sym_destroy(a);
    sv_ctx_destroy(ctx);
    free(full);
    free(w);
    free(work);
    free(ipiv);
    free(b);
    for (int m = 0; m < M_COUNT; m++) {
        free(tv[m]);
        free(xs[m]);
    }
}

int main(int argc, char **argv)
{
    bench_prefer_passive_waiting(argv);
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
