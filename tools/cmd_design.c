/* `solvent design`: a pixelated circuit from a spec (docs/design.md). Runs
 * the library's DBS (sv_design_run), then writes into the output folder
 * the best map (CSV in the dataset's form), its project file, the cost
 * history, the map's Touchstone from a full adaptive sweep over the band,
 * and a plot of |S| against the masks. Ctrl-C stops the search and keeps
 * the best map so far: map, project and history are written, then the
 * command exits 130. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "design_tool.h"
#include "interrupt.h"
#include "solvent/core.h"
#include "solvent/gds.h"
#include "solvent/planar.h"
#include "tool_args.h"

const char cmd_design_summary[] = "design a pixelated circuit against masks on |S| (direct binary search, exact flips)";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent design SPEC.json [-o DIR] [--threads N] [--no-sweep] [--quiet]\n"
            "\n"
            "Searches the spec's design region for the pixel map whose |S| best meets its\n"
            "masks (direct binary search; every trial flip evaluated exactly by a low-rank\n"
            "update at the design frequencies), then sweeps the best map over the band.\n"
            "\n"
            "Writes into DIR (default: SPEC's name without .json, then -design):\n"
            "  map.csv        the best map, 0/1, first row the top (the dataset's form)\n"
            "  design.json    a project file of the board with that map\n"
            "  design.gds     its layout as GDSII (merged metal on layer 1, launches\n"
            "                 included) for fabrication\n"
            "  history.csv    the cost after each kept flip (trials so far, cost in dB)\n"
            "  design.sNp     its S-parameters from an adaptive sweep over the board's band\n"
            "                 (its \"sweep\" section, else the masks' span, 201 points)\n"
            "  design.svg     |S| in dB over that band with the masks (needs gnuplot)\n"
            "\n"
            "options:\n"
            "  -o, --output DIR  the output folder (created if missing)\n"
            "  --threads N       threads (default: the spec's \"threads\", else all cores)\n"
            "  --no-sweep        write map, project, layout and history only\n"
            "  --quiet           no progress line and no summary\n"
            "  -h, --help        this text\n"
            "\n"
            "exit codes: 0 success; 1 the run failed (spec, model, memory, an output);\n"
            "2 bad arguments; 130 interrupted (the best map so far written).\n");
}

typedef struct args {
    const char *spec, *out;
    int threads, sweep, quiet;
} args;

static int parse(int argc, char **argv, args *a)
{
    *a = (args){.sweep = 1};
    for (int k = 1; k < argc; k++) {
        const char *o = argv[k];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            exit(0);
        } else if ((!strcmp(o, "-o") || !strcmp(o, "--output")) && k + 1 < argc)
            a->out = argv[++k];
        else if (!strcmp(o, "--threads") && k + 1 < argc) {
            double t;
            if (tool_parse_number(argv[++k], &t) || t < 1 || t > 4096 || t != (int)t) {
                tool_say("design", "--threads %s: expected a whole number from 1 to 4096", argv[k]);
                return 2;
            }
            a->threads = (int)t;
        } else if (!strcmp(o, "--no-sweep"))
            a->sweep = 0;
        else if (!strcmp(o, "--quiet"))
            a->quiet = 1;
        else if (o[0] == '-' && o[1]) {
            tool_say("design", "%s: unknown option or missing value (see solvent design --help)", o);
            return 2;
        } else if (!a->spec)
            a->spec = o;
        else {
            tool_say("design", "%s: one spec at a time", o);
            return 2;
        }
    }
    if (!a->spec) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* The progress line: the library's phase as it is. */
static int progress(void *user, const char *phase, double fraction)
{
    const int *quiet = user;
    if (!*quiet && isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r%-70.70s %3d%%", phase ? phase : "", (int)(100 * fraction + 0.5));
        fflush(stderr);
    }
    return tool_interrupted();
}

static int write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sv_atomic_file *f;
    if (sv_atomic_file_open(path, &f)) return -1;
    fwrite(text, 1, len, sv_atomic_file_stream(f));
    return sv_atomic_file_close(f, 1) ? -1 : 0;
}

/* map.csv, design.json, history.csv */
static int write_design(const char *dir, const sv_design_spec *spec, const sv_design_result *res)
{
    const sv_em_project *b = sv_design_spec_board(spec);
    sv_em_grid g;
    sv_em_project_grid(b, &g);
    const unsigned char *map = sv_design_result_map(res);
    size_t cap = (size_t)g.nx * g.ny * 2 + g.ny + 16;
    char *csv = malloc(cap), *json = NULL;
    if (!csv) return -1;
    size_t n = 0;
    for (int row = 0; row < g.ny; row++)
        for (int i = 0; i < g.nx; i++) {
            csv[n++] = map[i + (size_t)g.nx * (g.ny - 1 - row)] ? '1' : '0';
            csv[n++] = i + 1 < g.nx ? ',' : '\n';
        }
    int rc = write_file(dir, "map.csv", csv, n);
    free(csv);
    if (!rc && sv_design_spec_project_json(spec, map, &json)) rc = -1;
    if (!rc) rc = write_file(dir, "design.json", json, strlen(json));
    free(json);
    int nh;
    const double *h = sv_design_result_history(res, &nh);
    char *hist = malloc(48 * (size_t)nh + 32);
    if (!hist) return -1;
    n = (size_t)sprintf(hist, "trials,cost_db\n");
    for (int k = 0; k < nh; k++) n += (size_t)sprintf(hist + n, "%.0f,%.9g\n", h[2 * k], h[2 * k + 1]);
    if (!rc) rc = write_file(dir, "history.csv", hist, n);
    free(hist);
    return rc;
}

/* design.gds: the designed board's metal, launches included, as merged
 * outlines on layer 1 (docs/how-to/gds.md): the layout a fabricator takes. */
static int write_layout(sv_ctx *ctx, const char *dir, const sv_design_spec *spec, const sv_design_result *res)
{
    sv_em_project *prj;
    if (sv_design_spec_project(ctx, spec, sv_design_result_map(res), &prj)) return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/design.gds", dir);
    sv_status st = sv_em_project_write_gds(ctx, prj, path, SV_GDS_DEFAULT_LAYER, 0, NULL);
    sv_em_project_destroy(prj);
    return st ? -1 : 0;
}

/* The band of the final sweep: the board's sweep section, else the masks' span. */
static void final_band(const sv_design_spec *spec, sv_em_sweep *band)
{
    sv_em_project_sweep(sv_design_spec_board(spec), band);
    if (band->present) return;
    int nm;
    const sv_design_mask *m = sv_design_spec_masks(spec, &nm);
    *band = (sv_em_sweep){1, m[0].start_hz, m[0].stop_hz, 201, 0};
    for (int k = 1; k < nm; k++) {
        band->start_hz = m[k].start_hz < band->start_hz ? m[k].start_hz : band->start_hz;
        band->stop_hz = m[k].stop_hz > band->stop_hz ? m[k].stop_hz : band->stop_hz;
    }
}

/* design.sNp and design.svg */
static int sweep_and_plot(sv_ctx *ctx, const char *dir, const sv_design_spec *spec, const sv_design_result *res, int quiet)
{
    sv_em_project *prj;
    if (sv_design_spec_project(ctx, spec, sv_design_result_map(res), &prj)) return -1;
    sv_planar_options o;
    sv_planar_options_default(&o);
    final_band(spec, &o.band);
    sv_planar_job *job = NULL;
    int rc = -1;
    if (!sv_planar_job_create(ctx, prj, &o, &job) && !sv_planar_job_run(job)) {
        const sv_planar_network *net = sv_planar_job_network(job);
        char path[4200], msg[512];
        snprintf(path, sizeof path, "%s/design.s%dp", dir, net->p);
        sv_em_ts_options ts;
        sv_em_ts_options_default(&ts);
        ts.version = SV_EM_TS_VERSION_FOR_Z0;
        ts.comment = "solvent design: the best map's S over the board's band";
        rc = sv_em_touchstone_write(path, &ts, net->p, net->nf, net->freq_hz, net->s, net->z0) ? -1 : 0;
        int nm;
        const sv_design_mask *m = sv_design_spec_masks(spec, &nm);
        if (!rc && design_plot(dir, "design", "solvent design: |S| of the best map and the masks", net->p, net->nf,
                               net->freq_hz, net->s, nm, m, msg, sizeof msg) &&
            !quiet)
            tool_say("design", "no plot: %s", msg);
    }
    sv_planar_job_destroy(job);
    sv_em_project_destroy(prj);
    return rc;
}

static void summary(const sv_design_report *r)
{
    printf("design: %d unknowns (%d touch the region), %d design frequencies\n", r->unknowns, r->design_unknowns, r->nfreq);
    printf("search: %d passes, %ld trials, %ld kept, %.2f s (set-up %.2f s), %.0f trials/s%s\n", r->passes, r->tried,
           r->accepted, r->seconds, r->seconds_setup,
           r->seconds > r->seconds_setup ? r->tried / (r->seconds - r->seconds_setup) : 0.0,
           r->stopped == 1 ? " (time budget reached)" : r->stopped == 2 ? " (interrupted)" : "");
    printf("cost: %.4f dB at the start, %.4f dB at the end%s; %d constraint violations\n", r->start_cost, r->cost,
           r->cost == 0 ? " (every mask met)" : "", r->violations);
    printf("accuracy: %d full rebuilds, %ld single frequencies rebuilt; largest |dS| between an updated and a fresh "
           "solution %.2e\n", r->refreshes, r->rebuilds, r->max_drift);
}

int cmd_design_main(int argc, char **argv)
{
    args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    char dir[4096];
    if (a.out)
        snprintf(dir, sizeof dir, "%s", a.out);
    else {
        const char *base = strrchr(a.spec, '/') ? strrchr(a.spec, '/') + 1 : a.spec;
        size_t l = strlen(base);
        if (l > 5 && !strcmp(base + l - 5, ".json")) l -= 5;
        snprintf(dir, sizeof dir, "%.*s-design", (int)l, base);
    }
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) return 1;
    sv_ctx_set_progress(ctx, progress, &a.quiet);
    sv_design_spec *spec = NULL;
    sv_design_result *res = NULL;
    rc = 1;
    if (sv_design_spec_read(ctx, a.spec, &spec) || sv_design_spec_set_threads(spec, a.threads) ||
        sv_design_run(ctx, spec, &res)) {
        if (!a.quiet && isatty(STDERR_FILENO)) fputc('\n', stderr);
        if (sv_last_status() == SV_ERR_CANCELLED && tool_interrupted()) {
            /* stopped while the solution was set up: no map to keep yet */
            tool_say("design", "%s: interrupted before the search began: nothing written", a.spec);
            rc = TOOL_EXIT_INTERRUPTED;
        } else
            tool_say("design", "%s", sv_last_error());
        goto done;
    }
    if (!a.quiet && isatty(STDERR_FILENO)) fprintf(stderr, "\r%78s\r", "");
    if (mkdir(dir, 0777) && errno != EEXIST) {
        tool_say("design", "%s: cannot create the output folder: %s", dir, strerror(errno));
        goto done;
    }
    if (write_design(dir, spec, res) || write_layout(ctx, dir, spec, res)) {
        tool_say("design", "%s: cannot write the design: %s", dir, sv_last_error());
        goto done;
    }
    sv_design_report rep;
    sv_design_result_report(res, &rep);
    if (!a.quiet) summary(&rep);
    if (tool_interrupted()) {
        tool_say("design", "interrupted: the best map so far is in %s", dir);
        rc = TOOL_EXIT_INTERRUPTED;
        goto done;
    }
    if (a.sweep && sweep_and_plot(ctx, dir, spec, res, a.quiet)) {
        tool_say("design", "%s: the final sweep: %s", dir, sv_last_error());
        rc = tool_interrupted() ? TOOL_EXIT_INTERRUPTED : 1;
        goto done;
    }
    if (!a.quiet)
        printf("written: %s/map.csv, design.json, design.gds, history.csv%s\n", dir,
               a.sweep ? ", design.sNp, design.svg" : "");
    rc = 0;
done:
    sv_design_result_destroy(res);
    sv_design_spec_destroy(spec);
    sv_ctx_destroy(ctx);
    return rc;
}
