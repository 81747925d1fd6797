/* `solvent`: the launcher. It prepares the environment that the OpenMP
 * runtime and OpenBLAS read when they load, then runs the tool itself,
 * `solvent-run`, installed beside it. It links neither: their settings are
 * read by constructors that run before any main().
 *
 * - Waiting: OpenMP threads that wait at a barrier spin for a while before
 *   they sleep; on a machine shared with other busy processes a spinning
 *   thread holds a core the thread it waits for needs (docs/threads.md).
 *   Unless the user chose a policy, the tool waits passively.
 * - Address space: OpenBLAS 0.3.21 maps a 128 MiB buffer per thread when it
 *   loads, and one per concurrent call later, and when a mapping fails it
 *   retries forever at 100 % CPU. Under an address-space limit (ulimit -v)
 *   the launcher runs on as many threads as leave room for those buffers,
 *   or stops with a message when not even one fits (docs/threads.md). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB ((unsigned long long)1 << 20)
/* OpenBLAS's buffer (BUFFER_SIZE plus a page, x86_64 and arm64 builds). */
#define BLAS_BUFFER (128 * MIB + 4096)
/* The tool, its libraries and OpenBLAS's static reservations before any
 * buffer (measured: 52 MiB). */
#define BASE (64 * MIB)
/* Room for the work itself that a further thread may not take: a thread
 * costs more address space (its buffer and stack) than most runs' data. */
#define WORK (256 * MIB)

static void prefer_passive_waiting(void)
{
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) setenv("OMP_WAIT_POLICY", "passive", 1);
}

/* The threads OpenMP (and OpenBLAS with it) would start: OMP_NUM_THREADS's
 * first value, else the processors this process may run on. */
static int requested_threads(int *cpus)
{
    cpu_set_t set;
    *cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    if (*cpus < 1) *cpus = 1;
    const char *e = getenv("OMP_NUM_THREADS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (end != e && v >= 1 && v <= INT_MAX) return (int)v;
    }
    return *cpus;
}

static unsigned long long stack_bytes(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) return r.rlim_cur;
    return 8 * MIB;
}

/* Address space a run on t threads needs before its data: OpenBLAS's
 * buffers at load (one per thread, at most one per processor), one more for
 * the calls Solvent makes, the threads' stacks, and what the tool allocates
 * outside its budget (the tool checks the same when it starts). */
static unsigned long long need(int t, int cpus)
{
    int at_load = t < cpus ? t : cpus;
    return BASE + (unsigned long long)(at_load + 1) * BLAS_BUFFER + (unsigned long long)t * stack_bytes() + 32 * MIB;
}

/* Returns 0 to go on, or 1 after a message: not even OpenBLAS fits. */
static int fit_address_space(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
    unsigned long long limit = r.rlim_cur;
    int cpus, want = requested_threads(&cpus), t = want;
    while (t > 1 && need(t, cpus) + WORK > limit) t--;
    /* At load OpenBLAS needs BASE and one buffer per thread; a run needs
     * more, which the tool checks for itself when it starts (--version and
     * --help run in less). */
    if (BASE + BLAS_BUFFER > limit) {
        fprintf(stderr,
                "solvent: the address-space limit (ulimit -v) of %llu MiB is too small: OpenBLAS alone needs "
                "about %llu MiB to load, and a run at least %llu MiB; raise the limit (e.g. ulimit -v %llu)\n",
                limit / MIB, (BASE + BLAS_BUFFER) / MIB + 1, need(1, cpus) / MIB + 1,
                (need(1, cpus) + WORK) / MIB * 1024);
        return 1;
    }
    if (t < want) {
        char v[16];
        snprintf(v, sizeof v, "%d", t);
        setenv("OMP_NUM_THREADS", v, 1);
        fprintf(stderr,
                "solvent: note: the address-space limit (ulimit -v) of %llu MiB leaves room for %d thread%s "
                "(OpenBLAS maps 128 MiB per thread): running on %d\n",
                limit / MIB, t, t == 1 ? "" : "s", t);
    }
    return 0;
}

/* The tool beside this program: <directory of /proc/self/exe>/solvent-run. */
static int tool_path(char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = '\0';
    return snprintf(path, len, "%s/solvent-run", self) < (int)len ? 0 : -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    char path[PATH_MAX];
    if (tool_path(path, sizeof path) != 0) {
        fprintf(stderr, "solvent: cannot find where this program is installed (/proc/self/exe)\n");
        return 1;
    }
    prefer_passive_waiting();
    if (fit_address_space()) return 1;
    execv(path, argv);
    fprintf(stderr, "solvent: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}
