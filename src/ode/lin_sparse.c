/* Sparse back end of the ODE linear solver: waits for the sparse engine.
 * Until it is linked, every problem uses the dense back end. */
#include "lin_internal.h"

sv_status ode_lin_sparse_init(sv_ctx *ctx, ode_lin *L)
{
    (void)ctx;
    (void)L;
    return SV_ERR_UNSUPPORTED;
}
void ode_lin_sparse_free(sv_ctx *ctx, ode_lin *L)
{
    (void)ctx;
    (void)L;
}
void ode_lin_sparse_factor(ode_lin *L, unsigned char *bad)
{
    (void)L;
    (void)bad;
}
void ode_lin_sparse_solve(ode_lin *L, double *x)
{
    (void)L;
    (void)x;
}
void ode_lin_sparse_factor_double(ode_lin *L, unsigned char *bad)
{
    (void)L;
    (void)bad;
}
void ode_lin_sparse_solve_double(ode_lin *L, double *x)
{
    (void)L;
    (void)x;
}
