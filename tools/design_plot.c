/* `solvent design`'s plot: |S_ij| in dB of the designed map over the whole
 * band with the spec's masks drawn as bars (a mask's bound over its band),
 * drawn by gnuplot. The data and script go to hidden files beside the
 * image, the image to a temporary name renamed when gnuplot succeeds. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "design_tool.h"

extern char **environ;

static int write_data(const char *path, int p, int nf, const double *freq_hz, const double complex *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int k = 0; k < nf; k++) {
        fprintf(f, "%.12g", freq_hz[k] / 1e9);
        for (int j = 0; j < p; j++)
            for (int i = j; i < p; i++) {
                double a = cabs(s[(size_t)k * p * p + i + (size_t)j * p]);
                fprintf(f, " %.9g", a > 1e-30 ? 20 * log10(a) : -600);
            }
        fputc('\n', f);
    }
    return fclose(f) ? -1 : 0;
}

static int write_script(const char *path, const char *data, const char *image, const char *title, int p, int nmasks,
                        const sv_design_mask *masks)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "set terminal svg size 960,600 dynamic enhanced font 'Helvetica,14' background rgb 'white'\n"
               "set output '%s'\nset title '%s' noenhanced\nset xlabel 'Frequency (GHz)'\nset ylabel '|S_{ij}| (dB)'\n"
               "set grid\nset key outside right top\nset yrange [-60:5]\n",
            image, title);
    /* each mask: a thick bar at its bound over its band, red for max, blue for min */
    for (int k = 0; k < nmasks; k++)
        fprintf(f, "set arrow %d from %.9g,%.9g to %.9g,%.9g nohead lw 4 lc rgb '%s'\n", k + 1, masks[k].start_hz / 1e9,
                masks[k].bound_db, masks[k].stop_hz / 1e9, masks[k].bound_db,
                masks[k].sense == SV_DESIGN_MAX ? "#d62728" : "#1f77b4");
    fprintf(f, "plot ");
    int col = 2;
    for (int j = 0; j < p; j++)
        for (int i = j; i < p; i++, col++)
            fprintf(f, "%s'%s' using 1:%d with lines lw 2 title 'S_{%d%d}'", col > 2 ? ", " : "", data, col, i + 1, j + 1);
    fprintf(f, ", NaN with lines lw 4 lc rgb '#d62728' title 'mask: max', NaN with lines lw 4 lc rgb '#1f77b4' title "
               "'mask: min'\n");
    return fclose(f) ? -1 : 0;
}

int design_plot(const char *dir, const char *name, const char *title, int p, int nf, const double *freq_hz,
                const double complex *s, int nmasks, const sv_design_mask *masks, char *msg, size_t msglen)
{
    char data[4200], script[4200], tmp[4200], image[4200];
    snprintf(data, sizeof data, "%s/.%s.dat", dir, name);
    snprintf(script, sizeof script, "%s/.%s.gp", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.svg.tmp", dir, name);
    snprintf(image, sizeof image, "%s/%s.svg", dir, name);
    int rc = -1;
    if (write_data(data, p, nf, freq_hz, s) || write_script(script, data, tmp, title, p, nmasks, masks)) {
        snprintf(msg, msglen, "cannot write the plot's data in %s: %s", dir, strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *args[] = {"gnuplot", script, NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        snprintf(msg, msglen, "cannot run gnuplot (%s): install the Debian package gnuplot-nox", strerror(e));
        goto done;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(msg, msglen, "gnuplot failed (status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        goto done;
    }
    if (rename(tmp, image)) {
        snprintf(msg, msglen, "cannot write %s: %s", image, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    remove(data);
    remove(script);
    remove(tmp);
    return rc;
}
