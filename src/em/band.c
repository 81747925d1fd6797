/* The band a sweep covers: the caller's values over the project's sweep
 * section, and its evenly spaced frequencies. */
#include <math.h>

#include "em_internal.h"

sv_status sv_em_project_band(const sv_em_project *p, const sv_em_sweep *given, sv_em_sweep *out)
{
    if (!p || !out) return sv_error(SV_ERR_ARG, "sv_em_project_band: NULL argument");
    const sv_em_sweep none = {0}, *g = given ? given : &none, *ps = &p->sweep;
    sv_em_sweep b = {0};
    b.start_hz = g->start_hz > 0 ? g->start_hz : ps->present ? ps->start_hz : 0;
    b.stop_hz = g->stop_hz > 0 ? g->stop_hz : ps->present ? ps->stop_hz : 0;
    b.points = g->points > 0 ? g->points : ps->present ? ps->points : 0;
    b.tolerance = g->tolerance > 0                          ? g->tolerance
                  : ps->present && ps->tolerance > 0 ? ps->tolerance
                                                             : SV_EM_DEFAULT_TOLERANCE;
    int have_start = g->start_hz > 0 || ps->present; /* a project's band may start at DC */
    if (!have_start || !(b.start_hz >= 0) || !(b.stop_hz > 0) || b.points < 1)
        return sv_error(SV_ERR_ARG,
                        "no \"sweep\" section and no full band given (start %g Hz, stop %g Hz, points %d): "
                        "expected start >= 0, stop > 0 and points >= 1",
                        b.start_hz, b.stop_hz, b.points);
    if (b.start_hz > SV_EM_MAX_FREQ_HZ || b.stop_hz > SV_EM_MAX_FREQ_HZ)
        return sv_error(SV_ERR_ARG, "start %g Hz, stop %g Hz: expected at most %g Hz", b.start_hz, b.stop_hz,
                        SV_EM_MAX_FREQ_HZ);
    if (!(b.tolerance <= SV_SWEEP_TOLERANCE_MAX))
        return sv_error(SV_ERR_ARG, "tolerance %g: expected at most %g", b.tolerance, SV_SWEEP_TOLERANCE_MAX);
    if (b.stop_hz < b.start_hz)
        return sv_error(SV_ERR_ARG, "stop %g Hz is below start %g Hz", b.stop_hz, b.start_hz);
    /* distinct points only: a band of one frequency is one point */
    if (b.points > 1 && b.stop_hz == b.start_hz)
        return sv_error(SV_ERR_ARG, "points = %d with start = stop = %g Hz: expected points = 1, or stop > start",
                        b.points, b.start_hz);
    if (b.points == 1) b.stop_hz = b.start_hz;
    b.present = 1;
    *out = b;
    return SV_OK;
}

sv_status sv_em_band_frequencies(const sv_em_sweep *band, double *freq_hz)
{
    if (!band || !freq_hz) return sv_error(SV_ERR_ARG, "sv_em_band_frequencies: NULL argument");
    int n = band->points;
    if (n < 1) return sv_error(SV_ERR_ARG, "sv_em_band_frequencies: points = %d: expected >= 1", n);
    double a = band->start_hz, b = band->stop_hz;
    for (int i = 0; i < n; i++) freq_hz[i] = n == 1 ? a : a + (b - a) * i / (n - 1);
    return SV_OK;
}
