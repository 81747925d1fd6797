/* Thread counts for OpenMP and OpenBLAS: the one place in Solvent that
 * changes them.
 *
 * Solvent links the OpenMP build of OpenBLAS (docs/threads.md). A BLAS call
 * made outside a parallel region runs on as many threads as the calling
 * thread's OpenMP count, and when that differs from OpenBLAS's process-wide
 * count the call resets the process-wide count first, freeing the buffers of
 * threads another call may be using at that moment. Two operations in two
 * threads that let OpenBLAS thread would change each other's results, and
 * could crash.
 *
 * So inside Solvent every BLAS call runs on its calling thread, and the
 * parallel work is Solvent's own OpenMP teams (whose BLAS calls, made inside
 * their parallel regions, run on one thread each). Every operation that
 * reaches BLAS runs inside a section:
 * - the first section to open, in any thread, saves OpenBLAS's count and
 *   sets 1; the last to close puts it back (under a lock), so while any is
 *   open no BLAS call changes it;
 * - within a section the calling thread's OpenMP count is 1 (its BLAS calls
 *   run on it alone) and the team size of Solvent's own parallel regions is
 *   the section's (sv_threads_team), kept per thread;
 * - each section restores its thread's OpenMP count and team size. */
#include <omp.h>
#include <pthread.h>

#include "ctx_internal.h"

/* OpenBLAS's own API, declared here to avoid depending on its headers. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int open_sections; /* all threads */
static int blas_before;   /* OpenBLAS's count when the first one opened */

/* The calling thread's team size inside a section; 0 outside any. */
static _Thread_local int team_size;

static void section_open(void)
{
    pthread_mutex_lock(&blas_lock);
    if (open_sections++ == 0) {
        blas_before = openblas_get_num_threads();
        if (blas_before != 1) openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_lock);
}

static void section_close(void)
{
    pthread_mutex_lock(&blas_lock);
    if (--open_sections == 0 && blas_before != 1) openblas_set_num_threads(blas_before);
    pthread_mutex_unlock(&blas_lock);
}

int sv_threads_team(void) { return team_size > 0 ? team_size : omp_get_max_threads(); }

/* team: the section's team size, 0 = the caller's (the enclosing section's,
 * or its OpenMP count outside any). */
static sv_threads_saved section_begin(int team)
{
    sv_threads_saved saved = {.omp = omp_get_max_threads(), .team = team_size, .section = 1};
    int inherited = sv_threads_team();
    section_open(); /* may set this thread's OpenMP count (OpenBLAS does) */
    team_size = team > 0 ? team : inherited;
    omp_set_num_threads(1);
    return saved;
}

sv_threads_saved sv_threads_apply(const sv_ctx *ctx)
{
    return section_begin(ctx && ctx->nthreads > 0 ? ctx->nthreads : 0);
}

sv_threads_saved sv_threads_serial_begin(void) { return section_begin(1); }

void sv_threads_restore(sv_threads_saved saved)
{
    if (!saved.section) return;
    section_close();
    team_size = saved.team;
    omp_set_num_threads(saved.omp);
}
