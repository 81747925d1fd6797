/* `solvent sweep`: parsed arguments, the state of one run, and the pieces
 * of the run (sweep_run.c: the steps; sweep_report.c: progress bar and
 * summary; sweep_plot.c: the plot). */
#ifndef SV_SWEEP_TOOL_H
#define SV_SWEEP_TOOL_H

#include <complex.h>
#include <stddef.h>

#include "solvent/em.h"
#include "solvent/planar.h"
#include "solvent/sweep.h"

/* --device: where the exact solves run */
typedef enum sweep_device { SWEEP_DEVICE_AUTO = 0, SWEEP_DEVICE_CPU = 1, SWEEP_DEVICE_GPU = 2 } sweep_device;

typedef struct sweep_args {
    const char *project, *output, *plot;
    int points, exact, threads, max_exact, quiet, progress;
    int split;                 /* --subdivide K: every cell of the project split K × K (0, 1: none) */
    double start, stop, tol;
    int start_dc;              /* --start 0: the band starts at DC */
    int allow_beyond_validity; /* --allow-beyond-validity: above the model's limit too */
    size_t memory_limit;
    sv_sweep_precision precision;
    sweep_device device;
} sweep_args;

/* Everything after argument parsing; returns the exit code. */
int sweep_tool_run(const sweep_args *a);

/* The progress bar on stderr (drawn only when `on`). */
typedef struct sweep_bar {
    int on, drawn;
    double last;
} sweep_bar;
/* An sv_progress_fn drawing the bar (user: a sweep_bar). */
int sweep_bar_draw(void *user, const char *phase, double fraction);
/* Clear the bar's line, if drawn. */
void sweep_bar_end(sweep_bar *b);

/* One run: what each step makes, owned here and released at its end. */
typedef struct sweep_job {
    const sweep_args *a;
    sv_ctx *ctx;
    sv_em_project *prj;        /* as read: its ports name the outputs */
    sv_planar_job *job;
    const sv_planar_network *net; /* the job's, once it has run */
    sv_planar_report rep;
    char outname[4096];
    double t_start;            /* seconds: start of the run */
    sweep_bar bar;
} sweep_job;

/* The summary on stdout. */
void sweep_print_summary(const sweep_job *j);

/* Plot |S_ij| in dB (i >= j) against frequency with gnuplot into `path`
 * (.svg or .png), markers at the exactly solved frequencies. s: nf × p × p
 * column-major blocks. Returns 0, or -1 with a message in msg. */
int sweep_plot(const char *path, const char *title, int p, int nf, const double *freq_hz,
               const double complex *s, const unsigned char *exact, char *msg, size_t msglen);

#endif
