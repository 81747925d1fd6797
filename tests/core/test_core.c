/* Core: status messages, per-thread last error, the budgeted allocator,
 * the context's settings and callbacks. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, umask */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/core.h"
#include "sv_test.h"

static void test_status_strings_distinct(void **state)
{
    (void)state;
    for (int a = SV_ERR_INTERNAL; a <= SV_OK; a++)
        for (int b = a + 1; b <= SV_OK; b++)
            assert_string_not_equal(sv_status_string((sv_status)a), sv_status_string((sv_status)b));
    assert_string_equal(sv_status_string((sv_status)-999), "unknown status");
}

static void test_last_error_roundtrip(void **state)
{
    (void)state;
    sv_clear_error();
    assert_int_equal(sv_last_status(), SV_OK);
    assert_string_equal(sv_last_error(), "");
    assert_int_equal(sv_error(SV_ERR_ARG, "n = %d: expected >= 0", -3), SV_ERR_ARG);
    assert_int_equal(sv_last_status(), SV_ERR_ARG);
    assert_string_equal(sv_last_error(), "n = -3: expected >= 0");
}

static void test_last_error_is_per_thread(void **state)
{
    (void)state;
    sv_clear_error();
    int other_saw_clean = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            sv_error(SV_ERR_IO, "thread one");
        }
#pragma omp barrier
        if (omp_get_thread_num() == 0 && omp_get_num_threads() == 2)
            other_saw_clean = sv_last_status() == SV_OK;
    }
    if (omp_get_max_threads() >= 2) assert_true(other_saw_clean);
}

static void test_budget_refuses_with_message(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, 1 << 20), SV_OK);
    void *a = sv_alloc(ctx, 600 * 1024, "first block");
    assert_non_null(a);
    assert_true(sv_ctx_memory_current(ctx) >= 600 * 1024);
    void *b = sv_alloc(ctx, 600 * 1024, "second block");
    assert_null(b);
    assert_int_equal(sv_last_status(), SV_ERR_BUDGET);
    assert_non_null(strstr(sv_last_error(), "second block"));
    assert_non_null(strstr(sv_last_error(), "memory limit"));
    assert_int_equal(sv_mem_check(ctx, 600 * 1024, "planned"), SV_ERR_BUDGET);
    assert_int_equal(sv_mem_check(ctx, 100 * 1024, "planned"), SV_OK);
    size_t peak = sv_ctx_memory_peak(ctx);
    sv_free(ctx, a);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    assert_int_equal(sv_ctx_memory_peak(ctx), peak);
    b = sv_alloc(ctx, 600 * 1024, "second block");
    assert_non_null(b);
    assert_int_equal((uintptr_t)b % 64, 0);
    sv_free(ctx, b);
    sv_ctx_reset_peak(ctx);
    assert_int_equal(sv_ctx_memory_peak(ctx), 0);
    sv_ctx_destroy(ctx);
}

static void test_calloc_zeroes_and_overflow(void **state)
{
    (void)state;
    double *x = sv_calloc(NULL, 1000, sizeof(double), "x");
    assert_non_null(x);
    for (int i = 0; i < 1000; i++) assert_true(x[i] == 0.0);
    sv_free(NULL, x);
    assert_null(sv_calloc(NULL, SIZE_MAX / 4, 8, "huge"));
    assert_int_equal(sv_last_status(), SV_ERR_ARG);
    size_t out;
    assert_int_equal(sv_size_mul(SIZE_MAX / 2, 3, &out), SV_ERR_ARG);
    assert_int_equal(sv_size_mul(1000, 1000, &out), SV_OK);
    assert_int_equal(out, 1000000);
}

static void test_concurrent_counting(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
#pragma omp parallel for num_threads(2)
    for (int i = 0; i < 2000; i++) {
        void *p = sv_alloc(ctx, 100 + (size_t)i, "block");
        sv_free(ctx, p);
    }
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    assert_true(sv_ctx_memory_peak(ctx) >= 100);
    sv_ctx_destroy(ctx);
}

typedef struct { int calls; sv_log_level last; char msg[64]; } log_rec;
static void rec_log(void *user, sv_log_level level, const char *m)
{
    log_rec *r = user;
    r->calls++;
    r->last = level;
    strncpy(r->msg, m, sizeof r->msg - 1);
}
static int stop_at_half(void *user, const char *phase, double f)
{
    (void)phase;
    ++*(int *)user;
    return f >= 0.5;
}

static void test_callbacks(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    log_rec r = {0};
    sv_log(ctx, SV_LOG_INFO, "ignored %d", 1); /* no callback yet */
    sv_ctx_set_log(ctx, rec_log, &r);
    sv_log(ctx, SV_LOG_WARN, "pivot %d small", 7);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.last, SV_LOG_WARN);
    assert_string_equal(r.msg, "pivot 7 small");
    int n = 0;
    sv_ctx_set_progress(ctx, stop_at_half, &n);
    assert_int_equal(sv_progress(ctx, "factor", 0.25), SV_OK);
    assert_int_equal(sv_progress(ctx, "factor", 0.5), SV_ERR_CANCELLED);
    assert_non_null(strstr(sv_last_error(), "factor"));
    assert_int_equal(n, 2);
    assert_int_equal(sv_progress(NULL, "x", 1.0), SV_OK);
    assert_int_equal(sv_ctx_set_threads(ctx, -1), SV_ERR_ARG);
    assert_int_equal(sv_ctx_set_threads(ctx, 1), SV_OK);
    assert_int_equal(sv_ctx_threads(ctx), 1);
    sv_threads_saved prev = sv_threads_apply(ctx);
    assert_int_equal(omp_get_max_threads(), 1);
    sv_threads_restore(prev);
    sv_ctx_destroy(ctx);
}

/* What a progress callback saw: every fraction, in order, and when to stop. */
typedef struct seen {
    double f[64];
    int n;
    double stop_at; /* ask to stop at the first fraction at or above it */
} seen;

static int record(void *user, const char *phase, double f)
{
    (void)phase;
    seen *s = user;
    if (s->n < 64) s->f[s->n++] = f;
    return f >= s->stop_at;
}

/* Spans map a step's fractions into its share of the whole, nest, never
 * let the callback's fraction fall, and keep a stop once asked for; a new
 * outermost span starts afresh. */
static void test_progress_spans(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    seen s = {.stop_at = 2};
    sv_ctx_set_progress(ctx, record, &s);
    sv_progress_span job = sv_progress_span_begin(ctx, 0, 1);
    sv_progress_span step = sv_progress_span_begin(ctx, 0.2, 0.6);
    assert_int_equal(sv_progress(ctx, "a", 0.5), SV_OK); /* 0.2 + 0.5·0.4 */
    sv_progress_span inner = sv_progress_span_begin(ctx, 0.5, 1.0);
    assert_int_equal(sv_progress(ctx, "b", 0.5), SV_OK); /* 0.2 + (0.5 + 0.25)·0.4 */
    assert_int_equal(sv_progress(ctx, "b", 0.0), SV_OK); /* would fall to 0.4: held at 0.5 */
    sv_progress_span_end(ctx, inner);
    sv_progress_span_end(ctx, step);
    assert_int_equal(sv_progress(ctx, "c", 1.0), SV_OK);
    sv_progress_span_end(ctx, job);
    assert_int_equal(s.n, 4);
    sv_assert_close(s.f[0], 0.4, 1e-15, 0);
    sv_assert_close(s.f[1], 0.5, 1e-15, 0);
    sv_assert_close(s.f[2], 0.5, 1e-15, 0);
    sv_assert_close(s.f[3], 1.0, 1e-15, 0);

    /* asked to stop: every later report of the operation is cancelled
     * without asking again, and the flag is there for other threads */
    s = (seen){.stop_at = 0.3};
    job = sv_progress_span_begin(ctx, 0, 1);
    assert_int_equal(sv_progress(ctx, "d", 0.1), SV_OK);
    assert_false(sv_progress_cancelled(ctx));
    assert_int_equal(sv_progress(ctx, "d", 0.3), SV_ERR_CANCELLED);
    assert_true(sv_progress_cancelled(ctx));
    assert_int_equal(sv_progress(ctx, "e", 0.0), SV_ERR_CANCELLED);
    assert_non_null(strstr(sv_last_error(), "e: cancelled"));
    assert_int_equal(s.n, 2);
    sv_progress_span_end(ctx, job);
    s.stop_at = 2;
    job = sv_progress_span_begin(ctx, 0, 1);
    assert_false(sv_progress_cancelled(ctx));
    assert_int_equal(sv_progress(ctx, "f", 0.05), SV_OK); /* a fresh report: below the last one's 0.3 */
    sv_progress_span_end(ctx, job);
    assert_int_equal(s.n, 3);
    sv_assert_close(s.f[2], 0.05, 1e-15, 0);
    sv_ctx_destroy(ctx);
}

/* A loop shared by a team: only the first thread reports, a stop reaches
 * every thread, and the loop's end says it was cancelled. */
static void test_progress_loop(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    seen s = {.stop_at = 0.25};
    sv_ctx_set_progress(ctx, record, &s);
    const int rows = 4000;
    int done = 0;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "rows", rows);
#pragma omp parallel for schedule(dynamic, 1) num_threads(2) reduction(+ : done)
    for (int i = 0; i < rows; i++) {
        if (sv_progress_loop_at(&loop, i)) continue;
        double until = sv_time_now() + 1e-4; /* a row's work */
        while (sv_time_now() < until) {
        }
        done++;
    }
    assert_int_equal(sv_progress_loop_end(&loop), SV_ERR_CANCELLED);
    assert_true(s.n >= 2);
    assert_true(s.f[s.n - 1] >= 0.25 && s.f[s.n - 1] < 0.5);
    assert_true(done < rows / 2); /* both threads stopped soon after */
    /* outside spans the next report asks anew */
    s = (seen){.stop_at = 2};
    loop = sv_progress_loop_begin(ctx, "rows", rows);
    assert_int_equal(sv_progress_loop_at(&loop, 0), 0);
    assert_int_equal(sv_progress_loop_end(&loop), SV_OK);
    assert_int_equal(s.n, 1);
    sv_assert_close(s.f[0], 1.0, 0, 0);
    sv_ctx_destroy(ctx);
}

int openblas_get_num_threads(void); /* OpenBLAS's own API */

/* Sections: OpenBLAS on one thread while any is open, its count back after
 * the last; the caller's OpenMP count and team size per section, nested
 * and overlapping in another thread. */
typedef struct overlap {
    pthread_barrier_t *bar;
    int blas_inside, team_inside;
} overlap;

static void *overlap_thread(void *arg)
{
    overlap *o = arg;
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, 3);
    pthread_barrier_wait(o->bar); /* the main thread's section is open */
    sv_threads_saved s = sv_threads_apply(ctx);
    pthread_barrier_wait(o->bar); /* the main thread closed its section */
    o->blas_inside = openblas_get_num_threads();
    o->team_inside = sv_threads_team();
    sv_threads_restore(s);
    sv_ctx_destroy(ctx);
    return NULL;
}

static void test_thread_sections(void **state)
{
    (void)state;
    int blas0 = openblas_get_num_threads(), omp0 = omp_get_max_threads();
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, 2);
    sv_threads_saved a = sv_threads_apply(ctx);
    assert_int_equal(openblas_get_num_threads(), 1);
    assert_int_equal(omp_get_max_threads(), 1); /* BLAS calls here run on this thread */
    assert_int_equal(sv_threads_team(), 2);
    sv_threads_saved b = sv_threads_serial_begin();
    assert_int_equal(sv_threads_team(), 1);
    sv_threads_saved c = sv_threads_apply(NULL); /* inherits the enclosing team */
    assert_int_equal(sv_threads_team(), 1);
    sv_threads_restore(c);
    sv_threads_restore(b);
    assert_int_equal(sv_threads_team(), 2);
    /* another thread opens a section while ours is open and closes it after ours closed */
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    overlap o = {.bar = &bar};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, overlap_thread, &o), 0);
    pthread_barrier_wait(&bar);
    sv_threads_restore(a);
    assert_int_equal(omp_get_max_threads(), omp0);
    assert_int_equal(sv_threads_team(), omp0);
    pthread_barrier_wait(&bar);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&bar);
    assert_int_equal(o.blas_inside, 1); /* still one: the other section was open */
    assert_int_equal(o.team_inside, 3);
    assert_int_equal(openblas_get_num_threads(), blas0);
    sv_threads_restore((sv_threads_saved){0}); /* a zero struct restores nothing */
    assert_int_equal(openblas_get_num_threads(), blas0);
    sv_ctx_destroy(ctx);
}

static void test_null_arguments(void **state)
{
    (void)state;
    assert_int_equal(sv_ctx_create(NULL), SV_ERR_ARG);
    assert_int_equal(sv_ctx_set_memory_limit(NULL, 10), SV_ERR_ARG);
    sv_free(NULL, NULL);
    sv_ctx_destroy(NULL);
    assert_true(sv_time_now() > 0.0);
    assert_string_equal(sv_version_string(), "0.1.0");
    assert_non_null(strstr(sv_build_info(), "OpenBLAS"));
}

static void test_atomic_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/sv_atomic_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    /* discarded: nothing appears */
    sv_atomic_file *a;
    assert_int_equal(sv_atomic_file_open(path, &a), SV_OK);
    fputs("half", sv_atomic_file_stream(a));
    assert_int_equal(sv_atomic_file_close(a, 0), SV_OK);
    assert_int_equal(access(path, F_OK), -1);
    /* committed: the content and an ordinary file mode (0666 less umask) */
    assert_int_equal(sv_atomic_file_open(path, &a), SV_OK);
    fputs("whole\n", sv_atomic_file_stream(a));
    assert_int_equal(sv_atomic_file_close(a, 1), SV_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[16] = {0};
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "whole\n");
    mode_t mask = umask(0);
    umask(mask);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
    /* a directory that does not exist: a clear error, nothing created */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
    assert_int_equal(sv_atomic_file_open(bad, &a), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "missing/out.txt"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings_distinct), cmocka_unit_test(test_last_error_roundtrip),
        cmocka_unit_test(test_last_error_is_per_thread), cmocka_unit_test(test_budget_refuses_with_message),
        cmocka_unit_test(test_calloc_zeroes_and_overflow), cmocka_unit_test(test_concurrent_counting),
        cmocka_unit_test(test_callbacks), cmocka_unit_test(test_progress_spans), cmocka_unit_test(test_progress_loop),                 cmocka_unit_test(test_null_arguments),      cmocka_unit_test(test_atomic_file),
        cmocka_unit_test(test_thread_sections),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
