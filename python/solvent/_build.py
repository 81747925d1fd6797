"""cffi (API mode) build of solvent._native: the library's C declarations the
package uses, compiled against the headers and linked to libsolvent.so.

Where the library is: SOLVENT_PREFIX (an installation: PREFIX/include and
PREFIX/lib), else SOLVENT_BUILD_DIR (a build folder of this repository), else
the repository's own build/ folder beside this package. The extension
remembers the library's folder (rpath), so nothing needs LD_LIBRARY_PATH.
"""
import os
import pathlib

from cffi import FFI

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent

CDEF = r"""
typedef int sv_status;
#define SV_OK ...
#define SV_ERR_NOMEM ...
#define SV_ERR_BUDGET ...
#define SV_ERR_ARG ...
#define SV_ERR_IO ...
#define SV_ERR_PARSE ...
#define SV_ERR_CANCELLED ...

const char *sv_status_string(sv_status status);
const char *sv_last_error(void);
const char *sv_version_string(void);

typedef struct sv_ctx sv_ctx;
sv_status sv_ctx_create(sv_ctx **out);
void sv_ctx_destroy(sv_ctx *ctx);
sv_status sv_ctx_set_threads(sv_ctx *ctx, int nthreads);
size_t sv_ctx_memory_peak(const sv_ctx *ctx);
size_t sv_ctx_memory_current(const sv_ctx *ctx);

typedef struct sv_py_watch sv_py_watch;
sv_py_watch *sv_py_watch_create(void);
void sv_py_watch_destroy(sv_py_watch *w);
void sv_py_watch_attach(sv_ctx *ctx, sv_py_watch *w);
void sv_py_watch_detach(sv_ctx *ctx);
void sv_py_watch_stop(sv_py_watch *w);
double sv_py_watch_read(sv_py_watch *w, char *phase, size_t cap);

typedef struct sv_em_project sv_em_project;
sv_status sv_em_project_read(sv_ctx *ctx, const char *path, sv_em_project **out);
sv_status sv_em_project_parse(sv_ctx *ctx, const char *text, size_t len, const char *name,
                              sv_em_project **out);
void sv_em_project_destroy(sv_em_project *p);
int sv_em_project_ports(const sv_em_project *p);
const char *sv_em_project_port_name(const sv_em_project *p, int k);

typedef struct sv_em_sweep {
    int present;
    double start_hz, stop_hz;
    int points;
    double tolerance;
    ...;
} sv_em_sweep;

typedef struct sv_em_s_checks {
    double reciprocity;
    double max_singular;
    ...;
} sv_em_s_checks;

typedef enum sv_sweep_precision { SV_SWEEP_MIXED, SV_SWEEP_DOUBLE, SV_SWEEP_LAPACK } sv_sweep_precision;
typedef enum sv_planar_device { SV_PLANAR_DEVICE_AUTO, SV_PLANAR_DEVICE_CPU, SV_PLANAR_DEVICE_GPU }
    sv_planar_device;
typedef enum sv_planar_output { SV_PLANAR_OUTPUT_Y, SV_PLANAR_OUTPUT_Z, SV_PLANAR_OUTPUT_Y_RAW }
    sv_planar_output;

typedef struct sv_planar_options {
    sv_em_sweep band;
    int start_dc;
    const double *freq_hz;
    int nfreq;
    int exact_all;
    sv_sweep_precision precision;
    int max_exact;
    int subdivide;
    sv_planar_device device;
    int threads;
    size_t memory_limit;
    const char *memory_limit_name;
    unsigned outputs;
    int allow_beyond_validity;
    ...;
} sv_planar_options;
void sv_planar_options_default(sv_planar_options *opts);

typedef struct sv_planar_memory {
    size_t mesh, model, solves, calibration, small, total, limit;
    ...;
} sv_planar_memory;

typedef struct sv_planar_report {
    int unknowns, ports, terms, subdivide;
    int lossy_metal, radiation, dispersion, dispersion_far_terms, edge_profiles, calibrated;
    double model_limit_hz;
    int beyond_limit;
    double dispersion_limit_hz;
    double start_hz, stop_hz, tolerance;
    int nfreq, dc;
    sv_sweep_precision precision;
    int exact_all;
    int exact_solves, fallbacks, gmres_solves, basis_size, converged;
    double max_residual;
    sv_em_s_checks checks;
    int on_device, device_solves, device_errors;
    char device_note[...];
    char device[...];
    double seconds_mesh, seconds_assembly, seconds_exact, seconds_reduced, seconds_calibration,
        seconds_total;
    size_t peak_mesh, peak_assembly, peak_sweep, peak;
    sv_planar_memory estimate;
    ...;
} sv_planar_report;

typedef struct sv_planar_network {
    int p, nf;
    const double *freq_hz;
    const double _Complex *s;
    const double _Complex *y;
    const double _Complex *z;
    const double _Complex *y_raw;
    const double *z0;
    const char *const *port_names;
    const unsigned char *exact;
    const unsigned char *fallback;
    ...;
} sv_planar_network;

typedef struct sv_planar_job sv_planar_job;
sv_status sv_planar_job_create(sv_ctx *ctx, const sv_em_project *project, const sv_planar_options *opts,
                               sv_planar_job **out);
void sv_planar_job_destroy(sv_planar_job *job);
const double *sv_planar_job_frequencies(const sv_planar_job *job, int *nfreq);
void sv_planar_job_memory(const sv_planar_job *job, sv_planar_memory *out);
sv_status sv_planar_job_run(sv_planar_job *job);
const sv_planar_network *sv_planar_job_network(const sv_planar_job *job);
sv_status sv_planar_job_report(const sv_planar_job *job, sv_planar_report *out);

#define SV_EM_TS_VERSION_FOR_Z0 ...
typedef enum sv_em_ts_format { SV_EM_TS_RI, SV_EM_TS_MA, SV_EM_TS_DB } sv_em_ts_format;
typedef enum sv_em_ts_param { SV_EM_TS_S, SV_EM_TS_Y, SV_EM_TS_Z } sv_em_ts_param;
typedef struct sv_em_ts_options {
    int version;
    sv_em_ts_format format;
    sv_em_ts_param param;
    const char *unit;
    const char *comment;
    ...;
} sv_em_ts_options;
void sv_em_ts_options_default(sv_em_ts_options *opts);
sv_status sv_em_touchstone_write(const char *path, const sv_em_ts_options *opts, int p, int nf,
                                 const double *freq_hz, const double _Complex *data, const double *z0);
/* Design: DBS against masks on |S| (include/solvent/design.h) */
void free(void *ptr);
typedef struct sv_em_grid {
    int nx, ny;
    double dx, dy;
    double x0, y0;
} sv_em_grid;
void sv_em_project_grid(const sv_em_project *p, sv_em_grid *out);
typedef struct sv_design_spec sv_design_spec;
sv_status sv_design_spec_read(sv_ctx *ctx, const char *path, sv_design_spec **out);
sv_status sv_design_spec_set_threads(sv_design_spec *spec, int threads);
sv_status sv_design_spec_parse(sv_ctx *ctx, const char *text, size_t len, const char *name, const char *dir,
                               sv_design_spec **out);
void sv_design_spec_destroy(sv_design_spec *spec);
const sv_em_project *sv_design_spec_board(const sv_design_spec *spec);
const double *sv_design_spec_frequencies(const sv_design_spec *spec, int *nf);
sv_status sv_design_spec_project_json(const sv_design_spec *spec, const unsigned char *map, char **out);

typedef struct sv_design_report {
    int passes;
    long tried, accepted;
    int refreshes;
    long rebuilds;
    double max_drift;
    double start_cost, cost;
    int violations;
    int stopped;
    double seconds, seconds_setup;
    int unknowns, design_unknowns, nfreq;
    ...;
} sv_design_report;
typedef struct sv_design_result sv_design_result;
sv_status sv_design_run(sv_ctx *ctx, const sv_design_spec *spec, sv_design_result **out);
void sv_design_result_destroy(sv_design_result *res);
const unsigned char *sv_design_result_map(const sv_design_result *res);
const double _Complex *sv_design_result_s(const sv_design_result *res, int *nf, int *p);
const double *sv_design_result_history(const sv_design_result *res, int *n);
void sv_design_result_report(const sv_design_result *res, sv_design_report *out);

/* ODE ensembles (include/solvent/ode.h) */
typedef int (*sv_ode_rhs_fn)(double t, const double *y, const double *p, double *dydt, void *user);
typedef int (*sv_ode_rhs_batch_fn)(int W, const double *t, const double *y, const double *p, double *dydt,
                                   void *user);
typedef int (*sv_ode_jac_fn)(double t, const double *y, const double *p, double *values, double *dfdt, void *user);
typedef int (*sv_ode_jac_batch_fn)(int W, const double *t, const double *y, const double *p, double *values,
                                   double *dfdt, void *user);
typedef int (*sv_ode_rhs_complex_fn)(double _Complex t, const double _Complex *y, const double *p,
                                     double _Complex *dydt, void *user);
typedef int (*sv_ode_jvp_fn)(double t, const double *y, const double *p, double vt, const double *v, double *jv,
                             void *user);
typedef int (*sv_ode_dfdp_fn)(double t, const double *y, const double *p, int k, double *dfdp_k, void *user);
typedef int (*sv_ode_rhs_complex_p_fn)(double _Complex t, const double _Complex *y, const double _Complex *p,
                                       double _Complex *dydt, void *user);
typedef int (*sv_ode_tangent_fn)(double t, const double *y, const double *p, const double *v, const double *vp,
                                 double *out, void *user);
typedef int (*sv_ode_tangent_complex_fn)(double _Complex t, const double _Complex *y, const double *p,
                                         const double *v, const double *vp, double _Complex *out, void *user);
typedef int (*sv_ode_jac_dir_fn)(double t, const double *y, const double *p, const double *v, const double *vp,
                                 double *dvals, double *ddfdt, void *user);
typedef int (*sv_ode_dfdp_batch_fn)(int W, const double *t, const double *y, const double *p, int k, double *dfdp_k,
                                    void *user);
typedef int (*sv_ode_tangent_batch_fn)(int W, const double *t, const double *y, const double *p, const double *v,
                                       const double *vp, double *out, void *user);
typedef int (*sv_ode_jac_dir_batch_fn)(int W, const double *t, const double *y, const double *p, const double *v,
                                       const double *vp, double *dvals, double *ddfdt, void *user);

typedef enum sv_ode_sens_source { SV_ODE_SENS_ANALYTIC, SV_ODE_SENS_COMPLEX_STEP, SV_ODE_SENS_TANGENT,
                                  SV_ODE_SENS_FD } sv_ode_sens_source;
typedef enum sv_ode_jac_source { SV_ODE_JAC_ANALYTIC, SV_ODE_JAC_COMPLEX_STEP, SV_ODE_JAC_JVP, SV_ODE_JAC_FD }
    sv_ode_jac_source;

typedef struct sv_ode_problem_desc {
    const char *name;
    int n;
    int nparams;
    sv_ode_rhs_fn f;
    sv_ode_rhs_batch_fn f_batch;
    const int *rowptr;
    const int *colind;
    sv_ode_jac_source jac_source;
    sv_ode_jac_fn jac;
    sv_ode_jac_batch_fn jac_batch;
    sv_ode_rhs_complex_fn f_complex;
    sv_ode_jvp_fn jvp;
    int nonautonomous;
    void *user;
    int nsens_params;
    const int *sens_params;
    int nsens_y0;
    const int *sens_y0;
    sv_ode_sens_source sens_source;
    sv_ode_dfdp_fn dfdp;
    sv_ode_rhs_complex_p_fn f_complex_p;
    sv_ode_tangent_fn tangent;
    sv_ode_jac_dir_fn jac_dir;
    sv_ode_tangent_complex_fn tangent_complex;
    sv_ode_dfdp_batch_fn dfdp_batch;
    sv_ode_tangent_batch_fn tangent_batch;
    sv_ode_jac_dir_batch_fn jac_dir_batch;
    int ninvariants;
    const double *invariants;
    ...;
} sv_ode_problem_desc;

typedef struct sv_ode_problem sv_ode_problem;
sv_status sv_ode_problem_create(sv_ctx *ctx, const sv_ode_problem_desc *desc, sv_ode_problem **out);
void sv_ode_problem_destroy(sv_ode_problem *prob);
int sv_ode_problem_n(const sv_ode_problem *prob);
int sv_ode_problem_nparams(const sv_ode_problem *prob);
int sv_ode_problem_nnz(const sv_ode_problem *prob);
int sv_ode_problem_nsens(const sv_ode_problem *prob);
sv_status sv_ode_problem_with_sens(sv_ctx *ctx, const sv_ode_problem *prob, int nsens_params, const int *sens_params,
                                   int nsens_y0, const int *sens_y0, sv_ode_problem **out);
int sv_ode_problem_ninvariants(const sv_ode_problem *prob);
sv_status sv_ode_problem_with_invariants(sv_ctx *ctx, const sv_ode_problem *prob, int ninvariants,
                                         const double *invariants, sv_ode_problem **out);

typedef enum sv_ode_method { SV_ODE_RODAS5P, SV_ODE_TSIT5 } sv_ode_method;

typedef int (*sv_ode_event_fn)(double t, const double *y, const double *p, double *g, void *user);
typedef int (*sv_ode_event_batch_fn)(int W, const double *t, const double *y, const double *p, double *g,
                                     void *user);
typedef int (*sv_ode_event_handler_fn)(double t, double *y, double *p, int which, void *user);
enum { SV_ODE_HANDLER_CONTINUE, SV_ODE_HANDLER_STOP };
typedef enum sv_ode_event_direction { SV_ODE_EVENT_EITHER, SV_ODE_EVENT_RISING, SV_ODE_EVENT_FALLING }
    sv_ode_event_direction;
typedef enum sv_ode_event_action { SV_ODE_EVENT_RECORD, SV_ODE_EVENT_STOP, SV_ODE_EVENT_HANDLE }
    sv_ode_event_action;
typedef struct sv_ode_events {
    int m;
    sv_ode_event_fn g;
    const sv_ode_event_direction *direction;
    const sv_ode_event_action *action;
    sv_ode_event_handler_fn handler;
    double tol;
    sv_ode_event_batch_fn g_batch;
    ...;
} sv_ode_events;

typedef struct sv_ode_options {
    sv_ode_method method;
    double rtol;
    double atol;
    const double *atol_vec;
    const double *weights;
    double first_step;
    double max_step;
    long max_steps;
    const double *tstops;
    int ntstops;
    const sv_ode_events *events;
    ...;
} sv_ode_options;
void sv_ode_options_default(sv_ode_options *opt);

typedef enum sv_ode_traj_status { SV_ODE_SUCCESS, SV_ODE_MAX_STEPS, SV_ODE_STEP_TOO_SMALL, SV_ODE_NONFINITE,
                                  SV_ODE_F_FAILED, SV_ODE_NOT_RUN, SV_ODE_STOPPED } sv_ode_traj_status;
const char *sv_ode_traj_status_string(sv_ode_traj_status s);

typedef struct sv_ode_stats {
    long accepted, rejected;
    long nf;
    long njac;
    long nfactor;
    long nsolve;
    long nrefine;
    long nrefused;
    long nexact;
    long nsens_rhs;
    long nsens_jac;
    double t_reached;
    ...;
} sv_ode_stats;

typedef struct sv_ode_ensemble {
    int ntraj;
    double t0;
    int nsave;
    const double *tsave;
    const double *y0;
    int y0_shared;
    const double *params;
    int params_shared;
    double *out;
    double *sens_out;
    const double *sens0;
    int sens0_shared;
    sv_ode_traj_status *status;
    sv_ode_stats *stats;
    const double *t0_traj;
    const double *tsave_traj;
    int event_capacity;
    double *event_t;
    int *event_which;
    double *event_y;
    int *nevents;
    ...;
} sv_ode_ensemble;

sv_status sv_ode_solve(sv_ctx *ctx, const sv_ode_problem *prob, const sv_ode_options *opt, sv_ode_ensemble *ens);
sv_status sv_ode_loss_gradient(const sv_ode_problem *prob, const sv_ode_ensemble *ens, const double *data,
                               const double *sigma, double *loss, double *grad);

typedef struct sv_ode_builtin {
    const char *name;
    sv_ode_problem *prob;
    double t0, t1;
    double *y0;
    double *params;
    double *tstops;
    int ntstops;
    double rtol, atol;
    double *atol_vec;
    const sv_ode_events *events;
    double max_step;
    ...;
} sv_ode_builtin;
sv_status sv_ode_builtin_create(sv_ctx *ctx, const char *name, double arg, sv_ode_jac_source jac,
                                sv_ode_builtin **out);
void sv_ode_builtin_destroy(sv_ode_builtin *b);
const char *const *sv_ode_builtin_names(void);

typedef struct sv_planar_batch sv_planar_batch;
typedef struct sv_planar_batch_options {
    sv_planar_options job;
    int workers;
    size_t memory_limit;
    ...;
} sv_planar_batch_options;
void sv_planar_batch_options_default(sv_planar_batch_options *opts);
sv_status sv_planar_batch_create(sv_ctx *ctx, const sv_em_project *board, const sv_planar_batch_options *opts,
                                 sv_planar_batch **out);
void sv_planar_batch_destroy(sv_planar_batch *b);
int sv_planar_batch_workers(const sv_planar_batch *b);
typedef int (*sv_planar_batch_fn)(void *user, int k, const sv_planar_job *job, sv_status status,
                                  const char *message);
sv_status sv_planar_batch_run(sv_planar_batch *b, int nmaps, const unsigned char *const *maps,
                              sv_planar_batch_fn done, void *user);
/* A batch's report of each map (batch.py), called one map at a time. */
extern "Python" int sv_py_planar_batch_done(void *user, int k, const sv_planar_job *job, sv_status status,
                                            const char *message);

/* A Python right-hand side: the solver calls these (cffi callbacks that
 * take the interpreter's lock); user is the solve's handle (ode.py). */
extern "Python" int sv_py_ode_f(double t, const double *y, const double *p, double *dydt, void *user);
extern "Python" int sv_py_ode_f_batch(int W, const double *t, const double *y, const double *p, double *dydt,
                                      void *user);
extern "Python" int sv_py_ode_jac(double t, const double *y, const double *p, double *values, double *dfdt,
                                  void *user);
extern "Python" int sv_py_ode_jac_batch(int W, const double *t, const double *y, const double *p, double *values,
                                        double *dfdt, void *user);
/* Python event functions and handler (ode_events.py), called the same way;
 * user is the problem's, whose record holds the events. */
extern "Python" int sv_py_ode_g(double t, const double *y, const double *p, double *g, void *user);
extern "Python" int sv_py_ode_g_batch(int W, const double *t, const double *y, const double *p, double *g,
                                      void *user);
extern "Python" int sv_py_ode_handler(double t, double *y, double *p, int which, void *user);
"""


def _library_dirs():
    """(include folder, library folder) of the Solvent to build against."""
    prefix = os.environ.get("SOLVENT_PREFIX")
    if prefix:
        return pathlib.Path(prefix) / "include", pathlib.Path(prefix) / "lib"
    build = pathlib.Path(os.environ.get("SOLVENT_BUILD_DIR", REPO / "build")).resolve()
    return REPO / "include", build


def _builder():
    include, libdir = _library_dirs()
    if not (libdir / "libsolvent.so").exists():
        raise RuntimeError(
            f"libsolvent.so not found in {libdir}: build Solvent first (`make build` in the repository),"
            " or set SOLVENT_BUILD_DIR to its build folder or SOLVENT_PREFIX to an installation")
    ffi = FFI()
    ffi.cdef(CDEF)
    ffi.set_source(
        "solvent._native",
        '#include <stdlib.h>\n#include "solvent/solvent.h"\n#include "_watch.h"\n',
        sources=["solvent/_watch.c"],  # relative to setup.py, as setuptools requires
        include_dirs=[str(include), str(HERE)],
        library_dirs=[str(libdir)],
        libraries=["solvent"],
        extra_link_args=[f"-Wl,-rpath,{libdir}"],
        extra_compile_args=["-std=gnu17"],
    )
    return ffi


ffibuilder = _builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
