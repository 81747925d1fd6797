/* Sensitivities take one of two Rodas5P attempts: the fused one for tiny
 * dense systems in 4 or 8 lanes (fused_rodas5p_sens_tmpl.h) and the general
 * one (rodas5p.c with sens_rodas5p.c) otherwise, e.g. in 1 or 2 lanes. Both
 * must perform the same operations: every trajectory's state, sensitivities
 * and statistics bit for bit alike whichever ran it. Cases: Robertson
 * (three rates; a rate and an initial value; the analytic source), HIRES
 * (n = 8, the tangent source), a Robertson whose f refuses large stage
 * values (lanes leaving a step's stages early), and the pyrolysis chain of
 * test_invariant.c at atol 1e-24, whose numerically singular M sends lanes
 * to the double-double factor and solves. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ode/ode_internal.h"
#include "solvent/ode.h"
#include "sv_test.h"

enum { NT = 13, MAXN = 8, MAXS = 3, NSAVE = 3 };

typedef struct run_out {
    double y[NT * NSAVE * MAXN], S[NT * NSAVE * MAXN * MAXS];
    sv_ode_traj_status st[NT];
    sv_ode_stats stats[NT];
} run_out;

/* NT trajectories (parameters spread ±20 % when there are any) in `lanes`
 * lanes on one thread, so that `lanes` is the lane count that runs. */
static void solve_in(const sv_ode_problem *P, const double *y0, const double *p0, int np, const double *ts,
                     double rtol, double atol, int lanes, run_out *r)
{
    double p[NT * 3];
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < np; k++) p[t * np + k] = p0[k] * (1 + 0.2 * sin(1.0 + t * (k + 2)));
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol, o.atol = atol, o.lanes = lanes;
    memset(r, 0, sizeof *r);
    sv_ode_ensemble e = {.ntraj = NT, .nsave = NSAVE, .tsave = ts, .y0 = y0, .y0_shared = 1,
                         .params = np ? p : NULL, .out = r->y, .sens_out = r->S, .status = r->st,
                         .stats = r->stats};
    sv_ctx *ctx = NULL;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 1);
    assert_int_equal(sv_ode_solve(ctx, P, &o, &e), SV_OK);
    sv_ctx_destroy(ctx);
}

/* Lanes 4 and 8 (fused) against 1 and 2 (general): the same bits. */
static void same_on_every_path(const char *label, const sv_ode_problem *P, const double *y0, const double *p0,
                               int np, const double *ts, double rtol, double atol, run_out *ref)
{
    static run_out r;
    solve_in(P, y0, p0, np, ts, rtol, atol, 1, ref);
    const int lanes[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) {
        solve_in(P, y0, p0, np, ts, rtol, atol, lanes[k], &r);
        assert_memory_equal(r.st, ref->st, sizeof r.st);
        assert_memory_equal(r.y, ref->y, sizeof r.y);
        assert_memory_equal(r.S, ref->S, sizeof r.S);
        assert_memory_equal(r.stats, ref->stats, sizeof r.stats);
    }
    long acc = 0, nref = 0, nex = 0;
    for (int t = 0; t < NT; t++) {
        assert_int_equal(ref->st[t], SV_ODE_SUCCESS);
        acc += ref->stats[t].accepted, nref += ref->stats[t].nrefused, nex += ref->stats[t].nexact;
    }
    printf("%-28s lanes 1, 2, 4, 8 alike: %ld steps, %ld refused, %ld double-double factors\n", label, acc, nref,
           nex);
}

static sv_ode_problem *with_dirs(const sv_ode_problem *P0, int nsp, const int *sp, int nsy, const int *sy)
{
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_with_sens(NULL, P0, nsp, sp, nsy, sy, &P), SV_OK);
    return P;
}

static void test_builtins(void **s)
{
    (void)s;
    static run_out ref;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    const double ts[NSAVE] = {1e-2, 10, 1e4};
    const int p123[3] = {0, 1, 2}, p1[1] = {0}, y2[1] = {1};
    sv_ode_problem *P = with_dirs(b->prob, 3, p123, 0, NULL);
    same_on_every_path("rober k1 k2 k3", P, b->y0, b->params, 3, ts, 1e-8, 1e-12, &ref);
    sv_ode_problem_destroy(P);
    P = with_dirs(b->prob, 1, p1, 1, y2);
    same_on_every_path("rober k1 y2(0)", P, b->y0, b->params, 3, ts, 1e-6, 1e-10, &ref);
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);

    assert_int_equal(sv_ode_builtin_create(NULL, "hires", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    const double th[NSAVE] = {1, 100, 321.8122};
    const int y18[2] = {0, 7};
    P = with_dirs(b->prob, 0, NULL, 2, y18);
    same_on_every_path("hires y1(0) y8(0)", P, b->y0, NULL, 0, th, 1e-7, 1e-9, &ref);
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* ---- Robertson with a refusing f ---- */
typedef struct refusing {
    sv_ode_problem_desc d; /* the built-in's */
    double ymax;           /* f refuses a state with y2 above it */
} refusing;

static int refusing_f(double t, const double *y, const double *p, double *dy, void *u)
{
    const refusing *R = u;
    if (y[1] > R->ymax) return 1;
    return R->d.f(t, y, p, dy, R->d.user);
}
static int refusing_jac(double t, const double *y, const double *p, double *vals, double *dfdt, void *u)
{
    const refusing *R = u;
    return R->d.jac(t, y, p, vals, dfdt, R->d.user);
}
static int refusing_dfdp(double t, const double *y, const double *p, int k, double *out, void *u)
{
    const refusing *R = u;
    return R->d.dfdp(t, y, p, k, out, R->d.user);
}
static int refusing_jac_dir(double t, const double *y, const double *p, const double *v, const double *vp,
                            double *dvals, double *ddfdt, void *u)
{
    const refusing *R = u;
    return R->d.jac_dir(t, y, p, v, vp, dvals, ddfdt, R->d.user);
}

static void test_refusing_f(void **s)
{
    (void)s;
    static run_out ref;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    static refusing R;
    R.d = b->prob->d;
    /* above y2's peak (3.6e-5 for the standard rates, up to ~4.4e-5 for the spread
     * ones): only a large step's stage overshoots it */
    R.ymax = 5e-5;
    assert_true(R.d.f && R.d.jac && R.d.dfdp && R.d.jac_dir);
    sv_ode_problem_desc d = {.name = "refusing rober", .n = 3, .nparams = 3, .f = refusing_f,
                             .rowptr = R.d.rowptr, .colind = R.d.colind, .jac_source = SV_ODE_JAC_ANALYTIC,
                             .jac = refusing_jac, .user = &R, .sens_source = SV_ODE_SENS_ANALYTIC,
                             .dfdp = refusing_dfdp, .jac_dir = refusing_jac_dir};
    sv_ode_problem *P0 = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P0), SV_OK);
    const int p12[2] = {0, 1};
    sv_ode_problem *P = with_dirs(P0, 2, p12, 0, NULL);
    const double ts[NSAVE] = {1e-3, 1, 100}, p0[3] = {0.04, 1e4, 3e7};
    same_on_every_path("refusing rober k1 k2", P, b->y0, p0, 3, ts, 1e-6, 1e-10, &ref);
    long nref = 0;
    for (int t = 0; t < NT; t++) nref += ref.stats[t].nrefused;
    assert_true(nref > 0);
    sv_ode_problem_destroy(P);
    sv_ode_problem_destroy(P0);
    sv_ode_builtin_destroy(b);
}

/* ---- the pyrolysis chain (test_invariant.c) with d/dk1 ---- */
#define PYRO_TANGENT(T)                                                                                    \
    T r1 = p[0] * y[0] * y[1], r2 = p[1] * y[2], r3 = p[2] * y[0] * y[3];                                  \
    T d1 = p[0] * (v[0] * y[1] + y[0] * v[1]) + (vp ? vp[0] * y[0] * y[1] : 0);                            \
    T d2 = p[1] * v[2] + (vp ? vp[1] * y[2] : 0);                                                          \
    T d3 = p[2] * (v[0] * y[3] + y[0] * v[3]) + (vp ? vp[2] * y[0] * y[3] : 0);                            \
    (void)r1, (void)r2, (void)r3;                                                                          \
    out[0] = -d1 - d3;                                                                                     \
    out[1] = -d1;                                                                                          \
    out[2] = d1 - d2 + d3;                                                                                 \
    out[3] = d2 - d3;

static int pyro_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    double r1 = p[0] * y[0] * y[1], r2 = p[1] * y[2], r3 = p[2] * y[0] * y[3];
    dy[0] = -r1 - r3;
    dy[1] = -r1;
    dy[2] = r1 - r2 + r3;
    dy[3] = r2 - r3;
    return 0;
}
static int pyro_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    double complex r1 = p[0] * y[0] * y[1], r2 = p[1] * y[2], r3 = p[2] * y[0] * y[3];
    dy[0] = -r1 - r3;
    dy[1] = -r1;
    dy[2] = r1 - r2 + r3;
    dy[3] = r2 - r3;
    return 0;
}
static int pyro_tangent(double t, const double *y, const double *p, const double *v, const double *vp, double *out,
                        void *u)
{
    (void)t, (void)u;
    PYRO_TANGENT(double)
    return 0;
}
static int pyro_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                          const double *vp, double complex *out, void *u)
{
    (void)t, (void)u;
    PYRO_TANGENT(double complex)
    return 0;
}

static void test_double_double_lanes(void **s)
{
    (void)s;
    static run_out ref;
    static const int rp[5] = {0, 3, 5, 9, 12}, ci[12] = {0, 1, 3, 0, 1, 0, 1, 2, 3, 0, 2, 3};
    sv_ode_problem_desc d = {.name = "pyrolysis", .n = 4, .nparams = 3, .f = pyro_f, .f_complex = pyro_fc,
                             .jac_source = SV_ODE_JAC_COMPLEX_STEP, .rowptr = rp, .colind = ci,
                             .sens_source = SV_ODE_SENS_TANGENT, .tangent = pyro_tangent,
                             .tangent_complex = pyro_tangent_c};
    sv_ode_problem *P0 = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P0), SV_OK);
    const int p1[1] = {0}, y2[1] = {1};
    sv_ode_problem *P = with_dirs(P0, 1, p1, 1, y2);
    const double y0[4] = {1e-3, 1e-22, 0, 0}, p0[3] = {1e10, 1e3, 3e9}, ts[NSAVE] = {1e13, 1e15, 1e16};
    same_on_every_path("pyrolysis k1 B(0)", P, y0, p0, 3, ts, 1e-8, 1e-24, &ref);
    long nex = 0;
    for (int t = 0; t < NT; t++) nex += ref.stats[t].nexact;
    assert_true(nex > 0);
    sv_ode_problem_destroy(P);
    sv_ode_problem_destroy(P0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_refusing_f),
        cmocka_unit_test(test_double_double_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
