/* From the solves' port admittances to the network a job delivers: the
 * calibrated ports' error boxes removed, S with the reciprocity and
 * passivity checks, Y and Z on request, and the DC point from the model's
 * DC limit. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "planar_internal.h"

static size_t block(const sv_planar_job *j) { return (size_t)j->p * (size_t)j->p; }

/* An array of nf blocks, zero-filled, or NULL when not wanted. */
static sv_status blocks(sv_planar_job *j, int wanted, double complex **out, const char *what)
{
    *out = NULL;
    if (!wanted) return SV_OK;
    *out = sv_calloc(j->ctx, (size_t)j->nf * block(j), sizeof(double complex), what);
    return *out ? SV_OK : sv_last_status();
}

/* A batch's shared calibration when it fits this job's model (else NULL). */
static const sv_em_calibration *shared_calibration(sv_planar_job *j, int nf)
{
    planar_cal_share *sh = j->cal_share;
    if (!sh) return NULL;
    pthread_mutex_lock(&sh->lock);
    const sv_em_calibration *c = sh->cal;
    pthread_mutex_unlock(&sh->lock);
    return sv_em_calibration_fits(c, j->em, nf, j->freq + j->dc) ? c : NULL;
}

/* The job's own calibration offered to its batch, which keeps the first. */
static void offer_calibration(sv_planar_job *j)
{
    planar_cal_share *sh = j->cal_share;
    if (!sh) return;
    pthread_mutex_lock(&sh->lock);
    if (!sh->cal) {
        sh->cal = j->cal;
        j->cal = NULL;
    }
    pthread_mutex_unlock(&sh->lock);
}

sv_status planar_calibrate(sv_planar_job *j)
{
    int nf = j->nf - j->dc;
    if (!sv_em_project_calibrated(j->prj) || nf == 0) return SV_OK;
    double t0 = sv_time_now();
    /* at the solved frequencies (at DC an edge port's box is the identity) */
    sv_status s = sv_progress(j->ctx, "port calibration", 0);
    const sv_em_calibration *cal = shared_calibration(j, nf);
    if (!s && !cal) {
        s = sv_em_calibration_create(j->ctx, j->em, nf, j->freq + j->dc, &j->cal);
        cal = j->cal;
        if (!s) offer_calibration(j);
    }
    for (int i = 0; i < nf && !s; i++) s = sv_em_calibration_apply(cal, i, j->res->h + (size_t)i * block(j));
    j->rep.seconds_calibration = sv_time_now() - t0;
    return s;
}

static sv_status allocate(sv_planar_job *j)
{
    unsigned o = j->o.outputs;
    sv_status s = blocks(j, 1, &j->s, "S-parameters");
    if (!s) s = blocks(j, o & (SV_PLANAR_OUTPUT_Y | SV_PLANAR_OUTPUT_Z), &j->y, "Y-parameters");
    if (!s) s = blocks(j, o & SV_PLANAR_OUTPUT_Z, &j->z, "Z-parameters");
    if (s) return s;
    j->z0 = sv_alloc(j->ctx, sizeof(double) * (size_t)j->p, "reference impedances");
    j->names = sv_alloc(j->ctx, sizeof(char *) * (size_t)j->p, "port names");
    j->exact = sv_calloc(j->ctx, (size_t)j->nf, 2, "exact and fallback flags");
    if (!j->z0 || !j->names || !j->exact) return sv_last_status();
    j->fallback = j->exact + j->nf;
    for (int k = 0; k < j->p; k++) {
        j->z0[k] = sv_em_project_port_z0(j->prj, k);
        j->names[k] = sv_em_project_port_name(j->prj, k);
    }
    return SV_OK;
}

/* ‖A‖∞ of a p × p block. */
static double norm_inf(int p, const double complex *a)
{
    double most = 0;
    for (int r = 0; r < p; r++) {
        double row = 0;
        for (int c = 0; c < p; c++) row += cabs(a[r + (size_t)p * c]);
        most = fmax(most, row);
    }
    return most;
}

/* Z = Y⁻¹; NAN where Y does not exist or is singular to working precision
 * (κ∞ > 1e12: at DC the ports of one piece of metal are joined by a
 * resistor network with no path to ground, so Z does not exist). */
#define SINGULAR_CONDITION 1e12
static sv_status impedances(sv_planar_job *j, const double complex *y, double complex *z)
{
    sv_status s = SV_ERR_SINGULAR;
    int exists = 1;
    for (size_t e = 0; e < block(j); e++) exists &= !isnan(creal(y[e]));
    if (exists) s = sv_em_y_to_z(j->p, y, z);
    if (!s && norm_inf(j->p, y) * norm_inf(j->p, z) <= SINGULAR_CONDITION) return SV_OK;
    if (s && s != SV_ERR_SINGULAR) return s;
    sv_clear_error();
    for (size_t e = 0; e < block(j); e++) z[e] = NAN;
    return SV_OK;
}

/* Y at DC: the metal's resistor network where it is lossy (a lossless
 * metal's connected ports are shorted: Y does not exist, NAN). */
static sv_status dc_admittance(sv_planar_job *j, double complex *y)
{
    if (!j->rep.lossy_metal) {
        for (size_t e = 0; e < block(j); e++) y[e] = NAN;
        return SV_OK;
    }
    double *g = sv_alloc(j->ctx, sizeof(double) * block(j), "DC admittance");
    if (!g) return sv_last_status();
    sv_status s = sv_em_dc_admittance(j->ctx, j->em, g);
    for (size_t e = 0; e < block(j); e++) y[e] = g[e];
    sv_free(j->ctx, g);
    return s;
}

/* The DC point: S from the model's DC limit, with the same checks. */
static sv_status dc_point(sv_planar_job *j)
{
    double smax;
    j->exact[0] = 1;
    sv_status s = sv_em_dc_s(j->ctx, j->em, j->z0, j->s);
    if (!s) s = sv_em_max_singular_value(j->p, j->s, &smax);
    if (s) return s;
    j->rep.checks.reciprocity = fmax(j->rep.checks.reciprocity, sv_em_reciprocity_error(j->p, j->s));
    j->rep.checks.max_singular = fmax(j->rep.checks.max_singular, smax);
    if (j->y) s = dc_admittance(j, j->y);
    if (!s && j->y_raw) s = dc_admittance(j, j->y_raw);
    if (!s && j->z) s = impedances(j, j->y, j->z);
    return s;
}

sv_status planar_keep_raw(sv_planar_job *j)
{
    int nf = j->nf - j->dc;
    sv_status s = blocks(j, j->o.outputs & SV_PLANAR_OUTPUT_Y_RAW, &j->y_raw, "raw ports' Y-parameters");
    if (!s && j->y_raw && nf > 0)
        memcpy(j->y_raw + (size_t)j->dc * block(j), j->res->h, sizeof *j->y_raw * (size_t)nf * block(j));
    return s;
}

/* S at the non-DC frequencies with the checks, a refusal naming its
 * frequency (a near short's rounding, sv_em_y_to_s). */
static sv_status network_s(sv_planar_job *j, int nf, const double complex *y, double complex *s_out)
{
    size_t pp = block(j);
    for (int i = 0; i < nf; i++) {
        sv_em_s_checks checks;
        sv_status s = sv_em_y_to_s_all(j->p, 1, y + i * pp, j->z0, s_out + i * pp, &checks);
        if (s) {
            char why[768];
            snprintf(why, sizeof why, "%s", sv_last_error());
            return sv_error(s, "at %.6g Hz: %s", j->freq[j->dc + i], why);
        }
        j->rep.checks.reciprocity = fmax(j->rep.checks.reciprocity, checks.reciprocity);
        j->rep.checks.max_singular = fmax(j->rep.checks.max_singular, checks.max_singular);
    }
    return SV_OK;
}

sv_status planar_network(sv_planar_job *j)
{
    sv_status s = allocate(j);
    if (s) return s;
    int nf = j->nf - j->dc;
    size_t pp = block(j), off = (size_t)j->dc * pp;
    if (nf > 0) {
        const sv_sweep_result *r = j->res;
        s = network_s(j, nf, r->h, j->s + off);
        memcpy(j->exact + j->dc, r->exact, (size_t)nf);
        memcpy(j->fallback + j->dc, r->fallback, (size_t)nf);
        if (!s && j->y) memcpy(j->y + off, r->h, sizeof *j->y * (size_t)nf * pp);
        for (int i = 0; i < nf && !s && j->z; i++) s = impedances(j, r->h + (size_t)i * pp, j->z + off + (size_t)i * pp);
    }
    if (!s && j->dc) s = dc_point(j);
    return s;
}

void planar_network_free(sv_planar_job *j)
{
    sv_free_each(j->ctx, (void *const[]){j->s, j->y, j->z, j->y_raw, j->z0, j->names, j->exact}, 7);
    j->s = j->y = j->z = j->y_raw = NULL;
    j->z0 = NULL;
    j->names = NULL;
    j->exact = j->fallback = NULL;
}
