/* Benchmark helpers for the planar model: what the anchors (naive solvers
 * a user would otherwise write) need of it. */
#ifndef SV_BENCH_EM_H
#define SV_BENCH_EM_H

#include <complex.h>

#include "solvent/em.h"

/* The full N × N complex Z(f) = Σ c_k(f)·A_k, column-major, both triangles,
 * from the model's terms (docs/em.md: an anchor forms it as a user would). */
void bench_em_full_z(const sv_em_affine *a, double freq_hz, double complex *z);

/* nf frequencies evenly spaced over the band `sw` (malloc'ed). */
double *bench_em_band(int nf, const sv_em_sweep *sw);

#endif
