/* Stage solves in double-double for the lanes whose M = shift·I − J is
 * numerically singular in double (docs/ode.md, "Componentwise accuracy").
 *
 * When hγ·‖J‖ approaches 1/ε the shift 1/(hγ) survives in M's diagonal
 * with few or no digits, and so does every pivot along a direction that J
 * nearly annihilates — the direction of a linear invariant (c^T J = 0), the
 * one the exact M leaves alone (c^T M = shift·c^T). The double factor then
 * mixes rounding errors of size ε·‖J‖ into that direction, and the stage
 * solutions (and the error estimate built from them) lose the invariant and
 * every small component that depends on it. In double-double the shift
 * keeps its digits up to hγ·‖J‖ ~ 1e28, and the solutions are exact to
 * double rounding. lin.c decides per lane when (ode_lin_load).
 *
 * The factor is an up-looking LU without pivoting over the same L+U
 * structure and order as the double one (the sparse engine's analysis, or
 * full storage for the small dense case), one lane at a time: such lanes
 * are rare, and their cost (about 20 flops per multiply-add) is paid only
 * by them. */
#include <string.h>

#include "dd.h"
#include "ode_internal.h"

struct ode_lin_dd {
    sv_ctx *ctx;
    int n, W, nslots;
    const int *rowptr, *colind, *perm; /* L+U in the factor's numbering */
    const int *eslot, *dslot;          /* Jacobian entry → slot, original diagonal → slot */
    const int *mslot;                  /* mass matrix entry → slot, or NULL (M = I) */
    const sv_ode_problem *P;
    int *diagpos, *map, *own;          /* own: the full structure of the dense case */
    dd *buf;                           /* W·nslots, lane-major; allocated at first use */
    dd *z;                             /* n */
};

/* Full n × n storage in natural order (slot i·n + j), for the dense case. */
static sv_status full_structure(ode_lin_dd *D)
{
    const int n = D->n;
    D->own = sv_alloc(D->ctx, sizeof(int) * ((size_t)n + 1 + (size_t)n * n + n), "ode double-double LU");
    if (!D->own) return sv_last_status();
    int *rp = D->own, *ci = rp + n + 1, *pm = ci + (size_t)n * n;
    for (int i = 0; i <= n; i++) rp[i] = i * n;
    for (int q = 0; q < n * n; q++) ci[q] = q % n;
    for (int i = 0; i < n; i++) pm[i] = i;
    D->rowptr = rp;
    D->colind = ci;
    D->perm = pm;
    return SV_OK;
}

sv_status ode_lin_dd_create(sv_ctx *ctx, const sv_ode_problem *P, int W, const sv_sparse_lu *lu, const int *eslot,
                            const int *dslot, const int *mslot, ode_lin_dd **out)
{
    *out = NULL;
    ode_lin_dd *D = sv_calloc(ctx, 1, sizeof *D, "ode double-double LU");
    if (!D) return sv_last_status();
    D->ctx = ctx;
    D->n = P->n;
    D->W = W;
    D->P = P;
    D->eslot = eslot;
    D->dslot = dslot;
    D->mslot = mslot;
    sv_status st = SV_OK;
    if (lu) {
        D->rowptr = sv_sparse_lu_rowptr(lu);
        D->colind = sv_sparse_lu_colind(lu);
        D->perm = sv_sparse_lu_perm(lu);
    } else {
        st = full_structure(D);
    }
    const int n = D->n;
    if (st == SV_OK) {
        D->nslots = D->rowptr[n];
        D->diagpos = sv_alloc(ctx, sizeof(int) * 2 * (size_t)n, "ode double-double LU");
        D->z = sv_alloc(ctx, sizeof(dd) * (size_t)n, "ode double-double LU");
        if (!D->diagpos || !D->z) st = sv_last_status();
    }
    if (st != SV_OK) {
        ode_lin_dd_destroy(D);
        return st;
    }
    D->map = D->diagpos + n;
    for (int i = 0; i < n; i++) {
        D->map[i] = -1;
        D->diagpos[i] = -1;
        for (int q = D->rowptr[i]; q < D->rowptr[i + 1]; q++)
            if (D->colind[q] == i) D->diagpos[i] = q;
    }
    *out = D;
    return SV_OK;
}

void ode_lin_dd_destroy(ode_lin_dd *D)
{
    if (D) sv_free_each(D->ctx, (void *const[]){D->own, D->diagpos, D->z, D->buf, D}, 5);
}

/* Lane w's M = shift·I − J (or shift·M − J) into its buffer, the
 * diagonal as the exact sum. */
static void load_lane(ode_lin_dd *D, dd *a, const double *jv, double shift, int w)
{
    const sv_ode_problem *P = D->P;
    const int W = D->W;
    memset(a, 0, sizeof(dd) * (size_t)D->nslots);
    if (D->mslot) {
        for (int e = 0; e < P->mass->nnz; e++)
            a[D->mslot[e]] = dd_add(a[D->mslot[e]], dd_mul(dd_from(shift), dd_from(P->mass->val[e])));
    } else {
        for (int i = 0; i < D->n; i++) a[D->dslot[i]] = dd_from(shift);
    }
    for (int e = 0; e < P->nnz; e++) {
        dd *s = &a[D->eslot[e]];
        *s = dd_sub(*s, dd_from(jv[(size_t)e * W + w]));
    }
}

/* Up-looking LU of one lane in place: row i subtracts l_ik·(row k of U)
 * for its L entries k in increasing order. Returns 1 for a zero or
 * non-finite pivot (the factor still completes). */
static int factor_lane(ode_lin_dd *D, dd *a)
{
    const int n = D->n, *rp = D->rowptr, *ci = D->colind;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        for (int q = rp[i]; q < rp[i + 1]; q++) D->map[ci[q]] = q;
        for (int q = rp[i]; q < rp[i + 1] && ci[q] < i; q++) {
            int k = ci[q];
            dd l = dd_div(a[q], a[D->diagpos[k]]);
            a[q] = l;
            for (int r = D->diagpos[k] + 1; r < rp[k + 1]; r++) {
                dd *t = &a[D->map[ci[r]]];
                *t = dd_sub(*t, dd_mul(l, a[r]));
            }
        }
        double piv = a[D->diagpos[i]].hi;
        if (piv == 0 || !isfinite(piv)) bad = 1;
        for (int q = rp[i]; q < rp[i + 1]; q++) D->map[ci[q]] = -1;
    }
    return bad;
}

sv_status ode_lin_dd_factor(ode_lin_dd *D, int w, const double *jv, double shift, unsigned char *bad)
{
    if (!D->buf) {
        D->buf = sv_alloc(D->ctx, sizeof(dd) * (size_t)D->nslots * D->W, "ode double-double LU factors");
        if (!D->buf) return sv_last_status();
    }
    dd *a = D->buf + (size_t)w * D->nslots;
    load_lane(D, a, jv, shift, w);
    *bad = (unsigned char)factor_lane(D, a);
    return SV_OK;
}

void ode_lin_dd_solve(const ode_lin_dd *D, int w, const double *b, double *x)
{
    const int n = D->n, W = D->W, *rp = D->rowptr, *ci = D->colind, *pm = D->perm;
    const dd *a = D->buf + (size_t)w * D->nslots;
    dd *z = D->z;
    for (int i = 0; i < n; i++) {
        dd acc = dd_from(b[(size_t)pm[i] * W + w]);
        for (int q = rp[i]; q < D->diagpos[i]; q++) acc = dd_sub(acc, dd_mul(a[q], z[ci[q]]));
        z[i] = acc;
    }
    for (int i = n - 1; i >= 0; i--) {
        dd acc = z[i];
        for (int q = D->diagpos[i] + 1; q < rp[i + 1]; q++) acc = dd_sub(acc, dd_mul(a[q], z[ci[q]]));
        z[i] = dd_div(acc, a[D->diagpos[i]]);
    }
    for (int i = 0; i < n; i++) x[(size_t)pm[i] * W + w] = dd_to(z[i]);
}
