/* The runtime path to straight-line kernels: generate the C for an
 * analysis, compile it with the system C compiler into a shared object in a
 * cache directory chosen by the caller, load it with dlopen and install its
 * table. The object is named by the pattern hash and the emitted variants,
 * so a later run (or another analysis of the same pattern) loads it without
 * compiling. The library reads no environment: the caller names the
 * compiler and the directory. Anything that fails leaves the table-driven
 * kernels in place and returns SV_ERR_UNSUPPORTED with the reason. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sparse_internal.h"

extern char **environ;

static sv_status run_compiler(const char *cc, const char *src, const char *obj, const char *log)
{
    char *argv[] = {(char *)cc,  "-O2", "-march=native", "-fPIC", "-shared", "-ffp-contract=off", "-w",
                    "-o",        (char *)obj, (char *)src, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    /* The child inherits the environment (the compiler may need PATH to
     * find its assembler); the library itself does not read it. */
    int rc = posix_spawn(&pid, cc, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cannot start the C compiler '%s': %s", cc, strerror(rc));
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: waitpid failed: %s", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: '%s' failed on %s (exit %d); its messages are in %s", cc,
                        src, WIFEXITED(st) ? WEXITSTATUS(st) : -1, log);
    return SV_OK;
}

/* Generate the C for `lu` into a private source file beside `base`,
 * compile it, and rename the object to obj (atomic, so that two processes
 * filling the same cache never see a half-written object). */
static sv_status build_object(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, const char *cc,
                              const char *base, const char *obj, const char *sym)
{
    if (access(cc, X_OK) != 0)
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: no C compiler at '%s': keeping the table-driven kernels",
                        cc);
    char src[4200], tmp[4200], log[4200];
    long pid = (long)getpid();
    snprintf(src, sizeof src, "%s.%ld.c", base, pid);
    snprintf(tmp, sizeof tmp, "%s.%ld.so", base, pid);
    snprintf(log, sizeof log, "%s.%ld.log", base, pid);
    FILE *f = fopen(src, "w");
    if (!f) return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cannot write '%s': %s", src, strerror(errno));
    sv_status s = sv_sparse_codegen_write(lu, opt, sym, f);
    if (fclose(f) != 0 && !s) s = sv_error(SV_ERR_IO, "runtime codegen: writing '%s' failed", src);
    if (!s) s = run_compiler(cc, src, tmp, log);
    remove(src);
    if (s) {
        remove(tmp);
        /* Every failure here means "no straight-line kernels": one status. */
        return s == SV_ERR_UNSUPPORTED ? s : sv_error(SV_ERR_UNSUPPORTED, "%s", sv_last_error());
    }
    remove(log);
    if (rename(tmp, obj) != 0) {
        remove(tmp);
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cannot rename to '%s': %s", obj, strerror(errno));
    }
    return SV_OK;
}

/* dlopen obj and install its table sym; the handle replaces any earlier one. */
static sv_status load_object(sv_sparse_lu *lu, const char *obj, const char *sym)
{
    void *h = dlopen(obj, RTLD_NOW | RTLD_LOCAL);
    if (!h) return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cannot load '%s': %s", obj, dlerror());
    const sv_sparse_kernels *k = dlsym(h, sym);
    if (!k) {
        dlclose(h);
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: '%s' has no symbol %s", obj, sym);
    }
    sv_status s = sv_sparse_lu_use_kernels(lu, k);
    if (s) {
        dlclose(h);
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cached '%s' does not match: %s", obj, sv_last_error());
    }
    if (lu->dl_handle) dlclose(lu->dl_handle);
    lu->dl_handle = h;
    return SV_OK;
}

sv_status sv_sparse_lu_compile(sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, const char *cache_dir,
                               const char *cc)
{
    if (!lu || !cache_dir) return sv_error(SV_ERR_ARG, "sv_sparse_lu_compile: lu or cache_dir is NULL");
    sv_sparse_codegen_options o = sv_sparse_codegen_resolve(opt);
    if (!cc) cc = "/usr/bin/cc";
    sv_status s = sv_sparse_codegen_check(lu, &o);
    if (s) return s;
    if (cc[0] != '/') return sv_error(SV_ERR_ARG, "sv_sparse_lu_compile: cc = '%s': expected an absolute path", cc);
    struct stat sb;
    if (stat(cache_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return sv_error(SV_ERR_UNSUPPORTED, "runtime codegen: cache_dir '%s' is not a directory", cache_dir);
    /* Cache names: pattern hash, emitted variants, generator version. */
    char base[4096], obj[4200], sym[64];
    int len = snprintf(base, sizeof base, "%s/sv_sparse_%016" PRIx64 "_%02x_g%d", cache_dir, lu->hash,
                       o.emit & 0xffu, SV_SPARSE_CODEGEN_VERSION);
    if (len < 0 || (size_t)len >= sizeof base)
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_compile: cache_dir path too long");
    snprintf(sym, sizeof sym, "sv_sparse_kernels_%016" PRIx64, lu->hash);
    snprintf(obj, sizeof obj, "%s.so", base);
    if (access(obj, R_OK) != 0 && (s = build_object(lu, &o, cc, base, obj, sym)) != SV_OK) return s;
    return load_object(lu, obj, sym);
}
