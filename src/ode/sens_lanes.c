/* Sensitivities' lane bookkeeping for the driver: the workspace, a lane's
 * start (initial sensitivities, direction scales) and outputs at the save
 * times (the steppers' dense output on the directions' vectors). Their
 * error norms sit below the steppers (norms.c). */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "sens.h"
#include "steppers.h"

/* The reals beyond the lanes' arrays: dJ (ns·nnz·W), Jst (nnz·W), dTst and
 * tmp (nw each), mwork and atsc (ns·nw each), vpw (ns·np·W), dense (ns·n),
 * and one lane's yl sl ol fl (n each), dl (n + nnz), pl and vp (np + 1
 * each). */
static size_t sens_reals(const sv_ode_problem *P, int W)
{
    size_t n = (size_t)P->n, ns = (size_t)P->ns, nnz = (size_t)(P->nnz ? P->nnz : 1), np = (size_t)P->np + 1;
    return (ns + 1) * nnz * W + (2 + 2 * ns) * n * W + ns * np * W + ns * n + 5 * n + nnz + 2 * np;
}

size_t ode_sens_bytes(const sv_ode_problem *P, int W)
{
    size_t n = (size_t)P->n, np = (size_t)P->np + 1;
    return sizeof(ode_sens) + sens_reals(P, W) * sizeof(double) + (2 * n + np) * sizeof(double complex);
}

sv_status ode_sens_create(sv_ctx *ctx, const ode_lanes *L, ode_sens **out)
{
    const sv_ode_problem *P = L->P;
    const int W = L->W;
    *out = NULL;
    ode_sens *S = sv_calloc(ctx, 1, sizeof *S, "ode sensitivities");
    if (!S) return sv_last_status();
    const size_t n = (size_t)P->n, nw = n * W, nnz = (size_t)(P->nnz ? P->nnz : 1), np = (size_t)P->np + 1;
    S->ctx = ctx;
    S->ns = P->ns;
    S->nw = nw;
    double *b = sv_calloc(ctx, sens_reals(P, W), sizeof(double), "ode sensitivities");
    S->yc = sv_calloc(ctx, 2 * n + np, sizeof(double complex), "ode sensitivities");
    if (!b || !S->yc) {
        sv_status st = sv_last_status();
        sv_free(ctx, b);
        ode_sens_destroy(S);
        return st;
    }
    S->dJ = b, b += (size_t)S->ns * nnz * W;
    S->Jst = b, b += nnz * W;
    S->dTst = b, b += nw;
    S->tmp = b, b += nw;
    S->mwork = b, b += (size_t)S->ns * nw;
    S->atsc = b, b += (size_t)S->ns * nw;
    S->vpw = b, b += (size_t)S->ns * np * W; /* zeroed by sv_calloc: the ones below */
    for (int j = 0; j < P->nsp; j++)
        for (int w = 0; w < W; w++) S->vpw[((size_t)j * P->np + (size_t)P->sens_idx[j]) * W + w] = 1;
    /* dl: one lane's Jacobian derivative (nnz) and ∂g/∂t (n) */
    ode_carve(b, 8, (double **const[]){&S->dense, &S->yl, &S->sl, &S->ol, &S->fl, &S->dl, &S->pl, &S->vp},
              (const size_t[]){(size_t)S->ns * n, n, n, n, n, n + nnz, np, 0});
    S->fc = S->yc + n;
    S->pc = S->fc + n;
    S->S = L->y + nw;
    S->Snew = L->ynew + nw;
    S->SU = L->U + nw;
    S->G = L->fv + nw;
    S->G0 = L->f0 + nw;
    S->gt = L->dT + nw;
    *out = S;
    return SV_OK;
}

void ode_sens_destroy(ode_sens *S)
{
    if (S) sv_free_each(S->ctx, (void *const[]){S->dJ, S->yc, S}, 3);
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
        double sc = 1, pk = j < P->nsp ? L->p[(size_t)P->sens_idx[j] * W + w] : 0;
        if (L->o->sens_scale) sc = L->o->sens_scale[j];
        else if (pk != 0) sc = fabs(pk);
        for (int i = 0; i < n; i++) S->atsc[(size_t)j * S->nw + (size_t)i * W + w] = L->atolv[i] / sc;
    }
    S->have_g0[w] = 0;
    return finite;
}

static double *sens_row(const ode_lanes *L, long tr, int save)
{
    return L->E->sens_out + ((size_t)tr * L->E->nsave + save) * L->n * L->sens->ns;
}

void ode_sens_store(const ode_lanes *L, int w, long tr, int save, const double *vec)
{
    const ode_sens *S = L->sens;
    const int n = L->n, ns = S->ns, W = L->W;
    const double *dirs = vec + S->nw;
    double *dst = sens_row(L, tr, save);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ns; j++) dst[(size_t)i * ns + j] = dirs[(size_t)j * S->nw + (size_t)i * W + w];
}

void ode_sens_store_interp(const ode_lanes *L, int w, long tr, int save, double th)
{
    const ode_sens *S = L->sens;
    const int n = L->n, ns = S->ns;
    ode_interp(L, w, th, n, n * L->nvec, S->dense);
    double *dst = sens_row(L, tr, save);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ns; j++) dst[(size_t)i * ns + j] = S->dense[(size_t)j * n + i];
}

/* Tsit5's g at the step's start is the last step's final stage (phases.c
 * copied it with f0), except after a tstop. */
void ode_sens_advance(ode_lanes *L, int w) { L->sens->have_g0[w] = !L->rodas && L->hits[w] != ODE_HITS_TSTOP; }
