/* Assembly: the table-driven L and Ψ against the naive reference that
 * evaluates every entry from its own closed forms (all image terms, no far
 * approximation); symmetry, the packed layout, G's rooftop overlaps, and Ψ's
 * null space (divergence-free loop currents). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

/* An irregular shape with ports on all four sides, dx ≠ dy. */
static const char *shape =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 10.2},"
    "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    "\"grid\": {\"dx\": 0.3, \"dy\": 0.2, \"nx\": 9, \"ny\": 7},"
    "\"pixels\": [\"....#####\","
    "             \"....#...#\","
    "             \"#########\","
    "             \"###......\","
    "             \"###..##..\","
    "             \"#######..\","
    "             \".#.......\"],"
    "\"ports\": [{\"name\": \"L\", \"side\": \"left\", \"x\": 0, \"y\": [0.2, 1.0]},"
    "          {\"name\": \"R\", \"side\": \"right\", \"x\": 2.7, \"y\": [1.2, 1.4]},"
    "          {\"name\": \"B\", \"side\": \"bottom\", \"y\": 0, \"x\": [0.3, 0.6]},"
    "          {\"name\": \"T\", \"side\": \"top\", \"y\": 1.4, \"x\": [1.2, 2.7]}]}";

/* max |table − naive| / max |naive| over all entries, for L and Ψ. */
static void compare_naive(const char *json, double *lrel, double *prel, int *nout)
{
    sv_em_project *p = em_test_project(json);
    sv_em_model *m = em_test_model(p);
    int n = sv_em_model_unknowns(m);
    double *L, *P;
    em_test_full(m, &L, &P);
    double *lc = malloc(sizeof(double) * n), *pc = malloc(sizeof(double) * n);
    double lmax = 0, pmax = 0, ldiff = 0, pdiff = 0;
    for (int j = 0; j < n; j++) {
        sv_em_naive_column(m, j, lc, pc);
        for (int i = j; i < n; i++) {
            lmax = fmax(lmax, fabs(lc[i - j]));
            pmax = fmax(pmax, fabs(pc[i - j]));
            ldiff = fmax(ldiff, fabs(L[i + (size_t)n * j] - lc[i - j]));
            pdiff = fmax(pdiff, fabs(P[i + (size_t)n * j] - pc[i - j]));
        }
    }
    *lrel = ldiff / lmax;
    *prel = pdiff / pmax;
    *nout = n;
    free(lc);
    free(pc);
    free(L);
    free(P);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_tables_match_naive(void **state)
{
    (void)state;
    double lr, pr;
    int n;
    compare_naive(shape, &lr, &pr, &n);
    printf("n = %d: max |dL|/max|L| = %.2e, max |dPsi|/max|Psi| = %.2e\n", n, lr, pr);
    assert_true(lr <= 1e-9);
    assert_true(pr <= 1e-9);
}

/* A long strip: offsets beyond the far ratio (10 cells) use the point form
 * with its corrections; the difference to the naive closed forms stays within
 * the accuracy. */
static void test_far_pairs_match_naive(void **state)
{
    (void)state;
    const char *strip =
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.3, \"eps_r\": 2.2}, \"metal\": {\"conductivity\": \"inf\"},"
        "\"grid\": {\"dx\": 0.2, \"dy\": 0.25, \"nx\": 34, \"ny\": 3},"
        "\"pixels\": [\"##################################\", \"#####.###########.################\","
        "             \"##################################\"],"
        "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 0.75]},"
        "          {\"name\": \"b\", \"side\": \"right\", \"x\": 6.8, \"y\": [0.25, 0.5]}]}";
    double lr, pr;
    int n;
    compare_naive(strip, &lr, &pr, &n);
    printf("strip n = %d: max |dL|/max|L| = %.2e, max |dPsi|/max|Psi| = %.2e\n", n, lr, pr);
    assert_true(lr <= 1e-8);
    assert_true(pr <= 1e-8);
}

/* A line along x and the same line along y (dx, dy swapped) must give the
 * same port admittances. */
static void test_rotation_invariance(void **state)
{
    (void)state;
    const char *hor =
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.0, \"eps_r\": 4.4}, \"metal\": {\"conductivity\": \"inf\"},"
        "\"grid\": {\"dx\": 0.5, \"dy\": 0.3, \"nx\": 12, \"ny\": 4},"
        "\"rectangles\": [{\"x\": [0, 6], \"y\": [0, 0.9]}, {\"x\": [2, 3], \"y\": [0.9, 1.2]}],"
        "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 0.9]},"
        "          {\"name\": \"b\", \"side\": \"right\", \"x\": 6, \"y\": [0, 0.9]},"
        "          {\"name\": \"c\", \"side\": \"top\", \"y\": 1.2, \"x\": [2, 3]}]}";
    const char *ver =
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.0, \"eps_r\": 4.4}, \"metal\": {\"conductivity\": \"inf\"},"
        "\"grid\": {\"dx\": 0.3, \"dy\": 0.5, \"nx\": 4, \"ny\": 12},"
        "\"rectangles\": [{\"y\": [0, 6], \"x\": [0, 0.9]}, {\"y\": [2, 3], \"x\": [0.9, 1.2]}],"
        "\"ports\": [{\"name\": \"a\", \"side\": \"bottom\", \"y\": 0, \"x\": [0, 0.9]},"
        "          {\"name\": \"b\", \"side\": \"top\", \"y\": 6, \"x\": [0, 0.9]},"
        "          {\"name\": \"c\", \"side\": \"right\", \"x\": 1.2, \"y\": [2, 3]}]}";
    double complex Y[2][9];
    const char *src[2] = {hor, ver};
    for (int k = 0; k < 2; k++) {
        sv_em_project *p = em_test_project(src[k]);
        sv_em_model *m = em_test_model(p);
        double *L, *P;
        em_test_full(m, &L, &P);
        em_test_y(m, L, P, NULL, 3e9, Y[k]);
        free(L);
        free(P);
        sv_em_model_destroy(m);
        sv_em_project_destroy(p);
    }
    for (int q = 0; q < 9; q++) {
        sv_assert_close(creal(Y[1][q]), creal(Y[0][q]), 1e-9, cabs(Y[0][0]));
        sv_assert_close(cimag(Y[1][q]), cimag(Y[0][q]), 1e-9, cabs(Y[0][0]));
    }
}

/* Ψ·I = 0 for a loop current around an inner cell corner: 4 rooftops
 * around the vertex, circulating. G: the rooftop overlaps. */
static void test_null_space_and_gram(void **state)
{
    (void)state;
    const char *sq =
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.0, \"eps_r\": 2.2}, \"metal\": {\"conductivity\": 1e7, "
        "\"thickness\": 0.01}, \"grid\": {\"dx\": 0.4, \"dy\": 0.25, \"nx\": 3, \"ny\": 3},"
        "\"pixels\": [\"###\", \"###\", \"###\"],"
        "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 0.25]},"
        "          {\"name\": \"b\", \"side\": \"right\", \"x\": 1.2, \"y\": [0, 0.25]}],"
        "\"effects\": {\"thick_metal\": false}}"; /* G's sheet overlaps below */
    sv_em_project *p = em_test_project(sq);
    sv_em_model *m = em_test_model(p);
    int n = sv_em_model_unknowns(m);
    assert_int_equal(n, 2 * 3 + 3 * 2 + 2);
    double *L, *P;
    em_test_full(m, &L, &P);
    /* unknowns: x rooftops (i,j) i=0..1, j=0..2 -> index i + 2j; y rooftops (i,j) i=0..2, j=0..1 -> 6 + i + 3j.
       Loop around the vertex (1,1) (between cells (0,0),(1,0),(0,1),(1,1)), counter-clockwise:
       +x along the bottom row (x rooftop (0,0)), +y up the right column (y rooftop (1,0)),
       −x along the top row (x rooftop (0,1)), −y down the left column (y rooftop (0,0)). */
    double v[14] = {0};
    v[0 + 2 * 0] = 1;
    v[6 + 1 + 3 * 0] = 1;
    v[0 + 2 * 1] = -1;
    v[6 + 0 + 3 * 0] = -1;
    double pmax = 0;
    for (int q = 0; q < n * n; q++) pmax = fmax(pmax, fabs(P[q]));
    for (int r = 0; r < n; r++) {
        double s = 0;
        for (int c = 0; c < n; c++) s += P[r + (size_t)n * c] * v[c];
        assert_true(fabs(s) <= 1e-12 * pmax);
    }
    /* L is positive definite: Cholesky via a quadratic form on random vectors */
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 7);
    for (int t = 0; t < 20; t++) {
        double x[14], q = 0;
        for (int i = 0; i < n; i++) x[i] = sv_test_uniform(&rng);
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) q += x[r] * L[r + (size_t)n * c] * x[c];
        assert_true(q > 0);
    }
    sv_em_csr *G;
    assert_int_equal(sv_em_gram(NULL, m, &G), SV_OK);
    double rx = 0.4 / 0.25, ry = 0.25 / 0.4;
    double full[14][14] = {{0}};
    for (int r = 0; r < n; r++)
        for (int k = G->rowptr[r]; k < G->rowptr[r + 1]; k++) full[r][G->col[k]] = G->val[k];
    sv_assert_close(full[0][0], 2 * rx / 3, 1e-14, 0);    /* x rooftop self */
    sv_assert_close(full[0][1], rx / 6, 1e-14, 0);        /* in-line neighbour */
    assert_true(full[0][2] == 0);                          /* parallel, not in line */
    assert_true(full[0][6] == 0);                          /* orthogonal */
    sv_assert_close(full[6][6], 2 * ry / 3, 1e-14, 0);    /* y rooftop self */
    sv_assert_close(full[6][9], ry / 6, 1e-14, 0);
    sv_assert_close(full[12][12], rx / 3, 1e-14, 0);      /* half rooftop (left port) */
    sv_assert_close(full[12][0], rx / 6, 1e-14, 0);       /* falling half + rising part of x(0,0) */
    sv_assert_close(full[13][13], rx / 3, 1e-14, 0);
    sv_assert_close(full[13][1], -rx / 6, 1e-14, 0);      /* right port points inward (−x) */
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) assert_true(full[r][c] == full[c][r]);
    sv_em_csr_destroy(G);
    free(L);
    free(P);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_packed_offset(void **state)
{
    (void)state;
    /* every (i ≥ j) maps to a distinct offset below the size; columns contiguous */
    for (int n = 1; n <= 23; n += 11)
        for (int nb = 1; nb <= 8; nb += 3) {
            size_t sz = sv_dense_packed_size(n, nb);
            char *seen = calloc(sz, 1);
            for (int j = 0; j < n; j++)
                for (int i = j; i < n; i++) {
                    size_t o = sv_dense_packed_offset(n, nb, i, j);
                    assert_true(o < sz);
                    assert_false(seen[o]);
                    seen[o] = 1;
                    if (i > j) assert_true(o == sv_dense_packed_offset(n, nb, i - 1, j) + 1);
                    assert_true(o == sv_dense_packed_offset(n, nb, j, i));
                }
            free(seen);
            /* the same layout as the dense engine's */
            sv_dense_sym *a;
            assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, nb, &a), SV_OK);
            for (int j = 0; j < n; j++)
                for (int i = j; i < n; i++) assert_true(sv_dense_sym_offset(a, i, j) == sv_dense_packed_offset(n, nb, i, j));
            sv_dense_sym_destroy(a);
        }
}

/* sv_em_assemble (packed, through the dense engine) against the full raw fill. */
static void test_packed_matches_full(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(shape);
    sv_em_model *m = em_test_model(p);
    int n = sv_em_model_unknowns(m);
    double *L, *P;
    em_test_full(m, &L, &P);
    sv_dense_sym *Lp, *Pp;
    sv_em_assembly_info info;
    assert_int_equal(sv_em_assemble(NULL, m, 5, &Lp, &Pp, &info), SV_OK);
    assert_true(info.image_terms == sv_em_image_terms(10.2, 1e-8));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            assert_true(creal(sv_dense_sym_get(Lp, i, j)) == L[i + (size_t)n * j]);
            assert_true(creal(sv_dense_sym_get(Pp, i, j)) == P[i + (size_t)n * j]);
        }
    sv_dense_sym_destroy(Lp);
    sv_dense_sym_destroy(Pp);
    free(L);
    free(P);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_match_naive),
        cmocka_unit_test(test_far_pairs_match_naive),
        cmocka_unit_test(test_rotation_invariance),
        cmocka_unit_test(test_null_space_and_gram),
        cmocka_unit_test(test_packed_offset),
        cmocka_unit_test(test_packed_matches_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
