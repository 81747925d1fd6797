/* Sparse back end of the ODE linear solver: the sparse engine
 * (include/solvent/sparse.h) with its AMD ordering, exact symbolic LU and
 * batched W-lane kernels. Chosen by lin.c when the AMD ordering saves
 * enough work over the lane LU in natural order (patterns with fill, such
 * as 2D grids), or when the natural order is out of reach. */
#include <string.h>

#include "lin_internal.h"
#include "solvent/sparse.h"

typedef struct sp_state {
    sv_sparse_pattern *pat;
    sv_sparse_lu *lu;
    int flags[ODE_WMAX];
} sp_state;

sv_status ode_lin_sparse_init(sv_ctx *ctx, ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    sp_state *S = sv_calloc(ctx, 1, sizeof *S, "ode sparse back end");
    if (!S) return sv_last_status();
    sv_status st = sv_sparse_pattern_from_csr(ctx, P->n, P->rowptr, P->colind, &S->pat);
    if (st == SV_OK) st = sv_sparse_lu_analyse(ctx, S->pat, SV_SPARSE_ORDER_AMD, &S->lu);
    if (st != SV_OK) goto fail;
    L->nslots = sv_sparse_lu_nnz(S->lu);
    L->eslot = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode linear solver");
    L->dslot = sv_alloc(ctx, sizeof(int) * (size_t)P->n, "ode linear solver");
    if (!L->eslot || !L->dslot) {
        st = sv_last_status();
        goto fail;
    }
    const int *es = sv_sparse_lu_entry_slot(S->lu), *ds = sv_sparse_lu_diag_slot(S->lu);
    for (int e = 0; e < P->nnz; e++) {
        int q = sv_sparse_pattern_find(S->pat, P->erow[e], P->colind[e]);
        if (q < 0) {
            st = sv_error(SV_ERR_INTERNAL, "ode: pattern entry (%d, %d) lost by the sparse engine", P->erow[e],
                          P->colind[e]);
            goto fail;
        }
        L->eslot[e] = es[q];
    }
    memcpy(L->dslot, ds, sizeof(int) * (size_t)P->n);
    L->kind = ODE_LIN_SPARSE;
    L->sp = S;
    return SV_OK;
fail:
    sv_free(ctx, L->eslot);
    sv_free(ctx, L->dslot);
    L->eslot = L->dslot = NULL;
    sv_sparse_lu_destroy(S->lu);
    sv_sparse_pattern_destroy(S->pat);
    sv_free(ctx, S);
    return st;
}

long long ode_lin_sparse_updates(const ode_lin *L)
{
    const sp_state *S = L->sp;
    return sv_sparse_lu_updates(S->lu);
}

void ode_lin_sparse_free(sv_ctx *ctx, ode_lin *L)
{
    sp_state *S = L->sp;
    if (!S) return;
    sv_sparse_lu_destroy(S->lu);
    sv_sparse_pattern_destroy(S->pat);
    sv_free(ctx, S);
    L->sp = NULL;
}

static void flags_to_bad(const sp_state *S, int W, unsigned char *bad)
{
    for (int w = 0; w < W; w++)
        if (S->flags[w]) bad[w] = 1;
}

void ode_lin_sparse_factor(ode_lin *L, unsigned char *bad)
{
    sp_state *S = L->sp;
    if (L->single) sv_sparse_lu_factor_batch_f32(S->lu, L->W, L->fbuf, S->flags);
    else sv_sparse_lu_factor_batch(S->lu, L->W, L->buf, S->flags);
    flags_to_bad(S, L->W, bad);
}

void ode_lin_sparse_factor_double(ode_lin *L, unsigned char *bad)
{
    sp_state *S = L->sp;
    sv_sparse_lu_factor_batch(S->lu, L->W, L->buf, S->flags);
    flags_to_bad(S, L->W, bad);
}

void ode_lin_sparse_solve(ode_lin *L, double *x)
{
    sp_state *S = L->sp;
    if (L->single) {
        size_t nw = (size_t)L->n * L->W;
        for (size_t q = 0; q < nw; q++) L->fx[q] = (float)x[q];
        sv_sparse_lu_solve_batch_f32(S->lu, L->W, L->fbuf, L->fx, L->fx, L->fwork);
        for (size_t q = 0; q < nw; q++) x[q] = L->fx[q];
    } else {
        sv_sparse_lu_solve_batch(S->lu, L->W, L->buf, x, x, L->work);
    }
}

void ode_lin_sparse_solve_double(ode_lin *L, double *x)
{
    sp_state *S = L->sp;
    sv_sparse_lu_solve_batch(S->lu, L->W, L->buf, x, x, L->work);
}
