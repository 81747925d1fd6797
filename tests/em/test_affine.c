/* The planar model as the sweep engine's affine model (sv_em_affine):
 * Y from its LAPACK-reference exact solve and from sv_em_solve against a
 * zgesv of Z(f) formed here from sv_em_assemble and sv_em_gram (an
 * independent path); its terms and coefficients for lossless and lossy
 * stack-ups; its memory estimate; and construction failing at every stage
 * (a budget too small) leaving nothing allocated. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

static const char *const lossy_json = em_test_lossy_project;

static const char *lossless_json =
    "{\"effects\": {\"radiation\": false}, \"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},"
    "\"metal\": {\"conductivity\": \"inf\"},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 10, \"ny\": 3},"
    "\"pixels\": [\"##########\", \"##########\", \"##########\"],"
    "\"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1.5]},"
    "          {\"name\": \"P2\", \"side\": \"right\", \"x\": 5, \"y\": [0, 1.5]}]}";

/* Y at f by zgesv on the full Z(f) = jω·L − j·Ψ/ω + Zs·G formed from the
 * EM module's matrices. */
static void reference_y(const sv_em_model *m, double f, double complex *Y)
{
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m);
    sv_dense_sym *L, *Psi;
    assert_int_equal(sv_em_assemble(NULL, m, 0, &L, &Psi, NULL), SV_OK);
    sv_em_stackup st;
    sv_em_project_stackup(sv_em_model_project(m), &st);
    double w = 2 * SV_EM_PI * f;
    double complex zs = sv_em_surface_impedance(st.sigma, st.t, f);
    double complex *z = malloc(sizeof(double complex) * n * n), *x = malloc(sizeof(double complex) * n * np);
    const double *lp = sv_dense_sym_cdata(L), *pp = sv_dense_sym_cdata(Psi);
    for (int c = 0; c < n; c++)
        for (int r = c; r < n; r++) {
            size_t o = sv_dense_sym_offset(L, r, c);
            z[r + (size_t)n * c] = z[c + (size_t)n * r] = I * (w * lp[o] - pp[o] / w);
        }
    if (isfinite(st.sigma)) {
        sv_em_csr *G;
        assert_int_equal(sv_em_gram(NULL, m, &G), SV_OK);
        for (int r = 0; r < n; r++)
            for (int k = G->rowptr[r]; k < G->rowptr[r + 1]; k++) z[r + (size_t)n * G->col[k]] += zs * G->val[k];
        sv_em_csr_destroy(G);
    }
    double *b = malloc(sizeof(double) * n * np);
    assert_int_equal(sv_em_port_rhs(m, b, n), SV_OK);
    for (int q = 0; q < n * np; q++) x[q] = b[q];
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, n, np, z, n, ipiv, x, n), 0);
    assert_int_equal(sv_em_port_admittance(m, x, n, Y), SV_OK);
    free(ipiv);
    free(b);
    free(x);
    free(z);
    sv_dense_sym_destroy(L);
    sv_dense_sym_destroy(Psi);
}

static double max_rel_diff(int np, const double complex *a, const double complex *b)
{
    double amax = 0, d = 0;
    for (int q = 0; q < np * np; q++) {
        amax = fmax(amax, cabs(b[q]));
        d = fmax(d, cabs(a[q] - b[q]));
    }
    return d / amax;
}

static void check_against_zgesv(const char *json, double f)
{
    em_test_case c;
    em_test_case_open(&c, json);
    const sv_em_model *m = c.m;
    const sv_em_affine *a = c.a;
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m);
    double complex Yref[16], Ylapack[16], Ysolve[16];
    reference_y(m, f, Yref);
    double complex *x = malloc(sizeof(double complex) * n * np);
    assert_int_equal(sv_sweep_solve_exact(NULL, sv_em_affine_model(a), f, SV_SWEEP_LAPACK, x, n, NULL), SV_OK);
    assert_int_equal(sv_em_port_admittance(m, x, n, Ylapack), SV_OK);
    assert_int_equal(sv_em_solve(NULL, a, f, Ysolve), SV_OK);
    double d1 = max_rel_diff(np, Ylapack, Yref), d2 = max_rel_diff(np, Ysolve, Yref);
    print_message("N = %d at %.3g GHz: |Y_lapack - Y_ref| %.1e, |Y_solve - Y_ref| %.1e (relative)\n", n, f / 1e9, d1,
                  d2);
    assert_true(d1 <= 1e-10);
    assert_true(d2 <= 1e-10);
    free(x);
    em_test_case_close(&c);
}

static void test_y_against_zgesv(void **state)
{
    (void)state;
    check_against_zgesv(lossy_json, 0.7e9);
    check_against_zgesv(lossy_json, 9e9);
    check_against_zgesv(lossless_json, 3e9);
}

/* Terms and coefficients: L and Ψ packed, G as CSR only when lossy. */
static void check_terms(const char *json, int lossy)
{
    em_test_case c;
    em_test_case_open(&c, json);
    const sv_em_model *m = c.m;
    const sv_em_affine *a = c.a;
    int nt = sv_em_affine_nterms(m);
    assert_int_equal(nt, lossy ? 3 : 2);
    assert_true(sv_em_affine_em(a) == m);
    const sv_sweep_model *sm = sv_em_affine_model(a);
    assert_int_equal(sv_sweep_model_order(sm), sv_em_model_unknowns(m));
    assert_int_equal(sv_sweep_model_nrhs(sm), sv_em_model_ports(m));
    double f = 2.5e9, w = 2 * SV_EM_PI * f;
    sv_em_stackup st;
    sv_em_project_stackup(c.p, &st);
    double complex want[3] = {I * w, -I / w, sv_em_surface_impedance(st.sigma, st.t, f)};
    for (int k = 0; k < nt; k++) {
        sv_sweep_term t;
        assert_int_equal(sv_em_affine_term(a, k, &t), SV_OK);
        assert_int_equal(t.kind, k < 2 ? SV_SWEEP_TERM_PACKED : SV_SWEEP_TERM_CSR);
        assert_true(cabs(sv_em_affine_coefficient(a, k, f) - want[k]) <= 1e-15 * cabs(want[k]));
    }
    sv_sweep_term t;
    assert_int_equal(sv_em_affine_term(a, nt, &t), SV_ERR_ARG);
    assert_int_equal(sv_em_affine_term(a, -1, &t), SV_ERR_ARG);
    assert_true(isnan(creal(sv_em_affine_coefficient(a, nt, f))));
    sv_em_affine *none = (sv_em_affine *)1;
    assert_int_equal(sv_em_affine_create(NULL, NULL, &none), SV_ERR_ARG);
    assert_null(none);
    assert_int_equal(sv_em_affine_create(NULL, m, NULL), SV_ERR_ARG);
    assert_null(sv_em_affine_model(NULL));
    assert_null(sv_em_affine_em(NULL));
    assert_int_equal(sv_em_affine_nterms(NULL), 0);
    assert_int_equal(sv_em_affine_bytes(NULL), 0);
    sv_em_affine_destroy(NULL);
    em_test_case_close(&c);
}

static void test_terms(void **state)
{
    (void)state;
    check_terms(lossless_json, 0);
    check_terms(lossy_json, 1);
}

/* What it holds, counted by the context, against sv_em_affine_bytes. */
static void test_bytes(void **state)
{
    (void)state;
    const char *cases[2] = {lossless_json, lossy_json};
    for (int c = 0; c < 2; c++) {
        sv_em_project *p = em_test_project(cases[c]);
        sv_em_model *m = em_test_model(p);
        sv_ctx *ctx;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        sv_em_affine *a;
        assert_int_equal(sv_em_affine_create(ctx, m, &a), SV_OK);
        size_t held = sv_ctx_memory_current(ctx), est = sv_em_affine_bytes(m);
        print_message("held %zu bytes, estimated %zu\n", held, est);
        assert_true(est >= sv_em_assemble_bytes(m, 0));
        assert_true(held >= est && held <= est + est / 10 + 4096); /* all but small bookkeeping */
        sv_em_affine_destroy(a);
        assert_int_equal(sv_ctx_memory_current(ctx), 0);
        sv_ctx_destroy(ctx);
        sv_em_model_destroy(m);
        sv_em_project_destroy(p);
    }
}

/* Budgets from nothing up to enough: every failure is a budget refusal that
 * leaves nothing allocated and no object; some fail after L and Ψ were made
 * (the destroy of a partly built model). */
static void test_partial_construction(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(lossy_json);
    sv_em_model *m = em_test_model(p);
    size_t est = sv_em_affine_bytes(m), lpsi = sv_em_assemble_bytes(m, 0);
    int failures = 0, late_failures = 0, successes = 0;
    for (size_t limit = 256; limit < 4 * est; limit += est / 64) {
        sv_ctx *ctx;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        assert_int_equal(sv_ctx_set_memory_limit(ctx, limit), SV_OK);
        sv_em_affine *a = (sv_em_affine *)1;
        sv_status s = sv_em_affine_create(ctx, m, &a);
        if (s) {
            assert_int_equal(s, SV_ERR_BUDGET);
            assert_null(a);
            assert_int_equal(sv_ctx_memory_current(ctx), 0);
            failures++;
            late_failures += sv_ctx_memory_peak(ctx) >= lpsi;
        } else {
            successes++;
            sv_em_affine_destroy(a);
            assert_int_equal(sv_ctx_memory_current(ctx), 0);
        }
        sv_ctx_destroy(ctx);
    }
    print_message("%d failures (%d after L and Psi), %d successes\n", failures, late_failures, successes);
    assert_true(failures > 0 && late_failures > 0 && successes > 0);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_solve_errors(void **state)
{
    (void)state;
    em_test_case c;
    em_test_case_open(&c, lossless_json);
    double complex Y[4];
    assert_int_equal(sv_em_solve(NULL, c.a, -1e9, Y), SV_ERR_ARG);
    assert_int_equal(sv_em_solve(NULL, c.a, INFINITY, Y), SV_ERR_ARG);
    assert_int_equal(sv_em_solve(NULL, c.a, 1e9, NULL), SV_ERR_ARG);
    em_test_case_close(&c);
}


/* ---- the radiating model (low-rank terms) ---------------------------------------- */
/* The lossy project with its radiation on. */
static char *radiating_json(void)
{
    const char *from = "\"radiation\": false", *to = "\"radiation\": true";
    const char *at = strstr(em_test_lossy_project, from);
    assert_non_null(at);
    char *s = malloc(strlen(em_test_lossy_project) + 8);
    size_t head = (size_t)(at - em_test_lossy_project);
    memcpy(s, em_test_lossy_project, head);
    strcpy(s + head, to);
    strcat(s, at + strlen(from));
    return s;
}

/* Y from the affine model's solves against zsysv of the full
 * jω·L − j·Ψ/ω + Zs·G + R(f), R the radiation terms expanded in full. */
static void test_radiating_against_zgesv(void **state)
{
    (void)state;
    char *json = radiating_json();
    em_test_case c;
    em_test_case_open(&c, json);
    int n = sv_em_model_unknowns(c.m), np = sv_em_model_ports(c.m);
    sv_sweep_shape sh;
    sv_sweep_model_shape(sv_em_affine_model(c.a), &sh);
    assert_true(sh.lowrank > 0 && sh.lowrank_cols > 0);
    double *L, *P;
    em_test_full(c.m, &L, &P);
    sv_em_csr *G;
    assert_int_equal(sv_em_gram(NULL, c.m, &G), SV_OK);
    const double fs[2] = {0.7e9, 9e9};
    for (int i = 0; i < 2; i++) {
        double *R = em_test_radiation_full(c.m->rad, n, fs[i]);
        double complex Yref[9], Ysolve[9], Ymixed[9];
        em_test_y_rad(c.m, L, P, G, R, fs[i], Yref);
        double complex *x = malloc(sizeof(double complex) * n * np);
        assert_int_equal(sv_sweep_solve_exact(NULL, sv_em_affine_model(c.a), fs[i], SV_SWEEP_MIXED, x, n, NULL), SV_OK);
        assert_int_equal(sv_em_port_admittance(c.m, x, n, Ymixed), SV_OK);
        assert_int_equal(sv_em_solve(NULL, c.a, fs[i], Ysolve), SV_OK);
        double d1 = max_rel_diff(np, Ysolve, Yref), d2 = max_rel_diff(np, Ymixed, Yref);
        /* the radiation must be visible in Y, else the check says nothing */
        double complex Yqs[9];
        em_test_y(c.m, L, P, G, fs[i], Yqs);
        double drad = max_rel_diff(np, Yqs, Yref);
        print_message("radiating, %d terms (%d low-rank, rank %d), %.2g GHz: |Y - Y_ref| %.1e (double), %.1e (mixed); "
                      "radiation moves Y by %.1e\n",
                      sh.nterms, sh.lowrank, sh.lowrank_cols, fs[i] / 1e9, d1, d2, drad);
        assert_true(d1 <= 1e-10);
        assert_true(d2 <= 1e-10);
        assert_true(drad > 1e-6);
        free(x);
        free(R);
    }
    sv_em_csr_destroy(G);
    free(L);
    free(P);
    em_test_case_close(&c);
    free(json);
}

/* Its terms: the quasi-static ones, then the radiation's as low-rank terms
 * sharing one U, with the radiation's coefficients. */
static void test_radiating_terms(void **state)
{
    (void)state;
    char *json = radiating_json();
    em_test_case c;
    em_test_case_open(&c, json);
    int nt = sv_em_affine_nterms(c.m), J = sv_em_radiation_terms(c.m->rad);
    assert_true(J > 0);
    assert_int_equal(nt, 3 + J);
    assert_int_equal(sv_sweep_model_nterms(sv_em_affine_model(c.a)), nt);
    sv_sweep_shape sh;
    sv_em_affine_shape(c.m, &sh);
    int rank;
    const double *u = sv_em_radiation_basis(c.m->rad, &rank);
    assert_int_equal(sh.nterms, nt);
    assert_int_equal(sh.lowrank, J);
    assert_int_equal(sh.lowrank_cols, rank);
    double f = 4e9;
    for (int k = 3; k < nt; k++) {
        sv_sweep_term t;
        assert_int_equal(sv_em_affine_term(c.a, k, &t), SV_OK);
        assert_int_equal(t.kind, SV_SWEEP_TERM_LOWRANK);
        assert_true(t.u == u && t.rank == rank && t.core == sv_em_radiation_core(c.m->rad, k - 3));
        assert_true(creal(sv_em_affine_coefficient(c.a, k, f)) == sv_em_radiation_coef(c.m->rad, k - 3, f));
    }
    /* what the affine model holds beyond its estimate is small bookkeeping */
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_affine *a;
    assert_int_equal(sv_em_affine_create(ctx, c.m, &a), SV_OK);
    size_t held = sv_ctx_memory_current(ctx), est = sv_em_affine_bytes(c.m);
    assert_true(held >= est && held <= est + est / 10 + 4096);
    sv_em_affine_destroy(a);
    sv_ctx_destroy(ctx);
    em_test_case_close(&c);
    free(json);
}

/* The mesh with its radiation terms under budgets from nothing up to
 * enough: every failure is a budget refusal that leaves nothing behind. */
static void test_radiating_model_budgets(void **state)
{
    (void)state;
    char *json = radiating_json();
    sv_em_project *p = em_test_project(json);
    int failures = 0, successes = 0;
    for (size_t limit = 1024; successes < 3; limit = limit * 5 / 4) {
        sv_ctx *ctx;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        assert_int_equal(sv_ctx_set_memory_limit(ctx, limit), SV_OK);
        sv_em_model *m = (sv_em_model *)1;
        sv_status s = sv_em_model_create(ctx, p, NULL, &m);
        if (s) {
            assert_int_equal(s, SV_ERR_BUDGET);
            assert_null(m);
            failures++;
        } else {
            assert_non_null(m->rad);
            successes++;
            sv_em_model_destroy(m);
        }
        assert_int_equal(sv_ctx_memory_current(ctx), 0);
        sv_ctx_destroy(ctx);
    }
    print_message("%d failures, %d successes\n", failures, successes);
    assert_true(failures > 5);
    sv_em_project_destroy(p);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_y_against_zgesv),
        cmocka_unit_test(test_terms),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_partial_construction),
        cmocka_unit_test(test_solve_errors),
        cmocka_unit_test(test_radiating_against_zgesv),
        cmocka_unit_test(test_radiating_terms),
        cmocka_unit_test(test_radiating_model_budgets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
