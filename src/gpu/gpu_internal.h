/* Internal declarations of the accelerator back end.
 *
 * The device is reached through a small vtable (sv_gpu_backend) with two
 * implementations: the CUDA one (backend.c over the CUDA back end module,
 * src/gpu/cuda/, built only with SOLVENT_CUDA and loaded by loader.c) and
 * a CPU emulation (emulate.c) that runs the same algorithms — the blocked
 * LDLᵀ without pivoting on the packed layout, the double and double-float
 * products from df_kernel.h — so that planning, the self-test, the
 * refinement loop and the fallbacks are tested on every machine. */
#ifndef SV_GPU_INTERNAL_H
#define SV_GPU_INTERNAL_H

#include <complex.h>

#include "solvent/dense.h"
#include "solvent/em_assembly.h"
#include "solvent/gpu.h"
#include "solvent/sweep_solver.h"

#include "cuda/cuda_iface.h"

/* ---- the problem as the device sees it ------------------------------------------ */
typedef struct sv_gpu_term_view {
    sv_sweep_term_kind kind;
    const double *packed;                 /* PACKED */
    const int *rowptr, *colind;           /* CSR (both triangles) */
    const double *values;
    size_t nnz;                           /* CSR entries */
    double maxabs;                        /* max |a_ij| */
} sv_gpu_term_view;

typedef struct sv_gpu_problem {
    int n, nb, nterms;
    sv_gpu_term_view *terms; /* nterms */
} sv_gpu_problem;

/* The sweep model's terms (problem.c). terms: nterms entries,
 * caller-allocated. nb = the packed terms' block size, or 128 when there is
 * none. */
sv_status sv_gpu_problem_from_model(const sv_sweep_model *m, sv_gpu_term_view *terms, sv_gpu_problem *p);

/* ---- the backend ------------------------------------------------------------------ */
typedef struct sv_gpu_backend sv_gpu_backend;
struct sv_gpu_backend {
    const char *name;
    void *st;
    /* Keep the terms on the device for residual mode(s) `modes` (bit 1:
     * double, bit 2: double-float), and room for products of up to
     * max_cols real columns. */
    sv_status (*upload)(sv_gpu_backend *b, const sv_gpu_problem *p, int modes, int max_cols);
    /* Z = Σ c_k·A_k in complex single, packed, on the device. */
    sv_status (*form)(sv_gpu_backend *b, const double complex *c);
    /* LDLᵀ of Z without pivoting; SV_ERR_SINGULAR when a pivot has
     * |d| < pivot_min (or is not finite). */
    sv_status (*factor)(sv_gpu_backend *b, double pivot_min);
    /* v ← Z⁻¹·v for ncols columns (host, n × ncols, ld n, complex single). */
    sv_status (*solve)(sv_gpu_backend *b, int ncols, float complex *v);
    /* y_k = A_k·x for every term k (x real, n × ncols, ld n, double;
     * y: nterms blocks of n × ncols, block k at y + k·n·ncols), computed in
     * native double or double-float. */
    sv_status (*products)(sv_gpu_backend *b, sv_gpu_residual mode, int ncols, const double *x, double *y);
    /* Assembly (asm_kernel.h, steps 1–3): the tables of t onto the device, their
     * far entries and folds there, and every rooftop pair of L, Ψ (and Ψ_im when
     * t->lossy) into packed arrays of block size nb kept there. May return
     * before the device has finished. */
    sv_status (*asm_tables)(sv_gpu_backend *b, const sv_em_tables *t, int nb);
    /* Steps 4–5 with rows w, then the packed arrays copied into L, Psi, PsiI
     * (host; PsiI NULL when not lossy); the device's assembly memory freed.
     * seconds[0]: waiting for the device's work, seconds[1]: the copy. */
    sv_status (*asm_finish)(sv_gpu_backend *b, const sv_em_assembly_rows *w, double *L, double *Psi, double *PsiI,
                            double seconds[2]);
    /* Drop an assembly in progress (after an error; a no-op when none). */
    void (*asm_release)(sv_gpu_backend *b);
    void (*destroy)(sv_gpu_backend *b);
    sv_ctx *ctx;  /* the context the backend allocates host memory from */
    void *asm_st; /* the assembly in progress (asm_tables … asm_finish) */
};

/* Makes a backend for the device (with CUDA) or the emulation (tests). */
typedef sv_status (*sv_gpu_backend_factory)(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out);

/* The CUDA backend. user: NULL for the process-wide module (loader.c), or
 * a const sv_gpu_cuda_module * to use instead (the tests' second build).
 * SV_ERR_UNSUPPORTED with the loader's reason when there is no module. */
sv_status sv_gpu_backend_device(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out);
/* Device discovery through module mod (backend.c). */
sv_status sv_gpu_module_query(const sv_gpu_cuda_module *mod, int device, sv_gpu_device_info *info);

/* ---- the module loader (loader.c) ------------------------------------------------- */
/* The module's file name ("libsolvent-cuda.so"). */
const char *sv_gpu_module_file(void);
/* 1 if the CUDA driver (libcuda.so.1) can be loaded; else 0 and
 * "no CUDA driver (libcuda.so.1 not found)" in reason. */
int sv_gpu_driver_present(char *reason, size_t len);
/* Load the module at `path` and check its entry point and ABI number; NULL
 * with the reason (not found, cannot be loaded, not a module, another ABI).
 * A module that loads is never unloaded. */
const sv_gpu_cuda_module *sv_gpu_module_open(const char *path, char *reason, size_t len);
/* The first of dirs[0..ndirs) holding a module that loads; NULL with the
 * first failure's reason, or "... not found in" the directories. */
const sv_gpu_cuda_module *sv_gpu_module_find(const char *const *dirs, int ndirs, char *reason, size_t len);
/* The default search directories (at most max): see loader.c. */
#define SV_GPU_PATH_MAX 4096
int sv_gpu_module_dirs(char dirs[][SV_GPU_PATH_MAX], int max);
/* The process-wide module, loaded on the first call (not built with CUDA,
 * no driver, not found, ...: NULL and the reason, the same on every call). */
const sv_gpu_cuda_module *sv_gpu_module_default(char *reason, size_t len);

/* ---- the CPU emulation ----------------------------------------------------------- */
/* Its kernels: the double-float products from df_kernel.h, compiled in
 * emu_kernels.c (sv_gpu_emu_kernels_default) and, in a test, again with
 * SV_GPU_BREAK_EFT (sv_gpu_emu_kernels_broken). */
typedef struct sv_gpu_emu_kernels {
    const char *name;
    /* y[i] for i in [0, n) = A·x, A packed (hi/lo pairs), x pairs */
    void (*df_packed)(int n, int nb, const float *ahi, const float *alo, const float *xhi, const float *xlo,
                      double *y);
    void (*df_csr)(int n, const int *rowptr, const int *colind, const float *vhi, const float *vlo, const float *xhi,
                   const float *xlo, double *y);
} sv_gpu_emu_kernels;
extern const sv_gpu_emu_kernels sv_gpu_emu_kernels_default;

typedef struct sv_gpu_emu_options {
    const sv_gpu_emu_kernels *kernels; /* NULL: the default */
    double factor_noise;   /* > 0: multiply every pivot by (1 + factor_noise·r), r in [−1, 1]
                              (a device whose factorisation is wrong: refinement then fails) */
    int break_double;      /* 1: the native-double products drop the last term (a wrong kernel) */
    int fail_upload;       /* 1: upload fails with SV_ERR_BUDGET (the device ran out of memory) */
    int fail_solve_after;  /* > 0: solves after this many fail with SV_ERR_INTERNAL (a device
                              that stops working mid-sweep) */
    int fail_assembly;     /* 1: asm_tables fails, 2: asm_finish fails (SV_ERR_INTERNAL) */
} sv_gpu_emu_options;

/* Factory for sv_gpu_solver_create_with: user = const sv_gpu_emu_options* (may be NULL). */
sv_status sv_gpu_backend_emulated(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out);
/* The emulation's assembly (emu_assembly.c): the backend's asm_* operations,
 * fail = sv_gpu_emu_options.fail_assembly. */
sv_status sv_gpu_emu_asm_tables(sv_gpu_backend *b, const sv_em_tables *t, int nb, int fail);
sv_status sv_gpu_emu_asm_finish(sv_gpu_backend *b, const sv_em_assembly_rows *w, double *L, double *Psi,
                                double *PsiI, double seconds[2], int fail);
void sv_gpu_emu_asm_release(sv_gpu_backend *b);

/* ---- the self-test ------------------------------------------------------------------ */
typedef struct sv_gpu_selftest_result {
    int double_ok, df_ok;         /* 1 passed, 0 failed, −1 not run */
    double double_err, df_err;    /* max |y − y_ref| / max Σ|a_ij·x_j| */
    int solve_ok;                 /* factor + solve of a random matrix agree with the CPU */
    double solve_err;
    char message[256];
} sv_gpu_selftest_result;

/* Relative error a residual path must stay within to pass (double-float
 * carries about 2⁻⁴⁶; broken error terms give about 2⁻²⁴). */
#define SV_GPU_SELFTEST_TOL 1e-12

/* Run the self-test on backend b (which it uploads its own random terms
 * to: use a fresh backend). modes: bit 1 double, bit 2 double-float. */
sv_status sv_gpu_selftest(sv_ctx *ctx, sv_gpu_backend *b, int modes, unsigned long long seed,
                          sv_gpu_selftest_result *r);

/* ---- the solver with an injected backend and device ---------------------------------- */
/* As sv_gpu_solver_create, with `info` standing for the device (its free
 * memory and FP64 ratio drive the plan) and `factory` making the backend
 * (twice: once for the self-test, once for the model). */
sv_status sv_gpu_solver_create_with(sv_ctx *ctx, const sv_sweep_model *m, int nderiv, const sv_gpu_options *opts,
                                    const sv_gpu_device_info *info, sv_gpu_backend_factory factory,
                                    void *factory_user, sv_gpu_solver **out);

/* The assembler with an injected backend and device, as sv_gpu_solver_create_with. */
sv_status sv_gpu_assembler_create_with(sv_ctx *ctx, const sv_gpu_options *opts, const sv_gpu_device_info *info,
                                       sv_gpu_backend_factory factory, void *factory_user, sv_gpu_assembler **out);
/* Device bytes of an assembly of tables t with block size nb (plan.c):
 * the packed L, Ψ (Ψ_im), the tables and unknowns, the port rows, and the
 * fixed reserve; the walls' lists (walls bytes) on top. */
size_t sv_gpu_assembly_bytes(const sv_em_tables *t, int nb, size_t walls_bytes);

/* The device's bytes for a plan's parts (plan.c), exposed for the tests. */
size_t sv_gpu_plan_workspace_bytes(int n, int nb, int cols);

#endif
