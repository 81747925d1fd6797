/* Network parameters from the port admittance matrix: Z = Y⁻¹ and
 * S = (I + A)⁻¹(I − A) with A = R·Y·R, R = diag(√z0) (the two factors are
 * functions of A, so they commute), and the checks users apply. LAPACK does
 * the small dense algebra. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"

static sv_status check_all(int p, const double complex *a, const char *who)
{
    for (int q = 0; q < p * p; q++)
        if (!isfinite(creal(a[q])) || !isfinite(cimag(a[q])))
            return sv_error(SV_ERR_NONFINITE, "%s: entry (%d, %d) is not finite", who, q % p, q / p);
    return SV_OK;
}

/* X = A⁻¹·X for a small p × p system (ports), by LAPACK's zgesv; A is
 * overwritten. `matrix` names A in the message when it is singular, and
 * `consequence` (may be "") says what follows from that. */
static sv_status solve_ports(int p, double complex *a, double complex *x, const char *who, const char *matrix,
                             const char *consequence)
{
    lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)p);
    if (!ipiv) return sv_error(SV_ERR_NOMEM, "%s: no memory for %d ports", who, p);
    sv_threads_saved serial = sv_threads_serial_begin(); /* LAPACK on this thread (threads.c) */
    lapack_int info = LAPACKE_zgesv(LAPACK_COL_MAJOR, p, p, a, p, ipiv, x, p);
    sv_threads_restore(serial);
    free(ipiv);
    if (info > 0)
        return sv_error(SV_ERR_SINGULAR, "%s: %s is singular (pivot %d)%s", who, matrix, (int)info, consequence);
    if (info < 0) return sv_error(SV_ERR_INTERNAL, "%s: zgesv argument %d", who, (int)-info);
    return SV_OK;
}

sv_status sv_em_solve_small(int p, double complex *a, double complex *x, const char *who, const char *matrix)
{
    return solve_ports(p, a, x, who, matrix, "");
}

sv_status sv_em_y_to_z(int p, const double complex *y, double complex *z)
{
    if (p < 1 || !y || !z) return sv_error(SV_ERR_ARG, "sv_em_y_to_z: p = %d or NULL matrix", p);
    sv_status s = check_all(p, y, "sv_em_y_to_z: Y");
    if (s) return s;
    double complex *a = malloc(sizeof *a * (size_t)p * p);
    if (!a) return sv_error(SV_ERR_NOMEM, "sv_em_y_to_z: no memory for %d ports", p);
    memcpy(a, y, sizeof *a * (size_t)p * p);
    for (int c = 0; c < p; c++)
        for (int r = 0; r < p; r++) z[r + (size_t)p * c] = r == c;
    s = solve_ports(p, a, z, "sv_em_y_to_z", "Y", ": Z does not exist");
    free(a);
    return s ? s : check_all(p, z, "sv_em_y_to_z: Z");
}

double sv_em_y_to_s_rounding(int p, const double complex *y, const double *z0)
{
    double amax = 0;
    for (int c = 0; c < p; c++)
        for (int r = 0; r < p; r++) amax = fmax(amax, sqrt(z0[r] * z0[c]) * cabs(y[r + (size_t)p * c]));
    return p * DBL_EPSILON * amax;
}

sv_status sv_em_y_to_s(int p, const double complex *y, const double *z0, double complex *s)
{
    if (p < 1 || !y || !z0 || !s) return sv_error(SV_ERR_ARG, "sv_em_y_to_s: p = %d or NULL argument", p);
    for (int k = 0; k < p; k++)
        if (!(z0[k] > 0) || !isfinite(z0[k]))
            return sv_error(SV_ERR_ARG, "sv_em_y_to_s: z0[%d] = %g: expected a finite value > 0", k, z0[k]);
    sv_status st = check_all(p, y, "sv_em_y_to_s: Y");
    if (st) return st;
    double rounding = sv_em_y_to_s_rounding(p, y, z0);
    if (rounding > SV_EM_S_ROUNDING_MAX)
        return sv_error(SV_ERR_SINGULAR,
                        "S cannot be formed to %.0e: the ports are joined by a near short (|z0·Y| reaches %.2g), "
                        "so rounding leaves S non-reciprocal or active by up to %.1e; lossless metal does this far "
                        "below its first resonance: give the metal its conductivity or raise the frequency "
                        "(S at 0 Hz, the DC limit, is exact)",
                        SV_EM_S_ROUNDING_MAX, rounding / (p * DBL_EPSILON), rounding);
    double complex *a = malloc(sizeof *a * (size_t)p * p);
    if (!a) return sv_error(SV_ERR_NOMEM, "sv_em_y_to_s: no memory for %d ports", p);
    for (int c = 0; c < p; c++)
        for (int r = 0; r < p; r++) {
            double complex v = sqrt(z0[r]) * y[r + (size_t)p * c] * sqrt(z0[c]);
            a[r + (size_t)p * c] = (r == c) + v;
            s[r + (size_t)p * c] = (r == c) - v;
        }
    st = solve_ports(p, a, s, "sv_em_y_to_s", "I + z0·Y", "");
    free(a);
    return st ? st : check_all(p, s, "sv_em_y_to_s: S");
}

double sv_em_reciprocity_error(int p, const double complex *s)
{
    double e = 0;
    for (int c = 0; c < p; c++)
        for (int r = 0; r < c; r++) e = fmax(e, cabs(s[r + (size_t)p * c] - s[c + (size_t)p * r]));
    return e;
}

sv_status sv_em_max_singular_value(int p, const double complex *s, double *out)
{
    if (p < 1 || !s || !out) return sv_error(SV_ERR_ARG, "sv_em_max_singular_value: p = %d or NULL argument", p);
    double complex *a = malloc(sizeof *a * (size_t)p * p);
    double *sv = malloc(sizeof *sv * (size_t)p * 2);
    if (!a || !sv) {
        free(a);
        free(sv);
        return sv_error(SV_ERR_NOMEM, "sv_em_max_singular_value: no memory");
    }
    memcpy(a, s, sizeof *a * (size_t)p * p);
    sv_threads_saved serial = sv_threads_serial_begin(); /* LAPACK on this thread (threads.c) */
    lapack_int info = LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', p, p, a, p, sv, NULL, 1, NULL, 1, sv + p);
    sv_threads_restore(serial);
    *out = sv[0];
    free(a);
    free(sv);
    if (info != 0) return sv_error(SV_ERR_NOCONV, "sv_em_max_singular_value: zgesvd info %d", (int)info);
    return SV_OK;
}

/* S and the checks at one frequency. */
static sv_status y_to_s_checked(int p, const double complex *y, const double *z0, double complex *s,
                                sv_em_s_checks *checks)
{
    sv_status st = sv_em_y_to_s(p, y, z0, s);
    if (st || !checks) return st;
    double smax = 0;
    st = sv_em_max_singular_value(p, s, &smax);
    if (st) return st;
    checks->reciprocity = fmax(checks->reciprocity, sv_em_reciprocity_error(p, s));
    checks->max_singular = fmax(checks->max_singular, smax);
    return SV_OK;
}

sv_status sv_em_y_to_s_all(int p, int nf, const double complex *y, const double *z0, double complex *s,
                           sv_em_s_checks *checks)
{
    if (p < 1 || nf < 0 || !y || !z0 || !s)
        return sv_error(SV_ERR_ARG, "sv_em_y_to_s_all: p = %d, nf = %d or NULL argument", p, nf);
    if (checks) *checks = (sv_em_s_checks){0, 0};
    /* One tiny LAPACK call per frequency: a thread team for each would cost
     * more than the call (docs/threads.md). */
    sv_threads_saved serial = sv_threads_serial_begin();
    sv_status st = SV_OK;
    size_t pp = (size_t)p * (size_t)p;
    for (int i = 0; i < nf && !st; i++) st = y_to_s_checked(p, y + i * pp, z0, s + i * pp, checks);
    sv_threads_restore(serial);
    return st;
}
