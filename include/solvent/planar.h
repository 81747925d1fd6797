/* Solvent planar job: one call from a planar project to its S-parameters.
 *
 * A job is everything `solvent sweep` and `solvent solve` do, owned once by
 * the library: the mesh with the band's top frequency, the memory estimate
 * (refused before anything large is allocated), the affine model Z(f) =
 * Σ c_k(f)·A_k, the exact solver (the CPU's, or a GPU's after its
 * self-test), the adaptive sweep or direct solves, the DC point when the
 * frequencies start at 0 Hz, the calibrated ports, and S (Y and Z on
 * request) with the reciprocity and passivity checks, plus a report of
 * what it did. The context's progress callback sees the whole job as one
 * fraction rising to 1, with each phase named ("assembly", "sweep",
 * "dense LDLT factorisation", "calibration standards", …); a non-zero
 * return stops it within a fraction of a second with SV_ERR_CANCELLED,
 * every allocation released.
 *
 *     sv_planar_job *job;
 *     sv_planar_job_create(ctx, project, NULL, &job);   // options: NULL = the project's band
 *     sv_planar_job_run(job);
 *     const sv_planar_network *net = sv_planar_job_network(job);
 *     // net->s[i·p·p + r + c·p] = S_rc at net->freq_hz[i]
 *     sv_planar_job_destroy(job);
 *
 * The planar module sits above em (the model), gpu (a device) and sweep:
 * see docs/architecture.md. */
#ifndef SOLVENT_PLANAR_H
#define SOLVENT_PLANAR_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/em.h"
#include "solvent/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the exact solves run. */
typedef enum sv_planar_device {
    SV_PLANAR_DEVICE_AUTO = 0, /* a GPU when one passes the start-up self-test, else the CPU (the
                                  report says why) */
    SV_PLANAR_DEVICE_CPU = 1,
    SV_PLANAR_DEVICE_GPU = 2   /* a GPU, or SV_ERR_UNSUPPORTED naming why none can be used */
} sv_planar_device;

/* Network parameters besides S, or'ed into sv_planar_options.outputs. */
typedef enum sv_planar_output {
    SV_PLANAR_OUTPUT_Y = 1,     /* Y between the reference planes */
    SV_PLANAR_OUTPUT_Z = 2,     /* Z = Y⁻¹ */
    SV_PLANAR_OUTPUT_Y_RAW = 4  /* Y of the raw edge ports, before the calibration */
} sv_planar_output;

/* A zero-filled struct (or options = NULL) is the defaults: the project's
 * band, the adaptive sweep in mixed precision, the device chosen
 * automatically, the context's threads and memory budget (or, without
 * one, the machine's available memory), S alone. */
typedef struct sv_planar_options {
    /* The frequencies: a band, each field of which that is > 0 wins over the
     * project's sweep section (start_hz, stop_hz, points, tolerance; as
     * sv_em_project_band), evenly spaced; start_dc = 1 starts it at 0 Hz. */
    sv_em_sweep band;
    int start_dc;
    /* Or a list of nfreq ≥ 1 frequencies (Hz, ascending, distinct, finite,
     * 0 allowed first) instead of the band's points; NULL: the band. */
    const double *freq_hz;
    int nfreq;
    /* Every frequency solved exactly (direct solves), no reduced model. */
    int exact_all;
    sv_sweep_precision precision; /* of the exact solves (default SV_SWEEP_MIXED) */
    int max_exact;                /* cap on the adaptive sweep's exact solves; 0 = 30 */
    int subdivide;                /* mesh every cell K × K on top of the project's grid (0, 1: none) */
    sv_planar_device device;
    int threads;                  /* > 0: for this job (the context's count is restored after) */
    /* > 0: refuse a job whose estimate exceeds it, and hold it to it as the
     * context's budget while it runs (restored after); 0: the context's
     * budget when it has one, else the machine's available memory. */
    size_t memory_limit;
    const char *memory_limit_name; /* how a refusal names the limit ("--memory-limit"; NULL: "the
                                      memory limit", or "available memory" for that default);
                                      borrowed until the job is destroyed */
    unsigned outputs;              /* sv_planar_output flags */
    /* 1: solve frequencies above the model's limit (sv_em_model_limit_hz)
     * with radiation on, where S may come out non-passive; 0 (default): a
     * job reaching above it is refused at creation, naming the limit
     * (sv_em_check_validity). */
    int allow_beyond_validity;
} sv_planar_options;

void sv_planar_options_default(sv_planar_options *opts);

/* What a job will hold at most, estimated before anything large exists. */
typedef struct sv_planar_memory {
    size_t mesh;        /* while the mesh is made, before the rest: its tables, thick metal's
                           Ritz steps, the radiation terms' making (sv_em_model_size_of) */
    size_t model;       /* the model's terms, the assembly's tables, the radiation terms, the
                           mesh's tables */
    size_t solves;      /* the sweep (basis, reduced model, exact solve) or the direct solves */
    size_t calibration; /* the ports' thru standards (after the solves, beside the model; 0: none) */
    size_t small;       /* mesh, network parameters */
    size_t total;       /* the larger of mesh and model + the larger of solves and calibration
                           + small */
    size_t limit;       /* the limit it was held to (0: none) */
} sv_planar_memory;

/* What a job did. */
typedef struct sv_planar_report {
    /* the model */
    int unknowns, ports, terms, subdivide;
    int lossy_metal, radiation, dispersion, dispersion_far_terms, edge_profiles, calibrated;
    double model_limit_hz;      /* above it the model no longer holds (sv_em_model_limit_hz) */
    int beyond_limit;           /* 1: frequencies above model_limit_hz were solved with radiation on
                                   (allow_beyond_validity): S may exceed 1 there (see checks) */
    double dispersion_limit_hz; /* with dispersion: sv_em_model_dispersion_limit_hz; else 0 */
    /* the frequencies */
    double start_hz, stop_hz, tolerance;
    int nfreq, dc;              /* dc = 1: the first frequency is 0 Hz, from the DC limit */
    sv_sweep_precision precision;
    int exact_all;
    /* the solves (above DC) */
    int exact_solves, fallbacks, gmres_solves, basis_size, converged;
    double max_residual;        /* the largest residual estimate of the reduced model */
    sv_em_s_checks checks;      /* over every frequency, DC included */
    /* the device */
    int on_device;              /* the exact solves ran on a GPU */
    int device_solves;          /* of which on the device */
    int device_errors;          /* device failures recovered on the CPU */
    char device_note[320];      /* what the device said when it failed ("" when it did not) */
    char device[400];           /* "cpu", "gpu NAME, double residuals (self-test passed)", or
                                   "cpu (why not the GPU)" */
    /* time, s */
    double seconds_mesh, seconds_assembly, seconds_exact, seconds_reduced, seconds_calibration,
        seconds_total;
    /* counted memory (sv_alloc), bytes: the context's peak is reset before the mesh, the
     * assembly and the sweep, so that each has its own; peak_mesh is what the mesh's
     * creation added to what the context held */
    size_t peak_mesh, peak_assembly, peak_sweep, peak;
    sv_planar_memory estimate;
} sv_planar_report;

/* The network a job delivers; its arrays belong to the job. */
typedef struct sv_planar_network {
    int p, nf;
    const double *freq_hz;          /* nf, ascending */
    const double complex *s;        /* nf blocks of p × p, column-major: s[i·p·p + r + c·p] */
    const double complex *y, *z;    /* the same, when asked for (else NULL); NAN where the
                                       parameter does not exist: Y at DC of lossless metal
                                       (connected ports shorted), Z where Y is singular to
                                       working precision (at DC: ports open, or joined by
                                       the metal's resistance with no path to ground) */
    const double complex *y_raw;    /* when asked for: the raw edge ports' Y (DC: as y) */
    const double *z0;               /* p reference impedances, Ω */
    const char *const *port_names;  /* p */
    const unsigned char *exact;     /* nf: 1 where solved exactly (DC: by the DC limit) */
    const unsigned char *fallback;  /* nf: 1 where an exact solve fell back to double */
} sv_planar_network;

typedef struct sv_planar_job sv_planar_job;

/* A job on a copy of `project` (the caller's stays as it is) with options
 * (may be NULL): checks the options, resolves the frequencies, makes the
 * mesh and its radiation terms (a second or two on the largest boards,
 * reported on the context's progress as an operation of its own, phase
 * "radiation terms", and stoppable), and estimates the memory; nothing
 * large yet. SV_ERR_ARG naming the value for a bad option or band, or the
 * first frequency above the model's limit (unless allow_beyond_validity);
 * SV_ERR_BUDGET naming the need when the mesh alone would not fit the
 * limit (before any of it is made; while it is made the limit is held as
 * the context's budget). */
sv_status sv_planar_job_create(sv_ctx *ctx, const sv_em_project *project, const sv_planar_options *opts,
                               sv_planar_job **out);
/* The same from a project file. */
sv_status sv_planar_job_open(sv_ctx *ctx, const char *path, const sv_planar_options *opts, sv_planar_job **out);
void sv_planar_job_destroy(sv_planar_job *job);

/* The project the job runs (its copy, subdivided when asked). */
const sv_em_project *sv_planar_job_project(const sv_planar_job *job);
/* The frequencies it will deliver (before it runs too) and their count. */
const double *sv_planar_job_frequencies(const sv_planar_job *job, int *nfreq);
/* Its memory estimate and the limit it will be held to. */
void sv_planar_job_memory(const sv_planar_job *job, sv_planar_memory *out);

/* Run it: SV_ERR_BUDGET (naming the estimate's parts and the limit) when it
 * would not fit, before anything large; SV_ERR_CANCELLED when the progress
 * callback stops it; a solve's error otherwise. A job runs once. A sweep
 * that reaches its cap on exact solves before every estimate meets the
 * tolerance is not an error: the report says converged = 0. */
sv_status sv_planar_job_run(sv_planar_job *job);

/* After a successful run: the network and the report (NULL / SV_ERR_ARG
 * before). */
const sv_planar_network *sv_planar_job_network(const sv_planar_job *job);
sv_status sv_planar_job_report(const sv_planar_job *job, sv_planar_report *out);

/* ---- a batch: many maps on one board ------------------------------------------
 * A dataset's maps on one board (the same grid, stack-up, ports, band and
 * effects; docs/how-to/run-a-batch.md): what every map shares — the
 * assembly's coefficient tables over the whole grid, thick metal's wall
 * tables, the edge profile's memo — is made once (sv_em_board), and each
 * map is a planar job on it, the same steps as sv_planar_job_run (its S
 * is a separate job's), without recomputing a shared coefficient. Maps run
 * side by side, each on a thread of its own.
 *
 *     sv_planar_batch *b;
 *     sv_planar_batch_create(ctx, board, NULL, &b);
 *     sv_planar_batch_run(b, nmaps, maps, on_map, user);  // on_map sees each map's job
 *     sv_planar_batch_destroy(b);
 */
typedef struct sv_planar_batch sv_planar_batch;

/* A zero-filled struct (or NULL) is the defaults: each map's job as
 * sv_planar_job_create's defaults (the board's band, ...), as many maps at a
 * time as the context has threads. */
typedef struct sv_planar_batch_options {
    sv_planar_options job; /* every map's job; job.threads and job.memory_limit: see below */
    /* Maps solved at the same time, each on job.threads threads (0: 1);
     * 0 = the context's thread count (or all cores) divided by those. */
    int workers;
    /* > 0: the whole batch's memory limit (the board's tables, then an
     * equal share for each map in flight: job.memory_limit, when given,
     * is each map's own); 0: the context's budget, else the available
     * memory. */
    size_t memory_limit;
} sv_planar_batch_options;

void sv_planar_batch_options_default(sv_planar_batch_options *opts);

/* The board (copied; its own metal is not used) with options: checks them,
 * makes the shared tables (reported on ctx's progress, stoppable).
 * SV_ERR_ARG naming a bad option; SV_ERR_UNSUPPORTED for a subdivided
 * board (grid.subdivide or job.subdivide > 1: its maps are on the drawing
 * grid); SV_ERR_BUDGET, before anything large is made, when the shared
 * tables' estimate reaches the limit. A map whose own job exceeds its
 * share is that map's failure (SV_ERR_BUDGET, reported and skipped). */
sv_status sv_planar_batch_create(sv_ctx *ctx, const sv_em_project *board, const sv_planar_batch_options *opts,
                                 sv_planar_batch **out);
void sv_planar_batch_destroy(sv_planar_batch *b);
/* The board's grid (the maps' size: nx·ny cells, map[i + nx·j], j = 0
 * the bottom row) and the maps it solves at a time. */
const sv_em_project *sv_planar_batch_board(const sv_planar_batch *b);
int sv_planar_batch_workers(const sv_planar_batch *b);
/* Its memory: the board's shared tables (estimated before they were made,
 * sv_em_board_bytes) and the limit each map's job is held to (0: none). */
void sv_planar_batch_memory(const sv_planar_batch *b, size_t *board, size_t *per_map);

/* One map, solved on ctx (a context this map alone uses meanwhile: a
 * caller with its own threads gives each its own) with the board's slot
 * `slot` (0 ≤ slot < workers, held by no other map at that time): a job
 * that has run (*out, the caller destroys it), or an error with the
 * library's message — SV_ERR_ARG for
 * a map that cannot run on the board ("no metal cell", "port 'P1': cell
 * (0, 3) must be metal ..."), or a job's own error. */
sv_status sv_planar_batch_solve(sv_planar_batch *b, sv_ctx *ctx, int slot, const unsigned char *map,
                                sv_planar_job **out);

/* What a batch tells its caller after each map, one call at a time (from
 * whichever thread solved it): k, and the job that ran (status SV_OK) or
 * the map's error (status, message: the library's, naming what is wrong;
 * job NULL). Return 0 to go on, non-zero to stop the batch (after the maps
 * in flight end). */
typedef int (*sv_planar_batch_fn)(void *user, int k, const sv_planar_job *job, sv_status status,
                                  const char *message);

/* Solve maps[0 … nmaps) (each nx·ny of the board's grid), `workers` at a
 * time, calling done after each. A map that cannot run is reported to done
 * and skipped: the batch goes on. The context's progress callback sees
 * the fraction of maps done (phase "batch"); a non-zero return stops it
 * within a map's progress step with SV_ERR_CANCELLED, as does done. */
sv_status sv_planar_batch_run(sv_planar_batch *b, int nmaps, const unsigned char *const *maps,
                              sv_planar_batch_fn done, void *user);

#ifdef __cplusplus
}
#endif
#endif
