/* The checked pattern (docs/ode.md): at a solve's first Jacobian, ∂f/∂y is
 * probed column by column and the non-zero entries the pattern lacks are
 * named in the error; check_pattern = SV_ODE_CHECK_OFF skips it. Robertson
 * at y = (0.9, 1e-3, 0.1) has every entry of its full Jacobian non-zero
 * except (2, 0) and (2, 2): a pattern without (0, 2) and (1, 1) must be
 * refused whichever source the problem has (complex step, J·v, or only f
 * and an analytic J: finite differences of f, which are exactly zero where
 * f_i does not read y_j). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvent/ode.h"
#include "sv_test.h"

#define ROBER(T)                                                   \
    dy[0] = -p[0] * y[0] + p[1] * y[1] * y[2];                     \
    dy[1] = p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] * y[1]; \
    dy[2] = p[2] * y[1] * y[1];

static int f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    ROBER(double)
    return 0;
}
static int fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    ROBER(double complex)
    return 0;
}
static int jvp(double t, const double *y, const double *p, double vt, const double *v, double *jv, void *u)
{
    (void)t, (void)vt, (void)u;
    double a = -p[0] * v[0] + p[1] * (v[1] * y[2] + y[1] * v[2]), c = 2 * p[2] * y[1] * v[1];
    jv[0] = a, jv[1] = -a - c, jv[2] = c;
    return 0;
}
/* analytic values in the order of whatever pattern is given (the test's
 * pattern has no (0, 2) and no (1, 1): those values are simply not
 * written, which is the corruption the check exists to catch) */
static int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t, (void)dfdt;
    const int *rp = u, *ci = rp + 4;
    double full[3][3] = {{-p[0], p[1] * y[2], p[1] * y[1]},
                         {p[0], -p[1] * y[2] - 2 * p[2] * y[1], -p[1] * y[1]},
                         {0, 2 * p[2] * y[1], 0}};
    for (int i = 0; i < 3; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) J[e] = full[i][ci[e]];
    return 0;
}

/* rowptr then colind: rows {0, 1}, {0, 2}, {1} */
static int pat[4 + 9] = {0, 2, 4, 5, 0, 1, 0, 2, 1};

static sv_status run(sv_ode_jac_source src, sv_ode_check check, char *msg, size_t len)
{
    sv_ode_problem_desc d = {.name = "rober-cut", .n = 3, .nparams = 3, .f = f, .jac_source = src,
                             .rowptr = pat, .colind = pat + 4, .user = pat};
    if (src == SV_ODE_JAC_COMPLEX_STEP) d.f_complex = fc;
    if (src == SV_ODE_JAC_JVP) d.jvp = jvp;
    if (src == SV_ODE_JAC_ANALYTIC) d.jac = jac;
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.check_pattern = check;
    double y0[3] = {0.9, 1e-3, 0.1}, p[3] = {0.04, 1e4, 3e7}, ts = 1e-3, out[3];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = y0, .params = p, .out = out, .status = &st};
    sv_status r = sv_ode_solve(NULL, P, &o, &e);
    snprintf(msg, len, "%s", r == SV_OK ? "" : sv_last_error());
    sv_ode_problem_destroy(P);
    return r;
}

static void test_missing_entries_named(void **s)
{
    (void)s;
    const sv_ode_jac_source srcs[4] = {SV_ODE_JAC_COMPLEX_STEP, SV_ODE_JAC_JVP, SV_ODE_JAC_ANALYTIC, SV_ODE_JAC_FD};
    for (int k = 0; k < 4; k++) {
        char msg[512];
        assert_int_equal(run(srcs[k], SV_ODE_CHECK_ON, msg, sizeof msg), SV_ERR_PATTERN);
        printf("source %d: %s\n", (int)srcs[k], msg);
        assert_non_null(strstr(msg, "misses 2 non-zero entries"));
        assert_non_null(strstr(msg, "(1, 1)"));
        assert_non_null(strstr(msg, "(0, 2)"));
        assert_null(strstr(msg, "(2, 0)")); /* zero: ∂f3/∂y1 = 0 */
        /* off: the solve runs (with the corrupted Jacobian the user chose) */
        assert_int_equal(run(srcs[k], SV_ODE_CHECK_OFF, msg, sizeof msg), SV_OK);
    }
}

/* A complete pattern passes, including one that lists the diagonal only
 * where it is non-zero. */
static void test_complete_pattern_passes(void **s)
{
    (void)s;
    int full[4 + 7] = {0, 3, 6, 7, 0, 1, 2, 0, 1, 2, 1};
    memcpy(pat, full, sizeof full);
    char msg[512];
    for (int src = 0; src < 4; src++) {
        sv_status r = run((sv_ode_jac_source)src, SV_ODE_CHECK_ON, msg, sizeof msg);
        if (r != SV_OK) printf("%s\n", msg);
        assert_int_equal(r, SV_OK);
    }
}

/* A trajectory 0 with a NaN rate is no evidence against the pattern: the
 * probe's NaNs fill entries that are structurally zero ((2, 0), (2, 2)), yet
 * the solve runs, that trajectory fails with its own status, and the next
 * one is the same as solved alone. */
static void test_nonfinite_first_trajectory(void **s)
{
    (void)s;
    int full[4 + 7] = {0, 3, 6, 7, 0, 1, 2, 0, 1, 2, 1};
    memcpy(pat, full, sizeof full);
    for (int src = 0; src < 4; src++) {
        sv_ode_problem_desc d = {.name = "rober", .n = 3, .nparams = 3, .f = f, .f_complex = fc, .jvp = jvp, .jac = jac,
                                 .jac_source = (sv_ode_jac_source)src, .rowptr = pat, .colind = pat + 4, .user = pat};
        sv_ode_problem *P = NULL;
        assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
        sv_ode_options o;
        sv_ode_options_default(&o);
        double y0[6] = {0.9, 1e-3, 0.1, 0.9, 1e-3, 0.1}, p[6] = {0.04, 1e4, NAN, 0.04, 1e4, 3e7}, ts = 1e-3;
        double out[6], alone[3];
        sv_ode_traj_status st[2], st1;
        sv_ode_ensemble e = {.ntraj = 2, .nsave = 1, .tsave = &ts, .y0 = y0, .params = p, .out = out, .status = st};
        sv_status r = sv_ode_solve(NULL, P, &o, &e);
        if (r != SV_OK) fail_msg("source %d: %s", src, sv_last_error());
        assert_int_not_equal(st[0], SV_ODE_SUCCESS);
        assert_int_equal(st[1], SV_ODE_SUCCESS);
        sv_ode_ensemble one = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = y0 + 3, .params = p + 3, .out = alone, .status = &st1};
        assert_int_equal(sv_ode_solve(NULL, P, &o, &one), SV_OK);
        assert_memory_equal(out + 3, alone, sizeof alone);
        sv_ode_problem_destroy(P);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_entries_named),
        cmocka_unit_test(test_complete_pattern_passes),
        cmocka_unit_test(test_nonfinite_first_trajectory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
