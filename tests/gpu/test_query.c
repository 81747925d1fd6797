/* Device discovery and the public solver on whatever machine runs the
 * tests: with no device (a build without CUDA, or CUDA without a driver or
 * a GPU) every query returns a reason instead of crashing, the solver set
 * up without `required` solves on the CPU and says why, and with `required`
 * it refuses. With a device the query describes it. */
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "support_gpu.h"

#include "solvent/gpu.h"

static void test_query(void **state)
{
    (void)state;
    sv_gpu_device_info info;
    sv_status st = sv_gpu_query(0, &info);
    char buf[300];
    sv_gpu_describe(&info, buf, sizeof buf);
    print_message("device: %s\n", buf);
    assert_int_equal(info.built, sv_gpu_built());
    if (st == SV_OK) {
        assert_int_equal(info.available, 1);
        assert_true(info.name[0] != 0);
        assert_true(info.total_bytes >= info.free_bytes && info.free_bytes > 0);
        assert_string_equal(info.reason, "");
        assert_int_equal(sv_gpu_available(NULL, 0), 1);
    } else {
        assert_int_equal(st, SV_ERR_UNSUPPORTED);
        assert_int_equal(info.available, 0);
        assert_true(info.reason[0] != 0);
        if (!sv_gpu_built()) assert_string_equal(info.reason, "not built with CUDA");
        assert_non_null(strstr(sv_last_error(), sv_gpu_built() ? info.reason : "not built with CUDA"));
        assert_int_equal(strncmp(buf, "no CUDA device: ", 16), 0);
        char reason[256];
        assert_int_equal(sv_gpu_available(reason, sizeof reason), 0);
        assert_string_equal(reason, info.reason);
    }
    assert_int_equal(sv_gpu_query(-1, &info), SV_ERR_ARG);
    assert_int_equal(sv_gpu_query(0, NULL), SV_ERR_ARG);
    /* a device index that cannot exist */
    assert_int_equal(sv_gpu_query(4096, &info), SV_ERR_UNSUPPORTED);
    assert_int_equal(info.available, 0);
}

static void test_public_solver(void **state)
{
    (void)state;
    synth s;
    synth_create(&s, 60, 16, 2, 2, 0.02, 8);
    int n = s.n, p = s.p;
    sv_gpu_solver *g = NULL;
    assert_int_equal(sv_gpu_solver_create(NULL, s.model, 2, NULL, &g), SV_OK);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    if (!sv_gpu_available(NULL, 0)) {
        assert_false(sv_gpu_solver_on_device(g));
        assert_int_equal(strncmp(rep.note, "no CUDA device: ", 16), 0);
        sv_gpu_options o;
        sv_gpu_options_default(&o);
        o.required = 1;
        sv_gpu_solver *g2 = NULL;
        assert_int_equal(sv_gpu_solver_create(NULL, s.model, 2, &o, &g2), SV_ERR_UNSUPPORTED);
        assert_null(g2);
        assert_non_null(strstr(sv_last_error(), "GPU required"));
    }
    /* either way the answers are right */
    double complex *x = malloc(sizeof(double complex) * n * p), *xr = malloc(sizeof(double complex) * n * p);
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, s.model, 3e9, x, n, 0, NULL, 0, NULL), SV_OK);
    synth_solve(&s, 3e9, xr);
    assert_true(rel_diff(n * p, x, xr) < 1e-11);
    sv_gpu_solver_destroy(g);
    free(x);
    free(xr);
    synth_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_public_solver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
