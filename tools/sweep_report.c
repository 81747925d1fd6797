/* `solvent sweep`: what the user sees of a run — the progress bar on stderr
 * and the summary on stdout. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "solvent/core.h"
#include "solvent/em_tables.h" /* the physical constants */
#include "sweep_tool.h"
#include "tool_args.h"

int sweep_bar_draw(void *user, const char *phase, double fraction)
{
    sweep_bar *b = user;
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

void sweep_bar_end(sweep_bar *b)
{
    if (b->on && b->drawn) {
        fprintf(stderr, "\r%80s\r", "");
        fflush(stderr);
    }
    b->drawn = 0;
}

static size_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return 0;
    return (size_t)ru.ru_maxrss * 1024;
}

static const char *precision_name(sv_sweep_precision p)
{
    return p == SV_SWEEP_MIXED ? "single/refined" : p == SV_SWEEP_DOUBLE ? "double" : "reference";
}

static void print_device(const sweep_job *j)
{
    if (!j->gpu) {
        printf("  device       %s\n", j->devline);
        return;
    }
    sv_gpu_report gr;
    sv_gpu_solver_report(j->gpu, &gr);
    printf("  device       %s; %d exact solves on the device, %d on the CPU\n", j->devline, gr.device_solves,
           gr.solves - gr.device_solves);
    if (gr.device_errors) printf("  device       WARNING: %s\n", gr.note);
}

static void print_fallbacks(const sweep_job *j)
{
    const sv_sweep_result *res = j->res;
    if (!res->n_fallback) return;
    printf("  fallback     double factorisation%s at", j->gpu ? " on the CPU" : "");
    for (int i = 0; i < j->band.points - j->dc; i++)
        if (res->fallback[i]) printf(" %.6g", j->freq[i + j->dc] / 1e9);
    printf(" GHz (%s refinement failed there)\n", j->gpu ? "GPU" : "mixed-precision");
}

/* The stack-up and the effects in use (docs/em.md). */
static void print_stackup(const sweep_job *j)
{
    sv_em_stackup st;
    sv_em_project_stackup(j->prj, &st);
    printf("  stack-up     h %.4g mm, eps_r %.4g, tan d %.4g%s; ", st.h * 1e3, st.eps_r, st.tan_delta,
           st.tan_delta > 0 ? " (dielectric loss)" : " (lossless dielectric)");
    if (isfinite(st.sigma))
        printf("metal %.3g S/m, %.4g um %s\n", st.sigma, st.t * 1e6, st.thick_metal ? "thick (faces and walls)" : "sheet");
    else if (st.t > 0)
        printf("perfect metal, %.4g um %s\n", st.t * 1e6, st.thick_metal ? "thick (faces and walls)" : "sheet");
    else
        printf("perfect metal sheet\n");
}

void sweep_print_summary(const sweep_job *j)
{
    const sweep_args *a = j->a;
    const sv_sweep_result *res = j->res;
    char b1[32], b2[32], b3[32];
    printf("solvent sweep %s\n", a->project);
    int k = sv_em_project_subdivide(j->prj);
    char mesh[48] = "";
    if (k > 1) snprintf(mesh, sizeof mesh, " (grid cells split %d x %d)", k, k);
    int rad = sv_em_affine_radiates(j->model), disp = sv_em_affine_disperses(j->model);
    int far = sv_em_model_dispersion_far_terms(j->em);
    char physics[96] = "";
    if (rad || disp)
        snprintf(physics, sizeof physics, " (%s%s%s on", rad ? "radiation" : "", rad && disp ? " and " : "",
                 disp ? "dispersion" : "");
    if (disp && far)
        snprintf(physics + strlen(physics), sizeof physics - strlen(physics), ", its far field in %d terms", far);
    if (rad || disp) strcat(physics, ")");
    printf("  model        %d unknowns%s, %d ports, %s, %d terms%s,%s %s ports\n", j->n, mesh, j->p,
           j->lossy ? "lossy metal" : "lossless metal", sv_sweep_model_nterms(sv_em_affine_model(j->model)), physics,
           sv_em_model_edge_profiled(j->em) ? " edge profiles," : "", j->cal ? "calibrated" : "raw edge");
    double lim = sv_em_model_limit_hz(j->em), dlim = sv_em_model_dispersion_limit_hz(j->em);
    if (rad && j->band.stop_hz > lim)
        printf("  validity     WARNING: above %.4g GHz the model no longer holds (electrical size, docs/em.md)\n",
               lim / 1e9);
    if (dlim > 0 && j->band.stop_hz > dlim) {
        sv_em_stackup st;
        sv_em_project_stackup(j->prj, &st);
        printf("  validity     note: above %.4g GHz dispersion's expansion may leave eps_eff more than 2 %% off "
               "(k0 h sqrt(eps_r) > %.2f, docs/em.md)\n",
               dlim / 1e9, 2 * SV_EM_PI * dlim / SV_EM_C0 * st.h * sqrt(st.eps_r));
    }
    print_stackup(j);
    printf("  band         %.6g to %.6g GHz, %d frequencies\n", j->band.start_hz / 1e9, j->band.stop_hz / 1e9,
           j->band.points);
    printf("  exact solves %d (%s precision%s), reduced basis %d\n", res->n_exact, precision_name(a->precision),
           res->n_fallback ? ", some fell back to double" : "", res->basis_size);
    print_device(j);
    if (res->n_gmres)
        printf("  refinement   %d exact solve%s needed GMRES refinement (low frequency; no double factorisation)\n",
               res->n_gmres, res->n_gmres == 1 ? "" : "s");
    print_fallbacks(j);
    printf("  residual     max estimate %.2e (tolerance %.1e)%s\n", res->max_residual, j->band.tolerance,
           res->converged ? "" : "  WARNING: cap on exact solves reached");
    printf("  checks       max |S - S^T| %.1e, max singular value of S %.12f\n", j->checks.reciprocity,
           j->checks.max_singular);
    printf("  time         assembly %.3f s, exact solves %.3f s, reduced model %.3f s, calibration %.3f s, "
           "total %.3f s\n",
           j->t_model, res->seconds_exact, res->seconds_reduced, j->t_cal, sv_time_now() - j->t_start);
    printf("  memory       assembly peak %s, sweep peak %s (counted), process peak %s\n",
           tool_format_bytes(j->peak_model, b1, sizeof b1), tool_format_bytes(res->peak_bytes, b2, sizeof b2),
           tool_format_bytes(peak_rss(), b3, sizeof b3));
    printf("  wrote        %s%s%s\n", j->outname, a->plot ? ", " : "", a->plot ? a->plot : "");
}
