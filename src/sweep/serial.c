/* Serial sections: one BLAS thread and one OpenMP thread for a while.
 *
 * The sweep's small operations (Gram–Schmidt, A_k·V for a few columns, the
 * estimator's QR of an n × (K·q + p) matrix, q × q reduced solves) and the
 * memory-bound steps of refinement gain nothing from a team of threads and
 * lose a lot on a busy machine, where a parallel region waits for its
 * slowest thread to be scheduled: measured, these steps became tens to
 * hundreds of times slower with two threads on a loaded two-core machine.
 * openblas_set_num_threads also sets OpenMP's count in the OpenMP build of
 * OpenBLAS, so both are saved and restored. */
#include <omp.h>

#include "sweep_internal.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

sv_sweep_serial sv_sweep_serial_begin(void)
{
    sv_sweep_serial st = {openblas_get_num_threads(), omp_get_max_threads()};
    openblas_set_num_threads(1);
    return st;
}

void sv_sweep_serial_end(sv_sweep_serial st)
{
    openblas_set_num_threads(st.blas);
    omp_set_num_threads(st.omp);
}
