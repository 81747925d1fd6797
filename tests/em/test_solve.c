/* The direct solve (sv_em_solve: the sweep engine's exact double solve)
 * against LAPACK's zsysv on a full copy (an independent path), with
 * conductor loss; and the checks users apply on the examples: reciprocity
 * |S − Sᵀ| ≤ 1e-10, passivity σmax(S) ≤ 1 + 1e-10, and unitary S (to 1e-8)
 * when lossless. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

static const char *const lossy = em_test_lossy_project;

static void test_dense_vs_lapack_lossy(void **state)
{
    (void)state;
    em_test_check_solve(lossy, 0, 0.7e9, 1);
    em_test_check_solve(lossy, 0, 9e9, 1);
}

static void test_examples_checks(void **state)
{
    (void)state;
    em_test_check_solve("examples/stub.json", 1, 1.5e9, 1);
    em_test_check_solve("examples/stub.json", 1, 2.6e9, 0);
    em_test_check_solve("examples/pixel2port.json", 1, 5e9, 0);
    em_test_check_solve("examples/line_366.json", 1, 4e9, 0);
    em_test_check_solve("examples/line_44.json", 1, 2e9, 0);
}

static void test_solve_errors(void **state)
{
    (void)state;
    em_test_case c;
    em_test_case_open(&c, lossy);
    sv_em_affine *model = c.a;
    double complex Y[9];
    /* no model (a lossy model without G, the old case, cannot be made any more) */
    assert_int_equal(sv_em_solve(NULL, NULL, 1e9, Y), SV_ERR_ARG);
    assert_int_equal(sv_em_solve(NULL, model, 0, Y), SV_ERR_ARG);
    assert_int_equal(sv_em_solve(NULL, model, NAN, Y), SV_ERR_ARG);
    /* a budget too small for the assembly */
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_memory_limit(ctx, 1000);
    sv_dense_sym *a, *b;
    assert_int_equal(sv_em_assemble(ctx, c.m, 0, &a, &b, NULL), SV_ERR_BUDGET);
    sv_ctx_destroy(ctx);
    em_test_case_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_vs_lapack_lossy),
        cmocka_unit_test(test_examples_checks),
        cmocka_unit_test(test_solve_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
