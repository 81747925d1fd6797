/* Synthetic affine models for the GPU tests (the idea of
 * tests/sweep/support_synth.c, written again here so the GPU tests link
 * only the GPU module): Z(f) = jω·L − j·Ψ/ω + Zs(f)·G with L symmetric
 * positive definite (nanohenries), Ψ positive semidefinite with a null
 * space and a few resonances in 2–9 GHz, G a tridiagonal CSR Gram matrix,
 * Zs(f) = r0·(1 + j)·sqrt(f / 1 GHz). Full copies of the terms let the
 * tests build Z(f) and solve it with LAPACK, independently of the code
 * under test. */
#ifndef SUPPORT_GPU_H
#define SUPPORT_GPU_H

#include <complex.h>

#include "solvent/sweep.h"

typedef struct gsynth {
    int n, nb, p;
    double *Lf, *Pf, *Lp, *Pp;  /* full and packed */
    int *rowptr, *colind;
    double *gval, *b, r0;
    sv_sweep_term terms[3];
    sv_sweep_model *model;
} gsynth;

void gsynth_create(gsynth *s, int n, int nb, int p, int resonances, double r0, unsigned long long seed);
void gsynth_destroy(gsynth *s);
double complex gsynth_coef(void *user, int k, double f);
/* Full Z(f), n × n. */
void gsynth_full_z(const gsynth *s, double f, double complex *z);
/* X = Z(f)⁻¹·B by LAPACK zgesv (n × p). */
void gsynth_solve(const gsynth *s, double f, double complex *x);
/* Pack the lower triangle of a full n × n matrix by block columns of nb
 * (the dense engine's layout, written out from its description). */
double *gsynth_pack(int n, int nb, const double *full);
/* max |a − b| / max |b| over n·p entries */
double rel_diff(int len, const double complex *a, const double complex *b);

#endif
