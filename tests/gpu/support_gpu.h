/* Support for the GPU tests: the synthetic affine models of the sweep's
 * tests (tests/sweep/support_synth.c, linked into these tests: Z(f) =
 * jω·L − j·Ψ/ω + Zs(f)·G with full copies of the terms, so that a test can
 * build Z(f) and solve it with LAPACK independently of the code under
 * test), and a relative difference. */
#ifndef SUPPORT_GPU_H
#define SUPPORT_GPU_H

#include <complex.h>

#include "../sweep/support_synth.h"

/* 1 if /proc/self/maps names a file containing `what` (a library this
 * process has mapped). */
int mapped_in_process(const char *what);

/* max |a − b| / max |b| over len entries */
double rel_diff(int len, const double complex *a, const double complex *b);

#endif
