/* bench_design's batch case (`make bench BENCH=design`, case batch_200f):
 * maps per second of sv_planar_batch on the Momentum dataset's board
 * (35 × 11 pixels of 8 mil, 0.05–10 GHz, 200 points, the Momentum
 * comparison's model: every default effect — thick metal's walls, edge
 * profiles, radiation, tan δ 0.01, calibrated ports) over the dataset's
 * eight shared maps and 248 more drawn like the dataset's (the launches
 * kept, the 9 × 11 region between them random, seeded), on the context's
 * threads (two on the project's machines), the board's tables included
 * (and the CPU seconds per map, what two idle cores would make of it);
 * against the anchor, each of the eight maps as a separate planar job (what
 * `solvent sweep` runs for a project file), on the same threads. Also the
 * largest |ΔS| between the two over the eight maps. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "solvent/solvent.h"

enum { BX = 35, BY = 11, BNF = 200, NREAL = 8, NMAPS = 256 };
static const int reals[NREAL] = {106, 116, 213, 572, 606, 685, 763, 878};

static sv_em_project *dataset_board(int sim)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
             " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
             " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": %d, \"ny\": %d},"
             " \"pixels\": {\"csv\": \"%s/tests/em/data/momentum/pixelmaps/sim%d.csv\"},"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]},"
             "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72]}],"
             " \"sweep\": {\"start\": 0.05e9, \"stop\": 10e9, \"points\": %d}}",
             BX, BY, SV_SOURCE_DIR, sim, BNF);
    sv_em_project *p = NULL;
    if (sv_em_project_parse(NULL, json, strlen(json), "board", &p)) {
        fprintf(stderr, "bench_design batch: %s\n", sv_last_error());
        exit(1);
    }
    return p;
}

/* A map drawn like the dataset's: sim213's launches, the region between
 * them (columns 13–21) random. */
static void random_map(const unsigned char *launches, unsigned *seed, unsigned char *map)
{
    memcpy(map, launches, BX * BY);
    for (int j = 0; j < BY; j++)
        for (int i = 13; i <= 21; i++) {
            *seed = *seed * 1103515245u + 12345u;
            map[i + BX * j] = (*seed >> 16) & 1;
        }
}

/* CPU seconds this process has used (all threads): on a shared machine the
 * wall time of two threads is whatever the others leave; the CPU time per
 * map says what two idle cores would do. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

typedef struct kept {
    double complex *s; /* NREAL × BNF × 4 */
    int failed;
} kept;

static int keep(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    kept *kp = user;
    (void)message;
    if (status) kp->failed++;
    if (job && k < NREAL) memcpy(kp->s + (size_t)k * BNF * 4, sv_planar_job_network(job)->s,
                                 sizeof(double complex) * BNF * 4);
    return 0;
}

/* The eight maps as separate jobs: median seconds per map, the largest
 * |ΔS| against the batch's. */
static double separate_jobs(sv_ctx *ctx, const double complex *batch_s, double *max_ds)
{
    double t[NREAL];
    *max_ds = 0;
    for (int k = 0; k < NREAL; k++) {
        sv_em_project *p = dataset_board(reals[k]);
        double t0 = sv_time_now();
        sv_planar_job *job = NULL;
        if (sv_planar_job_create(ctx, p, NULL, &job) || sv_planar_job_run(job)) {
            fprintf(stderr, "bench_design batch: %s\n", sv_last_error());
            exit(1);
        }
        t[k] = sv_time_now() - t0;
        const double complex *s = sv_planar_job_network(job)->s, *b = batch_s + (size_t)k * BNF * 4;
        for (int e = 0; e < BNF * 4; e++) *max_ds = fmax(*max_ds, cabs(s[e] - b[e]));
        sv_planar_job_destroy(job);
        sv_em_project_destroy(p);
    }
    return bench_median(t, NREAL);
}

void batch_case(void)
{
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_em_project *board = dataset_board(213);
    unsigned char *maps[NMAPS], launches[BX * BY];
    char path[1024];
    for (int k = 0; k < NREAL; k++) {
        snprintf(path, sizeof path, "%s/tests/em/data/momentum/pixelmaps/sim%d.csv", SV_SOURCE_DIR, reals[k]);
        maps[k] = malloc(BX * BY);
        sv_em_map_csv_read(board, path, maps[k]);
    }
    memcpy(launches, maps[2], sizeof launches); /* sim213's launches, its region cleared below */
    for (int j = 0; j < BY; j++)
        for (int i = 13; i <= 21; i++) launches[i + BX * j] = 0;
    unsigned seed = 2024;
    for (int k = NREAL; k < NMAPS; k++) random_map(launches, &seed, maps[k] = malloc(BX * BY));
    kept kp = {.s = malloc(sizeof(double complex) * NREAL * BNF * 4)};
    double c0 = cpu_seconds(), t0 = sv_time_now();
    sv_planar_batch *b = NULL;
    if (sv_planar_batch_create(ctx, board, NULL, &b)) {
        fprintf(stderr, "bench_design batch: %s\n", sv_last_error());
        exit(1);
    }
    double t1 = sv_time_now();
    sv_planar_batch_run(b, NMAPS, (const unsigned char *const *)maps, keep, &kp);
    double t2 = sv_time_now(), c2 = cpu_seconds();
    int workers = sv_planar_batch_workers(b);
    sv_planar_batch_destroy(b);
    double max_ds, anchor = separate_jobs(ctx, kp.s, &max_ds);
    double per_map = (t2 - t0) / NMAPS;
    bench_json j;
    bench_json_head(&j, "design", "batch_200f", per_map, "separate planar jobs (solvent sweep's), median per map",
                    anchor);
    bench_json_int(&j, "maps", NMAPS);
    bench_json_int(&j, "failed", kp.failed);
    bench_json_int(&j, "workers", workers);
    bench_json_num(&j, "maps_per_s", NMAPS / (t2 - t0));
    bench_json_num(&j, "maps_per_s_after_board", NMAPS / (t2 - t1));
    bench_json_num(&j, "board_s", t1 - t0);
    bench_json_num(&j, "cpu_s_per_map", (c2 - c0) / NMAPS);
    bench_json_num(&j, "maps_per_s_two_idle_cores", 2 * NMAPS / (c2 - c0));
    bench_json_num(&j, "max_abs_ds", max_ds);
    bench_json_end(&j);
    for (int k = 0; k < NMAPS; k++) free(maps[k]);
    free(kp.s);
    sv_em_project_destroy(board);
    sv_ctx_destroy(ctx);
}
