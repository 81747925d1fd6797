/* The planar job for em's end-to-end validations (test_fullwave,
 * test_momentum, test_radiation): the model as a user gets it, a project
 * to its S in one library call (include/solvent/planar.h). Linked, with
 * sv_planar, only into the tests that use it (tests/em/CMakeLists.txt). */
#ifndef JOB_EM_H
#define JOB_EM_H

#include <complex.h>

#include "solvent/planar.h"

/* Options for the list of nf frequencies f (borrowed) on the CPU's
 * solves (a GPU's are tests/gpu's and tests/planar's); the rest the job's
 * defaults: the adaptive sweep in mixed precision, S alone. */
void em_test_job_options(sv_planar_options *o, int nf, const double *f);

/* S (nfreq blocks of P × P, column-major) of project p under options o:
 * the job copies p, so white-box fields set on it (p->dispersion) hold.
 * Asserts that the job succeeds, that its sweep converged, and that S is
 * reciprocal and passive at every frequency (1e-9: the checks users
 * apply). */
void em_test_job_s(const sv_em_project *p, const sv_planar_options *o, double complex *S);

/* The same for each of nmaps maps on board (a batch, sv_planar_batch:
 * the board's tables and calibration made once, each map a job of its
 * own on a thread of its own; o lists the frequencies): map k's S at
 * S + k·nfreq·P·P. */
void em_test_batch_s(const sv_em_project *board, const sv_planar_options *o, int nmaps,
                     const unsigned char *const *maps, double complex *S);

#endif
