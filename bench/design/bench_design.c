/* bench_design (`make bench BENCH=design`): the design loop on a board
 * with a 20 × 20-pixel design region (the dataset's stack-up and 8-mil
 * pixels, 50-Ω launches 7 pixels wide on either side; the model a design
 * follows: sheet metal, exact dielectric loss, no edge profile, no
 * radiation).
 *
 *   trial_NNf   one trial flip by the evaluator's update (median of 200
 *               random single-pixel trials on a random map) against the
 *               anchor: assembling and factorising that map afresh at the
 *               same NN frequencies (a planar job, every frequency solved
 *               exactly, CPU; median of 3). Also: an accepted flip's
 *               update, and |ΔS| between the trial and the fresh job.
 *   dbs_41f     a 3-pass DBS over the 400 pixels (sv_design_run; a
 *               low-pass mask, random start): wall time and evaluations
 *               per second, against the same number of fresh evaluations
 *               (the trial case's anchor per evaluation times the trials).
 *
 *   batch_200f  maps per second of a batch on the dataset's board against
 *               separate planar jobs (batch_case.c).
 *
 * Options: --dbs-budget S caps the DBS's time (default 600 s);
 * --dbs-only T runs the DBS alone with T seconds as a fresh evaluation;
 * --batch-only runs the batch case alone. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "solvent/solvent.h"

enum { NX = 32, NY = 22, R0 = 6, R1 = 25 }; /* region columns R0..R1, rows 1..20 */

static int in_region(int c) { return c % NX >= R0 && c % NX <= R1 && c / NX >= 1 && c / NX <= 20; }
static int launch(int c) { return (c % NX < R0 || c % NX > R1) && c / NX >= 8 && c / NX <= 14; }

/* The board's project text with map (NX·NY, j = 0 the bottom row). */
static char *board_text(const unsigned char *map)
{
    size_t cap = 16384;
    char *t = malloc(cap);
    int n = snprintf(t, cap,
                     "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
                     " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
                     " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": %d, \"ny\": %d}, \"pixels\": [",
                     NX, NY);
    for (int row = 0; row < NY; row++) {
        n += snprintf(t + n, cap - n, "%s\"", row ? ", " : "");
        for (int i = 0; i < NX; i++) t[n++] = map[i + NX * (NY - 1 - row)] ? '#' : '.';
        n += snprintf(t + n, cap - n, "\"");
    }
    snprintf(t + n, cap - n,
             "], \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [64, 120], \"calibration\": \"none\"},"
             " {\"name\": \"P2\", \"side\": \"right\", \"x\": %d, \"y\": [64, 120], \"calibration\": \"none\"}],"
             " \"effects\": {\"thick_metal\": false, \"dielectric_loss\": \"exact\", \"radiation\": false,"
             " \"edge_profile\": false, \"edge_cells\": false}}",
             8 * NX);
    return t;
}

static sv_em_project *board(const unsigned char *map)
{
    char *t = board_text(map);
    sv_em_project *p = NULL;
    if (sv_em_project_parse(NULL, t, strlen(t), "bench board", &p)) {
        fprintf(stderr, "bench_design: %s\n", sv_last_error());
        exit(1);
    }
    free(t);
    return p;
}

static unsigned long long rng = 12345;
static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1.0p-53;
}

/* S of a map afresh at nf frequencies (a planar job, every frequency exact): the anchor. */
static double fresh(const unsigned char *map, int nf, const double *f, double complex *s)
{
    double t0 = sv_time_now();
    sv_em_project *p = board(map);
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = f;
    o.nfreq = nf;
    o.exact_all = 1;
    o.device = SV_PLANAR_DEVICE_CPU;
    sv_planar_job *job;
    if (sv_planar_job_create(NULL, p, &o, &job) || sv_planar_job_run(job)) {
        fprintf(stderr, "bench_design: fresh job: %s\n", sv_last_error());
        exit(1);
    }
    memcpy(s, sv_planar_job_network(job)->s, sizeof(double complex) * 4 * nf);
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    return sv_time_now() - t0;
}

static void random_map(unsigned char *map, double fill)
{
    for (int c = 0; c < NX * NY; c++) map[c] = launch(c) || (in_region(c) && uniform() < fill);
}

static double trial_case(int nf)
{
    double *f = malloc(sizeof(double) * nf);
    for (int k = 0; k < nf; k++) f[k] = 1e9 + 9e9 * k / (nf - 1);
    unsigned char full[NX * NY], region[NX * NY], map[NX * NY];
    for (int c = 0; c < NX * NY; c++) {
        full[c] = launch(c) || in_region(c);
        region[c] = (unsigned char)in_region(c);
    }
    random_map(map, 0.6);
    sv_em_project *pf = board(full);
    double t0 = sv_time_now();
    sv_design_eval *ev;
    if (sv_design_eval_create_at(NULL, pf, region, nf, f, map, &ev)) {
        fprintf(stderr, "bench_design: evaluator: %s\n", sv_last_error());
        exit(1);
    }
    double setup = sv_time_now() - t0;
    double complex *s = malloc(sizeof(double complex) * 4 * nf), *sf = malloc(sizeof(double complex) * 4 * nf);
    enum { NT = 200, NA = 10 };
    double tt[NT], ta[NA];
    int pix = 0;
    for (int k = 0; k < NT; k++) {
        do pix = (int)(uniform() * NX * NY);
        while (!in_region(pix));
        double a = sv_time_now();
        sv_design_eval_trial(ev, 1, &pix, s);
        tt[k] = sv_time_now() - a;
    }
    /* the last trial against a fresh job of that map */
    unsigned char tm[NX * NY];
    memcpy(tm, map, sizeof tm);
    tm[pix] ^= 1;
    double an[3];
    for (int r = 0; r < 3; r++) an[r] = fresh(tm, nf, f, sf);
    double ds = 0;
    for (int q = 0; q < 4 * nf; q++) ds = fmax(ds, cabs(s[q] - sf[q]));
    long rb0 = sv_design_eval_rebuilds(ev);
    for (int k = 0; k < NA; k++) {
        do pix = (int)(uniform() * NX * NY);
        while (!in_region(pix));
        double a = sv_time_now();
        sv_design_eval_accept(ev, 1, &pix);
        ta[k] = sv_time_now() - a;
    }
    double ours = bench_median(tt, NT), anchor = bench_median(an, 3);
    char cname[32];
    snprintf(cname, sizeof cname, "trial_%df", nf);
    bench_json j;
    bench_json_head(&j, "design", cname, ours, "fresh assembly and factorisation (planar job, exact at each frequency)",
                    anchor);
    bench_json_int(&j, "unknowns", sv_design_eval_unknowns(ev));
    bench_json_int(&j, "design_unknowns", sv_design_eval_design_unknowns(ev));
    bench_json_int(&j, "nfreq", nf);
    bench_json_num(&j, "max_abs_ds", ds);
    bench_json_num(&j, "accept_s", bench_median(ta, NA));
    bench_json_int(&j, "accept_rebuilds", sv_design_eval_rebuilds(ev) - rb0);
    bench_json_num(&j, "setup_s", setup);
    bench_json_end(&j);
    sv_design_eval_destroy(ev);
    sv_em_project_destroy(pf);
    free(s);
    free(sf);
    free(f);
    return anchor;
}

static void dbs_case(double fresh_41, double budget)
{
    /* the spec and its board in a temporary folder */
    char dir[] = "/tmp/bench-design-XXXXXX";
    if (!mkdtemp(dir)) return;
    unsigned char full[NX * NY];
    for (int c = 0; c < NX * NY; c++) full[c] = (unsigned char)launch(c);
    char path[256], *t = board_text(full);
    snprintf(path, sizeof path, "%s/board.json", dir);
    FILE *fp = fopen(path, "w");
    fputs(t, fp);
    fclose(fp);
    free(t);
    snprintf(path, sizeof path, "%s/spec.json", dir);
    fp = fopen(path, "w");
    fprintf(fp, "{\"board\": \"board.json\", \"region\": {\"rectangles\": [{\"columns\": [%d, %d], \"rows\": [1, 20]}]},"
                " \"masks\": [{\"s\": \"S21\", \"start\": 1, \"stop\": 3, \"bound_db\": -1, \"type\": \"min\"},"
                " {\"s\": \"S21\", \"start\": 6, \"stop\": 10, \"bound_db\": -20, \"type\": \"max\"}],"
                " \"frequencies\": {\"points\": 41}, \"start\": {\"random\": {\"seed\": 1, \"fill\": 0.6}},"
                " \"constraints\": {\"corner_contacts\": \"allow\"}, \"passes\": 3, \"time_budget\": %g}",
            R0, R1, budget);
    fclose(fp);
    sv_design_spec *spec;
    sv_design_result *res;
    if (sv_design_spec_read(NULL, path, &spec) || sv_design_run(NULL, spec, &res)) {
        fprintf(stderr, "bench_design: dbs: %s\n", sv_last_error());
        exit(1);
    }
    sv_design_report r;
    sv_design_result_report(res, &r);
    bench_json j;
    bench_json_head(&j, "design", "dbs_400px_41f", r.seconds, "the same trials as fresh evaluations (trial_41f's anchor each)",
                    fresh_41 * r.tried);
    bench_json_int(&j, "passes", r.passes);
    bench_json_int(&j, "tried", r.tried);
    bench_json_int(&j, "accepted", r.accepted);
    bench_json_num(&j, "evals_per_s", r.tried / fmax(1e-9, r.seconds - r.seconds_setup));
    bench_json_num(&j, "setup_s", r.seconds_setup);
    bench_json_int(&j, "rebuilds", r.rebuilds);
    bench_json_num(&j, "start_cost", r.start_cost);
    bench_json_num(&j, "cost", r.cost);
    bench_json_int(&j, "stopped_by_budget", r.stopped == 1);
    bench_json_end(&j);
    sv_design_result_destroy(res);
    sv_design_spec_destroy(spec);
    remove(path);
    snprintf(path, sizeof path, "%s/board.json", dir);
    remove(path);
    remove(dir);
}

void batch_case(void); /* batch_case.c */

int main(int argc, char **argv)
{
    bench_prefer_passive_waiting(argv);
    double budget = 600, fresh_41 = 0;
    int dbs_only = 0;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--dbs-budget") && k + 1 < argc) budget = atof(argv[k + 1]);
        if (!strcmp(argv[k], "--dbs-only") && k + 1 < argc) dbs_only = 1, fresh_41 = atof(argv[k + 1]);
        if (!strcmp(argv[k], "--batch-only")) {
            batch_case();
            return 0;
        }
    }
    if (!dbs_only) {
        batch_case();
        trial_case(21);
        fresh_41 = trial_case(41);
    }
    dbs_case(fresh_41, budget);
    return 0;
}
