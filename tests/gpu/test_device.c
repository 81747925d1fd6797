/* The CUDA back end on a real device (built only with CUDA; exits 77, which
 * ctest reports as skipped, when no device is usable). Checks, each against
 * an independent reference:
 *   - the start-up self-test passes both residual paths and the solve;
 *   - the kernel compiled a second time without error terms
 *     (broken_df_products.cu, in a second module loaded by its path,
 *     SV_TEST_BROKEN_MODULE) fails it;
 *   - factor + solve agree with LAPACK on the full double matrix, and the
 *     products with long double sums (via the CPU emulation's double path,
 *     itself checked against long double in test_emulated.c);
 *   - the exact solver through sv_sweep_run: H against LAPACK, every solve
 *     on the device, and the CPU fallback at a frequency whose single
 *     factorisation breaks down;
 *   - the planar model's assembly on the device against the em module's
 *     CPU assembly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "support_asm.h"
#include "support_gpu.h"
#include "gpu/gpu_internal.h"

static void test_selftest_on_device(void **state)
{
    (void)state;
    sv_gpu_backend *b;
    sv_gpu_selftest_result r;
    assert_int_equal(sv_gpu_backend_device(NULL, NULL, 0, &b), SV_OK);
    assert_int_equal(sv_gpu_selftest(NULL, b, 3, 1, &r), SV_OK);
    b->destroy(b);
    print_message("self-test (device): %s\n", r.message);
    assert_int_equal(r.double_ok, 1);
    assert_int_equal(r.df_ok, 1);
    assert_int_equal(r.solve_ok, 1);

    char reason[512];
    const sv_gpu_cuda_module *broken = sv_gpu_module_open(SV_TEST_BROKEN_MODULE, reason, sizeof reason);
    if (!broken) print_message("%s\n", reason);
    assert_non_null(broken);
    assert_non_null(strstr(broken->variant, "broken"));
    assert_int_equal(sv_gpu_backend_device((void *)broken, NULL, 0, &b), SV_OK);
    assert_int_equal(sv_gpu_selftest(NULL, b, 3, 1, &r), SV_OK);
    b->destroy(b);
    print_message("self-test (device, error terms removed): %s\n", r.message);
    assert_int_equal(r.double_ok, 1);
    assert_int_equal(r.df_ok, 0);
    assert_true(r.df_err > 1e-9);
}

static void test_factor_products_vs_references(void **state)
{
    (void)state;
    int n = 700, nb = 128, p = 2, nc = 6;
    synth s;
    synth_create(&s, n, nb, p, 4, 0.02, 31);
    sv_gpu_term_view v[3];
    sv_gpu_problem prob;
    assert_int_equal(sv_gpu_problem_from_model(s.model, v, &prob), SV_OK);
    sv_gpu_backend *d, *e;
    assert_int_equal(sv_gpu_backend_device(NULL, NULL, 0, &d), SV_OK);
    assert_int_equal(sv_gpu_backend_emulated(NULL, NULL, 0, &e), SV_OK);
    assert_int_equal(d->upload(d, &prob, 3, nc), SV_OK);
    assert_int_equal(e->upload(e, &prob, 3, nc), SV_OK);
    double f = 4.5e9;
    double complex c[3];
    for (int k = 0; k < 3; k++) c[k] = synth_coef(&s, k, f);
    double t0 = sv_time_now();
    assert_int_equal(d->form(d, c), SV_OK);
    assert_int_equal(d->factor(d, 0.0), SV_OK);
    print_message("form + factor n = %d on the device: %.4f s (first call, includes start-up)\n", n,
                  sv_time_now() - t0);
    float complex *v32 = malloc(sizeof(float complex) * n * p);
    for (int i = 0; i < n * p; i++) v32[i] = (float)s.b[i];
    assert_int_equal(d->solve(d, p, v32), SV_OK);
    double complex *x = malloc(sizeof(double complex) * n * p), *xr = malloc(sizeof(double complex) * n * p);
    for (int i = 0; i < n * p; i++) x[i] = v32[i];
    synth_solve(&s, f, xr);
    double err = rel_diff(n * p, x, xr);
    print_message("device single-precision solve vs LAPACK: %.2e\n", err);
    assert_true(err < 1e-3);

    sv_test_rng r;
    sv_test_rng_seed(&r, 3);
    double *xx = malloc(sizeof(double) * n * nc), *yd = malloc(sizeof(double) * n * nc * 3),
           *ye = malloc(sizeof(double) * n * nc * 3);
    for (int i = 0; i < n * nc; i++) xx[i] = sv_test_uniform(&r);
    assert_int_equal(e->products(e, SV_GPU_RESIDUAL_DOUBLE, nc, xx, ye), SV_OK);
    for (int mode = 1; mode <= 2; mode++) {
        assert_int_equal(d->products(d, (sv_gpu_residual)mode, nc, xx, yd), SV_OK);
        double worst = 0, scale = 0;
        for (int i = 0; i < n * nc * 3; i++) {
            worst = fmax(worst, fabs(yd[i] - ye[i]));
            scale = fmax(scale, fabs(ye[i]));
        }
        print_message("device products (%s) vs CPU: %.2e relative\n", mode == 1 ? "double" : "double-float",
                      worst / scale);
        assert_true(worst <= (mode == 1 ? 1e-13 : 1e-11) * scale);
    }
    d->destroy(d);
    e->destroy(e);
    free(v32);
    free(x);
    free(xr);
    free(xx);
    free(yd);
    free(ye);
    synth_destroy(&s);
}

static void test_sweep_on_device(void **state)
{
    (void)state;
    int n = 600, nf = 21;
    synth s;
    synth_create(&s, n, 128, 2, 4, 0.02, 41);
    double f[21];
    for (int i = 0; i < nf; i++) f[i] = 1e9 + 9e9 * i / (nf - 1);
    for (int mode = 1; mode <= 2; mode++) {
        sv_gpu_options o;
        sv_gpu_options_default(&o);
        o.residual = (sv_gpu_residual)mode;
        o.required = 1;
        sv_gpu_solver *g;
        assert_int_equal(sv_gpu_solver_create(NULL, s.model, 2, &o, &g), SV_OK);
        sv_sweep_options so;
        sv_sweep_options_default(&so);
        so.solver = sv_gpu_solver_sweep(g);
        so.exact_all = 1;
        sv_sweep_result *res;
        assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &so, &res), SV_OK);
        sv_gpu_report rep;
        sv_gpu_solver_report(g, &rep);
        print_message("%s residuals: %d solves, %d on the device, %d CPU fallbacks, %d iterations, %.3f s\n",
                      mode == 1 ? "double" : "double-float", rep.solves, rep.device_solves, rep.cpu_fallbacks,
                      rep.iterations, rep.seconds_device);
        assert_int_equal(rep.device_solves, nf);
        double complex *x = malloc(sizeof(double complex) * n * 2);
        double worst = 0;
        for (int i = 0; i < nf; i++) {
            synth_solve(&s, f[i], x);
            double complex h[4];
            for (int j = 0; j < 2; j++)
                for (int a = 0; a < 2; a++) {
                    double complex acc = 0;
                    for (int q = 0; q < n; q++) acc += s.b[(size_t)a * n + q] * x[(size_t)j * n + q];
                    h[j * 2 + a] = acc;
                }
            worst = fmax(worst, rel_diff(4, res->h + (size_t)i * 4, h));
        }
        print_message("H vs LAPACK: %.2e\n", worst);
        /* forward error ≈ cond (up to ~1e6 at the low band edge) × the
         * refinement target (1e-15 double, 2e-14 double-float): as on the
         * CPU emulation in test_emulated.c */
        assert_true(worst < (mode == 1 ? 2e-9 : 5e-8));
        free(x);
        sv_sweep_result_destroy(res);
        sv_gpu_solver_destroy(g);
    }
    /* at 1 MHz the single factorisation breaks down: the CPU answers */
    sv_gpu_solver *g;
    assert_int_equal(sv_gpu_solver_create(NULL, s.model, 0, NULL, &g), SV_OK);
    double complex *x = malloc(sizeof(double complex) * n * 2), *xr = malloc(sizeof(double complex) * n * 2);
    sv_sweep_exact_info info;
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, s.model, 1e6, x, n, 0, NULL, 0, &info), SV_OK);
    assert_int_equal(info.fell_back, 1);
    /* the fallback is the CPU double path: its numbers */
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, 1e6, SV_SWEEP_DOUBLE, 0, xr, n, 0, NULL, 0, NULL), SV_OK);
    assert_true(rel_diff(n * 2, x, xr) < 1e-12);
    free(x);
    free(xr);
    sv_gpu_solver_destroy(g);
    synth_destroy(&s);
}

/* The planar model's assembly on the device against the CPU's (the
 * em module's), on the pixelated example with the loss ratio and with Ψ_im
 * as its own term: 1e-12 relative (issue 15); bit for bit is what the
 * emulation gives and what IEEE arithmetic without fused multiply-adds
 * should give here too (reported, not asserted: the device's libm is not
 * the CPU's, though the far entries call none of it). */
static void test_assembly_on_device(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/pixel2port.json", SV_SOURCE_DIR);
    sv_em_project *p;
    sv_em_model *m;
    assert_int_equal(sv_em_project_read(NULL, path, &p), SV_OK);
    assert_int_equal(sv_em_model_create(NULL, p, NULL, &m), SV_OK);
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.required = 1;
    sv_gpu_assembler *a;
    assert_int_equal(sv_gpu_assembler_create(NULL, &o, &a), SV_OK);
    for (int psi_im = 0; psi_im <= 1; psi_im++) {
        asm_diff d = asm_compare(m, 0, psi_im, sv_gpu_assembler_em(a));
        sv_gpu_assembly_report rep;
        sv_gpu_assembler_report(a, &rep);
        print_message("device assembly of pixel2port%s, N = %d: max rel diff %.1e (entrywise %.1e), %zu of %zu "
                      "entries differ%s; tables %.4f s, rows %.4f s, device %.4f s, copy %.4f s\n",
                      psi_im ? " with Psi_im" : "", d.n, d.rel, d.rel_entry, d.differing, d.entries,
                      d.identical ? ", bit for bit equal" : "", rep.seconds_tables, rep.seconds_rows,
                      rep.seconds_device, rep.seconds_copy);
        assert_int_equal(rep.device_errors, 0);
        assert_int_equal(rep.device_assemblies, psi_im + 1);
        assert_true(d.rel <= 1e-12);
    }
    sv_gpu_assembler_destroy(a);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

int main(void)
{
    char reason[256];
    if (!sv_gpu_available(reason, sizeof reason)) {
        printf("SKIP: no usable CUDA device: %s\n", reason);
        return 77;
    }
    sv_gpu_device_info info;
    char buf[300];
    sv_gpu_query(0, &info);
    printf("device: %s\n", sv_gpu_describe(&info, buf, sizeof buf));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selftest_on_device),
        cmocka_unit_test(test_factor_products_vs_references),
        cmocka_unit_test(test_sweep_on_device),
        cmocka_unit_test(test_assembly_on_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
