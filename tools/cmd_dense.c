/* `solvent dense`: a demonstration of the dense solver on a random,
 * well-conditioned complex symmetric matrix — the double LDLᵀ path and the
 * single-precision path refined to double accuracy — with times, backward
 * errors and what each path did. */
#include <complex.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/dense.h"
#include "start.h"

const char cmd_dense_summary[] = "dense solver demonstration (double LDLT, single + refinement)";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent dense [--n N] [--rhs P] [--threads T] [--seed S] [--memory-limit MIB]\n\n"
            "Builds a random complex symmetric matrix of order N (default 2157; entries\n"
            "uniform in the unit square, diagonal shifted by 4*sqrt(N), so it is well\n"
            "conditioned) and P right-hand sides (default 1), then solves with\n"
            "  1. the double-precision blocked LDL^T (packed storage), and\n"
            "  2. a single-precision LDL^T refined to double accuracy,\n"
            "printing times, normwise backward errors and which path ran.\n"
            "Threads default to OMP_NUM_THREADS (or all cores).\n");
}

static int parse_int(const char *s, const char *name, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "solvent dense: %s = '%s': expected an integer in [%ld, %ld]\n", name, s, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit(uint64_t h) { return (double)(h >> 11) * 0x1p-53 * 2 - 1; }

static int fail(const char *what)
{
    fprintf(stderr, "solvent dense: %s: %s\n", what, sv_last_error());
    return 1;
}

int cmd_dense_main(int argc, char **argv)
{
    long n = 2157, p = 1, threads = 0, seed = 1, mib = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "solvent dense: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int ok = !strcmp(a, "--n")              ? parse_int(v, "--n", 0, 100000, &n)
                 : !strcmp(a, "--rhs")          ? parse_int(v, "--rhs", 1, 4096, &p)
                 : !strcmp(a, "--threads")      ? parse_int(v, "--threads", 1, 4096, &threads)
                 : !strcmp(a, "--seed")         ? parse_int(v, "--seed", 0, 2147483647L, &seed)
                 : !strcmp(a, "--memory-limit") ? parse_int(v, "--memory-limit", 1, 1L << 30, &mib)
                                                : -1;
        if (ok == -1) {
            fprintf(stderr, "solvent dense: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (!ok) return 2;
    }
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) return fail("context");
    if (threads) sv_ctx_set_threads(ctx, (int)threads);
    size_t limit = tool_memory_limit(mib ? (size_t)mib << 20 : 0); /* and ulimit -v's room */
    if (limit) sv_ctx_set_memory_limit(ctx, limit);
    int nn = (int)n, np = (int)p, rc = 1;
    sv_dense_sym *a = NULL, *w = NULL, *a32 = NULL;
    sv_dense_factor *f = NULL;
    double complex *b = NULL, *x = NULL;
    printf("solvent dense: n = %d, right-hand sides = %d, threads = %d\n", nn, np,
           threads ? (int)threads : omp_get_max_threads());
    if (sv_dense_sym_create(ctx, nn, SV_DENSE_C64, 0, &a)) {
        fail("matrix");
        goto out;
    }
    double complex *d = sv_dense_sym_data(a);
    for (int j = 0; j < nn; j++)
        for (int i = j; i < nn; i++) {
            uint64_t h = mix(mix((uint64_t)seed) ^ ((uint64_t)i << 32) ^ (uint64_t)j);
            double complex v = CMPLX(unit(h), unit(mix(h)));
            if (i == j) v += 4 * sqrt((double)nn) * CMPLX(1, 1);
            d[sv_dense_sym_offset(a, i, j)] = v;
        }
    b = malloc(sizeof *b * (size_t)(nn ? nn : 1) * np);
    x = malloc(sizeof *x * (size_t)(nn ? nn : 1) * np);
    if (!b || !x) {
        fprintf(stderr, "solvent dense: out of memory for the right-hand sides\n");
        goto out;
    }
    for (size_t k = 0; k < (size_t)nn * np; k++) b[k] = CMPLX(cos(0.37 * k), sin(0.11 * k + 1));
    sv_dense_operator op;
    if (sv_dense_operator_from_sym(a, &op)) {
        fail("operator");
        goto out;
    }
    int ld = nn ? nn : 1;

    /* 1. Double LDLᵀ on a copy (the original stays for the residuals). */
    if (sv_dense_sym_create(ctx, nn, SV_DENSE_C64, 0, &w) || sv_dense_sym_convert(a, w)) {
        fail("matrix copy");
        goto out;
    }
    sv_dense_factor_info fi;
    double t0 = sv_time_now();
    if (sv_dense_factor_create(ctx, w, NULL, &f, &fi)) {
        fail("double factorisation");
        goto out;
    }
    double tf = sv_time_now();
    memcpy(x, b, sizeof *b * (size_t)nn * np);
    if (sv_dense_factor_solve(f, np, x, ld)) {
        fail("double solve");
        goto out;
    }
    double ts = sv_time_now();
    double berr;
    if (sv_dense_backward_error(&op, np, b, ld, x, ld, &berr)) {
        fail("backward error");
        goto out;
    }
    printf("double LDL^T : factor %.3f s, solve %.3f s, backward error %.2e, path %s",
           tf - t0, ts - tf, berr, fi.path == SV_DENSE_PATH_LDLT ? "LDLT (no pivoting)" : "pivoted fallback (LU)");
    if (fi.path == SV_DENSE_PATH_FALLBACK) printf(" at pivot %d", fi.small_pivot_index);
    printf(", min pivot ratio %.2e\n", fi.min_pivot_ratio);
    sv_dense_factor_destroy(f);
    f = NULL;
    sv_dense_sym_destroy(w);
    w = NULL;

    /* 2. Single precision, refined to double accuracy against the stored A. */
    if (sv_dense_sym_create(ctx, nn, SV_DENSE_C32, 0, &a32)) {
        fail("single matrix");
        goto out;
    }
    sv_dense_refine_info ri;
    t0 = sv_time_now();
    sv_dense_sym_convert(a, a32);
    if (sv_dense_solve_mixed(ctx, a32, &op, np, b, ld, x, ld, NULL, &ri)) {
        fail("mixed-precision solve");
        goto out;
    }
    double tm = sv_time_now() - t0;
    if (sv_dense_backward_error(&op, np, b, ld, x, ld, &berr)) {
        fail("backward error");
        goto out;
    }
    printf("single+refine: total %.3f s (factor %.3f s, refinement %.3f s), backward error %.2e, "
           "%d iteration%s%s%s, single factor path %s\n",
           tm, ri.seconds_factor, ri.seconds_refine, berr, ri.iterations, ri.iterations == 1 ? "" : "s",
           ri.gmres_used ? ", GMRES" : "", ri.fell_back ? ", fell back to double" : "",
           ri.factor.path == SV_DENSE_PATH_LDLT ? "LDLT" : "fallback (LU)");
    printf("memory: peak %.1f MiB through Solvent's allocator\n", (double)sv_ctx_memory_peak(ctx) / (1 << 20));
    rc = 0;
out:
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(w);
    sv_dense_sym_destroy(a32);
    sv_dense_sym_destroy(a);
    free(b);
    free(x);
    sv_ctx_destroy(ctx);
    return rc;
}
