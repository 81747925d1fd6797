/* The CUDA back end module's loader (src/gpu/loader.c): the reason it gives
 * at each step, and that a process without a CUDA driver never maps the
 * module or the CUDA libraries (what the module's separation is for: a CPU
 * run must not pay for them). The module stand-ins are tests/gpu/
 * fake_module.c, built as libsolvent-cuda.so in three directories
 * (FAKE_OK_DIR, FAKE_ABI_DIR, FAKE_NOENTRY_DIR). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_gpu.h"
#include "sv_test.h"

#include "gpu/gpu_internal.h"

/* First test of the program: nothing has loaded a module yet. */
static void test_default_reason(void **state)
{
    (void)state;
    assert_false(mapped_in_process("libsolvent-cuda"));
    sv_gpu_device_info info;
    sv_status st = sv_gpu_query(0, &info);
    print_message("sv_gpu_query: %s\n", st ? info.reason : "a device");
    if (!sv_gpu_built()) {
        assert_int_equal(st, SV_ERR_UNSUPPORTED);
        assert_string_equal(info.reason, "not built with CUDA");
        assert_false(mapped_in_process("libsolvent-cuda"));
        assert_false(mapped_in_process("cublas"));
        return;
    }
    /* whether this machine has a driver, asked here independently of the
     * loader (after the query: loading it maps no CUDA library we look for) */
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!drv) {
        assert_int_equal(st, SV_ERR_UNSUPPORTED);
        assert_string_equal(info.reason, "no CUDA driver (libcuda.so.1 not found)");
        assert_int_equal(info.built, 1);
        assert_int_equal(info.available, 0);
        assert_non_null(strstr(sv_last_error(), "no CUDA driver (libcuda.so.1 not found)"));
        /* the module and cuBLAS were not loaded */
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", SV_TEST_MODULE_DIR, sv_gpu_module_file());
        assert_null(dlopen(path, RTLD_LAZY | RTLD_NOLOAD));
        assert_false(mapped_in_process("libsolvent-cuda"));
        assert_false(mapped_in_process("cublas"));
        assert_false(mapped_in_process("libcudart"));
        /* the same reason from every entry point, on every call */
        char reason[256];
        assert_int_equal(sv_gpu_available(reason, sizeof reason), 0);
        assert_string_equal(reason, "no CUDA driver (libcuda.so.1 not found)");
        sv_gpu_backend *b = NULL;
        assert_int_equal(sv_gpu_backend_device(NULL, NULL, 0, &b), SV_ERR_UNSUPPORTED);
        assert_null(b);
        assert_non_null(strstr(sv_last_error(), "no CUDA driver (libcuda.so.1 not found)"));
        assert_false(mapped_in_process("cublas"));
    } else {
        /* a driver: the module beside this program was loaded (with or
         * without a usable device, which test_query checks) */
        assert_true(mapped_in_process("libsolvent-cuda"));
    }
    sv_clear_error();
}

static void test_driver_check(void **state)
{
    (void)state;
    char reason[128] = "x";
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    assert_int_equal(sv_gpu_driver_present(reason, sizeof reason), drv != NULL);
    assert_string_equal(reason, drv ? "" : "no CUDA driver (libcuda.so.1 not found)");
}

static void test_missing_path(void **state)
{
    (void)state;
    char reason[512];
    const char *p = "/nonexistent-solvent-dir/libsolvent-cuda.so";
    assert_null(sv_gpu_module_open(p, reason, sizeof reason));
    assert_string_equal(reason, "/nonexistent-solvent-dir/libsolvent-cuda.so not found");
    assert_null(sv_gpu_module_open("", reason, sizeof reason));
    assert_null(sv_gpu_module_open(NULL, NULL, 0));
    /* a file that is not a shared object */
    char self[512];
    snprintf(self, sizeof self, "%s/tests/gpu/test_loader.c", SV_SOURCE_DIR);
    assert_null(sv_gpu_module_open(self, reason, sizeof reason));
    assert_non_null(strstr(reason, "could not be loaded: "));
    assert_int_equal(strncmp(reason, self, strlen(self)), 0);

    /* searching directories that do not hold it names them all */
    const char *dirs[] = {"/nonexistent-a", "/nonexistent-b"};
    assert_null(sv_gpu_module_find(dirs, 2, reason, sizeof reason));
    char want[256];
    snprintf(want, sizeof want, "CUDA back end module %s not found in /nonexistent-a, /nonexistent-b",
             sv_gpu_module_file());
    assert_string_equal(reason, want);
}

static void test_wrong_modules(void **state)
{
    (void)state;
    char reason[512], path[512];
    snprintf(path, sizeof path, "%s/%s", FAKE_ABI_DIR, sv_gpu_module_file());
    assert_null(sv_gpu_module_open(path, reason, sizeof reason));
    char want[768];
    snprintf(want, sizeof want, "%s has module ABI %d (%zu bytes), this library needs %d (%zu bytes): "
             "a module from another Solvent build", path, SV_GPU_CUDA_MODULE_ABI + 1, sizeof(sv_gpu_cuda_module),
             SV_GPU_CUDA_MODULE_ABI, sizeof(sv_gpu_cuda_module));
    assert_string_equal(reason, want);

    snprintf(path, sizeof path, "%s/%s", FAKE_NOENTRY_DIR, sv_gpu_module_file());
    assert_null(sv_gpu_module_open(path, reason, sizeof reason));
    snprintf(want, sizeof want, "%s is not a Solvent CUDA module (no sv_gpu_cuda_module_v1)", path);
    assert_string_equal(reason, want);

    /* a search stops at a wrong one only when nothing later loads */
    const char *only_bad[] = {"/nonexistent-a", FAKE_NOENTRY_DIR};
    assert_null(sv_gpu_module_find(only_bad, 2, reason, sizeof reason));
    assert_string_equal(reason, want);
    const char *bad_then_ok[] = {FAKE_ABI_DIR, "/nonexistent-a", FAKE_OK_DIR};
    const sv_gpu_cuda_module *m = sv_gpu_module_find(bad_then_ok, 3, reason, sizeof reason);
    assert_non_null(m);
    assert_string_equal(reason, "");
    assert_string_equal(m->variant, "fake");
}

static void test_fake_module_used(void **state)
{
    (void)state;
    char reason[512], path[512];
    snprintf(path, sizeof path, "%s/%s", FAKE_OK_DIR, sv_gpu_module_file());
    const sv_gpu_cuda_module *m = sv_gpu_module_open(path, reason, sizeof reason);
    assert_non_null(m);
    assert_int_equal(m->abi, SV_GPU_CUDA_MODULE_ABI);
    /* the query goes through the table */
    sv_gpu_device_info info;
    memset(&info, 0, sizeof info);
    assert_int_equal(sv_gpu_module_query(m, 0, &info), SV_OK);
    assert_int_equal(info.available, 1);
    assert_string_equal(info.name, "Fake device");
    assert_int_equal(info.cc_major, 9);
    assert_true(info.total_bytes == (size_t)3 << 30 && info.free_bytes == (size_t)2 << 30);
    assert_int_equal(sv_gpu_module_query(m, 1, &info), SV_ERR_UNSUPPORTED);
    assert_int_equal(info.available, 0);
    assert_string_equal(info.reason, "fake module: device 1 requested, 1 present");
    /* and the backend: the module's refusal becomes a Solvent error */
    sv_gpu_backend *b = NULL;
    assert_int_equal(sv_gpu_backend_device((void *)m, NULL, 0, &b), SV_ERR_INTERNAL);
    assert_null(b);
    assert_string_equal(sv_last_error(), "starting the CUDA back end: fake module: cannot start device 0");
    sv_clear_error();
}

static void test_default_dirs(void **state)
{
    (void)state;
    char dirs[3][SV_GPU_PATH_MAX];
    int n = sv_gpu_module_dirs(dirs, 3);
    for (int i = 0; i < n; i++) print_message("module directory %d: %s\n", i, dirs[i]);
    assert_true(n >= 1);
    /* (a): this program is linked statically: its own directory */
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(k > 0);
    exe[k] = 0;
    *strrchr(exe, '/') = 0;
    assert_string_equal(dirs[0], exe);
    if (sv_gpu_built()) assert_string_equal(dirs[n - 1], SV_TEST_INSTALL_LIBDIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_reason), /* first: before any module is loaded */
        cmocka_unit_test(test_driver_check),
        cmocka_unit_test(test_missing_path),
        cmocka_unit_test(test_wrong_modules),
        cmocka_unit_test(test_fake_module_used),
        cmocka_unit_test(test_default_dirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
