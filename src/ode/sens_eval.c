/* The sensitivities' derivatives of f (sens.h): the right-hand sides
 * g_j = (∂f/∂y)·S_j + ∂f/∂θ_j from the problem's sens_source, and
 * Rodas5P's second-order terms, the Jacobian's derivative along each
 * direction, from jac_dir or by complex step on tangent_complex.
 *
 * Every source is exact to rounding except finite differences (central,
 * two f per direction and stage): analytic
 * (J·S from the Jacobian at the stage, plus dfdp), complex step in (y, p)
 * along (S_j, e_θj) (Im f(U + iεS, p + iεe_k)/ε: no subtraction), and the
 * tangent callback. Lanes are gathered one at a time for the per-lane
 * callbacks, as eval.c does for f. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "sens.h"
#include "sens_csr.h"

static const double CSTEP = 1e-100; /* complex step: see eval.c */

static void gather(int n, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < n; i++) dst[i] = src[(size_t)i * W + w];
}
static void scatter(int n, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < n; i++) dst[(size_t)i * W + w] = src[i];
}

/* The unit parameter direction of sensitivity j into S->vp, or NULL for an
 * initial-value direction. */
static const double *param_dir(const sv_ode_problem *P, ode_sens *S, int j)
{
    if (j >= P->nsp) return NULL;
    memset(S->vp, 0, sizeof(double) * (size_t)P->np);
    S->vp[P->sens_idx[j]] = 1;
    return S->vp;
}

/* ---- one lane, one direction: g into S->ol; the callback's return code ---- */
static int rhs_complex(const sv_ode_problem *P, ode_sens *S, double t, const double *vp)
{
    const int n = P->n;
    for (int i = 0; i < n; i++) S->yc[i] = CMPLX(S->yl[i], CSTEP * S->sl[i]);
    for (int k = 0; k < P->np; k++) S->pc[k] = CMPLX(S->pl[k], vp ? CSTEP * vp[k] : 0.0);
    int rc = P->d.f_complex_p(t, S->yc, S->pc, S->fc, P->d.user);
    for (int i = 0; i < n; i++) S->ol[i] = cimag(S->fc[i]) / CSTEP;
    return rc;
}

/* Central difference along (S, e_k), with the step that moves the state
 * and the parameter by about ε^(1/3) of their size (error ~ε^(2/3)):
 * INEXACT (docs/ode.md). Two f per direction and stage. */
static int rhs_fd(const sv_ode_problem *P, ode_sens *S, double t, const double *vp, int k)
{
    const int n = P->n;
    const double ce = cbrt(DBL_EPSILON);
    double ny = 0, ns = 0;
    for (int i = 0; i < n; i++) {
        ny = fmax(ny, fabs(S->yl[i]));
        ns = fmax(ns, fabs(S->sl[i]));
    }
    double rel = ns / fmax(ny, ce);
    if (vp) rel = fmax(rel, 1.0 / fmax(fabs(S->pl[k]), ce));
    if (rel == 0) {
        memset(S->ol, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    double d = ce / rel, pk = vp ? S->pl[k] : 0;
    double *fp = S->dl, *fm = S->fl, *yp = S->ol;
    int rc = 0;
    for (int sg = 1; sg >= -1 && !rc; sg -= 2) {
        for (int i = 0; i < n; i++) yp[i] = S->yl[i] + sg * d * S->sl[i];
        if (vp) S->pl[k] = pk + sg * d;
        rc = P->d.f(t, yp, P->np ? S->pl : NULL, sg > 0 ? fp : fm, P->d.user);
    }
    if (vp) S->pl[k] = pk;
    for (int i = 0; i < n; i++) S->ol[i] = (fp[i] - fm[i]) / (2 * d);
    return rc;
}

/* One lane's callbacks (gathered in S): the scalar callback, or the batched
 * one with a single lane (slot-major with W = 1 is a plain vector). */
static int lane_dfdp(const sv_ode_problem *P, ode_sens *S, double t, int k)
{
    const double *p = P->np ? S->pl : NULL;
    return P->d.dfdp ? P->d.dfdp(t, S->yl, p, k, S->ol, P->d.user)
                     : P->d.dfdp_batch(1, &t, S->yl, p, k, S->ol, P->d.user);
}
static int lane_tangent(const sv_ode_problem *P, ode_sens *S, double t, const double *vp)
{
    const double *p = P->np ? S->pl : NULL;
    return P->d.tangent ? P->d.tangent(t, S->yl, p, S->sl, vp, S->ol, P->d.user)
                        : P->d.tangent_batch(1, &t, S->yl, p, S->sl, vp, S->ol, P->d.user);
}

/* Direction j's g for one lane into S->ol (the analytic source: its dfdp
 * part only). Returns the callback's code. */
static int rhs_lane(const sv_ode_problem *P, ode_sens *S, double t, int j)
{
    const double *vp = param_dir(P, S, j);
    switch (P->d.sens_source) {
    case SV_ODE_SENS_ANALYTIC: return lane_dfdp(P, S, t, P->sens_idx[j]);
    case SV_ODE_SENS_COMPLEX_STEP: return rhs_complex(P, S, t, vp);
    case SV_ODE_SENS_TANGENT: return lane_tangent(P, S, t, vp);
    case SV_ODE_SENS_FD: return rhs_fd(P, S, t, vp, vp ? P->sens_idx[j] : 0);
    }
    return -1;
}

/* Direction j lane by lane for the masked lanes (added to G_j for the
 * analytic source, whose J·S is there already). */
static void rhs_lanewise(ode_lanes *L, const unsigned char *mask, const double *t, const double *U, const double *SU,
                         double *Gj, int j)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int n = L->n, W = L->W, add = P->d.sens_source == SV_ODE_SENS_ANALYTIC;
    if (add && j >= P->nsp) return; /* an initial value: J·S alone */
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, U, S->yl);
        if (L->np) gather(L->np, W, w, L->p, S->pl);
        if (!add) gather(n, W, w, SU, S->sl);
        ode_fail_note(&L->fail[w], rhs_lane(P, S, t[w], j));
        for (int i = 0; i < n; i++) Gj[(size_t)i * W + w] = (add ? Gj[(size_t)i * W + w] : 0) + S->ol[i];
    }
}

/* The unit parameter direction of sensitivity j for all lanes (S->vpw's,
 * set once: the callbacks take it const), or NULL for an initial-value
 * direction. */
static const double *param_dir_lanes(const sv_ode_problem *P, ode_sens *S, int W, int j)
{
    return j < P->nsp ? S->vpw + (size_t)j * P->np * W : NULL;
}

/* Direction j through a batched callback (dfdp_batch or tangent_batch) for
 * all lanes at once; 0 when it has none or it failed (then lane by lane
 * decides, so that a failure is the failing lane's own). */
ODE_INLINE int rhs_batched(ode_lanes *L, const double *t, const double *U, const double *SU, double *Gj, int j,
                           const int W)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const size_t nw = S->nw;
    const double *p = L->np ? L->p : NULL;
    if (P->d.sens_source == SV_ODE_SENS_ANALYTIC) {
        if (j >= P->nsp) return 1; /* an initial value: J·S alone */
        if (!P->d.dfdp_batch) return 0;
        double *tmp = S->tmp;
        if (P->d.dfdp_batch(W, t, U, p, P->sens_idx[j], tmp, P->d.user)) return 0;
        for (size_t q = 0; q < nw; q++) Gj[q] += tmp[q];
        return 1;
    }
    if (P->d.sens_source != SV_ODE_SENS_TANGENT || !P->d.tangent_batch) return 0;
    return !P->d.tangent_batch(W, t, U, p, SU, param_dir_lanes(P, S, W, j), Gj, P->d.user);
}

ODE_INLINE void rhs_w(ode_lanes *L, const unsigned char *mask, const double *t, const double *U, const double *fU,
                      const double *J, const double *SU, double *G, const int W)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int ns = S->ns;
    const size_t nw = S->nw;
    if (P->d.sens_source == SV_ODE_SENS_ANALYTIC) {
        if (!J) {
            long nf[ODE_WMAX] = {0};
            ode_jacobian(P, L->jw, W, mask, t, U, L->p, fU, S->Jst, S->dTst, L->fail, nf);
            for (int w = 0; w < W; w++) L->st[w].nf += nf[w];
            J = S->Jst;
        }
        /* G_j = J·SU_j: J shared by the directions */
        ode_csr_times(W, P, ns, J, 0, SU, nw, NULL, G, nw);
    }
    for (int j = 0; j < ns; j++)
        if (!rhs_batched(L, t, U, SU + (size_t)j * nw, G + (size_t)j * nw, j, W))
            rhs_lanewise(L, mask, t, U, SU + (size_t)j * nw, G + (size_t)j * nw, j);
    for (int w = 0; w < W; w++)
        if (mask[w]) {
            L->st[w].nsens_rhs += ns;
            if (P->d.sens_source == SV_ODE_SENS_FD) L->st[w].nf += 2 * ns;
        }
}

void ode_sens_rhs(ode_lanes *L, const unsigned char *mask, const double *t, const double *U, const double *fU,
                  const double *J, const double *SU, double *G)
{
    switch (L->W) {
    case 1: rhs_w(L, mask, t, U, fU, J, SU, G, 1); break;
    case 2: rhs_w(L, mask, t, U, fU, J, SU, G, 2); break;
    case 4: rhs_w(L, mask, t, U, fU, J, SU, G, 4); break;
    default: rhs_w(L, mask, t, U, fU, J, SU, G, 8); break;
    }
}

/* ---- second order: lane w's dJ_j into S->dl, ∂g_j/∂t into S->dl + nnz ---- */
/* Complex step on the tangent: H_j e_c = D_y g_j · e_c = Im g_j(y + iε e_c)/ε
 * per colour of the pattern (H_j has J's pattern), and ∂g_j/∂t from a
 * complex t. */
static int second_tangent(const sv_ode_problem *P, ode_sens *S, double t, const double *vp)
{
    const int n = P->n;
    double *dvals = S->dl, *dgt = S->dl + P->nnz;
    void *u = P->d.user;
    const double *p = P->np ? S->pl : NULL;
    for (int c = 0; c < P->ncolors; c++) {
        for (int i = 0; i < n; i++) S->yc[i] = P->color[i] == c ? CMPLX(S->yl[i], CSTEP) : S->yl[i];
        if (P->d.tangent_complex(t, S->yc, p, S->sl, vp, S->fc, u)) return 1;
        for (int i = 0; i < n; i++) S->ol[i] = cimag(S->fc[i]) / CSTEP;
        sv_sparse_recover_color_values(P->coloring, c, S->ol, NULL, dvals);
    }
    if (!P->d.nonautonomous) {
        memset(dgt, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    for (int i = 0; i < n; i++) S->yc[i] = S->yl[i];
    if (P->d.tangent_complex(CMPLX(t, CSTEP), S->yc, p, S->sl, vp, S->fc, u)) return 1;
    for (int i = 0; i < n; i++) dgt[i] = cimag(S->fc[i]) / CSTEP;
    return 0;
}

/* Lane w's dJ_j and ∂g_j/∂t into S->dl (gathered y, p and S_j in S). */
static int second_lane(const sv_ode_problem *P, ode_sens *S, double t, const double *vp)
{
    if (!P->d.jac_dir && !P->d.jac_dir_batch) return second_tangent(P, S, t, vp);
    double *dgt = S->dl + P->nnz, *ddfdt = P->d.nonautonomous ? dgt : NULL;
    const double *p = P->np ? S->pl : NULL;
    if (!P->d.nonautonomous) memset(dgt, 0, sizeof(double) * (size_t)P->n);
    return P->d.jac_dir ? P->d.jac_dir(t, S->yl, p, S->sl, vp, S->dl, ddfdt, P->d.user)
                        : P->d.jac_dir_batch(1, &t, S->yl, p, S->sl, vp, S->dl, ddfdt, P->d.user);
}

/* Direction j through jac_dir_batch for all lanes; 0 when there is none or
 * it failed (lane by lane decides then, rewriting every masked lane). With
 * every lane masked the callback writes dJ_j and ∂g_j/∂t in place, else
 * into scratch, so that the other lanes keep theirs for their retries. */
static int second_batched(ode_lanes *L, const unsigned char *mask, int j)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int W = L->W, n = L->n, nnz = L->nnz, np = L->np;
    if (!P->d.jac_dir_batch) return 0;
    int all = 1;
    for (int w = 0; w < W; w++) all &= mask[w] != 0;
    const double *vp = param_dir_lanes(P, S, W, j);
    double *dJ = S->dJ + (size_t)j * nnz * W, *gt = S->gt + (size_t)j * S->nw;
    double *dv = all ? dJ : S->Jst, *dgt = all ? gt : S->dTst; /* Jst, dTst: free outside the stages */
    if (!P->d.nonautonomous) memset(dgt, 0, sizeof(double) * S->nw);
    if (P->d.jac_dir_batch(W, L->t, L->y, np ? L->p : NULL, S->S + (size_t)j * S->nw, vp, dv,
                           P->d.nonautonomous ? dgt : NULL, P->d.user))
        return 0;
    if (all) return 1;
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        for (int e = 0; e < nnz; e++) dJ[(size_t)e * W + w] = dv[(size_t)e * W + w];
        for (int i = 0; i < n; i++) gt[(size_t)i * W + w] = dgt[(size_t)i * W + w];
    }
    return 1;
}

void ode_sens_second(ode_lanes *L, const unsigned char *mask)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int n = L->n, np = L->np, W = L->W, nnz = L->nnz;
    for (int j = 0; j < S->ns; j++) {
        if (second_batched(L, mask, j)) continue;
        for (int w = 0; w < W; w++) {
            if (!mask[w]) continue;
            gather(n, W, w, L->y, S->yl);
            if (np) gather(np, W, w, L->p, S->pl);
            gather(n, W, w, S->S + (size_t)j * S->nw, S->sl);
            /* the step's start is an accepted state: no smaller step helps */
            if (second_lane(P, S, L->t[w], param_dir(P, S, j))) L->fail[w] = ODE_FAIL_HARD;
            scatter(nnz, W, w, S->dl, S->dJ + (size_t)j * nnz * W);
            scatter(n, W, w, S->dl + nnz, S->gt + (size_t)j * S->nw);
        }
    }
    for (int w = 0; w < W; w++)
        if (mask[w]) L->st[w].nsens_jac += S->ns;
}
