/* Sweep a planar project file and print |S| in dB: the whole job is one
 * library call (solvent/planar.h), the same as `solvent sweep`, with a
 * progress bar on stderr and Ctrl-C stopping it cleanly.
 *
 *     cc sweep_file.c $(pkg-config --cflags --libs solvent) -o sweep_file
 *     ./sweep_file examples/stub.json [points]
 */
#include <complex.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <solvent/solvent.h>

static volatile sig_atomic_t stop;
static void on_interrupt(int sig)
{
    (void)sig;
    stop = 1;
}

/* Draws the job's one rising fraction when its percentage changes; a
 * non-zero return cancels the job. */
static int progress(void *user, const char *phase, double fraction)
{
    int *shown = user, percent = (int)(100 * fraction);
    if (percent != *shown) fprintf(stderr, "\r%-26.26s %3d%%", phase, percent);
    *shown = percent;
    return stop;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROJECT.json [points]\n", argv[0]);
        return 2;
    }
    signal(SIGINT, on_interrupt);
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) return 1;
    int shown = -1;
    sv_ctx_set_progress(ctx, progress, &shown);

    sv_planar_options opts;
    sv_planar_options_default(&opts); /* the project's band, every effect it asks for */
    if (argc > 2) opts.band.points = atoi(argv[2]);

    sv_planar_job *job = NULL;
    sv_status st = sv_planar_job_open(ctx, argv[1], &opts, &job);
    if (!st) st = sv_planar_job_run(job);
    fprintf(stderr, "\r%40s\r", "");
    if (st) {
        fprintf(stderr, "%s: %s\n", argv[1], sv_last_error());
        sv_planar_job_destroy(job);
        sv_ctx_destroy(ctx);
        return 1;
    }

    const sv_planar_network *net = sv_planar_job_network(job);
    sv_planar_report rep;
    sv_planar_job_report(job, &rep);
    printf("# %d unknowns, %d ports, %d frequencies, %d solved exactly\n# f/GHz", rep.unknowns, net->p, net->nf,
           rep.exact_solves);
    for (int c = 0; c < net->p; c++)
        for (int r = 0; r < net->p; r++) printf("  |S%s,%s|/dB", net->port_names[r], net->port_names[c]);
    printf("\n");
    for (int i = 0; i < net->nf; i++) {
        printf("%8.4f", net->freq_hz[i] / 1e9);
        const double complex *s = net->s + (size_t)i * net->p * net->p; /* column-major p × p */
        for (int e = 0; e < net->p * net->p; e++) printf("  %10.4f", 20 * log10(cabs(s[e])));
        printf("\n");
    }
    sv_planar_job_destroy(job);
    sv_ctx_destroy(ctx);
    return 0;
}
