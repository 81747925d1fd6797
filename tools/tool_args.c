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
#include "start.h"

/* The end of a decimal number at s ([+-]digits[.digits][e[+-]digits], at
 * least one digit before the exponent), or NULL: strtod alone would also
 * take hexadecimal ("0x10" as 16), "inf", "nan" and leading blanks. */
static const char *decimal_end(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    int digits = 0;
    for (; isdigit((unsigned char)*p); p++) digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++) digits++;
    if (!digits) return NULL;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        q += *q == '+' || *q == '-';
        if (!isdigit((unsigned char)*q)) return NULL;
        while (isdigit((unsigned char)*q)) q++;
        p = q;
    }
    return p;
}

int tool_parse_number_prefix(const char *s, double *out, const char **rest)
{
    const char *p = decimal_end(s);
    if (!p) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != p) return -1;
    /* a subnormal is a value; a number that overflows, or underflows to
     * zero although its digits are not all zero, is not what was written */
    if (errno == ERANGE && (isinf(v) || v == 0)) return -1;
    *out = v;
    *rest = p;
    return 0;
}

int tool_parse_number(const char *s, double *out)
{
    const char *rest;
    double v;
    if (tool_parse_number_prefix(s, &v, &rest) || *rest) return -1;
    *out = v;
    return 0;
}

static int parse_freq(const char *s, double *out, int dc)
{
    const char *end;
    double v;
    if (tool_parse_number_prefix(s, &v, &end)) return -1;
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
    if (!isfinite(v) || v < 0 || (v == 0 && !dc) || v > SV_EM_MAX_FREQ_HZ) return -1;
    *out = v;
    return 0;
}

int tool_parse_freq(const char *s, double *out) { return parse_freq(s, out, 0); }
int tool_parse_freq_dc(const char *s, double *out) { return parse_freq(s, out, 1); }

int tool_parse_bytes(const char *s, size_t *out)
{
    const char *end;
    double v;
    if (tool_parse_number_prefix(s, &v, &end) || !(v > 0)) return -1;
    double scale = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': scale = 1024.0; break;
        case 'M': scale = 1024.0 * 1024; break;
        case 'G': scale = 1024.0 * 1024 * 1024; break;
        case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
        case 'B': scale = 1; break;
        default: return -1;
        }
        end++;
        if (*end && strcasecmp(end, "B") && strcasecmp(end, "iB")) return -1;
    }
    v *= scale;
    /* a whole number of bytes: below one would truncate to 0, "no limit" */
    if (v < 1 || v >= 1.8e19) return -1;
    *out = (size_t)v;
    return 0;
}

int tool_seen_once(tool_seen *seen, const char *cmd, const char *opt)
{
    for (int k = 0; k < seen->n; k++)
        if (!strcmp(seen->opt[k], opt)) {
            tool_say(cmd, "%s is given twice: expected it once", opt);
            return 2;
        }
    if (seen->n < (int)(sizeof seen->opt / sizeof seen->opt[0])) seen->opt[seen->n++] = opt;
    return 0;
}

const char tool_ulimit_room[] = "room left under ulimit -v";

size_t tool_command_memory_limit(size_t option, const char **which)
{
    size_t requested = option ? option : sv_mem_available();
    size_t limit = tool_memory_limit(requested);
    if (which) *which = limit != requested ? tool_ulimit_room : option ? "--memory-limit" : "available memory";
    return limit;
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

void tool_log_warnings(void *cmd, sv_log_level level, const char *message)
{
    if (level >= SV_LOG_WARN) tool_say((const char *)cmd, "warning: %s", message);
}

void tool_say_model_failure(const char *cmd, const char *project)
{
    char shown[256];
    const char *m = sv_last_error()[0] ? sv_last_error() : "failed";
    if (strstr(m, sv_escape_text(project, shown, sizeof shown))) tool_say(cmd, "%s", m);
    else tool_say(cmd, "%s: %s", project, m);
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
