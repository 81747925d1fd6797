/* The refinement engine's stages, shared by refine.c (the policy: which
 * stage runs when), refine_block.c and gmres.c. Parameters are resolved
 * (no zeros standing for defaults). */
#ifndef SV_DENSE_REFINE_INTERNAL_H
#define SV_DENSE_REFINE_INTERNAL_H

#include "dense_internal.h"

/* Stage 1: block refinement of all groups (refine_block.c). x gets group
 * 0's best iterate, dx the other groups' last; *berr group 0's backward
 * error, *its the steps taken. */
sv_status sv_dense_refine_block(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                                const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                                double complex *dx, int lddx, double *berr, int *its);
size_t sv_dense_refine_block_bytes(int n, int nrhs, int ngroups);

/* R ← rhs − Z·x for nrhs columns (rhs, R ld n), through ops->apply. */
sv_status sv_dense_refine_true_residual(const sv_dense_refine_ops *ops, const double complex *rhs,
                                        const double complex *x, int ldx, double complex *r);

/* Flexible GMRES(SV_DENSE_GMRES_M) for the nrhs columns of Z·x = rhs (rhs
 * ld n; x ld ldx, the initial guess on entry), right-preconditioned by
 * ops->precond, products and residuals through ops->apply. Stops at a
 * backward error ≤ tol (max over columns), after max_steps steps, or when
 * a restart cycle no longer halves the error (gmres.c). */
sv_status sv_dense_gmres(sv_ctx *ctx, const sv_dense_refine_ops *ops, const double complex *rhs, double complex *x,
                         int ldx, double tol, int max_steps, double *berr, int *steps);
size_t sv_dense_gmres_bytes(int n, int nrhs);

#endif
