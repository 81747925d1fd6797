/* The LAPACK reference exact solver (an sv_sweep_solver): a full double
 * copy of Z(f) and LU with partial pivoting (zgetrf), independent of the
 * dense engine's factorisations; its solves are exact to double precision,
 * so the solution and its derivatives are solved directly, not refined (the
 * `lapack` precision, and the tests' second method). 16·N² bytes. */
#include <stdint.h>
#include <string.h>
#include <lapacke.h>

#include "sweep_internal.h"

typedef struct lapack_solver {
    const sv_sweep_model *m;
    sv_ctx *home;         /* the content's own */
    sv_ctx *ctx;          /* of the solve in progress */
    double complex *z;    /* Z(f), then its LU factors */
    lapack_int *ipiv;
} lapack_solver;

static void lapack_release(void *content)
{
    lapack_solver *L = content;
    sv_free(L->ctx, L->z);
    sv_free(L->ctx, L->ipiv);
    L->z = NULL;
    L->ipiv = NULL;
}

static sv_status lapack_setup(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    lapack_solver *L = content;
    (void)nderiv;
    memset(plan, 0, sizeof *plan);
    plan->factors = SV_SWEEP_FACTORS_EXACT;
    lapack_release(L);
    L->ctx = ctx;
    int n = L->m->n;
    size_t nn;
    if (sv_size_mul((size_t)n, (size_t)n, &nn) || nn > SIZE_MAX / sizeof(double complex))
        return sv_error(SV_ERR_ARG, "n = %d: the full matrix would overflow size_t", n);
    L->z = sv_alloc(ctx, nn * sizeof(double complex), "full Z(f) for the LAPACK solve");
    L->ipiv = sv_alloc(ctx, sizeof(lapack_int) * (size_t)n, "LAPACK pivots");
    sv_status st = L->z && L->ipiv ? sv_sweep_form_full(L->m, freq, L->z, n) : sv_last_status();
    if (!st) {
        lapack_int rc = LAPACKE_zgetrf(LAPACK_COL_MAJOR, n, n, L->z, n, L->ipiv);
        if (rc > 0)
            st = sv_error(SV_ERR_SINGULAR, "Z(%g) is exactly singular (zero pivot %d of %d)", freq, (int)rc, n);
        else if (rc < 0)
            st = sv_error(SV_ERR_INTERNAL, "zgetrf argument %d rejected", (int)-rc);
    }
    if (st) lapack_release(L);
    return st;
}

static sv_status lapack_precond(void *content, int ncols, double complex *v, int ldv)
{
    const lapack_solver *L = content;
    int n = L->m->n;
    lapack_int rc = LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', n, ncols, L->z, n, L->ipiv, v, ldv);
    return rc ? sv_error(SV_ERR_INTERNAL, "zgetrs argument %d rejected", (int)-rc) : SV_OK;
}

static void lapack_destroy(void *content)
{
    lapack_solver *L = content;
    if (!L) return;
    lapack_release(L);
    sv_free(L->home, L);
}

static const sv_sweep_solver_ops lapack_ops = {.name = "LAPACK reference", .setup = lapack_setup,
                                               .precond = lapack_precond, .release = lapack_release,
                                               .destroy = lapack_destroy};

sv_status sv_sweep_lapack_solver_create(sv_ctx *ctx, const sv_sweep_model *m, sv_sweep_solver **out)
{
    lapack_solver *L = sv_calloc(ctx, 1, sizeof *L, "LAPACK exact solver");
    if (!L) return sv_last_status();
    *L = (lapack_solver){.m = m, .home = ctx, .ctx = ctx};
    sv_status st = sv_sweep_solver_create(ctx, m, &lapack_ops, L, out);
    if (st) lapack_destroy(L);
    return st;
}
