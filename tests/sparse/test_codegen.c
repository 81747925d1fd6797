/* Straight-line kernels (runtime path: generated C compiled by the system
 * compiler and loaded) against the table-driven kernels: bit for bit, in
 * every precision and lane count; caching by hash; fallback without a
 * compiler; refusal of foreign kernel tables. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sparse_support.h"

static char cache[256];
static int have_cc;

static int setup(void **state)
{
    (void)state;
    snprintf(cache, sizeof cache, "/tmp/sv_sparse_codegen_XXXXXX");
    if (!mkdtemp(cache)) return -1;
    have_cc = access("/usr/bin/cc", X_OK) == 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(cache);
    if (d) {
        struct dirent *e;
        char path[600];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
                remove(path);
            }
        closedir(d);
    }
    rmdir(cache);
    return 0;
}

/* Run every kernel once with the current kernels of lu; outputs appended. */
typedef struct results {
    double *fd, *xd, *bd[4], *xbd[4];
    float *ff, *xf, *bf[4], *xbf[4];
    int flag, flagf;
    int bflags[4][8], bflagsf[4][8];
} results;

static const int lanes[4] = {1, 2, 4, 8};

static void run_all(sv_sparse_lu *lu, const sv_sparse_pattern *p, double **vals, const double *rhs, results *r)
{
    int n = sv_sparse_lu_n(lu), nnz = sv_sparse_lu_nnz(lu);
    double *w = malloc((size_t)n * 8 * sizeof *w);
    float *wf = malloc((size_t)n * 8 * sizeof *wf), *rf = malloc((size_t)n * 8 * sizeof *rf);
    for (int i = 0; i < n * 8; i++) rf[i] = (float)rhs[i];
    r->fd = malloc((size_t)nnz * sizeof(double));
    r->xd = malloc((size_t)n * sizeof(double));
    r->ff = malloc((size_t)nnz * sizeof(float));
    r->xf = malloc((size_t)n * sizeof(float));
    sv_sparse_lu_load_shifted(lu, vals[0], 1.5, r->fd);
    sv_sparse_lu_factor(lu, r->fd, &r->flag);
    sv_sparse_lu_solve(lu, r->fd, rhs, r->xd, w);
    sv_sparse_lu_load_shifted_f32(lu, vals[0], 1.5, r->ff);
    sv_sparse_lu_factor_f32(lu, r->ff, &r->flagf);
    sv_sparse_lu_solve_f32(lu, r->ff, rf, r->xf, wf);
    for (int k = 0; k < 4; k++) {
        int W = lanes[k];
        r->bd[k] = malloc((size_t)nnz * W * sizeof(double));
        r->xbd[k] = malloc((size_t)n * W * sizeof(double));
        r->bf[k] = malloc((size_t)nnz * W * sizeof(float));
        r->xbf[k] = malloc((size_t)n * W * sizeof(float));
        for (int l = 0; l < W; l++) {
            sv_sparse_lu_load_shifted_lane(lu, W, l, vals[l], 1.5, r->bd[k]);
            sv_sparse_lu_load_shifted_lane_f32(lu, W, l, vals[l], 1.5, r->bf[k]);
        }
        assert_int_equal(sv_sparse_lu_factor_batch(lu, W, r->bd[k], r->bflags[k]), SV_OK);
        assert_int_equal(sv_sparse_lu_solve_batch(lu, W, r->bd[k], rhs, r->xbd[k], w), SV_OK);
        assert_int_equal(sv_sparse_lu_factor_batch_f32(lu, W, r->bf[k], r->bflagsf[k]), SV_OK);
        assert_int_equal(sv_sparse_lu_solve_batch_f32(lu, W, r->bf[k], rf, r->xbf[k], wf), SV_OK);
    }
    (void)p;
    free(w), free(wf), free(rf);
}

static void compare_free(results *a, results *b, int n, int nnz)
{
    assert_int_equal(a->flag, b->flag);
    assert_int_equal(a->flagf, b->flagf);
    assert_memory_equal(a->fd, b->fd, (size_t)nnz * sizeof(double));
    assert_memory_equal(a->xd, b->xd, (size_t)n * sizeof(double));
    assert_memory_equal(a->ff, b->ff, (size_t)nnz * sizeof(float));
    assert_memory_equal(a->xf, b->xf, (size_t)n * sizeof(float));
    for (int k = 0; k < 4; k++) {
        int W = lanes[k];
        assert_memory_equal(a->bflags[k], b->bflags[k], (size_t)W * sizeof(int));
        if (W > 1) assert_true(a->bflags[k][1] > 0 && a->bflags[k][0] == 0);
        assert_memory_equal(a->bflagsf[k], b->bflagsf[k], (size_t)W * sizeof(int));
        assert_memory_equal(a->bd[k], b->bd[k], (size_t)nnz * W * sizeof(double));
        assert_memory_equal(a->xbd[k], b->xbd[k], (size_t)n * W * sizeof(double));
        assert_memory_equal(a->bf[k], b->bf[k], (size_t)nnz * W * sizeof(float));
        assert_memory_equal(a->xbf[k], b->xbf[k], (size_t)n * W * sizeof(float));
        free(a->bd[k]), free(a->xbd[k]), free(a->bf[k]), free(a->xbf[k]);
        free(b->bd[k]), free(b->xbd[k]), free(b->bf[k]), free(b->xbf[k]);
    }
    free(a->fd), free(a->xd), free(a->ff), free(a->xf);
    free(b->fd), free(b->xd), free(b->ff), free(b->xf);
}

static void test_bit_for_bit(void **state)
{
    (void)state;
    if (!have_cc) skip();
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 77);
    /* Every variant on two patterns with fill and runs of all lengths; the
     * dense EB-50 core (long runs, written as loops) and a Brusselator in
     * the two most used variants. Compiling is what takes the time here. */
    sv_sparse_pattern *ps[] = {tp_pollu(), tp_random(24, 3, 5), tp_eb50_declared(), tp_brusselator2d(3)};
    const unsigned emit[] = {SV_SPARSE_EMIT_ALL, SV_SPARSE_EMIT_ALL, SV_SPARSE_EMIT_F64 | SV_SPARSE_EMIT_BATCH8_F64,
                             SV_SPARSE_EMIT_F64 | SV_SPARSE_EMIT_BATCH4_F64};
    sv_sparse_codegen_options opt;
    sv_sparse_codegen_options_default(&opt);
    for (size_t x = 0; x < sizeof ps / sizeof ps[0]; x++) {
        opt.emit = emit[x];
        sv_sparse_pattern *p = ps[x];
        sv_sparse_lu *lu = NULL;
        assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
        int n = sv_sparse_lu_n(lu), nnz = sv_sparse_lu_nnz(lu);
        double *vals[8], *rhs = malloc((size_t)n * 8 * sizeof *rhs);
        for (int l = 0; l < 8; l++) vals[l] = ts_random_values(p, &rng);
        /* Not only dominant matrices: a factor of 0.9 keeps some pivots
         * small, so rounding differences would show. */
        for (int l = 0; l < 8; l++)
            for (int e = 0; e < sv_sparse_pattern_nnz(p); e++) vals[l][e] *= 0.9 + 0.05 * sv_test_uniform(&rng);
        for (int i = 0; i < n * 8; i++) rhs[i] = sv_test_uniform(&rng);
        /* Lane 1 (and up) gets an infinite diagonal entry: its pivot is
         * flagged (the same row in both emissions) and its factors carry
         * zeros and infinities, never a crash. */
        vals[1][sv_sparse_pattern_find(p, n / 2, n / 2)] = -INFINITY;
        results table, gen;
        run_all(lu, p, vals, rhs, &table);
        sv_status s = sv_sparse_lu_compile(lu, &opt, cache, "/usr/bin/cc");
        if (s) fail_msg("compile failed: %s", sv_last_error());
        assert_non_null(sv_sparse_lu_kernels(lu));
        run_all(lu, p, vals, rhs, &gen);
        compare_free(&table, &gen, n, nnz);
        for (int l = 0; l < 8; l++) free(vals[l]);
        free(rhs);
        sv_sparse_lu_destroy(lu);
        sv_sparse_pattern_destroy(p);
    }
}

/* A second analysis of the same pattern finds the cached object, even with
 * no compiler; a different pattern without a compiler falls back. */
static void test_cache_and_fallback(void **state)
{
    (void)state;
    if (!have_cc) skip();
    sv_sparse_pattern *p = tp_hires(), *q = tp_tridiagonal(9);
    sv_sparse_lu *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &a), SV_OK);
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &b), SV_OK);
    assert_int_equal(sv_sparse_lu_analyse(NULL, q, SV_SPARSE_ORDER_AMD, &c), SV_OK);
    assert_true(sv_sparse_lu_hash(a) == sv_sparse_lu_hash(b));
    assert_true(sv_sparse_lu_hash(a) != sv_sparse_lu_hash(c));
    assert_int_equal(sv_sparse_lu_compile(a, NULL, cache, "/usr/bin/cc"), SV_OK);
    assert_int_equal(sv_sparse_lu_compile(b, NULL, cache, "/nonexistent/cc"), SV_OK);
    assert_non_null(sv_sparse_lu_kernels(b));
    assert_int_equal(sv_sparse_lu_compile(c, NULL, cache, "/nonexistent/cc"), SV_ERR_UNSUPPORTED);
    assert_non_null(strstr(sv_last_error(), "no C compiler"));
    assert_null(sv_sparse_lu_kernels(c));
    /* Kernels for one pattern are refused by another's analysis. */
    assert_int_equal(sv_sparse_lu_use_kernels(c, sv_sparse_lu_kernels(a)), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "another pattern"));
    /* Too large for the limits: refused, table-driven kept. */
    sv_sparse_codegen_options opt;
    sv_sparse_codegen_options_default(&opt);
    opt.max_updates = 0;
    sv_sparse_pattern *r = tp_random(30, 4, 1);
    sv_sparse_lu *d = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, r, SV_SPARSE_ORDER_AMD, &d), SV_OK);
    assert_int_equal(sv_sparse_lu_compile(d, &opt, cache, "/usr/bin/cc"), SV_ERR_UNSUPPORTED);
    assert_non_null(strstr(sv_last_error(), "max_updates"));
    assert_int_equal(sv_sparse_lu_compile(d, NULL, "/nonexistent/dir", "/usr/bin/cc"), SV_ERR_UNSUPPORTED);
    /* Back to table-driven and the results still solve the system. */
    sv_sparse_lu_unload_kernels(a);
    assert_null(sv_sparse_lu_kernels(a));
    sv_sparse_lu_destroy(a);
    sv_sparse_lu_destroy(b);
    sv_sparse_lu_destroy(c);
    sv_sparse_lu_destroy(d);
    sv_sparse_pattern_destroy(p);
    sv_sparse_pattern_destroy(q);
    sv_sparse_pattern_destroy(r);
}

/* The generated source for `opt`, as a malloc'd string (NULL on refusal). */
static char *generated(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, sv_status *st)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    *st = sv_sparse_codegen_write(lu, opt, "k", f);
    long len = ftell(f);
    char *text = NULL;
    if (*st == SV_OK) {
        text = calloc((size_t)len + 1, 1);
        rewind(f);
        assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    }
    fclose(f);
    return text;
}

/* Options: emit = 0 means the default kernels; a zero-filled struct has
 * limits of 0 and refuses the code (limits are values, not "unset"). */
static void test_options_zero(void **state)
{
    (void)state;
    sv_sparse_pattern *p = tp_pollu();
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    sv_sparse_codegen_options d, z;
    sv_sparse_codegen_options_default(&d);
    assert_int_equal(d.emit, SV_SPARSE_EMIT_DEFAULT);
    sv_status s1, s2, s3;
    char *a = generated(lu, &d, &s1), *b = generated(lu, NULL, &s2);
    d.emit = 0;
    char *c = generated(lu, &d, &s3);
    assert_int_equal(s1, SV_OK);
    assert_int_equal(s2, SV_OK);
    assert_int_equal(s3, SV_OK);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    memset(&z, 0, sizeof z);
    char *r = generated(lu, &z, &s1);
    assert_null(r);
    assert_int_equal(s1, SV_ERR_UNSUPPORTED);
    assert_non_null(strstr(sv_last_error(), "max_updates = 0"));
    z.emit = 1u << 9; /* a bit outside SV_SPARSE_EMIT_ALL */
    z.max_updates = z.max_subst = 1000000;
    assert_null(generated(lu, &z, &s1));
    assert_int_equal(s1, SV_ERR_ARG);
    free(a), free(b), free(c);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_for_bit),
        cmocka_unit_test(test_cache_and_fallback),
        cmocka_unit_test(test_options_zero),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
