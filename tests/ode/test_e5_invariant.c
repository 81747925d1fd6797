/* Declared linear invariants (ode.h's ninvariants / invariants): E5, the
 * stiff test set's chemical pyrolysis (Bari test set, e5.f), in its full
 * four-equation form with y2 − y3 − y4 = 0 declared, and a variant of the
 * same mechanism with other constants; Robertson with y1 + y2 + y3 = 1
 * declared, also added to the built-in by sv_ode_problem_with_invariants;
 * the declared rows' validation; and the fused step's lanes
 * bit for bit as the general path's.
 *
 * Without the declaration the four-equation E5 loses y2 and y3 to rounding
 * that accumulates along the conserved combination (docs/explanation/
 * simd-lanes.md). References: the test set's values at t = 1e13 (RADAU at
 * rtol 1.1e-18; they carry about 3.1 digits, see test_e5.c) and scipy's
 * Radau at rtol 1e-12 on the system with the combination eliminated
 * (tests/ode/data/make_e5_refs.py); Robertson: the test set's reference at
 * t = 1e11 (rober.f). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "e5_refs.h"
#include "solvent/ode.h"
#include "support_ode.h"
#include "sv_test.h"

static const double BARI_E5_Y2 = 0.8867655517642120e-22, BARI_E5_Y3 = 0.8854814626268838e-22;
/* rober.f's reference at t = 1e11 */
static const double BARI_ROBER[3] = {0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00};

static const double E5_INV[4] = {0, 1, -1, -1};

/* e5.f's right-hand side, f3 = f2 − f4 as the test set writes it;
 * p = (A, B, CM, C). */
#define E5_BODY(T)                                                                                         \
    T prod1 = p[0] * y[0], prod2 = p[1] * y[0] * y[2], prod3 = p[2] * y[1] * y[2], prod4 = p[3] * y[3];    \
    dy[0] = -prod1 - prod2;                                                                                \
    dy[1] = prod1 - prod3;                                                                                 \
    dy[3] = prod2 - prod4;                                                                                 \
    dy[2] = dy[1] - dy[3];

static int e5_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t;
    (void)u;
    E5_BODY(double)
    return 0;
}
static int e5_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t;
    (void)u;
    E5_BODY(double complex)
    return 0;
}
/* ∂f/∂y, dense row-major (e5.f's jeval) */
static int e5_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t;
    (void)u;
    (void)dfdt;
    const double A = p[0], B = p[1], CM = p[2], C = p[3];
    const double r1[4] = {-A - B * y[2], 0, -B * y[0], 0};
    const double r2[4] = {A, -CM * y[2], -CM * y[1], 0};
    const double r4[4] = {B * y[2], 0, B * y[0], -C};
    for (int j = 0; j < 4; j++) {
        J[j] = r1[j];
        J[4 + j] = r2[j];
        J[8 + j] = r2[j] - r4[j];
        J[12 + j] = r4[j];
    }
    return 0;
}

static sv_ode_problem *e5_problem(sv_ode_jac_source jac, int declare)
{
    sv_ode_problem_desc d = {.name = "e5", .n = 4, .nparams = 4, .f = e5_f, .f_complex = e5_fc, .jac = e5_jac,
                             .jac_source = jac, .ninvariants = declare ? 1 : 0, .invariants = E5_INV};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    assert_int_equal(sv_ode_problem_ninvariants(P), declare ? 1 : 0);
    return P;
}

/* ntraj copies of one E5 trajectory in `lanes` lanes (0: the solver's
 * choice); out: ntraj·4 values at tend. */
static void e5_run(const sv_ode_problem *P, const double *p, double y10, double tend, double rtol, int ntraj,
                   int lanes, double *out, sv_ode_stats *stats)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = 1e-24;
    o.max_steps = 200000;
    o.lanes = lanes;
    double y0[4] = {y10, 0, 0, 0};
    sv_ode_traj_status st[16];
    sv_ode_ensemble e = {.ntraj = ntraj, .nsave = 1, .tsave = &tend, .y0 = y0, .y0_shared = 1, .params = p,
                         .params_shared = 1, .out = out, .status = st, .stats = stats};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    for (int t = 0; t < ntraj; t++) assert_int_equal(st[t], SV_ODE_SUCCESS);
}

static double rel(double x, double ref) { return fabs(x - ref) / fabs(ref); }

static const double E5_P[4] = {7.89e-10, 1.1e7, 1.13e9, 1.13e3};
static const double VAR_P[4] = {2.3e-9, 4.0e6, 6.0e8, 4.1e2};

static void test_e5_full(void **s)
{
    (void)s;
    for (int jac = 0; jac < 2; jac++) {
        sv_ode_problem *P = e5_problem(jac ? SV_ODE_JAC_COMPLEX_STEP : SV_ODE_JAC_ANALYTIC, 1);
        for (int k = 6; k <= 10; k += 2) {
            double y[4];
            sv_ode_stats st;
            e5_run(P, E5_P, 1.76e-3, 1e13, pow(10.0, -k), 1, 1, y, &st);
            /* the test set's scd for E5: y2 and y3, relative */
            double scd = -log10(fmax(rel(y[1], BARI_E5_Y2), rel(y[2], BARI_E5_Y3)));
            double err = fmax(rel(y[1], REF_E5[1]), rel(y[2], REF_E5[2]));
            printf("E5 (4 equations, invariant declared), %s Jacobian, rtol 1e-%d: y2 %.6e y3 %.6e, scd vs the "
                   "test set %.2f, error vs Radau %.1e, %ld steps\n",
                   jac ? "complex-step" : "analytic", k, y[1], y[2], scd, err, st.accepted);
            assert_true(scd >= 3.0);
            assert_true(err < 1e-4);
        }
        sv_ode_problem_destroy(P);
    }
}

static void test_e5_variant_full(void **s)
{
    (void)s;
    for (int jac = 0; jac < 2; jac++) {
        sv_ode_problem *P = e5_problem(jac ? SV_ODE_JAC_COMPLEX_STEP : SV_ODE_JAC_ANALYTIC, 1);
        for (int k = 6; k <= 10; k += 2) {
            double y[4];
            sv_ode_stats st;
            e5_run(P, VAR_P, 3.1e-3, 1e12, pow(10.0, -k), 1, 1, y, &st);
            double err = fmax(rel(y[1], REF_E5_VARIANT[1]), rel(y[2], REF_E5_VARIANT[2]));
            printf("E5 variant (4 equations, invariant declared), %s Jacobian, rtol 1e-%d: y2 %.6e y3 %.6e, error "
                   "vs Radau %.1e (%.2f digits)\n",
                   jac ? "complex-step" : "analytic", k, y[1], y[2], err, -log10(err));
            assert_true(err < 1e-3);
        }
        sv_ode_problem_destroy(P);
    }
}

/* The fused step (16 copies in 4, 8 and 16 lanes) projects its accepted
 * states with the same call as the general path (one lane): the same bits. */
static void test_e5_fused_as_general(void **s)
{
    (void)s;
    sv_ode_problem *P = e5_problem(SV_ODE_JAC_ANALYTIC, 1);
    double one[4], out[16 * 4];
    sv_ode_stats st1, st[16];
    e5_run(P, E5_P, 1.76e-3, 1e13, 1e-8, 1, 1, one, &st1);
    const int lanes[3] = {4, 8, 16};
    for (int k = 0; k < 3; k++) {
        e5_run(P, E5_P, 1.76e-3, 1e13, 1e-8, 16, lanes[k], out, st);
        for (int t = 0; t < 16; t++) {
            assert_memory_equal(out + 4 * t, one, sizeof one);
            assert_int_equal(st[t].accepted, st1.accepted);
        }
    }
    sv_ode_problem_destroy(P);
}

/* Robertson (rober.f) with its conservation law y1 + y2 + y3 = 1 declared:
 * at least as accurate against the test set's reference as without. */
static int rober_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t;
    (void)p;
    (void)u;
    double a = 0.04 * y[0], b = 1e4 * y[1] * y[2], c = 3e7 * y[1] * y[1];
    dy[0] = -a + b;
    dy[1] = a - b - c;
    dy[2] = c;
    return 0;
}
static int rober_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t;
    (void)p;
    (void)u;
    (void)dfdt;
    const double v[9] = {-0.04, 1e4 * y[2], 1e4 * y[1], 0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1],
                         0,     6e7 * y[1], 0};
    memcpy(J, v, sizeof v);
    return 0;
}

static double rober_scd(int declare, double rtol, sv_ode_method method)
{
    const double inv[3] = {1, 1, 1};
    sv_ode_problem_desc d = {.name = "rober", .n = 3, .f = rober_f, .jac = rober_jac,
                             .ninvariants = declare, .invariants = inv};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = method;
    o.rtol = rtol;
    o.atol = rtol * 1e-4; /* the test set's runs: atol = 1e-4·rtol */
    o.max_steps = 2000000;
    const double y0[3] = {1, 0, 0}, tend = 1e11;
    double y[3];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &tend, .y0 = y0, .y0_shared = 1, .out = y, .status = &st};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    sv_ode_problem_destroy(P);
    return ode_scd(3, y, BARI_ROBER);
}

static void test_rober_declared(void **s)
{
    (void)s;
    for (int k = 6; k <= 10; k += 2) {
        double rtol = pow(10.0, -k), plain = rober_scd(0, rtol, SV_ODE_RODAS5P), decl = rober_scd(1, rtol, SV_ODE_RODAS5P);
        printf("Robertson, Rodas5P, rtol 1e-%d: scd %.2f without the invariant, %.2f with it\n", k, plain, decl);
        assert_true(decl >= plain - 0.05);
        assert_true(decl >= k - 3.5);
    }
}

/* The built-in Robertson with y1 + y2 + y3 = 1 added by
 * sv_ode_problem_with_invariants: as accurate against the test set's
 * reference as the built-in itself; a bad row is refused, naming it, and
 * the derived problem refuses sensitivity directions. */
static double builtin_scd(const sv_ode_builtin *b, const sv_ode_problem *P, double rtol)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = rtol * 1e-4;
    o.max_steps = 2000000;
    double y[3];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = b->t0, .nsave = 1, .tsave = &b->t1, .y0 = b->y0, .y0_shared = 1,
                         .params = b->params, .params_shared = 1, .out = y, .status = &st};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    return ode_scd(3, y, BARI_ROBER);
}

static void test_builtin_with_invariants(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    assert_true(b->t1 == 1e11);
    const double inv[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_with_invariants(NULL, b->prob, 1, inv, &P), SV_OK);
    assert_int_equal(sv_ode_problem_ninvariants(P), 1);
    assert_int_equal(sv_ode_problem_ninvariants(b->prob), 0);
    double plain = builtin_scd(b, b->prob, 1e-8), decl = builtin_scd(b, P, 1e-8);
    printf("built-in Robertson, rtol 1e-8: scd %.2f without the invariant, %.2f with it\n", plain, decl);
    assert_true(decl >= plain - 0.05);
    assert_true(decl >= 8 - 3.5);
    const int sp[1] = {0};
    sv_ode_problem *S = NULL;
    assert_int_equal(sv_ode_problem_with_sens(NULL, P, 0, sp, 1, sp, &S), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "sensitivities"));
    sv_ode_problem_destroy(P);
    P = NULL;
    assert_int_equal(sv_ode_problem_with_invariants(NULL, b->prob, 1, zero, &P), SV_ERR_ARG);
    assert_null(P);
    assert_non_null(strstr(sv_last_error(), "row 0 is all zero"));
    sv_ode_builtin_destroy(b);
}

/* A → B → C (k1 = 1, k2 = 2; A + B + C = 1 declared), Tsit5 and Rodas5P,
 * ten save times between steps (dense output): every output against the
 * closed form, A = e^−t, B = (e^−t − e^−2t), C = 1 − A − B, and on the
 * invariant to rounding. */
static int chain_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t;
    (void)p;
    (void)u;
    dy[0] = -y[0];
    dy[1] = y[0] - 2 * y[1];
    dy[2] = 2 * y[1];
    return 0;
}
static int chain_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t;
    (void)y;
    (void)p;
    (void)u;
    (void)dfdt;
    const double v[9] = {-1, 0, 0, 1, -2, 0, 0, 2, 0};
    memcpy(J, v, sizeof v);
    return 0;
}

static void test_chain_saves(void **s)
{
    (void)s;
    const double inv[3] = {1, 1, 1};
    sv_ode_problem_desc d = {.name = "chain", .n = 3, .f = chain_f, .jac = chain_jac, .ninvariants = 1,
                             .invariants = inv};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    for (int m = 0; m < 2; m++) {
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = m ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        enum { NS = 10 };
        double tsave[NS], out[NS * 3], y0[3] = {1, 0, 0};
        for (int k = 0; k < NS; k++) tsave[k] = 0.37 * (k + 1);
        sv_ode_traj_status st;
        sv_ode_ensemble e = {.ntraj = 1, .nsave = NS, .tsave = tsave, .y0 = y0, .y0_shared = 1, .out = out,
                             .status = &st};
        assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
        assert_int_equal(st, SV_ODE_SUCCESS);
        double maxerr = 0, maxinv = 0;
        for (int k = 0; k < NS; k++) {
            double t = tsave[k], a = exp(-t), b = exp(-t) - exp(-2 * t), c = 1 - a - b;
            const double *y = out + 3 * k;
            maxerr = fmax(maxerr, fmax(fabs(y[0] - a), fmax(fabs(y[1] - b), fabs(y[2] - c))));
            maxinv = fmax(maxinv, fabs(y[0] + y[1] + y[2] - 1));
        }
        printf("A → B → C, %s: max error vs the closed form %.1e, max |A + B + C − 1| %.1e\n",
               m ? "Tsit5" : "Rodas5P", maxerr, maxinv);
        assert_true(maxerr < 1e-8);
        assert_true(maxinv <= 4e-16);
    }
    sv_ode_problem_destroy(P);
}

/* A handler that adds 0.5 to A at t = 1 changes A + B + C to 1.5: the
 * projection keeps the new value from there (not the old one). Closed form
 * after the event, s = t − 1: A = a1·e^−s, B = b1·e^−2s + a1·(e^−s − e^−2s),
 * C = 1.5 − A − B, with a1 = e^−1 + 0.5, b1 = e^−1 − e^−2. The event's
 * recorded state (before the handler) is on the old invariant. */
static int at_one(double t, const double *y, const double *p, double *g, void *u)
{
    (void)y, (void)p, (void)u;
    g[0] = t - 1;
    return 0;
}
static int add_a(double t, double *y, double *p, int which, void *u)
{
    (void)t, (void)p, (void)which, (void)u;
    y[0] += 0.5;
    return SV_ODE_HANDLER_CONTINUE;
}

static void test_chain_handler(void **s)
{
    (void)s;
    const double inv[3] = {1, 1, 1};
    sv_ode_problem_desc d = {.name = "chain", .n = 3, .f = chain_f, .jac = chain_jac, .ninvariants = 1,
                             .invariants = inv};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    const sv_ode_event_action act = SV_ODE_EVENT_HANDLE;
    sv_ode_events ev = {.m = 1, .g = at_one, .action = &act, .handler = add_a};
    for (int m = 0; m < 2; m++) {
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = m ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        o.events = &ev;
        double tsave[2] = {0.5, 3.0}, out[6], y0[3] = {1, 0, 0}, et, ey[3];
        int nev = 0, ew;
        sv_ode_traj_status st;
        sv_ode_ensemble e = {.ntraj = 1, .nsave = 2, .tsave = tsave, .y0 = y0, .y0_shared = 1, .out = out,
                             .status = &st, .nevents = &nev, .event_capacity = 1, .event_t = &et,
                             .event_which = &ew, .event_y = ey};
        e.t0 = 0;
        assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
        assert_int_equal(st, SV_ODE_SUCCESS);
        assert_int_equal(nev, 1);
        double a1 = exp(-1.0) + 0.5, b1 = exp(-1.0) - exp(-2.0), x = exp(-2.0), x2 = exp(-4.0);
        double A = a1 * x, B = b1 * x2 + a1 * (x - x2), C = 1.5 - A - B;
        const double *y = out + 3;
        double err = fmax(fabs(y[0] - A), fmax(fabs(y[1] - B), fabs(y[2] - C)));
        printf("A → B → C, %s, A += 0.5 at t = 1: error at t = 3 %.1e, A + B + C − 1.5 = %.1e, at the event "
               "A + B + C − 1 = %.1e\n",
               m ? "Tsit5" : "Rodas5P", err, y[0] + y[1] + y[2] - 1.5, ey[0] + ey[1] + ey[2] - 1);
        assert_true(err < 1e-8);
        assert_true(fabs(y[0] + y[1] + y[2] - 1.5) <= 4e-16);
        assert_true(fabs(ey[0] + ey[1] + ey[2] - 1) <= 4e-16);
    }
    sv_ode_problem_destroy(P);
}

/* Bad rows are refused, naming the row. */
static void test_invariants_refused(void **s)
{
    (void)s;
    const double bad[3][8] = {{0, 1, -1, NAN, 0, 0, 0, 0},
                              {0, 1, -1, -1, 0, 0, 0, 0},
                              {0, 1, -1, -1, 0, 2, -2, -2}};
    const int m[3] = {1, 2, 2};
    const char *want[3] = {"row 0, column 3", "row 1 is all zero", "row 1 is a linear combination"};
    for (int c = 0; c < 3; c++) {
        sv_ode_problem_desc d = {.name = "e5", .n = 4, .nparams = 4, .f = e5_f, .jac = e5_jac,
                                 .ninvariants = m[c], .invariants = bad[c]};
        sv_ode_problem *P = NULL;
        assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG);
        assert_null(P);
        printf("refused: %s\n", sv_last_error());
        assert_non_null(strstr(sv_last_error(), want[c]));
    }
    /* with sensitivities: refused */
    const int sp[1] = {0};
    sv_ode_problem_desc d = {.name = "e5", .n = 4, .nparams = 4, .f = e5_f, .jac = e5_jac, .ninvariants = 1,
                             .invariants = E5_INV, .nsens_params = 1, .sens_params = sp, .f_complex_p = NULL,
                             .sens_source = SV_ODE_SENS_FD};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "sensitivities"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e5_full),         cmocka_unit_test(test_e5_variant_full),
        cmocka_unit_test(test_e5_fused_as_general), cmocka_unit_test(test_rober_declared),
        cmocka_unit_test(test_builtin_with_invariants),
        cmocka_unit_test(test_chain_saves),     cmocka_unit_test(test_chain_handler),
        cmocka_unit_test(test_invariants_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
