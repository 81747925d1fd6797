/* Flips by low-rank updates of the swept matrices (eval_internal.h).
 *
 * Flipping pixels adds or removes the rooftops J they touch (a rooftop
 * exists when both its cells are metal). Sweeping M on J eliminates the
 * added ones and restores the removed ones; either way the entries outside
 * J become M_NN − M_NJ·M_JJ⁻¹·M_JN (the sweep operator's update is the same
 * in both directions), so a trial's Y = −M_PP + M_PJ·M_JJ⁻¹·M_JP costs a
 * solve of order |J| per frequency, and accepting it a rank-|J| update of
 * M per frequency. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <cblas.h>
#include <lapacke.h>

#include "eval_internal.h"

/* When a frequency's M is rebuilt from M0 (eval_fresh.c): when the
 * asymmetry the updates left in its ports' rows passes ASYM_MAX (below),
 * when the estimate below passes ERROR_MAX, and in any case after
 * UPDATES_MAX updates.
 *
 * The error an update may leave in M relative to its scale
 * (eval_internal.h's `lost`): a pivot block whose Schur complement is much
 * smaller than the full model's diagonal at its unknowns is a cancellation
 * (a rooftop closing a loop at low frequency, where the charge term's
 * entries dwarf the complement), whose rounding error is the unit
 * roundoff times that ratio. The estimate sums them over the updates since
 * the last rebuild; when an accepted flip or a trial would take it past
 * ERROR_MAX, the frequency is rebuilt from scratch first. The margin this
 * leaves is measured in docs/design.md, "Accuracy". */
#define ROUNDING 1.1e-16
#define ERROR_MAX 1e-10
#define UPDATES_MAX 256
/* One update at the lowest design frequencies leaves ~1e-11 of asymmetry by
 * itself (a rooftop closing a current loop cancels ~4 digits there), so a
 * bound at that level rebuilt those frequencies after almost every kept
 * flip; at 3e-11 the error measured against fresh solves stays ≤ 3e-11
 * (tests/design: the Gray-code walk's 511 updates) and a frequency is
 * rebuilt every few dozen updates. */
#define ASYM_MAX 3e-11

/* max |M_ip − M_pi|·z0 over the ports' rows and columns: exact arithmetic
 * keeps M symmetric, each update's rounding does not (its two triangles
 * are updated apart), so this is a free reading of the error the updates
 * left in what trials and S are made of, in units of S. */
static double asymmetry(const sv_design_eval *ev, const double complex *M)
{
    double a = 0;
    for (int k = 0; k < ev->p; k++) {
        size_t c = (size_t)ev->nd + k;
        for (int i = 0; i < ev->m; i++) {
            double d = cabs(M[i + (size_t)ev->m * c] - M[c + (size_t)ev->m * i]) * ev->z0[k];
            a = d > a ? d : a;
        }
    }
    return a;
}

/* max|Z_gg| over the block's unknowns. */
static double diag_max(const double *diag, int r, const int *g)
{
    double d = 0;
    for (int a = 0; a < r; a++) d = diag[g[a]] > d ? diag[g[a]] : d;
    return d;
}

static sv_status check_pixels(const sv_design_eval *ev, int npix, const int *pix)
{
    if (npix < 0 || (npix > 0 && !pix)) return sv_error(SV_ERR_ARG, "design: flip: bad pixel list");
    for (int t = 0; t < npix; t++) {
        if (pix[t] < 0 || pix[t] >= ev->nx * ev->ny || !ev->region[pix[t]])
            return sv_error(SV_ERR_ARG, "design: flip: cell %d is not a design pixel", pix[t]);
        for (int u = 0; u < t; u++)
            if (pix[u] == pix[t]) return sv_error(SV_ERR_ARG, "design: flip: cell %d given twice", pix[t]);
    }
    return SV_OK;
}

int sv_design_eval_changed(sv_design_eval *ev, int npix, const int *pix)
{
    int r = 0;
    for (int t = 0; t < npix; t++) ev->map[pix[t]] ^= 1;
    for (int t = 0; t < npix; t++)
        for (int q = ev->cell_off[pix[t]]; q < ev->cell_off[pix[t] + 1]; q++) {
            int d = ev->cell_d[q], now = ev->map[ev->dcell[2 * d]] && ev->map[ev->dcell[2 * d + 1]], seen = 0;
            if (now == ev->active[d]) continue;
            for (int u = 0; u < r; u++) seen |= ev->jset[u] == d;
            if (!seen) ev->jset[r++] = d;
        }
    for (int t = 0; t < npix; t++) ev->map[pix[t]] ^= 1;
    return r;
}

/* Y = −M_PP + M_PJ·M_JJ⁻¹·M_JP at frequency fi (work: r·r + r·p). */
static sv_status trial_y(const sv_design_eval *ev, int fi, int r, double complex *work, lapack_int *ipiv, double complex *y,
                         double *amp)
{
    *amp = 1;
    int m = ev->m, p = ev->p, nd = ev->nd;
    const double complex *M = ev->M + (size_t)fi * m * m;
    double complex *a = work, *b = a + (size_t)r * r;
    for (int c = 0; c < r; c++)
        for (int q = 0; q < r; q++) a[q + (size_t)r * c] = M[ev->jset[q] + (size_t)m * ev->jset[c]];
    for (int k = 0; k < p; k++)
        for (int q = 0; q < r; q++) b[q + (size_t)r * k] = M[ev->jset[q] + (size_t)m * (nd + k)];
    for (int k = 0; k < p; k++)
        for (int l = 0; l < p; l++) y[l + p * k] = -M[nd + l + (size_t)m * (nd + k)];
    if (r == 0) return SV_OK;
    /* x = A⁻¹·b with A⁻¹ formed (order r: a few), for its size: the
     * cancellation the trial's pivots make (see LOST_DIGITS_MAX) */
    double complex *x = b + (size_t)r * p;
    if (LAPACKE_zgetrf(LAPACK_COL_MAJOR, r, r, a, r, ipiv) != 0 || LAPACKE_zgetri(LAPACK_COL_MAJOR, r, a, r, ipiv) != 0)
        return sv_error(SV_ERR_SINGULAR, "design: a flip's pivot block at %g Hz is singular (order %d)", ev->freq[fi], r);
    double amax = 0, dmax = diag_max(ev->diag + (size_t)fi * nd, r, ev->jset);
    for (int c = 0; c < r; c++)
        for (int q = 0; q < r; q++) {
            /* eliminated rooftops: the block is s, A⁻¹ = s⁻¹; restored ones: A = −s⁻¹ */
            int restored = ev->active[ev->jset[q]] && ev->active[ev->jset[c]];
            double v = cabs(restored ? M[ev->jset[q] + (size_t)m * ev->jset[c]] : a[q + (size_t)r * c]);
            amax = v > amax ? v : amax;
        }
    *amp = dmax * amax;
    for (int k = 0; k < p; k++)
        for (int q = 0; q < r; q++) {
            double complex sum = 0;
            for (int c = 0; c < r; c++) sum += a[q + (size_t)r * c] * b[c + (size_t)r * k];
            x[q + (size_t)r * k] = sum;
        }
    for (int k = 0; k < p; k++)
        for (int l = 0; l < p; l++) {
            double complex sum = 0;
            for (int q = 0; q < r; q++) sum += b[q + (size_t)r * l] * x[q + (size_t)r * k];
            y[l + p * k] += sum;
        }
    return SV_OK;
}

sv_status sv_design_eval_trial(sv_design_eval *ev, int npix, const int *pix, double complex *s)
{
    if (!ev || !s) return sv_error(SV_ERR_ARG, "sv_design_eval_trial: NULL argument");
    sv_status st = check_pixels(ev, npix, pix);
    if (st) return st;
    if (ev->p > 8) return sv_error(SV_ERR_UNSUPPORTED, "design: %d ports: at most 8", ev->p);
    int r = sv_design_eval_changed(ev, npix, pix);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * ((size_t)r + 1));
    if (!ipiv) return sv_error(SV_ERR_NOMEM, "design: trial: out of memory");
    double complex y[64];
    for (int f = 0; !st && f < ev->nf; f++) {
        double amp;
        st = trial_y(ev, f, r, ev->work[0], ipiv, y, &amp);
        if (!st && ev->lost[f] > 0 && ev->lost[f] + ROUNDING * amp > ERROR_MAX) {
            /* the current map's M at f afresh (the map stays), then the trial again */
            st = sv_design_eval_rebuild_one(ev, f, ev->work[0]);
            ev->lost[f] = 0;
            ev->rebuilds++;
            if (!st) st = trial_y(ev, f, r, ev->work[0], ipiv, y, &amp);
        }
        if (!st) st = sv_design_eval_y_to_s(ev, f, y, s + (size_t)f * ev->p * ev->p);
    }
    free(ipiv);
    return st;
}

sv_status sv_design_sweep_block(double complex *M, int m, int r, const int *g, int sign, const double *diag,
                                double complex *work, double *amp)
{
    /* T = M_:,J; [R, A⁻¹] = A⁻¹·[Tᵀ, I] by one LU solve (not an explicit
     * inverse times Tᵀ: the solve keeps the update's rounding at the LU's
     * backward error) */
    size_t ld = (size_t)r;
    double complex *t = work, *rhs = t + (size_t)m * r, *lu = rhs + ld * (m + r);
    for (int c = 0; c < r; c++) memcpy(t + (size_t)m * c, M + (size_t)m * g[c], sizeof(double complex) * m);
    for (int c = 0; c < r; c++)
        for (int q = 0; q < r; q++) lu[q + ld * c] = t[g[q] + (size_t)m * c];
    for (int c = 0; c < m; c++)
        for (int q = 0; q < r; q++) rhs[q + ld * c] = t[c + (size_t)m * q];
    for (int c = 0; c < r; c++)
        for (int q = 0; q < r; q++) rhs[q + ld * (m + c)] = q == c;
    lapack_int *ipiv = malloc(sizeof(lapack_int) * (ld + 1));
    if (!ipiv) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    int bad = LAPACKE_zgesv(LAPACK_COL_MAJOR, r, m + r, lu, r, ipiv, rhs, r) != 0;
    free(ipiv);
    if (bad) return sv_error(SV_ERR_SINGULAR, "design: a pivot block of the map's rooftops is singular (order %d)", r);
    const double complex *rr = rhs, *ainv = rhs + ld * m;
    /* the Schur complement s of the block against the other active
     * rooftops: eliminating, A = s and A⁻¹ = s⁻¹; restoring, A = −s⁻¹ */
    if (amp) {
        double dmax = diag_max(diag, r, g), amax = 0;
        for (int c = 0; c < r; c++)
            for (int q = 0; q < r; q++) {
                double v = cabs(sign > 0 ? ainv[q + ld * c] : t[g[q] + (size_t)m * c]);
                amax = v > amax ? v : amax;
            }
        *amp = dmax * amax;
    }
    /* M −= T·R */
    const double complex one = 1, minus = -1;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, r, &minus, t, m, rr, r, &one, M, m);
    /* the pivot rows and columns: ±R, and −A⁻¹ on the block */
    for (int a = 0; a < r; a++)
        for (int c = 0; c < m; c++) M[g[a] + (size_t)m * c] = M[c + (size_t)m * g[a]] = sign * rr[a + ld * c];
    for (int a = 0; a < r; a++)
        for (int b = 0; b < r; b++) M[g[a] + (size_t)m * g[b]] = -ainv[a + ld * b];
    return SV_OK;
}

/* The frequencies whose updates lost too many digits, afresh. */
static sv_status rebuild_stale(sv_design_eval *ev, int team)
{
    sv_status st = SV_OK;
    long rebuilt = 0;
#pragma omp parallel num_threads(team > 0 ? team : 1) reduction(+ : rebuilt)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
#pragma omp for schedule(dynamic, 1)
        for (int f = 0; f < ev->nf; f++) {
            if (!ev->stale[f]) continue;
            sv_status s = sv_design_eval_rebuild_one(ev, f, ev->work[t]);
            ev->stale[f] = 0;
            ev->lost[f] = 0;
            rebuilt++;
            if (s) {
#pragma omp critical(design_rebuild)
                if (!st) st = s;
            }
        }
    }
    ev->rebuilds += rebuilt;
    return st;
}

sv_status sv_design_eval_accept(sv_design_eval *ev, int npix, const int *pix)
{
    if (!ev) return sv_error(SV_ERR_ARG, "sv_design_eval_accept: NULL argument");
    sv_status st = check_pixels(ev, npix, pix);
    if (st) return st;
    int r = sv_design_eval_changed(ev, npix, pix);
    /* the two groups: rooftops added (eliminated), rooftops removed (restored) */
    int *g = malloc(sizeof(int) * ((size_t)r + 1)), na = 0, nr = 0;
    if (!g) return sv_error(SV_ERR_NOMEM, "design: accept: out of memory");
    for (int q = 0; q < r; q++)
        if (!ev->active[ev->jset[q]]) g[na++] = ev->jset[q];
    for (int q = 0; q < r; q++)
        if (ev->active[ev->jset[q]]) g[na + nr++] = ev->jset[q];
    if (2 * (size_t)ev->m * r + 2 * (size_t)r * r > ev->work_len) {
        free(g);
        return sv_error(SV_ERR_UNSUPPORTED, "design: a flip of %d rooftops is larger than the scratch holds", r);
    }
    sv_threads_saved th = sv_threads_apply(ev->ctx);
    int team = sv_threads_team() < ev->nthreads ? sv_threads_team() : ev->nthreads;
#pragma omp parallel num_threads(team > 0 ? team : 1)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
#pragma omp for schedule(static)
        for (int f = 0; f < ev->nf; f++) {
            sv_status s = SV_OK;
            double complex *M = ev->M + (size_t)f * ev->m * ev->m;
            const double *diag = ev->diag + (size_t)f * ev->nd;
            double amp = 1, amp2 = 1;
            if (!s && na) s = sv_design_sweep_block(M, ev->m, na, g, 1, diag, ev->work[t], &amp);
            if (!s && nr) s = sv_design_sweep_block(M, ev->m, nr, g + na, -1, diag, ev->work[t], &amp2);
            ev->lost[f] += ROUNDING * ((amp > 1 ? amp : 1) + (amp2 > 1 ? amp2 : 1));
            ev->since[f]++;
            ev->stale[f] = ev->lost[f] > ERROR_MAX || ev->since[f] >= UPDATES_MAX || asymmetry(ev, M) > ASYM_MAX;
            if (s) {
#pragma omp critical(design_accept)
                if (!st) st = s;
            }
        }
    }
    if (!st) {
        for (int q = 0; q < r; q++) ev->active[ev->jset[q]] ^= 1;
        for (int t = 0; t < npix; t++) ev->map[pix[t]] ^= 1;
        st = rebuild_stale(ev, team);
    }
    sv_threads_restore(th);
    free(g);
    return st;
}
