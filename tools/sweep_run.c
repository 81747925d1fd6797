/* `solvent sweep`: project -> model -> adaptive sweep -> Touchstone + plot. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <sys/resource.h>

#include "solvent/core.h"
#include "solvent/sweep.h"
#include "sweep_tool.h"

#include "solvent/dense.h"
#include "solvent/em.h"
#include "solvent/gpu.h"


typedef struct bar {
    int on, drawn;
    double last;
} bar;

static int draw_progress(void *user, const char *phase, double fraction)
{
    bar *b = user;
    if (!b->on) return 0;
    double now = sv_time_now();
    if (fraction < 1.0 && now - b->last < 0.1 && b->drawn) return 0;
    b->last = now;
    int width = 40, full = (int)(fraction * width + 0.5);
    if (full < 0) full = 0;
    if (full > width) full = width;
    char cells[64];
    for (int i = 0; i < width; i++) cells[i] = i < full ? '#' : '.';
    cells[width] = 0;
    fprintf(stderr, "\r%-10.10s [%s] %3d%%", phase ? phase : "", cells, (int)(fraction * 100 + 0.5));
    fflush(stderr);
    b->drawn = 1;
    return 0;
}

static void end_progress(bar *b)
{
    if (b->on && b->drawn) {
        fprintf(stderr, "\r%80s\r", "");
        fflush(stderr);
    }
    b->drawn = 0;
}

static const char *mb(size_t bytes, char *buf, size_t len)
{
    if (bytes >= (size_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= (size_t)1 << 20)
        snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
    else
        snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
    return buf;
}

static size_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return 0;
    return (size_t)ru.ru_maxrss * 1024;
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

int sweep_tool_run(const sweep_args *a)
{
    int code = 1;
    sv_ctx *ctx = NULL;
    sv_em_project *prj = NULL;
    sv_em_model *em = NULL;
    sv_em_affine *aff = NULL;
    sv_em_calibration *cal = NULL;
    const sv_sweep_model *model = NULL;
    sv_sweep_result *res = NULL;
    sv_gpu_solver *gpu = NULL;
    char devline[600] = "cpu";
    double *freq = NULL;
    double complex *S = NULL;
    double *z0 = NULL;
    bar pb = {a->progress, 0, 0};
    char buf1[32], buf2[32], buf3[32], buf4[32];
    double t_start = sv_time_now();

    /* --device gpu: fail before any work when there is no device at all */
    if (a->device == SWEEP_DEVICE_GPU) {
        char why[256];
        if (!sv_gpu_available(why, sizeof why)) {
            fprintf(stderr, "solvent sweep: --device gpu: no usable CUDA device: %s\n", why);
            return 1;
        }
    }
    if (sv_ctx_create(&ctx)) goto fail;
    if (a->threads && sv_ctx_set_threads(ctx, a->threads)) goto fail;
    sv_ctx_set_progress(ctx, draw_progress, &pb);
    if (sv_em_project_read(ctx, a->project, &prj)) goto fail;

    /* The band: command line over the project's sweep section. */
    sv_em_sweep ps;
    sv_em_project_sweep(prj, &ps);
    double start = a->start > 0 ? a->start : ps.present ? ps.start_hz : 0;
    double stop = a->stop > 0 ? a->stop : ps.present ? ps.stop_hz : 0;
    int points = a->points > 0 ? a->points : ps.present ? ps.points : 0;
    double tol = a->tol > 0 ? a->tol : ps.present && ps.tolerance > 0 ? ps.tolerance : 1e-4;
    if (!(start > 0) || !(stop > 0) || points < 1) {
        fprintf(stderr,
                "solvent sweep: %s has no \"sweep\" section: give --start, --stop and --points "
                "(got start %g Hz, stop %g Hz, points %d)\n",
                a->project, start, stop, points);
        code = 1;
        goto out;
    }
    if (stop < start) {
        fprintf(stderr, "solvent sweep: stop %g Hz is below start %g Hz\n", stop, start);
        goto out;
    }
    if (points == 1) stop = start;
    freq = malloc(sizeof(double) * (size_t)points);
    if (!freq) {
        fprintf(stderr, "solvent sweep: no memory for %d frequencies\n", points);
        goto out;
    }
    for (int i = 0; i < points; i++) freq[i] = points == 1 ? start : start + (stop - start) * i / (points - 1);

    sv_em_options eo = {.max_freq_hz = stop}; /* the radiation terms hold to the band's top */
    if (sv_em_model_create(ctx, prj, &eo, &em)) goto fail;
    int n = sv_em_model_unknowns(em), p = sv_em_model_ports(em);
    sv_em_stackup stk;
    sv_em_project_stackup(prj, &stk);
    int lossy = isfinite(stk.sigma);

    /* Memory: estimate before anything large is allocated. */
    sv_sweep_options so;
    sv_sweep_options_default(&so);
    so.tolerance = tol;
    so.exact_all = a->exact;
    so.precision = a->precision;
    if (a->max_exact) so.max_exact = a->max_exact;
    size_t limit = a->memory_limit ? a->memory_limit : sweep_available_memory();
    size_t need_asm = sv_em_affine_bytes(em);
    int nterms = sv_em_affine_nterms(em);
    size_t need_sweep = sv_sweep_estimate_bytes(n, nterms, p, p, 0, points, &so);
    size_t need_small = (size_t)n * 64 + (size_t)points * p * p * 32 + (size_t)n * p * 8;
    size_t need = need_asm + need_sweep + need_small;
    if (limit && need > limit) {
        fprintf(stderr,
                "solvent sweep: this sweep needs about %s (L and Psi %s, solves and reduced model %s) "
                "for %d unknowns, more than the %s limit (%s).\n"
                "  Give a larger --memory-limit if the machine has the memory%s.\n",
                mb(need, buf1, sizeof buf1), mb(need_asm, buf2, sizeof buf2), mb(need_sweep, buf3, sizeof buf3), n,
                mb(limit, buf4, sizeof buf4), a->memory_limit ? "--memory-limit" : "available memory",
                a->precision != SV_SWEEP_MIXED ? ", or use --precision single (half the solve memory)" : "");
        code = 1;
        goto out;
    }
    if (limit && sv_ctx_set_memory_limit(ctx, limit)) goto fail;

    /* Assembly: the planar model's terms and excitations. */
    double t0 = sv_time_now();
    if (sv_em_affine_create(ctx, em, &aff)) goto fail;
    model = sv_em_affine_model(aff);
    double t_asm = sv_time_now() - t0;
    size_t peak_asm = sv_ctx_memory_peak(ctx);
    end_progress(&pb);

    /* The device: set up (plan, self-test, terms uploaded) or the reason not to. */
    if (a->device != SWEEP_DEVICE_CPU && a->precision != SV_SWEEP_MIXED) {
        snprintf(devline, sizeof devline, "cpu (--precision %s runs on the CPU)",
                 a->precision == SV_SWEEP_DOUBLE ? "double" : "reference");
    } else if (a->device != SWEEP_DEVICE_CPU) {
        sv_gpu_options go;
        sv_gpu_options_default(&go);
        go.required = a->device == SWEEP_DEVICE_GPU;
        /* the device refines at most SV_GPU_MAX_DERIV derivative orders (as
         * many as the CPU path): a sweep on the device asks for no more */
        int cpu_derivatives = so.derivatives;
        if (so.derivatives == 0 || so.derivatives > SV_GPU_MAX_DERIV) so.derivatives = SV_GPU_MAX_DERIV;
        if (sv_gpu_solver_create(ctx, model, so.derivatives < 0 ? 0 : so.derivatives, &go, &gpu))
            goto fail;
        sv_gpu_report gr;
        sv_gpu_solver_report(gpu, &gr);
        if (gr.on_device) {
            so.exact_deriv = sv_gpu_exact_deriv;
            so.exact_user = gpu;
            snprintf(devline, sizeof devline, "gpu %s, %s residuals (self-test passed)", gr.device,
                     gr.residual == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
        } else {
            snprintf(devline, sizeof devline, "cpu (%s)", gr.note);
            so.derivatives = cpu_derivatives;
            sv_gpu_solver_destroy(gpu);
            gpu = NULL;
        }
    }
    sv_ctx_reset_peak(ctx);
    if (sv_sweep_run(ctx, model, points, freq, &so, &res)) goto fail;
    end_progress(&pb);
    /* Calibrated ports: their thru standards at the same frequencies. */
    double t_cal = sv_time_now();
    if (sv_em_project_calibrated(prj)) {
        if (sv_em_calibration_create(ctx, em, points, freq, &cal)) goto fail;
        for (int i = 0; i < points; i++)
            if (sv_em_calibration_apply(cal, i, res->h + (size_t)i * p * p)) goto fail;
    }
    t_cal = sv_time_now() - t_cal;

    /* Network parameters. */
    S = malloc(sizeof(double complex) * (size_t)points * p * p);
    z0 = malloc(sizeof(double) * (size_t)p);
    if (!S || !z0) {
        fprintf(stderr, "solvent sweep: no memory for the S-parameters\n");
        goto out;
    }
    for (int k = 0; k < p; k++) z0[k] = sv_em_project_port_z0(prj, k);
    double worst_recip = 0, worst_sv = 0;
    /* One tiny LAPACK call per frequency: OpenBLAS would start a thread team
     * for each (1–7 ms per call measured on the shared two-core machine,
     * more than the whole reduced model at 1001 points). */
    sv_threads_saved serial = sv_threads_serial_begin();
    for (int i = 0; i < points; i++) {
        if (sv_em_y_to_s(p, res->h + (size_t)i * p * p, z0, S + (size_t)i * p * p)) goto fail;
        double sv = 0;
        worst_recip = fmax(worst_recip, sv_em_reciprocity_error(p, S + (size_t)i * p * p));
        if (!sv_em_max_singular_value(p, S + (size_t)i * p * p, &sv)) worst_sv = fmax(worst_sv, sv);
    }
    sv_threads_restore(serial);

    /* Outputs. */
    char outname[4096];
    if (a->output)
        snprintf(outname, sizeof outname, "%s", a->output);
    else
        default_output(a->project, p, outname, sizeof outname);
    int equal_z0 = 1;
    for (int k = 1; k < p; k++) equal_z0 &= z0[k] == z0[0];
    char comment[512];
    snprintf(comment, sizeof comment,
             "solvent %s sweep of %s: %d unknowns, %d frequencies, %d exact solves, tolerance %.1e%s",
             sv_version_string(), a->project, n, points, res->n_exact, tol, res->converged ? "" : " (NOT met)");
    sv_em_ts_options ts = {.version = equal_z0 ? 1 : 2, .format = SV_EM_TS_RI, .param = SV_EM_TS_S,
                           .unit = "GHz", .comment = comment};
    if (sv_em_touchstone_write(outname, &ts, p, points, freq, S, z0)) goto fail;
    if (a->plot) {
        char title[600], msg[1024];
        const char *base = strrchr(a->project, '/');
        snprintf(title, sizeof title, "%s: %d unknowns, %d of %d frequencies solved exactly", base ? base + 1 : a->project,
                 n, res->n_exact, points);
        if (sweep_plot(a->plot, title, p, points, freq, S, res->exact, msg, sizeof msg)) {
            fprintf(stderr, "solvent sweep: plot %s: %s\n", a->plot, msg);
            code = 1;
            goto out;
        }
    }

    if (!a->quiet) {
        printf("solvent sweep %s\n", a->project);
        printf("  model        %d unknowns, %d ports, %s, %d terms%s, %s ports\n", n, p,
               lossy ? "lossy metal" : "lossless metal", nterms, sv_em_affine_radiates(aff) ? " (radiation on)" : "",
               cal ? "calibrated" : "raw edge");
        double lim = sv_em_model_limit_hz(em);
        if (sv_em_affine_radiates(aff) && stop > lim)
            printf("  validity     WARNING: above %.4g GHz the model no longer holds (electrical size, docs/em.md)\n",
                   lim / 1e9);
        printf("  band         %.6g to %.6g GHz, %d frequencies\n", start / 1e9, stop / 1e9, points);
        printf("  exact solves %d (%s precision%s), reduced basis %d\n", res->n_exact,
               a->precision == SV_SWEEP_MIXED ? "single/refined" : a->precision == SV_SWEEP_DOUBLE ? "double" : "reference",
               res->n_fallback ? ", some fell back to double" : "", res->basis_size);
        if (gpu) {
            sv_gpu_report gr;
            sv_gpu_solver_report(gpu, &gr);
            printf("  device       %s; %d exact solves on the device, %d on the CPU\n", devline, gr.device_solves,
                   gr.solves - gr.device_solves);
            if (gr.device_errors) printf("  device       WARNING: %s\n", gr.note);
        } else {
            printf("  device       %s\n", devline);
        }
        if (res->n_gmres)
            printf("  refinement   %d exact solve%s needed GMRES refinement (low frequency; no double factorisation)\n",
                   res->n_gmres, res->n_gmres == 1 ? "" : "s");
        if (res->n_fallback) {
            printf("  fallback     double factorisation%s at", gpu ? " on the CPU" : "");
            for (int i = 0; i < points; i++)
                if (res->fallback[i]) printf(" %.6g", freq[i] / 1e9);
            printf(" GHz (%s refinement failed there)\n", gpu ? "GPU" : "mixed-precision");
        }
        printf("  residual     max estimate %.2e (tolerance %.1e)%s\n", res->max_residual, tol,
               res->converged ? "" : "  WARNING: cap on exact solves reached");
        printf("  checks       max |S - S^T| %.1e, max singular value of S %.12f\n", worst_recip, worst_sv);
        printf("  time         assembly %.3f s, exact solves %.3f s, reduced model %.3f s, calibration %.3f s, "
               "total %.3f s\n",
               t_asm, res->seconds_exact, res->seconds_reduced, t_cal, sv_time_now() - t_start);
        printf("  memory       assembly peak %s, sweep peak %s (counted), process peak %s\n",
               mb(peak_asm, buf1, sizeof buf1), mb(res->peak_bytes, buf2, sizeof buf2),
               mb(peak_rss(), buf3, sizeof buf3));
        printf("  wrote        %s%s%s\n", outname, a->plot ? ", " : "", a->plot ? a->plot : "");
    }
    code = res->converged ? 0 : 3;
    goto out;

fail:
    end_progress(&pb);
    fprintf(stderr, "solvent sweep: %s\n", sv_last_error()[0] ? sv_last_error() : "failed");
    code = 1;
out:
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(gpu);
    sv_em_calibration_destroy(cal);
    sv_em_affine_destroy(aff);
    sv_em_model_destroy(em);
    sv_em_project_destroy(prj);
    free(freq);
    free(S);
    free(z0);
    sv_ctx_destroy(ctx);
    return code;
}
