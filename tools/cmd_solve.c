#define _POSIX_C_SOURCE 200809L
/* `solvent solve PROJECT.json --freq F[,F...] -o OUT.sNp`: direct solves of
 * a planar project at the listed frequencies, written as a Touchstone file. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "solvent/em.h"
#include "solvent/planar.h"
#include "interrupt.h"
#include "start.h"
#include "tool_args.h"

const char cmd_solve_summary[] = "solve a planar project at listed frequencies, write Touchstone";

static const char usage_text[] =
    "usage: solvent solve PROJECT.json --freq F[,F...] -o OUT.sNp [options]\n\n"
    "Assembles the project's model once (the same model as `solvent sweep`:\n"
    "radiation and calibrated ports unless the project switches them off) and\n"
    "solves it directly at each listed frequency, then writes the S-parameters\n"
    "(reference impedances from the project) as a Touchstone file. The file is\n"
    "written to a temporary name and renamed, so it is never left half-written.\n\n"
    "  --freq LIST      frequencies, comma-separated, each a number with an\n"
    "                   optional unit: 1e9, 2.5GHz, 900MHz, 10kHz (default Hz)\n"
    "  -o PATH          output file; its extension must be .sNp for N ports\n"
    "  --format F       ri (default), ma or db\n"
    "  --version V      Touchstone version 1 (1.1, default) or 2 (2.0)\n"
    "  --unit U         frequency unit in the file: Hz, kHz, MHz, GHz (default)\n"
    "  --subdivide K    mesh every cell of the project as K x K cells (on top of\n"
    "                   its grid.subdivide): a finer mesh of the same drawing\n"
    "  --threads N      threads (default: OMP_NUM_THREADS or all cores)\n"
    "  --memory-limit B refuse to start if the estimate exceeds B bytes (suffixes\n"
    "                   K, M, G, T; default: the machine's available memory)\n"
    "  --allow-beyond-validity\n"
    "                   solve above the model's limit with radiation on (where the\n"
    "                   radiation terms' thin-slab expansion stops holding and S may\n"
    "                   exceed 1 on a lossy circuit); without it such a frequency is\n"
    "                   refused, naming the limit\n\n"
    "Exit codes: 0 success, 1 a failed run, 2 bad arguments, 130 interrupted\n"
    "(Ctrl-C or SIGTERM: nothing written).\n";

static void usage(FILE *f) { fputs(usage_text, f); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct solve_args {
    const char *project, *out, *freqs, *unit;
    int version, threads, split, allow_beyond_validity;
    size_t memory_limit;
    sv_em_ts_format format;
} solve_args;

/* An integer option from 1 to hi; returns 0 or the exit code. */
static int parse_count(const char *opt, const char *v, long hi, int *out)
{
    char *e;
    long t = strtol(v, &e, 10);
    if (e == v || *e || t < 1 || t > hi) {
        tool_say("solve", "%s %s: expected an integer from 1 to %ld", opt, v, hi);
        return 2;
    }
    *out = (int)t;
    return 0;
}

/* The value of option s (`v`) into a; returns 0 or the exit code. */
static int parse_value(const char *s, const char *v, solve_args *a)
{
    if (!strcmp(s, "--freq")) a->freqs = v;
    else if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--format")) {
        if (!strcasecmp(v, "ri")) a->format = SV_EM_TS_RI;
        else if (!strcasecmp(v, "ma")) a->format = SV_EM_TS_MA;
        else if (!strcasecmp(v, "db")) a->format = SV_EM_TS_DB;
        else {
            tool_say("solve", "--format %s: expected ri, ma or db", v);
            return 2;
        }
    } else if (!strcmp(s, "--version")) {
        if (!strcmp(v, "1") || !strcmp(v, "1.1")) a->version = 1;
        else if (!strcmp(v, "2") || !strcmp(v, "2.0")) a->version = 2;
        else {
            tool_say("solve", "--version %s: expected 1 or 2", v);
            return 2;
        }
    } else if (!strcmp(s, "--unit")) {
        if (strcasecmp(v, "Hz") && strcasecmp(v, "kHz") && strcasecmp(v, "MHz") && strcasecmp(v, "GHz")) {
            tool_say("solve", "--unit %s: expected Hz, kHz, MHz or GHz", v);
            return 2;
        }
        a->unit = v;
    } else if (!strcmp(s, "--memory-limit")) {
        if (tool_parse_bytes(v, &a->memory_limit)) {
            tool_say("solve", "--memory-limit '%s': expected %s", v, TOOL_BYTES_EXPECTED);
            return 2;
        }
    } else if (!strcmp(s, "--subdivide")) {
        return parse_count(s, v, 16, &a->split);
    } else {
        return parse_count(s, v, 4096, &a->threads);
    }
    return 0;
}

/* The command line into a; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, solve_args *a)
{
    *a = (solve_args){.unit = "GHz", .version = 1, .format = SV_EM_TS_RI};
    tool_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(s, "--freq") || !strcmp(s, "-o") || !strcmp(s, "--format") || !strcmp(s, "--version") ||
            !strcmp(s, "--unit") || !strcmp(s, "--threads") || !strcmp(s, "--memory-limit") ||
            !strcmp(s, "--subdivide")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "solvent solve: %s needs a value\n", s);
                return 2;
            }
            int code = tool_seen_once(&seen, "solve", s);
            if (!code) code = parse_value(s, argv[++i], a);
            if (code) return code;
        } else if (!strcmp(s, "--allow-beyond-validity")) {
            a->allow_beyond_validity = 1;
        } else if (s[0] == '-' && s[1]) {
            tool_say("solve", "unknown option '%s' (see --help)", s);
            return 2;
        } else if (!a->project) {
            a->project = s;
        } else {
            tool_say("solve", "unexpected argument '%s'", s);
            return 2;
        }
    }
    if (!a->project || !a->freqs || !a->out) {
        fprintf(stderr, "solvent solve: %s is required\n\n", !a->project ? "PROJECT.json" : !a->freqs ? "--freq" : "-o");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* --freq's comma-separated list, ascending, without repeats (malloc'ed into
 * *out); returns 0 or the exit code. */
static int parse_freq_list(const char *freqs, double **out, int *count)
{
    int nf = 1;
    for (const char *c = freqs; *c; c++) nf += *c == ',';
    double *f = malloc(sizeof(double) * nf);
    char *copy = strdup(freqs);
    if (!f || !copy) {
        fprintf(stderr, "solvent solve: out of memory\n");
        free(f);
        free(copy);
        return 1;
    }
    int k = 0, code = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !code; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok)) tok++;
        if (tool_parse_freq_dc(tok, &f[k++])) {
            tool_say("solve", "--freq: '%s': expected %s", tok, TOOL_FREQ_DC_EXPECTED);
            code = 2;
        }
    }
    free(copy);
    if (!code && k != nf) {
        tool_say("solve", "--freq '%s': expected a comma-separated list without empty entries", freqs);
        code = 2;
    }
    if (!code) qsort(f, nf, sizeof *f, cmp_double);
    for (int q = 1; !code && q < nf; q++)
        if (f[q] == f[q - 1]) {
            fprintf(stderr, "solvent solve: --freq: %g Hz is listed twice\n", f[q]);
            code = 2;
        }
    if (code) {
        free(f);
        return code;
    }
    *out = f;
    *count = nf;
    return 0;
}

/* The command line as the job's options: direct solves in double
 * precision at the listed frequencies, on the CPU. */
static void job_options(const solve_args *a, const double *f, int nf, sv_planar_options *o)
{
    sv_planar_options_default(o);
    o->freq_hz = f;
    o->nfreq = nf;
    o->exact_all = 1;
    o->precision = SV_SWEEP_DOUBLE;
    o->device = SV_PLANAR_DEVICE_CPU;
    o->subdivide = a->split;
    o->allow_beyond_validity = a->allow_beyond_validity;
    o->threads = a->threads;
    o->memory_limit = tool_memory_limit(a->memory_limit); /* never past ulimit -v's room */
    o->memory_limit_name = o->memory_limit != a->memory_limit ? tool_ulimit_room
                           : a->memory_limit                 ? "--memory-limit"
                                                             : NULL;
}

/* Where the model stops holding, when the frequencies reach past it. */
static void say_validity(const sv_planar_report *r)
{
    if (r->beyond_limit)
        fprintf(stderr,
                "solvent solve: warning: above %.4g GHz the model no longer holds (electrical size, docs/em.md); "
                "solved there as --allow-beyond-validity asks: S may exceed 1\n",
                r->model_limit_hz / 1e9);
    if (r->dispersion_limit_hz > 0 && r->stop_hz > r->dispersion_limit_hz)
        fprintf(stderr, "solvent solve: note: above %.4g GHz dispersion's expansion may leave eps_eff more than 2 %% off (docs/em.md)\n",
                r->dispersion_limit_hz / 1e9);
}

static int write_touchstone(const solve_args *a, const sv_planar_network *net, const sv_planar_report *r)
{
    char comment[512];
    snprintf(comment, sizeof comment, "solvent %s solve: %s\n%d unknowns, %d ports, direct solves%s%s%s",
             sv_version_string(), a->project, r->unknowns, net->p, r->radiation ? ", radiation" : "",
             r->dispersion ? ", dispersion" : "", r->calibrated ? ", calibrated ports" : ", raw edge ports");
    sv_em_ts_options o = {.version = a->version, .format = a->format, .param = SV_EM_TS_S, .unit = a->unit,
                          .comment = comment};
    return sv_em_touchstone_write(a->out, &o, net->p, net->nf, net->freq_hz, net->s, net->z0) ? -1 : 0;
}

/* The outputs checked against the project: the name says its port count,
 * it is not its pixel map, and version 1 needs equal references. */
static int check_output(const solve_args *a, const sv_em_project *p)
{
    int np = sv_em_project_ports(p), code = tool_check_touchstone_name("solve", a->out, np);
    const char *pixels[] = {sv_em_project_pixels_file(p)};
    if (!code) code = tool_check_not_input("solve", "-o", a->out, pixels, 1);
    for (int q = 1; !code && a->version == 1 && q < np; q++)
        if (sv_em_project_port_z0(p, q) != sv_em_project_port_z0(p, 0)) {
            fprintf(stderr, "solvent solve: ports have different z0: use --version 2\n");
            code = 2;
        }
    return code;
}

/* Read, check the output, run the planar job, write the file. */
static int solve_run(const solve_args *a, const double *f, int nf)
{
    int rc = 1;
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    sv_planar_job *job = NULL;
    sv_planar_options o;
    job_options(a, f, nf, &o);
    if (sv_ctx_create(&ctx)) goto fail;
    sv_ctx_set_log(ctx, tool_log_warnings, (void *)"solve"); /* the project's warnings, while it is read */
    sv_status read = sv_em_project_read(ctx, a->project, &p);
    sv_ctx_set_log(ctx, NULL, NULL);
    if (read) goto fail;
    if ((rc = check_output(a, p))) goto done;
    rc = 1;
    if (sv_planar_job_create(ctx, p, &o, &job)) goto fail;
    sv_ctx_set_progress(ctx, tool_progress_quietly, NULL);
    if (sv_planar_job_run(job)) {
        if (sv_last_status() == SV_ERR_CANCELLED && tool_interrupted()) {
            tool_say("solve", "%s: interrupted: nothing written", a->project);
            rc = TOOL_EXIT_INTERRUPTED;
            goto done;
        }
        tool_say_model_failure("solve", a->project);
        if (sv_last_status() == SV_ERR_BUDGET && strstr(sv_last_error(), "more than the"))
            fprintf(stderr, "  Give a larger --memory-limit if the machine has the memory.\n");
        goto done;
    }
    sv_planar_report r;
    sv_planar_job_report(job, &r);
    say_validity(&r);
    if (write_touchstone(a, sv_planar_job_network(job), &r)) goto fail;
    rc = 0;
    goto done;
fail:
    tool_say_model_failure("solve", a->project);
done:
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    return rc;
}

int cmd_solve_main(int argc, char **argv)
{
    solve_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0) return code;
    const char *inputs[] = {a.project};
    if ((code = tool_check_not_input("solve", "-o", a.out, inputs, 1))) return code;
    double *f = NULL;
    int nf = 0;
    if ((code = parse_freq_list(a.freqs, &f, &nf))) return code;
    code = solve_run(&a, f, nf);
    free(f);
    return code;
}
