/* Helpers for the ODE tests: run one built-in problem from its standard
 * initial state to its end time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support_ode.h"
#include "sv_test.h"

sv_status ode_run_builtin(const sv_ode_builtin *b, const sv_ode_options *o_in, double *yend,
                          sv_ode_traj_status *status, sv_ode_stats *stats)
{
    sv_ode_options o = *o_in;
    if (!o.tstops) {
        o.tstops = b->tstops;
        o.ntstops = b->ntstops;
    }
    sv_ode_ensemble e = {.ntraj = 1,
                         .t0 = b->t0,
                         .nsave = 1,
                         .tsave = &b->t1,
                         .y0 = b->y0,
                         .params = b->params,
                         .out = yend,
                         .status = status,
                         .stats = stats};
    return sv_ode_solve(NULL, b->prob, &o, &e);
}

sv_ode_stats ode_run_success(const sv_ode_builtin *b, const sv_ode_options *o, double *yend)
{
    sv_ode_traj_status st;
    sv_ode_stats stats;
    assert_int_equal(ode_run_builtin(b, o, yend, &st, &stats), SV_OK);
    assert_int_equal(st, SV_ODE_SUCCESS);
    return stats;
}

double ode_scd(int n, const double *y, const double *ref)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(y[i] - ref[i]) / fabs(ref[i]));
    return -log10(m);
}
