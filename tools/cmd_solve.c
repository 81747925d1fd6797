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
#include "start.h"
#include "tool_args.h"

const char cmd_solve_summary[] = "solve a planar project at listed frequencies, write Touchstone";

static void usage(FILE *f)
{
    fprintf(f,
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
            "  --threads N      threads (default: all cores)\n"
            "  --memory-limit B refuse to start if the estimate exceeds B bytes (suffixes\n"
            "                   K, M, G, T; default: the machine's available memory)\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct solve_args {
    const char *project, *out, *freqs, *unit;
    int version, threads, split;
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
            int code = parse_value(s, argv[++i], a);
            if (code) return code;
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

/* The memory the solves need, estimated from the mesh before anything
 * large is allocated: refused past the limit (1, after a message), else
 * the limit becomes the context's budget (0; -1 if that failed), as in
 * `solvent sweep`. */
static int check_memory(const solve_args *a, sv_ctx *ctx, const sv_em_model *m, const double *f, int nf)
{
    const char *which;
    size_t limit = tool_command_memory_limit(a->memory_limit, &which);
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m), dc = f[0] == 0;
    size_t need_model = tool_model_bytes(m);
    sv_sweep_shape shape;
    sv_em_affine_shape(m, &shape);
    size_t need_solve =
        sv_sweep_exact_bytes_shape(n, &shape, np, 0, SV_SWEEP_DOUBLE) + (size_t)n * np * sizeof(double complex);
    /* the ports' thru standards run after the solves, beside the model */
    size_t need_cal = nf > dc ? sv_em_calibration_bytes(m, nf - dc, f + dc) : 0;
    size_t need = need_model + (need_solve > need_cal ? need_solve : need_cal);
    if (limit && need > limit) {
        char b1[32], b2[32], b3[32], b4[32], b5[32], cal[80] = "";
        if (need_cal)
            snprintf(cal, sizeof cal, "; after them the ports' calibration standards %s",
                     tool_format_bytes(need_cal, b5, sizeof b5));
        fprintf(stderr,
                "solvent solve: %s: the solves need about %s (the model's terms %s, a solve %s%s) for %d unknowns, "
                "more than the %s limit (%s).\n  Give a larger --memory-limit if the machine has the memory.\n",
                a->project, tool_format_bytes(need, b1, sizeof b1), tool_format_bytes(need_model, b2, sizeof b2),
                tool_format_bytes(need_solve, b3, sizeof b3), cal, n, tool_format_bytes(limit, b4, sizeof b4), which);
        return 1;
    }
    if (limit && sv_ctx_set_memory_limit(ctx, limit)) return -1;
    return 0;
}

/* Read, mesh, model, a direct solve at each frequency, S, the file. */
static int solve_run(const solve_args *a, const double *f, int nf)
{
    int rc = 1;
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    sv_em_model *m = NULL;
    sv_em_affine *model = NULL;
    sv_em_calibration *cal = NULL;
    double complex *S = NULL, *Y = NULL;
    double *z0 = NULL;
    if (sv_ctx_create(&ctx) || (a->threads && sv_ctx_set_threads(ctx, a->threads))) goto fail;
    if (tool_memory_limit(0) && sv_ctx_set_memory_limit(ctx, tool_memory_limit(0))) goto fail; /* ulimit -v's room */
    if (sv_em_project_read(ctx, a->project, &p)) goto fail;
    if (a->split > 1 && sv_em_project_split_cells(p, a->split)) goto fail;
    int np = sv_em_project_ports(p);
    if ((rc = tool_check_touchstone_name("solve", a->out, np))) goto done;
    const char *pixels[] = {sv_em_project_pixels_file(p)};
    if ((rc = tool_check_not_input("solve", "-o", a->out, pixels, 1))) goto done;
    rc = 1;
    sv_em_options eo;
    sv_em_options_default(&eo);
    eo.max_freq_hz = f[nf - 1]; /* the radiation terms hold to the highest frequency */
    if (sv_em_model_create(ctx, p, &eo, &m)) goto fail;
    int mem = check_memory(a, ctx, m, f, nf);
    if (mem < 0) goto fail;
    if (mem > 0) goto done;
    if (sv_em_affine_create(ctx, m, &model)) goto fail;
    if (sv_em_affine_radiates(model) && f[nf - 1] > sv_em_model_limit_hz(m))
        fprintf(stderr, "solvent solve: warning: above %.4g GHz the model no longer holds (electrical size, docs/em.md)\n",
                sv_em_model_limit_hz(m) / 1e9);
    double dlim = sv_em_model_dispersion_limit_hz(m);
    if (dlim > 0 && f[nf - 1] > dlim)
        fprintf(stderr, "solvent solve: note: above %.4g GHz dispersion's expansion may leave eps_eff more than 2 %% off (docs/em.md)\n",
                dlim / 1e9);
    S = malloc(sizeof *S * (size_t)nf * np * np);
    Y = malloc(sizeof *Y * (size_t)nf * np * np);
    z0 = malloc(sizeof *z0 * (size_t)np);
    if (!S || !Y || !z0) {
        fprintf(stderr, "solvent solve: out of memory\n");
        goto done;
    }
    for (int q = 0; q < np; q++) z0[q] = sv_em_project_port_z0(p, q);
    if (a->version == 1)
        for (int q = 1; q < np; q++)
            if (z0[q] != z0[0]) {
                fprintf(stderr, "solvent solve: ports have different z0: use --version 2\n");
                rc = 2;
                goto done;
            }
    int dc = f[0] == 0; /* 0 Hz (listed first): the DC limit of the model */
    if (dc && sv_em_dc_s(ctx, m, z0, S)) goto fail;
    for (int q = dc; q < nf; q++)
        if (sv_em_solve(ctx, model, f[q], Y + (size_t)q * np * np)) {
            tool_say_model_failure("solve", a->project, p, f[q]);
            goto done;
        }
    /* calibrated ports: their thru standards at the same frequencies (at DC
     * an edge port's box is the identity) */
    if (sv_em_project_calibrated(p) && nf > dc) {
        if (sv_em_calibration_create(ctx, m, nf - dc, f + dc, &cal)) goto fail;
        for (int q = dc; q < nf; q++)
            if (sv_em_calibration_apply(cal, q - dc, Y + (size_t)q * np * np)) goto fail;
    }
    for (int q = dc; q < nf; q++)
        if (sv_em_y_to_s(np, Y + (size_t)q * np * np, z0, S + (size_t)q * np * np)) {
            tool_say_model_failure("solve", a->project, p, f[q]);
            goto done;
        }
    {
        char comment[512];
        snprintf(comment, sizeof comment, "solvent %s solve: %s\n%d unknowns, %d ports, direct solves%s%s%s",
                 sv_version_string(), a->project, sv_em_model_unknowns(m), np,
                 sv_em_affine_radiates(model) ? ", radiation" : "", sv_em_affine_disperses(model) ? ", dispersion" : "",
                 cal ? ", calibrated ports" : ", raw edge ports");
        sv_em_ts_options o = {.version = a->version, .format = a->format, .param = SV_EM_TS_S, .unit = a->unit,
                              .comment = comment};
        if (sv_em_touchstone_write(a->out, &o, np, nf, f, S, z0)) goto fail;
    }
    rc = 0;
    goto done;
fail:
    tool_say_model_failure("solve", a->project, p, 0);
done:
    free(S);
    free(Y);
    free(z0);
    sv_em_calibration_destroy(cal);
    sv_em_affine_destroy(model);
    sv_em_model_destroy(m);
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
