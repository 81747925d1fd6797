/* Low frequencies (1 to 100 MHz) solved with single-precision factors
 * refined to double: no double fallback, and S as the LAPACK reference
 * (SV_SWEEP_LAPACK: zgesv on a full double copy of Z(f)) gives it. Two
 * Momentum circuits with every effect of the model on and raw ports: one
 * whose ports share a piece of metal (Y ≈ 1/(R + jωL), large) and one whose
 * pieces are apart (Y ≈ jωC, small). At these frequencies −j·Ψ/ω outgrows
 * the other terms by 10⁵ to 10¹⁰: single-precision factors of Z(f) lose
 * them, so the factors are of a matrix with them lifted (docs/sweep.md,
 * "Low frequencies"), and both the exact solves and the adaptive sweep
 * with its derivatives must get through without a double factorisation. */
#include <math.h>
#include <stdio.h>

#include "support_em.h"
#include "sv_test.h"

static void open_circuit(em_test_case *c, int sim)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
             " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
             " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": 35, \"ny\": 11},"
             " \"pixels\": {\"csv\": \"%s/tests/em/data/momentum/pixelmaps/sim%d.csv\"},"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]},"
             "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72]}]}",
             SV_SOURCE_DIR, sim);
    em_test_case_open(c, json);
}

/* S from any solve in double is only as good as the residual computed in
 * double from the terms: its floor, u·|c_Ψ|·‖Ψ‖·‖X‖, grows like 1/f² against
 * the rest of Z, and the double LDLᵀ and LAPACK differ by as much (4e-8 at
 * 1 MHz, 6e-9 at 10 MHz on the connected circuit). What is asked of the
 * single-precision path: S within 1e-6 of theirs from 1 MHz up. */
#define SAME_S 1e-6

/* max over entries of |S(a) − S(b)| at frequency i, 50 Ω */
static double s_distance_at(const sv_sweep_result *a, const sv_sweep_result *b, int i)
{
    const double z0[2] = {50, 50};
    double complex sa[4], sb[4];
    assert_int_equal(sv_em_y_to_s(2, a->h + (size_t)i * 4, z0, sa), SV_OK);
    assert_int_equal(sv_em_y_to_s(2, b->h + (size_t)i * 4, z0, sb), SV_OK);
    double worst = 0;
    for (int e = 0; e < 4; e++) worst = fmax(worst, cabs(sa[e] - sb[e]));
    return worst;
}


static sv_sweep_result *sweep(const em_test_case *c, int nf, const double *f, int exact_all,
                              sv_sweep_precision precision)
{
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.exact_all = exact_all;
    o.precision = precision;
    sv_sweep_result *r;
    assert_int_equal(sv_sweep_run(NULL, sv_em_affine_model(c->a), nf, f, &o, &r), SV_OK);
    return r;
}

static void check_circuit(int sim)
{
    em_test_case c;
    open_circuit(&c, sim);
    /* the exact solves: every one refined by GMRES from the lifted factors */
    const double f3[3] = {1e6, 1e7, 1e8};
    sv_sweep_result *mixed = sweep(&c, 3, f3, 1, SV_SWEEP_MIXED), *ref = sweep(&c, 3, f3, 1, SV_SWEEP_LAPACK);
    sv_sweep_result *dbl = sweep(&c, 3, f3, 1, SV_SWEEP_DOUBLE);
    printf("sim%d, %d unknowns, exact solves: %d fallbacks, %d with GMRES\n", sim, sv_em_model_unknowns(c.m),
           mixed->n_fallback, mixed->n_gmres);
    assert_int_equal(mixed->n_fallback, 0);
    assert_int_equal(mixed->n_gmres, 3);
    for (int i = 0; i < 3; i++) {
        double dl = s_distance_at(mixed, ref, i), dd = s_distance_at(mixed, dbl, i);
        printf("  %g MHz: max |dS| %.2e from LAPACK's, %.2e from the double LDLT's (which is %.2e from LAPACK's)\n",
               f3[i] / 1e6, dl, dd, s_distance_at(dbl, ref, i));
        assert_true(dl <= SAME_S && dd <= SAME_S);
    }
    /* the adaptive sweep: its exact solves' derivatives come from the same factors */
    enum { NF = 11 };
    double f[NF];
    for (int i = 0; i < NF; i++) f[i] = 1e6 + i * (1e8 - 1e6) / (NF - 1);
    sv_sweep_result *adaptive = sweep(&c, NF, f, 0, SV_SWEEP_MIXED), *all = sweep(&c, NF, f, 1, SV_SWEEP_LAPACK);
    printf("sim%d, 1-100 MHz, %d points: %d exact solves, %d fallbacks; max |dS| from LAPACK's:", sim, NF,
           adaptive->n_exact, adaptive->n_fallback);
    assert_true(adaptive->converged);
    assert_int_equal(adaptive->n_fallback, 0);
    for (int i = 0; i < NF; i++) {
        double d = s_distance_at(adaptive, all, i);
        printf(" %.1e", d);
        assert_true(d <= SAME_S);
    }
    printf("\n");
    sv_sweep_result_destroy(mixed);
    sv_sweep_result_destroy(dbl);
    sv_sweep_result_destroy(ref);
    sv_sweep_result_destroy(adaptive);
    sv_sweep_result_destroy(all);
    em_test_case_close(&c);
}

static void test_connected(void **state)
{
    (void)state;
    check_circuit(572);
}

static void test_apart(void **state)
{
    (void)state;
    check_circuit(213);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_connected), cmocka_unit_test(test_apart)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
