/* The pattern check (sv_ode_options.check_pattern): before the first
 * Jacobian of a solve, ∂f/∂y at the first trajectory's initial state is
 * probed column by column and every non-zero entry the pattern lacks is
 * reported. A pattern that misses a true non-zero silently corrupts every
 * Jacobian recovered from it; the check turns that into an error naming the
 * pairs, for n directional derivatives once per solve.
 *
 * The probe is exact wherever the problem allows: complex step when it has
 * a complex f, J·v when it has one, else forward differences of f. A
 * difference cannot invent a dependence: f_i that does not read y_j returns
 * the same bits at y + δ·e_j, so a difference is non-zero only where the
 * entry is (it may miss an entry that vanishes at this state, as any probe
 * at one state may). A non-finite probe (a NaN or infinite parameter or
 * state) says nothing about the pattern: the check has no verdict, and the
 * trajectory fails on its own in the solve. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ode_internal.h"

typedef struct probe {
    const sv_ode_problem *P;
    double t;
    const double *y, *p;
    double *f0, *col, *yp; /* n each */
    double complex *yc, *fc;
} probe;

/* Column j of ∂f/∂y into pr->col (up to a positive factor for finite
 * differences, which only the zero test reads). Non-zero: a callback failed. */
static int probe_column(probe *pr, int j)
{
    const sv_ode_problem *P = pr->P;
    const int n = P->n;
    void *u = P->d.user;
    if (P->d.f_complex) {
        const double s = 1e-100;
        for (int i = 0; i < n; i++) pr->yc[i] = i == j ? CMPLX(pr->y[i], s) : pr->y[i];
        if (P->d.f_complex(pr->t, pr->yc, pr->p, pr->fc, u)) return 1;
        for (int i = 0; i < n; i++) pr->col[i] = cimag(pr->fc[i]);
        return 0;
    }
    if (P->d.jvp) {
        for (int i = 0; i < n; i++) pr->yp[i] = i == j;
        return P->d.jvp(pr->t, pr->y, pr->p, 0.0, pr->yp, pr->col, u);
    }
    memcpy(pr->yp, pr->y, sizeof(double) * (size_t)n);
    double yj = pr->y[j], se = sqrt(DBL_EPSILON);
    pr->yp[j] = yj + se * fmax(fabs(yj), se);
    if (P->d.f(pr->t, pr->yp, pr->p, pr->col, u)) return 1;
    for (int i = 0; i < n; i++) pr->col[i] -= pr->f0[i];
    return 0;
}

/* Whether (i, j) is in the pattern (columns sorted per row). */
static int in_pattern(const sv_ode_problem *P, int i, int j)
{
    int lo = P->rowptr[i], hi = P->rowptr[i + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (P->colind[mid] == j) return 1;
        if (P->colind[mid] < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

/* Probe every column; the missing pairs are listed in msg (the first few)
 * and counted. Returns -1 when a callback failed (no verdict). */
static int count_missing(probe *pr, char *msg, size_t len)
{
    const sv_ode_problem *P = pr->P;
    const int n = P->n;
    int missing = 0;
    size_t used = 0;
    msg[0] = 0;
    if (!P->d.f_complex && !P->d.jvp && P->d.f(pr->t, pr->y, pr->p, pr->f0, P->d.user)) return -1;
    for (int j = 0; j < n; j++) {
        if (probe_column(pr, j)) return -1;
        for (int i = 0; i < n; i++)
            if (!isfinite(pr->col[i])) return -1;
        for (int i = 0; i < n; i++) {
            if (pr->col[i] == 0 || in_pattern(P, i, j)) continue;
            if (missing++ < 8 && used < len) used += (size_t)snprintf(msg + used, len - used, "%s(%d, %d)",
                                                                      missing > 1 ? ", " : "", i, j);
        }
    }
    return missing;
}

sv_status ode_check_pattern(sv_ctx *ctx, const sv_ode_problem *P, double t, const double *y, const double *p)
{
    const int n = P->n;
    if (P->dense) return SV_OK;
    probe pr = {.P = P, .t = t, .y = y, .p = P->np ? p : NULL};
    pr.f0 = sv_alloc(ctx, sizeof(double) * 3 * (size_t)n, "ode pattern check");
    pr.yc = sv_alloc(ctx, sizeof(double complex) * 2 * (size_t)n, "ode pattern check");
    if (!pr.f0 || !pr.yc) {
        sv_free_each(ctx, (void *const[]){pr.f0, pr.yc}, 2);
        return sv_last_status();
    }
    pr.col = pr.f0 + n;
    pr.yp = pr.col + n;
    pr.fc = pr.yc + n;
    char list[256];
    int missing = count_missing(&pr, list, sizeof list);
    sv_free_each(ctx, (void *const[]){pr.f0, pr.yc}, 2);
    /* A callback that fails at y0, or a non-finite probe, is that
     * trajectory's failure, reported in its status when the solve runs it;
     * the check has no verdict then. */
    if (missing <= 0) return SV_OK;
    return sv_error(SV_ERR_PATTERN,
                    "%s: the Jacobian pattern misses %d non-zero entr%s (row, column) of df/dy at t = %g, "
                    "trajectory 0's initial state: %s%s; add %s to rowptr/colind, or set check_pattern = "
                    "SV_ODE_CHECK_OFF",
                    P->d.name ? P->d.name : "problem", missing, missing == 1 ? "y" : "ies", t, list,
                    missing > 8 ? ", ..." : "", missing == 1 ? "it" : "them");
}
