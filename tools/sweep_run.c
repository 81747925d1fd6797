/* `solvent sweep`: project -> model -> adaptive sweep -> Touchstone + plot,
 * as a list of named steps over one sweep_job. Each step returns 0 or the
 * exit code, having said why on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/core.h"
#include "sweep_tool.h"
#include "tool_args.h"

/* A library call failed: its message naming the project, exit code 1. */
static int lib_fail(sweep_job *j)
{
    sweep_bar_end(&j->bar);
    tool_say_model_failure("sweep", j->a->project, j->prj, j->band.points ? j->band.start_hz : 0);
    return 1;
}

/* --device gpu: fail before any work when there is no device at all. */
static int check_device_request(const sweep_args *a)
{
    char why[256];
    if (a->device != SWEEP_DEVICE_GPU || sv_gpu_available(why, sizeof why)) return 0;
    fprintf(stderr, "solvent sweep: --device gpu: no usable CUDA device: %s\n", why);
    return 1;
}

static int open_project(sweep_job *j)
{
    if (sv_ctx_create(&j->ctx)) return lib_fail(j);
    if (j->a->threads && sv_ctx_set_threads(j->ctx, j->a->threads)) return lib_fail(j);
    sv_ctx_set_progress(j->ctx, sweep_bar_draw, &j->bar);
    if (sv_em_project_read(j->ctx, j->a->project, &j->prj)) return lib_fail(j);
    if (j->a->split > 1 && sv_em_project_split_cells(j->prj, j->a->split)) return lib_fail(j);
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

/* The band: the command line over the project's sweep section. */
static int resolve_band(sweep_job *j)
{
    const sweep_args *a = j->a;
    /* --start 0 is given as the least positive start, then set */
    sv_em_sweep given = {.start_hz = a->start_dc ? DBL_MIN : a->start, .stop_hz = a->stop, .points = a->points,
                         .tolerance = a->tol};
    if (sv_em_project_band(j->prj, &given, &j->band)) {
        fprintf(stderr, "solvent sweep: %s: %s (see --start, --stop and --points)\n", a->project, sv_last_error());
        return 1;
    }
    if (a->start_dc) j->band.start_hz = 0;
    if (j->band.start_hz == 0 && j->band.points < 2) {
        fprintf(stderr, "solvent sweep: %s: a band of DC alone: use solvent solve --freq 0\n", a->project);
        return 1;
    }
    j->dc = j->band.start_hz == 0;
    j->freq = malloc(sizeof(double) * (size_t)j->band.points);
    if (!j->freq) {
        fprintf(stderr, "solvent sweep: no memory for %d frequencies\n", j->band.points);
        return 1;
    }
    if (sv_em_band_frequencies(&j->band, j->freq)) return lib_fail(j);
    return 0;
}

static int build_mesh(sweep_job *j)
{
    sv_em_options eo;
    sv_em_options_default(&eo);
    eo.max_freq_hz = j->band.stop_hz; /* the radiation terms hold to the band's top */
    if (sv_em_model_create(j->ctx, j->prj, &eo, &j->em)) return lib_fail(j);
    j->n = sv_em_model_unknowns(j->em);
    j->p = sv_em_model_ports(j->em);
    sv_em_stackup st;
    sv_em_project_stackup(j->prj, &st);
    j->lossy = isfinite(st.sigma);
    return 0;
}

static void set_sweep_options(sweep_job *j)
{
    const sweep_args *a = j->a;
    sv_sweep_options_default(&j->so);
    j->so.tolerance = j->band.tolerance;
    j->so.exact_all = a->exact;
    j->so.precision = a->precision;
    if (a->max_exact) j->so.max_exact = a->max_exact;
}

/* Estimate the memory before anything large is allocated, refuse past the
 * limit, and make the limit the context's budget. */
static int check_memory(sweep_job *j)
{
    const sweep_args *a = j->a;
    int points = j->band.points;
    const char *which;
    size_t limit = tool_command_memory_limit(a->memory_limit, &which);
    size_t need_model = tool_model_bytes(j->em);
    sv_sweep_shape shape;
    sv_em_affine_shape(j->em, &shape);
    size_t need_sweep = sv_sweep_estimate_bytes_shape(j->n, &shape, j->p, j->p, 0, points, &j->so);
    /* the ports' thru standards run after the sweep, beside the model */
    size_t need_cal = sv_em_calibration_bytes(j->em, points - j->dc, j->freq + j->dc);
    size_t need_small = (size_t)j->n * 64 + (size_t)points * j->p * j->p * 32; /* mesh, Y and S */
    size_t need = need_model + (need_sweep > need_cal ? need_sweep : need_cal) + need_small;
    if (limit && need > limit) {
        char b1[32], b2[32], b3[32], b4[32], b5[32], cal[80] = "";
        if (need_cal)
            snprintf(cal, sizeof cal, "; after it the ports' calibration standards %s",
                     tool_format_bytes(need_cal, b5, sizeof b5));
        fprintf(stderr,
                "solvent sweep: %s: this sweep needs about %s (the model's terms %s, solves and reduced model %s%s) "
                "for %d unknowns, more than the %s limit (%s).\n"
                "  Give a larger %s if the machine has the memory%s.\n",
                a->project, tool_format_bytes(need, b1, sizeof b1), tool_format_bytes(need_model, b2, sizeof b2),
                tool_format_bytes(need_sweep, b3, sizeof b3), cal, j->n, tool_format_bytes(limit, b4, sizeof b4),
                which, which == tool_ulimit_room ? "address-space limit (ulimit -v)" : "--memory-limit",
                a->precision != SV_SWEEP_MIXED ? ", or use --precision single (half the solve memory)" : "");
        return 1;
    }
    if (limit && sv_ctx_set_memory_limit(j->ctx, limit)) return lib_fail(j);
    return 0;
}

/* The planar model: assembly of its terms. */
static int create_model(sweep_job *j)
{
    double t0 = sv_time_now();
    if (sv_em_affine_create(j->ctx, j->em, &j->model)) return lib_fail(j);
    j->t_model = sv_time_now() - t0;
    j->peak_model = sv_ctx_memory_peak(j->ctx);
    sweep_bar_end(&j->bar);
    return 0;
}

/* The device: set up (plan, self-test, terms uploaded) or the reason not
 * to; on a device its solver becomes the sweep's exact solver. */
static int choose_device(sweep_job *j)
{
    const sweep_args *a = j->a;
    if (a->device == SWEEP_DEVICE_CPU) return 0;
    if (a->precision != SV_SWEEP_MIXED) {
        snprintf(j->devline, sizeof j->devline, "cpu (--precision %s runs on the CPU)",
                 a->precision == SV_SWEEP_DOUBLE ? "double" : "reference");
        return 0;
    }
    sv_gpu_options go;
    sv_gpu_options_default(&go);
    go.required = a->device == SWEEP_DEVICE_GPU;
    /* the device refines at most SV_GPU_MAX_DERIV derivative orders (as
     * many as the CPU path): a sweep on the device asks for no more */
    int nderiv = j->so.derivatives == 0 || j->so.derivatives > SV_GPU_MAX_DERIV ? SV_GPU_MAX_DERIV : j->so.derivatives;
    if (sv_gpu_solver_create(j->ctx, sv_em_affine_model(j->model), nderiv < 0 ? 0 : nderiv, &go, &j->gpu))
        return lib_fail(j);
    sv_gpu_report gr;
    sv_gpu_solver_report(j->gpu, &gr);
    if (!gr.on_device) {
        snprintf(j->devline, sizeof j->devline, "cpu (%s)", gr.note);
        sv_gpu_solver_destroy(j->gpu);
        j->gpu = NULL;
        return 0;
    }
    j->so.solver = sv_gpu_solver_sweep(j->gpu);
    j->so.derivatives = nderiv;
    snprintf(j->devline, sizeof j->devline, "gpu %s, %s residuals (self-test passed)", gr.device,
             gr.residual == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
    return 0;
}

/* The sweep over the band's frequencies above DC. */
static int run_sweep(sweep_job *j)
{
    sv_ctx_reset_peak(j->ctx);
    if (sv_sweep_run(j->ctx, sv_em_affine_model(j->model), j->band.points - j->dc, j->freq + j->dc, &j->so, &j->res))
        return lib_fail(j);
    sweep_bar_end(&j->bar);
    return 0;
}

/* Calibrated ports: their thru standards swept at the same frequencies,
 * their error boxes removed from the sweep's Y. */
static int calibrate(sweep_job *j)
{
    double t0 = sv_time_now();
    if (!sv_em_project_calibrated(j->prj)) return 0;
    /* the frequencies above DC (the sweep's; at DC an edge port's box is the identity) */
    if (sv_em_calibration_create(j->ctx, j->em, j->band.points - j->dc, j->freq + j->dc, &j->cal)) return lib_fail(j);
    for (int i = 0; i < j->band.points - j->dc; i++)
        if (sv_em_calibration_apply(j->cal, i, j->res->h + (size_t)i * j->p * j->p)) return lib_fail(j);
    j->t_cal = sv_time_now() - t0;
    return 0;
}

/* S from the sweep's Y, with the reciprocity and passivity checks. */
static int network_parameters(sweep_job *j)
{
    int p = j->p, points = j->band.points;
    j->S = malloc(sizeof(double complex) * (size_t)points * p * p);
    j->z0 = malloc(sizeof(double) * (size_t)p);
    if (!j->S || !j->z0) {
        fprintf(stderr, "solvent sweep: no memory for the S-parameters\n");
        return 1;
    }
    for (int k = 0; k < p; k++) j->z0[k] = sv_em_project_port_z0(j->prj, k);
    size_t pp = (size_t)p * p;
    if (sv_em_y_to_s_all(p, points - j->dc, j->res->h, j->z0, j->S + j->dc * pp, &j->checks)) return lib_fail(j);
    j->exact = malloc((size_t)points);
    if (!j->exact) {
        fprintf(stderr, "solvent sweep: no memory for the S-parameters\n");
        return 1;
    }
    memcpy(j->exact + j->dc, j->res->exact, (size_t)(points - j->dc));
    if (!j->dc) return 0;
    /* DC: the limit of the model, with the same checks */
    double smax;
    j->exact[0] = 1;
    if (sv_em_dc_s(j->ctx, j->em, j->z0, j->S) || sv_em_max_singular_value(p, j->S, &smax)) return lib_fail(j);
    j->checks.reciprocity = fmax(j->checks.reciprocity, sv_em_reciprocity_error(p, j->S));
    j->checks.max_singular = fmax(j->checks.max_singular, smax);
    return 0;
}

static int write_touchstone(sweep_job *j)
{
    const sweep_args *a = j->a;
    int equal_z0 = 1;
    for (int k = 1; k < j->p; k++) equal_z0 &= j->z0[k] == j->z0[0];
    char comment[512];
    snprintf(comment, sizeof comment,
             "solvent %s sweep of %s: %d unknowns, %d frequencies, %d exact solves, tolerance %.1e%s",
             sv_version_string(), a->project, j->n, j->band.points, j->res->n_exact, j->band.tolerance,
             j->res->converged ? "" : " (NOT met)");
    sv_em_ts_options ts;
    sv_em_ts_options_default(&ts);
    ts.version = equal_z0 ? 1 : 2;
    ts.comment = comment;
    if (sv_em_touchstone_write(j->outname, &ts, j->p, j->band.points, j->freq, j->S, j->z0)) return lib_fail(j);
    return 0;
}

static int write_plot(sweep_job *j)
{
    const sweep_args *a = j->a;
    if (!a->plot) return 0;
    char title[600], msg[1024];
    const char *base = strrchr(a->project, '/');
    snprintf(title, sizeof title, "%s: %d unknowns, %d of %d frequencies solved exactly", base ? base + 1 : a->project,
             j->n, j->res->n_exact, j->band.points);
    if (sweep_plot(a->plot, title, j->p, j->band.points, j->freq, j->S, j->exact, msg, sizeof msg)) {
        fprintf(stderr, "solvent sweep: plot %s: %s\n", a->plot, msg);
        return 1;
    }
    return 0;
}

static void close_job(sweep_job *j)
{
    sv_sweep_result_destroy(j->res);
    sv_gpu_solver_destroy(j->gpu);
    sv_em_calibration_destroy(j->cal);
    sv_em_affine_destroy(j->model);
    sv_em_model_destroy(j->em);
    sv_em_project_destroy(j->prj);
    free(j->freq);
    free(j->exact);
    free(j->S);
    free(j->z0);
    sv_ctx_destroy(j->ctx);
}

int sweep_tool_run(const sweep_args *a)
{
    sweep_job j = {.a = a, .devline = "cpu", .t_start = sv_time_now(), .bar = {a->progress, 0, 0}};
    int code = check_given_outputs(a);
    if (!code) code = check_device_request(a);
    if (!code) code = open_project(&j);
    if (!code) code = check_touchstone_name(&j);
    if (!code) code = resolve_band(&j);
    if (!code) code = build_mesh(&j);
    if (!code) set_sweep_options(&j);
    if (!code) code = check_memory(&j);
    if (!code) code = create_model(&j);
    if (!code) code = choose_device(&j);
    if (!code) code = run_sweep(&j);
    if (!code) code = calibrate(&j);
    if (!code) code = network_parameters(&j);
    if (!code) code = write_touchstone(&j);
    if (!code) code = write_plot(&j);
    if (!code && !a->quiet) sweep_print_summary(&j);
    if (!code) code = j.res->converged ? 0 : 3;
    close_job(&j);
    return code;
}
