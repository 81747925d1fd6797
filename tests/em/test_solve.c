/* The direct solve with the dense engine (sv_em_solve) against LAPACK's
 * zsysv on a full copy (an independent path), with conductor loss; and the
 * checks users apply on the examples: reciprocity |S − Sᵀ| ≤ 1e-10,
 * passivity σmax(S) ≤ 1 + 1e-10, and unitary S (to 1e-8) when lossless. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

static void solve_both(const char *json_or_path, int is_path, double f, int compare)
{
    sv_em_project *p;
    if (is_path) {
        char *t = em_test_slurp(json_or_path);
        p = em_test_project(t);
        free(t);
    } else {
        p = em_test_project(json_or_path);
    }
    sv_em_model *m = em_test_model(p);
    int np = sv_em_model_ports(m);
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;
    assert_int_equal(sv_em_assemble(NULL, m, 0, &L, &Psi, NULL), SV_OK);
    assert_int_equal(sv_em_gram(NULL, m, &G), SV_OK);
    double complex Y[16], S[16], Yr[16];
    sv_status s = sv_em_solve(NULL, m, L, Psi, G, f, Y);
    if (s) printf("%s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    em_test_s(m, Y, S);
    if (compare) {
        double *Lf, *Pf;
        em_test_full(m, &Lf, &Pf);
        em_test_y(m, Lf, Pf, G, f, Yr);
        double ymax = 0;
        for (int q = 0; q < np * np; q++) ymax = fmax(ymax, cabs(Yr[q]));
        for (int q = 0; q < np * np; q++) assert_true(cabs(Y[q] - Yr[q]) <= 1e-9 * ymax);
        free(Lf);
        free(Pf);
    }
    double rec = sv_em_reciprocity_error(np, S), smax;
    assert_int_equal(sv_em_max_singular_value(np, S, &smax), SV_OK);
    sv_em_stackup st;
    sv_em_project_stackup(p, &st);
    double unit = 0;
    if (isinf(st.sigma))
        for (int r = 0; r < np; r++)
            for (int c = 0; c < np; c++) {
                double complex a = 0;
                for (int k = 0; k < np; k++) a += conj(S[k + np * r]) * S[k + np * c];
                unit = fmax(unit, cabs(a - (r == c)));
            }
    printf("%s at %.3g GHz: N = %d, |S - S^T| = %.1e, smax - 1 = %.1e, |S^H S - I| = %.1e\n",
           is_path ? json_or_path : "inline", f / 1e9, sv_em_model_unknowns(m), rec, smax - 1, unit);
    assert_true(rec <= 1e-10);
    assert_true(smax <= 1 + 1e-10);
    if (isinf(st.sigma)) assert_true(unit <= 1e-8);
    else assert_true(smax < 1 - 1e-6); /* a lossy structure absorbs some power */
    sv_em_csr_destroy(NULL, G);
    sv_dense_sym_destroy(L);
    sv_dense_sym_destroy(Psi);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

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
    solve_both(lossy, 0, 0.7e9, 1);
    solve_both(lossy, 0, 9e9, 1);
}

static void test_examples_checks(void **state)
{
    (void)state;
    solve_both("examples/stub.json", 1, 1.5e9, 1);
    solve_both("examples/stub.json", 1, 2.6e9, 0);
    solve_both("examples/pixel2port.json", 1, 5e9, 0);
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
