/* Monotonic wall-clock time. */
#define _POSIX_C_SOURCE 200809L
#include "solvent/core.h"

#include <time.h>

double sv_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
