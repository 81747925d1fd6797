/* `solvent sweep`: the main job. Reads a planar project, assembles the
 * model, runs the adaptive frequency sweep, and writes the S-parameters as
 * a Touchstone file and, on request, a plot made with gnuplot. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "solvent/core.h"
#include "solvent/sweep.h"
#include "sweep_tool.h"
#include "tool_args.h"

const char cmd_sweep_summary[] = "S-parameters of a planar project over a frequency band (adaptive sweep)";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent sweep PROJECT.json [-o OUT.sNp] [--plot OUT.svg|png] [--points N]\n"
            "                     [--start F] [--stop F] [--tol T] [--exact] [--precision single|double|reference]\n"
            "                     [--threads N] [--memory-limit B] [--max-exact N] [--device D] [--subdivide K]\n"
            "                     [--allow-beyond-validity] [--quiet]\n"
            "\n"
            "Computes the S-parameters of the project's circuit at N frequencies from\n"
            "--start to --stop (default: the project's \"sweep\" section) with adaptive\n"
            "frequency sampling: a few exact solves, a reduced model in between, more exact\n"
            "solves where the model's residual estimate is largest, until every frequency\n"
            "is below the tolerance.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE     Touchstone file (.sNp, N = number of ports; default:\n"
            "                        PROJECT's name with .sNp in the current folder)\n"
            "  --plot FILE           plot |S_ij| in dB against frequency, with a marker at\n"
            "                        every exactly solved frequency (.svg or .png; needs gnuplot)\n"
            "  --points N            number of frequencies, linearly spaced (N >= 1)\n"
            "  --start F, --stop F   band edges: a number in Hz or with a unit (2.5GHz, 800MHz)\n"
            "  --tol T               relative residual tolerance of the adaptive sweep (default:\n"
            "                        the project's, else 1e-4)\n"
            "  --exact               solve every frequency exactly (no reduced model)\n"
            "  --precision P         single: single-precision factorisation refined to double\n"
            "                        accuracy (default); double: double-precision factorisation;\n"
            "                        reference: a full double copy solved by LAPACK (slow)\n"
            "  --max-exact N         cap on exact solves (default 30)\n"
            "  --subdivide K         mesh every cell of the project as K x K cells (on top of its\n"
            "                        grid.subdivide): a finer mesh of the same drawing, for a\n"
            "                        convergence check\n"
            "  --device D            where the exact solves run: cpu; gpu (an NVIDIA GPU: single-\n"
            "                        precision factorisation on the device refined to double\n"
            "                        accuracy; an error if Solvent was built without CUDA or no\n"
            "                        device passes the start-up self-test); auto (default: the\n"
            "                        GPU when one passes the self-test, else the CPU, with the\n"
            "                        reason on the summary's device line)\n"
            "  --threads N           threads (default: OMP_NUM_THREADS or all cores)\n"
            "  --memory-limit B      refuse to start if the estimate exceeds B bytes (suffixes\n"
            "                        K, M, G, T; default: the machine's available memory)\n"
            "  --allow-beyond-validity  solve above the model's limit with radiation on (where\n"
            "                        the radiation terms' thin-slab expansion stops holding\n"
            "                        and S may exceed 1 on a lossy circuit); without it a band\n"
            "                        reaching above the limit is refused, naming it\n"
            "  --quiet               no progress bar and no summary\n"
            "  -h, --help            this text\n"
            "\n"
            "Output files are written under a temporary name and renamed when complete.\n"
            "A progress bar is drawn on stderr when it is a terminal; a summary follows\n"
            "on stdout.\n"
            "\n"
            "exit codes:\n"
            "  0  success\n"
            "  1  the run failed: unreadable or invalid project, the memory estimate exceeds\n"
            "     the limit, a solve failed, an output could not be written, --device gpu\n"
            "     without a usable GPU\n"
            "  2  bad command-line arguments\n"
            "  3  finished and wrote its outputs, but the adaptive sweep reached the cap on\n"
            "     exact solves before every frequency met the tolerance\n"
            "  130 interrupted (Ctrl-C or SIGTERM): stopped within a fraction of a second,\n"
            "     nothing written\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int cmd_sweep_main(int argc, char **argv)
{
    sweep_args a;
    memset(&a, 0, sizeof(a));
    a.precision = SV_SWEEP_MIXED;
    tool_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                          \
    do {                                                                                      \
        if (!v) {                                                                             \
            tool_say("sweep", "%s needs a value (see --help)", o);                            \
            return 2;                                                                         \
        }                                                                                     \
        if (tool_seen_once(&seen, "sweep", !strcmp(o, "--output") ? "-o" : o)) return 2;     \
        i++;                                                                                  \
    } while (0)
#define BAD(what)                                                                             \
    do {                                                                                      \
        tool_say("sweep", "%s '%s': expected %s", o, v, what);                                \
        return 2;                                                                             \
    } while (0)
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
            NEED_VALUE();
            a.output = v;
        } else if (!strcmp(o, "--plot")) {
            NEED_VALUE();
            const char *dot = strrchr(v, '.');
            if (!dot || (strcasecmp(dot, ".svg") && strcasecmp(dot, ".png"))) BAD("a file name ending in .svg or .png");
            a.plot = v;
        } else if (!strcmp(o, "--points")) {
            NEED_VALUE();
            if (parse_int(v, 1, 10000000, &a.points)) BAD("an integer from 1 to 10000000");
        } else if (!strcmp(o, "--start")) {
            NEED_VALUE();
            if (tool_parse_freq_dc(v, &a.start)) BAD(TOOL_FREQ_DC_EXPECTED);
            a.start_dc = a.start == 0;
        } else if (!strcmp(o, "--stop")) {
            NEED_VALUE();
            if (tool_parse_freq(v, &a.stop)) BAD(TOOL_FREQ_EXPECTED);
        } else if (!strcmp(o, "--tol")) {
            NEED_VALUE();
            if (tool_parse_number(v, &a.tol) || !(a.tol > 0 && a.tol <= SV_SWEEP_TOLERANCE_MAX)) {
                char exp[96];
                snprintf(exp, sizeof exp, "a number > 0 and <= %g (SV_SWEEP_TOLERANCE_MAX)", SV_SWEEP_TOLERANCE_MAX);
                BAD(exp);
            }
        } else if (!strcmp(o, "--exact")) {
            a.exact = 1;
        } else if (!strcmp(o, "--allow-beyond-validity")) {
            a.allow_beyond_validity = 1;
        } else if (!strcmp(o, "--precision")) {
            NEED_VALUE();
            if (!strcmp(v, "single") || !strcmp(v, "mixed")) a.precision = SV_SWEEP_MIXED;
            else if (!strcmp(v, "double")) a.precision = SV_SWEEP_DOUBLE;
            else if (!strcmp(v, "reference")) a.precision = SV_SWEEP_LAPACK;
            else BAD("single, double or reference");
        } else if (!strcmp(o, "--device")) {
            NEED_VALUE();
            if (!strcmp(v, "auto")) a.device = SWEEP_DEVICE_AUTO;
            else if (!strcmp(v, "cpu")) a.device = SWEEP_DEVICE_CPU;
            else if (!strcmp(v, "gpu")) a.device = SWEEP_DEVICE_GPU;
            else BAD("gpu, cpu or auto");
        } else if (!strcmp(o, "--max-exact")) {
            NEED_VALUE();
            if (parse_int(v, 1, 100000, &a.max_exact)) BAD("an integer from 1 to 100000");
        } else if (!strcmp(o, "--subdivide")) {
            NEED_VALUE();
            if (parse_int(v, 1, 16, &a.split)) BAD("an integer from 1 to 16");
        } else if (!strcmp(o, "--threads")) {
            NEED_VALUE();
            if (parse_int(v, 1, 4096, &a.threads)) BAD("an integer from 1 to 4096");
        } else if (!strcmp(o, "--memory-limit")) {
            NEED_VALUE();
            if (tool_parse_bytes(v, &a.memory_limit)) BAD(TOOL_BYTES_EXPECTED);
        } else if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) {
            a.quiet = 1;
        } else if (o[0] == '-' && o[1]) {
            tool_say("sweep", "unknown option '%s' (see --help)", o);
            return 2;
        } else if (!a.project) {
            a.project = o;
        } else {
            tool_say("sweep", "unexpected argument '%s' (one project file expected)", o);
            return 2;
        }
#undef NEED_VALUE
#undef BAD
    }
    if (!a.project) {
        fprintf(stderr, "solvent sweep: no project file given\n\n");
        usage(stderr);
        return 2;
    }
    if (a.start > 0 && a.stop > 0 && a.stop < a.start) {
        fprintf(stderr, "solvent sweep: --stop %g Hz is below --start %g Hz\n", a.stop, a.start);
        return 2;
    }
    if (a.start > 0 && a.stop == a.start && a.points > 1) {
        fprintf(stderr, "solvent sweep: --points %d with --start = --stop = %g Hz: expected --points 1, or --stop "
                        "above --start\n", a.points, a.start);
        return 2;
    }
    if (a.device == SWEEP_DEVICE_GPU && a.precision != SV_SWEEP_MIXED) {
        fprintf(stderr, "solvent sweep: --device gpu solves in single precision refined to double: "
                        "--precision %s runs on the CPU only (use --device cpu)\n",
                a.precision == SV_SWEEP_DOUBLE ? "double" : "reference");
        return 2;
    }
    if (!a.quiet) a.progress = isatty(STDERR_FILENO);
    return sweep_tool_run(&a);
}
