/* Finding and loading the CUDA back end module (libsolvent-cuda.so) on
 * first use, so that a program that never asks for a GPU, or runs where
 * there is none, never maps the CUDA libraries (about 150 MiB of resident
 * memory and 30 ms of start-up when they were linked directly).
 *
 * The order, and the reason given when a step fails:
 *   1. Solvent built without CUDA: "not built with CUDA";
 *   2. no CUDA driver (dlopen of libcuda.so.1 fails): "no CUDA driver
 *      (libcuda.so.1 not found)"; the module and cuBLAS are not loaded;
 *   3. the module, from the first of these directories that has it:
 *      (a) the directory of the object holding this code (dladdr: the
 *          shared library's directory, or the executable's for a static
 *          link), (b) the library directory beside it (a/../lib, for a
 *          tool installed with --prefix), (c) the installed library
 *          directory (CMAKE_INSTALL_FULL_LIBDIR at configure time);
 *      none has it: "... not found in a, b, c"; one that cannot be loaded,
 *      has no entry point or another ABI number: that, with its path.
 * The result of the first call is kept for the life of the process (a
 * module is never unloaded: the CUDA runtime does not support it well).
 * Nothing here reads the environment or prints. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_internal.h"

#ifndef SV_GPU_MODULE_FILE
#define SV_GPU_MODULE_FILE "libsolvent-cuda.so"
#endif
#ifndef SV_GPU_REL_LIBDIR
#define SV_GPU_REL_LIBDIR "lib"
#endif

const char *sv_gpu_module_file(void)
{
    return SV_GPU_MODULE_FILE;
}

int sv_gpu_driver_present(char *reason, size_t len)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        if (reason && len) snprintf(reason, len, "no CUDA driver (libcuda.so.1 not found)");
        return 0;
    }
    /* the runtime loads it again when the module starts: kept loaded */
    if (reason && len) reason[0] = 0;
    return 1;
}

const sv_gpu_cuda_module *sv_gpu_module_open(const char *path, char *reason, size_t len)
{
    char dummy[8];
    if (!reason || !len) {
        reason = dummy;
        len = sizeof dummy;
    }
    reason[0] = 0;
    if (!path || !path[0]) {
        snprintf(reason, len, "no module path");
        return NULL;
    }
    if (access(path, F_OK) != 0) {
        snprintf(reason, len, "%s not found", path);
        return NULL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(reason, len, "%s could not be loaded: %s", path, e ? e : "unknown error");
        return NULL;
    }
    sv_gpu_cuda_module_fn entry;
    void *sym = dlsym(h, SV_GPU_CUDA_MODULE_ENTRY);
    /* POSIX: a function's address comes back as void *; copy it over */
    memcpy(&entry, &sym, sizeof entry);
    const sv_gpu_cuda_module *m = sym ? entry() : NULL;
    if (!m) {
        snprintf(reason, len, "%s is not a Solvent CUDA module (no %s)", path, SV_GPU_CUDA_MODULE_ENTRY);
    } else if (m->abi != SV_GPU_CUDA_MODULE_ABI || m->size != sizeof(sv_gpu_cuda_module)) {
        snprintf(reason, len, "%s has module ABI %d (%zu bytes), this library needs %d (%zu bytes): "
                 "a module from another Solvent build", path, m->abi, m->size, SV_GPU_CUDA_MODULE_ABI,
                 sizeof(sv_gpu_cuda_module));
        m = NULL;
    }
    if (!m) dlclose(h);
    return m;
}

const sv_gpu_cuda_module *sv_gpu_module_find(const char *const *dirs, int ndirs, char *reason, size_t len)
{
    char dummy[8], path[PATH_MAX + 64], why[512], first[512] = "";
    if (!reason || !len) {
        reason = dummy;
        len = sizeof dummy;
    }
    for (int i = 0; i < ndirs; i++) {
        if (!dirs[i] || !dirs[i][0]) continue;
        snprintf(path, sizeof path, "%s/%s", dirs[i], SV_GPU_MODULE_FILE);
        if (access(path, F_OK) != 0) continue;
        const sv_gpu_cuda_module *m = sv_gpu_module_open(path, why, sizeof why);
        if (m) {
            reason[0] = 0;
            return m;
        }
        if (!first[0]) snprintf(first, sizeof first, "%s", why);
    }
    if (first[0]) {
        snprintf(reason, len, "%s", first);
        return NULL;
    }
    int k = snprintf(reason, len, "CUDA back end module %s not found in ", SV_GPU_MODULE_FILE);
    for (int i = 0, listed = 0; i < ndirs && k >= 0 && (size_t)k < len; i++) {
        if (!dirs[i] || !dirs[i][0]) continue;
        k += snprintf(reason + k, len - (size_t)k, "%s%s", listed++ ? ", " : "", dirs[i]);
    }
    return NULL;
}

/* The directory of the object (shared library or executable) holding this
 * function; 0 if it cannot be told. */
static int own_dir(char *dir, size_t len)
{
    Dl_info info;
    struct link_map *lm = NULL;
    void *self;
    const sv_gpu_cuda_module *(*fn)(const char *const *, int, char *, size_t) = sv_gpu_module_find;
    memcpy(&self, &fn, sizeof self);
    if (!dladdr1(self, &info, (void **)&lm, RTLD_DL_LINKMAP) || !info.dli_fname) return 0;
    char path[PATH_MAX];
    if (!lm || !lm->l_name || !lm->l_name[0]) {
        /* the main program (a static link): dladdr gives argv[0], which may
         * be a bare name found through PATH; the kernel knows the file */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) return 0;
        path[n] = 0;
    } else {
        snprintf(path, sizeof path, "%s", info.dli_fname);
    }
    char *slash = strrchr(path, '/');
    if (!slash) return 0;
    if (slash == path) slash++; /* "/" */
    *slash = 0;
    snprintf(dir, len, "%s", path);
    return 1;
}

int sv_gpu_module_dirs(char dirs[][SV_GPU_PATH_MAX], int max)
{
    int n = 0;
    char own[SV_GPU_PATH_MAX];
    if (max >= 2 && own_dir(own, sizeof own)) {
        snprintf(dirs[n++], SV_GPU_PATH_MAX, "%s", own);
        int k = snprintf(dirs[n], SV_GPU_PATH_MAX, "%s/../%s", own, SV_GPU_REL_LIBDIR);
        if (k > 0 && k < SV_GPU_PATH_MAX) {
            char real[PATH_MAX];
            /* only when it exists, and named as the file system names it */
            if (realpath(dirs[n], real) && strcmp(real, own) != 0) snprintf(dirs[n++], SV_GPU_PATH_MAX, "%s", real);
        }
    }
#ifdef SV_GPU_INSTALL_LIBDIR
    if (n < max) {
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= !strcmp(dirs[i], SV_GPU_INSTALL_LIBDIR);
        if (!dup) snprintf(dirs[n++], SV_GPU_PATH_MAX, "%s", SV_GPU_INSTALL_LIBDIR);
    }
#endif
    return n;
}

/* ---- the process-wide module ----------------------------------------------------- */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static const sv_gpu_cuda_module *default_module;
static char default_reason[256];

static void load_default(void)
{
    if (!sv_gpu_built()) {
        snprintf(default_reason, sizeof default_reason, "not built with CUDA");
        return;
    }
    if (!sv_gpu_driver_present(default_reason, sizeof default_reason)) return;
    char dirs[3][SV_GPU_PATH_MAX];
    const char *d[3];
    int n = sv_gpu_module_dirs(dirs, 3);
    for (int i = 0; i < n; i++) d[i] = dirs[i];
    default_module = sv_gpu_module_find(d, n, default_reason, sizeof default_reason);
}

const sv_gpu_cuda_module *sv_gpu_module_default(char *reason, size_t len)
{
    pthread_once(&default_once, load_default);
    if (reason && len) snprintf(reason, len, "%s", default_module ? "" : default_reason);
    return default_module;
}
