/* Sensitivities' lane bookkeeping: the workspace, a lane's start (initial
 * sensitivities, direction scales), outputs at the save times (dense output
 * like the state's), the move to the new step, and the error norms. */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "sens.h"

/* nw-blocks: S, Snew, SU, G0, gt, G (ns each), l (ns·stages), rhs, dTst (one each) */
static size_t sens_blocks(int ns) { return (size_t)ns * (6 + ODE_SENS_STAGES) + 2; }

size_t ode_sens_bytes(const sv_ode_problem *P, int W)
{
    size_t n = (size_t)P->n, ns = (size_t)P->ns, nnz = (size_t)(P->nnz ? P->nnz : 1), np = (size_t)P->np + 1;
    size_t reals = sens_blocks(P->ns) * n * W + (ns + 1) * nnz * W + (ns + np) * W + 5 * n + 2 * np + nnz;
    return sizeof(ode_sens) + reals * sizeof(double) + (2 * n + np) * sizeof(double complex);
}

sv_status ode_sens_create(sv_ctx *ctx, const sv_ode_problem *P, int W, ode_sens **out)
{
    *out = NULL;
    ode_sens *S = sv_calloc(ctx, 1, sizeof *S, "ode sensitivities");
    if (!S) return sv_last_status();
    const int ns = P->ns;
    const size_t n = (size_t)P->n, nw = n * W, nnz = (size_t)(P->nnz ? P->nnz : 1), np = (size_t)P->np + 1;
    S->ctx = ctx;
    S->ns = ns;
    S->nw = nw;
    size_t reals = sens_blocks(ns) * nw + ((size_t)ns + 1) * nnz * W + ((size_t)ns + np) * W + 5 * n + 2 * np + nnz;
    double *b = sv_calloc(ctx, reals, sizeof(double), "ode sensitivities");
    S->yc = sv_calloc(ctx, 2 * n + np, sizeof(double complex), "ode sensitivities");
    if (!b || !S->yc) {
        sv_status st = sv_last_status();
        sv_free(ctx, b);
        ode_sens_destroy(S);
        return st;
    }
    double **blk[] = {&S->S, &S->Snew, &S->SU, &S->G0, &S->gt, &S->G};
    for (size_t a = 0; a < sizeof blk / sizeof blk[0]; a++, b += (size_t)ns * nw) *blk[a] = b;
    S->l = b, b += (size_t)ns * ODE_SENS_STAGES * nw;
    S->rhs = b, b += nw;
    S->dTst = b, b += nw;
    S->dJ = b, b += (size_t)ns * nnz * W;
    S->Jst = b, b += nnz * W;
    S->scale = b, b += (size_t)ns * W;
    S->vpw = b, b += np * W;
    S->yl = b, b += n;
    S->sl = b, b += n;
    S->ol = b, b += n;
    S->fl = b, b += n;
    S->dl = b, b += n + nnz; /* one lane's Jacobian derivative (nnz) and ∂g/∂t (n) */
    S->pl = b, b += np;
    S->vp = b;
    S->fc = S->yc + n;
    S->pc = S->fc + n;
    *out = S;
    return SV_OK;
}

void ode_sens_destroy(ode_sens *S)
{
    if (S) ode_free_all(S->ctx, (void *[]){S->S, S->yc, S}, 3);
}

/* The standard initial sensitivities: 0 for a parameter, e_i for y0_i. */
static double standard_s0(const sv_ode_problem *P, int j, int i) { return j >= P->nsp && P->sens_idx[j] == i; }

int ode_sens_lane_start(ode_lanes *L, int w, long tr)
{
    const sv_ode_problem *P = L->P;
    const sv_ode_ensemble *E = L->E;
    ode_sens *S = L->sens;
    const int n = L->n, ns = S->ns, W = L->W;
    const double *s0 = E->sens0 ? E->sens0 + (E->sens0_shared ? 0 : (size_t)tr * n * ns) : NULL;
    int finite = 1;
    for (int j = 0; j < ns; j++)
        for (int i = 0; i < n; i++) {
            double v = s0 ? s0[(size_t)i * ns + j] : standard_s0(P, j, i);
            S->S[(size_t)j * S->nw + (size_t)i * W + w] = v;
            finite &= isfinite(v) != 0;
        }
    for (int j = 0; j < ns; j++) {
        double sc = 1;
        if (L->o->sens_scale) sc = L->o->sens_scale[j];
        else if (j < P->nsp && L->p[(size_t)P->sens_idx[j] * W + w] != 0) sc = fabs(L->p[(size_t)P->sens_idx[j] * W + w]);
        S->scale[(size_t)j * W + w] = sc;
    }
    S->have_g0[w] = 0;
    return finite;
}

static double *sens_row(const ode_lanes *L, long tr, int save)
{
    return L->E->sens_out + ((size_t)tr * L->E->nsave + save) * L->n * L->sens->ns;
}

void ode_sens_store(const ode_lanes *L, int w, long tr, int save, const double *blocks)
{
    const ode_sens *S = L->sens;
    const int n = L->n, ns = S->ns, W = L->W;
    double *dst = sens_row(L, tr, save);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ns; j++) dst[(size_t)i * ns + j] = blocks[(size_t)j * S->nw + (size_t)i * W + w];
}

/* Rodas5P: the state's interpolant (rodas5p.c) with S, S_new and the
 * stages l; Tsit5: S + h Σ b_m(θ) l_m. */
void ode_sens_store_interp(const ode_lanes *L, int w, long tr, int save, double th)
{
    const ode_sens *S = L->sens;
    const int n = L->n, ns = S->ns, W = L->W;
    double *dst = sens_row(L, tr, save);
    const size_t nw = S->nw;
    double b[7];
    if (!L->rodas) {
        const tsit5_tab *T = &sv_ode_tsit5;
        for (int m = 0; m < 7; m++)
            b[m] = th * (T->r[m][0] + th * (T->r[m][1] + th * (T->r[m][2] + th * T->r[m][3])));
    }
    for (int j = 0; j < ns; j++) {
        const double *lj = S->l + (size_t)j * ODE_SENS_STAGES * nw;
        for (int i = 0; i < n; i++) {
            size_t q = (size_t)j * nw + (size_t)i * W + w, qi = (size_t)i * W + w;
            double v;
            if (L->rodas) {
                const rodas5p_tab *T = &sv_ode_rodas5p;
                double K[3] = {0, 0, 0};
                for (int r = 0; r < 3; r++)
                    for (int m = 0; m < 8; m++) K[r] += T->h[r][m] * lj[(size_t)m * nw + qi];
                v = (1 - th) * S->S[q] + th * (S->Snew[q] + (1 - th) * (K[0] + th * (K[1] + th * K[2])));
            } else {
                double acc = 0;
                for (int m = 0; m < 7; m++) acc += b[m] * lj[(size_t)m * nw + qi];
                v = S->S[q] + L->h[w] * acc;
            }
            dst[(size_t)i * ns + j] = v;
        }
    }
}

void ode_sens_copy_lanes(const ode_lanes *L, const unsigned char *mask, const double *src, double *dst)
{
    const int W = L->W;
    const size_t nb = (size_t)L->sens->ns * L->n;
    for (size_t r = 0; r < nb; r++)
        for (int w = 0; w < W; w++)
            if (mask[w]) dst[r * W + w] = src[r * W + w];
}

void ode_sens_advance(ode_lanes *L, int w)
{
    ode_sens *S = L->sens;
    const int n = L->n, W = L->W;
    /* Tsit5's last stage is g at (t + h, y_new, S_new): the next first stage,
     * except after a tstop (as for f) */
    int fsal = !L->rodas && L->hits[w] != 2;
    for (int j = 0; j < S->ns; j++) {
        const double *l6 = S->l + ((size_t)j * ODE_SENS_STAGES + 6) * S->nw;
        for (int i = 0; i < n; i++) {
            size_t q = (size_t)j * S->nw + (size_t)i * W + w;
            S->S[q] = S->Snew[q];
            if (fsal) S->G0[q] = l6[(size_t)i * W + w];
        }
    }
    S->have_g0[w] = (unsigned char)fsal;
}

/* sqrt(mean((wt_i e_i / sc_i)²)), sc_i = atol_i/scale + rtol·max(|S_i|, |S_new,i|);
 * a component with sc_i = 0 (atol 0 and S = 0) counts only if e_i ≠ 0. */
ODE_INLINE void error_w(ode_lanes *L, const double *e, size_t stride, const int W)
{
    const ode_sens *S = L->sens;
    const int n = L->n;
    const double rtol = L->o->rtol;
    for (int j = 0; j < S->ns; j++) {
        const double *ej = e + (size_t)j * stride, *sj = S->S + (size_t)j * S->nw, *nj = S->Snew + (size_t)j * S->nw;
        const double *scale = S->scale + (size_t)j * W;
        double acc[ODE_WMAX] = {0};
        for (int i = 0; i < n; i++) {
            const double at = L->atolv[i], wt = L->wts[i];
            for (int w = 0; w < W; w++) {
                size_t q = (size_t)i * W + w;
                double sc = at / scale[w] + ode_max(fabs(sj[q]), fabs(nj[q])) * rtol;
                double r = sc > 0 ? wt * ej[q] / sc : (ej[q] != 0 ? INFINITY : 0);
                acc[w] += r * r;
            }
        }
        for (int w = 0; w < W; w++) {
            if (!L->active[w]) continue;
            double en = sqrt(acc[w] / n);
            L->eest[w] = !isfinite(en) ? INFINITY : ode_max(L->eest[w], en);
        }
    }
}

void ode_sens_error(ode_lanes *L, const double *e, size_t stride)
{
    if (L->o->sens_errcon == SV_ODE_SENS_ERR_STATE) return;
    switch (L->W) {
    case 1: error_w(L, e, stride, 1); break;
    case 2: error_w(L, e, stride, 2); break;
    case 4: error_w(L, e, stride, 4); break;
    default: error_w(L, e, stride, 8); break;
    }
}
