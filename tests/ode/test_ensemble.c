/* Ensembles: a trajectory's result must not depend on the lane, the batch,
 * the lane count or the thread that ran it (bit for bit against running it
 * alone); a Robertson perturbed-parameter ensemble runs to completion with
 * every trajectory conserving y1 + y2 + y3 = 1; EB-50 at k = 0.01 and 0.1
 * matches the reference dc(14000) and step counts (docs/ode.md: Rodas5P,
 * same controller). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_ode.h"
#include "sv_test.h"

enum { NTRAJ = 37, NSAVE = 5 };

/* The modax Robertson ensemble: rates perturbed by up to
 * ±10 %, y0 = ((1−ε)α, ε, (1−ε)(1−α)), α = 0.99, ε = 0.1. */
static void rober_ensemble(double *p, double *y0, int ntraj)
{
    sv_test_rng r;
    sv_test_rng_seed(&r, 42);
    const double base[3] = {0.04, 1e4, 3e7};
    for (int t = 0; t < ntraj; t++)
        for (int k = 0; k < 3; k++) p[t * 3 + k] = base[k] * (1 + 0.1 * sv_test_uniform(&r));
    double a = 0.99, e = 0.1;
    y0[0] = (1 - e) * a;
    y0[1] = e;
    y0[2] = (1 - e) * (1 - a);
}

static void solve(const sv_ode_builtin *b, sv_ode_options *o, int ntraj, const double *y0, int y0_shared,
                  const double *p, const double *tsave, double *out, sv_ode_traj_status *st, sv_ode_stats *stats,
                  int threads)
{
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, threads);
    sv_ode_ensemble e = {.ntraj = ntraj,
                         .t0 = 0,
                         .nsave = NSAVE,
                         .tsave = tsave,
                         .y0 = y0,
                         .y0_shared = y0_shared,
                         .params = p,
                         .out = out,
                         .status = st,
                         .stats = stats};
    assert_int_equal(sv_ode_solve(ctx, b->prob, o, &e), SV_OK);
    sv_ctx_destroy(ctx);
}

static void check_bit_identical(const char *name, sv_ode_method m, const double *tsave, double rtol, double atol)
{
    sv_ode_builtin *b;
    assert_int_equal(sv_ode_builtin_create(NULL, name, 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    int n = 3;
    double p[NTRAJ * 3], y0[3];
    rober_ensemble(p, y0, NTRAJ);
    if (!strcmp(name, "lorenz")) {
        /* Lorenz: σ, ρ, β perturbed around (10, 28, 8/3) */
        for (int t = 0; t < NTRAJ; t++) {
            p[t * 3 + 0] = 10 * p[t * 3] / 0.04;
            p[t * 3 + 1] = 28 * p[t * 3 + 1] / 1e4;
            p[t * 3 + 2] = 8.0 / 3.0 * p[t * 3 + 2] / 3e7;
        }
        y0[0] = 1, y0[1] = 0, y0[2] = 0;
    }
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = m;
    o.rtol = rtol;
    o.atol = atol;
    size_t sz = (size_t)NTRAJ * NSAVE * n;
    double *ref = calloc(sz, sizeof(double)), *out = calloc(sz, sizeof(double));
    sv_ode_traj_status st[NTRAJ], st1;
    sv_ode_stats stats[NTRAJ], s1;
    /* each trajectory alone (one lane of four busy) */
    o.lanes = 4;
    for (int t = 0; t < NTRAJ; t++) {
        solve(b, &o, 1, y0, 1, p + 3 * t, tsave, ref + (size_t)t * NSAVE * n, &st1, &s1, 1);
        assert_int_equal(st1, SV_ODE_SUCCESS);
    }
    const int lanes[4] = {1, 2, 4, 8};
    for (int li = 0; li < 4; li++)
        for (int threads = 1; threads <= 2; threads++) {
            o.lanes = lanes[li];
            memset(out, 0, sz * sizeof(double));
            solve(b, &o, NTRAJ, y0, 1, p, tsave, out, st, stats, threads);
            for (int t = 0; t < NTRAJ; t++) assert_int_equal(st[t], SV_ODE_SUCCESS);
            if (memcmp(out, ref, sz * sizeof(double))) {
                for (size_t q = 0; q < sz; q++)
                    if (out[q] != ref[q]) {
                        printf("%s: lanes %d threads %d: traj %zu save %zu comp %zu: %.17g vs alone %.17g\n", name,
                               lanes[li], threads, q / (NSAVE * n), q / n % NSAVE, q % n, out[q], ref[q]);
                        break;
                    }
                fail();
            }
        }
    printf("%s: %d trajectories bit-identical with 1/2/4/8 lanes on 1 and 2 threads\n", name, NTRAJ);
    free(ref);
    free(out);
    sv_ode_builtin_destroy(b);
}

static void test_rober_lanes_bit_identical(void **s)
{
    (void)s;
    const double tsave[NSAVE] = {0, 1e-6, 1e-2, 1e2, 1e5};
    check_bit_identical("rober", SV_ODE_RODAS5P, tsave, 1e-6, 1e-8);
}

static void test_lorenz_tsit5_lanes_bit_identical(void **s)
{
    (void)s;
    const double tsave[NSAVE] = {0, 0.25, 0.5, 0.75, 1.0};
    check_bit_identical("lorenz", SV_ODE_TSIT5, tsave, 1e-8, 1e-10);
}

/* The scalar-callback path (no batched f: lanes gathered one by one) with
 * a complex-step and a finite-difference Jacobian, sparse pattern: an
 * Arrhenius reaction, A → B with heat release, activation energy per
 * trajectory. Bit-identical across lane counts and threads too. */
static int arr_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    double r = 1e8 * exp(-p[0] / y[2]) * y[0];
    dy[0] = -r, dy[1] = r, dy[2] = 50 * r - 2 * (y[2] - 1);
    return 0;
}
static int arr_fc(double _Complex t, const double _Complex *y, const double *p, double _Complex *dy, void *u)
{
    (void)t, (void)u;
    double _Complex r = 1e8 * cexp(-p[0] / y[2]) * y[0];
    dy[0] = -r, dy[1] = r, dy[2] = 50 * r - 2 * (y[2] - 1);
    return 0;
}

static void test_scalar_path_bit_identical(void **s)
{
    (void)s;
    static const int rp[4] = {0, 2, 4, 6}, ci[6] = {0, 2, 0, 2, 0, 2};
    for (int src = 0; src < 2; src++) {
        sv_ode_problem_desc d = {.name = "arrhenius", .n = 3, .nparams = 1, .f = arr_f, .f_complex = arr_fc,
                                 .jac_source = src ? SV_ODE_JAC_FD : SV_ODE_JAC_COMPLEX_STEP, .rowptr = rp,
                                 .colind = ci};
        sv_ode_problem *P;
        assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
        enum { NT = 29 };
        double E[NT], y0[3] = {1, 0, 1}, ts[NSAVE] = {0.05, 0.2, 1, 5, 20};
        for (int t = 0; t < NT; t++) E[t] = 16 + 8.0 * t / (NT - 1);
        double ref[NT * NSAVE * 3], out[NT * NSAVE * 3];
        sv_ode_traj_status st[NT];
        sv_ode_options o;
        sv_ode_options_default(&o);
        for (int t = 0; t < NT; t++) {
            sv_ode_ensemble e = {.ntraj = 1, .nsave = NSAVE, .tsave = ts, .y0 = y0, .params = E + t,
                                 .out = ref + t * NSAVE * 3, .status = st};
            assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
            assert_int_equal(st[0], SV_ODE_SUCCESS);
        }
        for (int lanes = 1; lanes <= 8; lanes *= 2)
            for (int threads = 1; threads <= 2; threads++) {
                sv_ctx *ctx;
                sv_ctx_create(&ctx);
                sv_ctx_set_threads(ctx, threads);
                o.lanes = lanes;
                sv_ode_ensemble e = {.ntraj = NT, .nsave = NSAVE, .tsave = ts, .y0 = y0, .y0_shared = 1,
                                     .params = E, .out = out, .status = st};
                assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_OK);
                for (int t = 0; t < NT; t++) assert_int_equal(st[t], SV_ODE_SUCCESS);
                assert_memory_equal(out, ref, sizeof out);
                sv_ctx_destroy(ctx);
            }
        /* a + b = 1 is conserved */
        for (int t = 0; t < NT; t++) assert_true(fabs(ref[(t * NSAVE + 4) * 3] + ref[(t * NSAVE + 4) * 3 + 1] - 1) < 1e-7);
        printf("scalar f, %s Jacobian: %d trajectories bit-identical with 1/2/4/8 lanes on 1 and 2 threads\n",
               src ? "finite-difference" : "complex-step", NT);
        sv_ode_problem_destroy(P);
    }
}

/* Robertson ensemble: the dense output at the save times conserves mass
 * (an exact invariant of the equations, preserved by the method up to the
 * tolerance) and y3 is monotone in time. */
static void test_rober_ensemble_invariants(void **s)
{
    (void)s;
    enum { NT = 200 };
    sv_ode_builtin *b;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    double *p = malloc(sizeof(double) * NT * 3), y0[3];
    rober_ensemble(p, y0, NT);
    const double tsave[NSAVE] = {0, 1e-6, 1e-2, 1e2, 1e5};
    double *out = malloc(sizeof(double) * NT * NSAVE * 3);
    sv_ode_traj_status st[NT];
    sv_ode_stats stats[NT];
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-6;
    o.atol = 1e-8;
    o.first_step = 1e-4;
    solve(b, &o, NT, y0, 1, p, tsave, out, st, stats, 2);
    long steps = 0;
    for (int t = 0; t < NT; t++) {
        assert_int_equal(st[t], SV_ODE_SUCCESS);
        steps += stats[t].accepted;
        for (int k = 0; k < NSAVE; k++) {
            const double *y = out + ((size_t)t * NSAVE + k) * 3;
            assert_true(fabs(y[0] + y[1] + y[2] - 1) < 1e-7);
            if (k) assert_true(y[2] >= out[((size_t)t * NSAVE + k - 1) * 3 + 2] - 1e-8);
        }
    }
    printf("rober ensemble: %d trajectories, %.1f accepted steps each on average\n", NT, (double)steps / NT);
    free(p);
    free(out);
    sv_ode_builtin_destroy(b);
}

/* EB-50: reference dc(14000) and step counts from docs/ode.md. */
static void test_eb50_reference(void **s)
{
    (void)s;
    const double ks[2] = {0.01, 0.1}, dc_ref[2] = {1.2883e3, 1.5372e4};
    const long acc_ref[2] = {138, 673};
    for (int q = 0; q < 2; q++) {
        sv_ode_builtin *b;
        assert_int_equal(sv_ode_builtin_create(NULL, "eb50", ks[q], SV_ODE_JAC_ANALYTIC, &b), SV_OK);
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = o.atol = 1e-4;
        double y[50];
        sv_ode_stats stats = ode_run_success(b, &o, y);
        printf("eb50 k = %g: dc(14000) = %.6g (reference %.5g), steps %ld/%ld (reference %ld)\n", ks[q], y[1],
               dc_ref[q], stats.accepted, stats.rejected, acc_ref[q]);
        sv_assert_close(y[1], dc_ref[q], 1e-4, 0);
        assert_true(stats.accepted <= 1.5 * acc_ref[q] && stats.accepted >= acc_ref[q] / 1.5);
        sv_ode_builtin_destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rober_lanes_bit_identical),
        cmocka_unit_test(test_lorenz_tsit5_lanes_bit_identical),
        cmocka_unit_test(test_scalar_path_bit_identical),
        cmocka_unit_test(test_rober_ensemble_invariants),
        cmocka_unit_test(test_eb50_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
