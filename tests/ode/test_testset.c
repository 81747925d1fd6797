/* End values of the Bari test set problems (Mazzia & Magherini, release
 * 2.4: RADAU reference solutions in extended precision; definitions in
 * docs/ode.md) with Rodas5P at rtol 1e-6 and 1e-9.
 *
 * Accuracy: significant correct digits (scd) against the reference. The
 * reference also lists what Rodas5P itself (OrdinaryDiffEq, same
 * controller) reaches and its step counts; we require scd within one digit
 * of the tolerance's OR no more than 0.5 below the published Rodas5P figure
 * (HIRES at 1e-6 reaches only 3.9 digits with any correct Rodas5P: the
 * controller's local-error criterion does not bound the global error
 * there), and accepted steps within 1.5× of the published counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support_ode.h"
#include "sv_test.h"

static const double R_ROBER[3] = {0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00};
static const double R_HIRES[8] = {0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4,
                                  0.1175651343283149e-2, 0.2386356198831331e-2, 0.6238968252742796e-2,
                                  0.2849998395185769e-2, 0.2850001604814231e-2};
static const double R_OREGO[3] = {0.1000814870318523e+01, 0.1228178521549917e+04, 0.1320554942846706e+03};
static const double R_VDPOL[2] = {0.1706167732170483e+01, -0.8928097010247975e+00};

/* POLLU at t = 60 (Bari test set, problem "pollu", RADAU5 reference). */
static const double R_POLLU[20] = {
    0.5646255480022769e-01, 0.1342484130422339e+00, 0.4139734331099427e-08, 0.5523140207484359e-02,
    0.2018977262302196e-06, 0.1464541863493966e-06, 0.7784249118997964e-01, 0.3245075353396018e+00,
    0.7494013383880406e-02, 0.1622293157301561e-07, 0.1135863833257075e-07, 0.2230505975721359e-02,
    0.2087162882798630e-03, 0.1396921016840158e-04, 0.8964884856898295e-02, 0.4352846369330103e-17,
    0.6899219696263405e-02, 0.1007803037365946e-03, 0.1772146513969984e-05, 0.5682943292316392e-04};

/* Whether a run's accepted steps agree with a published count: within
 * 1.5× of it either way. */
static int steps_agree(long accepted, long published)
{
    return accepted <= 1.5 * published && accepted >= published / 1.5;
}

static void run_case(const char *name, double rtol, double atol, const double *ref, double scd_pub, long steps_pub,
                     sv_ode_lu_precision lu)
{
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, name, 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    int n = sv_ode_problem_n(b->prob);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = atol;
    o.lu = lu;
    double y[20];
    sv_ode_stats stats = ode_run_success(b, &o, y);
    double scd = ode_scd(n, y, ref);
    if (!strcmp(name, "pollu")) {
        /* y16 (O1D, 4e-18) lies far below atol: measured relative to atol */
        double m = 0;
        for (int i = 0; i < n; i++) m = fmax(m, fabs(y[i] - ref[i]) / fmax(fabs(ref[i]), atol));
        scd = -log10(m);
    }
    double want = -log10(rtol) - 1;
    if (steps_pub > 0)
        printf("%-6s rtol %.0e lu %-6s: scd %.2f (published Rodas5P %.1f), steps %ld/%ld (published %ld)\n", name,
               rtol, lu ? "single" : "double", scd, scd_pub, stats.accepted, stats.rejected, steps_pub);
    else
        printf("%-6s rtol %.0e lu %-6s: scd %.2f (required %.1f), steps %ld/%ld\n", name, rtol,
               lu ? "single" : "double", scd, scd_pub - 0.5, stats.accepted, stats.rejected);
    assert_true(scd >= want || scd >= scd_pub - 0.5);
    if (steps_pub > 0) assert_true(steps_agree(stats.accepted, steps_pub));
    sv_ode_builtin_destroy(b);
}

/* The cases and the published Rodas5P figures (docs/ode.md); POLLU has no
 * published Rodas5P figures: we ask for the digits of rtol less 1.5 — the
 * margin the published figures themselves show at 1e-9 on ROBER (7.2) and
 * HIRES (7.4) — with components below atol (y16 ~ 4e-18) measured
 * relative to atol. Measured: 5.0 at 1e-6, 7.7 at 1e-9. */
typedef struct tcase {
    const char *name;
    double rtol, atol;
    const double *ref;
    double scd_pub; /* Rodas5P's scd as published */
    long steps_pub; /* accepted steps as published (0: none) */
} tcase;

static const tcase cases[] = {
    {"rober", 1e-6, 1e-10, R_ROBER, 5.3, 313}, {"rober", 1e-9, 1e-13, R_ROBER, 7.2, 1128},
    {"hires", 1e-6, 1e-6, R_HIRES, 3.9, 65},   {"hires", 1e-9, 1e-9, R_HIRES, 7.4, 271},
    {"orego", 1e-6, 1e-6, R_OREGO, 6.2, 863},  {"orego", 1e-9, 1e-9, R_OREGO, 9.6, 4558},
    {"vdpol", 1e-6, 1e-6, R_VDPOL, 6.2, 634},  {"vdpol", 1e-9, 1e-9, R_VDPOL, 8.8, 3498},
    {"pollu", 1e-6, 1e-6, R_POLLU, 6 - 1.5 + 0.5, 0}, {"pollu", 1e-9, 1e-9, R_POLLU, 9 - 1.5 + 0.5, 0},
};

/* The case of `name` at rtol. */
static const tcase *find_case(const char *name, double rtol)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (!strcmp(cases[k].name, name) && cases[k].rtol == rtol) return &cases[k];
    fail_msg("no case %s at rtol %g", name, rtol);
    return NULL;
}

/* Every case of `name` with rtol <= rtol_max. */
static void run_named(const char *name, double rtol_max, sv_ode_lu_precision lu)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tcase *c = &cases[k];
        if (!strcmp(c->name, name) && c->rtol <= rtol_max)
            run_case(c->name, c->rtol, c->atol, c->ref, c->scd_pub, c->steps_pub, lu);
    }
}

/* One test per problem: its cases with the double LU. */
#define NAMED_TEST(nm)                                                                                    \
    static void test_##nm(void **s)                                                                       \
    {                                                                                                     \
        (void)s;                                                                                          \
        run_named(#nm, 1, SV_ODE_LU_DOUBLE);                                                              \
    }
NAMED_TEST(rober)
NAMED_TEST(hires)
NAMED_TEST(orego)
NAMED_TEST(vdpol)
NAMED_TEST(pollu)

/* Single-precision factorisation refined in every stage solve: the same
 * accuracy and step counts as double (an unrefined float LU would floor the
 * error near 5e-8 and cost the method its order). */
static void test_single_lu(void **s)
{
    (void)s;
    run_named("rober", 1, SV_ODE_LU_SINGLE);
    run_named("hires", 1e-9, SV_ODE_LU_SINGLE);
    run_named("orego", 1e-9, SV_ODE_LU_SINGLE);
    run_named("vdpol", 1e-9, SV_ODE_LU_SINGLE);
}

/* A PID controller (β3 ≠ 0) still meets the tolerance, and it is another
 * controller than the PI one (β3 = 0) of the published Rodas5P run on
 * HIRES at 1e-9 (scd 7.4, 271 accepted steps): its digits within 0.5 of
 * that run's, its accepted steps outside the band in which the cases above
 * count a run as the published one (1.5× either way). Gains that never
 * reached the controller give the published run itself (docs/ode.md) and
 * fail. */
static void test_pid_controller(void **s)
{
    (void)s;
    const tcase *pi = find_case("hires", 1e-9);
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "hires", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = pi->rtol;
    o.atol = pi->atol;
    o.beta1 = 0.1, o.beta2 = 0.1, o.beta3 = 0.02;
    double y[8];
    sv_ode_stats stats = ode_run_success(b, &o, y);
    double scd = ode_scd(8, y, pi->ref);
    printf("hires rtol 1e-9 PID (0.1, 0.1, 0.02): scd %.2f, steps %ld/%ld (published PI run: scd %.1f, %ld steps)\n",
           scd, stats.accepted, stats.rejected, pi->scd_pub, pi->steps_pub);
    assert_true(scd >= pi->scd_pub - 0.5);
    assert_false(steps_agree(stats.accepted, pi->steps_pub));
    sv_ode_builtin_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rober), cmocka_unit_test(test_hires),     cmocka_unit_test(test_orego),
        cmocka_unit_test(test_vdpol), cmocka_unit_test(test_pollu),     cmocka_unit_test(test_single_lu), cmocka_unit_test(test_pid_controller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
