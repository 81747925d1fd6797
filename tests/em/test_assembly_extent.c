/* The assembly's coefficient tables follow the metal, not the grid (issue
 * 16, item 14): a small L-shaped piece of metal, with a lossy dielectric
 * and without, gives bit-identical L and Ψ on its own tight grid and in the
 * corner of a 1000 × 1000 grid, with tables of its bounding box (before,
 * the tables of the large grid needed 72 MB and millions of coefficients,
 * and a 16 MB budget refused them). */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

static const char *const shape =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4%s},"
    " \"metal\": {\"conductivity\": \"inf\"}, \"grid\": {\"dx\": 0.5, \"dy\": 0.4, \"nx\": %d, \"ny\": %d},"
    " \"rectangles\": [{\"x\": [0, 3], \"y\": [0, 0.8]}, {\"x\": [2, 3], \"y\": [0.8, 2]}],"
    " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 0.8]},"
    "           {\"name\": \"b\", \"side\": \"top\", \"y\": 2, \"x\": [2, 3]}]}";

typedef struct assembled {
    int n;
    double *L, *Psi; /* the lower triangles, column by column */
    sv_em_assembly_info info;
    size_t work;
} assembled;

static void assemble(int nx, int ny, int lossy, assembled *out)
{
    char text[1024];
    snprintf(text, sizeof text, shape, lossy ? ", \"tan_delta\": 0.02" : "", nx, ny);
    sv_em_project *p = em_test_project(text);
    sv_em_model *m = em_test_model(p);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, (size_t)16 << 20), SV_OK);
    sv_dense_sym *L, *Psi;
    sv_status s = sv_em_assemble(ctx, m, 0, &L, &Psi, &out->info);
    if (s) fail_msg("%d x %d grid: %s", nx, ny, sv_last_error());
    int n = out->n = sv_em_model_unknowns(m);
    out->work = sv_em_assemble_work_bytes(m);
    out->L = malloc(sizeof(double) * (size_t)n * (n + 1) / 2);
    out->Psi = malloc(sizeof(double) * (size_t)n * (n + 1) / 2);
    size_t k = 0;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++, k++) {
            out->L[k] = creal(sv_dense_sym_get(L, i, j));
            out->Psi[k] = creal(sv_dense_sym_get(Psi, i, j));
        }
    sv_dense_sym_destroy(L);
    sv_dense_sym_destroy(Psi);
    sv_ctx_destroy(ctx);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_tables_follow_the_metal(void **state)
{
    (void)state;
    for (int lossy = 0; lossy < 2; lossy++) {
        assembled tight, large;
        assemble(6, 5, lossy, &tight);
        assemble(1000, 1000, lossy, &large);
        assert_int_equal(tight.n, large.n);
        size_t bytes = sizeof(double) * (size_t)tight.n * (tight.n + 1) / 2;
        assert_memory_equal(tight.L, large.L, bytes);
        assert_memory_equal(tight.Psi, large.Psi, bytes);
        /* the metal spans 6 x 5 cells: as many coefficients of each table
         * (P, Lx, Ly: sv_em_assemble makes the real part) */
        assert_int_equal(large.info.distinct_coeffs, 3 * 6 * 5);
        assert_int_equal(large.work, tight.work);
        assert_true(large.work < 8192);
        free(tight.L), free(tight.Psi), free(large.L), free(large.Psi);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tables_follow_the_metal)};
    return cmocka_run_group_tests_name("assembly_extent", tests, NULL, NULL);
}
