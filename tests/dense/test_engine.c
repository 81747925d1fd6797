/* The refinement engine (sv_dense_refine) through a toy operator built by
 * the test: Z full and complex symmetric, groups F_g = −E·W_{g−1}, the dense
 * engine's single factors as the preconditioner; solutions against LAPACK's
 * zgesv. Also the contracts at its edge: the one backward error against
 * hand-computed values, zero-filled options meaning the defaults, and
 * sv_dense_solve_mixed (a short caller of the engine) against zgesv. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>

#include "solvent/dense.h"
#include "support_dense.h"

/* ---- the toy operator ----------------------------------------------------------- */
typedef struct toy {
    int n, p, nb;
    const double complex *z, *e; /* full n × n */
    sv_dense_sym *a;             /* Z packed, then factored (single, or double after the fallback) */
    sv_dense_factor *f;
    void *work;
    double complex *t;           /* n × p */
    int fallbacks, precond_calls;
    lapack_int *ipiv;            /* direct: LU of Z in double */
    double complex *lu;
} toy;

static sv_status toy_precond(void *user, int ncols, double complex *v, int ldv)
{
    toy *T = user;
    T->precond_calls++;
    if (T->lu) return LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', T->n, ncols, T->lu, T->n, T->ipiv, v, ldv) ? SV_ERR_INTERNAL
                                                                                                   : SV_OK;
    return sv_dense_factor_solve_scaled(T->f, ncols, v, ldv, T->work);
}

/* y = M·x for full M, column by column (ld of x and y given). */
static void full_apply(const toy *T, const double complex *m, int ncols, const double complex *x, int ldx,
                       double complex *y, int ldy)
{
    for (int c = 0; c < ncols; c++) td_matmul_full(T->n, 1, m, x + (size_t)c * ldx, y + (size_t)c * ldy);
}

static sv_status toy_apply(void *user, int ncols, const double complex *x, int ldx, double complex *y, int ldy)
{
    full_apply(user, ((toy *)user)->z, ncols, x, ldx, y, ldy);
    return SV_OK;
}

static sv_status toy_residuals(void *user, int ngroups, const double complex *w, double complex *rhs,
                               double complex *r)
{
    toy *T = user;
    size_t np = (size_t)T->n * T->p;
    for (int g = 1; g < ngroups; g++) { /* F_g = −E·W_{g−1} */
        full_apply(T, T->e, T->p, w + (g - 1) * np, T->n, rhs + g * np, T->n);
        for (size_t i = 0; i < np; i++) rhs[g * np + i] = -rhs[g * np + i];
    }
    full_apply(T, T->z, T->p * ngroups, w, T->n, r, T->n);
    for (size_t i = 0; i < np * ngroups; i++) r[i] = rhs[i] - r[i];
    return SV_OK;
}

static sv_status toy_group_rhs(void *user, int g, const double complex *x, int ldx, const double complex *dx,
                               int lddx, double complex *r, int ldr)
{
    toy *T = user;
    const double complex *below = g == 1 ? x : dx + (size_t)(g - 2) * lddx * T->p;
    full_apply(T, T->e, T->p, below, g == 1 ? ldx : lddx, r, ldr);
    for (int c = 0; c < T->p; c++)
        for (int i = 0; i < T->n; i++) r[(size_t)c * ldr + i] = -r[(size_t)c * ldr + i];
    return SV_OK;
}

static sv_status toy_fallback(void *user, double reached)
{
    toy *T = user;
    (void)reached;
    T->fallbacks++;
    sv_dense_factor_destroy(T->f);
    sv_dense_sym_destroy(T->a);
    T->a = td_packed(T->z, T->n, T->nb, 0);
    return sv_dense_factor_create(NULL, T->a, NULL, &T->f, NULL);
}

static sv_dense_refine_ops toy_ops(toy *T, const double complex *z, const double complex *e, int n, int p)
{
    memset(T, 0, sizeof *T);
    T->n = n;
    T->p = p;
    T->nb = 16;
    T->z = z;
    T->e = e;
    T->a = td_packed(z, n, T->nb, 1);
    /* LDLᵀ whatever the pivots: these factors only precondition */
    sv_dense_factor_options fo = {.pivot_threshold = 1e-30};
    assert_int_equal(sv_dense_factor_create(NULL, T->a, &fo, &T->f, NULL), SV_OK);
    T->work = malloc(sv_dense_solve_work_bytes(n, p * 4));
    sv_dense_refine_ops ops = {.n = n, .nrhs = p, .norm_inf = td_norm_inf(n, z), .user = T,
                               .precond = toy_precond, .residuals = toy_residuals, .apply = toy_apply,
                               .group_rhs = toy_group_rhs, .fallback = toy_fallback};
    return ops;
}

static void toy_free(toy *T)
{
    sv_dense_factor_destroy(T->f);
    sv_dense_sym_destroy(T->a);
    free(T->work);
    free(T->lu);
    free(T->ipiv);
}

/* X_0 = Z⁻¹·B, X_g = Z⁻¹·(−E·X_{g−1}) by LAPACK's zgesv on copies. */
static void reference(int n, int p, int ngroups, const double complex *z, const double complex *e,
                      const double complex *b, double complex *xr)
{
    double complex *zc = malloc(sizeof *zc * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)n);
    size_t np = (size_t)n * p;
    for (int g = 0; g < ngroups; g++) {
        double complex *xg = xr + g * np;
        if (g == 0) memcpy(xg, b, sizeof *xg * np);
        else {
            td_matmul_full(n, p, e, xr + (g - 1) * np, xg);
            for (size_t i = 0; i < np; i++) xg[i] = -xg[i];
        }
        memcpy(zc, z, sizeof *zc * (size_t)n * n);
        assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, n, p, zc, n, ipiv, xg, n), 0);
    }
    free(zc);
    free(ipiv);
}

/* One problem: Z (condition cond, or diagonally dominant with cond = 0),
 * E, B, the engine's result X and the reference XR, groups of p columns. */
typedef struct kase {
    int n, p, G;
    size_t np;
    double complex *z, *e, *b, *x, *xr;
    toy T;
    sv_dense_refine_ops ops;
} kase;

static void kase_init(kase *k, uint64_t seed, int n, int p, int G, double cond)
{
    sv_test_rng r;
    sv_test_rng_seed(&r, seed);
    k->n = n;
    k->p = p;
    k->G = G;
    k->np = (size_t)n * p;
    k->z = cond > 0 ? td_sym_with_cond(&r, n, cond) : td_random_sym(&r, n, n + 1.0);
    k->e = td_random_sym(&r, n, 0);
    k->b = td_random(&r, n, p);
    k->x = malloc(sizeof *k->x * k->np * G);
    k->xr = malloc(sizeof *k->xr * k->np * G);
    reference(n, p, G, k->z, k->e, k->b, k->xr);
    k->ops = toy_ops(&k->T, k->z, k->e, n, p);
}

static void kase_free(kase *k)
{
    toy_free(&k->T);
    free(k->z);
    free(k->e);
    free(k->b);
    free(k->x);
    free(k->xr);
}

static sv_status kase_refine(kase *k, const sv_dense_refine_params *pr, double complex *x, sv_dense_refine_result *res)
{
    return sv_dense_refine(NULL, &k->ops, k->G, pr, k->b, x, k->n, k->G > 1 ? x + k->np : NULL, k->n, res);
}

/* ---- the engine ---------------------------------------------------------------- */
static void test_groups_against_zgesv(void **state)
{
    (void)state;
    kase k;
    kase_init(&k, 301, 90, 2, 3, 0);
    int n = k.n, p = k.p;
    size_t np = k.np;
    sv_dense_refine_result res;
    assert_int_equal(kase_refine(&k, NULL, k.x, &res), SV_OK);
    print_message("groups: %d steps, backward error %.2e; X, X1, X2 vs zgesv %.2e %.2e %.2e\n", res.iterations,
                  res.backward_error, td_rel_diff(n, p, k.x, k.xr), td_rel_diff(n, p, k.x + np, k.xr + np),
                  td_rel_diff(n, p, k.x + 2 * np, k.xr + 2 * np));
    assert_true(res.accepted);
    assert_false(res.fell_back);
    assert_int_equal(res.gmres_steps, 0);
    assert_true(res.iterations >= 1);
    assert_true(res.backward_error <= 1e-15);
    assert_true(td_backward_error(n, p, k.z, k.x, k.b) <= 1e-15);
    assert_true(td_rel_diff(n, p, k.x, k.xr) < 1e-13);
    /* groups ≥ 1 to their tolerance (1e-13, backward) */
    assert_true(td_rel_diff(n, p, k.x + np, k.xr + np) < 1e-11);
    assert_true(td_rel_diff(n, p, k.x + 2 * np, k.xr + 2 * np) < 1e-11);
    assert_int_equal(k.T.fallbacks, 0);

    /* zero-filled parameters, NULL and the defaults are one thing */
    double complex *x0 = malloc(sizeof *x0 * np * k.G), *x1 = malloc(sizeof *x1 * np * k.G);
    sv_dense_refine_params zero, def;
    memset(&zero, 0, sizeof zero);
    sv_dense_refine_params_default(&def);
    assert_int_equal(kase_refine(&k, &zero, x0, NULL), SV_OK);
    assert_int_equal(kase_refine(&k, &def, x1, NULL), SV_OK);
    assert_memory_equal(x0, k.x, sizeof *x0 * np * k.G);
    assert_memory_equal(x1, k.x, sizeof *x1 * np * k.G);
    free(x0);
    free(x1);
    kase_free(&k);
}

/* Condition 1e8: block refinement with single factors stalls, GMRES on group
 * 0 converges; group 1 comes back accurate or left out (zero). */
static void test_gmres_stage(void **state)
{
    (void)state;
    kase k;
    kase_init(&k, 302, 120, 2, 2, 1e8);
    int n = k.n, p = k.p;
    size_t np = k.np;
    sv_dense_refine_params pr;
    sv_dense_refine_params_default(&pr);
    pr.gmres_steps = SV_DENSE_GMRES_STEPS;
    pr.group_gmres_steps = SV_DENSE_GMRES_STEPS;
    sv_dense_refine_result res;
    assert_int_equal(kase_refine(&k, &pr, k.x, &res), SV_OK);
    print_message("cond 1e8: %d block steps, %d GMRES steps, backward error %.2e, fell back %d\n", res.iterations,
                  res.gmres_steps, res.backward_error, res.fell_back);
    assert_true(res.gmres_steps > 0);
    assert_false(res.fell_back);
    assert_true(td_backward_error(n, p, k.z, k.x, k.b) <= 1e-15);
    assert_true(td_rel_diff(n, p, k.x, k.xr) < 1e8 * 1e-14);
    int zero = 1;
    for (size_t i = 0; i < np; i++) zero &= k.x[np + i] == 0;
    if (!zero) {
        double complex *f1 = malloc(sizeof *f1 * np);
        td_matmul_full(n, p, k.e, k.x, f1);
        for (size_t i = 0; i < np; i++) f1[i] = -f1[i];
        assert_true(td_backward_error(n, p, k.z, k.x + np, f1) <= 1e-12);
        free(f1);
    }
    /* without stage 2 the fallback finishes the job */
    pr.gmres_steps = 0;
    assert_int_equal(kase_refine(&k, &pr, k.x, &res), SV_OK);
    assert_true(res.fell_back);
    assert_int_equal(k.T.fallbacks, 1);
    assert_true(td_backward_error(n, p, k.z, k.x, k.b) <= 1e-15);
    kase_free(&k);
}

/* direct = 1: the factors solve exactly (LU in double), no refinement: the
 * groups in turn, bit for bit one solve with the factors each, and what
 * zgesv gives. */
static void test_direct(void **state)
{
    (void)state;
    kase k;
    kase_init(&k, 303, 60, 3, 3, 0);
    int n = k.n, p = k.p, G = k.G;
    size_t np = k.np;
    k.T.lu = malloc(sizeof *k.T.lu * (size_t)n * n);
    k.T.ipiv = malloc(sizeof *k.T.ipiv * (size_t)n);
    memcpy(k.T.lu, k.z, sizeof *k.T.lu * (size_t)n * n);
    assert_int_equal(LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, k.T.lu, n, k.T.ipiv), 0);
    sv_dense_refine_params pr = {.direct = 1};
    sv_dense_refine_result res;
    assert_int_equal(kase_refine(&k, &pr, k.x, &res), SV_OK);
    assert_true(res.accepted);
    assert_int_equal(res.iterations, 0);
    assert_int_equal(k.T.precond_calls, G);
    double complex *xs = malloc(sizeof *xs * np * G); /* the same LU's solves, by hand */
    for (int g = 0; g < G; g++) {
        double complex *xg = xs + g * np;
        if (g == 0) memcpy(xg, k.b, sizeof *xg * np);
        else {
            td_matmul_full(n, p, k.e, xs + (g - 1) * np, xg);
            for (size_t i = 0; i < np; i++) xg[i] = -xg[i];
        }
        assert_int_equal(LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, p, k.T.lu, n, k.T.ipiv, xg, n), 0);
    }
    assert_memory_equal(k.x, xs, sizeof *xs * np * G);
    free(xs);
    for (int g = 0; g < G; g++) assert_true(td_rel_diff(n, p, k.x + g * np, k.xr + g * np) < 1e-13);
    sv_assert_close(res.backward_error, td_backward_error(n, p, k.z, k.x, k.b), 0.5, 1e-17);
    kase_free(&k);
}

/* No usable factors: straight to the fallback, or an error without one. */
static void test_singular_and_errors(void **state)
{
    (void)state;
    kase k;
    kase_init(&k, 304, 40, 1, 1, 0);
    int n = k.n;
    sv_dense_refine_params pr = {.singular = 1};
    sv_dense_refine_result res;
    assert_int_equal(kase_refine(&k, &pr, k.x, &res), SV_OK);
    assert_true(res.fell_back);
    assert_int_equal(k.T.fallbacks, 1);
    assert_true(td_backward_error(n, 1, k.z, k.x, k.b) <= 1e-15);
    k.ops.fallback = NULL;
    assert_int_equal(kase_refine(&k, &pr, k.x, &res), SV_ERR_SINGULAR);
    /* arguments */
    double complex *b = k.b, *x = k.x, dx[40];
    assert_int_equal(sv_dense_refine(NULL, NULL, 1, NULL, b, x, n, NULL, 0, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_refine(NULL, &k.ops, 0, NULL, b, x, n, NULL, 0, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_refine(NULL, &k.ops, 2, NULL, b, x, n, NULL, n, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_refine(NULL, &k.ops, 1, NULL, b, x, n - 1, NULL, 0, NULL), SV_ERR_ARG);
    sv_dense_refine_ops bad = k.ops;
    bad.residuals = NULL;
    assert_int_equal(sv_dense_refine(NULL, &bad, 1, NULL, b, x, n, NULL, 0, NULL), SV_ERR_ARG);
    bad = k.ops;
    bad.group_rhs = NULL;
    sv_dense_refine_params direct = {.direct = 1};
    assert_int_equal(sv_dense_refine(NULL, &bad, 2, &direct, b, x, n, dx, n, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "group_rhs"));
    kase_free(&k);
}

/* ---- the one backward error ------------------------------------------------------- */
static void test_backward_error_by_hand(void **state)
{
    (void)state;
    /* column 0: ‖r‖ = |3 + 4i| = 5, ‖x‖ = |−2i| = 2, ‖b‖ = 1, ‖Z‖ = 3: 5 / (3·2 + 1) = 5/7;
     * column 1: all zero: 0 (ld 3: the third row is not looked at) */
    double complex r[6] = {CMPLX(3, 4), 1, NAN, 0, 0, NAN}, x[6] = {1, CMPLX(0, -2), NAN, 0, 0, NAN};
    double complex b[6] = {0.5, -1, NAN, 0, 0, NAN};
    double per[2];
    double worst = sv_dense_backward_error_residual(2, 2, 3.0, r, 3, x, 3, b, 3, per);
    assert_true(worst == 5.0 / 7.0);
    assert_true(per[0] == 5.0 / 7.0);
    assert_true(per[1] == 0.0);
    /* a residual with a zero denominator is infinite */
    double complex r1[1] = {1e-300}, z1[1] = {0};
    assert_true(isinf(sv_dense_backward_error_residual(1, 1, 3.0, r1, 1, z1, 1, z1, 1, NULL)));
    /* NaN anywhere gives NaN: it must not pass for small */
    double complex rn[2] = {0.0, CMPLX(NAN, 0)};
    assert_true(isnan(sv_dense_backward_error_residual(2, 1, 3.0, rn, 2, x, 2, b, 2, NULL)));
    double complex xn[2] = {CMPLX(0, NAN), 1};
    assert_true(isnan(sv_dense_backward_error_residual(2, 1, 3.0, r, 2, xn, 2, b, 2, NULL)));
    /* and the worst column's NaN wins over a finite one */
    double complex r2[4] = {1, 0, CMPLX(NAN, 0), 0}, x2[4] = {1, 0, 1, 0}, b2[4] = {1, 0, 1, 0};
    assert_true(isnan(sv_dense_backward_error_residual(2, 2, 1.0, r2, 2, x2, 2, b2, 2, per)));
    assert_true(per[0] == 0.5);
}

/* ---- contracts of the options ------------------------------------------------------ */
/* A zero-filled sv_dense_refine_options is the defaults: GMRES and the
 * fallback on (it once meant both off). */
static void test_zero_refine_options(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 305);
    int n = 120, p = 2, nb = 32;
    double complex *a = td_sym_with_cond(&r, n, 1e8), *b = td_random(&r, n, p);
    double complex *x[3];
    sv_dense_refine_options zero, def;
    memset(&zero, 0, sizeof zero);
    sv_dense_refine_options_default(&def);
    assert_true(def.tolerance == 1e-15 && def.max_iterations == 30 && !def.disallow_gmres && !def.disallow_fallback);
    const sv_dense_refine_options *opts[3] = {NULL, &zero, &def};
    sv_dense_refine_info info[3];
    for (int k = 0; k < 3; k++) {
        sv_dense_sym *a64 = td_packed(a, n, nb, 0), *a32 = td_packed(a, n, nb, 1);
        sv_dense_operator op;
        assert_int_equal(sv_dense_operator_from_sym(a64, &op), SV_OK);
        x[k] = malloc(sizeof *x[k] * (size_t)n * p);
        assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, p, b, n, x[k], n, opts[k], &info[k]), SV_OK);
        sv_dense_sym_destroy(a64);
        sv_dense_sym_destroy(a32);
    }
    assert_true(info[1].gmres_used);
    assert_false(info[1].fell_back);
    assert_memory_equal(x[1], x[0], sizeof *x[0] * (size_t)n * p);
    assert_memory_equal(x[2], x[0], sizeof *x[0] * (size_t)n * p);
    assert_int_equal(info[1].iterations, info[0].iterations);
    for (int k = 0; k < 3; k++) free(x[k]);
    free(a);
    free(b);
}

/* A zero-filled sv_dense_factor_options is the defaults: the pivoted
 * fallback on. */
static void test_zero_factor_options(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 306);
    int n = 50;
    double complex *a = td_sym_zero_pivot(&r, n, 20);
    sv_dense_factor_options zero, def;
    memset(&zero, 0, sizeof zero);
    sv_dense_factor_options_default(&def);
    assert_memory_equal(&zero, &def, sizeof zero);
    sv_dense_sym *s = td_packed(a, n, 16, 0);
    sv_dense_factor *f;
    sv_dense_factor_info fi;
    assert_int_equal(sv_dense_factor_create(NULL, s, &zero, &f, &fi), SV_OK);
    assert_int_equal(fi.path, SV_DENSE_PATH_FALLBACK);
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(s);
    s = td_packed(a, n, 16, 0);
    def.disallow_fallback = 1;
    assert_int_equal(sv_dense_factor_create(NULL, s, &def, &f, &fi), SV_ERR_SINGULAR);
    assert_non_null(strstr(sv_last_error(), "disallow_fallback"));
    sv_dense_sym_destroy(s);
    free(a);
}

/* sv_dense_solve_mixed, a short caller of the engine, against zgesv. */
static void test_mixed_against_zgesv(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 307);
    int n = 200, p = 3;
    double complex *a = td_sym_with_cond(&r, n, 1e4), *b = td_random(&r, n, p);
    double complex *x = malloc(sizeof *x * (size_t)n * p), *xr = malloc(sizeof *xr * (size_t)n * p);
    double complex *ac = malloc(sizeof *ac * (size_t)n * n);
    lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)n);
    memcpy(ac, a, sizeof *ac * (size_t)n * n);
    memcpy(xr, b, sizeof *xr * (size_t)n * p);
    assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, n, p, ac, n, ipiv, xr, n), 0);
    sv_dense_sym *a64 = td_packed(a, n, 32, 0), *a32 = td_packed(a, n, 32, 1);
    sv_dense_operator op;
    assert_int_equal(sv_dense_operator_from_sym(a64, &op), SV_OK);
    sv_dense_refine_info info;
    assert_int_equal(sv_dense_solve_mixed(NULL, a32, &op, p, b, n, x, n, NULL, &info), SV_OK);
    print_message("mixed vs zgesv (cond 1e4): %.2e, %d steps, backward error %.2e\n", td_rel_diff(n, p, x, xr),
                  info.iterations, info.backward_error);
    assert_false(info.fell_back);
    assert_true(info.backward_error <= 1e-15);
    assert_true(td_rel_diff(n, p, x, xr) < 1e4 * 1e-14);
    sv_dense_sym_destroy(a64);
    sv_dense_sym_destroy(a32);
    free(a);
    free(b);
    free(x);
    free(xr);
    free(ac);
    free(ipiv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_against_zgesv), cmocka_unit_test(test_gmres_stage),
        cmocka_unit_test(test_direct),               cmocka_unit_test(test_singular_and_errors),
        cmocka_unit_test(test_backward_error_by_hand), cmocka_unit_test(test_zero_refine_options),
        cmocka_unit_test(test_zero_factor_options),  cmocka_unit_test(test_mixed_against_zgesv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
