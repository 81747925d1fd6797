/* Synthetic affine models for the sweep tests: Z(f) = jω·L − j·Ψ/ω + Zs(f)·G
 * with L symmetric positive definite, Ψ positive semidefinite with a null
 * space (like the charge term of the planar model), G sparse tridiagonal
 * positive definite and Zs(f) = r0·(1 + j)·sqrt(f / 1 GHz) (skin effect).
 * Full copies of every term are kept so that tests can build Z(f) and solve
 * it with LAPACK independently of the code under test. */
#ifndef SUPPORT_SYNTH_H
#define SUPPORT_SYNTH_H

#include <complex.h>

#include "solvent/sweep.h"

typedef struct synth {
    int n, nb, p;
    double *Lf, *Pf;          /* full n × n column-major */
    double *Lp, *Pp;          /* packed (block-column layout, block nb) */
    int *rowptr, *colind;     /* G: CSR, both triangles */
    double *gval;
    double *b;                /* n × p: unit vectors at the "ports" */
    double r0;                /* surface resistance scale */
    int ports[8];
    sv_sweep_term terms[3];
    sv_sweep_model *model;
} synth;

/* Build a model of order n with p ports; `resonances` of the modes of Ψ
 * are put between 2 and 9 GHz, the others far above 10 GHz. */
void synth_create(synth *s, int n, int nb, int p, int resonances, double r0, unsigned long long seed);
void synth_destroy(synth *s);

/* c_k(f): jω, −j/ω, Zs(f). user = synth*. */
double complex synth_coef(void *user, int k, double f);

/* The lower triangle of a full n × n matrix packed by block columns of nb
 * (the dense engine's layout, written out from its description; the upper
 * part of each diagonal block, workspace, is NaN). */
double *synth_pack(int n, int nb, const double *full);
/* Full Z(f) (n × n) built from the full copies, independently of the module. */
void synth_full_z(const synth *s, double f, double complex *z);
/* X = Z(f)⁻¹·B by LAPACK zgesv on the full matrix (n × p). */
void synth_solve(const synth *s, double f, double complex *x);
/* True relative residual max_j ‖Z·x_j − b_j‖₂ / ‖b_j‖₂. */
double synth_true_residual(const synth *s, double f, const double complex *x);
/* The same for a given full Z (n × n) and B (n × p). */
double synth_residual_of(int n, int p, const double complex *z, const double *b, const double complex *x);
/* X = V·Y (n × p) from a reduced basis V (n × q) and reduced solutions Y (q × p). */
void synth_basis_x(const double *V, int n, int q, int p, const double complex *y, double complex *x);
/* Y = Bᵀ·X (p × p), and S for reference impedance z0 (p × p). */
void synth_port_y(const synth *s, const double complex *x, double complex *y);
void s_from_y(int p, const double complex *y, double z0, double complex *sm);
/* Largest singular value of a p × p complex matrix (LAPACK zgesvd). */
double max_singular(int p, const double complex *a);

#endif
