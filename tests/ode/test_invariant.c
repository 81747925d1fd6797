/* Componentwise accuracy over many orders of magnitude (docs/ode.md): a
 * pyrolysis-type chain whose radicals B, C, D (~1e-22, atol 1e-24) are
 * converted into each other by the parent A (~1e-3):
 *
 *   B + A → C (k1 = 1e10), C → D (k2 = 1e3), D + A → C (k3 = 3e9),
 *   A' = −k1 A B − k3 A D, so B + C + D is conserved.
 *
 * Integrated to t = 1e16, where the steps reach hγ‖J‖ ~ 1e18: M is then
 * numerically singular in double along the invariant, and without the
 * double-double stage solves the chain lost the invariant (drift ~5e-23, half
 * of it) and every digit of A, C and D. References: scipy's Radau at rtol
 * 1e-12 (tests/ode/data/make_scipy_refs.py, agreeing with its BDF to 6e-11).
 * The invariant must hold to rounding relative to the radicals' own scale.
 * The dense path (n = 4) and the sparse engine (n = 10: six decoupled decaying
 * spectators added) are both checked, with the double and the single LU. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scipy_refs.h"
#include "solvent/ode.h"
#include "support_ode.h"
#include "sv_test.h"

enum { NSP = 6 }; /* spectators of the sparse variant */

#define PYRO_BODY(T)                                                                                       \
    T r1 = p[0] * y[0] * y[1], r2 = p[1] * y[2], r3 = p[2] * y[0] * y[3];                                  \
    dy[0] = -r1 - r3;                                                                                      \
    dy[1] = -r1;                                                                                           \
    dy[2] = r1 - r2 + r3;                                                                                  \
    dy[3] = r2 - r3;                                                                                       \
    for (int i = 4; i < n; i++) dy[i] = -0.1 * (i - 3) * y[i];

static int pyro_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t;
    int n = *(const int *)u;
    PYRO_BODY(double)
    return 0;
}
static int pyro_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t;
    int n = *(const int *)u;
    PYRO_BODY(double complex)
    return 0;
}

/* The chain's pattern, then one diagonal entry per spectator. */
static void pyro_pattern(int n, int *rp, int *ci)
{
    static const int rp4[5] = {0, 3, 5, 9, 12}, ci4[12] = {0, 1, 3, 0, 1, 0, 1, 2, 3, 0, 2, 3};
    memcpy(rp, rp4, sizeof rp4);
    memcpy(ci, ci4, sizeof ci4);
    for (int i = 4; i < n; i++) {
        ci[rp[i]] = i;
        rp[i + 1] = rp[i] + 1;
    }
}

/* ntraj copies of the chain (n = 4: dense; 4 + NSP: sparse) saved at
 * 1e13 .. 1e16 into out (ntraj·4·n), in `lanes` lanes (0: the solver's
 * choice). */
static void pyro_solve(int n, sv_ode_lu_precision lu, double rtol, int ntraj, int lanes, double *out,
                       sv_ode_traj_status *st, sv_ode_stats *stats)
{
    static int nn;
    nn = n;
    int rp[4 + NSP + 1], ci[12 + NSP];
    pyro_pattern(n, rp, ci);
    sv_ode_problem_desc d = {.name = "pyrolysis", .n = n, .nparams = 3, .f = pyro_f, .f_complex = pyro_fc,
                             .jac_source = SV_ODE_JAC_COMPLEX_STEP, .rowptr = rp, .colind = ci, .user = &nn};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = 1e-24;
    o.lu = lu;
    o.lanes = lanes;
    double p[3] = {1e10, 1e3, 3e9}, y0[4 + NSP] = {1e-3, 1e-22, 0, 0}, ts[4] = {1e13, 1e14, 1e15, 1e16};
    for (int i = 4; i < n; i++) y0[i] = 1;
    sv_ode_ensemble e = {.ntraj = ntraj, .nsave = 4, .tsave = ts, .y0 = y0, .y0_shared = 1, .params = p,
                         .params_shared = 1, .out = out, .status = st, .stats = stats};
    sv_ctx *ctx = NULL; /* one thread: `lanes` is the lane count that runs */
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 1);
    assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_OK);
    sv_ctx_destroy(ctx);
    sv_ode_problem_destroy(P);
}

static void run_pyro(int n, sv_ode_lu_precision lu, double rtol, double tol_ref)
{
    double out[4 * (4 + NSP)];
    sv_ode_traj_status st;
    sv_ode_stats stats;
    pyro_solve(n, lu, rtol, 1, 0, out, &st, &stats);
    assert_int_equal(st, SV_ODE_SUCCESS);
    double drift = 0, err = 0;
    for (int s = 0; s < 4; s++) {
        const double *y = out + s * n;
        drift = fmax(drift, fabs(y[1] + y[2] + y[3] - 1e-22) / 1e-22);
        for (int i = 0; i < 4; i++)
            if (i != 1) err = fmax(err, fabs(y[i] - REF_PYRO[s][i]) / fabs(REF_PYRO[s][i]));
    }
    printf("pyrolysis n = %2d, %s LU, rtol %.0e: invariant drift %.1e (relative), error vs Radau %.1e, "
           "steps %ld/%ld, %ld of %ld factorisations in double-double\n",
           n, lu ? "single" : "double", rtol, drift, err, stats.accepted, stats.rejected, stats.nexact,
           stats.nfactor);
    assert_true(drift < 1e-11);
    assert_true(err < tol_ref);
    assert_true(stats.nexact > 0);
}

static void test_pyrolysis_dense(void **s)
{
    (void)s;
    run_pyro(4, SV_ODE_LU_DOUBLE, 1e-8, 1e-5);
    run_pyro(4, SV_ODE_LU_DOUBLE, 1e-10, 1e-6);
}

static void test_pyrolysis_sparse(void **s)
{
    (void)s;
    for (int lu = 0; lu < 2; lu++) {
        run_pyro(4 + NSP, (sv_ode_lu_precision)lu, 1e-8, 1e-5);
        run_pyro(4 + NSP, (sv_ode_lu_precision)lu, 1e-10, 1e-6);
    }
}

/* Ensembles of the dense chain in 4, 8 and 16 lanes run the fused step for
 * tiny systems, which factors M itself: it must send the same lanes to
 * double-double and solve them alike, so every trajectory is bit for bit
 * the one-lane run's (the general path's, checked above). */
static void test_pyrolysis_fused(void **s)
{
    (void)s;
    enum { NT = 16, N = 4 };
    double one[4 * N], out[NT * 4 * N];
    sv_ode_traj_status st1, st[NT];
    sv_ode_stats stats1, stats[NT];
    pyro_solve(N, SV_ODE_LU_DOUBLE, 1e-10, 1, 1, one, &st1, &stats1);
    assert_int_equal(st1, SV_ODE_SUCCESS);
    const int lanes[3] = {4, 8, 16};
    for (int k = 0; k < 3; k++) {
        pyro_solve(N, SV_ODE_LU_DOUBLE, 1e-10, NT, lanes[k], out, st, stats);
        for (int t = 0; t < NT; t++) {
            assert_int_equal(st[t], SV_ODE_SUCCESS);
            assert_memory_equal(out + t * 4 * N, one, sizeof one);
            assert_int_equal(stats[t].accepted, stats1.accepted);
            assert_int_equal(stats[t].nexact, stats1.nexact);
        }
        printf("pyrolysis n = 4, %d lanes: %d trajectories as the one-lane run, %ld of %ld factorisations in "
               "double-double\n",
               lanes[k], NT, stats[0].nexact, stats[0].nfactor);
    }
    assert_true(stats1.nexact > 0);
}

/* Ordinary problems at their standard tolerances keep every factor in
 * double (their numbers are what they were before the double-double path):
 * only a pivot shrunk to 1e-8 of its diagonal entry sends a lane there. */
static void test_ordinary_stay_double(void **s)
{
    (void)s;
    const char *names[] = {"hires", "orego", "vdpol", "pollu", "eb50", "bruss2d"};
    for (int k = 0; k < 6; k++) {
        sv_ode_builtin *b = NULL;
        assert_int_equal(sv_ode_builtin_create(NULL, names[k], 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = b->rtol;
        o.atol = b->atol;
        double y[128];
        sv_ode_stats st = ode_run_success(b, &o, y);
        printf("%-8s %ld factorisations, %ld in double-double\n", names[k], st.nfactor, st.nexact);
        assert_int_equal(st.nexact, 0);
        sv_ode_builtin_destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pyrolysis_dense),
        cmocka_unit_test(test_pyrolysis_sparse),
        cmocka_unit_test(test_pyrolysis_fused),
        cmocka_unit_test(test_ordinary_stay_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
