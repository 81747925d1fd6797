/* The frequencies a job delivers: a list given by the caller, or a band
 * (the caller's fields over the project's sweep section), starting at DC
 * when asked; DC comes from the model's DC limit, everything above from
 * the solves. */
#include <float.h>
#include <math.h>

#include "planar_internal.h"

/* Frequency i: 0 (DC), or from the lowest a solve takes to the highest. */
static sv_status check_one(const double *f, int i)
{
    if (!isfinite(f[i]) || f[i] < 0 || f[i] > SV_EM_MAX_FREQ_HZ)
        return sv_error(SV_ERR_ARG, "frequency %d = %g Hz: expected 0 to %g Hz", i, f[i], SV_EM_MAX_FREQ_HZ);
    if (f[i] > 0 && f[i] < SV_EM_MIN_FREQ_HZ)
        return sv_error(SV_ERR_ARG, "frequency %d = %g Hz: expected 0 (DC) or %g Hz and above: below that, S is "
                                    "the DC limit to double precision (use 0)",
                        i, f[i], SV_EM_MIN_FREQ_HZ);
    return SV_OK;
}

static sv_status check_list(const double *f, int nf)
{
    for (int i = 0; i < nf; i++) {
        sv_status s = check_one(f, i);
        if (s) return s;
        if (i > 0 && !(f[i] > f[i - 1]))
            return sv_error(SV_ERR_ARG, "frequency %d = %g Hz after %g Hz: expected ascending, distinct frequencies",
                            i, f[i], f[i - 1]);
    }
    return SV_OK;
}

/* The tolerance of the adaptive sweep for a list: the caller's, else the
 * project's, else the default (sv_em_project_band resolves it so). */
static sv_status list_tolerance(const sv_planar_job *j, double *tol)
{
    sv_em_sweep given = {.start_hz = 1, .stop_hz = 1, .points = 1, .tolerance = j->o.band.tolerance}, band;
    sv_status s = sv_em_project_band(j->prj, &given, &band);
    *tol = band.tolerance;
    return s;
}

static sv_status from_list(sv_planar_job *j)
{
    const sv_planar_options *o = &j->o;
    if (o->nfreq < 1) return sv_error(SV_ERR_ARG, "nfreq = %d with a list of frequencies: expected >= 1", o->nfreq);
    sv_status s = check_list(o->freq_hz, o->nfreq);
    if (!s) s = list_tolerance(j, &j->tolerance);
    if (s) return s;
    j->nf = o->nfreq;
    j->freq = sv_alloc(j->ctx, sizeof(double) * (size_t)j->nf, "the job's frequencies");
    if (!j->freq) return sv_last_status();
    for (int i = 0; i < j->nf; i++) j->freq[i] = o->freq_hz[i];
    return SV_OK;
}

static sv_status from_band(sv_planar_job *j)
{
    sv_em_sweep given = j->o.band, band;
    if (j->o.start_dc) given.start_hz = DBL_MIN; /* the least positive start, then set to 0 */
    sv_status s = sv_em_project_band(j->prj, &given, &band);
    if (s) return s;
    if (j->o.start_dc) band.start_hz = 0;
    j->nf = band.points;
    j->tolerance = band.tolerance;
    j->freq = sv_alloc(j->ctx, sizeof(double) * (size_t)j->nf, "the job's frequencies");
    if (!j->freq) return sv_last_status();
    s = sv_em_band_frequencies(&band, j->freq);
    for (int i = 0; !s && i < j->nf; i++) s = check_one(j->freq, i);
    return s;
}

sv_status planar_frequencies(sv_planar_job *j)
{
    sv_status s = j->o.freq_hz ? from_list(j) : from_band(j);
    if (s) return s;
    j->dc = j->freq[0] == 0;
    j->rep.nfreq = j->nf;
    j->rep.dc = j->dc;
    j->rep.start_hz = j->freq[0];
    j->rep.stop_hz = j->freq[j->nf - 1];
    j->rep.tolerance = j->tolerance;
    return SV_OK;
}
