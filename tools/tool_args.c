/* Command-line values shared by the subcommands. */
#include "tool_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

static int parse_freq(const char *s, double *out, int dc)
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
    if (!isfinite(v) || v < 0 || (v == 0 && !dc)) return -1;
    *out = v;
    return 0;
}

int tool_parse_freq(const char *s, double *out) { return parse_freq(s, out, 0); }
int tool_parse_freq_dc(const char *s, double *out) { return parse_freq(s, out, 1); }
