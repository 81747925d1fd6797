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
 * (docs/em.md, "Momentum's ports").
 *
 * The circuits share the board (grid, stack-up, ports, band), so each port
 * kind is one batch over the 258 maps (sv_planar_batch): the board's
 * tables and the ports' calibration are made once, and each map's S is
 * its own planar job's. Labelled slow. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/planar.h"
#include "sv_test.h"

enum { NROW = 11, NCOL = 35, MAXS = 400 };
static const double F = 0.5e9, Z0 = 50, PI = 3.14159265358979323846;

typedef struct sample {
    int sim, dc;
    char rows[NROW][NCOL + 1];
    double complex s11, s21, s22;
} sample;

static int read_samples(sample *s)
{
    char *text = sv_test_slurp("tests/em/data/momentum/lf_sample.tsv");
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

/* The Momentum test's project (tests/em/test_momentum.c: h 30 mil, εr 4.5, tan δ
 * 0.01, copper 2.8 mil thick, 8-mil pixels, 50 Ω edge ports across the
 * 56-mil launches) with every default effect, at 0.5 GHz alone: the board
 * of a batch (its pixels, the first circuit's, are replaced by each map). */
static sv_em_project *board(const sample *s, const char *calibration)
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
             " {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72], \"calibration\": \"%s\"}],"
             " \"sweep\": {\"start\": %.17g, \"stop\": %.17g, \"points\": 1}}",
             calibration, calibration, F, F);
    sv_em_project *p = NULL;
    sv_status st = sv_em_project_parse(NULL, json, strlen(json), "board", &p);
    if (st) fprintf(stderr, "board: %s\n", sv_last_error());
    assert_int_equal(st, SV_OK);
    return p;
}

/* A sample's map on the board's grid: map[i + nx·j], j = 0 the bottom
 * row (the file's rows are top first, as a project's pixels). */
static unsigned char *sample_map(const sample *s)
{
    unsigned char *map = malloc(NROW * NCOL);
    assert_non_null(map);
    for (int r = 0; r < NROW; r++)
        for (int i = 0; i < NCOL; i++) map[i + NCOL * (NROW - 1 - r)] = s->rows[r][i] == '#';
    return map;
}

/* S (S11, S21, S12, S22) of each map, in the map's place. */
static int keep_s(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    if (status) fprintf(stderr, "circuit %d: %s\n", k, message);
    assert_int_equal(status, SV_OK);
    const sv_planar_network *net = sv_planar_job_network(job);
    assert_true(net->nf == 1 && net->p == 2);
    memcpy((double complex *)user + 4 * k, net->s, sizeof(double complex) * 4);
    return 0;
}

/* Every map's S at F with the board's ports under `calibration`. */
static void batch_s(const sample *s, int n, unsigned char *const *maps, const char *calibration, double complex *S)
{
    sv_em_project *b = board(&s[0], calibration);
    sv_planar_batch *batch = NULL;
    assert_int_equal(sv_planar_batch_create(NULL, b, NULL, &batch), SV_OK);
    assert_int_equal(sv_planar_batch_run(batch, n, (const unsigned char *const *)maps, keep_s, S), SV_OK);
    sv_planar_batch_destroy(batch);
    sv_em_project_destroy(b);
}

/* A port's capacitance (open circuits) from its reflection's phase, and a
 * through path's series inductance from Im S11 ≈ ω·L/(2·Z0). */
static double port_c(double complex s) { return -tan(carg(s) / 2) / (2 * PI * F * Z0); }
static double path_l(double complex s) { return 2 * Z0 * cimag(s) / (2 * PI * F); }

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
     * so one calibration (the batch's, made by the first map solved)
     * serves them all: a map's calibrated S is sv_em_calibration_apply's
     * on its raw Y (to 1e-11). */
    static unsigned char *maps[MAXS];
    static double complex Sr[4 * MAXS], Sc[4 * MAXS];
    for (int i = 0; i < n; i++) maps[i] = sample_map(&s[i]);
    batch_s(s, n, maps, "none", Sr);
    batch_s(s, n, maps, "thru", Sc);
    static double rel_raw[2 * MAXS], box[2 * MAXS], cc[2 * MAXS], dcm[2 * MAXS], lraw[2 * MAXS], lcal[2 * MAXS];
    int no = 0, nd = 0;
    for (int i = 0; i < n; i++) {
        const double complex *r = Sr + 4 * i, *c = Sc + 4 * i;
        const double complex mom[2] = {s[i].s11, s[i].s22}, raw[2] = {r[0], r[3]}, calib[2] = {c[0], c[3]};
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
    for (int i = 0; i < n; i++) free(maps[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_momentum_ports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
