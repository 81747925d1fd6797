/* Observed order of convergence with fixed steps, against the closed-form
 * solution of y' = −2 t y², y(0) = 1: y(t) = 1/(1 + t²) (non-autonomous, so
 * Rodas5P's ∂f/∂t terms are exercised), plus the linear rotation
 * y1' = −y2, y2' = y1 (cos t, sin t). Halving h must divide the end error by
 * about 2⁵ = 32 for both methods, with the double and the refined single
 * precision LU (Rodas5P is not a W-method: an inexact stage solve or
 * Jacobian would show as order 2). Dense output at off-grid save times must
 * converge with order >= 4. The same holds for the sensitivities (below). */
#include <math.h>
#include <stdio.h>

#include "solvent/ode.h"
#include "sv_test.h"

static int f_q(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)p, (void)u;
    dy[0] = -2 * t * y[0] * y[0];
    dy[1] = -y[2];
    dy[2] = y[1];
    return 0;
}
static int j_q(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)p, (void)u;
    for (int i = 0; i < 9; i++) J[i] = 0;
    J[0] = -4 * t * y[0];
    J[1 * 3 + 2] = -1;
    J[2 * 3 + 1] = 1;
    if (dfdt) {
        dfdt[0] = -2 * y[0] * y[0];
        dfdt[1] = dfdt[2] = 0;
    }
    return 0;
}

static double run(sv_ode_method m, sv_ode_lu_precision lu, double h, double *dense_err)
{
    sv_ode_problem_desc d = {.name = "order", .n = 3, .f = f_q, .jac = j_q, .nonautonomous = 1};
    sv_ode_problem *P;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = m;
    o.lu = lu;
    o.fixed_step = h;
    double ts[3] = {0.3183, 1.1111, 2.0}, y0[3] = {1, 1, 0}, out[9];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = 3, .tsave = ts, .y0 = y0, .out = out, .status = &st};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    double err = 0, derr = 0;
    for (int s = 0; s < 3; s++) {
        double t = ts[s];
        double ex[3] = {1 / (1 + t * t), cos(t), sin(t)};
        for (int i = 0; i < 3; i++) {
            double d_ = fabs(out[s * 3 + i] - ex[i]);
            if (s == 2) err = fmax(err, d_);
            else derr = fmax(derr, d_);
        }
    }
    *dense_err = derr;
    sv_ode_problem_destroy(P);
    return err;
}

static void check_order(sv_ode_method m, sv_ode_lu_precision lu)
{
    double hs[3] = {0.1, 0.05, 0.025}, e[3], de[3];
    for (int k = 0; k < 3; k++) e[k] = run(m, lu, hs[k], &de[k]);
    double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
    double q2 = log2(de[1] / de[2]);
    printf("%s lu %s: errors %.3e %.3e %.3e, observed order %.2f %.2f, dense output %.2f\n",
           m == SV_ODE_RODAS5P ? "Rodas5P" : "Tsit5", lu ? "single" : "double", e[0], e[1], e[2], p1, p2, q2);
    assert_true(p2 > 4.6 && p2 < 5.6);
    assert_true(p1 > 4.4);
    assert_true(q2 > 3.8);
}

static void test_rodas5p_order(void **s)
{
    (void)s;
    check_order(SV_ODE_RODAS5P, SV_ODE_LU_DOUBLE);
}
static void test_rodas5p_order_single_lu(void **s)
{
    (void)s;
    check_order(SV_ODE_RODAS5P, SV_ODE_LU_SINGLE);
}
static void test_tsit5_order(void **s)
{
    (void)s;
    check_order(SV_ODE_TSIT5, SV_ODE_LU_DOUBLE);
}

/* ---- sensitivities ----------------------------------------------------
 * The same two systems with their rates as parameters, y1' = −p0 t y1²
 * (p0 = 2) and the rotation at angular rate p1 = 1: y1 = 1/(1 + p0 t²/2),
 * ∂y1/∂p0 = −(t²/2)·y1², ∂y1/∂y1(0) = y1², and ∂(cos p1 t, sin p1 t)/∂p1 =
 * t·(−sin t, cos t). The sensitivities must converge with order 5 too —
 * for Rodas5P only if the second-order coupling (here the analytic jac_dir,
 * with ∂f/∂t's derivative: the problem is non-autonomous) is exact. */
static int fp_q(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)u;
    dy[0] = -p[0] * t * y[0] * y[0];
    dy[1] = -p[1] * y[2];
    dy[2] = p[1] * y[1];
    return 0;
}
static int jp_q(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)u;
    for (int i = 0; i < 9; i++) J[i] = 0;
    J[0] = -2 * p[0] * t * y[0];
    J[1 * 3 + 2] = -p[1];
    J[2 * 3 + 1] = p[1];
    if (dfdt) dfdt[0] = -p[0] * y[0] * y[0], dfdt[1] = dfdt[2] = 0;
    return 0;
}
static int tp_q(double t, const double *y, const double *p, const double *v, const double *vp, double *out, void *u)
{
    (void)u;
    out[0] = -2 * p[0] * t * y[0] * v[0] - (vp ? vp[0] * t * y[0] * y[0] : 0);
    out[1] = -p[1] * v[2] - (vp ? vp[1] * y[2] : 0);
    out[2] = p[1] * v[1] + (vp ? vp[1] * y[1] : 0);
    return 0;
}
static int dp_q(double t, const double *y, const double *p, const double *v, const double *vp, double *dv,
                double *ddfdt, void *u)
{
    (void)u;
    double q0 = vp ? vp[0] : 0, q1 = vp ? vp[1] : 0;
    for (int i = 0; i < 9; i++) dv[i] = 0;
    dv[0] = -2 * t * (q0 * y[0] + p[0] * v[0]);
    dv[1 * 3 + 2] = -q1;
    dv[2 * 3 + 1] = q1;
    if (ddfdt) ddfdt[0] = -q0 * y[0] * y[0] - 2 * p[0] * y[0] * v[0], ddfdt[1] = ddfdt[2] = 0;
    return 0;
}

/* Max error of the sensitivities at t = 2 (and at the off-grid save times). */
static double run_sens(sv_ode_method m, double h, double *dense_err)
{
    int sp[2] = {0, 1}, sy[1] = {0};
    sv_ode_problem_desc d = {.name = "order-sens", .n = 3, .nparams = 2, .f = fp_q, .jac = jp_q,
                             .nonautonomous = 1, .nsens_params = 2, .sens_params = sp, .nsens_y0 = 1,
                             .sens_y0 = sy, .sens_source = SV_ODE_SENS_TANGENT, .tangent = tp_q, .jac_dir = dp_q};
    sv_ode_problem *P;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = m;
    o.fixed_step = h;
    double ts[3] = {0.3183, 1.1111, 2.0}, y0[3] = {1, 1, 0}, p[2] = {2, 1}, out[9], S[27];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = 3, .tsave = ts, .y0 = y0, .params = p, .out = out,
                         .sens_out = S, .status = &st};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    double err = 0, derr = 0;
    for (int s = 0; s < 3; s++) {
        double t = ts[s], y1 = 1 / (1 + t * t);
        /* rows i, columns (p0, p1, y1(0)) */
        double ex[3][3] = {{-(t * t / 2) * y1 * y1, 0, y1 * y1}, {0, -t * sin(t), 0}, {0, t * cos(t), 0}};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double d_ = fabs(S[(s * 3 + i) * 3 + j] - ex[i][j]);
                if (s == 2) err = fmax(err, d_);
                else derr = fmax(derr, d_);
            }
    }
    *dense_err = derr;
    sv_ode_problem_destroy(P);
    return err;
}

static void check_sens_order(sv_ode_method m)
{
    double hs[3] = {0.1, 0.05, 0.025}, e[3], de[3];
    for (int k = 0; k < 3; k++) e[k] = run_sens(m, hs[k], &de[k]);
    double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]), q2 = log2(de[1] / de[2]);
    printf("%s sensitivities: errors %.3e %.3e %.3e, observed order %.2f %.2f, dense output %.2f\n",
           m == SV_ODE_RODAS5P ? "Rodas5P" : "Tsit5", e[0], e[1], e[2], p1, p2, q2);
    assert_true(p2 > 4.6 && p2 < 5.6);
    assert_true(p1 > 4.4);
    assert_true(q2 > 3.8);
}

static void test_rodas5p_sens_order(void **s)
{
    (void)s;
    check_sens_order(SV_ODE_RODAS5P);
}
static void test_tsit5_sens_order(void **s)
{
    (void)s;
    check_sens_order(SV_ODE_TSIT5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rodas5p_order),
        cmocka_unit_test(test_rodas5p_order_single_lu),
        cmocka_unit_test(test_tsit5_order),
        cmocka_unit_test(test_rodas5p_sens_order),
        cmocka_unit_test(test_tsit5_sens_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
