/* Lane LU: an LU without pivoting for one sparsity structure, compiled into
 * flat operation lists and run over W lanes (W matrices side by side,
 * slot-major), in double or float. Written here rather than taken from a
 * library because its point is the lane dimension: LAPACK and KLU factor one
 * matrix at a time, while an ensemble needs the same operations on W
 * trajectories' matrices at once, which vectorises across the lanes.
 *
 * The structure is the pattern plus the diagonal, in a given symmetric
 * order (identity, or a fill-reducing permutation), with its exact fill. */
#ifndef SV_ODE_LANELU_H
#define SV_ODE_LANELU_H

#include "solvent/core.h"

typedef struct lane_lu {
    int n, nslots;
    int identity;       /* perm is the identity: solve in place */
    int dense_small;    /* full n ≤ 8, natural order: unrolled dense kernels */
    long long nupd;     /* multiply-adds of one factorisation */
    int *perm;          /* perm[k] = original index of row/col k */
    int *dslot;         /* slot of diagonal k (permuted numbering) */
    int *lptr, *lslot;  /* factor: for pivot k, slots (i,k) of L's column k */
    int *uptr, *uslot;  /* factor: for pivot k, slots (k,j) of U's row k */
    int *upd;           /* factor: target slots (i,j), in loop order */
    int *Lrp, *Lsl, *Lcol; /* solve: rows of L (strictly lower): slot, column */
    int *Urp, *Usl, *Ucol; /* solve: rows of U (strictly upper): slot, column */
    int *slot_of;       /* n·n map (permuted i,j) → slot or −1, kept for loading */
} lane_lu;

/* Analyse n × n CSR pattern (rowptr/colind, original numbering) in the
 * order perm (NULL = natural). Refuses (SV_ERR_UNSUPPORTED) when the factor
 * would exceed max_updates multiply-adds. */
sv_status lane_lu_analyse(sv_ctx *ctx, int n, const int *rowptr, const int *colind, const int *perm,
                          long long max_updates, lane_lu **out);
void lane_lu_destroy(sv_ctx *ctx, lane_lu *lu);
/* Slot of original entry (i, j), or −1. */
int lane_lu_slot(const lane_lu *lu, int i, int j);

void lane_lu_factor_d(const lane_lu *lu, int W, double *buf, unsigned char *bad);
void lane_lu_factor_f(const lane_lu *lu, int W, float *buf, unsigned char *bad);
/* x (n·W, slot-major, ORIGINAL numbering) overwritten by M⁻¹ x; work: n·W. */
void lane_lu_solve_d(const lane_lu *lu, int W, const double *buf, double *x, double *work);
void lane_lu_solve_f(const lane_lu *lu, int W, const float *buf, float *x, float *work);

#endif
