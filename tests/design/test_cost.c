/* The design cost (sv_design_cost) against values computed by hand from
 * |S| arrays given in dB: per mask the weighted RMS of the one-sided
 * violation over the frequencies inside its band, summed. */
#include <complex.h>
#include <math.h>

#include "solvent/design.h"
#include "sv_test.h"

/* S with |S11| and |S21| at the given dB levels and arbitrary phases. */
static void fill(int nf, const double *s11_db, const double *s21_db, double complex *s)
{
    for (int f = 0; f < nf; f++) {
        double complex *b = s + 4 * f;
        b[0] = pow(10, s11_db[f] / 20) * cexp(I * (0.3 + f));
        b[1] = b[2] = pow(10, s21_db[f] / 20) * cexp(-I * (1.1 * f + 0.2));
        b[3] = b[0];
    }
}

static void test_two_masks(void **state)
{
    (void)state;
    const double f[5] = {1e9, 1.5e9, 2e9, 2.5e9, 3e9};
    const double s11[5] = {-1, -20, -7, -10, -4}, s21[5] = {-3, 0, -2, -30, -40};
    double complex s[20];
    fill(5, s11, s21, s);
    const sv_design_mask m[2] = {
        {1e9, 2e9, 1, 0, -1, SV_DESIGN_MIN, 0},  /* |S21| >= -1 dB over 1-2 GHz */
        {1.5e9, 3e9, 0, 0, -10, SV_DESIGN_MAX, 2} /* |S11| <= -10 dB over 1.5-3 GHz, weight 2 */
    };
    double cost;
    assert_int_equal(sv_design_cost(2, m, 5, f, 2, s, &cost), SV_OK);
    /* S21: violations 2, 0, 1 dB at 1, 1.5, 2 GHz; S11: 0, 3, 0, 6 dB at 1.5..3 GHz */
    double expect = sqrt((4.0 + 0 + 1) / 3) + 2 * sqrt((0 + 9.0 + 0 + 36) / 4);
    sv_assert_close(cost, expect, 1e-12, 1e-12);
    /* each mask alone */
    assert_int_equal(sv_design_cost(1, m, 5, f, 2, s, &cost), SV_OK);
    sv_assert_close(cost, sqrt(5.0 / 3), 1e-12, 1e-12);
}

static void test_met_and_edge_cases(void **state)
{
    (void)state;
    const double f[3] = {1e9, 2e9, 3e9};
    const double s11[3] = {-20, -15, -12}, s21[3] = {-0.5, -0.2, -0.9};
    double complex s[12];
    fill(3, s11, s21, s);
    sv_design_mask m[3] = {{1e9, 3e9, 1, 0, -1, SV_DESIGN_MIN, 1}, {1e9, 3e9, 0, 0, -10, SV_DESIGN_MAX, 1},
                           {5e9, 6e9, 1, 0, -40, SV_DESIGN_MAX, 1}}; /* no frequency in its band */
    double cost = -1;
    assert_int_equal(sv_design_cost(3, m, 3, f, 2, s, &cost), SV_OK);
    assert_true(cost == 0); /* every mask met */
    /* |S| = 0 counts as -600 dB: a "min" bound of -1 dB is missed by 599 dB at one of three frequencies */
    s[4 * 1 + 1] = 0;
    assert_int_equal(sv_design_cost(1, m, 3, f, 2, s, &cost), SV_OK);
    sv_assert_close(cost, sqrt(599.0 * 599.0 / 3), 1e-12, 1e-12);
    /* a mask naming a port the network has not */
    m[0].out = 2;
    assert_int_equal(sv_design_cost(1, m, 3, f, 2, s, &cost), SV_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_two_masks), cmocka_unit_test(test_met_and_edge_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
