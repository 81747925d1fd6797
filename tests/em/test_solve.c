/* The direct solve with the dense engine (sv_em_solve) against LAPACK's
 * zsysv on a full copy (an independent path), with conductor loss; and the
 * checks users apply on the examples: reciprocity |S − Sᵀ| ≤ 1e-10,
 * passivity σmax(S) ≤ 1 + 1e-10, and unitary S (to 1e-8) when lossless. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

static const char *lossy =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 10.2},"
    "\"metal\": {\"conductivity\": 1e6, \"thickness\": 0.005},"
    "\"grid\": {\"dx\": 0.3, \"dy\": 0.2, \"nx\": 12, \"ny\": 9},"
    "\"pixels\": [\"....########\", \"....#......#\", \"############\", \"###.........\", \"###..##.....\","
    "             \"#######.....\", \".#..........\", \".####.......\", \"....#.......\"],"
    "\"ports\": [{\"name\": \"L\", \"side\": \"left\", \"x\": 0, \"y\": [0.6, 1.4]},"
    "          {\"name\": \"R\", \"side\": \"right\", \"x\": 3.6, \"y\": [1.2, 1.8]},"
    "          {\"name\": \"B\", \"side\": \"bottom\", \"y\": 0, \"x\": [1.2, 1.5]}]}";

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
    sv_em_project *p = em_test_project(lossy);
    sv_em_model *m = em_test_model(p);
    sv_dense_sym *L, *Psi;
    assert_int_equal(sv_em_assemble(NULL, m, 0, &L, &Psi, NULL), SV_OK);
    double complex Y[9];
    assert_int_equal(sv_em_solve(NULL, m, L, Psi, NULL, 1e9, Y), SV_ERR_ARG); /* lossy needs G */
    assert_int_equal(sv_em_solve(NULL, m, L, Psi, NULL, 0, Y), SV_ERR_ARG);
    assert_int_equal(sv_em_solve(NULL, m, L, Psi, NULL, NAN, Y), SV_ERR_ARG);
    /* a budget too small for the assembly */
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_memory_limit(ctx, 1000);
    sv_dense_sym *a, *b;
    assert_int_equal(sv_em_assemble(ctx, m, 0, &a, &b, NULL), SV_ERR_BUDGET);
    sv_ctx_destroy(ctx);
    sv_dense_sym_destroy(L);
    sv_dense_sym_destroy(Psi);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
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
