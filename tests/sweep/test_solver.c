/* The exact-solver interface (solvent/sweep_solver.h) with a toy
 * implementation written here: Z(f) formed by the test from its full
 * copies, rounded to single and factorised by LAPACK's cgetrf, its own
 * products of the terms. Through sv_sweep_solver_solve it must refine to
 * double accuracy (against LAPACK on the full double matrix), fall back to
 * the CPU's double factorisation when its factors are singular or fail (and
 * say so), and drive the adaptive sweep. Also the zero-filled plan and
 * sweep options meaning the defaults. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>

#include "solvent/dense.h"
#include "solvent/sweep_solver.h"
#include "support_synth.h"
#include "sv_test.h"

static double rel_diff(size_t len, const double complex *a, const double complex *b)
{
    double scale = 0, err = 0;
    for (size_t i = 0; i < len; i++) {
        scale = fmax(scale, cabs(b[i]));
        err = fmax(err, cabs(a[i] - b[i]));
    }
    return err / scale;
}

/* ---- the toy solver -------------------------------------------------------------- */
typedef struct toy {
    const synth *s;
    sv_sweep_solver_plan plan;     /* what setup reports */
    int singular;                  /* setup reports SV_ERR_SINGULAR */
    int fail_after;                /* > 0: preconds after this many fail (a device that stops) */
    int recoverable;               /* recover says 1 for them */
    int setups, preconds, products, releases, recovers, accounts, nderiv;
    sv_sweep_exact_info last;
    float complex *lu;             /* Z(f) in single, then its LU */
    lapack_int *ipiv;
    void *work;
} toy;

static sv_status toy_setup(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    toy *T = content;
    (void)ctx;
    T->setups++;
    T->nderiv = nderiv;
    *plan = T->plan;
    if (T->singular) return sv_error(SV_ERR_SINGULAR, "toy: singular at f = %g", freq);
    int n = T->s->n;
    double complex *z = malloc(sizeof *z * (size_t)n * n);
    synth_full_z(T->s, freq, z);
    T->lu = malloc(sizeof *T->lu * (size_t)n * n);
    T->ipiv = malloc(sizeof *T->ipiv * (size_t)n);
    T->work = malloc(sv_dense_solve_work_bytes(n, T->s->p * (1 + nderiv)));
    for (size_t i = 0; i < (size_t)n * n; i++) T->lu[i] = (float complex)z[i];
    free(z);
    return LAPACKE_cgetrf(LAPACK_COL_MAJOR, n, n, T->lu, n, T->ipiv) ? SV_ERR_SINGULAR : SV_OK;
}

static sv_status toy_solve32(void *user, int nrhs, float complex *w)
{
    toy *T = user;
    int n = T->s->n;
    return LAPACKE_cgetrs(LAPACK_COL_MAJOR, 'N', n, nrhs, T->lu, n, T->ipiv, w, n) ? SV_ERR_INTERNAL : SV_OK;
}

static sv_status toy_precond(void *content, int ncols, double complex *v, int ldv)
{
    toy *T = content;
    if (T->fail_after > 0 && ++T->preconds > T->fail_after)
        return sv_error(SV_ERR_INTERNAL, "toy: precond %d failed", T->preconds);
    return sv_dense_solve_scaled(T->s->n, ncols, v, ldv, T->work, toy_solve32, T);
}

static sv_status toy_products(void *content, int ncols, const double *xs, double *ts)
{
    toy *T = content;
    T->products++;
    return sv_sweep_model_apply_terms(T->s->model, ncols, xs, ts);
}

static void toy_release(void *content)
{
    toy *T = content;
    T->releases++;
    free(T->lu);
    free(T->ipiv);
    free(T->work);
    T->lu = NULL;
    T->ipiv = NULL;
    T->work = NULL;
}

static int toy_recover(void *content, sv_ctx *ctx, double freq, sv_status st)
{
    toy *T = content;
    (void)ctx;
    (void)freq;
    (void)st;
    T->recovers++;
    return T->recoverable;
}

static void toy_account(void *content, const sv_sweep_exact_info *info)
{
    toy *T = content;
    T->accounts++;
    T->last = *info;
}

static const sv_sweep_solver_ops toy_ops = {.name = "toy", .setup = toy_setup, .precond = toy_precond,
                                            .products = toy_products, .release = toy_release,
                                            .recover = toy_recover, .account = toy_account};

static sv_sweep_solver *toy_create(const synth *s, toy *T)
{
    memset(T, 0, sizeof *T);
    T->s = s;
    sv_sweep_solver *out;
    assert_int_equal(sv_sweep_solver_create(NULL, s->model, &toy_ops, T, &out), SV_OK);
    assert_ptr_equal(sv_sweep_solver_model(out), s->model);
    assert_string_equal(sv_sweep_solver_name(out), "toy");
    return out;
}

/* ---- tests ------------------------------------------------------------------------- */
/* A zero-filled plan (single factors, the defaults): the solution refined
 * to double accuracy, the derivatives with it, everything through the
 * toy's operations. */
static void test_toy_refines(void **state)
{
    (void)state;
    synth s;
    int n = 150, p = 2, nd = 3;
    synth_create(&s, n, 16, p, 3, 0.05, 31);
    size_t np = (size_t)n * p;
    double complex *x = malloc(sizeof *x * np), *dx = malloc(sizeof *dx * np * nd);
    double complex *xl = malloc(sizeof *xl * np), *dxl = malloc(sizeof *dxl * np * nd);
    toy T;
    sv_sweep_solver *sol = toy_create(&s, &T);
    double f = 4.3e9;
    sv_sweep_exact_info info;
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, nd, dx, n, &info), SV_OK);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_LAPACK, 0, xl, n, nd, dxl, n, NULL),
                     SV_OK);
    print_message("toy at %g: %d steps, backward error %.2e; X vs LAPACK %.2e, X' %.2e, X''' %.2e\n", f,
                  info.iterations, info.backward_error, rel_diff(np, x, xl), rel_diff(np, dx, dxl),
                  rel_diff(np, dx + 2 * np, dxl + 2 * np));
    assert_false(info.fell_back);
    assert_true(info.iterations >= 1);
    assert_true(info.backward_error <= 1e-15);
    assert_true(rel_diff(np, x, xl) < 1e-9);
    for (int g = 0; g < nd; g++) assert_true(rel_diff(np, dx + g * np, dxl + g * np) < 1e-5);
    assert_int_equal(T.setups, 1);
    assert_int_equal(T.nderiv, nd);
    assert_true(T.products > info.iterations); /* its products, one pass a step */
    assert_true(T.releases >= 1);
    assert_null(T.lu);
    assert_int_equal(T.accounts, 1);
    assert_memory_equal(&T.last, &info, sizeof info);
    assert_int_equal(T.recovers, 0);

    /* the zero-filled plan is the documented one */
    T.plan = (sv_sweep_solver_plan){.factors = SV_SWEEP_FACTORS_SINGLE, .tolerance = 1e-15, .max_iterations = 30};
    double complex *x2 = malloc(sizeof *x2 * np), *dx2 = malloc(sizeof *dx2 * np * nd);
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x2, n, nd, dx2, n, NULL), SV_OK);
    assert_memory_equal(x2, x, sizeof *x * np);
    assert_memory_equal(dx2, dx, sizeof *dx * np * nd);
    sv_sweep_solver_destroy(sol);
    free(x);
    free(dx);
    free(xl);
    free(dxl);
    free(x2);
    free(dx2);
    synth_destroy(&s);
}

/* Factors that cannot be made (setup: singular) or that fail mid-solve
 * (recovered): the frequency goes to the CPU's double factorisation, whose
 * numbers are those of the double path; an error not recovered is returned. */
static void test_toy_fallbacks(void **state)
{
    (void)state;
    synth s;
    int n = 100, p = 2;
    synth_create(&s, n, 16, p, 3, 0.05, 32);
    size_t np = (size_t)n * p;
    double f = 6e9;
    double complex *x = malloc(sizeof *x * np), *xd = malloc(sizeof *xd * np);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_DOUBLE, 0, xd, n, 0, NULL, 0, NULL), SV_OK);
    toy T;
    sv_sweep_solver *sol = toy_create(&s, &T);
    sv_sweep_exact_info info;

    T.singular = 1;
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, 0, NULL, 0, &info), SV_OK);
    assert_true(info.fell_back);
    assert_true(T.last.fell_back);
    assert_memory_equal(x, xd, sizeof *x * np);
    assert_int_equal(T.preconds, 0);

    T.singular = 0;
    T.fail_after = 1; /* the first correction step fails */
    T.recoverable = 1;
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, 0, NULL, 0, &info), SV_OK);
    assert_true(info.fell_back);
    assert_int_equal(T.recovers, 1);
    assert_memory_equal(x, xd, sizeof *x * np);

    T.preconds = 0;
    T.recoverable = 0;
    int accounts = T.accounts;
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, 0, NULL, 0, &info), SV_ERR_INTERNAL);
    assert_non_null(strstr(sv_last_error(), "toy: precond"));
    assert_int_equal(T.accounts, accounts); /* a failed solve is not accounted */
    assert_null(T.lu);                      /* but its factors are released */

    /* double factors: no fallback, the error is the caller's */
    T.fail_after = 0;
    T.singular = 1;
    T.plan.factors = SV_SWEEP_FACTORS_DOUBLE;
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, 0, NULL, 0, &info), SV_ERR_SINGULAR);
    /* argument checks */
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n - 1, 0, NULL, 0, NULL), SV_ERR_ARG);
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, f, x, n, SV_SWEEP_MAX_DERIV + 1, x, n, NULL), SV_ERR_ARG);
    assert_int_equal(sv_sweep_solver_solve(sol, NULL, NAN, x, n, 0, NULL, 0, NULL), SV_ERR_NONFINITE);
    assert_int_equal(sv_sweep_solver_solve(NULL, NULL, f, x, n, 0, NULL, 0, NULL), SV_ERR_ARG);
    sv_sweep_solver_destroy(sol);
    sv_sweep_solver *bad;
    sv_sweep_solver_ops none = {.name = "no setup"};
    assert_int_equal(sv_sweep_solver_create(NULL, s.model, &none, NULL, &bad), SV_ERR_ARG);
    assert_null(bad);
    assert_int_equal(sv_sweep_solver_create_builtin(NULL, s.model, (sv_sweep_precision)7, 0, &bad), SV_ERR_ARG);
    assert_int_equal(sv_sweep_solver_create_builtin(NULL, s.model, SV_SWEEP_MIXED, 0.5, &bad), SV_ERR_ARG);
    free(x);
    free(xd);
    synth_destroy(&s);
}

/* The toy as the sweep's exact solver: one set-up per exact solve, the
 * sweep converges, S right; a solver of another model is refused. */
static void test_toy_in_the_sweep(void **state)
{
    (void)state;
    synth s, other;
    int n = 120, p = 2, nf = 31;
    synth_create(&s, n, 16, p, 3, 0.05, 33);
    synth_create(&other, 40, 16, p, 1, 0.05, 34);
    double *f = malloc(sizeof *f * nf);
    for (int i = 0; i < nf; i++) f[i] = 1e9 + 9e9 * i / (nf - 1);
    toy T;
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.solver = toy_create(&s, &T);
    sv_sweep_result *res;
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &o, &res), SV_OK);
    assert_true(res->converged);
    assert_int_equal(T.setups, res->n_exact);
    assert_int_equal(T.accounts, res->n_exact);
    assert_int_equal(res->n_fallback, 0);
    double complex *x = malloc(sizeof *x * (size_t)n * p), y[4];
    double worst = 0;
    for (int i = 0; i < nf; i++) {
        synth_solve(&s, f[i], x);
        synth_port_y(&s, x, y);
        worst = fmax(worst, rel_diff(4, res->h + (size_t)i * 4, y));
    }
    print_message("toy in the sweep: %d exact solves, H vs LAPACK %.2e\n", res->n_exact, worst);
    assert_true(worst < 1e-6);
    sv_sweep_result_destroy(res);
    assert_int_equal(sv_sweep_run(NULL, other.model, nf, f, &o, &res), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "another model"));
    sv_sweep_solver_destroy(o.solver);
    free(x);
    free(f);
    synth_destroy(&s);
    synth_destroy(&other);
}

/* A zero-filled sv_sweep_options is the defaults. */
static void test_zero_sweep_options(void **state)
{
    (void)state;
    synth s;
    int nf = 21;
    synth_create(&s, 100, 16, 2, 3, 0.05, 35);
    double f[21];
    for (int i = 0; i < nf; i++) f[i] = 1e9 + 9e9 * i / (nf - 1);
    sv_sweep_options zero, def;
    memset(&zero, 0, sizeof zero);
    sv_sweep_options_default(&def);
    sv_sweep_result *rz, *rd;
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &zero, &rz), SV_OK);
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &def, &rd), SV_OK);
    assert_int_equal(rz->n_exact, rd->n_exact);
    assert_memory_equal(rz->h, rd->h, sizeof(double complex) * (size_t)nf * 4);
    assert_memory_equal(rz->exact, rd->exact, (size_t)nf);
    sv_sweep_result_destroy(rz);
    sv_sweep_result_destroy(rd);
    synth_destroy(&s);
}

int main(void)
{
    sv_threads_serial_begin(); /* small models: see tests/sweep/test_exact_dense.c */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toy_refines),
        cmocka_unit_test(test_toy_fallbacks),
        cmocka_unit_test(test_toy_in_the_sweep),
        cmocka_unit_test(test_zero_sweep_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
