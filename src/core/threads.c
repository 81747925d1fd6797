/* Thread counts for OpenMP and OpenBLAS.
 *
 * Solvent links the OpenMP build of OpenBLAS: its BLAS calls share the
 * OpenMP runtime with Solvent's own parallel loops, a BLAS call made inside
 * one of our parallel regions runs on that thread alone, and one setting
 * (OMP_NUM_THREADS, or the context's thread count) governs both. So the two
 * never oversubscribe the cores. */
#include <omp.h>

#include "ctx_internal.h"

/* OpenBLAS's own API, declared here to avoid depending on its headers. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

int sv_threads_apply(const sv_ctx *ctx)
{
    int previous = openblas_get_num_threads();
    if (ctx && ctx->nthreads > 0) {
        omp_set_num_threads(ctx->nthreads);
        openblas_set_num_threads(ctx->nthreads);
    }
    return previous;
}

void sv_threads_restore(int previous_blas_threads)
{
    if (previous_blas_threads > 0) openblas_set_num_threads(previous_blas_threads);
}
