/* bench_sweep: `solvent sweep`'s work end to end — one planar job
 * (sv_planar_job: read the project, build the mesh, assemble L, Ψ, G, run
 * the adaptive sweep with mixed-precision exact solves on the CPU,
 * calibrate the ports; ours_calibration_s, part of ours_s, and the other
 * phases' times are the job's report's) — against the naive approach a
 * user would otherwise write: assemble once, then form the full complex
 * Z(ω) and call OpenBLAS zgesv at every frequency. Both run in this
 * process; medians of repetitions.
 *
 * usage: bench_sweep [--big]      (SV_BENCH_REPS: repetitions of ours, default 3)
 *   default: examples/pixel2port.json (~2000 unknowns) at 21, 41, 201, 1001
 *            points over the project's band, then the same layout as the
 *            sheet model of earlier versions (bench/sweep/pixel2port_sheet.json:
 *            every effect off, raw ports), named pixel2port_sheet_*, and with
 *            dispersion on as well (bench/sweep/pixel2port_dispersion.json),
 *            pixel2port_dispersion_*. The anchor runs once at 21
 *            frequencies (every frequency of the 21-point case, and points
 *            of the other grids, where accuracy is compared); for 41, 201
 *            and 1001 points its time is its assembly plus its median time
 *            per frequency times the number of points ("anchor_mode"), since
 *            the naive cost per frequency is the same at every frequency.
 *            Accuracy: raw S (from the job's Y of the raw edge ports, before
 *            the calibration) against the anchor's raw S (it solves the raw
 *            model; the calibration would be the same code on both sides).
 *   --big:   examples/square76.json (11402 unknowns) at 41 points, once,
 *            then the anchor at the 2 band edges, scaled. Peak memory of ours
 *            (process RSS before the anchor runs). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include <omp.h>

#include "bench_common.h"
#include "bench_em.h"
#include "solvent/solvent.h"
#include "solvent/em.h"
#include "solvent/planar.h"

#define ANCHOR "assemble once + OpenBLAS zgesv at every frequency"

static void die(const char *what)
{
    fprintf(stderr, "bench_sweep: %s: %s\n", what, sv_last_error());
    exit(1);
}

/* Ours, end to end: the planar job, everything `solvent sweep` does except
 * writing files, on the CPU as the anchor (bench/gpu measures a device).
 * S (nf × p × p) out: the raw ports', before the calibration, as the
 * anchor's (which solves the raw model); rep: what the job did. Returns
 * seconds. */
static double run_ours(const char *path, int nf, const double *freq, double complex *S, sv_planar_report *rep)
{
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) die("context");
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = freq;
    o.nfreq = nf;
    o.device = SV_PLANAR_DEVICE_CPU;
    o.outputs = SV_PLANAR_OUTPUT_Y_RAW;
    o.allow_beyond_validity = 1; /* the big case's band (to 10 GHz) reaches past the square's limit */
    double t0 = sv_time_now();
    sv_planar_job *job;
    if (sv_planar_job_open(ctx, path, &o, &job)) die(path);
    if (sv_planar_job_run(job)) die("planar job");
    double t = sv_time_now() - t0;
    const sv_planar_network *net = sv_planar_job_network(job);
    if (sv_em_y_to_s_all(net->p, nf, net->y_raw, net->z0, S, NULL)) die("y to s");
    if (sv_planar_job_report(job, rep)) die("report");
    sv_planar_job_destroy(job);
    sv_ctx_destroy(ctx);
    return t;
}

/* The anchor's planar model of the project at `path`: read, mesh and
 * assemble, as a user forming Z(f) would. */
typedef struct setup {
    sv_em_project *prj;
    sv_em_model *em;
    sv_em_affine *model;
    int n, p;
    double *z0;
} setup;

static void setup_build(sv_ctx *ctx, const char *path, setup *s)
{
    memset(s, 0, sizeof(*s));
    if (sv_em_project_read(ctx, path, &s->prj)) die(path);
    if (sv_em_model_create(ctx, s->prj, NULL, &s->em)) die("model");
    if (sv_em_affine_create(ctx, s->em, &s->model)) die("planar model");
    s->n = sv_em_model_unknowns(s->em);
    s->p = sv_em_model_ports(s->em);
    s->z0 = malloc(sizeof(double) * s->p);
    for (int k = 0; k < s->p; k++) s->z0[k] = sv_em_project_port_z0(s->prj, k);
}

static void setup_free(setup *s)
{
    sv_em_affine_destroy(s->model);
    sv_em_model_destroy(s->em);
    sv_em_project_destroy(s->prj);
    free(s->z0);
}

/* The naive approach: assemble once, then at each frequency form the full
 * N × N complex Z and solve with zgesv. S at the listed frequencies. */
static double run_naive(const char *path, int nf, const double *freq, double complex *S, double *t_asm,
                        double *t_freq)
{
    double t0 = sv_time_now();
    setup s;
    setup_build(NULL, path, &s);
    int n = s.n, p = s.p;
    double *b = malloc(sizeof(double) * (size_t)n * p);
    if (!b || sv_em_port_rhs(s.em, b, n)) die("port rhs");
    *t_asm = sv_time_now() - t0;
    double complex *z = malloc(sizeof(double complex) * (size_t)n * n);
    double complex *x = malloc(sizeof(double complex) * (size_t)n * p);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    if (!z || !x || !ipiv) {
        fprintf(stderr, "bench_sweep: no memory for the naive anchor (%d unknowns)\n", n);
        exit(1);
    }
    for (int i = 0; i < nf; i++) {
        double ti = sv_time_now();
        bench_em_full_z(s.model, freq[i], z);
        for (size_t e = 0; e < (size_t)n * p; e++) x[e] = b[e];
        if (LAPACKE_zgesv(LAPACK_COL_MAJOR, n, p, z, n, ipiv, x, n)) die("zgesv");
        double complex y[64];
        if (sv_em_port_admittance(s.em, x, n, y)) die("port admittance");
        if (sv_em_y_to_s(p, y, s.z0, S + (size_t)i * p * p)) die("y to s");
        t_freq[i] = sv_time_now() - ti;
    }
    double t = sv_time_now() - t0;
    free(z);
    free(x);
    free(ipiv);
    free(b);
    setup_free(&s);
    return t;
}

typedef struct anchor_run {
    int na;
    double *freq, *tf;
    double complex *S;
    double total, t_asm, per_freq;
} anchor_run;

/* The anchor, once: the naive approach at na frequencies spread over the
 * band (na = 21: they are also points of the 41-, 201- and 1001-point grids). */
static void anchor_measure(const char *path, const sv_em_sweep *sw, int na, anchor_run *a)
{
    a->na = na;
    a->freq = bench_em_band(na, sw);
    a->tf = malloc(sizeof(double) * na);
    a->S = malloc(sizeof(double complex) * na * 16);
    a->total = run_naive(path, na, a->freq, a->S, &a->t_asm, a->tf);
    double *tmp = malloc(sizeof(double) * na);
    memcpy(tmp, a->tf, sizeof(double) * na);
    a->per_freq = bench_median(tmp, na);
    free(tmp);
}

/* Ours at nf points (median of reps), against the anchor: measured in full
 * when nf equals its count, else its assembly time plus its median time per
 * frequency times nf (the naive cost per frequency does not depend on the
 * frequency: same matrix size, same factorisation). */
static void one_case(const char *name, const char *path, int nf, int reps, const anchor_run *a)
{
    sv_em_project *prj;
    if (sv_em_project_read(NULL, path, &prj)) die(path);
    sv_em_sweep sw;
    sv_em_project_sweep(prj, &sw);
    sv_em_project_destroy(prj);
    double *freq = bench_em_band(nf, &sw);
    double complex *S = malloc(sizeof(double complex) * nf * 16);
    double t_ours[16], t_cal[16];
    sv_planar_report rep;
    for (int r = 0; r < reps; r++) {
        t_ours[r] = run_ours(path, nf, freq, S, &rep);
        t_cal[r] = rep.seconds_calibration;
    }
    size_t rss = bench_peak_rss();
    double ours = bench_median(t_ours, reps), ours_cal = bench_median(t_cal, reps);
    int full = nf == a->na, n = rep.unknowns, p = rep.ports;
    double anchor = full ? a->total : a->t_asm + a->per_freq * nf;
    /* accuracy at the anchor's frequencies (points of this grid), raw S
     * against raw S: the calibration is the same code on both sides */
    double ds = 0;
    int step = a->na > 1 ? (nf - 1) / (a->na - 1) : 0;
    for (int i = 0; i < a->na; i++)
        for (int e = 0; e < p * p; e++)
            ds = fmax(ds, cabs(S[(size_t)i * step * p * p + e] - a->S[(size_t)i * p * p + e]));
    bench_json j;
    char cname[64];
    snprintf(cname, sizeof cname, "%s_%dpts", name, nf);
    bench_json_head(&j, "sweep", cname, ours, ANCHOR, anchor);
    bench_json_num(&j, "speedup", anchor / ours);
    bench_json_str(&j, "anchor_mode", full ? "all_frequencies" : "scaled_from_median_per_frequency");
    bench_json_int(&j, "anchor_freqs_run", a->na);
    bench_json_num(&j, "anchor_median_per_freq_s", a->per_freq);
    bench_json_num(&j, "anchor_assembly_s", a->t_asm);
    bench_json_int(&j, "unknowns", n);
    bench_json_int(&j, "points", nf);
    bench_json_int(&j, "exact_solves", rep.exact_solves);
    bench_json_int(&j, "fallbacks", rep.fallbacks);
    bench_json_int(&j, "gmres_solves", rep.gmres_solves);
    bench_json_int(&j, "basis", rep.basis_size);
    bench_json_num(&j, "max_residual_est", rep.max_residual);
    bench_json_num(&j, "max_abs_dS_vs_anchor", ds);
    bench_json_str(&j, "dS_of", "raw ports (before the calibration)");
    bench_json_num(&j, "ours_exact_s", rep.seconds_exact);
    bench_json_num(&j, "ours_reduced_s", rep.seconds_reduced);
    bench_json_num(&j, "ours_calibration_s", ours_cal);
    bench_json_int(&j, "ours_counted_peak_bytes", (long long)rep.peak);
    bench_json_int(&j, "process_peak_rss_bytes", (long long)rss);
    bench_json_num(&j, "peak_rss_over_n2", (double)rss / ((double)n * n));
    bench_json_int(&j, "reps", reps);
    bench_json_int(&j, "threads", omp_get_max_threads());
    bench_json_str(&j, "omp_wait_policy", getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "default");
    bench_json_end(&j);
    free(freq);
    free(S);
}

int main(int argc, char **argv)
{
    bench_prefer_passive_waiting(argv);
    int big = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--big")) big = 1;
        else {
            fprintf(stderr, "usage: bench_sweep [--big]   (SV_BENCH_REPS sets repetitions, default 3)\n");
            return 2;
        }
    }
    int reps = bench_reps(3);
    if (reps > 16) reps = 16;
    if (reps < 1) reps = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, big ? "square76.json" : "pixel2port.json");
    sv_em_project *prj;
    if (sv_em_project_read(NULL, path, &prj)) die(path);
    sv_em_sweep sw;
    sv_em_project_sweep(prj, &sw);
    sv_em_project_destroy(prj);
    if (!sw.present) {
        fprintf(stderr, "bench_sweep: %s has no sweep section\n", path);
        return 1;
    }
    if (big) {
        /* ours first (peak memory is the process's), then 3 naive frequencies;
         * over 0.1-10 GHz as recorded since the first runs, past the square's
         * 7.1 GHz limit (its example stops at 7 GHz) */
        sw.stop_hz = 10e9;
        anchor_run a = {0};
        a.na = 2;
        double *freq = bench_em_band(41, &sw);
        double complex *S = malloc(sizeof(double complex) * 41 * 16);
        sv_planar_report rep;
        double ours = run_ours(path, 41, freq, S, &rep);
        size_t rss = bench_peak_rss();
        anchor_measure(path, &sw, 2, &a);
        double anchor = a.t_asm + a.per_freq * 41;
        double ds = 0;
        for (int i = 0; i < 2; i++)
            for (int e = 0; e < 4; e++) ds = fmax(ds, cabs(S[(size_t)i * 40 * 4 + e] - a.S[(size_t)i * 4 + e]));
        bench_json j;
        bench_json_head(&j, "sweep", "square76_41pts", ours, ANCHOR, anchor);
        bench_json_str(&j, "anchor_mode", "scaled_from_median_per_frequency");
        bench_json_int(&j, "anchor_freqs_run", 2);
        bench_json_num(&j, "anchor_median_per_freq_s", a.per_freq);
        bench_json_int(&j, "ours_fallbacks", rep.fallbacks);
        bench_json_int(&j, "ours_gmres_solves", rep.gmres_solves);
        bench_json_num(&j, "limit_13n2_plus_200MB", 13.0 * 11402 * 11402 + 200e6);
        bench_json_int(&j, "exact_solves", rep.exact_solves);
        bench_json_num(&j, "max_abs_dS_vs_anchor", ds);
        bench_json_str(&j, "dS_of", "raw ports (before the calibration)");
        bench_json_num(&j, "ours_exact_s", rep.seconds_exact);
        bench_json_num(&j, "ours_reduced_s", rep.seconds_reduced);
        bench_json_num(&j, "ours_calibration_s", rep.seconds_calibration);
        bench_json_int(&j, "ours_counted_peak_bytes", (long long)rep.peak);
        bench_json_int(&j, "ours_peak_rss_bytes", (long long)rss);
        bench_json_num(&j, "peak_rss_over_n2", (double)rss / (11402.0 * 11402.0));
        bench_json_int(&j, "reps", 1);
        bench_json_int(&j, "threads", omp_get_max_threads());
        bench_json_str(&j, "omp_wait_policy", getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "default");
        bench_json_end(&j);
        return 0;
    }
    /* the example as shipped, then its sheet model (every effect off, raw
     * ports: the model of earlier versions), which compares the engine
     * across versions apart from the physics added since */
    char sheet[4096], disp[4096];
    snprintf(sheet, sizeof sheet, "%s/bench/sweep/pixel2port_sheet.json", SV_SOURCE_DIR);
    snprintf(disp, sizeof disp, "%s/bench/sweep/pixel2port_dispersion.json", SV_SOURCE_DIR);
    const char *paths[3] = {path, sheet, disp};
    const char *names[3] = {"pixel2port", "pixel2port_sheet", "pixel2port_dispersion"};
    int pts[4] = {21, 41, 201, 1001};
    for (int q = 0; q < 3; q++) {
        anchor_run a;
        anchor_measure(paths[q], &sw, 21, &a);
        for (int c = 0; c < 4; c++) one_case(names[q], paths[q], pts[c], reps, &a);
        free(a.freq);
        free(a.tf);
        free(a.S);
    }
    return 0;
}
