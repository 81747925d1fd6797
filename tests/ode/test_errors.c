/* Bad problems and bad requests: clear errors for bad input, and clear
 * per-trajectory statuses when some trajectories of an ensemble fail while
 * the others finish. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/ode.h"
#include "sv_test.h"

/* y' = −p0·y, except: p1 = 1 → NaN once t > 0.5; p1 = 2 → callback fails
 * once t > 0.5; p1 = 3 → y' = y² (blows up at t = 1 for y0 = 1). */
static int f_bad(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)u;
    if (p[1] == 1 && t > 0.5) {
        dy[0] = NAN;
        return 0;
    }
    if (p[1] == 2 && t > 0.5) return -1;
    dy[0] = p[1] == 3 ? y[0] * y[0] : -p[0] * y[0];
    return 0;
}
static int j_bad(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    J[0] = p[1] == 3 ? 2 * y[0] : -p[0];
    return 0;
}

static sv_ode_problem *make(void)
{
    sv_ode_problem_desc d = {.name = "bad", .n = 1, .nparams = 2, .f = f_bad, .jac = j_bad};
    sv_ode_problem *P;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    return P;
}

/* The default options with Rodas5P (m = 0) or Tsit5 (m = 1). */
static sv_ode_options options_for(int m)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = m ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
    return o;
}

static void test_per_trajectory_statuses(void **s)
{
    (void)s;
    sv_ode_problem *P = make();
    for (int m = 0; m < 2; m++) {
        sv_ode_options o = options_for(m);
        double p[5 * 2] = {1, 0, 1, 1, 1, 2, 1, 3, 2, 0}, y0[5] = {1, 1, 1, 1, NAN}, ts = 2.0, out[5];
        sv_ode_traj_status st[5];
        sv_ode_stats stats[5];
        sv_ode_ensemble e = {.ntraj = 5, .t0 = 0, .nsave = 1, .tsave = &ts, .y0 = y0, .params = p, .out = out,
                             .status = st, .stats = stats};
        assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
        for (int t = 0; t < 5; t++)
            printf("%s traj %d: %s (t reached %.17g)\n", m ? "Tsit5" : "Rodas5P", t, sv_ode_traj_status_string(st[t]),
                   stats[t].t_reached);
        assert_int_equal(st[0], SV_ODE_SUCCESS);
        sv_assert_close(out[0], exp(-2.0), 1e-5, 0);
        assert_int_equal(st[1], SV_ODE_NONFINITE);
        assert_int_equal(st[2], SV_ODE_F_FAILED);
        assert_true(st[3] == SV_ODE_STEP_TOO_SMALL || st[3] == SV_ODE_NONFINITE);
        /* a linearly implicit method may step a hair past the pole at t = 1 */
        assert_true(stats[3].t_reached < 1.001 && stats[3].t_reached > 0.99);
        assert_int_equal(st[4], SV_ODE_NONFINITE); /* NaN initial value */
    }
    sv_ode_problem_destroy(P);
}

static void test_max_steps(void **s)
{
    (void)s;
    sv_ode_problem *P = make();
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.max_steps = 5;
    o.rtol = 1e-10;
    double p[2] = {1, 0}, y0 = 1, ts = 10, out;
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = &y0, .params = p, .out = &out, .status = &st};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_MAX_STEPS);
    sv_ode_problem_destroy(P);
}

static void expect_error(sv_status got, sv_status want, const char *fragment)
{
    assert_int_equal(got, want);
    printf("error: %s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), fragment));
}

static void test_bad_requests(void **s)
{
    (void)s;
    sv_ode_problem *P = make();
    sv_ode_options o;
    sv_ode_options_default(&o);
    double p[2] = {1, 0}, y0 = 1, ts[2] = {1, 2}, out[2];
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 2, .tsave = ts, .y0 = &y0, .params = p, .out = out};
    o.rtol = 1e-20;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "rtol");
    o.rtol = 0;
    o.atol = 0;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "no error tolerance");
    o.rtol = -1;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "rtol = -1");
    sv_ode_options_default(&o);
    o.lanes = 3;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "lanes = 3");
    sv_ode_options_default(&o);
    o.rtol = 1e300; /* once accepted: rober came out as (-1.9e57, -1e30, -3.1e34) */
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "rtol = 1e+300: expected a value >= 0 and <= 0.1");
    o.rtol = INFINITY;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "rtol = inf");
    o.rtol = SV_ODE_RTOL_MAX; /* the bound itself is a value */
    o.atol = 1e300;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "atol = 1e+300: expected at most 1 ");
    /* the bound is the state's scale, max(1, the largest |y0|): 1 above, 4 here */
    y0 = -4;
    o.atol = 4.5;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "atol = 4.5: expected at most 4 ");
    double avec[1] = {20};
    o.atol_vec = avec;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "atol_vec[0] = 20");
    avec[0] = 4;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    /* one y0 shared by a large ensemble: its n values alone set the scale */
    double p2[2000], out2[2000];
    for (int k = 0; k < 2000; k++) p2[k] = k % 2 ? 0 : 1;
    sv_ode_ensemble shared = {.ntraj = 1000, .nsave = 2, .tsave = ts, .y0 = &y0, .y0_shared = 1, .params = p2,
                              .out = out2};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &shared), SV_OK);
    avec[0] = 4.5;
    expect_error(sv_ode_solve(NULL, P, &o, &shared), SV_ERR_ARG, "atol_vec[0] = 4.5: expected at most 4 ");
    y0 = 1;
    sv_ode_options_default(&o);
    ts[1] = 0.5;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "tsave must increase");
    ts[1] = 2;
    e.params = NULL;
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "params is NULL");
    e.params = p;
    expect_error(sv_ode_solve(NULL, NULL, &o, &e), SV_ERR_ARG, "prob");
    /* a memory budget too small for the workspace */
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_memory_limit(ctx, 64);
    expect_error(sv_ode_solve(ctx, P, &o, &e), SV_ERR_BUDGET, "ode");
    sv_ctx_destroy(ctx);
    sv_ode_problem_destroy(P);
}

static int cancel_now(void *u, const char *phase, double f)
{
    (void)u, (void)phase, (void)f;
    return 1;
}

static void test_cancel(void **s)
{
    (void)s;
    sv_ode_problem *P = make();
    sv_ode_options o;
    sv_ode_options_default(&o);
    double p[2] = {1, 0}, y0 = 1, ts = 1, out[3];
    sv_ode_traj_status st[3];
    sv_ode_ensemble e = {.ntraj = 3, .nsave = 1, .tsave = &ts, .y0 = &y0, .y0_shared = 1, .params = p,
                         .params_shared = 1, .out = out, .status = st};
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_progress(ctx, cancel_now, NULL);
    assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_ERR_CANCELLED);
    for (int t = 0; t < 3; t++) assert_int_equal(st[t], SV_ODE_NOT_RUN);
    sv_ctx_destroy(ctx);
    sv_ode_problem_destroy(P);
}

/* Every output entry is defined whatever the status: save times a
 * trajectory did not reach hold NaN, never what was in out[] before. */
static void test_unreached_outputs_are_nan(void **s)
{
    (void)s;
    sv_ode_problem *P = make();
    for (int m = 0; m < 2; m++) {
        sv_ode_options o = options_for(m);
        /* a good trajectory, one that fails after t = 0.5, one with NaN y0 */
        double p[3 * 2] = {1, 0, 1, 2, 1, 0}, y0[3] = {1, 1, NAN}, ts[4] = {0.25, 0.5, 1, 2}, out[3 * 4];
        for (int k = 0; k < 12; k++) out[k] = 777.0;
        sv_ode_traj_status st[3];
        sv_ode_stats stats[3];
        sv_ode_ensemble e = {.ntraj = 3, .t0 = 0, .nsave = 4, .tsave = ts, .y0 = y0, .params = p, .out = out,
                             .status = st, .stats = stats};
        assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
        assert_int_equal(st[0], SV_ODE_SUCCESS);
        for (int k = 0; k < 4; k++) sv_assert_close(out[k], exp(-ts[k]), 1e-5, 0);
        assert_int_equal(st[1], SV_ODE_F_FAILED);
        /* up to the last accepted time the solution, after it NaN */
        assert_true(stats[1].t_reached > 0.25 && stats[1].t_reached <= 0.5);
        for (int k = 0; k < 4; k++) {
            if (ts[k] <= stats[1].t_reached)
                sv_assert_close(out[4 + k], exp(-ts[k]), 1e-5, 0);
            else
                assert_true(isnan(out[4 + k]));
        }
        assert_int_equal(st[2], SV_ODE_NONFINITE);
        for (int k = 8; k < 12; k++) assert_true(isnan(out[k]));
    }
    /* a cancelled solve: nothing ran, everything NaN */
    sv_ode_options o;
    sv_ode_options_default(&o);
    double p[2] = {1, 0}, y0 = 1, ts = 1, out[3] = {777, 777, 777};
    sv_ode_ensemble e = {.ntraj = 3, .nsave = 1, .tsave = &ts, .y0 = &y0, .y0_shared = 1, .params = p,
                         .params_shared = 1, .out = out};
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_progress(ctx, cancel_now, NULL);
    assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_ERR_CANCELLED);
    for (int t = 0; t < 3; t++) assert_true(isnan(out[t]));
    sv_ctx_destroy(ctx);
    sv_ode_problem_destroy(P);
}

static void test_bad_problems(void **s)
{
    (void)s;
    sv_ode_problem *P = NULL;
    int rp[3] = {0, 1, 2}, ci_bad[2] = {0, 5}, ci_dup[3] = {1, 0, 1}, rp2[3] = {0, 2, 3};
    sv_ode_problem_desc d = {.name = "pat", .n = 2, .f = f_bad, .jac = j_bad, .rowptr = rp, .colind = ci_bad};
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_PATTERN, "colind[1] = 5");
    d.rowptr = rp2;
    d.colind = ci_dup;
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_PATTERN, "strictly increasing");
    d.colind = NULL;
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_PATTERN, "both rowptr and colind");
    sv_ode_problem_desc d2 = {.name = "x", .n = 0, .f = f_bad};
    expect_error(sv_ode_problem_create(NULL, &d2, &P), SV_ERR_ARG, "n = 0");
    d2.n = 2;
    d2.f = NULL;
    expect_error(sv_ode_problem_create(NULL, &d2, &P), SV_ERR_ARG, "f is NULL");
    d2.f = f_bad;
    d2.jac_source = SV_ODE_JAC_COMPLEX_STEP;
    expect_error(sv_ode_problem_create(NULL, &d2, &P), SV_ERR_ARG, "f_complex is NULL");
    d2.jac_source = SV_ODE_JAC_ANALYTIC;
    expect_error(sv_ode_problem_create(NULL, &d2, &P), SV_ERR_ARG, "neither jac");
    assert_null(P);
    sv_ode_builtin *b = NULL;
    expect_error(sv_ode_builtin_create(NULL, "nosuch", 0, SV_ODE_JAC_ANALYTIC, &b), SV_ERR_ARG, "nosuch");
    expect_error(sv_ode_builtin_create(NULL, "bruss2d", 2.5, SV_ODE_JAC_ANALYTIC, &b), SV_ERR_ARG, "grid N");
    /* an argument a problem has no use for is refused, not ignored */
    expect_error(sv_ode_builtin_create(NULL, "rober", 5, SV_ODE_JAC_ANALYTIC, &b), SV_ERR_ARG,
                 "rober: arg = 5: this problem takes no argument");
    expect_error(sv_ode_builtin_create(NULL, "pollu", 1, SV_ODE_JAC_ANALYTIC, &b), SV_ERR_ARG, "pollu: arg = 1");
}

/* Sizes whose products do not fit: a dense problem whose n² Jacobian
 * entries exceed int, an ensemble whose outputs exceed size_t. Refused with
 * SV_ERR_ARG naming the sizes, never computed with a wrapped product. */
static void test_impossible_sizes(void **s)
{
    (void)s;
    sv_ode_problem *P = NULL;
    sv_ode_problem_desc d = {.name = "big", .n = 65536, .f = f_bad, .jac = j_bad};
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG, "n = 65536");
    d.n = 46341; /* the first n with n² > INT_MAX */
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG, "n = 46341");
    d.n = INT_MAX;
    expect_error(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG, "n = 2147483647");
    assert_null(P);
    /* a diagonal pattern of 2^20 states, 2^20 save times, INT_MAX trajectories */
    int n = 1 << 20;
    int *rp = malloc(sizeof(int) * ((size_t)n + 1)), *ci = malloc(sizeof(int) * (size_t)n);
    double *ts = malloc(sizeof(double) * (size_t)n), *y0 = calloc((size_t)n, sizeof(double)), out = 0;
    assert_true(rp && ci && ts && y0);
    for (int i = 0; i <= n; i++) rp[i] = i;
    for (int i = 0; i < n; i++) ci[i] = i, ts[i] = i + 1;
    sv_ode_problem_desc dp = {.name = "diag", .n = n, .nparams = 2, .f = f_bad, .jac = j_bad, .rowptr = rp, .colind = ci};
    assert_int_equal(sv_ode_problem_create(NULL, &dp, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    double p[2] = {1, 0};
    sv_ode_ensemble e = {.ntraj = INT_MAX, .nsave = n, .tsave = ts, .y0 = y0, .y0_shared = 1, .params = p,
                         .params_shared = 1, .out = &out};
    expect_error(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG, "ntraj = 2147483647");
    assert_true(out == 0); /* nothing written */
    sv_ode_problem_destroy(P);
    free(rp), free(ci), free(ts), free(y0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_trajectory_statuses), cmocka_unit_test(test_max_steps),
        cmocka_unit_test(test_bad_requests),            cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_bad_problems),            cmocka_unit_test(test_unreached_outputs_are_nan),
        cmocka_unit_test(test_impossible_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
