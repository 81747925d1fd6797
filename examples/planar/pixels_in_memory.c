/* A pixelated two-port drawn in memory (no project file) and its S at a
 * few frequencies, as a design loop would evaluate one candidate: the
 * board, a 0/1 pixel array and two ports make a project
 * (sv_em_project_build), and one job solves it (solvent/planar.h).
 *
 *     cc pixels_in_memory.c $(pkg-config --cflags --libs solvent) -o pixels_in_memory
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include <solvent/solvent.h>

#define NX 20
#define NY 9

int main(void)
{
    /* a feed row through the middle and a few stubs, 0.5 mm cells */
    unsigned char metal[NX * NY] = {0};
    for (int i = 0; i < NX; i++) metal[i + NX * 4] = 1;
    for (int j = 0; j < NY; j++) metal[6 + NX * j] = metal[13 + NX * j] = 1;
    const double cell = 0.5e-3;
    sv_em_port_spec ports[2] = {
        {.name = "in", .side = SV_EM_SIDE_LEFT, .at = 0, .from = 4 * cell, .to = 5 * cell},
        {.name = "out", .side = SV_EM_SIDE_RIGHT, .at = NX * cell, .from = 4 * cell, .to = 5 * cell},
    };
    sv_em_project_spec spec = {
        .grid = {.nx = NX, .ny = NY, .dx = cell, .dy = cell},
        .h = 0.508e-3, .eps_r = 3.66, .tan_delta = 0.0037, /* the substrate */
        .sigma = 5.8e7, .t = 35e-6,                         /* copper, 35 µm */
        .pixels = metal, .ports = ports, .nports = 2,
    };

    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) return 1;
    sv_em_project *board = NULL;
    sv_planar_job *job = NULL;
    const double freq[] = {1e9, 4e9, 8e9, 12e9};
    sv_planar_options opts;
    sv_planar_options_default(&opts);
    opts.freq_hz = freq;
    opts.nfreq = 4;
    sv_status st = sv_em_project_build(ctx, &spec, &board);
    if (!st) st = sv_planar_job_create(ctx, board, &opts, &job);
    if (!st) st = sv_planar_job_run(job);
    if (st) {
        fprintf(stderr, "pixels_in_memory: %s\n", sv_last_error());
        return 1;
    }
    const sv_planar_network *net = sv_planar_job_network(job);
    sv_planar_report rep;
    sv_planar_job_report(job, &rep);
    printf("%d unknowns; max |S - S^T| %.1e, largest singular value of S %.6f\n", rep.unknowns,
           rep.checks.reciprocity, rep.checks.max_singular);
    for (int i = 0; i < net->nf; i++) {
        const double complex *s = net->s + (size_t)i * 4;
        printf("%5.1f GHz  |S11| %7.2f dB  |S21| %7.2f dB\n", net->freq_hz[i] / 1e9, 20 * log10(cabs(s[0])),
               20 * log10(cabs(s[1])));
    }
    sv_planar_job_destroy(job);
    sv_em_project_destroy(board);
    sv_ctx_destroy(ctx);
    return rep.checks.max_singular <= 1 && rep.checks.reciprocity < 1e-9 ? 0 : 1;
}
