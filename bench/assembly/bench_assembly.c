/* Assembly of L and Ψ (packed, R64) for the ~2000-unknown pixelated
 * two-port and the 11402-unknown solid square, against the naive
 * evaluation of the same model, entry by entry (sv_em_naive_column): every
 * cell pair of Ψ = DᵀPD and every rooftop pair of L from the exact closed
 * forms with all image terms, no tables, no far-field approximation, plus
 * each entry's own changes for the edge profiles (edges.c's sv_em_edge_dL,
 * sv_em_edge_dP) and thick metal's walls (sv_em_walls_column), the effects
 * the assembly adds to its tables. Hence the fields' "_same_model".
 *
 * The naive assembly of all N²/2 entries would take minutes to hours, so
 * the anchor runs on a sample of whole columns (evenly spaced, including
 * the port columns) and its time is scaled to all N(N+1)/2 entries by the
 * entries it computed; accuracy is measured on the same sample:
 * rel_err_L_same_model = max|L − L_naive| / max|L_naive| (the diagonal is
 * sampled), likewise for Ψ, and how many entries of each are off by more
 * than 1e-6 of that maximum (a few entries far off and the rest at the
 * tables' 1e-9 are not the same finding as every entry off). Threads: the
 * context's (2 by default here, the target machine's cores;
 * SV_BENCH_THREADS overrides). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "em/em_internal.h"
#include "solvent/em.h"

/* The largest of n absolute differences relative to scale, and how many
 * exceed 1e-6 of it. */
typedef struct deviation {
    double worst;
    size_t off;
} deviation;

static deviation deviations(const double *diff, size_t n, double scale)
{
    deviation d = {0, 0};
    for (size_t e = 0; e < n; e++) {
        d.worst = fmax(d.worst, diff[e] / scale);
        d.off += diff[e] > 1e-6 * scale;
    }
    return d;
}

static int run_case(const char *name, const char *rel, int threads, int sample_cols)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SV_SOURCE_DIR, rel);
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, threads);
    sv_em_project *p;
    sv_em_model *m;
    if (sv_em_project_read(ctx, path, &p) || sv_em_model_create(ctx, p, NULL, &m)) {
        fprintf(stderr, "bench_assembly: %s\n", sv_last_error());
        return 1;
    }
    int n = sv_em_model_unknowns(m);
    int reps = bench_reps(3);
    double *t = malloc(sizeof(double) * reps);
    sv_dense_sym *L = NULL, *P = NULL;
    sv_em_assembly_info info;
    for (int r = 0; r < reps; r++) {
        sv_dense_sym_destroy(L);
        sv_dense_sym_destroy(P);
        L = P = NULL;
        double t0 = sv_time_now();
        if (sv_em_assemble(ctx, m, 0, &L, &P, &info)) {
            fprintf(stderr, "bench_assembly: %s\n", sv_last_error());
            return 1;
        }
        t[r] = sv_time_now() - t0;
    }
    double ours = bench_median(t, reps);
    size_t peak = sv_ctx_memory_peak(ctx);

    /* anchor on sampled columns */
    double *lc = malloc(sizeof(double) * n), *pc = malloc(sizeof(double) * n);
    const double *ld = sv_dense_sym_cdata(L), *pd = sv_dense_sym_cdata(P);
    size_t most = (size_t)n * sample_cols;
    double *ldiffs = malloc(sizeof(double) * most), *pdiffs = malloc(sizeof(double) * most);
    double lmax = 0, pmax = 0, anchor_time = 0;
    size_t entries = 0;
    for (int s = 0; s < sample_cols; s++) {
        int j = s < sample_cols - 2 ? (int)((double)s * (n - 1) / (sample_cols - 2)) : n - 1 - (s - (sample_cols - 2));
        double t0 = sv_time_now();
        sv_em_naive_column(m, j, lc, pc);
        anchor_time += sv_time_now() - t0;
        size_t base = sv_dense_sym_offset(L, j, j);
        for (int i = j; i < n; i++, entries++) {
            lmax = fmax(lmax, fabs(lc[i - j]));
            pmax = fmax(pmax, fabs(pc[i - j]));
            ldiffs[entries] = fabs(ld[base + i - j] - lc[i - j]);
            pdiffs[entries] = fabs(pd[base + i - j] - pc[i - j]);
        }
    }
    double anchor = anchor_time / entries * ((double)n * (n + 1) / 2);
    deviation dl = deviations(ldiffs, entries, lmax), dp = deviations(pdiffs, entries, pmax);
    bench_json j;
    bench_json_head(&j, "assembly", name, ours, "naive all-pairs closed forms (sampled columns, scaled)", anchor);
    bench_json_int(&j, "n", n);
    bench_json_int(&j, "threads", threads);
    bench_json_num(&j, "speedup", anchor / ours);
    bench_json_int(&j, "anchor_columns", sample_cols);
    bench_json_int(&j, "entries_compared", (long long)entries);
    bench_json_num(&j, "rel_err_L_same_model", dl.worst);
    bench_json_int(&j, "L_entries_off_1e-6_same_model", (long long)dl.off);
    bench_json_num(&j, "rel_err_Psi_same_model", dp.worst);
    bench_json_int(&j, "Psi_entries_off_1e-6_same_model", (long long)dp.off);
    bench_json_int(&j, "image_terms", info.image_terms);
    bench_json_int(&j, "ctx_peak_bytes", (long long)peak);
    bench_json_num(&j, "bytes_over_8N2", (double)peak / (8.0 * n * (double)n));
    bench_json_int(&j, "peak_rss", (long long)bench_peak_rss());
    bench_json_int(&j, "reps", reps);
    bench_json_end(&j);
    free(lc);
    free(pc);
    free(ldiffs);
    free(pdiffs);
    free(t);
    sv_dense_sym_destroy(L);
    sv_dense_sym_destroy(P);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    const char *e = getenv("SV_BENCH_THREADS");
    int threads = e ? atoi(e) : 2;
    if (run_case("pixel2port", "examples/pixel2port.json", threads, 24)) return 1;
    if (run_case("square76", "examples/square76.json", threads, 12)) return 1;
    return 0;
}
