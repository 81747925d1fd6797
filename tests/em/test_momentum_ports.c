/* What Momentum's ports are, from the whole dataset rather than eight
 * circuits: tests/em/data/momentum/lf_sample.tsv holds every 4th of the
 * dataset's 1032 circuits (258: 187 capacitively coupled, 71
 * DC-connected) with Momentum's S at 0.5 GHz. Each is solved with the
 * Momentum test's stack-up and every default effect, its ports raw and
 * calibrated (test_calibration.c checks the calibration against closed
 * forms: it removes exactly one open end, the strip's end where the raw
 * port sits).
 *
 * At 0.5 GHz an open circuit's port is a capacitance, C = −tan(∠S11/2)/(ω·Z0).
 * Momentum's is within a few per cent of Solvent's raw port in every open
 * circuit, and above the calibrated port by a constant: regressed on the
 * calibrated capacitance, Momentum − calibrated = a + b·C_cal with a about
 * one raw port's box and b small, whatever the circuit holds behind the
 * port. The DC-connected circuits' series inductance from Im S11 points
 * the same way. So Momentum's ports keep the edge port's discontinuity:
 * the dataset's S are those of raw edge ports, not of de-embedded ones
 * (docs/em.md, "Momentum's ports"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

enum { NROW = 11, NCOL = 35, MAXS = 400 };
static const double F = 0.5e9, Z0 = 50;

typedef struct sample {
    int sim, dc;
    char rows[NROW][NCOL + 1];
    double complex s11, s21, s22;
} sample;

static int read_samples(sample *s)
{
    char *text = em_test_slurp("tests/em/data/momentum/lf_sample.tsv");
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        assert_true(n < MAXS);
        char map[NROW * (NCOL + 1) + 8];
        double v[6];
        assert_int_equal(sscanf(line, "%d %d %400s %lf %lf %lf %lf %lf %lf", &s[n].sim, &s[n].dc, map, &v[0], &v[1],
                                &v[2], &v[3], &v[4], &v[5]),
                         9);
        assert_int_equal((int)strlen(map), NROW * (NCOL + 1) - 1);
        for (int r = 0; r < NROW; r++) {
            memcpy(s[n].rows[r], map + r * (NCOL + 1), NCOL);
            s[n].rows[r][NCOL] = 0;
        }
        s[n].s11 = v[0] + I * v[1];
        s[n].s21 = v[2] + I * v[3];
        s[n].s22 = v[4] + I * v[5];
        n++;
    }
    free(text);
    return n;
}

/* The Momentum test's project (test_momentum.c: h 30 mil, εr 4.5, tan δ
 * 0.01, copper 2.8 mil thick, 8-mil pixels, 50 Ω edge ports across the
 * 56-mil launches) with its pixels inline, every default effect, opened. */
static void sample_open(em_test_case *c, const sample *s, const char *calibration)
{
    char json[8192];
    int k = snprintf(json, sizeof json,
                     "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
                     " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
                     " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": %d, \"ny\": %d}, \"pixels\": [",
                     NCOL, NROW);
    for (int r = 0; r < NROW; r++) k += snprintf(json + k, sizeof json - (size_t)k, "%s\"%s\"", r ? ", " : "", s->rows[r]);
    snprintf(json + k, sizeof json - (size_t)k,
             "], \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72], \"calibration\": \"%s\"},"
             " {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72], \"calibration\": \"%s\"}]}",
             calibration, calibration);
    em_test_case_open(c, json);
}

/* A port's capacitance (open circuits) from its reflection's phase, and a
 * through path's series inductance from Im S11 ≈ ω·L/(2·Z0). */
static double port_c(double complex s) { return -tan(carg(s) / 2) / (2 * SV_EM_PI * F * Z0); }
static double path_l(double complex s) { return 2 * Z0 * cimag(s) / (2 * SV_EM_PI * F); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* Sorts v in place: take quantiles of cc only after the regression, which pairs it with dcm. */
static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(q * (n - 1) + 0.5)];
}

static void test_momentum_ports(void **state)
{
    (void)state;
    static sample s[MAXS];
    int n = read_samples(s);
    assert_true(n >= 200);
    /* Every circuit has the same two feeds on the same grid and stack-up,
     * so one calibration (made on the first circuit) serves them all. */
    em_test_case c0;
    sample_open(&c0, &s[0], "thru");
    sv_em_calibration *cal;
    assert_int_equal(sv_em_calibration_create(NULL, c0.m, 1, &F, &cal), SV_OK);
    static double rel_raw[2 * MAXS], box[2 * MAXS], cc[2 * MAXS], dcm[2 * MAXS], lraw[2 * MAXS], lcal[2 * MAXS];
    int no = 0, nd = 0;
    const double z0[2] = {Z0, Z0};
    for (int i = 0; i < n; i++) {
        double complex Y[4], Sr[4], Sc[4];
        em_test_case c;
        sample_open(&c, &s[i], "none");
        assert_int_equal(sv_em_solve(NULL, c.a, F, Y), SV_OK);
        em_test_case_close(&c);
        assert_int_equal(sv_em_y_to_s(2, Y, z0, Sr), SV_OK);
        assert_int_equal(sv_em_calibration_apply(cal, 0, Y), SV_OK);
        assert_int_equal(sv_em_y_to_s(2, Y, z0, Sc), SV_OK);
        const double complex mom[2] = {s[i].s11, s[i].s22}, raw[2] = {Sr[0], Sr[3]}, calib[2] = {Sc[0], Sc[3]};
        for (int q = 0; q < 2; q++) {
            if (!s[i].dc) {
                double cm = port_c(mom[q]), cr = port_c(raw[q]), ca = port_c(calib[q]);
                rel_raw[no] = fabs(cr / cm - 1);
                box[no] = cr - ca;
                cc[no] = ca;
                dcm[no] = cm - ca;
                no++;
            } else {
                double lm = path_l(mom[q]);
                lraw[nd] = fabs(path_l(raw[q]) - lm);
                lcal[nd] = fabs(path_l(calib[q]) - lm);
                nd++;
            }
        }
    }
    /* Momentum − calibrated = a + b·C_cal by least squares */
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    for (int k = 0; k < no; k++) mx += cc[k] / no, my += dcm[k] / no;
    for (int k = 0; k < no; k++) sxy += (cc[k] - mx) * (dcm[k] - my), sxx += (cc[k] - mx) * (cc[k] - mx);
    const double b = sxy / sxx, a = my - b * mx;
    const double raw_med = quantile(rel_raw, no, 0.5), raw_p90 = quantile(rel_raw, no, 0.9);
    const double box_med = quantile(box, no, 0.5), lraw_med = quantile(lraw, nd, 0.5), lcal_med = quantile(lcal, nd, 0.5);
    printf("%d circuits at %.1f GHz; %d ports of open circuits (C_cal %.0f-%.0f fF):\n"
           "  |C_raw / C_Momentum - 1|: median %.2f %%, 90th percentile %.2f %%\n"
           "  raw - calibrated (the raw port's box): median %.1f fF\n"
           "  Momentum - calibrated = a + b*C_cal: a %.1f fF (%.2f boxes), b %.4f\n"
           "%d ports of DC-connected circuits: |L_raw - L_Momentum| median %.0f pH, |L_cal - L_Momentum| %.0f pH\n",
           n, F / 1e9, no, quantile(cc, no, 0) * 1e15, quantile(cc, no, 1) * 1e15, 100 * raw_med, 100 * raw_p90,
           box_med * 1e15, a * 1e15, a / box_med, b, nd, lraw_med * 1e12, lcal_med * 1e12);
    assert_true(no >= 300 && nd >= 100);
    assert_true(raw_med <= 0.03 && raw_p90 <= 0.05);
    assert_true(fabs(a / box_med - 1) <= 0.25 && fabs(b) <= 0.05);
    assert_true(lraw_med < 0.6 * lcal_med);
    sv_em_calibration_destroy(cal);
    em_test_case_close(&c0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_momentum_ports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
