/* The start-up self-test and the deliberately broken build of the device's
 * double-float kernels (broken_kernels.c: src/gpu/emu_kernels.c compiled
 * again with SV_GPU_BREAK_EFT, as a compiler that simplifies (a + b) − a to
 * b would build it): the self-test passes the real kernels, catches the
 * broken ones, and the solver then does not use that path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "support_gpu.h"
#include "gpu/gpu_internal.h"
#include "gpu/df_kernel.h"

#include "solvent/eft.h"

extern const sv_gpu_emu_kernels sv_gpu_emu_kernels_broken;

/* The header's transforms against the dense engine's (src/dense/eft.c):
 * the same exact error terms, and sums and products that recover double
 * accuracy from float parts. */
static void test_transforms_match_cpu_reference(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 9);
    for (int t = 0; t < 10000; t++) {
        float a = (float)sv_test_uniform(&r), b = (float)(sv_test_uniform(&r) * ldexp(1, (int)(t % 40) - 20));
        float s1, e1, s2, e2;
        sv_gpu_two_sum(a, b, &s1, &e1);
        sv_dense_two_sum_f(a, b, &s2, &e2);
        assert_true(s1 == s2 && e1 == e2);
        assert_true((double)s1 + (double)e1 == (double)a + (double)b);
        sv_gpu_two_prod(a, b, &s1, &e1);
        sv_dense_two_prod_f(a, b, &s2, &e2);
        assert_true(s1 == s2 && e1 == e2);
        assert_true((double)s1 + (double)e1 == (double)a * (double)b);
        double x = sv_test_uniform(&r), y = sv_test_uniform(&r) * 1e3;
        sv_gpu_df dx = sv_gpu_df_from_double(x), dy = sv_gpu_df_from_double(y);
        double xs = sv_gpu_df_to_double(dx), ys = sv_gpu_df_to_double(dy);
        assert_true(fabs(xs - x) <= ldexp(fabs(x), -47));
        /* Joldes–Muller–Popescu: sum within 3u² + 13u³, product within 5u² (u = 2⁻²⁴) */
        assert_true(fabs(sv_gpu_df_to_double(sv_gpu_df_add(dx, dy)) - (xs + ys)) <= 3.1 * ldexp(fabs(xs + ys), -48) + 1e-300);
        assert_true(fabs(sv_gpu_df_to_double(sv_gpu_df_mul(dx, dy)) - xs * ys) <= 5.1 * ldexp(fabs(xs * ys), -48));
    }
}

/* The offset formula of the header against the layout's description (block
 * columns walked in order, as tests/gpu/support_gpu.c packs). */
static void test_packed_offset(void **state)
{
    (void)state;
    int n = 45, nb = 8;
    double *full = malloc(sizeof(double) * n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) full[j * n + i] = i >= j ? i * 1000 + j : j * 1000 + i;
    double *p = synth_pack(n, nb, full);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) assert_true(p[sv_dense_packed_offset(n, nb, i, j)] == full[j * n + i]);
    assert_int_equal(sv_dense_packed_size(n, nb), 8 * (45 + 37 + 29 + 21 + 13) + 5 * 5);
    free(full);
    free(p);
}

static sv_gpu_backend *emulated_with(const sv_gpu_emu_kernels *k, sv_gpu_emu_options *o)
{
    memset(o, 0, sizeof(*o));
    o->kernels = k;
    sv_gpu_backend *b;
    assert_int_equal(sv_gpu_backend_emulated(o, NULL, 0, &b), SV_OK);
    return b;
}

/* The real kernels pass with errors near 2⁻⁴⁶; the broken build fails with
 * errors near single precision; the native-double path is unaffected. */
static void test_selftest_catches_broken_build(void **state)
{
    (void)state;
    sv_gpu_emu_options o;
    sv_gpu_selftest_result r;
    sv_gpu_backend *b = emulated_with(&sv_gpu_emu_kernels_default, &o);
    assert_int_equal(sv_gpu_selftest(NULL, b, 3, 1, &r), SV_OK);
    b->destroy(b);
    assert_int_equal(r.double_ok, 1);
    assert_int_equal(r.df_ok, 1);
    assert_int_equal(r.solve_ok, 1);
    assert_true(r.double_err < 1e-15);
    assert_true(r.df_err < 1e-13);
    assert_true(r.solve_err < 1e-5);

    b = emulated_with(&sv_gpu_emu_kernels_broken, &o);
    assert_int_equal(sv_gpu_selftest(NULL, b, 3, 1, &r), SV_OK);
    b->destroy(b);
    assert_int_equal(r.double_ok, 1);
    assert_int_equal(r.df_ok, 0);
    assert_true(r.df_err > 1e-9);  /* single precision: about 6e-8 */
    assert_true(r.df_err < 1e-5);
    assert_non_null(strstr(r.message, "double-float FAILED"));
    /* only the asked-for modes run */
    b = emulated_with(&sv_gpu_emu_kernels_broken, &o);
    assert_int_equal(sv_gpu_selftest(NULL, b, 1, 1, &r), SV_OK);
    b->destroy(b);
    assert_int_equal(r.df_ok, -1);
}

static sv_gpu_device_info slow_fp64_device(void)
{
    sv_gpu_device_info d;
    memset(&d, 0, sizeof(d));
    d.built = d.available = 1;
    strcpy(d.name, "emulated consumer device");
    d.total_bytes = d.free_bytes = (size_t)1 << 34;
    d.fp32_per_fp64 = 64; /* the plan wants double-float */
    return d;
}

/* The solver on a device with slow FP64 wants double-float residuals; with
 * the broken build the self-test disables them, and the solver falls back
 * to native double (correct, only slower) — or, when double-float was asked
 * for explicitly, to the CPU. Results stay right either way. */
static void test_solver_falls_back_from_broken_build(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 70, 16, 2, 2, 0.02, 4);
    int n = s.n, p = s.p;
    sv_gpu_device_info d = slow_fp64_device();
    sv_gpu_emu_options good = {.kernels = &sv_gpu_emu_kernels_default}, bad = {.kernels = &sv_gpu_emu_kernels_broken};
    sv_gpu_solver *g;
    sv_gpu_report rep;

    assert_int_equal(sv_gpu_solver_create_with(NULL, s.model, 0, NULL, &d, sv_gpu_backend_emulated, &good, &g), SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.residual, SV_GPU_RESIDUAL_DF);
    sv_gpu_solver_destroy(g);

    assert_int_equal(sv_gpu_solver_create_with(NULL, s.model, 0, NULL, &d, sv_gpu_backend_emulated, &bad, &g), SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_true(rep.on_device);
    assert_int_equal(rep.plan.residual, SV_GPU_RESIDUAL_DF);
    assert_int_equal(rep.selftest_df, 0);
    assert_int_equal(rep.residual, SV_GPU_RESIDUAL_DOUBLE);
    double complex *x = malloc(sizeof(double complex) * n * p), *xr = malloc(sizeof(double complex) * n * p);
    sv_sweep_exact_info info;
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, s.model, 6e9, x, n, 0, NULL, 0, &info), SV_OK);
    synth_solve(&s, 6e9, xr);
    assert_true(rel_diff(n * p, x, xr) < 1e-9);
    assert_int_equal(info.fell_back, 0);
    sv_gpu_solver_destroy(g);

    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.residual = SV_GPU_RESIDUAL_DF;
    assert_int_equal(sv_gpu_solver_create_with(NULL, s.model, 0, &o, &d, sv_gpu_backend_emulated, &bad, &g), SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_non_null(strstr(rep.note, "residual failed its self-test"));
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, s.model, 6e9, x, n, 0, NULL, 0, &info), SV_OK);
    assert_true(rel_diff(n * p, x, xr) < 1e-9);
    sv_gpu_solver_destroy(g);
    o.required = 1;
    assert_int_equal(sv_gpu_solver_create_with(NULL, s.model, 0, &o, &d, sv_gpu_backend_emulated, &bad, &g),
                     SV_ERR_INTERNAL);
    assert_non_null(strstr(sv_last_error(), "GPU required"));
    free(x);
    free(xr);
    synth_destroy(&s);
}

/* What the broken build does to one transform: the error term is gone. */
static void test_broken_macro_zeroes_error_terms(void **state)
{
    (void)state;
    double a[64], b[64], y_good = 0, y_bad = 0, exact = 0;
    sv_test_rng r;
    sv_test_rng_seed(&r, 17);
    for (int i = 0; i < 64; i++) {
        a[i] = sv_test_uniform(&r);
        b[i] = sv_test_uniform(&r);
        exact += a[i] * b[i];
    }
    float ah[64], al[64], bh[64], bl[64];
    for (int i = 0; i < 64; i++) {
        ah[i] = (float)a[i];
        al[i] = (float)(a[i] - ah[i]);
        bh[i] = (float)b[i];
        bl[i] = (float)(b[i] - bh[i]);
    }
    /* one row of a 64 × 64 "matrix" whose first column is a: use the CSR kernel */
    int rp[2] = {0, 64}, ci[64];
    for (int i = 0; i < 64; i++) ci[i] = i;
    sv_gpu_emu_kernels_default.df_csr(1, rp, ci, ah, al, bh, bl, &y_good);
    sv_gpu_emu_kernels_broken.df_csr(1, rp, ci, ah, al, bh, bl, &y_bad);
    assert_true(fabs(y_good - exact) < 1e-13);
    assert_true(fabs(y_bad - exact) > 1e-10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transforms_match_cpu_reference),
        cmocka_unit_test(test_packed_offset),
        cmocka_unit_test(test_selftest_catches_broken_build),
        cmocka_unit_test(test_solver_falls_back_from_broken_build),
        cmocka_unit_test(test_broken_macro_zeroes_error_terms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
