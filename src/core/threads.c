/* Thread counts for OpenMP and OpenBLAS: the one place in Solvent that
 * changes them.
 *
 * Solvent links the OpenMP build of OpenBLAS: its BLAS calls share the
 * OpenMP runtime with Solvent's own parallel loops, a BLAS call made inside
 * one of our parallel regions runs on that thread alone, and one setting
 * (OMP_NUM_THREADS, or the context's thread count) governs both, so the two
 * never oversubscribe the cores.
 *
 * OpenMP's count (omp_set_num_threads) belongs to the calling thread, but
 * OpenBLAS's is one number for the process, and openblas_set_num_threads
 * also sets the calling thread's OpenMP count. So the process-wide part is
 * kept here under a lock: serial sections are counted, the first one saves
 * OpenBLAS's count and sets 1, the last one puts it back; while any is open
 * nobody else changes it. Each saved state restores its own thread's
 * OpenMP count. */
#include <omp.h>
#include <pthread.h>

#include "ctx_internal.h"

/* OpenBLAS's own API, declared here to avoid depending on its headers. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int serial_depth;  /* open serial sections, all threads */
static int blas_before;   /* OpenBLAS's count when the first one opened */

sv_threads_saved sv_threads_apply(const sv_ctx *ctx)
{
    sv_threads_saved saved = {.omp = omp_get_max_threads(), .blas = 0};
    if (!ctx || ctx->nthreads <= 0) return saved;
    pthread_mutex_lock(&blas_lock);
    if (serial_depth == 0) {
        saved.blas = openblas_get_num_threads();
        openblas_set_num_threads(ctx->nthreads);
    }
    pthread_mutex_unlock(&blas_lock);
    omp_set_num_threads(ctx->nthreads);
    return saved;
}

sv_threads_saved sv_threads_serial_begin(void)
{
    sv_threads_saved saved = {.omp = omp_get_max_threads(), .blas = -1};
    pthread_mutex_lock(&blas_lock);
    if (serial_depth++ == 0) {
        blas_before = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_lock);
    omp_set_num_threads(1);
    return saved;
}

void sv_threads_restore(sv_threads_saved saved)
{
    pthread_mutex_lock(&blas_lock);
    if (saved.blas < 0) { /* a serial section ends */
        if (--serial_depth == 0) openblas_set_num_threads(blas_before);
    } else if (saved.blas > 0 && serial_depth == 0) {
        openblas_set_num_threads(saved.blas);
    }
    pthread_mutex_unlock(&blas_lock);
    if (saved.omp > 0) omp_set_num_threads(saved.omp);
}
