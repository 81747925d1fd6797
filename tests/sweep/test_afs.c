/* Adaptive frequency sampling against exact solves (LAPACK on a full copy
 * of Z built by the test itself) at every frequency, the residual estimate
 * against the true residual, and the loop's controls and errors. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "support_synth.h"
#include "sv_test.h"
#include "solvent/sweep_solver.h"
#include "sweep/sweep_internal.h"

#define Z0 50.0

static double *linspace(double a, double b, int n)
{
    double *f = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) f[i] = n == 1 ? a : a + (b - a) * i / (n - 1);
    return f;
}

/* Compare the sweep's outputs with exact solves at every frequency. */
static double max_s_error(const synth *s, const sv_sweep_result *res, double *max_y_rel_exact)
{
    int n = s->n, p = s->p;
    double complex *x = malloc(sizeof(double complex) * n * p), y[64], sr[64], sa[64];
    double worst = 0, worst_exact = 0;
    for (int i = 0; i < res->nfreq; i++) {
        synth_solve(s, res->freq[i], x);
        synth_port_y(s, x, y);
        const double complex *h = res->h + (size_t)i * p * p;
        s_from_y(p, y, Z0, sr);
        s_from_y(p, h, Z0, sa);
        for (int e = 0; e < p * p; e++) {
            worst = fmax(worst, cabs(sa[e] - sr[e]));
            if (res->exact[i]) worst_exact = fmax(worst_exact, cabs(h[e] - y[e]) / cabs(y[e]));
        }
    }
    free(x);
    if (max_y_rel_exact) *max_y_rel_exact = worst_exact;
    return worst;
}

static void check_reciprocal_passive(int p, const sv_sweep_result *res)
{
    for (int i = 0; i < res->nfreq; i++) {
        double complex sa[64];
        s_from_y(p, res->h + (size_t)i * p * p, Z0, sa);
        for (int a = 0; a < p; a++)
            for (int b = 0; b < p; b++) assert_true(cabs(sa[a * p + b] - sa[b * p + a]) <= 1e-10);
        assert_true(max_singular(p, sa) <= 1 + 1e-10);
    }
}

static void run_against_exact(int n, int p, int resonances, int nf)
{
    synth s;
    synth_create(&s, n, 16, p, resonances, 0.05, 100 + n + p);
    double *f = linspace(1e9, 10e9, nf);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &o, &res), SV_OK);
    assert_true(res->converged);
    assert_true(res->max_residual < 1e-4);
    int nex = 0;
    for (int i = 0; i < nf; i++) nex += res->exact[i];
    assert_int_equal(nex, res->n_exact);
    assert_true(res->n_exact < nf / 2); /* the point of the exercise */
    assert_true(res->basis_size <= 8 * p * res->n_exact); /* solutions and three derivatives, real and imaginary parts */
    double yexact = 0;
    double ds = max_s_error(&s, res, &yexact);
    print_message("n %d p %d: %d exact solves, q = %d, max |dS| = %.2e, exact-point rel err %.2e\n", n, p,
                  res->n_exact, res->basis_size, ds, yexact);
    assert_true(ds <= 1e-9);
    assert_true(yexact <= 1e-12);
    check_reciprocal_passive(p, res);
    sv_sweep_result_destroy(res);
    free(f);
    synth_destroy(&s);
}

static void test_afs_two_ports(void **state)
{
    (void)state;
    run_against_exact(150, 2, 3, 101);
}

static void test_afs_three_ports(void **state)
{
    (void)state;
    run_against_exact(120, 3, 2, 61);
}

/* ---- the residual estimate ------------------------------------------------------- */
typedef struct probe {
    const synth *s;
    int calls, checked;
    double worst_rel, worst_abs;
} probe;

static void hook(void *user, const double *V, int n, int q, const double complex *y, const sv_sweep_result *res)
{
    probe *pr = user;
    const synth *s = pr->s;
    int p = s->p;
    pr->calls++;
    double complex *x = malloc(sizeof(double complex) * n * p);
    for (int i = 0; i < res->nfreq; i += 3) {
        if (res->exact[i]) continue;
        synth_basis_x(V, n, q, p, y + (size_t)i * q * p, x);
        double t = synth_true_residual(s, res->freq[i], x);
        double e = res->residual[i];
        /* Trustworthy down to the tolerance and far below it: relative
         * agreement where the residual is large, an absolute floor (set by
         * rounding in forming V·y and Z·x) where it is tiny. */
        pr->worst_abs = fmax(pr->worst_abs, fabs(e - t));
        if (t > 1e-8) {
            pr->worst_rel = fmax(pr->worst_rel, fabs(e - t) / t);
            pr->checked++;
        }
    }
    free(x);
}

static void test_residual_estimate_matches_true_residual(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 120, 16, 2, 3, 0.05, 42);
    double *f = linspace(1e9, 10e9, 61);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    o.tolerance = 1e-12; /* keep iterating: the estimate is checked at every stage */
    o.max_exact = 12;
    o.derivatives = -1; /* smaller steps in the basis: more stages to check */
    probe pr = {&s, 0, 0, 0, 0};
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run_hooked(NULL, s.model, 61, f, &o, hook, &pr, &res), SV_OK);
    print_message("estimate: %d evaluations, %d checked above 1e-8, worst relative error %.2e, worst absolute %.2e\n",
                  pr.calls, pr.checked, pr.worst_rel, pr.worst_abs);
    assert_true(pr.calls >= 5);
    assert_true(pr.checked > 20);
    assert_true(pr.worst_rel < 1e-3);
    assert_true(pr.worst_abs < 1e-10);
    sv_sweep_result_destroy(res);
    free(f);
    synth_destroy(&s);
}

/* The derivative directions against central differences of exact solves. */
static void test_derivatives_against_differences(void **state)
{
    (void)state;
    synth s;
    int n = 90, p = 2;
    synth_create(&s, n, 16, p, 3, 0.05, 5);
    double f = 4.1e9, h = 1e-3 * f;
    size_t sz = (size_t)n * p;
    double complex *x = malloc(sizeof(double complex) * sz), *dx = malloc(sizeof(double complex) * sz * 2),
                   *xp = malloc(sizeof(double complex) * sz), *xm = malloc(sizeof(double complex) * sz);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_LAPACK, 0.0, x, n, 2, dx, n, NULL), SV_OK);
    synth_solve(&s, f + h, xp);
    synth_solve(&s, f - h, xm);
    double e1 = 0, s1 = 0, e2 = 0, s2 = 0;
    for (size_t i = 0; i < sz; i++) {
        double complex d1 = (xp[i] - xm[i]) / (2 * h), d2 = (xp[i] - 2.0 * x[i] + xm[i]) / (h * h);
        e1 = fmax(e1, cabs(dx[i] - d1));
        s1 = fmax(s1, cabs(d1));
        e2 = fmax(e2, cabs(dx[sz + i] - d2));
        s2 = fmax(s2, cabs(d2));
    }
    print_message("derivatives vs differences: first %.2e, second %.2e (relative)\n", e1 / s1, e2 / s2);
    assert_true(e1 <= 1e-4 * s1); /* O(h²) truncation of the differences */
    assert_true(e2 <= 1e-3 * s2);
    free(x);
    free(dx);
    free(xp);
    free(xm);
    synth_destroy(&s);
}

/* ---- controls ------------------------------------------------------------------------ */
static void test_cap_and_exact_all(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 80, 16, 2, 3, 0.05, 8);
    double *f = linspace(1e9, 10e9, 31);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    o.tolerance = 1e-15;
    o.max_exact = 4;
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run(NULL, s.model, 31, f, &o, &res), SV_OK);
    assert_int_equal(res->n_exact, 4);
    assert_false(res->converged);
    assert_true(res->max_residual > 1e-15);
    sv_sweep_result_destroy(res);

    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    o.exact_all = 1;
    assert_int_equal(sv_sweep_run(NULL, s.model, 31, f, &o, &res), SV_OK);
    assert_int_equal(res->n_exact, 31);
    assert_true(res->converged);
    double yex;
    assert_true(max_s_error(&s, res, &yex) < 1e-12);
    sv_sweep_result_destroy(res);
    free(f);
    synth_destroy(&s);
}

/* A caller's exact solver: a toy implementation of the interface that
 * counts its set-ups and the derivative order it is asked for, with the
 * LAPACK reference's factors behind it. */
typedef struct counting {
    sv_sweep_solver *inner;
    int setups, nderiv;
} counting;

static sv_status counting_setup(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    counting *c = content;
    c->setups++;
    c->nderiv = nderiv;
    return sv_sweep_solver_setup(c->inner, ctx, freq, nderiv, plan);
}

static sv_status counting_precond(void *content, int ncols, double complex *v, int ldv)
{
    return sv_sweep_solver_precond(((counting *)content)->inner, ncols, v, ldv);
}

static void counting_release(void *content) { sv_sweep_solver_release(((counting *)content)->inner); }

static const sv_sweep_solver_ops counting_ops = {.name = "counting", .setup = counting_setup,
                                                 .precond = counting_precond, .release = counting_release};

static sv_sweep_solver *counting_create(const synth *s, counting *c)
{
    sv_sweep_solver *out;
    memset(c, 0, sizeof *c);
    assert_int_equal(sv_sweep_solver_create_builtin(NULL, s->model, SV_SWEEP_LAPACK, 0.0, &c->inner), SV_OK);
    assert_int_equal(sv_sweep_solver_create(NULL, s->model, &counting_ops, c, &out), SV_OK);
    return out;
}

static void counting_destroy(sv_sweep_solver *solver, counting *c)
{
    sv_sweep_solver_destroy(solver);
    sv_sweep_solver_destroy(c->inner);
}

static void test_custom_solver_unsorted_and_duplicate_frequencies(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 80, 16, 2, 2, 0.05, 18);
    double f[9] = {5e9, 1e9, 9e9, 3e9, 5e9, 7e9, 2e9, 8e9, 4e9};
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    counting cs;
    o.solver = counting_create(&s, &cs);
    o.derivatives = -1; /* solutions only */
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run(NULL, s.model, 9, f, &o, &res), SV_OK);
    int calls = cs.setups;
    assert_int_equal(calls, res->n_exact);
    /* the initial samples, found in unsorted input: the grid points nearest
     * the band's Chebyshev points 1.54, 5 and 8.46 GHz (2, 5 and 8 GHz) */
    assert_true(res->exact[6] && (res->exact[0] || res->exact[4]) && res->exact[7]);
    assert_true(max_s_error(&s, res, NULL) < 1e-9);
    sv_sweep_result_destroy(res);
    counting_destroy(o.solver, &cs);
    synth_destroy(&s);
}

/* A caller's solver is asked for the sweep's derivative order and its
 * derivatives enter the basis: the sweep then needs no more exact solves
 * than with the built-in solver, and fewer than with solutions alone. */
static void test_custom_solver_with_derivatives(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 120, 16, 2, 3, 0.05, 21);
    double *f = linspace(1e9, 10e9, 41);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    sv_sweep_result *plain = NULL, *deriv = NULL, *builtin = NULL;
    counting cs;
    o.solver = counting_create(&s, &cs);
    o.derivatives = -1; /* solutions only */
    assert_int_equal(sv_sweep_run(NULL, s.model, 41, f, &o, &plain), SV_OK);
    o.derivatives = 0;
    cs.setups = 0;
    assert_int_equal(sv_sweep_run(NULL, s.model, 41, f, &o, &deriv), SV_OK);
    int calls = cs.setups, deriv_asked = cs.nderiv;
    assert_int_equal(calls, deriv->n_exact);
    assert_int_equal(deriv_asked, 3); /* the default order */
    counting_destroy(o.solver, &cs);
    o.solver = NULL;
    assert_int_equal(sv_sweep_run(NULL, s.model, 41, f, &o, &builtin), SV_OK);
    print_message("exact solves: solutions only %d, custom with derivatives %d, built-in %d\n", plain->n_exact,
                  deriv->n_exact, builtin->n_exact);
    assert_true(deriv->converged);
    assert_true(deriv->n_exact < plain->n_exact);
    assert_true(abs(deriv->n_exact - builtin->n_exact) <= 1);
    assert_true(max_s_error(&s, deriv, NULL) < 1e-9);
    /* the entry point's argument checks */
    double complex x[240];
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, 1e9, SV_SWEEP_MIXED, 0.0, x, 120, 4, x, 120, NULL),
                     SV_ERR_ARG);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, 1e9, SV_SWEEP_MIXED, 0.0, x, 120, 1, NULL, 120, NULL),
                     SV_ERR_ARG);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, 1e9, SV_SWEEP_MIXED, 0.5, x, 120, 0, NULL, 0, NULL),
                     SV_ERR_ARG);
    sv_sweep_result_destroy(plain);
    sv_sweep_result_destroy(deriv);
    sv_sweep_result_destroy(builtin);
    free(f);
    synth_destroy(&s);
}

static void test_outputs_other_than_b(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 60, 16, 2, 2, 0.05, 21);
    int n = 60;
    double *c = calloc((size_t)n * 3, sizeof(double));
    for (int i = 0; i < n; i++) c[i] = 1.0, c[n + i] = (double)i / n, c[2 * n + i] = i == 7;
    assert_int_equal(sv_sweep_model_set_output(s.model, 3, c, n), SV_OK);
    double f[5] = {1e9, 2e9, 3e9, 4e9, 5e9};
    sv_sweep_result *res = NULL;
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    o.tolerance = 1e-10;
    assert_int_equal(sv_sweep_run(NULL, s.model, 5, f, &o, &res), SV_OK);
    assert_int_equal(res->nout, 3);
    double complex *x = malloc(sizeof(double complex) * n * 2);
    for (int i = 0; i < 5; i++) {
        synth_solve(&s, f[i], x);
        for (int j = 0; j < 2; j++)
            for (int a = 0; a < 3; a++) {
                double complex ref = 0;
                for (int r = 0; r < n; r++) ref += c[a * n + r] * x[j * n + r];
                assert_true(cabs(res->h[(size_t)i * 6 + j * 3 + a] - ref) <= 1e-6 * cabs(ref) + 1e-15);
            }
    }
    free(x);
    free(c);
    sv_sweep_result_destroy(res);
    synth_destroy(&s);
}

static void test_sweep_errors(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 40, 16, 2, 2, 0.05, 1);
    double f[3] = {1e9, 2e9, 3e9};
    sv_sweep_result *res = NULL;
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    assert_int_equal(sv_sweep_run(NULL, s.model, 0, f, NULL, &res), SV_ERR_ARG);
    assert_int_equal(sv_sweep_run(NULL, NULL, 3, f, NULL, &res), SV_ERR_ARG);
    assert_int_equal(sv_sweep_run(NULL, s.model, 3, f, NULL, NULL), SV_ERR_ARG);
    f[1] = NAN;
    assert_int_equal(sv_sweep_run(NULL, s.model, 3, f, NULL, &res), SV_ERR_NONFINITE);
    assert_non_null(strstr(sv_last_error(), "freq[1]"));
    f[1] = 2e9;
    o.tolerance = -1;
    assert_int_equal(sv_sweep_run(NULL, s.model, 3, f, &o, &res), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "tolerance"));
    sv_sweep_options_default(&o);
    o.max_exact = -2;
    assert_int_equal(sv_sweep_run(NULL, s.model, 3, f, &o, &res), SV_ERR_ARG);
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    f[0] = 0.0; /* c_1 = −j/ω is infinite at DC */
    assert_int_equal(sv_sweep_run(NULL, s.model, 3, f, &o, &res), SV_ERR_NONFINITE);
    f[0] = 1e9;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    size_t need = sv_sweep_estimate_bytes(40, 3, 2, 2, 16, 3, &o);
    assert_true(need > 40 * 40 * 16);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, need / 2), SV_OK);
    assert_int_equal(sv_sweep_run(ctx, s.model, 3, f, &o, &res), SV_ERR_BUDGET);
    assert_null(res);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, need), SV_OK);
    assert_int_equal(sv_sweep_run(ctx, s.model, 3, f, &o, &res), SV_OK);
    assert_true(res->peak_bytes <= need);
    sv_sweep_result_destroy(res);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    synth_destroy(&s);
}

static int cancel_progress(void *user, const char *phase, double frac)
{
    (void)phase;
    (void)frac;
    return ++*(int *)user >= 2;
}

static void test_cancel(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 40, 16, 2, 2, 0.05, 1);
    double *f = linspace(1e9, 1e10, 21);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    int n = 0;
    sv_ctx_set_progress(ctx, cancel_progress, &n);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_LAPACK;
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run(ctx, s.model, 21, f, &o, &res), SV_ERR_CANCELLED);
    assert_null(res);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    free(f);
    synth_destroy(&s);
}

int main(void)
{
    /* One thread: these models are small (n ≤ 200), and on a busy machine
     * OpenMP teams spin-wait for descheduled threads, which made this
     * program a hundred times slower with two. The threaded products are
     * checked in test_model. */
    sv_threads_serial_begin(); /* for the whole program: never restored */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_afs_two_ports),
        cmocka_unit_test(test_afs_three_ports),
        cmocka_unit_test(test_residual_estimate_matches_true_residual),
        cmocka_unit_test(test_derivatives_against_differences),
        cmocka_unit_test(test_cap_and_exact_all),
        cmocka_unit_test(test_custom_solver_unsorted_and_duplicate_frequencies),
        cmocka_unit_test(test_custom_solver_with_derivatives),
        cmocka_unit_test(test_outputs_other_than_b),
        cmocka_unit_test(test_sweep_errors),
        cmocka_unit_test(test_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
