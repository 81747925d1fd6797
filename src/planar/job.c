/* The planar job: a project to its network as a list of named steps, each
 * returning a status. What is large (the model's terms, the sweep's state,
 * the calibration standards) lives only while the job runs; what it
 * delivers (the network, the report) stays with the job. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "planar_internal.h"

void sv_planar_options_default(sv_planar_options *opts)
{
    if (opts) memset(opts, 0, sizeof *opts);
}

static sv_status check_options(const sv_planar_options *o)
{
    if (o->device < SV_PLANAR_DEVICE_AUTO || o->device > SV_PLANAR_DEVICE_GPU)
        return sv_error(SV_ERR_ARG, "device = %d: expected SV_PLANAR_DEVICE_AUTO, _CPU or _GPU", (int)o->device);
    if (o->precision < SV_SWEEP_MIXED || o->precision > SV_SWEEP_LAPACK)
        return sv_error(SV_ERR_ARG, "precision = %d: expected SV_SWEEP_MIXED, _DOUBLE or _LAPACK", (int)o->precision);
    if (o->max_exact < 0) return sv_error(SV_ERR_ARG, "max_exact = %d: expected >= 0 (0: the default)", o->max_exact);
    if (o->subdivide < 0 || o->subdivide > 16)
        return sv_error(SV_ERR_ARG, "subdivide = %d: expected 0 to 16", o->subdivide);
    if (o->threads < 0) return sv_error(SV_ERR_ARG, "threads = %d: expected >= 0 (0: the context's)", o->threads);
    if (o->outputs & ~(unsigned)(SV_PLANAR_OUTPUT_Y | SV_PLANAR_OUTPUT_Z | SV_PLANAR_OUTPUT_Y_RAW))
        return sv_error(SV_ERR_ARG, "outputs = %#x: expected SV_PLANAR_OUTPUT_Y, _Z, _Y_RAW or'ed", o->outputs);
    if (!o->freq_hz && o->nfreq) return sv_error(SV_ERR_ARG, "nfreq = %d but freq_hz is NULL", o->nfreq);
    return SV_OK;
}

/* The mesh's options: its radiation terms sized for the top frequency. */
static void mesh_options(const sv_planar_job *j, sv_em_options *eo)
{
    sv_em_options_default(eo);
    eo->max_freq_hz = j->freq[j->nf - 1];
    eo->allow_beyond_validity = j->o.allow_beyond_validity;
}

/* Every frequency within the model's limit, unless the caller allows
 * beyond it: the first one above is named. */
static sv_status check_validity(sv_planar_job *j)
{
    sv_em_options eo;
    mesh_options(j, &eo);
    sv_status s = SV_OK;
    for (int i = 0; i < j->nf && !s; i++) s = sv_em_check_validity(j->prj, &eo, j->freq[i]);
    return s;
}

/* The mesh's size from its counts, refused past the limit before any of it. */
static sv_status check_mesh_memory(sv_planar_job *j)
{
    sv_em_options eo;
    mesh_options(j, &eo);
    sv_status s = sv_em_model_size_of(j->prj, &eo, &j->mesh_size);
    if (s) return s;
    planar_estimate_mesh(j);
    return planar_check_mesh_memory(j);
}

typedef struct ctx_saved {
    int threads;
    size_t limit;
} ctx_saved;

static ctx_saved apply_options(sv_planar_job *j)
{
    ctx_saved saved = {sv_ctx_threads(j->ctx), sv_ctx_memory_limit(j->ctx)};
    if (j->o.threads) sv_ctx_set_threads(j->ctx, j->o.threads);
    if (j->rep.estimate.limit) sv_ctx_set_memory_limit(j->ctx, j->rep.estimate.limit);
    return saved;
}

/* (Without a context there is nothing to restore, and the setters' own
 * complaint would replace a failed run's message.) */
static void restore_options(sv_planar_job *j, ctx_saved saved)
{
    if (!j->ctx) return;
    sv_ctx_set_threads(j->ctx, saved.threads);
    sv_ctx_set_memory_limit(j->ctx, saved.limit);
}

/* The mesh, its radiation terms: a second or two on the largest boards, so
 * the creation reports its own progress; within the limit, held as the
 * context's budget while it is made. */
static sv_status make_mesh(sv_planar_job *j)
{
    double t0 = sv_time_now();
    sv_em_options eo;
    mesh_options(j, &eo);
    ctx_saved saved = apply_options(j);
    sv_ctx_reset_peak(j->ctx);
    size_t held = sv_ctx_memory_current(j->ctx);
    sv_progress_span whole = sv_progress_span_begin(j->ctx, 0, 1);
    sv_status s = j->board ? sv_em_model_create_on(j->ctx, j->prj, &eo, j->board, j->slot, &j->em)
                           : sv_em_model_create(j->ctx, j->prj, &eo, &j->em);
    sv_progress_span_end(j->ctx, whole);
    j->rep.peak_mesh = sv_ctx_memory_peak(j->ctx) - held;
    restore_options(j, saved);
    j->rep.seconds_mesh = sv_time_now() - t0;
    if (s) return s;
    j->p = sv_em_model_ports(j->em);
    return SV_OK;
}

static void set_sweep_options(sv_planar_job *j)
{
    sv_sweep_options_default(&j->so);
    j->so.tolerance = j->tolerance;
    j->so.exact_all = j->o.exact_all;
    j->so.precision = j->o.precision;
    if (j->o.max_exact) j->so.max_exact = j->o.max_exact;
}

/* What the report says of the model before it is assembled. */
static void describe_mesh(sv_planar_job *j)
{
    sv_planar_report *r = &j->rep;
    sv_em_stackup st;
    sv_em_project_stackup(j->prj, &st);
    r->unknowns = sv_em_model_unknowns(j->em);
    r->ports = j->p;
    r->subdivide = sv_em_project_subdivide(j->prj);
    r->lossy_metal = isfinite(st.sigma);
    r->dispersion_far_terms = sv_em_model_dispersion_far_terms(j->em);
    r->edge_profiles = sv_em_model_edge_profiled(j->em);
    r->calibrated = sv_em_project_calibrated(j->prj);
    r->model_limit_hz = sv_em_model_limit_hz(j->em);
    r->dispersion_limit_hz = sv_em_model_dispersion_limit_hz(j->em);
    r->precision = j->so.precision;
    r->exact_all = j->so.exact_all;
    r->converged = 1; /* until a sweep says otherwise */
    snprintf(r->device, sizeof r->device, "cpu");
}

sv_status sv_planar_job_create(sv_ctx *ctx, const sv_em_project *project, const sv_planar_options *opts,
                               sv_planar_job **out)
{
    return planar_job_create_on(ctx, project, opts, NULL, 0, out);
}

sv_status planar_job_create_on(sv_ctx *ctx, const sv_em_project *project, const sv_planar_options *opts,
                               sv_em_board *b, int slot, sv_planar_job **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_planar_job_create: out is NULL");
    *out = NULL;
    if (!project) return sv_error(SV_ERR_ARG, "sv_planar_job_create: the project is NULL");
    sv_planar_job *j = sv_calloc(ctx, 1, sizeof *j, "planar job");
    if (!j) return sv_last_status();
    j->ctx = ctx;
    j->board = b;
    j->slot = slot;
    if (opts) j->o = *opts;
    sv_status s = check_options(&j->o);
    if (!s) s = planar_check_device(j);
    if (!s) s = sv_em_project_copy(ctx, project, &j->prj);
    if (!s && j->o.subdivide > 1) s = sv_em_project_split_cells(j->prj, j->o.subdivide);
    if (!s) s = planar_frequencies(j);
    if (!s) s = check_validity(j);
    if (!s) s = check_mesh_memory(j);
    if (!s) s = make_mesh(j);
    if (s) {
        sv_planar_job_destroy(j);
        return s;
    }
    set_sweep_options(j);
    describe_mesh(j);
    planar_estimate(j);
    *out = j;
    return SV_OK;
}

sv_status sv_planar_job_open(sv_ctx *ctx, const char *path, const sv_planar_options *opts, sv_planar_job **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_planar_job_open: out is NULL");
    *out = NULL;
    sv_em_project *p;
    sv_status s = sv_em_project_read(ctx, path, &p);
    if (s) return s;
    s = sv_planar_job_create(ctx, p, opts, out);
    sv_em_project_destroy(p);
    return s;
}

/* What only runs need (the mesh, the model, the solves, the standards):
 * released at the end of every run. */
static void release_run(sv_planar_job *j)
{
    sv_sweep_result_destroy(j->res);
    sv_gpu_solver_destroy(j->gpu);
    sv_em_calibration_destroy(j->cal);
    sv_em_affine_destroy(j->model);
    sv_em_model_destroy(j->em);
    j->res = NULL;
    j->gpu = NULL;
    j->cal = NULL;
    j->model = NULL;
    j->em = NULL;
    j->so.solver = NULL;
}

void sv_planar_job_destroy(sv_planar_job *j)
{
    if (!j) return;
    release_run(j);
    planar_network_free(j);
    sv_em_project_destroy(j->prj);
    sv_free(j->ctx, j->freq);
    sv_free(j->ctx, j);
}

const sv_em_project *sv_planar_job_project(const sv_planar_job *j) { return j ? j->prj : NULL; }

const double *sv_planar_job_frequencies(const sv_planar_job *j, int *nfreq)
{
    if (nfreq) *nfreq = j ? j->nf : 0;
    return j ? j->freq : NULL;
}

void sv_planar_job_memory(const sv_planar_job *j, sv_planar_memory *out)
{
    if (out) *out = j ? j->rep.estimate : (sv_planar_memory){0};
}

/* ---- the run's steps ------------------------------------------------------------ */
/* Each step's share of the progress, by the work it will do: the assembly
 * about 1500·N² (table lookups, closed forms, the walls' and edges'
 * updates: measured on the examples), each exact solve N³/3 (the sweeps of
 * the examples take 4 to 7), and the calibration two thru standards, each
 * an assembly and a sweep of n unknowns, n as their memory implies (about
 * 32·n² bytes). */
typedef struct shares {
    double assembly, sweep, calibration;
} shares;

static double assembly_work(double n) { return 1500 * n * n; }
static double sweep_work(double n, double solves) { return solves * n * n * n / 3; }

static shares progress_shares(const sv_planar_job *j)
{
    double n = j->rep.unknowns, solved = j->nf - j->dc;
    double solves = j->so.exact_all ? solved : fmin(solved, 5);
    double ns = sqrt((double)j->rep.estimate.calibration / 32.0);
    double w[3] = {assembly_work(n), sweep_work(n, solves),
                   j->rep.calibrated && solved ? 2 * (assembly_work(ns) + sweep_work(ns, 5)) : 0};
    double sum = w[0] + w[1] + w[2];
    if (!(sum > 0)) return (shares){1, 0, 0};
    return (shares){w[0] / sum, w[1] / sum, w[2] / sum};
}

static sv_status assemble(sv_planar_job *j)
{
    double t0 = sv_time_now();
    sv_ctx_reset_peak(j->ctx);
    sv_status s = sv_em_affine_create(j->ctx, j->em, &j->model);
    j->rep.seconds_assembly = sv_time_now() - t0;
    j->rep.peak_assembly = sv_ctx_memory_peak(j->ctx);
    if (s) return s;
    j->rep.terms = sv_sweep_model_nterms(sv_em_affine_model(j->model));
    j->rep.radiation = sv_em_affine_radiates(j->model);
    j->rep.dispersion = sv_em_affine_disperses(j->model);
    j->rep.beyond_limit = j->rep.radiation && j->rep.stop_hz > j->rep.model_limit_hz;
    return SV_OK;
}

/* The solves above DC: the adaptive sweep, or every frequency exactly. */
static sv_status solve(sv_planar_job *j)
{
    int nf = j->nf - j->dc;
    if (nf == 0) return SV_OK;
    sv_ctx_reset_peak(j->ctx);
    sv_status s = sv_em_sweep_run(j->ctx, j->model, nf, j->freq + j->dc, &j->so, &j->res);
    if (s) return s;
    const sv_sweep_result *r = j->res;
    sv_planar_report *rep = &j->rep;
    rep->exact_solves = r->n_exact;
    rep->fallbacks = r->n_fallback;
    rep->gmres_solves = r->n_gmres;
    rep->basis_size = r->basis_size;
    rep->converged = r->converged;
    rep->max_residual = r->max_residual;
    rep->seconds_exact = r->seconds_exact;
    rep->seconds_reduced = r->seconds_reduced;
    rep->peak_sweep = r->peak_bytes;
    if (j->gpu) {
        sv_gpu_report gr;
        sv_gpu_solver_report(j->gpu, &gr);
        rep->device_solves = gr.device_solves;
        rep->device_errors = gr.device_errors;
        if (gr.device_errors) snprintf(rep->device_note, sizeof rep->device_note, "%s", gr.note);
    }
    return SV_OK;
}

/* A step within its share [lo, lo + share) of the job's progress. */
typedef sv_status (*planar_step)(sv_planar_job *j);
static sv_status in_span(sv_planar_job *j, planar_step step, double lo, double share)
{
    sv_progress_span outer = sv_progress_span_begin(j->ctx, lo, lo + share);
    sv_status s = step(j);
    sv_progress_span_end(j->ctx, outer);
    return s;
}

/* The context as the options ask for while the job runs, and back after. */
static sv_status run_steps(sv_planar_job *j)
{
    shares sh = progress_shares(j);
    double at = 0;
    sv_status s = planar_check_memory(j);
    if (!s) s = in_span(j, assemble, at, sh.assembly);
    at += sh.assembly;
    if (!s) planar_estimate_low_frequencies(j);
    if (!s) s = planar_check_memory(j);
    if (!s) s = planar_choose_device(j);
    if (!s) s = in_span(j, solve, at, sh.sweep);
    at += sh.sweep;
    if (!s) s = planar_keep_raw(j);
    if (!s) s = in_span(j, planar_calibrate, at, sh.calibration);
    if (!s) s = planar_network(j);
    if (!s) s = sv_progress(j->ctx, "network parameters", 1.0);
    return s;
}

sv_status sv_planar_job_run(sv_planar_job *j)
{
    if (!j) return sv_error(SV_ERR_ARG, "sv_planar_job_run: the job is NULL");
    if (j->state != PLANAR_NEW) return sv_error(SV_ERR_ARG, "sv_planar_job_run: a job runs once");
    double t0 = sv_time_now();
    ctx_saved saved = apply_options(j);
    sv_progress_span whole = sv_progress_span_begin(j->ctx, 0, 1);
    sv_status s = run_steps(j);
    sv_progress_span_end(j->ctx, whole);
    restore_options(j, saved);
    size_t peak = sv_ctx_memory_peak(j->ctx);
    size_t before = j->rep.peak_assembly > j->rep.peak_mesh ? j->rep.peak_assembly : j->rep.peak_mesh;
    j->rep.peak = peak > before ? peak : before;
    release_run(j);
    j->rep.seconds_total = sv_time_now() - t0;
    if (s) {
        planar_network_free(j);
        j->state = PLANAR_FAILED;
        return s;
    }
    j->net = (sv_planar_network){.p = j->p, .nf = j->nf, .freq_hz = j->freq, .s = j->s, .y = j->y, .z = j->z,
                                 .y_raw = j->y_raw, .z0 = j->z0, .port_names = j->names, .exact = j->exact,
                                 .fallback = j->fallback};
    j->state = PLANAR_DONE;
    return SV_OK;
}

const sv_planar_network *sv_planar_job_network(const sv_planar_job *j)
{
    return j && j->state == PLANAR_DONE ? &j->net : NULL;
}

sv_status sv_planar_job_report(const sv_planar_job *j, sv_planar_report *out)
{
    if (!j || !out) return sv_error(SV_ERR_ARG, "sv_planar_job_report: NULL argument");
    if (j->state != PLANAR_DONE) return sv_error(SV_ERR_ARG, "sv_planar_job_report: the job has not run successfully");
    *out = j->rep;
    return SV_OK;
}
