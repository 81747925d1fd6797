/* The four Jacobian sources agree: analytic, complex step (from the complex
 * right-hand side), J·v and finite differences, on ROBER, HIRES, VDPOL,
 * the Brusselator (sparse pattern, colouring) and EB-50 (non-autonomous:
 * ∂f/∂t compared too). Complex step and J·v are exact up to rounding, so
 * they must match the analytic Jacobian to ~1e-13 relative to the row
 * scale; finite differences are inexact (~1e-7). End-to-end, ROBER with
 * each source reaches the same end state (to 1e-8: rounding-level
 * differences in J propagate through 300 steps; 1e-5 for finite
 * differences). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ode/ode_internal.h"
#include "support_ode.h"
#include "sv_test.h"

enum { W = 4 };

/* Jacobian (pattern values, slot-major W lanes) at randomised states. */
static void jac_at(const char *name, double arg, sv_ode_jac_source src, double *jv, double *dfdt, double *y,
                   double *t, int fill_state)
{
    sv_ode_builtin *b;
    assert_int_equal(sv_ode_builtin_create(NULL, name, arg, src, &b), SV_OK);
    const sv_ode_problem *P = b->prob;
    int n = P->n, np = P->np;
    if (fill_state) {
        sv_test_rng r;
        sv_test_rng_seed(&r, 7);
        for (int w = 0; w < W; w++) {
            t[w] = b->t0 + (b->t1 - b->t0) * (0.01 + 0.1 * w);
            for (int i = 0; i < n; i++) {
                double base = b->y0[i] != 0 ? b->y0[i] : 0.1;
                y[i * W + w] = base * (1 + 0.3 * sv_test_uniform(&r));
            }
        }
    }
    double *p = calloc((size_t)(np ? np : 1) * W, sizeof(double)), *f0 = calloc((size_t)n * W, sizeof(double));
    double *scr = calloc((size_t)3 * n + np + 8, sizeof(double));
    for (int k = 0; k < np; k++)
        for (int w = 0; w < W; w++) p[k * W + w] = b->params[k];
    unsigned char mask[W] = {1, 1, 1, 1}, fail[W] = {0};
    long nf[W] = {0};
    ode_eval_f(P, W, mask, t, y, p, f0, fail, scr);
    ode_jac_work *jw = NULL;
    assert_int_equal(ode_jac_work_create(NULL, P, &jw), SV_OK);
    ode_jacobian(P, jw, W, mask, t, y, p, f0, jv, dfdt, fail, nf);
    for (int w = 0; w < W; w++) assert_int_equal(fail[w], 0);
    ode_jac_work_destroy(jw);
    free(p);
    free(f0);
    free(scr);
    sv_ode_builtin_destroy(b);
}

/* max over entries of |a − b| / (row scale), row scale = max |b| in the row */
static double row_rel_diff(const sv_ode_problem *P, const double *a, const double *b)
{
    double worst = 0;
    for (int w = 0; w < W; w++)
        for (int i = 0; i < P->n; i++) {
            double sc = 0;
            for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) sc = fmax(sc, fabs(b[e * W + w]));
            if (sc == 0) sc = 1;
            for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++)
                worst = fmax(worst, fabs(a[e * W + w] - b[e * W + w]) / sc);
        }
    return worst;
}

static void compare(const char *name, double arg, int has_jvp, int has_complex, double fd_tol)
{
    sv_ode_builtin *b;
    assert_int_equal(sv_ode_builtin_create(NULL, name, arg, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    int n = b->prob->n, nnz = b->prob->nnz;
    double *y = calloc((size_t)n * W, sizeof(double)), t[W];
    double *ja = calloc((size_t)nnz * W, sizeof(double)), *jx = calloc((size_t)nnz * W, sizeof(double));
    double *da = calloc((size_t)n * W, sizeof(double)), *dx = calloc((size_t)n * W, sizeof(double));
    jac_at(name, arg, SV_ODE_JAC_ANALYTIC, ja, da, y, t, 1);
    const sv_ode_jac_source srcs[3] = {SV_ODE_JAC_COMPLEX_STEP, SV_ODE_JAC_JVP, SV_ODE_JAC_FD};
    const double tol[3] = {1e-13, 1e-13, fd_tol};
    const char *nm[3] = {"complex-step", "J*v", "finite differences"};
    for (int q = 0; q < 3; q++) {
        if (q == 0 && !has_complex) continue;
        if (q == 1 && !has_jvp) continue;
        memset(jx, 0, sizeof(double) * (size_t)nnz * W);
        jac_at(name, arg, srcs[q], jx, dx, y, t, 0);
        double d = row_rel_diff(b->prob, jx, ja);
        double dd = 0, ds = 0;
        for (int i = 0; i < n * W; i++) {
            dd = fmax(dd, fabs(dx[i] - da[i]));
            ds = fmax(ds, fabs(da[i]));
        }
        dd = ds > 0 ? dd / ds : dd;
        printf("%-8s %-18s vs analytic: J %.2e, df/dt %.2e (%d colours)\n", name, nm[q], d, dd,
               b->prob->ncolors);
        assert_true(d <= tol[q]);
        assert_true(dd <= (q == 2 ? 1e-4 : 1e-12));
    }
    free(y), free(ja), free(jx), free(da), free(dx);
    sv_ode_builtin_destroy(b);
}

static void test_rober(void **s) { (void)s; compare("rober", 0, 1, 1, 1e-6); }
static void test_hires(void **s) { (void)s; compare("hires", 0, 0, 1, 1e-6); }
static void test_vdpol(void **s) { (void)s; compare("vdpol", 0, 0, 1, 1e-6); }
static void test_bruss(void **s) { (void)s; compare("bruss2d", 6, 0, 1, 1e-5); }
/* EB-50's analytic Jacobian takes ∂f/∂τ by complex step too (the background
 * functions' derivatives are not written out), so only the finite-difference
 * ∂f/∂τ is an independent check there. Finite differences are poor on this
 * stiff system (entries spanning many orders in one row): only 10 % asked —
 * the reason they are documented as a last resort. */
static void test_eb50(void **s) { (void)s; compare("eb50", 0.05, 0, 1, 0.1); }

/* End to end: same end state of ROBER from every source. */
static void test_rober_end_to_end(void **s)
{
    (void)s;
    double yref[3];
    for (int src = 0; src < 4; src++) {
        sv_ode_builtin *b;
        assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, (sv_ode_jac_source)src, &b), SV_OK);
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = 1e-6;
        o.atol = 1e-10;
        double y[3];
        sv_ode_stats stats = ode_run_success(b, &o, y);
        printf("rober source %d: steps %ld/%ld, y1 = %.12e\n", src, stats.accepted, stats.rejected, y[0]);
        if (src == 0) memcpy(yref, y, sizeof y);
        for (int i = 0; i < 3; i++) sv_assert_close(y[i], yref[i], src == 3 ? 1e-5 : 1e-8, 1e-20);
        sv_ode_builtin_destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rober), cmocka_unit_test(test_hires), cmocka_unit_test(test_vdpol),
        cmocka_unit_test(test_bruss), cmocka_unit_test(test_eb50), cmocka_unit_test(test_rober_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
