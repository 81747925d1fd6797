/* `solvent batch`: many pixel maps on one board (a dataset), each map's
 * S-parameters by the library's batch (sv_planar_batch: the board's tables
 * made once, maps side by side), written as one Touchstone file per map or
 * one numpy array for all, with an index that lets an interrupted batch
 * restart where it stopped. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_tool.h"
#include "interrupt.h"
#include "solvent/core.h"
#include "solvent/em.h"
#include "solvent/planar.h"
#include "tool_args.h"

const char cmd_batch_summary[] = "S-parameters of many pixel maps on one board (a dataset), resumable";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent batch BOARD.json [MAP.csv | DIR]... [--list FILE] -o OUTDIR\n"
            "                     [--format touchstone|npy] [--points N] [--start F] [--stop F]\n"
            "                     [--threads N] [--memory-limit B] [--quiet]\n"
            "\n"
            "Computes the S-parameters of many pixel maps on one board: BOARD.json is a\n"
            "project file (grid, stack-up, ports, band, effects) whose metal each map\n"
            "replaces. A map is a CSV of 0/1 (1 = metal), comma-separated, one grid row a\n"
            "line, the first line the top row (the datasets' form), of the board's grid\n"
            "size; a DIR stands for every *.csv in it. What every map shares (the\n"
            "coefficient tables over the whole grid, thick metal's wall tables, the edge\n"
            "profile's changes) is computed once, and the maps run side by side, one per\n"
            "thread; each map's S is what 'solvent sweep' gives for the board with that map.\n"
            "\n"
            "A map that cannot run (no metal at a port, an unreadable CSV) is reported in\n"
            "the index with the reason and skipped. Running the same command again after an\n"
            "interruption solves only the maps the index does not list yet.\n"
            "\n"
            "options:\n"
            "  -o, --output DIR      output directory (made if missing): index.csv (one row\n"
            "                        per finished map: row, map, status ok|failed, message)\n"
            "                        and the S-parameters\n"
            "  --format F            touchstone (default): MAP.sNp per map (N = ports);\n"
            "                        npy: s.npy, complex128 of shape (maps, frequencies,\n"
            "                        N, N), S[k, f, i, j] = S_ij of row k's map (NaN until\n"
            "                        solved), and freq_hz.npy, the frequencies (Hz)\n"
            "  --list FILE           maps listed in FILE, one CSV path a line (relative to\n"
            "                        FILE's folder; blank lines and lines starting with #\n"
            "                        skipped), after those on the command line\n"
            "  --points N            number of frequencies, linearly spaced (N >= 1)\n"
            "  --start F, --stop F   band edges: a number in Hz or with a unit (2.5GHz, 800MHz);\n"
            "                        default: the board's \"sweep\" section\n"
            "  --threads N           threads: N maps at a time (default: OMP_NUM_THREADS or\n"
            "                        all cores)\n"
            "  --memory-limit B      the whole batch's memory limit: the shared tables, then\n"
            "                        an equal share per map in flight (suffixes K, M, G, T;\n"
            "                        default: the machine's available memory)\n"
            "  --quiet               no progress bar and no summary\n"
            "  -h, --help            this text\n"
            "\n"
            "Each map's output is complete before its row is added to the index (a Touchstone\n"
            "file is written under a temporary name and renamed; a block of s.npy is written\n"
            "and synced). A progress bar with the rate and the time left is drawn on stderr\n"
            "when it is a terminal; a summary follows on stdout.\n"
            "\n"
            "exit codes:\n"
            "  0  every map solved\n"
            "  1  the batch failed: unreadable or invalid board, the shared tables exceed\n"
            "     the memory limit, an output could not be written\n"
            "  2  bad command-line arguments\n"
            "  3  finished, but some maps could not run (their index rows say why)\n"
            "  130 interrupted (Ctrl-C or SIGTERM): the maps in flight stopped; every map\n"
            "     in the index is complete; run the same command again to go on\n");
}

typedef struct batch_args {
    const char *board, *list, *outdir;
    const char **inputs;
    int ninputs;
    batch_format format;
    int points, threads, quiet, progress;
    double start, stop;
    size_t memory_limit;
} batch_args;

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* Returns 0, or the exit code (2) after a message; -1: --help shown. */
static int parse_args(int argc, char **argv, batch_args *a)
{
    tool_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                      \
    do {                                                                                  \
        if (!v) return tool_say("batch", "%s needs a value (see --help)", o), 2;          \
        if (tool_seen_once(&seen, "batch", !strcmp(o, "--output") ? "-o" : o)) return 2;  \
        i++;                                                                              \
    } while (0)
#define BAD(what) return tool_say("batch", "%s '%s': expected %s", o, v, what), 2
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
            NEED_VALUE();
            a->outdir = v;
        } else if (!strcmp(o, "--format")) {
            NEED_VALUE();
            if (!strcmp(v, "touchstone")) a->format = BATCH_TOUCHSTONE;
            else if (!strcmp(v, "npy")) a->format = BATCH_NPY;
            else BAD("touchstone or npy");
        } else if (!strcmp(o, "--list")) {
            NEED_VALUE();
            a->list = v;
        } else if (!strcmp(o, "--points")) {
            NEED_VALUE();
            if (parse_int(v, 1, 10000000, &a->points)) BAD("an integer from 1 to 10000000");
        } else if (!strcmp(o, "--start")) {
            NEED_VALUE();
            if (tool_parse_freq(v, &a->start)) BAD(TOOL_FREQ_EXPECTED);
        } else if (!strcmp(o, "--stop")) {
            NEED_VALUE();
            if (tool_parse_freq(v, &a->stop)) BAD(TOOL_FREQ_EXPECTED);
        } else if (!strcmp(o, "--threads")) {
            NEED_VALUE();
            if (parse_int(v, 1, 1024, &a->threads)) BAD("an integer from 1 to 1024");
        } else if (!strcmp(o, "--memory-limit")) {
            NEED_VALUE();
            if (tool_parse_bytes(v, &a->memory_limit)) BAD(TOOL_BYTES_EXPECTED);
        } else if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) {
            a->quiet = 1;
        } else if (o[0] == '-' && o[1]) {
            return tool_say("batch", "unknown option '%s' (see --help)", o), 2;
        } else if (!a->board) {
            a->board = o;
        } else {
            a->inputs[a->ninputs++] = o;
        }
#undef NEED_VALUE
#undef BAD
    }
    if (!a->board) return fprintf(stderr, "solvent batch: no board given\n\n"), usage(stderr), 2;
    if (!a->ninputs && !a->list) return tool_say("batch", "no maps given (CSV files, directories or --list)"), 2;
    if (!a->outdir) return tool_say("batch", "no output directory given (-o OUTDIR)"), 2;
    if (a->start > 0 && a->stop > 0 && a->stop < a->start)
        return tool_say("batch", "--stop %g Hz is below --start %g Hz", a->stop, a->start), 2;
    if (!a->quiet) a->progress = isatty(STDERR_FILENO);
    return 0;
}

/* The batch as it runs: what its callback needs. */
typedef struct batch_run {
    const batch_args *a;
    const batch_maps *ms;
    batch_out *out;
    const int *rows;           /* the batch's k-th map is row rows[k] of the maps */
    int todo, solved, failed, write_failed;
    double t0, last_draw;
} batch_run;

/* The bar: maps done of those to do, the rate and the time left. */
static void draw_bar(batch_run *r, int final)
{
    double now = sv_time_now();
    if (!r->a->progress || (!final && now - r->last_draw < 0.1)) return;
    r->last_draw = now;
    int done = r->solved + r->failed, width = 30, full = r->todo ? done * width / r->todo : width;
    char cells[64];
    for (int i = 0; i < width; i++) cells[i] = i < full ? '#' : '.';
    cells[width] = 0;
    double el = now - r->t0, rate = el > 0 ? done / el : 0, left = rate > 0 ? (r->todo - done) / rate : 0;
    fprintf(stderr, "\rbatch [%s] %d/%d maps  %.1f maps/s  %d:%02d left ", cells, done, r->todo, rate,
            (int)left / 60, (int)left % 60);
    if (final) fprintf(stderr, "\r%100s\r", "");
    fflush(stderr);
}

static int on_map(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    batch_run *r = user;
    k = r->rows[k];
    int bad = job ? batch_out_solved(r->out, r->ms, k, job) : batch_out_failed(r->out, r->ms, k, message);
    if (job) r->solved++;
    else r->failed++;
    if (!job && !r->a->quiet) {
        if (r->a->progress) fprintf(stderr, "\r%100s\r", ""); /* the message on a line of its own */
        tool_say("batch", "map %s: %s (%s)", r->ms->m[k].name, message, sv_status_string(status));
    }
    r->write_failed |= bad;
    draw_bar(r, 0);
    return bad || tool_interrupted();
}

/* The maps to solve: those the index has no row for, each read from its CSV
 * (one that cannot be read gets its row now, with the reason). */
static int read_maps(batch_run *r, const sv_em_project *board, unsigned char **maps, int *rows, int *n)
{
    sv_em_grid g;
    sv_em_project_grid(board, &g);
    *n = 0;
    for (int k = 0; k < r->ms->n; k++) {
        if (r->out->done[k]) continue;
        unsigned char *map = malloc((size_t)g.nx * g.ny);
        if (!map) return tool_say("batch", "out of memory reading the maps"), 1;
        if (sv_em_map_csv_read(board, r->ms->m[k].path, map)) {
            free(map);
            if (!r->a->quiet) tool_say("batch", "map %s: %s", r->ms->m[k].name, sv_last_error());
            if (batch_out_failed(r->out, r->ms, k, sv_last_error())) return 1;
            r->failed++;
            continue;
        }
        maps[*n] = map;
        rows[(*n)++] = k;
    }
    return 0;
}

static void options(const batch_args *a, sv_planar_batch_options *o)
{
    sv_planar_batch_options_default(o);
    o->job.band.start_hz = a->start;
    o->job.band.stop_hz = a->stop;
    o->job.band.points = a->points;
    const char *which; /* (each map's share is named by the library) */
    o->memory_limit = tool_command_memory_limit(a->memory_limit, &which);
}

/* The frequencies every map gets: the band resolved against the board. */
static int band_points(const batch_args *a, const sv_em_project *board, int *nf)
{
    sv_em_sweep given = {.start_hz = a->start, .stop_hz = a->stop, .points = a->points}, band;
    if (sv_em_project_band(board, &given, &band)) return tool_say("batch", "%s: %s", a->board, sv_last_error()), 1;
    *nf = band.points;
    return 0;
}

static int solve(batch_run *r, const sv_em_project *board, unsigned char **maps, int n)
{
    const batch_args *a = r->a;
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx)) return tool_say("batch", "%s", sv_last_error()), 1;
    if (a->threads) sv_ctx_set_threads(ctx, a->threads);
    sv_ctx_set_progress(ctx, tool_progress_quietly, NULL);
    sv_ctx_set_log(ctx, tool_log_warnings, (void *)"batch");
    sv_planar_batch_options o;
    options(a, &o);
    sv_planar_batch *b = NULL;
    sv_status s = sv_planar_batch_create(ctx, board, &o, &b);
    r->t0 = sv_time_now();
    if (!s) s = sv_planar_batch_run(b, n, (const unsigned char *const *)maps, on_map, r);
    draw_bar(r, 1);
    int code = 0;
    if (r->write_failed) code = 1;
    else if (s == SV_ERR_CANCELLED && tool_interrupted()) {
        tool_say("batch", "interrupted: every map in %s/index.csv is complete; run the same command again to go on",
                 a->outdir);
        code = TOOL_EXIT_INTERRUPTED;
    }
    else if (s) code = (tool_say_model_failure("batch", a->board), 1);
    sv_planar_batch_destroy(b);
    sv_ctx_destroy(ctx);
    return code;
}

static void summary(const batch_run *r, int skipped, int code)
{
    double el = sv_time_now() - r->t0;
    char before[64] = "";
    if (r->out->failed_before) snprintf(before, sizeof before, " (%d of them failed)", r->out->failed_before);
    printf("%d maps: %d solved, %d failed, %d done before%s; %.2f s, %.2f maps/s%s\n", r->ms->n, r->solved,
           r->failed, skipped, before, el, el > 0 ? r->solved / el : 0.0,
           code == TOOL_EXIT_INTERRUPTED ? " (interrupted: run the same command again to go on)" : "");
}

static int run(const batch_args *a, batch_maps *ms)
{
    sv_em_project *board = NULL;
    if (sv_em_project_read(NULL, a->board, &board)) return tool_say_model_failure("batch", a->board), 1;
    batch_out out = {.dir = a->outdir, .format = a->format, .nmaps = ms->n, .p = sv_em_project_ports(board),
                     .board_name = a->board};
    batch_run r = {.a = a, .ms = ms, .out = &out};
    unsigned char **maps = calloc((size_t)ms->n + 1, sizeof *maps);
    int *rows = calloc((size_t)ms->n + 1, sizeof *rows);
    int n = 0, code = !maps || !rows ? (tool_say("batch", "out of memory"), 1) : 0;
    if (!code) code = band_points(a, board, &out.nf) || batch_out_open(&out, ms);
    int skipped = 0;
    for (int k = 0; !code && k < ms->n; k++) skipped += out.done[k];
    if (!code) code = read_maps(&r, board, maps, rows, &n);
    r.rows = rows;
    r.todo = n + r.failed;
    r.t0 = sv_time_now();
    if (!code && n > 0) code = solve(&r, board, maps, n);
    if (!code && (r.failed || out.failed_before)) code = 3;
    if (!a->quiet && (code == 0 || code == 3 || code == TOOL_EXIT_INTERRUPTED)) summary(&r, skipped, code);
    batch_out_close(&out);
    for (int k = 0; k < n; k++) free(maps[k]);
    free(maps);
    free(rows);
    sv_em_project_destroy(board);
    return code;
}

int cmd_batch_main(int argc, char **argv)
{
    batch_args a = {0};
    a.inputs = calloc((size_t)argc, sizeof *a.inputs);
    if (!a.inputs) return tool_say("batch", "out of memory"), 1;
    int code = parse_args(argc, argv, &a);
    if (code) {
        free(a.inputs);
        return code < 0 ? 0 : code;
    }
    batch_maps ms = {0};
    for (int k = 0; k < a.ninputs && !code; k++) code = batch_maps_add_input(&ms, a.inputs[k]) ? 2 : 0;
    if (!code && a.list) code = batch_maps_add_list(&ms, a.list) ? 2 : 0;
    if (!code) code = batch_maps_check_names(&ms) ? 2 : 0;
    if (!code) code = run(&a, &ms);
    batch_maps_free(&ms);
    free(a.inputs);
    return code;
}
