/* Mixed precision: single-precision factors refined to double accuracy
 * (classical, then GMRES), the double fallback, caller-supplied operators;
 * solutions compared with LAPACK's, backward errors recomputed here. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/dense.h"
#include "support_dense.h"

typedef struct mixed_run {
    double complex *x;
    sv_dense_refine_info info;
    sv_status st;
} mixed_run;

static mixed_run run_mixed(const double complex *a, int n, int nb, int p, const double complex *b,
                           const sv_dense_refine_options *opts, sv_ctx *ctx)
{
    mixed_run out;
    sv_dense_sym *a64 = td_packed(a, n, nb, 0), *a32 = td_packed(a, n, nb, 1);
    sv_dense_operator op;
    assert_int_equal(sv_dense_operator_from_sym(a64, &op), SV_OK);
    assert_int_equal(op.n, n);
    out.x = calloc((size_t)n * p + 1, sizeof *out.x);
    out.st = sv_dense_solve_mixed(ctx, a32, &op, p, b, n, out.x, n, opts, &out.info);
    sv_dense_sym_destroy(a64);
    sv_dense_sym_destroy(a32);
    return out;
}

static void test_well_conditioned(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 201);
    const int cases[][3] = {{1, 16, 1}, {40, 16, 2}, {300, 32, 3}, {513, 0, 1}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        int n = cases[t][0], nb = cases[t][1], p = cases[t][2];
        double complex *a = td_random_sym(&r, n, n + 1.0), *b = td_random(&r, n, p);
        double complex *xref = malloc(sizeof *xref * (size_t)n * p);
        assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
        mixed_run m = run_mixed(a, n, nb, p, b, NULL, NULL);
        assert_int_equal(m.st, SV_OK);
        assert_false(m.info.fell_back);
        assert_false(m.info.gmres_used);
        assert_true(m.info.iterations >= 1 && m.info.iterations <= 4);
        assert_true(m.info.backward_error <= 1e-15);
        double be = td_backward_error(n, p, a, m.x, b);
        assert_true(be <= 1e-15);
        assert_true(td_rel_diff(n, p, m.x, xref) < 1e-13);
        free(a);
        free(b);
        free(xref);
        free(m.x);
    }
}

/* Condition 1e8 is beyond classical refinement with single factors
 * (cond·u_single ≈ 6): it stalls, GMRES takes over and converges. */
static void test_gmres_after_stall(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 202);
    int n = 120, p = 2;
    double cond = 1e8;
    double complex *a = td_sym_with_cond(&r, n, cond), *b = td_random(&r, n, p);
    double complex *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_sy_solve(n, p, a, b, xref), 0);
    mixed_run m = run_mixed(a, n, 32, p, b, NULL, NULL);
    print_message("cond 1e8: iterations %d, gmres %d, fell back %d, berr %.2e\n", m.info.iterations,
                  m.info.gmres_used, m.info.fell_back, m.info.backward_error);
    assert_int_equal(m.st, SV_OK);
    assert_true(m.info.gmres_used);
    assert_false(m.info.fell_back);
    assert_true(td_backward_error(n, p, a, m.x, b) <= 1e-15);
    assert_true(td_rel_diff(n, p, m.x, xref) < cond * 1e-14);

    /* Without GMRES the double fallback finishes the job... */
    sv_dense_refine_options o = {.disallow_gmres = 1};
    mixed_run m2 = run_mixed(a, n, 32, p, b, &o, NULL);
    assert_int_equal(m2.st, SV_OK);
    assert_false(m2.info.gmres_used);
    assert_true(m2.info.fell_back);
    assert_int_equal(m2.info.factor.path, SV_DENSE_PATH_LDLT);
    assert_true(td_backward_error(n, p, a, m2.x, b) <= 1e-15);
    assert_true(td_rel_diff(n, p, m2.x, xref) < cond * 1e-14);
    /* ...and without either, the failure is reported. */
    o.disallow_fallback = 1;
    mixed_run m3 = run_mixed(a, n, 32, p, b, &o, NULL);
    assert_int_equal(m3.st, SV_ERR_NOCONV);
    assert_non_null(strstr(sv_last_error(), "allow_fallback"));
    free(a);
    free(b);
    free(xref);
    free(m.x);
    free(m2.x);
    free(m3.x);
}

/* A tiny single-precision pivot: the single factorisation takes its LU
 * fallback and refinement still reaches double accuracy. */
static void test_single_fallback_then_refine(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 203);
    int n = 90, p = 1;
    double complex *a = td_sym_zero_pivot(&r, n, 40), *b = td_random(&r, n, p);
    mixed_run m = run_mixed(a, n, 16, p, b, NULL, NULL);
    assert_int_equal(m.st, SV_OK);
    assert_int_equal(m.info.factor.path, SV_DENSE_PATH_FALLBACK);
    assert_int_equal(m.info.factor.small_pivot_index, 40);
    assert_true(td_backward_error(n, p, a, m.x, b) <= 1e-15);
    /* The single factorisation's threshold is settable through the options:
     * 0.9 sends even this matrix's first pivots to the LU fallback. */
    double complex *g = td_random_sym(&r, n, 2.0), *xg;
    sv_dense_refine_options o = {.pivot_threshold = 0.9};
    mixed_run m2 = run_mixed(g, n, 16, p, b, &o, NULL);
    xg = m2.x;
    assert_int_equal(m2.st, SV_OK);
    assert_int_equal(m2.info.factor.path, SV_DENSE_PATH_FALLBACK);
    assert_true(td_backward_error(n, p, g, xg, b) <= 1e-15);
    o.pivot_threshold = -1;
    mixed_run m3 = run_mixed(g, n, 16, p, b, &o, NULL);
    assert_int_equal(m3.st, SV_ERR_ARG);
    free(g);
    free(xg);
    free(m3.x);
    free(a);
    free(b);
    free(m.x);
}

/* The operator supplied by the caller: A = α·A1 + β·A2 from two real
 * symmetric terms (the shape of a frequency model), never stored in double. */
typedef struct affine {
    const sv_dense_sym *a1, *a2;
    double complex alpha, beta;
    int n;
    int calls;
} affine;

static sv_status affine_residual(void *user, int nrhs, const double complex *x, int ldx, const double complex *b,
                                 int ldb, double complex *r, int ldr)
{
    affine *m = user;
    m->calls++;
    double complex *t = malloc(sizeof *t * (size_t)m->n * nrhs);
    sv_status st = sv_dense_sym_matmul(m->a1, nrhs, x, ldx, r, ldr);
    if (!st) st = sv_dense_sym_matmul(m->a2, nrhs, x, ldx, t, m->n);
    for (int c = 0; !st && c < nrhs; c++)
        for (int i = 0; i < m->n; i++)
            r[(size_t)c * ldr + i] =
                b[(size_t)c * ldb + i] - m->alpha * r[(size_t)c * ldr + i] - m->beta * t[(size_t)c * m->n + i];
    free(t);
    return st;
}

static sv_status affine_form(void *user, sv_dense_sym *a64)
{
    affine *m = user;
    double complex *d = sv_dense_sym_data(a64);
    const double *d1 = sv_dense_sym_cdata(m->a1), *d2 = sv_dense_sym_cdata(m->a2);
    for (size_t i = 0; i < sv_dense_sym_size(a64); i++) d[i] = m->alpha * d1[i] + m->beta * d2[i];
    return SV_OK;
}

static void test_caller_operator(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 204);
    int n = 150, nb = 32, p = 2;
    affine m = {.alpha = CMPLX(0, 2.5), .beta = CMPLX(-1.0, 0.1), .n = n};
    sv_dense_sym *a1, *a2, *a32;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, nb, &a1), SV_OK);
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, nb, &a2), SV_OK);
    double complex *full = malloc(sizeof *full * (size_t)n * n);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double v1 = sv_test_uniform(&r) + (i == j ? n : 0), v2 = sv_test_uniform(&r);
            sv_dense_sym_set(a1, i, j, v1);
            sv_dense_sym_set(a2, i, j, v2);
            full[(size_t)j * n + i] = full[(size_t)i * n + j] = m.alpha * v1 + m.beta * v2;
        }
    m.a1 = a1;
    m.a2 = a2;
    /* A in single, formed from the terms (as a sweep would). */
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, nb, &a32), SV_OK);
    float complex *s = sv_dense_sym_data(a32);
    const double *d1 = sv_dense_sym_cdata(a1), *d2 = sv_dense_sym_cdata(a2);
    for (size_t i = 0; i < sv_dense_sym_size(a32); i++) s[i] = (float complex)(m.alpha * d1[i] + m.beta * d2[i]);
    sv_dense_operator op = {.residual = affine_residual, .form = affine_form, .norm_inf = td_norm_inf(n, full),
                            .n = n, .user = &m};
    double complex *b = td_random(&r, n, p), *x = malloc(sizeof *x * (size_t)n * p),
                   *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_lu_solve(n, p, full, b, xref), 0);
    sv_dense_refine_info info;
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, p, b, n, x, n, NULL, &info), SV_OK);
    assert_true(m.calls >= 2);
    assert_true(td_rel_diff(n, p, x, xref) < 1e-13);
    assert_true(td_backward_error(n, p, full, x, b) <= 1e-15);
    /* sv_dense_backward_error agrees with the direct computation (on a
     * perturbed x, so that rounding in the residual does not dominate). */
    double be;
    assert_true(info.backward_error <= 1e-15);
    double complex *xp = malloc(sizeof *xp * (size_t)n * p);
    for (size_t i = 0; i < (size_t)n * p; i++) xp[i] = x[i] * (1 + 1e-9 * sv_test_uniform(&r));
    assert_int_equal(sv_dense_backward_error(&op, p, b, n, xp, n, &be), SV_OK);
    sv_assert_close(be, td_backward_error(n, p, full, xp, b), 1e-5, 0);
    free(xp);
    /* The double fallback forms A through the operator. */
    sv_dense_refine_options o = {.max_iterations = 1, .disallow_gmres = 1};
    assert_int_equal(sv_dense_sym_convert(a1, a32), SV_OK); /* a32 is factored: refill */
    for (size_t i = 0; i < sv_dense_sym_size(a32); i++) s[i] = (float complex)(m.alpha * d1[i] + m.beta * d2[i]);
    o.tolerance = 1e-30; /* unreachable: forces the fallback */
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, p, b, n, x, n, &o, &info), SV_OK);
    assert_true(info.fell_back);
    assert_true(td_rel_diff(n, p, x, xref) < 1e-13);
    sv_dense_sym_destroy(a1);
    sv_dense_sym_destroy(a2);
    sv_dense_sym_destroy(a32);
    free(full);
    free(b);
    free(x);
    free(xref);
}

static void test_errors(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 205);
    int n = 20;
    double complex *a = td_random_sym(&r, n, n), *b = td_random(&r, n, 1), x[20];
    sv_dense_sym *a64 = td_packed(a, n, 8, 0), *a32 = td_packed(a, n, 8, 1);
    sv_dense_operator op;
    assert_int_equal(sv_dense_operator_from_sym(a64, &op), SV_OK);
    assert_int_equal(sv_dense_operator_from_sym(NULL, &op), SV_ERR_ARG);
    assert_int_equal(sv_dense_operator_from_sym(a32, &op), SV_ERR_ARG);
    assert_int_equal(sv_dense_solve_mixed(NULL, a64, &op, 1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "SV_DENSE_C32"));
    assert_int_equal(sv_dense_solve_mixed(NULL, NULL, &op, 1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, NULL, 1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, -1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, 1, b, n - 1, x, n, NULL, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, 1, NULL, n, x, n, NULL, NULL), SV_ERR_ARG);
    sv_dense_operator bad = op;
    bad.n = n + 1;
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &bad, 1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "op->n"));
    bad = op;
    bad.norm_inf = NAN;
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &bad, 1, b, n, x, n, NULL, NULL), SV_ERR_ARG);
    sv_dense_refine_options o = {.tolerance = -1};
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, 1, b, n, x, n, &o, NULL), SV_ERR_ARG);
    b[7] = CMPLX(NAN, 0);
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, 1, b, n, x, n, NULL, NULL), SV_ERR_NONFINITE);
    assert_non_null(strstr(sv_last_error(), "b(7, 0)"));
    double be;
    assert_int_equal(sv_dense_backward_error(NULL, 1, b, n, x, n, &be), SV_ERR_ARG);
    assert_int_equal(sv_dense_backward_error(&op, 1, b, n, x, n, NULL), SV_ERR_ARG);
    sv_dense_sym_destroy(a64);
    sv_dense_sym_destroy(a32);
    free(a);
    free(b);
}

/* The double fallback checks the budget before it allocates. */
static void test_fallback_budget(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 206);
    int n = 100, nb = 16;
    double complex *a = td_random_sym(&r, n, n), *b = td_random(&r, n, 1), *x = malloc(sizeof *x * n);
    sv_dense_sym *a64 = td_packed(a, n, nb, 0), *a32 = td_packed(a, n, nb, 1);
    sv_dense_operator op;
    assert_int_equal(sv_dense_operator_from_sym(a64, &op), SV_OK);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, sv_dense_sym_bytes(n, SV_DENSE_C64, nb) / 2), SV_OK);
    sv_dense_refine_options o = {.tolerance = 1e-30, .max_iterations = 2, .disallow_gmres = 1};
    assert_int_equal(sv_dense_solve_mixed(ctx, a32, &op, 1, b, n, x, n, &o, NULL), SV_ERR_BUDGET);
    assert_non_null(strstr(sv_last_error(), "fallback"));
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    sv_dense_sym_destroy(a64);
    sv_dense_sym_destroy(a32);
    free(a);
    free(b);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_conditioned),
        cmocka_unit_test(test_gmres_after_stall),
        cmocka_unit_test(test_single_fallback_then_refine),
        cmocka_unit_test(test_caller_operator),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fallback_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
