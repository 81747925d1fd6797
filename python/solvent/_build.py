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
    double model_limit_hz, dispersion_limit_hz;
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
        '#include "solvent/solvent.h"\n#include "_watch.h"\n',
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
