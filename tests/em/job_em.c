#include "job_em.h"

#include <stdio.h>
#include <string.h>

#include "sv_test.h"

void em_test_job_options(sv_planar_options *o, int nf, const double *f)
{
    sv_planar_options_default(o);
    o->freq_hz = f;
    o->nfreq = nf;
    o->device = SV_PLANAR_DEVICE_CPU;
}

void em_test_job_s(const sv_em_project *p, const sv_planar_options *o, double complex *S)
{
    sv_planar_job *job = NULL;
    sv_status s = sv_planar_job_create(NULL, p, o, &job);
    if (!s) s = sv_planar_job_run(job);
    if (s) fprintf(stderr, "planar job: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    assert_true(r.converged);
    assert_true(r.checks.max_singular <= 1 + 1e-9 && r.checks.reciprocity <= 1e-9);
    const sv_planar_network *net = sv_planar_job_network(job);
    memcpy(S, net->s, sizeof *S * (size_t)net->nf * net->p * net->p);
    sv_planar_job_destroy(job);
}
