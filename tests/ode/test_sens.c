/* Forward sensitivities against independent references (docs/ode.md,
 * "Sensitivities"):
 *
 * - CVODES 6.4.1 at rtol 1e-12 (tests/ode/cvodes_refs.h, generated once by
 *   tests/ode/data/make_cvodes_refs.c, which writes Robertson and HIRES with
 *   their sensitivity equations by hand and shares no code with Solvent);
 * - central differences of the solution computed at rtol 1e-12 without any
 *   sensitivity machinery (Richardson-extrapolated: two steps δ and δ/2).
 *
 * At rtol 1e-8 the sensitivities must agree to 1e-6, relative to each
 * entry with a floor of 1e-3·|y_i|/|θ_j| (below it an entry moves y_i by
 * less than a part in 1e3 per unit relative change of θ_j, where central
 * differences are noise; CVODES's entries are compared with a floor of
 * 1e-6·|y_i|/|θ_j|). Robertson (three rate constants) with every source of
 * the right-hand side and both second-order sources, HIRES (two initial
 * values) with Rodas5P and Tsit5, EB-50 (its wavenumber k, on which the
 * initial state depends too, and η(0)) for two k with both second-order
 * sources, POLLU (three rate constants, an initial value) with the analytic
 * and the tangent source, Lorenz with Tsit5. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvodes_refs.h"
#include "ode/ode_internal.h"
#include "solvent/ode.h"
#include "sv_test.h"

enum { MAXN = 128, MAXS = 4, MAXT = 5 };

typedef struct dir {
    int param;    /* parameter index, or -1 */
    int y0;       /* initial value index, or -1 */
    double delta; /* relative central-difference step */
} dir;

typedef struct scase {
    const char *name; /* built-in problem */
    double arg;
    sv_ode_method method;
    double rtol, atol;
    int nsave;
    double tsave[MAXT];
    int ns;
    dir d[MAXS];
} scase;

typedef struct result {
    int n, ns, nsave;
    double y[MAXT * MAXN], S[MAXT * MAXN * MAXS];
    double theta[MAXS];
    sv_ode_stats stats;
} result;

/* dy0/dk of EB-50's initial state: a cubic in k, so two central
 * differences extrapolate to it up to rounding. */
static void eb_dy0dk(double k, double *d)
{
    enum { EB_N = 50 };
    double a[EB_N], b[EB_N], c[EB_N], e[EB_N], h = 1e-3 * k;
    sv_ode_eb50_initial(k + h, a), sv_ode_eb50_initial(k - h, b);
    sv_ode_eb50_initial(k + h / 2, c), sv_ode_eb50_initial(k - h / 2, e);
    for (int i = 0; i < EB_N; i++) d[i] = (4 * (c[i] - e[i]) / h - (a[i] - b[i]) / (2 * h)) / 3;
}

static int is_eb(const scase *c) { return !strcmp(c->name, "eb50"); }

/* The state (and sensitivities when P has directions and S is non-NULL). */
static void run(const scase *c, const sv_ode_builtin *b, const sv_ode_problem *P, const sv_ode_options *o,
                const double *y0, const double *p, const double *s0, double *y, double *S, sv_ode_stats *stats)
{
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = b->t0, .nsave = c->nsave, .tsave = c->tsave, .y0 = y0, .params = p,
                         .out = y, .sens_out = S, .sens0 = s0, .status = &st, .stats = stats};
    assert_int_equal(sv_ode_solve(NULL, P, o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
}

/* θ of direction j for the problem's standard state (its scale: 1 for a
 * zero initial value). */
static double theta(const sv_ode_builtin *b, const dir *d)
{
    double v = d->param >= 0 ? b->params[d->param] : b->y0[d->y0];
    return v != 0 ? fabs(v) : 1;
}

/* The sensitivities of case c with the given problem (directions as c). */
static void sens_run(const scase *c, const sv_ode_builtin *b, const sv_ode_problem *P, result *r)
{
    const int n = sv_ode_problem_n(b->prob);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = c->method;
    o.rtol = c->rtol;
    o.atol = c->atol;
    double s0[MAXN * MAXS] = {0}, dk[MAXN];
    for (int j = 0; j < c->ns; j++) {
        if (c->d[j].y0 >= 0) s0[c->d[j].y0 * c->ns + j] = 1;
        if (c->d[j].param >= 0 && is_eb(c)) {
            eb_dy0dk(b->params[0], dk);
            for (int i = 0; i < n; i++) s0[i * c->ns + j] = dk[i];
        }
        r->theta[j] = theta(b, &c->d[j]);
    }
    r->n = n, r->ns = c->ns, r->nsave = c->nsave;
    run(c, b, P, &o, b->y0, b->params, s0, r->y, r->S, &r->stats);
}

/* Central differences at rtol 1e-12, Richardson-extrapolated. */
static void cd_run(const scase *c, const sv_ode_builtin *b, result *r)
{
    const int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob), nt = c->nsave;
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-12;
    o.atol = c->atol * 1e-4;
    r->n = n, r->ns = c->ns, r->nsave = nt;
    run(c, b, b->prob, &o, b->y0, b->params, NULL, r->y, NULL, &r->stats);
    for (int j = 0; j < c->ns; j++) {
        const dir *d = &c->d[j];
        double th = theta(b, d), D[2][MAXT * MAXN];
        r->theta[j] = th;
        for (int half = 0; half < 2; half++) {
            double h = d->delta * th / (half ? 2 : 1), yp[MAXT * MAXN], ym[MAXT * MAXN];
            for (int sg = -1; sg <= 1; sg += 2) {
                double y0[MAXN], p[32];
                memcpy(y0, b->y0, sizeof(double) * n);
                memcpy(p, b->params, sizeof(double) * (np ? np : 1));
                if (d->param >= 0) {
                    p[d->param] += sg * h;
                    if (is_eb(c)) sv_ode_eb50_initial(p[0], y0);
                } else {
                    y0[d->y0] += sg * h;
                }
                run(c, b, b->prob, &o, y0, p, NULL, sg > 0 ? yp : ym, NULL, &r->stats);
            }
            for (int q = 0; q < nt * n; q++) D[half][q] = (yp[q] - ym[q]) / (2 * h);
        }
        for (int q = 0; q < nt * n; q++) r->S[q * c->ns + j] = (4 * D[1][q] - D[0][q]) / 3;
    }
}

/* Largest relative disagreement of a with ref, floor fl·|y_i|/|θ_j|. */
static double disagreement(const result *a, const double *ref, const double *yref, const double *theta, double fl)
{
    double m = 0;
    for (int s = 0; s < a->nsave; s++)
        for (int i = 0; i < a->n; i++)
            for (int j = 0; j < a->ns; j++) {
                size_t q = ((size_t)s * a->n + i) * a->ns + j;
                double floor_ = fl * fabs(yref[s * a->n + i]) / theta[j];
                m = fmax(m, fabs(a->S[q] - ref[q]) / (fabs(ref[q]) + floor_ + 1e-300));
            }
    return m;
}

/* max_i |a − ref| / max_i |ref| per direction and save time, the largest
 * of them. */
static double normwise(const result *a, const double *ref)
{
    double m = 0;
    for (int s = 0; s < a->nsave; s++)
        for (int j = 0; j < a->ns; j++) {
            double d = 0, r = 0;
            for (int i = 0; i < a->n; i++) {
                size_t q = ((size_t)s * a->n + i) * a->ns + j;
                d = fmax(d, fabs(a->S[q] - ref[q]));
                r = fmax(r, fabs(ref[q]));
            }
            m = fmax(m, d / r);
        }
    return m;
}

/* A built-in problem with the case's directions. */
static sv_ode_problem *with_dirs(const scase *c, const sv_ode_builtin *b)
{
    int sp[MAXS], sy[MAXS], np_ = 0, ny = 0;
    for (int j = 0; j < c->ns; j++) {
        if (c->d[j].param >= 0) sp[np_++] = c->d[j].param;
        else sy[ny++] = c->d[j].y0;
    }
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_with_sens(NULL, b->prob, np_, sp, ny, sy, &P), SV_OK);
    return P;
}

/* The second-order source a variant keeps (Rodas5P needs one of them). */
enum { SECOND_BOTH = 0, SECOND_JAC_DIR = 1, SECOND_COMPLEX_STEP = 2 };
static void keep_second(sv_ode_problem_desc *d, int keep)
{
    if (keep == SECOND_JAC_DIR) d->tangent_complex = NULL;
    if (keep == SECOND_COMPLEX_STEP) d->jac_dir = NULL, d->jac_dir_batch = NULL; /* either is used when given */
}

/* Case c on a variant of P: its source of ∂f/∂θ (−1: P's) and the
 * second order it keeps. */
static void variant_run(const scase *c, const sv_ode_builtin *b, const sv_ode_problem *P, int source, int keep,
                        result *r)
{
    sv_ode_problem_desc d = P->d;
    if (source >= 0) d.sens_source = (sv_ode_sens_source)source;
    keep_second(&d, keep);
    sv_ode_problem *Q = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &Q), SV_OK);
    sens_run(c, b, Q, r);
    sv_ode_problem_destroy(Q);
}

/* ---- Robertson: every source against CVODES and central differences ---- */
static const scase ROBER = {"rober", 0, SV_ODE_RODAS5P, 1e-8, 1e-14, 5, {1e-2, 1, 1e2, 1e4, 1e6},
                            3, {{0, -1, 1e-3}, {1, -1, 1e-3}, {2, -1, 1e-3}}};

static void check_rober(sv_ode_sens_source src, int second, double tol, const result *cd)
{
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    sv_ode_problem_desc d = b->prob->d;
    d.sens_source = src;
    keep_second(&d, second);
    sv_ode_problem *P0 = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P0), SV_OK);
    sv_ode_builtin tmp = *b;
    tmp.prob = P0;
    sv_ode_problem *P = with_dirs(&ROBER, &tmp);
    result r;
    sens_run(&ROBER, b, P, &r);
    double e_cv = disagreement(&r, &CV_ROBER_S[0][0][0], &CV_ROBER_Y[0][0], r.theta, 1e-6);
    double e_cd = disagreement(&r, cd->S, cd->y, r.theta, 1e-3);
    static const char *srcs[] = {"analytic", "complex step", "tangent", "finite differences"};
    printf("Robertson, %-18s second order %-14s: vs CVODES %.1e, vs central differences %.1e "
           "(%ld steps, %ld sensitivity rhs, %ld Jacobian derivatives)\n",
           srcs[src], second == 1 ? "jac_dir" : "complex step", e_cv, e_cd, r.stats.accepted, r.stats.nsens_rhs,
           r.stats.nsens_jac);
    assert_true(e_cv < tol);
    assert_true(e_cd < tol);
    sv_ode_problem_destroy(P);
    sv_ode_problem_destroy(P0);
    sv_ode_builtin_destroy(b);
}

static void test_rober_sources(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    result cd;
    cd_run(&ROBER, b, &cd);
    /* the reference against itself: central differences and CVODES agree */
    result cvr = cd;
    memcpy(cvr.S, CV_ROBER_S, sizeof CV_ROBER_S);
    printf("Robertson: CVODES vs central differences %.1e\n", disagreement(&cvr, cd.S, cd.y, cd.theta, 1e-3));
    sv_ode_builtin_destroy(b);
    for (int src = 0; src < 3; src++) {
        check_rober((sv_ode_sens_source)src, 1, 1e-6, &cd);
        check_rober((sv_ode_sens_source)src, 2, 1e-6, &cd);
    }
    /* central differences of f: documented as inexact (error ~ε^(2/3)) */
    check_rober(SV_ODE_SENS_FD, 1, 1e-5, &cd);
}

/* ---- HIRES: two initial values, Rodas5P and Tsit5 ---- */
static void test_hires(void **s)
{
    (void)s;
    scase c = {"hires", 0, SV_ODE_RODAS5P, 1e-8, 1e-12, 4, {1, 10, 100, 321.8122}, 2,
               {{-1, 0, 1e-3}, {-1, 7, 1e-3}}};
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "hires", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    result cd, r;
    cd_run(&c, b, &cd);
    sv_ode_problem *P = with_dirs(&c, b);
    for (int m = 0; m < 2; m++) {
        c.method = (sv_ode_method)m;
        sens_run(&c, b, P, &r);
        double e_cv = disagreement(&r, &CV_HIRES_S[0][0][0], &CV_HIRES_Y[0][0], r.theta, 1e-6);
        double e_cd = disagreement(&r, cd.S, cd.y, r.theta, 1e-3);
        printf("HIRES, %s: vs CVODES %.1e, vs central differences %.1e (%ld steps)\n", m ? "Tsit5" : "Rodas5P",
               e_cv, e_cd, r.stats.accepted);
        assert_true(e_cv < 1e-6);
        assert_true(e_cd < 1e-6);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* ---- EB-50: the wavenumber and η(0), two wavenumbers ----
 * The state's own error at rtol 1e-8 reaches 7.5e-7 relative in an
 * oscillating photon multipole (T_7 at τ = 14000, against rtol 1e-12), and
 * its sensitivities follow it: 1e-6 normwise per direction (measured
 * 1e-10 and 7e-9), 1e-5 entry by entry (measured 1.3e-6 and 2.4e-6, the
 * same with other difference steps: the solution's, not the reference's). */
static void test_eb50(void **s)
{
    (void)s;
    const double ks[2] = {0.01, 0.1};
    for (int q = 0; q < 2; q++) {
        /* k moves the acoustic phase kτ (up to 1400 rad): a difference step
         * of 0.05 rad there; the system is linear in y0, so η(0) takes a
         * large one */
        scase c = {"eb50", ks[q], SV_ODE_RODAS5P, 1e-8, 1e-12, 2, {1000, 14000}, 2,
                   {{0, -1, 5e-2 / (ks[q] * 14000)}, {-1, 0, 1e-2}}};
        sv_ode_builtin *b = NULL;
        assert_int_equal(sv_ode_builtin_create(NULL, "eb50", ks[q], SV_ODE_JAC_ANALYTIC, &b), SV_OK);
        result cd, r;
        cd_run(&c, b, &cd);
        sv_ode_problem *P = with_dirs(&c, b);
        /* both second-order sources: jac_dir, and complex step on the tangent */
        for (int second = 0; second < 2; second++) {
            variant_run(&c, b, P, -1, second ? SECOND_COMPLEX_STEP : SECOND_BOTH, &r);
            double e = disagreement(&r, cd.S, cd.y, r.theta, 1e-3), en = normwise(&r, cd.S);
            printf("EB-50 k = %g, second order %s: vs central differences %.1e componentwise, %.1e normwise (%ld "
                   "steps, dδc/dk at τ = 14000: %.6e)\n",
                   ks[q], second ? "complex step" : "jac_dir", e, en, r.stats.accepted, r.S[(50 + 1) * 2 + 0]);
            assert_true(en < 1e-6);
            assert_true(e < 1e-5);
        }
        sv_ode_problem_destroy(P);
        sv_ode_builtin_destroy(b);
    }
}

/* ---- POLLU: three rate constants that move the solution by O(1) per unit
 * relative change (k1, k4, k23) and an initial value, with the analytic and
 * the tangent source: 1e-6 normwise, 1e-5 entry by entry (measured 1.1e-7
 * and 1.9e-6: a few entries move their species by parts in 1e4, at the
 * edge of what the differences resolve). ---- */
static void test_pollu(void **s)
{
    (void)s;
    scase c = {"pollu", 0, SV_ODE_RODAS5P, 1e-8, 1e-12, 3, {1, 10, 60}, 4,
               {{0, -1, 1e-3}, {3, -1, 1e-3}, {22, -1, 1e-3}, {-1, 1, 1e-3}}};
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "pollu", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    result cd, r;
    cd_run(&c, b, &cd);
    sv_ode_problem *P = with_dirs(&c, b);
    const sv_ode_sens_source srcs[2] = {SV_ODE_SENS_ANALYTIC, SV_ODE_SENS_TANGENT};
    for (int k = 0; k < 2; k++) {
        variant_run(&c, b, P, srcs[k], SECOND_BOTH, &r);
        double e = disagreement(&r, cd.S, cd.y, r.theta, 1e-3), en = normwise(&r, cd.S);
        printf("POLLU, %s: vs central differences %.1e componentwise, %.1e normwise (%ld steps)\n",
               k ? "tangent" : "analytic", e, en, r.stats.accepted);
        assert_true(en < 1e-6);
        assert_true(e < 1e-5);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* ---- Lorenz with Tsit5 (explicit: no second order needed) ---- */
static void test_lorenz_tsit5(void **s)
{
    (void)s;
    scase c = {"lorenz", 0, SV_ODE_TSIT5, 1e-8, 1e-10, 3, {0.25, 0.5, 1}, 4,
               {{0, -1, 1e-3}, {1, -1, 1e-3}, {2, -1, 1e-3}, {-1, 0, 1e-3}}};
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "lorenz", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    result cd, r;
    cd_run(&c, b, &cd);
    sv_ode_problem *P = with_dirs(&c, b);
    const sv_ode_sens_source srcs[3] = {SV_ODE_SENS_TANGENT, SV_ODE_SENS_COMPLEX_STEP, SV_ODE_SENS_ANALYTIC};
    for (int k = 0; k < 3; k++) {
        variant_run(&c, b, P, srcs[k], SECOND_BOTH, &r);
        double e = disagreement(&r, cd.S, cd.y, r.theta, 1e-3);
        printf("Lorenz, Tsit5, source %d: vs central differences %.1e (%ld steps)\n", (int)srcs[k], e,
               r.stats.accepted);
        assert_true(e < 1e-6);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* ---- OREGO, VDPOL and Lorenz with Rodas5P: every built-in has its
 * sensitivity callbacks (tangent, the Jacobian's derivative along a
 * direction, and the tangent at complex y): each second-order source, the
 * complex-step source that uses none of them where f takes complex
 * parameters and the analytic ∂f/∂p where there is one, against central
 * differences of the solution. The save times
 * stay where central differences are a reference at rtol 1e-8's 1e-6:
 * VDPOL (ε = 1e-6) before its first relaxation jump (near t = 0.8; across
 * it the jump's timing makes dy/dε a near step, 3.3e-3 at t = 2), OREGO
 * within its first pulses (at t = 360, after three, 9.6e-6, on every
 * second-order source alike). ---- */
static void check_small(scase c, const char *what)
{
    static const struct {
        const char *name;
        int source, keep;
    } variants[] = {{"tangent, jac_dir", -1, SECOND_JAC_DIR},
                    {"tangent, complex step on it", -1, SECOND_COMPLEX_STEP},
                    {"complex-step source", SV_ODE_SENS_COMPLEX_STEP, SECOND_COMPLEX_STEP},
                    {"analytic dfdp", SV_ODE_SENS_ANALYTIC, SECOND_COMPLEX_STEP}};
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, c.name, 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    result cd, r;
    cd_run(&c, b, &cd);
    sv_ode_problem *P = with_dirs(&c, b);
    const sv_ode_problem_desc *d = &P->d;
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        int src = variants[k].source;
        if (src == SV_ODE_SENS_COMPLEX_STEP && (!d->f_complex || (d->nparams && !d->f_complex_p))) continue;
        if (src == SV_ODE_SENS_ANALYTIC && (!d->nparams || !d->dfdp)) continue;
        variant_run(&c, b, P, src, variants[k].keep, &r);
        double e = disagreement(&r, cd.S, cd.y, r.theta, 1e-3);
        printf("%s, Rodas5P, %s: vs central differences %.1e (%ld steps, %ld Jacobian derivatives)\n", what,
               variants[k].name, e, r.stats.accepted, r.stats.nsens_jac);
        assert_true(e < 1e-6);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

static void test_small_builtins(void **s)
{
    (void)s;
    check_small((scase){"orego", 0, SV_ODE_RODAS5P, 1e-8, 1e-10, 3, {1, 10, 50}, 2, {{-1, 0, 1e-3}, {-1, 2, 1e-3}}},
                "OREGO y1(0), y3(0)");
    check_small((scase){"vdpol", 0, SV_ODE_RODAS5P, 1e-8, 1e-10, 3, {0.1, 0.25, 0.5}, 2, {{0, -1, 1e-3}, {-1, 0, 1e-3}}},
                "VDPOL eps, y1(0)");
    check_small((scase){"lorenz", 0, SV_ODE_RODAS5P, 1e-8, 1e-10, 3, {0.25, 0.5, 1}, 4,
                        {{0, -1, 1e-3}, {1, -1, 1e-3}, {2, -1, 1e-3}, {-1, 0, 1e-3}}},
                "Lorenz sigma, rho, beta, x(0)");
    check_small((scase){"bruss2d", 0, SV_ODE_RODAS5P, 1e-8, 1e-10, 3, {1, 2, 5}, 3, {{0, -1, 1e-3}, {2, -1, 1e-3}, {-1, 0, 1e-3}}},
                "Brusselator 8 x 8 A, alpha, u1(0)");
}

/* ---- contracts ---- */
/* With the sensitivities out of the error control the state takes the
 * plain solve's steps, bit for bit; a trajectory's sensitivities do not
 * depend on its lane or batch. */
static void test_state_unchanged_and_lanes(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    sv_ode_problem *P = with_dirs(&ROBER, b);
    enum { NT = 6 };
    double p[NT * 3], ts[3] = {1, 100, 1e4};
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < 3; k++) p[t * 3 + k] = b->params[k] * (1 + 0.03 * (t - 2) * (k + 1));
    double y_plain[NT * 9], y_sens[NT * 9], S4[NT * 27], S1[NT * 27];
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-7, o.atol = 1e-12;
    sv_ode_ensemble e = {.ntraj = NT, .nsave = 3, .tsave = ts, .y0 = b->y0, .y0_shared = 1, .params = p,
                         .out = y_plain};
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    o.sens_errcon = SV_ODE_SENS_ERR_STATE;
    o.lanes = 4;
    e.out = y_sens, e.sens_out = S4;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_memory_equal(y_plain, y_sens, sizeof y_plain);
    o.lanes = 1;
    e.sens_out = S1;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_memory_equal(S4, S1, sizeof S4);
    /* with the sensitivities in the error control, the state changes but
     * stays within the tolerance */
    o.sens_errcon = SV_ODE_SENS_ERR_FULL;
    e.out = y_sens;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    for (int q = 0; q < NT * 9; q++) sv_assert_close(y_sens[q], y_plain[q], 1e-5, 1e-11);
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* The single-precision LU (refined stage solves, also for the directions)
 * and a user's direction scales give the same accuracy against CVODES. */
static void test_single_lu_and_scales(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    sv_ode_problem *P = with_dirs(&ROBER, b);
    const double scales[3] = {0.1, 1e3, 1e8};
    for (int k = 0; k < 2; k++) {
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = ROBER.rtol, o.atol = ROBER.atol;
        if (k == 0) o.lu = SV_ODE_LU_SINGLE;
        else o.sens_scale = scales;
        result r = {.n = 3, .ns = 3, .nsave = ROBER.nsave};
        for (int j = 0; j < 3; j++) r.theta[j] = b->params[j];
        run(&ROBER, b, P, &o, b->y0, b->params, NULL, r.y, r.S, &r.stats);
        double e = disagreement(&r, &CV_ROBER_S[0][0][0], &CV_ROBER_Y[0][0], r.theta, 1e-6);
        printf("Robertson, %s: vs CVODES %.1e (%ld steps)\n", k ? "sens_scale (0.1, 1e3, 1e8)" : "single LU", e,
               r.stats.accepted);
        assert_true(e < 1e-6);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

static void test_bad_requests(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "lorenz", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    int bad = 3, sp = 0;
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_with_sens(NULL, b->prob, 1, &bad, 0, NULL, &P), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "sens_params[0] = 3"));
    assert_int_equal(sv_ode_problem_with_sens(NULL, b->prob, 1, &sp, 0, NULL, &P), SV_OK);
    double y[3], S[3], ts = 1;
    sv_ode_options o;
    sv_ode_options_default(&o);
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &ts, .y0 = b->y0, .params = b->params, .out = y,
                         .sens_out = S};
    /* without a second-order callback Rodas5P refuses, Tsit5 runs */
    sv_ode_problem_desc d = P->d;
    d.jac_dir = NULL, d.jac_dir_batch = NULL, d.tangent_complex = NULL;
    sv_ode_problem *first_only = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &first_only), SV_OK);
    sv_ode_problem_destroy(P);
    P = first_only;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "jac_dir or tangent_complex"));
    o.method = SV_ODE_TSIT5;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    /* sensitivities asked of a problem without directions */
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "no sensitivity directions"));
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

/* ---- the loss and its gradient ---- */
static void test_loss_gradient(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    sv_ode_problem *P = with_dirs(&ROBER, b);
    double ts[3] = {1, 100, 1e4}, data[9], sigma[3] = {1e-3, 1e-7, 1e-3};
    /* data: the solution for rates 5 % off, with y2 unobserved at t = 1 */
    double p_true[3] = {0.042, 1.05e4, 2.85e7}, y[9], S[27], loss, grad[3];
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-10, o.atol = 1e-16;
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 3, .tsave = ts, .y0 = b->y0, .params = p_true, .out = data,
                         .status = &st};
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    data[1] = NAN;
    e.params = b->params, e.out = y, e.sens_out = S;
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(sv_ode_loss_gradient(P, &e, data, sigma, &loss, grad), SV_OK);
    double want = 0;
    for (int q = 0; q < 9; q++)
        if (q != 1) want += pow((y[q] - data[q]) / sigma[q % 3], 2);
    sv_assert_close(loss, want, 1e-14, 0);
    /* central differences of the loss itself */
    for (int j = 0; j < 3; j++) {
        double lp[2];
        for (int sg = 0; sg < 2; sg++) {
            double pp[3] = {b->params[0], b->params[1], b->params[2]}, yy[9];
            pp[j] *= 1 + (sg ? 1e-6 : -1e-6);
            sv_ode_ensemble ec = {.ntraj = 1, .nsave = 3, .tsave = ts, .y0 = b->y0, .params = pp, .out = yy};
            assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &ec), SV_OK);
            assert_int_equal(sv_ode_loss_gradient(b->prob, &ec, data, sigma, &lp[sg], NULL), SV_OK);
        }
        double cdg = (lp[1] - lp[0]) / (2e-6 * b->params[j]);
        printf("dloss/dk%d: %.8e, central difference %.8e\n", j + 1, grad[j], cdg);
        sv_assert_close(grad[j], cdg, 1e-5, 0);
    }
    sv_ode_problem_destroy(P);
    sv_ode_builtin_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rober_sources),
        cmocka_unit_test(test_hires),
        cmocka_unit_test(test_eb50),
        cmocka_unit_test(test_pollu),
        cmocka_unit_test(test_lorenz_tsit5),
        cmocka_unit_test(test_small_builtins),
        cmocka_unit_test(test_state_unchanged_and_lanes),
        cmocka_unit_test(test_single_lu_and_scales),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_loss_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
