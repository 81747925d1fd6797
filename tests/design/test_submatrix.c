/* The fact the design's evaluator rests on (docs/design.md, "Method"):
 * with the effects a design allows, every term of a map's moment matrix
 * (L, Ψ, Ψ_im packed; G sparse) is, entry for entry and bit for bit, the
 * principal submatrix of the full board's (every design pixel metal) on
 * the rooftops the map has. Both are assembled by the library from their
 * own projects; the rooftops are matched by kind and cells. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/dense_layout.h"
#include "support_design.h"
#include "sv_test.h"

enum { NC = 13 * 7 };

static void full_map(unsigned char *map)
{
    for (int c = 0; c < NC; c++) {
        int i = c % 13, j = c / 13;
        map[c] = design_test_in_region(c) || (j >= 2 && j <= 4 && (i <= 3 || i >= 9));
    }
}

typedef struct model {
    sv_em_project *p;
    sv_em_model *m;
    sv_em_affine *a;
} model;

static void open_model(model *x, const unsigned char *map)
{
    x->p = design_test_project(&design_test_board, map);
    assert_int_equal(sv_em_model_create(NULL, x->p, NULL, &x->m), SV_OK);
    assert_int_equal(sv_em_affine_create(NULL, x->m, &x->a), SV_OK);
}

static void close_model(model *x)
{
    sv_em_affine_destroy(x->a);
    sv_em_model_destroy(x->m);
    sv_em_project_destroy(x->p);
}

/* The map's unknown u is the full model's unknown idx[u]. */
static void match(const sv_em_model *mm, const sv_em_model *mf, int *idx)
{
    int nm = sv_em_model_unknowns(mm), nf = sv_em_model_unknowns(mf);
    for (int u = 0; u < nm; u++) {
        int k, i, j, p;
        assert_int_equal(sv_em_model_unknown(mm, u, &k, &i, &j, &p), SV_OK);
        idx[u] = -1;
        for (int v = 0; v < nf && idx[u] < 0; v++) {
            int k2, i2, j2, p2;
            sv_em_model_unknown(mf, v, &k2, &i2, &j2, &p2);
            if (k2 == k && i2 == i && j2 == j && p2 == p) idx[u] = v;
        }
        assert_true(idx[u] >= 0);
    }
}

static double csr_at(const sv_sweep_term *t, int r, int c)
{
    for (int q = t->rowptr[r]; q < t->rowptr[r + 1]; q++)
        if (t->colind[q] == c) return t->values[q];
    return 0;
}

static void test_principal_submatrix(void **state)
{
    (void)state;
    unsigned char fm[NC], map[NC];
    full_map(fm);
    model full;
    open_model(&full, fm);
    int nf = sv_em_model_unknowns(full.m);
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 3);
    for (int trial = 0; trial < 6; trial++) {
        memcpy(map, fm, NC);
        for (int c = 0; c < NC; c++)
            if (design_test_in_region(c)) map[c] = trial == 0 ? 0 : (unsigned char)(sv_test_rng_next(&rng) & 1);
        model x;
        open_model(&x, map);
        int nm = sv_em_model_unknowns(x.m), *idx = malloc(sizeof(int) * nm);
        match(x.m, full.m, idx);
        int nt = sv_sweep_model_nterms(sv_em_affine_model(x.a));
        assert_int_equal(nt, sv_sweep_model_nterms(sv_em_affine_model(full.a)));
        assert_int_equal(nt, 4); /* L, Ψ, G, Ψ_im */
        long compared = 0;
        for (int k = 0; k < nt; k++) {
            sv_sweep_term a, b;
            sv_em_affine_term(x.a, k, &a);
            sv_em_affine_term(full.a, k, &b);
            assert_int_equal(a.kind, b.kind);
            assert_true(sv_em_affine_coefficient(x.a, k, 2e9) == sv_em_affine_coefficient(full.a, k, 2e9));
            for (int c = 0; c < nm; c++)
                for (int r = c; r < nm; r++, compared++) {
                    double u = a.kind == SV_SWEEP_TERM_PACKED ? a.packed[sv_dense_packed_offset(nm, a.nb, r, c)] : csr_at(&a, r, c);
                    double v = b.kind == SV_SWEEP_TERM_PACKED ? b.packed[sv_dense_packed_offset(nf, b.nb, idx[r], idx[c])]
                                                              : csr_at(&b, idx[r], idx[c]);
                    if (u != v) fail_msg("map %d, term %d, entry (%d, %d): %.17g != %.17g", trial, k, r, c, u, v);
                }
        }
        printf("  map %d: %d of the full model's %d unknowns, %ld entries equal\n", trial, nm, nf, compared);
        free(idx);
        close_model(&x);
    }
    close_model(&full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_principal_submatrix)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
