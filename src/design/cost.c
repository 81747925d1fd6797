/* The design's cost: per mask the weighted one-sided RMS violation in dB
 * over the design frequencies inside its band, summed (docs/design.md,
 * "Cost"). The one place that turns S into a number to minimise. */
#include <math.h>

#include "solvent/design.h"

/* |S| = 0 counts as this many dB: far below any bound, finite. */
#define FLOOR_DB (-600.0)

static double level_db(double complex s)
{
    double a = cabs(s);
    return a > 0 ? fmax(20 * log10(a), FLOOR_DB) : FLOOR_DB;
}

static int inside(const sv_design_mask *m, double f)
{
    /* the band's ends belong to it, with the rounding of a frequency
     * computed from another unit */
    double tol = 1e-12 * fmax(fabs(m->start_hz), fabs(m->stop_hz));
    return f >= m->start_hz - tol && f <= m->stop_hz + tol;
}

static double mask_cost(const sv_design_mask *m, int nf, const double *freq_hz, int p, const double complex *s)
{
    double sum = 0;
    int n = 0;
    for (int f = 0; f < nf; f++) {
        if (!inside(m, freq_hz[f])) continue;
        double v = level_db(s[(size_t)f * p * p + m->out + (size_t)m->in * p]);
        double e = m->sense == SV_DESIGN_MAX ? v - m->bound_db : m->bound_db - v;
        if (e > 0) sum += e * e;
        n++;
    }
    double w = m->weight > 0 ? m->weight : 1;
    return n ? w * sqrt(sum / n) : 0;
}

sv_status sv_design_cost(int nmasks, const sv_design_mask *masks, int nf, const double *freq_hz, int p,
                         const double complex *s, double *cost)
{
    if (!cost || (nmasks > 0 && (!masks || !freq_hz || !s)) || nmasks < 0 || nf < 0 || p < 1)
        return sv_error(SV_ERR_ARG, "sv_design_cost: NULL argument or negative count");
    double total = 0;
    for (int k = 0; k < nmasks; k++) {
        const sv_design_mask *m = &masks[k];
        if (m->out < 0 || m->out >= p || m->in < 0 || m->in >= p)
            return sv_error(SV_ERR_ARG, "sv_design_cost: mask %d names S%d%d: the network has %d ports", k, m->out + 1,
                            m->in + 1, p);
        total += mask_cost(m, nf, freq_hz, p, s);
    }
    *cost = total;
    return SV_OK;
}
