/* Forward sensitivities over a worker's W lanes (docs/ode.md,
 * "Sensitivities"): S_j = ∂y/∂θ_j for each direction j, integrated with the
 * state by the same method on the augmented system
 *
 *   y' = f(t, y),   S_j' = g_j(t, y, S_j) = (∂f/∂y)·S_j + ∂f/∂θ_j.
 *
 * Rodas5P needs the augmented system's exact Jacobian, block lower
 * triangular [[J, 0], [H_j, J]] with H_j = ∂g_j/∂y = the derivative of J
 * along (S_j, e_θj): its stage equations then reuse the state's factor of M
 * (one factorisation, 1 + nsens right-hand sides per stage),
 *
 *   M l_ij = g_j(t_i, U_i, S_ij) + h d_i ∂g_j/∂t + Σ_m (C_im/h) l_mj + H_j k_i,
 *   S_ij = S_j + Σ_m a_im l_mj,   S_j,new = S_8j + l_8j,
 *
 * which is also the exact derivative of the step map with h held fixed.
 * Tsit5 integrates the augmented system explicitly.
 *
 * The vectors live in the lanes' own arrays, after the state's (lanes.h):
 * direction j is vector 1 + j of y, y_new, U, f0, fv, dT and of each stage
 * of k, so that the stage sums and right-hand sides run over the state and
 * the sensitivities in one pass. Only what the state has no array for is
 * kept here. */
#ifndef SV_ODE_SENS_H
#define SV_ODE_SENS_H

#include "lanes.h"

struct ode_sens {
    sv_ctx *ctx;
    int ns;
    size_t nw;              /* one vector: n·W values */
    /* views into the lanes' arrays (vector 1 of each: the first direction) */
    double *S, *Snew, *SU, *G, *G0, *gt;
    double *dJ;             /* ns·nnz·W: the Jacobian's derivative along each direction (Rodas5P) */
    double *Jst, *dTst;     /* nnz·W and nw: the Jacobian at a stage (the analytic source) */
    double *tmp;            /* nw: a batched ∂f/∂p */
    double *mwork;          /* ns·nw: the directions' solves (Rodas5P) */
    double *atsc;           /* ns·nw: direction j's atol_i/scale_j per lane (scale: |θ_j| or sens_scale), set at its start */
    double *vpw;            /* ns·nparams·W: each parameter direction's unit vector for the batched callbacks */
    double *dense;          /* ns·n: one lane's dense output */
    /* one lane gathered, for the per-lane callbacks */
    double *yl, *sl, *ol, *fl, *pl, *vp, *dl;
    SV_ODE_COMPLEX *yc, *fc, *pc;
    unsigned char have_g0[ODE_WMAX]; /* Tsit5: G0 is the last step's final stage */
};

/* Workspace bytes for W lanes (the memory check), and its creation for L
 * (whose arrays must hold 1 + nsens vectors). */
size_t ode_sens_bytes(const sv_ode_problem *P, int W);
sv_status ode_sens_create(sv_ctx *ctx, const ode_lanes *L, ode_sens **out);
void ode_sens_destroy(ode_sens *S);

/* Lane w starts trajectory tr: S from ens->sens0 (or the standard initial
 * sensitivities) and the direction scales. Returns whether S is finite. */
int ode_sens_lane_start(ode_lanes *L, int w, long tr);
/* sens_out row (tr, save) of lane w from a lanes array (L->y or L->ynew). */
void ode_sens_store(const ode_lanes *L, int w, long tr, int save, const double *vec);
/* The same from dense output at t + θh of the last attempt. */
void ode_sens_store_interp(const ode_lanes *L, int w, long tr, int save, double theta);
/* Lane w moved to its attempt's end (phases.c copied the vectors). */
void ode_sens_advance(ode_lanes *L, int w);

/* dst = src for the masked lanes of ns vectors (the steppers' parts keep
 * g at the step's start for the lanes that did not move). */
static inline void ode_sens_copy_lanes(const ode_lanes *L, const unsigned char *mask, const double *src, double *dst)
{
    const int W = L->W;
    const size_t nb = (size_t)L->sens->ns * L->n;
    for (size_t r = 0; r < nb; r++)
        for (int w = 0; w < W; w++)
            if (mask[w]) dst[r * W + w] = src[r * W + w];
}

/* g_j(t, U, SU_j) for every direction into G (sens_eval.c): the masked
 * lanes' values (the others' G is overwritten with meaningless ones; the
 * callbacks run for them only where batched). fU = f(t, U) (finite
 * differences); J = the Jacobian at (t, U) (the analytic source: NULL
 * evaluates it). Callback refusals and failures are noted in L->fail. */
void ode_sens_rhs(ode_lanes *L, const unsigned char *mask, const double *t, const double *U, const double *fU,
                  const double *J, const double *SU, double *G);
/* Rodas5P's second-order terms at the step's start for the masked lanes:
 * dJ_j (the Jacobian's derivative along (S_j, e_θj)) and ∂g_j/∂t. */
void ode_sens_second(ode_lanes *L, const unsigned char *mask);

/* The steppers' parts (sens_rodas5p.c, sens_tsit5.c): Rodas5P's terms at a
 * lane's new state, the directions' g at a stage (s > 0), and their solves
 * after the state's; Tsit5's g at the step's start (lanes that lack it)
 * and at stage s. */
void ode_sens_rodas5p_prepare(ode_lanes *L, const unsigned char *moved);
void ode_sens_rodas5p_g(ode_lanes *L, unsigned char *em);
sv_status ode_sens_rodas5p_solve(ode_lanes *L, int s, const unsigned char *em);
void ode_sens_tsit5_start(ode_lanes *L, unsigned char *em);
void ode_sens_tsit5_stage(ode_lanes *L, int s, unsigned char *em);

#endif
