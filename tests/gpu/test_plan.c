/* Planning: device memory of a sweep's exact solves, the decision (device,
 * CPU fallback, refusal) and the residual path, against sizes worked out by
 * hand from the layout (docs/gpu.md, "Memory"). */
#include <string.h>

#include "sv_test.h"
#include "gpu/gpu_internal.h"

static sv_gpu_plan_input base(void)
{
    sv_gpu_plan_input in = {.n = 1000, .nb = 128, .npacked = 2, .ncsr = 1, .csr_nnz = 2998, .nrhs = 2, .nderiv = 2,
                            .device_free = (size_t)1 << 40, .fp32_per_fp64 = 2};
    return in;
}

/* n = 1000, nb = 128: seven block columns of 128 and one of 104, so the
 * packed layout holds 128·(7·1000 − 128·(0+1+…+6)) + 104·104 = 562 752
 * elements (n(n+1)/2 = 500 500 plus the diagonal blocks' upper parts). */
static void test_sizes_by_hand(void **state)
{
    (void)state;
    assert_int_equal(sv_dense_packed_size(1000, 128), 562752);
    sv_gpu_plan_input in = base();
    sv_gpu_plan p;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.terms_bytes, 8 * 562752 * 2 + 12 * 2998 + 4 * 1001);
    assert_int_equal(p.z_bytes, 8 * 562752);
    /* 6 complex columns: 12 real in double, 12 per term × 3 terms, 6 complex single */
    assert_int_equal(p.vector_bytes, 8 * 1000 * 12 + 8 * 1000 * 12 * 3 + 8 * 1000 * 6);
    assert_int_equal(p.workspace_bytes, 8 * 1000 * 128 + 4096 + ((size_t)256 << 20));
    size_t sum = p.terms_bytes + p.z_bytes + p.vector_bytes + p.workspace_bytes;
    assert_int_equal(p.total_bytes, sum + sum / 20);
    assert_int_equal(p.decision, SV_GPU_USE);
    assert_non_null(strstr(p.message, "needs"));
}

/* The issue's cases on an H200 (about 139 GiB free): all fit, and the terms
 * of the 30 000-unknown square take 2·8·E ≈ 7.2 GB. A 200 000-unknown model
 * (E ≈ 2·10¹⁰, 320 GB of terms) does not. */
static void test_issue_cases_on_h200(void **state)
{
    (void)state;
    size_t h200 = (size_t)139 << 30;
    int ns[] = {2042, 11402, 30000};
    for (int i = 0; i < 3; i++) {
        sv_gpu_plan_input in = base();
        in.n = ns[i];
        in.nb = ns[i] <= 3000 ? 128 : 192;
        in.device_free = h200;
        sv_gpu_plan p;
        assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
        assert_int_equal(p.decision, SV_GPU_USE);
        assert_true(p.total_bytes < h200);
    }
    sv_gpu_plan_input in = base();
    in.n = 30000;
    in.nb = 192;
    sv_gpu_plan p;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_true(p.terms_bytes > (size_t)7.2e9 && p.terms_bytes < (size_t)7.3e9);
    in.n = 200000;
    in.device_free = h200;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.decision, SV_GPU_FALLBACK);
    assert_non_null(strstr(p.message, "200000 unknowns"));
    assert_non_null(strstr(p.message, "solving on the CPU"));
    in.required = 1;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.decision, SV_GPU_REFUSE);
    assert_null(strstr(p.message, "solving on the CPU"));
}

/* The boundary: exactly the total fits, one byte less does not. */
static void test_boundary(void **state)
{
    (void)state;
    sv_gpu_plan_input in = base();
    sv_gpu_plan p;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    in.device_free = p.total_bytes;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.decision, SV_GPU_USE);
    in.device_free = p.total_bytes - 1;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.decision, SV_GPU_FALLBACK);
}

/* Native double where FP64 runs at ≥ 1/4 of FP32 (H200: 1/2), double-float
 * where it is slow (consumer parts: 1/64), or what was asked for. */
static void test_residual_choice(void **state)
{
    (void)state;
    sv_gpu_plan_input in = base();
    sv_gpu_plan p;
    int ratio[] = {0, 2, 4, 32, 64};
    sv_gpu_residual want[] = {SV_GPU_RESIDUAL_DOUBLE, SV_GPU_RESIDUAL_DOUBLE, SV_GPU_RESIDUAL_DOUBLE,
                              SV_GPU_RESIDUAL_DF, SV_GPU_RESIDUAL_DF};
    for (int i = 0; i < 5; i++) {
        in.fp32_per_fp64 = ratio[i];
        assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
        assert_int_equal(p.residual, want[i]);
    }
    in.residual = SV_GPU_RESIDUAL_DOUBLE;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.residual, SV_GPU_RESIDUAL_DOUBLE);
    in.fp32_per_fp64 = 2;
    in.residual = SV_GPU_RESIDUAL_DF;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_OK);
    assert_int_equal(p.residual, SV_GPU_RESIDUAL_DF);
}

static void test_bad_input(void **state)
{
    (void)state;
    sv_gpu_plan p;
    sv_gpu_plan_input in = base();
    in.n = 0;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "n = 0"));
    in = base();
    in.nderiv = SV_GPU_MAX_DERIV + 1;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "nderiv = 4"));
    in = base();
    in.npacked = in.ncsr = 0;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    in = base();
    in.nrhs = 0;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    in = base();
    in.residual = (sv_gpu_residual)7;
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    in = base();
    in.n = 2000000000; /* 8·E overflows size_t? no: E ≈ 2·10¹⁸ — 8·E does */
    assert_int_equal(sv_gpu_plan_make(&in, &p), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "overflow"));
    assert_int_equal(sv_gpu_plan_make(NULL, &p), SV_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_by_hand),   cmocka_unit_test(test_issue_cases_on_h200),
        cmocka_unit_test(test_boundary),        cmocka_unit_test(test_residual_choice),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
