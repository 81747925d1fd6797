/* 2D Brusselator (SciMLBenchmarks definition, discontinuous forcing at
 * t = 1.1 handled as a tstop) against scipy Radau references at
 * rtol = atol = 1e-14: N = 8 in bruss8_ref.h, N = 32 (test_bruss32, label
 * "slow") in data/bruss2d-n32-reference.txt (definition in docs/ode.md). At rtol = atol = 1e-8 every
 * component must agree to 1e-6 relative (the tolerance's digits less ~1.5:
 * the solution oscillates, so phase error accumulates over 11.5 time units). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bruss8_ref.h"
#include "support_ode.h"
#include "sv_test.h"

static void test_bruss8(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "bruss2d", 8, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    assert_int_equal(sv_ode_problem_n(b->prob), 128);
    assert_int_equal(sv_ode_problem_nnz(b->prob), 768);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = o.atol = 1e-8;
    double y[128];
    sv_ode_stats stats = ode_run_success(b, &o, y);
    double scd = ode_scd(128, y, bruss8_ref);
    printf("bruss2d N=8 rtol 1e-8: scd %.2f, steps %ld/%ld\n", scd, stats.accepted, stats.rejected);
    assert_true(scd >= 6.0);
    sv_ode_builtin_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bruss8)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
