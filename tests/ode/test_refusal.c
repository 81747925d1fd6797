/* Recoverable failures of the user's functions (docs/ode.md): f returning
 * > 0 refuses a trial state — the step is rejected and retried smaller,
 * counted in stats.nrefused, at most max_refusals times in a row — while
 * < 0 ends the trajectory.
 *
 * The circuit: a half-wave rectifier, a source V0 sin(2π·50 t) behind Rs =
 * 10 Ω charging node a (Cp = 1 nF), a diode from a to b, and C = 100 µF
 * with RL = 1 kΩ at b:
 *
 *   Cp a' = (Vs − a)/Rs − Id(a − b),   C b' = Id(a − b) − b/RL,
 *   Id(v) = Is (exp(v/nVt) − 1),  Is = 1e-14 A, nVt = 25.85 mV.
 *
 * Stage values of a large step overshoot the diode voltage by volts, and
 * exp overflows beyond v/nVt ≈ 709: f refuses such states. Reference:
 * scipy's Radau at rtol 1e-12 (tests/ode/data/make_scipy_refs.py, agreeing
 * with its BDF to 3e-10). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scipy_refs.h"
#include "solvent/ode.h"
#include "sv_test.h"

static const double Rs = 10, Cp = 1e-9, C = 1e-4, RL = 1e3, Is = 1e-14, nVt = 0.02585, fr = 50;
static const double TS[6] = {0.003, 0.007, 0.013, 0.021, 0.047, 0.0975};

/* p[0] = V0; u: the return code for a refused state (1: refuse, -1: fail) */
static int rect_eval(double t, const double *y, double V0, double *dy, int refuse)
{
    double x = (y[0] - y[1]) / nVt;
    if (x > 700) return refuse; /* exp(x) would overflow */
    double id = Is * expm1(x), vs = V0 * sin(2 * 3.14159265358979323846 * fr * t);
    dy[0] = ((vs - y[0]) / Rs - id) / Cp;
    dy[1] = (id - y[1] / RL) / C;
    return 0;
}
static int rect_f(double t, const double *y, const double *p, double *dy, void *u)
{
    return rect_eval(t, y, p[0], dy, *(const int *)u);
}
/* Batched: one return code for all lanes (the solver then asks each lane). */
static int rect_fb(int W, const double *t, const double *y, const double *p, double *dy, void *u)
{
    int rc = 0;
    for (int w = 0; w < W; w++) {
        double yy[2] = {y[w], y[W + w]}, d[2] = {0, 0};
        int r = rect_eval(t[w], yy, p[w], d, *(const int *)u);
        if (r) rc = r;
        dy[w] = d[0];
        dy[W + w] = d[1];
    }
    return rc;
}
static int rect_j(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)u;
    double g = Is * exp(fmin((y[0] - y[1]) / nVt, 700)) / nVt, w = 2 * 3.14159265358979323846 * fr;
    J[0] = (-1 / Rs - g) / Cp, J[1] = g / Cp;
    J[2] = g / C, J[3] = (-g - 1 / RL) / C;
    if (dfdt) dfdt[0] = p[0] * w * cos(w * t) / Rs / Cp, dfdt[1] = 0;
    return 0;
}

static sv_ode_problem *rectifier(int *refuse, int batched)
{
    sv_ode_problem_desc d = {.name = "rectifier", .n = 2, .nparams = 1, .f = rect_f, .jac = rect_j,
                             .nonautonomous = 1, .user = refuse};
    if (batched) d.f_batch = rect_fb;
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    return P;
}

/* One thread, so that `lanes` is the lane count that runs (the solver
 * narrows it for fewer trajectories than lanes × threads). */
static void solve_rect(sv_ode_problem *P, double rtol, int ntraj, const double *V0, int lanes, double *out,
                       sv_ode_traj_status *st, sv_ode_stats *stats)
{
    sv_ctx *ctx = NULL;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 1);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = 1e-9;
    o.lanes = lanes;
    o.tstops = TS; /* steps end at the save times: the comparison sees no interpolation */
    o.ntstops = 5;
    double y0[2] = {0, 0};
    sv_ode_ensemble e = {.ntraj = ntraj, .nsave = 6, .tsave = TS, .y0 = y0, .y0_shared = 1, .params = V0,
                         .out = out, .status = st, .stats = stats};
    assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_OK);
    sv_ctx_destroy(ctx);
}

/* Refused states are retried smaller and the circuit reaches its reference;
 * the same f failing (< 0) instead ends the trajectory there. */
static void test_rectifier(void **s)
{
    (void)s;
    int refuse = 1;
    sv_ode_problem *P = rectifier(&refuse, 0);
    const double V0 = 10, rtols[2] = {1e-6, 1e-8};
    for (int k = 0; k < 2; k++) {
        double out[12];
        sv_ode_traj_status st;
        sv_ode_stats stats;
        solve_rect(P, rtols[k], 1, &V0, 0, out, &st, &stats);
        double err = 0;
        for (int q = 0; q < 12; q++)
            err = fmax(err, fabs(out[q] - REF_RECTIFIER[q / 2][q % 2]) / (fabs(REF_RECTIFIER[q / 2][q % 2]) + 1e-3));
        printf("rectifier rtol %.0e: %s, steps %ld/%ld, %ld refused, error vs Radau %.1e\n", rtols[k],
               sv_ode_traj_status_string(st), stats.accepted, stats.rejected, stats.nrefused, err);
        assert_int_equal(st, SV_ODE_SUCCESS);
        assert_true(stats.nrefused > 0);
        assert_true(stats.rejected >= stats.nrefused);
        assert_true(err < 10 * rtols[k]);
    }
    refuse = -1;
    double out[12];
    sv_ode_traj_status st;
    sv_ode_stats stats;
    solve_rect(P, 1e-6, 1, &V0, 0, out, &st, &stats);
    printf("rectifier with f failing (-1) there: %s at t = %g\n", sv_ode_traj_status_string(st), stats.t_reached);
    assert_int_equal(st, SV_ODE_F_FAILED);
    assert_true(stats.t_reached < TS[5]);
    sv_ode_problem_destroy(P);
}

/* A batched f has one return code for all its lanes: each lane's own
 * outcome is found by asking it alone, so a trajectory's numbers do not
 * depend on which neighbours refused (bit for bit as run alone). */
static void test_refusal_batched(void **s)
{
    (void)s;
    int refuse = 1;
    sv_ode_problem *Pb = rectifier(&refuse, 1), *P1 = rectifier(&refuse, 0);
    const double V0[4] = {10, 12, 8, 10.5};
    double out[4 * 12], one[12];
    sv_ode_traj_status st[4], st1;
    sv_ode_stats stats[4], stats1;
    solve_rect(Pb, 1e-6, 4, V0, 4, out, st, stats);
    long refused = 0;
    for (int t = 0; t < 4; t++) {
        solve_rect(P1, 1e-6, 1, &V0[t], 1, one, &st1, &stats1);
        assert_int_equal(st[t], SV_ODE_SUCCESS);
        assert_int_equal(st1, SV_ODE_SUCCESS);
        assert_memory_equal(out + 12 * t, one, sizeof one);
        assert_int_equal(stats[t].nrefused, stats1.nrefused);
        refused += stats[t].nrefused;
    }
    printf("batched rectifier ensemble: %ld refusals, every trajectory as run alone\n", refused);
    assert_true(refused > 0);
    sv_ode_problem_destroy(Pb);
    sv_ode_problem_destroy(P1);
}

/* Ensembles of the rectifier (n = 2, dense) in 4, 8 and 16 lanes run the
 * fused step for tiny systems: its refused lanes take the driver's control
 * and every trajectory is bit for bit as run alone (one lane: the general
 * path), with the scalar and with the batched f. */
static void test_refusal_fused(void **s)
{
    (void)s;
    enum { NT = 16 };
    int refuse = 1;
    double V0[NT], out[NT * 12], one[12];
    for (int t = 0; t < NT; t++) V0[t] = 8 + 0.25 * t;
    sv_ode_traj_status st[NT], st1;
    sv_ode_stats stats[NT], stats1;
    const int lanes[3] = {4, 8, 16};
    long refused = 0;
    for (int batched = 0; batched < 2; batched++) {
        sv_ode_problem *P = rectifier(&refuse, batched);
        for (int k = 0; k < 3; k++) {
            solve_rect(P, 1e-6, NT, V0, lanes[k], out, st, stats);
            for (int t = 0; t < NT; t++) {
                solve_rect(P, 1e-6, 1, &V0[t], 1, one, &st1, &stats1);
                assert_int_equal(st[t], SV_ODE_SUCCESS);
                assert_int_equal(st1, SV_ODE_SUCCESS);
                assert_memory_equal(out + 12 * t, one, sizeof one);
                assert_int_equal(stats[t].nrefused, stats1.nrefused);
                assert_int_equal(stats[t].rejected, stats1.rejected);
                refused += stats[t].nrefused;
            }
        }
        sv_ode_problem_destroy(P);
    }
    printf("rectifier ensembles in 4, 8 and 16 lanes: %ld refusals, every trajectory as run alone\n", refused);
    assert_true(refused > 0);
}

/* y' = −y that refuses its first `left` stage states beyond t = 0.5, with a
 * stop at 0.5: every attempt from there is refused until `left` runs out
 * (consecutive refusals), each costing one rejected attempt, and the
 * solution is unaffected. */
typedef struct counted {
    int left;
} counted;
static int f_counted(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)p;
    counted *c = u;
    if (t > 0.5 && c->left > 0) {
        c->left--;
        return 1;
    }
    dy[0] = -y[0];
    return 0;
}
static int j_counted(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)dfdt, (void)u;
    J[0] = -1;
    return 0;
}

static void run_counted(sv_ode_method m, int left, int max_refusals, sv_ode_traj_status want)
{
    counted c = {left};
    sv_ode_problem_desc d = {.name = "counted", .n = 1, .f = f_counted, .jac = j_counted, .user = &c};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = m;
    o.max_refusals = max_refusals;
    double stop = 0.5;
    o.tstops = &stop;
    o.ntstops = 1;
    double y0 = 1, ts = 2, out = 0;
    sv_ode_traj_status st;
    sv_ode_stats stats;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = &y0, .out = &out, .status = &st,
                         .stats = &stats};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    printf("%s, %d refusals, max_refusals %d: %s, %ld refused, %ld rejected\n", m ? "Tsit5" : "Rodas5P", left,
           max_refusals, sv_ode_traj_status_string(st), stats.nrefused, stats.rejected);
    assert_int_equal(st, want);
    if (want == SV_ODE_SUCCESS) {
        assert_int_equal(stats.nrefused, left);
        assert_true(stats.rejected >= left);
        sv_assert_close(out, exp(-2.0), 1e-5, 0);
    } else {
        assert_int_equal(stats.nrefused, max_refusals);
    }
    sv_ode_problem_destroy(P);
}

static void test_refusal_counted(void **s)
{
    (void)s;
    for (int m = 0; m < 2; m++) {
        run_counted((sv_ode_method)m, 5, 0, SV_ODE_SUCCESS);
        run_counted((sv_ode_method)m, 5, 3, SV_ODE_F_FAILED);
    }
}

/* A refusal at an accepted state (here y0) cannot be helped by a smaller
 * step: the trajectory ends with SV_ODE_F_FAILED. */
static int f_refuse_all(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)y, (void)p, (void)dy, (void)u;
    return 1;
}
static void test_refusal_at_start(void **s)
{
    (void)s;
    sv_ode_problem_desc d = {.name = "refuse", .n = 1, .f = f_refuse_all, .jac_source = SV_ODE_JAC_FD};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    double y0 = 1, ts = 1, out;
    sv_ode_traj_status st;
    sv_ode_stats stats;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = &y0, .out = &out, .status = &st,
                         .stats = &stats};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_F_FAILED);
    assert_int_equal(stats.nrefused, 1);
    sv_ode_problem_destroy(P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rectifier),
        cmocka_unit_test(test_refusal_batched),
        cmocka_unit_test(test_refusal_fused),
        cmocka_unit_test(test_refusal_counted),
        cmocka_unit_test(test_refusal_at_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
