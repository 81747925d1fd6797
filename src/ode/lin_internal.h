/* The linear solver's record, shared by lin.c (dense back end, refinement)
 * and lin_sparse.c (the sparse engine back end). */
#ifndef SV_ODE_LIN_INTERNAL_H
#define SV_ODE_LIN_INTERNAL_H

#include "ode_internal.h"

enum { ODE_LIN_DENSE = 0, ODE_LIN_SPARSE = 1 };

struct ode_lin {
    int kind, n, W, nnz, nslots, single;
    const sv_ode_problem *P;
    int *eslot;     /* slot of each Jacobian pattern entry */
    int *dslot;     /* slot of each diagonal entry */
    double *buf;    /* nslots·W, slot-major */
    float *fbuf;    /* single-precision factor */
    double *r, *dx, *work;
    float *fx, *fwork;
    void *sp;       /* sparse back end state */
    struct lane_lu *llu; /* lane LU back end */
    int dfactored;  /* single mode: buf holds the double factor too */
    unsigned char use_double[ODE_WMAX]; /* single mode: lane fell back to double this step */
};

/* Sparse back end: returns SV_OK and sets kind, nslots, eslot, dslot when it
 * takes the problem; anything else leaves the dense back end in charge. */
sv_status ode_lin_sparse_init(sv_ctx *ctx, ode_lin *L);
void ode_lin_sparse_free(sv_ctx *ctx, ode_lin *L);
long long ode_lin_sparse_updates(const ode_lin *L);
void ode_lin_sparse_factor(ode_lin *L, unsigned char *bad);
void ode_lin_sparse_solve(ode_lin *L, double *x);
void ode_lin_sparse_factor_double(ode_lin *L, unsigned char *bad);
void ode_lin_sparse_solve_double(ode_lin *L, double *x);

#endif
