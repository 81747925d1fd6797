#define _POSIX_C_SOURCE 200809L /* setenv, execv */
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void append(bench_json *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void append(bench_json *j, const char *fmt, ...)
{
    if (j->len >= sizeof j->buf) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf + j->len, sizeof j->buf - j->len, fmt, ap);
    va_end(ap);
    if (n > 0) j->len += (size_t)n;
    if (j->len > sizeof j->buf) j->len = sizeof j->buf;
}

void bench_json_begin(bench_json *j, const char *bench, const char *case_name)
{
    j->len = 0;
    append(j, "{\"bench\": \"%s\", \"case\": \"%s\"", bench, case_name);
}

void bench_json_head(bench_json *j, const char *bench, const char *case_name, double ours_s, const char *anchor,
                     double anchor_s)
{
    bench_json_begin(j, bench, case_name);
    bench_json_num(j, "ours_s", ours_s);
    bench_json_str(j, "anchor", anchor);
    bench_json_num(j, "anchor_s", anchor_s);
    bench_json_num(j, "ratio", anchor_s > 0 ? ours_s / anchor_s : 0);
}

void bench_json_str(bench_json *j, const char *key, const char *value)
{
    append(j, ", \"%s\": \"%s\"", key, value);
}

void bench_json_num(bench_json *j, const char *key, double value)
{
    if (isfinite(value))
        append(j, ", \"%s\": %.6g", key, value);
    else
        append(j, ", \"%s\": null", key);
}

void bench_json_int(bench_json *j, const char *key, long long value)
{
    append(j, ", \"%s\": %lld", key, value);
}

void bench_json_end(bench_json *j)
{
    append(j, "}");
    puts(j->buf);
    fflush(stdout);
}

size_t bench_peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * 1024;
}

int bench_reps(int default_reps)
{
    const char *s = getenv("SV_BENCH_REPS");
    int n = s ? atoi(s) : 0;
    return n > 0 ? n : default_reps;
}

void bench_prefer_passive_waiting(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv); /* returns only on failure: carry on as we are */
    unsetenv("OMP_WAIT_POLICY");
}
