/* `solvent sweep`: parsed arguments and the pieces of the run. */
#ifndef SV_SWEEP_TOOL_H
#define SV_SWEEP_TOOL_H

#include <complex.h>
#include <stddef.h>

#include "solvent/sweep.h"

/* --device: where the exact solves run */
typedef enum sweep_device { SWEEP_DEVICE_AUTO = 0, SWEEP_DEVICE_CPU = 1, SWEEP_DEVICE_GPU = 2 } sweep_device;

typedef struct sweep_args {
    const char *project, *output, *plot;
    int points, exact, threads, max_exact, quiet, progress;
    double start, stop, tol;
    size_t memory_limit;
    sv_sweep_precision precision;
    sweep_device device;
} sweep_args;

/* Everything after argument parsing; returns the exit code. */
int sweep_tool_run(const sweep_args *a);

/* Plot |S_ij| in dB (i >= j) against frequency with gnuplot into `path`
 * (.svg or .png), markers at the exactly solved frequencies. s: nf × p × p
 * column-major blocks. Returns 0, or -1 with a message in msg. */
int sweep_plot(const char *path, const char *title, int p, int nf, const double *freq_hz,
               const double complex *s, const unsigned char *exact, char *msg, size_t msglen);

/* Bytes of memory available on this machine (MemAvailable), 0 if unknown. */
size_t sweep_available_memory(void);

#endif
