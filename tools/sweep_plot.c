/* `solvent sweep --plot`: |S_ij| in dB against frequency, drawn by gnuplot
 * (Debian's gnuplot-nox): the data, a script and the image go to a
 * temporary folder; the finished image is copied to the destination as an
 * atomic file (sv_atomic_file: never half-written, devices and symlinks
 * written through), so a failed plot never leaves a half-written file. The
 * folder is named after the process; one a killed run left behind is
 * removed by the next plot. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "solvent/core.h"
#include "sweep_tool.h"

extern char **environ;

/* A gnuplot single-quoted string: only ' needs doubling. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

static void remove_tree(const char *dir, const char *const *names, int count)
{
    char path[4600]; /* dir (< 4400) / a known name */
    for (int i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static const char *const plot_files[] = {"data.dat", "exact.dat", "plot.gp", "gnuplot.log", "image"};
#define PLOT_FILES ((int)(sizeof plot_files / sizeof plot_files[0]))

/* Folders solvent-plot-PID-* of ours whose process no longer exists (a run
 * killed before it could clean up): their known files and the folder go. */
static void remove_stale(const char *root)
{
    DIR *d = opendir(root);
    if (!d) return;
    const char prefix[] = "solvent-plot-";
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1)) continue;
        char *end;
        long pid = strtol(e->d_name + sizeof prefix - 1, &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", root, e->d_name);
        if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        remove_tree(path, plot_files, PLOT_FILES);
    }
    closedir(d);
}

/* The finished image from the temporary folder to its destination. */
static int copy_into_place(const char *from, const char *path, char *msg, size_t msglen)
{
    FILE *in = fopen(from, "rb");
    sv_atomic_file *af = NULL;
    if (!in || sv_atomic_file_open(path, &af) != SV_OK) {
        snprintf(msg, msglen, "%s", in ? sv_last_error() : strerror(errno));
        if (in) fclose(in);
        return -1;
    }
    char buf[65536];
    size_t got;
    FILE *out = sv_atomic_file_stream(af);
    while ((got = fread(buf, 1, sizeof buf, in)) > 0 && fwrite(buf, 1, got, out) == got) {
    }
    int bad = ferror(in) || ferror(out);
    fclose(in);
    if (sv_atomic_file_close(af, !bad) != SV_OK || bad) {
        snprintf(msg, msglen, "%s", bad ? "cannot copy the image into place" : sv_last_error());
        return -1;
    }
    return 0;
}

int sweep_plot(const char *path, const char *title, int p, int nf, const double *freq_hz,
               const double complex *s, const unsigned char *exact, char *msg, size_t msglen)
{
    const char *ext = strrchr(path, '.');
    int svg = ext && !strcasecmp(ext, ".svg");
    const char *tmproot = getenv("TMPDIR");
    if (!tmproot || !*tmproot) tmproot = "/tmp";
    remove_stale(tmproot);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/solvent-plot-%ld-XXXXXX", tmproot, (long)getpid());
    if (!mkdtemp(dir)) {
        snprintf(msg, msglen, "cannot create a temporary folder in %s: %s", tmproot, strerror(errno));
        return -1;
    }
    char fpath[4200];
    /* data: f (GHz), then |S_ij| dB for i >= j */
    double ymin = INFINITY, ymax = -INFINITY;
    snprintf(fpath, sizeof fpath, "%s/data.dat", dir);
    FILE *f = NULL;
    f = fopen(fpath, "w");
    if (!f) goto io_fail;
    for (int k = 0; k < nf; k++) {
        fprintf(f, "%.12g", freq_hz[k] / 1e9);
        for (int j = 0; j < p; j++)
            for (int i = j; i < p; i++) {
                double mag = cabs(s[(size_t)k * p * p + (size_t)j * p + i]);
                double db = mag > 1e-15 ? 20 * log10(mag) : -300;
                if (db > -300) {
                    ymin = fmin(ymin, db);
                    ymax = fmax(ymax, db);
                }
                fprintf(f, " %.9g", db);
            }
        fputc('\n', f);
    }
    {
        int e = fclose(f);
        f = NULL;
        if (e) goto io_fail;
    }
    if (!isfinite(ymin)) ymin = -60, ymax = 0;
    double lo = 10 * floor(ymin / 10) - 5, hi = 5 * ceil(ymax / 5) + 2;
    if (hi - lo < 10) lo = hi - 10;
    snprintf(fpath, sizeof fpath, "%s/exact.dat", dir);
    f = fopen(fpath, "w");
    if (!f) goto io_fail;
    int nexact = 0;
    for (int k = 0; k < nf; k++)
        if (exact[k]) fprintf(f, "%.12g\n", freq_hz[k] / 1e9), nexact++;
    {
        int e = fclose(f);
        f = NULL;
        if (e) goto io_fail;
    }

    char tmpout[4200];
    snprintf(tmpout, sizeof tmpout, "%s/image", dir);
    snprintf(fpath, sizeof fpath, "%s/plot.gp", dir);
    f = fopen(fpath, "w");
    if (!f) goto io_fail;
    if (svg)
        fprintf(f, "set terminal svg size 960,600 dynamic enhanced font 'Helvetica,14' background rgb 'white'\n");
    else
        fprintf(f, "set terminal pngcairo size 1280,800 enhanced font 'Sans,13' background rgb 'white'\n");
    fprintf(f, "set output ");
    put_quoted(f, tmpout);
    fprintf(f, "\nset title ");
    put_quoted(f, title);
    fprintf(f, " noenhanced\n"
               "set xlabel 'Frequency (GHz)'\n"
               "set ylabel '|S_{ij}| (dB)'\n"
               "set grid\n"
               "set key outside right top\n"
               "set xrange [%.12g:%.12g]\n"
               "set yrange [%g:%g]\n",
            freq_hz[0] / 1e9, freq_hz[nf - 1] / 1e9 > freq_hz[0] / 1e9 ? freq_hz[nf - 1] / 1e9 : freq_hz[0] / 1e9 + 1,
            lo, hi);
    fprintf(f, "cd ");
    put_quoted(f, dir);
    fprintf(f, "\nplot ");
    int col = 2;
    for (int j = 0; j < p; j++)
        for (int i = j; i < p; i++, col++)
            fprintf(f, "'data.dat' using 1:%d with lines lw 2 dt %d title 'S_{%d%d}', ", col, 1 + (col - 2) % 3, i + 1,
                    j + 1);
    if (nexact)
        fprintf(f, "'exact.dat' using 1:(%g) with points pt 9 ps 1.4 lc rgb 'black' title 'exact solve'\n", lo + 1.5);
    else
        fprintf(f, "NaN notitle\n");
    {
        int e = fclose(f);
        f = NULL;
        if (e) goto io_fail;
    }

    /* run gnuplot with its output captured in the log */
    char logp[4200];
    snprintf(logp, sizeof logp, "%s/gnuplot.log", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    char *args[] = {"gnuplot", fpath, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        snprintf(msg, msglen, "cannot run gnuplot (%s): install the Debian package gnuplot-nox", strerror(rc));
        remove_tree(dir, plot_files, PLOT_FILES);
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char log[400] = "";
        FILE *lf = fopen(logp, "r");
        if (lf) {
            size_t got = fread(log, 1, sizeof log - 1, lf);
            log[got] = 0;
            fclose(lf);
        }
        snprintf(msg, msglen, "gnuplot failed (status %d): %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, log);
        remove_tree(dir, plot_files, PLOT_FILES);
        return -1;
    }
    struct stat st;
    if (stat(tmpout, &st) || st.st_size == 0) {
        snprintf(msg, msglen, "gnuplot wrote no image");
        remove_tree(dir, plot_files, PLOT_FILES);
        return -1;
    }
    rc = copy_into_place(tmpout, path, msg, msglen);
    remove_tree(dir, plot_files, PLOT_FILES);
    return rc;

io_fail:
    snprintf(msg, msglen, "cannot write the plot's data in %s: %s", dir, strerror(errno));
    if (f) fclose(f);
    remove_tree(dir, plot_files, PLOT_FILES);
    return -1;
}
