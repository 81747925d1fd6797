/* `solvent sweep`: the outputs checked, the planar job run (the library's
 * one call: solvent/planar.h), then Touchstone, plot and summary. Each
 * step returns 0 or the exit code, having said why on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/core.h"
#include "interrupt.h"
#include "start.h"
#include "sweep_tool.h"
#include "tool_args.h"

/* A library call failed: its message naming the project, exit code 1; or
 * the user interrupted it: 130. */
static int lib_fail(sweep_job *j)
{
    sweep_bar_end(&j->bar);
    if (sv_last_status() == SV_ERR_CANCELLED && tool_interrupted()) {
        tool_say("sweep", "%s: interrupted: nothing written", j->a->project);
        return TOOL_EXIT_INTERRUPTED;
    }
    tool_say_model_failure("sweep", j->a->project);
    return 1;
}

static int open_project(sweep_job *j)
{
    if (sv_ctx_create(&j->ctx)) return lib_fail(j);
    sv_ctx_set_progress(j->ctx, sweep_bar_draw, &j->bar);
    sv_ctx_set_log(j->ctx, tool_log_warnings, (void *)"sweep"); /* the project's warnings, while it is read */
    sv_status read = sv_em_project_read(j->ctx, j->a->project, &j->prj);
    sv_ctx_set_log(j->ctx, NULL, NULL);
    if (read) return lib_fail(j);
    return 0;
}

/* Default output: the project's file name with .sNp, in the current folder. */
static void default_output(const char *project, int p, char *out, size_t len)
{
    const char *base = strrchr(project, '/');
    base = base ? base + 1 : project;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(out, len, "%.*s.s%dp", stem, base, p);
}

/* The outputs the command line names, before any work (the project need
 * not even be valid): neither is the project, the plot is not -o. */
static int check_given_outputs(const sweep_args *a)
{
    const char *inputs[] = {a->project}, *touchstone[] = {a->project, a->output};
    int code = a->output ? tool_check_not_input("sweep", "-o", a->output, inputs, 1) : 0;
    if (!code && a->plot) code = tool_check_not_input("sweep", "--plot", a->plot, touchstone, a->output ? 2 : 1);
    return code;
}

/* The outputs once the project is read: the Touchstone name says the port
 * count, and neither output is an input the project names (its CSV pixel
 * map) nor, for the default name, the project or the plot. */
static int check_touchstone_name(sweep_job *j)
{
    const sweep_args *a = j->a;
    int p = sv_em_project_ports(j->prj);
    if (a->output)
        snprintf(j->outname, sizeof j->outname, "%s", a->output);
    else
        default_output(a->project, p, j->outname, sizeof j->outname);
    const char *inputs[] = {a->project, sv_em_project_pixels_file(j->prj)};
    int code = tool_check_touchstone_name("sweep", j->outname, p);
    if (!code) code = tool_check_not_input("sweep", a->output ? "-o" : "the default output", j->outname, inputs, 2);
    if (!code && a->plot) code = tool_check_not_input("sweep", "--plot", a->plot, inputs + 1, 1);
    if (!code && !a->output && a->plot) {
        const char *outputs[] = {j->outname};
        code = tool_check_not_input("sweep", "--plot", a->plot, outputs, 1);
    }
    return code;
}

/* The command line as the job's options. */
static void job_options(const sweep_args *a, sv_planar_options *o)
{
    sv_planar_options_default(o);
    o->band = (sv_em_sweep){.start_hz = a->start, .stop_hz = a->stop, .points = a->points, .tolerance = a->tol};
    o->start_dc = a->start_dc;
    o->exact_all = a->exact;
    o->allow_beyond_validity = a->allow_beyond_validity;
    o->precision = a->precision;
    o->max_exact = a->max_exact;
    o->subdivide = a->split;
    o->device = a->device == SWEEP_DEVICE_CPU ? SV_PLANAR_DEVICE_CPU
                : a->device == SWEEP_DEVICE_GPU ? SV_PLANAR_DEVICE_GPU
                                                : SV_PLANAR_DEVICE_AUTO;
    o->threads = a->threads;
    o->memory_limit = tool_memory_limit(a->memory_limit); /* never past ulimit -v's room */
    o->memory_limit_name = o->memory_limit != a->memory_limit ? tool_ulimit_room
                           : a->memory_limit                 ? "--memory-limit"
                                                             : NULL;
}

/* The band the command line and the project give, checked before the
 * job so that a user who got it wrong is pointed to the options that set
 * it (the job resolves it the same way). */
static int check_band(sweep_job *j)
{
    const sweep_args *a = j->a;
    /* --start 0 is given as the least positive start */
    sv_em_sweep given = {.start_hz = a->start_dc ? DBL_MIN : a->start, .stop_hz = a->stop, .points = a->points,
                         .tolerance = a->tol},
                band;
    if (sv_em_project_band(j->prj, &given, &band)) {
        tool_say("sweep", "%s: %s (see --start, --stop and --points)", a->project, sv_last_error());
        return 1;
    }
    if (a->start_dc && band.points < 2) {
        tool_say("sweep", "%s: a band of DC alone: use solvent solve --freq 0", a->project);
        return 1;
    }
    return 0;
}

/* The job: frequencies, mesh and memory estimate. */
static int create_job(sweep_job *j)
{
    sv_planar_options o;
    job_options(j->a, &o);
    return sv_planar_job_create(j->ctx, j->prj, &o, &j->job) ? lib_fail(j) : 0;
}

static int run_job(sweep_job *j)
{
    if (!sv_planar_job_run(j->job)) {
        sweep_bar_end(&j->bar);
        j->net = sv_planar_job_network(j->job);
        sv_planar_job_report(j->job, &j->rep);
        return 0;
    }
    sv_status st = sv_last_status();
    int code = lib_fail(j);
    if (st == SV_ERR_BUDGET && strstr(sv_last_error(), "more than the"))
        fprintf(stderr, "  Give a larger %s if the machine has the memory%s.\n",
                strstr(sv_last_error(), tool_ulimit_room) ? "address-space limit (ulimit -v)" : "--memory-limit",
                j->a->precision != SV_SWEEP_MIXED ? ", or use --precision single (half the solve memory)" : "");
    return code;
}

static int write_touchstone(sweep_job *j)
{
    const sv_planar_network *net = j->net;
    char comment[512];
    snprintf(comment, sizeof comment,
             "solvent %s sweep of %s: %d unknowns, %d frequencies, %d exact solves, tolerance %.1e%s",
             sv_version_string(), j->a->project, j->rep.unknowns, net->nf, j->rep.exact_solves, j->rep.tolerance,
             j->rep.converged ? "" : " (NOT met)");
    sv_em_ts_options ts;
    sv_em_ts_options_default(&ts);
    ts.version = SV_EM_TS_VERSION_FOR_Z0;
    ts.comment = comment;
    if (sv_em_touchstone_write(j->outname, &ts, net->p, net->nf, net->freq_hz, net->s, net->z0)) return lib_fail(j);
    return 0;
}

static int write_plot(sweep_job *j)
{
    const sweep_args *a = j->a;
    const sv_planar_network *net = j->net;
    if (!a->plot) return 0;
    char title[600], msg[1024];
    const char *base = strrchr(a->project, '/');
    snprintf(title, sizeof title, "%s: %d unknowns, %d of %d frequencies solved exactly", base ? base + 1 : a->project,
             j->rep.unknowns, j->rep.exact_solves, net->nf);
    if (sweep_plot(a->plot, title, net->p, net->nf, net->freq_hz, net->s, net->exact, msg, sizeof msg)) {
        fprintf(stderr, "solvent sweep: plot %s: %s\n", a->plot, msg);
        return 1;
    }
    return 0;
}

int sweep_tool_run(const sweep_args *a)
{
    sweep_job j = {.a = a, .t_start = sv_time_now(), .bar = {a->progress, 0, 0}};
    int code = check_given_outputs(a);
    if (!code) code = open_project(&j);
    if (!code) code = check_touchstone_name(&j);
    if (!code) code = check_band(&j);
    if (!code) code = create_job(&j);
    if (!code) code = run_job(&j);
    if (!code) code = write_touchstone(&j);
    if (!code) code = write_plot(&j);
    if (!code && !a->quiet) sweep_print_summary(&j);
    if (!code) code = j.rep.converged ? 0 : 3;
    sv_planar_job_destroy(j.job);
    sv_em_project_destroy(j.prj);
    sv_ctx_destroy(j.ctx);
    return code;
}
