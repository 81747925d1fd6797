/* The adaptive sweep on the bundled planar examples against exact
 * double-precision solves at every frequency: max |ΔS| ≤ 1e-9 at the
 * default tolerance, exact agreement at the sampled frequencies,
 * reciprocity and passivity of every output, ≤ 10 exact solves for 41
 * points on the ~2000-unknown pixelated example. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "solvent/em.h"
#include "solvent/sweep.h"

static void check_example(const char *name, int nf, int max_exact_expected)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, name);
    sv_em_project *prj;
    assert_int_equal(sv_em_project_read(NULL, path, &prj), SV_OK);
    sv_em_model *em;
    assert_int_equal(sv_em_model_create(NULL, prj, NULL, &em), SV_OK);
    int n = sv_em_model_unknowns(em), p = sv_em_model_ports(em);
    sv_em_sweep sw;
    sv_em_project_sweep(prj, &sw);
    assert_true(sw.present);
    double *z0 = malloc(sizeof(double) * p);
    for (int k = 0; k < p; k++) z0[k] = sv_em_project_port_z0(prj, k);
    sv_em_affine *model;
    assert_int_equal(sv_em_affine_create(NULL, em, &model), SV_OK);
    const sv_sweep_model *m = sv_em_affine_model(model);
    double *f = malloc(sizeof(double) * nf);
    for (int i = 0; i < nf; i++) f[i] = sw.start_hz + (sw.stop_hz - sw.start_hz) * i / (nf - 1);
    sv_sweep_result *r;
    assert_int_equal(sv_sweep_run(NULL, m, nf, f, NULL, &r), SV_OK);
    assert_true(r->converged);
    /* exact double solves at every frequency, independent of the adaptive sampling: the EM module's direct solve */
    double complex *y = malloc(sizeof(double complex) * p * p), *s1 = malloc(sizeof(double complex) * p * p),
                   *s2 = malloc(sizeof(double complex) * p * p);
    double ds = 0, dexact = 0, recip = 0, smax = 0;
    for (int i = 0; i < nf; i++) {
        assert_int_equal(sv_em_solve(NULL, model, f[i], y), SV_OK);
        assert_int_equal(sv_em_y_to_s(p, y, z0, s1), SV_OK);
        assert_int_equal(sv_em_y_to_s(p, r->h + (size_t)i * p * p, z0, s2), SV_OK);
        for (int e = 0; e < p * p; e++) {
            ds = fmax(ds, cabs(s1[e] - s2[e]));
            if (r->exact[i]) dexact = fmax(dexact, cabs(s1[e] - s2[e]));
        }
        recip = fmax(recip, sv_em_reciprocity_error(p, s2));
        double sv;
        assert_int_equal(sv_em_max_singular_value(p, s2, &sv), SV_OK);
        smax = fmax(smax, sv);
    }
    print_message("%s: %d unknowns, %d points, %d exact solves (%d fell back), q = %d: max |dS| %.2e "
                  "(at exact points %.2e), |S - S^T| %.1e, max sv %.15f\n",
                  name, n, nf, r->n_exact, r->n_fallback, r->basis_size, ds, dexact, recip, smax);
    assert_true(ds <= 1e-9);
    assert_true(dexact <= 1e-11);
    assert_true(recip <= 1e-10);
    assert_true(smax <= 1 + 1e-10);
    if (max_exact_expected) assert_true(r->n_exact <= max_exact_expected);
    /* the same sweep with double-precision exact solves */
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_DOUBLE;
    sv_sweep_result *rd;
    assert_int_equal(sv_sweep_run(NULL, m, nf, f, &o, &rd), SV_OK);
    double dmd = 0;
    for (int i = 0; i < nf; i++) {
        assert_int_equal(sv_em_y_to_s(p, r->h + (size_t)i * p * p, z0, s1), SV_OK);
        assert_int_equal(sv_em_y_to_s(p, rd->h + (size_t)i * p * p, z0, s2), SV_OK);
        for (int e = 0; e < p * p; e++) dmd = fmax(dmd, cabs(s1[e] - s2[e]));
    }
    print_message("%s: mixed vs double sweep: max |dS| %.2e (%d and %d exact solves)\n", name, dmd, r->n_exact,
                  rd->n_exact);
    assert_true(dmd <= 1e-10);
    sv_sweep_result_destroy(rd);
    sv_sweep_result_destroy(r);
    sv_em_affine_destroy(model);
    free(f);
    free(y);
    free(s1);
    free(s2);
    free(z0);
    sv_em_model_destroy(em);
    sv_em_project_destroy(prj);
}

static void test_pixel2port(void **state)
{
    (void)state;
    check_example("pixel2port.json", 41, 10);
}

static void test_stub(void **state)
{
    (void)state;
    check_example("stub.json", 21, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pixel2port),
        cmocka_unit_test(test_stub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
