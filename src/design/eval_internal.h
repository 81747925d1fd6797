/* The evaluator's state (eval.c makes it, eval_fresh.c fills it from
 * scratch, eval_update.c updates it by flips; docs/design.md, "Method").
 *
 * Per design frequency it keeps one complex symmetric matrix M of order
 * m = nd + p: the bordered system [[Z, B], [Bᵀ, 0]] of the full model
 * (every design pixel metal), swept (Gauss–Jordan eliminated, the sweep
 * operator of Goodnight 1979) on the fixed unknowns and on the design
 * unknowns the current map has (its active rooftops), restricted to the
 * design unknowns and the ports. Its ports' corner is −Y of the current
 * map; a flip toggles the sweep of the rooftops it adds or removes. */
#ifndef SV_DESIGN_EVAL_INTERNAL_H
#define SV_DESIGN_EVAL_INTERNAL_H

#include <complex.h>

#include "solvent/design.h"

struct sv_design_eval {
    sv_ctx *ctx;
    sv_em_project *prj;       /* a copy of the full board: the model borrows it */
    sv_em_model *em;
    sv_em_affine *aff;
    sv_em_calibration *cal;   /* NULL: raw ports */
    int n, p, nf, nterms;
    double *freq;             /* nf */
    double *z0;               /* p */
    double complex *coef;     /* nf × nterms: c_k(f) */
    sv_sweep_term *terms;     /* nterms: the model's terms (arrays the affine model's) */
    double *B;                /* n × p: the port excitations */
    int nx, ny;
    unsigned char *region;    /* nx·ny */
    unsigned char *map;       /* nx·ny: the current map */
    int nd, nfix, m;          /* design unknowns, fixed unknowns, m = nd + p */
    int *dfull;               /* nd: each design unknown's index in the full model */
    int *dcell;               /* 2·nd: its two cells */
    int *fixed;               /* nfix: the fixed unknowns' indices */
    int *cell_off, *cell_d;   /* per cell (nx·ny + 1 offsets): the design unknowns touching it */
    unsigned char *active;    /* nd: swept in M (the current map has it) */
    double *diag;             /* nf × nd: |Z_dd| of the full model, the scale a pivot is measured against */
    double *lost;             /* nf: digits the updates since M's last rebuild may have lost (see eval_update.c) */
    int *stale;               /* nf: 1 where M is rebuilt after an update */
    int *since;               /* nf: updates since M's last rebuild */
    long rebuilds;            /* frequencies rebuilt after updates */
    double complex *M;        /* nf blocks of m × m, column-major */
    double complex *M0;       /* the same swept on the fixed unknowns alone (no rooftop of the region):
                                 each map's M is M0 swept on its rooftops */
    int nthreads;             /* of the scratch below */
    double complex **work;    /* per thread: the fresh build's and the updates' scratch */
    size_t work_len;          /* elements of each */
    int *jset;                /* nd: a flip's changed unknowns */
    unsigned char *trial;     /* nx·ny: a flip's map */
};

/* Z(f_i)[r, c] of the full model, r and c full indices. */
double complex sv_design_eval_z(const sv_design_eval *ev, int fi, int r, int c);
/* M0 of frequency fi from the model's terms (eval_fresh.c). */
sv_status sv_design_eval_base_one(sv_design_eval *ev, int fi, double complex *work);
/* M of frequency fi afresh: M0 swept on the current map's rooftops as one
 * block (an LU of their Schur complement with partial pivoting). */
sv_status sv_design_eval_rebuild_one(sv_design_eval *ev, int fi, double complex *work);
/* Sweep M (order m) on the r unknowns g (all in the same state; sign +1
 * to eliminate them, −1 to restore them); amp (may be NULL) gets the
 * pivot block's cancellation ratio (eval_update.c). work: 2·m·r + 2·r·r. */
sv_status sv_design_sweep_block(double complex *M, int m, int r, const int *g, int sign, const double *diag,
                                double complex *work, double *amp);
/* S from Y = −(M's ports' corner), calibrated when the ports are. */
sv_status sv_design_eval_y_to_s(const sv_design_eval *ev, int fi, double complex *y, double complex *s);
/* The design unknowns whose state differs between map and flipped: into
 * ev->jset; returns the count. */
int sv_design_eval_changed(sv_design_eval *ev, int npix, const int *pix);

#endif
