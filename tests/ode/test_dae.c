/* Mass matrices and index-1 DAEs (docs/how-to/ode-dae.md) against
 * independent references:
 *  - the Bari test set's Chemical Akzo Nobel problem (Mazzia & Magherini,
 *    release 2.4, "chemakzo": reference y(180) computed there with PSIDE
 *    at rtol = atol = 1e-19 on a Cray C90) at rtol = atol = 1e-4 … 1e-10;
 *  - Robertson as a DAE (y3 from the conservation law) against the ODE
 *    form's published reference at t = 1e11 (Bari "rober"), and the
 *    conservation law itself at dense-output times;
 *  - consistent initial values: Akzo's y6 = Ks·y1·y4 (the algebraic
 *    equation solved by hand) from a perturbed y6;
 *  - a non-singular, non-diagonal M with Tsit5 and Rodas5P: M·y' = −y for
 *    the tridiagonal M = tridiag(1, 4, 1)/6, whose eigenvectors
 *    sin(jkπ/(n+1)) give the solution in closed form, and a 2 × 2 M with
 *    the closed-form 2 × 2 matrix exponential;
 *  - the Bari test set's transistor amplifier ("transamp", reference
 *    y(0.2) from PSIDE at 1e-14): a singular M without zero rows, and its
 *    consistent initial values against its constraints written out again;
 *  - the refusals: Tsit5 with a DAE, sensitivities with M, a non-finite M,
 *    an index-2 system, inconsistent y0. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_ode.h"
#include "sv_test.h"

/* chemakzo's reference at t = 180 */
static const double R_AKZO[6] = {0.1150794920661702, 0.1203831471567715e-2, 0.1611562887407974,
                                 0.3656156421249283e-3, 0.1708010885264404e-1, 0.4873531310307455e-2};
/* rober's reference at t = 1e11 */
static const double R_ROBER[3] = {0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00};

static sv_ode_builtin *builtin(const char *name)
{
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, name, 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    return b;
}

/* ---- Akzo Nobel ------------------------------------------------------------ */
/* The test set runs rtol = atol = h0 = tol. Required: the digits of the
 * tolerance less one (the margin test_testset.c allows the ODE problems). */
static void test_akzo_tolerances(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("akzo");
    assert_int_equal(sv_ode_problem_nalg(b->prob), 1);
    for (int p = 4; p <= 10; p++) {
        double tol = pow(10, -p), y[6];
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = o.atol = o.first_step = tol;
        sv_ode_stats st = ode_run_success(b, &o, y);
        double scd = ode_scd(6, y, R_AKZO);
        printf("akzo tol 1e-%02d: scd %.2f, steps %ld/%ld, f %ld, jac %ld\n", p, scd, st.accepted, st.rejected,
               st.nf, st.njac);
        assert_true(scd >= p - 1);
    }
    sv_ode_builtin_destroy(b);
}

/* The same at rtol 1e-7 through the sparse engine's kernels (single LU,
 * refined), and as an ensemble of 9 in lanes of 4: each lane's numbers
 * are its own, bit for bit those of the single run. */
static void test_akzo_paths(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("akzo");
    enum { NT = 9 };
    double yref[6], y[6 * NT];
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = o.atol = 1e-7;
    ode_run_success(b, &o, yref);
    assert_true(ode_scd(6, yref, R_AKZO) >= 6);
    o.lu = SV_ODE_LU_SINGLE;
    ode_run_success(b, &o, y);
    printf("akzo 1e-7 single LU: scd %.2f\n", ode_scd(6, y, R_AKZO));
    assert_true(ode_scd(6, y, R_AKZO) >= 6);
    o.lu = SV_ODE_LU_DOUBLE;
    o.lanes = 4;
    sv_ode_ensemble e = {.ntraj = NT, .t0 = 0, .nsave = 1, .tsave = &b->t1, .y0 = b->y0, .y0_shared = 1,
                         .params = b->params, .params_shared = 1, .out = y};
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    for (int t = 0; t < NT; t++) assert_memory_equal(y + 6 * t, yref, sizeof yref);
    sv_ode_builtin_destroy(b);
}

/* An ensemble over perturbed Ks: each trajectory's y0 made consistent by
 * Newton (y6 = Ks·y1·y4, exactly the equation) and reported in y0_out. */
static void test_akzo_consistent_init(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("akzo");
    enum { NT = 5, NP = 9 };
    double params[NT * NP], y0[6], out[NT * 6], y0_out[NT * 6];
    memcpy(y0, b->y0, sizeof y0);
    y0[5] *= 1.5; /* inconsistent: 0 = Ks y1 y4 − y6 fails by a third of y6 */
    for (int t = 0; t < NT; t++) {
        memcpy(params + t * NP, b->params, sizeof(double) * NP);
        params[t * NP + 6] *= 1 + 0.05 * t; /* Ks */
    }
    sv_ode_traj_status st[NT];
    sv_ode_ensemble e = {.ntraj = NT, .t0 = 0, .nsave = 1, .tsave = &b->t1, .y0 = y0, .y0_shared = 1,
                         .params = params, .out = out, .status = st, .y0_out = y0_out};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = o.atol = 1e-8;
    /* the check names the equation, its residual and the variable */
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_ERR_ARG);
    printf("check: %s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "trajectory 0"));
    assert_non_null(strstr(sv_last_error(), "algebraic equation 5"));
    assert_non_null(strstr(sv_last_error(), "changes y_5"));
    o.init = SV_ODE_INIT_COMPUTE;
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    for (int t = 0; t < NT; t++) {
        assert_int_equal(st[t], SV_ODE_SUCCESS);
        double ks = params[t * NP + 6];
        for (int i = 0; i < 5; i++) assert_true(y0_out[t * 6 + i] == y0[i]); /* differential: kept */
        sv_assert_close(y0_out[t * 6 + 5], ks * y0[0] * y0[3], 1e-14, 0);
    }
    /* trajectory 0 has the test set's constants: its reference applies */
    assert_true(ode_scd(6, out, R_AKZO) >= 7);
    sv_ode_builtin_destroy(b);
}

/* ---- Robertson as a DAE ------------------------------------------------------ */
static void test_rober_dae(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("rober_dae");
    const double rt[2] = {1e-6, 1e-9}, at[2] = {1e-10, 1e-13};
    /* the ODE form's figures for Rodas5P (test_testset.c, the reference's
     * published 5.3 and 7.2) less half a digit */
    const double want[2] = {4.8, 6.7};
    for (int k = 0; k < 2; k++) {
        double y[3];
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = rt[k];
        o.atol = at[k];
        sv_ode_stats st = ode_run_success(b, &o, y);
        double scd = ode_scd(3, y, R_ROBER);
        printf("rober_dae rtol %.0e: scd %.2f, steps %ld/%ld\n", rt[k], scd, st.accepted, st.rejected);
        assert_true(scd >= want[k]);
    }
    sv_ode_builtin_destroy(b);
}

/* Dense output: the algebraic equation y1 + y2 + y3 = 1 holds between
 * steps to the tolerance (each component's error is within it). */
static void test_rober_dae_dense_output(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("rober_dae");
    enum { NS = 40 };
    double ts[NS], out[NS * 3];
    for (int k = 0; k < NS; k++) ts[k] = 0.4 * pow(10, (k - 10) * 0.3);
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = NS, .tsave = ts, .y0 = b->y0, .params = b->params,
                         .out = out, .status = &st};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-7;
    o.atol = 1e-11;
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    double worst = 0;
    for (int k = 0; k < NS; k++) worst = fmax(worst, fabs(out[3 * k] + out[3 * k + 1] + out[3 * k + 2] - 1));
    printf("rober_dae dense output: max |y1 + y2 + y3 - 1| = %.2e\n", worst);
    assert_true(worst <= 1e-7);
    sv_ode_builtin_destroy(b);
}

/* ---- a singular M not in semi-explicit form: the transistor amplifier ---------- */
/* transamp's reference at t = 0.2 (Bari test set, "transamp": PSIDE at
 * rtol = atol = 1e-14 on a Cray C90) */
static const double R_TRANSAMP[8] = {-0.5562145012262709e-2, 0.3006522471903042e1, 0.2849958788608128e1,
                                     0.2926422536206241e1,  0.2704617865010554e1, 0.2761837778393145e1,
                                     0.4770927631616772e1,  0.1236995868091548e1};

static void test_transamp(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("transamp");
    assert_int_equal(sv_ode_problem_nalg(b->prob), 3); /* rank M = 5 */
    for (int p = 4; p <= 8; p++) {
        double tol = pow(10, -p), y[8];
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.rtol = o.atol = tol;
        sv_ode_stats st = ode_run_success(b, &o, y);
        double scd = ode_scd(8, y, R_TRANSAMP);
        printf("transamp tol 1e-%02d: scd %.2f, steps %ld/%ld\n", p, scd, st.accepted, st.rejected);
        assert_true(scd >= p - 1);
    }
    sv_ode_builtin_destroy(b);
}

/* The test set's f of transamp at t = 0 (U_e = 0), written out again for
 * the check: its constraints are f1 + f2 = 0, f4 + f5 = 0, f7 + f8 = 0
 * (M's rows 1 and 2, 4 and 5, 7 and 8 sum to zero). */
static void transamp_f0(const double *y, double *f)
{
    const double ub = 6, uf = 0.026, al = 0.99, be = 1e-6, r = 9000;
    double g1 = be * (exp((y[1] - y[2]) / uf) - 1), g2 = be * (exp((y[4] - y[5]) / uf) - 1);
    f[0] = y[0] / 1000, f[1] = y[1] / r + (y[1] - ub) / r + (1 - al) * g1, f[2] = y[2] / r - g1;
    f[3] = (y[3] - ub) / r + al * g1, f[4] = y[4] / r + (y[4] - ub) / r + (1 - al) * g2, f[5] = y[5] / r - g2;
    f[6] = (y[6] - ub) / r + al * g2, f[7] = y[7] / r;
}

/* y2 raised by 0.1 V breaks f1 + f2 = 0: the check names a constraint;
 * Newton restores all three while keeping the capacitors' charges M·y0
 * (it moves y only along M's null space). */
static void test_transamp_consistent_init(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("transamp");
    double y0[8], out[8], y0_out[8], t1 = 1e-3;
    memcpy(y0, b->y0, sizeof y0);
    y0[1] += 0.1;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = 1, .tsave = &t1, .y0 = y0, .out = out, .y0_out = y0_out};
    sv_ode_options o;
    sv_ode_options_default(&o);
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_ERR_ARG);
    printf("check: %s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "algebraic constraint"));
    o.init = SV_ODE_INIT_COMPUTE;
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    double f[8];
    transamp_f0(y0_out, f);
    printf("transamp consistent y0: f1+f2 %.2e, f4+f5 %.2e, f7+f8 %.2e; y1 %.6f y2 %.6f\n", f[0] + f[1], f[3] + f[4],
           f[6] + f[7], y0_out[0], y0_out[1]);
    assert_true(fabs(f[0] + f[1]) <= 1e-15 && fabs(f[3] + f[4]) <= 1e-15 && fabs(f[6] + f[7]) <= 1e-15);
    /* the charges: (M y)_1 = C1 (y2 − y1), (M y)_4 = C3 (y5 − y4), (M y)_7 = C5 (y8 − y7); C2 y3, C4 y6 */
    sv_assert_close(y0_out[1] - y0_out[0], y0[1] - y0[0], 1e-12, 1);
    sv_assert_close(y0_out[4] - y0_out[3], y0[4] - y0[3], 1e-12, 1);
    sv_assert_close(y0_out[7] - y0_out[6], y0[7] - y0[6], 1e-12, 1);
    sv_assert_close(y0_out[2], y0[2], 1e-12, 1);
    sv_assert_close(y0_out[5], y0[5], 1e-12, 1);
    sv_ode_builtin_destroy(b);
}

/* ---- a non-singular mass matrix ------------------------------------------------ */
/* M·y' = −y with M = tridiag(1, 4, 1)/6 (the linear finite-element mass
 * matrix), J = −I given by its diagonal pattern only: the stage matrix's
 * pattern is the union (tridiagonal), on the sparse engine. */
enum { NFE = 10 };
static int fe_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    for (int i = 0; i < NFE; i++) dy[i] = -y[i];
    return 0;
}
static int fe_j(double t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)u, (void)dfdt;
    for (int i = 0; i < NFE; i++) jv[i] = -1;
    return 0;
}

/* y(t) = Σ_k c_k e^{−t/λ_k} v_k: v_k(j) = sin(jkπ/(n+1)) (1-based j, k),
 * λ_k = (4 + 2 cos(kπ/(n+1)))/6, c_k = 2/(n+1) Σ_j y0_j v_k(j). */
static void fe_exact(const double *y0, double t, double *y)
{
    const double a = 3.14159265358979323846 / (NFE + 1); /* π */
    for (int j = 0; j < NFE; j++) y[j] = 0;
    for (int k = 1; k <= NFE; k++) {
        double c = 0, lam = (4 + 2 * cos(k * a)) / 6;
        for (int j = 1; j <= NFE; j++) c += y0[j - 1] * sin(j * k * a);
        c *= 2.0 / (NFE + 1) * exp(-t / lam);
        for (int j = 1; j <= NFE; j++) y[j - 1] += c * sin(j * k * a);
    }
}

/* A warning in the context's log (the compiled kernels fell back). */
static void count_warnings(void *user, sv_log_level level, const char *msg)
{
    (void)msg;
    if (level == SV_LOG_WARN) ++*(int *)user;
}

/* The straight-line kernels compiled for the union pattern give the
 * table-driven kernels' numbers, bit for bit (ode.h: "the same results
 * either way"). */
static void compiled_kernels_agree(const sv_ode_problem *P, sv_ode_ensemble *en, const sv_ode_options *o,
                                   const double *ytable)
{
    char dir[] = "/tmp/sv_test_dae_XXXXXX";
    assert_non_null(mkdtemp(dir));
    sv_ctx *ctx = NULL;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    int warnings = 0;
    sv_ctx_set_log(ctx, count_warnings, &warnings);
    sv_ode_options oc = *o;
    oc.kernel_cache_dir = dir;
    double y[NFE];
    double *keep = en->out;
    en->out = y;
    assert_int_equal(sv_ode_solve(ctx, P, &oc, en), SV_OK);
    en->out = keep;
    assert_int_equal(warnings, 0); /* compiled, not fallen back */
    assert_memory_equal(y, ytable, sizeof y);
    sv_ctx_destroy(ctx);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_fe_mass(void **s)
{
    (void)s;
    int rp[NFE + 1], ci[NFE], mrp[NFE + 1], mci[3 * NFE];
    double mv[3 * NFE], y0[NFE], y[NFE], yex[NFE];
    int e = 0;
    for (int i = 0; i < NFE; i++) {
        rp[i] = ci[i] = i;
        mrp[i] = e;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < NFE) mci[e] = j, mv[e++] = j == i ? 4.0 / 6 : 1.0 / 6;
        y0[i] = 1 + 0.1 * i * i;
    }
    rp[NFE] = NFE;
    mrp[NFE] = e;
    sv_ode_problem_desc d = {.name = "fe", .n = NFE, .f = fe_f, .rowptr = rp, .colind = ci, .jac = fe_j,
                             .mass = mv, .mass_rowptr = mrp, .mass_colind = mci};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    assert_int_equal(sv_ode_problem_nalg(P), 0);
    double t1 = 2;
    fe_exact(y0, t1, yex);
    const sv_ode_method meth[3] = {SV_ODE_RODAS5P, SV_ODE_RODAS5P, SV_ODE_TSIT5};
    const sv_ode_lu_precision lu[3] = {SV_ODE_LU_DOUBLE, SV_ODE_LU_SINGLE, SV_ODE_LU_DOUBLE};
    for (int k = 0; k < 3; k++) {
        sv_ode_traj_status st;
        sv_ode_ensemble en = {.ntraj = 1, .t0 = 0, .nsave = 1, .tsave = &t1, .y0 = y0, .out = y, .status = &st};
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = meth[k];
        o.lu = lu[k];
        o.rtol = 1e-9;
        o.atol = 1e-12;
        assert_int_equal(sv_ode_solve(NULL, P, &o, &en), SV_OK);
        assert_int_equal(st, SV_ODE_SUCCESS);
        double scd = ode_scd(NFE, y, yex);
        printf("M = tridiag(1,4,1)/6, %s %s: scd %.2f\n", k == 2 ? "tsit5" : "rodas5p", k == 1 ? "single" : "double",
               scd);
        assert_true(scd >= 8);
        if (k == 0) compiled_kernels_agree(P, &en, &o, y);
    }
    sv_ode_problem_destroy(P);
}

/* 2 × 2: M = [2 1; 1 3] (dense), f = (−y1, −2 y2), so y' = B y with
 * B = M⁻¹·diag(−1, −2); e^{Bt} = e^{st}(cosh(qt) I + sinh(qt)/q (B − sI)),
 * s = tr B / 2, q² = s² − det B (Cayley–Hamilton). */
static int two_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    dy[0] = -y[0];
    dy[1] = -2 * y[1];
    return 0;
}
static int two_j(double t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)u, (void)dfdt;
    jv[0] = -1, jv[1] = 0, jv[2] = 0, jv[3] = -2;
    return 0;
}
static void test_two_by_two(void **s)
{
    (void)s;
    const double M[4] = {2, 1, 1, 3};
    sv_ode_problem_desc d = {.name = "two", .n = 2, .f = two_f, .jac = two_j, .mass = M};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    /* B = M⁻¹ diag(−1, −2), M⁻¹ = [3 −1; −1 2]/5 */
    double B[4] = {-3.0 / 5, 2.0 / 5, 1.0 / 5, -4.0 / 5};
    double t1 = 3, sb = (B[0] + B[3]) / 2, det = B[0] * B[3] - B[1] * B[2], q = sqrt(sb * sb - det);
    double ch = cosh(q * t1), sh = sinh(q * t1) / q, ex = exp(sb * t1);
    const double y0[2] = {1, -0.5};
    double E[4] = {ex * (ch + sh * (B[0] - sb)), ex * sh * B[1], ex * sh * B[2], ex * (ch + sh * (B[3] - sb))};
    double yex[2] = {E[0] * y0[0] + E[1] * y0[1], E[2] * y0[0] + E[3] * y0[1]};
    for (int k = 0; k < 2; k++) {
        double y[2];
        sv_ode_traj_status st;
        sv_ode_ensemble en = {.ntraj = 1, .t0 = 0, .nsave = 1, .tsave = &t1, .y0 = y0, .out = y, .status = &st};
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = k ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        assert_int_equal(sv_ode_solve(NULL, P, &o, &en), SV_OK);
        assert_int_equal(st, SV_ODE_SUCCESS);
        printf("2x2 M, %s: scd %.2f\n", k ? "tsit5" : "rodas5p", ode_scd(2, y, yex));
        assert_true(ode_scd(2, y, yex) >= 9);
    }
    sv_ode_problem_destroy(P);
}

/* ---- refusals ------------------------------------------------------------------- */
static int chain_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    for (int i = 0; i < 3; i++) dy[i] = -y[i];
    return 0;
}
static int chain_j(double t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)u, (void)dfdt;
    for (int k = 0; k < 9; k++) jv[k] = k % 4 == 0 ? -1 : 0;
    return 0;
}

static void test_refusals(void **s)
{
    (void)s;
    sv_ode_builtin *b = builtin("akzo");
    double y[6];
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = SV_ODE_TSIT5;
    sv_ode_traj_status st;
    sv_ode_stats stats;
    assert_int_equal(ode_run_builtin(b, &o, y, &st, &stats), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "Tsit5 cannot solve a DAE"));
    sv_ode_builtin_destroy(b);

    /* sensitivities with a mass matrix: refused whatever the method */
    const double M[4] = {2, 1, 1, 3};
    int iy = 0;
    sv_ode_problem_desc ds = {.name = "two", .n = 2, .f = two_f, .jac = two_j, .mass = M, .nsens_y0 = 1,
                              .sens_y0 = &iy};
    sv_ode_problem *ps = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &ds, &ps), SV_OK);
    double y0[2] = {1, 0}, y2[2], sens[2], t1 = 1;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = 1, .tsave = &t1, .y0 = y0, .out = y2, .sens_out = sens};
    for (int k = 0; k < 2; k++) {
        sv_ode_options_default(&o);
        o.method = k ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        assert_int_equal(sv_ode_solve(NULL, ps, &o, &e), SV_ERR_UNSUPPORTED);
        assert_non_null(strstr(sv_last_error(), "sensitivities with a mass matrix"));
    }
    sv_ode_problem_destroy(ps);

    /* a singular M in any form has its algebraic constraints counted:
     * a zero row but no zero column, and no zero row at all */
    const double m1[4] = {1, 1, 0, 0}, m2[4] = {1, 1, 1, 1};
    sv_ode_problem_desc d = {.name = "sing", .n = 2, .f = two_f, .jac = two_j, .mass = m1};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    assert_int_equal(sv_ode_problem_nalg(P), 1);
    sv_ode_problem_destroy(P);
    d.mass = m2;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    assert_int_equal(sv_ode_problem_nalg(P), 1);
    sv_ode_problem_destroy(P);
    /* singular in exact arithmetic though elimination rounds its last pivot
     * to 2.8e-17, not 0: two capacitors in a chain from a floating node,
     * whose rows sum to zero (M·(1, 1, 1) = 0 exactly), so rank M = 2 */
    const double c1 = 0.1, c2 = 0.2;
    const double chain[9] = {c1, -c1, 0, -c1, c1 + c2, -c2, 0, -c2, c2};
    sv_ode_problem_desc dc = {.name = "chain", .n = 3, .f = chain_f, .jac = chain_j, .mass = chain};
    assert_int_equal(sv_ode_problem_create(NULL, &dc, &P), SV_OK);
    assert_int_equal(sv_ode_problem_nalg(P), 1);
    sv_ode_problem_destroy(P);
    /* a non-finite entry */
    const double m3[4] = {1, NAN, 0, 1};
    d.mass = m3;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "expected finite"));
    assert_null(P);
}

/* Index 2: y1' = y2, 0 = y1 − 1: ∂g/∂y2 = 0, refused at t0. */
static int idx2_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    dy[0] = y[1];
    dy[1] = y[0] - 1;
    return 0;
}
static int idx2_j(double t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)u, (void)dfdt;
    jv[0] = 0, jv[1] = 1, jv[2] = 1, jv[3] = 0;
    return 0;
}
static void test_index2_refused(void **s)
{
    (void)s;
    const double m[4] = {1, 0, 0, 0};
    sv_ode_problem_desc d = {.name = "idx2", .n = 2, .f = idx2_f, .jac = idx2_j, .mass = m};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    double y0[2] = {1, 0}, y[2], t1 = 1;
    sv_ode_ensemble e = {.ntraj = 1, .t0 = 0, .nsave = 1, .tsave = &t1, .y0 = y0, .out = y};
    sv_ode_options o;
    sv_ode_options_default(&o);
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_ERR_SINGULAR);
    assert_non_null(strstr(sv_last_error(), "not of index 1"));
    sv_ode_problem_destroy(P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_akzo_tolerances),   cmocka_unit_test(test_akzo_paths),
        cmocka_unit_test(test_akzo_consistent_init), cmocka_unit_test(test_rober_dae),
        cmocka_unit_test(test_rober_dae_dense_output), cmocka_unit_test(test_fe_mass),
        cmocka_unit_test(test_two_by_two),        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_transamp),          cmocka_unit_test(test_transamp_consistent_init),
        cmocka_unit_test(test_index2_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
