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

/* A job that ran: its sweep converged, its S passive and reciprocal, copied to S. */
static void check_and_copy(const sv_planar_job *job, double complex *S)
{
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    assert_true(r.converged);
    assert_true(r.checks.max_singular <= 1 + 1e-9 && r.checks.reciprocity <= 1e-9);
    const sv_planar_network *net = sv_planar_job_network(job);
    memcpy(S, net->s, sizeof *S * (size_t)net->nf * net->p * net->p);
}

void em_test_job_s(const sv_em_project *p, const sv_planar_options *o, double complex *S)
{
    sv_planar_job *job = NULL;
    sv_status s = sv_planar_job_create(NULL, p, o, &job);
    if (!s) s = sv_planar_job_run(job);
    if (s) fprintf(stderr, "planar job: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    check_and_copy(job, S);
    sv_planar_job_destroy(job);
}

typedef struct batch_out {
    double complex *S;
    size_t block; /* entries of one map's S */
} batch_out;

static int keep_map(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    if (status) fprintf(stderr, "batch map %d: %s\n", k, message);
    assert_int_equal(status, SV_OK);
    batch_out *out = user;
    check_and_copy(job, out->S + out->block * (size_t)k);
    return 0;
}

void em_test_batch_s(const sv_em_project *board, const sv_planar_options *o, int nmaps,
                     const unsigned char *const *maps, double complex *S)
{
    sv_planar_batch_options bo;
    sv_planar_batch_options_default(&bo);
    bo.job = *o;
    sv_planar_batch *b = NULL;
    sv_status s = sv_planar_batch_create(NULL, board, &bo, &b);
    if (s) fprintf(stderr, "planar batch: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    int p = sv_em_project_ports(board);
    batch_out out = {S, (size_t)o->nfreq * p * p};
    assert_int_equal(sv_planar_batch_run(b, nmaps, maps, keep_map, &out), SV_OK);
    sv_planar_batch_destroy(b);
}
