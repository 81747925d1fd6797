/* `solvent sweep`: what the user sees of a run — the progress bar on stderr
 * and the summary on stdout. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "solvent/core.h"
#include "solvent/em_tables.h" /* the physical constants */
#include "interrupt.h"
#include "sweep_tool.h"
#include "tool_args.h"

int sweep_bar_draw(void *user, const char *phase, double fraction)
{
    sweep_bar *b = user;
    if (!b->on) return tool_interrupted();
    double now = sv_time_now();
    if (fraction < 1.0 && now - b->last < 0.1 && b->drawn) return tool_interrupted();
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
    return tool_interrupted();
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
    const sv_planar_report *r = &j->rep;
    if (!r->on_device) {
        printf("  device       %s\n", r->device);
        return;
    }
    printf("  device       %s; %d exact solves on the device, %d on the CPU\n", r->device, r->device_solves,
           r->exact_solves - r->device_solves);
    if (r->device_errors) printf("  device       WARNING: %s\n", r->device_note);
}

static void print_fallbacks(const sweep_job *j)
{
    const sv_planar_network *net = j->net;
    if (!j->rep.fallbacks) return;
    printf("  fallback     double factorisation%s at", j->rep.on_device ? " on the CPU" : "");
    for (int i = 0; i < net->nf; i++)
        if (net->fallback[i]) printf(" %.6g", net->freq_hz[i] / 1e9);
    printf(" GHz (%s refinement failed there)\n", j->rep.on_device ? "GPU" : "mixed-precision");
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

/* Where the model stops holding, when the band reaches past it. */
static void print_validity(const sweep_job *j)
{
    const sv_planar_report *r = &j->rep;
    if (r->beyond_limit)
        printf("  validity     WARNING: above %.4g GHz the model no longer holds (electrical size, docs/em.md); "
               "solved there as --allow-beyond-validity asks: S may exceed 1 (the checks line)\n",
               r->model_limit_hz / 1e9);
    double dlim = r->dispersion_limit_hz;
    if (dlim > 0 && r->stop_hz > dlim) {
        sv_em_stackup st;
        sv_em_project_stackup(j->prj, &st);
        printf("  validity     note: above %.4g GHz dispersion's expansion may leave eps_eff more than 2 %% off "
               "(k0 h sqrt(eps_r) > %.2f, docs/em.md)\n",
               dlim / 1e9, 2 * SV_EM_PI * dlim / SV_EM_C0 * st.h * sqrt(st.eps_r));
    }
}

void sweep_print_summary(const sweep_job *j)
{
    const sweep_args *a = j->a;
    const sv_planar_report *r = &j->rep;
    char b1[32], b2[32], b3[32];
    printf("solvent sweep %s\n", a->project);
    char mesh[48] = "";
    if (r->subdivide > 1) snprintf(mesh, sizeof mesh, " (grid cells split %d x %d)", r->subdivide, r->subdivide);
    char physics[96] = "";
    if (r->radiation || r->dispersion)
        snprintf(physics, sizeof physics, " (%s%s%s on", r->radiation ? "radiation" : "",
                 r->radiation && r->dispersion ? " and " : "", r->dispersion ? "dispersion" : "");
    if (r->dispersion && r->dispersion_far_terms)
        snprintf(physics + strlen(physics), sizeof physics - strlen(physics), ", its far field in %d terms",
                 r->dispersion_far_terms);
    if (r->radiation || r->dispersion) strcat(physics, ")");
    printf("  model        %d unknowns%s, %d ports, %s, %d terms%s,%s %s ports\n", r->unknowns, mesh, r->ports,
           r->lossy_metal ? "lossy metal" : "lossless metal", r->terms, physics,
           r->edge_profiles ? " edge profiles," : "", r->calibrated ? "calibrated" : "raw edge");
    print_validity(j);
    print_stackup(j);
    printf("  band         %.6g to %.6g GHz, %d frequencies\n", r->start_hz / 1e9, r->stop_hz / 1e9, r->nfreq);
    printf("  exact solves %d (%s precision%s), reduced basis %d\n", r->exact_solves, precision_name(a->precision),
           r->fallbacks ? ", some fell back to double" : "", r->basis_size);
    print_device(j);
    if (r->gmres_solves)
        printf("  refinement   %d exact solve%s needed GMRES refinement (low frequency; no double factorisation)\n",
               r->gmres_solves, r->gmres_solves == 1 ? "" : "s");
    print_fallbacks(j);
    printf("  residual     max estimate %.2e (tolerance %.1e)%s\n", r->max_residual, r->tolerance,
           r->converged ? "" : "  WARNING: cap on exact solves reached");
    printf("  checks       max |S - S^T| %.1e, max singular value of S %.12f\n", r->checks.reciprocity,
           r->checks.max_singular);
    printf("  time         assembly %.3f s, exact solves %.3f s, reduced model %.3f s, calibration %.3f s, "
           "total %.3f s\n",
           r->seconds_assembly, r->seconds_exact, r->seconds_reduced, r->seconds_calibration,
           sv_time_now() - j->t_start);
    printf("  memory       assembly peak %s, sweep peak %s (counted), process peak %s\n",
           sv_format_bytes(r->peak_assembly, b1, sizeof b1), sv_format_bytes(r->peak_sweep, b2, sizeof b2),
           sv_format_bytes(peak_rss(), b3, sizeof b3));
    printf("  wrote        %s%s%s\n", j->outname, a->plot ? ", " : "", a->plot ? a->plot : "");
}
