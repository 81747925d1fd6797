/* The real CUDA back end module (built only with CUDA), loaded by its path
 * whether or not the machine has a driver: it loads with every symbol
 * resolved (RTLD_NOW), has this library's ABI, exports nothing but its
 * entry point, brings the CUDA libraries with it (the positive control for
 * test_loader.c, which checks that they are absent without a driver), and
 * its query answers: a device, or the runtime's reason. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "support_gpu.h"
#include "sv_test.h"

#include "gpu/gpu_internal.h"

static void test_real_module(void **state)
{
    (void)state;
    assert_false(mapped_in_process("cublas"));
    char reason[512];
    const sv_gpu_cuda_module *m = sv_gpu_module_open(SV_TEST_CUDA_MODULE, reason, sizeof reason);
    if (!m) print_message("%s\n", reason);
    assert_non_null(m);
    assert_int_equal(m->abi, SV_GPU_CUDA_MODULE_ABI);
    assert_string_equal(m->variant, "cuda");
    assert_true(mapped_in_process("libcublas"));
    assert_true(mapped_in_process("libcudart"));
    /* one exported function: the entry point; the rest is hidden */
    void *h = dlopen(SV_TEST_CUDA_MODULE, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    assert_non_null(dlsym(h, SV_GPU_CUDA_MODULE_ENTRY));
    assert_null(dlsym(h, "sv_gpu_cuda_create"));
    assert_null(dlsym(h, "sv_gpu_cuda_query_c"));
    assert_null(dlsym(h, "sv_gpu_cuda_df_products_default"));
    dlclose(h);

    sv_gpu_device_info info;
    memset(&info, 0, sizeof info);
    sv_status st = sv_gpu_module_query(m, 0, &info);
    print_message("query through the module: %s\n", st ? info.reason : info.name);
    if (st == SV_OK) {
        assert_int_equal(info.available, 1);
        assert_true(info.name[0] != 0);
    } else {
        assert_int_equal(st, SV_ERR_UNSUPPORTED);
        assert_int_equal(info.available, 0);
        assert_true(info.reason[0] != 0);
        /* no driver (asked independently): the runtime's own words, with its error name */
        if (!dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) assert_non_null(strstr(info.reason, "cudaError"));
        sv_clear_error();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
