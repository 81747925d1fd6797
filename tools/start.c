/* The tool's start under an address-space limit (ulimit -v).
 *
 * OpenBLAS 0.3.21 takes a 128 MiB buffer from its own table for every BLAS
 * or LAPACK call that needs one, maps a new one when every buffer it has is
 * in use, and when that mapping fails it retries forever at 100 % CPU. So
 * under a limit the tool has OpenBLAS map, at the start, a buffer for each
 * thread that may call it at once (OpenBLAS keeps them, free, for later
 * calls), and gives the rest of the room to the contexts as their memory
 * budget: an operation that would not fit then fails with a budget error
 * instead of leaving OpenBLAS without room. The launcher (launcher/) chose
 * the thread count so that this fits. */
#define _GNU_SOURCE /* mallopt */
#include "start.h"

#include <malloc.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "solvent/core.h"

/* OpenBLAS's own buffer table (exported by libopenblas; not in its headers). */
void *blas_memory_alloc(int procpos);
void blas_memory_free(void *buffer);
int openblas_get_num_threads(void);

#define MIB ((size_t)1 << 20)
#define BLAS_BUFFER (128 * MIB + 4096)
/* What the tool itself allocates outside the budget (messages, S, files). */
#define SLACK (32 * MIB)

static size_t budget; /* 0: no address-space limit */

static size_t address_space_used(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t stack_bytes(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) return r.rlim_cur;
    return 8 * MIB;
}

/* One buffer per thread that may call OpenBLAS at once, mapped now. Inside
 * a section OpenBLAS runs on one thread and the buffers of its other
 * threads are free, so threads − (OpenBLAS's threads − 1) are new. */
static void map_blas_buffers(int threads)
{
    void *held[512];
    if (threads > (int)(sizeof held / sizeof held[0])) threads = (int)(sizeof held / sizeof held[0]);
    sv_threads_saved s = sv_threads_serial_begin();
    for (int k = 0; k < threads; k++) held[k] = blas_memory_alloc(0);
    for (int k = 0; k < threads; k++) blas_memory_free(held[k]);
    sv_threads_restore(s);
}

int tool_start(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
    size_t limit = r.rlim_cur;
    /* one malloc arena: each further one reserves 64 MiB of address space */
    mallopt(M_ARENA_MAX, 1);
    int threads = omp_get_max_threads(), at_load = openblas_get_num_threads();
    size_t fresh = threads > at_load - 1 ? (size_t)(threads - (at_load - 1)) : 0;
    size_t need = fresh * BLAS_BUFFER + (size_t)threads * stack_bytes() + SLACK, used = address_space_used();
    if (used > limit || need > limit - used) {
        fprintf(stderr,
                "solvent: the address-space limit (ulimit -v) of %zu MiB leaves %zu MiB, and OpenBLAS's buffers "
                "for %d thread%s need %zu MiB more; raise the limit to at least %zu MiB\n",
                limit / MIB, used > limit ? 0 : (limit - used) / MIB, threads, threads == 1 ? "" : "s", need / MIB,
                (used + need) / MIB + 1);
        return 1;
    }
    map_blas_buffers(threads);
    used = address_space_used();
    size_t reserve = (size_t)threads * stack_bytes() + SLACK;
    budget = used + reserve < limit ? limit - used - reserve : 1;
    return 0;
}

size_t tool_memory_budget(void) { return budget; }

size_t tool_memory_limit(size_t requested)
{
    if (!budget) return requested;
    return requested && requested < budget ? requested : budget;
}
