#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_design.h"
#include "sv_test.h"

const design_board design_test_board = {
    13, 7, "none",
    "{\"thick_metal\": false, \"dielectric_loss\": \"exact\", \"radiation\": false, \"edge_profile\": false,"
    " \"edge_cells\": false}"};

int design_test_in_region(int c)
{
    int i = c % 13, j = c / 13;
    return i >= 4 && i <= 8 && j >= 1 && j <= 5;
}

char *design_test_project_text(const design_board *b, const unsigned char *map)
{
    size_t cap = 8192;
    char *t = malloc(cap);
    assert_non_null(t);
    int n = snprintf(t, cap,
                     "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
                     " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
                     " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": %d, \"ny\": %d}, \"pixels\": [",
                     b->nx, b->ny);
    for (int row = 0; row < b->ny; row++) {
        int j = b->ny - 1 - row;
        n += snprintf(t + n, cap - n, "%s\"", row ? ", " : "");
        for (int i = 0; i < b->nx; i++) t[n++] = map[i + b->nx * j] ? '#' : '.';
        n += snprintf(t + n, cap - n, "\"");
    }
    snprintf(t + n, cap - n,
             "], \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 40], \"calibration\": \"%s\"},"
             " {\"name\": \"P2\", \"side\": \"right\", \"x\": %d, \"y\": [16, 40], \"calibration\": \"%s\"}],"
             " \"effects\": %s}",
             b->calibration, 8 * b->nx, b->calibration, b->effects);
    return t;
}

sv_em_project *design_test_project(const design_board *b, const unsigned char *map)
{
    char *t = design_test_project_text(b, map);
    sv_em_project *p = NULL;
    sv_status st = sv_em_project_parse(NULL, t, strlen(t), "board", &p);
    if (st) fail_msg("board: %s", sv_last_error());
    free(t);
    return p;
}

void design_test_project_s(const sv_em_project *p, int nf, const double *f, double complex *s)
{
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = f;
    o.nfreq = nf;
    o.exact_all = 1;
    o.precision = SV_SWEEP_LAPACK;
    o.device = SV_PLANAR_DEVICE_CPU;
    sv_planar_job *job;
    if (sv_planar_job_create(NULL, p, &o, &job) || sv_planar_job_run(job)) fail_msg("fresh job: %s", sv_last_error());
    const sv_planar_network *net = sv_planar_job_network(job);
    memcpy(s, net->s, sizeof(double complex) * 4 * nf);
    sv_planar_job_destroy(job);
}

void design_test_fresh_s(const design_board *b, const unsigned char *map, int nf, const double *f, double complex *s)
{
    sv_em_project *p = design_test_project(b, map);
    design_test_project_s(p, nf, f, s);
    sv_em_project_destroy(p);
}

double design_test_maxdiff(int n, const double complex *a, const double complex *b)
{
    double d = 0;
    for (int k = 0; k < n; k++) d = fmax(d, cabs(a[k] - b[k]));
    return d;
}
