/* Two handles in two threads never interfere (ARCHITECTURE.md): sweeps and
 * direct solves run concurrently in threads of the program's own give
 * bit-identical results to the same calls run one after the other, with
 * default threads, one thread each, and a mix of the two; and afterwards
 * OpenBLAS's process-wide thread count and the caller's OpenMP count are
 * what they were before. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/em.h"
#include "solvent/sweep.h"
#include "sv_test.h"

/* OpenBLAS's own API (as src/core/threads.c declares it). */
int openblas_get_num_threads(void);

#define NF 11
#define ROUNDS 3

/* One job: a sweep over NF points of one example and a direct solve at one
 * frequency of another, with the given thread count in the context. */
typedef struct job {
    const char *sweep_name, *solve_name;
    int threads;
    const sv_sweep_model *sweep_model;
    const sv_em_affine *solve_model;
    double f[NF], fsolve;
    int p_sweep, p_solve;
    double complex *h; /* NF · p_sweep² */
    double complex *y; /* p_solve² */
    sv_status st;
    char msg[256];
} job;

typedef struct example {
    sv_em_project *prj;
    sv_em_model *em;
    sv_em_affine *a;
    sv_em_sweep sw;
} example;

static void example_open(example *x, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, name);
    assert_int_equal(sv_em_project_read(NULL, path, &x->prj), SV_OK);
    assert_int_equal(sv_em_model_create(NULL, x->prj, NULL, &x->em), SV_OK);
    assert_int_equal(sv_em_affine_create(NULL, x->em, &x->a), SV_OK);
    sv_em_project_sweep(x->prj, &x->sw);
}

static void example_close(example *x)
{
    sv_em_affine_destroy(x->a);
    sv_em_model_destroy(x->em);
    sv_em_project_destroy(x->prj);
}

static void job_init(job *j, const example *sweep, const example *solve, int threads)
{
    memset(j, 0, sizeof *j);
    j->threads = threads;
    j->sweep_model = sv_em_affine_model(sweep->a);
    j->solve_model = solve->a;
    j->p_sweep = sv_em_model_ports(sweep->em);
    j->p_solve = sv_em_model_ports(solve->em);
    for (int i = 0; i < NF; i++)
        j->f[i] = sweep->sw.start_hz + (sweep->sw.stop_hz - sweep->sw.start_hz) * i / (NF - 1);
    j->fsolve = 0.5 * (solve->sw.start_hz + solve->sw.stop_hz);
    j->h = calloc((size_t)NF * j->p_sweep * j->p_sweep, sizeof *j->h);
    j->y = calloc((size_t)j->p_solve * j->p_solve, sizeof *j->y);
}

static void job_free(job *j)
{
    free(j->h);
    free(j->y);
}

static void *job_run(void *arg)
{
    job *j = arg;
    sv_ctx *ctx;
    j->st = sv_ctx_create(&ctx);
    if (j->st == SV_OK) j->st = sv_ctx_set_threads(ctx, j->threads);
    sv_sweep_result *r = NULL;
    if (j->st == SV_OK) j->st = sv_sweep_run(ctx, j->sweep_model, NF, j->f, NULL, &r);
    if (j->st == SV_OK) memcpy(j->h, r->h, sizeof *j->h * (size_t)NF * j->p_sweep * j->p_sweep);
    sv_sweep_result_destroy(r);
    if (j->st == SV_OK) j->st = sv_em_solve(ctx, j->solve_model, j->fsolve, j->y);
    if (j->st != SV_OK) snprintf(j->msg, sizeof j->msg, "%s", sv_last_error());
    sv_ctx_destroy(ctx);
    return NULL;
}

/* Bit for bit: the concurrent run against the serial reference. */
static int same(const job *a, const job *b)
{
    return !memcmp(a->h, b->h, sizeof *a->h * (size_t)NF * a->p_sweep * a->p_sweep) &&
           !memcmp(a->y, b->y, sizeof *a->y * (size_t)a->p_solve * a->p_solve);
}

static double max_diff(const job *a, const job *b)
{
    double d = 0;
    for (size_t e = 0; e < (size_t)NF * a->p_sweep * a->p_sweep; e++) d = fmax(d, cabs(a->h[e] - b->h[e]));
    for (size_t e = 0; e < (size_t)a->p_solve * a->p_solve; e++) d = fmax(d, cabs(a->y[e] - b->y[e]));
    return d;
}

/* Each job has handles of its own: a sweep of the stub and a direct solve of
 * the pixelated example (2042 unknowns: the factorisation and the products
 * run on thread teams). */
static example ex_stub[2], ex_pixel[2];

/* Serial references, then ROUNDS rounds of the two jobs in two threads. */
static void run_pair(int threads1, int threads2)
{
    int blas0 = openblas_get_num_threads(), omp0 = omp_get_max_threads();
    job ref[2], con[2];
    job_init(&ref[0], &ex_stub[0], &ex_pixel[0], threads1);
    job_init(&ref[1], &ex_stub[1], &ex_pixel[1], threads2);
    for (int k = 0; k < 2; k++) {
        job_run(&ref[k]);
        if (ref[k].st != SV_OK) print_error("reference %d: %s\n", k, ref[k].msg);
        assert_int_equal(ref[k].st, SV_OK);
    }
    int differ = 0;
    double worst = 0;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t th[2];
        for (int k = 0; k < 2; k++) {
            job_init(&con[k], &ex_stub[k], &ex_pixel[k], k ? threads2 : threads1);
            assert_int_equal(pthread_create(&th[k], NULL, job_run, &con[k]), 0);
        }
        for (int k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
        for (int k = 0; k < 2; k++) {
            if (con[k].st != SV_OK) print_error("round %d, job %d: %s\n", round, k, con[k].msg);
            assert_int_equal(con[k].st, SV_OK);
            if (!same(&con[k], &ref[k])) differ++;
            worst = fmax(worst, max_diff(&con[k], &ref[k]));
            job_free(&con[k]);
        }
    }
    print_message("threads %d and %d: %d of %d concurrent runs differ from the serial ones (max %.3g)\n", threads1,
                  threads2, differ, 2 * ROUNDS, worst);
    assert_int_equal(differ, 0);
    assert_int_equal(openblas_get_num_threads(), blas0);
    assert_int_equal(omp_get_max_threads(), omp0);
    for (int k = 0; k < 2; k++) job_free(&ref[k]);
}


static int setup(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        example_open(&ex_stub[k], "stub.json");
        example_open(&ex_pixel[k], "pixel2port.json");
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        example_close(&ex_stub[k]);
        example_close(&ex_pixel[k]);
    }
    return 0;
}

static void test_default_threads(void **state)
{
    (void)state;
    run_pair(0, 0);
}

static void test_one_thread_each(void **state)
{
    (void)state;
    run_pair(1, 1);
}

static void test_mixed_threads(void **state)
{
    (void)state;
    run_pair(1, 0);
    run_pair(2, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_threads),
        cmocka_unit_test(test_one_thread_each),
        cmocka_unit_test(test_mixed_threads),
    };
    return cmocka_run_group_tests_name("threads", tests, setup, teardown);
}
