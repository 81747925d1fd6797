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

/* G_j = J·SU_j for the masked lanes (J: pattern values, slot-major): the
 * others' G may be a value they keep (G0 across a rejected step). */
static void jac_times(const sv_ode_problem *P, int W, const unsigned char *mask, const double *J, const double *SU,
                      double *G)
{
    const int *rp = P->rowptr, *ci = P->colind;
    for (int i = 0; i < P->n; i++) {
        double acc[ODE_WMAX] = {0};
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            const double *je = J + (size_t)e * W, *s = SU + (size_t)ci[e] * W;
            for (int w = 0; w < W; w++) acc[w] += je[w] * s[w];
        }
        double *g = G + (size_t)i * W;
        for (int w = 0; w < W; w++)
            if (mask[w]) g[w] = acc[w];
    }
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

void ode_sens_rhs(ode_lanes *L, const unsigned char *mask, const double *t, const double *U, const double *fU,
                  const double *J, const double *SU, double *G)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int n = L->n, np = L->np, W = L->W, ns = S->ns;
    const sv_ode_sens_source src = P->d.sens_source;
    if (src == SV_ODE_SENS_ANALYTIC) {
        if (!J) {
            long nf[ODE_WMAX] = {0};
            ode_jacobian(P, L->jw, W, mask, t, U, L->p, fU, S->Jst, S->dTst, L->fail, nf);
            for (int w = 0; w < W; w++) L->st[w].nf += nf[w];
            J = S->Jst;
        }
        for (int j = 0; j < ns; j++) jac_times(P, W, mask, J, SU + (size_t)j * S->nw, G + (size_t)j * S->nw);
    }
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, U, S->yl);
        if (np) gather(np, W, w, L->p, S->pl);
        const double *p = np ? S->pl : NULL;
        for (int j = 0; j < ns; j++) {
            const double *vp = param_dir(P, S, j);
            double *Gj = G + (size_t)j * S->nw;
            int rc = 0;
            if (src == SV_ODE_SENS_ANALYTIC) {
                if (!vp) continue; /* an initial value: J·S alone */
                rc = P->d.dfdp(t[w], S->yl, p, P->sens_idx[j], S->ol, P->d.user);
                for (int i = 0; i < n; i++) Gj[(size_t)i * W + w] += S->ol[i];
            } else {
                gather(n, W, w, SU + (size_t)j * S->nw, S->sl);
                if (src == SV_ODE_SENS_COMPLEX_STEP) rc = rhs_complex(P, S, t[w], vp);
                else if (src == SV_ODE_SENS_TANGENT) rc = P->d.tangent(t[w], S->yl, p, S->sl, vp, S->ol, P->d.user);
                else rc = rhs_fd(P, S, t[w], vp, vp ? P->sens_idx[j] : 0);
                scatter(n, W, w, S->ol, Gj);
            }
            ode_fail_note(&L->fail[w], rc);
        }
        L->st[w].nsens_rhs += ns;
        if (src == SV_ODE_SENS_FD) L->st[w].nf += 2 * ns;
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

void ode_sens_second(ode_lanes *L, const unsigned char *mask)
{
    const sv_ode_problem *P = L->P;
    ode_sens *S = L->sens;
    const int n = L->n, np = L->np, W = L->W, nnz = L->nnz;
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, L->y, S->yl);
        if (np) gather(np, W, w, L->p, S->pl);
        for (int j = 0; j < S->ns; j++) {
            const double *vp = param_dir(P, S, j);
            gather(n, W, w, S->S + (size_t)j * S->nw, S->sl);
            int rc;
            if (P->d.jac_dir) {
                double *dgt = S->dl + nnz;
                if (!P->d.nonautonomous) memset(dgt, 0, sizeof(double) * (size_t)n);
                rc = P->d.jac_dir(L->t[w], S->yl, np ? S->pl : NULL, S->sl, vp, S->dl,
                                  P->d.nonautonomous ? dgt : NULL, P->d.user);
            } else {
                rc = second_tangent(P, S, L->t[w], vp);
            }
            /* the step's start is an accepted state: no smaller step helps */
            if (rc) L->fail[w] = ODE_FAIL_HARD;
            scatter(nnz, W, w, S->dl, S->dJ + (size_t)j * nnz * W);
            scatter(n, W, w, S->dl + nnz, S->gt + (size_t)j * S->nw);
        }
        L->st[w].nsens_jac += S->ns;
    }
}
