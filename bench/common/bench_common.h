/* Benchmark helpers: medians of repeated timings and JSON-line output.
 *
 * Every benchmark prints one JSON object per line with at least
 * bench, case, ours_s, anchor, anchor_s, ratio (= ours_s / anchor_s), plus
 * accuracy figures. Build a line with bench_json_begin / _str / _num /
 * _int and finish it with bench_json_end, which prints it to stdout. */
#ifndef SV_BENCH_COMMON_H
#define SV_BENCH_COMMON_H

#include <stddef.h>

/* Median of n values (the array is sorted in place). */
double bench_median(double *v, int n);

typedef struct bench_json {
    char buf[4096];
    size_t len;
} bench_json;

void bench_json_begin(bench_json *j, const char *bench, const char *case_name);
/* bench_json_begin and the fields every line has: ours_s, anchor, anchor_s,
 * ratio (ours_s / anchor_s; 0 when the anchor did not run, anchor_s ≤ 0). */
void bench_json_head(bench_json *j, const char *bench, const char *case_name, double ours_s, const char *anchor,
                     double anchor_s);
void bench_json_str(bench_json *j, const char *key, const char *value);
void bench_json_num(bench_json *j, const char *key, double value);
void bench_json_int(bench_json *j, const char *key, long long value);
void bench_json_end(bench_json *j);

/* Passive OpenMP waiting, as the `solvent` tool runs (tools/main.c): on a
 * shared, busy machine the default spin-waiting makes every parallel region
 * several times slower and the timings meaningless; passive waiting costs
 * little on a quiet one. The OpenMP runtime reads the setting when it
 * loads, so this sets OMP_WAIT_POLICY and starts the program again (argv:
 * main's), unless the caller chose a policy (OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT). Call it first thing in main. */
void bench_prefer_passive_waiting(char **argv);

/* Peak resident set size of this process so far, in bytes (getrusage). */
size_t bench_peak_rss(void);

/* Number of repetitions: the environment variable SV_BENCH_REPS if set
 * (benchmarks are programs, not the library, so they may read it), else
 * `default_reps`. */
int bench_reps(int default_reps);

#endif
