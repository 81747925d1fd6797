/* Command-line values shared by the subcommands. */
#include "tool_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "solvent/em.h"

int tool_parse_freq(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return -1;
    while (isspace((unsigned char)*end)) end++;
    double scale = 1.0;
    if (*end) {
        if (!strcasecmp(end, "hz")) scale = 1.0;
        else if (!strcasecmp(end, "khz")) scale = 1e3;
        else if (!strcasecmp(end, "mhz")) scale = 1e6;
        else if (!strcasecmp(end, "ghz")) scale = 1e9;
        else if (!strcasecmp(end, "thz")) scale = 1e12;
        else return -1;
    }
    v *= scale;
    if (!isfinite(v) || v <= 0 || v > SV_EM_MAX_FREQ_HZ) return -1;
    *out = v;
    return 0;
}

void tool_say(const char *cmd, const char *fmt, ...)
{
    char raw[2048], shown[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    fprintf(stderr, "solvent %s: %s\n", cmd, sv_escape_text(raw, shown, sizeof shown));
}

void tool_say_model_failure(const char *cmd, const char *project, const sv_em_project *p, double f_hz)
{
    char shown[256], hint[320] = "";
    const char *m = sv_last_error()[0] ? sv_last_error() : "failed";
    if (sv_last_status() == SV_ERR_SINGULAR && p && f_hz > 0) {
        sv_em_grid g;
        sv_em_project_grid(p, &g);
        double cell = g.dx > g.dy ? g.dx : g.dy, waves = cell * f_hz / 299792458.0;
        /* the low-frequency breakdown: jωL drowns in Ψ/ω's rounding */
        if (waves < 1e-7)
            snprintf(hint, sizeof hint,
                     " (at %g Hz the cells, %g m, are %.1e wavelengths: a model this small electrically is "
                     "singular in double precision; use larger cells or a higher frequency)",
                     f_hz, cell, waves);
    }
    if (strstr(m, sv_escape_text(project, shown, sizeof shown))) tool_say(cmd, "%s%s", m, hint);
    else tool_say(cmd, "%s: %s%s", project, m, hint);
}

int tool_check_not_input(const char *cmd, const char *opt, const char *out, const char *const *inputs, int n)
{
    struct stat so, si;
    if (stat(out, &so) != 0) return 0; /* not there yet: no input can be it */
    for (int k = 0; k < n; k++) {
        if (!inputs[k] || stat(inputs[k], &si) != 0 || !S_ISREG(si.st_mode)) continue;
        if (so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
            tool_say(cmd, "%s %s is the input file %s itself: choose another output name", opt, out, inputs[k]);
            return 2;
        }
    }
    return 0;
}

int tool_check_touchstone_name(const char *cmd, const char *path, int ports)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) return 0;
    char want[32];
    snprintf(want, sizeof want, ".s%dp", ports);
    const char *dot = strrchr(path, '.');
    if (dot && !strchr(dot, '/') && !strcasecmp(dot, want)) return 0;
    tool_say(cmd, "-o %s: a %d-port result needs a name ending in %s", path, ports, want);
    return 2;
}
